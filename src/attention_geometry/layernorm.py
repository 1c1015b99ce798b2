r"""LayerNorm as a projection followed by a scaling.

Definitions (chapter 1 of the book). For a row :math:`x \in \mathbb{R}^d`,
with :math:`\mathbf 1 = (1, \dots, 1)`,

* the projection onto the hyperplane :math:`H = \{v : \langle v, \mathbf 1\rangle = 0\}`
  is :math:`P x = x - \mu(x)\,\mathbf 1` with :math:`P = I - \mathbf 1\mathbf 1^\top / d`
  and :math:`\mu(x) = \langle x, \mathbf 1\rangle / d` (:func:`project_to_hyperplane`,
  :func:`projection_matrix`);
* the per-coordinate (biased) variance is :math:`\sigma^2(x) = \lVert P x\rVert^2 / d`
  (:func:`coordinate_std` returns :math:`\sigma`);
* the scaling onto the sphere of radius :math:`\sqrt d` is
  :math:`S(x) = \sqrt d\, x / \lVert x\rVert` (:func:`scale_to_sphere`);
* LayerNorm, exactly as ``torch.nn.functional.layer_norm`` computes it, is
  :math:`\mathrm{LN}_{\varepsilon,\gamma,\beta}(x) = \gamma \odot P x / \sqrt{\sigma^2(x) + \varepsilon} + \beta`
  (:func:`layer_norm`); with :math:`\varepsilon = 0`, :math:`\gamma = \mathbf 1`,
  :math:`\beta = 0` it equals :math:`S(P x)`;
* RMSNorm is :math:`\gamma \odot x / \sqrt{\lVert x\rVert^2/d + \varepsilon}`
  (:func:`rms_norm`); with :math:`\varepsilon = 0`, :math:`\gamma = \mathbf 1` it equals
  :math:`S(x)`, so :math:`\mathrm{LN}(x) = \mathrm{RMSNorm}(P x)`;
* for :math:`\varepsilon > 0` the output keeps its direction and has norm
  :math:`\sqrt d\,\sigma/\sqrt{\sigma^2+\varepsilon}`; :func:`eps_norm_deficit` is the
  relative shortfall :math:`1 - \sigma/\sqrt{\sigma^2+\varepsilon}`.

Conventions. Every function acts along the last axis: ``x: (..., d)`` means any
number of leading batch axes and the feature axis ``d`` last; the output has the
input's shape. Inputs are NumPy arrays (or anything ``numpy.asarray`` accepts;
a ``torch.Tensor`` is accepted too and a tensor of the same dtype and device is
returned, without gradients). Floating inputs of dtype float16, float32 and
float64 keep their dtype; integer inputs are converted to float64; any other
dtype is a ``TypeError``. Arithmetic runs in float32 for float16/float32 inputs
and in float64 for float64 inputs.

Edge cases (decided here, never a silent NaN):

* NaN or infinity anywhere in ``x``, ``gamma`` or ``beta`` is a ``ValueError``
  naming it.
* ``x`` without axes, or with ``d = 0``, or ``gamma``/``beta`` not of shape
  ``(d,)``, is a ``ValueError``; a negative, NaN or infinite ``eps`` too.
* A row on which the map is undefined is a ``ValueError``: a constant row
  (:math:`P x = 0`) for LayerNorm with ``eps == 0``, and a zero row for RMSNorm
  with ``eps == 0`` and for :func:`scale_to_sphere`.
* With ``eps > 0`` a constant row maps to ``beta`` (to 0 for RMSNorm), which is
  the limit of the formula and what PyTorch returns.
* Huge and tiny inputs (1e300 or subnormals in float64, 6e4 in float16) do not
  overflow or underflow in intermediate steps: each row is first divided by a
  power of two ``m`` within a factor 2 of its largest absolute entry (a division
  without rounding). For ``eps == 0`` nothing else is needed, the maps being
  scale invariant. For ``eps > 0`` the scale matters; with
  :math:`x = m u`, :math:`\mathrm{LN}_\varepsilon(x) = P u / \sqrt{\sigma^2(u) + \varepsilon/m^2}`,
  evaluated with ``hypot`` so that neither :math:`m^2` nor :math:`\varepsilon/m^2`
  is ever formed.
* The centring is done twice (the second pass removes the rounding error of
  the first mean), so the output is orthogonal to :math:`\mathbf 1` to working
  precision even for nearly constant rows.
* An output that does not fit the dtype (a huge ``gamma`` or ``beta`` in
  float16, say) is an ``OverflowError``.
"""

