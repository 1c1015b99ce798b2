r"""Recency bias from LayerNorm: the parameter-free causal decoder, simulated.

Definitions (chapter 6 of the book, after Kim et al. 2025).

* **Inputs** with anisotropy :math:`\alpha \in [0, 1)`: for one sequence,
  :math:`x_i = \varepsilon_i + c\,v` with :math:`c = \sqrt{\alpha/(1-\alpha)}` and
  :math:`\varepsilon_1, \dots, \varepsilon_n, v \sim \mathcal N(0, I_d/d)` independent
  (:func:`inputs`). The cosine between two tokens concentrates at :math:`\alpha`.
* **Normalisation** ``norm``: ``"layernorm"`` is LayerNorm without :math:`\varepsilon`
  and affine part, :math:`\mathrm{LN}(x) = \sqrt d\, Px/\lVert Px\rVert` with
  :math:`P = I - \mathbf 1\mathbf 1^\top/d`; ``"rmsnorm"`` is the scaling
  :math:`\sqrt d\, x/\lVert x\rVert` alone (the paper's approximation of LN);
  ``"none"`` is the identity (:func:`normalise`).
* **Layer** (:func:`decoder_layer`): :math:`Y = \mathrm{norm}(X)`,
  :math:`S = YY^\top/\sqrt d`, :math:`A = \mathrm{softmax}(\mathrm{causal}(S))` row-wise
  with key :math:`j \le` query :math:`i`, and :math:`f(X) = AY + \gamma X`: the residual
  adds the *pre-norm* input. Layer :math:`\ell` maps :math:`X^{(\ell-1)}` to
  :math:`X^{(\ell)}`; its scores are :math:`S^{(\ell)}`.
* **Recency probability** of one score matrix (:func:`recency_fraction`): the
  fraction of triples :math:`i > k > j` (query :math:`i`, keys :math:`j < k` before
  it) with :math:`S_{ik} > S_{ij}`, ties counting one half. Over sequences its
  mean is :math:`\mathrm{RP} = P(S_{ik} > S_{ij} \mid i > k > j)`: 0.5 = no
  preference, above = recency, below = primacy.

**Gram reduction** (why the simulation is cheap). The layer commutes with every
rotation of :math:`\mathbb R^d` that fixes :math:`\mathbf 1`, and LN only sees the
centred rows :math:`XP`. Every later centred state is :math:`C\,XP` for an
:math:`n \times n` matrix :math:`C`, so all scores are functions of the centred Gram
matrix :math:`K = XPX^\top` alone, which evolves as :math:`K \mapsto MKM^\top` with
:math:`M = A\,\mathrm{diag}(\sqrt d/\sqrt{K_{ii}}) + \gamma I` (:func:`gram_layer`). And
:math:`K = \Sigma^{1/2} W \Sigma^{1/2}/d` with :math:`\Sigma = I + c^2\mathbf 1\mathbf 1^\top`
and :math:`W` a Wishart matrix with :math:`d - 1` degrees of freedom (:math:`d` without
centring), drawn by Bartlett's decomposition (:func:`input_gram`): :math:`O(n^2)`
random numbers per sequence instead of :math:`nd`, and nothing of size :math:`d`.
The token-space path (:func:`decoder_layer`) is kept as the reference; the tests
check that both give the same scores on the same inputs.

Conventions. Axis names: ``batch`` (independent sequences), ``n`` (tokens;
query :math:`i`, keys :math:`j, k`), ``d`` (features), ``layer``. Indices in the
docstrings are 1-based like the book's; arrays are 0-based. Simulation runs in
float32 (the statistics are accumulated in float64, from centred chunks);
closed forms are in :mod:`attention_geometry.recency_theory`.
"""

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import torch

from ._checks import check_choice, check_float, check_int, fail, torch_threads
from .attention import causal_softmax, mask_tensor, masked_softmax
from .layernorm import NORMS as _ALL_NORMS
from .layernorm import normalise

