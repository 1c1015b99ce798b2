"""Profiles as samples: averages, bands, the noise ceiling, the two fits with their
degenerate labels, the late-minimum test and the chunk statistics."""

import math

import numpy as np
import pytest

import attention_geometry as ag
from attention_geometry.stats import Estimate, fitted_parameter


def _sample(profile, n, rel_noise, seed):
    rng = np.random.default_rng(seed)
    return ag.ProfileSample(profile[None, :] * rng.gamma(1 / rel_noise**2, rel_noise**2, size=(n, profile.size)))


def test_sample_average_band_and_halves():
    s = ag.ProfileSample(np.array([[1.0, 4.0, 9.0], [1.0, 4.0, 9.0], [9.0, 16.0, 1.0], [9.0, 16.0, 1.0]]))
    np.testing.assert_allclose(s.profile(), np.sqrt([5.0, 10.0, 5.0]))
    lo, hi = s.band()
    assert np.all(lo <= np.sqrt(s.rho2).max(0)) and np.all(lo <= hi)
    a, b = s.halves()
    assert a.n == b.n == 2 and np.array_equal(a.rho2, s.rho2[0::2])
    with pytest.raises(ValueError, match="rho2"):
        ag.ProfileSample(np.ones((1, 5)))


def test_noise_ceiling_is_one_without_noise_and_low_with_pure_noise():
    rng = np.random.default_rng(0)
    clean = ag.ProfileSample(np.tile(np.linspace(2, 1, 50), (8, 1)))
    assert ag.noise_ceiling_estimate(clean, n_boot=20, rng=rng).value == pytest.approx(1.0)
    noise = _sample(np.ones(200), 8, 0.5, 1)
    assert abs(ag.noise_ceiling_estimate(noise, n_boot=20, rng=rng).value) < 0.3


def test_fit_cesaro_recovers_and_labels_a_bound_degenerate():
    p = 3.0 * ag.last_row(64, 6, 0.3)
    fit = ag.fit_cesaro(p, 6)
    assert abs(fit.alpha.value - 0.3) < 1e-4 and abs(fit.gain - 3.0) < 1e-3 and not fit.degenerate
    spike = np.r_[np.ones(63), 1e6]  # a flat body under a huge last token: alpha runs to the lower bound
    bad = ag.fit_cesaro(spike, 6)
    assert bad.degenerate and bad.alpha.label == "degenerate" and "degenerate" in str(bad.alpha)
    assert ag.fit_cesaro(np.exp(-np.arange(64.0)), 6).degenerate  # steeper than any alpha: the upper bound
    s = ag.summarise_profile(p, 6)
    assert s.spearman > 0.999 and s.wasserstein < 1e-6


def test_fit_derived_recovers_gain_and_growth():
    H, L = 12, 128
    truth = ag.expected_jacobian_sq(L, H, ag.layer_gains(H, 8.0, 3.0), d=5)
    fit = ag.fit_derived(truth, H, per_layer=True)
    assert fit.gain.value == pytest.approx(8.0, rel=1e-3) and fit.growth.value == pytest.approx(3.0, rel=1e-3)
    assert fit.scale == pytest.approx(5.0, rel=1e-3) and fit.log_rmse < 1e-5 and not fit.degenerate
    one = ag.fit_derived(ag.expected_jacobian_sq(L, H, 0.7), H)
    assert one.gain.value == pytest.approx(0.7, rel=1e-3) and one.growth is None


def test_profile_statistics_on_a_noisy_cesaro_profile():
    H, L = 8, 64
    s = _sample(ag.expected_jacobian_sq(L, H, ag.layer_gains(H, 4.0, 2.0)), 16, 0.2, 2)
    st = ag.profile_statistics(s, H, n_boot=20, rng=np.random.default_rng(0))
    assert st.derived_layers.log_rmse < 2 * st.noise_log_rmse  # the right model fits to the noise
    assert st.cesaro.alpha.interval is not None and st.ceiling.se > 0
    assert st.late_minimum.rise.value <= 3 * st.late_minimum.rise.se + 1e-12


