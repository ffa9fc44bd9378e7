"""Command-line pieces shared by the ``pvosimr`` commands.

- :func:`command_parser` and the options every command spells alike: :func:`add_out_option`,
  :func:`add_seed_option`.

- Argument types that refuse a user's mistake while parsing (exit status 2, one
  ``pvosimr CMD: error: argument --X: ...`` line): :func:`at_least_one`, :func:`non_negative`,
  :func:`directory`, :func:`file_path`.
- :func:`require_extra`: a command that needs an optional dependency says which extra to
  install, before it writes anything.
- :data:`REPORT_DIR`: where every command writes by default (git-ignored); the repository's
  committed outputs are rewritten only with an explicit ``--out``.  :func:`make_out` creates
  the output folder before the work starts, or ends the run with one line.
- A model file (URDF or MJCF) with ``--point FRAME`` / ``--weld FRAME`` constraints (repeatable,
  command-line order kept), ``--free-flyer`` and ``--mimic``; the robot itself comes from
  :func:`pvosimr.zoo.from_file`.  Errors end the run through ``parser.error`` (exit status 2)
  with the message of the zoo: the missing file, the unknown frame and its closest names.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NoReturn

from pvosimr import zoo
from pvosimr.constraints import constraint_shape
from pvosimr.extras import install_hint, missing_extra

__all__ = [
    "REPORT_DIR",
    "OneLineParser",
    "add_model_file_options",
    "add_out_option",
    "add_seed_option",
    "at_least_one",
    "command_parser",
    "directory",
    "file_path",
    "make_out",
    "non_negative",
    "report_script_parser",
    "require_extra",
    "robot_from_file",
    "usage_error",
    "with_frames",
    "write_report",
]


REPORT_DIR = Path("pvosimr-report")
"""Every command's default output folder, relative to the current folder and git-ignored, so
that no command rewrites a committed file unless ``--out`` names it (``validate`` writes its
report at the top, as in ``validation/``; ``figures`` and ``bench`` into ``figures/`` below,
as in the repository)."""


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose mistakes are one line, ``PROG: error: MESSAGE``, and exit
    status 2: argparse's own errors (an unknown option, a bad value) and every
    ``parser.error(...)`` of the commands, without the usage block (``--help`` shows it);
    its subparsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def command_parser(command: str, description: str) -> argparse.ArgumentParser:
    """The parser of ``pvosimr <command>``: its errors are one line,
    ``pvosimr <command>: error: ...``, and exit status 2 (:class:`OneLineParser`)."""
    return OneLineParser(prog=f"pvosimr {command}", description=description)


def add_out_option(
    parser: argparse.ArgumentParser,
    default: Path | None = None,
    help: str = "output folder (default: %(default)s)",
) -> None:
    """``--out DIR``: an output folder, refused up front if it is a file."""
    parser.add_argument("--out", type=directory, default=default, metavar="DIR", help=help)


def add_seed_option(parser: argparse.ArgumentParser) -> None:
    """``--seed SEED``: the seed of the random configurations."""
    parser.add_argument(
        "--seed",
        type=non_negative,
        default=0,
        metavar="SEED",
        help="seed of the random configurations, at least 0 (default: %(default)s)",
    )


def _at_least(low: int, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
    return value


def at_least_one(text: str) -> int:
    """An integer >= 1 (a count: configurations, repeats, batch size)."""
    return _at_least(1, text)


def non_negative(text: str) -> int:
    """An integer >= 0 (a random seed)."""
    return _at_least(0, text)


def _blocking_file(path: Path) -> Path | None:
    """The nearest existing ancestor of ``path`` when it is not a directory (nothing can be
    created below it), else None."""
    for parent in path.absolute().parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def directory(text: str) -> Path:
    """An output folder: an existing directory or one that can be created."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"must be a directory; {text} is a file")
    blocker = _blocking_file(path)
    if blocker is not None:
        raise argparse.ArgumentTypeError(f"must be a directory; {blocker} is a file")
    return path


def file_path(text: str) -> Path:
    """A file to read and write (a cache): an existing file or one that can be created."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"must be a file; {text} is a directory")
    blocker = _blocking_file(path)
    if blocker is not None:
        raise argparse.ArgumentTypeError(f"cannot be created; {blocker} is a file")
    return path


def make_out(prog: str, out: Path) -> int | None:
    """Create the output folder ``out`` before any work; exit status 2 and one line when it
    cannot be made (a read-only place, no permission), else None.  Parsing (:func:`directory`)
    already refused a file in the way; only trying tells the rest."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return usage_error(prog, f"--out {out}: cannot create the folder: {exc.strerror or exc}")
    return None


def usage_error(prog: str, message: str) -> int:
    """Report a user's mistake found after parsing as ``parser.error`` does: one line on
    stderr; returns exit status 2."""
    print(f"{prog}: error: {message}", file=sys.stderr)
    return 2


def require_extra(prog: str, *modules: str) -> None:
    """Exit with status 2 and one line naming the extra to install when a module is missing."""
    module = missing_extra(*modules)
    if module is not None:
        print(install_hint(prog, module), file=sys.stderr)
        raise SystemExit(2)


