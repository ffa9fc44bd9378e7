"""The damped Delassus matrix: ``(G + μI)⁻¹`` against the dense truth, the operator that changes
``μ`` without recomputing ``G``, the refusals of bad damping, and Pinocchio's ``mu`` convention
as measured with pin 4.1.0 (a change in Pinocchio makes that test fail)."""

import numpy as np
import pinocchio as pin
import pytest
from _trees import drawn_plan, random_q, random_trees
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pvosimr
import pvosimr.damped
from pvosimr import DelassusOperator, damped_delassus_inverse, zoo
from pvosimr.reference.truth import (
    TOLERANCE,
    constraint_jacobian,
    dense_delassus,
    mass_matrix,
    rel_err,
)

MUS = (1e-6, 1e-4, 1e-2, 1.0)
EPS = float(np.finfo(float).eps)


def load(name: str, preset: str):
    try:
        return zoo.load(name, preset)
    except FileNotFoundError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def atlas_feet():
    robot = load("atlas", "feet_6d")
    return robot.model, robot.constraints, robot.q_random(np.random.default_rng(0))


def damped_truth(model, q, cms, mu) -> np.ndarray:
    G = dense_delassus(model, q, cms)
    return np.linalg.inv(G + np.diag(np.broadcast_to(mu, (G.shape[0],))))


# --------------------------------------------------------------------------- the damped inverse


@pytest.mark.parametrize("algorithm", pvosimr.ALGORITHMS)
def test_damped_inverse_on_atlas(atlas_feet, algorithm):
    model, cms, q = atlas_feet
    for mu in MUS:
        got = damped_delassus_inverse(model, model.createData(), q, cms, mu, algorithm=algorithm)
        assert rel_err(got, damped_truth(model, q, cms, mu)) <= TOLERANCE, mu
        assert np.array_equal(got, got.T)


#: Beyond this condition number of ``G + μI``, ``TOLERANCE`` is out of reach of any float64 ``G``:
#: two ``G`` a few eps apart (each algorithm's and the truth's) have inverses ``~ eps·κ`` apart.
#: Two welds on one free-flyer joint (rank 6 of 12) at ``μ = 1e-6`` have ``κ = 1.7e7``, and
#: ``np.linalg.inv`` of the naive method's ``G + μI`` is 8e-10 from the truth's (this module's
#: Cholesky inverse: 1.1e-9).
WELL_CONDITIONED = 1e6


def check_random_tree(tree) -> None:
    """Random trees, redundant constraints (singular ``G``) included: within ``TOLERANCE`` where
    ``κ(G + μI) ≤ WELL_CONDITIONED``, within the conditioning limit ``100·eps·κ`` elsewhere."""
    model, cms = tree
    q = random_q(model, np.random.default_rng(0))
    G = dense_delassus(model, q, cms)
    eye = np.eye(G.shape[0])
    for mu in MUS:
        truth = np.linalg.inv(G + mu * eye)
        kappa = np.linalg.cond(G + mu * eye) if G.size else 1.0
        bound = TOLERANCE if kappa <= WELL_CONDITIONED else 100 * EPS * kappa
        for algorithm in pvosimr.ALGORITHMS:
            got = damped_delassus_inverse(model, model.createData(), q, cms, mu, algorithm)
            assert rel_err(got, truth) <= bound, (algorithm, mu, kappa)


@pytest.mark.slow  # seconds of numpy or CasADi work
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=random_trees(max_joints=8, max_constraints=4))
def test_damped_inverse_on_random_trees(tree):
    check_random_tree(tree)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=random_trees(max_joints=15, max_constraints=6), plan=st.integers(0, 2**31 - 1))
def test_damped_inverse_on_many_random_trees(tree, plan):
    """PV-OSIMh on a plan drawn from ``plan`` (the rule's where it is a multiple of ten)."""
    drawn_plan(*tree, plan)
    check_random_tree(tree)


def test_per_row_damping(atlas_feet):
    model, cms, q = atlas_feet
    mu = np.geomspace(1e-6, 1.0, 12)
    got = damped_delassus_inverse(model, model.createData(), q, cms, mu)
    assert rel_err(got, damped_truth(model, q, cms, mu)) <= TOLERANCE


