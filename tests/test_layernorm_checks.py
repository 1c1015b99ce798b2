"""Chapter 1's measurements of PyTorch against the geometry, on inputs whose answers are known."""

import numpy as np
import pytest

import attention_geometry as ag


def test_decomposition_errors_are_rounding_sized_and_grow_with_kappa():
    rng = np.random.default_rng(0)
    check = ag.decomposition_errors(ag.random_inputs(rng, 400, 16))
    assert set(check) == {"d", "kappa", "torch64", "torch32", "library32", "mean", "norm"}
    assert check["torch64"].max() < 1e-9 and check["norm"].max() < 1e-12
    # the library centres twice: its float32 error does not grow with kappa the way PyTorch's does
    hard = check["kappa"] > 100
    assert np.median(check["library32"][hard]) < np.median(check["torch32"][hard])


def test_eps_deficit_matches_its_closed_form():
    rng = np.random.default_rng(1)
    pts = ag.eps_deficit_points(rng.standard_normal((50, 8)), [1e-5, 0.01], np.logspace(-6, 1, 5))
    np.testing.assert_allclose(pts["measured"], pts["closed"], atol=1e-12)
    by_d = ag.eps_deficit_by_dim(rng, [4, 64], 50, [0.01])
    measured, closed = by_d[(0.01, "unit norm")]
    assert measured[1] > 10 * measured[0]  # at fixed norm the deficit grows like d
    np.testing.assert_allclose(measured, closed, rtol=1e-6)


def test_affine_and_rms_checks_find_the_stated_geometry():
    rng = np.random.default_rng(2)
    gamma, beta = ag.random_affine(rng, 12)
    aff = ag.affine_checks(ag.random_inputs(rng, 200, 12), gamma, beta)
    assert aff["selected"] == 1.0 and aff["plane_residual"] < 1e-12 and aff["uniform_spread"] < 1e-12
    assert aff["mean_median"] > 1e-3 and aff["norm_ratio"] > 1.01  # mean zero and the round sphere are gone
    rms = ag.rms_checks(ag.random_inputs(rng, 200, 12))
    assert rms["norm_dev"] < 1e-12 and rms["ln_err"] < 1e-9 and rms["mean_median"] > 0.1


def test_a_low_variance_key_is_lost_only_with_eps():
    lv = ag.low_variance_key(1e-2, 100, np.random.default_rng(3).normal(size=(5000, 3)))
    assert lv["wins_exact"] > 0.02 and lv["wins_eps"] == 0.0
    assert lv["norm_exact"] == pytest.approx(3**0.5) and lv["norm_eps"] < 0.2 * 3**0.5


def test_claims_can_fail():
    rng = np.random.default_rng(4)
    check = ag.decomposition_errors(ag.random_inputs(rng, 100, 8))
    gamma, beta = ag.random_affine(rng, 8)
    aff = ag.affine_checks(ag.random_inputs(rng, 100, 8), gamma, beta)
    lv = ag.low_variance_key(1e-2, 100, rng.normal(size=(100, 3)))
    ok = ag.layernorm_claims(check, aff, lv, tol=1e-6, eps_ref=1e-2)
    assert [c.verdict.label for c in ok] == ["reproduced"] * 5
    strict = ag.layernorm_claims(check, aff, lv, tol=1e-30, eps_ref=1e-2)  # no float64 result meets this
    assert {c.verdict.label for c in strict[:4]} == {"refuted"}
    broken = dict(aff, selected=0.9)
    assert ag.layernorm_claims(check, broken, lv, tol=1e-6, eps_ref=1e-2)[-1].verdict.label == "refuted"
