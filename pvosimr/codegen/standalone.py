"""Standalone C for a C or C++ program: :func:`export` writes the library that
:func:`pvosimr.codegen.build.compile` loads into Python as source files to build anywhere.

::

    from pvosimr import codegen
    codegen.export(model, cms, "out/atlas_feet", name="atlas_feet", vjp=True)

writes, in ``out/atlas_feet``:

- ``NAME.c``: the library's generated C, character for character the source of the
  Python-loaded library (:func:`pvosimr.codegen.build.generate_source`, with the vector lanes
  :func:`~pvosimr.codegen.build.compile` picks on this machine), followed by the public entry
  points ``NAME_eval`` and ``NAME_eval_batch``; ``NAME_vjp.c`` and ``NAME_derivatives.c``
  likewise for the gradient and dG when asked for (each library's C in a file of its own: they
  share CasADi's and the wrapper's names, which the export prefixes per file with macros);
- ``NAME.h``: the ABI (sizes; each joint's q and v offsets; each constraint's frame, joints,
  placements, kind and row order; the layouts of q, G, W, g, dG and p; work sizes, return
  codes, stack use, provenance) and the prototypes, ``extern "C"`` for C++; the joints and
  constraints also as C tables (``NAME_joint_idx_q``, ``NAME_constraint_placements``, ...);
- ``CMakeLists.txt`` and ``NAMEConfig.cmake``: each file compiled once (an object library,
  position-independent, with the Python-loaded library's flags per file) into a shared and a
  static library, an install rule and a package config (``find_package(NAME)``);
- ``README.md``, ``export.json`` (the sizes, flags, provenance, and the constraint models as
  records that rebuild them: :func:`constraint_records`) and ``model.txt`` (Pinocchio's own
  text serialization of the model, ``pin.Model.saveToString()``): with these two
  ``pvosimr validate --exported DIR`` checks any export against the truth, whatever model it
  came from (:func:`load_export`).

Every entry point runs the Python-loaded library's code with its checks on (``check=1``), so
with the same compiler and flags its output is that library's, bit for bit.  The export compiles
``NAME.c`` once with ``-fstack-usage`` to state the single call's stack use in the header (and
to find a broken compiler before the user does).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import shlex
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin

from .. import __version__
from ..checks import NORMALIZED_TOLERANCE
from ..constraints import as_constraint_list, constraint_shape
from ..lowering import PIN4_MODELS, RowMap, rows
from . import build as builder
from . import compiler as toolchain
from . import simd as vector
from . import standalone_text as text
from .templating import fill

__all__ = [
    "MANIFEST",
    "MODEL_FILE",
    "ExportError",
    "Exported",
    "constraint_records",
    "constraints_from_records",
    "export",
    "export_flags",
    "load_export",
    "model_hash",
]

#: The export's record, beside its sources.
MANIFEST = "export.json"
#: The model, as Pinocchio's own text serialization (``pin.Model.saveToString()``).
MODEL_FILE = "model.txt"

#: Flags of the Python-loaded library that are not about a shared object (``-shared`` is not
#: needed to compile an object; ``-fPIC`` is kept: the static library is position-independent
#: too, so that it links into a user's shared library).
_OBJECT_FLAGS = tuple(f for f in builder.BUILD_FLAGS if f != "-shared")

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

#: A top-level function definition that is not ``static`` (CasADi's API, the wrapper's entry
#: points): renamed per file, so that two libraries link into one program.
_GLOBAL_FUNCTION = re.compile(
    r"^(?:CASADI_SYMBOL_EXPORT\s+)?(?:const\s+)?[A-Za-z_]\w*(?:\s*\*)?\s+\**\s*([A-Za-z_]\w*)\s*\(",
    re.M,
)


class ExportError(ValueError):
    """A user's mistake in :func:`export`'s arguments: a bad name, an output folder that is not
    empty, a derivatives or gradient request with no constraint rows."""


@dataclass(frozen=True)
class Exported:
    """What :func:`export` wrote: ``folder``, ``name``, ``files`` (paths), ``spec`` (the sizes,
    rows, flags and provenance of ``export.json``)."""

    folder: Path
    name: str
    files: tuple[Path, ...]
    spec: dict


def model_hash(model: pin.Model) -> str:
    """The SHA-256 (64 hex digits) of Pinocchio's own text serialization of ``model``
    (``pin.Model.saveToString()``, the content of ``model.txt``): every joint, placement,
    inertia, limit and frame."""
    return hashlib.sha256(model.saveToString().encode()).hexdigest()


def _se3_record(M: pin.SE3) -> dict:
    """A placement as JSON: ``R`` by rows, ``t`` (Python floats round-trip exactly)."""
    return {
        "R": [[float(x) for x in row] for row in M.rotation],
        "t": [float(x) for x in M.translation],
    }


def _se3(record: dict) -> pin.SE3:
    return pin.SE3(np.array(record["R"], dtype=float), np.array(record["t"], dtype=float))


def constraint_records(model: pin.Model, constraint_models: Iterable) -> list[dict]:
    """The constraint models as JSON records that :func:`constraints_from_records` rebuilds
    into the same Pinocchio objects (rigid constraints, pin 4's anchors and point contacts,
    row maps of them, pin 4's joint friction; a generic ``pin.ConstraintModel`` as the model it
    holds).  ValueError naming the constraint for a kind that has no record (pin 4's joint
    limits, whose rows depend on the active set)."""
    return [_record(model, k, cm) for k, cm in enumerate(constraint_models)]


def _record(model: pin.Model, k: int, cm) -> dict:
    generic = getattr(pin, "ConstraintModel", None)
    if generic is not None and type(cm) is generic:
        cm = cm.extract()
    if isinstance(cm, RowMap):
        out = {"type": "rows", "name": cm.name, "model": _record(model, k, cm.model)}
        if cm.matrix is None:
            return {**out, "selection": [int(i) for i in cm.selection]}
        return {**out, "matrix": [[float(x) for x in row] for row in cm.matrix]}
    kind = type(cm).__name__
    if kind == "JointFrictionConstraintModel":
        return {"type": kind, "name": cm.name, "joints": [int(j) for j in cm.getActiveJoints()]}
    if not (isinstance(cm, pin.RigidConstraintModel) or type(cm) in PIN4_MODELS):
        raise ValueError(
            f"constraint {k} ({kind}) cannot be recorded in the export, so "
            "`pvosimr validate --exported` could not rebuild it"
        )
    record = {
        "type": kind,
        "name": cm.name,
        "joint1": int(cm.joint1_id),
        "joint2": int(cm.joint2_id),
        "joint1_name": model.names[cm.joint1_id],
        "joint2_name": model.names[cm.joint2_id],
        "placement1": _se3_record(cm.joint1_placement),
        "placement2": _se3_record(cm.joint2_placement),
    }
    if isinstance(cm, pin.RigidConstraintModel):
        record["contact_type"] = cm.type.name
        record["reference_frame"] = cm.reference_frame.name
    return record


def constraints_from_records(model: pin.Model, records: Sequence[dict]) -> list:
    """The constraint models :func:`constraint_records` recorded, rebuilt on ``model``."""
    return [_rebuild(model, record) for record in records]


def _rebuild(model: pin.Model, record: dict):
    kind = record["type"]
    if kind == "rows":
        inner = _rebuild(model, record["model"])
        made = rows(inner, record["selection"] if "selection" in record else record["matrix"])
    elif kind == "JointFrictionConstraintModel":
        made = pin.JointFrictionConstraintModel(model, pin.StdVec_Index(record["joints"]))
    elif kind == "RigidConstraintModel":
        made = pin.RigidConstraintModel(
            pin.ContactType.names[record["contact_type"]], model,
            record["joint1"], _se3(record["placement1"]),
            record["joint2"], _se3(record["placement2"]),
            pin.ReferenceFrame.names[record["reference_frame"]],
        )  # fmt: skip
    else:
        made = getattr(pin, kind)(
            model, record["joint1"], _se3(record["placement1"]),
            record["joint2"], _se3(record["placement2"]),
        )  # fmt: skip
    if kind != "rows":
        made.name = record["name"]
    return made


def load_export(folder: str | os.PathLike) -> tuple[dict, pin.Model, list]:
    """``(spec, model, constraint models)`` of the export in ``folder``: ``export.json``, the
    model from ``model.txt`` and the constraints from their records.  ExportError naming the
    file for a folder that is not an export, or an export written without them."""
    folder = Path(folder)
    manifest = folder / MANIFEST
    if not manifest.is_file():
        raise ExportError(f"{folder}: no {MANIFEST} (not a pvosimr export)")
    try:
        spec = json.loads(manifest.read_text())
    except (OSError, ValueError) as exc:
        raise ExportError(f"{manifest} is not an export's record: {exc}") from None
    if not isinstance(spec, dict) or "name" not in spec or "parts" not in spec:
        raise ExportError(f"{manifest} is not an export's record (no name or parts)")
    if not (folder / MODEL_FILE).is_file() or spec.get("constraints") is None:
        why = spec.get("constraints_missing") or f"no {MODEL_FILE} or constraint records"
        raise ExportError(f"{folder}: the export does not carry its model and constraints ({why})")
    model = pin.Model()
    try:
        model.loadFromString((folder / MODEL_FILE).read_text())
    except (OSError, RuntimeError, ValueError) as exc:
        raise ExportError(
            f"{folder / MODEL_FILE}: Pinocchio {pin.__version__} cannot read it "
            f"(written by pin {spec['provenance'].get('pin', '?')}): {str(exc).splitlines()[0]}"
        ) from None
    return spec, model, constraints_from_records(model, spec["constraints"])


def export_flags(part_flags: Sequence[str]) -> tuple[str, ...]:
    """The flags one exported file is compiled with: the Python-loaded library's ``flags``
    then its build flags (:data:`pvosimr.codegen.build.BUILD_FLAGS` less ``-shared``)."""
    return (*part_flags, *_OBJECT_FLAGS)


def export(
    model: pin.Model,
    constraint_models: Iterable,
    out_dir: str | os.PathLike,
    name: str = "delassus",
    *,
    algorithm: str = "pv-osimr",
    placements: str = "fixed",
    vjp: bool = False,
    derivatives: bool = False,
    flags: Sequence[str] = ("-O3",),
    derivative_flags: Sequence[str] = builder.DERIVATIVE_FLAGS,
    simd: bool | int | None = None,
    robot: str | None = None,
) -> Exported:
    """Write the standalone C of G for ``model`` and ``constraint_models`` into ``out_dir``
    (see the module docstring); returns what it wrote.

    ``name``: a C identifier, the files' and the functions' prefix.  ``algorithm``,
    ``placements``, ``flags``, ``derivative_flags`` and ``simd`` as for
    :func:`pvosimr.codegen.build.compile` (the same defaults: the same library); ``vjp`` and
    ``derivatives`` add the gradient of ``<W, G>`` and dG.  ``robot``: the zoo's
    ``ROBOT/PRESET`` this model and constraint list come from, recorded for
    ``pvosimr validate --exported``.

    Raises:
        ExportError: ``name`` is not a C identifier, ``out_dir`` exists and is not an empty
            folder, or there are no constraint rows.
        CompilerNotFoundError, CompilationError: no C compiler, or it fails on the export.
        ModuleNotFoundError, ValueError, NotImplementedError: as
            :func:`~pvosimr.codegen.build.compile`.
    """
    folder = _empty_folder(out_dir, name)
    given = (
        list(constraint_models) if isinstance(constraint_models, Iterator) else constraint_models
    )
    cms = as_constraint_list(given, model)
    compiler = builder.find_compiler()
    folder.mkdir(parents=True, exist_ok=True)
    lanes = vector.lanes(simd, vector.cpu_features(tuple(compiler)))
    parts = {"G": "G", "vjp": "vjp" if vjp else None, "derivatives": "dG" if derivatives else None}
    sources, infos = {}, {}
    for part, output in parts.items():  # output: the function's output name
        if output is not None:
            sources[part], infos[part] = builder.generate_source(
                model, cms, algorithm, placements=placements, simd=lanes if part == "G" else 0,
                output=output,
            )  # fmt: skip
            del infos[part]["generated"]
    if infos["G"]["m"] == 0:
        raise ExportError("the constraints have no rows (m = 0): there is no G to export")
    part_flags = {part: tuple(flags if part == "G" else derivative_flags) for part in infos}
    spec = _spec(model, cms, name, infos, part_flags, robot)
    try:
        spec["constraints"] = constraint_records(model, list(given))
    except ValueError as exc:  # the export stands; only its check needs the records
        spec["constraints"], spec["constraints_missing"] = None, str(exc)
    (folder / MODEL_FILE).write_text(model.saveToString())
    files = [*_write(folder, spec, sources), folder / MODEL_FILE]
    spec["stack_bytes"], spec["stack_how"] = _stack_use(compiler, folder, spec)
    (folder / f"{name}.h").write_text(text.header(spec))
    (folder / MANIFEST).write_text(json.dumps(spec, indent=1) + "\n")
    return Exported(folder, name, tuple(files), spec)


def _empty_folder(out_dir: str | os.PathLike, name: str) -> Path:
    """``out_dir`` (not created yet); :class:`ExportError` for a bad ``name`` or a folder in
    use."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ExportError(f"name must be a C identifier (letters, digits, _), got {name!r}")
    folder = Path(out_dir)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        what = "is not a folder" if not folder.is_dir() else "is a folder that is not empty"
        raise ExportError(f"{folder} {what}: export writes into a new or empty folder")
    return folder


