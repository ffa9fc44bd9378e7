"""The study apps' progress: tqdm's bar only on a terminal, whole lines (no ``\\r``) elsewhere."""

import io

import pytest

from pvosimr.study import progress
from pvosimr.study.progress import progress_bar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_log_gets_whole_lines_without_carriage_returns(monkeypatch):
    monkeypatch.setattr(progress, "LINE_SECONDS", 0.0)  # a line at every step
    log = io.StringIO()
    bar = progress_bar(range(3), desc="robots", unit="robot", file=log)
    for k in bar:
        bar.set_postfix_str(f"robot {k}")
    text = log.getvalue()
    assert "\r" not in text and "\x1b" not in text
    lines = text.splitlines()
    assert lines[0].startswith("robots: 1/3 robot in ") and lines[0].endswith("(robot 0)")
    assert lines[-1].startswith("robots: 3/3 robot, done in ")


def test_a_log_gets_one_line_for_a_short_run():
    log = io.StringIO()
    with progress_bar(total=4, unit="count", file=log) as bar:
        for _ in range(4):
            bar.update()
    assert log.getvalue().splitlines() == [log.getvalue().strip()]
    assert log.getvalue().startswith("progress: 4/4 count, done in ")


def test_transient_and_disabled_bars_say_nothing():
    log = io.StringIO()
    list(progress_bar(range(3), file=log, leave=False))
    list(progress_bar(range(3), file=log, disable=True))
    assert log.getvalue() == ""


def test_a_terminal_gets_tqdm():
    tqdm = pytest.importorskip("tqdm")
    terminal = Terminal()
    bar = progress_bar(range(3), file=terminal)
    assert isinstance(bar, tqdm.tqdm)
    list(bar)
    assert "\r" in terminal.getvalue()
