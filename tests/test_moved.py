"""The study apps' old module names still import, warn, and give the module at its new name."""

import importlib
import subprocess
import sys

import pytest

from pvosimr._moved import MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_name_is_the_new_module_with_a_warning(old):
    sys.modules.pop(old, None)
    parent, _, leaf = old.rpartition(".")
    vars(sys.modules[parent]).pop(leaf, None)
    with pytest.warns(DeprecationWarning, match=MOVED[old]):
        module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[old])


def test_from_import_of_an_old_name():
    import pvosimr

    sys.modules.pop("pvosimr.validation", None)
    vars(pvosimr).pop("validation", None)  # an earlier import binds it on the package
    with pytest.warns(DeprecationWarning):
        from pvosimr import validation
    assert validation.main is importlib.import_module("pvosimr.study.validate").main


def test_an_unknown_name_is_still_an_import_error():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("pvosimr.no_such_module")


def test_python_dash_m_runs_the_new_module():
    out = subprocess.run(
        [sys.executable, "-m", "pvosimr.accuracy", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "usage: python -m pvosimr.study.accuracy" in out.stdout