def _spec(
    model: pin.Model, cms: list, name: str, infos: dict, part_flags: dict, robot: str | None
) -> dict:
    """Everything the text files say: sizes, layouts, flags, provenance (JSON-ready)."""
    G = infos["G"]
    joints = [
        [model.names[j], joint.shortname(), joint.idx_q, joint.nq, joint.idx_v, joint.nv]
        for j, joint in enumerate(model.joints)
        if j > 0 and (joint.nq > 0 or joint.nv > 0)
    ]
    blocks, first = [], 0
    for k, cm in enumerate(cms):
        blocks.append(_block(model, k, cm, first))
        first += blocks[-1]["rows"]
    if first != G["m"]:  # rows not in constraint order: say nothing rather than something wrong
        blocks = []
    provenance = {
        "pvosimr": __version__,
        "model": f"{model.name or '?'}" + (f" (zoo: {robot})" if robot else ""),
        "model sha256": model_hash(model),
        "pin": pin.__version__,
        "algorithm": G["algorithm"],
        "placements": "inputs" if G["n_p"] else "built in",
        "sources sha256": "",  # filled in by _write
        "exported": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }
    flags = {part: list(export_flags(f)) for part, f in part_flags.items()}
    others = [part for part in flags if part != "G"]
    flags_text = shlex.join(flags["G"])
    if others:
        flags_text += f" ({'/'.join(others)}: {shlex.join(flags[others[0]])})"
    return {
        "name": name,
        "robot": robot,
        "nq": int(model.nq),
        "nv": int(model.nv),
        "m": int(G["m"]),
        "n_p": int(G["n_p"]),
        "sz_w": max(1, *(int(i["sz_w"]) for i in infos.values())),
        "sz_iw": max(1, *(int(i["sz_iw"]) for i in infos.values())),
        "q_bound": G["q_bound"],
        "tolerance": NORMALIZED_TOLERANCE,
        "simd_lanes": G["simd_lanes"],
        "parts": list(infos),
        "part_flags": flags,
        "flags_text": flags_text,
        "joints": joints,
        "blocks": blocks,
        "provenance": provenance,
        "cmake_version": __version__.split("+")[0].split("-")[0],
    }


