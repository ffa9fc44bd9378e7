"""Command line: ``pvosimr validate`` (the zoo-wide report) and ``pvosimr demo`` (a quick table)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator

import numpy as np
import pinocchio as pin

from . import ALGORITHMS, compute_delassus
from .constraints import point
from .zoo import presets, sources

TOLERANCE = 1e-9

Case = tuple[str, pin.Model, list[pin.RigidConstraintModel]]


def _demo_cases() -> Iterator[Case | str]:
    """Robots of the demo; a string explains a robot that could not be loaded."""
    model = pin.buildSampleModelHumanoidRandom()
    rng = np.random.default_rng(0)
    cms = [
        pin.RigidConstraintModel(
            pin.ContactType.CONTACT_6D if k % 2 else pin.ContactType.CONTACT_3D,
            model,
            int(j),
            pin.SE3(pin.rpy.rpyToMatrix(*rng.uniform(-3, 3, 3)), rng.uniform(-0.3, 0.3, 3)),
            pin.ReferenceFrame.LOCAL,
        )
        for k, j in enumerate(rng.choice(np.arange(1, model.njoints), size=6))
    ]
    yield "sample humanoid, 3D+6D", model, cms
    loaders: list[tuple[str, Callable[[], pin.Model], dict]] = [
        ("atlas", sources.atlas_model, presets.ATLAS_PRESETS),
        (
            "shadow hand",
            sources.shadow_hand_model,
            {"fingertips_3d": lambda m: [point(m, f) for f in sources.SHADOW_FINGERTIPS]},
        ),
    ]
    for name, load, sets in loaders:
        try:
            model = load()
        except (FileNotFoundError, ModuleNotFoundError) as exc:
            yield f"{name}: skipped ({exc})"
            continue
        for preset, build in sets.items():
            yield f"{name}, {preset}", model, build(model)


def _time_per_call(f: Callable[[], object], budget: float = 0.05) -> float:
    f()
    n, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < budget:
        f()
        n += 1
    return elapsed / max(n, 1)


def _row(name: str, model: pin.Model, cms: list) -> tuple[list[str], float]:
    data = model.createData()
    q = pin.integrate(model, pin.neutral(model), np.random.default_rng(1).uniform(-1, 1, model.nv))
    cds = [cm.createData() for cm in cms]
    reference = np.array(pin.computeDelassusMatrix(model, data, q, cms, cds, 0.0))
    scale = max(1.0, np.abs(reference).max())
    cells = [name, str(model.nv), str(reference.shape[0])]
    worst = 0.0
    for algorithm in ALGORITHMS:
        G = compute_delassus(model, data, q, cms, algorithm=algorithm)
        err = np.abs(G - reference).max() / scale
        worst = max(worst, err)
        t = _time_per_call(lambda a=algorithm: compute_delassus(model, data, q, cms, algorithm=a))
        cells.append(f"{err:.0e} {t * 1e6:6.0f}µs")
    t_pin = _time_per_call(lambda: pin.computeDelassusMatrix(model, data, q, cms, cds, 0.0))
    cells.append(f"{t_pin * 1e6:.0f}µs")
    return cells, worst


def demo() -> int:
    """Print the agreement table; return 1 if any algorithm is off by more than the tolerance."""
    header = ["case", "nv", "m", *ALGORITHMS, "pin (C++)"]
    print("Relative error max|G - G_pin| / max(1, max|G_pin|) against pin.computeDelassusMatrix,")
    print("and time per call, at one random configuration:\n")
    rows, notes, worst = [], [], 0.0
    for case in _demo_cases():
        if isinstance(case, str):
            notes.append(case)
            continue
        cells, err = _row(*case)
        rows.append(cells)
        worst = max(worst, err)
        print("  computed", case[0], file=sys.stderr)
    widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header))]
    for r in [header, ["-" * w for w in widths], *rows]:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    for note in notes:
        print("\n" + note)
    ok = worst <= TOLERANCE
    print(
        f"\nworst relative error {worst:.1e} — {'PASS' if ok else 'FAIL'} (tolerance {TOLERANCE:g})"
    )
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pvosimr", description=__doc__)
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("demo", help="agreement of every algorithm with Pinocchio on real robots")
    sub.add_parser(
        "validate", help="every algorithm and Pinocchio reference across the zoo", add_help=False
    )
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["validate"]:
        from .validation import main as validate_main

        return validate_main(argv[1:])
    args = parser.parse_args(argv)
    if args.command in (None, "demo"):
        return demo()
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
