"""The tests' references: Pinocchio-only dense truth and the agreement tolerance
(see :mod:`pvosimr.truth`)."""

from pvosimr.truth import *  # noqa: F403 (the tests take the truth from one place)
from pvosimr.truth import __all__  # noqa: F401