def report_script_parser(name: str, description: str) -> argparse.ArgumentParser:
    """The parser of the script ``validation/<name>.py``, with its ``--out``: the Markdown
    report, by default in the git-ignored :data:`REPORT_DIR`."""
    parser = OneLineParser(prog=f"python validation/{name}.py", description=description)
    parser.add_argument(
        "--out",
        type=Path,
        default=REPORT_DIR / f"{name}.md",
        help="the report (default: %(default)s, git-ignored; "
        f"--out validation/{name}.md rewrites the committed one)",
    )
    return parser


def write_report(out: Path, lines: list[str]) -> int:
    """Write a script's Markdown report to ``out`` (its folder made) and print it; exit 0."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


def add_model_file_options(parser: argparse.ArgumentParser) -> None:
    """``--point``/``--weld`` and ``--point-between``/``--weld-between`` (into
    ``args.constraints``: ``(kind, frame)`` or ``(kind, (frame1, frame2))`` in order),
    ``--world-aligned``, ``--free-flyer`` and ``--mimic``."""
    for kind, what in (("point", "3D point contact"), ("weld", "6D weld")):
        parser.add_argument(
            f"--{kind}",
            dest="constraints",
            action="append",
            type=lambda frame, kind=kind: (kind, frame),
            metavar="FRAME",
            help=f"a {what} at this frame (repeatable; command-line order is kept)",
        )
        parser.add_argument(
            f"--{kind}-between",
            dest="constraints",
            action=_AppendBetween,
            nargs=2,
            metavar=("FRAME1", "FRAME2"),
            help=f"a {what} closing a loop between two frames (repeatable, in order)",
        )
    parser.add_argument(
        "--world-aligned",
        action="store_true",
        help="every constraint's rows in world axes, LOCAL_WORLD_ALIGNED (default: LOCAL)",
    )
    parser.add_argument(
        "--free-flyer",
        action="store_true",
        help="add a free-flyer root joint (model files only; default: the file's root is fixed)",
    )
    parser.add_argument(
        "--mimic",
        action="store_true",
        help="URDF <mimic> joints become Pinocchio mimic joints (default: independent joints)",
    )


class _AppendBetween(argparse.Action):
    """``--point-between A B``: appends ``("point", ("A", "B"))`` to ``dest``."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        kind = option_string.removeprefix("--").removesuffix("-between")
        items = list(getattr(namespace, self.dest) or [])
        setattr(namespace, self.dest, [*items, (kind, tuple(values))])


def model_file_options_used(args: argparse.Namespace) -> list[str]:
    """The model-file options given on the command line (for "only with a FILE" errors)."""
    used = [
        f"--{kind}" + ("" if isinstance(frames, str) else "-between")
        for kind, frames in args.constraints or []
    ]
    flags = ("--world-aligned", "--free-flyer", "--mimic")
    return [*dict.fromkeys(used), *(o for o in flags if getattr(args, o[2:].replace("-", "_")))]


def robot_from_file(
    path: Path, args: argparse.Namespace, parser: argparse.ArgumentParser
) -> zoo.Robot:
    """:func:`pvosimr.zoo.from_file` with the parsed options; any problem is a usage error."""
    try:
        robot = zoo.from_file(
            path,
            args.constraints or [],
            free_flyer=args.free_flyer,
            mimic=args.mimic,
            world_aligned=args.world_aligned,
        )
    except (FileNotFoundError, ValueError) as exc:
        hint = "; pass --point FRAME and/or --weld FRAME" if not args.constraints else ""
        parser.error(f"{exc}{hint}")
    return _checked(robot, args, parser)


def with_frames(
    robot: zoo.Robot, args: argparse.Namespace, parser: argparse.ArgumentParser
) -> zoo.Robot:
    """A zoo robot with the ``--point``/``--weld`` constraints instead of its presets."""
    try:
        robot = robot.with_constraints(args.constraints, world_aligned=args.world_aligned)
    except ValueError as exc:
        parser.error(str(exc))
    return _checked(robot, args, parser)


def _checked(
    robot: zoo.Robot, args: argparse.Namespace, parser: argparse.ArgumentParser
) -> zoo.Robot:
    """``robot`` once its constraints are ones the algorithms take: a loop closure between two
    frames of one link (``--weld-between A A``) has zero rows, a user's mistake refused here,
    before any work, rather than by every algorithm afterwards."""
    model, pairs = robot.model, zip(args.constraints, robot.constraints, strict=False)
    for k, ((kind, frames), cm) in enumerate(pairs):
        if isinstance(frames, tuple) and cm.joint1_id == cm.joint2_id:
            joint = cm.joint1_id
            message = (
                f"--{kind}-between {' '.join(frames)}: both frames are on joint {joint} "
                f"({model.names[joint]!r}), so constraint {k} has zero rows; name frames on "
                "two different links"
            )
            parser.error(message)
    try:
        for k, cm in enumerate(robot.constraints):  # anything else the algorithms would refuse
            constraint_shape(cm, f"constraint {k}")
    except ValueError as exc:
        parser.error(str(exc))
    return robot