def test_late_minimum_finds_a_real_dip_and_not_a_noisy_one():
    L = 100
    dip = np.linspace(3, 1, L)
    dip[80:99] = np.linspace(0.5, 2.0, 19)  # a real valley at 0.8 L, rising to L-1
    real = ag.late_minimum_test(_sample(dip, 16, 0.1, 3))
    assert 0.75 < real.x_min < 0.85 and real.rise.z() > 5
    flat = ag.late_minimum_test(_sample(np.linspace(3, 1, L), 16, 0.3, 4))
    assert flat.rise.interval()[0] < 0.5  # no significant rise (a minimum chosen in noise)


def test_boundary_contrast_folded_profile_and_valley_depth():
    rho2 = np.ones((3, 40))
    rho2[:, [10, 20, 30]] = math.e
    np.testing.assert_allclose(ag.boundary_contrast(rho2, [10, 20, 30], width=3), 1.0)
    np.testing.assert_allclose(ag.boundary_contrast(np.ones((2, 40)), [10, 20], width=3), 0.0)
    f = ag.folded_profile(np.tile(np.arange(40.0), (2, 1)), 10)
    np.testing.assert_allclose(f[0], np.arange(10) + 20)  # chunks 1..3 averaged: offsets + 20
    d = ag.anchored_valley_depth(np.array([[4.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 100.0]]))
    assert d[0] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="boundaries"):
        ag.boundary_contrast(rho2, [1], width=3)


def test_effective_rank_and_init_spread():
    J = np.stack([np.eye(4), np.diag([1.0, 0, 0, 0])])
    np.testing.assert_allclose(ag.effective_rank(J), [4.0, 1.0])
    v = np.array([[1.0, 2.0], [3.0, 2.0], [2.0, 2.0]])
    est = ag.init_spread(v, n_boot=20, rng=np.random.default_rng(0))
    assert est.value == pytest.approx(np.median([0.5, 0.0]))


def test_paired_spearman_and_wasserstein():
    a = _sample(np.linspace(2, 1, 30), 8, 0.05, 5)
    est = ag.paired_spearman(a, a, n_boot=20, rng=np.random.default_rng(0))
    assert est.value == pytest.approx(1.0) and est.se == pytest.approx(0.0, abs=1e-12)
    x = np.full(10, 1e-12)
    y = x.copy()
    x[0], y[4] = 1.0, 1.0
    assert ag.normalised_positions_wasserstein(x, y) == pytest.approx(0.4)


def test_fitted_parameter_labels():
    assert not fitted_parameter("a", 0.5, (0.0, 1.0), (0.4, 0.6)).degenerate
    assert fitted_parameter("a", 0.0, (0.0, 1.0)).degenerate
    assert fitted_parameter("a", 0.5, (0.0, 1.0), (0.2, 1.0)).degenerate  # interval reaches the bound
    assert not fitted_parameter("g", 0.05, (1e-4, 1e4), log=True).degenerate  # far from 1e-4 in log
    assert fitted_parameter("g", 1.0001e-4, (1e-4, 1e4), log=True).degenerate
    assert str(fitted_parameter("a", 0.5, (0.0, 1.0), (0.4, 0.6))) == "0.5 [0.4, 0.6]"
    with pytest.raises(ValueError, match="bounds"):
        fitted_parameter("a", 0.5, (1.0, 0.0))


def test_fitted_parameter_covers_only_inside_an_interior_interval():
    fit = fitted_parameter("a", 0.5, (0.0, 1.0), (0.4, 0.6))
    assert fit.covers(0.4) and fit.covers(0.55) and not fit.covers(0.61) and not fit.covers(0.39)
    assert not fitted_parameter("a", 0.5, (0.0, 1.0)).covers(0.5)  # no interval
    assert not fitted_parameter("a", 0.5, (0.0, 1.0), (0.2, 1.0)).covers(0.5)  # degenerate


