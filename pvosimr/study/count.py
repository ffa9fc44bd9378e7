"""Operation counts with an on-disk cache: regenerating the paper's figures is fast the 2nd time.

A count is a pure function of the robot model, its constraints, the algorithm and our code, so
the cache key hashes exactly those: the model's joints, placements, inertias and armature, each
constraint's joint, frame and reference placement, and the source of every module the count
goes through.  Editing an algorithm (or the backend, the transforms, the symbolic kinematics)
therefore invalidates its counts; nothing else does.  A count in the paper authors' convention
(:mod:`pvosimr.study.figures.convention`, 6×6 ``X_up``) is keyed apart, with that module's source.

:func:`main` is ``pvosimr count``: the counts of one robot (a zoo name or a URDF/MJCF file with
``--point``/``--weld`` constraints) as a table on stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from pathlib import Path

import numpy as np
import pinocchio as pin

from pvosimr.choice import AUTO, canonical_algorithm
from pvosimr.codegen.cache import cache_dir_origin, make_folder, set_aside
from pvosimr.codegen.compiler import cache_dir
from pvosimr.constraints import as_constraint_list, constraint_kind, constraint_matrix
from pvosimr.delassus import ALGORITHMS

from .options import (
    add_model_file_options,
    command_parser,
    file_path,
    require_extra,
    robot_from_file,
    with_frames,
)
from .progress import progress_bar

__all__ = [
    "CountCache",
    "add_cache_options",
    "build_parser",
    "cache_key",
    "count_table",
    "default_cache_path",
    "main",
    "model_digest",
    "source_digest",
]

COUNTED_PACKAGES = ("algorithms", "backends", "kinematics")
COUNTED_SOURCES = (
    "spatial.py",
    "symbolic.py",
    "topology.py",
    "constraints.py",
    "lowering.py",
    "combination.py",
    "mimic.py",
    "choice.py",
    "cost.py",
)
"""The library modules, with every module of :data:`COUNTED_PACKAGES`, whose source an
operation count depends on."""
CONVENTION_SOURCE = Path(__file__).with_name("figures") / "convention.py"
"""The module a ``paper`` count goes through besides the library."""


def default_cache_path() -> Path:
    """``opcounts.json`` in pvosimr's one cache folder (:func:`pvosimr.codegen.compiler.cache_dir`):
    ``$PVOSIMR_CACHE_DIR``, else ``$XDG_CACHE_HOME/pvosimr``, else ``~/.cache/pvosimr``."""
    return cache_dir() / "opcounts.json"


@cache
def source_digest() -> str:
    """SHA-256 over the source of everything an operation count depends on."""
    package = Path(__file__).resolve().parents[1]  # the library: pvosimr/
    files = [package / name for name in COUNTED_SOURCES]
    files += [path for name in COUNTED_PACKAGES for path in sorted((package / name).glob("*.py"))]
    h = hashlib.sha256()
    for path in files:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def model_digest(model: pin.Model, constraint_models: Iterable) -> str:
    """SHA-256 of what a count reads of the model and the constraints."""
    h = hashlib.sha256()
    for i in range(1, model.njoints):
        h.update(f"{model.joints[i].shortname()}|{model.parents[i]}|".encode())
        h.update(np.asarray(model.jointPlacements[i].homogeneous).tobytes())
        h.update(np.asarray(model.inertias[i].matrix()).tobytes())
    h.update(np.asarray(model.armature).tobytes())
    for cm in as_constraint_list(constraint_models):
        kind = constraint_kind(cm)
        if kind == "rigid":
            h.update(f"{cm.joint1_id}|{cm.reference_frame}|{cm.type}|".encode())
        else:  # pin 4's models have neither a type nor a frame: their kind says both
            h.update(f"{kind}|{cm.joint1_id}|".encode())
        h.update(np.asarray(cm.joint1_placement.homogeneous).tobytes())
        h.update(np.asarray(constraint_matrix(cm)).tobytes())
        if cm.joint2_id != 0 or kind != "rigid":  # the second body, or an anchor's world point
            h.update(f"joint2|{cm.joint2_id}|".encode())
            h.update(np.asarray(cm.joint2_placement.homogeneous).tobytes())
    return h.hexdigest()


@cache
def convention_digest() -> str:
    """SHA-256 of :mod:`pvosimr.study.figures.convention`, which counts the paper's way."""
    return hashlib.sha256(CONVENTION_SOURCE.read_bytes()).hexdigest()


