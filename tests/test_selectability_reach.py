"""The reach of a key, ``max_attention_weight``: the largest softmax weight a query of norm at most R gives it."""

import numpy as np
import pytest
from scipy.special import expit

from attention_geometry import selectability as sel


def simplex(n_vertices: int) -> np.ndarray:
    """``n_vertices`` unit vectors of a regular simplex centred at 0, in ``n_vertices`` coordinates."""
    v = np.eye(n_vertices) - 1.0 / n_vertices
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.mark.parametrize("radius", [0.1, 1.0, 4.0])
def test_two_keys_are_logistic(radius):
    # softmax of two scores is the logistic of their difference, largest along k_1 - k_2: expit(R |k_1 - k_2|)
    keys = np.array([[1.0, 2.0, 0.5], [-0.5, 1.0, 2.0]])
    w, up = sel.max_attention_weight(keys, radius)
    exact = expit(radius * np.linalg.norm(keys[0] - keys[1]))
    np.testing.assert_allclose(w, [exact, exact], atol=1e-7)
    assert np.all(up >= w - 1e-12)


@pytest.mark.parametrize("n_vertices", [3, 4, 6])
@pytest.mark.parametrize("radius", [0.3, 3.0, 30.0])
def test_simplex_centre_and_vertex(n_vertices, radius):
    # the centre of a regular simplex is unselectable: by Jensen its weight is 1/n for every R (n keys in all);
    # a vertex of the simplex alone: by symmetry q = R v_i, every other score below by R N/(N - 1)
    v = simplex(n_vertices)
    keys = np.vstack([v, np.zeros(n_vertices)])
    w, up = sel.max_attention_weight(keys, radius, rows=[n_vertices])
    np.testing.assert_allclose(w, 1.0 / (n_vertices + 1), atol=1e-6)
    np.testing.assert_allclose(up, 1.0 / (n_vertices + 1), atol=2e-4)
    w, up = sel.max_attention_weight(v, radius)
    exact = 1.0 / (1.0 + (n_vertices - 1) * np.exp(-radius * n_vertices / (n_vertices - 1)))
    np.testing.assert_allclose(w, exact, atol=1e-6)
    assert np.all(up - w <= 1e-4)


def test_monotone_in_radius_and_bounded_for_interior_keys():
    rng = np.random.default_rng(1)
    keys = rng.standard_normal((40, 3))
    radii = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0]
    weights = np.array([sel.max_attention_weight(keys, r)[0] for r in radii])
    assert np.all(np.diff(weights, axis=0) >= -2e-4)  # the ball grows: within the solver's tolerance
    unsel = sel.unselectable_mask_lp(keys)
    assert unsel.any() and (~unsel).any()
    # an unselectable key never gets more than half the attention, whatever the radius (the dual with p = lambda)
    upper = sel.max_attention_weight(keys, 50.0)[1]
    assert np.all(upper[unsel] <= 0.5 + 1e-4)
    # and above one half certifies selectability (the LP agrees); far out, every vertex passes one half
    assert not np.any(unsel & (weights[-1] > 0.5))
    assert np.all(sel.max_attention_weight(keys, 1e4)[0][~unsel] > 0.5)


def _brute_force(keys, i, radius, n_dirs, n_radii):
    """max softmax_i over a grid of the ball (directions: a circle in d = 2, a Fibonacci sphere in d = 3)."""
    d = keys.shape[1]
    if d == 2:
        a = np.linspace(0, 2 * np.pi, n_dirs, endpoint=False)
        u = np.stack([np.cos(a), np.sin(a)], 1)
    else:
        z = np.linspace(-1 + 1 / n_dirs, 1 - 1 / n_dirs, n_dirs)
        phi = np.arange(n_dirs) * np.pi * (3 - np.sqrt(5))
        u = np.stack([np.sqrt(1 - z ** 2) * np.cos(phi), np.sqrt(1 - z ** 2) * np.sin(phi), z], 1)
    q = (np.linspace(0, radius, n_radii)[:, None, None] * u[None]).reshape(-1, d)
    s = q @ keys.T
    s -= s.max(1, keepdims=True)
    p = np.exp(s)
    return (p[:, i] / p.sum(1)).max()


@pytest.mark.parametrize("d, n_dirs", [(2, 4000), (3, 20000)])
def test_agrees_with_a_brute_force_search_of_the_ball(d, n_dirs):
    rng = np.random.default_rng(d)
    keys = rng.standard_normal((12, d))
    w, up = sel.max_attention_weight(keys, 2.0, tol=1e-6)
    brute = np.array([_brute_force(keys, i, 2.0, n_dirs, 41) for i in range(len(keys))])
    assert np.all(brute <= up + 1e-9)  # the dual bound holds
    np.testing.assert_allclose(w, brute, atol=2e-3)  # and the grid's resolution is all that separates them


def test_batched_sets_match_one_at_a_time_and_radius_per_set():
    rng = np.random.default_rng(3)
    sets = rng.standard_normal((3, 20, 4))
    radii = np.array([0.5, 2.0, 6.0])
    w, _ = sel.max_attention_weight(sets, radii, rows=[0, 5, 19])
    for s in range(3):
        np.testing.assert_allclose(w[s], sel.max_attention_weight(sets[s], radii[s], rows=[0, 5, 19])[0], atol=1e-5)


def test_gaussian_like_has_the_sets_mean_and_covariance():
    rng = np.random.default_rng(4)
    keys = rng.standard_normal((50, 3)) @ np.array([[2.0, 0, 0], [0.5, 1.0, 0], [0, 0, 0.1]]) + 3.0
    draws = np.stack([sel.gaussian_like(keys, rng) for _ in range(400)])  # (400, 50, 3)
    c = keys - keys.mean(0)
    cov, rows = c.T @ c / 50, draws.reshape(-1, 3)  # rows independent N(mean, cov): 20,000 of them
    se_mean = np.sqrt(np.diag(cov) / len(rows))
    se_cov = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov ** 2) / len(rows))  # Gaussian fourth moments
    assert np.all(np.abs(rows.mean(0) - keys.mean(0)) < 4 * se_mean)
    assert np.all(np.abs(np.cov(rows.T, bias=True) - cov) < 4 * se_cov)


def test_arguments_are_checked():
    keys = np.zeros((3, 2))
    with pytest.raises(ValueError, match="radius"):
        sel.max_attention_weight(keys, 0.0)
    with pytest.raises(ValueError, match="rows"):
        sel.max_attention_weight(keys, 1.0, rows=[3])
    assert sel.max_attention_weight(np.ones((1, 2)), 1.0)[0].tolist() == [1.0]


def test_reach_against_gaussian_uses_the_median_query_norm():
    rng = np.random.default_rng(5)
    keys, queries = rng.standard_normal((2, 30, 3)), rng.standard_normal((2, 11, 3))
    out = sel.reach_against_gaussian(keys, queries, np.random.default_rng(0), n_rows=8)
    assert out.shape == (3, 2)
    np.testing.assert_allclose(out[2], np.median(np.linalg.norm(queries, axis=-1), axis=-1))
    rows = np.sort(np.random.default_rng(0).choice(30, size=8, replace=False))  # the same draw comes first
    for h in range(2):
        np.testing.assert_allclose(out[0, h], sel.max_attention_weight(keys[h], out[2, h], rows)[0].mean(), atol=1e-5)
    assert np.all((out[:2] > 0) & (out[:2] <= 1))