import math
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import torch

from ._checks import ArgumentTypeError, as_generator, check_choice, check_float, check_int, described, fail, shape_of

#: An argument that is numpy (anything ``numpy.asarray`` takes) or a torch tensor; the
#: functions return the same kind (torch is imported only when a tensor comes in).
ArrayOrTensor = npt.ArrayLike | "torch.Tensor"

__all__ = [
    "projection_matrix",
    "hyperplane_basis",
    "project_to_hyperplane",
    "centre",
    "coordinate_std",
    "scale_to_sphere",
    "layer_norm",
    "rms_norm",
    "eps_norm_deficit",
    "deficit_from_ratio",
    "uniform_query",
    "selection_margin",
    "random_inputs",
    "log_spaced_dims",
    "NORMS",
    "normalise",
]

_FLOATS = (np.float16, np.float32, np.float64)


# --------------------------------------------------------------------------
# Input handling: one place that normalises arrays, dtypes and parameters.


def _as_numpy(x, name):
    """``(array, wrap)``: the NumPy view of ``x`` and a function that gives the
    result back in ``x``'s own kind (a torch tensor for a tensor)."""
    if type(x).__module__.split(".")[0] == "torch" and hasattr(x, "detach"):
        import torch  # only reached when the caller already uses torch

        if x.dtype not in (torch.float16, torch.float32, torch.float64):
            raise fail(name, described(f"a tensor of dtype {x.dtype}"), "float16, float32 or float64",
                       "has the wrong dtype", kind=ArgumentTypeError)
        device = x.device
        return x.detach().cpu().numpy(), lambda out: torch.from_numpy(out).to(device)
    return np.asarray(x), lambda out: out


def _check_dtype(a, name):
    if a.dtype.type in _FLOATS:
        return a
    if np.issubdtype(a.dtype, np.integer) and a.dtype != np.bool_:
        return a.astype(np.float64)
    raise fail(name, described(f"an array of dtype {a.dtype}"), "float16, float32 or float64 (or integers)",
               "has the wrong dtype", kind=ArgumentTypeError)


def _check_finite(a, name):
    if not np.all(np.isfinite(a)):
        what = "NaN" if np.any(np.isnan(a)) else "infinity"
        raise fail(name, described(f"an array that contains {what}"), "finite entries (LayerNorm geometry needs them)")


def _prepare(x):
    """Validate ``x: (..., d)``; return ``(array, work_dtype, wrap)``."""
    a, wrap = _as_numpy(x, "x")
    a = _check_dtype(a, "x")
    if a.ndim == 0:
        raise fail("x", described("a scalar"), "an array (..., d) with at least one axis", "has the wrong shape")
    if a.shape[-1] == 0:
        raise fail("x", shape_of(a), "an array (..., d) with d >= 1 (the last axis is the features)",
                   "has an empty feature axis")
    _check_finite(a, "x")
    work = np.float64 if a.dtype == np.float64 else np.float32
    return a, work, wrap


def _vector(v, name, d, work):
    """Validate an affine parameter: ``None`` or shape ``(d,)``, finite."""
    if v is None:
        return None
    a, _ = _as_numpy(v, name)
    a = _check_dtype(a, name)
    if a.shape != (d,):
        raise fail(name, shape_of(a), f"shape (d,) = ({d},)", "has the wrong shape")
    _check_finite(a, name)
    return a.astype(work)


def _check_eps(eps):
    return check_float("eps", eps, low=0.0)


def _check_d(d):
    return check_int("d", d, low=1)


