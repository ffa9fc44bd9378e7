"""The tests' references: Pinocchio-only dense truth (see :mod:`pvosimr.truth`)."""

from pvosimr.truth import (
    TOLERANCE,
    constraint_jacobian,
    dense_delassus,
    mass_matrix,
    pinocchio_delassus,
    rel_err,
)

__all__ = [
    "TOLERANCE",
    "constraint_jacobian",
    "dense_delassus",
    "mass_matrix",
    "pinocchio_delassus",
    "rel_err",
]
