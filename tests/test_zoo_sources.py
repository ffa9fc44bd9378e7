"""Tests of the kinematics-only model sources in ``pvosimr.zoo``."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from pvosimr.zoo import (
    SHADOW_FINGERTIPS,
    atlas_model,
    erd_model,
    erd_names,
    model_search_path,
    shadow_hand_model,
    sources,
)

HAS_GYM_ROBOTICS = importlib.util.find_spec("gymnasium_robotics") is not None
HAS_ERD = importlib.util.find_spec("example_robot_data") is not None
needs_hand = pytest.mark.skipif(
    not HAS_GYM_ROBOTICS, reason="gymnasium-robotics not installed (pip install 'pvosimr[models]')"
)
needs_erd = pytest.mark.skipif(not HAS_ERD, reason="example-robot-data loaders not installed")


def test_model_search_path_splits_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(sources.MODEL_PATH_ENV, os.pathsep.join([str(tmp_path / "a"), "", "b"]))
    monkeypatch.setenv("PWD", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert model_search_path() == [tmp_path / "a", tmp_path / "b"]
    monkeypatch.delenv(sources.MODEL_PATH_ENV)
    assert model_search_path() == []


def test_relative_model_path_from_where_the_user_started(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A Jupyter kernel runs in the notebook's folder but inherits the shell's $PWD."""
    started, notebooks = tmp_path / "repo", tmp_path / "repo" / "notebooks"
    urdf = tmp_path / "models" / "robot" / "r.urdf"
    for folder in (notebooks, urdf.parent):
        folder.mkdir(parents=True)
    urdf.write_text("<robot/>")
    monkeypatch.setenv(sources.MODEL_PATH_ENV, "../models")
    monkeypatch.setenv("PWD", str(started))
    monkeypatch.chdir(notebooks)
    assert model_search_path() == [tmp_path / "models", started / "models"]
    assert sources.find_model_file("robot/r.urdf") == urdf
    # not found: the message names every place tried, absolute
    monkeypatch.setenv(sources.MODEL_PATH_ENV, "nowhere")
    where = sources.searched("robot/r.urdf")
    assert str(started / "nowhere" / "robot" / "r.urdf") in where
    assert str(notebooks / "nowhere" / "robot" / "r.urdf") in where
    assert "PVOSIMR_MODEL_PATH='nowhere'" in where


# ----------------------------------------------------------------------------- Atlas


def test_atlas_free_flyer_36_dof() -> None:
    if sources.find_model_file(sources.ATLAS_URDF) is None:
        pytest.skip(f"{sources.ATLAS_URDF} not on PVOSIMR_MODEL_PATH={model_search_path()}")
    model = atlas_model()
    assert (model.nq, model.nv) == (37, 36)
    assert model.joints[1].shortname() == "JointModelFreeFlyer"
    assert sum(1 for j in model.joints[2:] if j.nq == 1 and j.nv == 1) == 30


def test_atlas_missing_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(sources.MODEL_PATH_ENV, str(tmp_path))
    monkeypatch.setitem(sys.modules, "robot_descriptions", None)  # behave as not installed
    with pytest.raises(FileNotFoundError) as info:
        atlas_model()
    message = str(info.value)
    assert "PVOSIMR_MODEL_PATH" in message
    assert "atlas/atlas_v4_with_multisense.urdf" in message
    assert "pip install robot_descriptions" in message
    assert str(tmp_path) in message


# ----------------------------------------------------------------------------- Shadow hand


@needs_hand
def test_shadow_hand_24_dof_with_fingertips() -> None:
    model = shadow_hand_model()
    assert (model.nq, model.nv) == (24, 24)
    assert all(j.nq == 1 and j.nv == 1 for j in model.joints[1:])
    tip_joints = set()
    for name in SHADOW_FINGERTIPS:
        assert model.existFrame(name), name
        frame = model.frames[model.getFrameId(name)]
        tip_joints.add(frame.parentJoint)
    assert len(tip_joints) == 5  # one distal joint per finger
    assert np.all(model.lowerPositionLimit < model.upperPositionLimit)
    assert np.all(np.isfinite(model.lowerPositionLimit))
    assert np.all(model.armature > 0)