def _finish(out, dtype, wrap, what):
    with np.errstate(over="ignore"):  # reported below, with the dtype named
        out = out.astype(dtype)
    if not np.all(np.isfinite(out)):
        raise OverflowError(f"{what} does not fit in {np.dtype(dtype).name}")
    return wrap(out)


# --------------------------------------------------------------------------
# The numerical core: rows scaled exactly by a power of two near their max-abs entry.


def _scaled_rows(a, work):
    """``(u, m)`` with ``a = m * u`` row-wise, exactly.

    ``m: (..., 1)`` float64 is a power of two, so the division is exact (no
    rounding, whatever the row's conditioning) and ``1 <= max|u| < 2``; a zero
    row gets ``m = 0`` and ``u = 0``.
    """
    a = a.astype(work)
    biggest = np.max(np.abs(a), axis=-1, keepdims=True)
    _, e = np.frexp(biggest)  # biggest = f 2^e, 1/2 <= f < 1 (e = 0 for 0)
    u = np.ldexp(a, -(e - 1)).astype(work)
    m = np.where(biggest > 0, np.ldexp(1.0, e - 1), 0.0)
    return u, m


def _centred(u):
    """``P u`` for ``|u| < 2``, centred twice (see the module docstring)."""
    c = u - np.mean(u, axis=-1, keepdims=True)
    return c - np.mean(c, axis=-1, keepdims=True)


def _rms(v):
    """``||v|| / sqrt(d)`` without overflow or underflow: ``(..., 1)``."""
    s = np.max(np.abs(v), axis=-1, keepdims=True)
    safe = np.where(s > 0, s, 1)
    return s * np.sqrt(np.mean((v / safe) ** 2, axis=-1, keepdims=True))


def _eps_ratio(eps, m):
    """``sqrt(eps) / m`` in float64, ``inf`` where it overflows (or ``m = 0``)."""
    m64 = m.astype(np.float64)
    with np.errstate(over="ignore", divide="ignore"):
        return np.where(m64 > 0, np.sqrt(eps) / np.where(m64 > 0, m64, 1), np.inf)


def _normalise(v, m, eps, work):
    r"""``v / sqrt(rms(v)^2 + eps / m^2)`` row-wise, ``v`` a scaled row.

    This is ``(m v) / sqrt(rms(m v)^2 + eps)``: the normalisation of the
    unscaled row. Rows with ``rms(v) = 0`` give 0 (only reached when eps > 0).
    """
    r = _rms(v)
    if eps == 0:
        return v / np.where(r > 0, r, 1)
    k = _eps_ratio(eps, m)
    fits = k <= np.finfo(work).max / 4
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        # usual case: v / hypot(r, sqrt(eps)/m), no square ever formed
        den = np.hypot(r, np.where(fits, k, 1).astype(work))
        out = v / den
        # sqrt(eps)/m overflows only when m is so tiny that r is negligible:
        # the output is then m v / sqrt(eps) (down in the subnormals)
        tiny = (m * v) / work(np.sqrt(eps))
    out = np.where(fits, out, tiny)
    return np.where(r > 0, out, 0)


# --------------------------------------------------------------------------
# Public API.


def projection_matrix(d: int) -> np.ndarray:
    r"""The orthogonal projection onto :math:`H = \mathbf 1^\perp`: ``P: (d, d)`` (``eq-projection``).

    :math:`P = I - \mathbf 1 \mathbf 1^\top / d`, float64. Symmetric, idempotent,
    of rank :math:`d - 1`, with :math:`P \mathbf 1 = 0`.

    >>> projection_matrix(2)
    array([[ 0.5, -0.5],
           [-0.5,  0.5]])
    """
    d = _check_d(d)
    return np.eye(d) - np.full((d, d), 1.0 / d)


