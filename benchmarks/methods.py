"""The robot cases: every way bench computes one case's G (:func:`labels`), gated against
``numpy:pv-osimr``, then timed in interleaved rounds (:mod:`.loop`); dG/dq from :mod:`.derivatives`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pinocchio as pin

from pvosimr import ALGORITHMS, compute_delassus, compute_delassus_batch, plotting, reference, zoo

from .derivatives import DERIVATIVE_FLAGS, DERIVATIVE_LABELS, derivative_methods
from .loop import N_CONFIGS, Method, Timed, gate, time_methods
from .names import BATCH_SIZE, COMPILED_BATCHES, TOLERANCES

CHECK_TOLERANCE = TOLERANCES["check"]
PIN = ("pin-efpa", "pin-pv-osimr")  # the bare Pinocchio C++ calls; ratios divide by the faster
THREADS = (1, 2)  # threads of the batched generated code (f(qs, threads=t))


@dataclass(frozen=True)
class Options:
    """How a run measures: samples, the seed of its configurations, the generated code (timed
    or not, its flags, its cache) and the batch of the batched paths."""

    repeats: int = 30
    seed: int = 0
    codegen: bool = True
    flags: tuple[str, ...] = ("-O3",)
    cache_dir: Path | None = None
    batch_size: int = BATCH_SIZE
    derivative_flags: tuple[str, ...] = DERIVATIVE_FLAGS


@dataclass
class Case(Timed):
    """One robot case: ``errors`` against numpy:pv-osimr, the build facts of the generated G
    and the check and builds of dG/dq beside them."""

    codegen: dict = field(default_factory=dict)
    derivatives: dict = field(default_factory=dict)
    ERRORS = "errors_vs_numpy_pv_osimr"

    def pin_best(self) -> tuple[str, float] | None:
        """The faster bare Pinocchio call (name, median seconds), if any was timed."""
        timed = [(self.timings[k].median, k) for k in PIN if k in self.timings]
        return (min(timed)[1], min(timed)[0]) if timed else None

    def to_json(self) -> dict:
        extra = {"codegen": self.codegen, "derivatives": self.derivatives}
        return {**self.json_head(), self.ERRORS: self.errors, **extra}


def batch_sizes(batch_size: int) -> tuple[int, ...]:
    """The batch sizes of the generated code: :data:`~.names.COMPILED_BATCHES` and the run's."""
    return tuple(sorted({*COMPILED_BATCHES, batch_size}))


def batch_name(B: int, threads: int) -> str:
    """``codegen-batch:B1024:t2``: the batched generated code's method name."""
    return f"codegen-batch:B{B}:t{threads}"


def labels(batch_size: int = BATCH_SIZE) -> dict[str, str]:
    """Every method of a case and its name in the report, in the order of the report's rows;
    the derivative methods last."""
    per = "pvosimr codegen batch PV-OSIMr (per config, B={}, {} thread{})"
    batched = {
        batch_name(B, t): per.format(B, t, "s" if t > 1 else "")
        for B in batch_sizes(batch_size)
        for t in THREADS
    }
    return {
        **{f"numpy:{a}": f"pvosimr numpy {plotting.LABELS[a]}" for a in ALGORITHMS},
        "batch:pv-osimr": f"pvosimr numpy batch PV-OSIMr (per config, B={batch_size})",
        "codegen:pv-osimr": "pvosimr codegen PV-OSIMr",
        **batched,
        "codegen-external:pv-osimr": "pvosimr codegen PV-OSIMr (casadi.external)",
        "pin-efpa": "Pinocchio C++ EFPA (computeDelassusMatrix)",
        "pin-pv-osimr": "Pinocchio C++ PV-OSIMr (computePvDelassusMatrix)",
        "ref:pin-efpa": "Pinocchio C++ EFPA via pvosimr.reference.pinocchio",
        "ref:pin-pv-osimr": "Pinocchio C++ PV-OSIMr via pvosimr.reference.pinocchio",
        "ref:pin-cholesky": "Pinocchio contact Cholesky via pvosimr.reference.pinocchio",
        **DERIVATIVE_LABELS,
    }


LABELS = labels()  # the methods' names in a run of the default batch size


def numpy_methods(model: pin.Model, data: pin.Data, cms: list) -> dict[str, Callable]:
    """:func:`pvosimr.compute_delassus` with every algorithm."""
    return {
        f"numpy:{a}": (lambda q, a=a: compute_delassus(model, data, q, cms, algorithm=a))
        for a in ALGORITHMS
    }


def pinocchio_bare(model: pin.Model, cms: list) -> dict[str, Callable]:
    """Pinocchio's two C++ Delassus routines as bare binding calls (structures prepared once)."""
    data = model.createData()
    scms = pin.StdVec_RigidConstraintModel(cms)
    cds = pin.StdVec_RigidConstraintData([cm.createData() for cm in scms])
    out = {"pin-efpa": lambda q: pin.computeDelassusMatrix(model, data, q, scms, cds, 0.0)}
    if reference.extension_available():
        pv = reference.pinocchio_pv_object(model, cms)
        out["pin-pv-osimr"] = lambda q: pv.compute(model, q)
    return out


