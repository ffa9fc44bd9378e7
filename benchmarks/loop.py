"""The harness's contract: the one timing loop and the one gate, for every section.

A section's methods are ``name -> (fn, inputs, per)`` (:data:`Method`); :func:`gate` keeps those
whose first result agrees with the truth (the others go to :attr:`Timed.skipped` with why), and
:func:`time_methods` times them in interleaved rounds: round r takes one sample of every method,
so load changes on a shared machine hit all alike.  A sample is the mean of ``number``
consecutive calls (a sample lasts about :data:`SAMPLE_SECONDS`) cycling over the inputs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from .record import Record, relative_error

SAMPLE_SECONDS = 0.02
"""Target duration of one sample: enough calls to amortise the refill of the caches that the
other methods' samples emptied, for the slowest method too (numpy's single call)."""
N_CONFIGS = 8  # configurations cycled through in the timed loops
CHECKED_ROWS = 4  # rows of a batched result compared with the truth by the gate

QUANTILES = {"median": 0.5, "p25": 0.25, "p75": 0.75, "min": 0.0}  # as timings.json keeps them
Method = tuple[Callable, Sequence, int]
"""``(fn, inputs, per)``: ``fn(inputs[k])`` computes ``per`` results (B for a batched call)."""


@dataclass
class Timing:
    """Seconds per call of one method: every sample, and how many calls each."""

    samples: list[float]
    number: int
    stored: dict[float, float] | None = None  # the quantiles a report's JSON kept

    @classmethod
    def from_json(cls, d: dict) -> Timing:
        """A timing read back from :meth:`to_json` (its quantiles; the samples are not kept)."""
        stored = {p: d[f"{k}_us"] * 1e-6 for k, p in QUANTILES.items()}
        return cls([float("nan")] * d["samples"], d["calls_per_sample"], stored)

    def quantile(self, p: float) -> float:
        if self.stored is not None:
            return self.stored[p]
        return float(np.quantile(self.samples, p))

    @property
    def median(self) -> float:
        return self.quantile(0.5)

    def to_json(self) -> dict:
        us = {f"{k}_us": self.quantile(p) * 1e6 for k, p in QUANTILES.items()}
        return {**us, "samples": len(self.samples), "calls_per_sample": self.number}


def timings_json(timings: dict[str, Timing]) -> dict[str, dict]:
    """Each method's :meth:`Timing.to_json`, as a section's JSON keeps its timings."""
    return {k: t.to_json() for k, t in timings.items()}


@dataclass
class Timed:
    """What one section measured on one case: its size, a timing per method, why some have
    none, and the errors of the gate."""

    name: str
    nv: int
    m: int
    timings: dict[str, Timing] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    errors: dict[str, float] = field(default_factory=dict)

    ERRORS = "errors"
    """The key of :attr:`errors` in the JSON (each section names its truth)."""

    @classmethod
    def from_json(cls, d: dict) -> Timed:
        """One measured case read back from its JSON (:meth:`json_head` and the fields of the
        subclass), as the report writer and the figure take it."""
        names = {f.name for f in fields(cls)} - {"timings", "errors"}
        timings = {k: Timing.from_json(t) for k, t in d["timings"].items()}
        kept = {k: v for k, v in d.items() if k in names}
        return cls(**kept, timings=timings, errors=d.get(cls.ERRORS, {}))

    def records(self) -> list[Record]:
        """Each timing as a :class:`~benchmarks.record.Record` (µs, spread [p25, p75])."""
        return [
            Record(self.name, method, "time per call", t.median * 1e6, "µs",
                   (t.quantile(0.25) * 1e6, t.quantile(0.75) * 1e6))
            for method, t in self.timings.items()
        ]  # fmt: skip

    def json_head(self) -> dict:
        """The fields above as JSON but the errors (each section names their key)."""
        return {"name": self.name, "nv": self.nv, "m": self.m,
                "timings": timings_json(self.timings), "skipped": self.skipped}  # fmt: skip

    def refused(self, method: str) -> bool:
        """Whether ``method`` declined this case (e.g. the Cholesky route on a singular G)."""
        return self.skipped.get(method, "").startswith("refused")


def gate(
    methods: dict[str, Method],
    truth: Callable[[Any], Any],
    into: Timed,
    tolerance: float,
    floor: float = 1.0,
) -> dict[str, Method]:
    """The methods whose first result agrees with ``truth`` of their first input to
    ``tolerance`` (:func:`~benchmarks.record.relative_error` with ``floor``; a batched
    method, whose input is a 2-D array of configurations, on its first :data:`CHECKED_ROWS`
    rows, each against ``truth`` of its row).  The others are left out, the reason in
    ``into.skipped``; every error measured goes to ``into.errors``.  A method that raises
    ValueError, TypeError or RuntimeError refused."""
    kept = {}
    for name, method in methods.items():
        fn, inputs, _ = method
        x = inputs[0]
        try:
            out = np.asarray(fn(x))
            batched = np.ndim(x) == 2
            if batched and len(out) != len(x):
                raise ValueError(f"{len(out)} results for {len(x)} configurations")
            rows = (out[:CHECKED_ROWS], x[:CHECKED_ROWS]) if batched else ([out], [x])
            pairs = zip(*rows, strict=True)
            error = max(relative_error(G, truth(y), floor) for G, y in pairs)
        except (ValueError, TypeError, RuntimeError) as exc:
            into.skipped[name] = f"refused: {str(exc).split('. ')[0]}"
            continue
        into.errors[name] = error
        if error <= tolerance:
            kept[name] = method
        else:
            into.skipped[name] = f"wrong result (error {error:.1e}), not timed"
    return kept


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
