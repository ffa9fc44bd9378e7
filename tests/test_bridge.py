"""The bridge to Pinocchio's C++ PV-OSIMr: built on first use against the installed pin, and
a clear answer where it cannot be built (no compiler), with every other path still working."""

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from test_reference import needs_bridge  # noqa: F401 (a fixture)

from pvosimr import compute_delassus, reference, zoo
from pvosimr.codegen import cache as entries
from pvosimr.codegen import compiler as toolchain
from pvosimr.constraints import weld
from pvosimr.reference import bridge
from pvosimr.study import validate as validation


@pytest.fixture
def no_compiler(monkeypatch, tmp_path):
    """A machine without a C++ compiler: $CXX points nowhere, and nothing is loaded or cached."""
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
    monkeypatch.setenv("PVOSIMR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(bridge, "_loaded", {})
    reference.clear_cache()
    yield
    reference.clear_cache()


@pytest.fixture(scope="module")
def manipulator():
    model = pin.buildSampleModelManipulator()
    return model, [weld(model, model.frames[-1].name)]


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_built_against_the_pin_in_use(needs_bridge):  # noqa: F811
    module = bridge.load()
    assert pin.__version__ == module.PINOCCHIO_VERSION
    library = bridge.build_recipe().library()
    assert library.is_file() and f"pin{pin.__version__}-" in library.name
    assert library.parent == toolchain.cache_dir() / "bridge"


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_cache_name_changes_with_pin_and_compiler(needs_bridge):  # noqa: F811
    recipe = bridge.build_recipe()
    other_pin = dataclasses.replace(recipe, pinocchio_version="3.9.0")
    other_flags = dataclasses.replace(recipe, defines=(*recipe.defines, "EXTRA"))
    names = {p.library().name for p in (recipe, other_pin, other_flags)}
    assert len(names) == 3


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_every_checkout_shares_one_build(needs_bridge, monkeypatch, tmp_path):  # noqa: F811
    """The same source elsewhere (another clone) is the same library; other text is not."""
    recipe = bridge.build_recipe()
    name = recipe.library().name
    copy = tmp_path / "clone" / bridge.SOURCE.name
    copy.parent.mkdir()
    copy.write_text(bridge.SOURCE.read_text())
    monkeypatch.setattr(bridge, "SOURCE", copy)
    assert recipe.library().name == name
    copy.write_text(copy.read_text() + "// edited\n")
    assert recipe.library().name != name


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_no_compiler_a_clear_error_and_everything_else_works(no_compiler, manipulator):
    model, cms = manipulator
    q = pin.neutral(model)
    with pytest.raises(bridge.BridgeUnavailableError) as err:
        reference.pinocchio_pv_osimr(model, model.createData(), q, cms)
    message = str(err.value)
    assert "CXX=" in message and 'pip install "pvosimr[bridge]"' in message
    assert "pin-efpa" in message  # says what still works
    assert isinstance(err.value, ImportError)
    assert not reference.extension_available()
    assert set(reference.unavailable()) == {"pin-pv-osimr"}
    # bad input is still named as such, before the missing bridge
    with pytest.raises(ValueError, match="q has shape"):
        reference.pinocchio_pv_osimr(model, model.createData(), q[:-1], cms)
    G = compute_delassus(model, model.createData(), q, cms)
    np.testing.assert_allclose(reference.pinocchio_efpa(model, model.createData(), q, cms), G)


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_validate_without_the_bridge_reports_it_and_still_judges(no_compiler, tmp_path):
    robot = zoo.load("talos", "feet_6d")
    rows = validation.validate_cases([robot], configs=1, progress=False)
    (row,) = rows
    assert row.passes()
    assert "pin-pv-osimr" not in row.methods
    assert row.result("pin-efpa").error <= validation.TOLERANCE
    md, _ = validation.write_report(
        rows,
        tmp_path / "out",
        {"command": "test", "configs": 1, "seed": 0, "seconds": 0.0, "machine": {"cpu": "test"}},
    )
    text = md.read_text()
    assert "## Pinocchio references not run here" in text and "**pin-pv-osimr**" in text
    assert "CXX=" in text


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_validate_command_says_the_bridge_did_not_run(no_compiler, capsys):
    assert validation.main(["--robots", "talos/feet_6d", "--configs", "1"]) == 0
    err = capsys.readouterr().err
    assert "not run: pin-pv-osimr:" in err and "CXX=" in err


#: Loads the bridge from ``$PVOSIMR_CACHE_DIR`` (building it if needed) and checks its G.
LOAD_AND_USE = """
import numpy as np, pinocchio as pin
import pvosimr
from pvosimr import reference
from pvosimr.constraints import weld
model = pin.buildSampleModelManipulator()
cms = [weld(model, model.frames[-1].name)]
q = pin.neutral(model)
G = reference.pinocchio_pv_osimr(model, model.createData(), q, cms)
np.testing.assert_allclose(G, pvosimr.compute_delassus(model, model.createData(), q, cms))
"""


@pytest.mark.slow  # a second bridge build, about a minute
@pytest.mark.long  # the oldest pin's run leaves it out (.ci/run)
def test_a_truncated_bridge_is_set_aside_and_rebuilt(needs_bridge, tmp_path):  # noqa: F811
    """A copy of the built bridge cut short in another cache is detected before it is imported
    (it was SIGBUS), set aside with one line, and built again: one C++ build, about a minute."""
    built = bridge.build_recipe().library()
    library = tmp_path / "bridge" / built.name
    library.parent.mkdir()
    for name in (built.name, built.name + entries.RECORD_SUFFIX):
        shutil.copyfile(built.parent / name, library.parent / name)
    size = library.stat().st_size
    os.truncate(library, size // 2)
    done = subprocess.run(
        [sys.executable, "-c", LOAD_AND_USE],
        capture_output=True, text=True, timeout=900, cwd=Path(__file__).resolve().parents[1],
        env={**os.environ, "PVOSIMR_CACHE_DIR": str(tmp_path), "PVOSIMR_QUIET": ""},
    )  # fmt: skip
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr}"
    said = done.stderr.splitlines()
    assert said[0].startswith(f"pvosimr: the cached {built.name} is damaged ({size // 2} bytes")
    assert said[1].startswith("pvosimr: compiling the bridge") and len(said) == 2
    (aside,) = library.parent.glob(built.name + ".damaged-*")
    assert aside.stat().st_size == size // 2
    assert entries.damage(library) is None


@pytest.mark.slow  # Pinocchio's C++ PV-OSIMr through the bridge (built by the first such test)
def test_an_uncreatable_cache_folder_is_named_with_its_variable(
    needs_bridge,  # noqa: F811
    tmp_path,
    monkeypatch,
):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("PVOSIMR_CACHE_DIR", str(blocker / "deep"))
    monkeypatch.setattr(bridge, "_loaded", {})
    with pytest.raises(bridge.BridgeUnavailableError) as err:
        bridge.load()
    assert f"{blocker / 'deep' / 'bridge'} cannot be created" in err.value.why
    assert f"set by $PVOSIMR_CACHE_DIR={blocker / 'deep'}" in err.value.why
