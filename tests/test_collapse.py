"""Rank collapse and LayerNorm dynamics: the theorems, checked numerically."""

import math

import numpy as np
import pytest
import torch

from attention_geometry.attention import masked_softmax
from attention_geometry.checkpoint import CheckpointStore
from attention_geometry.collapse import (
    Variant,
    attention_matrix,
    collapse_depth,
    collapse_runs,
    collapse_runs_loop,
    collapse_summary,
    fit_rate,
    has_rate,
    input_generator,
    log10_floored,
    last_finite,
    log10_growth,
    mean_log_spread,
    mu,
    mu_over_depth,
    orthogonal_factor,
    plateau_level,
    project_width,
    spread,
    standardise_tokens,
    theorem_bound,
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
from attention_geometry.attention import (
    block_causal_mask,
    causal_mask,
    complete_mask,
    mask_graph,
    one_sided_window_mask,
    sliding_window_mask,
)


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
    r = mu_over_depth(X0, mask, 60, seed=1, dtype=torch.float64)
    rel = r["mu"] / r["norm"]
    assert (rel[-1] < 1e-4 * rel[0]).all()
    rate = fit_rate(r["mu"], floor=1e-12)
    assert np.all(rate > 0.05)


def test_two_documents_do_not_collapse():
    # the theorem needs a quasi-strongly connected mask: two blocks keep two points apart
    m = block_causal_mask(8, 2)
    assert not mask_graph(m).quasi_strongly_connected
    X0 = standardise_tokens(torch.randn(4, 8, 6, generator=gen(), dtype=torch.float64))
    r = collapse_runs(X0, [Variant("docs", m)], 80, 1, dtype=torch.float64, values="orthogonal")
    rel = r.rel("docs")
    assert (rel[-1] > 0.05).all()
    # and each document has collapsed to one point: rank 2 up to rounding
    half = r.mu_attention[-1, 0]
    assert np.isfinite(half).all()


VARIANTS = [Variant("causal", causal_mask(6)), Variant("window", sliding_window_mask(6, 1), 0.5, True),
            Variant("skip", causal_mask(6), 1.0, True, True), Variant("complete", complete_mask(6), 2.0, skip=True)]


@pytest.mark.parametrize("kw", [{}, {"values": "orthogonal"}, {"n_heads": 2}, {"init_std": 0.3, "n_heads": 3}])
def test_batched_equals_loop(kw):
    X0 = standardise_tokens(torch.randn(3, 6, 6, generator=gen(), dtype=torch.float64))
    a = collapse_runs(X0, VARIANTS, 5, 4, dtype=torch.float64, **kw)
    b = collapse_runs_loop(X0, VARIANTS, 5, 4, dtype=torch.float64, **kw)
    for k in ["mu", "norm", "eps", "mu_attention"]:
        np.testing.assert_allclose(getattr(a, k), getattr(b, k), rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(a.spread0, b.spread0)


def test_networks_do_not_depend_on_chunking_and_runs_resume(tmp_path, monkeypatch):
    X0 = standardise_tokens(torch.randn(5, 6, 4, generator=gen(), dtype=torch.float64))
    plain = collapse_runs(X0, VARIANTS[:2], 6, 7, dtype=torch.float64)
    store = CheckpointStore(tmp_path)
    chunked = collapse_runs(X0, VARIANTS[:2], 6, 7, dtype=torch.float64, store=store, chunk=2)
    np.testing.assert_allclose(chunked.mu, plain.mu, rtol=1e-12)
    # a second run with the same key reads every chunk back: nothing is recomputed
    import attention_geometry.collapse as cl
    monkeypatch.setattr(cl, "_run_chunk", lambda *a, **k: pytest.fail("recomputed a stored chunk"))
    again = collapse_runs(X0, VARIANTS[:2], 6, 7, dtype=torch.float64, store=store, chunk=2)
    np.testing.assert_array_equal(again.mu, chunked.mu)
    # another input gets another network
    assert input_generator(7, 0).initial_seed() != input_generator(7, 1).initial_seed()


def test_pure_attention_part_and_orthogonal_values():
    X0 = standardise_tokens(torch.randn(3, 6, 4, generator=gen(), dtype=torch.float64))
    r = collapse_runs(X0, VARIANTS, 8, 2, dtype=torch.float64, values="orthogonal")
    # mu(Z) is tracked for pure attention only; with orthogonal W_V it equals mu(X)
    np.testing.assert_allclose(r.mu_attention[:, 0], r.mu[:, 0], rtol=1e-9)
    assert np.isnan(r.mu_attention[:, 1:]).all()
    Q = orthogonal_factor(torch.randn(5, 4, 4, generator=gen(), dtype=torch.float64))
    torch.testing.assert_close(Q @ Q.transpose(-1, -2), torch.eye(4, dtype=torch.float64).expand(5, 4, 4))


@pytest.mark.parametrize("mask", [complete_mask(8), causal_mask(8), sliding_window_mask(8, 1),
                                  one_sided_window_mask(8, 2)])
def test_theorem_bound_holds_on_runs(mask):
    """The collapse theorem with each run's own epsilon: mu(Z_t) <= sqrt(N) spread(X0) prod (1 - eps_b^r)."""
    X0 = standardise_tokens(torch.randn(6, 8, 5, generator=gen(3), dtype=torch.float64))
    r = collapse_runs(X0, [Variant("m", mask, temperature=0.05)], 40, 5, dtype=torch.float64)
    radius = mask_graph(mask).radius
    B = theorem_bound(r.eps[:, 0], radius, r.spread0, 8)
    assert (r.mu_attention[:, 0] <= B * (1 + 1e-12)).all()
    assert (np.diff(B, axis=0) <= 1e-12).all() and np.allclose(B[0], np.sqrt(8) * r.spread0)


def test_theorem_bound_by_hand():
    eps = np.full((6, 1), 0.5)
    B = theorem_bound(eps, 2, np.array([1.0]), 4)
    np.testing.assert_allclose(B[:, 0], 2 * np.array([1, 1, 0.75, 0.75, 0.75**2, 0.75**2, 0.75**3]))
    # epsilon^r below float64's resolution: a flat bound, not an error
    assert np.allclose(theorem_bound(np.full((4, 1), 1e-3), 64, np.array([1.0]), 4), 2.0)


def test_spread_bounds_mu():
    X = torch.randn(7, 9, 3, generator=gen(), dtype=torch.float64)
    assert (mu(X) <= np.sqrt(9) * spread(X) + 1e-12).all()
    assert float(spread(torch.tensor([[0.0, 0.0], [3.0, 4.0]], dtype=torch.float64))) == pytest.approx(5.0)


def test_summaries():
    t = np.arange(11)[:, None]
    rel = np.hstack([10.0 ** -t, np.full((11, 1), 0.5)])
    depth, reached = collapse_depth(rel, 1e-4)
    assert depth.tolist() == [5, 11] and reached.tolist() == [True, False]
    np.testing.assert_allclose(mean_log_spread(rel, floor=1e-6), [np.mean(np.maximum(-t[1:, 0], -6)), np.log10(0.5)])
    assert log10_floored(np.array([0.0]))[0] == pytest.approx(np.log10(1.4e-45), abs=0.01)
    grow = np.array([[1.0, 1.0], [10.0, 2.0], [np.inf, 4.0], [np.nan, 8.0]])
    np.testing.assert_allclose(log10_growth(grow), [1.0, np.log10(8.0)])
    np.testing.assert_array_equal(last_finite(grow), [10.0, 8.0])  # the value before the overflow
    np.testing.assert_allclose(plateau_level(np.array([1.0, 1e-3, 1e-5, 1e-5])), -5.0)


def test_project_width_keeps_geometry():
    X = torch.randn(2, 20, 64, generator=gen(), dtype=torch.float64)
    Y = project_width(X, 64, 0)
    assert Y is X
    Y = project_width(X, 16, 0)
    assert Y.shape == (2, 20, 16)
    # an orthonormal projection never lengthens a token
    assert (Y.norm(dim=-1) <= X.norm(dim=-1) + 1e-12).all()


def test_fit_rate_recovers_exponential():
    t = np.arange(40)[:, None]
    v = 3.0 * np.exp(-np.array([[0.1, 0.5]]) * t)
    np.testing.assert_allclose(fit_rate(v, floor=1e-9), [0.1, 0.5], rtol=1e-9)


def test_has_rate_separates_an_exponential_from_a_drop_to_the_floor():
    t = np.arange(41)[:, None]
    slow = np.exp(-0.5 * t) * np.ones((1, 4))  # 23 layers above 1e-5
    fast = np.exp(-(t.astype(float) ** 2)) * np.ones((1, 4))  # below 1e-5 after 4 layers
    slow_summary, fast_summary = collapse_summary(slow), collapse_summary(fast)
    assert has_rate(slow_summary["points"]) and not has_rate(fast_summary["points"])
    assert has_rate(fast_summary["points"], min_points=3)
    with pytest.raises(ValueError, match="min_points"):
        has_rate(slow_summary["points"], min_points=2)


def test_bad_inputs():
    X = torch.randn(2, 4, 3, generator=gen())
    with pytest.raises(ValueError, match="N = 4"):
        mu_over_depth(X, causal_mask(5), 2, 0)
    with pytest.raises(ValueError, match="boolean"):
        masked_softmax(torch.zeros(4, 4), np.ones((4, 4)))
    with pytest.raises(ValueError, match="n_layers"):
        mu_over_depth(X, causal_mask(4), 0, 0)
    with pytest.raises(ValueError, match="temperature"):
        mu_over_depth(X, causal_mask(4), 2, 0, temperature=-1.0)
    with pytest.raises(ValueError, match="n_heads"):
        mu_over_depth(X, causal_mask(4), 2, 0, n_heads=2)
    with pytest.raises(ValueError, match="self-loops"):
        Variant("no loops", ~np.eye(4, dtype=bool))
    with pytest.raises(ValueError, match="distinct labels"):
        collapse_runs(X, [Variant("a", causal_mask(4))] * 2, 2, 0)
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


def test_subnormals_are_flushed_only_during_a_run():
    X0 = standardise_tokens(torch.randn(2, 6, 4, generator=gen(), dtype=torch.float32))
    r = collapse_runs(X0, [Variant("c", causal_mask(6))], 80, 0, init_std=0.05)
    # the shrinking scale reaches exactly 0 (no subnormal tail), and the flag is off again
    assert (r.mu[-1] == 0).all()
    assert (torch.tensor([1e-20], dtype=torch.float32) * 1e-20).item() != 0.0


# ------------------------------------------------------------ the late rate (eq. rc-late-rate)

from attention_geometry.collapse import (  # noqa: E402
    fit_late_rate,
    late_collapse_rate,
    late_window_start,
    uniform_attention_matrix,
    uniform_attention_spectrum,
    uniform_collapse,
)


def _decay_per_layer(A, X, t):
    r"""-ln(mu(A^{t+1} X) / mu(A^t X)) in exact float64 matrix powers, without the rounding floor.

    With P = I - 11^T/L and A row-stochastic, P A P = P A, so P A^t X = (P A)^t P X: the
    deviation of A^t X from its mean token is a power of P A applied to P X. Iterating it with the
    norm divided out after each layer keeps the numbers at order 1 however small mu(A^t X) is.
    """
    L = A.shape[0]
    PA = (np.eye(L) - 1.0 / L) @ A
    D = X - X.mean(0)
    for _ in range(t):
        D = PA @ D
        D /= np.linalg.norm(D)
    return -np.log(np.linalg.norm(PA @ D))


def _relative_spread(Y):
    return np.linalg.norm(Y - Y.mean(0)) / np.linalg.norm(Y)


LATE_MASKS = {"causal": (causal_mask(12), np.log(2)), "one-sided w=1": (one_sided_window_mask(12, 1), np.log(2)),
              "one-sided w=3": (one_sided_window_mask(12, 3), np.log(2)),
              "window w=2": (sliding_window_mask(12, 2), None), "two documents": (block_causal_mask(12, 2), 0.0)}


@pytest.mark.parametrize("name", list(LATE_MASKS))
def test_the_late_rate_is_the_decay_of_exact_matrix_powers(name):
    mask, closed = LATE_MASKS[name]
    A = uniform_attention_matrix(mask)
    np.testing.assert_allclose(A.sum(1), 1.0)
    assert (A[~mask] == 0).all()
    rate = late_collapse_rate(mask)
    if closed is not None:  # triangular masks: lambda_2 = 1/2 exactly; two documents: 1 twice
        assert rate == pytest.approx(closed, abs=1e-15)
    X = np.random.default_rng(0).standard_normal((12, 5))
    # the relative spread of A^t X itself, at depths where it is far above the float64 floor
    t = 40 if name != "window w=2" else 150
    powers = [_relative_spread(np.linalg.matrix_power(A, s) @ X) for s in (t, t + 1)]
    assert powers[1] > 1e-10 * powers[0] or rate == 0.0
    if name in ("causal", "window w=2", "two documents"):
        assert -np.log(powers[1] / powers[0]) == pytest.approx(rate, abs=1e-6)
    # and exactly, without the floor: the one-sided window's Jordan block needs many layers (a
    # polynomial onset), the two-sided window's next eigenvalue lies close to lambda_2
    deep = {"one-sided w=3": 600, "window w=2": 2000}.get(name, 200)
    if name != "one-sided w=1":
        assert _decay_per_layer(A, X, deep) == pytest.approx(rate, abs=1e-9)


def test_a_jordan_block_at_lambda_2_delays_the_late_rate_polynomially():
    # one-sided w = 1: lambda_2 = 1/2 repeated L - 1 times in one Jordan block of size k = L - 1, so
    # mu(A^t X) ~ C(t, k-1) 2^-t and the decay per layer is ln 2 - ln((t+1)/(t-k+2)) -> ln 2
    L = 12
    mask = one_sided_window_mask(L, 1)
    A = uniform_attention_matrix(mask)
    assert np.linalg.matrix_rank(A - 0.5 * np.eye(L)) == L - 1 and np.sum(np.diag(A) == 0.5) == L - 1
    assert late_collapse_rate(mask) == pytest.approx(np.log(2), abs=1e-15)
    # exact integer arithmetic: 2A is an integer matrix and A^t x = (2A)^t x / 2^t (float64 iterations
    # would see the block's pseudospectrum: rounding splits a block of size k by about eps^(1/k))
    M = (2 * A).round().astype(int).tolist()
    y = [int(v) for v in np.random.default_rng(0).integers(-100, 100, L)]

    def log_mu(v):  # ln mu(v) for an integer vector, from L^2 mu^2 = L sum v^2 - (sum v)^2 (exact)
        return 0.5 * (math.log(L * sum(a * a for a in v) - sum(v) ** 2) - 2 * math.log(L))

    k, logs = L - 1, {}
    for t in range(1, 3002):
        y = [sum(m * a for m, a in zip(row, y)) for row in M]
        if t in (1000, 1001, 3000, 3001):
            logs[t] = log_mu(y) - t * math.log(2)
    for t in (1000, 3000):
        # the leading term of the polynomial onset, up to the next one's O(1/t^2)
        assert logs[t] - logs[t + 1] == pytest.approx(np.log(2) - np.log((t + 1) / (t - k + 2)), abs=50 / t ** 2)


def test_one_sided_windows_repeat_an_eigenvalue_in_one_jordan_block():
    # 1/(w+1) appears L - w times on the diagonal, and A - I/(w+1) has rank L - 1: one block of size L - w
    L, w = 12, 3
    A = uniform_attention_matrix(one_sided_window_mask(L, w))
    lam = 1.0 / (w + 1)
    assert np.sum(np.isclose(np.diag(A), lam)) == L - w
    assert np.linalg.matrix_rank(A - lam * np.eye(L)) == L - 1
    # the spectrum is the diagonal, exactly (a repeated eigenvalue in a Jordan block is ill-conditioned)
    np.testing.assert_array_equal(uniform_attention_spectrum(one_sided_window_mask(L, w)), np.sort(np.diag(A))[::-1])


@pytest.mark.parametrize("mask", [sliding_window_mask(9, 2), complete_mask(7), causal_mask(7) | causal_mask(7).T,
                                  block_causal_mask(9, 3)])
def test_the_spectrum_matches_a_general_eigensolver_where_it_is_well_conditioned(mask):
    A = uniform_attention_matrix(mask)
    np.testing.assert_allclose(uniform_attention_spectrum(mask), np.sort(np.abs(np.linalg.eigvals(A)))[::-1], atol=1e-12)


def test_a_strongly_connected_asymmetric_mask_goes_to_the_general_solver():
    m = causal_mask(6) | np.eye(6, k=5, dtype=bool)  # token 0 also reads token 5: one cycle
    A = uniform_attention_matrix(m)
    np.testing.assert_allclose(uniform_attention_spectrum(m), np.sort(np.abs(np.linalg.eigvals(A)))[::-1], atol=1e-12)


def test_the_complete_mask_collapses_in_one_uniform_layer():
    m = complete_mask(10)
    assert late_collapse_rate(m) == np.inf
    X = np.random.default_rng(1).standard_normal((10, 4))
    assert _relative_spread(uniform_attention_matrix(m) @ X) < 1e-14
    curve = uniform_collapse(m, X, 5)
    assert (late_window_start(curve, np.inf) == 6)


def test_two_documents_collapse_fully_when_they_start_with_the_same_token():
    # eigenvalue 1 twice: each document collapses to its first token; equal first tokens, one point
    m = block_causal_mask(12, 2)
    X = np.random.default_rng(2).standard_normal((12, 4))
    A = uniform_attention_matrix(m)
    apart = _relative_spread(np.linalg.matrix_power(A, 60) @ X)
    assert apart > 0.05
    X[6] = X[0]  # each document's first token sees only itself: the two limit points coincide exactly
    r = [_relative_spread(np.linalg.matrix_power(A, s) @ X) for s in (30, 31)]
    assert -np.log(r[1] / r[0]) == pytest.approx(np.log(2), abs=1e-4)  # the next eigenvalue, 1/2


def test_uniform_collapse_is_mu_of_matrix_powers():
    m = sliding_window_mask(8, 1)
    X = torch.randn(3, 8, 4, generator=gen(), dtype=torch.float64)
    curve = uniform_collapse(m, X, 6)
    A = uniform_attention_matrix(m)
    expect = np.stack([[np.linalg.norm((Y := np.linalg.matrix_power(A, t) @ x.numpy()) - Y.mean(0)) for x in X]
                       for t in range(7)])
    np.testing.assert_allclose(curve, expect, rtol=1e-12)


def test_late_window_start_and_fit_late_rate_on_known_curves():
    t = np.arange(41, dtype=np.float64)
    # decays at 0.2 for 10 layers, then at the late rate 0.5: the late line starts from v_0 at layer 10 * 0.3/0.5
    logv = np.where(t < 10, -0.2 * t, -2.0 - 0.5 * (t - 10))
    v = np.exp(logv)[:, None] * np.array([1.0, 3.0])
    start = late_window_start(v, 0.5)
    np.testing.assert_array_equal(start, [10, 10])
    fit = fit_late_rate(v, start)
    np.testing.assert_allclose(fit["rate"], 0.5)
    np.testing.assert_allclose(fit["onset"], 6.0)
    np.testing.assert_array_equal(fit["points"], [31, 31])
    # the floor ends the window; too few layers give no rate
    short = fit_late_rate(v, start, floor=np.exp(-6.0))
    np.testing.assert_array_equal(short["points"], [8, 8])
    assert np.isnan(fit_late_rate(v, 36)["rate"]).all()
    # a curve that has not settled within its depth has no window
    assert late_window_start(v, 0.9)[0] == 41
    with pytest.raises(ValueError):
        late_collapse_rate(np.ones((3, 3), dtype=bool) & ~np.eye(3, dtype=bool))


def _gpt2_by_hand(model, ids, layernorm):
    """GPT-2's forward pass written out from its weights (pre-LN blocks, causal softmax, tanh GELU)."""
    n = ids.shape[1]
    X = model.wte.weight[ids[0]] + model.wpe.weight[:n]
    ln = (lambda m, x: torch.nn.functional.layer_norm(x, x.shape[-1:], m.weight, m.bias, m.eps)) if layernorm \
        else (lambda m, x: x)
    out = [X]
    for b in model.h:
        H = b.attn.num_heads
        q, k, v = (ln(b.ln_1, X) @ b.attn.c_attn.weight + b.attn.c_attn.bias).split(X.shape[-1], dim=-1)
        q, k, v = (t.reshape(n, H, -1).transpose(0, 1) for t in (q, k, v))
        s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        s = s.masked_fill(~torch.tril(torch.ones(n, n, dtype=torch.bool)), float("-inf"))
        a = (torch.softmax(s, -1) @ v).transpose(0, 1).reshape(n, -1)
        X = X + a @ b.attn.c_proj.weight + b.attn.c_proj.bias
        h = ln(b.ln_2, X) @ b.mlp.c_fc.weight + b.mlp.c_fc.bias
        h = 0.5 * h * (1 + torch.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h ** 3)))
        X = X + h @ b.mlp.c_proj.weight + b.mlp.c_proj.bias
        out.append(X)
    out[-1] = ln(model.ln_f, out[-1])
    return torch.stack(out)