def hyperplane_basis(d: int) -> np.ndarray:
    r"""An orthonormal basis of :math:`H = \mathbf 1^\perp` as columns: ``(d, d - 1)``.

    The Helmert basis: column ``k`` is proportional to
    :math:`(1, \dots, 1, -k, 0, \dots, 0)` with ``k`` ones. Useful to draw or to
    parametrise the image of LayerNorm, the sphere of radius :math:`\sqrt d` in ``H``.

    >>> B = hyperplane_basis(3)
    >>> np.allclose(B.T @ B, np.eye(2)), np.allclose(B.sum(axis=0), 0)
    (True, True)
    """
    d = _check_d(d)
    if d < 2:
        raise fail("d", d, "an integer >= 2 (the hyperplane 1-perp is {0} for d = 1)", "is out of range")
    basis = np.zeros((d, d - 1))
    for k in range(1, d):
        basis[:k, k - 1] = 1.0
        basis[k, k - 1] = -k
        basis[:, k - 1] /= np.sqrt(k * (k + 1))
    return basis


def project_to_hyperplane(x: ArrayOrTensor) -> ArrayOrTensor:
    r"""The projection :math:`P x = x - \mu(x) \mathbf 1` of each row: ``(..., d) -> (..., d)`` (``eq-projection``).

    Linear, so computed as :math:`m\, P(x/m)` with ``m`` the row's largest absolute
    entry: no overflow for huge rows.

    >>> project_to_hyperplane(np.array([1.0, 2.0, 6.0]))
    array([-2., -1.,  3.])
    """
    a, work, wrap = _prepare(x)
    u, m = _scaled_rows(a, work)
    with np.errstate(under="ignore"):
        out = m * _centred(u)
    return _finish(out, a.dtype, wrap, "P x")


centre = project_to_hyperplane
"""Alias of :func:`project_to_hyperplane`: subtract each row's mean."""


def coordinate_std(x: ArrayOrTensor) -> ArrayOrTensor:
    r"""The biased standard deviation of each row's coordinates: ``(..., d) -> (...)``.

    :math:`\sigma(x) = \lVert P x\rVert / \sqrt d`, so that
    :math:`\sigma^2` is the variance LayerNorm divides by. Computed without
    forming squares of huge entries.

    >>> float(coordinate_std(np.array([1.0, 3.0])))
    1.0
    """
    a, work, wrap = _prepare(x)
    u, m = _scaled_rows(a, work)
    with np.errstate(under="ignore"):
        out = (m * _rms(_centred(u)))[..., 0]
    return _finish(np.asarray(out), a.dtype, wrap, "sigma(x)")


def scale_to_sphere(x: ArrayOrTensor) -> ArrayOrTensor:
    r"""Scale each row onto the sphere of radius :math:`\sqrt d`: ``(..., d) -> (..., d)``; on :math:`H`
    its image is the sphere ``eq-image-sphere`` that LayerNorm maps onto.

    :math:`S(x) = \sqrt d\, x / \lVert x\rVert`. A zero row is a ``ValueError``.

    >>> scale_to_sphere(np.array([3.0, 4.0]))
    array([0.84852814, 1.13137085])
    """
    a, work, wrap = _prepare(x)
    u, m = _scaled_rows(a, work)
    if np.any(m == 0):
        raise fail("x", described("an array with a zero row"), "rows that are not zero (a zero row has no "
                   "direction to scale onto the sphere)")
    return _finish(_normalise(u, m, 0.0, work), a.dtype, wrap, "S(x)")


def layer_norm(x: ArrayOrTensor, eps: float = 0.0, gamma: ArrayOrTensor | None = None,
               beta: ArrayOrTensor | None = None) -> ArrayOrTensor:
    r"""LayerNorm of each row, as ``torch.nn.functional.layer_norm`` computes it (``eq-layernorm``;
    with ``eps > 0``, ``eq-ln-eps``).

    ``x: (..., d)``, ``gamma: (d,) | None`` (default ones), ``beta: (d,) | None``
    (default zeros); returns ``(..., d)``:

    .. math:: \gamma \odot \frac{P x}{\sqrt{\sigma^2(x) + \varepsilon}} + \beta .

    With ``eps == 0`` a constant row is a ``ValueError`` (``P x = 0``); with
    ``eps > 0`` it maps to ``beta``.

    >>> layer_norm(np.array([1.0, 2.0, 6.0]))
    array([-0.9258201 , -0.46291005,  1.38873015])
    """
    eps = _check_eps(eps)
    a, work, wrap = _prepare(x)
    d = a.shape[-1]
    g = _vector(gamma, "gamma", d, work)
    b = _vector(beta, "beta", d, work)
    u, m = _scaled_rows(a, work)
    c = _centred(u)
    if eps == 0 and np.any(np.all(c == 0, axis=-1)):
        raise fail("x", described("an array with a constant row"), "rows that are not constant, or eps > 0 "
                   "(P x = 0 there: LayerNorm with eps = 0 is undefined; with eps > 0 such a row maps to beta)")
    out = _normalise(c, m, eps, work)
    if g is not None:
        out = out * g
    if b is not None:
        out = out + b
    return _finish(out, a.dtype, wrap, "LayerNorm(x)")


