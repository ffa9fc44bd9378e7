"""Old module names of the study apps, kept importable for one release.

The command-line tools moved into :mod:`pvosimr.study`; ``import pvosimr.bench`` (and
``python -m pvosimr.accuracy``) still work, with a :class:`DeprecationWarning`, and give the
module at its new name: one module object, so state and ``isinstance`` checks are shared.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import CodeType, ModuleType

MOVED = {
    "pvosimr.accuracy": "pvosimr.study.accuracy",
    "pvosimr.bench": "pvosimr.study.bench",
    "pvosimr.claims": "pvosimr.study.figures.claims",
    "pvosimr.cli": "pvosimr.study.cli",
    "pvosimr.cli_options": "pvosimr.study.options",
    "pvosimr.figures": "pvosimr.study.figures",
    "pvosimr.opcounts": "pvosimr.study.count",
    "pvosimr.plots": "pvosimr.study.figures.plots",
    "pvosimr.validation": "pvosimr.study.validate",
}
"""Old dotted name → new dotted name."""


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec) -> ModuleType:
        new = MOVED[spec.name]
        warnings.warn(
            f"{spec.name} is now {new}; the old name goes in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        pass  # already executed under its new name

    def get_code(self, fullname: str) -> CodeType:
        """``python -m <old name>`` runs the module under its new name."""
        return compile(
            f"import runpy; runpy.run_module({MOVED[fullname]!r}, run_name='__main__')",
            f"<{fullname}>",
            "exec",
        )


def install() -> None:
    """Put the alias finder on ``sys.meta_path`` once."""
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.append(_Alias())
