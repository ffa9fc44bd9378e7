"""The paper's Fig. 1 tree: ES, N, A, D and cca exactly as printed in Sec. I-C."""

import pinocchio as pin
import pytest
from _trees import TreeSpec, build_tree, fig1_tree

import pvosimr
from pvosimr import Topology
from pvosimr.algorithms.pv_osimr import omega_cover
from pvosimr.mimic import MIMIC_JOINTS


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


def test_omega_cover_on_fig1(topo):
    # Diagonal blocks need (A(e), e); at link 2 the part {8, 9} is spared, as EE 7's product
    # at 2 is already formed for its diagonal block, and it covers blocks (7, 8) and (7, 9).
    assert omega_cover(topo) == {(2, 7), (3, 8), (3, 9)}


def test_omega_cover_grows_with_m_not_m_times_d():
    from pvosimr.zoo import synthetic

    robot = synthetic.chain_welded_every_link(12)
    chain = Topology(robot.model, robot.constraints)
    assert len(omega_cover(chain)) == len(chain.ees)  # not 12 * 13 / 2 products
    for a, e1 in enumerate(chain.ees):  # and every off-diagonal block is covered
        for e2 in chain.ees[a + 1 :]:
            c = chain.cca(e1, e2)
            assert (c, e1) in omega_cover(chain) or (c, e2) in omega_cover(chain)


@pytest.mark.skipif(
    MIMIC_JOINTS or not hasattr(pin, "transformJointIntoMimic"),
    reason="only where pin has mimic joints that pvosimr does not take (pin 3.7)",
)
def test_mimic_joints_of_a_pin_that_rejects_their_data_are_refused_by_name():
    base, _ = build_tree(TreeSpec([0, 1, 1], ["RZ", "RX", "RY"], [], False, 0))
    model = pin.transformJointIntoMimic(base, 2, 3, 1.5, 0.1)
    with pytest.raises(NotImplementedError, match=r"joint 3 .* mimic joints need pin >= 3\.8"):
        Topology(model, [])
    with pytest.raises(NotImplementedError, match=r"mimic joints need pin >= 3\.8"):
        pvosimr.compute_delassus(model, model.createData(), pin.neutral(model), [])
