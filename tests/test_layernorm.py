"""Tests of LayerNorm geometry (chapter 1): the identities, then the edge cases.

The identities are the chapter's propositions: LN(x) = sqrt(d) Px / ||Px||, its
outputs have mean 0 and norm sqrt(d); P is an orthogonal projection; LN(x) =
RMSNorm(Px); the eps > 0 norm deficit has the closed form
1 - sigma / sqrt(sigma^2 + eps); with gamma, beta the outputs lie in the
hyperplane with normal 1/gamma through beta. Property-based tests then range over
shapes, dtypes and scales (1e-320 to 1e300 in float64) and check the documented
behaviour on constant, huge, tiny and non-finite inputs: an error or the
documented value, never a silent NaN.
"""

import doctest
import math
from fractions import Fraction

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import attention_geometry as ag
from attention_geometry import layernorm

RNG_SEED = 20230504


@pytest.fixture
def rng():
    return np.random.default_rng(RNG_SEED)


def test_docstring_examples_run():
    result = doctest.testmod(layernorm, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_public_names_are_reexported():
    for name in layernorm.__all__:
        assert getattr(ag, name) is getattr(layernorm, name)
        assert name in ag.__all__


# --------------------------------------------------------------------------
# The projection P = I - 11^T / d.


@pytest.mark.parametrize("d", [1, 2, 3, 7, 64])
def test_projection_matrix_is_the_orthogonal_projection_onto_1_perp(d, rng):
    P = ag.projection_matrix(d)
    one = np.ones(d)
    np.testing.assert_allclose(P, P.T, atol=0)
    np.testing.assert_allclose(P @ P, P, atol=1e-15)
    np.testing.assert_allclose(P @ one, 0, atol=1e-14)
    assert np.linalg.matrix_rank(P) == d - 1
    x = rng.standard_normal((5, d))
    np.testing.assert_allclose(ag.project_to_hyperplane(x), x @ P.T, atol=1e-14)
    np.testing.assert_allclose(ag.project_to_hyperplane(x) @ one, 0, atol=1e-13)
    assert ag.centre is ag.project_to_hyperplane


@pytest.mark.parametrize("d", [2, 3, 10])
def test_hyperplane_basis_is_orthonormal_in_1_perp(d):
    B = ag.hyperplane_basis(d)
    assert B.shape == (d, d - 1)
    np.testing.assert_allclose(B.T @ B, np.eye(d - 1), atol=1e-14)
    np.testing.assert_allclose(B.sum(axis=0), 0, atol=1e-14)
    np.testing.assert_allclose(B @ B.T, ag.projection_matrix(d), atol=1e-14)


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-3, ValueError), (2.0, TypeError), (True, TypeError)])
def test_projection_matrix_rejects_bad_d(bad, error):
    with pytest.raises(error, match="d"):
        ag.projection_matrix(bad)


def test_hyperplane_basis_needs_d_at_least_2():
    with pytest.raises(ValueError, match="d = 1"):
        ag.hyperplane_basis(1)


# --------------------------------------------------------------------------
# The decomposition and its image.


@pytest.mark.parametrize("shape", [(3,), (10, 2), (4, 5, 17), (2, 300)])
def test_layer_norm_has_mean_zero_and_norm_sqrt_d(shape, rng):
    x = ag.random_inputs(rng, int(np.prod(shape[:-1])), shape[-1]).reshape(shape)
    y = ag.layer_norm(x)
    d = shape[-1]
    assert y.shape == x.shape and y.dtype == np.float64
    np.testing.assert_allclose(y.mean(axis=-1), 0, atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), np.sqrt(d), rtol=1e-14)


def test_layer_norm_is_projection_then_scaling(rng):
    x = ag.random_inputs(rng, 50, 33)
    np.testing.assert_allclose(
        ag.layer_norm(x), ag.scale_to_sphere(ag.project_to_hyperplane(x)), atol=1e-14
    )
    # the image is fixed pointwise: LN(v) = v on the sphere of radius sqrt(d) in H
    v = ag.layer_norm(x)
    np.testing.assert_allclose(ag.layer_norm(v), v, atol=1e-14)


