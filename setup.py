"""Build of pvosimr's one compiled module, ``pvosimr._pinocchio_pv``.

Everything else about the package is declared in ``pyproject.toml``; this file only adds the
extension.  It calls Pinocchio's C++ ``initPvDelassus`` / ``computePvDelassusMatrix`` (which
have no Python binding in ``pin``) and is compiled against the Pinocchio *wheel* found in the
build environment:

* headers and ``libpinocchio_default.so`` from the ``libpinocchio`` distribution (a dependency of
  ``pin``), Boost headers and ``libboost_pythonXY.so`` from ``cmeel-boost``, Eigen headers from
  ``cmeel-eigen`` — all under ``site-packages/cmeel.prefix``;
* the compile definitions the wheel's CMake config (``pinocchioTargets.cmake``) prescribes;
* no ``-march``/``-mavx``-style flag: Eigen's alignment and vectorisation must match the wheel's
  shared library, or constructing a ``pinocchio::Data`` crashes.

``pyproject.toml`` pins the same ``pin`` version for the build and at run time (the C++ ABI
must match); the module records the version it was built against and ``pvosimr.reference``
refuses to use it under another one.

A build that cannot be done fails the installation with a message saying what is missing:
there is no pure-Python fallback for this module.
"""

from __future__ import annotations

import re
import shutil
import sys
import sysconfig
import time
from importlib import metadata
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

EXTENSION = "pvosimr._pinocchio_pv"
SOURCE = "pvosimr/_pinocchio_pv.cpp"

# What the wheel's CMake targets pinocchio::pinocchio_headers + pinocchio::pinocchio_default
# declare (pin 4.1.0); used only if that CMake file cannot be read.
FALLBACK_DEFINES = (
    "BOOST_MPL_LIMIT_LIST_SIZE=30",
    "BOOST_MPL_LIMIT_VECTOR_SIZE=30",
    "BOOST_MPL_CFG_NO_PREPROCESSED_HEADERS",
    "BOOST_FUSION_INVOKE_MAX_ARITY=12",
    "PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION",
    "PINOCCHIO_WITH_COLLISION",
)

# Flags that change Eigen's vectorisation/alignment (hence struct layouts) relative to the
# wheel, plus debug info (a Pinocchio translation unit with -g is slow and huge).
_BAD_FLAG = re.compile(r"^(-march=.*|-mcpu=.*|-mavx.*|-mfma.*|-msse4.*|-mno-sse.*|-g[0-9]?)$")

_HOW_TO_FIX = (
    "pvosimr needs a C++17 compiler (g++ or clang++) and, in the build environment, the packages "
    "listed in pyproject.toml's [build-system] requires (pin, cmeel-eigen). A normal "
    "`pip install .` / `pip install -e .` installs those automatically; with "
    "--no-build-isolation install them first: pip install 'pin==<runtime pin version>' "
    "'cmeel-eigen~=3.4.1'. On Debian/Ubuntu the compiler comes from `apt-get install g++`."
)


class BuildFailure(SystemExit):
    """Ends the build (and so the installation) with a readable message, no traceback."""

    def __init__(self, what: str) -> None:
        bar = "=" * 78
        super().__init__(
            f"\n{bar}\npvosimr: cannot build {EXTENSION} (Pinocchio's C++ PV-OSIMr).\n"
            f"{what}\n\n{_HOW_TO_FIX}\n{bar}\n"
        )


def _find_in_distribution(dist_name: str, suffix: str) -> Path:
    """``<dir>`` such that ``<dir>/<suffix>`` is a file installed by ``dist_name``."""
    try:
        dist = metadata.distribution(dist_name)
    except metadata.PackageNotFoundError:
        raise BuildFailure(
            f"The distribution {dist_name!r} is not installed in the build environment "
            f"(needed for {suffix})."
        ) from None
    for f in dist.files or ():
        posix = f.as_posix()
        if posix.endswith("/" + suffix):
            path = Path(dist.locate_file(f)).resolve()
            if path.is_file():
                return Path(str(path)[: -len(suffix) - 1])
    raise BuildFailure(
        f"The distribution {dist_name!r} {dist.version} does not contain {suffix!r} "
        "(is it a cmeel wheel?)."
    )


def _pinocchio_version(include_dir: Path) -> str:
    config = (include_dir / "pinocchio" / "config.hpp").read_text(errors="replace")
    match = re.search(r'#\s*define\s+PINOCCHIO_VERSION\s+"([^"]+)"', config)
    if not match:
        raise BuildFailure(f"No PINOCCHIO_VERSION in {include_dir}/pinocchio/config.hpp.")
    return match.group(1)


def _cmake_defines(lib_dir: Path) -> tuple[list[str], str]:
    """Compile definitions of pinocchio::pinocchio_headers and ::pinocchio_default."""
    targets = lib_dir / "cmake" / "pinocchio" / "pinocchioTargets.cmake"
    if not targets.is_file():
        return list(FALLBACK_DEFINES), "built-in list (no pinocchioTargets.cmake)"
    text = targets.read_text(errors="replace")
    defines: list[str] = []
    for target in ("pinocchio_headers", "pinocchio_default"):
        block = re.search(
            rf"set_target_properties\(pinocchio::{target} PROPERTIES(.*?)\n\)", text, re.S
        )
        if not block:
            return list(FALLBACK_DEFINES), "built-in list (target not found in CMake config)"
        found = re.search(r'INTERFACE_COMPILE_DEFINITIONS "([^"]*)"', block.group(1))
        for item in found.group(1).split(";") if found else []:
            if item and "$<" not in item and item not in defines:
                defines.append(item)
    return defines, str(targets)


