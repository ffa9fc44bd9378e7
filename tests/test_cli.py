"""The ``pvosimr`` command line: version, help for every command and option, and a user's
mistake ending with exit status 2 and one error line, never a traceback."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pinocchio as pin
import pytest

import pvosimr
from pvosimr.study import cli
from pvosimr.study import options as cli_options
from pvosimr.study import validate as validation

COMMANDS = ("demo", "validate", "count", "figures", "bench", "export")


def run(capsys, argv: list[str]) -> tuple[int, str, str]:
    """``pvosimr ARGV`` in this process: exit status, stdout, stderr."""
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse's --help, --version and usage errors
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ------------------------------------------------------------------------- version and help


def test_version_names_pvosimr_and_pin(capsys):
    code, out, err = run(capsys, ["--version"])
    assert code == 0 and not err
    assert out == f"pvosimr {pvosimr.__version__} (pin {pin.__version__})\n"


def test_top_help_names_every_command_on_one_line(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run(capsys, ["--help"])
    assert code == 0
    assert tuple(cli.COMMANDS) == COMMANDS
    lines = out.splitlines()
    for name, text in cli.COMMANDS.items():
        (line,) = [x for x in lines if re.match(rf"\s+{name}\s", x)]
        assert line.split(None, 1)[1] == text  # the whole help on the command's line


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(capsys, command):
    code, out, err = run(capsys, [command, "--help"])
    assert code == 0 and not err
    assert out.startswith(f"usage: pvosimr {command}")


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if not isinstance(a, argparse._SubParsersAction)]


def test_every_option_of_every_command_has_help_and_its_default():
    parsers = cli.command_parsers()
    assert set(parsers) == {"pvosimr", *COMMANDS}
    for command, parser in parsers.items():
        for action in _options(parser):
            name = "/".join(action.option_strings) or action.dest
            assert action.help and action.help != argparse.SUPPRESS, f"{command} {name}"
            if action.option_strings and action.default not in (None, argparse.SUPPRESS):
                assert "default" in action.help, f"{command} {name} does not say its default"


def test_numbers_and_paths_are_checked_while_parsing():
    """Counts >= 1, seeds >= 0, output folders and cache files are argparse types: a mistake is
    refused before anything runs, the same way in every command."""
    expected = {
        "configs": cli_options.at_least_one,
        "repeats": cli_options.at_least_one,
        "batch_size": cli_options.at_least_one,
        "seed": cli_options.non_negative,
        "out": cli_options.directory,
        "cache": cli_options.file_path,
    }
    seen = set()
    for command, parser in cli.command_parsers().items():
        for action in _options(parser):
            if action.dest in expected:
                assert action.type is expected[action.dest], f"{command} --{action.dest}"
                seen.add(action.dest)
    assert seen == set(expected)


def test_validate_help_names_the_report_folder(capsys):
    _, out, _ = run(capsys, ["validate", "--help"])
    assert "pvosimr-report" in out and "--out validation" in out


# ------------------------------------------------------------------------- a user's mistake


@pytest.fixture
def paths(tmp_path: Path) -> dict[str, str]:
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder")
    return {
        "FILE": str(a_file),
        "DIR": str(tmp_path),
        "BELOW": str(a_file / "x"),
        "UNMAKEABLE": UNMAKEABLE,
    }


UNMAKEABLE = "/proc/pvosimr-no-such-process/out"
"""A folder nobody can create, not even root: /proc takes no new entries."""


BAD = [
    (["validate", "--configs", "0"], "argument --configs: must be at least 1, got 0"),
    (["validate", "--configs", "-1"], "argument --configs: must be at least 1, got -1"),
    (["validate", "--configs", "three"], "argument --configs: not an integer: 'three'"),
    (["validate", "--seed", "-1"], "argument --seed: must be at least 0, got -1"),
    (["validate", "--out", "FILE"], "argument --out: must be a directory; FILE is a file"),
    (["validate", "--out", "BELOW"], "argument --out: must be a directory; FILE is a file"),
    (["validate", "DIR"], "DIR is a directory, not a model file"),
    (["validate", ""], "no such model file: "),
    (["validate", "a/b/c"], "no such model file: a/b/c"),
    (["validate", "--robots", ""], "robot case '' is not of the form ROBOT or ROBOT/PRESET"),
    (["validate", "--robots", "stem_b0_L5"], "branches must be a positive integer, got 0"),
    (["validate", "--robots", "nosuchrobot"], "unknown robot 'nosuchrobot'. Valid names: ["),
    (["validate", "--robots", "ur55"], "unknown robot 'ur55'. Did you mean 'ur5'"),
    (["count", "ur5", "--cache", "DIR"], "argument --cache: must be a file; DIR is a directory"),
    (["count", "ur5", "--cache", "BELOW"], "argument --cache: cannot be created; FILE is a file"),
    (["count", "DIR"], "DIR is a directory, not a model file"),
    (["count", ""], "unknown robot '': not a zoo name"),
    (["count", "nosuchrobot"], "unknown robot 'nosuchrobot': not a zoo name"),
    (["count", "ur5", "--preset", "nosuch"], "unknown preset 'nosuch' for robot 'ur5'"),
    (
        ["count", "ur5", "--algorithms", "fastest"],
        (
            "unknown algorithm(s) 'fastest'; valid:",
            "valid: pv-osimr, pv-osim, pv-osimh, efpa, ",
            ", naive, auto (any case: PV-OSIMr works)",
        ),
    ),
    (["count", "ur5", "--weld-between", "tool0", "tool0"], "both frames are on joint 6"),
    (["count", "ur5", "--point-between", "tool0", "base_lnk"], "Did you mean 'base_link'"),
    (["count", "ur5", "--weld", "tool1"], "unknown frame 'tool1' in model 'ur5'. Did you mean"),
    (["validate", "--robots", "ur5", "--out", "UNMAKEABLE"], "--out UNMAKEABLE: cannot create"),
    (["figures", "--quick", "--out", "UNMAKEABLE"], "--out UNMAKEABLE: cannot create the"),
    (["bench", "--robots", "ur5", "--out", "UNMAKEABLE"], "--out UNMAKEABLE: cannot create"),
    (["figures", "--out", "FILE"], "argument --out: must be a directory; FILE is a file"),
    (["figures", "--cache", "DIR"], "argument --cache: must be a file; DIR is a directory"),
    (["bench", "--out", "FILE"], "argument --out: must be a directory; FILE is a file"),
    (["bench", "--robots", "nosuchrobot"], "--robots nosuchrobot: unknown robot 'nosuchrobot'"),
    (["bench", "--robots", "ur55"], "Did you mean 'ur5'"),
    (["bench", "--robots", "ur5/tool_7d"], "unknown preset 'tool_7d' for robot 'ur5'"),
    (["bench", "--robots", "ur5/a/b"], "is not of the form ROBOT or ROBOT/PRESET"),
    (["bench", "--robots", "chain_welded_every_k_k0"], "k must be a positive integer, got 0"),
    (["bench", "--repeats", "-1"], "argument --repeats: must be at least 1, got -1"),
    (["bench", "--repeats", "0"], "argument --repeats: must be at least 1, got 0"),
    (["bench", "--batch-size", "0"], "argument --batch-size: must be at least 1, got 0"),
    (["bench", "--seed", "-2"], "argument --seed: must be at least 0, got -2"),
    (["bench", "--codegen-flags", '-O3 "-g'], "argument --codegen-flags: No closing quotation"),
    (["demo", "--configs", "2"], "unrecognized arguments: --configs 2"),
    (["nosuchcommand"], "invalid choice: 'nosuchcommand'"),
    # a mistyped robot or preset: the nearest zoo case, in every command that names one
    (
        ["count", "atlass/feet_6d"],
        (
            "unknown robot 'atlass': not a zoo name and not an existing",
            "did you mean atlas/feet_6d?",
        ),
    ),
    (
        ["count", "ur5/tool_6e"],
        ("unknown preset 'tool_6e' for robot 'ur5'", "did you mean ur5/tool_6d?"),
    ),
    (["count", "ur5", "--preset", "tool_6e"], "did you mean ur5/tool_6d?"),
    (["count", "ur5/tool_6d", "--preset", "tool_6d"], "ur5/tool_6d names its preset"),
    (["count", "ur5/tool_6d", "--weld", "tool0"], "give either ur5/tool_6d or ur5 with --point"),
    (["count", "nosuch.urdf"], "no such model file: nosuch.urdf"),
    (["count", "ur5", "--preset"], "argument --preset: expected one argument"),
    (["count"], "the following arguments are required: ROBOT[/PRESET]"),
    (["validate", "--robots", "atlass/feet_6d"], "unknown robot 'atlass'. Did you mean 'atlas/fe"),
    (["validate", "--robots", "ur5/tool_6e"], "valid presets: ['tool_6d']; did you mean ur5/to"),
    (["validate", "atlass/feet_6d"], "did you mean: pvosimr validate --robots atlas/feet_6d"),
    (["validate", "--robots", "ur5", "--weld", "tool0"], "--weld: only with a model "),
    (["bench", "--robots", "atlass/feet_6d"], "Did you mean 'atlas/feet_6d'?"),
    (["bench", "--robots", "ur5/tool_6e"], "did you mean ur5/tool_6d?"),
    (["bench", "--robots", "ur5", "--weld", "tool0"], "unrecognized arguments: --weld tool0"),
    (["export", "atlass/feet_6d", "--out", "DIR"], "unknown robot 'atlass'. Did you mean 'atlas/"),
    (["export", "ur5/tool_6e", "--out", "DIR"], "did you mean ur5/tool_6d?"),
    (["export", "--time", "ur5/tool_6d", "atlass/feet_6d"], "Did you mean 'atlas/feet_6d'?"),
    (["export", "nosuch.urdf", "--weld", "a", "--out", "DIR"], "no such model file: nosuch.urdf"),
    (["export", "ur5", "--placements", "moving"], "argument --placements: invalid choice: 'mov"),
    (["export", "ur5"], "is required: the export's folder (new or empty)"),
    (["figures", "--convention", "authors"], "argument --convention: invalid choice: 'authors'"),
    # an unknown frame: the nearest frames, or the model's links when none is near
    (["count", "ur5", "--point", "tool_0"], "unknown frame 'tool_0' in model 'ur5'. Did you mean"),
    (["count", "ur5", "--weld", "gripper"], "unknown frame 'gripper' in model 'ur5'. Its links: "),
    (["export", "ur5", "--weld", "tool1", "--out", "DIR"], "Did you mean 'tool0'?"),
    (["export", "ur5", "--point-between", "tool0", "wrist_1", "--out", "DIR"], "'wrist_1_link'"),
]


@pytest.mark.parametrize(("argv", "messages"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_a_mistake_is_one_error_line_and_status_2(capsys, paths, argv, messages):
    """``messages``: a part of the error line, or several parts (one run checks them all)."""
    argv = [paths.get(a, a) for a in argv]
    code, out, err = run(capsys, argv)
    assert code == 2 and not out
    prog = "pvosimr" if argv[0] not in COMMANDS else f"pvosimr {argv[0]}"
    (line,) = [x for x in err.splitlines() if "error:" in x]
    assert line.startswith(f"{prog}: error: ")
    for message in (messages,) if isinstance(messages, str) else messages:
        for key, value in paths.items():
            message = message.replace(key, value)
        assert message in line
    assert err == line + "\n"  # one line: no usage block above it, no traceback


def test_count_takes_a_robot_with_its_preset(capsys):
    code, out, _ = run(capsys, ["count", "ur5/tool_6d", "--no-cache", "--algorithms", "pv-osimr"])
    assert code == 0 and out.startswith("ur5 (preset tool_6d): nq 6")


@pytest.mark.slow  # the installed command in a subprocess
@pytest.mark.parametrize(
    "argv", [["bench", "--repeats", "0"], ["validate", "--out", "FILE"], ["count", "ur5", "-x"]]
)
def test_the_installed_command_shows_no_traceback(paths, argv):
    argv = [paths.get(a, a) for a in argv]
    done = subprocess.run(
        [sys.executable, "-m", "pvosimr", *argv], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and not done.stdout
    (line,) = done.stderr.splitlines()  # one line: no usage block, no traceback
    assert line.startswith(f"pvosimr {argv[0]}: error: ")


# ------------------------------------------------------------------------- missing extras


SYMBOLIC = 'needs CasADi: pip install "pvosimr[symbolic]"'
PLOTS = 'needs matplotlib: pip install "pvosimr[plots]"'


@pytest.mark.parametrize(
    ("module", "argv", "message"),
    [
        ("casadi", ["figures", "--quick"], SYMBOLIC),
        ("matplotlib", ["figures", "--quick"], PLOTS),
        ("casadi", ["count", "ur5"], SYMBOLIC),
        ("matplotlib", ["bench", "--robots", "ur5", "--repeats", "1", "--no-scaling"], PLOTS),
    ],
)
def test_a_missing_extra_is_named_before_anything_is_written(
    capsys, monkeypatch, tmp_path, module, argv, message
):
    monkeypatch.setitem(sys.modules, module, None)  # `import module` now fails
    monkeypatch.delenv("PVOSIMR_CACHE_DIR", raising=False)  # count's default cache, below
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    out = tmp_path / "out"
    if argv[0] != "count":
        argv = [*argv, "--out", str(out)]
    code, stdout, err = run(capsys, argv)
    assert code == 2 and not stdout
    assert err == f"pvosimr {argv[0]}: {message}\n"
    assert list(tmp_path.iterdir()) == []  # no output folder, no cache


def _without(module: str, code: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter where ``import module`` fails, as without its extra."""
    script = f"import sys\nsys.modules[{module!r}] = None\n{code}"
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow  # a fresh interpreter per module
@pytest.mark.parametrize("module", ["casadi", "matplotlib", "tqdm"])
def test_every_help_prints_without_an_optional_module(module):
    """Each command's --help imports nothing optional (a fresh interpreter: nothing cached)."""
    code = f"""
from pvosimr.study import cli
for command in {[*COMMANDS, "--version"]!r}:
    try:
        status = cli.main([command, "--help"] if command != "--version" else [command])
    except SystemExit as exc:
        status = exc.code
    print("STATUS", command, status)
"""
    done = _without(module, code)
    assert "Traceback" not in done.stderr and not done.stderr
    statuses = [line for line in done.stdout.splitlines() if line.startswith("STATUS")]
    assert statuses == [f"STATUS {c} 0" for c in (*COMMANDS, "--version")]
    for command in COMMANDS:
        assert f"usage: pvosimr {command}" in done.stdout


