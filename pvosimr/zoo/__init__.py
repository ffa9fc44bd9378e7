"""Robot model zoo: the paper's robots, its synthetic mechanisms and example-robot-data.

::

    from .. import zoo
    zoo.names()                                # every robot name
    robot = zoo.load("atlas_two_shadow_hands", "fingertips_3d_feet_6d")
    robot.model, robot.constraints, robot.presets, robot.q_random(rng)
    zoo.stem_with_branches(stem_links=50, branches=4)   # any size of the Fig. 3 mechanism
    zoo.load_case("solo12/feet_3d")            # the command lines' ROBOT[/PRESET]
    zoo.from_file("arm.urdf", [("weld", "tool0")], free_flyer=False)   # a user's model file

Modules: :mod:`.sources` (kinematics-only model loaders), :mod:`.presets` (constraint-set
builders), :mod:`.paper` (Atlas + Shadow hands), :mod:`.synthetic` (Fig. 3/4 mechanisms),
:mod:`.joint_types` (helical, universal, composite, ellipsoid and mimic robots), :mod:`.erd`
(example-robot-data presets and skips), :mod:`.files` (a user's URDF/MJCF file),
:mod:`.closed_loops` (loop closures and world-aligned contacts), :mod:`.registry`
(names/load), :mod:`.seeded` (random but seeded trees, chains and configurations, for property
tests and the accuracy study).
"""

from . import presets, seeded, sources
from .closed_loops import CLOSED_LOOP_ROBOTS
from .erd import ERD_PRESETS, ERD_SKIPPED
from .files import MODEL_FILE_TYPES, from_file, leaf_frames, looks_like_model_file, model_from_file
from .joint_types import JOINT_TYPE_ROBOTS, JOINT_TYPE_SKIPPED
from .paper import (
    atlas_shadow_hand_model,
    atlas_two_shadow_hands_model,
    prefixed_shadow_hand_model,
)
from .registry import (
    SYNTHETIC_DEFAULTS,
    close_cases,
    load,
    load_case,
    names,
    parse_case,
    skipped,
)
from .robot import Robot, random_configuration
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
from .synthetic import chain_welded_every_k, chain_welded_every_link, stem_with_branches

__all__ = [
    "CLOSED_LOOP_ROBOTS",
    "ERD_PRESETS",
    "ERD_SKIPPED",
    "JOINT_TYPE_ROBOTS",
    "JOINT_TYPE_SKIPPED",
    "MODEL_FILE_TYPES",
    "SHADOW_FINGERTIPS",
    "SYNTHETIC_DEFAULTS",
    "Robot",
    "atlas_model",
    "atlas_shadow_hand_model",
    "atlas_two_shadow_hands_model",
    "atlas_urdf_path",
    "chain_welded_every_k",
    "chain_welded_every_link",
    "close_cases",
    "erd_model",
    "erd_names",
    "find_model_file",
    "from_file",
    "leaf_frames",
    "load",
    "load_case",
    "looks_like_model_file",
    "model_from_file",
    "model_search_path",
    "names",
    "parse_case",
    "prefixed_shadow_hand_model",
    "presets",
    "random_configuration",
    "seeded",
    "shadow_hand_model",
    "skipped",
    "sources",
    "stem_with_branches",
]
