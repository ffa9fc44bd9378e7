"""``pvosimr bench``: every measurement of pvosimr, one command, one runner.

:func:`run` times, in one process, the robot cases (:func:`.methods.time_case`), MuJoCo's route
(:mod:`.mujoco`), the section "JAX and PyTorch" where asked and the sweeps of :data:`SWEEPS`;
:func:`.report.write` writes the result.  The other sections (GPU, the export for a GPU machine,
accuracy) run from :func:`main`; docs/testing.md explains the options at length.
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
from pvosimr.study import options as cli
from pvosimr.study.progress import progress_bar

from . import crossover, scaling
from .derivatives import DERIVATIVE_CASES, DERIVATIVE_FLAGS
from .environment import keep_freed_memory, machine
from .frameworks import FRAMEWORK_CASES
from .loop import Timing
from .methods import PIN, Case, Options, case_name, labels, time_case
from .mujoco import MUJOCO_ROBOTS, known_robot, time_mujoco
from .names import BATCH_SIZE, CROSSOVER_BATCH, DEFAULT_CASES, FRAMEWORK_BATCHES, FRAX_BATCHES
from .report import rewrite, write
from .scaling import Point
from .targets import framework_targets, timing_targets

__all__ = ["PIN", "SWEEPS", "Case", "Options", "Point", "Sweep", "Timing", "build_parser"]
__all__ += ["frameworks_options", "labels", "main", "run", "timing_targets", "write"]

DEFAULT_OUT = cli.REPORT_DIR / "figures"
"""The default output folder: the committed ``figures/`` inside the git-ignored report folder."""
NONE = "none"
"""``--robots none``, ``--mujoco-robots none``: no case of that kind in the run."""


@dataclass(frozen=True)
class Sweep:
    """A sweep against size: its sizes (all, and those of ``--quick-scaling``), its samples from
    ``--repeats``, the option that skips it and its timer ``(sizes, repeats, options)``."""

    name: str
    sizes: dict[str, tuple[int, ...]]
    quick: dict[str, tuple[int, ...]]
    repeats: Callable[[int], int]
    skip: str
    time: Callable[..., list[Point]]


SWEEPS = (
    Sweep("scaling", scaling.SCALING_SIZES, scaling.quick_sizes(), lambda r: max(3, r // 3),
          "no_scaling", scaling.time_scaling),
    Sweep("large", scaling.LARGE_SIZES, scaling.quick_sizes(scaling.LARGE_SIZES),
          lambda r: max(2, min(5, r // 6)), "no_scaling", scaling.time_large),
    Sweep("crossover", crossover.CROSSOVER_SIZES, crossover.quick_crossover_sizes(),
          lambda r: max(3, min(7, r // 4)), "no_crossover", crossover.time_crossover),
)  # fmt: skip
"""The sweeps, in the order they run and are reported (a sample of a large size lasts long)."""


def _flags(text: str) -> tuple[str, ...]:
    """``--codegen-flags``: split as a shell would."""
    try:
        return tuple(shlex.split(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{exc} in {text!r}") from None


CASES = ", ".join(DEFAULT_CASES)
OPTIONS = (  # flag, metavar, type, default, nargs, help
    ("--robots", "ROBOT[/PRESET]", str, None, "+", f"cases (default: {CASES}; {NONE}: none)"),
    ("--mujoco-robots", "MJCF_ROBOT", str, None, "+",
     f"MJCF robots of MuJoCo's route (default: {', '.join(MUJOCO_ROBOTS)}; {NONE}: skip)"),
    ("--frameworks-robots", "ROBOT[/PRESET]", str, None, "+",
     f'cases of "JAX and PyTorch" (default: the run\'s among {", ".join(FRAMEWORK_CASES)})'),
    ("--frameworks-batches", "B", cli.at_least_one, list(FRAMEWORK_BATCHES), "+",
     'batch sizes of "JAX and PyTorch" (default: %(default)s)'),
    ("--repeats", "N", cli.at_least_one, 30, None, "samples per method (default: %(default)s)"),
    ("--codegen-flags", "FLAGS", _flags, Options().flags, None,
     "compiler flags of the generated G (default: -O3)"),
    ("--derivative-flags", "FLAGS", _flags, DERIVATIVE_FLAGS, None,
     f"compiler flags of the generated dG/dq (default: {shlex.join(DERIVATIVE_FLAGS)})"),
    ("--derivative-robots", "ROBOT[/PRESET]", str, None, "+",
     f"cases whose dG/dq is timed (default: {', '.join(DERIVATIVE_CASES)})"),
    ("--cache-dir", "DIR", Path, None, None, "compiled libraries (default: pvosimr's cache)"),
    ("--batch-size", "B", cli.at_least_one, BATCH_SIZE, None,
     "configurations per batched call (default: %(default)s)"),
    ("--device-rows", "JSON", Path, None, None,
     "gpu_rows.json of a GPU machine for the section GPU (default: none)"),
    ("--export-dir", "DIR", Path, None, None, "where gpu-export writes (default: none)"),
    ("--from-json", "JSON", Path, None, None,
     "write timings.md and its figures again from a timings.json, measuring nothing "
     "(default: measure)"),
)  # fmt: skip
"""The options with a value."""

SWITCHES = {
    "--no-scaling": "skip the Fig. 4 sweeps",
    "--quick-scaling": f"the sweeps' sizes up to n = {scaling.QUICK_LINKS} only",
    "--no-crossover": "skip the crossover sweep",
    "--no-codegen": "skip the generated code",
    "--no-frax": 'leave frax out of "JAX and PyTorch"',
    "--xla-cpu": "the section GPU also compiles XLA on this CPU (minutes)",
    "--quick": "the accuracy section's small plan",
    "--no-progress": "no progress bar in the accuracy section",
}
"""The on/off options (all off by default)."""


def build_parser() -> argparse.ArgumentParser:
    """The options of ``pvosimr bench``."""
    parser = cli.command_parser(
        "bench",
        "Every measurement of pvosimr, one section each: time every path against Pinocchio's "
        "C++ on the paper's robots and the Fig. 4 chains, the front ends, the GPU, accuracy "
        "(docs/testing.md explains every option).",
    )
    what = "; ".join(f"{name}: {help}" for name, (help, _, _) in SECTIONS.items())
    parser.add_argument("--sections", nargs="+", choices=list(SECTIONS), default=["timings"],
                        metavar="SECTION", help=f"{what} (default: %(default)s)")  # fmt: skip
    for flag, metavar, kind, default, nargs, help in OPTIONS:
        parser.add_argument(flag, metavar=metavar, type=kind, default=default, nargs=nargs,
                            help=help)  # fmt: skip
    cli.add_out_option(
        parser,
        help=f"output folder (default: {DEFAULT_OUT}/, git-ignored, and {cli.REPORT_DIR}/ for "
        "accuracy; --out figures rewrites the committed timings, --out validation accuracy)",
    )
    for flag, help in SWITCHES.items():
        parser.add_argument(flag, action="store_true", help=f"{help} (default: off)")
    cli.add_seed_option(parser)
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
    them where the section runs alone)."""
    only = "frameworks" in args.sections and "timings" not in args.sections
    if args.frameworks_robots is not None:
        specs = _chosen(args.frameworks_robots, ())
    elif only:
        specs = FRAMEWORK_CASES
    else:  # FRAMEWORK_CASES are robot/preset names: only a bare name needs its model loaded
        specs = tuple(s for s in cases if _case_or_none(s) in FRAMEWORK_CASES)
    if not specs and not only:
        return None
    frax = () if args.no_frax else None
    batches = tuple(sorted(set(args.frameworks_batches)))
    return {"cases": tuple(specs), "batches": batches, "frax_batches": frax}


