"""Recency chapter: the simulation against its identities, the closed forms
against high-precision arithmetic, and argument validation."""

import math
from decimal import Decimal, getcontext

import numpy as np
import pytest
import torch

from attention_geometry.recency import simulation as rec, theory as th

getcontext().prec = 80


# ------------------------------------------------------------------ helpers


def _dec_exp(x):
    return Decimal(x).exp()


def _dec_layer2(d, n, alpha, gamma, residual):
    """S^(2) for i > j straight from the derivation in a, b, D (no rescaling), 80 digits."""
    d, alpha, gamma = Decimal(d), Decimal(alpha), Decimal(gamma)
    sd = d.sqrt()
    a, b = _dec_exp(sd), _dec_exp(sd * alpha)
    r = gamma / (d * (1 - alpha)).sqrt() if residual == "input" else gamma
    D = [a + (i - 1) * b for i in range(1, n + 1)]
    # coefficients of x_i^(1) on y_1..y_i and the limiting Gram <y_k, y_l>/d = (1-alpha) delta + alpha
    coef = [[(a / D[i] + r) if k == i else b / D[i] for k in range(i + 1)] for i in range(n)]

    def gram(i, j):
        s = sum(coef[i][k] * coef[j][k] for k in range(min(i, j) + 1))
        return (1 - alpha) * s + alpha * sum(coef[i]) * sum(coef[j])

    out = np.full((n, n), np.nan)
    for i in range(n):
        for j in range(i + 1):
            out[i, j] = float(sd * gram(i, j) / (gram(i, i) * gram(j, j)).sqrt())
    return out


# ------------------------------------------------------------ closed forms


@pytest.mark.parametrize("d", [4, 16, 64, 256])
def test_theorem1_matches_its_formula_in_high_precision(d):
    n = 8
    a = _dec_exp(Decimal(d).sqrt())
    S = th.theorem1_scores(d, n)
    for i in range(2, n + 1):
        for j in range(1, i):
            exact = Decimal(d).sqrt() * (a + j - 1) / ((a * a + i - 1) * (a * a + j - 1)).sqrt()
            assert S[i - 1, j - 1] == pytest.approx(float(exact), rel=1e-13)
    assert np.allclose(np.diag(S), math.sqrt(d)) and np.isnan(S[0, 1])


@pytest.mark.parametrize("d, alpha, gamma", [(16, 0.0, 0.0), (64, 0.5, 0.0), (64, 0.5, 1.0),
                                             (36, 0.3, 0.7), (256, 0.8, 1.0), (9, 0.1, 2.0)])
@pytest.mark.parametrize("residual", ["input", "normalised"])
def test_layer2_closed_form_matches_high_precision_derivation(d, alpha, gamma, residual):
    ours = th.layer2_scores(d, 7, alpha, gamma, residual)
    exact = _dec_layer2(d, 7, alpha, gamma, residual)
    assert np.allclose(ours, exact, rtol=1e-12, atol=0, equal_nan=True)


def test_corrected_form_reduces_to_theorem1():
    for d in (4, 64, 400):
        assert np.allclose(th.layer2_scores(d, 9), th.theorem1_scores(d, 9), rtol=1e-14, equal_nan=True)


@pytest.mark.parametrize("d, alpha, gamma", [(64, 0.0, 0.0), (64, 0.5, 1.0), (25, 0.2, 0.5), (256, 0.7, 1.0)])
def test_paper_h_is_our_h_with_the_normalised_residual(d, alpha, gamma):
    """Eq. 41 as printed, in 80 digits, is 1/||x_j|| with residual weight r = gamma."""
    D_, al, ga = Decimal(d), Decimal(alpha), Decimal(gamma)
    a, b = _dec_exp(D_.sqrt()), _dec_exp(D_.sqrt() * al)
    j = np.arange(1, 9)
    printed = []
    for jj in j:
        Dj = a + (int(jj) - 1) * b
        inner = (Dj * Dj * (ga * ga + 2 * al * ga + al) + Dj * (1 - al) * (2 * ga * a + b)
                 + (1 - al) * (a * a - a * b))
        printed.append(float(Dj / (D_.sqrt() * inner.sqrt())))
    assert np.allclose(th.paper_h(j, d, alpha, gamma), printed, rtol=1e-13)
    # ... and S^(2) of the 'normalised' residual is g(i) h(j) with that h
    S = th.layer2_scores(d, 9, alpha, gamma, "normalised")
    h = th.paper_h(np.arange(1, 10), d, alpha, gamma)
    row = S[8, :8] / h[:8]
    assert np.allclose(row, row[0], rtol=1e-12)
    # our h belongs to the 'input' residual in the same way
    S = th.layer2_scores(d, 9, alpha, gamma, "input")
    row = S[8, :8] / th.corrected_h(np.arange(1, 9), d, alpha, gamma)
    assert np.allclose(row, row[0], rtol=1e-12)


