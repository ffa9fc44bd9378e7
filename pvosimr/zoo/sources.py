"""Kinematics-only robot model sources.

Every loader returns a fresh :class:`pinocchio.Model` (kinematic tree, inertias, limits,
armature where the source has it) and never loads geometry or meshes, so each call is fast.

* :func:`atlas_model`: Boston Dynamics Atlas v4 (OpenAI Roboschool URDF), free-flyer, nv = 36.
* :func:`shadow_hand_model`: Shadow Dexterous Hand from the ``gymnasium-robotics`` MJCF assets,
  fixed base, nq = nv = 24, with the fingertip sites :data:`SHADOW_FINGERTIPS` as frames.
* :func:`erd_model`: any URDF robot of ``example_robot_data`` by its loader name.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import tempfile
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

from .files import urdf_model

MODEL_PATH_ENV = "PVOSIMR_MODEL_PATH"
"""Environment variable: ``os.pathsep``-separated folders searched for model files."""

ATLAS_URDF = "atlas/atlas_v4_with_multisense.urdf"
"""Location of the Atlas URDF relative to a folder of the model search path."""

SHADOW_FINGERTIPS: tuple[str, ...] = (
    "robot0:S_fftip",
    "robot0:S_mftip",
    "robot0:S_rftip",
    "robot0:S_lftip",
    "robot0:S_thtip",
)
"""Frame names of the Shadow hand fingertip sites (first, middle, ring, little, thumb)."""

MODELS_EXTRA_HINT = "pip install 'pvosimr[models]'"

_SHADOW_ASSETS = ("envs", "assets", "hand")
_SHADOW_ROOT_BODY = "world_anchor"


# --------------------------------------------------------------------------- search path


def model_search_path() -> list[Path]:
    """Folders listed in ``$PVOSIMR_MODEL_PATH`` (``os.pathsep``-separated), in order, absolute.

    A relative entry is taken from the folder the user started in (``$PWD``), then from the
    current folder: ``PVOSIMR_MODEL_PATH=../shared/models jupyter lab`` works in a notebook
    although the kernel runs in the notebook's folder.
    """
    raw = os.environ.get(MODEL_PATH_ENV, "")
    # the shell's folder ($PWD, which a Jupyter kernel inherits), then the current folder
    shell = [Path(os.environ["PWD"])] if os.path.isabs(os.environ.get("PWD", "")) else []
    starts = list(dict.fromkeys([*shell, Path.cwd()]))
    folders: list[Path] = []
    for part in (p.strip() for p in raw.split(os.pathsep)):
        if not part:
            continue
        path = Path(part).expanduser()
        folders += [path] if path.is_absolute() else [f / path for f in starts]
    return [Path(os.path.normpath(f)) for f in dict.fromkeys(folders)]


def searched(relative: str | os.PathLike[str]) -> str:
    """Where :func:`find_model_file` looked for ``relative``, for an error message."""
    raw = os.environ.get(MODEL_PATH_ENV, "")
    places = ", ".join(str(p / relative) for p in model_search_path())
    return f"{MODEL_PATH_ENV}={raw!r}: " + (places or "no folder")


def find_model_file(relative: str | os.PathLike[str]) -> Path | None:
    """First ``folder / relative`` that is a file, over :func:`model_search_path`."""
    for folder in model_search_path():
        candidate = folder / relative
        if candidate.is_file():
            return candidate
    return None


# --------------------------------------------------------------------------- Atlas


def _atlas_from_robot_descriptions() -> tuple[Path | None, str]:
    """Atlas URDF from ``robot_descriptions`` (clones a repository), or ``None`` and why."""
    try:
        module = importlib.import_module("robot_descriptions.atlas_v4_description")
    except ModuleNotFoundError as exc:
        if exc.name in ("robot_descriptions", None) or "robot_descriptions" in str(exc):
            return None, "robot_descriptions is not installed"
        return None, f"robot_descriptions failed: {type(exc).__name__}: {exc}"
    except Exception as exc:  # fetching (git clone) can fail in many ways offline
        return None, f"robot_descriptions could not fetch it: {type(exc).__name__}: {exc}"
    urdf = getattr(module, "URDF_PATH", None)
    if urdf is None or not Path(urdf).is_file():
        return None, f"robot_descriptions gave no URDF file (URDF_PATH={urdf!r})"
    return Path(urdf), ""


def atlas_urdf_path() -> Path:
    """Path of the Atlas v4 URDF: model search path first, then ``robot_descriptions``.

    Raises:
        FileNotFoundError: neither source has it; the message says how to get it.
    """
    found = find_model_file(ATLAS_URDF)
    if found is not None:
        return found
    found, why = _atlas_from_robot_descriptions()
    if found is not None:
        return found
    raise FileNotFoundError(
        f"Atlas URDF '{ATLAS_URDF}' not found. Searched {searched(ATLAS_URDF)}; "
        f"{why}. To fix: set {MODEL_PATH_ENV} to a folder containing {ATLAS_URDF} "
        f"(folders separated by '{os.pathsep}'), or, with internet access, "
        "`pip install robot_descriptions` so that robot_descriptions.atlas_v4_description "
        "can download it."
    )


def atlas_model() -> pin.Model:
    """Atlas v4 with a free-flyer root: nq = 37, nv = 36 (30 revolute joints)."""
    return pin.buildModelFromUrdf(str(atlas_urdf_path()), pin.JointModelFreeFlyer())


# --------------------------------------------------------------------------- Shadow hand


def _package_dir(name: str) -> Path | None:
    """Folder of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def shadow_hand_assets_dir() -> Path:
    """Folder holding ``robot.xml`` and ``shared.xml`` in the installed gymnasium-robotics.

    Raises:
        ModuleNotFoundError: gymnasium-robotics is not installed.
        FileNotFoundError: the installed version lacks the hand assets.
    """
    package = _package_dir("gymnasium_robotics")
    if package is None:
        raise ModuleNotFoundError(
            f"The Shadow hand model needs gymnasium-robotics: {MODELS_EXTRA_HINT}",
            name="gymnasium_robotics",
        )
    folder = package.joinpath(*_SHADOW_ASSETS)
    missing = [f for f in ("robot.xml", "shared.xml") if not (folder / f).is_file()]
    if missing:
        raise FileNotFoundError(f"gymnasium-robotics has no {missing} in {folder}")
    return folder


