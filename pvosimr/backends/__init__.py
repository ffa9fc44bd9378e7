"""The array libraries the algorithm bodies run on, behind one protocol (:mod:`.protocol`).  Its
modules, one job each, are in docs/architecture.md."""

from .numpy import NUMPY, NumpyBackend, blockdiag_by_assignment, mirror_upper, upper_mirror
from .protocol import Backend, Matrix

__all__ = [
    "NUMPY",
    "Backend",
    "Matrix",
    "NumpyBackend",
    "blockdiag_by_assignment",
    "mirror_upper",
    "upper_mirror",
]