__all__ = [
    "check_model",
    "inputs",
    "decoder_layer",
    "gram_of",
    "input_gram",
    "gram_layer",
    "triples",
    "recency_fraction",
    "RecencyStats",
    "simulate_recency",
]

#: The normalisations the recency model is defined for (the book's vocabulary,
#: :data:`attention_geometry.layernorm.NORMS`, without the projection alone).
NORMS = tuple(k for k in _ALL_NORMS if k != "projection")


# ---------------------------------------------------------------- validation


def check_model(d, n, alpha, gamma=0.0, norm="layernorm", n_layers=1):
    """Validate the model's arguments; return them normalised ``(d, n, alpha, gamma, norm, n_layers)``.

    ``d`` an integer >= 2 (LayerNorm of a single feature is undefined), ``n`` an
    integer >= 3 (a triple of query and two earlier keys), ``alpha`` in [0, 1),
    ``gamma`` a finite number >= 0, ``norm`` one of :data:`NORMS`, ``n_layers`` >= 1.
    """
    d = check_int("d", d, low=2)
    n = check_int("n", n, low=3)
    n_layers = check_int("n_layers", n_layers, low=1)
    alpha = check_float("alpha", alpha, low=0.0, high=1.0, high_open=True)
    gamma = check_float("gamma", gamma, low=0.0)
    check_choice("norm", norm, NORMS)
    return d, n, float(alpha), float(gamma), norm, n_layers


def _shared_scale(alpha):
    return math.sqrt(alpha / (1.0 - alpha))


# ------------------------------------------------------------ token space


def inputs(n_samples, n, d, alpha, *, generator, dtype=torch.float32, device="cpu"):
    r"""Draw ``X: (batch, n, d)``, rows :math:`x_i = \varepsilon_i + \sqrt{\alpha/(1-\alpha)}\,v`.

    ``generator`` is a ``torch.Generator`` on ``device``; the draw order is
    :math:`\varepsilon` then :math:`v`, so one seed gives the same noise for every
    :math:`\alpha` (common random numbers across the book's rows).
    """
    d, n, alpha, *_ = check_model(d, n, alpha)
    eps = torch.randn(n_samples, n, d, generator=generator, dtype=dtype, device=device)
    v = torch.randn(n_samples, 1, d, generator=generator, dtype=dtype, device=device)
    return (eps + _shared_scale(alpha) * v) / math.sqrt(d)


def decoder_layer(X, *, norm="layernorm", gamma=0.0):
    r"""One layer in token space: ``X: (batch, n, d) -> (X_next, S, A)``.

    :math:`Y = \mathrm{norm}(X)`, ``S = Y Y^T / sqrt(d): (batch, n, n)`` (full, the
    causal mask is applied inside the softmax), ``A: (batch, n, n)``,
    ``X_next = A Y + gamma X: (batch, n, d)``.
    """
    Y = normalise(X, norm)
    S = Y @ Y.transpose(-1, -2) / math.sqrt(X.shape[-1])
    A = causal_softmax(S)
    return A @ Y + gamma * X, S, A


# ------------------------------------------------------------- Gram space


def gram_of(X, norm="layernorm"):
    """``K: (batch, n, n)``, the Gram matrix LN sees: ``XP X^T`` for LayerNorm, ``X X^T`` otherwise."""
    Xc = normalise(X, "projection") if norm == "layernorm" else X
    return Xc @ Xc.transpose(-1, -2)