def cache_key(
    model: pin.Model, constraint_models: Iterable, algorithm: str, convention: str
) -> str:
    """``model:algorithm:source`` digests; a ``paper`` count adds ``:paper:<its module>``.

    A ``pvosimr`` key has no convention part: ``pvosimr count`` and both conventions of
    ``pvosimr figures`` share those counts.  The turned frames of the paper's mechanisms are
    the model's, so in its digest.
    """
    key = f"{model_digest(model, constraint_models)}:{algorithm}:{source_digest()}"
    if convention == "pvosimr":
        return key
    if convention == "paper":
        return f"{key}:paper:{convention_digest()}"
    raise ValueError(f"unknown convention {convention!r}; valid: 'pvosimr', 'paper'")


def _counter(convention: str) -> Callable[[pin.Model, list, str], int]:
    if convention == "paper":
        from .figures.convention import paper_count_operations

        return paper_count_operations
    from pvosimr.symbolic import count_operations

    return count_operations


class CountCache:
    """A JSON file of counts keyed by :func:`cache_key` (model, algorithm, sources, convention).

    ``path=None`` keeps the counts in memory only.  :meth:`count` computes a missing count with
    :func:`pvosimr.symbolic.count_operations` (``convention="paper"``:
    :func:`~pvosimr.study.figures.convention.paper_count_operations`) and stores it;
    :meth:`save` writes the file atomically (a crash never leaves a truncated cache); a file
    that is not such a table (cut short by a full disk, edited) is set aside as
    ``opcounts.json.damaged-<time>`` with one line, and its counts are computed again.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.hits = self.misses = 0
        self._counts: dict[str, int] = {}
        if path is not None:  # a folder that cannot be made fails here, before any count
            make_folder(path.parent, self._chosen_by())
            if path.exists():
                self._counts = _read_counts(path)

    def count(
        self,
        model: pin.Model,
        constraint_models: Iterable,
        algorithm: str,
        convention: str = "pvosimr",
    ) -> int:
        cms = as_constraint_list(constraint_models)
        key = cache_key(model, cms, algorithm, convention)
        if key in self._counts:
            self.hits += 1
            return self._counts[key]
        self.misses += 1
        value = _counter(convention)(model, cms, algorithm)
        self._counts[key] = value
        return value

    def save(self) -> None:
        if self.path is None:
            return
        make_folder(self.path.parent, self._chosen_by())
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self._counts, sort_keys=True))
        tmp.replace(self.path)

    def _chosen_by(self) -> str:
        return cache_dir_origin() if self.path == default_cache_path() else "--cache"


def _read_counts(path: Path) -> dict[str, int]:
    """The table in ``path``; a damaged one is set aside (an empty table: only a slower run)."""
    try:
        counts = json.loads(path.read_text())
    except OSError:
        return {}  # unreadable here (permissions): only a slower run
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        why = f"not JSON: {exc}"
    else:
        if isinstance(counts, dict) and all(type(v) is int for v in counts.values()):
            return counts
        why = "not a table of counts"
    set_aside(path, why)
    return {}


def count_table(
    title: str,
    head: str,
    labels: list[str],
    counts: list[dict[str, int]],
    x: list[float],
    last: int | None = None,
) -> list[str]:
    """A Markdown section of operation counts, a row per size (``labels``, at ``x``) and a column
    per algorithm, then each column's log-log slope against ``x`` (over the ``last`` sizes)."""
    columns = list(counts[0])
    lines = [f"## {title}", "", f"| {head} | " + " | ".join(columns) + " |"]
    lines.append("|" + "---|" * (len(columns) + 1))
    for label, row in zip(labels, counts, strict=True):
        lines.append(f"| {label} | " + " | ".join(f"{row[c]:,}" for c in columns) + " |")
    fit = slice(-last, None) if last else slice(None)
    logx = np.log(np.asarray(x, dtype=float))[fit]
    slopes = {c: np.polyfit(logx, np.log([r[c] for r in counts])[fit], 1)[0] for c in columns}
    over = f" (last {last} sizes)" if last else ""
    fits = ", ".join(f"{c} {v:.2f}" for c, v in slopes.items())
    return [*lines, "", f"Log-log slope against {head}{over}: {fits}.", ""]


