"""What a validation run found and how it is written: one :class:`Row` per robot × preset, the
Markdown table and its footnotes, the report's sections, ``report.md`` and ``report.json``.

:mod:`.validate` runs the cases and fills the rows; this module only reads them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

from pvosimr import ALGORITHMS, reference
from pvosimr.reference import bridge, truth

from .machine import one_line
from .mujoco_section import error_cell, mujoco_section
from .pinocchio_defects import silently_wrong_section
from .record import prose

__all__ = [
    "RAISED",
    "REFUSED",
    "TOLERANCE",
    "MethodResult",
    "Row",
    "accuracy_section",
    "footnotes",
    "not_run",
    "summary",
    "table",
    "write_report",
]

TOLERANCE = truth.TOLERANCE

_prose = partial(prose, "validate")
"""A block of ``templates/validate.md``: the report's paragraphs."""


@dataclass
class MethodResult:
    """One method on one robot × preset: its worst error against the truth and median time per
    call over the configurations it ran on, and why it has no result where it has none."""

    error: float | None = None
    time_us: float | None = None
    failure: str | None = None  # the message it raised on some configuration
    # with a failure: REFUSED (pvosimr's own check refused the input) or RAISED
    raised_by: str | None = None
    not_called: str | None = None  # a reference not called on some configuration, and why


@dataclass
class Row:
    """One robot × preset: every method's :class:`MethodResult`, by name."""

    robot: str
    preset: str
    nv: int
    m: int
    configs: int
    methods: dict[str, MethodResult] = field(default_factory=dict)
    seconds: float = 0.0
    pv_cpp_vs_efpa_cpp: float | None = None  # Pinocchio's two C++ routines against each other
    # MJCF robots: pvosimr's G against MuJoCo's, MuJoCo's rows left out (most at one
    # configuration, by kind) and where Pinocchio's own MJCF parser builds another robot
    pvosimr_vs_mujoco: float | None = None
    left_out: dict[str, int] = field(default_factory=dict)
    parser_notes: list[str] = field(default_factory=list)

    def result(self, method: str) -> MethodResult:
        """``method``'s result; an empty one where it has none."""
        return self.methods.get(method) or MethodResult()

    def raised(self) -> dict[str, MethodResult]:
        """The methods that raised on some configuration."""
        return {k: r for k, r in self.methods.items() if r.failure is not None}

    def passes(self) -> bool:
        """Every pvosimr algorithm ran on every configuration and is within the tolerance
        (references only reported)."""
        return all(_within(self.result(a)) for a in ALGORITHMS)


def _within(result: MethodResult) -> bool:
    return result.failure is None and result.error is not None and result.error <= TOLERANCE


REFUSED, RAISED = "pvosimr refused the input", "raised"
"""Why a method has no result: pvosimr's own input check said no (a Pinocchio reference on
input it would get silently wrong, a singular G), or the call raised anywhere else (Pinocchio's
C++ refusing, a bug)."""


def not_run(name: str, reason: str) -> str:
    """Why the reference ``name`` cannot run here, with the fix the library's own error gives
    (only the bridge, ``pin-pv-osimr``, can be missing: its error says what to install)."""
    if name != "pin-pv-osimr":
        return f"{name}: {reason}"
    return f"{name}: {bridge.BridgeUnavailableError(reason)}"


def _cell(row: Row, method: str, notes: dict[str, int]) -> str:
    result = row.result(method)
    if result.not_called is not None:
        return "not called"
    if result.failure is not None:
        mark = f"[{notes[result.failure]}]"
        if method in ALGORITHMS:  # every algorithm takes every input: a raise fails the run
            return f"failed ❌ {mark}"
        return f"refused {mark}"
    return error_cell(result.error)


def _notes(rows: list[Row]) -> dict[str, int]:
    """Each distinct error message of ``rows`` and its footnote number, in table order."""
    notes: dict[str, int] = {}
    for r in rows:
        for method in [*ALGORITHMS, *_references(rows)]:
            failure = r.result(method).failure
            if failure is not None:
                notes.setdefault(failure, len(notes) + 1)
    return notes


def _references(rows: list[Row]) -> list[str]:
    """The Pinocchio references that appear in ``rows`` (ran or refused)."""
    return sorted({m for r in rows for m in r.methods} - set(ALGORITHMS))