def input_gram(n_samples, n, d, alpha, *, norm="layernorm", rng, dtype=torch.float32, device="cpu"):
    r"""Draw ``K: (batch, n, n)`` with the law of :func:`gram_of` of :func:`inputs`.

    :math:`K = FF^\top` with :math:`F = (I + \kappa\mathbf 1\mathbf 1^\top) L/\sqrt d`,
    :math:`(1 + \kappa n)^2 = 1 + c^2 n` (so :math:`(I+\kappa\mathbf 1\mathbf 1^\top)^2 = \Sigma`)
    and :math:`L` the Bartlett factor of a Wishart matrix with :math:`m = d - 1`
    (LayerNorm) or :math:`m = d` degrees of freedom: lower triangular,
    :math:`L_{ii} = \sqrt{\chi^2_{m-i+1}}`, :math:`L_{ij} \sim \mathcal N(0,1)` below. When
    :math:`m < n` the Wishart matrix is singular and :math:`L` is an ``(n, m)``
    Gaussian matrix instead. ``rng`` is a ``numpy.random.Generator`` (chi-square
    draws with an explicit generator); the numbers move to ``device`` once.
    """
    d, n, alpha, _, norm, _ = check_model(d, n, alpha, norm=norm)
    m = d - 1 if norm == "layernorm" else d
    np_dtype = np.float32 if dtype == torch.float32 else np.float64
    if m >= n:
        rows, cols = np.tril_indices(n, -1)
        L = np.zeros((n_samples, n, n), dtype=np_dtype)
        L[:, rows, cols] = rng.standard_normal((n_samples, rows.size), dtype=np_dtype)
        chi2 = 2.0 * rng.standard_gamma((m - np.arange(n)) / 2.0, size=(n_samples, n))
        L[:, np.arange(n), np.arange(n)] = np.sqrt(chi2).astype(np_dtype)
    else:
        L = rng.standard_normal((n_samples, n, m), dtype=np_dtype)
    L = torch.from_numpy(L).to(device)
    kappa = (math.sqrt(1.0 + alpha / (1.0 - alpha) * n) - 1.0) / n
    F = (L + kappa * L.sum(1, keepdim=True)) / math.sqrt(d)
    return F @ F.transpose(-1, -2)


def gram_layer(K, *, d, norm="layernorm", gamma=0.0):
    r"""One layer in Gram space: ``K: (batch, n, n) -> (K_next, S, A)``.

    With :math:`D = \mathrm{diag}(\sqrt d/\sqrt{K_{ii}})` (identity for ``"none"``):
    :math:`S = DKD/\sqrt d`, :math:`A` the causal softmax, :math:`M = AD + \gamma I`,
    :math:`K_{next} = MKM^\top`. Equal to :func:`decoder_layer` on the Gram matrix
    (:func:`gram_of`) of its input.
    """
    n = K.shape[-1]
    diag = torch.diagonal(K, dim1=-2, dim2=-1)
    causal = mask_tensor("causal", n, device=K.device)
    if norm == "none":
        scale = torch.ones_like(diag)
        S = K / math.sqrt(d)
        A = masked_softmax(S, causal)
    else:
        scale = torch.rsqrt(diag) * math.sqrt(d)
        S = K * (scale[..., :, None] * scale[..., None, :]) * (1.0 / math.sqrt(d))
        # S_ii = sqrt(d) >= |S_ij| (Cauchy-Schwarz): a known row maximum
        A = masked_softmax(S, causal, row_max=math.sqrt(d))
    M = A * scale[..., None, :]
    if gamma:
        M = M + gamma * torch.eye(n, dtype=K.dtype, device=K.device)
    K_next = M @ (M @ K).transpose(-1, -2)  # K symmetric: (MK)^T = K M^T
    return K_next, S, A


# ------------------------------------------------------- recency statistic


def triples(n):
    """Index arrays ``(i, k, j)``, each ``(n_triples,)``, of every query i > key k > key j (0-based)."""
    check_int("n", n, low=3)  # a query and two earlier keys
    ijk = [(i, k, j) for j, k, i in combinations(range(n), 3)]
    return tuple(torch.tensor(col, dtype=torch.long) for col in zip(*ijk))


def recency_fraction(S, index=None):
    """``(batch,)``: per score matrix ``S: (batch, n, n)``, the fraction of triples
    i > k > j with ``S[i, k] > S[i, j]`` (nearer key wins), ties counting 1/2.
    ``index``: :func:`triples` of ``n``, to reuse."""
    n = S.shape[-1]
    i, k, j = index if index is not None else triples(n)
    flat = S.reshape(*S.shape[:-2], n * n)
    near = flat.index_select(-1, (i * n + k).to(S.device))
    far = flat.index_select(-1, (i * n + j).to(S.device))
    return 0.5 * (torch.sign(near - far).mean(-1) + 1.0)