@pytest.mark.slow  # seconds (measured)
def test_figures_without_casadi_is_one_line_and_status_2(tmp_path):
    out = tmp_path / "out"
    code = f"from pvosimr.study import cli\nsys.exit(cli.main(['figures', '--out', {str(out)!r}]))"
    done = _without("casadi", code)
    assert done.returncode == 2 and not done.stdout
    assert done.stderr == f"pvosimr figures: {SYMBOLIC}\n"
    assert not out.exists()


@pytest.mark.parametrize(("module", "message"), [("casadi", SYMBOLIC), ("matplotlib", PLOTS)])
def test_the_figures_api_names_the_missing_extra(monkeypatch, tmp_path, module, message):
    from pvosimr.study import figures

    monkeypatch.setitem(sys.modules, module, None)
    out = tmp_path / "out"
    with pytest.raises(ModuleNotFoundError) as raised:
        figures.run(out, quick=True, cache_path=tmp_path / "cache.json", progress=False)
    assert str(raised.value) == f"pvosimr.study.figures.run: {message}"
    assert raised.value.name == module and list(tmp_path.iterdir()) == []


def test_the_bench_writer_names_the_missing_extra(monkeypatch, tmp_path):
    import benchmarks as bench

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ModuleNotFoundError, match=r"^benchmarks.write: needs matplotlib"):
        bench.write({}, tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------- missing models


def _without_atlas(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PVOSIMR_MODEL_PATH", str(tmp_path))
    monkeypatch.setitem(sys.modules, "robot_descriptions", None)


def _without_shadow_hand(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "gymnasium_robotics", None)


@pytest.mark.parametrize(
    ("hide", "argv", "fix"),
    [
        (_without_atlas, ["bench", "--robots", "atlas/feet_6d"], "PVOSIMR_MODEL_PATH"),
        (_without_shadow_hand, ["bench", "--robots", "shadow_hand"], "gymnasium-robotics"),
        (_without_atlas, ["count", "atlas"], "PVOSIMR_MODEL_PATH"),
        (_without_shadow_hand, ["count", "shadow_hand"], "gymnasium-robotics"),
        (_without_atlas, ["validate", "--robots", "atlas"], "PVOSIMR_MODEL_PATH"),
        (_without_shadow_hand, ["validate", "--robots", "shadow_hand"], "gymnasium-robotics"),
        (_without_atlas, ["figures", "--quick"], "PVOSIMR_MODEL_PATH"),
        (_without_shadow_hand, ["figures", "--quick"], "gymnasium-robotics"),
    ],
)
def test_a_missing_model_names_the_fix(capsys, monkeypatch, tmp_path, hide, argv, fix):
    hide(monkeypatch, tmp_path)
    out = tmp_path / "out"
    if argv[0] in ("bench", "figures"):
        argv = [*argv, "--out", str(out)]
    code, stdout, err = run(capsys, argv)
    assert code == 2 and not stdout
    (line,) = err.splitlines()[-1:]
    assert line.startswith(f"pvosimr {argv[0]}: error: ") and fix in line
    assert not out.exists()


# ------------------------------------------------------------------------- report folder


REPO = Path(__file__).resolve().parents[1]


def _default_outputs() -> dict[str, Path]:
    """Every command's default output folder, from its own parser or constant."""
    import benchmarks as bench
    from pvosimr.study.figures import runner

    return {
        "validate": Path(validation.ZOO_REPORT_DIR),
        "figures": runner.DEFAULT_OUT["pvosimr"],
        "figures --convention paper": runner.DEFAULT_OUT["paper"],
        "bench": bench.DEFAULT_OUT,
        "bench --sections accuracy": cli_options.REPORT_DIR,
    }


@pytest.mark.parametrize("where", [".", "docs"])
def test_every_default_output_folder_is_git_ignored(where):
    """Where a command writes by default, run from the repository's top or a subfolder, git
    ignores; the committed folders it can rewrite with --out it does not."""
    for command, out in _default_outputs().items():
        assert out.parts[0] == cli_options.REPORT_DIR.name, command
        path = Path(where) / out / "report.md"
        ignored = subprocess.run(["git", "check-ignore", "-q", str(path)], cwd=REPO)
        assert ignored.returncode == 0, f"{command}: {path} is not git-ignored"
    for committed in ("figures/claims.md", "validation/report.md"):
        assert subprocess.run(["git", "check-ignore", "-q", committed], cwd=REPO).returncode == 1


@pytest.mark.parametrize("command", ["figures", "bench", "validate"])
def test_help_says_only_out_rewrites_the_committed_files(capsys, command):
    _, out, _ = run(capsys, [command, "--help"])
    text = " ".join(out.split()).replace("- ", "-")  # argparse wraps at hyphens
    assert "pvosimr-report" in text and "git-ignored" in text and "rewrite" in text


# fmt: off
DEFAULT_RUNS = [
    ["pvosimr"],
    ["pvosimr", "validate", "--configs", "1"],
    ["pvosimr", "count", "ur5"],
    ["pvosimr", "figures", "--quick"],
    ["pvosimr", "bench", "--robots", "ur5", "--repeats", "1", "--no-scaling", "--no-crossover",
     "--no-codegen"],
    ["pvosimr", "bench", "--sections", "accuracy", "--quick", "--no-progress"],
    ["validation/loop_closures.py"],
    ["validation/fig4b_breakdown.py", "--sizes", "4"],
    ["validation/explicit_propagators.py"],
    ["validation/joint_rows.py"],
]
"""Every command and validation script with its default output options (the quickest sizes
it has)."""
# fmt: on


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A fresh clone of this repository (its committed state)."""
    path = tmp_path_factory.mktemp("clone") / "pvosimr"
    subprocess.run(["git", "clone", "-q", str(REPO), str(path)], check=True)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("argv", DEFAULT_RUNS, ids=[" ".join(a) for a in DEFAULT_RUNS])
def test_no_command_writes_into_a_fresh_clone(clone, argv):
    """Run in a clone, with the clone's code, every command leaves `git status` empty: what it
    writes goes to the git-ignored pvosimr-report/ (about 3 min in all with warm caches)."""
    env = {**os.environ, "PYTHONPATH": str(clone)}
    done = subprocess.run(
        [sys.executable, *(argv if argv[0].endswith(".py") else ["-m", *argv])],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True, check=True
    )
    assert status.stdout == ""


@pytest.mark.slow  # `pvosimr validate` in a subprocess, building the C++ bridge
def test_zoo_wide_validate_writes_to_pvosimr_report_not_the_committed_report(
    capsys, monkeypatch, tmp_path
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(validation, "zoo_names", lambda: ["ur5"])  # a one-robot zoo
    monkeypatch.setattr(validation, "damped_inverse_section", lambda seed: "not measured here")
    code, out, _ = run(capsys, ["validate", "--configs", "1"])
    assert code == 0
    assert [p.name for p in tmp_path.iterdir()] == ["pvosimr-report"]
    report = tmp_path / "pvosimr-report"
    assert "report: pvosimr-report/report.md" in out
    # The stand-ins were what ran: the zoo was ur5 alone, the damped section not measured.
    assert {row["robot"] for row in json.loads((report / "report.json").read_text())["rows"]} == {
        "ur5"
    }
    assert "not measured here" in (report / "report.md").read_text()


def test_bench_outside_a_checkout_says_where_the_benchmarks_are(capsys, monkeypatch, tmp_path):
    """The benchmarks are not installed: without them, one line and exit status 2."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "benchmarks", None)  # not importable
    code, _, err = run(capsys, ["bench", "--robots", "ur5"])
    assert code == 2
    assert err.strip().splitlines() == [
        "pvosimr bench: error: the benchmarks are in the repository's benchmarks/ folder, "
        "not in the installed package: run pvosimr bench from the root of a checkout"
    ]