@pytest.mark.parametrize("d, alpha, gamma", [(64, 0.0, 0.0), (1024, 0.0, 0.0), (1024, 0.5, 1.0), (4096, 0.2, 0.0)])
def test_profile_and_contrast_have_no_cancellation(d, alpha, gamma):
    """log h(j) - log h(1) and the contrast stay accurate where float64 differences are all rounding."""
    n = 10
    a, b = _dec_exp(Decimal(d).sqrt()), _dec_exp(Decimal(d).sqrt() * Decimal(alpha))
    r = Decimal(gamma) / (Decimal(d) * (1 - Decimal(alpha))).sqrt()
    al = Decimal(alpha)

    def norm2(j):
        D = a + (j - 1) * b
        q = (a / D + r) ** 2 + (j - 1) * b * b / (D * D)
        return (1 - al) * q + al * (1 + r) ** 2

    exact = [float((norm2(1) / norm2(j)).ln() / 2) for j in range(1, n + 1)]
    got = th.layer2_log_profile(d, n, alpha, gamma)
    assert got[0] == 0.0
    assert np.allclose(got[1:], exact[1:], rtol=1e-10, atol=0)
    assert np.all(np.diff(got) > 0)  # recency: h increasing in j
    contrast = th.layer2_contrast(d, n, alpha, gamma)
    assert contrast > 0


def test_mean_field_equals_the_closed_forms():
    for d, alpha, gamma in [(64, 0.0, 0.0), (64, 0.5, 1.0), (16, 0.8, 0.3)]:
        mf = th.mean_field_scores(d, 8, alpha, gamma, "layernorm", 2)
        assert np.allclose(mf[1], th.layer2_scores(d, 8, alpha, gamma), rtol=1e-12, equal_nan=True)
    mf = th.mean_field_scores(64, 8, 0.0, 0.0, "none", 2)
    assert np.allclose(mf[1], th.no_ln_layer2_scores(64, 8), rtol=1e-12, equal_nan=True)


def test_no_ln_rows_are_flat_and_the_paper_value_is_tiny():
    S = th.no_ln_layer2_scores(64, 10)
    for i in range(1, 10):
        assert np.allclose(S[i, :i], S[i, 0])  # Proposition 1: no key is preferred
    assert S[1, 0] == pytest.approx(1 / (8 * (math.exp(1 / 8) + 1)))
    assert np.all(th.paper_no_ln_layer2_scores(64, 10) < S[:, 0] / 30)


# -------------------------------------------------------------- simulation


def test_gram_path_equals_token_path_on_the_same_inputs():
    gen = torch.Generator().manual_seed(3)
    for norm, gamma in [("layernorm", 0.0), ("layernorm", 1.0), ("rmsnorm", 0.5), ("none", 1.0)]:
        X = rec.inputs(64, 6, 32, 0.4, generator=gen, dtype=torch.float64)
        K = rec.gram_of(X, norm)
        for _ in range(4):
            X, S_tok, A_tok = rec.decoder_layer(X, norm=norm, gamma=gamma)
            K, S_gram, A_gram = rec.gram_layer(K, d=32, norm=norm, gamma=gamma)
            assert torch.allclose(S_tok, S_gram, atol=1e-10, rtol=1e-10)
            assert torch.allclose(A_tok, A_gram, atol=1e-12)


def test_attention_rows_are_causal_and_stochastic():
    gen = torch.Generator().manual_seed(0)
    X = rec.inputs(16, 7, 24, 0.3, generator=gen)
    _, _, A = rec.decoder_layer(X)
    _, _, A2 = rec.gram_layer(rec.gram_of(X), d=24)
    for a in (A, A2):
        assert torch.allclose(a.sum(-1), torch.ones(16, 7))
        assert torch.all(a.triu(1) == 0) and torch.all(a >= 0)