def test_noise_ceiling_predicts_the_spearman_of_two_independent_full_samples():
    """Spearman-Brown: the stepped-up split half matches (on average over repeats) the
    Spearman between two independent samples of the full size; the raw split half is lower."""
    rng = np.random.default_rng(3)
    truth = np.linspace(1.0, 1.2, 120)
    raw, ceiling, between = [], [], []
    for _ in range(60):
        a, b = (ag.ProfileSample(truth**2 * rng.lognormal(0.0, 0.6, (16, truth.size))) for _ in range(2))
        h1, h2 = a.halves()
        raw.append(ag.spearman(h1.profile(), h2.profile()))
        ceiling.append(ag.spearman_brown(raw[-1]))
        between.append(ag.spearman(a.profile(), b.profile()))
    assert abs(np.mean(ceiling) - np.mean(between)) < 0.05, (np.mean(ceiling), np.mean(between))
    assert np.mean(raw) < np.mean(between) - 0.05
    assert ag.spearman_brown(1.0) == 1.0 and ag.spearman_brown(0.0) == 0.0


def test_profile_relative_error_is_that_of_rho_not_rho_squared():
    exact = np.array([1.0, 4.0, 9.0])
    assert np.allclose(ag.profile_relative_error(np.array([1.21, 4.0, 8.1]), exact),
                       [0.1, 0.0, 1 - np.sqrt(0.9)])
    with pytest.raises(ValueError, match="shape"):
        ag.profile_relative_error(np.ones(2), exact)
    with pytest.raises(ValueError, match="exact_rho2"):
        ag.profile_relative_error(np.ones(3), np.array([1.0, 0.0, 1.0]))


def test_the_bootstraps_draw_what_the_loops_they_replace_drew():
    """scipy.stats.bootstrap over the sequence indices gives bit for bit the standard errors of
    the loops it replaced (n_boot calls of rng.integers(0, n, n)), and leaves the generator
    where they left it."""
    import math

    from attention_geometry.jacobians.stats import (
        ProfileSample, bootstrap_estimate, init_spread, log10_peak_to_trough, profile_statistics)

    values = np.random.default_rng(3).gamma(2.0, size=(12, 16))
    sample = ProfileSample(values)

    def loop_se(stat, rows, seed, n_boot=50):
        rng = np.random.default_rng(seed)
        reps = [stat(rows[rng.integers(0, len(rows), len(rows))]) for _ in range(n_boot)]
        return float(np.nanstd(np.array(reps, dtype=np.float64), ddof=1)), rng.integers(0, 10**9)

    rng = np.random.default_rng(7)
    est = bootstrap_estimate(lambda s: log10_peak_to_trough(s.profile()), sample, n_boot=50, rng=rng)
    se, after = loop_se(lambda rows: log10_peak_to_trough(ProfileSample(rows).profile()), values, 7)
    assert est.se == se and rng.integers(0, 10**9) == after
    rng = np.random.default_rng(8)
    spread = init_spread(values, n_boot=50, rng=rng)
    se, after = loop_se(lambda v: float(np.median(v.std(0, ddof=1) / v.mean(0))), values, 8)
    assert spread.se == se and rng.integers(0, 10**9) == after
    stats = profile_statistics(sample, 4, n_boot=20, rng=np.random.default_rng(9))
    assert math.isfinite(stats.spearman.se) and stats.spearman.se > 0 and stats.log10_ptt.se > 0


