"""The general estimators and verdict rules added for chapter 6: several control
variates, the same estimator from streamed moments, the Wald test, and the
sign-and-size and hypothesis rules (each can return every one of its labels)."""

import math

import numpy as np
import pytest
from scipy import stats as sps

from attention_geometry.stats import Estimate, control_variate_mean, control_variate_moments, wald_test
from attention_geometry.verdicts import hypothesis_verdict, sign_and_size_verdict


def test_several_controls_are_unbiased_and_their_error_is_honest():
    rng = np.random.default_rng(3)
    values, ses = [], []
    for _ in range(300):
        x = rng.normal(0.0, 1.0, (3000, 2))
        y = 0.2 + 2.0 * x[:, 0] - 1.0 * x[:, 1] + 0.5 * x[:, 0] ** 2 + rng.normal(0, 0.05, 3000)
        # x0^2 has mean 1: a third control with a known non-zero mean
        est = control_variate_mean(y, np.column_stack([x, x[:, 0] ** 2]), x_mean=[0.0, 0.0, 1.0])
        values.append(est.value)
        ses.append(est.se)
        assert est.df == 3000 - 4
    values = np.array(values)
    truth = 0.2 + 0.5
    assert abs(values.mean() - truth) < 4 * values.std(ddof=1) / math.sqrt(300)
    assert np.mean(ses) == pytest.approx(values.std(ddof=1), rel=0.15)
    assert np.mean(ses) < 0.06 / math.sqrt(3000)


def test_one_control_matches_the_classical_formula_and_moments_match_samples():
    rng = np.random.default_rng(4)
    x = rng.normal(size=500)
    y = 1.0 + 0.7 * x + rng.normal(size=500)
    est = control_variate_mean(y, x)
    beta = np.cov(x, y)[0, 1] / np.var(x, ddof=1)
    resid = y - beta * (x - x.mean())
    assert est.value == pytest.approx(y.mean() - beta * x.mean())
    assert est.se == pytest.approx(resid.std(ddof=2) / math.sqrt(500))
    z = np.column_stack([y, x])
    again = control_variate_moments(z.mean(0), np.cov(z, rowvar=False), 500)
    assert again == est
    plain = control_variate_moments([y.mean()], [[y.var(ddof=1)]], 500)
    assert plain.value == pytest.approx(y.mean()) and plain.se == pytest.approx(y.std(ddof=1) / math.sqrt(500))


def test_a_constant_control_is_ignored_and_shapes_are_checked():
    rng = np.random.default_rng(5)
    y = rng.normal(size=100)
    est = control_variate_mean(y, np.column_stack([np.zeros(100), rng.normal(size=100)]))
    assert math.isfinite(est.value) and math.isfinite(est.se)
    with pytest.raises(ValueError, match="paired with y"):
        control_variate_mean(y, np.zeros(99))
    with pytest.raises(ValueError, match="shape"):
        control_variate_moments([0.0, 0.0], np.eye(3), 100)


def test_wald_test_holds_its_level_and_detects_a_shift():
    rng = np.random.default_rng(6)
    rejections = 0
    for _ in range(400):
        v = rng.multivariate_normal([0, 0, 0], [[1, 0.5, 0], [0.5, 1, 0.2], [0, 0.2, 1]], size=400)
        _, df, p = wald_test(v.mean(0), np.cov(v, rowvar=False), 400)
        rejections += p < 0.05
        assert df == 3
    # the level is 0.05 within 3 binomial standard errors
    assert abs(rejections / 400 - 0.05) < 3 * math.sqrt(0.05 * 0.95 / 400)
    v = rng.normal(size=(400, 2)) + [0.0, 0.3]
    chi2, df, p = wald_test(v.mean(0), np.cov(v, rowvar=False), 400)
    assert p < 1e-4 and chi2 == pytest.approx(sps.chi2.isf(p, 2))


def test_sign_and_size_verdict_returns_each_label():
    assert sign_and_size_verdict(Estimate(1.02, 0.01), 1.0, rtol=0.1).label == "reproduced"
    differs = sign_and_size_verdict(Estimate(2.6, 0.05), 1.0, rtol=0.1, note="the factor tends to e")
    assert differs.label == "differs" and "magnitude off by a factor 2.6" in differs.reason
    assert differs.reason.endswith("the factor tends to e")
    assert sign_and_size_verdict(Estimate(1.15, 0.05), 1.0, rtol=0.1).label == "not decided"
    assert sign_and_size_verdict(Estimate(0.01, 0.05), 1.0, rtol=0.1).label == "not decided"
    assert sign_and_size_verdict(Estimate(-1.0, 0.05), 1.0, rtol=0.1).label == "refuted"
    assert sign_and_size_verdict(Estimate(-2.0, 0.05), -2.0, rtol=0.1).label == "reproduced"
    with pytest.raises(ValueError, match="closed_form"):
        sign_and_size_verdict(Estimate(1.0, 0.1), 0.0, rtol=0.1)


def test_hypothesis_verdict_returns_each_label():
    assert hypothesis_verdict(1e-6, claim_rejects_null=True).label == "reproduced"
    assert hypothesis_verdict(0.3, claim_rejects_null=True).label == "not decided"
    assert hypothesis_verdict(1e-6, claim_rejects_null=False).label == "refuted"
    assert hypothesis_verdict(0.3, claim_rejects_null=False).label == "not decided"
    with pytest.raises(ValueError, match="p_value"):
        hypothesis_verdict(1.5, claim_rejects_null=True)