def test_layer_norm_is_invariant_to_shifts_along_1_and_positive_scaling(rng):
    x = rng.standard_normal((20, 9))
    shifted = 3.7 * (x + rng.normal(size=(20, 1)))
    np.testing.assert_allclose(ag.layer_norm(shifted), ag.layer_norm(x), atol=1e-13)


def test_layer_norm_in_d_2_takes_two_values(rng):
    x = rng.standard_normal((100, 2))
    y = ag.layer_norm(x)
    np.testing.assert_allclose(np.abs(y), 1.0, rtol=1e-15)
    np.testing.assert_allclose(y[:, 0], -y[:, 1], rtol=1e-15)


@pytest.mark.parametrize("eps", [0.0, 1e-5, 0.3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("affine", [False, True])
def test_agrees_with_torch_layer_norm(eps, dtype, affine, rng):
    d = 24
    x = rng.standard_normal((64, d)).astype(dtype) * 3 + 1
    gamma = rng.lognormal(size=d).astype(dtype) if affine else None
    beta = rng.normal(size=d).astype(dtype) if affine else None
    tensor = lambda a: None if a is None else torch.from_numpy(a)  # noqa: E731
    expected = F.layer_norm(tensor(x), (d,), tensor(gamma), tensor(beta), eps=eps).numpy()
    got = ag.layer_norm(x, eps=eps, gamma=gamma, beta=beta)
    assert got.dtype == dtype
    tol = 1e-13 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(got, expected, atol=tol)


@pytest.mark.parametrize("eps", [0.0, 1e-6])
def test_agrees_with_torch_rms_norm(eps, rng):
    d = 16
    x = rng.standard_normal((32, d)) + 2.0
    gamma = rng.normal(size=d)
    expected = F.rms_norm(torch.from_numpy(x), (d,), torch.from_numpy(gamma), eps=eps).numpy()
    np.testing.assert_allclose(ag.rms_norm(x, eps=eps, gamma=gamma), expected, atol=1e-14)


def test_rms_norm_scales_to_sqrt_d_but_keeps_the_mean(rng):
    d = 12
    x = rng.standard_normal((40, d)) + rng.normal(0, 3, size=(40, 1))
    r = ag.rms_norm(x)
    rms = np.linalg.norm(x, axis=-1) / np.sqrt(d)
    np.testing.assert_allclose(np.linalg.norm(r, axis=-1), np.sqrt(d), rtol=1e-14)
    np.testing.assert_allclose(r.mean(axis=-1), x.mean(axis=-1) / rms, atol=1e-14)
    assert np.median(np.abs(r.mean(axis=-1))) > 0.1  # not projected
    np.testing.assert_allclose(ag.rms_norm(x), ag.scale_to_sphere(x), atol=0)


def test_layer_norm_is_rms_norm_of_the_projection(rng):
    x = ag.random_inputs(rng, 30, 20)
    np.testing.assert_allclose(ag.layer_norm(x), ag.rms_norm(ag.project_to_hyperplane(x)), atol=1e-14)


def test_coordinate_std_is_the_biased_standard_deviation(rng):
    x = rng.standard_normal((7, 11)) * 5
    np.testing.assert_allclose(ag.coordinate_std(x), x.std(axis=-1), rtol=1e-14)
    np.testing.assert_allclose(ag.coordinate_std(1e300 * x), 1e300 * x.std(axis=-1), rtol=1e-14)


def _exact_layer_norm(row):
    """Reference LN of a float64 row from exact rational centring."""
    values = [Fraction(float(v)) for v in row]
    mean = sum(values) / len(values)
    centred = [v - mean for v in values]
    norm = math.sqrt(float(sum(c * c for c in centred)))
    return np.array([math.sqrt(len(values)) * float(c) / norm for c in centred])


@pytest.mark.parametrize("offset", [0.0, 1e3, 1e8, 1e12])
def test_accuracy_does_not_depend_on_the_offset(offset, rng):
    """Two-pass centring: error at the rounding level whatever |mu| / sigma."""
    for row in rng.standard_normal((20, 6)) + offset:
        np.testing.assert_allclose(ag.layer_norm(row), _exact_layer_norm(row), atol=2e-15)


# --------------------------------------------------------------------------
# eps > 0: same direction, norm deficit 1 - sigma / sqrt(sigma^2 + eps).


@pytest.mark.parametrize("eps", [1e-12, 1e-5, 1e-2, 10.0])
def test_eps_deficit_closed_form_matches_torch(eps, rng):
    d = 50
    x = rng.standard_normal((200, d)) * 10.0 ** rng.uniform(-4, 2, size=(200, 1))
    y = F.layer_norm(torch.from_numpy(x), (d,), eps=eps).numpy()
    measured = 1 - np.linalg.norm(y, axis=-1) / np.sqrt(d)
    closed = ag.eps_norm_deficit(x, eps)
    np.testing.assert_allclose(measured, closed, atol=1e-14)
    t = eps / ag.coordinate_std(x) ** 2
    np.testing.assert_allclose(ag.deficit_from_ratio(t), closed, rtol=1e-12)
    np.testing.assert_allclose(y.mean(axis=-1), 0, atol=1e-14)  # still in H


def test_eps_keeps_the_direction(rng):
    x = rng.standard_normal((30, 8))
    eps = 0.5
    scaled = ag.layer_norm(x) * (1 - ag.eps_norm_deficit(x, eps))[:, None]
    np.testing.assert_allclose(ag.layer_norm(x, eps=eps), scaled, atol=1e-14)


def test_deficit_is_first_order_eps_over_two_sigma_squared():
    t = np.logspace(-12, -3, 10)
    delta = ag.deficit_from_ratio(t)
    np.testing.assert_allclose(delta, t / 2, rtol=1e-3)
    np.testing.assert_allclose((t / 2 - delta) / t**2, 3 / 8, rtol=1e-2)  # next order
    # no cancellation: tiny deficits keep full relative accuracy
    assert ag.deficit_from_ratio(1e-30) == pytest.approx(5e-31, rel=1e-15)


def test_eps_norm_deficit_is_scale_aware_without_overflow():
    row = np.array([1.0, -1.0])  # sigma = 1, so t = eps / s^2 for the row s * row
    cases = {1e-300: 1.0, 1e-150: 1.0, 1.0: float(ag.deficit_from_ratio(1e-2)), 1e150: 5e-303, 1e300: 0.0}
    for s, expected in cases.items():
        assert float(ag.eps_norm_deficit(s * row, 1e-2)) == pytest.approx(expected, rel=1e-12, abs=1e-320)


# --------------------------------------------------------------------------
# The affine map: hyperplane with normal 1/gamma through beta; every output selectable.


def test_affine_outputs_lie_in_the_tilted_hyperplane_and_stay_selectable(rng):
    d, n = 10, 300
    gamma = rng.choice([-1.0, 1.0], d) * rng.lognormal(0, 0.5, d)
    beta = rng.normal(0, 0.5, d)
    y = ag.layer_norm(ag.random_inputs(rng, n, d), gamma=gamma, beta=beta)
    q = ag.uniform_query(gamma)
    np.testing.assert_allclose(q, 1 / gamma)
    np.testing.assert_allclose(y @ q, q @ beta, atol=1e-12)
    assert np.abs(y.mean(axis=-1)).max() > 1e-3  # mean zero is lost
    v = (y - beta) / gamma
    np.testing.assert_allclose(np.linalg.norm(v, axis=-1), np.sqrt(d), rtol=1e-13)
    assert np.all(ag.selection_margin(v / gamma, y) > 0)
    np.testing.assert_allclose(ag.uniform_query(d=4), np.ones(4))


def test_uniform_query_rejects_zero_gamma():
    with pytest.raises(ValueError, match="zero"):
        ag.uniform_query(np.array([1.0, 0.0, 2.0]))
    with pytest.raises(ValueError, match=r"gamma = None .*allowed: an array \(d,\), or d given"):
        ag.uniform_query()


def test_selection_margin_checks_shapes():
    with pytest.raises(ValueError, match="n >= 2"):
        ag.selection_margin(np.ones((1, 3)), np.ones((1, 3)))
    with pytest.raises(ValueError, match="shape"):
        ag.selection_margin(np.ones((2, 3)), np.ones((3, 3)))


# --------------------------------------------------------------------------
# Edge cases, decided and documented in the module docstring.


def test_constant_rows():
    x = np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]])
    beta = np.array([0.5, -1.0, 2.0])
    with pytest.raises(ValueError, match="constant row"):
        ag.layer_norm(x)
    with pytest.raises(ValueError, match="constant row"):
        ag.eps_norm_deficit(x, 0.0)
    y = ag.layer_norm(x, eps=1e-5, gamma=np.array([3.0, 3.0, 3.0]), beta=beta)
    np.testing.assert_array_equal(y[0], beta)  # a constant row maps to beta
    expected = F.layer_norm(torch.from_numpy(x), (3,), None, torch.from_numpy(beta), eps=1e-5)
    np.testing.assert_allclose(ag.layer_norm(x, eps=1e-5, beta=beta), expected.numpy(), atol=1e-15)
    assert ag.eps_norm_deficit(x, 1e-5)[0] == 1.0
    np.testing.assert_array_equal(ag.project_to_hyperplane(x)[0], 0.0)
    np.testing.assert_array_equal(ag.coordinate_std(x)[0], 0.0)


