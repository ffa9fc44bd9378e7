"""The measured cases, batch sizes and check tolerances of every benchmark, as named data.

A section names its cases and batch sizes from here, and its checks' tolerances from
:data:`TOLERANCES`, so that one case or one bound is written once.
"""

from __future__ import annotations

ATLAS_6D = "atlas/feet_6d"
"""Atlas with both feet welded (6D): the case every target is read on."""
SHADOW_3D = "shadow_hand/fingertips_3d"
"""The Shadow hand with its five fingertips in 3D contact."""
ATLAS_HANDS_6D = "atlas_two_shadow_hands/fingertips_3d_feet_6d"
"""Atlas holding two Shadow hands, feet welded and fingertips in contact: the largest case."""

DEFAULT_CASES: tuple[str, ...] = (
    ATLAS_6D,
    "atlas/feet_4x3d",
    "atlas_two_shadow_hands/fingertips_3d",
    ATLAS_HANDS_6D,
    SHADOW_3D,
    "talos/feet_6d",
)
"""``robot/preset`` names timed by default (a bare robot name means its first preset)."""

BATCH_SIZE = 1024
"""Configurations per call of the batched CPU paths (``--batch-size``)."""
COMPILED_BATCHES = (1, 64)
"""The smaller batches of the generated batched call, beside :data:`BATCH_SIZE`."""
SCALING_BATCH = 64
"""Configurations per batched call in the large sweep."""
CROSSOVER_BATCH = 64
"""Configurations per call of the crossover sweep."""
FRAMEWORK_BATCHES = (1, 64, 4096)
"""Batches of the section "JAX and PyTorch"."""
CPU_BATCH = 4096
"""The batch of the XLA route compiled on the CPU."""
GPU_BATCHES = (1024, 16384, 65536, 262144)
"""Batches of the GPU timings."""
FRAX_BATCHES = (1024, 65536)
"""Batches of frax's dense route on the GPU."""
TARGET_BATCH = 65536
"""The batch the GPU targets are read at."""

TOLERANCES: dict[str, float] = {
    "check": 1e-8,  # rel_err of a timed method against numpy:pv-osimr before it is timed
    "xla": 1e-12,  # the XLA and FFI routes against the numpy path (float64)
    "export-float32": 1e-4,  # an exported float32 function against the float64 numpy path
    "device-float32": 1e-5,  # a float32 function on the GPU against its output on the CPU
    "front-end": 1e-12,  # a JAX/torch front end's G against the direct call
    "gradient": 1e-6,  # a gradient against central differences
    "derivatives": 1e-6,  # dG/dq against the central differences of Pinocchio
    "mujoco": 1e-9,  # a timed method against MuJoCo's matrix
    "frax": 1e-10,  # frax's dense G against Pinocchio's
    "accuracy": 1e-9,  # the accuracy study's promise: every path against the dense truth
}
"""Every check made before a measurement: largest relative error that lets a method be timed."""
