"""Welch's difference of two independent means: coverage and the paired case it is not."""

import math

import numpy as np
import pytest

from attention_geometry.stats import welch_difference, mean_estimate


def test_welch_interval_covers_at_the_stated_rate_with_unequal_variances():
    rng = np.random.default_rng(0)
    hits, n = 0, 2000
    for _ in range(n):
        lo, hi = welch_difference(rng.normal(1.0, 3.0, 6), rng.normal(0.5, 0.5, 15)).interval(0.9)
        hits += lo <= 0.5 <= hi
    assert abs(hits / n - 0.9) < 3 * math.sqrt(0.09 / n) + 0.01  # Welch is approximate


def test_welch_value_se_and_df():
    a, b = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.0, 1.0, 0.0, 1.0, 0.0, 1.0])
    est = welch_difference(a, b)
    assert est.value == pytest.approx(2.5 - 0.5)
    assert est.se == pytest.approx(math.hypot(mean_estimate(a).se, mean_estimate(b).se))
    assert 1 <= est.df <= a.size + b.size - 2
    same = welch_difference(np.ones(3), np.ones(4))
    assert same.value == 0 and same.se == 0
