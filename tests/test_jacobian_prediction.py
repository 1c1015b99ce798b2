"""The per-position prediction of the profile (``eq-jac-predicted``): the recursion against the
closed form of ``eq-jac-expected``, the SwiGLU gain against Monte Carlo, and the measured mean
squares against the input."""

import math

import numpy as np
import pytest
import torch

import attention_geometry as ag


@pytest.mark.parametrize("L,H", [(6, 1), (9, 3), (16, 5)])
def test_constant_norms_give_the_theorem(L, H):
    ms = np.linspace(0.5, 2.0, H)[:, None] * np.ones((H, L))
    pred = ag.predicted_profile_sq(ms, 0.3)
    np.testing.assert_allclose(pred, ag.expected_jacobian_sq(L, H, 0.3 / ms[:, 0]), rtol=1e-10)


def test_constant_mlp_norm_is_a_uniform_factor():
    L, H = 12, 3
    ms, mlp_ms = np.ones((H, L)), np.full((H, L), 2.0)
    base, with_mlp = ag.predicted_profile_sq(ms, 0.4), ag.predicted_profile_sq(ms, 0.4, mlp_ms, 0.6)
    np.testing.assert_allclose(with_mlp / base, (1 + 0.6 / 2.0) ** H, rtol=1e-10)


def test_position_dependent_norms_against_monte_carlo():
    """Exact Jacobians of the linear model with per-position normalisation ``1/r_l(k)``."""
    L, H, d, n = 5, 3, 6, 4000
    rng = np.random.default_rng(1)
    ms = rng.uniform(0.5, 2.0, (H, L))
    g, sd = 0.5, math.sqrt(math.sqrt(0.5) / d)  # (sd^2 d)^2 = g for square W_V, W_O
    M = ag.cesaro_matrix(L)
    gen = torch.Generator().manual_seed(0)
    acc = []
    for _ in range(n):
        J = torch.zeros(L * d, L * d, dtype=torch.float64)
        J += torch.eye(L * d, dtype=torch.float64)
        for l in range(H):
            W = (torch.randn(d, d, generator=gen, dtype=torch.float64) * sd) @ \
                (torch.randn(d, d, generator=gen, dtype=torch.float64) * sd)
            A = torch.as_tensor(M / np.sqrt(ms[l])[None, :])
            layer = torch.eye(L * d, dtype=torch.float64) + torch.kron(A, W.T.contiguous())  # column form: block (i,k) = A_ik W^T
            J = layer @ J
        last = J[(L - 1) * d:, :].reshape(d, L, d)
        acc.append(last.pow(2).sum((0, 2)).numpy() / d)
    acc = np.array(acc)
    z = (acc.mean(0) - ag.predicted_profile_sq(ms, g)) / (acc.std(0, ddof=1) / math.sqrt(n))
    assert np.abs(z).max() < 4


@pytest.mark.parametrize("shared", [True, False])
def test_the_mlp_step_off_the_diagonal_against_monte_carlo(shared):
    """The MLP step of eq-jac-predicted with per-position norms: an MLP whose Jacobian is one matrix
    at every position (``shared``) is the recursion at ``mlp_cross = 1``; Jacobians drawn
    independently per position are ``mlp_cross = 0``. The attention steps before and after it put
    weight off the diagonal, so the two differ, and each is tested where it is exact."""
    L, H, d, n = 4, 2, 6, 4000
    rng = np.random.default_rng(5)
    ms, mlp_ms = rng.uniform(0.5, 2.0, (H, L)), rng.uniform(0.5, 2.0, (H, L))
    g, gm = 0.6, 0.8
    sd, sdm = math.sqrt(math.sqrt(g) / d), math.sqrt(math.sqrt(gm) / d)  # (sd^2 d)^2 = gain
    M = ag.cesaro_matrix(L)
    gen = torch.Generator().manual_seed(3)

    def product(s):
        return (torch.randn(d, d, generator=gen, dtype=torch.float64) * s) @ \
            (torch.randn(d, d, generator=gen, dtype=torch.float64) * s)

    acc = []
    for _ in range(n):
        J = torch.eye(L * d, dtype=torch.float64)
        for l in range(H):
            W = product(sd)
            J = (torch.eye(L * d, dtype=torch.float64) + torch.kron(torch.as_tensor(M / np.sqrt(ms[l])[None, :]),
                                                                     W.T.contiguous())) @ J
            V = product(sdm)
            blocks = [(V if shared else product(sdm)).T / math.sqrt(mlp_ms[l, k]) for k in range(L)]
            J = (torch.eye(L * d, dtype=torch.float64) + torch.block_diag(*blocks)) @ J
        last = J[(L - 1) * d:, :].reshape(d, L, d)
        acc.append(last.pow(2).sum((0, 2)).numpy() / d)
    acc = np.array(acc)
    se = acc.std(0, ddof=1) / math.sqrt(n)
    right = ag.predicted_profile_sq(ms, g, mlp_ms, gm, mlp_cross=1.0 if shared else 0.0)
    wrong = ag.predicted_profile_sq(ms, g, mlp_ms, gm, mlp_cross=0.0 if shared else 1.0)
    assert np.abs((acc.mean(0) - right) / se).max() < 4
    assert np.abs((acc.mean(0) - wrong) / se).max() > 6  # the test can tell the two steps apart


