"""Shared test setup: the model path, Atlas, the one compile cache of the test session, and the
tests that run only under ``-m slow`` because they take seconds (:data:`HEAVY`)."""

import os
from collections import Counter
from pathlib import Path

import pytest
from _heavy import HEAVY

# Models that must not be committed (the Atlas URDF) live in the shared folder beside the repo.
os.environ.setdefault(
    "PVOSIMR_MODEL_PATH", str(Path(__file__).resolve().parents[1].parent / "shared" / "models")
)


def pytest_configure(config):
    config.pluginmanager.register(LongestFirst(), "longest-first")
    config.addinivalue_line(
        "markers",
        "heavy: a test of the default kind that takes seconds (a C or C++ build, a whole "
        "command in a subprocess): marked slow too, listed in tests/_heavy.py",
    )


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
    "tests/test_jax_seam.py",
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


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects on the marks
def pytest_collection_modifyitems(config, items):
    """Mark the tests of :data:`HEAVY` heavy and slow.  Where whole files are collected, a
    listed test that is not among them fails the run: the list must not silently go stale."""
    files = {item.nodeid.split("::")[0] for item in items}
    found = set()
    for item in items:
        function, file = item.nodeid.split("[")[0], item.nodeid.split("::")[0]
        if item.nodeid in HEAVY or function in HEAVY or file in HEAVY:
            item.add_marker(pytest.mark.heavy)
            item.add_marker(pytest.mark.slow)
            found.update((item.nodeid, function, file))
    whole_files = not any("::" in arg for arg in config.args) and not config.getoption("keyword")
    # A listed parameter set may be absent where the installed versions draw other cases (the
    # oldest pin has no mimic robots); a listed test whose function is gone is stale.
    functions = {item.nodeid.split("[")[0] for item in items}
    stale = {
        n for n in HEAVY if n.split("::")[0] in files and n.split("[")[0] not in functions | found
    }
    if stale and whole_files and not config.getoption("lf", default=False):
        raise pytest.UsageError(
            "tests/_heavy.py names tests that were not collected: " + ", ".join(sorted(stale))
        )


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
def x64():
    """JAX's x64 mode on for one test, then back as it was."""
    import jax

    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", before)