def shadow_hand_mjcf() -> str:
    """One self-contained MJCF string for the Shadow hand (kinematics and inertias only).

    Pinocchio does not follow ``<include>`` inside ``<worldbody>``, so this inlines
    ``shared.xml``'s default classes and ``robot.xml``'s bodies, takes the angle settings of
    ``reach.xml``'s ``<compiler>`` (radians), and drops all geoms, assets, tendons, sensors
    and actuators. The bodies are wrapped in a jointless ``world_anchor`` body because
    Pinocchio's parser ignores the pose of a top-level body; this keeps MuJoCo's world
    placement of the hand, so frame placements match MuJoCo's ``site_xpos``/``site_xmat``.
    """
    folder = shadow_hand_assets_dir()
    shared = ET.parse(folder / "shared.xml").getroot()
    robot = ET.parse(folder / "robot.xml").getroot()

    reach = folder / "reach.xml"
    compiler = ET.parse(reach).getroot().find("compiler") if reach.is_file() else None
    attrib = {} if compiler is None else compiler.attrib
    compiler_attrs = {
        "angle": "radian",
        **{k: attrib[k] for k in ("angle", "eulerseq") if k in attrib},
    }

    root = ET.Element("mujoco", model="shadow_hand")
    ET.SubElement(root, "compiler", compiler_attrs)
    for default in shared.findall("default"):
        root.append(default)
    anchor = ET.SubElement(ET.SubElement(root, "worldbody"), "body", name=_SHADOW_ROOT_BODY)
    for body in robot.findall("body"):
        anchor.append(body)
    for parent in root.iter():  # every <geom> removed: kinematics only, no meshes needed
        for child in list(parent):
            if child.tag == "geom":
                parent.remove(child)
    return ET.tostring(root, encoding="unicode")