@pytest.mark.parametrize("layernorm", [False, True])
def test_public_config_collapse_is_gpt2_by_hand(layernorm):
    """Two blocks of the public configuration, in float64: mu over the depth equals mu of a hand-run
    of GPT-2's blocks from the same weights, with and without LayerNorm; the weights do not depend on
    ``layernorm``; and the relative mu is mu over the Frobenius norm."""
    from attention_geometry.collapse import _public_model, public_config_collapse

    got = public_config_collapse(2, 16, 2, 6, 3, layernorm=layernorm, dtype=torch.float64)
    model, ids = _public_model(2, 16, 2, 6, 3, layernorm)
    with torch.no_grad():
        X = _gpt2_by_hand(model.to(torch.float64), ids, layernorm)
    assert got.shape == (2, 3)
    np.testing.assert_allclose(got[0], mu(X).numpy(), rtol=1e-10)
    np.testing.assert_allclose(got[1], (mu(X) / torch.linalg.vector_norm(X, dim=(-2, -1))).numpy(), rtol=1e-10)
    other, _ = _public_model(2, 16, 2, 6, 3, not layernorm)
    assert torch.equal(model.h[1].mlp.c_fc.weight.float(), other.h[1].mlp.c_fc.weight)
    assert isinstance(model.ln_f, torch.nn.Identity) != layernorm
