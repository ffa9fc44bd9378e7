"""Operation counts with an on-disk cache: regenerating the paper's figures is fast the 2nd time.

A count is a pure function of the robot model, its constraints, the algorithm and our code, so
the cache key hashes exactly those: the model's joints, placements, inertias and armature, each
constraint's joint, frame and reference placement, and the source of every module the count
goes through.  Editing an algorithm (or the backend, the transforms, the symbolic kinematics)
therefore invalidates its counts; nothing else does.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import numpy as np
import pinocchio as pin

from .constraints import as_constraint_list, constraint_matrix

__all__ = ["CountCache", "default_cache_path", "model_digest", "source_digest"]

_COUNTED_SOURCES = (
    "backend.py",
    "spatial.py",
    "symbolic.py",
    "joint_models.py",
    "kinematics.py",
    "topology.py",
)


def default_cache_path() -> Path:
    """``$XDG_CACHE_HOME/pvosimr/opcounts.json`` (``~/.cache`` when unset)."""
    root = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(root) / "pvosimr" / "opcounts.json"


@cache
def source_digest() -> str:
    """SHA-256 over the source of everything an operation count depends on."""
    package = Path(__file__).parent
    files = [package / name for name in _COUNTED_SOURCES]
    files += sorted((package / "algorithms").glob("*.py"))
    h = hashlib.sha256()
    for path in files:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def model_digest(model: pin.Model, constraint_models: Iterable) -> str:
    """SHA-256 of what a count reads of the model and the constraints."""
    h = hashlib.sha256()
    for i in range(1, model.njoints):
        h.update(f"{model.joints[i].shortname()}|{model.parents[i]}|".encode())
        h.update(np.asarray(model.jointPlacements[i].homogeneous).tobytes())
        h.update(np.asarray(model.inertias[i].matrix()).tobytes())
    h.update(np.asarray(model.armature).tobytes())
    for cm in as_constraint_list(constraint_models):
        h.update(f"{cm.joint1_id}|{cm.reference_frame}|{cm.type}|".encode())
        h.update(np.asarray(cm.joint1_placement.homogeneous).tobytes())
        h.update(np.asarray(constraint_matrix(cm)).tobytes())
    return h.hexdigest()


class CountCache:
    """A JSON file of counts keyed by (model digest, algorithm, source digest).

    ``path=None`` keeps the counts in memory only.  :meth:`count` computes a missing count with
    :func:`pvosimr.symbolic.count_operations` and stores it; :meth:`save` writes the file
    atomically (a crash never leaves a truncated cache).
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.hits = self.misses = 0
        self._counts: dict[str, int] = {}
        if path is not None and path.exists():
            try:
                self._counts = json.loads(path.read_text())
            except (json.JSONDecodeError, OSError):
                self._counts = {}  # an unreadable cache is only a slow run, never an error

    def count(self, model: pin.Model, constraint_models: Iterable, algorithm: str) -> int:
        from .symbolic import count_operations

        cms = as_constraint_list(constraint_models)
        key = f"{model_digest(model, cms)}:{algorithm}:{source_digest()}"
        if key in self._counts:
            self.hits += 1
            return self._counts[key]
        self.misses += 1
        value = count_operations(model, cms, algorithm)
        self._counts[key] = value
        return value

    def save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self._counts, sort_keys=True))
        tmp.replace(self.path)
