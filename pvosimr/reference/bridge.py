"""The bridge to Pinocchio's C++ PV-OSIMr, compiled on first use against the installed pin.

``pin`` binds ``computeDelassusMatrix`` but neither ``initPvDelassus`` nor
``computePvDelassusMatrix``.  ``pvosimr/_pinocchio_pv.cpp`` (one translation unit) exposes them;
:func:`load` compiles it the first time it is needed and imports it as
``pvosimr._pinocchio_pv``.

Why on first use, and not at ``pip install``: a C++ module that calls into ``libpinocchio``
must be compiled against the very pin it runs with (the C++ ABI: Eigen's layout, Pinocchio's
structures).  A build at install time runs in pip's isolated environment, against whichever pin
pip fetched for it, and goes stale as soon as the user's pin changes.  Compiled here, against the
pin that ``import pinocchio`` loaded, the bridge always matches; the library is cached under
:func:`pvosimr.codegen.compiler.cache_dir` ``/bridge`` with a name hashing the source, the pin
version and its install prefix, the compiler, the Eigen headers and the Python ABI, so a change
of any of them builds a new one (one C++ compilation against Pinocchio's headers) and nothing
else does.  Its size and SHA-256 are checked before it is imported (:mod:`pvosimr.codegen.cache`):
a damaged one is set aside and built again.

Everything comes from the pin wheel's ``cmeel.prefix`` (Pinocchio and Boost headers,
``libpinocchio_default``, ``libboost_python``, the compile definitions of Pinocchio's CMake
targets), except Eigen's headers: the ``cmeel-eigen`` wheel (``pip install "pvosimr[bridge]"``)
or a system Eigen 3 (``/usr/include/eigen3``).  No ``-march``-style flag is ever added: Eigen's
alignment must match the wheel's library, or building a ``pinocchio::Data`` crashes.

Nothing else in pvosimr needs the bridge or a compiler; without one, :func:`load` raises
:class:`BridgeUnavailableError` saying what is missing and how to get it.
"""

from __future__ import annotations

# pinocchio first: its import loads libpinocchio_default, libboost_python and eigenpy's
# converters, which the compiled module then reuses (by soname / through Boost.Python's registry).
import pinocchio as pin  # isort: skip

import hashlib
import importlib.machinery
import importlib.util
import re
import shlex
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from ..codegen import cache
from ..codegen import compiler as toolchain
from ..notices import announce

__all__ = [
    "MODULE",
    "SOURCE",
    "BridgeUnavailableError",
    "BuildRecipe",
    "build_recipe",
    "load",
    "status",
]

MODULE = "pvosimr._pinocchio_pv"
SOURCE = Path(__file__).with_name("_pinocchio_pv.cpp")

#: Bumped whenever the build command changes meaning.
_BUILD_VERSION = "1"
_OPTIMIZATION = "-O2"  # apart: the build's announcement names it
_FLAGS = ("-std=c++17", _OPTIMIZATION, "-g0", "-fPIC", "-shared", "-Wno-deprecated-declarations")

# What the wheel's CMake targets pinocchio::pinocchio_headers + ::pinocchio_default declare
# (pin 3.x and 4.x); used only where the CMake file cannot be read.
_FALLBACK_DEFINES = (
    "BOOST_MPL_LIMIT_LIST_SIZE=30",
    "BOOST_MPL_LIMIT_VECTOR_SIZE=30",
    "BOOST_MPL_CFG_NO_PREPROCESSED_HEADERS",
    "BOOST_FUSION_INVOKE_MAX_ARITY=12",
    "PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION",
    "PINOCCHIO_WITH_COLLISION",
)

_HOW_TO_GET_IT = (
    "The bridge needs a C++17 compiler, Python's C headers and Eigen 3.4's headers "
    '(`pip install "pvosimr[bridge]"`); everything else comes with pin. Every pvosimr algorithm '
    "and the other Pinocchio references (pin-efpa, pin-cholesky) work without it."
)


class BridgeUnavailableError(ImportError):
    """The bridge cannot be built or loaded here; the message says why and how to fix it."""

    def __init__(self, why: str) -> None:
        super().__init__(
            f"Pinocchio's C++ PV-OSIMr (pin-pv-osimr) is unavailable: {why}. {_HOW_TO_GET_IT}"
        )
        self.why = why