def test_zero_rows_for_scaling():
    x = np.zeros((2, 4))
    with pytest.raises(ValueError, match="zero row"):
        ag.scale_to_sphere(x)
    with pytest.raises(ValueError, match="zero row"):
        ag.rms_norm(x)
    np.testing.assert_array_equal(ag.rms_norm(x, eps=1e-6), 0.0)


def test_d_1_is_always_constant():
    with pytest.raises(ValueError, match="constant row"):
        ag.layer_norm(np.array([[3.0], [4.0]]))
    np.testing.assert_array_equal(ag.layer_norm(np.array([[3.0]]), eps=1e-5, beta=np.array([7.0])), [[7.0]])


@pytest.mark.parametrize("bad, word", [(np.nan, "NaN"), (np.inf, "infinity"), (-np.inf, "infinity")])
@pytest.mark.parametrize(
    "fn",
    [
        ag.layer_norm,
        ag.rms_norm,
        ag.project_to_hyperplane,
        ag.scale_to_sphere,
        ag.coordinate_std,
        lambda x: ag.eps_norm_deficit(x, 1e-5),
    ],
)
def test_non_finite_inputs_are_errors(fn, bad, word):
    x = np.ones((3, 4))
    x[1, 2] = bad
    with pytest.raises(ValueError, match=word):
        fn(x)


