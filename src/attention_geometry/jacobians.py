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

Many sequences: :func:`sequence_profiles` estimates the profile of each of
``n`` sequences (``k`` probes each, sequences batched), checkpointing every
batch through a :class:`~attention_geometry.checkpoint.CheckpointStore` so
that a killed run resumes; the statistics of such a sample are in
:mod:`attention_geometry.jacobian_stats`, the derived expectation in
:mod:`attention_geometry.jacobian_theory`.

Pathways: :func:`value_only_attention` switches a model to attention whose
scores are constants for differentiation (the value pathway of the paper's
App. E.2 alone); the difference to the full Jacobian is the score pathway.
:func:`positions_off` removes positional information in place (RoPE or GPT-2's
learned positions) and restores it; :func:`measured_score_std` measures the
pre-softmax score spread at initialisation.

Shapes: ``L`` positions, ``d`` width, ``k`` probes; an input ``h0: (1, L, d)``.
"""

import contextlib
import math
import types
from dataclasses import dataclass

import numpy as np
import torch

from ._checks import check_bool, check_choice, check_float, check_int, fail
from .checkpoint import CheckpointStore, resumable_map

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
    "measured_score_std",
    "standin_init_std",
    "positions_off",
    "value_only_attention",
    "sequence_profiles",
    "positional_pair",
    "pathway_profiles",
    "concatenate_chunks",
    "chunk_boundaries",
    "first_token_attention",
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


def random_embeddings(model, seq_len: int, seed, n: int = 1) -> torch.Tensor:
    """``(n, seq_len, d)``: the model's own embeddings of uniformly random token ids
    (drawn from ``seed``, an int or a ``torch.Generator``), on the model's device."""
    seq_len = _check_int("seq_len", seq_len, low=2)
    n = _check_int("n", n)
    if seq_len > context_length(model):
        raise ValueError(f"seq_len = {seq_len} is longer than the configured context "
                         f"{context_length(model)}; allowed: an integer in [2, {context_length(model)}]")
    emb = model.get_input_embeddings()
    ids = torch.randint(emb.num_embeddings, (n, seq_len), generator=_generator(seed))
    with torch.no_grad():
        return emb(ids.to(emb.weight.device))


def attention_score_std(width: int, init_std: float) -> float:
    r"""Standard deviation of a pre-softmax score at initialisation, :math:`\sigma^2 d`:
    ``q, k`` entries have std :math:`\sigma\sqrt d` for a normalised input (RMS 1),
    and :math:`q\cdot k/\sqrt{d_h}` then has std :math:`\sigma^2 d` (biases zero)."""
    return float(init_std) ** 2 * int(width)


#: Qwen2-0.5B's width and initialiser scale: the score regime the stand-in matches.
PAPER_WIDTH, PAPER_INIT_STD = 896, 0.02


def standin_init_std(width: int, reference_width: int = PAPER_WIDTH) -> float:
    r"""The stand-in scale :math:`\sigma = 0.02\sqrt{d_{\mathrm{ref}}/d}` that gives a width-``d``
    decoder the score spread :math:`\sigma^2 d` (and value gain :math:`(\sigma^2 d)^2`)
    of the reference model at initialisation: Qwen2-0.5B (896, the default) or
    GPT-2 (768) (``eq-jac-standin``)."""
    width = check_int("width", width, low=1)
    reference_width = check_int("reference_width", reference_width, low=1)
    return PAPER_INIT_STD * math.sqrt(reference_width / width)


def _attention_modules(model):
    return [m for m in model.modules() if type(m).__name__.endswith("Attention")]


