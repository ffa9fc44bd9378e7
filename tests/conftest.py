"""Shared test setup."""

import os
from pathlib import Path

# Models that must not be committed (the Atlas URDF) live in the shared folder beside the repo.
os.environ.setdefault(
    "PVOSIMR_MODEL_PATH", str(Path(__file__).resolve().parents[1].parent / "shared" / "models")
)