@pytest.mark.parametrize("which", ["gamma", "beta"])
def test_non_finite_affine_parameters_are_errors(which):
    bad = np.array([1.0, np.nan, 1.0])
    with pytest.raises(ValueError, match=f"^{which} = an array that contains NaN is not allowed; allowed: finite"):
        ag.layer_norm(np.arange(3.0), **{which: bad})


def test_bad_shapes_and_parameters():
    with pytest.raises(ValueError, match="scalar"):
        ag.layer_norm(np.float64(3.0))
    with pytest.raises(ValueError, match="empty"):
        ag.layer_norm(np.zeros((3, 0)))
    with pytest.raises(ValueError, match=r"^gamma = an array of shape \(4,\) has the wrong shape; allowed: shape \(d,\) = \(3,\)$"):
        ag.layer_norm(np.arange(3.0), gamma=np.ones(4))
    with pytest.raises(ValueError, match=r"^beta = an array of shape \(1, 3\) has the wrong shape"):
        ag.layer_norm(np.arange(3.0), beta=np.ones((1, 3)))
    with pytest.raises(ValueError, match="eps"):
        ag.layer_norm(np.arange(3.0), eps=-1e-5)
    with pytest.raises(ValueError, match="eps"):
        ag.layer_norm(np.arange(3.0), eps=float("nan"))
    with pytest.raises(TypeError, match="eps"):
        ag.layer_norm(np.arange(3.0), eps=True)
    for bad in [np.arange(3) + 1j, np.array([True, False, True]), np.array(["a", "b"])]:
        with pytest.raises(TypeError, match="dtype"):
            ag.layer_norm(bad)


