"""The optional dependencies: which extra installs each, and the one line that says so.

A missing optional module is named in one line, ``<who>: needs <X>: pip install
"pvosimr[<extra>]"``, raised as ``ModuleNotFoundError`` by the library (:func:`require`) and
printed with exit status 2 by the commands (:func:`pvosimr.study.options.require_extra`).
"""

from __future__ import annotations

import importlib

__all__ = ["EXTRAS", "install_hint", "missing_extra", "require"]

EXTRAS = {
    "casadi": ("CasADi", "symbolic"),
    "cuda.bindings": ("NVIDIA's CUDA Python bindings (NVRTC, ptxas)", "cuda"),
    "frax": ("frax", "frax"),
    "jax": ("JAX", "jax"),
    "matplotlib": ("matplotlib", "plots"),
    "mujoco": ("MuJoCo", "mujoco"),
    "torch": ("PyTorch", "torch"),
    "tqdm": ("tqdm", "study"),
}
"""Optional module -> (what to call it, the pvosimr extra that installs it)."""


def missing_extra(*modules: str) -> str | None:
    """The first of ``modules`` (keys of :data:`EXTRAS`) that cannot be imported, else None."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            return module
    return None


def install_hint(who: str, module: str) -> str:
    """``'<who>: needs <X>: pip install "pvosimr[<extra>]"'``: the one line for a missing
    ``module``."""
    what, extra = EXTRAS[module]
    return f'{who}: needs {what}: pip install "pvosimr[{extra}]"'


def require(who: str, *modules: str) -> None:
    """ModuleNotFoundError with :func:`install_hint`'s line (no chained traceback) when one of
    ``modules`` is missing, raised before ``who`` does anything."""
    module = missing_extra(*modules)
    if module is not None:
        raise ModuleNotFoundError(install_hint(who, module), name=module) from None
