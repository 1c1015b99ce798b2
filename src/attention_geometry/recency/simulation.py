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
closed forms are in :mod:`attention_geometry.recency.theory`.
"""

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import torch

from .._checks import ArgumentTypeError, check_choice, check_float, check_int, fail, torch_threads
from ..attention import causal_softmax, mask_tensor, masked_softmax
from ..checkpoint import CheckpointStore
from ..layernorm import NORMS as _ALL_NORMS
from ..layernorm import normalise
from ..stats import Estimate, control_variate_moments

__all__ = [
    "check_model",
    "inputs",
    "decoder_layer",
    "gram_of",
    "input_gram",
    "gram_layer",
    "triples",
    "recency_fraction",
    "compare_paths",
    "first_order_layer2",
    "CONTROLS",
    "layer1_controls",
    "control_names",
    "RecencyModel",
    "RecencyStats",
    "simulate_recency",
    "ARXIV_FIGURE_1",
]

#: The heat map of the arXiv text's Figure 1 (Section 3: "we sample 10 vectors of
#: dimension d=64 ... averaged over 100,000 simulations"): its width, tokens and sequences.
ARXIV_FIGURE_1 = {"d": 64, "n_tokens": 10, "sequences": 100_000}

#: The normalisations the recency model is defined for (the book's vocabulary,
#: :data:`attention_geometry.layernorm.NORMS`, without the projection alone).
NORMS = tuple(k for k in _ALL_NORMS if k != "projection")


# ---------------------------------------------------------------- validation


def check_model(d: int, n: int, alpha: float, gamma: float = 0.0, norm: str = "layernorm",
                n_layers: int = 1) -> tuple[int, int, float, float, str, int]:
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


def inputs(n_samples: int, n: int, d: int, alpha: float, *, generator: torch.Generator,
           dtype: torch.dtype = torch.float32, device: str | torch.device = "cpu") -> torch.Tensor:
    r"""Draw ``X: (batch, n, d)``, rows :math:`x_i = \varepsilon_i + \sqrt{\alpha/(1-\alpha)}\,v` (eq. ``eq-rec-inputs``).

    ``generator`` is a ``torch.Generator`` on ``device``; the draw order is
    :math:`\varepsilon` then :math:`v`, so one seed gives the same noise for every
    :math:`\alpha` (common random numbers across the book's rows).
    """
    d, n, alpha, *_ = check_model(d, n, alpha)
    eps = torch.randn(n_samples, n, d, generator=generator, dtype=dtype, device=device)
    v = torch.randn(n_samples, 1, d, generator=generator, dtype=dtype, device=device)
    return (eps + _shared_scale(alpha) * v) / math.sqrt(d)


def decoder_layer(X: torch.Tensor, *, norm: str = "layernorm",
                  gamma: float = 0.0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""One layer in token space (eq. ``eq-rec-layer``): ``X: (batch, n, d) -> (X_next, S, A)``.

    :math:`Y = \mathrm{norm}(X)`, ``S = Y Y^T / sqrt(d): (batch, n, n)`` (full, the
    causal mask is applied inside the softmax), ``A: (batch, n, n)``,
    ``X_next = A Y + gamma X: (batch, n, d)``.
    """
    Y = normalise(X, norm)
    S = Y @ Y.transpose(-1, -2) / math.sqrt(X.shape[-1])
    A = causal_softmax(S)
    return A @ Y + gamma * X, S, A


# ------------------------------------------------------------- Gram space


def gram_of(X: torch.Tensor, norm: str = "layernorm") -> torch.Tensor:
    """``K: (batch, n, n)``, the Gram matrix LN sees: ``XP X^T`` for LayerNorm, ``X X^T`` otherwise."""
    Xc = normalise(X, "projection") if norm == "layernorm" else X
    return Xc @ Xc.transpose(-1, -2)


def input_gram(n_samples: int, n: int, d: int, alpha: float, *, norm: str = "layernorm", rng: np.random.Generator,
               dtype: torch.dtype = torch.float32, device: str | torch.device = "cpu") -> torch.Tensor:
    r"""Draw ``K: (batch, n, n)`` with the law of :func:`gram_of` of :func:`inputs` (prop. ``prop-rec-gram``).

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


def gram_layer(K: torch.Tensor, *, d: int, norm: str = "layernorm",
               gamma: float = 0.0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""One layer in Gram space (eq. ``eq-rec-gram``): ``K: (batch, n, n) -> (K_next, S, A)``.

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


def triples(n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Index arrays ``(i, k, j)``, each ``(n_triples,)``, of every query i > key k > key j (0-based)."""
    check_int("n", n, low=3)  # a query and two earlier keys
    ijk = [(i, k, j) for j, k, i in combinations(range(n), 3)]
    return tuple(torch.tensor(col, dtype=torch.long) for col in zip(*ijk))


def recency_fraction(S: torch.Tensor,
                     index: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
    """``(batch,)``: per score matrix ``S: (batch, n, n)``, the fraction :math:`F` of eq. ``eq-rec-rp``: triples
    i > k > j with ``S[i, k] > S[i, j]`` (nearer key wins), ties counting 1/2.
    ``index``: :func:`triples` of ``n``, to reuse."""
    n = S.shape[-1]
    i, k, j = index if index is not None else triples(n)
    flat = S.reshape(*S.shape[:-2], n * n)
    near = flat.index_select(-1, (i * n + k).to(S.device))
    far = flat.index_select(-1, (i * n + j).to(S.device))
    return 0.5 * (torch.sign(near - far).mean(-1) + 1.0)


def compare_paths(n_samples: int, n: int, d: int, alpha: float, gamma: float = 0.0, norm: str = "layernorm",
                  n_layers: int = 4, seed: int = 0) -> float:
    """The largest difference between the token-space and Gram-space scores of the same
    ``n_samples`` input sequences over ``n_layers`` layers (float64; eq. ``eq-rec-gram``)."""
    X = inputs(n_samples, n, d, alpha, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    K, worst = gram_of(X, norm), 0.0
    for _ in range(check_int("n_layers", n_layers, low=1)):
        X, S_tokens, _ = decoder_layer(X, norm=norm, gamma=gamma)
        K, S_gram, _ = gram_layer(K, d=d, norm=norm, gamma=gamma)
        worst = max(worst, (S_tokens - S_gram).abs().max().item())
    return worst


# ------------------------------------------------ first-order expansion


def first_order_layer2(K: torch.Tensor, A: torch.Tensor, *, d: int,
                       gamma: float = 0.0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""The second-layer scores of the last query to first order in the first layer's off-diagonal attention.

    ``K: (batch, n, n)`` the inputs' Gram matrix (:func:`gram_of`, :func:`input_gram`),
    ``A: (batch, n, n)`` the first layer's attention (:func:`gram_layer`). With
    :math:`g_{kl} = K_{kl}/\sqrt{K_{kk}K_{ll}}` (the first-layer cosines) and
    :math:`r_i = \gamma\sqrt{K_{ii}/d}` (the residual's weight on :math:`y_i`), for the
    last query :math:`n` and every key :math:`j < n` (eq. ``eq-rec-first-order``)

    .. math::

        S^{(2)}_{nj} = \sqrt d\,g_{nj} + U_n(j) + T_n(j) + O(A_{\text{off}}^2),\quad
        U_n(j) = \frac{\sqrt d}{1+r_n}\sum_{m<n} A_{nm}(g_{mj} - g_{nj}g_{nm}),\quad
        T_n(j) = \frac{\sqrt d}{1+r_j}\sum_{m<j} A_{jm}(g_{nm} - g_{nj}g_{jm}).

    Returns ``(base, U, T)``, each ``(batch, n - 1)`` for keys ``j = 1..n-1``.
    Only :math:`T_n(j)` depends on :math:`j` beyond exchangeable keys: it carries the
    recency at first order. For LayerNorm and RMSNorm (the scaling is what makes
    :math:`A` nearly diagonal); the book checks the remainder numerically.
    """
    n = K.shape[-1]
    diag = torch.diagonal(K, dim1=-2, dim2=-1)
    g = K / torch.sqrt(diag[..., :, None] * diag[..., None, :])
    r = gamma * torch.sqrt(diag / d)
    gn = g[..., n - 1, : n - 1]  # g_nm, m < n: (batch, n-1)
    An = A[..., n - 1, : n - 1]
    # U_n(j) = sqrt(d)/(1+r_n) sum_m A_nm (g_mj - g_nj g_nm)
    U = (An[..., :, None] * (g[..., : n - 1, : n - 1] - gn[..., :, None] * gn[..., None, :])).sum(-2)
    U = U * (math.sqrt(d) / (1.0 + r[..., n - 1 : n]))
    # T_n(j) = sqrt(d)/(1+r_j) sum_{m<j} A_jm (g_nm - g_nj g_jm): A is causal, so m < j is A[j, :j]
    Aoff = A[..., : n - 1, : n - 1].tril(-1)
    T = (Aoff * (gn[..., None, :] - gn[..., :, None] * g[..., : n - 1, : n - 1])).sum(-1)
    T = T * (math.sqrt(d) / (1.0 + r[..., : n - 1]))
    return math.sqrt(d) * gn, U, T


#: The first-layer control variates of the last query's recency contrast, each of mean 0
#: (:func:`layer1_controls`); ``"T"`` only for isotropic inputs.
CONTROLS = ("score", "weight", "U", "T")


def layer1_controls(K: torch.Tensor, S: torch.Tensor, A: torch.Tensor, *, d: int, alpha: float,
                    gamma: float = 0.0) -> torch.Tensor:
    r"""``(batch, c)``: first-layer statistics of known mean 0 that track the last query's contrast.

    With keys :math:`n-1` (nearest) and :math:`1` (farthest) of the last query:
    ``"score"`` :math:`S^{(1)}_{n,n-1} - S^{(1)}_{n,1}`, ``"weight"``
    :math:`A^{(1)}_{n,n-1} - A^{(1)}_{n,1}`, ``"U"`` :math:`U_n(n-1) - U_n(1)` (all three
    mean 0 because the keys of the first layer are exchangeable) and, for
    :math:`\alpha = 0` only, ``"T"`` :math:`T_n(n-1)` (mean 0 because flipping the
    sign of :math:`x_n` negates it and leaves isotropic inputs' law unchanged);
    :func:`first_order_layer2` defines :math:`U, T`. Returns the columns named by
    :func:`control_names`.
    """
    n = K.shape[-1]
    _, U, T = first_order_layer2(K, A, d=d, gamma=gamma)
    cols = [S[..., n - 1, n - 2] - S[..., n - 1, 0], A[..., n - 1, n - 2] - A[..., n - 1, 0],
            U[..., n - 2] - U[..., 0]]
    if alpha == 0:
        cols.append(T[..., n - 2])
    return torch.stack(cols, -1)


def control_names(alpha: float, norm: str = "layernorm") -> tuple[str, ...]:
    """The controls :func:`layer1_controls` records for these inputs and this norm (none without one)."""
    if norm == "none":
        return ()
    return CONTROLS if alpha == 0 else CONTROLS[:3]


# --------------------------------------------------------------- simulation


@dataclass(frozen=True)
class RecencyModel:
    r"""What :func:`simulate_recency` simulates: the inputs and the decoder, not how it runs.

    ``n`` tokens of width ``d`` with anisotropy ``alpha`` (:func:`inputs`) go through
    ``n_layers`` layers :math:`f(X) = AY + \gamma X`, :math:`Y = \mathrm{norm}(X)`
    (:func:`decoder_layer`). Validated and normalised on construction (:func:`check_model`:
    ``d >= 2``, ``n >= 3``, ``alpha`` in [0, 1), ``gamma >= 0``, ``norm`` in :data:`NORMS`).
    """

    d: int  # width; LayerNorm of a single feature is undefined
    n: int  # tokens per sequence; the recency probability needs a query and two earlier keys
    alpha: float  # anisotropy; 0 gives isotropic tokens, the setting of the paper's Theorem 1
    gamma: float = 0.0  # residual weight; 0 is the paper's decoder, without a residual
    norm: str = "layernorm"  # the book's subject; "rmsnorm" the paper's approximation, "none" its control
    n_layers: int = 4  # the paper simulates four layers

    def __post_init__(self):
        for name, value in zip(("d", "n", "alpha", "gamma", "norm", "n_layers"), check_model(
                self.d, self.n, self.alpha, self.gamma, self.norm, self.n_layers)):
            object.__setattr__(self, name, value)


@dataclass(frozen=True)
class RecencyStats:
    """Monte Carlo statistics of the scores, one entry per layer.

    ``scores``, ``scores_se``: ``(layer, n, n)`` mean of :math:`S^{(\\ell)}_{ij}` over
    sequences and its standard error (full matrices; only ``j <= i`` is causal).
    ``row_cov``: ``(layer, n, n, n)``, ``row_cov[l, i, j, k]`` the covariance of
    :math:`S_{ij}` and :math:`S_{ik}` across sequences (for contrasts within a query
    row). ``rp``, ``rp_se``: ``(layer,)`` recency probability and its standard error.

    *Probes* are linear functionals :math:`\\sum_{ij} w_{ij}S^{(\\ell)}_{ij}` recorded per
    sequence at every layer (``probe_names``: ``"name@layer"``), jointly with the
    first-layer controls (``control_names``, :func:`layer1_controls`). Their moments
    are kept as those of :math:`Z = (P - X\\beta_0^\\top, X)`, the probes less a pilot
    regression on the controls fitted on the first chunk, so that a control that
    explains all but :math:`10^{-20}` of a probe's variance loses nothing to
    rounding: ``z_mean: (p,)``, ``z_cov: (p, p)``, ``pilot: (probes, controls)``.
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
    probe_names: tuple = ()
    control_names: tuple = ()
    z_mean: np.ndarray | None = None
    z_cov: np.ndarray | None = None
    pilot: np.ndarray | None = None

    @property
    def model(self) -> RecencyModel:
        """The :class:`RecencyModel` these statistics were simulated for."""
        return RecencyModel(self.d, self.n, self.alpha, self.gamma, self.norm, n_layers=len(self.rp))

    def contrast(self, layer: int, i: int, weights: np.ndarray) -> tuple[float, float]:
        r"""Mean and standard error of :math:`\sum_j w_j S^{(\ell)}_{ij}` for query ``i`` (1-based
        ``layer`` and ``i``; ``weights: (n,)``)."""
        w = np.asarray(weights, dtype=np.float64)
        mean = float(w @ self.scores[layer - 1, i - 1])
        var = float(w @ self.row_cov[layer - 1, i - 1] @ w) / self.n_samples
        return mean, math.sqrt(max(var, 0.0))

    def ratio(self, layer: int, i: int, j: int, k: int) -> tuple[float, float]:
        r"""Ratio of means :math:`\bar S_{ij}/\bar S_{ik}` (1-based) and its delta-method standard error."""
        row, cov = self.scores[layer - 1, i - 1], self.row_cov[layer - 1, i - 1]
        a, b = row[j - 1], row[k - 1]
        g = np.zeros(self.n)
        g[j - 1] += 1.0 / b
        g[k - 1] -= a / b**2
        return float(a / b), math.sqrt(max(float(g @ cov @ g) / self.n_samples, 0.0))

    def recency_contrast(self, layer: int) -> tuple[float, float]:
        r"""Mean and standard error of :math:`S^{(\ell)}_{n,n-1} - S^{(\ell)}_{n,1}`, nearest minus
        farthest earlier key of the last query (the plain mean; :meth:`contrast_estimate`
        for the control-variate one)."""
        w = np.zeros(self.n)
        w[self.n - 2], w[0] = 1.0, -1.0
        return self.contrast(layer, self.n, w)

    def key_profile(self, layer: int) -> tuple[np.ndarray, np.ndarray]:
        r"""``(ratios, se)``, each ``(n - 1,)``: :math:`\bar S_{nj}/\bar S_{n1}` for keys
        :math:`j = 1..n-1` of the last query, with delta-method standard errors."""
        out = np.array([self.ratio(layer, self.n, j, 1) for j in range(1, self.n)])
        return out[:, 0], out[:, 1]

    # -- probes and control variates

    def _index(self, name):
        if name not in self.probe_names:
            raise fail("probe", name, "one of " + ", ".join(self.probe_names))
        return self.probe_names.index(name)

    def _transform(self, rows):
        """Mean and covariance of linear combinations ``rows: (m, p)`` of Z."""
        return rows @ self.z_mean, rows @ self.z_cov @ rows.T

    def probe_moments(self, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(mean (k,), cov (k, k))`` of the raw probes ``names`` across sequences."""
        k, c = len(self.probe_names), len(self.control_names)
        rows = np.zeros((len(names), k + c))
        for r, name in enumerate(names):
            j = self._index(name)
            rows[r, j] = 1.0
            if c:
                rows[r, k:] = self.pilot[j]  # P = R + beta_0 X
        return self._transform(rows)

    def probe_estimate(self, name: str, controls: str | Sequence[str] | None = "all") -> Estimate:
        """The mean of probe ``name`` as an :class:`~attention_geometry.stats.Estimate`:
        the plain mean (``controls=None``) or the control-variate mean with the
        first-layer controls ``controls`` (``"all"`` or a tuple of names from
        ``control_names``; :func:`~attention_geometry.stats.control_variate_moments`)."""
        k, c = len(self.probe_names), len(self.control_names)
        chosen = self.control_names if controls == "all" else tuple(controls or ())
        for x in chosen:
            check_choice("controls", x, self.control_names)
        j = self._index(name)
        rows = np.zeros((1 + len(chosen), k + c))
        rows[0, j] = 1.0
        for x in range(c):  # the pilot's part on controls left out goes back into y
            if self.control_names[x] not in chosen:
                rows[0, k + x] = self.pilot[j, x]
        for r, x in enumerate(chosen, start=1):
            rows[r, k + self.control_names.index(x)] = 1.0
        mean, cov = self._transform(rows)
        return control_variate_moments(mean, cov, self.n_samples, 0.0)  # every control has mean 0

    def contrast_estimate(self, layer: int, controls: str | Sequence[str] | None = "all") -> Estimate:
        r""":math:`E[S^{(\ell)}_{n,n-1} - S^{(\ell)}_{n,1}]` as an Estimate (probe ``"contrast"``)."""
        return self.probe_estimate(f"contrast@{layer}", controls)


class _Moments:
    """Running mean and co-moments, merged chunk by chunk (Chan et al.) in float64."""

    def __init__(self, outer):
        self.count, self.mean, self.m2, self._outer = 0, None, None, outer

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

    def state(self):
        return (self.count, self.mean, self.m2)

    def load(self, state):
        self.count, self.mean, self.m2 = state


def _scalar_outer(delta):
    return delta * delta


def _row_outer(delta):  # (n, n): per query row, keys x keys
    return delta[:, :, None] * delta[:, None, :]


def _vec_outer(delta):
    return delta[:, None] * delta[None, :]


def _last_contrast_weights(n):
    w = np.zeros((n, n))
    w[n - 1, n - 2], w[n - 1, 0] = 1.0, -1.0
    return w


def _chunk_generator(seed, index, method, device):
    """The random source of chunk ``index``: independent of every other chunk (so a run resumes)."""
    if method == "gram":
        return np.random.default_rng([seed, index])
    state = int(np.random.SeedSequence([seed, index]).generate_state(1, np.uint64)[0] >> np.uint64(1))
    return torch.Generator(device=device).manual_seed(state)


class _Accumulator:
    """Per-layer moments of the scores, of the recency fraction, and of (probes, controls)."""

    def __init__(self, n_layers, probes, n_controls):
        self.scores = [_Moments(_row_outer) for _ in range(n_layers)]
        self.rp = [_Moments(_scalar_outer) for _ in range(n_layers)]
        self.z = _Moments(_vec_outer)
        self.probes, self.n_controls, self.pilot, self.chunks = probes, n_controls, None, 0

    def add(self, S_layers, fracs, X):
        P = []
        for layer, (S, frac) in enumerate(zip(S_layers, fracs)):
            S64 = S.to(torch.float64)
            centred = S64 - S64.mean(0)
            rows = centred.permute(1, 2, 0)  # (n, n, batch): per query row i, keys x batch
            self.scores[layer].add(S64, rows @ rows.transpose(-1, -2))
            f64 = frac.to(torch.float64)
            self.rp[layer].add(f64, ((f64 - f64.mean()) ** 2).sum())
            P.append(torch.einsum("bij,kij->bk", S64, self.probes))
        P = torch.cat(P, 1)  # (batch, probes x layers), layer-major
        if self.n_controls:
            X = X.to(torch.float64)
            if self.pilot is None:  # least squares of the probes on the controls, this chunk only
                Xc = X - X.mean(0)
                scale = Xc.std(0).clamp_min(torch.finfo(torch.float64).tiny)  # columns differ by e^sqrt(d)
                fit = torch.linalg.lstsq(Xc / scale, P - P.mean(0), driver="gelsd").solution
                self.pilot = (fit / scale[:, None]).T
            Z = torch.cat([P - X @ self.pilot.T, X], 1)
        else:
            Z = P
        zc = Z - Z.mean(0)
        self.z.add(Z, zc.T @ zc)
        self.chunks += 1

    def state(self):
        return {"scores": [m.state() for m in self.scores], "rp": [m.state() for m in self.rp],
                "z": self.z.state(), "pilot": self.pilot, "chunks": self.chunks}

    def load(self, state):
        for m, st in zip(self.scores, state["scores"]):
            m.load(st)
        for m, st in zip(self.rp, state["rp"]):
            m.load(st)
        self.z.load(state["z"])
        self.pilot, self.chunks = state["pilot"], state["chunks"]


def _run_chunk(acc, index, model, b, method, device, dtype, seed, tri):
    d, n, alpha, gamma, norm = model.d, model.n, model.alpha, model.gamma, model.norm
    gen = _chunk_generator(seed, index, method, device)
    if method == "gram":
        state = input_gram(b, n, d, alpha, norm=norm, rng=gen, dtype=dtype, device=device)
        K0 = state
    else:
        state = inputs(b, n, d, alpha, generator=gen, dtype=dtype, device=device)
        K0 = gram_of(state, norm)
    S_layers, fracs, X = [], [], None
    for layer in range(model.n_layers):
        if method == "gram":
            state, S, A = gram_layer(state, d=d, norm=norm, gamma=gamma)
        else:
            state, S, A = decoder_layer(state, norm=norm, gamma=gamma)
        if layer == 0 and acc.n_controls:
            X = layer1_controls(K0, S, A, d=d, alpha=alpha, gamma=gamma)
        S_layers.append(S)
        fracs.append(recency_fraction(S, tri) if tri is not None else torch.full(S.shape[:1], math.nan))
    acc.add(S_layers, fracs, X)


def simulate_recency(
    model: RecencyModel,
    n_samples: int = 100_000,
    seed: int = 0,
    *,
    method: str = "gram",
    device: str | torch.device = "cpu",
    dtype: torch.dtype = torch.float32,
    chunk_size: int = 8192,
    threads: int | None = 1,
    probes: Mapping[str, np.ndarray] | None = None,
    store: CheckpointStore | None = None,
    checkpoint_every: int = 16,
    progress: Callable[[int, int], None] | None = None,
    recency_probability: bool = True,
    controls: bool = True,
) -> RecencyStats:
    """Monte Carlo of the scores :math:`S^{(1)}, \\dots, S^{(L)}` of ``model`` over ``n_samples`` sequences.

    ``model``: a :class:`RecencyModel`, the inputs and the decoder. The other
    arguments say how to run it (sequences, seed, method, device, precision, chunks,
    threads, checkpoints, progress) and what to record (probes, the recency
    probability, the controls).

    ``method="gram"`` runs :func:`gram_layer` on :func:`input_gram` draws (cost
    independent of ``d``); ``method="tokens"`` runs :func:`decoder_layer` on
    :func:`inputs` draws (memory ``chunk_size * n * d``). Sequences are processed
    ``chunk_size`` at a time; chunk ``c`` draws from its own generator seeded by
    ``(seed, c)``, so results are bit-reproducible for the same model and arguments
    on the same machine, and a run resumes from a checkpoint with the same numbers.

    ``probes``: extra linear functionals ``{name: weights (n, n)}`` recorded per
    sequence at every layer beside ``"contrast"`` (the last query's nearest minus
    farthest key), jointly with the first-layer controls (:class:`RecencyStats`).
    ``store``: a :class:`~attention_geometry.checkpoint.CheckpointStore`; the
    running moments are saved every ``checkpoint_every`` chunks under a key of
    every argument that determines them. ``threads``: torch's intra-op threads on
    the CPU during the call (``None`` leaves torch's setting; one is the default:
    every tensor here is small, and on a busy machine a second thread's waits
    made the same call many times slower). ``progress(done, total)``: called
    after each chunk. ``recency_probability=False`` skips the recency fraction
    (a quarter of the cost; ``rp`` is then NaN). ``controls=False`` records no
    first-layer controls (probe estimates are then plain means). Returns
    :class:`RecencyStats`.
    """
    if not isinstance(model, RecencyModel):
        raise fail("model", model, "a RecencyModel(d, n, alpha, gamma, norm, n_layers)",
                   f"has the wrong type {type(model).__name__}", kind=ArgumentTypeError)
    d, n, alpha, gamma, norm, n_layers = model.d, model.n, model.alpha, model.gamma, model.norm, model.n_layers
    n_samples = check_int("n_samples", n_samples, low=2)  # a standard error needs two
    check_choice("method", method, ("gram", "tokens"))
    chunk_size = check_int("chunk_size", chunk_size, low=2)
    checkpoint_every = check_int("checkpoint_every", checkpoint_every, low=1)
    device = torch.device(device)
    names = {"contrast": _last_contrast_weights(n), **dict(probes or {})}
    for name, w in names.items():
        if np.shape(w) != (n, n) or "@" in name:
            raise fail("probes", name, f"names without '@' mapped to ({n}, {n}) weight arrays")
    weights = torch.as_tensor(np.stack([np.asarray(w, dtype=np.float64) for w in names.values()]))
    controls = control_names(alpha, norm) if controls else ()
    acc = _Accumulator(n_layers, weights.to(device), len(controls))
    key = {"what": "simulate_recency/2", "d": d, "n": n, "alpha": alpha, "gamma": gamma, "norm": norm,
           "n_layers": n_layers, "n_samples": n_samples, "seed": seed, "method": method,
           "dtype": str(dtype), "chunk_size": chunk_size, "probes": weights.numpy().round(12).tolist(),
           "probe_names": list(names), "recency_probability": bool(recency_probability),
           "controls": list(controls)}
    store = store or CheckpointStore(None)
    saved = store.load("recency-simulation", key)
    if saved is not None:
        acc.load(saved)
    n_chunks = -(-n_samples // chunk_size)
    tri = tuple(t.to(device) for t in triples(n))
    with torch_threads(threads if device.type == "cpu" else None), torch.no_grad():
        for c in range(acc.chunks, n_chunks):
            b = min(chunk_size, n_samples - c * chunk_size)
            _run_chunk(acc, c, model, b, method, device, dtype, seed, tri if recency_probability else None)
            if (c + 1) % checkpoint_every == 0 and c + 1 < n_chunks:
                store.save("recency-simulation", key, acc.state())
            if progress is not None:
                progress(c + 1, n_chunks)
    return _finish(acc, model, seed, list(names), controls)


def _finish(acc, model, seed, names, controls):
    count = acc.scores[0].count
    mean = torch.stack([m.mean for m in acc.scores]).cpu().numpy()
    cov = torch.stack([m.m2 for m in acc.scores]).cpu().numpy() / (count - 1)
    var = np.diagonal(cov, axis1=-2, axis2=-1)
    rp = np.array([float(m.mean) for m in acc.rp])
    rp_var = np.array([float(m.m2) for m in acc.rp]) / (count - 1)
    return RecencyStats(
        d=model.d, n=model.n, alpha=model.alpha, gamma=model.gamma, norm=model.norm, n_samples=count, seed=seed,
        scores=mean, scores_se=np.sqrt(var / count), row_cov=cov, rp=rp, rp_se=np.sqrt(rp_var / count),
        probe_names=tuple(f"{name}@{layer}" for layer in range(1, model.n_layers + 1) for name in names),
        control_names=tuple(controls), z_mean=acc.z.mean.cpu().numpy(),
        z_cov=acc.z.m2.cpu().numpy() / (count - 1),
        pilot=None if acc.pilot is None else acc.pilot.cpu().numpy(),
    )
