"""Rank collapse and LayerNorm dynamics: the theorems, checked numerically."""

import numpy as np
import pytest
import torch

from attention_geometry.attention import masked_softmax
from attention_geometry.collapse import (
    attention_matrix,
    fit_rate,
    mu,
    mu_over_depth,
    mu_over_depth_loop,
    standardise_tokens,
)
from attention_geometry.ln_dynamics import (
    basins_2x2,
    check_orthogonal,
    counterexample_wv,
    equilibria_2x2,
    hemisphere_inputs,
    iterate_ln,
    jacobian_2x2,
    ln_step,
    numerical_rank,
    random_orthogonal,
    rank_construction_wv,
    rank_k_equilibria,
    token_geometry,
)
from attention_geometry.attention import causal_mask, complete_mask, one_sided_window_mask, sliding_window_mask


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize("mask", [complete_mask(6), causal_mask(6), sliding_window_mask(6, 1)])
def test_attention_rows_sum_to_one_and_respect_mask(mask):
    X = torch.randn(3, 6, 4, generator=gen(), dtype=torch.float64)
    W = torch.randn(2, 4, 4, generator=gen(1), dtype=torch.float64)
    A = attention_matrix(X, W[0], W[1], mask, d_qk=4.0)
    assert torch.allclose(A.sum(-1), torch.ones(3, 6, dtype=torch.float64))
    assert (A[:, ~torch.as_tensor(mask)] == 0).all() and (A[:, torch.as_tensor(mask)] > 0).all()


def test_mu_invariances_and_batching():
    X = torch.randn(5, 7, 3, generator=gen(), dtype=torch.float64)
    v = torch.randn(3, generator=gen(2), dtype=torch.float64)
    assert torch.allclose(mu(X + v), mu(X))
    Q = random_orthogonal(3, gen(3))
    assert torch.allclose(mu(X @ Q), mu(X))
    assert torch.allclose(mu(X), torch.stack([mu(x) for x in X]))
    assert float(mu(torch.ones(4, 3) * v.float())) == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("mask", [causal_mask(8), one_sided_window_mask(8, 2), complete_mask(8)])
def test_collapse_is_exponential_float64(mask):
    X0 = standardise_tokens(torch.randn(4, 8, 6, generator=gen(), dtype=torch.float64))
    r = mu_over_depth(X0, mask, 60, 2, seed=1, dtype=torch.float64)
    rel = r["mu"] / r["norm"]
    assert (rel[-1] < 1e-4 * rel[0]).all()
    rate = fit_rate(r["mu"], floor=1e-12)
    assert np.all(rate > 0.05)


def test_batched_equals_loop():
    X0 = standardise_tokens(torch.randn(3, 6, 5, generator=gen(), dtype=torch.float64))
    for kw in [{}, {"layernorm": True, "skip": True}, {"d_qk": 0.5}]:
        a = mu_over_depth(X0, causal_mask(6), 5, 2, seed=4, dtype=torch.float64, **kw)
        b = mu_over_depth_loop(X0, causal_mask(6), 5, 2, seed=4, dtype=torch.float64, **kw)
        np.testing.assert_allclose(a["mu"], b["mu"], rtol=1e-10)
        np.testing.assert_allclose(a["norm"], b["norm"], rtol=1e-10)


def test_fit_rate_recovers_exponential():
    t = np.arange(40)[:, None]
    v = 3.0 * np.exp(-np.array([[0.1, 0.5]]) * t)
    np.testing.assert_allclose(fit_rate(v, floor=1e-9), [0.1, 0.5], rtol=1e-9)


