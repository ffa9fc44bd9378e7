"""Robot model zoo: kinematics-only model sources (Atlas, Shadow hand, example-robot-data)."""

from .sources import (
    SHADOW_FINGERTIPS,
    atlas_model,
    atlas_urdf_path,
    erd_model,
    erd_names,
    find_model_file,
    model_search_path,
    shadow_hand_model,
)

__all__ = [
    "SHADOW_FINGERTIPS",
    "atlas_model",
    "atlas_urdf_path",
    "erd_model",
    "erd_names",
    "find_model_file",
    "model_search_path",
    "shadow_hand_model",
]
