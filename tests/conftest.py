"""Shared test setup: the model path, Atlas, the one compile cache of the test session, and the
order in which xdist's workers take the files.  A slow test is marked where it is written
(``@pytest.mark.slow``; parameters: ``tests/_slow.py``)."""

import os
from collections import Counter
from pathlib import Path

import pytest

# Models that must not be committed (the Atlas URDF) live in the shared folder beside the repo.
os.environ.setdefault(
    "PVOSIMR_MODEL_PATH", str(Path(__file__).resolve().parents[1].parent / "shared" / "models")
)


def pytest_configure(config):
    config.pluginmanager.register(LongestFirst(), "longest-first")


#: The files whose tests take longest (``--durations`` with an empty compile cache: minutes in
#: all under ``-m slow``, tens of seconds in the default suite; ``test_bridge.py`` builds the
#: C++ bridge that other files then find built), longest first.  :class:`LongestFirst` hands
#: them to the xdist workers first, so that no worker is left with a long file at the end while
#: the other waits.
LONGEST_FIRST = (
    "tests/test_figures.py",
    "tests/test_cli.py",
    "tests/test_bridge.py",
    "tests/test_docs.py",
    "tests/test_xla.py",
    "tests/test_cost.py",
    "tests/test_constraint_models.py",
    "tests/test_constraint_kinds.py",
    "tests/test_bench.py",
    "tests/test_codegen.py",
    "tests/test_jax.py",
    "tests/test_torch.py",
    "tests/test_codegen_chunks.py",
    "tests/test_codegen_vjp.py",
)


class LongestFirst:
    """The selected tests ordered by file: those of :data:`LONGEST_FIRST` first, in its order,
    then the others, most tests first (pytest-xdist's own order, which
    ``--no-loadscope-reorder`` in pyproject's addopts turns off so that this one holds)."""

    @pytest.hookimpl(trylast=True)  # after ``-m`` has selected
    def pytest_collection_modifyitems(self, items):
        def file(item) -> str:
            return item.nodeid.split("::")[0]

        counts = Counter(file(item) for item in items)
        rank = {name: k for k, name in enumerate(LONGEST_FIRST)}
        items.sort(key=lambda item: (rank.get(file(item), len(rank)), -counts[file(item)]))


@pytest.fixture(scope="session")
def codegen_cache() -> Path:
    """The compile cache the tests' small libraries share: pvosimr's own cache folder
    (``$PVOSIMR_CACHE_DIR``, else ``~/.cache/pvosimr``), so a library is built once per test
    session across xdist workers (pvosimr locks an entry while one process builds it) and a
    second run loads it.  A test about building itself (messages, ``compiled``, a damaged
    entry) compiles into its own ``tmp_path`` instead."""
    from pvosimr.codegen.compiler import cache_dir

    return cache_dir()


@pytest.fixture(scope="session")
def atlas():
    """Atlas (free-flyer, nv = 36) from the model search path; skipped with the reason if absent."""
    from pvosimr.zoo import sources

    try:
        return sources.atlas_model()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))


@pytest.fixture
def branching_model(request):
    """:func:`_trees.branching_tree` of the test module's ``BRANCHING_KINDS``: eight joints on
    three branches, a fresh model for each test."""
    from _trees import branching_tree

    return branching_tree(request.module.BRANCHING_KINDS)


@pytest.fixture
def x64():
    """JAX's x64 mode on for one test, then back as it was."""
    import jax

    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", before)