def test_mlp_gain_against_monte_carlo():
    d, dff, sd, n = 16, 40, 0.15, 3000
    gen = torch.Generator().manual_seed(2)
    vals = []
    for _ in range(n):
        Wg, Wu = (torch.randn(dff, d, generator=gen, dtype=torch.float64) * sd for _ in range(2))
        Wd = torch.randn(d, dff, generator=gen, dtype=torch.float64) * sd
        x = torch.randn(d, generator=gen, dtype=torch.float64)
        x = x / x.pow(2).mean().sqrt()
        u = torch.randn(d, generator=gen, dtype=torch.float64)
        u = u - (u @ x) / (x @ x) * x
        u = u / u.norm()
        f = lambda v: Wd @ (torch.nn.functional.silu(Wg @ v) * (Wu @ v))
        Ju = torch.autograd.functional.jvp(f, x, u)[1]
        vals.append(float(Ju.pow(2).sum()))
    vals = np.array(vals)
    z = (vals.mean() - ag.mlp_gain(d, sd, dff)) / (vals.std(ddof=1) / math.sqrt(n))
    assert abs(z) < 4


def test_gelu_mlp_gain_against_monte_carlo():
    """GPT-2's MLP (tanh GELU, output scaled like its c_proj): the gain over Gaussian matrices
    and inputs, Monte Carlo within 4 standard errors of the closed form."""
    d, dff, sd, out, n = 16, 64, 0.2, 0.07, 3000
    gen = torch.Generator().manual_seed(3)
    vals = []
    for _ in range(n):
        Wi = torch.randn(dff, d, generator=gen, dtype=torch.float64) * sd
        Wo = torch.randn(d, dff, generator=gen, dtype=torch.float64) * out
        x = torch.randn(d, generator=gen, dtype=torch.float64)
        x = x / x.pow(2).mean().sqrt()
        u = torch.randn(d, generator=gen, dtype=torch.float64)
        u = u - (u @ x) / (x @ x) * x
        u = u / u.norm()
        f = lambda v: Wo @ torch.nn.functional.gelu(Wi @ v, approximate="tanh")
        vals.append(float(torch.autograd.functional.jvp(f, x, u)[1].pow(2).sum()))
    vals = np.array(vals)
    z = (vals.mean() - ag.gelu_mlp_gain(d, sd, dff, out)) / (vals.std(ddof=1) / math.sqrt(n))
    assert abs(z) < 4
    assert ag.gelu_mlp_gain(d, sd, dff) == pytest.approx(ag.gelu_mlp_gain(d, sd, dff, sd))


def test_residual_mean_square_reads_the_input_first():
    m = ag.build_decoder("qwen2", 3, 16, 2, 1, context=8, seed=0)
    X = ag.random_embeddings(m, 8, 1, n=2)
    attn, mlp = ag.residual_mean_square(m, X)
    assert attn.shape == mlp.shape == (3, 2, 8)
    np.testing.assert_allclose(attn[0], X.double().pow(2).mean(-1).numpy(), rtol=1e-6)
    assert np.all(mlp > 0)