def _frame_name(model: pin.Model, joint: int, placement: pin.SE3) -> str:
    """The model frame on ``joint`` at ``placement`` (its BODY frame first), else ""."""
    found = [
        f for f in model.frames
        if f.parentJoint == joint and f.placement.isApprox(placement, 1e-12)
    ]  # fmt: skip
    found.sort(key=lambda f: f.type != pin.FrameType.BODY)
    return found[0].name if found else ""


def _block(model: pin.Model, k: int, cm, first: int) -> dict:
    """One constraint's block of G: its names, placements, kind and the order of its rows."""
    shape = constraint_shape(cm, f"constraint {k}")
    source = getattr(cm, "source", cm)  # a lowered row: the Pinocchio model it comes from
    placements = [cm.joint1_placement, cm.joint2_placement]
    return {
        "name": cm.name or f"constraint_{k}",
        "type": type(source).__name__,
        "kind": shape.kind,
        "dim": shape.base or shape.dim,
        "rows": shape.dim,
        "first": first,
        "world_aligned": bool(shape.world_aligned),
        "row_map": [list(r) for r in shape.rows],
        "joint1": model.names[shape.joint1],
        "joint2": model.names[shape.joint2],
        "frame1": _frame_name(model, shape.joint1, placements[0]) if shape.kind != "joint" else "",
        "frame2": _frame_name(model, shape.joint2, placements[1]) if shape.joint2 else "",
        "placement1": _se3_record(placements[0]),
        "placement2": _se3_record(placements[1]),
    }


