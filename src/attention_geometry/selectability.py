r"""Selectable and unselectable keys (chapter 3 of the book).

Definitions. Let :math:`k_1, \dots, k_n \in \mathbb R^d` be the keys of one
attention head over one sequence (``keys: (n, d)``).

* Key :math:`k_i` is **selectable** when some query :math:`q` gives it the
  strictly largest score, :math:`q\cdot k_i > q\cdot k_j` for every
  :math:`j \ne i`; otherwise it is **unselectable**: no query makes
  attention's argmax land on it.
* :math:`k_i` is unselectable iff it lies in the convex hull
  :math:`C_i = \operatorname{conv}\{k_j : j \ne i\}` of the *other* keys
  (separating hyperplane theorem; the book proves it). A key equal to another
  key lies in :math:`C_i`: duplicates tie and are never the strict argmax.
  A single key (``n = 1``) is selectable.

Tolerance. Floating point cannot decide "on the boundary of :math:`C_i`", so
the test decides a robust version. The keys are first centred and divided by
:math:`s = \max_{j} \lVert k_j - \bar k\rVert_\infty` (scores change by a
positive factor and a constant: selectability is unchanged). In these units
the best score margin a query with :math:`\lVert q\rVert_\infty \le 1` can give
:math:`k_i`,

.. math:: m_i = \max_{\lVert q\rVert_\infty \le 1}\ \min_{j \ne i}\ q\cdot(k_i - k_j)
          = \min_{\lambda \in \Delta}\ \bigl\lVert k_i - \textstyle\sum_{j\ne i}\lambda_j k_j\bigr\rVert_1 ,

is the :math:`\ell_1` distance from :math:`k_i` to :math:`C_i` (LP duality).
Key :math:`i` is declared selectable iff :math:`m_i > \tau` with
``tol`` :math:`= \tau = 10^{-10}` by default. Why that value: the certificates
below are checked in float64 on entries of size at most 1, where rounding
errors stay below :math:`d\,\epsilon_{64} \approx 10^{-13}` for the sizes of this
book (:math:`d \le 10^3`), so a verified margin above :math:`10^{-10}` is real; and
:math:`10^{-10}` is the tightest feasibility tolerance HiGHS accepts, so the
final LP resolves margins down to about that level. Keys on a sphere that are
nearly equal (angle :math:`\delta`) have margin of order :math:`\delta^2`: at
this tolerance only angles below about :math:`10^{-5}` count as ties. Pass a
larger ``tol`` to ask a robust question (e.g. :math:`10^{-7}`, the relative
resolution of float32 scores).

The test (:func:`unselectable_mask`, :func:`classify_keys`) runs four stages;
every stage returns an *independently verified* certificate, so a key is
decided by the first stage that produces one:

0. **query certificates** (vectorised over keys and sets): the queries
   :math:`q = k_i - \bar k`, :math:`q = k_i`, then at least ``n_gilbert`` (12) iterations of Gilbert's
   (Frank--Wolfe) algorithm for the nearest point :math:`x` of :math:`C_i` to
   :math:`k_i` with :math:`q = k_i - x`. A query whose margin exceeds
   :math:`\tau \lVert q\rVert_\infty` proves :math:`m_i > \tau`: selectable.
1. **duplicates**: a key equal to another has :math:`m_i = 0`: unselectable.
2. **NNLS**: the Lawson--Hanson active-set solution :math:`\mu \ge 0` of
   :math:`\min \lVert [V; \mathbf 1^\top]\mu - e_{d+1}\rVert` with
   :math:`V = (k_j - k_i)_{j \in J}` either gives convex weights
   :math:`\lambda = \mu/\sum\mu` with :math:`\ell_1` residual :math:`\le\tau`
   (unselectable), or a separating query :math:`q = -V\mu` (selectable; KKT gives
   :math:`q\cdot(k_i - k_j) \ge 1 - \sum\mu > 0` for :math:`j \in J`). Both are
   checked directly, the query against every key. :math:`J` is first the 64
   certified vertices nearest to :math:`k_i`, then all certified vertices (a key
   inside the hull is a convex combination of its vertices), then all other
   keys: at :math:`n = 1024, d = 8` this is several times faster than NNLS on
   all keys, with the same decisions.
3. **LP** (``scipy.optimize.linprog``, HiGHS) computing :math:`m_i` itself, for
   any key still undecided; it is the final arbiter.

:func:`unselectable_mask_lp` is the plain reference: stage 3 for every key.

Reach (a quantitative measure). Selectability is all or nothing and, at real
head widths, almost every key is selectable. :func:`max_attention_weight`
measures how far a query of bounded norm can *raise* a key: for a radius
:math:`R`,

.. math:: w_i(R) = \max_{\lVert q\rVert \le R} \operatorname{softmax}(Kq)_i
          = \frac{1}{1 + e^{f_i^\ast}}, \qquad
          f_i^\ast = \min_{\lVert q\rVert \le R}\ \log \sum_{j \ne i} e^{q\cdot(k_j - k_i)}
          = \max_{\lambda \in \Delta}\ \bigl[\operatorname{Ent}(\lambda)
            - R\,\bigl\lVert k_i - \textstyle\sum_{j\ne i} \lambda_j k_j\bigr\rVert\bigr],

a convex problem (log-sum-exp over a ball) whose dual (minimax over the ball
and the simplex :math:`\Delta`, :math:`\operatorname{Ent}` the entropy) follows from
:math:`\log\sum_j e^{x_j} = \max_{\lambda\in\Delta} \lambda\cdot x + \operatorname{Ent}(\lambda)`. Hence:

* :math:`w_i(R)` is non-decreasing in :math:`R` (the ball grows);
* an **unselectable** key, :math:`k_i = \sum_j \lambda_j k_j` with
  :math:`\lambda \in \Delta`, has :math:`w_i(R) \le 1/(1 + e^{\operatorname{Ent}(\lambda)}) \le 1/2`
  for every :math:`R`; the centre of a regular simplex of :math:`n - 1` others
  has exactly :math:`1/n`;
* a **selectable** key at Euclidean distance :math:`\delta_i > 0` from the hull
  :math:`C_i` of the others has
  :math:`1/(1 + (n-1)e^{-R\delta_i}) \le w_i(R) \le 1/(1 + e^{-R\delta_i})`
  (the query :math:`R u`, :math:`u` the unit normal of the proof of the hull
  theorem, for the lower bound; :math:`\lambda` the weights of the nearest point of
  :math:`C_i` for the upper), so :math:`w_i(R) \to 1`.

So :math:`w_i(R) > 1/2` certifies that key :math:`i` is selectable, and
:math:`R\,\delta_i` against :math:`\log(n-1)` decides how close to 1 it gets.
The function solves the primal by accelerated projected gradient (FISTA,
step :math:`1/L_i` with :math:`L_i = \max_j \lVert k_j - k_i\rVert^2`, a
bound on the Hessian of the log-sum-exp) and returns the dual value at the
iterate's softmax as an upper bound: the true :math:`w_i(R)` lies between the two.
"""