def test_zero_damping_is_the_inverse_of_a_regular_g(atlas_feet):
    model, cms, q = atlas_feet
    got = damped_delassus_inverse(model, model.createData(), q, cms, 0.0)
    assert rel_err(got, np.linalg.inv(dense_delassus(model, q, cms))) <= TOLERANCE


def test_zero_damping_of_a_singular_g_is_refused():
    robot = load("chain_welded_every_link_n10", "welds_6d")  # 60 rows, 10 dofs: rank 10
    q = robot.q_random(np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"singular.*mu > 0"):
        damped_delassus_inverse(robot.model, robot.model.createData(), q, robot.constraints, 0.0)
    op = DelassusOperator(robot.model, robot.model.createData(), q, robot.constraints)
    with pytest.raises(ValueError, match=r"singular.*mu > 0"):
        op.solve(np.ones(op.m), 0.0)
    with pytest.raises(ValueError, match=r"singular.*mu > 0"):
        op.inverse(0.0)
    assert np.isfinite(op.inverse(1e-6)).all()


@pytest.mark.parametrize(
    ("mu", "message"),
    [
        (-1e-3, "≥ 0"),
        (np.nan, "NaN"),
        (np.inf, "finite"),
        (np.ones(5), r"5 entries.*\(m = 12\)"),
        (np.ones((12, 1)), r"shape \(12, 1\)"),
        (np.r_[np.ones(11), -1.0], "≥ 0"),
    ],
)
def test_bad_damping_is_named(atlas_feet, mu, message):
    model, cms, q = atlas_feet
    with pytest.raises(ValueError, match=message):
        damped_delassus_inverse(model, model.createData(), q, cms, mu)
    op = DelassusOperator.from_matrix(np.eye(12))
    with pytest.raises(ValueError, match=message):
        op.solve(np.ones(12), mu)


# --------------------------------------------------------------------------- the operator


def test_operator_computes_g_once(atlas_feet, monkeypatch):
    model, cms, q = atlas_feet
    calls = []
    compute = pvosimr.damped.compute_delassus

    def counted(*args, **kwargs):
        calls.append(1)
        return compute(*args, **kwargs)

    monkeypatch.setattr(pvosimr.damped, "compute_delassus", counted)
    op = DelassusOperator(model, model.createData(), q, cms, algorithm="efpa")
    G = dense_delassus(model, q, cms)
    assert rel_err(op.G, G) <= TOLERANCE
    b = np.random.default_rng(1).standard_normal((12, 3))
    for mu in (0.0, *MUS):
        A = G + mu * np.eye(12)
        assert rel_err(op.solve(b, mu), np.linalg.solve(A, b)) <= TOLERANCE, mu
        assert rel_err(op.solve(b[:, 0], mu), np.linalg.solve(A, b[:, 0])) <= TOLERANCE, mu
        assert rel_err(op.inverse(mu), np.linalg.inv(A)) <= TOLERANCE, mu
    row_mu = np.linspace(1e-4, 1e-2, 12)
    assert rel_err(op.solve(b, row_mu), np.linalg.solve(G + np.diag(row_mu), b)) <= TOLERANCE
    assert len(calls) == 1


def test_refinement_reaches_cholesky_accuracy(atlas_feet):
    """Atlas' G mixes linear and angular rows: the plain eigen route loses about eps·κ(G) there,
    one refinement step does not (the figures of the class docstring)."""
    model, cms, q = atlas_feet
    op = DelassusOperator(model, model.createData(), q, cms)
    mu = 1e-6
    L = pvosimr.damped.cholesky_factor(op.G, mu)
    cholesky = pvosimr.damped.cholesky_inverse(L)
    plain, refined = op.inverse(mu, refine=False), op.inverse(mu)
    assert rel_err(refined, cholesky) < rel_err(plain, cholesky) / 10
    assert rel_err(refined, cholesky) <= 1e-14


