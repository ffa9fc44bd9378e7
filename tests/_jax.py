"""Helpers shared by the tests of the XLA route (tests/test_xla.py,
tests/test_xla_builders.py, tests/test_xla_slow.py, tests/test_xla_route.py; their fixture
``x64`` is in conftest.py) and of the front ends (tests/test_jax.py, tests/test_torch.py): a
relative error, random trees with every constraint kind, configurations off the unit sphere, and
the XLA route's G against the numpy path; and a fresh interpreter, for what importing does."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Mapping

import numpy as np
import pinocchio as pin
from _trees import (
    CONTACT_TYPES,
    TreeSpec,
    build_tree,
    chain_of,
    drawn_mixed_tree,
    every_kind_of_joint,
    random_q,
)

import pvosimr
from pvosimr.coordinates import unit_part_spans

TOLERANCE = 1e-12


def rel(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    return float(np.abs(a - b).max(initial=0.0) / max(1.0, np.abs(b).max(initial=0.0)))


def off_sphere(model: pin.Model, q: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``q`` with every unit part scaled by a factor in [0.5, 2]: the same configuration."""
    q = q.copy()
    for start, length in unit_part_spans(model):
        q[start : start + length] *= rng.uniform(0.5, 2.0)
    return q


def first_part_scaled(model: pin.Model, q: np.ndarray, factor: float) -> tuple[np.ndarray, slice]:
    """``q`` with its first unit part (a free flyer's quaternion) scaled by ``factor``, the same
    configuration off the unit sphere; and where that part is in ``q``."""
    (start, length), *_ = unit_part_spans(model)
    part = slice(start, start + length)
    scaled = q.copy()
    scaled[part] *= factor
    return scaled, part


def check_against_numpy(
    compile_route: Callable,
    model: pin.Model,
    cms: list,
    seed: int,
    algorithm: str = "pv-osimr",
    n_q: int = 2,
) -> None:
    """The G of ``compile_route(model, cms, algorithm)`` (an XLA builder) on ``n_q`` random
    configurations, their unit parts off the sphere, in one batch: float64, and each row the
    numpy path's G to :data:`TOLERANCE`."""
    G = compile_route(model, cms, algorithm)
    rng = np.random.default_rng(seed)
    qs = np.stack([random_q(model, rng) for _ in range(n_q)])
    scaled = np.stack([off_sphere(model, q, rng) for q in qs])
    out = np.asarray(G(scaled))
    assert out.shape == (n_q, G.m, G.m) and out.dtype == np.float64
    data = model.createData()
    for q, Gx in zip(qs, out, strict=True):
        assert rel(Gx, pvosimr.compute_delassus(model, data, q, cms, algorithm)) <= TOLERANCE


def on_and_off_the_sphere(model: pin.Model, qs: np.ndarray, rng: np.random.Generator):
    """``qs`` (at least 5 rows) with every other row off the unit sphere and the fifth
    normalised to rounding."""
    from pvosimr.coordinates import normalized

    qs = qs.copy()
    qs[1::2] = [off_sphere(model, q, rng) for q in qs[1::2]]
    qs[4] = normalized(model, qs[4])[0]
    return qs


def every_kind_of_joint_held() -> tuple[pin.Model, list]:
    """:func:`_trees.every_kind_of_joint` with a 6D weld on its last joint and a 3D point on
    its third (LOCAL, at the joints' frames)."""
    model = every_kind_of_joint()
    cms = [
        pin.RigidConstraintModel(kind, model, joint, pin.SE3.Identity(), pin.LOCAL)
        for kind, joint in (
            (pin.ContactType.CONTACT_6D, model.njoints - 1),
            (pin.ContactType.CONTACT_3D, 3),
        )
    ]
    return model, cms


def planar_chain_held() -> tuple[pin.Model, list]:
    """A planar joint (SE(2): a unit complex pair among its coordinates), a spherical one (a
    quaternion) and an unbounded revolute (a unit complex pair), a 3D point on the last link:
    every map of unit coordinates but SE(3) in a tree that builds in seconds.  A revolute at
    the root, so that G depends on where the planar joint has moved."""
    joints = [pin.JointModelRY(), pin.JointModelPlanar(), pin.JointModelSpherical()]
    model = chain_of([*joints, pin.JointModelRUBX()])
    kind = pin.ContactType.CONTACT_3D
    return model, [pin.RigidConstraintModel(kind, model, 4, pin.SE3.Identity(), pin.LOCAL)]


def mixed_tree(seed: int) -> tuple[pin.Model, list]:
    """2-6 joints of every kind (armature one time in two), 1-3 constraints of mixed
    kinds (LOCAL and world-aligned, one body and two, pin 4's models), from ``seed``."""
    return drawn_mixed_tree(np.random.default_rng(seed), seed, (2, 7), (1, 4))


def tree_with_unit_parts() -> tuple[pin.Model, list]:
    """A free-flyer root (a unit quaternion), an unbounded revolute (a unit complex number) and
    a prismatic; a point contact on each branch."""
    spec = TreeSpec(
        [0, 1, 1],
        ["FreeFlyer", "RUBY", "PZ"],
        [(2, CONTACT_TYPES[0]), (3, CONTACT_TYPES[0])],
        False,
        7,
    )
    return build_tree(spec)


def fresh_python(
    code: str, timeout: float = 60, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``code`` run by a fresh interpreter (nothing imported yet), its output captured as text."""
    run = [sys.executable, "-c", code]
    return subprocess.run(run, capture_output=True, text=True, timeout=timeout, env=env)


def import_error_without(dependency: str, module: str) -> str:
    """The last line of what ``import module`` writes to stderr in a fresh interpreter that
    cannot import ``dependency``; the import must fail (exit status 1)."""
    done = fresh_python(f"import sys\nsys.modules[{dependency!r}] = None\nimport {module}")
    assert done.returncode == 1, done.stderr
    return done.stderr.strip().splitlines()[-1]


#: Norms of unit parts far from 1 (and one within pin.isNormalized's 1e-6 of it).
FAR_NORMS = (3.7, 0.4, 1 + 5e-7, 2.5, 0.05, 1.0)


def far_off_the_sphere(model: pin.Model, qs: np.ndarray) -> np.ndarray:
    """``qs`` with row ``r``'s unit parts scaled by :data:`FAR_NORMS`, alternately by a factor
    and its inverse: the same configurations, ``G(N(q))`` at norms from 0.05 to 20."""
    qs = qs.copy()
    for r in range(len(qs)):
        factor = FAR_NORMS[r % len(FAR_NORMS)]
        for j, (start, length) in enumerate(unit_part_spans(model)):
            qs[r, start : start + length] *= factor if j % 2 == 0 else 1 / factor
    return qs
