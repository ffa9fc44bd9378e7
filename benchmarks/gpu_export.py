"""The section GPU for a machine that has JAX and a GPU but not pvosimr's dependencies: the
functions exported here, timed there by :mod:`.gpu_runner`, reported here.

``pvosimr bench --sections gpu-export --export-dir DIR`` writes into DIR, with :func:`export`:

- per case of :data:`~.gpu.GPU_CASES` and dtype (float64, float32): ``jit(vmap(G))`` of the XLA
  route (:func:`pvosimr.jax.xla.compile_xla`) and ``jit(vmap(grad ⟨W, G⟩))``, serialized by
  ``jax.export`` for the platforms ``cuda`` and ``cpu`` with a symbolic batch, the W of the
  section (:func:`.derivatives.weights`); the case's configurations; each function's output on
  them, run here on the CPU from the serialized function (G checked against the numpy path
  first: to 1e-12 in float64, :data:`FLOAT32_TOLERANCE` in float32); and the case's generated
  C (:func:`pvosimr.codegen.export`) for the host's batched call;
- the same for frax's dense route and pvosimr's on frax's G1, after
  :func:`.frax_route.agreement` passed (where frax is installed);
- ``manifest.json`` and ``run.py`` (:mod:`.gpu_runner`).

There, ``python DIR/run.py --out OUT`` writes ``OUT/gpu_rows.json``; here, ``pvosimr bench
--sections gpu --device-rows OUT/gpu_rows.json --out figures`` writes the section with those
rows.  The functions the GPU runs are the ones ``jax.jit`` would compile here: the same
StableHLO, the output checked against this machine's before it is timed.
"""

from __future__ import annotations

import datetime
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from pvosimr.study.names import TOLERANCES
from pvosimr.study.record import relative_error, write_json

from .derivatives import weights
from .gpu import FRAX_BATCHES, GPU_BATCHES, GPU_CASES, configurations

__all__ = ["CONFIGS", "PLATFORMS", "export"]

CONFIGS = 64
"""Configurations per case: the rows every batch repeats, and where the GPU is checked."""
PLATFORMS = ("cuda", "cpu")
FLOAT32_TOLERANCE = TOLERANCES["export-float32"]
"""The float32 G's largest error against the float64 numpy path (the zoo's measured errors:
figures/gpu.md, "float32 on the zoo")."""
DTYPES = ("float64", "float32")


def export(
    out: Path,
    cases: Sequence[str] = GPU_CASES,
    batches: Sequence[int] = GPU_BATCHES,
    frax_batches: Sequence[int] | None = FRAX_BATCHES,
) -> Path:
    """Write the folder (module docstring) and return its manifest's path; ``frax_batches``
    None leaves frax out (so does a missing frax)."""
    import jax

    from pvosimr import __version__

    jax.config.update("jax_enable_x64", True)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    manifest: dict = {"batches": list(batches), "frax_batches": list(frax_batches or ())}
    manifest["exported"] = {"date": stamp, "pvosimr": __version__, "jax": jax.__version__,
                            "platforms": list(PLATFORMS)}  # fmt: skip
    manifest["cases"] = [_case(out, spec) for spec in cases]
    manifest["frax"] = _frax(out) if frax_batches else None
    shutil.copyfile(Path(__file__).with_name("gpu_runner.py"), out / "run.py")
    return write_json(out / "manifest.json", manifest)


def _slug(spec: str) -> str:
    return spec.replace("/", "__")


def _case(out: Path, spec: str) -> dict:
    """One zoo case: its functions, configurations, references and generated C."""
    import pvosimr
    from pvosimr import codegen, zoo
    from pvosimr.jax.xla import compile_xla

    robot = zoo.load_case(spec)
    G = compile_xla(robot.model, robot.constraints)
    qs = configurations(robot.model, CONFIGS, 0)
    data = robot.model.createData()
    truth = np.stack(
        [pvosimr.compute_delassus(robot.model, data, q, robot.constraints) for q in qs]
    )
    slug = _slug(spec)
    np.save(out / f"{slug}_q.npy", qs)
    functions = {d: _exported(out, f"{slug}_{d}", G, qs.astype(d), weights(G.m)) for d in DTYPES}
    for dtype, tolerance in (("float64", TOLERANCES["xla"]), ("float32", FLOAT32_TOLERANCE)):
        _check(out / functions[dtype]["G_reference"], truth, tolerance, f"{spec}, {dtype}")
    name = slug.replace("-", "_")
    codegen.export(robot.model, robot.constraints, out / f"{slug}_c", name=f"c_{name}")
    return {"name": spec, "q": f"{slug}_q.npy", "c": f"{slug}_c", "functions": functions}


def _frax(out: Path) -> dict | None:
    """frax's dense route and pvosimr's XLA route on frax's G1, or None without frax."""
    from pvosimr.extras import missing_extra
    from pvosimr.jax.xla import compile_xla

    from . import frax_route

    if missing_extra("frax") is not None:
        return None
    case = frax_route.load()
    q_frax = case.random_q(np.random.default_rng(0), CONFIGS)
    agreement = frax_route.agreement(case, q_frax)
    if not agreement <= frax_route.AGREEMENT_TOLERANCE:
        raise AssertionError(f"frax's G and pvosimr's disagree by {agreement:.3g}")
    q = case.pinocchio_q(q_frax)
    np.save(out / "frax_q_frax.npy", q_frax)
    np.save(out / "frax_q.npy", q)
    W = weights(case.m)
    functions = {}
    for prefix, G, x in (
        ("frax_", case.dense_g, q_frax),
        ("", compile_xla(case.model, case.cms), q),
    ):
        for d in DTYPES:
            functions[prefix + d] = _exported(
                out, f"frax_{prefix or 'pvosimr_'}{d}", G, x.astype(d), W
            )
    return {"robot": frax_route.ROBOT, "agreement": agreement, "q_frax": "frax_q_frax.npy",
            "q": "frax_q.npy", "functions": functions}  # fmt: skip


def _exported(out: Path, stem: str, G: Callable, qs: np.ndarray, W: np.ndarray) -> dict:
    """``jit(vmap(G))`` and ``jit(vmap(grad ⟨W, G⟩))`` in ``qs``'s dtype, serialized into
    ``out``, with their outputs at ``qs`` (run here from the serialized functions)."""
    import jax
    import jax.numpy as jnp
    from jax import export

    Wd = jnp.asarray(W.astype(qs.dtype))

    def loss(q):
        return jnp.sum(Wd * G(q))

    (batch,) = export.symbolic_shape("b")
    spec = jax.ShapeDtypeStruct((batch, qs.shape[1]), qs.dtype)
    entry: dict = {}
    for kind, f in (("G", jax.vmap(G)), ("grad", jax.vmap(jax.grad(loss)))):
        exported = export.export(jax.jit(f), platforms=PLATFORMS)(spec)
        name = f"{stem}_{kind}.jax"
        (out / name).write_bytes(exported.serialize())
        again = export.deserialize(bytearray((out / name).read_bytes()))
        reference = np.asarray(jax.jit(again.call)(qs))
        np.save(out / f"{stem}_{kind}_reference.npy", reference)
        entry[kind], entry[f"{kind}_reference"] = name, f"{stem}_{kind}_reference.npy"
        if kind == "G":
            entry["G_dtype"] = reference.dtype.name
    return entry


def _check(reference: Path, truth: np.ndarray, tolerance: float, what: str) -> None:
    error = relative_error(np.load(reference), truth)
    if not error <= tolerance:
        raise AssertionError(f"{what}: the exported G is off the numpy path by {error:.3g}")