def test_operator_checks_its_inputs():
    with pytest.raises(ValueError, match="square"):
        DelassusOperator.from_matrix(np.ones((2, 3)))
    with pytest.raises(ValueError, match="symmetric"):
        DelassusOperator.from_matrix(np.array([[1.0, 0.5], [0.0, 1.0]]))
    op = DelassusOperator.from_matrix(np.eye(3))
    with pytest.raises(ValueError, match=r"\(3,\) or \(3, k\)"):
        op.solve(np.ones(4), 1.0)
    with pytest.raises(ValueError):
        op.G[0, 0] = 2.0  # read-only: the factors describe this matrix


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_solve_refuses_a_non_finite_right_hand_side(bad):
    op = DelassusOperator.from_matrix(np.diag([1.0, 2.0, 3.0]))
    b = np.ones(3)
    b[1] = bad
    with pytest.raises(ValueError, match=rf"b must be finite: b\[1\] is {bad}"):
        op.solve(b, 0.1)
    B = np.ones((3, 2))
    B[2, 1] = bad
    with pytest.raises(ValueError, match=r"b must be finite: b\[2, 1\]"):
        op.solve(B, np.full(3, 0.1))  # the per-row (Cholesky) route too


def test_operator_repr_says_what_it_holds(atlas_feet):
    model, cms, q = atlas_feet
    op = DelassusOperator(model, model.createData(), q, cms, algorithm="EFPA")
    text = repr(op)
    assert text.startswith("DelassusOperator(12×12, algorithm='efpa', model=")
    assert repr(model.name) in text and "eigenvalues in [" in text and " at 0x" not in text
    assert repr(DelassusOperator.from_matrix(np.eye(2))) == (
        "DelassusOperator(2×2, from a matrix, eigenvalues in [1, 1])"
    )


# --------------------------------------------------------------------------- Pinocchio's mu


def test_pinocchio_mu_convention(atlas_feet):
    """``pin.computeDelassusMatrix(..., mu)`` is ``(G⁻¹ + μI)⁻¹ = G (I + μG)⁻¹`` (a mass ``μ`` at
    each contact), not ``G + μI``; ``pin.computeDampedDelassusMatrixInverse`` from Python is
    exactly ``I / μ`` (its PV route runs on a Data that ``initPvDelassus`` never prepared)."""
    model, cms, q = atlas_feet
    G = dense_delassus(model, q, cms)
    eye = np.eye(G.shape[0])
    for mu in (1e-4, 1e-2, 1.0):
        cds = [cm.createData() for cm in cms]
        pin_g = np.array(pin.computeDelassusMatrix(model, model.createData(), q, cms, cds, mu))
        assert rel_err(pin_g, G @ np.linalg.inv(eye + mu * G)) <= TOLERANCE, mu
        assert rel_err(pin_g, G + mu * eye) > 1e3 * TOLERANCE, mu
        cds = [cm.createData() for cm in cms]
        args = (model, model.createData(), q, cms, cds, mu)
        assert np.array_equal(np.array(pin.computeDampedDelassusMatrixInverse(*args)), eye / mu)
        pvosimr_inverse = damped_delassus_inverse(model, model.createData(), q, cms, mu)
        assert rel_err(pvosimr_inverse, np.linalg.inv(G + mu * eye)) <= TOLERANCE


def test_pinocchio_mu_convention_on_point_contacts():
    """3D contacts too: a point mass ``μ``, hence ``G (I + μG)⁻¹`` (``G`` singular here: four
    corners per rigid foot)."""
    robot = load("atlas", "feet_4x3d")
    model, cms = robot.model, robot.constraints
    q = robot.q_random(np.random.default_rng(0))
    G = dense_delassus(model, q, cms)
    mu = 1e-2
    cds = [cm.createData() for cm in cms]
    pin_g = np.array(pin.computeDelassusMatrix(model, model.createData(), q, cms, cds, mu))
    assert rel_err(pin_g, G @ np.linalg.inv(np.eye(G.shape[0]) + mu * G)) <= TOLERANCE


# --------------------------------------------------------------------------- spectral bounds


