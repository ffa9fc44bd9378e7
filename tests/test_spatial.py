"""The block-wise transforms give the same four products as the 6×6 matrix ``X``."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from pvosimr.backends import NUMPY
from pvosimr.spatial import Chain, DenseTransform, Transform


def _placement(rng: np.random.Generator) -> pin.SE3:
    return pin.SE3(pin.Quaternion(rng.normal(size=4)).normalized().matrix(), rng.normal(size=3))


def _blockwise(M: pin.SE3, rotate: bool = True, translate: bool = True) -> Transform:
    """``actionInverse(M)`` as a block-wise transform: ``E = Rᵀ``, ``p = t``."""
    E = M.rotation.T if rotate else None
    p = M.translation[:, None] if translate else None
    return Transform(NUMPY, E, p)


def _products(X, rng: np.random.Generator) -> list[np.ndarray]:
    A, F, K = rng.normal(size=(6, 4)), rng.normal(size=(6, 3)), rng.normal(size=(5, 6))
    H = rng.normal(size=(6, 6))
    H = H @ H.T
    return [X.motion(A), X.force(F), X.rows(K), X.congruence(H)]


@pytest.mark.parametrize("rotate", [True, False])
@pytest.mark.parametrize("translate", [True, False])
@pytest.mark.parametrize("seed", range(5))
def test_blockwise_equals_matrix(seed, rotate, translate):
    rng = np.random.default_rng(seed)
    M = _placement(rng)
    if not rotate:
        M.rotation = np.eye(3)
    if not translate:
        M.translation = np.zeros(3)
    dense = DenseTransform(NUMPY, M.actionInverse)
    got = _products(_blockwise(M, rotate, translate), np.random.default_rng(seed))
    want = _products(dense, np.random.default_rng(seed))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_chain_is_the_product_of_its_factors(seed):
    """``X_J X_tree`` applied factor by factor equals ``actionInverse(M_tree · M_J)``."""
    rng = np.random.default_rng(seed)
    M_tree, M_J = _placement(rng), _placement(rng)
    chain = Chain((_blockwise(M_J), _blockwise(M_tree)))
    dense = DenseTransform(NUMPY, (M_tree * M_J).actionInverse)
    got = _products(chain, np.random.default_rng(seed))
    want = _products(dense, np.random.default_rng(seed))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, atol=1e-12)
