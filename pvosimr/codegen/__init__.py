"""Compiled ``q ↦ G``: C generated from the algorithms on CasADi SX, built once, called from Python.

- :mod:`.build`: :func:`compile`, the C source and the on-disk library cache;
- :mod:`.c_source`: the C entry points appended to CasADi's generated function;
- :mod:`.cpython_source`: the C making the library a CPython extension too;
- :mod:`.call`: :class:`CompiledDelassus`, the callable of a built library;
- :mod:`.compiler`: finding the C compiler and the cache folder, a build's line on stderr;
- :mod:`.contract`: what the JAX and PyTorch front ends share (routes, options, the library
  with its gradient);
- :mod:`.standalone`: :func:`export`, the same C as standalone files for a C or C++ program
  (:mod:`.standalone_text`: its header, CMake files and README);
- :mod:`.cuda`: :func:`compile_cuda`, the same generated C as CUDA kernels (NVRTC, ptxas);
- :mod:`.templating`: the fixed text of the generated C and files, in ``templates/``;
- :mod:`.cache`: the cache's entries, recorded and checked before they are loaded (both shared
  with the bridge of :mod:`pvosimr.reference`).
"""

from .build import *  # noqa: F403  (one list: build.__all__)
from .build import __all__ as _build_all
from .standalone import ExportError, export

__all__ = [*_build_all, "ExportError", "compile_cuda", "export"]  # noqa: F405  (__getattr__)


def __getattr__(name: str):
    """``compile_cuda`` from :mod:`.cuda` on first use (``python -m pvosimr.codegen.cuda``
    then runs a module not yet imported)."""
    if name == "compile_cuda":
        from .cuda import compile_cuda

        return compile_cuda
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