def test_spectral_bounds_are_exact(atlas_feet):
    model, cms, q = atlas_feet
    op = DelassusOperator(model, model.createData(), q, cms)
    eig = np.linalg.eigvalsh(dense_delassus(model, q, cms))
    lo, hi = op.spectral_bounds()
    assert abs(lo - eig[0]) <= 1e-12 * eig[-1] and abs(hi - eig[-1]) <= 1e-12 * eig[-1]
    with pytest.raises(ValueError, match="G is empty"):
        DelassusOperator.from_matrix(np.zeros((0, 0))).spectral_bounds()


@pytest.mark.parametrize("steps", [8, 15, pytest.param(30, marks=pytest.mark.slow)])
def test_lanczos_bounds_hold(steps):
    """120 rows of rank 60 (10 welded branches: eigenvalues in clusters), fewer steps than
    rows: the extreme eigenvalues lie inside the stated bounds, each Ritz value is within its
    residual of an eigenvalue, and 30 steps (the default) find the largest to 1e-6."""
    robot = load("stem_b10_L10", "branch_tips_6d")
    G = dense_delassus(robot.model, robot.q_random(np.random.default_rng(0)), robot.constraints)
    eig = np.linalg.eigvalsh(G)
    est = pvosimr.lanczos_bounds(G, steps=steps)
    assert est.steps == steps < G.shape[0]
    slack = 1e-12 * eig[-1]
    assert est.largest - slack <= eig[-1] <= est.largest_upper + slack
    assert est.smallest_lower - slack <= eig[0] <= est.smallest + slack
    for ritz, residual in (
        (est.largest, est.largest_residual),
        (est.smallest, est.smallest_residual),
    ):
        assert np.abs(eig - ritz).min() <= residual + slack
    if steps == 30:
        assert eig[-1] - est.largest <= 1e-6 * eig[-1]
    product = pvosimr.lanczos_bounds(len(G), steps=steps, product=G.__matmul__)
    assert product[:4] == pytest.approx(est[:4], rel=1e-12, abs=1e-12)
    assert np.isnan(product.largest_upper)


@pytest.mark.slow  # seconds (measured)
def test_lanczos_largest_can_be_below_lambda_max_by_more_than_its_residual():
    """Why the residual is not a bound on λ_max: at 8 steps the top Ritz value sits near the
    cluster's 7.92, not λ_max = 8.02 (what :class:`pvosimr.damped.SpectralEstimate` says)."""
    robot = load("stem_b10_L10", "branch_tips_6d")
    G = dense_delassus(robot.model, robot.q_random(np.random.default_rng(0)), robot.constraints)
    est = pvosimr.lanczos_bounds(G, steps=8)
    assert np.linalg.eigvalsh(G)[-1] - est.largest > est.largest_residual


def test_lanczos_bounds_are_exact_once_steps_reach_m(atlas_feet):
    model, cms, q = atlas_feet
    G = dense_delassus(model, q, cms)
    est = pvosimr.lanczos_bounds(G, steps=100)
    eig = np.linalg.eigvalsh(G)
    assert est.steps <= G.shape[0]
    assert abs(est.largest - eig[-1]) <= 1e-12 * eig[-1]
    assert abs(est.smallest - eig[0]) <= 1e-10 * eig[-1]
    with pytest.raises(ValueError, match="steps must be ≥ 1"):
        pvosimr.lanczos_bounds(G, steps=0)


