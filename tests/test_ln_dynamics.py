"""LayerNorm dynamics (chapter 5): the steps of proofs (a) and (c), centring, basins, layer geometry."""

import numpy as np
import pytest
import torch

from attention_geometry.attention import causal_mask, complete_mask, masked_softmax, sliding_window_mask
from attention_geometry.checkpoint import CheckpointStore
from attention_geometry.ln_dynamics import (
    centred_lift,
    chain_spectrum,
    chain_wv,
    check_proof_a,
    classify_2x2,
    counterexample_wv,
    equilibria_2x2,
    equilibrium_stability,
    gnomonic,
    gnomonic_weights,
    hemisphere_inputs,
    iterate_ln,
    jacobian_2x2,
    layer_geometry,
    ln_step,
    ln_step_jacobian,
    numerical_rank,
    random_orthogonal,
    rank_construction_wv,
    rank_k_equilibria,
    ranks_reached,
    stable_chain,
    stable_rank_construction,
    tangent_eigenvalues,
    to_unit_sphere,
    token2_residual,
    transient_growth,
)


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_gnomonic_chart_turns_the_step_into_an_average():
    """Eq. le-gnomonic: gnomonic(normalise(A Z)) = B gnomonic(Z), B row-stochastic, B >= A min h."""
    Z, v = hemisphere_inputs(5, 7, 4, gen(), return_pole=True)
    S = torch.randn(5, 7, 7, generator=gen(1), dtype=torch.float64) * 3
    for mask in [complete_mask(7), causal_mask(7), sliding_window_mask(7, 1)]:
        A = masked_softmax(S, mask)
        Z1 = to_unit_sphere(A @ Z)
        B = gnomonic_weights(A, Z, v)
        torch.testing.assert_close(gnomonic(Z1, v), B @ gnomonic(Z, v), rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(B.sum(-1), torch.ones(5, 7, dtype=torch.float64))
        h = (Z * v[:, None]).sum(-1).amin(-1)
        assert (B >= A * h[:, None, None] - 1e-15).all()
        assert (B[:, ~torch.as_tensor(mask)] == 0).all()


def test_proof_a_steps_hold_along_runs():
    X0, v = hemisphere_inputs(8, 6, 4, gen(2), return_pole=True)
    W = random_orthogonal(4, gen(3))
    for s in [0.1, 5.0]:
        W_QK = torch.randn(4, 4, generator=gen(4), dtype=torch.float64) * s
        r = check_proof_a(X0, W, causal_mask(6), 120, W_QK, v)
        assert r["chart_residual"] < 1e-12
        assert (np.diff(r["heights"], axis=0) >= -1e-12).all()  # the hemisphere is invariant
        assert (r["spread"][-1] < 1e-9 * r["spread"][0]).all()  # the charted tokens contract


def test_nonnegative_cosines_imply_a_hemisphere_but_not_conversely():
    X = to_unit_sphere(torch.rand(50, 6, 5, generator=gen(), dtype=torch.float64))  # positive orthant
    assert ((X @ X.transpose(-1, -2)) >= 0).all()
    v = X.sum(-2)
    assert ((X * v[:, None]).sum(-1) >= 1 - 1e-12).all()
    # the converse fails: two tokens in one hemisphere with an obtuse angle
    a = np.deg2rad(50)
    Y = torch.tensor([[np.cos(a), np.sin(a)], [np.cos(a), -np.sin(a)]])
    assert (Y @ torch.tensor([1.0, 0.0], dtype=Y.dtype) > 0).all() and float(Y[0] @ Y[1]) < 0


def test_hemisphere_inputs_with_negative_cosines_collapse():
    X0 = hemisphere_inputs(16, 8, 4, gen(5))
    assert ((X0 @ X0.transpose(-1, -2)).amin((-2, -1)) < 0).float().mean() > 0.5
    W = random_orthogonal(4, gen(6))
    _, m = iterate_ln(X0, W, complete_mask(8), 150, torch.randn(4, 4, generator=gen(7), dtype=torch.float64))
    assert (m[-1] < 1e-8).all()


def test_centred_lift_is_exact():
    W = torch.randn(3, 3, generator=gen(), dtype=torch.float64).numpy()
    Wl, U = centred_lift(W)
    np.testing.assert_allclose(U @ U.T, np.eye(3), atol=1e-14)
    np.testing.assert_allclose(U.sum(1), 0, atol=1e-14)
    Y = to_unit_sphere(torch.randn(4, 5, 3, generator=gen(1), dtype=torch.float64))
    mask = causal_mask(5)
    lifted = ln_step(Y @ torch.tensor(U), torch.tensor(Wl), mask, centre=True)
    torch.testing.assert_close(lifted, ln_step(Y, torch.tensor(W), mask) @ torch.tensor(U), rtol=1e-12, atol=1e-12)


def test_centring_caps_the_rank_at_d_minus_1():
    W = torch.randn(4, 4, generator=gen(), dtype=torch.float64)
    X, _ = iterate_ln(torch.randn(20, 6, 4, generator=gen(1), dtype=torch.float64), W, causal_mask(6), 3,
                      centre=True)
    assert (X.sum(-1).abs() < 1e-12).all() and (numerical_rank(X) <= 3).all()


def test_counterexample_lifts_to_centred_layernorm_in_d3():
    E = equilibria_2x2()
    x = np.stack([np.cos(E), np.sin(E)], -1)
    Wl, U = centred_lift(counterexample_wv())
    X = torch.tensor(x @ U)
    torch.testing.assert_close(ln_step(X, torch.tensor(Wl), causal_mask(2), centre=True), X, atol=1e-12, rtol=0)
    assert sorted(set(numerical_rank(X).tolist())) == [1, 2]
    r = ranks_reached(Wl, 2, 400, 200, gen(), centre=True)
    assert 0.01 < (r == 2).mean() < 0.5


def test_basin_labels_and_token2_residual():
    E = equilibria_2x2()
    lab = classify_2x2(E)
    assert (lab == 0).sum() == 2 and (lab == 2).sum() == len(E) - 2
    # token 2's equilibria with token 1 at e_1 are the zeros of the residual
    on_e1 = E[np.abs(E[:, 0]) < 1e-12, 1]
    np.testing.assert_allclose(token2_residual(on_e1), 0, atol=1e-12)
    assert classify_2x2(np.array([0.3, 0.3 + np.pi])) == 1


@pytest.mark.parametrize("n, d, k", [(5, 3, 2), (6, 4, 3), (4, 4, 1)])
def test_proof_c_later_tokens_keep_sigma_k_growing(n, d, k):
    """The repaired step of proof (c): for tokens after the k-th, |sigma_k| never decreases."""
    for X in rank_k_equilibria(rank_construction_wv(n, d), n, k):
        S = np.cumsum(X, axis=0)[:, k - 1]  # sigma_k after each token
        assert S[k - 1] != 0
        assert (np.diff(np.abs(S[k - 1:])) >= -1e-12).all()
        assert (np.sign(X[k:, k - 1]) == np.sign(S[k - 1])).all()


def test_layer_geometry_chunks_and_resumes(tmp_path):
    ids = torch.arange(5 * 6).reshape(5, 6)
    table = torch.randn(64, 4, generator=gen(), dtype=torch.float64)

    def states(x):
        h = table[x]
        return [h, h.cumsum(1)]

    whole = layer_geometry(states, ids, chunk=5)
    store = CheckpointStore(tmp_path)
    parts = layer_geometry(states, ids, chunk=2, store=store, key={"model": "toy"})
    for k in whole:
        np.testing.assert_allclose(parts[k], whole[k])
        assert whole[k].shape == (2, 5)
    again = layer_geometry(lambda x: pytest.fail("recomputed"), ids, chunk=2, store=store, key={"model": "toy"})
    np.testing.assert_allclose(again["rel_mu"], whole["rel_mu"])


# ------------------------------------------------------------ linearised stability


def _tangent_fd(X, W, mask, W_QK, centre, h=1e-6):
    """Central differences of one ln_step along an orthonormal tangent basis (built independently of the library)."""
    n, d = X.shape
    step = lambda Z: ln_step(Z[None], W, mask, W_QK, centre)[0]

    def basis(x):
        cons = [x / np.linalg.norm(x)] + ([np.ones(d) / np.sqrt(d)] if centre else [])
        Q = np.linalg.qr(np.column_stack(cons + [np.eye(d)]))[0]
        return Q[:, len(cons):d]

    B_in = [basis(x) for x in X.numpy()]
    B_out = [basis(y) for y in step(X).numpy()]
    m = B_in[0].shape[1]
    J = np.zeros((n * m, n * m))
    for j in range(n):
        for b in range(m):
            E = torch.zeros_like(X)
            E[j] = torch.tensor(B_in[j][:, b])
            diff = ((step(X + h * E) - step(X - h * E)) / (2 * h)).numpy()
            for i in range(n):
                J[i * m:(i + 1) * m, j * m + b] = B_out[i].T @ diff[i]
    return J, B_in, B_out


@pytest.mark.parametrize("centre", [False, True])
@pytest.mark.parametrize("mask", ["causal", "complete"])
def test_ln_step_jacobian_matches_central_differences(centre, mask):
    """Away from any equilibrium, with attention that depends on the tokens: the spectra (basis-free) and the
    matrix itself in the same bases up to each basis vector's sign."""
    g = gen(11)
    n, d = 4, 5
    X = to_unit_sphere(torch.randn(1, n, d, generator=g, dtype=torch.float64))[0]
    if centre:
        X = to_unit_sphere((X - X.mean(-1, keepdim=True))[None])[0]
    W = torch.randn(d, d, generator=g, dtype=torch.float64)
    W_QK = torch.randn(d, d, generator=g, dtype=torch.float64)
    m = causal_mask(n) if mask == "causal" else complete_mask(n)
    J = ln_step_jacobian(X, W, m, W_QK, centre=centre).numpy()
    J_fd, _, _ = _tangent_fd(X, W, m, W_QK, centre)
    assert J.shape == J_fd.shape == (n * (d - 1 - centre),) * 2
    # the bases are orthonormal, so singular values do not depend on them
    np.testing.assert_allclose(np.linalg.svd(J, compute_uv=False), np.linalg.svd(J_fd, compute_uv=False),
                               rtol=1e-7, atol=1e-8)


def test_stability_of_the_counterexample_against_its_angle_jacobian():
    """Eigenvalues 2/5 and 1/2 at the rank-2 equilibrium, 2 at the unstable ones (jacobian_2x2, central differences)."""
    E = equilibria_2x2()
    x = np.stack([np.cos(E), np.sin(E)], -1)
    W = counterexample_wv()
    for e, xe in zip(E, x):
        ours = np.sort(np.abs(np.linalg.eigvals(ln_step_jacobian(xe, W, causal_mask(2)).numpy())))
        np.testing.assert_allclose(ours, np.sort(np.abs(np.linalg.eigvals(jacobian_2x2(e)))), atol=1e-7)
    rho = equilibrium_stability(x, W, causal_mask(2))
    k = np.argmin(np.abs(E - [0.0, np.arctan2(0.6, -0.8)]).sum(1))
    assert rho[k] == pytest.approx(0.5, abs=1e-12)
    np.testing.assert_allclose(np.sort(np.abs(np.linalg.eigvals(ln_step_jacobian(x[k], W, causal_mask(2)).numpy()))),
                               [0.4, 0.5], atol=1e-12)
    assert sorted(set(np.round(rho, 9).tolist())) == [0.5, 2.0]
    # the block-by-block eigenvalues are the whole matrix's
    for xe, ev in zip(x, tangent_eigenvalues(x, W, causal_mask(2))):
        whole = np.linalg.eigvals(ln_step_jacobian(xe, W, causal_mask(2)).numpy())
        np.testing.assert_allclose(np.sort_complex(ev), np.sort_complex(whole), atol=1e-12)
    # the same after the lift to centred LayerNorm in d = 3
    Wl, U = centred_lift(W)
    np.testing.assert_allclose(equilibrium_stability(x @ U, Wl, causal_mask(2), centre=True), rho, atol=1e-9)


def test_equilibrium_stability_needs_an_equilibrium():
    X = to_unit_sphere(torch.randn(3, 2, generator=gen(), dtype=torch.float64)[None])[0]
    with pytest.raises(ValueError, match="an equilibrium"):
        equilibrium_stability(X, counterexample_wv(), causal_mask(3))


@pytest.mark.parametrize("n, d", [(3, 3), (6, 4)])
def test_every_equilibrium_of_construction_c_is_unstable(n, d):
    """Token 1 sits at e_1, the eigenvector of the smallest eigenvalue 1: its block has q^(j-1), largest q^(d-1)."""
    W = rank_construction_wv(n, d)
    q = W[1, 1]
    for k in range(1, min(n, d) + 1):
        X = rank_k_equilibria(W, n, k)
        np.testing.assert_allclose(equilibrium_stability(X, W, causal_mask(n)), q ** (d - 1), rtol=1e-9)


def test_the_chain_is_an_equilibrium_with_the_predicted_spectrum():
    """eq. le-chain: any independent unit tokens and positive c; the eigenvalues of every token's block are
    chain_spectrum's (generic X and c: distinct eigenvalues, compared as multisets)."""
    g = np.random.default_rng(3)
    for k in (2, 3, 4):
        X = g.normal(size=(k, k))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        c = np.sort(g.uniform(0.3, 2.0, k))[::-1]
        W = chain_wv(X, c)
        S = np.cumsum(X, 0)
        np.testing.assert_allclose(S @ W, c[:, None] * X, atol=1e-12)  # (S_{i-1} + x_i) W = c_i x_i
        J = ln_step_jacobian(X, W, causal_mask(k)).numpy()
        pred = chain_spectrum(X @ X.T, c)
        m = k - 1
        for i in range(k):
            got = np.linalg.eigvals(J[i * m:(i + 1) * m, i * m:(i + 1) * m])
            np.testing.assert_allclose(np.sort_complex(got), np.sort_complex(pred[i]), rtol=1e-8, atol=1e-10)
        for i in range(k):  # block lower-triangular
            assert np.abs(J[i * m:(i + 1) * m, (i + 1) * m:]).max(initial=0) < 1e-12


def test_the_counterexample_is_the_chain_with_c_1_and_one_half():
    X = np.array([[1.0, 0.0], [-0.8, 0.6]])
    np.testing.assert_allclose(chain_wv(X, [1.0, 0.5]), counterexample_wv(), atol=1e-15)
    pred = chain_spectrum(X @ X.T, [1.0, 0.5])
    np.testing.assert_allclose(np.abs(np.concatenate(pred)), [0.5, 0.4], atol=1e-15)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6])