from typing import TYPE_CHECKING, Sequence

import numpy as np
import numpy.typing as npt
from scipy.optimize import linprog, nnls
from scipy.special import expit

from ._checks import ArgumentTypeError, as_generator, check_float, check_int, described, fail, shape_of
from ._parallel import progress_bar

if TYPE_CHECKING:
    from .checkpoint import CheckpointStore

__all__ = [
    "SELECTABILITY_TOL",
    "STAGES",
    "normalise_keys",
    "l1_margin_lp",
    "classify_keys",
    "unselectable_mask",
    "unselectable_mask_lp",
    "any_unselectable",
    "gaussian_key_sets",
    "selectability_grid",
    "multihead_example",
    "percent_unselectable",
    "gaussian_percent", "centring_rounding_percent",
    "half_contour",
    "max_attention_weight",
    "gaussian_like",
    "reach_against_gaussian",
]

SELECTABILITY_TOL = 1e-10
STAGES = ("query", "duplicate", "nnls", "lp")
_HIGHS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


# --------------------------------------------------------------------------
# Input handling.


def _check_tol(tol):
    return check_float("tol", tol, low=0.0, high=1.0, low_open=True, high_open=True)


def _as_keys(keys, ndim: int, name: str = "keys") -> np.ndarray:
    """Keys as a float64 array with ``ndim`` axes, validated."""
    if hasattr(keys, "detach") and hasattr(keys, "cpu"):  # a torch tensor
        keys = keys.detach().cpu().numpy()
    try:
        a = np.asarray(keys)
    except Exception as err:  # ragged lists and the like
        raise fail(name, described(f"a {type(keys).__name__} that is not an array ({err})"), "an array of keys",
                   kind=ArgumentTypeError) from None
    if a.dtype == bool or not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
        raise fail(name, described(f"an array of dtype {a.dtype}"), "real floating or integer entries",
                   "has the wrong dtype", kind=ArgumentTypeError)
    shape = "(n, d)" if ndim == 2 else "(sets, n, d)"
    if a.ndim != ndim:
        raise fail(name, shape_of(a), shape, "has the wrong shape")
    if a.shape[-2] < 1 or a.shape[-1] < 1:
        raise fail(name, shape_of(a), f"{shape} with n >= 1 and d >= 1", "has the wrong shape")
    a = a.astype(np.float64)
    if not np.all(np.isfinite(a)):
        raise fail(name, described("an array that contains NaN or infinity"), "finite values")
    return a