def rms_norm(x: ArrayOrTensor, eps: float = 0.0, gamma: ArrayOrTensor | None = None) -> ArrayOrTensor:
    r"""RMSNorm of each row: scaling without projection. ``(..., d) -> (..., d)``.

    .. math:: \gamma \odot \frac{x}{\sqrt{\lVert x\rVert^2/d + \varepsilon}} ,

    as ``torch.nn.functional.rms_norm`` computes it. With ``eps == 0`` and no
    ``gamma`` this is :func:`scale_to_sphere`; a zero row is then a ``ValueError``,
    and maps to 0 when ``eps > 0``.

    >>> rms_norm(np.array([3.0, 4.0]))
    array([0.84852814, 1.13137085])
    """
    eps = _check_eps(eps)
    a, work, wrap = _prepare(x)
    g = _vector(gamma, "gamma", a.shape[-1], work)
    u, m = _scaled_rows(a, work)
    if eps == 0 and np.any(m == 0):
        raise fail("x", described("an array with a zero row"), "rows that are not zero, or eps > 0 "
                   "(RMSNorm with eps = 0 is undefined there)")
    out = _normalise(u, m, eps, work)
    if g is not None:
        out = out * g
    return _finish(out, a.dtype, wrap, "RMSNorm(x)")


def eps_norm_deficit(x: ArrayOrTensor, eps: float) -> ArrayOrTensor:
    r"""Closed-form relative norm deficit of LayerNorm with ``eps`` (``eq-d-mideficit``): ``(..., d) -> (...)``.

    .. math:: \delta = 1 - \frac{\lVert \mathrm{LN}_\varepsilon(x)\rVert}{\sqrt d}
              = 1 - \frac{\sigma}{\sqrt{\sigma^2 + \varepsilon}}
              = \frac{t}{\sqrt{1+t}\,(1+\sqrt{1+t})},\quad t = \varepsilon/\sigma^2,

    evaluated without cancellation (so tiny deficits keep full relative
    accuracy) and without forming :math:`\sigma^2`. It is
    :math:`\varepsilon/(2\sigma^2) + O(t^2)` for small ``t``; 0 when ``eps == 0``
    (constant rows excepted), 1 for a constant row with ``eps > 0``. Returned in
    float64 whatever the input dtype.

    >>> round(float(eps_norm_deficit(np.array([1.0, -1.0]), eps=3.0)), 12)
    0.5
    """
    eps = _check_eps(eps)
    a, _, wrap = _prepare(x)
    u, m = _scaled_rows(a, np.float64)
    r = _rms(_centred(u))
    if eps == 0:
        if np.any(r == 0):
            raise fail("x", described("an array with a constant row"), "rows that are not constant, or eps > 0 "
                       "(LayerNorm with eps = 0 is undefined there)")
        return wrap(np.zeros(r.shape[:-1]))
    k = _eps_ratio(eps, m)  # (r, k) is proportional to (sigma, sqrt(eps))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        h = np.hypot(r, np.where(np.isfinite(k), k, 1))
        delta = (k / h) * (k / (h + r))  # = 1 - r / h without cancellation
    delta = np.where(np.isfinite(k), delta, 1.0)
    delta = np.where(r > 0, delta, 1.0)
    return wrap(np.asarray(delta[..., 0], dtype=np.float64))