@pytest.mark.parametrize("norm", ["layernorm", "none"])
def test_wishart_draws_have_the_inputs_law(norm):
    """Mean and variance of the Gram entries: Bartlett draws against token-space draws."""
    d, n, alpha, N = 12, 5, 0.4, 40_000
    K = rec.input_gram(N, n, d, alpha, norm=norm, rng=np.random.default_rng(1), dtype=torch.float64)
    X = rec.inputs(N, n, d, alpha, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    K2 = rec.gram_of(X, norm)
    for k in (K, K2):
        assert torch.allclose(k, k.transpose(-1, -2))
    m1, m2 = K.mean(0), K2.mean(0)
    se = torch.sqrt(K.var(0) / N + K2.var(0) / N)
    assert torch.all((m1 - m2).abs() < 5 * se)
    assert torch.allclose(K.var(0), K2.var(0), rtol=0.06)
    # singular case, d - 1 < n
    K = rec.input_gram(10, 8, 4, 0.0, rng=np.random.default_rng(0), dtype=torch.float64)
    assert torch.linalg.matrix_rank(K[0]) == 3


def test_layer1_diagonal_is_sqrt_d_and_off_diagonal_means_are_uniform():
    st = rec.simulate_recency(rec.RecencyModel(64, 8, 0.0, n_layers=2), n_samples=20_000, seed=0)
    assert np.allclose(np.diag(st.scores[0]), 8.0, atol=1e-5)
    assert np.allclose(np.diag(st.scores[1]), 8.0, atol=1e-5)
    off = st.scores[0][np.tril_indices(8, -1)]
    se = st.scores_se[0][np.tril_indices(8, -1)]
    assert np.all(np.abs(off) < 5 * se)  # mean 0 at alpha = 0, every pair alike
    st = rec.simulate_recency(rec.RecencyModel(64, 8, 0.5, n_layers=1), n_samples=20_000, seed=0)
    off = st.scores[0][np.tril_indices(8, -1)]
    # E S_ij = sqrt(d) alpha to leading order; uniform across pairs within the standard error
    assert abs(off.mean() - 4.0) < 0.05 and np.ptp(off) < 8 * st.scores_se[0][1, 0]


def test_no_ln_layer2_matches_corrected_proposition1():
    st = rec.simulate_recency(rec.RecencyModel(64, 10, 0.0, norm="none", n_layers=2), n_samples=20_000, seed=4)
    cf = th.no_ln_layer2_scores(64, 10)
    lower = np.tril_indices(10, -1)
    assert np.allclose(st.scores[1][lower], cf[lower], rtol=0.02)


def test_layer2_closed_form_close_to_monte_carlo_at_alpha_half():
    st = rec.simulate_recency(rec.RecencyModel(64, 10, 0.5, 1.0, n_layers=2), n_samples=20_000, seed=5)
    cf = th.layer2_scores(64, 10, 0.5, 1.0)
    paper = th.layer2_scores(64, 10, 0.5, 1.0, "normalised")
    lower = np.tril_indices(10, -1)
    assert np.max(np.abs(st.scores[1][lower] - cf[lower])) < 0.05
    assert np.max(np.abs(st.scores[1][lower] - paper[lower])) > 0.1  # the paper's residual scale is off


@pytest.mark.parametrize("alpha, norm", [(0.0, "layernorm"), (0.6, "layernorm"), (0.3, "none")])
def test_recency_probability_is_one_half_at_layer_1(alpha, norm):
    st = rec.simulate_recency(rec.RecencyModel(32, 6, alpha, 1.0, norm, n_layers=1), n_samples=20_000, seed=7)
    assert abs(st.rp[0] - 0.5) < 4 * st.rp_se[0]
    assert 0 < st.rp_se[0] < 0.01


def test_recency_probability_rises_with_anisotropy():
    st = rec.simulate_recency(rec.RecencyModel(64, 10, 0.5, n_layers=3), n_samples=5_000, seed=1)
    assert st.rp[1] > 0.5 + 10 * st.rp_se[1] and st.rp[2] > st.rp[1]


def test_recency_fraction_counts_triples_and_ties():
    S = torch.zeros(1, 4, 4)
    S[0, 3, :3] = torch.tensor([1.0, 2.0, 3.0])  # query 4: strictly increasing, 3 pairs win
    S[0, 2, :2] = torch.tensor([5.0, 5.0])  # query 3: one tie
    assert len(rec.triples(4)[0]) == 4
    assert rec.recency_fraction(S).item() == pytest.approx((3 + 0.5) / 4)


def test_contrast_and_ratio_standard_errors():
    st = rec.simulate_recency(rec.RecencyModel(64, 6, 0.5, n_layers=2), n_samples=4_000, seed=2)
    w = np.zeros(6)
    w[0] = 1.0
    m, se = st.contrast(2, 6, w)
    assert m == pytest.approx(st.scores[1, 5, 0]) and se == pytest.approx(st.scores_se[1, 5, 0])
    ratio, se_ratio = st.ratio(2, 6, 5, 1)
    assert ratio == pytest.approx(st.scores[1, 5, 4] / st.scores[1, 5, 0]) and 0 < se_ratio < 0.01


def test_fixed_seed_is_bit_reproducible_and_chunking_is_bounded():
    model = rec.RecencyModel(d=1024, n=10, alpha=0.3, gamma=1.0, n_layers=3)
    kw = dict(n_samples=3_000, seed=11, chunk_size=700)
    a, b = rec.simulate_recency(model, **kw), rec.simulate_recency(model, **kw)
    assert np.array_equal(a.scores, b.scores) and np.array_equal(a.rp, b.rp)
    assert not np.array_equal(a.scores, rec.simulate_recency(model, **{**kw, "seed": 12}).scores)
    t = rec.simulate_recency(model, **{**kw, "method": "tokens", "n_samples": 600, "chunk_size": 128})
    assert t.n_samples == 600 and np.allclose(np.diag(t.scores[0]), 32.0, atol=1e-4)


# -------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        (dict(alpha=1.0), "alpha = 1.0"),
        (dict(alpha=-0.1), "alpha = -0.1"),
        (dict(alpha=float("nan")), "alpha = nan"),
        (dict(d=0), "d = 0"),
        (dict(d=-4), "d = -4"),
        (dict(n=2), "n = 2"),
        (dict(gamma=-1.0), "gamma = -1.0"),
        (dict(norm="batch"), "norm = 'batch'"),
        (dict(n_layers=0), "n_layers = 0"),
        (dict(n_samples=1), "n_samples = 1"),
    ],
)
def test_bad_arguments_name_the_argument_value_and_range(kwargs, fragment):
    model, run = dict(d=16, n=5, alpha=0.0), dict(n_samples=10)
    (run if "n_samples" in kwargs else model).update(kwargs)
    with pytest.raises(ValueError) as err:
        rec.simulate_recency(rec.RecencyModel(**model), **run)
    assert fragment in str(err.value) and "allowed:" in str(err.value)