def _locate() -> dict:
    """Paths and settings for the build, all taken from the build environment."""
    pin_include = _find_in_distribution("libpinocchio", "pinocchio/algorithm/delassus.hpp")
    pin_lib = _find_in_distribution("libpinocchio", "libpinocchio_default.so")
    eigen_include = _find_in_distribution("cmeel-eigen", "Eigen/Core")
    boost_include = _find_in_distribution("cmeel-boost", "boost/python.hpp")
    boost_python = f"boost_python{sys.version_info.major}{sys.version_info.minor}"
    boost_lib = _find_in_distribution("cmeel-boost", f"lib{boost_python}.so")

    header_version = _pinocchio_version(pin_include)
    try:
        pin_version = metadata.version("pin")
    except metadata.PackageNotFoundError:
        pin_version = None
    if pin_version is not None and pin_version != header_version:
        raise BuildFailure(
            f"The build environment mixes pin {pin_version} with Pinocchio headers "
            f"{header_version}."
        )
    defines, defines_from = _cmake_defines(pin_lib)
    return {
        "include_dirs": list(dict.fromkeys([pin_include, eigen_include, boost_include])),
        "library_dirs": list(dict.fromkeys([pin_lib, boost_lib])),
        "libraries": ["pinocchio_default", boost_python],
        "defines": defines,
        "defines_from": defines_from,
        "pinocchio_version": header_version,
    }


def _runtime_rpaths() -> list[str]:
    """Where the runtime ``cmeel.prefix/lib`` is, seen from the installed extension.

    ``import pinocchio`` (done first by pvosimr.reference) has already loaded the shared
    libraries, which the dynamic loader then reuses by soname; the run paths are a second line:
    ``$ORIGIN/../cmeel.prefix/lib`` for a normal install (the module sits in
    ``site-packages/pvosimr/``), the target environment's ``site-packages/cmeel.prefix/lib`` for
    an editable install (the module sits in the source tree).  Never the build environment's
    directory: pip's isolated build environment is deleted after the build.
    """
    paths = ["$ORIGIN/../cmeel.prefix/lib"]
    for key in ("platlib", "purelib"):
        site = sysconfig.get_paths().get(key)
        if site:
            paths.append(str(Path(site) / "cmeel.prefix" / "lib"))
    return list(dict.fromkeys(paths))


class BuildPinocchioExtension(build_ext):
    """``build_ext`` that finds the Pinocchio wheel's headers and libraries, and fails loudly."""

    def finalize_options(self) -> None:
        super().finalize_options()
        # Always recompile: distutils only compares the .cpp's time stamp, so an object left in
        # build/ by an earlier build against another pin would otherwise be reused silently.
        self.force = True

    def build_extensions(self) -> None:
        compiler = self.compiler
        cxx = getattr(compiler, "compiler_cxx", None) or ["c++"]
        if shutil.which(cxx[0]) is None:
            raise BuildFailure(f"No C++ compiler: {cxx[0]!r} is not on PATH.")
        removed: list[str] = []
        # every command line the compiler object knows (compiler_so_cxx, linker_so_cxx, ... in
        # recent setuptools; compiler_so, linker_so, ... in older ones)
        for attr in getattr(compiler, "executables", {}):
            flags = getattr(compiler, attr, None)
            if flags and isinstance(flags, list):
                kept = [flags[0]] + [f for f in flags[1:] if not _BAD_FLAG.match(f)]
                removed += [f for f in flags[1:] if _BAD_FLAG.match(f)]
                compiler.set_executable(attr, kept)
        dropped = sorted(set(removed) - {"-g"})
        if dropped:
            print(f"pvosimr: dropped compiler flags {dropped} (must match the pin wheel's ABI)")

        found = _locate()
        print(
            f"pvosimr: building {EXTENSION} against Pinocchio {found['pinocchio_version']} "
            f"({found['include_dirs'][0]}); definitions from {found['defines_from']}"
        )
        for ext in self.extensions:
            ext.include_dirs[:0] = [str(p) for p in found["include_dirs"]]
            ext.library_dirs += [str(p) for p in found["library_dirs"]]
            ext.libraries += found["libraries"]
            ext.define_macros += [
                tuple(d.split("=", 1)) if "=" in d else (d, None) for d in found["defines"]
            ]
            ext.define_macros.append(("NDEBUG", None))
            ext.extra_link_args += [f"-Wl,-rpath,{p}" for p in _runtime_rpaths()]
        start = time.perf_counter()
        try:
            super().build_extensions()
        except Exception as exc:  # CompileError, LinkError, OSError, ...
            raise BuildFailure(
                f"The compiler or linker failed: {type(exc).__name__}: {exc}\n"
                "(the compiler output is above; run pip with -v to see it in full)."
            ) from exc
        print(f"pvosimr: compiled {EXTENSION} in {time.perf_counter() - start:.1f} s")


setup(
    ext_modules=[
        Extension(
            EXTENSION,
            sources=[SOURCE],
            language="c++",
            extra_compile_args=["-std=c++17", "-O2", "-g0", "-Wno-deprecated-declarations"],
        )
    ],
    cmdclass={"build_ext": BuildPinocchioExtension},
    # the C++ source goes into the sdist (it is the extension's source), not into installs
    exclude_package_data={"pvosimr": ["*.cpp"]},
)