def deficit_from_ratio(t: npt.ArrayLike) -> np.ndarray:
    r"""The relative norm deficit as a function of :math:`t = \varepsilon/\sigma^2 \ge 0`.

    :math:`\delta(t) = 1 - 1/\sqrt{1+t} = t / (\sqrt{1+t}\,(1+\sqrt{1+t}))`, the
    second form free of cancellation; ``t: (...)`` array-like, float64 out.

    >>> deficit_from_ratio([0.0, 3.0])
    array([0. , 0.5])
    """
    t = np.asarray(t, dtype=np.float64)
    _check_finite(t, "t")
    if np.any(t < 0):
        raise fail("t", described("an array with a negative entry"), "t = eps / sigma^2 >= 0")
    root = np.sqrt(1.0 + t)
    return t / (root * (1.0 + root))


def uniform_query(gamma: ArrayOrTensor | None = None, d: int | None = None) -> np.ndarray:
    r"""A query that scores every LayerNorm output equally: ``(d,)``, float64.

    Without affine parameters it is :math:`\mathbf 1` (give ``d``): every output
    lies in :math:`H = \mathbf 1^\perp`, so :math:`\langle \mathbf 1, \mathrm{LN}(x)\rangle = 0`.
    With ``gamma`` (no zero entry) it is :math:`\mathbf 1/\gamma`, the normal of the
    affine hyperplane through ``beta`` that holds every output, so
    :math:`\langle \mathbf 1/\gamma, \mathrm{LN}(x)\rangle = \langle \mathbf 1/\gamma, \beta\rangle`
    for all ``x``.

    >>> uniform_query(np.array([2.0, -4.0]))
    array([ 0.5 , -0.25])
    """
    if gamma is None:
        if d is None:
            raise fail("gamma", None, "an array (d,), or d given", "is not allowed with d = None")
        return np.ones(_check_d(d))
    g, _ = _as_numpy(gamma, "gamma")
    g = _check_dtype(g, "gamma").astype(np.float64)
    if g.ndim != 1 or g.size == 0:
        raise fail("gamma", shape_of(g), "shape (d,) with d >= 1", "has the wrong shape")
    _check_finite(g, "gamma")
    if d is not None and g.shape != (d,):
        raise fail("gamma", shape_of(g), f"shape (d,) = ({d},)", "has the wrong shape")
    if np.any(g == 0):
        raise fail("gamma", described("an array with a zero entry"), "entries that are not zero (the normal "
                   "1/gamma is undefined there)")
    return 1.0 / g


def selection_margin(queries: ArrayOrTensor, keys: ArrayOrTensor) -> np.ndarray:
    r"""How strictly each key wins its own query: ``(n, d), (n, d) -> (n,)``.

    Entry ``k`` is :math:`\langle q_k, k_k\rangle - \max_{j \ne k} \langle q_k, k_j\rangle`;
    positive means key ``k`` is the unique highest-scoring key for query ``k``,
    so it is an extreme point of the keys' convex hull. Needs ``n >= 2``.

    >>> selection_margin(np.eye(2), np.eye(2))
    array([1., 1.])
    """
    q = np.asarray(queries, dtype=np.float64)
    k = np.asarray(keys, dtype=np.float64)
    if q.ndim != 2 or q.shape != k.shape or q.shape[0] < 2:
        raise fail("queries, keys", described(f"arrays of shapes {q.shape}, {k.shape}"),
                   "two arrays of one shape (n, d) with n >= 2", "have the wrong shapes")
    _check_finite(q, "queries")
    _check_finite(k, "keys")
    scores = q @ k.T
    own = np.diag(scores).copy()
    np.fill_diagonal(scores, -np.inf)
    return own - scores.max(axis=1)