# --------------------------------------------------------------- simulation


@dataclass(frozen=True)
class RecencyStats:
    """Monte Carlo statistics of the scores, one entry per layer.

    ``scores``, ``scores_se``: ``(layer, n, n)`` mean of :math:`S^{(\\ell)}_{ij}` over
    sequences and its standard error (full matrices; only ``j <= i`` is causal).
    ``row_cov``: ``(layer, n, n, n)``, ``row_cov[l, i, j, k]`` the covariance of
    :math:`S_{ij}` and :math:`S_{ik}` across sequences (for contrasts within a query
    row). ``rp``, ``rp_se``: ``(layer,)`` recency probability and its standard error.
    """

    d: int
    n: int
    alpha: float
    gamma: float
    norm: str
    n_samples: int
    seed: int
    scores: np.ndarray
    scores_se: np.ndarray
    row_cov: np.ndarray
    rp: np.ndarray
    rp_se: np.ndarray

    def contrast(self, layer, i, weights):
        r"""Mean and standard error of :math:`\sum_j w_j S^{(\ell)}_{ij}` for query ``i`` (1-based
        ``layer`` and ``i``; ``weights: (n,)``)."""
        w = np.asarray(weights, dtype=np.float64)
        mean = float(w @ self.scores[layer - 1, i - 1])
        var = float(w @ self.row_cov[layer - 1, i - 1] @ w) / self.n_samples
        return mean, math.sqrt(max(var, 0.0))

    def ratio(self, layer, i, j, k):
        r"""Ratio of means :math:`\bar S_{ij}/\bar S_{ik}` (1-based) and its delta-method standard error."""
        row, cov = self.scores[layer - 1, i - 1], self.row_cov[layer - 1, i - 1]
        a, b = row[j - 1], row[k - 1]
        g = np.zeros(self.n)
        g[j - 1] += 1.0 / b
        g[k - 1] -= a / b**2
        return float(a / b), math.sqrt(max(float(g @ cov @ g) / self.n_samples, 0.0))

    def recency_contrast(self, layer):
        r"""Mean and standard error of :math:`S^{(\ell)}_{n,n-1} - S^{(\ell)}_{n,1}`, nearest minus
        farthest earlier key of the last query."""
        w = np.zeros(self.n)
        w[self.n - 2], w[0] = 1.0, -1.0
        return self.contrast(layer, self.n, w)

    def key_profile(self, layer):
        r"""``(ratios, se)``, each ``(n - 1,)``: :math:`\bar S_{nj}/\bar S_{n1}` for keys
        :math:`j = 1..n-1` of the last query, with delta-method standard errors."""
        out = np.array([self.ratio(layer, self.n, j, 1) for j in range(1, self.n)])
        return out[:, 0], out[:, 1]


class _Moments:
    """Running mean and co-moments, merged chunk by chunk (Chan et al.) in float64."""

    def __init__(self):
        self.count, self.mean, self.m2 = 0, None, None

    def add(self, x, m2):
        # x: (batch, ...) of one chunk, m2: that chunk's centred second-moment sums
        b = x.shape[0]
        mean = x.mean(0)
        if self.count == 0:
            self.count, self.mean, self.m2 = b, mean, m2
            return
        n = self.count + b
        delta = mean - self.mean
        self.m2 = self.m2 + m2 + self._outer(delta) * (self.count * b / n)
        self.mean = self.mean + delta * (b / n)
        self.count = n

    _outer = staticmethod(lambda delta: delta * delta)


class _RowMoments(_Moments):
    _outer = staticmethod(lambda delta: delta[:, :, None] * delta[:, None, :])


def _accumulate(S, frac, mom_s, mom_rp):
    S64 = S.to(torch.float64)
    centred = S64 - S64.mean(0)
    rows = centred.permute(1, 2, 0)  # (n, n, batch): per query row i, keys x batch
    mom_s.add(S64, rows @ rows.transpose(-1, -2))
    f64 = frac.to(torch.float64)
    mom_rp.add(f64, ((f64 - f64.mean()) ** 2).sum())