# ---------------------------------------------------------------------------------------------
# ``pvosimr count``: the counts of one robot (a zoo name or a model file) from the shell.

DEFAULT_ALGORITHMS = tuple(a for a in ALGORITHMS if a != "naive")


def build_parser() -> argparse.ArgumentParser:
    """The options of ``pvosimr count``."""
    parser = command_parser(
        "count",
        "Operation counts of the CasADi SX function q -> G (the paper's cost "
        "metric) for a zoo robot or a URDF/MJCF model file.",
    )
    parser.add_argument(
        "robot",
        metavar="ROBOT[/PRESET]",
        help="a zoo name (pvosimr.zoo.names()), with its preset, or a URDF/MJCF file",
    )
    parser.add_argument(
        "--preset",
        metavar="NAME",
        help="constraint preset of a zoo robot (default: the robot's first preset)",
    )
    add_model_file_options(parser)
    parser.add_argument(
        "--algorithms",
        default=",".join(DEFAULT_ALGORITHMS),
        metavar="A,B,...",
        help="comma-separated algorithms, any case (default: %(default)s; 'naive' and 'auto' "
        "on request)",
    )
    add_cache_options(parser, no_cache_help="keep counts in memory only (default: cached)")
    return parser


def add_cache_options(parser: argparse.ArgumentParser, no_cache_help: str) -> None:
    """``--cache PATH`` (the operation-count cache file) or ``--no-cache``, not both."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--cache",
        type=file_path,
        default=default_cache_path(),
        metavar="PATH",
        help="operation-count cache file (default: %(default)s)",
    )
    where.add_argument("--no-cache", action="store_true", help=no_cache_help)


def _parse_algorithms(text: str, parser: argparse.ArgumentParser) -> tuple[str, ...]:
    """The requested algorithms, in order, without repeats; every one must exist."""
    names = [a.strip() for a in text.split(",") if a.strip()]
    canonical = {}  # any case, the paper's spellings, or ``auto``
    for a in names:
        with contextlib.suppress(ValueError):
            canonical[a] = canonical_algorithm(a)
    unknown = [a for a in names if a not in canonical]
    if unknown or not names:
        what = f"unknown algorithm(s) {', '.join(map(repr, unknown))}" if unknown else "none given"
        valid = ", ".join((*ALGORITHMS, AUTO))
        parser.error(f"--algorithms: {what}; valid: {valid} (any case: PV-OSIMr works)")
    return tuple(dict.fromkeys(canonical[a] for a in names))


def _load_zoo(spec: str, preset: str | None, parser: argparse.ArgumentParser):
    """The zoo robot of ``spec``, ``ROBOT[/PRESET]``, or ``ROBOT`` with ``preset`` (default:
    its first)."""
    from pvosimr import zoo

    if zoo.looks_like_model_file(spec):
        parser.error(f"no such model file: {spec}")
    name, _, case_preset = spec.partition("/")  # one slash at most: not a file's path
    case_preset = case_preset or None
    if case_preset is not None and preset is not None:
        parser.error(f"{spec} names its preset; --preset {preset} as well is one too many")
    try:
        robot = zoo.load(name)
    except ValueError as exc:
        if name in zoo.names() or not str(exc).startswith("unknown robot"):
            parser.error(str(exc))
        close = ", ".join(zoo.close_cases(spec))
        hint = f"did you mean {close}?" if close else f"zoo names: {', '.join(zoo.names())}"
        parser.error(f"unknown robot {name!r}: not a zoo name and not an existing file; {hint}")
    except (FileNotFoundError, ModuleNotFoundError) as exc:
        parser.error(f"robot {name!r} is not available: {exc}")
    preset = preset if case_preset is None else case_preset
    if preset is not None:
        try:
            robot = robot.with_preset(preset)
        except ValueError as exc:
            parser.error(str(exc))
    return robot


def _resolve(args: argparse.Namespace, parser: argparse.ArgumentParser):
    """``(label, model, constraint models)`` from ROBOT and the constraint options."""
    path = Path(args.robot)
    if args.robot and path.is_dir():  # Path("") is the current folder
        parser.error(f"{args.robot} is a directory, not a model file")
    if path.is_file():
        if args.preset is not None:
            parser.error("--preset is for zoo robots; give a model file --point/--weld instead")
        robot = robot_from_file(path, args, parser)
        label = f"{path.name} (model {robot.model.name!r})"
        return label, robot.model, list(robot.constraints)
    if args.free_flyer:
        parser.error("--free-flyer is for model files; zoo robots come with their root joint")
    if args.mimic:
        parser.error("--mimic is for model files; zoo robots come with their joints")
    if args.world_aligned and not args.constraints:
        parser.error("--world-aligned goes with --point/--weld/--point-between/--weld-between")
    if args.constraints and args.preset is not None:
        parser.error("give either --preset or --point/--weld, not both")
    robot = _load_zoo(args.robot, args.preset, parser)
    if args.constraints and "/" in args.robot:  # a zoo case, not a file: _load_zoo said so
        parser.error(f"give either {args.robot} or {robot.name} with --point/--weld, not both")
    if args.constraints:
        robot = with_frames(robot, args, parser)
    what = "constraints from the command line" if args.constraints else f"preset {robot.preset}"
    return f"{robot.name} ({what})", robot.model, list(robot.constraints)


def header(label: str, model: pin.Model, constraint_models: list) -> str:
    """One line: nq, nv, m, the constraints by kind, and the branching links.

    Branching links are the real links of ``Topology.N`` (two or more constrained subtrees
    meet there); the world and the EE nodes, which N also holds, are not counted.
    """
    from pvosimr.constraints import constraint_dim
    from pvosimr.topology import Topology

    topology = Topology(model, constraint_models)
    branching = [i for i in topology.N if 0 < i < topology.njoints]
    dims = [constraint_dim(cm) for cm in constraint_models]
    kinds = ", ".join(
        f"{dims.count(d)} {word}" for d, word in ((6, "weld"), (3, "point")) if d in dims
    )
    plural = "" if len(branching) == 1 else "s"
    return (
        f"{label}: nq {model.nq}, nv {model.nv}, m {topology.m}, "
        f"{len(constraint_models)} constraints ({kinds}), {len(branching)} branching link{plural}"
    )


def table(counts: dict[str, int]) -> list[str]:
    """Aligned rows: algorithm, operations, ratio to the cheapest; cheapest first."""
    rows = sorted(counts.items(), key=lambda item: item[1])
    cheapest = rows[0][1]
    width = max(len("algorithm"), *(len(a) for a, _ in rows))
    ops_width = max(len("operations"), *(len(f"{n:,}") for _, n in rows))
    lines = [f"{'algorithm':<{width}}  {'operations':>{ops_width}}  ratio"]
    lines += [f"{a:<{width}}  {n:>{ops_width},}  {n / cheapest:5.3f}" for a, n in rows]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """``pvosimr count ROBOT [...]``: the counts table on stdout (see ``--help``)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    require_extra(parser.prog, "casadi")
    algorithms = _parse_algorithms(args.algorithms, parser)
    label, model, constraint_models = _resolve(args, parser)
    try:
        line = header(label, model, constraint_models)
    except (ValueError, NotImplementedError) as exc:
        parser.error(str(exc))
    store, counts = CountCache(None if args.no_cache else args.cache), {}
    try:
        with progress_bar(algorithms, unit="count", file=sys.stderr, leave=False) as bar:
            for algorithm in bar:
                bar.set_postfix_str(algorithm)
                counts[algorithm] = store.count(model, constraint_models, algorithm)
    finally:
        store.save()
    print(line)
    print("\n".join(table(counts)))
    where = "memory only" if args.no_cache else str(args.cache)
    print(f"{store.hits} cached, {store.misses} counted (cache: {where})", file=sys.stderr)
    return 0