def measured_score_std(model, h0: torch.Tensor) -> np.ndarray:
    r"""``(n_layers,)``: the standard deviation of the pre-softmax scores
    :math:`q_i\cdot k_j/\sqrt{d_h}` over heads and causal pairs ``j <= i``, per
    layer, on the input ``h0: (1, L, d)`` (captured from the q/k projections,
    before the rotary embedding, which preserves the spread). Qwen2/Llama- and
    GPT-2-shaped models."""
    h0 = _check_h0(model, h0)
    cfg = model.config
    n_heads = cfg.num_attention_heads
    d_head = cfg.hidden_size // n_heads
    n_kv = getattr(cfg, "num_key_value_heads", None) or n_heads
    captured, hooks = [], []
    for att in _attention_modules(model):
        if hasattr(att, "q_proj"):
            store = {}
            hooks.append(att.q_proj.register_forward_hook(lambda m, i, o, s=store: s.__setitem__("q", o)))
            hooks.append(att.k_proj.register_forward_hook(lambda m, i, o, s=store: s.__setitem__("k", o)))
        else:  # GPT-2: one c_attn projection for q, k, v
            store = {}

            def split(module, inputs, out, s=store, d=cfg.hidden_size):
                s["q"], s["k"] = out[..., :d], out[..., d:2 * d]

            hooks.append(att.c_attn.register_forward_hook(split))
        captured.append(store)
    try:
        with torch.no_grad():
            model(inputs_embeds=h0, use_cache=False)
    finally:
        for h in hooks:
            h.remove()
    L = h0.shape[1]
    causal = torch.tril(torch.ones(L, L, dtype=torch.bool))
    out = []
    for s in captured:
        q = s["q"][0].reshape(L, n_heads, d_head).transpose(0, 1).double()
        k = s["k"][0].reshape(L, n_kv, d_head).transpose(0, 1).double()
        k = k.repeat_interleave(n_heads // n_kv, dim=0)
        scores = q @ k.transpose(1, 2) / math.sqrt(d_head)
        out.append(float(scores[:, causal].std()))
    return np.array(out)


@contextlib.contextmanager
def positions_off(model):
    """Within the block, ``model`` has no positional information: a Qwen2/Llama-shaped
    model's rotary module is :class:`NoRotary`, a GPT-2-shaped model's position
    embeddings are zero. Restored on exit; the weights are otherwise the same."""
    if hasattr(model, "rotary_emb"):
        cfg = model.config
        saved = model.rotary_emb
        model.rotary_emb = NoRotary(getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads)
        try:
            yield model
        finally:
            model.rotary_emb = saved
    elif hasattr(model, "wpe"):
        saved = model.wpe.weight.detach().clone()
        with torch.no_grad():
            model.wpe.weight.zero_()
        try:
            yield model
        finally:
            with torch.no_grad():
                model.wpe.weight.copy_(saved)
    else:
        raise fail("model", type(model).__name__, "a Qwen2/Llama-shaped (rotary) or GPT-2-shaped model")


_VALUE_ONLY = "ag_value_only"


def _value_only_attention(module, query, key, value, attention_mask, **kwargs):
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    # the scores q.k are constants for differentiation: only the values carry a gradient
    return sdpa_attention_forward(module, query.detach(), key.detach(), value, attention_mask, **kwargs)


@contextlib.contextmanager
def value_only_attention(model):
    r"""Within the block, ``model``'s attention weights are treated as constants by
    autograd (same forward values): the Jacobian is the value pathway of the
    paper's App. E.2, :math:`\delta_{ij}I + A_{ij}W_VW_O` per layer, and the full
    Jacobian minus it is the score pathway (``eq-jac-pathways``)."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(_VALUE_ONLY, _value_only_attention)
    AttentionMaskInterface.register(_VALUE_ONLY, sdpa_mask)
    saved = model.config._attn_implementation
    model.config._attn_implementation = _VALUE_ONLY
    try:
        yield model
    finally:
        model.config._attn_implementation = saved


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




def sequence_profiles(model, inputs: torch.Tensor, k: int, *, seed: int, kind: str = "orthogonal",
                      batch_size: int = 1, store: CheckpointStore | None = None, name: str = "profiles",
                      key: dict | None = None, progress=None) -> np.ndarray:
    r"""``(n, k, L)``: :math:`\lVert u_{s,i}^\top J^{(s)}_j\rVert^2` for each of the ``n``
    sequences ``inputs: (n, L, d)`` and ``k`` probes per sequence; their mean over
    the probes is an unbiased estimate of sequence ``s``'s :math:`\rho(j)^2`.

    Sequences go through the model ``batch_size`` at a time (one forward pass,
    ``k`` backward passes; the sequences of a batch do not interact), each with
    its own probes (``kind`` ``"orthogonal"`` or ``"gaussian"``, from a generator
    seeded by ``seed`` and the batch's first index). Each batch's result is
    checkpointed in ``store`` under ``name`` and ``key`` (which must describe the
    model and the inputs; the sizes, ``k``, ``kind``, ``seed`` and ``batch_size``
    are added here), so that a killed run resumes with the next batch.
    ``progress(done, total)`` is called after each batch.
    """
    if not isinstance(inputs, torch.Tensor) or inputs.ndim != 3:
        raise fail("inputs", f"an object of shape {tuple(getattr(inputs, 'shape', ()))}", "a tensor (n, L, d)")
    n, L, d = inputs.shape
    _check_h0(model, inputs[:1])
    k = _check_int("k", k)
    check_choice("kind", kind, ("gaussian", "orthogonal"))
    batch_size = _check_int("batch_size", batch_size)
    seed = _check_int("seed", seed, low=0)
    starts = list(range(0, n, batch_size))

    def one_batch(start):
        x = inputs[start:start + batch_size].detach().clone().requires_grad_(True)
        b = x.shape[0]
        gen = torch.Generator().manual_seed(seed * 1_000_003 + start)
        U = torch.stack([draw_probes(d, k, kind, gen) for _ in range(b)], 1)  # (k, b, d)
        U = U.to(device=x.device, dtype=x.dtype)
        out = torch.empty(b, k, L, dtype=torch.float64)
        with torch.enable_grad():
            y = _last_state(model, x)
            for i in range(k):
                (g,) = torch.autograd.grad(y, x, grad_outputs=U[i], retain_graph=i < k - 1)
                out[:, i] = g.double().pow(2).sum(-1).cpu()
        return out.numpy()

    full_key = {**(key or {}), "n": n, "L": L, "d": d, "k": k, "kind": kind, "seed": seed,
                "batch_size": batch_size}
    parts = resumable_map(one_batch, starts, store=store, name=name, key=full_key, progress=progress)
    return np.concatenate(parts, axis=0)


def positional_pair(model, inputs: torch.Tensor, k: int, *, seed: int, batch_size: int = 1,
                    store: CheckpointStore | None = None, key: dict | None = None, progress=None):
    """``(with, without)``: :func:`sequence_profiles` averaged over the probes, ``(n, L)``
    each, of ``model`` with its positional information and without it
    (:func:`positions_off`): same weights, same inputs, independent probes (seeds
    ``seed`` and ``seed + 1``), each checkpointed under its own name."""
    kw = dict(batch_size=batch_size, store=store, key=key, progress=progress)
    with_pos = sequence_profiles(model, inputs, k, seed=seed, name="profiles-positions", **kw)
    with positions_off(model):
        without = sequence_profiles(model, inputs, k, seed=seed + 1, name="profiles-no-positions", **kw)
    return with_pos.mean(1), without.mean(1)


def pathway_profiles(model, inputs: torch.Tensor, k: int, *, seed: int, kind: str = "orthogonal") -> dict:
    r"""Per sequence and probe, the full Jacobian and its two pathways (``eq-jac-pathways``):
    ``{"full", "value", "score"}``, each ``(n, k, L)``, with
    :math:`\lVert u^\top J_j\rVert^2` for the full Jacobian, for the value pathway
    (:func:`value_only_attention`) and for their difference, the score pathway --
    the same probes for all three, so the difference is exact per probe. One
    sequence at a time (``inputs: (n, L, d)``)."""
    if not isinstance(inputs, torch.Tensor) or inputs.ndim != 3:
        raise fail("inputs", f"an object of shape {tuple(getattr(inputs, 'shape', ()))}", "a tensor (n, L, d)")
    n, L, d = inputs.shape
    _check_h0(model, inputs[:1])
    k = _check_int("k", k)
    check_choice("kind", kind, ("gaussian", "orthogonal"))
    gen = torch.Generator().manual_seed(_check_int("seed", seed, low=0))
    out = {name: np.empty((n, k, L)) for name in ("full", "value", "score")}
    for s in range(n):
        U = draw_probes(d, k, kind, gen).to(device=inputs.device, dtype=inputs.dtype)
        grads = {}
        for name, ctx in [("full", contextlib.nullcontext()), ("value", value_only_attention(model))]:
            x = inputs[s:s + 1].detach().clone().requires_grad_(True)
            with ctx, torch.enable_grad():
                y = _last_state(model, x)
                grads[name] = torch.stack([torch.autograd.grad(y, x, grad_outputs=U[i:i + 1],
                                                               retain_graph=i < k - 1)[0][0] for i in range(k)])
        grads["score"] = grads["full"] - grads["value"]
        for name, g in grads.items():
            out[name][s] = g.double().pow(2).sum(-1).cpu().numpy()
    return out


def concatenate_chunks(pieces: torch.Tensor, n: int, seq_len: int) -> torch.Tensor:
    """``(n, seq_len)``: sequences made of consecutive rows of ``pieces: (m, chunk_len)``
    (token windows from different places of a text), cut at ``seq_len``; chunk
    boundaries sit at ``0, chunk_len, 2 chunk_len, ...`` in every sequence (the
    paper's chunked condition, no separator). Needs ``m >= n * ceil(seq_len / chunk_len)``."""
    n, seq_len = _check_int("n", n), _check_int("seq_len", seq_len)
    m, chunk = pieces.shape
    per = -(-seq_len // chunk)
    if m < n * per:
        raise fail("pieces", f"{m} chunks", f"at least n * ceil(seq_len / chunk_len) = {n * per}")
    return pieces[:n * per].reshape(n, per * chunk)[:, :seq_len]


def chunk_boundaries(seq_len: int, chunk_len: int, width: int) -> list[int]:
    """The 0-based first positions ``chunk_len, 2 chunk_len, ...`` of the chunks after the
    first that have ``width`` positions on each side inside ``0..seq_len - 1``."""
    seq_len, chunk_len, width = _check_int("seq_len", seq_len), _check_int("chunk_len", chunk_len), \
        _check_int("width", width)
    return [b for b in range(chunk_len, seq_len, chunk_len) if b - width >= 0 and b + width < seq_len]


def first_token_attention(model, inputs: torch.Tensor) -> tuple[np.ndarray, float]:
    r"""``((n_layers,), uniform)``: the attention weight on the first position, averaged over
    sequences ``inputs: (n, L, d)``, heads and the queries in the second half of the
    context, per layer -- an *attention sink* is a weight far above the uniform
    attention's :math:`\overline{1/i}` over the same queries (``uniform``). Eager
    attention, which returns the weights; restored afterwards."""
    if not isinstance(inputs, torch.Tensor) or inputs.ndim != 3:
        raise fail("inputs", f"an object of shape {tuple(getattr(inputs, 'shape', ()))}", "a tensor (n, L, d)")
    _check_h0(model, inputs[:1])
    L = inputs.shape[1]
    saved = model.config._attn_implementation
    model.config._attn_implementation = "eager"
    try:
        with torch.no_grad():
            att = model(inputs_embeds=inputs, use_cache=False, output_attentions=True).attentions
    finally:
        model.config._attn_implementation = saved
    queries = slice(L // 2, L)
    per_layer = np.array([float(a[:, :, queries, 0].double().mean()) for a in att])
    uniform = float(np.mean(1.0 / np.arange(L // 2 + 1, L + 1)))
    return per_layer, uniform