def test_stable_chain_has_spectral_radius_rho(k):
    W, X, c = stable_chain(k)
    rho = 1 - 1 / (2 * k * k)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0, atol=1e-14)
    assert np.linalg.eigvalsh(X @ X.T).min() > 0.3  # well inside the positive-definite cone
    np.testing.assert_allclose(c, rho ** np.arange(k), rtol=1e-15)
    if k > 1:
        pred = np.abs(np.concatenate(chain_spectrum(X @ X.T, c)))
        assert pred.max() == pytest.approx(rho, abs=1e-6)
        assert equilibrium_stability(X, W, causal_mask(k)) == pytest.approx(rho, abs=1e-9)


def test_stable_chain_needs_a_large_enough_rho():
    with pytest.raises(ValueError, match="positive definite"):
        stable_chain(4, 0.5)
    with pytest.raises(ValueError, match="rho"):
        stable_chain(3, 1.0)


@pytest.mark.parametrize("n, d", [(6, 4), (5, 3)])
def test_stable_equilibria_of_every_rank(n, d):
    for k in range(1, min(n, d) + 1):
        W, X = stable_rank_construction(n, d, k)
        assert numerical_rank(torch.tensor(X)) == k
        rho = equilibrium_stability(X, W, causal_mask(n))  # raises unless X is fixed
        assert rho == pytest.approx(1 - 1 / (2 * k * k) if k > 1 else 0.5, abs=1e-9)
        if k <= 3:  # a small perturbation returns: asymptotic stability seen directly (at rank 4 the transient
            # growth of the linearisation, about 1e7, throws out all but far smaller perturbations)
            Y0 = to_unit_sphere(torch.tensor(X)[None] + 1e-7 * torch.randn(1, n, d, generator=gen(k), dtype=torch.float64))
            Y, _ = iterate_ln(Y0, W, causal_mask(n), 2000)
            assert (Y[0] - torch.tensor(X)).abs().max() < 1e-9
        # and with centring, after the lift to d + 1
        Wl, U = centred_lift(W)
        # (a repeated eigenvalue within a block is resolved to about the square root of the rounding error)
        assert equilibrium_stability(X @ U, Wl, causal_mask(n), centre=True) == pytest.approx(rho, abs=1e-6)


