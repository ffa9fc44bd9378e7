"""References for pvosimr's Delassus matrices, none of them a pvosimr algorithm.

- :mod:`.pinocchio`: Pinocchio's own Delassus routines behind pvosimr's signature
  (``pin-cholesky``, ``pin-efpa``, ``pin-pv-osimr``);
- :mod:`.bridge`: the C++ module that reaches Pinocchio's unbound PV-OSIMr, compiled on first use;
- :mod:`.truth`: the dense ``J M⁻¹ Jᵀ`` from Pinocchio's ``crba`` and frame Jacobians alone.
"""

from .pinocchio import *  # noqa: F403  (one list: pinocchio.__all__)
from .pinocchio import __all__ as __all__