def _time_cases(specs: Sequence[str], derivative_specs: Sequence[str], options: Options):
    """:func:`.methods.time_case` on each case; those whose model is not installed, with why."""
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
    codegen = not args.no_codegen
    flags, derivative_flags = tuple(args.codegen_flags), tuple(args.derivative_flags)
    options = Options(args.repeats, args.seed, codegen, flags, args.cache_dir,
                      args.batch_size, derivative_flags)  # fmt: skip
    cases = _chosen(args.robots, DEFAULT_CASES)
    derivative_specs = _chosen(args.derivative_robots, DERIVATIVE_CASES) if codegen else ()
    frameworks = frameworks_options(args, cases)
    # One BLAS thread for the whole run (OpenBLAS's idle threads spin on the core the batches
    # need), and the memory the process frees stays with it (no call pays another's page faults).
    with crossover.blas_threads(1) as blas:
        info = {**machine(), "freed memory": keep_freed_memory()}
        started = time.perf_counter()
        section = None
        if frameworks is not None:  # first, before anything else imports jax
            from .frameworks import time_frameworks

            section = time_frameworks(**frameworks, repeats=args.repeats, seed=args.seed,
                                      cache_dir=args.cache_dir)  # fmt: skip
        results, unavailable = _time_cases(cases, derivative_specs, options)
        robots = _chosen(args.mujoco_robots, MUJOCO_ROBOTS)
        mujoco = time_mujoco(robots, repeats=args.repeats, seed=args.seed)
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
        "codegen_flags": list(flags),
        "derivative_flags": list(derivative_flags),
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
        return cli.usage_error(prog, "--sections gpu-export needs --export-dir DIR")
    for flag in ("--device-rows", "--from-json"):
        path = getattr(args, flag[2:].replace("-", "_"))
        if path is not None and not path.is_file():
            return cli.usage_error(prog, f"{flag} {path}: no such file")
    for flag in ("--robots", "--derivative-robots", "--frameworks-robots"):
        for spec in _chosen(getattr(args, flag[2:].replace("-", "_")), ()):
            try:
                zoo.load_case(spec)
            except (ValueError, FileNotFoundError, ModuleNotFoundError) as exc:
                return cli.usage_error(prog, f"{flag} {spec}: {exc}")
    unknown = [n for n in _chosen(args.mujoco_robots, MUJOCO_ROBOTS) if not known_robot(n)]
    if unknown:
        return cli.usage_error(prog, f"--mujoco-robots {unknown[0]}: no such MJCF robot or file")
    for out in {_out(args, s) for s in args.sections if SECTIONS[s][1] is not None}:
        unmade = cli.make_out(prog, out)
        if unmade is not None:
            return unmade
    return None


