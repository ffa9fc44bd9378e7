"""``pvosimr bench``: every measurement of pvosimr, one command, one runner.

The runner (:func:`run`) times, on the same machine and in one process, the robot cases
(:func:`.methods.time_case`: every method of G gated against ``numpy:pv-osimr``, then timed in
interleaved rounds by :mod:`.loop`; dG/dq on ``--derivative-robots``), MuJoCo's route on the
MJCF robots (:mod:`.mujoco`), the section "JAX and PyTorch" where asked, and the sweeps of
:data:`SWEEPS` (the Fig. 4 chains, the batched and generated paths up to n = 961 with their
memory, the crossover with the dense route).  :func:`.report.write` turns the result into
``timings.md``, ``timings.json``, ``timings.png|pdf`` and ``crossover.png|pdf``; the targets are
data in :mod:`.targets`.  The other sections (GPU, the export for a GPU machine, accuracy) run
from :func:`main`.  The modules, one job each, are in docs/architecture.md.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pvosimr import zoo
from pvosimr.study.options import (
    REPORT_DIR,
    add_out_option,
    add_seed_option,
    at_least_one,
    command_parser,
    make_out,
    require_extra,
    usage_error,
)
from pvosimr.study.progress import progress_bar

from .crossover import CROSSOVER_SIZES, blas_threads, quick_crossover_sizes, time_crossover
from .derivatives import DERIVATIVE_CASES, DERIVATIVE_FLAGS
from .environment import keep_freed_memory, machine
from .frameworks import FRAMEWORK_CASES
from .loop import Timing
from .methods import PIN, Case, Options, case_name, labels, time_case
from .mujoco import MUJOCO_ROBOTS, known_robot, time_mujoco
from .names import (
    BATCH_SIZE,
    CROSSOVER_BATCH,
    DEFAULT_CASES,
    FRAMEWORK_BATCHES,
    FRAX_BATCHES,
)
from .report import write
from .scaling import (
    LARGE_SIZES,
    QUICK_LINKS,
    SCALING_SIZES,
    Point,
    quick_sizes,
    time_large,
    time_scaling,
)
from .targets import framework_targets, timing_targets

__all__ = [
    "PIN",
    "SWEEPS",
    "Case",
    "Options",
    "Point",
    "Sweep",
    "Timing",
    "build_parser",
    "frameworks_options",
    "labels",
    "main",
    "run",
    "timing_targets",
    "write",
]

DEFAULT_OUT = REPORT_DIR / "figures"
"""The default output folder: the committed ``figures/`` inside the git-ignored report folder."""


@dataclass(frozen=True)
class Sweep:
    """A sweep of the run: its sizes (all, and those of ``--quick-scaling``), its samples from
    ``--repeats`` (a sample of its largest size lasts long), the option that skips it and its
    timer ``(sizes, repeats, options, progress=) -> [Point]``."""

    name: str
    sizes: dict[str, tuple[int, ...]]
    quick: dict[str, tuple[int, ...]]
    repeats: Callable[[int], int]
    skip: str
    time: Callable[..., list[Point]]


SWEEPS = (
    Sweep(
        "scaling",
        SCALING_SIZES,
        quick_sizes(),
        lambda r: max(3, r // 3),
        "no_scaling",
        time_scaling,
    ),
    Sweep(
        "large",
        LARGE_SIZES,
        quick_sizes(LARGE_SIZES),
        lambda r: max(2, min(5, r // 6)),
        "no_scaling",
        time_large,
    ),
    Sweep(
        "crossover",
        CROSSOVER_SIZES,
        quick_crossover_sizes(),
        lambda r: max(3, min(7, r // 4)),
        "no_crossover",
        time_crossover,
    ),
)
"""The sweeps against size, in the order they run and are reported."""

SECTIONS = {
    "timings": "timings.md/.json/.png/.pdf: the robot cases, MuJoCo's route, the sweeps and, on "
    'its cases, "JAX and PyTorch"',
    "frameworks": 'timings.md/.json with the section "JAX and PyTorch" alone',
    "gpu": "gpu.md/.json: the CUDA kernels and the XLA route on a GPU (--xla-cpu: this CPU too)",
    "gpu-export": "the folder --export-dir for a GPU machine with JAX alone (its run.py)",
    "accuracy": "accuracy.md/.json/.png: every path's error against depth and cond(M)",
}
"""What ``--sections`` can run, and what each writes."""

DEFAULT_SECTIONS = ("timings",)
"""The sections of a plain ``pvosimr bench``.  The section GPU runs when asked: its numbers come
from a GPU (here, or a GPU machine's rows), and a run without one would write "no GPU" over
them."""

NONE = "none"
"""``--robots none``, ``--mujoco-robots none``: no case of that kind in the run."""

SWITCHES = {
    "--no-scaling": "skip both Fig. 4 size sweeps (default: run them)",
    "--quick-scaling": f"only the small sizes of the Fig. 4 sweeps, up to n = {QUICK_LINKS}, "
    "and of the crossover sweep (default: every size, up to n = 961 for the batched and "
    "generated paths, 300 for the crossover)",
    "--no-crossover": "skip the crossover sweep against the dense route (default: run it)",
    "--no-codegen": "skip the compiled paths, G and dG/dq (default: time them)",
    "--no-frax": 'leave frax\'s dense route out of the section "JAX and PyTorch" (default: '
    "compare with it where frax is installed)",
    "--xla-cpu": "the section GPU (gpu.md) also compiles the XLA route on this CPU, cold and "
    "from its persistent cache, and reports float32's error on the zoo (minutes; default: only "
    "the GPU timings, where JAX sees a GPU)",
    "--quick": "the accuracy section's small plan, a few small chains, under a minute "
    "(default: the full plan)",
    "--no-progress": "no progress bar in the accuracy section (default: one)",
}
"""The on/off options and their help."""


def _flags(text: str) -> tuple[str, ...]:
    """``--codegen-flags``: split as a shell would."""
    try:
        return tuple(shlex.split(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{exc} in {text!r}") from None


CASE = "ROBOT[/PRESET]"


def _one(metavar: str, type: Callable, default=None, help: str = "") -> dict:
    """An option with one value."""
    return {"nargs": None, "type": type, "default": default, "metavar": metavar, "help": help}


OPTIONS: dict[str, dict] = {
    "--robots": {
        "metavar": CASE,
        "help": "cases to time (a bare robot name means its first preset; default: "
        f"{' '.join(DEFAULT_CASES)}, leaving out those whose model is not installed; {NONE}: "
        "no case, e.g. to run only the sweeps or MuJoCo's route)",
    },
    "--mujoco-robots": {
        "metavar": "MJCF_ROBOT",
        "help": "MJCF robots (zoo names or files) on which MuJoCo's route to its Delassus "
        f"matrix is timed against pvosimr's (default: {' '.join(MUJOCO_ROBOTS)}, leaving out "
        f"those whose package is not installed; {NONE}: skip; needs MuJoCo)",
    },
    "--frameworks-robots": {
        "metavar": CASE,
        "help": 'cases of the section "JAX and PyTorch" (pvosimr\'s G under jax.jit/vmap/grad '
        "and torch autograd against the direct calls; needs jax and torch; default: those of "
        f"{' '.join(FRAMEWORK_CASES)} in the run's --robots; {NONE}: skip the section)",
    },
    "--frameworks-batches": {
        "type": at_least_one,
        "metavar": "B",
        "default": list(FRAMEWORK_BATCHES),
        "help": 'batch sizes of the section "JAX and PyTorch" (default: %(default)s)',
    },
    "--repeats": _one(
        "N", at_least_one, 30, "samples per method, at least 1 (default: %(default)s)"
    ),
    "--codegen-flags": _one(
        "FLAGS",
        _flags,
        Options().flags,
        "compiler flags of the generated C (default: -O3; -O1 builds large models far faster at "
        "about the same speed)",
    ),
    "--derivative-flags": _one(
        "FLAGS",
        _flags,
        DERIVATIVE_FLAGS,
        f"compiler flags of the generated dG/dq (default: {shlex.join(DERIVATIVE_FLAGS)})",
    ),
    "--derivative-robots": {
        "metavar": CASE,
        "help": f"cases whose dG/dq is timed too (default: {' '.join(DERIVATIVE_CASES)})",
    },
    "--cache-dir": _one(
        "DIR",
        Path,
        help="folder of the compiled libraries (default: pvosimr's cache); a fresh one makes the "
        "report's compile times those of this run",
    ),
    "--batch-size": _one(
        "B",
        at_least_one,
        BATCH_SIZE,
        "configurations per call of the batched paths, at least 1 (default: %(default)s)",
    ),
    "--device-rows": _one(
        "JSON",
        Path,
        help="the section GPU's GPU part from the gpu_rows.json that the run.py of --sections "
        "gpu-export wrote on a GPU machine",
    ),
    "--export-dir": _one(
        "DIR", Path, help="the folder --sections gpu-export writes (taken to the GPU machine)"
    ),
}
"""The options with a value, as data: each takes one or more values unless made by :func:`_one`."""


def build_parser() -> argparse.ArgumentParser:
    """The options of ``pvosimr bench``."""
    parser = command_parser(
        "bench",
        "Every measurement of pvosimr, one section each: time every path against Pinocchio's "
        "C++ on the paper's robots and the Fig. 4 chains, the front ends, the GPU, accuracy.",
    )
    what = "; ".join(f"{name}: {text}" for name, text in SECTIONS.items())
    parser.add_argument(
        "--sections",
        nargs="+",
        choices=list(SECTIONS),
        default=list(DEFAULT_SECTIONS),
        metavar="SECTION",
        help=f"what to run: {what} (default: %(default)s)",
    )
    for flag, option in OPTIONS.items():
        parser.add_argument(flag, **{"nargs": "+", **option})
    add_out_option(
        parser,
        help=f"output folder (default: {DEFAULT_OUT}/, git-ignored, and {REPORT_DIR}/ for the "
        "accuracy section, beside `pvosimr validate`'s report; --out figures rewrites the "
        "repository's committed timings, --out validation its accuracy study)",
    )
    for flag, help in SWITCHES.items():
        parser.add_argument(flag, action="store_true", help=help)
    add_seed_option(parser)
    return parser


def _chosen(specs: Sequence[str] | None, default: Sequence[str]) -> Sequence[str]:
    """The cases of an option: its default when not given, none for ``none``."""
    if specs is None:
        return default
    return () if list(specs) == [NONE] else specs


def _case_or_none(spec: str) -> str | None:
    """``robot/preset`` of ``spec``, None where its model is not installed."""
    try:
        return spec if "/" in spec else case_name(spec)
    except (ValueError, FileNotFoundError, ModuleNotFoundError):
        return None


def frameworks_options(args: argparse.Namespace, cases: Sequence[str]) -> dict | None:
    """The options of the section "JAX and PyTorch", None where it does not run: its cases
    are ``--frameworks-robots``, else the run's cases among :data:`FRAMEWORK_CASES` (all of
    them where the section runs alone, ``--sections frameworks``)."""
    only = "frameworks" in args.sections and "timings" not in args.sections
    if args.frameworks_robots is not None:
        specs = _chosen(args.frameworks_robots, ())
    elif only:
        specs = FRAMEWORK_CASES
    else:  # FRAMEWORK_CASES are robot/preset names: only a bare name needs its model loaded
        specs = tuple(s for s in cases if _case_or_none(s) in FRAMEWORK_CASES)
    if not specs and not only:
        return None
    batches = tuple(sorted(set(args.frameworks_batches)))
    frax = () if args.no_frax else None
    return {"cases": tuple(specs), "batches": batches, "frax_batches": frax}


def _time_cases(specs: Sequence[str], derivative_specs: Sequence[str], options: Options):
    """:func:`.methods.time_case` on each case; the cases whose model is not installed, with
    why."""
    derivative = {_case_or_none(s) for s in derivative_specs} - {None}
    cases, unavailable = [], {}
    for spec in progress_bar(list(specs), desc="robots", file=sys.stderr):
        try:
            cases.append(time_case(spec, options, case_name(spec) in derivative))
        except (FileNotFoundError, ModuleNotFoundError) as exc:  # an optional model source
            unavailable[spec] = str(exc).split(". ")[0]
    return cases, unavailable


def run(args: argparse.Namespace, command: str) -> dict:
    """Every measurement of the sections "timings" and "frameworks" the options ask for; the
    dict :func:`.report.write` reports."""
    flags, derivative_flags = tuple(args.codegen_flags), tuple(args.derivative_flags)
    codegen = not args.no_codegen
    options = Options(
        args.repeats, args.seed, codegen, flags, args.cache_dir, args.batch_size, derivative_flags
    )
    cases = _chosen(args.robots, DEFAULT_CASES)
    derivative_specs = _chosen(args.derivative_robots, DERIVATIVE_CASES) if codegen else ()
    mujoco_robots = _chosen(args.mujoco_robots, MUJOCO_ROBOTS)
    frameworks = frameworks_options(args, cases)
    # One BLAS thread for the whole run: after a numpy call OpenBLAS keeps its idle threads
    # spinning for a while, on the core that the two-thread batches of the next sample need.
    # And the memory the process frees stays with it: no call pays page faults that another
    # call's earlier allocations decided.
    with blas_threads(1) as blas:
        info = {**machine(), "freed memory": keep_freed_memory()}
        started = time.perf_counter()
        section = None
        if frameworks is not None:  # first, before anything else imports jax
            from .frameworks import time_frameworks

            section = time_frameworks(
                **frameworks, repeats=args.repeats, seed=args.seed, cache_dir=args.cache_dir
            )
        results, unavailable = _time_cases(cases, derivative_specs, options)
        mujoco = time_mujoco(mujoco_robots, repeats=args.repeats, seed=args.seed)
        sweeps = {}
        for sweep in SWEEPS:
            sizes = sweep.quick if args.quick_scaling else sweep.sizes
            sizes = {} if getattr(args, sweep.skip) else sizes
            repeats = sweep.repeats(args.repeats)
            sweeps[sweep.name] = sweep.time(sizes, repeats, options) if sizes else []
    return {
        "machine": {**info, "numpy's BLAS threads during the run": blas},
        "command": command,
        "repeats": args.repeats,
        "batch_size": args.batch_size,
        "codegen_flags": list(args.codegen_flags),
        "derivative_flags": list(args.derivative_flags),
        "cases": results,
        "unavailable": unavailable,
        **dict(zip(("mujoco", "mujoco_unavailable", "mujoco_skipped"), mujoco, strict=True)),
        **sweeps,
        "crossover_batch": CROSSOVER_BATCH,
        "crossover_blas_threads": blas,
        "frameworks": section,
        "only_frameworks": args.only_frameworks,
        "seconds": time.perf_counter() - started,
    }


def _check(args: argparse.Namespace, prog: str) -> int | None:
    """Exit status 2 and the reason when an option names an unknown case or robot, or a
    section lacks what it needs."""
    if "gpu-export" in args.sections and args.export_dir is None:
        return usage_error(prog, "--sections gpu-export needs --export-dir DIR")
    if args.device_rows is not None and not args.device_rows.is_file():
        return usage_error(prog, f"--device-rows {args.device_rows}: no such file")
    for flag in ("--robots", "--derivative-robots", "--frameworks-robots"):
        for spec in _chosen(getattr(args, flag[2:].replace("-", "_")), ()):
            try:
                zoo.load_case(spec)
            except (ValueError, FileNotFoundError, ModuleNotFoundError) as exc:
                return usage_error(prog, f"{flag} {spec}: {exc}")
    unknown = [n for n in _chosen(args.mujoco_robots, MUJOCO_ROBOTS) if not known_robot(n)]
    if unknown:
        return usage_error(prog, f"--mujoco-robots {unknown[0]}: no such MJCF robot or file")
    for out in {_out(args, s) for s in args.sections if s != "gpu-export"}:
        unmade = make_out(prog, out)
        if unmade is not None:
            return unmade
    return None


def _out(args: argparse.Namespace, section: str) -> Path:
    """Where ``section`` writes: ``--out``, else its default folder."""
    if args.out is not None:
        return args.out
    return REPORT_DIR if section == "accuracy" else DEFAULT_OUT


def _timings(args: argparse.Namespace, command: str) -> tuple[list[Path], list[str]]:
    """The sections "timings" and "frameworks": written, and their verdicts as lines."""
    result = run(args, command)
    paths = write(result, _out(args, "timings"))
    rows = [] if args.only_frameworks else timing_targets(result)
    if result.get("frameworks") is not None:
        rows += framework_targets(result["frameworks"])
    return paths, [f"{v:8s} {t}: {m}" for t, m, v in rows]


def _gpu(args: argparse.Namespace, command: str) -> tuple[list[Path], list[str]]:
    """The section GPU (:mod:`.gpu`), written to ``gpu.md``; nothing without JAX."""
    try:
        from . import gpu
    except ModuleNotFoundError as exc:
        print(f"section GPU skipped: {exc}", file=sys.stderr)
        return [], []
    result = gpu.run(cpu=args.xla_cpu, float32=args.xla_cpu, device_rows=args.device_rows)
    return gpu.write(result, _out(args, "gpu")), []


def _gpu_export(args: argparse.Namespace, command: str) -> tuple[list[Path], list[str]]:
    """The folder for a GPU machine (:mod:`.gpu_export`): its manifest."""
    from .gpu_export import export

    return [export(args.export_dir, frax_batches=None if args.no_frax else FRAX_BATCHES)], []


def _accuracy(args: argparse.Namespace, command: str) -> tuple[list[Path], list[str]]:
    """The accuracy study (:mod:`.accuracy`), written to ``--out``."""
    from . import accuracy

    out = _out(args, "accuracy")
    accuracy.run(out, quick=args.quick, progress=not args.no_progress, command=command)
    return [out / f"accuracy.{ext}" for ext in ("md", "json", "png")], []


RUNNERS = {"timings": _timings, "gpu": _gpu, "gpu-export": _gpu_export, "accuracy": _accuracy}
"""The sections in the order they run ("frameworks" runs with "timings")."""


def main(argv: Sequence[str] | None = None) -> int:
    """``pvosimr bench``: see ``--help``; exit 0 when written, 2 on bad input."""
    parser = build_parser()
    args = parser.parse_args(argv)
    sections = set(args.sections)
    if sections & {"timings", "frameworks", "accuracy"}:  # their plots come last: fail first
        require_extra(parser.prog, "matplotlib")
    args.only_frameworks = "frameworks" in sections and "timings" not in sections
    if args.only_frameworks:
        args.robots = args.mujoco_robots = [NONE]
        args.no_scaling = args.no_crossover = True
        sections.add("timings")
    bad = _check(args, parser.prog)
    if bad is not None:
        return bad
    command = shlex.join(["pvosimr", "bench", *(sys.argv[2:] if argv is None else argv)])
    paths, verdicts = [], []
    for name, runner in RUNNERS.items():
        if name in sections:
            written, lines = runner(args, command)
            paths += written
            verdicts += lines
    for line in [*map(str, paths), *verdicts]:
        print(line)
    return 0
