r"""Rank collapse of masked self-attention over depth (chapter 4 of the book).

The dynamical system (eq. ``rc-dynamics``), for tokens :math:`X^{(t)} \in \mathbb R^{N\times d}`:

.. math::
   X^{(t+1)} = A^{(t)} X^{(t)} W_V^{(t)}, \qquad
   A^{(t)} = \mathrm{softmax}_G\!\big(X^{(t)} W_Q^{(t)} W_K^{(t)\top} X^{(t)\top} / \sqrt{d_{QK}}\big),

where :math:`\mathrm{softmax}_G` is the row softmax restricted to the mask
(entries off the mask are 0, see :mod:`attention_geometry.attention`). A
:class:`Variant` adds LayerNorm after the layer (no affine map: centre each
token, scale it to norm :math:`\sqrt d`), a skip connection
:math:`X + A X W_V`, or another temperature :math:`d_{QK}/d_{\text{head}}`.
With ``n_heads = H > 1`` the layer is multi-head:
:math:`X^{(t+1)} = [A_1 X W_V^1, \dots, A_H X W_V^H]\,W_O` with
:math:`W_V^h` the :math:`h`-th block of :math:`d/H` columns of :math:`W_V`
(and the same for :math:`W_Q, W_K`).

The collapse measure (eq. ``rc-mu``) is
:math:`\mu(X) = \lVert X - \mathbf 1 \bar x^\top\rVert_F` with
:math:`\bar x = X^\top \mathbf 1 / N` the mean token (:func:`mu`).

Random networks. Every input goes through its **own** random network (so the
trajectories are independent samples), whose weights are drawn layer by layer
from a generator seeded by ``(seed, input index)`` (:func:`input_generator`):
the result of an input does not depend on how the inputs are batched or
chunked. Entries are :math:`\mathcal N(0, \sigma^2)` with
:math:`\sigma = 1/\sqrt d` by default (``init_std``), drawn in float32 on the
CPU and cast (a float64 run uses the same, exactly representable, weights).
``values="orthogonal"`` replaces each :math:`W_V^{(t)}` by the orthogonal factor
of its QR decomposition (Haar distributed, a new one every layer): then
assumption (iii) of the collapse theorem holds with :math:`C_V = 1`.

The theorem's bound (eq. ``rc-bound``) is checked on the attention part
:math:`Z^{(t)} = A^{(t-1)}\cdots A^{(0)} X^{(0)}`, tracked beside :math:`X^{(t)}`
for pure single-head attention (:func:`collapse_runs`, :func:`theorem_bound`):
:math:`X^{(t)} = Z^{(t)} W_V^{(0)}\cdots W_V^{(t-1)}`, so :math:`\mu(X^{(t)})
\le \mu(Z^{(t)})\,\lVert W_V^{(0)}\cdots W_V^{(t-1)}\rVert_2` and the value
matrices enter only through :math:`C_V`.

Shapes: ``X0: (batch, N, d)``; a run over ``V`` variants returns arrays
``(n_layers + 1, V, batch)``.
"""

import copy
import functools
import hashlib
import math
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import numpy.typing as npt
import torch

from ._checks import as_float_tensor as _tensor_checked, as_torch_generator, check_bool, check_choice, check_float, check_int, fail
from .attention import _as_mask, masked_softmax, mask_graph
from .checkpoint import CheckpointStore, resumable_map
from .layernorm import normalise

__all__ = [
    "mu",
    "spread",
    "attention_matrix",
    "standardise_tokens",
    "project_width",
    "input_generator",
    "orthogonal_factor",
    "Variant",
    "CollapseRuns",
    "collapse_runs",
    "collapse_runs_loop",
    "mu_over_depth",
    "fit_rate",
    "collapse_depth",
    "collapse_summary",
    "MIN_RATE_POINTS",
    "has_rate",
    "mean_log_spread",
    "log10_floored",
    "log10_growth",
    "last_finite",
    "plateau_level",
    "initial_rate",
    "theorem_bound",
    "precision_floor",
    "uniform_attention_matrix",
    "uniform_attention_spectrum",
    "late_collapse_rate",
    "uniform_collapse",
    "late_window_start",
    "fit_late_rate",
    "LATE_RTOL",
    "LATE_ATOL",
    "LATE_FLOOR",
    "PUBLIC_VOCAB",
    "public_config_collapse",
]

VALUES = ("gaussian", "orthogonal")


def _tensor(x, name, dtype=None, device=None):
    return _tensor_checked(name, x, dtype, device)


def mu(X: torch.Tensor | np.ndarray) -> torch.Tensor:
    r"""Collapse measure :math:`\lVert X - \mathbf 1\bar x^\top\rVert_F` (eq. ``rc-mu``). ``X: (..., N, d)`` -> ``(...)``."""
    X = _tensor(X, "X")
    if X.ndim < 2:
        raise fail("X", f"a tensor of shape {tuple(X.shape)}", "shape (..., N, d)")
    return torch.linalg.vector_norm(X - X.mean(dim=-2, keepdim=True), dim=(-2, -1))


def spread(X: torch.Tensor | np.ndarray) -> torch.Tensor:
    r"""The largest distance between two tokens, :math:`\max_{i,k}\lVert x_i - x_k\rVert` (eq. ``rc-bound-run``).

    ``(..., N, d)`` -> ``(...)``.

    :math:`\mu(X) \le \sqrt N\,\mathrm{spread}(X)`, since the mean token lies in the convex hull.
    """
    X = _tensor(X, "X")
    return torch.cdist(X, X).amax(dim=(-2, -1))


def attention_matrix(X: torch.Tensor, W_Q: torch.Tensor, W_K: torch.Tensor, mask: npt.ArrayLike | torch.Tensor,
                     d_qk: float) -> torch.Tensor:
    r""":math:`\mathrm{softmax}_G(X W_Q W_K^\top X^\top/\sqrt{d_{QK}})` (eq. ``rc-dynamics``).

    ``X: (..., N, d)``, ``W_Q, W_K: (..., d, d_head)`` (broadcast), returns ``(..., N, N)``.
    """
    check_float("d_qk", d_qk, low=0.0, low_open=True)
    scores = (X @ W_Q) @ (X @ W_K).transpose(-1, -2) / math.sqrt(d_qk)
    return masked_softmax(scores, mask)


