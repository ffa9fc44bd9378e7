"""Exact operation counts of the paper's robots, compared with the stored golden numbers.

Every count is :func:`pvosimr.symbolic.count_operations` of the CasADi SX function q ↦ G,
counted afresh (no cache), and must equal the number in ``tests/golden/opcounts.json`` to the
single operation: a change of an algorithm, the backend or the symbolic kinematics that moves
any count fails here, naming the case, the algorithm and both numbers.

The algorithms: the paper's four and PV-OSIMh.  The cases: Atlas with the constraint sets of
Fig. 5a, Fig. 5b and the Sec. IV-E caveat, the Shadow hand with its five fingertips (Fig. 6a),
the Fig. 4a chain with k = 4, and one random tree (structure and numbers drawn from a fixed
seed).

A change that is meant to move the counts rewrites the golden file, from the repository root::

    PVOSIMR_MODEL_PATH=/path/to/models python tests/test_opcount_golden.py --update

and the diff of ``tests/golden/opcounts.json`` then shows every count that moved.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from _trees import TreeSpec, build_tree

GOLDEN = Path(__file__).resolve().parent / "golden" / "opcounts.json"
ALGORITHMS = ("pv-osimr", "pv-osim", "efpa", "ltl-osim", "pv-osimh")
RANDOM_TREE_SEED = 20240611
RANDOM_TREE_JOINTS = ("RX", "RY", "RZ", "RevoluteUnaligned", "PZ", "Spherical")

Case = tuple[pin.Model, list]


def _zoo(name: str, preset: str) -> Callable[[], Case]:
    def build() -> Case:
        from pvosimr import zoo

        robot = zoo.load(name, preset)
        return robot.model, list(robot.constraints)

    return build


def _chain_welded_every_k(k: int) -> Callable[[], Case]:
    def build() -> Case:
        from pvosimr.zoo import synthetic

        robot = synthetic.chain_welded_every_k(k)
        return robot.model, list(robot.constraints)

    return build


def random_tree(seed: int = RANDOM_TREE_SEED, joints: int = 12) -> Case:
    """A floating tree of ``joints`` joints with two 6D welds and two 3D points, all from ``seed``.

    Parents are drawn along the current root-to-leaf path, so the joints come depth-first as
    ``pin.Model.addJoint`` needs them; the numbers (placements, inertias, axes) come from the
    same seed through :func:`_trees.build_tree`.
    """
    rng = np.random.default_rng(seed)
    parents, path = [], [0]
    for i in range(1, joints + 1):
        parent = path[int(rng.integers(1, len(path)))] if i > 1 else 0  # one floating root
        del path[path.index(parent) + 1 :]
        path.append(i)
        parents.append(parent)
    kinds = ["FreeFlyer"] + [str(rng.choice(RANDOM_TREE_JOINTS)) for _ in range(joints - 1)]
    types = (pin.ContactType.CONTACT_6D,) * 2 + (pin.ContactType.CONTACT_3D,) * 2
    constrained = rng.choice(np.arange(2, joints + 1), size=len(types), replace=False)
    constraints = [(int(j), t) for j, t in zip(constrained, types, strict=True)]
    spec = TreeSpec(parents, kinds, constraints, armature=True, seed=seed)
    return build_tree(spec)


CASES: dict[str, Callable[[], Case]] = {
    "atlas/feet_6d": _zoo("atlas", "feet_6d"),
    "atlas/feet_4x3d": _zoo("atlas", "feet_4x3d"),
    "atlas/hands_feet_6d": _zoo("atlas", "hands_feet_6d"),
    "shadow_hand/fingertips_3d": _zoo("shadow_hand", "fingertips_3d"),
    "chain_welded_every_k/k4": _chain_welded_every_k(4),
    f"random_tree/seed{RANDOM_TREE_SEED}": random_tree,
}


def count(case: str) -> dict[str, int]:
    """Every algorithm's operation count on ``case``, counted afresh."""
    from pvosimr.symbolic import count_operations

    model, constraints = CASES[case]()
    return {a: int(count_operations(model, constraints, a)) for a in ALGORITHMS}


def _build_or_skip(case: str) -> Case:
    try:
        return CASES[case]()
    except (FileNotFoundError, ModuleNotFoundError) as exc:  # Atlas URDF, gymnasium-robotics
        pytest.skip(f"{case}: {exc}")


@pytest.mark.slow  # CasADi graphs: seconds each
@pytest.mark.parametrize("case", list(CASES))
def test_operation_counts_equal_the_golden_numbers(case):
    pytest.importorskip("casadi")
    from pvosimr.symbolic import count_operations

    stored = json.loads(GOLDEN.read_text())
    assert set(stored) == set(CASES), "tests/golden/opcounts.json is out of step: --update it"
    model, constraints = _build_or_skip(case)
    moved = []
    for algorithm in ALGORITHMS:
        counted = count_operations(model, constraints, algorithm)
        if counted != stored[case][algorithm]:
            moved.append(f"{case} {algorithm}: stored {stored[case][algorithm]}, counted {counted}")
    assert not moved, "operation counts moved:\n" + "\n".join(moved)


def test_random_tree_is_what_its_seed_says():
    """The random case is the same tree on every run (else its golden counts mean nothing)."""
    (a, ca), (b, cb) = random_tree(), random_tree()
    assert list(a.parents) == list(b.parents) and a.joints[1].shortname() == "JointModelFreeFlyer"
    assert [c.joint1_id for c in ca] == [c.joint1_id for c in cb]
    assert np.array_equal(a.jointPlacements[5].homogeneous, b.jointPlacements[5].homogeneous)
    assert list(a.parents).count(0) == 2  # the universe and the floating base: one tree
    assert any(a.parents[i] != i - 1 for i in range(2, a.njoints))  # not a chain


def update() -> None:
    """Count every case afresh and rewrite ``tests/golden/opcounts.json``."""
    counts = {}
    for case in CASES:
        counts[case] = count(case)
        print(f"{case}: {counts[case]}", flush=True)
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(counts, indent=2) + "\n")
    print(f"wrote {GOLDEN}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit(f"usage: python {sys.argv[0]} --update   (rewrites {GOLDEN})")
    # the Atlas URDF's default folder, as tests/conftest.py sets it
    os.environ.setdefault(
        "PVOSIMR_MODEL_PATH", str(Path(__file__).resolve().parents[2] / "shared" / "models")
    )
    update()