def test_the_model_is_validated_once_normalised_and_kept_with_its_statistics():
    model = rec.RecencyModel(np.int64(16), 5, 0, gamma=1, n_layers=2)
    assert (model.d, model.alpha, model.gamma) == (16, 0.0, 1.0) and isinstance(model.alpha, float)
    with pytest.raises(AttributeError):
        model.d = 32  # frozen: a model is a value
    st = rec.simulate_recency(model, n_samples=10, seed=0)
    assert st.model == model
    with pytest.raises(TypeError, match=r"model = 16 has the wrong type int; allowed: a RecencyModel"):
        rec.simulate_recency(16, 5, 0.0)  # the model's numbers go into a RecencyModel


def test_closed_forms_validate_too():
    with pytest.raises(ValueError, match=r"alpha = 1\.5 .*\[0, 1\)"):
        th.layer2_scores(64, 10, 1.5)
    with pytest.raises(ValueError, match=r"n = 2 .*>= 3"):
        th.theorem1_scores(64, 2)
    with pytest.raises(ValueError, match=r"d = 0"):
        th.paper_h([1, 2], 0, 0.0, 0.0)
    with pytest.raises(ValueError, match="residual"):
        th.residual_weight(64, 0.0, 1.0, "post")


# --------------------------------------------------- the missing factor (issue 13)


@pytest.mark.parametrize("alpha, gamma", [(0.5, 0.0), (0.5, 1.0), (0.0, 0.0), (0.3, 1.0)])
def test_first_order_expansion_leaves_a_second_order_remainder(alpha, gamma):
    """S^(2)_nj - (sqrt(d) g_nj + U_n(j) + T_n(j)) is O(rho^2): relative to the first-order
    part it is O(rho), and falls as rho falls with d."""
    n, ratios = 8, []
    for d in (36, 144):
        K = rec.input_gram(2000, n, d, alpha, rng=np.random.default_rng(0), dtype=torch.float64)
        K1, _, A1 = rec.gram_layer(K, d=d, gamma=gamma)
        _, S2, _ = rec.gram_layer(K1, d=d, gamma=gamma)
        base, U, T = rec.first_order_layer2(K, A1, d=d, gamma=gamma)
        exact = S2[:, -1, :-1]
        ratio = ((exact - base - U - T).abs().mean() / (exact - base).abs().mean()).item()
        rho = math.exp(-math.sqrt(d) * (1 - alpha))
        assert ratio < 3 * (n - 1) * rho
        ratios.append(ratio)
    assert ratios[1] < ratios[0] / 5