def random_inputs(
    rng: np.random.Generator | int,
    n: int,
    d: int,
    log10_offset: tuple[float, float] = (-2.0, 3.0),
    log10_scale: tuple[float, float] = (-3.0, 3.0),
) -> np.ndarray:
    r"""Test inputs ``x: (n, d)``, float64: rows :math:`s\,(z + c\,\mathbf 1)`.

    :math:`z \sim N(0, I_d)`; a common offset :math:`c = \pm 10^{U}` with ``U``
    uniform on ``log10_offset`` and a random sign, so that the ratio
    :math:`|\mu(x)|/\sigma(x) \approx |c|` (how much the projection removes,
    and how ill-conditioned the centring is) spans several decades; and a scale
    :math:`s = 10^{V}`, ``V`` uniform on ``log10_scale``, so that scale invariance
    is exercised. Everything is drawn from ``rng`` (a generator or a seed).
    """
    rng = as_generator("rng", rng)
    z = rng.standard_normal((n, d))
    c = rng.choice([-1.0, 1.0], size=(n, 1)) * 10.0 ** rng.uniform(*log10_offset, size=(n, 1))
    s = 10.0 ** rng.uniform(*log10_scale, size=(n, 1))
    return s * (z + c)


def log_spaced_dims(d_min: int, d_max: int, n: int) -> np.ndarray:
    """About ``n`` distinct integers, log-spaced from ``d_min`` to ``d_max``: ``(n',)``.

    Rounding can merge neighbours at the small end, so ``n' <= n``.

    >>> log_spaced_dims(2, 1000, 4)
    array([   2,   16,  126, 1000])
    """
    d_min = check_int("d_min", d_min, low=1)
    d_max = check_int("d_max", d_max, low=d_min)
    n = check_int("n", n, low=1)
    return np.unique(np.geomspace(d_min, d_max, n).round().astype(int))


# --------------------------------------------------------------------------
# The torch form used by every model of the book.

#: The book's one vocabulary for the normalisation in front of attention.
#: ``"layernorm"``: projection and scaling, :math:`\sqrt d\,Px/\lVert Px\rVert`
#: (eq. ``eq-ln-decomposition``); ``"rmsnorm"``: scaling only,
#: :math:`\sqrt d\,x/\lVert x\rVert`; ``"projection"``: projection only, :math:`Px`;
#: ``"none"``: the identity.
NORMS = ("layernorm", "rmsnorm", "projection", "none")


def normalise(x: "torch.Tensor", kind: str = "layernorm", *, eps: float = 0.0,
              radius: float | None = None) -> "torch.Tensor":
    r"""The normalisation ``kind`` of each row of a torch tensor ``x: (..., d)``; differentiable.

    * ``"layernorm"``: :math:`r\,P x / \sqrt{\lVert P x\rVert^2 + d\,\varepsilon}`, i.e.
      ``F.layer_norm(x, eps=eps)`` scaled by :math:`r/\sqrt d` -- with ``eps = 0``
      the map :math:`S \circ P` of eq. ``eq-ln-decomposition`` onto the sphere of
      radius ``r`` in the hyperplane :math:`H`;
    * ``"rmsnorm"``: :math:`r\,x / \sqrt{\lVert x\rVert^2 + d\,\varepsilon}` (scaling only);
    * ``"projection"``: :math:`P x` (projection only; ``eps`` and ``radius`` unused);
    * ``"none"``: ``x``.

    ``radius`` :math:`r` defaults to :math:`\sqrt d` (the book's LayerNorm); a
    deliberately different radius is named where it is used: ``radius=1`` is the
    unit-sphere normalisation of Wu et al.'s dynamics (chapter 5), and
    ``radius=1/sqrt(d)`` the ``normalize(x)/dim**0.5`` of Brody et al.'s code
    (chapter 2). No affine map: a model applies its own :math:`\gamma, \beta`.

    This is the fast torch form; :func:`layer_norm` and :func:`rms_norm` are
    the overflow-safe NumPy forms that chapter 1 checks against PyTorch, and the
    tests check that the two agree for every ``kind``.
    """
    import torch
    import torch.nn.functional as F

    check_choice("kind", kind, NORMS)
    eps = check_float("eps", eps, low=0.0)
    if kind == "none":
        return x
    if kind == "projection":
        return x - x.mean(-1, keepdim=True)
    d = x.shape[-1]
    fn = F.layer_norm if kind == "layernorm" else F.rms_norm
    out = fn(x, (d,), eps=eps)
    if radius is not None:
        out = out * (float(radius) / math.sqrt(d))
    return out
