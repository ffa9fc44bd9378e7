"""The section GPU's GPU part as a folder for a GPU machine without pvosimr's dependencies
(docs/cuda.md, "The prepared GPU run"), timed there by :mod:`.gpu_runner`.

``pvosimr bench --sections gpu-export --export-dir DIR`` writes into DIR (:func:`export`), per
case of :data:`~.gpu.GPU_CASES`: its configurations and W; per dtype, the CUDA kernels (a CUBIN
for :data:`CUBIN_ARCH`, the PTX, ``ptxas``'s figures; no gradient kernel beyond its size) and
the CPU library's G and tangent gradient in their layout; per dtype, the XLA route's
``jit(vmap(G))`` and ``jit(vmap(grad ⟨W, G⟩))`` serialized by ``jax.export`` with their
outputs here (G checked against the numpy path first); the generated C for the host's batched
call.  Then frax's dense route beside the XLA route on frax's G1, the manifest, ``run.py`` and
``machine.py`` (:mod:`pvosimr.study.machine`).
"""

from __future__ import annotations

import dataclasses
import datetime
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from pvosimr.study.names import FRAX_BATCHES, GPU_BATCHES, TOLERANCES
from pvosimr.study.record import relative_error, write_json

from .derivatives import weights
from .gpu import GPU_CASES, configurations

CONFIGS = 64
"""Configurations per case: the rows every batch repeats, and where the GPU is checked."""
PLATFORMS = ("cuda", "cpu")
CUBIN_ARCH = "sm_90"
DTYPES = ("float64", "float32")
#: The checks on the GPU: a kernel against the CPU library, a ``jax.export`` function against
#: its output here.
CHECKS = {
    "float64": TOLERANCES["xla"],
    "float32": TOLERANCES["export-float32"],
    "xla-float64": TOLERANCES["xla"],
    "xla-float32": TOLERANCES["device-float32"],
}


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
    from pvosimr.codegen.cuda import BLOCK
    from pvosimr.study import machine

    jax.config.update("jax_enable_x64", True)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    manifest: dict = {"batches": list(batches), "frax_batches": list(frax_batches or ())}
    manifest["exported"] = {"date": stamp, "pvosimr": __version__, "jax": jax.__version__,
                            "platforms": list(PLATFORMS)}  # fmt: skip
    manifest.update(block=BLOCK, tolerances=CHECKS)
    manifest["cases"] = [_case(out, spec) for spec in cases]
    manifest["frax"] = _frax(out) if frax_batches else None
    shutil.copyfile(Path(__file__).with_name("gpu_runner.py"), out / "run.py")
    shutil.copyfile(machine.__file__, out / "machine.py")
    return write_json(out / "manifest.json", manifest)


def _case(out: Path, spec: str) -> dict:
    """One zoo case: its kernels, functions, configurations, references and generated C."""
    import pvosimr
    from pvosimr import codegen, zoo
    from pvosimr.jax.xla import compile_xla

    robot = zoo.load_case(spec)
    G = compile_xla(robot.model, robot.constraints)
    qs, W = configurations(robot.model, CONFIGS, 0), weights(G.m)
    data = robot.model.createData()
    truth = np.stack(
        [pvosimr.compute_delassus(robot.model, data, q, robot.constraints) for q in qs]
    )
    slug = spec.replace("/", "__")
    np.save(out / f"{slug}_q.npy", qs)
    np.save(out / f"{slug}_W.npy", W)
    functions = {d: _exported(out, f"{slug}_{d}", G, qs.astype(d), W) for d in DTYPES}
    for dtype in DTYPES:
        G_xla = np.load(out / functions[dtype]["G_reference"])
        _check(G_xla, truth, CHECKS[dtype], f"{spec}, {dtype}")
    name = slug.replace("-", "_")
    codegen.export(robot.model, robot.constraints, out / f"{slug}_c", name=f"c_{name}")
    kernels = _kernels(out, slug, robot, qs, W)
    return {"name": spec, "q": f"{slug}_q.npy", "W": f"{slug}_W.npy", "c": f"{slug}_c",
            "functions": functions, "kernels": kernels}  # fmt: skip