def test_draw_profile_statistics_take_their_errors_over_the_weight_draws():
    """Each statistic is its value on the whole sample, with a standard error over the draws; a draw
    effect (each draw's profile tilted its own way) widens it past what the sequences alone show."""
    rng = np.random.default_rng(3)
    L, H, k, m = 40, 6, 8, 3
    truth = ag.last_row(L, H, 0.5) ** 2
    x = np.linspace(-1, 1, L)
    tilts = 0.4 * rng.standard_normal(k)
    rho2 = np.concatenate([truth * np.exp(t * x) * (1 + 0.05 * rng.standard_normal((m, L))) for t in tilts])
    draws = ag.draw_slices(k * m, k)
    sample = ag.ProfileSample(rho2)
    out = ag.draw_profile_statistics(sample, H, draws, off=ag.ProfileSample(rho2[:, ::-1].copy()))
    assert set(out) == {"spearman", "wasserstein", "noise_wasserstein", "log10_ptt", "ceiling", "rise", "ends",
                        "monotone", "rope", "rope_ceiling", "rope_floor"}
    assert all(e.n_draws == k and e.df == k - 1 and len(e.draw_means) == k for e in out.values())
    even, odd = (np.concatenate([rho2[s] for s in draws[i::2]]) for i in (0, 1))  # halves by draw
    assert out["log10_ptt"].value == pytest.approx(ag.held_out_log10_peak_to_trough(even, odd))
    assert out["spearman"].value == pytest.approx(ag.held_out_fit(even, odd, H).spearman)
    assert out["rope"].value == pytest.approx(ag.spearman(sample.profile(), sample.profile()[::-1]))
    assert out["monotone"].value == pytest.approx(ag.monotone_spearman(sample.profile()))
    j = np.arange(L)
    assert out["rope_floor"].value == pytest.approx(ag.monotone_floor(ag.spearman(j, sample.profile()),
                                                                      ag.spearman(j, sample.profile()[::-1])))
    by_sequence = ag.bootstrap_estimate(lambda s: ag.log10_peak_to_trough(s.profile()), sample, n_boot=200,
                                        rng=np.random.default_rng(0))
    assert out["log10_ptt"].se > by_sequence.se  # the tilt differs between draws, not between a draw's sequences
    only = ag.draw_profile_statistics(sample, H, draws, which=("ends",))
    assert list(only) == ["ends"] and only["ends"].value == pytest.approx(out["ends"].value)
    with pytest.raises(ValueError, match="which"):
        ag.draw_profile_statistics(sample, H, draws, which=("rope",))  # no sample without positions