@pytest.mark.parametrize("alpha", [0.0, 0.5])
def test_first_layer_controls_have_mean_zero(alpha):
    d, n, N = 36, 10, 60_000
    K = rec.input_gram(N, n, d, alpha, rng=np.random.default_rng(1), dtype=torch.float64)
    _, S, A = rec.gram_layer(K, d=d, gamma=1.0)
    X = rec.layer1_controls(K, S, A, d=d, alpha=alpha, gamma=1.0).numpy()
    assert X.shape == (N, len(rec.control_names(alpha)))
    z = X.mean(0) / (X.std(0) / math.sqrt(N))
    assert np.all(np.abs(z) < 4.5)
    if alpha > 0:  # T_n(n-1) carries the recency itself when alpha > 0: not a control there
        _, U, T = rec.first_order_layer2(K, A, d=d, gamma=1.0)
        t = T[:, n - 2].numpy()
        assert t.mean() / (t.std() / math.sqrt(N)) > 10


def test_control_variate_contrast_agrees_with_the_plain_mean_and_is_far_sharper():
    st = rec.simulate_recency(rec.RecencyModel(64, 10, 0.0, n_layers=2), n_samples=30_000, seed=3, dtype=torch.float64)
    plain, cv = st.contrast_estimate(2, None), st.contrast_estimate(2, "all")
    m, se = st.recency_contrast(2)
    assert plain.value == pytest.approx(m) and plain.se == pytest.approx(se, rel=1e-6)
    assert abs(plain.value - cv.value) < 4 * plain.se
    assert cv.se < plain.se / 1000 and cv.value > 10 * cv.se  # the theorem's sign, resolved
    one = st.contrast_estimate(2, ("score",))
    assert cv.se < one.se < plain.se
    with pytest.raises(ValueError, match="controls"):
        st.contrast_estimate(2, ("nonsense",))


@pytest.mark.parametrize("statistic", ["score", "fraction"])
def test_gram_and_token_paths_give_the_same_law_of_a_nonlinear_statistic(statistic):
    """Two-sample Kolmogorov-Smirnov test, Gram path against token path, of a nonlinear
    function of the inputs: S^(2)_{n,1} (LN, softmax, LN again) or the recency fraction F."""
    from scipy.stats import ks_2samp

    d, n, alpha, N = 16, 6, 0.4, 6000

    def draw(method, a=alpha):
        if method == "gram":
            K = rec.input_gram(N, n, d, a, rng=np.random.default_rng(5), dtype=torch.float64)
            K, _, _ = rec.gram_layer(K, d=d, gamma=1.0)
            _, S, _ = rec.gram_layer(K, d=d, gamma=1.0)
        else:
            X = rec.inputs(N, n, d, a, generator=torch.Generator().manual_seed(6), dtype=torch.float64)
            X, _, _ = rec.decoder_layer(X, gamma=1.0)
            _, S, _ = rec.decoder_layer(X, gamma=1.0)
        return S[:, n - 1, 0].numpy() if statistic == "score" else rec.recency_fraction(S).numpy()

    gram, tokens = draw("gram"), draw("tokens")
    assert ks_2samp(gram, tokens).pvalue > 1e-3
    assert ks_2samp(gram, draw("tokens", a=0.2)).pvalue < 1e-6  # the test has power


@pytest.mark.parametrize("d, alpha", [(16, 0.0), (64, 0.5), (256, 0.8)])
def test_mean_first_layer_weight_matches_monte_carlo(d, alpha):
    grid = np.linspace(-0.999, 0.999, 40_001)
    dens = np.exp(th.cosine_log_density(grid, d, alpha))
    assert np.trapezoid(dens, grid) == pytest.approx(1.0, abs=1e-4)
    K = rec.input_gram(300_000, 3, d, alpha, rng=np.random.default_rng(7), dtype=torch.float64)
    _, S, _ = rec.gram_layer(K, d=d)
    w = torch.exp(S[:, 1, 0] - math.sqrt(d) * alpha).numpy()
    m1 = th.mean_first_layer_weight(d, alpha)
    assert abs(w.mean() - m1) < 4 * w.std() / math.sqrt(w.size)


def test_contrast_factor_tends_to_its_limit():
    for alpha in (0.0, 0.5):
        gaps = [abs(th.contrast_factor(d, 10, alpha) - th.contrast_factor_limit(alpha)) for d in (256, 1024, 16384)]
        assert gaps[0] > gaps[1] > gaps[2]
        assert gaps[2] < (1e-3 if alpha == 0 else 0.01)
    assert th.contrast_factor_limit(0.0) == pytest.approx(math.e)
    assert th.contrast_factor_limit(0.5) == pytest.approx(math.exp(0.75**2 / 2))
    # the adjusted form is the limit form with rho scaled by the mean weight
    assert th.layer2_contrast(64, 10, 0.5, weights="mean") > th.layer2_contrast(64, 10, 0.5)
    with pytest.raises(ValueError, match="weights"):
        th.layer2_scores(64, 10, 0.5, weights="median")