def test_transient_growth_of_a_jordan_block():
    """J = [[a, b], [0, a]]: J^t = [[a^t, t a^(t-1) b], [0, a^t]], whose 2-norm is (|q| + sqrt(q^2 + 4 p^2)) / 2."""
    a, b, n = 0.9, 3.0, 60
    t = np.arange(n + 1)
    p, q = a ** t, t * a ** np.maximum(t - 1, 0) * b
    exact = ((np.abs(q) + np.sqrt(q ** 2 + 4 * p ** 2)) / 2).max()
    assert transient_growth(np.array([[a, b], [0.0, a]]), n) == pytest.approx(exact, rel=1e-12)
    assert transient_growth(np.diag([0.5, -0.9]), n) == 1.0  # a normal contraction never amplifies


@pytest.mark.parametrize("norm", ["layernorm", "none"])
def test_tiny_decoder_residual_stream(norm):
    """Block inputs as attention_inputs records them, then the last block's output, which ln_f and the
    tied embedding turn into the logits."""
    from attention_geometry.models import tiny_decoder as td

    model = td.TinyDecoder(td.TinyDecoderConfig(max_len=64, norm=norm), 0)
    ids = torch.randint(0, 256, (2, 10), generator=gen())
    stream = td.tiny_residual_stream(model, ids)
    assert len(stream) == model.config.n_layers + 1 and stream[0].shape == (2, 10, model.config.d)
    for s, r in zip(stream, td.attention_inputs(model, ids)):
        np.testing.assert_allclose(s.double().numpy(), r["residual"])
    with torch.no_grad():
        torch.testing.assert_close(model.ln_f(stream[-1]) @ model.embed.weight.T, model(ids))