@needs_hand
def test_shadow_hand_missing_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "_package_dir", lambda name: None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'pvosimr\[models\]'"):
        shadow_hand_model()


def _mujoco_mass_matrix(mujoco, mj_model, mj_data) -> np.ndarray:
    dense = np.zeros((mj_model.nv, mj_model.nv))
    try:
        mujoco.mj_fullM(mj_model, mj_data, dense)  # mujoco >= 4
    except TypeError:
        mujoco.mj_fullM(mj_model, dense, mj_data.qM)
    return dense


@needs_hand
def test_shadow_hand_matches_mujoco() -> None:
    mujoco = pytest.importorskip("mujoco")
    model = shadow_hand_model()
    data = model.createData()
    reach = sources.shadow_hand_assets_dir() / "reach.xml"
    mj_model = mujoco.MjModel.from_xml_path(str(reach))
    mj_data = mujoco.MjData(mj_model)
    obj = mujoco.mjtObj
    qadr = [
        mj_model.jnt_qposadr[mujoco.mj_name2id(mj_model, obj.mjOBJ_JOINT, n)]
        for n in model.names[1:]
    ]
    vadr = [
        mj_model.jnt_dofadr[mujoco.mj_name2id(mj_model, obj.mjOBJ_JOINT, n)]
        for n in model.names[1:]
    ]
    rng = np.random.default_rng(1)
    for _ in range(3):
        q = rng.uniform(model.lowerPositionLimit, model.upperPositionLimit)
        mj_data.qpos[:] = 0.0
        mj_data.qpos[qadr] = q
        mujoco.mj_forward(mj_model, mj_data)
        pin.framesForwardKinematics(model, data, q)
        for name in SHADOW_FINGERTIPS:
            site = mujoco.mj_name2id(mj_model, obj.mjOBJ_SITE, name)
            placement = data.oMf[model.getFrameId(name)]
            np.testing.assert_allclose(placement.translation, mj_data.site_xpos[site], atol=1e-12)
            np.testing.assert_allclose(
                placement.rotation, mj_data.site_xmat[site].reshape(3, 3), atol=1e-12
            )
        mass = pin.crba(model, data, q)
        mass = np.triu(mass) + np.triu(mass, 1).T
        mj_mass = _mujoco_mass_matrix(mujoco, mj_model, mj_data)[np.ix_(vadr, vadr)]
        np.testing.assert_allclose(mass, mj_mass, atol=1e-12)


# ----------------------------------------------------------------------------- example-robot-data


@pytest.mark.slow  # loads each robot twice: seconds
@needs_erd
@pytest.mark.skipif(
    not hasattr(pin, "WITH_COLLISION"),
    reason=f"example_robot_data.load() reads pin.WITH_COLLISION, which pin {pin.__version__} lacks",
)
@pytest.mark.parametrize("name", ["talos", "solo12", "ur5", "panda"])
def test_erd_model_matches_example_robot_data(name: str) -> None:
    import example_robot_data

    reference = example_robot_data.load(name).model
    model = erd_model(name)
    assert (model.nq, model.nv) == (reference.nq, reference.nv)
    assert list(model.names) == list(reference.names)
    assert [j.shortname() for j in model.joints] == [j.shortname() for j in reference.joints]
    np.testing.assert_array_equal(model.armature, reference.armature)


@needs_erd
def test_erd_model_reads_srdf() -> None:
    model = erd_model("talos")
    configurations = {entry.key() for entry in model.referenceConfigurations}
    assert "half_sitting" in configurations
    assert np.count_nonzero(model.armature[6:]) >= 30  # rotor inertia from the SRDF
    assert np.all(model.armature[:6] == 0.0)
    assert np.all(model.upperPositionLimit[:7] == 1.0)


@needs_erd
def test_erd_names_and_errors() -> None:
    names = erd_names()
    assert {"talos", "solo12", "ur5", "panda", "cassie"} <= set(names)
    assert names == sorted(names)
    with pytest.raises(NotImplementedError, match="SDF"):
        erd_model("cassie")
    with pytest.raises(ValueError, match="unknown"):
        erd_model("no_such_robot")