@pytest.mark.parametrize("alpha, dims, dtype", [(0.5, (64, 1024), torch.float32), (0.0, (64, 256), torch.float64)])
def test_adjusted_closed_form_converges_to_monte_carlo_and_the_paper_does_not(alpha, dims, dtype):
    gaps = []
    for d in dims:
        st = rec.simulate_recency(rec.RecencyModel(d, 10, alpha, n_layers=2), n_samples=30_000, seed=8, dtype=dtype)
        est = st.contrast_estimate(2)
        adjusted, paper = th.layer2_contrast(d, 10, alpha, weights="mean"), th.layer2_contrast(d, 10, alpha)
        gaps.append((abs(est.value / adjusted - 1), est.se / adjusted))
        # the paper's closed form misses by a factor of order the limit, by many standard errors
        assert abs(est.value / paper - 1) > 20 * est.se / paper
    (g0, s0), (g1, s1) = gaps
    assert g1 < g0 - 4 * math.hypot(s0, s1)  # the adjusted form's error shrinks as d grows
    assert g1 < 0.05


def test_simulation_resumes_from_its_checkpoint_with_the_same_numbers(tmp_path):
    from attention_geometry.checkpoint import CheckpointStore

    model = rec.RecencyModel(d=32, n=6, alpha=0.3, gamma=1.0, n_layers=2)
    kw = dict(n_samples=5000, seed=4, chunk_size=500, checkpoint_every=2)
    whole = rec.simulate_recency(model, **kw)

    class Stop(Exception):
        pass

    def stop_after_five(done, total):
        if done == 5:
            raise Stop

    store = CheckpointStore(tmp_path)
    with pytest.raises(Stop):
        rec.simulate_recency(model, **kw, store=store, progress=stop_after_five)
    assert list(tmp_path.glob("recency-simulation-*.pt"))
    seen = []
    again = rec.simulate_recency(model, **kw, store=store, progress=lambda done, total: seen.append(done))
    assert seen[0] == 5  # chunks 1-4 came from the checkpoint
    assert np.array_equal(whole.scores, again.scores) and np.array_equal(whole.z_cov, again.z_cov)
    assert np.array_equal(whole.rp, again.rp)


def test_heatmap_limits_follow_the_authors_rule():
    from attention_geometry.figures.recency import heatmap_limits

    S = np.tril(np.full((4, 4), 0.5)) + np.diag(np.full(4, 7.5)) + np.tril(np.arange(16.0).reshape(4, 4) / 100, -1)
    S[np.triu_indices(4, 1)] = np.nan
    S[2, 2] += 1e-7  # float noise on an equal diagonal does not count as distinct
    lo, hi = heatmap_limits(S, "paper")
    assert lo == pytest.approx(0.54) and hi == pytest.approx(0.5 + 0.14)  # the diagonal is above the scale
    S[np.diag_indices(4)] = [1.0, 2.0, 3.0, 4.0]  # a diagonal of distinct values: only its largest is clipped
    assert heatmap_limits(S, "paper")[1] == 3.0
    assert heatmap_limits(S, "panel") == (pytest.approx(0.54), pytest.approx(0.64))


def test_the_key_difference_sd_matches_monte_carlo_of_the_first_layer():
    # S(1)_ik - S(1)_ij for one query and two keys, at a width where the first-order law holds
    rng = np.random.default_rng(1)
    K = rec.input_gram(20_000, 4, 4096, 0.5, rng=rng, dtype=torch.float64).numpy()
    D = np.sqrt(4096 / np.einsum("bii->bi", K))
    S = D[:, :, None] * K * D[:, None, :] / 64.0
    x = S[:, 3, 1] - S[:, 3, 0]
    var, se = x.var(ddof=1), x.var(ddof=1) * np.sqrt(2 / (len(x) - 1))
    assert abs(var - th.key_difference_sd(0.5) ** 2) < 4 * se + 0.01  # + the O(1/sqrt d) remainder
    assert th.key_difference_sd(0.0) == pytest.approx(np.sqrt(2))


def test_the_predicted_rp2_matches_monte_carlo_where_the_first_layer_is_nearly_diagonal():
    # d = 256, c = 0.6: rho = e^{-6.4} = 0.002; the prediction's own error is of order rho and 1/d
    st = rec.simulate_recency(rec.RecencyModel(256, 10, 0.6, n_layers=2), n_samples=20_000, seed=0)
    assert abs(st.rp[1] - th.layer2_rp(256, 10, 0.6)) < 3 * st.rp_se[1] + 0.002
    # isotropic and wide: no preference predicted, none measured
    assert th.layer2_rp(1024, 10, 0.0) == pytest.approx(0.5, abs=1e-9)


