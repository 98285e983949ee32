"""Least squares helpers against closed-form answers and brute force."""

import itertools

import numpy as np
import pytest

from routertwin.validation.lsq import lstsq, nnls


def brute_force_nnls(A, b):
    """Minimum residual over every support set whose unconstrained solution is >= 0."""
    n = A.shape[1]
    best_x, best_r = np.zeros(n), np.linalg.norm(b)
    for k in range(1, n + 1):
        for support in itertools.combinations(range(n), k):
            xs = np.linalg.lstsq(A[:, support], b, rcond=None)[0]
            if (xs >= 0).all():
                r = np.linalg.norm(A[:, support] @ xs - b)
                if r < best_r - 1e-12:
                    best_x = np.zeros(n)
                    best_x[list(support)] = xs
                    best_r = r
    return best_x, best_r


def test_nnls_closed_form_clamps_negative_coefficient():
    # Identity design: the unconstrained answer is b; NNLS clamps negatives to 0.
    x, r = nnls(np.eye(3), np.array([2.0, -1.0, 0.5]))
    assert x == pytest.approx([2.0, 0.0, 0.5])
    assert r == pytest.approx(1.0)


def test_nnls_recovers_exact_nonnegative_solution():
    A = np.array([[1.0, 64.0], [1.0, 128.0], [1.0, 512.0], [1.0, 1518.0]])
    truth = np.array([300.0, 0.75])
    x, r = nnls(A, A @ truth)
    assert x == pytest.approx(truth)
    assert r == pytest.approx(0.0, abs=1e-8)


@pytest.mark.parametrize("seed", range(40))
def test_nnls_matches_brute_force_on_random_problems(seed):
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(3, 8)), int(rng.integers(1, 6))
    A, b = rng.normal(size=(m, n)), rng.normal(size=m)
    x, r = nnls(A, b)
    bx, br = brute_force_nnls(A, b)
    assert (x >= 0).all()
    assert r == pytest.approx(br, abs=1e-9)
    assert x == pytest.approx(bx, abs=1e-7)


def test_lstsq_fits_a_line_exactly():
    A = np.column_stack([np.ones(4), np.arange(4.0)])
    x, r = lstsq(A, 2.0 + 3.0 * np.arange(4.0))
    assert x == pytest.approx([2.0, 3.0])
    assert r == pytest.approx(0.0, abs=1e-12)