def test_a_stand_in_keeps_the_papers_embeddings_and_so_its_first_layer_gain():
    """The stand-in scale sigma_s = 0.02 sqrt(896/d) keeps sigma^2 d; embeddings of RMS 0.02 (not
    sigma_s) also keep the first layer's gain (sigma_s^2 d)^2 / 0.02^2 = 0.02^2 * 896^2."""
    d = 64
    s = ag.standin_init_std(d)
    assert ag.standin_embedding_std(0.02) is None and ag.standin_embedding_std(s) == 0.02
    m = ag.build_decoder("qwen2", 2, d, 4, 2, context=32, init_std=s, seed=0, embedding_std=0.02)
    own = ag.random_embeddings(ag.build_decoder("qwen2", 2, d, 4, 2, context=32, init_std=s, seed=0), 32, 1, n=8)
    kept = ag.random_embeddings(m, 32, 1, n=8)
    torch.testing.assert_close(kept, own * (0.02 / s))
    gpt = ag.build_decoder("gpt2", 1, d, 4, context=32, init_std=s, seed=0, embedding_std=0.02)
    assert gpt.wpe.weight.std().item() == pytest.approx(0.02, rel=0.1)  # positions as large as the tokens
    ms = ag.residual_mean_square(m, kept)[0][0].mean()  # what layer 1's norm divides by
    assert ms == pytest.approx(0.02**2, rel=0.1)
    assert ag.value_gain(d, s) / ms == pytest.approx(0.02**2 * 896**2, rel=0.1)
    with pytest.raises(ValueError, match="embedding_std"):
        ag.build_decoder("qwen2", 2, d, 4, 2, context=32, embedding_std=0.0)


@pytest.mark.parametrize("cosine", [0.0, 0.6])
def test_mlp_cross_fraction_against_monte_carlo(cosine):
    """The SwiGLU's gain between two positions, tr(J_k^T J_m)/d over weight draws, as a fraction of its
    gain at one position, for inputs of RMS 1 with the given cosine."""
    d, dff, n = 64, 128, 400
    sd = math.sqrt(0.5 / d)  # s^2 = sd^2 d = 0.5
    gen = torch.Generator().manual_seed(7)
    e1, e2 = torch.zeros(d, dtype=torch.float64), torch.zeros(d, dtype=torch.float64)
    e1[0], e2[1] = 1.0, 1.0
    xk, xm = math.sqrt(d) * e1, math.sqrt(d) * (cosine * e1 + math.sqrt(1 - cosine**2) * e2)

    def jac(Wg, Wu, Wd, x):
        g, u = Wg @ x, Wu @ x
        sig = torch.sigmoid(g)
        slope = sig * (1 + g * (1 - sig))
        return Wd @ ((slope * u)[:, None] * Wg + (g * sig)[:, None] * Wu)

    cross, diag = [], []
    for _ in range(n):
        Wg, Wu = (torch.randn(dff, d, generator=gen, dtype=torch.float64) * sd for _ in range(2))
        Wd = torch.randn(d, dff, generator=gen, dtype=torch.float64) * sd
        Jk, Jm = jac(Wg, Wu, Wd, xk), jac(Wg, Wu, Wd, xm)
        cross.append(float((Jk * Jm).sum()) / d)
        diag.append(float((Jk * Jk).sum()) / d)
    cross, diag = np.array(cross), np.array(diag)
    assert diag.mean() == pytest.approx(ag.mlp_gain(d, sd, dff), rel=0.05)
    c = ag.mlp_cross_fraction(d, sd, cosine)
    se = cross.std(ddof=1) / math.sqrt(n) / diag.mean()
    assert abs(cross.mean() / diag.mean() - c) < 4 * se + 0.01
    assert ag.mlp_cross_fraction(d, sd, 1.0) == pytest.approx(1.0)