@dataclass(frozen=True)
class BuildRecipe:
    """Everything the build reads: where, with what, for which pin."""

    pinocchio_version: str
    prefix: Path  # the pin wheel's cmeel.prefix
    compiler: tuple[str, ...]
    include_dirs: tuple[Path, ...]
    library_dir: Path
    libraries: tuple[str, ...]
    defines: tuple[str, ...]

    def command(self, output: Path, source: Path | None = None) -> list[str]:
        """The one compile-and-link command (no machine-specific flag)."""
        return [
            *self.compiler,
            *_FLAGS,
            "-DNDEBUG",
            *(f"-D{d}" for d in self.defines),
            *(f"-I{d}" for d in self.include_dirs),
            str(source or SOURCE),
            "-o",
            str(output),
            f"-L{self.library_dir}",
            *(f"-l{lib}" for lib in self.libraries),
            f"-Wl,-rpath,{self.library_dir}",
        ]

    def library(self) -> Path:
        """The cached library this recipe builds."""
        key = hashlib.sha256(
            "\0".join(
                [
                    _BUILD_VERSION,
                    SOURCE.read_text(),
                    toolchain.compiler_identity(self.compiler),
                    # the source by name: its text is above, and every checkout shares the build
                    shlex.join(self.command(Path("out"), Path(SOURCE.name))),
                    sys.implementation.cache_tag or "",
                    sysconfig.get_config_var("EXT_SUFFIX") or "",
                ]
            ).encode()
        ).hexdigest()[:20]
        tag = f"pin{self.pinocchio_version}-{sys.implementation.cache_tag}"
        return toolchain.cache_dir() / "bridge" / f"_pinocchio_pv-{tag}-{key}.so"


def _cmeel_prefix() -> Path:
    """The ``cmeel.prefix`` folder of the pin that ``import pinocchio`` loaded."""
    for parent in Path(pin.__file__).resolve().parents:
        if parent.name == "cmeel.prefix":
            return parent
    raise BridgeUnavailableError(
        f"pinocchio was imported from {Path(pin.__file__).parent}, which is not a pin wheel "
        "(no cmeel.prefix above it); the bridge is built only against the pin wheel from PyPI"
    )


def _eigen_include(prefix: Path) -> Path:
    for folder in (prefix / "include" / "eigen3", Path("/usr/include/eigen3")):
        if (folder / "Eigen" / "Core").is_file():
            return folder
    raise BridgeUnavailableError(
        f"no Eigen headers (looked in {prefix / 'include' / 'eigen3'} and /usr/include/eigen3)"
    )


def _header_version(include: Path) -> str:
    config = include / "pinocchio" / "config.hpp"
    if not (include / "pinocchio" / "algorithm" / "delassus.hpp").is_file() or not config.is_file():
        raise BridgeUnavailableError(
            f"pin {pin.__version__} ships no Pinocchio headers in {include}"
        )
    match = re.search(r'#\s*define\s+PINOCCHIO_VERSION\s+"([^"]+)"', config.read_text("latin-1"))
    if match is None:
        raise BridgeUnavailableError(f"no PINOCCHIO_VERSION in {config}")
    return match.group(1)


def _cmake_defines(library_dir: Path) -> tuple[str, ...]:
    """Compile definitions of pinocchio::pinocchio_headers and ::pinocchio_default."""
    targets = library_dir / "cmake" / "pinocchio" / "pinocchioTargets.cmake"
    if not targets.is_file():
        return _FALLBACK_DEFINES
    text = targets.read_text(errors="replace")
    defines: list[str] = []
    for target in ("pinocchio_headers", "pinocchio_default"):
        block = re.search(
            rf"set_target_properties\(pinocchio::{target} PROPERTIES(.*?)\n\)", text, re.S
        )
        if block is None:
            return _FALLBACK_DEFINES
        found = re.search(r'INTERFACE_COMPILE_DEFINITIONS "([^"]*)"', block.group(1))
        for item in found.group(1).split(";") if found else []:
            if item and "$<" not in item and item not in defines:
                defines.append(item)
    return tuple(defines)


