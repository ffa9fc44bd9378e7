"""The section GPU's GPU part as a folder for a GPU machine without pvosimr's dependencies
(docs/cuda.md, "The prepared GPU run"), timed there by :mod:`.gpu_runner`.

``pvosimr bench --sections gpu-export --export-dir DIR`` writes into DIR (:func:`export`), per
case of :data:`~.gpu.GPU_CASES`: its configurations and W; per dtype, the CUDA kernels (a CUBIN
for :data:`CUBIN_ARCH`, the PTX, ``ptxas``'s figures; no gradient kernel beyond its size) and
the CPU library's G and its gradient in q's coordinates in their layout; per dtype, the XLA
route's ``jit(vmap(G))`` and ``jit(vmap(grad ⟨W, G⟩))`` serialized by ``jax.export`` with their
outputs here (G checked against the numpy path first); the generated C for the host's batched
call.  Then frax's dense route beside the XLA route on frax's G1 (a case with two XLA routes),
the manifest, ``run.py`` and ``machine.py`` (:mod:`pvosimr.study.machine`).
"""

from __future__ import annotations

import dataclasses
import datetime
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from .derivatives import weights
from .gpu import GPU_CASES, configurations
from .gpu_runner import DTYPES
from .names import FRAX_BATCHES, GPU_BATCHES, TOLERANCES
from .record import relative_error, within, write_json

CONFIGS = 64
"""Configurations per case: the rows every batch repeats, and where the GPU is checked."""
PLATFORMS = ("cuda", "cpu")
CUBIN_ARCH = "sm_90"
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
    exported = {"date": stamp, "pvosimr": __version__, "jax": jax.__version__}
    manifest = {
        "batches": list(batches),
        "frax_batches": list(frax_batches or ()),
        "exported": {**exported, "platforms": list(PLATFORMS)},
        "block": BLOCK,
        "tolerances": CHECKS,
        "cases": [_case(out, spec) for spec in cases],
        "frax": _frax(out) if frax_batches else None,
    }
    shutil.copyfile(Path(__file__).with_name("gpu_runner.py"), out / "run.py")
    shutil.copyfile(machine.__file__, out / "machine.py")
    return write_json(out / "manifest.json", manifest)


def _save(out: Path, stem: str, array: np.ndarray) -> str:
    np.save(out / f"{stem}.npy", array)
    return f"{stem}.npy"


def _case(out: Path, spec: str) -> dict:
    """One zoo case: its configurations, XLA route, generated C and kernels."""
    import pvosimr
    from pvosimr import codegen, zoo
    from pvosimr.jax.xla import compile_xla

    robot = zoo.load_case(spec)
    G = compile_xla(robot.model, robot.constraints)
    qs, W = configurations(robot.model, CONFIGS, 0), weights(G.m)
    data = robot.model.createData()
    truth = [pvosimr.compute_delassus(robot.model, data, q, robot.constraints) for q in qs]
    slug = spec.replace("/", "__")
    case = {"name": spec, "q": _save(out, f"{slug}_q", qs), "W": _save(out, f"{slug}_W", W)}
    case["xla"] = {"": _route(out, f"{slug}_", G, case["q"], qs, W)}
    for dtype in DTYPES:
        error = relative_error(np.load(out / case["xla"][""][dtype]["G_reference"]), truth)
        within(error, CHECKS[dtype], f"{spec}, {dtype}: the exported G is off by {error:.3g}")
    name = f"c_{slug.replace('-', '_')}"
    codegen.export(robot.model, robot.constraints, out / f"{slug}_c", name=name)
    return {**case, "c": f"{slug}_c", "kernels": _kernels(out, slug, robot, qs, W)}


