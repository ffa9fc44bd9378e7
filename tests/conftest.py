"""Shared test setup."""

import os
from pathlib import Path

import pytest

# Models that must not be committed (the Atlas URDF) live in the shared folder beside the repo.
os.environ.setdefault(
    "PVOSIMR_MODEL_PATH", str(Path(__file__).resolve().parents[1].parent / "shared" / "models")
)


@pytest.fixture(scope="session")
def atlas():
    """Atlas (free-flyer, nv = 36) from the model search path; skipped with the reason if absent."""
    from pvosimr.zoo import sources

    try:
        return sources.atlas_model()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