def test_shape_numbers_read_the_papers_form_back_and_ignore_the_scale():
    """On the paper's own form g (N^H)_{L,j}, the fitted alpha is the one it was made with and
    W is 0; the numbers do not depend on the profile's scale."""
    L, H, alpha = 128, 6, 0.12
    rho = 3.0 * ag.last_row(L, H, alpha)
    got = ag.shape_numbers(rho, H)
    assert set(got) == set(ag.SHAPE_NUMBERS)
    assert got["alpha"] == pytest.approx(alpha, rel=1e-3) and got["wasserstein"] < 1e-4
    assert got["log10_ptt"] == pytest.approx(math.log10(rho.max() / rho.min()))
    assert got["last_height"] == pytest.approx(math.log10(rho[-1] / np.median(rho[L // 4:3 * L // 4])), abs=0.01)
    scaled = ag.shape_numbers(rho * 1e3, H)
    assert all(scaled[k] == pytest.approx(got[k], rel=1e-6, abs=1e-9) for k in got)


def test_the_held_out_peak_to_trough_is_unbiased_on_noise_and_finds_a_real_one():
    """On a flat profile the plug-in log10 max/min of the average grows with the noise, so a noisier
    profile looks deeper; chosen on one half and measured on the other it averages 0 at any noise.
    On a real profile it recovers the true ratio."""
    rng = np.random.default_rng(4)
    L, n, reps = 64, 16, 200
    for rel in (0.2, 0.8):
        noise = [rng.gamma(1 / rel**2, rel**2, size=(n, L)) for _ in range(reps)]
        held = np.array([ag.held_out_log10_peak_to_trough(x[0::2], x[1::2]) for x in noise])
        naive = np.array([ag.log10_peak_to_trough(np.sqrt(x.mean(0))) for x in noise])
        assert abs(held.mean()) < 3 * held.std(ddof=1) / math.sqrt(reps)
        assert naive.mean() > 10 * held.std(ddof=1) / math.sqrt(reps)
    truth = ag.last_row(L, 4, 0.3) ** 2
    x = truth * rng.gamma(1 / 0.1**2, 0.1**2, size=(n, L))
    assert ag.held_out_log10_peak_to_trough(x[0::2], x[1::2]) == pytest.approx(
        ag.log10_peak_to_trough(np.sqrt(truth)), abs=0.05)
    with pytest.raises(ValueError, match="two halves"):
        ag.held_out_log10_peak_to_trough(x[:, :-1], x)


def test_halves_by_draw_share_no_weights():
    rho2 = np.arange(1.0, 31.0).reshape(10, 3)
    draws = ag.draw_slices(10, 4)  # 3, 2, 3, 2 rows
    a, b = ag.ProfileSample(rho2).halves(draws)
    assert a.n + b.n == 10
    assert np.array_equal(a.rho2, np.concatenate([rho2[draws[0]], rho2[draws[2]]]))
    assert np.array_equal(b.rho2, np.concatenate([rho2[draws[1]], rho2[draws[3]]]))
    one = ag.ProfileSample(rho2).halves(draws[:1])  # one draw: even and odd sequences
    assert np.array_equal(one[0].rho2, rho2[0::2])
    a, b = ag.draw_halves([rho2[s] for s in draws])
    assert np.array_equal(a, np.concatenate([rho2[draws[0]], rho2[draws[2]]]))
    a, b = ag.draw_halves([rho2[draws[0]]])  # one draw left: its even and odd sequences
    assert np.array_equal(a, rho2[draws[0]][0::2]) and np.array_equal(b, rho2[draws[0]][1::2])
    with pytest.raises(ValueError, match="parts"):
        ag.draw_halves([rho2[:1]])


def test_the_held_out_fit_is_not_flattered_by_noise_and_reaches_a_perfect_models_spearman():
    """The paper's form fitted on one half and scored on the other: on pure noise (a flat
    profile) its Spearman is 0 on average; on the paper's own form it is, once projected to
    the whole sample, what the true profile itself reaches against the whole average; on a
    profile of another shape it falls far below that. W between the two halves is what noise
    alone puts into the held-out W."""
    rng = np.random.default_rng(1)
    L, H, n, reps = 64, 6, 16, 200

    def runs(truth, rel):
        x = truth * rng.gamma(1 / rel**2, rel**2, size=(reps, n, L))
        held = [ag.held_out_fit(s[0::2], s[1::2], H) for s in x]
        perfect = [ag.spearman(np.sqrt(truth), np.sqrt(s.mean(0))) for s in x] if np.ptp(truth) > 0 else []
        return np.array([h.spearman for h in held]), np.array(perfect), held

    sp, _, held = runs(np.ones(L), 1.0)  # pure noise
    assert abs(sp.mean()) < 3 * sp.std(ddof=1) / math.sqrt(reps)
    assert all(0 < h.noise_wasserstein for h in held)
    sp, perfect, held = runs(ag.last_row(L, H, 0.3) ** 2, 1.5)  # the paper's form, noisy halves
    assert sp.mean() == pytest.approx(perfect.mean(), abs=0.01)
    assert np.mean([h.wasserstein for h in held]) < 1.5 * np.mean([h.noise_wasserstein for h in held])
    sp, perfect, _ = runs((1 + 0.5 * np.sin(np.linspace(0, 3 * np.pi, L))) ** 2, 0.1)  # another shape
    assert sp.mean() < perfect.mean() - 0.5
    with pytest.raises(ValueError, match="two halves"):
        ag.held_out_fit(np.ones((2, L)), np.ones((2, L - 1)), H)


def _excess_over_draws(truth, prediction, rel, tilt, k, m, rng):
    """:func:`prediction_excess` over ``k`` draws of ``m`` sequences, each sequence's profile
    noisy and tilted at random (noise correlated between positions), jackknifed over draws."""
    x = np.linspace(-1, 1, truth.size)
    rho2 = truth * np.exp(tilt * rng.standard_normal((k * m, 1)) * x) * rng.gamma(1 / rel**2, rel**2,
                                                                                 size=(k * m, truth.size))
    parts = [rho2[s] for s in ag.draw_slices(k * m, k)]
    return ag.jackknife_over_draws(lambda p: ag.prediction_excess(*ag.draw_halves(p), prediction), parts)


def test_the_prediction_excess_is_zero_for_a_right_prediction_and_finds_a_wrong_one():
    """The excess b^2 of a no-fit prediction over the noise: unbiased at 0 for the true profile
    (whatever the noise and its correlation between positions), the centred mean square of the
    error for a wrong one; and the bound rule on it, at a tolerance equal to the true error,
    says "reproduced" no more often than its level allows."""
    rng = np.random.default_rng(5)
    L, H, reps = 48, 6, 200
    truth = ag.last_row(L, H, 0.3) ** 2
    right = [_excess_over_draws(truth, np.sqrt(truth) * 7.0, 0.5, 0.3, 8, 2, rng).value for _ in range(reps)]
    assert abs(np.mean(right)) < 3 * np.std(right, ddof=1) / math.sqrt(reps)
    error = 0.2 * np.sin(np.linspace(0, 2 * np.pi, L))
    wrong = np.sqrt(truth) * np.exp(error)
    got = [_excess_over_draws(truth, wrong, 0.5, 0.3, 8, 2, rng).value for _ in range(reps)]
    want = np.mean((error - error.mean()) ** 2)
    assert np.mean(got) == pytest.approx(want, abs=3 * np.std(got, ddof=1) / math.sqrt(reps))
    at_bound = [ag.bound_verdict(_excess_over_draws(truth, wrong, 0.5, 0.3, 8, 2, rng), want, at_most=True).label
                for _ in range(reps)]
    assert np.mean([lab == ag.Label.REPRODUCED for lab in at_bound]) <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / reps)
    clear = ag.bound_verdict(_excess_over_draws(truth, np.sqrt(truth), 0.1, 0.05, 8, 4, rng), 0.01, at_most=True)
    assert clear.label == ag.Label.REPRODUCED
    far = ag.bound_verdict(_excess_over_draws(truth, np.sqrt(truth) * np.exp(5 * error), 0.1, 0.05, 8, 4, rng), 0.01,
                           at_most=True)
    assert far.label == ag.Label.REFUTED
    with pytest.raises(ValueError, match="prediction"):
        ag.prediction_excess(truth[None], truth[None], truth[:-1])


def test_a_monotone_curve_is_the_alternative_and_the_floor_is_sharp():
    """A U has a small monotone Spearman and a primacy curve a large one; the floor on the
    Spearman of two profiles from their trends alone is never crossed, is reached by two
    profiles whose departures from the trend are opposite, and falls to -1 for opposite
    trends."""
    L = 200
    j = np.arange(L, dtype=float)
    assert ag.monotone_spearman((j - L / 2) ** 2) < 0.05
    assert ag.monotone_spearman(np.exp(-j / 30)) == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    for trend in (1, -1, 1j):  # both rising, both falling, one of each
        for _ in range(100):
            a, b = ((trend if trend != 1j else (-1) ** i) * j + rng.normal(0, rng.uniform(1, 300), L) for i in range(2))
            assert ag.spearman(a, b) >= ag.monotone_floor(ag.spearman(j, a), ag.spearman(j, b)) - 1e-12
    assert ag.monotone_floor(-0.99, -0.99) == pytest.approx(ag.monotone_floor(0.99, 0.99))
    assert ag.monotone_floor(0.99, 0.99) > 0.9
    t = (j - j.mean()) / j.std()
    e = np.tile([1.0, -1.0], L // 2) * 0.3  # a zigzag, orthogonal to the trend
    a, b = t + e, t - e
    floor = ag.monotone_floor(ag.spearman(j, a), ag.spearman(j, b))
    assert ag.spearman(a, b) == pytest.approx(floor, abs=0.02)
    assert ag.monotone_floor(0.9, -0.9) == -1.0 and ag.monotone_floor(1.0, 1.0) == 1.0
    with pytest.raises(ValueError, match="profile"):
        ag.monotone_spearman([1.0, 2.0])


def test_a_claimed_spearman_a_monotone_curve_also_reaches_is_uninformative():
    """The ceiling rule with the monotone alternative: for a primacy profile the paper's 0.99 is
    out of reach of nothing, so it is uninformative; for a U it can be reproduced."""
    ceiling = Estimate(0.99, 0.002)
    sp = Estimate(0.995, 0.001)
    primacy = ag.ceiling_verdict(sp, 0.99, ceiling, n=16, paper_n=200, alternative=Estimate(0.99, 0.001))
    assert primacy.label == "uninformative"
    u = ag.ceiling_verdict(sp, 0.99, ceiling, n=16, paper_n=200, alternative=Estimate(0.2, 0.01))
    assert u.label == "reproduced"
    close = ag.ceiling_verdict(Estimate(0.975, 0.01), 0.99, ceiling, n=16)
    assert close.label == "not decided" and "samples (now 16) would decide it" in close.reason