def _kernels(out: Path, slug: str, robot, qs: np.ndarray, W: np.ndarray) -> dict:
    """Per dtype, the CUDA kernels' CUBIN, PTX and ``ptxas`` figures, and the CPU library's
    outputs in their layout (G's entries column-major; the gradient in q's coordinates)."""
    from pvosimr import codegen
    from pvosimr.codegen.contract import evaluate
    from pvosimr.codegen.cuda import CudaError, compile_cuda

    kernels, made = {}, {}
    for dtype in DTYPES:
        why = None
        try:
            made[dtype] = compile_cuda(robot.model, robot.constraints, dtype=dtype, vjp=True)
        except CudaError as exc:  # the gradient beyond the kernel's size: G alone
            made[dtype], why = compile_cuda(robot.model, robot.constraints, dtype=dtype), str(exc)
        stem = f"{slug}_cuda_{dtype}"
        (out / f"{stem}.ptx").write_text(made[dtype].ptx)
        (out / f"{stem}.cubin").write_bytes(made[dtype].image(CUBIN_ARCH))
        kernels[dtype] = {
            "dtype": dtype, "kernels": list(made[dtype].kernels), "no_gradient": why,
            "nq": made[dtype].nq, "n_out": made[dtype].n_out,
            "images": {CUBIN_ARCH: f"{stem}.cubin", "ptx": f"{stem}.ptx"},
            "resources": [dataclasses.asdict(r) for r in made[dtype].resources(CUBIN_ARCH)],
            "G_reference": f"{slug}_cuda_G.npy", "grad_reference": f"{slug}_cuda_grad.npy",
        }  # fmt: skip
    gradient = all(len(k.kernels) == 2 for k in made.values())
    f = codegen.compile(robot.model, robot.constraints, vjp=gradient)  # the CPU library
    np.save(out / f"{slug}_cuda_G.npy", f(qs).transpose(0, 2, 1).reshape(len(qs), -1))
    if gradient:
        np.save(out / f"{slug}_cuda_grad.npy", evaluate(f, qs, None, W))
    return kernels


def _frax(out: Path) -> dict:
    """frax's dense route and pvosimr's XLA route on frax's G1, or what to install."""
    from pvosimr.extras import install_hint, missing_extra

    if missing_extra("frax") is not None:
        return {"unavailable": install_hint("the section GPU, frax's dense route", "frax")}
    from pvosimr.jax.xla import compile_xla

    from . import frax_route

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
    routes = (("frax_", case.dense_g, q_frax), ("", compile_xla(case.model, case.cms), q))
    for prefix, G, x in routes:
        for d in DTYPES:
            stem = f"frax_{prefix or 'pvosimr_'}{d}"
            functions[prefix + d] = _exported(out, stem, G, x.astype(d), W)
    return {"robot": frax_route.ROBOT, "agreement": agreement, "q_frax": "frax_q_frax.npy",
            "q": "frax_q.npy", "functions": functions}  # fmt: skip


def _exported(out: Path, stem: str, G: Callable, qs: np.ndarray, W: np.ndarray) -> dict:
    """``jit(vmap(G))`` and ``jit(vmap(grad ⟨W, G⟩))`` in ``qs``'s dtype, serialized into
    ``out``, with their outputs at ``qs`` (run here from the serialized functions)."""
    import jax
    import jax.numpy as jnp
    from jax import export

    Wd = jnp.asarray(W.astype(qs.dtype))
    (batch,) = export.symbolic_shape("b")
    spec = jax.ShapeDtypeStruct((batch, qs.shape[1]), qs.dtype)
    entry: dict = {}
    grad = jax.vmap(jax.grad(lambda q: jnp.sum(Wd * G(q))))
    for kind, f in (("G", jax.vmap(G)), ("grad", grad)):
        name = f"{stem}_{kind}.jax"
        (out / name).write_bytes(export.export(jax.jit(f), platforms=PLATFORMS)(spec).serialize())
        again = export.deserialize(bytearray((out / name).read_bytes()))
        np.save(out / f"{stem}_{kind}_reference.npy", np.asarray(jax.jit(again.call)(qs)))
        entry[kind], entry[f"{kind}_reference"] = name, f"{stem}_{kind}_reference.npy"
    entry["G_dtype"] = np.load(out / entry["G_reference"]).dtype.name
    return entry


def _check(G: np.ndarray, truth: np.ndarray, tolerance: float, what: str) -> None:
    error = relative_error(G, truth)
    if not error <= tolerance:
        raise AssertionError(f"{what}: the exported G is off the numpy path by {error:.3g}")