def _run_chunks(d, n, alpha, gamma, norm, n_layers, n_samples, method, device, dtype, chunk_size,
                seed, index):
    """The simulation loop of :func:`simulate_recency`: per-layer running moments."""
    if method == "gram":
        rng = np.random.default_rng(seed)
    else:
        gen = torch.Generator(device=device).manual_seed(seed)
    mom_s = [_RowMoments() for _ in range(n_layers)]
    mom_rp = [_Moments() for _ in range(n_layers)]
    done = 0
    with torch.no_grad():
        while done < n_samples:
            b = min(chunk_size, n_samples - done)
            if method == "gram":
                state = input_gram(b, n, d, alpha, norm=norm, rng=rng, dtype=dtype, device=device)
            else:
                state = inputs(b, n, d, alpha, generator=gen, dtype=dtype, device=device)
            for layer in range(n_layers):
                if method == "gram":
                    state, S, _ = gram_layer(state, d=d, norm=norm, gamma=gamma)
                else:
                    state, S, _ = decoder_layer(state, norm=norm, gamma=gamma)
                _accumulate(S, recency_fraction(S, index), mom_s[layer], mom_rp[layer])
            done += b
    return mom_s, mom_rp


def simulate_recency(
    d,
    n,
    alpha,
    gamma=0.0,
    norm="layernorm",
    n_layers=4,
    n_samples=100_000,
    seed=0,
    *,
    method="gram",
    device="cpu",
    dtype=torch.float32,
    chunk_size=8192,
    threads=1,
):
    """Monte Carlo of the scores :math:`S^{(1)}, \\dots, S^{(L)}` over ``n_samples`` sequences.

    ``method="gram"`` runs :func:`gram_layer` on :func:`input_gram` draws (cost
    independent of ``d``; ``seed`` seeds a ``numpy.random.Generator``);
    ``method="tokens"`` runs :func:`decoder_layer` on :func:`inputs` draws
    (``seed`` seeds a ``torch.Generator`` on ``device``; memory ``chunk_size * n * d``).
    Sequences are processed ``chunk_size`` at a time; results are bit-reproducible
    for the same arguments on the same machine. ``threads``: torch's intra-op
    threads on the CPU during the call (restored afterwards; ``None`` leaves
    torch's setting). One is the default because every tensor here is small
    (``chunk_size * n * n``): on an idle 2-core machine a second thread makes
    the paper's four-model simulation about 1.7 times faster, but on a busy
    machine its waits made the same call many times slower. Returns
    :class:`RecencyStats`.
    """
    d, n, alpha, gamma, norm, n_layers = check_model(d, n, alpha, gamma, norm, n_layers)
    check_int("n_samples", n_samples, low=2)  # a standard error needs two
    check_choice("method", method, ("gram", "tokens"))
    check_int("chunk_size", chunk_size, low=2)
    device = torch.device(device)
    index = tuple(t.to(device) for t in triples(n))
    with torch_threads(threads if device.type == "cpu" else None):
        mom_s, mom_rp = _run_chunks(d, n, alpha, gamma, norm, n_layers, n_samples, method, device,
                                    dtype, chunk_size, seed, index)
    count = mom_s[0].count
    mean = torch.stack([m.mean for m in mom_s]).cpu().numpy()
    cov = torch.stack([m.m2 for m in mom_s]).cpu().numpy() / (count - 1)
    var = np.diagonal(cov, axis1=-2, axis2=-1)
    rp = np.array([float(m.mean) for m in mom_rp])
    rp_var = np.array([float(m.m2) for m in mom_rp]) / (count - 1)
    return RecencyStats(
        d=d, n=n, alpha=alpha, gamma=gamma, norm=norm, n_samples=count, seed=seed,
        scores=mean, scores_se=np.sqrt(var / count), row_cov=cov,
        rp=rp, rp_se=np.sqrt(rp_var / count),
    )