def _kernels(out: Path, slug: str, robot, qs: np.ndarray, W: np.ndarray) -> dict:
    """Per dtype, the CUDA kernels' CUBIN, PTX and ``ptxas`` figures, and the CPU library's
    outputs in their layout (G's entries column-major; the gradient in q's coordinates)."""
    from pvosimr import codegen
    from pvosimr.codegen.contract import evaluate
    from pvosimr.codegen.cuda import CudaError, compile_cuda

    made, why = {}, None
    for dtype in DTYPES:
        try:
            made[dtype] = compile_cuda(robot.model, robot.constraints, dtype=dtype, vjp=True)
        except CudaError as exc:  # the gradient beyond the kernel's size: G alone
            made[dtype], why = compile_cuda(robot.model, robot.constraints, dtype=dtype), str(exc)
    gradient = all(len(k.kernels) == 2 for k in made.values())
    f = codegen.compile(robot.model, robot.constraints, vjp=gradient)  # the CPU library
    G_ref = _save(out, f"{slug}_cuda_G", f(qs).transpose(0, 2, 1).reshape(len(qs), -1))
    grad_ref = _save(out, f"{slug}_cuda_grad", evaluate(f, qs, None, W)) if gradient else None
    kernels = {}
    for dtype, k in made.items():
        stem = f"{slug}_cuda_{dtype}"
        (out / f"{stem}.ptx").write_text(k.ptx)
        (out / f"{stem}.cubin").write_bytes(k.image(CUBIN_ARCH))
        kernels[dtype] = {
            "dtype": dtype, "kernels": list(k.kernels), "nq": k.nq,
            "no_gradient": None if len(k.kernels) == 2 else why,
            "n_out": k.n_out, "images": {CUBIN_ARCH: f"{stem}.cubin", "ptx": f"{stem}.ptx"},
            "resources": [dataclasses.asdict(r) for r in k.resources(CUBIN_ARCH)],
            "G_reference": G_ref, "grad_reference": grad_ref,
        }  # fmt: skip
    return kernels


def _frax(out: Path) -> dict:
    """frax's G1 as a case of two XLA routes, frax's dense one (``frax_``) and pvosimr's, or
    what to install."""
    from pvosimr.extras import install_hint, missing_extra

    if missing_extra("frax") is not None:
        return {"unavailable": install_hint("the section GPU, frax's dense route", "frax")}
    from pvosimr.jax.xla import compile_xla

    from . import frax_route

    case = frax_route.load()
    q_frax = case.random_q(np.random.default_rng(0), CONFIGS)
    q, W = case.pinocchio_q(q_frax), weights(case.m)
    routes = {
        "frax_": _route(out, "frax_frax_", case.dense_g, _save(out, "frax_q_frax", q_frax),
                        q_frax, W),
        "": _route(out, "frax_pvosimr_", compile_xla(case.model, case.cms),
                   _save(out, "frax_q", q), q, W),
    }  # fmt: skip
    G_frax = np.load(out / routes["frax_"]["float64"]["G_reference"])  # the exported dense G
    agreement = frax_route.agreement(case, q_frax, G_frax)
    message = f"frax's G and pvosimr's disagree by {agreement:.3g}"
    within(agreement, frax_route.AGREEMENT_TOLERANCE, message)
    return {"name": frax_route.ROBOT, "agreement": agreement, "xla": routes, "kernels": {}}


def _route(out: Path, stem: str, G: Callable, q: str, qs: np.ndarray, W: np.ndarray) -> dict:
    """An XLA route: its configurations' file ``q`` and, per dtype, ``jit(vmap(G))`` and
    ``jit(vmap(grad ⟨W, G⟩))`` in that dtype, serialized into ``out``, with their outputs at
    ``qs`` (run here from the serialized functions)."""
    import jax
    import jax.numpy as jnp
    from jax import export

    route: dict = {"q": q}
    for dtype in DTYPES:
        x, Wd = qs.astype(dtype), jnp.asarray(W.astype(dtype))
        (batch,) = export.symbolic_shape("b")
        spec = jax.ShapeDtypeStruct((batch, qs.shape[1]), dtype)
        grad = jax.vmap(jax.grad(lambda q, Wd=Wd: jnp.sum(Wd * G(q))))
        route[dtype] = entry = {}
        for kind, f in (("G", jax.vmap(G)), ("grad", grad)):
            name = f"{stem}{dtype}_{kind}"
            serialized = export.export(jax.jit(f), platforms=PLATFORMS)(spec).serialize()
            (out / f"{name}.jax").write_bytes(serialized)
            again = export.deserialize(bytearray((out / f"{name}.jax").read_bytes()))
            entry[kind] = f"{name}.jax"
            entry[f"{kind}_reference"] = _save(out, f"{name}_reference", jax.jit(again.call)(x))
        entry["G_dtype"] = np.load(out / entry["G_reference"]).dtype.name
    return route
