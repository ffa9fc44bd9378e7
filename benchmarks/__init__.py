"""``pvosimr bench``: wall time per call of every pvosimr path against Pinocchio's, same run.

For each robot case (default: Atlas 2×6D and 4×3D feet, Atlas with two Shadow hands with and
without 6D feet, the Shadow hand, Talos), every method is timed on the same random
configurations, in interleaved rounds (round r times every method once) so that load changes on
a shared machine hit all methods alike:

- ``numpy:<algorithm>``: :func:`pvosimr.compute_delassus` for every algorithm;
- ``batch:pv-osimr``: :func:`pvosimr.compute_delassus_batch` on B configurations at once, per
  configuration;
- ``codegen:pv-osimr``: :func:`pvosimr.codegen.build.compile` (C from CasADi, called as a CPython
  extension, or through ctypes where Python's headers are missing: the timings record which);
  ``codegen-external:pv-osimr`` the same library through ``casadi.external``;
  ``codegen-batch:B<B>:t<t>`` its batched call ``f(qs, threads=t)``, per configuration, for
  B = 1, 64 and ``--batch-size`` and t = 1, 2;
- ``pin-efpa``, ``pin-pv-osimr``: Pinocchio's C++ ``computeDelassusMatrix`` and
  ``computePvDelassusMatrix`` called as bare bindings (constraint datas and the
  ``initPvDelassus`` object prepared once);
- ``ref:pin-efpa``, ``ref:pin-pv-osimr``, ``ref:pin-cholesky``: the same through
  :mod:`pvosimr.reference.pinocchio` (which adds its input check and cache lookup); the Cholesky
  route
  refuses a singular G.

On the cases of ``--derivative-robots`` (default Atlas 2×6D) the derivatives dG/dq are timed
too: ``f.derivatives(q)`` of ``codegen.compile(..., derivatives=True)`` and the gradient
``f.vjp(q, W)`` (``vjp=True``) against central differences of Pinocchio's
``computeDelassusMatrix`` and of the generated G (:mod:`.derivatives`).

On the MJCF robots of ``--mujoco-robots`` (default: the two arms holding a bar, the quadruped,
the Shadow hand, the humanoid), MuJoCo's own route to its Delassus matrix (``mj_fwdPosition`` up
to ``efc_AR``, and the stages it needs called one by one) is timed against ``numpy:pv-osimr``
and ``numpy:auto`` on MuJoCo's rows at configurations with contacts, every result checked
against MuJoCo's matrix first (:mod:`.mujoco`).

Reported are the median and quartiles over ``repeats`` samples.  Ratios divide by the faster of
the two bare Pinocchio calls measured in the same run.  Every method's result is checked against
``numpy:pv-osimr`` first.  Two sweeps time the Fig. 4 chains (:mod:`pvosimr.zoo.synthetic`)
against problem size: every numpy algorithm, and the batched and generated paths with their
memory up to n = 961 links (:mod:`.scaling`).  A third sweep times the batched recursive code
against the dense route J M⁻¹ Jᵀ (Pinocchio's M and J, numpy's batched Cholesky) on chains and
trees up to n = 300 and reads where the recursive code starts to win (:mod:`.crossover`).
Outputs (in ``--out``, default the git-ignored ``pvosimr-report/figures/``; ``--out figures``
rewrites the committed ones): ``timings.md``, ``timings.json``, ``timings.png`` and
``timings.pdf``, and ``crossover.png`` and ``crossover.pdf``; ``gpu.md`` and ``gpu.json``, the
section GPU (:mod:`.gpu`: the XLA route where JAX sees a GPU, the plain statement where it sees
none, and with ``--xla-cpu`` its compile on this CPU and float32's error on the zoo).

This module is the command line; its modules, one job each, are in docs/architecture.md.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from pvosimr import zoo
from pvosimr.study.names import ATLAS_6D as TARGET_CASE
from pvosimr.study.names import FRAX_BATCHES
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

from .crossover import CROSSOVER_METHODS, CROSSOVER_SIZES, quick_crossover_sizes, time_crossover
from .derivatives import DERIVATIVE_CASES, DERIVATIVE_FLAGS
from .environment import machine
from .figure import plot
from .frameworks import FRAMEWORK_BATCHES, FRAMEWORK_CASES
from .methods import BATCH_SIZE, CHECK_TOLERANCE, LABELS, labels
from .mujoco import MUJOCO_ROBOTS, known_robot
from .report import markdown, write
from .results import PIN, CaseResult, CrossoverPoint, ScalingPoint, Timing
from .scaling import (
    LARGE_METHODS,
    LARGE_SIZES,
    QUICK_LINKS,
    SCALING_METHODS,
    SCALING_SIZES,
    links,
    quick_sizes,
    time_large,
    time_scaling,
)
from .targets import framework_targets, timing_targets
from .timing import DEFAULT_CASES, case_name, run, time_case

__all__ = [
    "BATCH_SIZE",
    "CHECK_TOLERANCE",
    "CROSSOVER_METHODS",
    "CROSSOVER_SIZES",
    "DEFAULT_CASES",
    "DERIVATIVE_CASES",
    "LABELS",
    "LARGE_METHODS",
    "LARGE_SIZES",
    "MUJOCO_ROBOTS",
    "NONE",
    "PIN",
    "SCALING_METHODS",
    "SCALING_SIZES",
    "TARGET_CASE",
    "CaseResult",
    "CrossoverPoint",
    "ScalingPoint",
    "Timing",
    "build_parser",
    "frameworks_options",
    "labels",
    "machine",
    "main",
    "markdown",
    "plot",
    "run",
    "time_case",
    "time_crossover",
    "time_large",
    "time_scaling",
    "timing_targets",
    "write",
]

DEFAULT_OUT = REPORT_DIR / "figures"
"""The default output folder: the committed ``figures/`` inside the git-ignored report folder."""

SECTIONS = {
    "timings": "timings.md/.json/.png/.pdf: the robot cases, MuJoCo's route, the sweeps and, on "
    'its cases, "JAX and PyTorch"',
    "frameworks": 'timings.md/.json with the section "JAX and PyTorch" alone',
    "gpu": "gpu.md/.json: the XLA route on a GPU (with --xla-cpu on this CPU too)",
    "gpu-export": "the folder --export-dir for a GPU machine with JAX alone (its run.py)",
    "accuracy": "accuracy.md/.json/.png: every path's error against depth and cond(M)",
}
"""What ``--sections`` can run, and what each writes."""

DEFAULT_SECTIONS = ("timings", "gpu")

NONE = "none"
"""``--robots none``, ``--mujoco-robots none``: no case of that kind in the run."""

SWITCHES = {
    "--no-scaling": "skip both Fig. 4 size sweeps (default: run them)",
    "--quick-scaling": f"only the small sizes of the Fig. 4 sweeps, up to n = {QUICK_LINKS}, "
    "and of the crossover sweep (default: every size, up to n = 961 for the batched and "
    "generated paths, 300 for the crossover)",
    "--no-crossover": "skip the crossover sweep against the dense route (default: run it)",
    "--no-codegen": "skip the compiled paths, G and dG/dq (default: time them)",
    "--no-derivatives": "skip dG/dq (default: time it on --derivative-robots)",
    "--no-mujoco": "skip MuJoCo's route on the MJCF robots, like --mujoco-robots none "
    "(default: time it on --mujoco-robots)",
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


def _add_count(
    parser: argparse.ArgumentParser, flag: str, metavar: str, default: int, what: str
) -> None:
    """``flag N``: a count of at least 1."""
    help = f"{what}, at least 1 (default: %(default)s)"
    parser.add_argument(flag, type=at_least_one, default=default, metavar=metavar, help=help)


def build_parser() -> argparse.ArgumentParser:
    """The options of ``pvosimr bench``."""
    parser = command_parser(
        "bench",
        "Every measurement of pvosimr, one section each: time every path against Pinocchio's "
        "C++ on the paper's robots and the Fig. 4 chains, the front ends, the GPU, accuracy.",
    )
    parser.add_argument(
        "--sections",
        nargs="+",
        choices=list(SECTIONS),
        default=list(DEFAULT_SECTIONS),
        metavar="SECTION",
        help="what to run: "
        + "; ".join(f"{name}: {what}" for name, what in SECTIONS.items())
        + " (default: %(default)s)",
    )
    parser.add_argument(
        "--robots",
        nargs="+",
        metavar="ROBOT[/PRESET]",
        help="cases to time (a bare robot name means its first preset; default: "
        f"{' '.join(DEFAULT_CASES)}, leaving out those whose model is not installed; "
        f"{NONE}: no case, e.g. to run only the sweeps or MuJoCo's route)",
    )
    parser.add_argument(
        "--mujoco-robots",
        nargs="+",
        metavar="MJCF_ROBOT",
        help="MJCF robots (zoo names or files) on which MuJoCo's route to its Delassus matrix "
        f"is timed against pvosimr's (default: {' '.join(MUJOCO_ROBOTS)}, leaving out those "
        f"whose package is not installed; {NONE}: skip; needs MuJoCo)",
    )
    parser.add_argument(
        "--frameworks-robots",
        nargs="+",
        metavar="ROBOT[/PRESET]",
        help='cases of the section "JAX and PyTorch" (pvosimr\'s G under jax.jit/vmap/grad and '
        "torch autograd against the direct calls; needs jax and torch; default: those of "
        f"{' '.join(FRAMEWORK_CASES)} in the run's --robots; {NONE}: skip the section)",
    )
    parser.add_argument(
        "--frameworks-batches",
        nargs="+",
        type=at_least_one,
        metavar="B",
        default=list(FRAMEWORK_BATCHES),
        help='batch sizes of the section "JAX and PyTorch" (default: %(default)s)',
    )
    _add_count(parser, "--repeats", "N", 30, "samples per method")
    add_out_option(
        parser,
        help=f"output folder (default: {DEFAULT_OUT}/, git-ignored, and {REPORT_DIR}/ for the "
        "accuracy section, beside `pvosimr validate`'s report; --out figures rewrites the "
        "repository's committed timings, --out validation its accuracy study)",
    )
    for flag, help in SWITCHES.items():
        parser.add_argument(flag, action="store_true", help=help)
    parser.add_argument(
        "--codegen-flags",
        type=_flags,
        default=("-O3",),
        metavar="FLAGS",
        help="compiler flags of the generated C (default: -O3; -O1 builds large models far "
        "faster at about the same speed)",
    )
    parser.add_argument(
        "--derivative-flags",
        type=_flags,
        default=DERIVATIVE_FLAGS,
        metavar="FLAGS",
        help=f"compiler flags of the generated dG/dq (default: {shlex.join(DERIVATIVE_FLAGS)})",
    )
    parser.add_argument(
        "--derivative-robots",
        nargs="+",
        metavar="ROBOT[/PRESET]",
        help=f"cases of the run whose dG/dq is timed too (default: {' '.join(DERIVATIVE_CASES)})",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        metavar="DIR",
        help="folder of the compiled libraries (default: pvosimr's cache); a fresh one makes "
        "the report's compile times those of this run",
    )
    _add_count(
        parser, "--batch-size", "B", BATCH_SIZE, "configurations per call of the batched paths"
    )
    parser.add_argument(
        "--device-rows",
        type=Path,
        metavar="JSON",
        help="the section GPU's GPU part from the gpu_rows.json that the run.py of "
        "--sections gpu-export wrote on a GPU machine",
    )
    parser.add_argument(
        "--export-dir",
        type=Path,
        metavar="DIR",
        help="the folder --sections gpu-export writes (taken to the GPU machine)",
    )
    add_seed_option(parser)
    return parser


def _check_cases(specs: Sequence[str], flag: str, prog: str) -> int | None:
    """Exit status 2 and the reason when a requested case is unknown or its model missing."""
    for spec in specs:
        try:
            zoo.load_case(spec)
        except (ValueError, FileNotFoundError, ModuleNotFoundError) as exc:
            return usage_error(prog, f"{flag} {spec}: {exc}")
    return None


def _chosen(specs: Sequence[str] | None, default: Sequence[str]) -> Sequence[str]:
    """The cases of an option: its default when not given, none for ``none``."""
    if specs is None:
        return default
    return () if list(specs) == [NONE] else specs


def _mujoco_robots(args: argparse.Namespace) -> Sequence[str]:
    """The MJCF robots the options ask for."""
    return () if args.no_mujoco else _chosen(args.mujoco_robots, MUJOCO_ROBOTS)


def _derivative_cases(args: argparse.Namespace) -> Sequence[str]:
    """The cases whose dG/dq the options ask for."""
    if args.no_derivatives or args.no_codegen:
        return ()
    return _chosen(args.derivative_robots, DERIVATIVE_CASES)


def _scaling(args: argparse.Namespace) -> dict[str, tuple[int, ...]]:
    """The Fig. 4 sizes the options ask for: none, the small ones, or all."""
    if args.no_scaling:
        return {}
    return quick_sizes() if args.quick_scaling else SCALING_SIZES


def _large(args: argparse.Namespace) -> tuple[int, ...]:
    """The sizes k of the large sweep the options ask for: none, the small ones, or all."""
    if args.no_scaling:
        return ()
    if args.quick_scaling:
        return tuple(k for k in LARGE_SIZES if links("chain_welded_every_k", k) <= QUICK_LINKS)
    return LARGE_SIZES


def _crossover(args: argparse.Namespace) -> dict[str, tuple[int, ...]]:
    """The crossover sizes the options ask for: none, the small ones, or all."""
    if args.no_crossover:
        return {}
    return quick_crossover_sizes() if args.quick_scaling else CROSSOVER_SIZES


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


def _case_or_none(spec: str) -> str | None:
    """``robot/preset`` of ``spec``, None where its model is not installed."""
    if "/" in spec:
        return spec
    try:
        return case_name(spec)
    except (ValueError, FileNotFoundError, ModuleNotFoundError):
        return None


def _gpu_section(args: argparse.Namespace) -> list[Path]:
    """The section GPU (:mod:`.gpu`), written to ``gpu.md``; nothing without JAX."""
    try:
        from . import gpu
    except ModuleNotFoundError as exc:
        print(f"section GPU skipped: {exc}", file=sys.stderr)
        return []
    result = gpu.run(cpu=args.xla_cpu, float32=args.xla_cpu, device_rows=args.device_rows)
    return gpu.write(result, _out(args, "gpu"))


def _gpu_export(args: argparse.Namespace) -> list[Path]:
    """The folder for a GPU machine (:mod:`.gpu_export`): its manifest."""
    from .gpu_export import export

    return [export(args.export_dir, frax_batches=None if args.no_frax else FRAX_BATCHES)]


def _accuracy(args: argparse.Namespace, command: str) -> list[Path]:
    """The accuracy study (:mod:`.accuracy`), written to ``--out``."""
    from . import accuracy

    out = _out(args, "accuracy")
    accuracy.run(out, quick=args.quick, progress=not args.no_progress, command=command)
    return [out / f"accuracy.{ext}" for ext in ("md", "json", "png")]


def _check(args: argparse.Namespace, prog: str) -> int | None:
    """Exit status 2 and the reason when an option names an unknown case or robot, or a
    section lacks what it needs."""
    if "gpu-export" in args.sections and args.export_dir is None:
        return usage_error(prog, "--sections gpu-export needs --export-dir DIR")
    if args.device_rows is not None and not args.device_rows.is_file():
        return usage_error(prog, f"--device-rows {args.device_rows}: no such file")
    checked = (
        ("--robots", args.robots),
        ("--derivative-robots", args.derivative_robots),
        ("--frameworks-robots", args.frameworks_robots),
    )
    for flag, specs in checked:
        bad = None if specs is None else _check_cases(_chosen(specs, ()), flag, prog)
        if bad is not None:
            return bad
    unknown = [name for name in _mujoco_robots(args) if not known_robot(name)]
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


def _timings(args: argparse.Namespace, command: str) -> list[Path]:
    """The robot cases, MuJoCo's route and the sweeps (or "JAX and PyTorch" alone): written,
    their targets printed after the paths."""
    cases = _chosen(args.robots, DEFAULT_CASES)
    result = run(
        cases,
        repeats=args.repeats,
        scaling=_scaling(args),
        large=_large(args),
        crossover=_crossover(args),
        codegen=not args.no_codegen,
        codegen_flags=args.codegen_flags,
        derivative_cases=_derivative_cases(args),
        derivative_flags=args.derivative_flags,
        cache_dir=args.cache_dir,
        batch_size=args.batch_size,
        mujoco_robots=_mujoco_robots(args),
        seed=args.seed,
        frameworks=frameworks_options(args, cases),
        only_frameworks=args.only_frameworks,
        command=command,
    )
    paths = write(result, _out(args, "timings"))
    rows = [] if args.only_frameworks else timing_targets(result)
    if result.get("frameworks") is not None:
        rows += framework_targets(result["frameworks"])
    args.verdicts = [f"{v:8s} {t}: {m}" for t, m, v in rows]
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    """``pvosimr bench``: see ``--help``; exit 0 when written, 2 on bad input."""
    parser = build_parser()
    args = parser.parse_args(argv)
    sections = set(args.sections)
    if sections & {"timings", "frameworks", "accuracy"}:  # their plots come last: fail first
        require_extra(parser.prog, "matplotlib")
    args.only_frameworks = "frameworks" in sections and "timings" not in sections
    if args.only_frameworks:
        args.robots, args.no_mujoco, args.no_scaling, args.no_crossover = [NONE], True, True, True
    bad = _check(args, parser.prog)
    if bad is not None:
        return bad
    command = shlex.join(["pvosimr", "bench", *(sys.argv[2:] if argv is None else argv)])
    args.verdicts = []
    paths: list[Path] = []
    if sections & {"timings", "frameworks"}:
        paths += _timings(args, command)
    if "gpu" in sections:
        paths += _gpu_section(args)
    if "gpu-export" in sections:
        paths += _gpu_export(args)
    if "accuracy" in sections:
        paths += _accuracy(args, command)
    for path in paths:
        print(path)
    for line in args.verdicts:
        print(line)
    return 0