def test_bad_inputs():
    X = torch.randn(2, 4, 3, generator=gen())
    with pytest.raises(ValueError, match="N = 4"):
        mu_over_depth(X, causal_mask(5), 2, 1, 0)
    with pytest.raises(ValueError, match="boolean"):
        masked_softmax(torch.zeros(4, 4), np.ones((4, 4)))
    with pytest.raises(ValueError, match="n_layers"):
        mu_over_depth(X, causal_mask(4), 0, 1, 0)
    with pytest.raises(ValueError, match="d_qk"):
        mu_over_depth(X, causal_mask(4), 2, 1, 0, d_qk=-1.0)
    with pytest.raises(ValueError, match="not orthogonal"):
        check_orthogonal(np.array([[1.0, 1.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"N = 0"):
        rank_construction_wv(0, 3)
    with pytest.raises(ValueError, match=r"d = 99"):
        rank_construction_wv(3, 99)
    with pytest.raises(ValueError, match="k = 4"):
        rank_k_equilibria(rank_construction_wv(3, 3), 3, 4)


def test_orthogonal_hemisphere_collapse():
    g = gen(5)
    X0 = hemisphere_inputs(8, 6, 4, g)
    W = random_orthogonal(4, g)
    check_orthogonal(W)
    W_QK = torch.randn(4, 4, generator=g, dtype=torch.float64)
    for mask in [complete_mask(6), causal_mask(6)]:
        _, m = iterate_ln(X0, W, mask, 200, W_QK)
        assert (m[-1] < 1e-6).all()


def test_counterexample_equilibria_and_stability():
    E = equilibria_2x2()
    assert len(E) == 8
    x = np.stack([np.cos(E), np.sin(E)], -1)
    Y = ln_step(torch.tensor(x), torch.tensor(counterexample_wv()), causal_mask(2)).numpy()
    np.testing.assert_allclose(Y, x, atol=1e-12)  # fixed points
    # the rank-2 equilibrium x1 = e1, x2 = (-4/5, 3/5) is asymptotically stable
    target = np.array([0.0, np.arctan2(0.6, -0.8)])
    k = np.argmin(np.abs(E - target).sum(1))
    np.testing.assert_allclose(E[k], target, atol=1e-10)
    ev = np.sort(np.abs(np.linalg.eigvals(jacobian_2x2(E[k]))))
    np.testing.assert_allclose(ev, [0.4, 0.5], atol=1e-6)
    # the unstable one (0, pi/2): eigenvalue 2
    k = np.argmin(np.abs(E - [0, np.pi / 2]).sum(1))
    assert np.abs(np.linalg.eigvals(jacobian_2x2(E[k]))).max() == pytest.approx(2.0, abs=1e-6)
    grid, final = basins_2x2(n_grid=40, n_steps=200)
    xf = np.stack([np.cos(final), np.sin(final)], -1)
    det = xf[..., 0, 0] * xf[..., 1, 1] - xf[..., 0, 1] * xf[..., 1, 0]
    assert 0.02 < (np.abs(det) > 1e-6).mean() < 0.5  # positive measure ends at rank 2


@pytest.mark.parametrize("n, d", [(3, 3), (5, 4), (4, 6)])
def test_rank_construction(n, d):
    W = rank_construction_wv(n, d)
    for k in range(1, min(n, d) + 1):
        X = torch.tensor(rank_k_equilibria(W, n, k))
        assert X.shape[0] == 2**k
        torch.testing.assert_close(ln_step(X, torch.tensor(W), causal_mask(n)), X, atol=1e-12, rtol=0)
        assert (numerical_rank(X) == k).all()
        assert len({tuple(np.round(x.numpy().ravel(), 9)) for x in X}) == 2**k  # distinct


def test_token_geometry():
    X = torch.randn(3, 5, 8, generator=gen(), dtype=torch.float64)
    g = token_geometry(X)
    assert g["full_rank"].all() and (g["sigma_min"] > 0).all()
    same = torch.ones(2, 5, 8, dtype=torch.float64)
    g = token_geometry(same)
    assert not g["full_rank"].any() and np.allclose(g["mean_abs_cos"], 1) and np.allclose(g["rel_mu"], 0)