def _renames(source: str, prefix: str) -> str:
    """Macros giving the file's global names ``prefix``: CasADi's internal ones through its own
    ``CODEGEN_PREFIX``, the others (its API, the wrapper's entry points) one by one."""
    defined = set(re.findall(r"^#define\s+(\w+)", source, re.M))
    found = _GLOBAL_FUNCTION.findall(source)
    names = dict.fromkeys(n for n in found if n not in defined and not n.startswith("__"))
    lines = [
        "#define CASADI_CODEGEN_PREFIX",
        f"#define CODEGEN_PREFIX {prefix}",
        "#define CASADI_SYMBOL_EXPORT  /* hidden unless the export's own API says otherwise */",
        *(f"#define {n} {prefix}{n}" for n in names),
    ]
    return "\n".join(lines) + "\n"


def _write(folder: Path, spec: dict, sources: dict) -> list[Path]:
    """The C files, the CMake files and the README (the header comes after the stack use)."""
    name, files = spec["name"], []
    digest = hashlib.sha256()
    for part, source in sources.items():
        digest.update(source.encode())
        suffix = text.PARTS[part][0]
        path = folder / f"{name}{suffix}.c"
        # The generated C keeps CasADi's fixed signatures (arguments, work arrays, memory slot)
        # whether its functions read every argument or not, so -Wextra's unused-parameter
        # warning is off around it, and only there (the export's own entry points have it on).
        renames = _renames(source, f"{name}_{part.lower()}_")
        c = fill("export_part.c", name=name, suffix=suffix, version=__version__, renames=renames,
                 source=source, entry=text.entry_c(spec, part))  # fmt: skip
        path.write_text(c)
        files.append(path)
    spec["provenance"]["sources sha256"] = digest.hexdigest()
    for filename, content in (
        ("CMakeLists.txt", text.cmake_lists(spec)),
        (f"{name}Config.cmake", text.package_config(spec)),
        ("README.md", text.readme(spec)),
    ):
        (folder / filename).write_text(content)
        files.append(folder / filename)
    files += [folder / f"{name}.h", folder / MANIFEST]
    (folder / f"{name}.h").write_text(text.header({**spec, "stack_bytes": None}))
    return files


