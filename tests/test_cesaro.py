"""The Cesàro calculus: closed forms against exact matrix powers, the stable
recursion against exact rationals, the log-space variant under underflow, and
input validation."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_geometry import cesaro as C

ALPHAS = [Fraction(0), Fraction(1), Fraction(1, 2), Fraction(1, 3), Fraction(7, 10), 0.25]


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("L, H", [(1, 1), (2, 3), (4, 0), (5, 1), (6, 4), (7, 6)])
def test_closed_forms_equal_exact_matrix_powers(L, H, alpha):
    exact = C.matrix_power_exact(C.residual_cesaro_matrix_exact(L, alpha), H)
    assert C.residual_cesaro_power_exact(L, H, alpha, form="eigen") == exact
    assert C.residual_cesaro_power_exact(L, H, alpha, form="binomial") == exact
    if H >= 1:
        assert C.last_row_exact(L, H, alpha) == exact[-1]


@pytest.mark.parametrize("L, H", [(3, 2), (6, 5)])
def test_pure_cesaro_closed_form(L, H):
    exact = C.matrix_power_exact(C.cesaro_matrix_exact(L), H)
    assert [[C.cesaro_power_entry_exact(i, j, H) for j in range(1, L + 1)]
            for i in range(1, L + 1)] == exact


def test_pascal_matrix_diagonalises_M():
    L = 7
    P, Pinv = C.pascal_matrix_exact(L), C.pascal_matrix_exact(L, inverse=True)
    D = [[Fraction(1, i + 1) if i == j else Fraction(0) for j in range(L)] for i in range(L)]

    def mul(A, B):
        return [[sum((A[i][k] * B[k][j] for k in range(L)), Fraction(0)) for j in range(L)]
                for i in range(L)]

    assert mul(P, Pinv) == C.matrix_power_exact(D, 0)
    assert mul(mul(P, D), Pinv) == C.cesaro_matrix_exact(L)


def _rel_err(approx, exact):
    exact = np.array([float(x) for x in exact])
    return np.max(np.abs(np.asarray(approx) - exact) / exact)


@pytest.mark.parametrize("alpha", [Fraction(1), Fraction(1, 2), Fraction(1, 10), Fraction(9, 10)])
@pytest.mark.parametrize("L, H", [(2, 1), (37, 5), (200, 12)])
def test_stable_recursion_equals_exact_rationals(L, H, alpha):
    exact = C.last_row_exact(L, H, alpha)
    assert exact == C.last_row_closed_form_exact(L, H, alpha) or L == 200  # closed form is slow
    assert _rel_err(C.last_row(L, H, float(alpha)), exact) <= 1e-12
    assert _rel_err(np.exp(C.log_last_row(L, H, float(alpha))), exact) <= 1e-10


def test_closed_form_exact_equals_recursion_at_moderate_size():
    assert C.last_row_closed_form_exact(60, 9, Fraction(2, 3)) == C.last_row_exact(60, 9, Fraction(2, 3))


def test_log_space_survives_underflow():
    # 64**-200 = 1e-361 underflows float64; the exact last row does not
    L, H = 64, 200
    exact = C.last_row_exact(L, H, 1)
    log_exact = np.array([math.log(x.numerator) - math.log(x.denominator) for x in exact])
    log_row = C.log_last_row(L, H, 1.0)
    assert np.all(np.isfinite(log_row))
    assert np.max(np.abs(log_row - log_exact)) <= 1e-10 * np.max(np.abs(log_exact))
    assert C.last_row(L, H, 1.0)[-1] == 0.0  # the plain recursion underflows there


@pytest.mark.parametrize("alpha", [1.0, 0.5, 0.9])
def test_log_space_at_paper_length_and_depth_200(alpha):
    L, H = 2048, 200
    log_row = C.log_last_row(L, H, alpha)
    assert np.all(np.isfinite(log_row))
    assert abs(np.logaddexp.reduce(log_row)) < 1e-10  # the row sums to 1
    # the last entry is known exactly: lambda_L^H
    assert log_row[-1] == pytest.approx(H * math.log(1 - alpha + alpha / L), rel=1e-10)
    plain = C.last_row(L, H, alpha)
    normal = plain > 1e-300
    np.testing.assert_allclose(np.exp(log_row[normal]), plain[normal], rtol=1e-9)


@settings(max_examples=40, deadline=None)
@given(L=st.integers(1, 300), H=st.integers(1, 40), alpha=st.floats(0, 1))
def test_rows_are_probability_vectors(L, H, alpha):
    p = C.last_row(L, H, alpha)
    assert np.all(p >= 0)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert p[-1] == pytest.approx((1 - alpha + alpha / L) ** H, rel=1e-12, abs=1e-300)


@settings(max_examples=25, deadline=None)
@given(L=st.integers(3, 300), H=st.integers(2, 30),
       alpha=st.floats(0.01, 0.99))
def test_profile_is_strictly_decreasing_before_the_last_token(L, H, alpha):
    p = C.log_last_row(L, H, alpha)
    assert np.all(np.diff(p[:-1]) < 0)
    assert C.classify_profile(np.exp(p - p.max())) in {"monotone", "monotone + final spike"}


@settings(max_examples=30, deadline=None)
@given(L=st.integers(1, 9), H=st.integers(1, 6),
       num=st.integers(0, 12), den=st.integers(1, 12))
def test_stable_recursion_equals_closed_form_on_random_rationals(L, H, num, den):
    alpha = Fraction(min(num, den), den)
    exact = C.last_row_closed_form_exact(L, H, alpha)
    np.testing.assert_allclose(C.last_row(L, H, float(alpha)), [float(x) for x in exact],
                               rtol=1e-13, atol=0)


def test_matrices_and_row_agree_with_numpy_power():
    N = C.residual_cesaro_matrix(30, 0.4)
    np.testing.assert_allclose(np.linalg.matrix_power(N, 7)[-1], C.last_row(30, 7, 0.4), rtol=1e-12)
    np.testing.assert_allclose(C.cesaro_matrix(30).sum(axis=1), 1.0)


def test_alternating_sum_is_fine_small_and_fails_large():
    ok = C.last_row_alternating(8, 5, 1.0)
    np.testing.assert_allclose(ok, [float(x) for x in C.last_row_exact(8, 5, 1)], rtol=1e-12)
    bad = C.last_row_alternating(2048, 24, 0.5)
    assert not np.all(np.isfinite(bad))
    # the largest term exceeds the smallest result by hundreds of orders of magnitude
    assert (C.alternating_max_term_log10(2048, 24, 0.5)
            - C.log_last_row(2048, 24, 0.5) / math.log(10)).max() > 300


def test_continuous_limit_densities_integrate_to_one():
    for H, alpha in [(1, 1.0), (4, 1.0), (6, 0.3), (5, 0.0)]:
        m = C.limit_cell_masses(500, H, alpha)
        assert m.sum() == pytest.approx(1.0, abs=1e-12) and np.all(m >= 0)
    x = np.array([0.1, 0.5, 1.0])
    np.testing.assert_allclose(C.rho_causal(x, 3), np.log(1 / x) ** 2 / 2)
    np.testing.assert_allclose(C.rho_residual(x, 1, 0.4), 0.4)


def test_continuous_limit_is_approached_in_the_middle():
    L, H, alpha = 2**16, 4, 1.0
    p = C.last_row(L, H, alpha)
    assert L * p[L // 2 - 1] == pytest.approx(C.rho_causal([(L // 2) / L], H)[0], rel=1e-3)
    assert C.total_variation(p, C.limit_cell_masses(L, H, alpha)) < 1e-3


def test_shape_helpers():
    assert C.profile_minimum([3.0, 1.0, 2.0]) == (2, 2 / 3)
    assert C.classify_profile([3.0, 1.0, 2.0, 4.0]) == "U-shape"
    assert C.classify_profile([3.0, 2.0, 1.0, 4.0]) == "monotone + final spike"
    assert C.classify_profile([3.0, 2.0, 1.0, 0.5]) == "monotone"
    assert C.classify_profile([1.0, 2.0, 3.0, 0.5]) == "other"
    dz = C.dead_zone(np.array([0.5, 0.01, 0.01, 0.48]), threshold=0.1)
    assert dz.width == 0.5 and dz.peak_to_trough == 50 and dz.middle_density == 0.04
    assert dz.end_to_middle == pytest.approx(48)


@pytest.mark.parametrize("call, name", [
    (lambda: C.last_row(0, 3, 0.5), "L"),
    (lambda: C.last_row(2.0, 3, 0.5), "L"),
    (lambda: C.last_row(True, 3, 0.5), "L"),
    (lambda: C.last_row(8, 0, 0.5), "H"),
    (lambda: C.log_last_row(8, -1, 0.5), "H"),
    (lambda: C.last_row(8, 2.5, 0.5), "H"),
    (lambda: C.last_row(8, 3, 1.5), "alpha"),
    (lambda: C.last_row(8, 3, -0.1), "alpha"),
    (lambda: C.last_row(8, 3, float("nan")), "alpha"),
    (lambda: C.last_row_exact(8, 3, Fraction(3, 2)), "alpha"),
    (lambda: C.last_row_alternating(8, 3, "0.5"), "alpha"),
    (lambda: C.limit_cell_masses(-4, 3, 0.5), "L"),
    (lambda: C.residual_cesaro_power_entry_exact(3, 1, 2, 0.5, form="taylor"), "form"),
])
def test_bad_inputs_raise_naming_argument(call, name):
    with pytest.raises(ValueError) as err:
        call()
    msg = str(err.value)
    assert msg.startswith(f"{name} = ") and "allowed" in msg


def test_limit_accuracy_depends_on_alpha():
    """Small alpha: accurate (1 %) from the first positions on; alpha = 1: wrong up to the end."""
    L, H = 2048, 24
    assert C.limit_accurate_from(L, H, 0.1) < 0.02 * L
    assert C.limit_accurate_from(L, H, 1.0) == L
    j0 = C.limit_accurate_from(L, H, 0.5)
    err = np.abs(C.limit_discrepancy(L, H, 0.5, np.arange(j0, L)) - 1)
    assert err.max() <= 0.01 and abs(C.limit_discrepancy(L, H, 0.5, [j0 - 1])[0] - 1) > 0.01


def test_peak_to_trough_floor_is_the_minimum_over_alpha():
    floor, alpha = C.peak_to_trough_floor(256, 12)
    for a in np.linspace(0.01, 1.0, 60):
        r = C.log_last_row(256, 12, a)
        assert (r.max() - r.min()) / math.log(10) >= floor - 1e-9
    r = C.log_last_row(256, 12, alpha)
    assert (r.max() - r.min()) / math.log(10) == pytest.approx(floor, abs=1e-9)


def test_tail_mass_and_gradients_of_the_scalar_model():
    assert C.tail_mass(np.ones(100), 0.1) == pytest.approx(0.09)
    L, H, alpha = 32, 5, 0.5
    g = C.scalar_model_gradients(L, H, alpha, 0)
    np.testing.assert_allclose(g["inputs"], g["rho"], rtol=1e-12)  # eta(x) ~ rho for input parameters
    # eq-cesaro-eta: the last layer's logit gradient of the final query is alpha/L (x_k - mean x)
    import torch
    h = torch.randn(L, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    N = torch.as_tensor(C.residual_cesaro_matrix(L, alpha))
    xs = torch.linalg.matrix_power(N, H - 1) @ h
    np.testing.assert_allclose(g["logits_last"], (alpha / L * (xs - xs.mean())).numpy(), rtol=1e-10, atol=1e-14)


def test_scalar_model_gradients_equal_those_of_the_model_with_every_logit():
    """Only the final query's logits are variables in scalar_model_gradients; the model
    with all L x L logits per layer (the reference, by autograd) gives the same gradients."""
    import torch

    from attention_geometry.attention import causal_softmax

    L, H, alpha = 24, 6, 0.3
    h = torch.randn(L, dtype=torch.float64, generator=torch.Generator().manual_seed(5)).requires_grad_(True)
    logits = torch.zeros(H, L, L, dtype=torch.float64, requires_grad=True)
    x = h
    for layer in range(H):
        x = (1 - alpha) * x + alpha * (causal_softmax(logits[layer]) @ x)
    gh, gs = torch.autograd.grad(x[-1], (h, logits))
    g = C.scalar_model_gradients(L, H, alpha, 5)
    np.testing.assert_allclose(g["inputs"], gh.numpy(), rtol=1e-12)
    np.testing.assert_allclose(g["logits_last"], gs[-1, -1].numpy(), rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(g["logits_first"], gs[0, -1].numpy(), rtol=1e-10, atol=1e-15)
    assert np.abs(gs[0, -1].numpy()).max() > 1e-6  # the first layer's gradient is not trivially zero


def test_a_schedule_of_residual_weights_is_a_poisson_binomial_mixture_of_powers():
    """prop-cesaro-schedule: prod_l N_l = sum_r P(R = r) M^r with R the number of layers that jump;
    the last row by the log recursion equals the exact rational product, in any order."""
    import itertools

    from fractions import Fraction

    alphas = [Fraction(1, 3), Fraction(3, 4), Fraction(0), Fraction(1, 2)]
    L = 6
    prod = [[Fraction(int(i == j)) for j in range(L)] for i in range(L)]
    for a in alphas:
        N = C.residual_cesaro_matrix_exact(L, a)
        prod = [[sum((prod[i][k] * N[k][j] for k in range(L)), Fraction(0)) for j in range(L)] for i in range(L)]
    exact = np.array([float(x) for x in prod[-1]])
    for order in itertools.permutations([float(a) for a in alphas]):
        assert np.allclose(np.exp(C.log_last_row_schedule(L, order)), exact, rtol=1e-13, atol=0)
    w = C.jump_distribution([float(a) for a in alphas])
    brute = np.zeros(len(alphas) + 1)
    for jumps in itertools.product([0, 1], repeat=len(alphas)):
        brute[sum(jumps)] += np.prod([float(a) if b else 1 - float(a) for a, b in zip(alphas, jumps)])
    assert np.allclose(w, brute, rtol=1e-14) and w.sum() == pytest.approx(1.0)
    mixture = np.exp(C.log_cesaro_rows(L, len(alphas))).T @ w
    assert np.allclose(mixture, exact, rtol=1e-13)
    assert np.allclose(C.log_last_row_schedule(64, [0.3] * 5), C.log_last_row(64, 5, 0.3))


def test_a_schedule_keeps_primacy_with_two_mixing_layers_and_is_flat_with_one():
    flat = np.exp(C.log_last_row_schedule(50, [0.0, 0.7, 0.0]))
    assert np.allclose(flat[:-1], 0.7 / 50) and C.log10_peak_to_trough_schedule(50, [1.0, 0.0, 0.0]) == 0.0
    two = np.exp(C.log_last_row_schedule(50, [0.0, 0.2, 0.0, 0.05]))
    assert np.all(np.diff(two[:-1]) < 0)  # strictly decreasing on 1..L-1


def test_the_schedule_floor_is_below_the_constant_floor_and_zero_without_a_lower_bound():
    const, a_const = C.peak_to_trough_floor(256, 6)
    zero, x = C.schedule_floor(256, 6, 0.0)
    assert zero == pytest.approx(0.0, abs=1e-12) and x.max() == pytest.approx(1.0)
    bounded, x = C.schedule_floor(256, 6, a_const / 2)
    assert bounded <= const + 1e-9 and x.min() >= a_const / 2 - 1e-12
    assert C.log10_peak_to_trough_schedule(256, x) == pytest.approx(bounded)
    top, _ = C.schedule_floor(256, 6, 1.0)
    assert top == pytest.approx(C.log10_peak_to_trough_schedule(256, [1.0] * 6))


def test_the_logit_gradient_per_key_equals_autograd_with_every_logit_a_variable():
    import torch

    L, H, alpha, seed = 9, 3, 0.6, 4
    got = C.logit_gradient_per_key(L, H, alpha, seed)
    g = torch.Generator().manual_seed(seed)
    x0 = torch.randn(L, dtype=torch.float64, generator=g)
    s = torch.zeros(H, L, L, dtype=torch.float64, requires_grad=True)
    mask = torch.ones(L, L, dtype=torch.bool).tril()
    x = x0
    for layer in range(H):
        A = torch.softmax(s[layer].masked_fill(~mask, float("-inf")), dim=1)
        x = (1 - alpha) * x + alpha * A @ x
    (grad,) = torch.autograd.grad(x[-1], s)
    expected = grad.pow(2).sum((0, 1)).sqrt().numpy()  # over layers and queries, per key
    assert np.allclose(got["per_key"], expected, rtol=1e-10, atol=1e-14)
    assert np.allclose(got["rho"], C.last_row(L, H, alpha))