def shadow_hand_model() -> pin.Model:
    """Shadow Dexterous Hand, fixed base: nq = nv = 24, fingertip frames :data:`SHADOW_FINGERTIPS`.

    Joint axes, limits, armature and damping come from the MJCF; site frames keep their
    MJCF names (``robot0:S_fftip`` ...).

    Raises:
        ModuleNotFoundError: gymnasium-robotics is missing (``pip install 'pvosimr[models]'``).
    """
    text = shadow_hand_mjcf()
    with tempfile.TemporaryDirectory(prefix="pvosimr-shadow-") as tmp:
        path = Path(tmp) / "shadow_hand.xml"
        path.write_text(text, encoding="utf-8")
        model = pin.buildModelFromMJCF(str(path))
    model.name = "shadow_hand"
    return model


# --------------------------------------------------------------------------- example-robot-data

_TALOS_LEGS_NJOINTS = 14  # example_robot_data.talos.TalosLegsLoader keeps joints 0..13
_ERD_INIT_HANDLED = frozenset(
    {"RobotLoader", "TalosLegsLoader", "HumanLoader", "PandaLoaderCollision"}
)


def _erd_robots() -> Mapping[str, type]:
    """``example_robot_data.robots_loader.ROBOTS`` (name -> loader class)."""
    try:
        loaders = importlib.import_module("example_robot_data.robots_loader")
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            "erd_model needs example-robot-data and its Python loaders: "
            "pip install example-robot-data example-robot-data-loaders",
            name="example_robot_data",
        ) from exc
    return loaders.ROBOTS


def erd_names() -> list[str]:
    """Sorted loader names of ``example_robot_data`` (including SDF-only ones like cassie)."""
    return sorted(_erd_robots())


def _is_a(cls: type, class_name: str) -> bool:
    return any(base.__name__ == class_name for base in cls.__mro__)


_PER_DOF = ("armature", "damping", "friction", "velocityLimit", "effortLimit")
_PER_COORDINATE = ("lowerPositionLimit", "upperPositionLimit")


def copy_joint_parameters(src: pin.Model, dst: pin.Model) -> None:
    """The per-joint arrays of ``src`` (position limits; velocity and effort limits, armature,
    damping, friction) onto the same-named joints of ``dst``."""
    arrays = {
        attr: np.array(getattr(dst, attr), dtype=float) for attr in _PER_DOF + _PER_COORDINATE
    }
    for j in range(1, dst.njoints):
        if not src.existJointName(dst.names[j]):
            continue
        js, jd = src.joints[src.getJointId(dst.names[j])], dst.joints[j]
        for attrs, start_s, start_d, size in (
            (_PER_DOF, js.idx_v, jd.idx_v, js.nv),
            (_PER_COORDINATE, js.idx_q, jd.idx_q, js.nq),
        ):
            for attr in attrs:
                values = np.asarray(getattr(src, attr), dtype=float)[start_s : start_s + size]
                arrays[attr][start_d : start_d + size] = values
    for attr, values in arrays.items():
        setattr(dst, attr, values)


def _keep_first_joints(model: pin.Model, njoints: int) -> pin.Model:
    """Copy of ``model`` with joints ``0..njoints-1`` only (parents precede children)."""
    out = pin.Model()
    out.name = model.name
    for jid in range(1, njoints):
        new = out.addJoint(
            model.parents[jid], model.joints[jid], model.jointPlacements[jid], model.names[jid]
        )
        out.inertias[new] = model.inertias[jid]
    copy_joint_parameters(model, out)
    kept_frames: dict[int, int] = {0: 0}
    for fid, frame in enumerate(model.frames):
        if fid == 0 or frame.parentJoint >= njoints:
            continue
        copy = pin.Frame(frame)
        copy.parentFrame = kept_frames.get(frame.parentFrame, 0)
        kept_frames[fid] = out.addFrame(copy, False)
    return out