def _out(args: argparse.Namespace, section: str) -> Path:
    """Where ``section`` writes: ``--out``, else its default folder."""
    return args.out or SECTIONS[section][1]


def _timings(args: argparse.Namespace, command: str) -> tuple[list[Path], list[str]]:
    """The sections "timings" and "frameworks": written, and their verdicts as lines."""
    if args.from_json is not None:
        return rewrite(args.from_json, _out(args, "timings")), []
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


SECTIONS = {  # name: help, folder without --out (None: --export-dir), runner
    "timings": ("timings.md/.json/.png/.pdf", DEFAULT_OUT, _timings),
    "frameworks": ('the section "JAX and PyTorch" alone', DEFAULT_OUT, None),
    "gpu": ("gpu.md/.json: CUDA kernels and XLA on a GPU", DEFAULT_OUT, _gpu),
    "gpu-export": ("a folder (--export-dir) to run on a GPU machine", None, _gpu_export),
    "accuracy": ("accuracy.md/.json/.png", cli.REPORT_DIR, _accuracy),
}
"""What ``--sections`` can run, in the order they run ("frameworks" runs with "timings"); a
runner ``(args, command)`` returns the paths it wrote and its verdicts as lines."""


def main(argv: Sequence[str] | None = None) -> int:
    """``pvosimr bench``: see ``--help``; exit 0 when written, 2 on bad input."""
    parser = build_parser()
    args = parser.parse_args(argv)
    sections = set(args.sections)
    if sections & {"timings", "frameworks", "accuracy"}:  # their plots come last: fail first
        cli.require_extra(parser.prog, "matplotlib")
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
    for name, (_, _, runner) in SECTIONS.items():
        if name in sections and runner is not None:
            written, lines = runner(args, command)
            paths += written
            verdicts += lines
    for line in [*map(str, paths), *verdicts]:
        print(line)
    return 0
