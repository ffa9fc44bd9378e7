"""The paper's synthetic benchmark mechanisms (Sec. IV-B, Fig. 3 and Fig. 4).

Reference link (every link of every mechanism here): a revolute joint about its local z axis;
the child's joint sits :data:`LINK_LENGTH` = 1 along the parent's x axis with no rotation
(the link spans x ∈ [0, 1] of its own frame); mass 1, centre of mass (0.5, 0, 0), rotational
inertia about the centre of mass diag(0.0025, 1.015/12, 1.015/12).  Revolute limits are
[-π, π].  Each link has a BODY frame named like its joint without the ``_joint`` suffix, and
every weld is a 6D CONTACT_6D (LOCAL) constraint at that link frame (identity placement:
the joint origin of the constrained link, not its far tip).

Joints are added depth-first (every subtree is a contiguous range of joint indices), which
``pin.Model.addJoint`` needs for a correct mass matrix.

Fig. 3a, :func:`stem_with_branches` (our reading of the paper's description, "a long stem and
branches on either side, each branch consisting of 7 links, each branch tip rigidly
constrained with a weld"):

* the stem is a chain of ``L`` links ``stem_1 .. stem_L``; ``stem_1`` is the floating base
  (a FreeFlyer joint at the world origin), ``stem_2 .. stem_L`` are revolute, so the stem
  contributes 6 + (L - 1) degrees of freedom;
* "either side" = both ends of the stem: ``b`` branches hang from the far-end link
  ``stem_L`` and ``b`` from the floating-base link ``stem_1``; a branch is a chain of 7
  revolute links (``branch_far{k}_1 .. _7`` or ``branch_base{k}_1 .. _7``) whose first joint
  sits ``branch_offset`` (default 1, the reference rule above) along x of the stem link;
  all branches of one end start at the same point (the mechanism is a topology benchmark,
  links may overlap geometrically);
* a 6D weld on each branch's 7th link: m = 2·b·6 = 12 b, nv = 6 + (L - 1) + 14 b;
* branching links (paper's N minus the world and the EEs): ``stem_1`` for b = 1 (its two
  children, ``stem_2`` and one branch, both carry welds; ``stem_L`` has a single child),
  ``stem_1`` and ``stem_L`` for b ≥ 2 (for L = 1 the single stem link).

The authors' public MATLAB script for this figure attaches each branch's first joint at the
stem link's own joint origin (offset 0); pass ``branch_offset=0.0`` for that variant.  The
offset only changes a constant translation, never the tree or the constraints.

Fig. 4, :func:`chain_welded_every_k` and :func:`chain_welded_every_link`: fixed-base serial
chains (the paper states n = d = k² with n_b = k² bodies, so no 6-DoF floating base):
``link_1`` is a revolute joint at the world origin.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from .presets import welds
from .robot import Robot

__all__ = [
    "BRANCH_LINKS",
    "LINK_COM",
    "LINK_LENGTH",
    "LINK_MASS",
    "LINK_ROTATIONAL_INERTIA",
    "add_link",
    "chain_welded_every_k",
    "chain_welded_every_link",
    "limit_positions",
    "reference_inertia",
    "stem_with_branches",
]

LINK_LENGTH = 1.0
LINK_MASS = 1.0
LINK_COM = (0.5, 0.0, 0.0)
LINK_ROTATIONAL_INERTIA = (0.0025, 1.015 / 12, 1.015 / 12)
BRANCH_LINKS = 7
"""Links per branch of the Fig. 3 mechanism."""


def reference_inertia() -> pin.Inertia:
    """Spatial inertia of the reference link (mass 1, CoM (0.5, 0, 0), diag rotational)."""
    return pin.Inertia(LINK_MASS, np.array(LINK_COM), np.diag(LINK_ROTATIONAL_INERTIA))


def add_link(
    model: pin.Model,
    parent: int,
    link: str,
    joint: pin.JointModel,
    placement: pin.SE3,
    inertia: pin.Inertia,
) -> int:
    """Add the body ``link`` to ``model``: its joint ``<link>_joint`` on ``parent`` at
    ``placement``, its ``inertia``, a BODY frame ``link`` at the joint origin.  The joint id."""
    jid = model.addJoint(parent, joint, placement, f"{link}_joint")
    model.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
    joint_frame = model.addJointFrame(jid, -1)
    model.addFrame(pin.Frame(link, jid, joint_frame, pin.SE3.Identity(), pin.FrameType.BODY), False)
    return jid


def _positive_int(value: int, what: str) -> int:
    if isinstance(value, bool) or int(value) != value or value < 1:
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
    return int(value)


def limit_positions(model: pin.Model, others: float | None = None) -> pin.Model:
    """``model`` with position limits ±π on every one-coordinate joint, ±1 on a free flyer's
    coordinates and ±``others`` (where given) on every other joint's."""
    lower = np.array(model.lowerPositionLimit, dtype=float)
    upper = np.array(model.upperPositionLimit, dtype=float)
    for j in model.joints[1:]:
        bound = np.pi if j.nq == 1 else 1.0 if j.shortname() == "JointModelFreeFlyer" else others
        if bound is not None:
            lower[j.idx_q : j.idx_q + j.nq], upper[j.idx_q : j.idx_q + j.nq] = -bound, bound
    model.lowerPositionLimit, model.upperPositionLimit = lower, upper
    return model


