"""What the accuracy study measures: its paths, its chains and the cases of a run.

A chain is serial, random but seeded (:mod:`pvosimr.zoo.seeded`'s generic draws: joints off
the coordinate axes, well-conditioned bodies), with a 6D weld at the tip, a 3D point contact in
the middle and a 6D weld on the first link.  Its links' inertias are scaled by a mass profile
(:func:`mass_scales`), the knob that drives cond(M).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np
import pinocchio as pin

import pvosimr
from pvosimr.zoo import seeded

from ..names import TOLERANCES

#: The promise: every pvosimr path within TOL of the dense truth where cond(M) ≤ ACCEPT_COND.
TOL = TOLERANCES["accuracy"]
ACCEPT_COND = 1e8

ALGORITHMS = tuple(pvosimr.ALGORITHMS)  # pv-osimr, pv-osim, pv-osimh, efpa, ltl-osim, naive
RECURSIVE = ("pv-osimr", "pv-osim", "efpa")
BACKENDS = ("numpy", "batch", "casadi", "codegen")
PINOCCHIO = ("pin-efpa", "pin-pv-osimr")
PATHS = tuple(f"{b}:{a}" for b in BACKENDS for a in ALGORITHMS) + PINOCCHIO
ERROR, WIDE = "error", "error vs wide"
"""A path's worst error against the case's reference truth; at q₀ against the wide truth."""


@dataclass(frozen=True)
class Limits:
    """What each path is run on (sizes in dofs nv or CasADi instructions); the report's
    "Limits" (templates/accuracy.md) gives the measured costs that chose them."""

    nv_pin: int = 300  # a pin.Data is O(nv³) memory
    nv_decimal: int = 150  # wide truth in Decimal up to here, np.longdouble beyond
    nv_wide: int = 1000  # no wide truth beyond (its Python CRBA is O(n²) link pairs)
    nv_casadi_naive: int = 60  # naive's SX graph grows steeply with nv
    nv_casadi_ltl: int = 120  # LTL-OSIM's too, less steeply
    codegen_instructions: int = 25_000  # the C compiler's time grows with the instructions
    configurations: int = 3  # q per case (the batch runs them at once)


def mixed_kinds() -> tuple[str, ...]:
    """Every joint type of :data:`pvosimr.SUPPORTED_JOINTS` a chain can have, sorted."""
    names = sorted(s.removeprefix("JointModel") for s in pvosimr.SUPPORTED_JOINTS)
    return tuple(k for k in names if k in seeded.JOINT_KINDS)


def chain_joint_kinds(family: str, n: int, seed: int) -> list[str]:
    """``n`` joint kinds: all ``family`` (a kind) or, for ``"mixed"``, shuffled rounds of every
    type of :func:`mixed_kinds` (each appears once per round, so ``n ≥ len(mixed_kinds())``
    uses all)."""
    if family != "mixed":
        return [family] * n
    rng = np.random.default_rng(10_000 + seed)
    kinds: list[str] = []
    while len(kinds) < n:
        kinds += [str(k) for k in rng.permutation(mixed_kinds())]
    return kinds[:n]


def mass_scales(n: int, profile: str, ratio: float) -> np.ndarray:
    """Inertia scale of links 1..n: the conditioning knob (``max/min = ratio``).

    ``uniform``: all 1.  ``alternating``: heavy and light links in turn (1, 1/ratio, 1, …).
    ``geometric``: ``ratio^(−(k−1)/(n−1))``, heavy at the base, light at the tip.
    """
    k = np.arange(n)
    if profile == "uniform" or ratio == 1:
        return np.ones(n)
    if profile == "alternating":
        return np.where(k % 2 == 0, 1.0, 1.0 / ratio)
    if profile == "geometric":
        return ratio ** (-k / max(n - 1, 1))
    raise ValueError(f"unknown mass profile {profile!r} (uniform, alternating, geometric)")


@dataclass(frozen=True)
class ChainCase:
    """One chain: ``family`` (a joint kind or ``"mixed"``), ``n`` links, a mass profile."""

    family: str
    n: int
    profile: str = "uniform"
    ratio: float = 1.0
    seed: int = 0

    def build(self) -> tuple[pin.Model, list[pin.RigidConstraintModel]]:
        """The chain (:func:`pvosimr.zoo.seeded.random_chain`, generic draws from ``seed``),
        its link inertias scaled by :func:`mass_scales`."""
        kinds = chain_joint_kinds(self.family, self.n, self.seed)
        scales = mass_scales(self.n, self.profile, self.ratio)
        return seeded.random_chain(kinds, self.seed, inertia_scales=scales, draws=seeded.GENERIC)


@dataclass(frozen=True)
class StudyPlan:
    """The cases of one run: depth sweeps (uniform masses) and conditioning sweeps."""

    depths: dict[str, tuple[int, ...]]
    cond_chains: tuple[tuple[str, int], ...]
    profiles: tuple[str, ...]
    ratios: tuple[float, ...]
    codegen_depth: int  # codegen in the depth sweep up to this n (and the instruction limit)
    codegen_cond: tuple[float, ...]  # ratios of the Spherical/alternating sweep compiled
    limits: Limits

    def cases(self) -> list[tuple[str, ChainCase, bool, bool]]:
        """``(sweep, case, compiled, sensitivity)`` of every case, in the order they run."""
        depth = [(f, n) for f, depths in self.depths.items() for n in depths]
        cases = [("depth", ChainCase(f, n), n <= self.codegen_depth, False) for f, n in depth]
        for (family, n), profile, ratio in product(self.cond_chains, self.profiles, self.ratios):
            compiled = (family, profile) == ("Spherical", "alternating")
            compiled = compiled and ratio in self.codegen_cond
            cases.append(("cond", ChainCase(family, n, profile, ratio), compiled, True))
        return cases


FULL = StudyPlan(
    depths={
        "Spherical": (5, 10, 20, 40, 60, 80, 100, 150, 200, 300),
        "FreeFlyer": (2, 5, 10, 20, 30, 50, 75, 100),
        "mixed": (24, 50, 100, 160, 200, 300),
    },
    cond_chains=(("Spherical", 12), ("mixed", 24)),
    profiles=("alternating", "geometric"),
    ratios=tuple(10.0**k for k in range(0, 17, 2)),
    codegen_depth=10,
    codegen_cond=(1.0, 1e4, 1e8, 1e12, 1e16),
    limits=Limits(),
)
QUICK = StudyPlan(
    depths={"Spherical": (5, 80), "FreeFlyer": (4,), "mixed": (24,)},
    cond_chains=(("Spherical", 6),),
    profiles=("alternating",),
    ratios=(1.0, 1e6, 1e12),
    codegen_depth=5,
    codegen_cond=(),
    limits=Limits(codegen_instructions=10_000),
)