def standardise_tokens(X: torch.Tensor | np.ndarray) -> torch.Tensor:
    r"""Scale each sample so its mean squared token norm is ``d``. ``X: (batch, N, d)``."""
    X = _tensor(X, "X")
    d = X.shape[-1]
    scale = X.pow(2).sum(-1).mean(-1, keepdim=True).clamp_min(1e-30).sqrt()
    return X * (math.sqrt(d) / scale)[..., None]


def project_width(X: torch.Tensor | np.ndarray, d: int, seed: int) -> torch.Tensor:
    r"""Tokens ``X: (batch, N, d_in)`` mapped to width ``d`` by a random orthonormal projection.

    :math:`X \mapsto X U` with :math:`U \in \mathbb R^{d_\text{in}\times d}`, orthonormal
    columns (QR of a Gaussian matrix drawn from ``seed``): inner products between
    tokens are kept up to a relative error of order :math:`1/\sqrt d`
    (Johnson--Lindenstrauss). ``d = d_in`` returns ``X`` unchanged.
    """
    X = _tensor(X, "X")
    d_in = X.shape[-1]
    d = check_int("d", d, low=1, high=d_in)
    if d == d_in:
        return X
    g = as_torch_generator("seed", seed)
    U = orthogonal_factor(torch.randn((d_in, d_in), generator=g, dtype=torch.float64))[:, :d]
    return X @ U.to(X.dtype)


def input_generator(seed: int, index: int) -> torch.Generator:
    """The generator of input ``index``'s random network: seeded by ``(seed, index)``
    through NumPy's ``SeedSequence``, so networks are independent across inputs."""
    state = np.random.SeedSequence([check_int("seed", seed, low=0), check_int("index", index, low=0)])
    return torch.Generator().manual_seed(int(state.generate_state(1, dtype=np.uint64)[0] >> 1))


def orthogonal_factor(G: torch.Tensor) -> torch.Tensor:
    """The orthogonal factor ``Q`` of ``G = Q R`` with ``diag(R) > 0``; for Gaussian ``G`` it is
    Haar distributed. ``G: (..., d, d)``."""
    Q, R = torch.linalg.qr(G)
    return Q * torch.sign(torch.diagonal(R, dim1=-2, dim2=-1)).unsqueeze(-2)


@dataclass(frozen=True)
class Variant:
    """One configuration of the dynamics: a mask and the components around attention.

    ``temperature`` is :math:`d_{QK}/d_\\text{head}` (1: unit-variance logits at the
    default initialisation; small: sharp attention). ``layernorm``: LayerNorm
    after the layer; ``skip``: :math:`X + AXW_V` before it.
    """

    label: str
    mask: np.ndarray = field(repr=False)
    temperature: float = 1.0
    layernorm: bool = False
    skip: bool = False

    def __post_init__(self):
        m = _as_mask(self.mask)
        if not np.diag(m).all():
            raise fail("mask", f"a mask without self-loops ({self.label})", "a mask with mask[i, i] True for every i")
        object.__setattr__(self, "mask", m)
        check_float("temperature", self.temperature, low=0.0, low_open=True)
        check_bool("layernorm", self.layernorm)
        check_bool("skip", self.skip)

    @property
    def pure(self) -> bool:
        """Pure attention: no LayerNorm, no skip connection."""
        return not (self.layernorm or self.skip)

    def key(self) -> dict:
        """What determines this variant's result (for checkpoint keys)."""
        return {"label": self.label, "mask": hashlib.sha256(np.packbits(self.mask).tobytes()).hexdigest()[:16],
                "n": int(self.mask.shape[0]), "temperature": self.temperature,
                "layernorm": self.layernorm, "skip": self.skip}


@dataclass(frozen=True)
class CollapseRuns:
    """The trajectories of :func:`collapse_runs`; arrays indexed ``[t, variant, input]``.

    ``mu``, ``norm``: :math:`\\mu(X^{(t)})` and :math:`\\lVert X^{(t)}\\rVert_F`, ``(T+1, V, B)``;
    ``eps``: the smallest attention weight on the mask at layer ``t`` (over heads), ``(T, V, B)``;
    ``mu_attention``: :math:`\\mu(Z^{(t)})` of the attention part (NaN unless pure single-head),
    ``(T+1, V, B)``; ``spread0``: :math:`\\mathrm{spread}(X^{(0)})`, ``(B,)``.
    """

    labels: tuple
    mu: np.ndarray
    norm: np.ndarray
    eps: np.ndarray
    mu_attention: np.ndarray
    spread0: np.ndarray

    def index(self, label: str) -> int:
        if label not in self.labels:
            raise fail("label", label, "one of " + ", ".join(map(repr, self.labels)))
        return self.labels.index(label)

    def rel(self, label: str) -> np.ndarray:
        """:math:`\\mu(X^{(t)})/\\lVert X^{(t)}\\rVert_F` of one variant, ``(T+1, B)`` (NaN where the norm is 0)."""
        k = self.index(label)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.norm[:, k] > 0, self.mu[:, k] / self.norm[:, k], np.nan)

    def abs(self, label: str) -> np.ndarray:
        """:math:`\\mu(X^{(t)})` of one variant, ``(T+1, B)``."""
        return self.mu[:, self.index(label)]