def test_the_predicted_rp2_is_not_monotone_in_width():
    rp = [th.layer2_rp(d, 10, 0.8) for d in (16, 144, 1024)]
    assert rp[1] > rp[0] and rp[1] > rp[2]


def _contrast_monte_carlo(d: int, L: int, n_seq: int, seed: int) -> tuple[float, float]:
    """E[S2_{L,L-1} - S2_{L,1}] at c = omega = 0 by direct simulation of the two layers (an independent
    reference: LayerNorm's centred tokens are uniform on a sphere of d - 1 dimensions, S2 = sqrt(d) times
    the cosine of the first layer's outputs). Unbiased variance reduction: swapping tokens 1 and L-1
    leaves u_L unchanged and makes u_1 the token itself, so each sequence gives
    sqrt(d)[cos(u_L, u_{L-1}) - cos(u_L, y_{L-1})]; each is averaged with its copy under y_L -> -y_L."""
    rng = np.random.default_rng(seed)
    est = []
    for flip in (1.0, -1.0):
        rng_f = np.random.default_rng(seed)  # the same sequences, the last token flipped
        z = rng_f.standard_normal((n_seq, L, d - 1))
        z[:, -1] *= flip
        y = z / np.linalg.norm(z, axis=-1, keepdims=True)
        xi = y @ np.swapaxes(y, 1, 2)
        W = np.tril(np.exp(np.sqrt(d) * (xi - 1.0)))  # the diagonal weight scaled to 1; rows need no normalising
        u = W @ y  # (n, L, d - 1)
        uL, uq, yq = u[:, -1], u[:, -2], y[:, -2]
        cos = lambda a, b: np.sum(a * b, -1) / np.sqrt(np.sum(a * a, -1) * np.sum(b * b, -1))
        est.append(np.sqrt(d) * (cos(uL, uq) - cos(uL, yq)))
    per_seq = 0.5 * (est[0] + est[1])
    return float(per_seq.mean()), float(per_seq.std(ddof=1) / np.sqrt(n_seq))


