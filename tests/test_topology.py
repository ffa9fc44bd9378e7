"""The paper's Fig. 1 tree: ES, N, A, D and cca exactly as printed in Sec. I-C."""

import pytest
from _trees import fig1_tree

from pvosimr import Topology


@pytest.fixture(scope="module")
def topo() -> Topology:
    model, constraints = fig1_tree()
    return Topology(model, constraints)


def test_end_effectors_are_numbered_after_the_links(topo):
    assert topo.ees == (7, 8, 9)
    assert [topo.link_of[e] for e in topo.ees] == [6, 3, 5]


def test_supports(topo):
    assert topo.ES[5] == (9,)
    assert topo.ES[3] == (8, 9)
    assert topo.ES[2] == (7, 8, 9)
    assert topo.ES[1] == (7, 8, 9)


def test_branching_links(topo):
    assert topo.N == (0, 2, 3, 7, 8, 9)


def test_closest_branching_descendants_and_ancestors(topo):
    nodes = range(1, 10)
    assert [topo.D[i] for i in nodes] == [2, 2, 3, 9, 9, 7, 7, 8, 9]
    assert [topo.A[i] for i in nodes] == [0, 0, 2, 3, 3, 2, 2, 3, 3]


def test_closest_common_ancestors(topo):
    assert topo.cca(8, 9) == 3
    assert topo.cca(7, 9) == 2
    assert topo.cca(9, 7) == 2
    assert topo.cca(7, 8) == 2


def test_branching_chain_of_each_end_effector(topo):
    assert topo.n_chain == {7: (2,), 8: (3, 2), 9: (3, 2)}