def test_empty_batch_and_integer_input():
    assert ag.layer_norm(np.zeros((0, 5))).shape == (0, 5)
    y = ag.layer_norm(np.array([1, 2, 6]))
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, ag.layer_norm(np.array([1.0, 2.0, 6.0])))


def test_torch_tensors_in_torch_tensors_out():
    x = torch.tensor([[1.0, 2.0, 6.0]], dtype=torch.float32)
    y = ag.layer_norm(x)
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float32
    torch.testing.assert_close(y, F.layer_norm(x, (3,), eps=0.0))
    with pytest.raises(TypeError, match="bfloat16"):
        ag.layer_norm(x.to(torch.bfloat16))


def test_output_that_does_not_fit_the_dtype_is_an_error():
    x = np.array([1.0, 2.0, 6.0], dtype=np.float16)
    with pytest.raises(OverflowError, match="float16"):
        ag.layer_norm(x, gamma=np.full(3, 6e4, dtype=np.float16))
    with pytest.raises(OverflowError, match="float32"):
        ag.project_to_hyperplane(np.array([-3e38, 3e38, 3e38], dtype=np.float32))


def test_extreme_scales_against_torch_failures():
    """Where PyTorch over- or underflows (chapter 1's caveat), the library does not."""
    row = np.array([[1.0, -1.0, 0.0]])
    expected = np.array([[np.sqrt(1.5), -np.sqrt(1.5), 0.0]])
    for s in [1e-320, 1e-170, 1e200, 1e300]:
        np.testing.assert_allclose(ag.layer_norm(s * row), expected, rtol=1e-2 if s < 1e-307 else 1e-15)
    h = np.array([6e4, -6e4, 1.0], dtype=np.float16)
    np.testing.assert_allclose(ag.layer_norm(h).astype(float), expected[0], atol=2e-3)


def test_helpers(rng):
    np.testing.assert_array_equal(ag.log_spaced_dims(2, 4096, 16)[[0, -1]], [2, 4096])
    a = ag.random_inputs(np.random.default_rng(1), 4, 3)
    np.testing.assert_array_equal(a, ag.random_inputs(np.random.default_rng(1), 4, 3))
    with pytest.raises(TypeError, match="Generator"):
        ag.random_inputs(1.0, 4, 3)
    np.testing.assert_array_equal(a, ag.random_inputs(1, 4, 3))  # a seed: default_rng(seed)
    with pytest.raises(ValueError):
        ag.log_spaced_dims(5, 3, 2)
    with pytest.raises(ValueError, match=">= 0"):
        ag.deficit_from_ratio(-1.0)


# --------------------------------------------------------------------------
# Property-based tests over shapes, dtypes and scales.

# log10 of the largest |entry| each dtype can take (float64 down into the subnormals)
EXPONENTS = {np.float16: (-7.0, 4.7), np.float32: (-44.0, 38.0), np.float64: (-320.0, 300.0)}
EPS = {np.float16: 2.0**-10, np.float32: 2.0**-23, np.float64: 2.0**-52}


@st.composite
def rows(draw):
    """``(x, dtype)``: x of shape (*batch, d), entries scaled by 10^e, some rows constant."""
    dtype = draw(st.sampled_from([np.float16, np.float32, np.float64]))
    batch = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    d = draw(st.integers(1, 40))
    unit = draw(
        hnp.arrays(
            np.float64,
            batch + (d,),
            elements=st.one_of(st.sampled_from([-1.0, 0.0, 0.5, 1.0]), st.floats(-1, 1, width=64)),
        )
    )
    if draw(st.booleans()) and unit.size:  # make the first row constant
        flat = unit.reshape(-1, d)
        flat[0] = flat[0, 0]
        unit = flat.reshape(unit.shape)
    lo, hi = EXPONENTS[dtype]
    e = draw(st.floats(lo, hi))
    x = (unit * 10.0**e).astype(dtype)
    return x, dtype