def test_cross_fractions_per_pair_interpolate_and_reduce_to_the_scalar_step():
    d, sd = 64, ag.standin_init_std(64)
    r = np.array([-0.9, -0.3, 0.0, 0.17, 0.55, 0.99])
    exact = np.array([ag.mlp_cross_fraction(d, sd, x) for x in r])
    np.testing.assert_allclose(ag.mlp_cross_fractions(d, sd, r), exact, atol=1e-4)
    L, H = 7, 3
    rng = np.random.default_rng(2)
    ms, mlp_ms = rng.uniform(0.5, 2, (H, L)), rng.uniform(0.5, 2, (H, L))
    for c in (0.0, 0.4, 1.0):
        np.testing.assert_allclose(ag.predicted_profile_sq(ms, 0.5, mlp_ms, 0.7, mlp_cross=np.full((H, L, L), c)),
                                   ag.predicted_profile_sq(ms, 0.5, mlp_ms, 0.7, mlp_cross=c), rtol=1e-12)
    with pytest.raises(ValueError, match="mlp_cross"):
        ag.predicted_profile_sq(ms, 0.5, mlp_ms, 0.7, mlp_cross=np.ones((H, L, L - 1)))


def test_mlp_input_cosines_are_one_on_the_diagonal():
    m = ag.build_decoder("qwen2", 2, 16, 2, 1, context=8, seed=0)
    cos = ag.mlp_input_cosines(m, ag.random_embeddings(m, 8, 1, n=3))
    assert cos.shape == (2, 8, 8) and cos.dtype == np.float32
    np.testing.assert_allclose(np.diagonal(cos, axis1=1, axis2=2), 1.0, atol=1e-6)
    np.testing.assert_allclose(cos, np.swapaxes(cos, 1, 2), atol=1e-6)


def test_gelu_cross_fraction_against_monte_carlo():
    """GPT-2's MLP shares much of its gain between positions whose inputs are at right angles."""
    d, dff, n, cosine = 64, 128, 400, 0.0
    sd = math.sqrt(0.5 / d)
    gen = torch.Generator().manual_seed(8)
    xk = torch.zeros(d, dtype=torch.float64)
    xm = torch.zeros(d, dtype=torch.float64)
    xk[0], xm[1] = math.sqrt(d), math.sqrt(d)
    cross, diag = [], []
    for _ in range(n):
        Win = torch.randn(dff, d, generator=gen, dtype=torch.float64) * sd
        Wout = torch.randn(d, dff, generator=gen, dtype=torch.float64) * sd
        slope = [torch.func.jacrev(torch.nn.functional.gelu)(Win @ x).diagonal() for x in (xk, xm)]
        Jk, Jm = (Wout @ (s[:, None] * Win) for s in slope)
        cross.append(float((Jk * Jm).sum()) / d)
        diag.append(float((Jk * Jk).sum()) / d)
    cross, diag = np.array(cross), np.array(diag)
    c = ag.mlp_cross_fraction(d, sd, cosine, activation="gelu")
    assert c > 0.5 > 5 * ag.mlp_cross_fraction(d, sd, cosine)  # far above the SwiGLU's
    assert abs(cross.mean() / diag.mean() - c) < 4 * cross.std(ddof=1) / math.sqrt(n) / diag.mean() + 0.01
    with pytest.raises(ValueError, match="activation"):
        ag.mlp_cross_fraction(d, sd, 0.0, activation="relu")


def test_the_pooled_prediction_pools_every_draws_sequences_before_predicting():
    rng = np.random.default_rng(3)
    H, L = 3, 7
    per_draw = [(rng.uniform(0.5, 2.0, (H, n, L)), rng.uniform(0.5, 2.0, (H, n, L))) for n in (2, 5)]
    attention = np.concatenate([a for a, _ in per_draw], 1).mean(1)  # 7 sequences, each weighed once
    mlp = np.concatenate([m for _, m in per_draw], 1).mean(1)
    pooled = ag.pooled_mean_squares(per_draw)
    assert np.allclose(pooled[0], attention) and np.allclose(pooled[1], mlp)
    for cross in (1.0, 0.0, 0.4):
        assert np.allclose(ag.predicted_profile(per_draw, 0.3, 0.2, cross) ** 2,
                           ag.predicted_profile_sq(attention, 0.3, mlp, 0.2, mlp_cross=cross))
    gains = ag.mean_layer_gains(per_draw, 0.3, 0.2)
    assert np.allclose(gains[0], (0.3 / attention).mean(1)) and np.allclose(gains[1], (0.2 / mlp).mean(1))
    with pytest.raises(ValueError, match="per_draw"):
        ag.pooled_mean_squares([])