def _stack_use(compiler: list[str], folder: Path, spec: dict) -> tuple[int | None, str]:
    """Bytes of stack of ``NAME_eval`` (an upper bound: the frames of every function of
    ``NAME.c`` but the batch's, summed, as GCC's ``-fstack-usage`` gives them at the export's
    flags), or None where the compiler cannot say; compiling also proves the export builds."""
    name = spec["name"]
    with tempfile.TemporaryDirectory(prefix="pvosimr-export-") as tmp:
        obj = Path(tmp) / f"{name}.o"
        command = [*compiler, *spec["part_flags"]["G"], "-fstack-usage", "-c"]
        command += [str(folder / f"{name}.c"), "-o", str(obj)]
        out = subprocess.run(command, capture_output=True, text=True, check=False)
        if out.returncode != 0 and "stack-usage" in (out.stderr or ""):
            command.remove("-fstack-usage")  # a compiler without it: compiled without
        if out.returncode != 0:  # the error of the command (again), or the export without it
            toolchain.run_compiler(command, builder.CompilationError, "compiling the export")
        usage = obj.with_suffix(".su")
        if not usage.is_file():
            return None, ""
        total = 0
        for line in usage.read_text().splitlines():
            function, size, kind = line.rsplit(":", 1)[-1].split("\t")
            if re.search(r"batch|worker|simd|pv_[a-z]", function):
                continue  # the batch's own frames (and the lanes'): not on the single call's path
            if "dynamic" in kind and "bounded" not in kind:
                return None, ""
            total += int(size)
    how = f"sum of the frames of {name}.c's functions off the batch, GCC -fstack-usage"
    return total, f"{how} at {' '.join(spec['part_flags']['G'][:1])}"
