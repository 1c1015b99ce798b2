r"""Input-output Jacobians of decoders: the influence profile of the last position.

For a decoder with input embeddings :math:`h^{(0)} \in \mathbb R^{L\times d}`
(what ``transformers`` takes as ``inputs_embeds``) and last hidden state
:math:`h^{(H)}` (``last_hidden_state``, after the final norm), the blocks

.. math::  J_j = \partial h^{(H)}_L / \partial h^{(0)}_j \in \mathbb R^{d\times d}

(output dimension first) give the **influence profile**
:math:`\rho(j) = \lVert J_j\rVert_F`, ``j = 1..L``.

* **Exact**: one backward pass per output direction :math:`e_i` gives row
  ``i`` of every :math:`J_j` at once; ``d`` passes give
  :math:`\rho(j)^2 = \sum_i \lVert e_i^\top J_j\rVert^2`.
* **Random projections**: with :math:`B_j = J_j J_j^\top` and probes
  :math:`u` with :math:`\mathbb E[u u^\top] = I`,
  :math:`\mathbb E\,\lVert u^\top J_j\rVert^2 = \operatorname{tr} B_j = \rho(j)^2`.
  ``k`` probes, all positions at once per probe. Gaussian probes:
  :math:`\operatorname{Var} = \tfrac2k\lVert B_j\rVert_F^2`; orthogonal probes
  (:math:`\sqrt d` times ``k`` columns of a Haar orthogonal matrix):
  :math:`\operatorname{Var} = \tfrac{2d(d-k)}{k(d-1)(d+2)}\bigl(\lVert B_j\rVert_F^2 - (\operatorname{tr}B_j)^2/d\bigr)`,
  zero at ``k = d`` (:func:`estimator_variance`; derived in the book).

Random-init decoders are built offline from ``transformers`` configurations
(:func:`build_decoder`): Qwen2-shaped (pre-RMSNorm, SwiGLU, RoPE, grouped
key/value heads) and GPT-2-shaped (pre-LayerNorm, GELU, learned absolute
positions). RoPE off = a rotary module returning ``cos = 1, sin = 0``
(:class:`NoRotary`); GPT-2 without positions = zero position embeddings.

Theory: the Cesàro profile :math:`g\,(N^H)_{L,j}` of :mod:`attention_geometry.cesaro`
is fitted to a measured profile in log space (:func:`fit_cesaro`).

Shapes: ``L`` positions, ``d`` width, ``k`` probes; an input ``h0: (1, L, d)``.
"""

import math
import types
from dataclasses import dataclass

import numpy as np
import torch
from scipy import optimize, stats

from .cesaro import classify_profile, dead_zone, log_last_row, profile_minimum

from ._checks import check_bool, check_choice, check_float, check_int, fail

__all__ = [
    "ARCHITECTURES",
    "NoRotary",
    "build_decoder",
    "random_init_like",
    "keep_norm_dtype",
    "context_length",
    "random_embeddings",
    "draw_probes",
    "probe_norms",
    "exact_profile",
    "jacobian_blocks",
    "ProfileEstimate",
    "estimate_profile",
    "estimator_variance",
    "attention_score_std",
    "CesaroFit",
    "fit_cesaro",
    "normalised_positions_wasserstein",
    "profile_spearman",
    "ProfileSummary",
    "summarise_profile",
    "ends_over_middle",
]

#: Architectures :func:`build_decoder` knows.
ARCHITECTURES = ("qwen2", "gpt2")
#: Qwen2-0.5B's MLP width over its model width (4864 / 896), kept at every size.
QWEN2_MLP_RATIO = 4864 / 896
#: Vocabulary of the random-init decoders: only the embedding table uses it, and
#: inputs go in through ``inputs_embeds``, so it need not be Qwen2's 151,936.
SMALL_VOCAB = 1024


# ----------------------------------------------------------------- validation


def _check_int(name, value, low=1, high=None):
    return check_int(name, value, low=low, high=high)


def _check_device(device):
    check_choice("device", device, ("cpu", "cuda"))
    if device == "cuda" and not torch.cuda.is_available():
        raise fail("device", device, "'cpu' (no CUDA device is available here)")
    return torch.device(device)


def _generator(seed):
    if isinstance(seed, torch.Generator):
        return seed
    return torch.Generator().manual_seed(_check_int("seed", seed, low=0))