def _check_inputs(X0, variants, n_layers, n_heads, values, init_std):
    if X0.ndim != 3:
        raise fail("X0", f"a tensor of shape {tuple(X0.shape)}", "shape (batch, N, d)")
    check_int("n_layers", n_layers, low=1)
    check_choice("values", values, VALUES)
    d = X0.shape[-1]
    n_heads = check_int("n_heads", n_heads, low=1, high=d)
    if d % n_heads:
        raise fail("n_heads", n_heads, f"a divisor of d = {d}")
    if init_std is not None:
        check_float("init_std", init_std, low=0.0, low_open=True)
    variants = list(variants)
    if not variants or not all(isinstance(v, Variant) for v in variants):
        raise fail("variants", variants, "a non-empty sequence of Variant")
    labels = [v.label for v in variants]
    if len(set(labels)) != len(labels):
        raise fail("variants", labels, "variants with distinct labels")
    for v in variants:
        if v.mask.shape[0] != X0.shape[-2]:
            raise fail("mask", f"shape {v.mask.shape} ({v.label})", f"shape (N, N) with N = {X0.shape[-2]}")
    return variants, n_heads


def _draw(gens, d, n_mats, std, values, dtype, device):
    """One layer's weights for each input: ``(b, n_mats, d, d)`` = W_Q, W_K, W_V (, W_O).

    Entries N(0, std^2), drawn in float32 on the CPU and cast to ``dtype``; with
    ``values="orthogonal"`` W_V is the orthogonal factor of its Gaussian draw,
    computed in ``dtype`` (orthogonal to that precision).
    """
    W = torch.stack([torch.randn((n_mats, d, d), generator=g, dtype=torch.float32) for g in gens]).to(dtype)
    if values == "orthogonal":
        W[:, 2] = orthogonal_factor(W[:, 2])
        W[:, [0, 1] + ([3] if n_mats > 3 else [])] *= std
    else:
        W *= std
    return W.to(device=device)


def _heads(Y, H):
    """``(..., N, d)`` -> ``(..., H, N, d/H)``."""
    return Y.unflatten(-1, (H, -1)).transpose(-2, -3)


@contextmanager
def _flush_subnormals():
    """Flush subnormal numbers to zero inside the block (then back to torch's default, off).

    A value below the smallest normal number (1.2e-38 in float32) becomes 0 instead
    of a subnormal, as the fast float32 paths of GPUs do. Only the underflow regime
    changes (mu of shrinking tokens reaches 0 a few layers sooner), and a CPU run
    through it is about ten times faster. torch has no getter for the flag, so it is
    restored to its default.
    """
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(False)


def _run_chunk(X0, indices, variants, n_layers, seed, std, values, H, dtype, device):
    with _flush_subnormals():
        return _run_chunk_inner(X0, indices, variants, n_layers, seed, std, values, H, dtype, device)


def _run_chunk_inner(X0, indices, variants, n_layers, seed, std, values, H, dtype, device):
    b, n, d = X0.shape
    nv = len(variants)
    gens = [input_generator(seed, int(i)) for i in indices]
    masks = torch.stack([torch.as_tensor(v.mask) for v in variants]).to(device)[:, None]  # (V, 1, N, N)
    scale = torch.tensor([1.0 / math.sqrt(v.temperature * d / H) for v in variants], dtype=dtype,
                         device=device).view(nv, 1, 1, 1)
    if H > 1:
        masks, scale = masks[:, :, None], scale[..., None]
    ln = [k for k, v in enumerate(variants) if v.layernorm]
    sk = [k for k, v in enumerate(variants) if v.skip]
    pure = torch.tensor([v.pure for v in variants], device=device)
    X = X0.to(dtype=dtype, device=device)[None].expand(nv, b, n, d).clone()
    Z = X.clone() if H == 1 else None
    rec = {k: [] for k in ("mu", "norm", "eps", "mu_z")}

    def record():
        # mu in the run's precision, as an experiment in that precision measures it (identical
        # tokens still leave a rounding residue); the norm in float64, since a float32 sum of
        # squares overflows long before the tokens do (skip connections without normalisation)
        rec["mu"].append(mu(X).double())
        rec["norm"].append(torch.linalg.vector_norm(X.double(), dim=(-2, -1)))
        rec["mu_z"].append(mu(Z).double() if Z is not None else torch.full((nv, b), float("nan"), dtype=torch.float64))

    record()
    with torch.no_grad():
        for _ in range(n_layers):
            W = _draw(gens, d, 4 if H > 1 else 3, std, values, dtype, device)
            Q, K, Vv = X @ W[:, 0], X @ W[:, 1], X @ W[:, 2]
            if H > 1:
                Q, K, Vv = _heads(Q, H), _heads(K, H), _heads(Vv, H)
            A = masked_softmax((Q @ K.transpose(-1, -2)) * scale, masks)
            eps = A.masked_fill(~masks, float("inf")).amin(dim=(-2, -1))
            Y = A @ Vv
            if H > 1:
                eps = eps.amin(-1)
                Y = Y.transpose(-2, -3).flatten(-2) @ W[:, 3]  # concatenate heads, then W_O
            if Z is not None:
                Z = A @ Z
            if sk:
                Y[sk] = X[sk] + Y[sk]
            if ln:
                Y[ln] = normalise(Y[ln], "layernorm")
            X = Y
            rec["eps"].append(eps.double())
            record()
    out = {k: torch.stack(v).cpu().double().numpy() for k, v in rec.items()}
    out["mu_z"][:, ~pure.cpu().numpy()] = np.nan
    out["spread0"] = spread(X0.double()).cpu().numpy()
    return out


