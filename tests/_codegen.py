"""What the tests of the generated code share: the module (the test file is skipped without
CasADi or a C compiler), the mark of a test that builds C itself, and the quickest flags for
the small test models."""

import shutil

import pytest

#: A batch's caller starts every thread the batch can use, however small (by default it starts
#: none for the small batches of the tests): so the tests of threads run threads.
THREADED = "-DPVOSIMR_SPAWN_SECONDS=0"

FAST = ("-O1", THREADED)
"""The small test models compile quickest at -O1 (their run time is the same)."""

FAST_DERIVATIVES = ("-O0", THREADED)
"""dG's and the gradient's C is large (about nv G's): -O0 builds it fastest, and these tests time
nothing."""


HAS_C_COMPILER = any(shutil.which(c) for c in ("cc", "gcc", "clang"))

needs_c_compiler = pytest.mark.skipif(not HAS_C_COMPILER, reason="no C compiler on PATH")
"""Skips a test that builds C itself when no C compiler is on PATH."""


def codegen_or_skip():
    """``pvosimr.codegen.build``, or the calling test module skipped (no CasADi, no compiler)."""
    pytest.importorskip("casadi")
    build = pytest.importorskip("pvosimr.codegen.build")
    if not HAS_C_COMPILER:
        pytest.skip("no C compiler on PATH", allow_module_level=True)
    return build