def context_length(model) -> int:
    """The longest sequence the model's configuration allows."""
    cfg = model.config
    return int(getattr(cfg, "max_position_embeddings", None) or cfg.n_positions)


def _check_h0(model, h0):
    if not isinstance(h0, torch.Tensor) or h0.ndim != 3 or h0.shape[0] != 1:
        shape = tuple(h0.shape) if isinstance(h0, torch.Tensor) else type(h0).__name__
        raise ValueError(f"h0 has shape {shape}; allowed: a tensor (1, L, d)")
    d = model.config.hidden_size
    if h0.shape[2] != d:
        raise ValueError(f"h0 has width {h0.shape[2]}; allowed: the model's width {d}")
    if h0.shape[1] < 2 or h0.shape[1] > context_length(model):
        raise ValueError(f"sequence length L = {h0.shape[1]} is out of range; allowed: an integer "
                         f"in [2, {context_length(model)}] (the configured context)")
    return h0


# ------------------------------------------------------------------ models


class NoRotary(torch.nn.Module):
    """Stands in for a rotary embedding: ``cos = 1, sin = 0`` at every position, so
    ``apply_rotary_pos_emb(q, k, cos, sin) = (q, k)``. Output: two ``(batch, seq, d_head)``."""

    def __init__(self, head_dim: int):
        super().__init__()
        self.head_dim = head_dim

    def forward(self, x, position_ids):
        shape = (*position_ids.shape, self.head_dim)
        return (torch.ones(shape, dtype=x.dtype, device=x.device),
                torch.zeros(shape, dtype=x.dtype, device=x.device))


def _build(cls, config, seed):
    # transformers initialises from the global RNG: seed it inside fork_rng, so
    # the caller's global state is untouched and the weights depend on seed only.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return cls(config)


def _finish(model, device, dtype):
    model = model.to(device=device, dtype=dtype).eval()
    model.requires_grad_(False)
    return model