def _constant_rows(x):
    return np.all(x == x[..., :1], axis=-1)


def _tolerance(dtype, d):
    work = np.float64 if dtype == np.float64 else np.float32
    return (8 * d * EPS[work] + 4 * EPS[dtype]) * np.sqrt(d)


PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(rows())
def test_property_layer_norm_without_eps(case):
    x, dtype = case
    d = x.shape[-1]
    if np.any(_constant_rows(x)):
        with pytest.raises(ValueError, match="constant row"):
            ag.layer_norm(x)
        return
    y = ag.layer_norm(x)
    assert y.dtype == dtype and y.shape == x.shape
    assert np.all(np.isfinite(y))
    y64 = y.astype(np.float64)
    tol = _tolerance(dtype, d)
    np.testing.assert_allclose(y64.mean(axis=-1), 0, atol=tol)
    np.testing.assert_allclose(np.linalg.norm(y64, axis=-1), np.sqrt(d), atol=tol)
    # same result as the float64 computation on the same values: scale and dtype free
    reference = ag.layer_norm(x.astype(np.float64))
    np.testing.assert_allclose(y64, reference, atol=tol)


@PROPERTY
@given(rows(), st.sampled_from([1e-12, 1e-5, 1e-2, 1.0]))
def test_property_layer_norm_with_eps(case, eps):
    x, dtype = case
    d = x.shape[-1]
    beta = np.linspace(-1, 1, d).astype(dtype)
    y = ag.layer_norm(x, eps=eps, beta=beta)
    assert y.dtype == dtype and np.all(np.isfinite(y))
    z = (y.astype(np.float64) - beta.astype(np.float64))
    constant = _constant_rows(x)
    np.testing.assert_array_equal(z[constant], 0.0)  # constant rows map to beta
    tol = _tolerance(dtype, d) + 2 * EPS[dtype] * np.abs(beta.astype(np.float64)).max()
    np.testing.assert_allclose(z.mean(axis=-1), 0, atol=tol)
    expected_norm = np.sqrt(d) * (1 - ag.eps_norm_deficit(x, eps))
    np.testing.assert_allclose(np.linalg.norm(z, axis=-1), expected_norm, atol=tol)


@PROPERTY
@given(rows(), st.sampled_from([0.0, 1e-6]))
def test_property_rms_norm(case, eps):
    x, dtype = case
    d = x.shape[-1]
    zero = np.all(x == 0, axis=-1)
    if eps == 0 and np.any(zero):
        with pytest.raises(ValueError, match="zero row"):
            ag.rms_norm(x, eps=eps)
        return
    y = ag.rms_norm(x, eps=eps)
    assert y.dtype == dtype and np.all(np.isfinite(y))
    y64 = y.astype(np.float64)
    np.testing.assert_array_equal(y64[zero], 0.0)
    tol = _tolerance(dtype, d)
    if eps == 0:
        np.testing.assert_allclose(np.linalg.norm(y64, axis=-1), np.sqrt(d), atol=tol)
    # the direction is kept: y is a non-negative multiple of x
    x64 = x.astype(np.float64)
    x64 = x64 / np.where(zero, 1, np.abs(x64).max(axis=-1))[..., None]
    unit_x = x64 / np.where(zero, 1, np.linalg.norm(x64, axis=-1))[..., None]
    unit_y = y64 / np.maximum(np.linalg.norm(y64, axis=-1, keepdims=True), 1e-300)
    keep = (~zero) & (np.linalg.norm(y64, axis=-1) > 1e-3)
    np.testing.assert_allclose(unit_y[keep], unit_x[keep], atol=tol)


