"""Command line: ``pvosimr validate`` (the zoo-wide report) and ``pvosimr demo`` (a quick table)."""

from __future__ import annotations

import argparse
import sys

from . import validation

DEMO_ROBOTS = ("atlas", "shadow_hand")


def demo() -> int:
    """The validation table for the paper's robots, one configuration each, on stdout."""
    rows, unavailable = validation.validate(DEMO_ROBOTS, configs=1, progress=False, strict=False)
    print("Worst relative error against the dense J M⁻¹ Jᵀ, and time per call:\n")
    print("\n".join(validation.table(rows)))
    for name, reason in unavailable.items():
        print(f"\n{name}: skipped ({reason})")
    ok = all(r.passes() for r in rows)
    print(
        f"\n{'PASS' if ok else 'FAIL'} (tolerance {validation.TOLERANCE:g}); "
        "`pvosimr validate` runs the whole zoo"
    )
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pvosimr", description=__doc__)
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("demo", help="the validation table for Atlas and the Shadow hand")
    sub.add_parser(
        "validate",
        help="every algorithm and Pinocchio reference against the dense truth: across the zoo, "
        "on zoo cases (--robots ROBOT[/PRESET]) or on a URDF/MJCF file (FILE --point/--weld)",
    )
    sub.add_parser("figures", help="the paper's Figs. 3-6 and claims C1-C8 from operation counts")
    sub.add_parser("bench", help="time every pvosimr path against Pinocchio's C++ (timings.md)")
    sub.add_parser("count", help="operation counts of q -> G for a zoo robot or a URDF/MJCF file")
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["validate"]:
        return validation.main(argv[1:])
    if argv[:1] == ["figures"]:
        from . import figures  # needs the symbolic and plots extras

        return figures.main(argv[1:])
    if argv[:1] == ["bench"]:
        from . import bench  # the plot needs the plots extra

        return bench.main(argv[1:])
    if argv[:1] == ["count"]:
        from . import opcounts  # counting needs the symbolic extra

        return opcounts.main(argv[1:])
    args = parser.parse_args(argv)
    if args.command in (None, "demo"):
        return demo()
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