def _contrast_taylor_monte_carlo(d: int, L: int, n_seq: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The Taylor coefficients tau^0..tau^4 of the contrast, sqrt(d)[cos(u_L, u_{L-1}) - cos(u_L, y_{L-1})]
    with u_i = y_i + tau sum_{m<i} eps_im y_m, by simulation (an independent reference for
    th.contrast_orders' orders): per sequence the squared norms and inner products of u_L, u_{L-1} and
    y_{L-1} are quadratics in tau, and the cosines' coefficients follow exactly by power-series arithmetic
    on them; mean and standard error over sequences, antithetic in the last token as in
    _contrast_monte_carlo."""
    K = 5

    def mul(a, b):
        out = np.zeros(np.broadcast_shapes(a.shape, b.shape))
        for i in range(K):
            out[..., i:] += a[..., i:i + 1] * b[..., :K - i]
        return out

    def inv_sqrt(c0, c1, c2):  # (c0 + c1 tau + c2 tau^2)^(-1/2)
        v = np.zeros(c0.shape + (K,))
        v[..., 1], v[..., 2] = c1 / c0, c2 / c0
        out, term = np.zeros_like(v), np.zeros_like(v)
        term[..., 0] = 1.0
        for j in range(K):
            out += math.comb(2 * j, j) * (-0.25) ** j * term
            term = mul(term, v)
        return out / np.sqrt(c0)[..., None]

    def poly(*c):
        out = np.zeros(c[0].shape + (K,))
        for i, ci in enumerate(c):
            out[..., i] = ci
        return out

    z = np.random.default_rng(seed).standard_normal((n_seq, L, d - 1))
    est = []
    for flip in (1.0, -1.0):
        zf = z.copy()
        zf[:, -1] *= flip
        y = zf / np.linalg.norm(zf, axis=-1, keepdims=True)
        E = np.tril(np.exp(np.sqrt(d) * (y @ np.swapaxes(y, 1, 2) - 1.0)), -1)
        v = E @ y  # the parts of u_i that tau multiplies
        yq, yk, vq, vk = y[:, -1], y[:, -2], v[:, -1], v[:, -2]
        dot = lambda a, b: np.sum(a * b, -1)
        ia = inv_sqrt(dot(yq, yq), 2 * dot(yq, vq), dot(vq, vq))
        ib = inv_sqrt(dot(yk, yk), 2 * dot(yk, vk), dot(vk, vk))
        qk = dot(yq, yk)
        f = (mul(mul(poly(qk, dot(yq, vk) + dot(vq, yk), dot(vq, vk)), ia), ib)
             - mul(poly(qk, dot(vq, yk)), ia) / np.sqrt(dot(yk, yk))[..., None])
        est.append(np.sqrt(d) * f)
    per_seq = 0.5 * (est[0] + est[1])
    return per_seq.mean(0), per_seq.std(0, ddof=1) / np.sqrt(n_seq)


def test_the_contrast_by_orders_in_the_weights_meets_monte_carlo_through_the_fourth_order():
    """Second plus third plus fourth order is within 1 % of Monte Carlo (and within 3 standard errors
    plus 0.4 %, what the fifth order carries at d = 16) at d = 16, 25 and 36, where the second order
    alone is several standard errors off; at d = 16 the off-diagonal weights are large enough that
    second plus third order misses and the fourth order is needed."""
    for d in (16, 25, 36):
        mc, se = _contrast_monte_carlo(d, 10, 40_000, seed=d)
        orders = th.contrast_orders(d, 10)
        assert orders["total"] == pytest.approx(orders["second"] + orders["third"] + orders["fourth"], rel=1e-12)
        assert orders["through_third"] == pytest.approx(orders["second"] + orders["third"], rel=1e-12)
        assert abs(orders["total"] - mc) < min(0.01 * mc, 3 * se + 0.004 * mc)
        assert orders["second"] - mc > 5 * se  # the third order is needed
        if d == 16:
            assert orders["through_third"] < mc - 5 * se  # and at d = 16 the fourth
    # a short sequence has no pairs of intermediate tokens: the (L-3) terms vanish at L = 3
    mc3, se3 = _contrast_monte_carlo(36, 3, 40_000, seed=3)
    assert abs(th.contrast_orders(36, 3)["total"] - mc3) < min(0.01 * abs(mc3), 3 * se3 + 0.004 * abs(mc3))
    with pytest.raises(ValueError, match="d"):
        th.contrast_orders(5, 10)


def test_the_orders_meet_the_simulated_taylor_coefficients_of_the_contrast():
    """Each order of th.contrast_orders against the simulated Taylor coefficient it is the mean of, within
    3 standard errors, at d = 16 for L = 10 (all four terms of the fourth order) and L = 4 (one pair of
    intermediate tokens); the estimator resolves the fourth order to a few per cent, and its first-order
    coefficient vanishes."""
    for L, n_seq in ((10, 100_000), (4, 100_000)):
        coef, se = _contrast_taylor_monte_carlo(16, L, n_seq, seed=100 + L)
        orders = th.contrast_orders(16, L)
        assert abs(coef[0]) < 1e-12 and abs(coef[1]) < 1e-12
        for k, name in ((2, "second"), (3, "third"), (4, "fourth")):
            assert abs(orders[name] - coef[k]) < 3 * se[k], (L, name, orders[name], coef[k], se[k])
        assert se[4] < 0.05 * orders["fourth"]


def test_the_fourth_order_parts_reproduce_the_lower_orders_closed_forms():
    """The power-series quadrature behind the fourth order gives, at second and third order, the closed
    forms: phi_2 = M~^2 and phi_3 = C - M~K/2 + 2 n_1 M~^2 (the third order's terms after centring), and
    the first order's mean zero."""
    d = 16
    o2, o3 = th.contrast_orders(d, 3), th.contrast_orders(d, 4)
    r, w = th._cosine_rule(d, (d - 4) / 2, 360)
    n_1 = float(w @ (np.exp(4.0 * (r - 1.0)) * r))
    phi, _ = th._fourth_order_parts(d, n_1, 45)
    assert abs(phi[1]) < 1e-14
    assert 4.0 * phi[2] == pytest.approx(o2["second"], rel=1e-10)
    # third order: sqrt(d) {M phi_3 - 2 M^2 n_1 phi_2} at M = 1 and 2
    assert 4.0 * (phi[3] - 2 * n_1 * phi[2]) == pytest.approx(o2["third"], rel=1e-9)
    assert 4.0 * (2 * phi[3] - 8 * n_1 * phi[2]) == pytest.approx(o3["third"], rel=1e-9)


def test_the_contrast_by_orders_holds_at_the_widest_widths_of_the_study():
    """The two-point chi-square rule of the fourth order is exact for cubics at any width (the Laguerre
    weights it replaces overflow from k of about 340, which made d = 400 NaN); the series stays finite
    and positive up to d = 512 and refuses wider heads."""
    for k in (5, 13, 396, 1000):
        x, w = th._chi2_rule(k)
        assert np.allclose([w.sum(), w @ x, w @ x**2, w @ x**3], [1, k, k * (k + 2), k * (k + 2) * (k + 4)])
    for d in (400, 512):
        o = th.contrast_orders(d, 10)
        assert all(np.isfinite(v) for v in o.values()) and o["total"] > 0
    with pytest.raises(ValueError, match="d"):
        th.contrast_orders(513, 10)