def collapse_runs(X0: torch.Tensor | np.ndarray, variants: Sequence[Variant], n_layers: int, seed: int, *,
                  init_std: float | None = None, values: str = "gaussian", n_heads: int = 1,
                  dtype: torch.dtype = torch.float32, device: str | torch.device = "cpu",
                  store: CheckpointStore | None = None, chunk: int = 16) -> CollapseRuns:
    r"""Iterate random attention networks (eq. ``rc-dynamics``) from ``X0: (batch, N, d)`` for every variant.

    Input ``b`` goes through its own network (:func:`input_generator`); all
    variants of an input share that network, so differences between variants
    are paired. ``init_std``: weight scale (default :math:`1/\sqrt d`);
    ``values``: ``"gaussian"`` or ``"orthogonal"`` value matrices; ``n_heads``:
    heads per layer. Subnormal numbers are flushed to zero during the run
    (:func:`_flush_subnormals`). Inputs are processed ``chunk`` at a time through
    :func:`~attention_geometry.checkpoint.resumable_map`, so a run with a
    ``store`` resumes after an interruption.
    """
    X0 = _tensor(X0, "X0")
    variants, H = _check_inputs(X0, variants, n_layers, n_heads, values, init_std)
    chunk = check_int("chunk", chunk, low=1)
    d = X0.shape[-1]
    std = 1.0 / math.sqrt(d) if init_std is None else float(init_std)
    starts = list(range(0, X0.shape[0], chunk)) if store else [0]
    size = chunk if store else X0.shape[0]
    key = {"X0": hashlib.sha256(X0.detach().cpu().double().numpy().tobytes()).hexdigest()[:16],
           "shape": list(X0.shape), "variants": [v.key() for v in variants], "n_layers": n_layers, "seed": seed,
           "std": std, "values": values, "n_heads": H, "dtype": str(dtype), "chunk": size}

    def piece(s):
        idx = range(s, min(s + size, X0.shape[0]))
        return _run_chunk(X0[s:s + size], idx, variants, n_layers, seed, std, values, H, dtype, device)

    parts = resumable_map(piece, starts, store=store, name="collapse_runs", key=key)
    cat = {k: np.concatenate([p[k] for p in parts], axis=-1) for k in parts[0]}
    return CollapseRuns(labels=tuple(v.label for v in variants), mu=cat["mu"], norm=cat["norm"], eps=cat["eps"],
                        mu_attention=cat["mu_z"], spread0=cat["spread0"])


def collapse_runs_loop(X0: torch.Tensor | np.ndarray, variants: Sequence[Variant], n_layers: int, seed: int, *,
                       init_std: float | None = None, values: str = "gaussian", n_heads: int = 1,
                       dtype: torch.dtype = torch.float32) -> CollapseRuns:
    """Reference for :func:`collapse_runs`: one input, one variant, one head at a time.

    A plain loop with the same weights (the same generators); the tests and the
    benchmark compare it with the batched version. Never used by the chapters.
    """
    X0 = _tensor(X0, "X0")
    variants, H = _check_inputs(X0, variants, n_layers, n_heads, values, init_std)
    B, n, d = X0.shape
    std = 1.0 / math.sqrt(d) if init_std is None else float(init_std)
    T, nv = n_layers, len(variants)
    out = {k: np.full((T + 1, nv, B), np.nan) for k in ("mu", "norm", "mu_z")}
    out["eps"] = np.full((T, nv, B), np.nan)
    dh = d // H
    with _flush_subnormals():
        _loop(X0, variants, T, seed, std, values, H, dh, dtype, out)
    return CollapseRuns(labels=tuple(v.label for v in variants), mu=out["mu"], norm=out["norm"], eps=out["eps"],
                        mu_attention=out["mu_z"], spread0=spread(X0.double()).numpy())


def _loop(X0, variants, T, seed, std, values, H, dh, dtype, out):
    B, n, d = X0.shape
    for b in range(B):
        g = input_generator(seed, b)
        weights = []
        for _ in range(T):
            W = torch.randn((4 if H > 1 else 3, d, d), generator=g, dtype=torch.float32).to(dtype)
            V = orthogonal_factor(W[2]) if values == "orthogonal" else W[2] * std
            W = W * std
            W[2] = V
            weights.append(W)
        for k, v in enumerate(variants):
            X = X0[b].to(dtype)
            Z = X.clone()
            mask = torch.as_tensor(v.mask)
            out["mu"][0, k, b], out["norm"][0, k, b] = float(mu(X)), float(X.double().norm())
            out["mu_z"][0, k, b] = float(mu(Z)) if v.pure and H == 1 else np.nan
            for t, W in enumerate(weights, start=1):
                heads, eps = [], []
                for h in range(H):
                    cols = slice(h * dh, (h + 1) * dh)
                    A = attention_matrix(X, W[0][:, cols], W[1][:, cols], mask, v.temperature * dh)
                    eps.append(float(A[mask].min()))
                    heads.append(A @ X @ W[2][:, cols])
                Y = heads[0] if H == 1 else torch.cat(heads, -1) @ W[3]
                if H == 1:
                    Z = A @ Z
                if v.skip:
                    Y = X + Y
                X = normalise(Y, "layernorm") if v.layernorm else Y
                out["eps"][t - 1, k, b] = min(eps)
                out["mu"][t, k, b], out["norm"][t, k, b] = float(mu(X)), float(X.double().norm())
                out["mu_z"][t, k, b] = float(mu(Z)) if v.pure and H == 1 else np.nan


def mu_over_depth(X0: torch.Tensor | np.ndarray, mask: npt.ArrayLike | torch.Tensor, n_layers: int, seed: int, *,
                  temperature: float = 1.0, layernorm: bool = False, skip: bool = False, **kwargs) -> dict:
    r"""One variant of :func:`collapse_runs`: ``{"mu", "norm"}``, each ``(n_layers + 1, batch)``."""
    runs = collapse_runs(X0, [Variant("run", mask, temperature, layernorm, skip)], n_layers, seed, **kwargs)
    return {"mu": runs.mu[:, 0], "norm": runs.norm[:, 0]}


# ------------------------------------------------------------ summaries of a trajectory


