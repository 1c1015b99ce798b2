"""LayerNorm dynamics (chapter 5): the steps of proofs (a) and (c), centring, basins, layer geometry."""

import numpy as np
import pytest
import torch

from attention_geometry.attention import causal_mask, complete_mask, masked_softmax, sliding_window_mask
from attention_geometry.checkpoint import CheckpointStore
from attention_geometry.ln_dynamics import (
    centred_lift,
    check_proof_a,
    classify_2x2,
    counterexample_wv,
    equilibria_2x2,
    gnomonic,
    gnomonic_weights,
    hemisphere_inputs,
    iterate_ln,
    layer_geometry,
    ln_step,
    numerical_rank,
    random_orthogonal,
    rank_construction_wv,
    rank_k_equilibria,
    ranks_reached,
    to_unit_sphere,
    token2_residual,
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
