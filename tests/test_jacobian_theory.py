"""The derived expectation of the squared Jacobian (value pathway) against Monte
Carlo, its corollary, and what fitting the paper's form to it recovers."""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
import torch

import attention_geometry as ag
from attention_geometry.jacobians import theory as T


@pytest.mark.parametrize("L, H, d, gain, heads", [(6, 4, 8, 0.5, 1), (5, 3, 6, 2.0, 1), (7, 5, 8, 0.2, 4),
                                                  (4, 2, 4, 1.0, 2)])
def test_expectation_matches_monte_carlo(L, H, d, gain, heads):
    mean, se = ag.monte_carlo_jacobian_sq(L, H, d, gain, 6000, seed=L * 100 + H, heads=heads)
    derived = ag.expected_jacobian_sq(L, H, gain, d)
    z = (mean - derived) / se
    assert np.all(np.abs(z) < 4.5), z  # 4.5 SE at every position: fails if any term is missing


def test_per_layer_gains_match_monte_carlo():
    """Unequal gains: draw each layer with its own scale and compare with e_r(g)."""
    L, H, d, n = 5, 3, 6, 8000
    gains = np.array([2.0, 0.5, 0.1])
    gen = torch.Generator().manual_seed(3)
    std = torch.tensor(np.sqrt(np.sqrt(gains) / d))[None, :, None, None]
    V = std * torch.randn(n, H, d, d, generator=gen, dtype=torch.float64)
    O = std * torch.randn(n, H, d, d, generator=gen, dtype=torch.float64)
    sq = T.linear_decoder_blocks(V @ O, torch.as_tensor(ag.cesaro_matrix(L))).pow(2).sum((-1, -2)).numpy()
    z = (sq.mean(0) - ag.expected_jacobian_sq(L, H, gains, d)) / (sq.std(0, ddof=1) / math.sqrt(n))
    assert np.all(np.abs(z) < 4.5), z


def test_paper_form_is_not_the_expectation():
    """gamma^H (N^H) sums path weights; the expectation sums their squares: at gain 1 the best
    paper-form fit misses by more than 20 % rms in ln rho and its alpha is not the jump weight."""
    truth = np.sqrt(ag.expected_jacobian_sq(512, 12, 1.0))
    fit = ag.fit_cesaro(truth, 12)
    assert fit.log_rmse > 0.2
    assert abs(fit.alpha.value - 0.5) > 0.1
    assert ag.spearman(truth, fit.theory) > 0.999  # and Spearman cannot tell


def test_elementary_symmetric_against_brute_force():
    g = [0.3, 2.0, 1.5, 0.7]
    e = T.elementary_symmetric(g)
    for r in range(len(g) + 1):
        assert e[r] == pytest.approx(sum(math.prod(c) for c in itertools.combinations(g, r)))
    np.testing.assert_allclose(T.elementary_symmetric([0.4] * 6), [math.comb(6, r) * 0.4**r for r in range(7)])


def test_log_cesaro_rows_are_exact_powers():
    L, H = 6, 4
    M = ag.cesaro_matrix_exact(L)
    rows = ag.log_cesaro_rows(L, H)
    for r in range(H + 1):
        exact = ag.matrix_power_exact(M, r)[-1]
        np.testing.assert_allclose(np.exp(rows[r]), [float(x) for x in exact], rtol=1e-13)


def test_corollary_monotone_and_last_entry():
    for gains in (0.3, [5.0, 1.0, 0.2, 0.1, 0.05]):
        H = 5
        e = ag.expected_jacobian_sq(64, H, gains, d=3)
        assert np.all(np.diff(e[:-1]) < 0)
        g = T._gains(H, gains)
        assert e[-1] == pytest.approx(3 * np.prod(1 + g / 64**2), rel=1e-12)


def test_linear_blocks_equal_autograd_jacobian():
    L, H, d = 4, 3, 3
    gen = torch.Generator().manual_seed(0)
    W = torch.randn(1, H, d, d, generator=gen, dtype=torch.float64)
    M = torch.as_tensor(ag.cesaro_matrix(L))

    def forward(h):
        for layer in range(H):
            h = h + M @ h @ W[0, layer]
        return h[-1]

    full = torch.autograd.functional.jacobian(forward, torch.randn(L, d, dtype=torch.float64))  # (d_out, L, d_in)
    G = T.linear_decoder_blocks(W, M)[0]  # (L, d_in, d_out): row-vector map
    np.testing.assert_allclose(G.permute(0, 2, 1).numpy(), full.permute(1, 0, 2).numpy(), rtol=1e-12, atol=1e-14)


def test_value_gain_and_layer_gains():
    assert ag.value_gain(896, 0.02) == pytest.approx((0.02**2 * 896) ** 2)
    np.testing.assert_allclose(ag.layer_gains(4, 2.0, 1.0), [2.0, 1.0, 2 / 3, 0.5])
    np.testing.assert_allclose(ag.layer_gains(3, 0.5), [0.5] * 3)


@pytest.mark.parametrize("call, name", [
    (lambda: T.elementary_symmetric([1.0, -0.1]), "gains"),
    (lambda: ag.expected_jacobian_sq(8, 3, [1.0, 2.0], 1), "gains"),
    (lambda: ag.monte_carlo_jacobian_sq(8, 2, 6, 1.0, 10, 0, heads=4), "heads"),
    (lambda: ag.layer_gains(0, 1.0), "H"),
])
def test_bad_inputs_name_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} = "):
        call()