def test_admm_spectral_penalty_is_the_documented_rule(atlas_feet):
    """pin 4.1's ADMM, ``rho_init`` unset: ``ρ = √(L m) (L/m)^p`` with ``L`` the largest
    eigenvalue of ``G + μ_prox I`` (its Lanczos, to 1e-8), ``m = μ_prox`` (+ the smallest
    compliance) and ``p = spectral_rho_power_init``; a CONSTANT rule keeps it to the end."""
    model, cms, q = atlas_feet
    op = DelassusOperator(model, model.createData(), q, cms)
    settings = pin.ADMMSolverSettings()
    settings.admm_update_rule = pin.ADMMUpdateRule.CONSTANT
    cmodels = pin.StdVec_ConstraintModel()
    for cm in cms:  # the same welds as Pinocchio 4 frame anchors
        cmodels.append(
            pin.ConstraintModel(
                pin.FrameAnchorConstraintModel(model, cm.joint1_id, cm.joint1_placement)
            )
        )
    cdatas = pin.StdVec_ConstraintData()
    data = model.createData()
    pin.forwardKinematics(model, data, q)
    for cm in cmodels:
        cdatas.append(cm.createData())
        cm.calc(model, data, cdatas[-1])
    result = pin.ADMMSolverResult()
    g = np.random.default_rng(0).standard_normal(op.m)
    pin.ADMMConstraintSolver(op.m).solve(op.to_pinocchio(), g, cmodels, cdatas, settings, result)
    L = op.spectral_bounds()[1] + settings.mu_prox
    m = settings.mu_prox
    rho = np.sqrt(L * m) * (L / m) ** settings.spectral_rho_power_init
    assert result.rho == pytest.approx(rho, rel=1e-6)


# --------------------------------------------------------------------------- the effective metric


def effective_truth(model, q, cms, d) -> np.ndarray:
    """``J (M + diag(d))⁻¹ Jᵀ`` from the dense M and Pinocchio's constraint rows."""
    J = constraint_jacobian(model, q, cms)
    return J @ np.linalg.solve(mass_matrix(model, q) + np.diag(d), J.T)


@pytest.fixture(scope="module")
def effective(atlas_feet):
    model, cms, q = atlas_feet
    rng = np.random.default_rng(3)
    h = 1e-3
    d = h * rng.uniform(0, 5, model.nv) + h * h * rng.uniform(0, 1e3, model.nv)  # hD + h²K
    d[:6] = 0.0  # no damping on the free-flyer
    d[10] = 0.0  # an undamped joint among damped ones
    return model, cms, q, d, effective_truth(model, q, cms, d)


@pytest.mark.parametrize("algorithm", pvosimr.ALGORITHMS)
def test_effective_metric_numpy(effective, algorithm):
    model, cms, q, d, truth = effective
    eff = pvosimr.effective_model(model, d)
    got = pvosimr.compute_delassus(eff, eff.createData(), q, cms, algorithm=algorithm)
    assert rel_err(got, truth) <= TOLERANCE
    plain = pvosimr.compute_delassus(model, model.createData(), q, cms, algorithm=algorithm)
    assert rel_err(plain, truth) > 1e-4  # d matters: the test can fail
    assert not np.asarray(model.armature).any()  # the model itself is untouched


def test_effective_metric_batch(effective):
    model, cms, q, d, _ = effective
    eff = pvosimr.effective_model(model, d)
    qs = np.array([q, *(zoo.random_configuration(model, np.random.default_rng(k)) for k in (1, 2))])
    Gs = pvosimr.compute_delassus_batch(eff, qs, cms)
    for qb, G in zip(qs, Gs, strict=True):
        assert rel_err(G, effective_truth(model, qb, cms, d)) <= TOLERANCE


def test_effective_metric_casadi(effective):
    pytest.importorskip("casadi")
    from pvosimr.symbolic import delassus_function

    model, cms, q, d, truth = effective
    f = delassus_function(pvosimr.effective_model(model, d), cms)
    assert rel_err(np.array(f(q)), truth) <= TOLERANCE


@pytest.mark.slow  # one compile of Atlas (about a minute on two cores)
def test_effective_metric_generated_c(effective, tmp_path):
    pytest.importorskip("casadi")
    from pvosimr import codegen

    model, cms, q, d, truth = effective
    f = codegen.compile(pvosimr.effective_model(model, d), cms, cache_dir=tmp_path)
    assert rel_err(f(q), truth) <= TOLERANCE


@pytest.mark.parametrize(
    ("d", "message"),
    [(np.ones(3), r"shape \(3,\).*nv = 36"), (np.r_[-1.0, np.zeros(35)], "entry 0 is -1.0")],
)
def test_effective_model_names_a_bad_diagonal(atlas_feet, d, message):
    with pytest.raises(ValueError, match=message):
        pvosimr.effective_model(atlas_feet[0], d)
