"""The validation report's MuJoCo part: on MJCF robots, pvosimr, MuJoCo and the dense truth.

On an MJCF robot the constraints are MuJoCo's own rows at each configuration
(:mod:`pvosimr.reference.mujoco_efc`), and ``mujoco-efc`` (MuJoCo's ``efc_AR − diag(efc_R)``)
is one more reference beside Pinocchio's.  This module says, per MJCF case, where the three
engines agree: pvosimr's G against MuJoCo's, each against the truth, the rows MuJoCo has that
were not compared, and where Pinocchio's own MJCF parser builds another robot.
"""

from __future__ import annotations

from pvosimr.reference.truth import TOLERANCE

from .record import prose

__all__ = ["MUJOCO", "agreement_lines", "error_cell", "mujoco_section"]

MUJOCO = "mujoco-efc"
"""The name of MuJoCo's reference in the validation's tables."""


def _mjcf_rows(rows: list) -> list:
    return [
        r for r in rows if r.result(MUJOCO).error is not None or r.pvosimr_vs_mujoco is not None
    ]


def error_cell(value: float | None) -> str:
    """An error in a report's table: one digit, marked ❌ above the tolerance; "—" for none."""
    return "—" if value is None else f"{value:.0e}" + ("" if value <= TOLERANCE else " ❌")


def _left_out(row) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in sorted(row.left_out.items())) or "none"


def _verdict(row) -> str:
    errs = [row.result(MUJOCO).error, row.pvosimr_vs_mujoco, row.result("pv-osimr").error]
    if any(e is None for e in errs):
        return "not all three ran"
    return "agree" if max(errs) <= TOLERANCE else "**disagree**"


def agreement_lines(rows: list) -> list[str]:
    """One line per MJCF case for the terminal: the three engines' agreement and what was
    not compared (nothing for other cases)."""
    out = []
    for r in _mjcf_rows(rows):
        out.append(
            f"{r.robot}: MuJoCo's rows, up to {r.m} compared over {r.configs} configurations; "
            f"pvosimr vs MuJoCo {error_cell(r.pvosimr_vs_mujoco)}, MuJoCo vs truth "
            f"{error_cell(r.result(MUJOCO).error)}, pvosimr vs truth "
            f"{error_cell(r.result('pv-osimr').error)}: "
            f"the three engines {_verdict(r).strip('*')}; rows not compared: {_left_out(r)}"
        )
        out += [f"{r.robot}: {note}" for note in r.parser_notes]
    return out


def mujoco_section(rows: list) -> list[str]:
    """The report's section on the MJCF robots (empty when there is none)."""
    cases = _mjcf_rows(rows)
    if not cases:
        return []
    head = [
        "robot", "nv", "rows (most)", "configs", "pvosimr − MuJoCo", "MuJoCo − truth",
        "pvosimr − truth", "verdict", "MuJoCo rows not compared (most at one configuration)",
    ]  # fmt: skip
    table = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in cases:
        cells = [
            r.robot, str(r.nv), str(r.m), str(r.configs), error_cell(r.pvosimr_vs_mujoco),
            error_cell(r.result(MUJOCO).error), error_cell(r.result("pv-osimr").error), _verdict(r),
            _left_out(r),
        ]  # fmt: skip
        table.append("| " + " | ".join(cells) + " |")
    notes = [f"- **{r.robot}**: {note}" for r in cases for note in r.parser_notes]
    return [
        "",
        *prose("validate", "mujoco-head", mujoco=MUJOCO).splitlines(),
        "",
        *table,
        "",
        prose("validate", "mujoco-parser"),
        "",
        *(notes or ["- Nowhere."]),
    ]
