"""Estimates: intervals that cover, paired differences, the control variate."""

import math

import numpy as np
import pytest

from attention_geometry.stats import (
    Estimate,
    bootstrap_interval,
    control_variate_mean,
    mean_estimate,
    noise_ceiling,
    paired_difference,
    ratio_estimate,
    spearman,
)


def test_mean_estimate_and_t_interval_cover_at_the_stated_rate():
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(2000):
        lo, hi = mean_estimate(rng.normal(1.0, 2.0, size=5)).interval(0.9)
        hits += lo <= 1.0 <= hi
    # 2000 draws: the coverage is 0.9 within 3 standard errors (0.0067 each)
    assert abs(hits / 2000 - 0.9) < 3 * math.sqrt(0.09 / 2000)


def test_paired_difference_counts_wins_and_uses_pairs():
    a = np.array([0.90, 0.85, 0.88, 0.80, 0.95])
    b = a - np.array([0.01, -0.02, 0.03, 0.00, 0.01])
    d = paired_difference(a, b)
    assert d.n == 5 and d.wins == 3 and d.df == 4
    assert d.value == pytest.approx(0.006)
    with pytest.raises(ValueError, match="paired"):
        paired_difference(a, b[:3])


def test_control_variate_is_unbiased_and_cuts_the_error():
    rng = np.random.default_rng(1)
    means, ses = [], []
    for _ in range(300):
        x = rng.normal(0.0, 1.0, 4000)
        y = 0.05 + 3.0 * x + rng.normal(0.0, 0.1, 4000)  # corr(x, y) ~ 0.9994
        est = control_variate_mean(y, x, x_mean=0.0)
        means.append(est.value)
        ses.append(est.se)
    means = np.array(means)
    # unbiased: the mean of 300 estimates is within 4 of its standard errors of 0.05
    assert abs(means.mean() - 0.05) < 4 * means.std(ddof=1) / math.sqrt(300)
    # the stated SE matches the spread of the estimates, and is ~ 0.1/sqrt(n), not 3/sqrt(n)
    assert np.mean(ses) == pytest.approx(means.std(ddof=1), rel=0.15)
    assert np.mean(ses) < 0.1 / math.sqrt(4000) * 1.2


def test_ratio_and_bootstrap_and_ceiling():
    r = ratio_estimate(Estimate(2.0, 0.1), Estimate(4.0, 0.2))
    assert r.value == 0.5 and r.se == pytest.approx(math.hypot(0.1 / 4, 2 * 0.2 / 16))
    rng = np.random.default_rng(2)
    lo, hi = bootstrap_interval(np.mean, rng.normal(0, 1, 400), rng=rng)
    assert lo < 0 < hi and hi - lo == pytest.approx(2 * 1.96 / 20, rel=0.2)
    prof = np.linspace(1, 2, 50)
    assert spearman(prof, prof**2) == pytest.approx(1.0)
    noisy1, noisy2 = prof + rng.normal(0, 0.3, 50), prof + rng.normal(0, 0.3, 50)
    assert noise_ceiling(noisy1, noisy2) < 1.0
