"""The README is a front door that stays true: two install commands, a short page, links that
exist, and the ratios of its "Choosing a path" table equal to the last ``pvosimr bench`` run
(``figures/timings.json``), read as the documentation site reads them (``docs/hooks/site.py``).
Its Python snippets run in ``tests/test_docs.py``."""

import importlib.util
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TEXT = README.read_text(encoding="utf-8")


def _site_hooks():
    spec = importlib.util.spec_from_file_location("site_hooks", ROOT / "docs" / "hooks" / "site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_is_a_front_door():
    lines = TEXT.count("\n")
    assert lines <= 170, f"README.md has {lines} lines: the manual belongs in docs/"


def test_install_is_two_commands():
    section = TEXT.split("## Install", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```bash\n(.*?)^```", section, re.S | re.M)
    assert len(blocks) == 1
    commands = [line for line in blocks[0].splitlines() if line.strip()]
    assert len(commands) == 2, commands
    assert "pip install -e" in commands[0] and "pvosimr validate" in commands[0]
    assert "pytest" in commands[1]


def test_links_exist():
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", TEXT)
    local = [t for t in targets if not re.match(r"[a-z]+://", t)]
    assert local
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, f"README.md links to what the repository lacks: {missing}"


ROWS = {
    "numpy, one q": ["numpy, one q"],
    "numpy, many q": ["numpy, a batch of 1024"],
    "generated C, one q": ["generated C, one q"],
    "generated C, many q": [
        "generated C, a batch of 1024, 2 threads",
        "generated C, a batch of 1024, 1 thread",
    ],
    "generated dG/dq": ["dG/dq"],
    "Pinocchio's C++": ["Pinocchio's C++, bare calls"],
}
"""Each row of the README's path table → the ratios of ``path_ratios`` its cell quotes, in order."""

RANGE = re.compile(r"(\d+(?:\.\d+)?)(?:–(\d+(?:\.\d+)?))?×")


def test_the_path_table_quotes_the_last_bench_run():
    """Every range of the table within 10 % of the run's lowest and highest ratio (a rerun of
    the bench moves them by less; a new speed, or a stale README, by more)."""
    hooks = _site_hooks()
    timings = json.loads((ROOT / "figures" / "timings.json").read_text(encoding="utf-8"))
    measured = hooks.path_ratios(timings)
    section = TEXT.split("## Choosing a path", 1)[1].split("\n## ", 1)[0]
    cells = dict(re.findall(r"^\| ([^|`]+?) \| [^|]+ \| ([^|]+) \| [^|]+ \|$", section, re.M))
    assert set(cells) >= set(ROWS), cells
    wrong = []
    for row, keys in ROWS.items():
        quoted = RANGE.findall(cells[row])[: len(keys)]
        assert len(quoted) == len(keys), (row, cells[row])
        for key, (low, high) in zip(keys, quoted, strict=True):
            values = measured[key]
            expect = hooks.ratio_range(values)
            low, high = float(low), float(high or low)
            if abs(low / min(values) - 1) > 0.1 or abs(high / max(values) - 1) > 0.1:
                wrong.append(f"{row} ({key}): README {cells[row]!r}, the last run {expect}")
    assert not wrong, "README.md's path table against figures/timings.json:\n" + "\n".join(wrong)


def test_the_bench_robots_are_those_the_readme_names():
    timings = json.loads((ROOT / "figures" / "timings.json").read_text(encoding="utf-8"))
    robots = {case["name"].split("/")[0] for case in timings["cases"]}
    assert robots == {"atlas", "atlas_two_shadow_hands", "shadow_hand", "talos"}, (
        f"the last bench ran on {sorted(robots)}: update the sentence above README.md's path table"
    )
