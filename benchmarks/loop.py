"""The interleaved timing loop shared by the robot cases and the sweeps.

A sample is the mean time of ``number`` consecutive calls (``number`` chosen so a sample lasts
about :data:`SAMPLE_SECONDS`) cycling over the method's inputs.  Round r takes one sample of
every method, so load changes on a shared machine hit all methods alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from .results import Timing

__all__ = ["N_CONFIGS", "SAMPLE_SECONDS", "Method", "median_seconds", "time_methods"]

SAMPLE_SECONDS = 0.02
"""Target duration of one sample.  Each sample starts after other methods' samples have
filled the caches with their own code and data; a sample must hold enough calls to amortise
that refill for the slowest method too (numpy's single call, ~0.5 ms: at 3 ms per sample it
measured 645 µs on Atlas against 517 µs at 20 ms, the same code and run conditions)."""
N_CONFIGS = 8  # configurations cycled through in the timed loops

Method = tuple[Callable, Sequence, int]
"""``(fn, inputs, per)``: ``fn(inputs[k])`` computes ``per`` results (B for a batched call)."""


def _sample(fn: Callable, inputs: Sequence, number: int) -> float:
    n = len(inputs)
    start = time.perf_counter()
    for k in range(number):
        fn(inputs[k % n])
    return (time.perf_counter() - start) / number


def _calibrate(fn: Callable, inputs: Sequence) -> int:
    """Calls per sample so that a sample lasts about :data:`SAMPLE_SECONDS`, measured after
    three calls that refill the caches (other methods' calls ran just before: measured cold, a
    call of a few µs looked twice as long, and its samples held half the calls)."""
    _sample(fn, inputs, 3)
    once = _sample(fn, inputs, 3)
    return int(np.clip(round(SAMPLE_SECONDS / max(once, 1e-9)), 1, 5000))


def time_methods(
    methods: dict[str, Method], repeats: int, number: int | None = None
) -> dict[str, Timing]:
    """``repeats`` interleaved rounds; a call of ``per`` configurations counts ``per`` times.
    ``number``: calls per sample, instead of calibrating (1 for calls lasting seconds, each
    method already called once)."""
    if number is None:
        numbers = {name: _calibrate(fn, inputs) for name, (fn, inputs, _) in methods.items()}
    else:
        numbers = dict.fromkeys(methods, number)
    samples: dict[str, list[float]] = {name: [] for name in methods}
    for _ in range(repeats):
        for name, (fn, inputs, per) in methods.items():
            samples[name].append(_sample(fn, inputs, numbers[name]) / per)
    return {name: Timing(samples[name], numbers[name]) for name in methods}


def median_seconds(call: Callable[[], object], repeats: int) -> float:
    """Median seconds of the blocking ``call()``, one call per sample, after one warm-up."""
    call()
    return time_methods({"call": (lambda _: call(), (None,), 1)}, repeats, number=1)["call"].median