@PROPERTY
@given(rows())
def test_property_projection(case):
    x, dtype = case
    x64 = x.astype(np.float64)
    exact = x64 - x64.mean(axis=-1, keepdims=True)
    if np.abs(exact).max(initial=0) > 0.999 * np.finfo(dtype).max:
        with pytest.raises(OverflowError, match=np.dtype(dtype).name):  # |Px| <= 2 max|x|
            ag.project_to_hyperplane(x)
        return
    px = ag.project_to_hyperplane(x)
    assert px.dtype == dtype and np.all(np.isfinite(px))
    scale = np.abs(x64).max(axis=-1, keepdims=True)
    scale = np.where(scale > 0, scale, 1)
    d = x.shape[-1]
    # relative to the row's size, plus the spacing of subnormal outputs
    atol = 4 * d * EPS[dtype] + 2 * float(np.finfo(dtype).smallest_subnormal) / scale
    px64 = px.astype(np.float64)
    assert np.all(np.abs(px64 - exact) / scale <= atol)
    assert np.all(np.abs(ag.project_to_hyperplane(px64) - px64) / scale <= atol)  # idempotent


@settings(max_examples=60, deadline=None)
@given(rows(), st.sampled_from([np.nan, np.inf, -np.inf]), st.integers(0, 10**6))
def test_property_non_finite_is_always_an_error(case, bad, where):
    x, _ = case
    x = np.array(x, copy=True)
    x.reshape(-1)[where % x.size] = bad
    for fn in (ag.layer_norm, ag.rms_norm, ag.project_to_hyperplane, ag.coordinate_std):
        with pytest.raises(ValueError, match="NaN|infinity"):
            fn(x)
    with pytest.raises(ValueError, match="NaN|infinity"):
        ag.layer_norm(x, eps=1e-5)


# --------------------------------------------------------------------------
# The torch form: one vocabulary, the stated geometry, agreement with NumPy.


@pytest.mark.parametrize("kind", ag.NORMS)
def test_normalise_gives_the_stated_geometry(kind):
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(2)
    X = torch.randn(3, 5, 7, generator=g, dtype=torch.float64) * 5 + 1.5
    Z = ag.normalise(X, kind)
    ones = torch.ones(Z.shape[:-1], dtype=Z.dtype)
    if kind == "none":
        torch.testing.assert_close(Z, X)
    if kind in ("layernorm", "projection"):
        torch.testing.assert_close(Z.sum(-1), 0 * ones)  # in the hyperplane H
    if kind in ("layernorm", "rmsnorm"):
        torch.testing.assert_close(Z.norm(dim=-1), 7**0.5 * ones)  # on the sphere of radius sqrt(d)
        torch.testing.assert_close(ag.normalise(X, kind, radius=1.0).norm(dim=-1), ones)
    if kind == "rmsnorm":
        assert Z.mean(-1).abs().max() > 1e-3  # no projection
    # the same map as the overflow-safe NumPy forms of chapter 1
    reference = {"layernorm": ag.layer_norm, "rmsnorm": ag.rms_norm,
                 "projection": ag.project_to_hyperplane, "none": lambda x: x}[kind]
    np.testing.assert_allclose(Z.numpy(), reference(X.numpy()), rtol=1e-12, atol=1e-12)
    for eps in (1e-5, 0.5):
        if kind == "layernorm":
            np.testing.assert_allclose(ag.normalise(X, kind, eps=eps).numpy(),
                                       ag.layer_norm(X.numpy(), eps=eps), rtol=1e-12, atol=1e-12)
        if kind == "rmsnorm":
            np.testing.assert_allclose(ag.normalise(X, kind, eps=eps).numpy(),
                                       ag.rms_norm(X.numpy(), eps=eps), rtol=1e-12, atol=1e-12)


def test_normalise_rejects_unknown_kinds_with_the_vocabulary():
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match=r"kind = 'rms' is not one of the choices; allowed: one of 'layernorm', 'rmsnorm'"):
        ag.normalise(torch.zeros(2, 3), "rms")