def table(rows: list[Row]) -> list[str]:
    """The Markdown table: one row per robot × preset, one error column per method; a method
    that raised shows "failed ❌ [n]" (a pvosimr algorithm) or "refused [n]" (a Pinocchio
    reference), footnote n of :func:`footnotes` giving the reason."""
    methods = [*ALGORITHMS, *_references(rows)]
    notes = _notes(rows)
    head = ["robot", "preset", "nv", "m", *methods, "pv-osimr µs", "pin-efpa µs", "time s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r.robot, r.preset, str(r.nv), str(r.m)]
        cells += [_cell(r, m, notes) for m in methods]
        times = [r.result(m).time_us for m in ("pv-osimr", "pin-efpa")]
        cells += ["—" if t is None else f"{t:.0f}" for t in times] + [f"{r.seconds:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def footnotes(rows: list[Row]) -> list[str]:
    """``[n] methods (who): reason`` for every footnote mark of :func:`table` (none when
    nothing raised): a pvosimr algorithm that failed, a reference pvosimr refused to call on
    this input, or one whose C++ call raised (Pinocchio's, or the bridge's own check)."""
    who: dict[str, dict[str, set[str]]] = {}
    for r in rows:
        for method, result in r.raised().items():
            kind = _who(method, result.raised_by)
            who.setdefault(result.failure, {}).setdefault(kind, set()).add(method)
    return [
        f"[{n}] "
        + "; ".join(f"{', '.join(sorted(m))} ({kind})" for kind, m in sorted(who[message].items()))
        + f": {message}"
        for message, n in _notes(rows).items()
    ]


def _who(method: str, raised_by: str) -> str:
    if method in ALGORITHMS:
        return "failed"
    return raised_by if raised_by == REFUSED else "raised in the C++ call"


SILENTLY_WRONG_ANCHOR = (
    "#where-pinocchios-routines-are-silently-wrong-world-aligned-frames-loop-closures-the-damped-"
    "inverse"
)
"""The report's section measuring what Pinocchio returns where pvosimr refuses to call it."""


def _disagreements(rows: list[Row], references: list[str], measured: bool) -> list[str]:
    """Where a result Pinocchio returned is off the truth; else why "none" says little where
    pvosimr refused the input (``measured``: the report measures those cases directly)."""
    out = [
        f"- **{r.robot} / {r.preset}**: `{ref}` is off the dense truth by "
        f"{r.result(ref).error:.1e} (pvosimr's worst on this case: {_worst(r):.1e})."
        for r in rows
        for ref in references
        if (r.result(ref).error or 0.0) > TOLERANCE
    ]
    if out:
        return out
    line = _prose("none-off")
    held_back = any(
        r.result(ref).raised_by == REFUSED or r.result(ref).not_called is not None
        for r in rows
        for ref in references
    )
    if held_back:
        line += " " + _prose("held-back")
        line += f", [measured below]({SILENTLY_WRONG_ANCHOR})." if measured else "."
    return [line]


def _worst(row: Row) -> float:
    """The worst error of the pvosimr algorithms on ``row``."""
    return max(row.result(a).error or 0.0 for a in ALGORITHMS)


def _cpp_agreement(rows: list[Row]) -> str:
    pairs = [(r.pv_cpp_vs_efpa_cpp, r) for r in rows if r.pv_cpp_vs_efpa_cpp is not None]
    if not pairs:
        return _prose("cpp-missing")
    worst, r = max(pairs, key=lambda p: p[0])
    verdict = "within" if worst <= TOLERANCE else "**above**"
    case = f"{r.robot}/{r.preset}"
    return _prose("cpp", worst=f"{worst:.1e}", cases=len(pairs), case=case, verdict=verdict)


def _by_message(rows: list[Row], message: Callable[[str, MethodResult], str | None]) -> list[str]:
    """One line per method and ``message(method, result)`` (None passes it over), with the
    cases it came from."""
    groups: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        for method, result in r.methods.items():
            text = message(method, result)
            if text is not None:
                groups.setdefault((method, text), []).append(f"{r.robot}/{r.preset}")
    return [
        f"- `{method}` on {len(cases)} case(s) ({', '.join(cases)}): {text}"
        for (method, text), cases in sorted(groups.items())
    ]


def _raised(rows: list[Row], keep: Callable[[str, str], bool]) -> list[str]:
    """The raised methods ``keep(method, who)`` selects, grouped by method and message."""

    def kept_failure(method: str, result: MethodResult) -> str | None:
        return result.failure if keep(method, result.raised_by) else None

    return _by_message(rows, kept_failure) or ["- None."]


def _raised_sections(rows: list[Row]) -> list[str]:
    """Three kinds of "no result", told apart: a pvosimr algorithm that raised (fails the run),
    a Pinocchio reference pvosimr refused to call on this input, one whose C++ call raised."""
    return [
        _prose("raised"),
        "",
        *_raised(rows, lambda method, who: method in ALGORITHMS),
        "",
        _prose("refused"),
        "",
        *_raised(rows, lambda method, who: method not in ALGORITHMS and who == REFUSED),
        "",
        _prose("cpp-raised"),
        "",
        *_raised(rows, lambda method, who: method not in ALGORITHMS and who != REFUSED),
    ]


def summary(rows: list[Row]) -> str:
    """One line: PASS/FAIL and the number of cases."""
    ok = all(r.passes() for r in rows)
    return f"{'PASS' if ok else 'FAIL'}: {len(rows)} robot × preset cases"


def write_report(rows: list[Row], out: Path, meta: dict) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.json`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    references = _references(rows)
    ok = all(r.passes() for r in rows)
    notes = footnotes(rows)
    head = _prose(
        "head",
        command=meta["command"],
        machine=one_line(meta["machine"]),
        verdict="PASS" if ok else "FAIL",
        cases=len(rows),
        configs=meta["configs"],
        seed=meta["seed"],
        seconds=f"{meta['seconds']:.0f}",
        tolerance=f"{TOLERANCE:g}",
    )
    md = [
        head,
        "",
        *table(rows),
        "",
        *([*(f"- {line}" for line in notes), ""] if notes else []),
        _cpp_agreement(rows),
        "",
        "## Where Pinocchio or MuJoCo disagrees with the dense truth",
        "",
        *_disagreements(rows, references, bool(meta.get("silently_wrong"))),
        "",
        *_raised_sections(rows),
    ]
    not_called = _by_message(rows, lambda method, result: result.not_called)  # and why
    if not_called:
        md += ["", "## Pinocchio references not called on some cases", "", *not_called]
    if reference.unavailable():
        md += ["", "## Pinocchio references not run here", ""]
        md += [
            f"- **{name}**{not_run(name, why).removeprefix(name)}"
            for name, why in reference.unavailable().items()
        ]
    if meta.get("unavailable"):
        md += ["", "## Robots not validated (optional model not installed)", ""]
        md += [f"- **{name}**: {reason}" for name, reason in meta["unavailable"].items()]
    extra = meta.get("damped_inverse")
    if extra:
        md += ["", "## `pin.computeDampedDelassusMatrixInverse` from Python", "", extra]
    md += mujoco_section(rows)
    if meta.get("silently_wrong"):
        md += ["", *silently_wrong_section(meta["silently_wrong"])]
    md += accuracy_section(out)
    md_path, json_path = out / "report.md", out / "report.json"
    md_path.write_text("\n".join(md) + "\n")
    json_path.write_text(
        json.dumps({"meta": meta, "pass": ok, "rows": [asdict(r) for r in rows]}, indent=1)
    )
    return md_path, json_path


def accuracy_section(out: Path) -> list[str]:
    """The summary of the accuracy study (``pvosimr bench --sections accuracy``) written beside the
    report, with its figure: the zoo's robots are shallow and well conditioned, so how accuracy
    ends with depth and mass ratio is measured there, on chains up to 300 links."""
    study = out / "accuracy.md"
    if not study.exists():
        return []
    lines = study.read_text().splitlines()
    start = lines.index("## Summary") + 1 if "## Summary" in lines else len(lines)
    stop = next((k for k in range(start, len(lines)) if lines[k].startswith("## ")), len(lines))
    summary = [line for line in lines[start:stop] if line.startswith("- ")]
    if not summary:
        return []
    figure = ["", "![error against depth and cond(M)](accuracy.png)"]
    return [
        "",
        _prose("accuracy"),
        "",
        *summary,
        *(figure if (out / "accuracy.png").exists() else []),
    ]