def _erd_srdf(model: pin.Model, cls: Any, root: Path) -> None:
    """Rotor parameters (if the loader asks) and reference configurations from the SRDF."""
    srdf = root / cls.path / cls.srdf_subpath / cls.srdf_filename
    if cls.has_rotor_parameters:
        pin.loadRotorParameters(model, str(srdf), False)
    model.armature = np.multiply(
        np.asarray(model.rotorInertia).ravel(), np.square(np.asarray(model.rotorGearRatio).ravel())
    )
    pin.loadReferenceConfigurations(model, str(srdf), False)


def erd_model(name: str, *, mimic: bool = False) -> pin.Model:
    """Kinematics-only load of the ``example_robot_data`` robot ``name`` (e.g. "talos").

    Follows the loader class (URDF path, free-flyer root, SRDF rotor parameters and
    reference configurations, free-flyer position limits of +-1, the special cases of
    ``talos_legs`` and ``human``) but builds only :func:`pinocchio.buildModelFromUrdf`:
    no geometry, no meshes. ``nq``/``nv`` equal those of ``example_robot_data.load(name).model``.
    ``mimic=True`` turns the URDF's ``<mimic>`` joints into ``JointModelMimic`` joints (fewer
    degrees of freedom); by default they are independent joints, as in example-robot-data.

    Raises:
        ValueError: unknown name.
        NotImplementedError: SDF-only robots (``cassie``: closed kinematic loops).
        OSError: the robot's URDF is not installed.
    """
    robots = _erd_robots()
    if name not in robots:
        raise ValueError(f"unknown example_robot_data robot {name!r}; known: {sorted(robots)}")
    cls = robots[name]
    if not cls.urdf_filename:
        raise NotImplementedError(
            f"example_robot_data robot {name!r} is described by SDF "
            f"({getattr(cls, 'sdf_filename', '?')}); erd_model supports URDF robots only"
        )
    unknown = [
        base.__name__
        for base in cls.__mro__
        if base is not object
        and "__init__" in vars(base)
        and base.__name__ not in _ERD_INIT_HANDLED
    ]
    if unknown:
        warnings.warn(
            f"example_robot_data loader {cls.__name__} customises __init__ ({unknown}); "
            "erd_model may differ from example_robot_data.load",
            stacklevel=2,
        )

    rel = os.path.join(cls.path, cls.urdf_subpath, cls.urdf_filename)
    utils = importlib.import_module("example_robot_data.utils")
    root = Path(utils.getModelPath(rel))  # the example-robot-data folder that holds it
    urdf = str(root / rel)
    root_joint = (pin.JointModelFreeFlyer(),) if cls.free_flyer else ()
    model = urdf_model(urdf, *root_joint, mimic=mimic)

    if _is_a(cls, "TalosLegsLoader"):
        # Like example_robot_data, drop torso/arms/head; unlike it (which re-adds frame
        # inertias on top of the joint inertias) keep the full model's link inertias.
        model = _keep_first_joints(model, _TALOS_LEGS_NJOINTS)
        effort = np.array(model.effortLimit)
        effort[:6] = np.inf
        model.effortLimit = effort
    if _is_a(cls, "HumanLoader") and cls.free_flyer and model.existJointName("root_joint"):
        jid = model.getJointId("root_joint")
        placement = pin.SE3(model.jointPlacements[jid])
        placement.rotation = np.asarray(cls.freeflyer_ori, dtype=float)
        model.jointPlacements[jid] = placement
    if cls.srdf_filename:
        _erd_srdf(model, cls, root)
    if cls.free_flyer:
        lower = np.array(model.lowerPositionLimit)
        upper = np.array(model.upperPositionLimit)
        lower[:7], upper[:7] = -1.0, 1.0
        model.lowerPositionLimit, model.upperPositionLimit = lower, upper
    return model
