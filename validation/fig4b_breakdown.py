"""Where PV-OSIMr's and EFPA's operations go on the Fig. 4b chain (claim C8).

On a chain with a 6D weld on every link, every link is a branching link and every block
``Λ⁻¹_{i,j}`` (EE i above EE j) has cca(i, j) = link i.  Both algorithms then carry each EE's
CEMP ``^kK_j`` to every ancestor k (EFPA line 11, PV-OSIMr eq. 19): one step per (link, EE)
pair.  What differs is the rest:

* PV-OSIMr forms every ``^0Ω_k`` in O(n) (eqs. 16–18) and then, per block, the eq. 13 product
  ``^cK_j (^0Ω_c K_iᵀ)``: a propagated, dense CEMP times a dense 6×m_i matrix;
* EFPA carries ``^0Ω_k ^kK_jᵀ`` down to every link (line 15, one propagator step per pair) and
  assembles each block as ``K_i (^0Ω_c ^cK_jᵀ)`` (line 19) with ``^cK_i = K_i``, the EE's own
  constant constraint matrix, which costs almost nothing.

This script splits each count into those stages, so the C8 verdict in ``figures/claims.md`` can
be traced to them: how many operations per (link, EE) pair each stage costs, on the paper's
planar reference chain and on a spatial one (each joint frame turned about the parent's x axis,
``skew`` as in spatial_v2's ``autoTree``).  A stage's cost is what it adds to G given everything
computed before it; expressions that never reach G (the out-of-plane rows of a planar chain's
CEMPs, say) are not counted, exactly as in the paper's metric.

    python validation/fig4b_breakdown.py [--sizes 16 32 64] [--out validation/fig4b_breakdown.md]

(default: ``pvosimr-report/fig4b_breakdown.md``, git-ignored;
``--out validation/fig4b_breakdown.md`` rewrites the committed one)
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass

import casadi as ca

from pvosimr.algorithms import efpa, pv_osimr
from pvosimr.algorithms.articulated import JointStep
from pvosimr.study.options import report_script_parser, write_report
from pvosimr.study.progress import progress_bar
from pvosimr.symbolic import CASADI, SX, function_cost, symbolic_kinematics
from pvosimr.topology import Topology
from pvosimr.zoo import Robot, synthetic

SKEWS = (0.0, 1.0)
"""The reference (planar) chain and a spatial one, as in the authors' autoTree(n, 1, 1)."""


@dataclass(frozen=True)
class Breakdown:
    """One algorithm's count on one chain, split into stages (each as operations)."""

    algorithm: str
    stages: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.stages.values())


def _operations(q: SX, outputs: Iterable) -> int:
    """The paper's metric for a function of ``q`` returning every matrix in ``outputs``."""
    flat = [ca.vec(o) for o in outputs if o.numel()]
    return function_cost(ca.Function("f", [q], [ca.vertcat(*flat)] if flat else []))


def _marginal(q: SX, G: SX, before: list) -> int:
    """Operations G adds to what ``before`` already computed."""
    return _operations(q, [G, *before]) - _operations(q, before)


def _stages(q: SX, G: SX, stages: list[tuple[str, list]], last: str) -> dict[str, int]:
    """Each stage's share of G's count: ``stages`` are (name, what it computes) in sweep order,
    ``last`` names the stage that forms G from them.

    A stage costs what G needs beyond the stages before it, less what it needs beyond the
    stages up to and including it.
    """
    done: list = []
    given = [_operations(q, [G])]
    for _, outputs in stages:
        done = done + outputs
        given.append(_marginal(q, G, done))
    given.append(0)
    names = [name for name, _ in stages] + [last]
    return {name: given[k] - given[k + 1] for k, name in enumerate(names)}


def _step_outputs(steps: Iterable[JointStep]) -> list:
    return [m for s in steps for m in (s.U, s.Dinv)]


