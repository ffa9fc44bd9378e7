"""The tests' references: Pinocchio-only dense truth and the agreement tolerance
(see :mod:`pvosimr.reference.truth`)."""

from pvosimr.reference.truth import *  # noqa: F403 (the tests take the truth from one place)
from pvosimr.reference.truth import __all__  # noqa: F401