def build_decoder(arch: str, n_layers: int, width: int, n_heads: int, n_kv_heads: int | None = None,
                  context: int = 2048, init_std: float = 0.02, rope: bool = True, seed: int = 0,
                  device: str = "cpu", dtype=torch.float32, attn_implementation: str = "sdpa"):
    """A random-init decoder (``Qwen2Model`` or ``GPT2Model``, no LM head), eval mode, frozen.

    ``arch="qwen2"``: pre-RMSNorm, SwiGLU MLP of width ``round(width * 4864/896)``,
    q/k/v biases, RoPE (theta 1e6) unless ``rope=False`` (then :class:`NoRotary`).
    ``arch="gpt2"``: pre-LayerNorm, GELU MLP of width ``4 * width``, learned
    absolute positions (zeroed when ``rope=False``; ``n_kv_heads`` must be
    ``None`` or ``n_heads``). Weights ~ N(0, init_std^2) as ``transformers``
    draws them (GPT-2 scales its output projections by ``1/sqrt(2 n_layers)``),
    seeded by ``seed`` without touching the global RNG.
    """
    check_choice("arch", arch, ARCHITECTURES)
    n_layers, width = _check_int("n_layers", n_layers), _check_int("width", width, low=2)
    n_heads, context = _check_int("n_heads", n_heads), _check_int("context", context, low=2)
    seed = _check_int("seed", seed, low=0)
    n_kv = n_heads if n_kv_heads is None else _check_int("n_kv_heads", n_kv_heads)
    if width % n_heads:
        raise ValueError(f"width = {width} is not a multiple of n_heads = {n_heads}; "
                         "allowed: width divisible by n_heads")
    if (width // n_heads) % 2:
        raise ValueError(f"head width {width // n_heads} is odd; allowed: an even width / n_heads")
    if n_heads % n_kv:
        raise ValueError(f"n_heads = {n_heads} is not a multiple of n_kv_heads = {n_kv}; "
                         "allowed: n_kv_heads dividing n_heads")
    check_float("init_std", init_std, low=0.0, low_open=True)
    check_bool("rope", rope)
    dev = _check_device(device)
    if arch == "qwen2":
        from transformers import Qwen2Config, Qwen2Model
        cfg = Qwen2Config(hidden_size=width, num_hidden_layers=n_layers, num_attention_heads=n_heads,
                          num_key_value_heads=n_kv, intermediate_size=round(width * QWEN2_MLP_RATIO),
                          max_position_embeddings=context, vocab_size=SMALL_VOCAB,
                          initializer_range=float(init_std), rope_theta=1e6,
                          attn_implementation=attn_implementation)
        model = _build(Qwen2Model, cfg, seed)
        if not rope:
            model.rotary_emb = NoRotary(width // n_heads)
    else:
        if n_kv != n_heads:
            raise ValueError(f"n_kv_heads = {n_kv_heads!r} with arch = 'gpt2'; allowed: None or "
                             f"n_heads = {n_heads} (GPT-2 has no grouped key/value heads)")
        from transformers import GPT2Config, GPT2Model
        cfg = GPT2Config(n_embd=width, n_layer=n_layers, n_head=n_heads, n_positions=context,
                         vocab_size=SMALL_VOCAB, initializer_range=float(init_std),
                         bos_token_id=None, eos_token_id=None,
                         attn_implementation=attn_implementation)
        model = _build(GPT2Model, cfg, seed)
        if not rope:
            with torch.no_grad():
                model.wpe.weight.zero_()
    return _finish(model, dev, dtype)


def random_init_like(model, seed: int = 0, device: str = "cpu", dtype=torch.float32,
                     attn_implementation: str = "sdpa"):
    """The base model (no LM head) of ``model``'s own architecture and configuration,
    with fresh random weights (``initializer_range`` of its config), frozen."""
    seed = _check_int("seed", seed, low=0)
    dev = _check_device(device)
    base = model.base_model
    cfg = type(base.config).from_dict(base.config.to_dict())
    cfg._attn_implementation = attn_implementation
    return _finish(_build(type(base), cfg, seed), dev, dtype)


def keep_norm_dtype(model):
    """Make every RMSNorm of ``model`` compute in its input's dtype (in place).

    ``transformers``' Qwen2/Llama RMSNorm up-casts to float32 and casts back, so a
    ``.double()`` model is only float32-accurate there; after this it is float64
    throughout (with ``sdpa`` attention, whose softmax keeps the dtype).
    Returns the number of norms patched.
    """
    def forward(self, x):
        var = x.pow(2).mean(-1, keepdim=True)
        return self.weight.to(x.dtype) * (x * torch.rsqrt(var + self.variance_epsilon))

    n = 0
    for module in model.modules():
        if type(module).__name__.endswith("RMSNorm"):
            module.forward = types.MethodType(forward, module)
            n += 1
    return n


def random_embeddings(model, seq_len: int, seed) -> torch.Tensor:
    """``(1, seq_len, d)``: the model's own embeddings of uniformly random token ids
    (drawn from ``seed``, an int or a ``torch.Generator``), on the model's device."""
    seq_len = _check_int("seq_len", seq_len, low=2)
    if seq_len > context_length(model):
        raise ValueError(f"seq_len = {seq_len} is longer than the configured context "
                         f"{context_length(model)}; allowed: an integer in [2, {context_length(model)}]")
    emb = model.get_input_embeddings()
    ids = torch.randint(emb.num_embeddings, (1, seq_len), generator=_generator(seed))
    with torch.no_grad():
        return emb(ids.to(emb.weight.device))


def attention_score_std(width: int, init_std: float) -> float:
    r"""Standard deviation of a pre-softmax score at initialisation, :math:`\sigma^2 d`:
    ``q, k`` entries have std :math:`\sigma\sqrt d` for a normalised input (RMS 1),
    and :math:`q\cdot k/\sqrt{d_h}` then has std :math:`\sigma^2 d` (biases zero)."""
    return float(init_std) ** 2 * int(width)


# ---------------------------------------------------------------- probes


def draw_probes(d: int, k: int, kind: str, seed) -> torch.Tensor:
    r"""``(k, d)`` probes with :math:`\mathbb E[u u^\top] = I` (float64, CPU).

    ``kind="gaussian"``: iid N(0, 1) entries. ``kind="orthogonal"``: the rows are
    :math:`\sqrt d` times ``k`` orthonormal vectors, the first ``k`` columns of a
    Haar orthogonal matrix (QR of a Gaussian matrix, signs fixed); needs ``k <= d``.
    ``kind="exact"``: :math:`\sqrt d\,e_1, \dots, \sqrt d\,e_d` (``k`` must be ``d``).
    """
    d = _check_int("d", d)
    k = _check_int("k", k)
    if kind == "exact":
        if k != d:
            raise ValueError(f"k = {k} with kind = 'exact'; allowed: k = d = {d}")
        return math.sqrt(d) * torch.eye(d, dtype=torch.float64)
    g = _generator(seed)
    if kind == "gaussian":
        return torch.randn(k, d, generator=g, dtype=torch.float64)
    if kind == "orthogonal":
        if k > d:
            raise ValueError(f"k = {k} orthogonal probes in dimension d = {d}; allowed: 1 <= k <= d")
        q, r = torch.linalg.qr(torch.randn(d, k, generator=g, dtype=torch.float64))
        q = q * torch.sign(torch.diagonal(r))  # Haar: fix the signs of the QR factor
        return math.sqrt(d) * q.T
    raise ValueError(f"kind = {kind!r} is not known; allowed: 'gaussian', 'orthogonal' or 'exact'")


def _last_state(model, h0):
    return model(inputs_embeds=h0, use_cache=False).last_hidden_state[:, -1, :]


def probe_norms(model, h0: torch.Tensor, probes: torch.Tensor, batch_size: int = 1) -> torch.Tensor:
    r"""``(k, L)``: :math:`\lVert u_i^\top J_j\rVert^2` for each probe ``u_i`` (rows of
    ``probes: (k, d)``) and position ``j``; one vector-Jacobian product per probe.

    ``batch_size = 1``: one forward pass, then ``k`` backward passes through it
    (``retain_graph``; fastest on CPU). ``batch_size = b > 1``: the sequence is
    repeated ``b`` times along the batch axis and ``b`` probes go back in one
    pass (the copies do not interact), ``ceil(k/b)`` forward+backward passes --
    for a GPU with memory to spare. Float64 on the CPU.
    """
    h0 = _check_h0(model, h0)
    if not isinstance(probes, torch.Tensor) or probes.ndim != 2 or probes.shape[1] != h0.shape[2]:
        raise ValueError(f"probes has shape {tuple(getattr(probes, 'shape', ()))}; allowed: (k, {h0.shape[2]})")
    batch_size = _check_int("batch_size", batch_size)
    k = probes.shape[0]
    U = probes.to(device=h0.device, dtype=h0.dtype)
    out = torch.empty(k, h0.shape[1], dtype=torch.float64)
    if batch_size == 1:
        x = h0.detach().clone().requires_grad_(True)
        with torch.enable_grad():
            y = _last_state(model, x)
            for i in range(k):
                (g,) = torch.autograd.grad(y, x, grad_outputs=U[i:i + 1], retain_graph=i < k - 1)
                out[i] = g[0].double().pow(2).sum(-1).cpu()
        return out
    for start in range(0, k, batch_size):
        u = U[start:start + batch_size]
        x = h0.detach().expand(len(u), -1, -1).clone().requires_grad_(True)
        with torch.enable_grad():
            (g,) = torch.autograd.grad(_last_state(model, x), x, grad_outputs=u)
        out[start:start + len(u)] = g.double().pow(2).sum(-1).cpu()
    return out


def exact_profile(model, h0: torch.Tensor, batch_size: int = 1) -> np.ndarray:
    r"""``(L,)``: :math:`\rho(j) = \lVert J_j\rVert_F` exactly, by ``d`` backward passes."""
    d = h0.shape[-1]
    vals = probe_norms(model, h0, draw_probes(d, d, "exact", 0), batch_size)
    return np.sqrt(vals.mean(0).numpy())


def jacobian_blocks(model, h0: torch.Tensor) -> torch.Tensor:
    r"""``(L, d, d)``: every block :math:`J_j` (output index first), by ``d`` backward
    passes; for small models (memory ``L d^2``)."""
    h0 = _check_h0(model, h0)
    L, d = h0.shape[1], h0.shape[2]
    x = h0.detach().clone().requires_grad_(True)
    J = torch.empty(L, d, d, dtype=h0.dtype)
    with torch.enable_grad():
        y = _last_state(model, x)
        for i in range(d):
            e = torch.zeros(1, d, dtype=h0.dtype, device=h0.device)
            e[0, i] = 1
            (g,) = torch.autograd.grad(y, x, grad_outputs=e, retain_graph=i < d - 1)
            J[:, i, :] = g[0].cpu()
    return J


@dataclass(frozen=True)
class ProfileEstimate:
    r"""A random-projection estimate: ``rho2: (L,)`` the unbiased estimate of
    :math:`\rho(j)^2`, ``per_probe: (k, L)`` its terms (their mean is ``rho2``),
    ``kind`` and ``k``. ``rho`` (``sqrt(rho2)``) is slightly biased low (Jensen)."""

    rho2: np.ndarray
    per_probe: np.ndarray
    kind: str
    k: int

    @property
    def rho(self) -> np.ndarray:
        return np.sqrt(self.rho2)

    def standard_error(self) -> np.ndarray:
        """``(L,)`` standard error of ``rho2`` from the spread of iid (Gaussian) probes."""
        if self.kind != "gaussian" or self.k < 2:
            raise ValueError(f"standard error needs kind = 'gaussian' and k >= 2; got {self.kind!r}, k = {self.k}")
        return self.per_probe.std(0, ddof=1) / math.sqrt(self.k)


def estimate_profile(model, h0: torch.Tensor, k: int, kind: str = "gaussian", seed=0,
                     batch_size: int = 1) -> ProfileEstimate:
    r"""Unbiased estimate of :math:`\rho(j)^2` for all ``j`` from ``k`` probes
    (``kind`` ``"gaussian"`` or ``"orthogonal"``; orthogonal with ``k = d`` is exact).
    ``seed``: int or ``torch.Generator`` for the probes."""
    check_int("k", k, low=1)  # the number of probes
    check_choice("kind", kind, ("gaussian", "orthogonal"))
    probes = draw_probes(h0.shape[-1], int(k), kind, seed)
    vals = probe_norms(model, h0, probes, batch_size).numpy()
    return ProfileEstimate(rho2=vals.mean(0), per_probe=vals, kind=kind, k=int(k))


def estimator_variance(J: torch.Tensor, k: int, kind: str) -> np.ndarray:
    r"""``(L,)``: the variance of the ``k``-probe estimate of :math:`\rho(j)^2`, from the
    blocks ``J: (L, d, d)``. With :math:`B = J_j J_j^\top`:
    Gaussian :math:`\tfrac2k\lVert B\rVert_F^2`; orthogonal
    :math:`\tfrac{2d(d-k)}{k(d-1)(d+2)}(\lVert B\rVert_F^2 - (\operatorname{tr}B)^2/d)`."""
    k = _check_int("k", k)
    J = J.double()
    B = J @ J.transpose(1, 2)
    fro2 = B.pow(2).sum((1, 2)).numpy()
    tr = torch.diagonal(B, dim1=1, dim2=2).sum(-1).numpy()
    d = J.shape[1]
    if kind == "gaussian":
        return 2.0 * fro2 / k
    if kind == "orthogonal":
        if k > d:
            raise ValueError(f"k = {k} orthogonal probes in dimension d = {d}; allowed: 1 <= k <= d")
        return 2.0 * d * (d - k) / (k * (d - 1) * (d + 2)) * (fro2 - tr**2 / d)
    raise ValueError(f"kind = {kind!r} is not known; allowed: 'gaussian' or 'orthogonal'")


# ------------------------------------------------------------ theory fit


def _check_rho(rho):
    rho = np.asarray(rho, dtype=np.float64)
    if rho.ndim != 1 or rho.size < 3:
        raise ValueError(f"rho has shape {rho.shape}; allowed: (L,) with L >= 3")
    if not np.all(np.isfinite(rho)) or np.any(rho <= 0):
        raise ValueError("rho has non-finite or non-positive entries; allowed: positive numbers")
    return rho


@dataclass(frozen=True)
class CesaroFit:
    r"""The Cesàro profile fitted to a measured one: :math:`\log\rho(j) \approx
    \log g + \log (N^H)_{L,j}(\alpha)` by least squares in log space.
    ``gain`` is ``g``, ``gain_per_layer`` :math:`g^{1/H}` (the paper's
    :math:`\gamma`), ``theory: (L,)`` the fitted profile, ``log_rmse`` the rms
    residual in natural log."""

    alpha: float
    gain: float
    gain_per_layer: float
    H: int
    log_rmse: float
    theory: np.ndarray


def fit_cesaro(rho, H: int) -> CesaroFit:
    """Fit ``(alpha, gain)`` of the Cesàro ``N^H`` profile to ``rho: (L,)``.

    For fixed ``alpha`` the best ``log gain`` is the mean residual; ``alpha`` is
    found on a grid of 201 points in [0.005, 1], then refined by a bounded
    scalar search around the best grid point.
    """
    rho = _check_rho(rho)
    H = _check_int("H", H)
    L, log_rho = rho.size, np.log(rho)

    def loss(a):
        res = log_rho - log_last_row(L, H, float(a))
        return float(np.mean((res - res.mean()) ** 2))

    grid = np.linspace(0.005, 1.0, 200)
    i = int(np.argmin([loss(a) for a in grid]))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    best = optimize.minimize_scalar(loss, bounds=(lo, hi), method="bounded", options={"xatol": 1e-6})
    alpha = float(best.x) if best.fun <= loss(grid[i]) else float(grid[i])
    log_p = log_last_row(L, H, alpha)
    log_g = float(np.mean(log_rho - log_p))
    return CesaroFit(alpha=alpha, gain=math.exp(log_g), gain_per_layer=math.exp(log_g / H), H=H,
                     log_rmse=math.sqrt(loss(alpha)), theory=np.exp(log_g + log_p))


def normalised_positions_wasserstein(a, b) -> float:
    r"""Wasserstein-1 distance between two profiles ``(L,)`` read as distributions on
    the positions :math:`x_j = j/L`: weights :math:`a_j/\sum a`, :math:`b_j/\sum b`;
    :math:`W = \frac1L\sum_j |F_a(j) - F_b(j)|` with the cumulative sums ``F``
    (so ``W`` is in units of the context length, between 0 and 1)."""
    a, b = _check_rho(a), _check_rho(b)
    if a.size != b.size:
        raise ValueError(f"profiles of lengths {a.size} and {b.size}; allowed: equal lengths")
    Fa, Fb = np.cumsum(a / a.sum()), np.cumsum(b / b.sum())
    return float(np.abs(Fa - Fb).sum() / a.size)


def profile_spearman(a, b) -> float:
    """Spearman rank correlation of two profiles ``(L,)`` over positions."""
    a, b = _check_rho(a), _check_rho(b)
    return float(stats.spearmanr(a, b).statistic)


@dataclass(frozen=True)
class ProfileSummary:
    """A measured profile against its fitted Cesàro theory (see :func:`summarise_profile`)."""

    fit: CesaroFit
    spearman: float
    wasserstein: float
    peak_to_trough: float
    theory_peak_to_trough: float
    shape: str
    j_min: int


def summarise_profile(rho, H: int) -> ProfileSummary:
    """Fit the theory, then Spearman and W1 (:func:`normalised_positions_wasserstein`)
    between ``rho`` and the fit, peak-to-trough ratios ``max/min`` of both
    (:func:`attention_geometry.cesaro.dead_zone`), the shape
    (:func:`~attention_geometry.cesaro.classify_profile`, ``rtol=0.05`` to ignore
    small ripples) and the position of the minimum."""
    rho = _check_rho(rho)
    fit = fit_cesaro(rho, H)
    return ProfileSummary(
        fit=fit,
        spearman=profile_spearman(rho, fit.theory),
        wasserstein=normalised_positions_wasserstein(rho, fit.theory),
        peak_to_trough=dead_zone(rho).peak_to_trough,
        theory_peak_to_trough=dead_zone(fit.theory).peak_to_trough,
        shape=classify_profile(rho, rtol=0.05),
        j_min=profile_minimum(rho)[0],
    )


def ends_over_middle(rho) -> tuple[float, float]:
    """``(rho_1 / m, rho_L / m)`` with ``m`` the median of ``rho: (L,)`` over the middle
    half of the positions, ``L/4 < j <= 3L/4``: both > 1 is a U in the weak sense
    (ends above the middle), whatever the curve does in between."""
    rho = _check_rho(rho)
    L = rho.size
    m = float(np.median(rho[L // 4:(3 * L) // 4]))
    return float(rho[0] / m), float(rho[-1] / m)