def _window_line(logv: np.ndarray, start: np.ndarray, above: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The least-squares line of ``logv`` on the layer over each column's window: from layer
    ``start`` for as long as ``above`` holds (the first layer where it fails ends the window; after
    it the curve is rounding). ``logv, above: (T, K)``, ``start: (K,)`` -> ``(slope, intercept,
    points)``, each ``(K,)``; slope and intercept are NaN where the window is empty."""
    t = np.arange(logv.shape[0], dtype=np.float64)[:, None]
    ok = (t >= start[None]) & above & np.isfinite(logv)
    ok &= np.cumprod(ok | (t < start[None]), axis=0).astype(bool)
    n = ok.sum(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        tm = np.where(ok, t, 0.0).sum(0) / n
        lm = np.where(ok, logv, 0.0).sum(0) / n
        slope = np.where(ok, (t - tm) * (logv - lm), 0.0).sum(0) / np.where(ok, (t - tm) ** 2, 0.0).sum(0)
    return slope, lm - slope * tm, n


def fit_rate(values: npt.ArrayLike, t_min: int = 0, floor: float = 1e-5,
             return_points: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    r"""Fitted exponential rate per layer of each trajectory.

    ``values: (T + 1, ...)`` positive (e.g. :math:`\mu(X^{(t)})`). Least squares
    of :math:`\log v_t` on :math:`t` over ``t >= t_min`` while
    :math:`v_t / v_{t_\min} > ` ``floor`` (later points sit at the precision floor).
    Returns ``-slope`` with shape ``(...)``: :math:`v_t \approx C e^{-\mathrm{rate}\,t}`;
    NaN where fewer than 3 points qualify. With ``return_points`` also the
    number of points each fit used: a fit over a handful of points of a
    super-exponential drop is not a rate.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim < 1 or v.shape[0] < 3:
        raise fail("values", f"an array of shape {v.shape}", "shape (T + 1, ...) with T >= 2")
    t_min = check_int("t_min", t_min, low=0, high=v.shape[0] - 1)
    T = v.shape[0]
    flat = v.reshape(T, -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = flat / flat[t_min]
        logv = np.log(flat)
    slope, _, n = _window_line(logv, np.full(flat.shape[1], t_min), rel > floor)
    rate = np.where(n >= 3, -slope, np.nan).reshape(v.shape[1:])
    return (rate, n.reshape(v.shape[1:])) if return_points else rate


def collapse_depth(rel: npt.ArrayLike, threshold: float = 1e-4) -> tuple[np.ndarray, np.ndarray]:
    r"""The first layer at which :math:`\mu(X^{(t)})/\lVert X^{(t)}\rVert_F` falls below ``threshold``.

    ``rel: (T + 1, ...)``. Returns ``(depth, reached)``, each ``(...)``: where the
    threshold is never reached, ``depth = T + 1`` (a lower bound: censored) and
    ``reached`` is False. A speed of collapse that needs no exponential model.
    """
    r = np.asarray(rel, dtype=np.float64)
    threshold = check_float("threshold", threshold, low=0.0, low_open=True)
    below = r < threshold
    reached = below.any(0)
    depth = np.where(reached, below.argmax(0), r.shape[0])
    return depth, reached


def collapse_summary(rel: npt.ArrayLike, threshold: float = 1e-4, floor: float = 1e-5) -> dict:
    """The book's summaries of relative-spread trajectories ``rel: (T + 1, B)``, each ``(B,)``.

    ``depth`` and ``reached`` (:func:`collapse_depth` at ``threshold``), ``rate`` and
    ``points`` (:func:`fit_rate` above ``floor``, and how many layers the fit used),
    ``mean_log_spread`` (:func:`mean_log_spread`).
    """
    depth, reached = collapse_depth(rel, threshold)
    rate, points = fit_rate(rel, floor=floor, return_points=True)
    return {"depth": depth, "reached": reached, "rate": rate, "points": points,
            "mean_log_spread": mean_log_spread(rel)}


MIN_RATE_POINTS = 8
"""Fewest layers above the floor for which a fitted slope is called a *rate*."""


def has_rate(points: npt.ArrayLike, min_points: int = MIN_RATE_POINTS) -> bool:
    """Whether a mask's fits (``points: (B,)``, the layers each used, from
    :func:`collapse_summary`) describe an exponential rate: the median fit uses at
    least ``min_points`` layers above the floor. A drop to the floor within fewer
    layers (the complete mask's super-exponential collapse) is reported by its depth
    (:func:`collapse_depth`), not as a rate."""
    min_points = check_int("min_points", min_points, low=3)
    points = np.asarray(points).ravel()
    if points.size == 0:
        raise fail("points", "an empty array", "one count per input")
    return bool(np.median(points) >= min_points)


def mean_log_spread(rel: npt.ArrayLike, floor: float = 1e-6) -> np.ndarray:
    r"""How collapsed a trajectory is on average over depth: :math:`\frac1T\sum_{t=1}^T \log_{10}\max(v_t, \text{floor})`.

    ``rel: (T + 1, ...)``, the relative spread :math:`\mu/\lVert X\rVert_F`. One
    number per trajectory that needs no exponential model and is not censored:
    a mask that collapses in three layers scores near ``log10(floor)``, one that
    never collapses near 0. ``floor`` (default :math:`10^{-6}`) sits above the
    float32 rounding floor, so rounding noise does not count.
    """
    r = np.asarray(rel, dtype=np.float64)
    floor = check_float("floor", floor, low=0.0, low_open=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log10(np.maximum(np.nan_to_num(r[1:], nan=0.0), floor)).mean(0)


def log10_floored(values: npt.ArrayLike, dtype: torch.dtype = torch.float32) -> np.ndarray:
    """``log10(values)``, with values that underflowed to 0 counted as the smallest
    positive number of ``dtype`` (a lower bound of what was lost)."""
    tiny = float(torch.finfo(dtype).smallest_normal) * float(torch.finfo(dtype).eps)  # smallest subnormal
    return np.log10(np.maximum(np.nan_to_num(np.asarray(values, dtype=np.float64), nan=0.0), tiny))


def log10_growth(values: npt.ArrayLike) -> np.ndarray:
    r"""``log10(v_T / v_0)`` of each trajectory ``values: (T + 1, ...)``, robust to overflow.

    A trajectory whose last values are not finite (the float32 dynamics overflowed,
    e.g. a skip connection without normalisation) is measured at its last finite
    value: a lower bound of its growth.
    """
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log10(last_finite(v) / v[0])


def last_finite(values: npt.ArrayLike) -> np.ndarray:
    """The last finite, positive value of each trajectory ``values: (T + 1, ...)``
    (where the float32 dynamics overflowed, the value before it did)."""
    v = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(v) & (v > 0)
    last = v.shape[0] - 1 - np.argmax(finite[::-1], axis=0)
    return np.take_along_axis(v, last[None], axis=0)[0]


def plateau_level(values: npt.ArrayLike, fraction: float = 0.25, dtype: torch.dtype = torch.float32) -> np.ndarray:
    """The median of :func:`log10_floored` over the last ``fraction`` of the layers, per trajectory.

    ``values: (T + 1, ...)``. Where a curve has stopped moving (a plateau), this
    is its level in decades.
    """
    v = np.asarray(values, dtype=np.float64)
    fraction = check_float("fraction", fraction, low=0.0, high=1.0, low_open=True)
    start = min(v.shape[0] - 1, int(round(v.shape[0] * (1 - fraction))))
    return np.median(log10_floored(v[start:], dtype), axis=0)


def initial_rate(rel: npt.ArrayLike, k: int = 1) -> np.ndarray:
    r"""The initial collapse rate :math:`-\tfrac1k \log\big(v_k / v_0\big)` of each trajectory, ``rel: (T+1, ...)``."""
    r = np.asarray(rel, dtype=np.float64)
    k = check_int("k", k, low=1, high=r.shape[0] - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.log(r[k] / r[0]) / k


def theorem_bound(eps: npt.ArrayLike, radius: int, spread0: npt.ArrayLike, n: int) -> np.ndarray:
    r"""The collapse theorem's bound (eq. ``rc-bound``) with the run's own :math:`\varepsilon` (eq. ``rc-bound-run``).

    ``eps: (T, ...)`` the smallest attention weight on the mask at each layer;
    blocks of ``radius`` = :math:`r` layers contract the spread by at least
    :math:`1 - \varepsilon_b^r` with :math:`\varepsilon_b` the smallest weight in
    the block, so

    .. math:: \mu(Z^{(t)}) \le \sqrt N\,\mathrm{spread}(X^{(0)}) \prod_{b < \lfloor t/r\rfloor} (1 - \varepsilon_b^r).

    Returns the right-hand side, ``(T + 1, ...)`` (computed in logs: :math:`\varepsilon^r`
    underflows for large :math:`r`).
    """
    e = np.asarray(eps, dtype=np.float64)
    r = check_int("radius", radius, low=1)
    T = e.shape[0]
    nb = T // r
    log_fac = np.zeros((T + 1,) + e.shape[1:])
    if nb:
        eb = e[: nb * r].reshape((nb, r) + e.shape[1:]).min(1)
        with np.errstate(divide="ignore"):
            step = np.log1p(-np.exp(r * np.log(eb)))
        cum = np.concatenate([np.zeros((1,) + e.shape[1:]), np.cumsum(step, 0)])  # after 0..nb blocks
        log_fac = cum[np.minimum(np.arange(T + 1) // r, nb)]
    return math.sqrt(n) * np.asarray(spread0, dtype=np.float64) * np.exp(log_fac)


def precision_floor(dtype: torch.dtype) -> float:
    r"""The relative spread :math:`\mu/\lVert X\rVert_F` that rounding alone leaves in identical tokens.

    Rounding each entry to ``dtype`` leaves a relative error of the order of the
    machine epsilon :math:`u` per entry, so identical tokens computed along
    different paths differ by :math:`\mu/\lVert X\rVert_F \approx u` (a small
    multiple of it). Returns ``finfo(dtype).eps``.
    """
    return float(torch.finfo(dtype).eps)


# ------------------------------------------------------------ the late rate: uniform attention on the mask

LATE_RTOL = 0.01
"""Relative tolerance within which a curve decays at its late rate (:func:`late_window_start`)."""
LATE_ATOL = 1e-4
"""Absolute tolerance per layer added to :data:`LATE_RTOL` times the rate (what lets a rate of 0 settle)."""
LATE_FLOOR = 1e-12
"""Where a float64 curve, relative to its start, is rounding: late windows end there."""


def uniform_attention_matrix(mask: npt.ArrayLike | torch.Tensor) -> np.ndarray:
    r"""The attention matrix once the tokens have converged (eq. ``rc-late-rate``): uniform over each
    query's visible keys, :math:`A_{ij} = G_{ij} / |\{k : G_{ik} = 1\}|`.

    ``mask: (N, N)`` bool, every row with at least one visible key -> ``(N, N)`` float64,
    row-stochastic. When the keys a query sees are equal, their logits are equal and the
    masked softmax gives each of them the same weight: this matrix.
    """
    m = _as_mask(mask)
    visible = m.sum(1)
    if (visible == 0).any():
        raise fail("mask", f"a mask whose row {int(np.argmin(visible))} sees no key", "every query seeing a key")
    return m / visible[:, None].astype(np.float64)


def uniform_attention_spectrum(mask: npt.ArrayLike | torch.Tensor) -> np.ndarray:
    r"""The moduli :math:`|\lambda_1| \ge |\lambda_2| \ge \dots` of the eigenvalues of
    :func:`uniform_attention_matrix`, ``mask: (N, N)`` -> ``(N,)`` float64, decreasing.

    Computed block by block: ordering the tokens by the strongly connected components of the
    mask graph makes :math:`A` block triangular, so its eigenvalues are those of the diagonal
    blocks. A block of one token contributes its diagonal entry :math:`1/|\mathrm{visible}(i)|`
    exactly (for a triangular mask, such as causal or one-sided windows, every block is one
    token: the eigenvalues are the diagonal, even where they repeat and form Jordan blocks,
    which a general eigensolver would scatter by :math:`\epsilon^{1/k}`). A block of a
    symmetric mask (two-sided windows, the complete mask) is similar to the symmetric
    :math:`D^{-1/2} G D^{-1/2}` (``eigvalsh``); other blocks go to ``eigvals``. Moduli below
    :math:`N` times float64's epsilon are set to 0 (their rounding level).
    """
    from scipy.sparse.csgraph import connected_components

    m = _as_mask(mask)
    A = uniform_attention_matrix(m)
    n = m.shape[0]
    _, component = connected_components(m, directed=True, connection="strong")
    values = []
    for c in np.unique(component):
        block = np.flatnonzero(component == c)
        if block.size == 1:
            values.append(A[block, block])
            continue
        G = m[np.ix_(block, block)]
        if (G == G.T).all():
            d = m[block].sum(1).astype(np.float64)
            values.append(np.linalg.eigvalsh(G / np.sqrt(d[:, None] * d[None, :])))
        else:
            values.append(np.linalg.eigvals(A[np.ix_(block, block)]))
    moduli = np.abs(np.concatenate(values)).astype(np.float64)
    moduli[moduli < n * np.finfo(np.float64).eps] = 0.0
    return np.sort(moduli)[::-1]


def late_collapse_rate(mask: npt.ArrayLike | torch.Tensor) -> float:
    r"""The late collapse rate per layer of a mask, :math:`-\ln|\lambda_2|` (eq. ``rc-late-rate``).

    ``mask: (N, N)`` bool with self-loops -> a float. :math:`\lambda_2` is the eigenvalue of
    second-largest modulus of :func:`uniform_attention_matrix` (the largest is 1, on
    :math:`\mathbf 1`). Once attention is uniform on the mask, the distance of the tokens from
    their common limit shrinks by :math:`|\lambda_2|` per layer for a generic input (one with a
    component along :math:`\lambda_2`'s eigenvector). Repeated eigenvalues of that modulus that
    form a Jordan block of size :math:`k` multiply this by a polynomial :math:`t^{k-1}`: a later
    onset, the same late rate.

    Returns ``inf`` when :math:`\lambda_2 = 0` (the complete mask: one uniform layer makes all
    tokens equal) and ``0`` when :math:`|\lambda_2| = 1` (eigenvalue 1 twice, as for two
    documents: more than one closed class of tokens, each collapsing to its own point, and no
    collapse to one point). For a causal or one-sided-window mask, :math:`\lambda_2 = 1/2`
    (token 2 sees tokens 1 and 2): :math:`\ln 2`.
    """
    m = _as_mask(mask)
    if not np.diag(m).all():
        raise fail("mask", "a mask without self-loops", "a mask with mask[i, i] True for every i")
    if m.shape[0] < 2:
        raise fail("mask", f"a mask of {m.shape[0]} token", "a mask of at least 2 tokens")
    lam2 = float(uniform_attention_spectrum(m)[1])
    if lam2 == 0.0:
        return math.inf
    if lam2 >= 1.0 - m.shape[0] * np.finfo(np.float64).eps:
        return 0.0
    return -math.log(lam2)


def uniform_collapse(mask: npt.ArrayLike | torch.Tensor, X: torch.Tensor | np.ndarray, n_layers: int) -> np.ndarray:
    r""":math:`\mu(A^t X)` for :math:`t = 0, \dots,` ``n_layers``, with :math:`A` the uniform attention
    of ``mask`` (:func:`uniform_attention_matrix`), in float64.

    ``X: (..., N, d)`` -> ``(n_layers + 1, ...)``. What the attention part of the dynamics
    would do if attention were uniform from the first layer: its late rate is
    :func:`late_collapse_rate`, and its early layers show the delay the mask alone imposes
    (:func:`late_window_start`, :func:`fit_late_rate`).
    """
    A = torch.as_tensor(uniform_attention_matrix(mask))
    Y = _tensor(X, "X", dtype=torch.float64)
    if Y.ndim < 2 or Y.shape[-2] != A.shape[0]:
        raise fail("X", f"a tensor of shape {tuple(Y.shape)}", f"shape (..., N, d) with N = {A.shape[0]}")
    n_layers = check_int("n_layers", n_layers, low=0)
    out = [mu(Y)]
    for _ in range(n_layers):
        Y = A @ Y
        out.append(mu(Y))
    return torch.stack(out).numpy()


def late_window_start(curve: npt.ArrayLike, rate: float, *, rtol: float = LATE_RTOL, atol: float = LATE_ATOL,
                      floor: float = LATE_FLOOR) -> np.ndarray:
    r"""The first layer from which a collapse curve decays at its late rate: where the late window begins.

    ``curve: (T + 1, ...)`` positive (:func:`uniform_collapse`, say), ``rate``: the late rate
    per layer it should reach (:func:`late_collapse_rate`). The per-layer decay
    :math:`-\ln(v_{t+1}/v_t)` must stay within ``rtol * rate + atol`` of ``rate`` at every
    layer from the start on, for as long as :math:`v_t / v_0 >` ``floor`` (below it the curve is
    rounding). Returns ``(...)`` ints; ``T + 1`` where the curve never settles within its
    depth (an infinite rate never does: the curve drops to the rounding level at once).
    """
    v = np.asarray(curve, dtype=np.float64)
    if v.ndim < 1 or v.shape[0] < 2:
        raise fail("curve", f"an array of shape {v.shape}", "shape (T + 1, ...) with T >= 1")
    rtol = check_float("rtol", rtol, low=0.0)
    atol = check_float("atol", atol, low=0.0)
    floor = check_float("floor", floor, low=0.0, low_open=True)
    T = v.shape[0] - 1
    if rate == math.inf:
        return np.full(v.shape[1:], T + 1, dtype=np.int64)
    rate = check_float("rate", rate, low=0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        above = v / v[0] > floor
        decay = -np.diff(np.log(v), axis=0)  # (T, ...)
    ok = (np.abs(decay - rate) <= rtol * rate + atol) & above[:-1] & above[1:]
    ok |= ~(above[:-1] & above[1:])  # past the floor nothing is asked
    # the start: the first t from which every later step is ok and the point itself is above the floor
    tail_ok = np.flip(np.cumprod(np.flip(ok, 0), axis=0), 0).astype(bool)  # tail_ok[t]: ok at t, t+1, ...
    start_ok = tail_ok & above[:-1] & above[1:]
    return np.where(start_ok.any(0), start_ok.argmax(0), T + 1).astype(np.int64)


def fit_late_rate(values: npt.ArrayLike, start: npt.ArrayLike | int, *, floor: float = LATE_FLOOR,
                  min_points: int = MIN_RATE_POINTS) -> dict:
    r"""The late rate and the onset of each trajectory: a line fitted to its late window.

    ``values: (T + 1, ...)`` positive (:math:`\mu` of a run, or the relative spread);
    ``start: (...)`` or an int, the first layer of the late window (:func:`late_window_start`).
    The window runs from ``start`` while :math:`v_t / v_0 >` ``floor``. Least squares of
    :math:`\ln(v_t/v_0) \approx c - k\,t` over it gives

    * ``rate`` :math:`= k`, the late rate per layer;
    * ``onset`` :math:`= c / k`, the layer at which the late line starts from the initial
      value: 0 for a curve that decays at its late rate from the first layer, positive when
      the collapse is delayed, negative when the early layers fall faster than the late rate;
    * ``points``, the layers in the window.

    Each ``(...)``; ``rate`` and ``onset`` are NaN where the window has fewer than
    ``min_points`` layers (where the rate is 0, ``onset`` is NaN too).
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim < 1 or v.shape[0] < 3:
        raise fail("values", f"an array of shape {v.shape}", "shape (T + 1, ...) with T >= 2")
    floor = check_float("floor", floor, low=0.0, low_open=True)
    min_points = check_int("min_points", min_points, low=3)
    T = v.shape[0]
    s = np.broadcast_to(np.asarray(start), v.shape[1:])
    flat, s = v.reshape(T, -1), s.reshape(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        logv = np.log(flat / flat[0])
    slope, c, n = _window_line(logv, s, logv > math.log(floor))
    with np.errstate(divide="ignore", invalid="ignore"):
        onset = np.where(slope != 0, c / -slope, np.nan)
    good = n >= min_points
    shape = v.shape[1:]
    return {"rate": np.where(good, -slope, np.nan).reshape(shape), "onset": np.where(good, onset, np.nan).reshape(shape),
            "points": n.reshape(shape)}


def _public_model(n_layers, width, heads, seq_len, seed, layernorm):
    """GPT-2's configuration and initialisation at the given size, drawn from ``seed``, and its
    input token ids; with ``layernorm=False`` every LayerNorm (``ln_1``, ``ln_2``, ``ln_f``) is
    the identity. The weights are drawn in float32 and do not depend on ``layernorm``."""
    model, ids = _public_draw(n_layers, width, heads, seq_len, seed)
    model = copy.deepcopy(model)
    if not layernorm:
        for block in model.h:
            block.ln_1, block.ln_2 = torch.nn.Identity(), torch.nn.Identity()
        model.ln_f = torch.nn.Identity()
    return model.eval(), ids.clone()


@functools.lru_cache(maxsize=1)
def _public_draw(n_layers, width, heads, seq_len, seed):
    """One weight draw of :func:`_public_model`, with its LayerNorms (kept for the next call: the
    four runs of a draw, with and without LayerNorm in two precisions, share it)."""
    from transformers import GPT2Config, GPT2Model

    cfg = GPT2Config(n_layer=n_layers, n_embd=width, n_head=heads, n_positions=seq_len, vocab_size=PUBLIC_VOCAB,
                     bos_token_id=0, eos_token_id=0, attn_pdrop=0.0, resid_pdrop=0.0, embd_pdrop=0.0)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = GPT2Model(cfg)
        ids = torch.randint(0, PUBLIC_VOCAB, (1, seq_len))
    return model.eval(), ids


PUBLIC_VOCAB = 1024


def public_config_collapse(n_layers: int, width: int, heads: int, seq_len: int, seed: int, *, layernorm: bool,
                           dtype: torch.dtype = torch.float32) -> np.ndarray:
    r""":math:`\mu(X^{(\ell)})` and :math:`\mu(X^{(\ell)})/\lVert X^{(\ell)}\rVert_F` over the depth of a
    randomly initialised GPT-2 (``transformers.GPT2Model`` from a ``GPT2Config`` built here: its
    initialisation, :math:`\mathcal N(0, 0.02^2)` weights, ``c_proj`` scaled by
    :math:`1/\sqrt{2 n_\text{layers}}`), with ``n_layers`` blocks of width ``width`` and ``heads``
    heads, on ``seq_len`` random token ids (from a vocabulary of ``PUBLIC_VOCAB``: the rows of a
    random embedding are exchangeable, so its size does not matter). Weights and ids come from
    ``torch.manual_seed(seed)`` inside ``torch.random.fork_rng``: one seed is one weight draw.
    ``layernorm=False`` replaces ``ln_1``, ``ln_2`` and ``ln_f`` by the identity (same weights).
    The weights are drawn in float32 and cast to ``dtype`` (exactly).

    :math:`X^{(\ell)}` are the ``hidden_states`` the model returns: the embeddings, the residual
    stream after each block but the last, and the output (after ``ln_f``).

    Returns ``(2, n_layers + 1)``: row 0 :math:`\mu`, row 1 the relative :math:`\mu`.
    """
    n_layers = check_int("n_layers", n_layers, low=1)
    width, heads = check_int("width", width, low=1), check_int("heads", heads, low=1)
    if width % heads:
        raise fail("heads", heads, f"a divisor of width = {width}")
    seq_len, seed = check_int("seq_len", seq_len, low=2), check_int("seed", seed, low=0)
    layernorm = check_bool("layernorm", layernorm)
    dtype = check_choice("dtype", dtype, (torch.float32, torch.float64))
    model, ids = _public_model(n_layers, width, heads, seq_len, seed, layernorm)
    model = model.to(dtype)
    with torch.no_grad():
        X = torch.stack([h[0] for h in model(ids, output_hidden_states=True).hidden_states])
    m = mu(X)
    return torch.stack([m, m / torch.linalg.vector_norm(X, dim=(-2, -1))]).double().numpy()
