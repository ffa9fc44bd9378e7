"""The ``pvosimr`` command line: six commands, each with its own ``--help``.

``validate``, ``count``, ``figures``, ``bench`` and ``export`` have their own parsers (in
:mod:`pvosimr.study.validate`, :mod:`pvosimr.study.count`, :mod:`pvosimr.study.figures`, the
repository's ``benchmarks`` (not installed), :mod:`pvosimr.study.export`); this module lists
them, prints the version and runs ``demo`` (also what a bare ``pvosimr`` runs).  A user's
mistake ends with exit status 2 and one error line.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from pvosimr import __version__
from pvosimr.codegen.cache import CacheFolderError

from . import validate
from .options import OneLineParser

DEMO_ROBOTS = ("atlas", "shadow_hand")

COMMANDS = {
    "demo": "the error table for Atlas and the Shadow hand (the default)",
    "validate": "every algorithm against the dense truth (zoo, --robots, FILE)",
    "count": "operation counts of q -> G for one robot (needs CasADi)",
    "figures": "the paper's Figs. 3-6 and claims (needs CasADi, matplotlib)",
    "bench": "every measurement: timings, GPU, accuracy (from a checkout)",
    "export": "G as standalone C for a C or C++ program (needs CasADi)",
}
"""Every command and its one-line help (``pvosimr --help``); each command's own ``--help``
says more."""

DEMO_DESCRIPTION = (
    "Validate every algorithm and Pinocchio reference against the dense J M^-1 J^T on every "
    "constraint preset of Atlas and the Shadow hand, one random configuration each, and print "
    "the table; a robot whose model is not installed is skipped. Exit 0 on PASS, 1 on FAIL."
)


def demo() -> int:
    """The validation table for the paper's robots, one configuration each, on stdout."""
    rows, unavailable = validate.validate(DEMO_ROBOTS, configs=1, progress=False, strict=False)
    print("Worst relative error against the dense J M⁻¹ Jᵀ, and time per call:\n")
    print("\n".join([*validate.table(rows), "", *validate.footnotes(rows)]).rstrip())
    for name, reason in unavailable.items():
        print(f"\n{name}: skipped ({reason})")
    ok = all(r.passes() for r in rows)
    print(
        f"\n{'PASS' if ok else 'FAIL'} (tolerance {validate.TOLERANCE:g}); "
        "`pvosimr validate` runs the whole zoo"
    )
    return 0 if ok else 1


def version() -> str:
    """``pvosimr <version> (pin <version>)``: the package and the Pinocchio it runs on."""
    import pinocchio as pin

    return f"pvosimr {__version__} (pin {pin.__version__})"


class _VersionAction(argparse.Action):
    """``--version``, importing Pinocchio only when asked."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(version())
        parser.exit()


def _parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The top-level parser and its subparsers (those of validate/count/figures/bench only list
    the command: each command parses its own options)."""
    parser = OneLineParser(
        prog="pvosimr",
        description="The Delassus matrix of rigid-body trees: PV-OSIMr and its rivals, checked "
        "and timed against Pinocchio. `pvosimr COMMAND --help` gives a command's options.",
    )
    parser.add_argument(
        "--version", action=_VersionAction, help="print pvosimr's and Pinocchio's versions"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers = {
        name: sub.add_parser(
            name, help=text, description=DEMO_DESCRIPTION if name == "demo" else text
        )
        for name, text in COMMANDS.items()
    }
    return parser, subparsers


def _run(command: str, argv: list[str]) -> int:
    """A command with its own parser (every one but ``demo``), imported on use (its extras
    load later)."""
    if command == "bench":
        bench = benchmarks()
        return 2 if bench is None else bench.main(argv)
    return importlib.import_module(f"pvosimr.study.{command}").main(argv)


def benchmarks():
    """The repository's ``benchmarks/`` (``pvosimr bench``), None with one line on stderr
    where it is not importable: it is kept out of the installed package (from a checkout's
    root, the ``pvosimr`` script finds it in the working folder)."""
    if (Path.cwd() / "benchmarks" / "__init__.py").is_file() and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        return importlib.import_module("benchmarks")
    except ModuleNotFoundError as exc:
        if exc.name != "benchmarks":
            raise
        print(
            "pvosimr bench: error: the benchmarks are in the repository's benchmarks/ folder, "
            "not in the installed package: run pvosimr bench from the root of a checkout",
            file=sys.stderr,
        )
        return None


def command_parsers() -> dict[str, argparse.ArgumentParser]:
    """Every command's parser (``demo``'s is the top-level subparser), for help and tests."""
    from . import count, export, figures

    top, subparsers = _parser()
    parsers = {
        "pvosimr": top,
        "demo": subparsers["demo"],
        "validate": validate.build_parser(),
        "count": count.build_parser(),
        "figures": figures.build_parser(),
        "export": export.build_parser(),
    }
    bench = benchmarks()
    if bench is not None:
        parsers["bench"] = bench.build_parser()
    return parsers


def main(argv: list[str] | None = None) -> int:
    """``pvosimr [COMMAND] ...``; exit 0 on success, 1 on a failed check, 2 on a user's mistake."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] and argv[0] in COMMANDS and argv[0] != "demo":  # it parses its own options
        try:
            return _run(argv[0], argv[1:])
        except CacheFolderError as exc:  # the user's setting: one line, as for a bad option
            print(f"pvosimr {argv[0]}: error: {exc}", file=sys.stderr)
            return 2
    top, subparsers = _parser()
    if argv[:1] == ["demo"]:  # its own errors then read "pvosimr demo: error: ..."
        subparsers["demo"].parse_args(argv[1:])
        return demo()
    args = top.parse_args(argv)
    if args.command is None:
        return demo()
    raise AssertionError(f"command {args.command} has no main")  # never: the others ran above


if __name__ == "__main__":
    sys.exit(main())