def _pv_osimr(B, topo: Topology, kin, q: SX) -> Breakdown:
    props, Omega = pv_osimr.backward_sweep(B, topo, kin)
    Omega0 = pv_osimr.forward_sweep(topo, props, Omega)
    K = pv_osimr.cemps(topo, props)
    G = ca.densify(pv_osimr.assemble(B, topo, Omega, Omega0, K))  # as count_operations
    sweeps = [*props.P.values(), *Omega.values(), *Omega0.values()]
    cemps = [k for by_node in K.values() for k in by_node.values()]
    return Breakdown(
        "PV-OSIMr",
        _stages(
            q,
            G,
            [
                ("ABI, eqs. 16–18 (O(n))", sweeps + _step_outputs(props.step.values())),
                ("CEMPs, eq. 19", cemps),
            ],
            last="eq. 13 products (lines 23–28)",
        ),
    )


def _efpa(B, topo: Topology, kin, q: SX) -> Breakdown:
    K, steps = efpa.backward_sweep(B, topo, kin)
    Y = efpa.forward_sweep(topo, K, steps)
    G = ca.densify(efpa.assemble(B, topo, K, Y))
    return Breakdown(
        "EFPA",
        _stages(
            q,
            G,
            [
                ("ABI, CEMPs (lines 5–11)", [*K.values(), *_step_outputs(steps.values())]),
                ("line 15 (O(md))", list(Y.values())),
            ],
            last="line 19 assembly",
        ),
    )


def breakdown(robot: Robot) -> list[Breakdown]:
    """PV-OSIMr's and EFPA's counts of q ↦ G on ``robot``, stage by stage."""
    topo = Topology(robot.model, robot.constraints)
    q = SX.sym("q", robot.model.nq)
    kin = symbolic_kinematics(robot.model, q, topo, robot.constraints)
    return [split(CASADI, topo, kin, q) for split in (_pv_osimr, _efpa)]


def _pairs(n: int) -> int:
    """(link, EE) pairs with the EE at or below the link: n(n + 1)/2 on the welded chain."""
    return n * (n + 1) // 2


def _table(n: int, skew: float, parts: list[Breakdown]) -> list[str]:
    pv, ef = parts
    lines = [
        f"### n = {n}, {'planar (reference)' if not skew else f'spatial, skew {skew:g} rad'}",
        "",
        f"PV-OSIMr {pv.total:,} vs EFPA {ef.total:,}: ratio **{pv.total / ef.total:.3f}**; "
        f"{_pairs(n):,} (link, EE) pairs.",
        "",
        "| algorithm | stage | operations | per pair |",
        "|---|---|---|---|",
    ]
    for part in parts:
        lines += [
            f"| {part.algorithm} | {stage} | {ops:,} | {ops / _pairs(n):.1f} |"
            for stage, ops in part.stages.items()
        ]
    return [*lines, ""]


def main(argv: list[str] | None = None) -> int:
    parser = report_script_parser("fig4b_breakdown", __doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 32, 64])
    args = parser.parse_args(argv)
    started = time.perf_counter()
    cases = [(n, skew) for skew in SKEWS for n in args.sizes]
    body: list[str] = []
    for n, skew in progress_bar(cases, unit="chain", file=sys.stderr):
        parts = breakdown(synthetic.chain_welded_every_link(n, skew=skew))
        body += _table(n, skew, parts)
    sizes = " ".join(str(n) for n in args.sizes)
    lines = [
        "# Fig. 4b: where PV-OSIMr's and EFPA's operations go",
        "",
        f"Generated by `python validation/fig4b_breakdown.py --sizes {sizes}` "
        f"({time.perf_counter() - started:.0f} s). Same metric and code as `figures/claims.md` "
        "(claim C8); each stage is what it adds to G given the stages before it.",
        "",
        *body,
    ]
    return write_report(args.out, lines)


if __name__ == "__main__":
    raise SystemExit(main())
