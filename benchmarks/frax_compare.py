"""frax's dense route against pvosimr's G on frax's G1 (:mod:`.frax_route`), timed in the same
rounds: ``frax:G`` and ``frax:grad`` (:func:`.frameworks.jitted` of its dense G) beside
pvosimr's direct calls and JAX front end (:class:`.frameworks.Front`), per B, on the same
configurations, after :func:`.frax_route.agreement` passed (``errors["frax-vs-pinocchio"]``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import frax_route
from .derivatives import weights
from .frameworks import FrameworkResult, Front, blocking, jitted
from .loop import time_methods

AGREEMENT_CONFIGS = 8
AGREEMENT_KEY = "frax-vs-pinocchio"
ONE_CALL_FROM = 512
"""From this B on, a sample is one call (frax's batched gradient lasts seconds; the shared
loop's calibration would spend six calls on it before the first sample)."""


def time_frax(batches: Sequence[int], repeats: int, seed: int, cache_dir=None) -> FrameworkResult:
    """The frax comparison on the G1 (a failed agreement is recorded and nothing is timed)."""
    import jax
    import jax.numpy as jnp

    from pvosimr import codegen

    case = frax_route.load()
    result = FrameworkResult(frax_route.ROBOT, case.model.nv, case.m)
    rng = np.random.default_rng(seed)
    error = frax_route.agreement(case, case.random_q(rng, AGREEMENT_CONFIGS))
    result.errors[AGREEMENT_KEY] = error
    if not error <= frax_route.AGREEMENT_TOLERANCE:
        bound = frax_route.AGREEMENT_TOLERANCE
        why = f"frax's G and pvosimr's disagree (error {error:.1e} > {bound:g}): nothing timed"
        result.skipped["frax"] = why
        return result
    f = codegen.compile(case.model, case.cms, vjp=True, cache_dir=cache_dir)
    front = Front(case.model, case.cms, f, result, torch=False)
    for B in batches:
        qs = case.random_q(rng, B)
        g, grad = jitted(case.dense_g, jnp.asarray(weights(case.m)), B > 1)
        x = jax.device_put(jnp.asarray(qs[0] if B == 1 else qs))
        methods = {
            f"frax:G:B{B}": (blocking(g), [x], 1),
            f"frax:grad:B{B}": (blocking(grad), [x], 1),
        }
        for fn, inputs, _ in methods.values():
            fn(*inputs)  # compiled here, before the rounds
        methods |= front.methods(case.pinocchio_q(qs))
        number = 1 if B >= ONE_CALL_FROM else None  # frax's methods were called once already
        result.timings.update(time_methods(methods, repeats, number))
    return result
