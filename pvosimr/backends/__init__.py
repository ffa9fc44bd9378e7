"""The array libraries the algorithm bodies run on, behind one protocol.

- :mod:`.protocol`: :class:`Backend`, what an algorithm body may ask besides matrix operators;
- :mod:`.numpy`: :data:`NUMPY`, one configuration in float64, with numpy's own forms of the
  protocol's hooks (one-DoF and free-flyer joint steps, stacked eq. 19 rows);
- :mod:`.stack`: :class:`~.stack.MatrixStack` and the batched backend, many configurations at once;
- :mod:`.casadi`: CasADi SX, for operation counts and generated code (needs CasADi);
- :mod:`.outlined`: CasADi SX with each link's fold and extension a call of a shared function,
  for generated code that grows by a call per link;
- :mod:`.counting`: operation counts without CasADi, on the expression graph of :mod:`.graph`,
  whose bodies can reuse each other's results (:mod:`.reuse`);
- :mod:`.jax`: JAX arrays, one configuration (imported by :mod:`pvosimr.jax.seam` only).
"""

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