def build_recipe() -> BuildRecipe:
    """Find everything the build needs; :class:`BridgeUnavailableError` names what is missing."""
    prefix = _cmeel_prefix()
    include, library_dir = prefix / "include", prefix / "lib"
    version = _header_version(include)
    if version != pin.__version__:
        raise BridgeUnavailableError(
            f"pin {pin.__version__} is imported but its prefix {prefix} has the headers of "
            f"Pinocchio {version} (a broken install: reinstall pin)"
        )
    boost_python = f"boost_python{sys.version_info.major}{sys.version_info.minor}"
    for lib in ("pinocchio_default", boost_python):
        if not (library_dir / f"lib{lib}.so").exists():
            raise BridgeUnavailableError(f"no lib{lib}.so in {library_dir}")
    python_include = Path(sysconfig.get_paths()["include"])
    if not (python_include / "Python.h").is_file():
        raise BridgeUnavailableError(
            f"no Python.h in {python_include} (Debian/Ubuntu: `apt-get install python3-dev`)"
        )
    try:
        compiler = toolchain.find_compiler("c++", needed_by="the bridge")
        toolchain.compiler_identity(tuple(compiler))
    except toolchain.CompilerNotFoundError as exc:
        raise BridgeUnavailableError(str(exc).rstrip(".")) from None
    return BuildRecipe(
        pinocchio_version=version,
        prefix=prefix,
        compiler=tuple(compiler),
        include_dirs=(include, _eigen_include(prefix), python_include),
        library_dir=library_dir,
        libraries=("pinocchio_default", boost_python),
        defines=_cmake_defines(library_dir),
    )


def _build(how: BuildRecipe, library: Path) -> float:
    """Compile into a fresh name and move it into place after its record (size and hash,
    :func:`pvosimr.codegen.cache.record`): atomic, safe across processes."""
    announce(
        f"compiling the bridge to Pinocchio {how.pinocchio_version}'s C++ PV-OSIMr with "
        f"{Path(how.compiler[0]).name} {_OPTIMIZATION} (once for this pin, compiler and "
        f"Python; about a minute) into {library.parent}"
    )
    start = time.perf_counter()
    try:
        cache.install(
            library,
            lambda tmp: toolchain.run_compiler(
                how.command(tmp), BridgeUnavailableError, "the compiler"
            ),
        )
    except OSError as exc:
        raise BridgeUnavailableError(f"cannot build {library}: {exc}") from exc
    return time.perf_counter() - start


def _import(library: Path) -> ModuleType:
    loader = importlib.machinery.ExtensionFileLoader(MODULE, str(library))
    spec = importlib.util.spec_from_loader(MODULE, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


_loaded: dict[str, ModuleType | BridgeUnavailableError] = {}


def load() -> ModuleType:
    """The compiled bridge, built now if this pin, compiler and Python have none yet.

    The result (or the reason it is unavailable) is kept for the process.  Raises
    :class:`BridgeUnavailableError` (an ``ImportError``) with the reason and the fix.
    """
    if pin.__version__ not in _loaded:
        try:
            _loaded[pin.__version__] = _load()
        except BridgeUnavailableError as exc:
            _loaded[pin.__version__] = exc
    found = _loaded[pin.__version__]
    if isinstance(found, BridgeUnavailableError):
        raise found
    return found


def _load() -> ModuleType:
    how = build_recipe()
    library = how.library()
    try:  # the cache folder, created now, or named where it cannot be
        cache.make_folder(library.parent, cache.cache_dir_origin())
    except cache.CacheFolderError as exc:
        raise BridgeUnavailableError(str(exc).rstrip(".")) from None
    with cache.building(library):  # another process building it: wait, then import its build
        if not cache.usable(library):  # a damaged entry (cut short by a full disk) is set aside
            _build(how, library)
    try:
        module = _import(library)
    except ImportError as exc:
        # matches its record yet does not load: set it aside and build it once more
        cache.set_aside(library, f"it does not load: {exc}")
        _build(how, library)
        try:
            module = _import(library)
        except ImportError as exc:
            why = f"the freshly built {library} does not load: {exc}"
            raise BridgeUnavailableError(why) from exc
    if pin.__version__ != module.PINOCCHIO_VERSION:  # the key has the version: never expected
        raise BridgeUnavailableError(
            f"{library} was built for Pinocchio {module.PINOCCHIO_VERSION}, not {pin.__version__}"
        )
    return module


def status() -> str | None:
    """``None`` when the bridge loads (building it if needed), else why it does not."""
    try:
        load()
    except BridgeUnavailableError as exc:
        return exc.why
    return None