def normalise_keys(keys: npt.ArrayLike, return_origin: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    r"""Centre each set and divide by its largest centred entry: ``(..., n, d) -> (..., n, d)``.

    Scores :math:`q\cdot k_j` change by a positive factor and a constant shared
    by all keys, so selectability is unchanged. A set of identical keys maps to
    zeros. With ``return_origin`` also returns where the original origin went,
    ``(..., 1, d)`` (the query :math:`k_i` of the original coordinates is
    ``normalised[i] - origin``).
    """
    a = np.asarray(keys, dtype=np.float64)
    mean = a.mean(axis=-2, keepdims=True)
    c = a - mean
    s = np.abs(c).max(axis=(-2, -1), keepdims=True)
    s = np.where(s > 0, s, 1.0)
    return (c / s, -mean / s) if return_origin else c / s


# --------------------------------------------------------------------------
# Stage 3 (and the reference): the LP for the l1 margin.


def l1_margin_lp(keys: npt.ArrayLike, i: int) -> float:
    r"""The margin :math:`m_i` of key ``i`` (the book's eq. ``eq-sel-margin``) by one LP. ``keys: (n, d)`` already
    normalised (see :func:`normalise_keys`); returns a float :math:`\ge 0`.

    Variables :math:`\lambda \in \mathbb R^{n-1}_{\ge 0}`, :math:`s^\pm \in
    \mathbb R^d_{\ge 0}`; minimise :math:`\sum (s^+ + s^-)` subject to
    :math:`\sum_j \lambda_j k_j + s^+ - s^- = k_i`, :math:`\sum_j \lambda_j = 1`.
    For ``n = 1`` the margin is infinite (nothing to beat).
    """
    k = np.asarray(keys, dtype=np.float64)
    n, d = k.shape
    if n == 1:
        return float("inf")
    others = np.delete(k, i, axis=0)
    a_eq = np.zeros((d + 1, n - 1 + 2 * d))
    a_eq[:d, : n - 1] = others.T
    a_eq[:d, n - 1 : n - 1 + d] = np.eye(d)
    a_eq[:d, n - 1 + d :] = -np.eye(d)
    a_eq[d, : n - 1] = 1.0
    c = np.concatenate([np.zeros(n - 1), np.ones(2 * d)])
    res = linprog(c, A_eq=a_eq, b_eq=np.append(k[i], 1.0), bounds=(0, None),
                  method="highs", options=_HIGHS)
    if res.status != 0:  # pragma: no cover - the LP is always feasible and bounded
        raise RuntimeError(f"HiGHS failed on key {i}: {res.message}")
    return max(float(res.fun), 0.0)


def unselectable_mask_lp(keys: npt.ArrayLike, tol: float = SELECTABILITY_TOL) -> np.ndarray:
    """Reference test: one LP per key. ``keys: (n, d)`` -> ``(n,)`` bool."""
    tol = _check_tol(tol)
    k = normalise_keys(_as_keys(keys, 2))
    return np.array([l1_margin_lp(k, i) <= tol for i in range(len(k))], dtype=bool)


# --------------------------------------------------------------------------
# Stage 0: query certificates, vectorised over sets and keys.


def _margins(k, q):
    """Margin of each key under its own query. ``k: (S, n, d)``, ``q: (S, n, d)``
    (query ``q[s, i]`` for key ``i``) -> ``(margin (S, n), runner-up (S, n))``
    with margin = q_i.k_i - max_{j != i} q_i.k_j, normalised by ||q_i||_inf."""
    scores = q @ k.transpose(0, 2, 1)  # (S, n, n): scores[s, i, j] = q_i . k_j
    n = k.shape[1]
    own = np.einsum("sii->si", scores).copy()
    idx = np.arange(n)
    scores[:, idx, idx] = -np.inf
    runner = scores.argmax(axis=2)
    best_other = np.take_along_axis(scores, runner[..., None], axis=2)[..., 0]
    qn = np.abs(q).max(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        margin = np.where(qn > 0, (own - best_other) / np.where(qn > 0, qn, 1.0), -np.inf)
    return margin, runner


def _query_certificates(k, origin, tol, n_gilbert, hints=None):
    """Stage 0 on normalised sets ``k: (S, n, d)`` (``origin: (S, 1, d)``):
    ``(S, n)`` bool, True where a query certifies the key selectable, and the
    Gilbert iterate ``x: (S, n, d)``."""
    S, n, d = k.shape
    if n == 1:
        return np.ones((S, n), dtype=bool), k.copy()
    # q = k_i - mean (k is already centred, so q = k) and q = k_i in the original coordinates
    # (exact for keys on a sphere about the origin, e.g. after LayerNorm).
    done = _margins(k, k)[0] > tol
    done |= _margins(k, k - origin)[0] > tol
    if hints is not None:
        done |= _margins(k, hints)[0] > tol
    # Gilbert's algorithm for the nearest point x_i of conv{k_j : j != i} to k_i,
    # started at the centroid of the others; only sets with undecided keys
    # are iterated. After n_gilbert steps it goes on (up to 4 n_gilbert) while
    # each step still certifies at least 5 % of the undecided keys.
    x = (k.sum(axis=1, keepdims=True) - k) / (n - 1)
    for it in range(4 * n_gilbert):
        rows = np.flatnonzero(~done.all(axis=1))
        if len(rows) == 0:
            break
        before = int((~done).sum())
        kr, xr = k[rows], x[rows]
        q = kr - xr
        m, s = _margins(kr, q)
        done[rows] |= m > tol
        if it >= n_gilbert and before - int((~done).sum()) < 0.05 * before:
            break
        ks = np.take_along_axis(kr, s[..., None], axis=1)  # the farthest other key along q
        step = ks - xr
        num = np.einsum("snd,snd->sn", q, step)
        den = np.einsum("snd,snd->sn", step, step)
        gamma = np.clip(np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0), 0.0, 1.0)
        x[rows] = xr + gamma[..., None] * step
    return done, x


def _duplicates(k, rows):
    """``(S, n)`` bool: keys equal (bit for bit) to another key of their set,
    computed only for the sets ``rows`` (an index array)."""
    S, n, d = k.shape
    out = np.zeros((S, n), dtype=bool)
    for s in rows:
        _, inverse, counts = np.unique(k[s], axis=0, return_inverse=True, return_counts=True)
        out[s] = counts[inverse.ravel()] > 1
    return out


# --------------------------------------------------------------------------
# Stage 2: NNLS certificates.


def _nnls_certificate(k, i, tol, cols=None):
    """``True`` (unselectable), ``False`` (selectable) or ``None`` (no certificate)
    for key ``i`` of one normalised set ``k: (n, d)``, from the NNLS problem on the
    keys ``cols`` (default: all others; a subset gives a cheaper problem whose
    convex weights are still a certificate). A separating query is checked
    against *every* other key of the set."""
    n, d = k.shape
    if cols is None:
        cols = np.delete(np.arange(n), i)
    a = np.ones((d + 1, len(cols)))
    a[:d] = k[cols].T - k[i][:, None]  # column j: k_j - k_i, then a 1
    b = np.zeros(d + 1)
    b[-1] = 1.0
    try:
        mu, _ = nnls(a, b, maxiter=50 * len(cols))
    except Exception:  # pragma: no cover - no convergence: leave it to the LP
        return None
    total = mu.sum()
    p = a[:d] @ mu
    if total > 0 and np.abs(p).sum() / total <= tol:
        return True
    qn = np.abs(p).max()
    if qn > 0:  # q = -p: q.(k_i - k_j) = p.(k_j - k_i), checked for every j != i
        scores = (k - k[i]) @ p
        scores[i] = np.inf
        if scores.min() / qn > tol:
            return False
    return None


def _decide_rest(k, todo, vertices, tol, stop_at_first):
    """Stages 2-3 for the undecided keys ``todo`` of one normalised set ``k: (n, d)``
    (most likely unselectable first). ``vertices``: keys already certified
    selectable. Each key tries NNLS on its 64 nearest certified vertices, then on
    all of them (an interior point is a convex combination of the vertices), then
    on all keys, then the LP. Returns ``{i: (unselectable, stage)}``."""
    out, vertices = {}, list(vertices)
    for i in todo:
        cert = None
        if len(vertices) > k.shape[1] + 1:
            v = np.asarray(vertices)
            near = v[np.argsort(((k[v] - k[i]) ** 2).sum(1))[:64]]
            for cols in (near, v) if len(v) > 64 else (v,):
                cert = _nnls_certificate(k, i, tol, cols)
                if cert is not None:
                    break
        if cert is None:
            cert = _nnls_certificate(k, i, tol)
        stage = 2 if cert is not None else 3
        if cert is None:
            cert = l1_margin_lp(k, i) <= tol
        out[i] = (bool(cert), stage)
        if not cert:
            vertices.append(i)
        elif stop_at_first:
            break
    return out


# --------------------------------------------------------------------------
# Public API.


def classify_keys(key_sets: npt.ArrayLike, tol: float = SELECTABILITY_TOL, n_gilbert: int = 12,
                  stop_at_first: bool = False,
                  hint_queries: npt.ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Decide every key of every set. ``key_sets: (S, n, d)`` ->
    ``(unselectable (S, n) bool, stage (S, n) int8)``, ``stage`` indexing
    :data:`STAGES` (which stage decided the key; -1 for keys left undecided
    because ``stop_at_first`` found an unselectable key earlier in their set).
    The first stage tries the query :math:`k_i - c` of ``eq-sel-sphere-margin``.

    ``hint_queries: (S, n, d) | None``: an extra candidate query per key, in
    the keys' original coordinates (for instance the normal of an ellipsoid
    the keys lie on); like every certificate it is verified, never trusted.
    """
    tol = _check_tol(tol)
    check_int("n_gilbert", n_gilbert, low=0)
    k, origin = normalise_keys(_as_keys(key_sets, 3, "key_sets"), return_origin=True)
    S, n, d = k.shape
    unsel = np.zeros((S, n), dtype=bool)
    stage = np.full((S, n), -1, dtype=np.int8)
    hints = None if hint_queries is None else _as_keys(hint_queries, 3, "hint_queries")
    if hints is not None and hints.shape != k.shape:
        raise fail("hint_queries", shape_of(hints), f"the keys' shape {k.shape}", "has the wrong shape")
    chunk = max(1, int(4e6 // (n * n)))  # the query stage forms (chunk, n, n) score matrices
    for lo in range(0, S, chunk):
        sl = slice(lo, lo + chunk)
        certified, x = _query_certificates(k[sl], origin[sl], tol, n_gilbert,
                                           None if hints is None else hints[sl])
        stage[sl][certified] = 0
        dup = _duplicates(k[sl], np.flatnonzero(~certified.all(axis=1))) & ~certified
        unsel[sl][dup] = True
        stage[sl][dup] = 1
        gap = np.abs(k[sl] - x).sum(axis=2)  # small gap: probably inside the hull, try it first
        for s in range(lo, min(lo + chunk, S)):
            if stop_at_first and unsel[s].any():
                continue
            todo = np.flatnonzero(stage[s] < 0)
            order = todo[np.argsort(gap[s - lo, todo], kind="stable")]
            for i, (u, st) in _decide_rest(k[s], order, np.flatnonzero(stage[s] == 0), tol, stop_at_first).items():
                unsel[s, i], stage[s, i] = u, st
    return unsel, stage


def unselectable_mask(keys: npt.ArrayLike, tol: float = SELECTABILITY_TOL) -> np.ndarray:
    """``keys: (n, d)`` -> ``(n,)`` bool, True where the key is unselectable: no query
    satisfies eq. ``eq-sel-strict`` (definition ``sel-def-selectable``), i.e. the key
    lies in the hull of the others (theorem ``sel-thm-hull``), decided robustly."""
    return classify_keys(_as_keys(keys, 2)[None], tol)[0][0]


def any_unselectable(keys: npt.ArrayLike, tol: float = SELECTABILITY_TOL) -> bool:
    """Whether some key of ``keys: (n, d)`` is unselectable; stops at the first one."""
    return bool(classify_keys(_as_keys(keys, 2)[None], tol, stop_at_first=True)[0].any())


def percent_unselectable(key_sets: npt.ArrayLike, hint_queries: npt.ArrayLike | None = None,
                         tol: float = SELECTABILITY_TOL) -> tuple[float, np.ndarray]:
    """Percentage of unselectable keys over sets ``key_sets: (..., n, d)`` (any
    leading axes: batch, heads), and the ``(len(STAGES),)`` count of keys each
    stage decided. ``hint_queries``: as in :func:`classify_keys`, same shape."""
    a = _as_keys(np.asarray(key_sets).reshape(-1, *np.shape(key_sets)[-2:]), 3, "key_sets")
    h = None if hint_queries is None else np.asarray(hint_queries).reshape(a.shape)
    unsel, stage = classify_keys(a, tol, hint_queries=h)
    return 100.0 * float(unsel.mean()), np.bincount(stage.ravel(), minlength=len(STAGES))[: len(STAGES)]


def gaussian_key_sets(n_sets: int, n: int, d: int, rng: np.random.Generator | int,
                      layer_norm: bool = False) -> np.ndarray:
    r"""``n_sets`` sets of ``n`` keys with i.i.d. :math:`\mathcal N(0, 1)`
    entries: ``(n_sets, n, d)``; with ``layer_norm`` each key is replaced by
    :math:`\mathrm{LN}(k)` (no affine map, :math:`\varepsilon = 0`)."""
    for name, v, lo in [("n_sets", n_sets, 1), ("n", n, 1), ("d", d, 1 + bool(layer_norm))]:
        check_int(name, v, low=lo)
    rng = as_generator("rng", rng)
    k = rng.standard_normal((n_sets, n, d))
    if layer_norm:
        from .layernorm import layer_norm as ln

        k = ln(k)
    return k


def selectability_grid(ns: Sequence[int], ds: Sequence[int], n_sets: int, rng: np.random.Generator | int,
                       layer_norm: bool = False, tol: float = SELECTABILITY_TOL,
                       progress: bool = False) -> dict[str, np.ndarray]:
    """The heat-map data over key counts ``ns`` and dimensions ``ds``.

    Returns a dict of ``(len(ns), len(ds))`` arrays: ``any`` (fraction of the
    ``n_sets`` Gaussian sets with at least one unselectable key), ``mean``
    (mean fraction of unselectable keys per set) and ``stages`` a
    ``(len(STAGES),)`` count of how many keys each stage decided.
    """
    ns, ds = [int(v) for v in ns], [int(v) for v in ds]
    rng = as_generator("rng", rng)
    for name, sizes in (("ns", ns), ("ds", ds)):
        if not sizes:
            raise fail(name, sizes, "a non-empty list of sizes")
    out_any = np.zeros((len(ns), len(ds)))
    out_mean = np.zeros((len(ns), len(ds)))
    stages = np.zeros(len(STAGES), dtype=np.int64)
    cells = [(a, b) for a in range(len(ns)) for b in range(len(ds))]
    with progress_bar(progress, len(cells), 0, "LN" if layer_norm else "no LN") as bar:
        for a, b in cells:
            keys = gaussian_key_sets(n_sets, ns[a], ds[b], rng, layer_norm)
            unsel, stage = classify_keys(keys, tol)
            out_any[a, b] = unsel.any(axis=1).mean()
            out_mean[a, b] = unsel.mean()
            stages += np.bincount(stage.ravel(), minlength=len(STAGES))[: len(STAGES)]
            bar.update(1)
    return {"any": out_any, "mean": out_mean, "stages": stages}


def multihead_example() -> dict[str, np.ndarray]:
    r"""Five LayerNorm outputs in :math:`d = 4`, all selectable, whose keys under
    a rank-2 :math:`W_K` are not.

    With :math:`u_1, u_2, u_3` an orthonormal basis of :math:`H = \mathbf 1^\perp`
    the normed states are :math:`2(\pm u_1), 2(\pm u_2), 2u_3` (on the sphere of
    radius :math:`\sqrt 4` in :math:`H`, so :math:`\mathrm{LN}(x) = x`), and
    :math:`W_K = [u_1; u_2]` (``(2, 4)``). The keys are :math:`(\pm 2, 0), (0, \pm 2)`
    and :math:`(0, 0)`: the last is the centroid of the others.
    Returns ``{"normed": (5, 4), "W_K": (2, 4), "keys": (5, 2)}``.
    """
    from .layernorm import hyperplane_basis

    u = hyperplane_basis(4).T  # (3, 4): rows u_1, u_2, u_3
    normed = 2.0 * np.stack([u[0], -u[0], u[1], -u[1], u[2]])
    w_k = u[:2]
    return {"normed": normed, "W_K": w_k, "keys": normed @ w_k.T}


# --------------------------------------------------------------------------
# Baselines, contours and the chapter's comparisons.


def gaussian_percent(lengths: Sequence[int], d: int, rng: np.random.Generator | int, *,
                     store: "CheckpointStore | None" = None, key: dict | None = None) -> np.ndarray:
    """The % of unselectable keys in Gaussian sets of the given sizes: one set of
    ``lengths[i]`` keys with i.i.d. N(0, 1) entries in ``d`` dimensions per entry,
    ``(len(lengths),)``. Selectability is invariant under invertible affine maps,
    so this is the baseline for *any* non-degenerate Gaussian cloud in ``d``
    dimensions. With a ``store``, checkpointed in chunks of 50 sets under ``key``."""
    from .checkpoint import resumable_map

    lengths = [check_int("length", int(n), low=1) for n in lengths]
    check_int("d", d, low=1)
    seeds = as_generator("rng", rng).integers(0, 2**63 - 1, size=(len(lengths) + 49) // 50)
    chunks = [(lengths[50 * i:50 * (i + 1)], int(s)) for i, s in enumerate(seeds)]

    def one(chunk):
        sizes, seed = chunk
        g = as_generator("seed", seed)
        return [percent_unselectable(g.standard_normal((n, d)))[0] for n in sizes]

    done = resumable_map(one, chunks, store=store, name="gaussian-percent",
                         key={**(key or {}), "lengths": lengths, "d": d, "seeds": [int(s) for s in seeds]})
    return np.asarray([v for chunk in done for v in chunk], dtype=float)


def centring_rounding_percent(lengths: Sequence[int], d: int, rng: np.random.Generator | int) -> np.ndarray:
    r"""The % of unselectable keys in Gaussian sets centred exactly and centred in float32, on the same
    points: ``(len(lengths), 2)``, columns exact and float32. Set ``i`` has ``lengths[i]`` i.i.d.
    N(0, 1) points in ``d`` dimensions, centred (:math:`Px`, onto :math:`H = \mathbf 1^\perp`) in
    float64 -- as good as exact against the test's tolerance -- and in float32, as a float32
    model's projection computes it. The float32 states lie about :math:`10^{-7}` of their norm off
    :math:`H`, at random: to a test at tolerance :math:`10^{-10}` that is a ``d``-th dimension, so
    fewer keys are unselectable than in the ``d - 1`` dimensions of :math:`H`."""
    lengths = [check_int("length", int(n), low=1) for n in lengths]
    check_int("d", d, low=2)
    g = as_generator("rng", rng)
    out = []
    for n in lengths:
        x = g.standard_normal((n, d))
        x32 = x.astype(np.float32)
        centred32 = (x32 - x32.mean(1, keepdims=True)).astype(np.float64)
        out.append((percent_unselectable(x - x.mean(1, keepdims=True))[0], percent_unselectable(centred32)[0]))
    return np.asarray(out, dtype=float)


def max_attention_weight(key_sets: npt.ArrayLike, radius: float | npt.ArrayLike,
                         rows: npt.ArrayLike | None = None, *, tol: float = 1e-4,
                         max_iter: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    r"""The largest attention weight a query of norm at most ``radius`` gives each key (module docstring,
    *Reach*): :math:`w_i(R) = \max_{\lVert q\rVert\le R} \operatorname{softmax}(Kq)_i`, solved through its
    dual (the book's eq. ``eq-sel-reach-dual``), with the bounds of a hull vertex (eq. ``eq-sel-reach-vertex``).

    ``key_sets: (S, n, d)`` or ``(n, d)``; ``radius``: :math:`R > 0`, a number or one per set ``(S,)``;
    ``rows``: the keys to solve for, ``(m,)`` indices shared by the sets (default: all).
    Returns ``(weight, upper)``, each ``(S, m)`` (or ``(m,)`` for one set): the weight a feasible
    query reaches (a lower bound) and the dual bound above it; iterates until ``upper - weight``
    is below ``tol`` for every key or ``max_iter`` steps. A set of one key gives 1.
    """
    k = _as_keys(key_sets, 2 if np.ndim(key_sets) == 2 else 3, "key_sets")
    single = k.ndim == 2
    k = k[None] if single else k
    S, n, d = k.shape
    r = np.broadcast_to(np.asarray(radius, dtype=np.float64), (S,)).copy()
    if not np.all(np.isfinite(r)) or np.any(r <= 0):
        raise fail("radius", radius, "positive finite radii, one number or one per set")
    check_float("tol", tol, low=0.0, high=1.0, low_open=True)
    check_int("max_iter", max_iter, low=1)
    rows = np.arange(n) if rows is None else np.asarray(rows, dtype=np.int64).ravel()
    if rows.size == 0 or rows.min() < 0 or rows.max() >= n:
        raise fail("rows", rows.tolist(), f"key indices in [0, {n - 1}]")
    if n == 1:
        one = np.ones((S, rows.size))
        return (one[0], one[0]) if single else (one, one)
    k = k - k.mean(axis=1, keepdims=True)  # differences k_j - k_i only: the shift changes nothing
    ki = k[:, rows]  # (S, m, d)
    m = rows.size
    own = np.zeros((m, n), dtype=bool)
    own[np.arange(m), rows] = True
    lip = np.maximum((((k[:, None, :, :] - ki[:, :, None, :]) ** 2).sum(-1)).max(-1), 1e-300)  # (S, m)
    rr = r[:, None, None]
    kt = k.transpose(0, 2, 1).copy()

    def project(q):
        norm = np.linalg.norm(q, axis=-1, keepdims=True)
        return q * np.minimum(1.0, rr / np.where(norm > 0, norm, 1.0))

    def lse_and_p(q):  # f(q) = log sum_{j != i} exp(q.(k_j - k_i)) and its softmax weights p
        s = q @ kt - (q * ki).sum(-1)[..., None]
        s[:, own] = -np.inf
        top = s.max(-1, keepdims=True)
        e = np.exp(s - top)
        z = e.sum(-1, keepdims=True)
        return (top + np.log(z))[..., 0], e / z

    def dual(p):  # Ent(p) - R ||sum_j p_j k_j - k_i||
        with np.errstate(divide="ignore", invalid="ignore"):
            h = -np.where(p > 0, p * np.log(p), 0.0).sum(-1)
        return h - r[:, None] * np.linalg.norm(p @ k - ki, axis=-1)

    norm_ki = np.linalg.norm(ki, axis=-1, keepdims=True)
    q = project(np.where(norm_ki > 0, ki / np.where(norm_ki > 0, norm_ki, 1.0), 0.0) * rr)  # start: q = R k_i/|k_i|
    y, t = q.copy(), 1.0
    best_f, p = lse_and_p(q)
    best_dual = dual(p)
    for it in range(max_iter):
        _, p_y = lse_and_p(y)
        grad = p_y @ k - ki
        q_new = project(y - grad / lip[..., None])
        t_new = (1 + np.sqrt(1 + 4 * t * t)) / 2
        restart = (grad * (q_new - q)).sum(-1) > 0  # gradient restart (O'Donoghue and Candes) where momentum misleads
        y = np.where(restart[..., None], q_new, q_new + (t - 1) / t_new * (q_new - q))
        t = 1.0 if restart.all() else t_new
        q = q_new
        if it % 10 == 9 or it == max_iter - 1:  # the primal at the iterate, the dual at its softmax
            f_q, p_q = lse_and_p(q)
            best_f, best_dual = np.minimum(best_f, f_q), np.maximum(best_dual, dual(p_q))
            if np.all(expit(-best_dual) - expit(-best_f) < tol):
                break
    weight, upper = expit(-best_f), expit(-best_dual)
    return (weight[0], upper[0]) if single else (weight, upper)


def gaussian_like(keys: npt.ArrayLike, rng: np.random.Generator | int) -> np.ndarray:
    r"""A Gaussian key set of the same ``n`` and ``d`` with the set's own mean and covariance:
    ``keys: (n, d) -> (n, d)``, rows :math:`\bar k + \sum_s z_s (k_s - \bar k)/\sqrt n` with
    i.i.d. standard normal :math:`z` (covariance :math:`\frac1n\sum_s (k_s - \bar k)(k_s - \bar k)^\top`).
    The yardstick of :func:`max_attention_weight`, which, unlike selectability, depends on the
    keys' scale and shape."""
    k = _as_keys(keys, 2)
    g = as_generator("rng", rng)
    mean = k.mean(axis=0, keepdims=True)
    return mean + g.standard_normal((len(k), len(k))) @ (k - mean) / np.sqrt(len(k))


def reach_against_gaussian(keys: npt.ArrayLike, queries: npt.ArrayLike, rng: np.random.Generator | int,
                           n_rows: int | None = None) -> np.ndarray:
    r"""The mean reach of the keys of each head, and of a Gaussian copy of them, at the head's own query norm.

    ``keys: (H, n, d)`` (one key set per head) and ``queries: (H, t, d)`` (the head's queries, already
    multiplied by the score's factor, :math:`1/\sqrt{d_h}` for scaled dot products). Per head,
    :math:`R` is the median query norm, and :func:`max_attention_weight` is averaged over ``n_rows``
    keys drawn without replacement (all when ``None`` or at least ``n``), for the keys and for
    :func:`gaussian_like` of them (the same rows). Returns ``(3, H)``: the keys' mean reach, the
    Gaussian copy's, and :math:`R`.
    """
    k = _as_keys(keys, 3)
    q = _as_keys(queries, 3, "queries")
    if q.shape[0] != k.shape[0] or q.shape[2] != k.shape[2]:
        raise fail("queries", shape_of(q), f"(H, t, d) with H = {k.shape[0]} and d = {k.shape[2]}",
                   "has the wrong shape")
    g = as_generator("rng", rng)
    heads, n, _ = k.shape
    m = n if n_rows is None else min(check_int("n_rows", n_rows, low=1), n)
    rows = np.sort(g.choice(n, size=m, replace=False))
    radius = np.median(np.linalg.norm(q, axis=-1), axis=-1)
    radius = np.where(radius > 0, radius, np.finfo(float).tiny)
    both = np.concatenate([k, np.stack([gaussian_like(x, g) for x in k])])
    w = max_attention_weight(both, np.concatenate([radius, radius]), rows)[0].mean(-1)
    return np.stack([w[:heads], w[heads:], radius])


def _wilson(p, n, z):
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def _crossing(ns, values, level=0.5):
    """The first n where ``values`` (increasing in n, roughly) reaches ``level``, by
    linear interpolation between grid points; NaN if it never does."""
    above = np.flatnonzero(values >= level)
    if len(above) == 0:
        return np.nan
    j = above[0]
    if j == 0:
        return float(ns[0])
    v0, v1 = values[j - 1], values[j]
    return float(ns[j - 1] + (level - v0) / (v1 - v0) * (ns[j] - ns[j - 1]))


def half_contour(ns: Sequence[int], fraction: npt.ArrayLike, n_sets: int,
                 level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The 50 % contour of a heat map: for each column (dimension ``d``), the number
    of keys ``n*`` at which the fraction of sets with an unselectable key first
    reaches 1/2, by linear interpolation over ``ns: (a,)``; ``fraction: (a, b)``.

    Returns ``(n_star, low, high)``, each ``(b,)``: the interval runs from the
    crossing of the upper to that of the lower Wilson bound (``level``) of each
    cell's binomial fraction over ``n_sets`` sets. NaN where no crossing lies on
    the grid (``high`` is NaN when the lower bound never reaches 1/2)."""
    from scipy import stats as sps

    ns = np.asarray(ns, dtype=float)
    frac = np.asarray(fraction, dtype=float)
    check_int("n_sets", n_sets, low=1)
    z = float(sps.norm.ppf(0.5 + level / 2))
    lo_b, hi_b = _wilson(frac, n_sets, z)
    cols = range(frac.shape[1])
    return (np.array([_crossing(ns, frac[:, j]) for j in cols]),
            np.array([_crossing(ns, hi_b[:, j]) for j in cols]),
            np.array([_crossing(ns, lo_b[:, j]) for j in cols]))
