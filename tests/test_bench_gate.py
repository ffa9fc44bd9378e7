"""The harness's one correctness gate (benchmarks.loop.gate): what agrees is timed, the rest
is left out with the reason, in the robot cases and the sweeps alike."""

import numpy as np

from benchmarks import loop, methods, scaling


def test_the_gate_keeps_what_agrees_and_says_why_it_left_the_rest_out():
    """One method of each kind: right, slightly off, NaN, refusing, and batched (B = 1 and
    B = 3, one of them wrong in its second row)."""
    truth = {q: np.full((2, 2), q + 1.0) for q in range(4)}
    batch = np.arange(3.0)[:, None]  # three configurations of one coordinate

    def rows(Q, wrong_row=None):
        Gs = np.stack([truth[int(q[0])] for q in Q])
        if wrong_row is not None:
            Gs[wrong_row] += 1e-3
        return Gs

    def refuses(q):
        raise ValueError("a singular G. More words")

    methods = {
        "right": (lambda q: truth[q], [0], 1),
        "off": (lambda q: truth[q] * (1 + 1e-6), [0], 1),
        "nan": (lambda q: np.full((2, 2), np.nan), [0], 1),
        "refuses": (refuses, [0], 1),
        "batch B=1": (rows, [batch[:1]], 1),
        "batch B=3, wrong row": (lambda Q: rows(Q, 1), [batch], 3),
    }
    timed = loop.Timed("toy", 1, 2)
    kept = loop.gate(methods, lambda q: truth[int(np.ravel(q)[0])], timed, 1e-8)
    assert set(kept) == {"right", "batch B=1"}
    assert timed.skipped == {
        "off": f"wrong result (error {timed.errors['off']:.1e}), not timed",
        "nan": "wrong result (error inf), not timed",
        "refuses": "refused: a singular G",
        "batch B=3, wrong row": "wrong result (error 5.0e-04), not timed",  # 1e-3 / max|G|
    }
    assert timed.errors["right"] == timed.errors["batch B=1"] == 0.0


def test_the_fig4_sweep_leaves_a_wrong_method_out(monkeypatch):
    """The single-call sweep gates its methods like the robot cases: a wrong numpy EFPA is
    not timed, and the point says why."""
    real = scaling.numpy_methods

    def with_wrong_efpa(model, data, cms):
        fns = real(model, data, cms)
        right = fns["numpy:efpa"]
        fns["numpy:efpa"] = lambda q: right(q) * (1 + 1e-6)
        return fns

    monkeypatch.setattr(scaling, "numpy_methods", with_wrong_efpa)
    (point,) = scaling.time_scaling({"chain_welded_every_link": (2,)}, 1, methods.Options(),
                                    progress=False)  # fmt: skip
    assert "numpy:efpa" not in point.medians_us and "numpy:pv-osimr" in point.medians_us
    assert point.skipped["numpy:efpa"].startswith("wrong result (error ")