def _add(
    model: pin.Model,
    parent: int,
    link: str,
    joint: pin.JointModel | None = None,
    offset: float = LINK_LENGTH,
    skew: float = 0.0,
) -> int:
    """Add the reference link ``link`` on ``parent`` (callers keep the order depth-first): its
    joint ``offset`` along the parent's x axis, its frame turned by ``skew`` radians about that
    axis."""
    joint = pin.JointModelRZ() if joint is None else joint
    rotation = pin.utils.rotate("x", skew) if parent else np.eye(3)
    placement = pin.SE3(rotation, np.array([offset if parent else 0.0, 0.0, 0.0]))
    return add_link(model, parent, link, joint, placement, reference_inertia())


def stem_with_branches(
    stem_links: int, branches: int, *, branch_offset: float = LINK_LENGTH
) -> Robot:
    """Fig. 3a: a floating stem of L links with b welded 7-link branches at each end.

    L = ``stem_links``, b = ``branches``.  Zoo name ``stem_b{b}_L{L}``, one preset
    ``branch_tips_6d`` (far-end branches first, then base-end ones).  See the module
    docstring for the construction.
    """
    L = _positive_int(stem_links, "stem_links")
    b = _positive_int(branches, "branches")
    model = pin.Model()
    model.name = f"stem_b{b}_L{L}"
    stem = [_add(model, 0, "stem_1", pin.JointModelFreeFlyer())]
    for i in range(2, L + 1):
        stem.append(_add(model, stem[-1], f"stem_{i}"))
    tips = []
    for end, attach in (("far", stem[-1]), ("base", stem[0])):
        for k in range(1, b + 1):
            parent = attach
            for link in range(1, BRANCH_LINKS + 1):
                offset = branch_offset if link == 1 else LINK_LENGTH
                parent = _add(model, parent, f"branch_{end}{k}_{link}", offset=offset)
            tips.append(f"branch_{end}{k}_{BRANCH_LINKS}")
    return Robot.build(model.name, limit_positions(model), {"branch_tips_6d": welds(*tips)})


def _welded_chain(name: str, n: int, welded: list[int], skew: float = 0.0) -> Robot:
    model, parent = pin.Model(), 0
    model.name = name
    for i in range(1, n + 1):
        parent = _add(model, parent, f"link_{i}", skew=skew)
    presets = {"welds_6d": welds(*(f"link_{i}" for i in welded))}
    return Robot.build(name, limit_positions(model), presets)


def chain_welded_every_k(k: int) -> Robot:
    """Fig. 4a: a fixed-base chain of k² links with 6D welds on links k, 2k, …, k².

    n = d = k², m = 6k.  Zoo name ``chain_welded_every_k_k{k}``, preset ``welds_6d``.
    """
    k = _positive_int(k, "k")
    return _welded_chain(f"chain_welded_every_k_k{k}", k * k, list(range(k, k * k + 1, k)))


def chain_welded_every_link(n: int, *, skew: float = 0.0) -> Robot:
    """Fig. 4b: a fixed-base chain of ``n`` links with a 6D weld on every link (m = 6n).

    Zoo name ``chain_welded_every_link_n{n}``, preset ``welds_6d``.  With the reference link
    the chain is planar; ``skew`` turns each joint's frame by that many radians about the
    parent's x axis (the ``skew`` of spatial_v2's ``autoTree``), making it spatial: zoo name
    ``chain_welded_every_link_n{n}_skew{skew}``.
    """
    n = _positive_int(n, "n")
    if not np.isfinite(skew):
        raise ValueError(f"skew must be a finite angle in radians, got {skew!r}")
    name = f"chain_welded_every_link_n{n}" + (f"_skew{skew:g}" if skew else "")
    return _welded_chain(name, n, list(range(1, n + 1)), skew=skew)