def _reference_methods(model: pin.Model, data: pin.Data, cms: list) -> dict[str, Callable]:
    """Pinocchio through :mod:`pvosimr.reference.pinocchio` (its input check and cache
    lookup included)."""
    out = {"ref:pin-efpa": lambda q: reference.pinocchio_efpa(model, data, q, cms)}
    if reference.extension_available():
        out["ref:pin-pv-osimr"] = lambda q: reference.pinocchio_pv_osimr(model, data, q, cms)
    out["ref:pin-cholesky"] = lambda q: reference.pinocchio_cholesky(model, data, q, cms)
    return out


def build_facts(build, sizes: dict) -> dict:
    """How a generated library (``build``: a compiled function or one of its libraries) was
    built (compile time None from the cache) and what it holds (work arrays: ``sz_w`` doubles
    and ``sz_iw`` integers, one set per calling thread)."""
    return {
        "flags": list(build.flags),
        "compiled_in_this_run": build.compiled,
        "compile_seconds": build.compile_seconds if build.compiled else None,
        "n_instructions": sizes["n_instructions"],
        "source_bytes": build.source.stat().st_size,
        "library_bytes": build.library.stat().st_size,
        "sz_w": sizes["sz_w"],
        "sz_iw": sizes["sz_iw"],
        "work_bytes": 8 * (sizes["sz_w"] + sizes["sz_iw"]),
    }


def external(compiled):
    """The generated library loaded by ``casadi.external``."""
    import casadi as ca

    return ca.external(f"delassus_{compiled.algorithm.replace('-', '_')}", str(compiled.library))


def g_facts(compiled) -> dict:
    """:func:`build_facts` of a generated G, its binding and the lanes of its batches."""
    f = external(compiled)
    sizes = {"n_instructions": compiled.n_instructions, "sz_w": f.sz_w(), "sz_iw": f.sz_iw()}
    how = {"binding": compiled.binding, "simd_lanes": compiled.simd_lanes}
    return {**build_facts(compiled, sizes), **how, "shared_functions": compiled.shared_functions}


def compile_g(case: Timed, model, cms, flags: tuple[str, ...], options: Options):
    """The generated G, or None with the reason in ``case.skipped``."""
    if not options.codegen:
        case.skipped["codegen:pv-osimr"] = "not requested (--no-codegen)"
        return None
    from pvosimr import codegen

    try:
        return codegen.compile(model, cms, cache_dir=options.cache_dir, flags=flags)
    except (ImportError, OSError, RuntimeError) as exc:
        case.skipped["codegen:pv-osimr"] = f"{type(exc).__name__}: {exc}"
        return None


def case_name(spec: str) -> str:
    """``robot/preset`` of a ``robot[/preset]`` spec (a bare name means its first preset)."""
    robot = zoo.load_case(spec)
    return f"{robot.name}/{robot.preset}"


def time_case(spec: str, options: Options, derivatives: bool = False) -> Case:
    """Every method of one ``robot[/preset]`` case gated against numpy PV-OSIMr, then timed
    (its dG/dq too where ``derivatives``)."""
    robot = zoo.load_case(spec)
    model, cms = robot.model, robot.constraints
    rng = np.random.default_rng(options.seed)
    qs = [robot.q_random(rng) for _ in range(N_CONFIGS)]
    case = Case(f"{robot.name}/{robot.preset}", model.nv, robot.m)
    data = model.createData()
    compiled = compile_g(case, model, cms, options.flags, options)
    singles = numpy_methods(model, data, cms)
    if compiled is not None:
        case.codegen = g_facts(compiled)
        f = external(compiled)
        singles |= {"codegen:pv-osimr": compiled, "codegen-external:pv-osimr": lambda q: f(q)}
    singles |= pinocchio_bare(model, cms) | _reference_methods(model, data, cms)
    methods: dict[str, Method] = {name: (fn, qs, 1) for name, fn in singles.items()}
    Bs = batch_sizes(options.batch_size)
    Q = np.stack([robot.q_random(rng) for _ in range(max(Bs))])
    if compiled is not None:
        for B in Bs:
            methods |= {
                batch_name(B, t): (lambda qs, t=t: compiled(qs, threads=t), [Q[:B]], B)
                for t in THREADS
            }
    B = options.batch_size
    truth_data = model.createData()

    def numpy_batch(Q: np.ndarray) -> np.ndarray:
        return compute_delassus_batch(model, Q, cms, algorithm="pv-osimr")

    def truth(q: np.ndarray) -> np.ndarray:
        return compute_delassus(model, truth_data, q, cms)

    methods = gate(methods, truth, case, CHECK_TOLERANCE)
    long = gate({"batch:pv-osimr": (numpy_batch, [Q[:B]], B)}, truth, case, CHECK_TOLERANCE)
    case.timings = time_methods(methods, options.repeats)
    # A numpy batch sample lasts B calls: fewer of them keep the run short.
    case.timings |= time_methods(long, max(3, min(options.repeats, 7)))
    if derivatives:
        dG = derivative_methods(model, cms, qs, case, pinocchio_g=singles["pin-efpa"],
                                compiled_g=compiled, options=options)  # fmt: skip
        case.timings |= time_methods(dG, options.repeats)
    return case
