r"""Random-init decoders built offline from ``transformers`` configurations, and what the
book does to them: remove positions, freeze the attention weights, measure the scores.

* :func:`build_decoder`: Qwen2-shaped (pre-RMSNorm, SwiGLU, RoPE, grouped
  key/value heads) and GPT-2-shaped (pre-LayerNorm, GELU, learned absolute
  positions) base models, weights from ``transformers``' own initialiser,
  seeded without touching the global random state; :func:`random_init_like`
  gives a pretrained model's architecture fresh weights; :func:`keep_norm_dtype`
  makes a float64 model float64 throughout.
* :func:`positions_off`: RoPE replaced by :class:`NoRotary` (``cos = 1, sin = 0``)
  or GPT-2's position embeddings zeroed, restored on exit.
* :func:`value_only_attention`: attention weights are constants for autograd
  (the value pathway of the paper's App. E.2, ``eq-jac-pathways``).
* :func:`attention_score_std` (:math:`\sigma^2 d`), :func:`standin_init_std`
  and :func:`standin_embedding_std` (``eq-jac-standin``), :func:`measured_score_std`; :func:`first_token_attention`
  (attention sinks).
* :func:`residual_mean_square`: the residual stream's mean square where each block's two
  norms read it (the per-position gains of ``eq-jac-predicted``); :func:`mlp_input_cosines`:
  how alike two positions' MLP inputs are (the MLP's gain shared between them).
* Inputs: :func:`random_embeddings` (random token ids through the model's own
  table), :func:`concatenate_chunks` and :func:`chunk_boundaries` (the paper's
  chunked condition).

Shapes: ``n`` sequences, ``L`` positions, ``d`` width; an input ``h0: (1, L, d)``.
"""

import contextlib
import math
import types
from collections.abc import Iterator

import numpy as np
import torch

from .._checks import check_bool, check_choice, check_float, check_int, described, fail, shape_of
from ..attention import mask_tensor

__all__ = [
    "ARCHITECTURES",
    "NoRotary",
    "build_decoder",
    "random_init_like",
    "keep_norm_dtype",
    "context_length",
    "random_embeddings",
    "attention_score_std",
    "standin_init_std",
    "standin_embedding_std",
    "mlp_input_cosines",
    "measured_score_std",
    "residual_mean_square",
    "positions_off",
    "value_only_attention",
    "concatenate_chunks",
    "chunk_boundaries",
    "first_token_attention",
]

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


def context_length(model: torch.nn.Module) -> int:
    """The longest sequence the model's configuration allows."""
    cfg = model.config
    return int(getattr(cfg, "max_position_embeddings", None) or cfg.n_positions)


def _check_h0(model, h0):
    if not isinstance(h0, torch.Tensor) or h0.ndim != 3 or h0.shape[0] != 1:
        raise fail("h0", shape_of(h0, "a tensor") if isinstance(h0, torch.Tensor)
                   else described(f"a {type(h0).__name__}"), "a tensor (1, L, d)", "has the wrong shape")
    d = model.config.hidden_size
    if h0.shape[2] != d:
        raise fail("h0", shape_of(h0, "a tensor"), f"(1, L, d = {d}), the model's width", "has the wrong width")
    if h0.shape[1] < 2 or h0.shape[1] > context_length(model):
        raise fail("h0", shape_of(h0, "a tensor"), f"a length L in [2, {context_length(model)}] (the configured "
                   "context)", "has a sequence length out of range")
    return h0


def _check_inputs(model, inputs):
    """``(n, L, d)`` of a batch of input embeddings ``inputs: (n, L, d)`` for ``model``."""
    if not isinstance(inputs, torch.Tensor) or inputs.ndim != 3:
        raise fail("inputs", f"an object of shape {tuple(getattr(inputs, 'shape', ()))}", "a tensor (n, L, d)")
    _check_h0(model, inputs[:1])
    return tuple(inputs.shape)

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
                  device: str = "cpu", dtype: torch.dtype = torch.float32,
                  attn_implementation: str = "sdpa", embedding_std: float | None = None) -> torch.nn.Module:
    """A random-init decoder (``Qwen2Model`` or ``GPT2Model``, no LM head), eval mode, frozen.

    ``arch="qwen2"``: pre-RMSNorm, SwiGLU MLP of width ``round(width * 4864/896)``,
    q/k/v biases, RoPE (theta 1e6) unless ``rope=False`` (then :class:`NoRotary`).
    ``arch="gpt2"``: pre-LayerNorm, GELU MLP of width ``4 * width``, learned
    absolute positions (zeroed when ``rope=False``; ``n_kv_heads`` must be
    ``None`` or ``n_heads``). Weights ~ N(0, init_std^2) as ``transformers``
    draws them (GPT-2 scales its output projections by ``1/sqrt(2 n_layers)``),
    seeded by ``seed`` without touching the global RNG. ``embedding_std``: the standard
    deviation of the embedding tables (tokens, and GPT-2's positions) in place of
    ``init_std``, the tables drawn at ``init_std`` rescaled (a stand-in keeps the paper's
    embeddings, :func:`standin_embedding_std`); ``None``: ``init_std``.
    """
    check_choice("arch", arch, ARCHITECTURES)
    n_layers, width = _check_int("n_layers", n_layers), _check_int("width", width, low=2)
    n_heads, context = _check_int("n_heads", n_heads), _check_int("context", context, low=2)
    seed = _check_int("seed", seed, low=0)
    n_kv = n_heads if n_kv_heads is None else _check_int("n_kv_heads", n_kv_heads)
    if width % n_heads:
        raise fail("width", width, f"a multiple of n_heads = {n_heads}", "is not allowed")
    if (width // n_heads) % 2:
        raise fail("width", width, "a width whose head width width / n_heads is even (RoPE rotates pairs)",
                   f"gives the odd head width {width // n_heads}")
    if n_heads % n_kv:
        raise fail("n_heads", n_heads, f"a multiple of n_kv_heads = {n_kv}", "is not allowed")
    check_float("init_std", init_std, low=0.0, low_open=True)
    if embedding_std is not None:
        check_float("embedding_std", embedding_std, low=0.0, low_open=True)
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
            raise fail("n_kv_heads", n_kv_heads, f"None or n_heads = {n_heads} (GPT-2 has no grouped key/value "
                       "heads)", "is not allowed with arch = 'gpt2'")
        from transformers import GPT2Config, GPT2Model
        cfg = GPT2Config(n_embd=width, n_layer=n_layers, n_head=n_heads, n_positions=context,
                         vocab_size=SMALL_VOCAB, initializer_range=float(init_std),
                         bos_token_id=None, eos_token_id=None,
                         attn_implementation=attn_implementation)
        model = _build(GPT2Model, cfg, seed)
        if not rope:
            with torch.no_grad():
                model.wpe.weight.zero_()
    if embedding_std is not None:
        tables = [model.get_input_embeddings()] + ([model.wpe] if arch == "gpt2" else [])
        with torch.no_grad():
            for table in tables:
                table.weight.mul_(float(embedding_std) / float(init_std))
    return _finish(model, dev, dtype)


def random_init_like(model: torch.nn.Module, seed: int = 0, device: str = "cpu", dtype: torch.dtype = torch.float32,
                     attn_implementation: str = "sdpa") -> torch.nn.Module:
    """The base model (no LM head) of ``model``'s own architecture and configuration,
    with fresh random weights (``initializer_range`` of its config), frozen."""
    seed = _check_int("seed", seed, low=0)
    dev = _check_device(device)
    base = model.base_model
    cfg = type(base.config).from_dict(base.config.to_dict())
    cfg._attn_implementation = attn_implementation
    return _finish(_build(type(base), cfg, seed), dev, dtype)


def keep_norm_dtype(model: torch.nn.Module) -> int:
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


def random_embeddings(model: torch.nn.Module, seq_len: int, seed: int | torch.Generator, n: int = 1) -> torch.Tensor:
    """``(n, seq_len, d)``: the model's own embeddings of uniformly random token ids
    (drawn from ``seed``, an int or a ``torch.Generator``), on the model's device."""
    seq_len = _check_int("seq_len", seq_len, low=2)
    n = _check_int("n", n)
    if seq_len > context_length(model):
        raise fail("seq_len", seq_len, f"an integer in [2, {context_length(model)}] (the configured context)",
                   "is longer than the configured context")
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


def standin_embedding_std(init_std: float) -> float | None:
    r"""The embeddings' scale of a decoder initialised at ``init_std``, for
    :func:`build_decoder`'s ``embedding_std``: a stand-in (``init_std`` other than the paper's
    :math:`\sigma_0 = 0.02`) keeps the paper's embeddings, of RMS :math:`\sigma_0`, so that its
    first layer has the paper's gain :math:`(\sigma_s^2 d)^2/\sigma_0^2 = \sigma_0^2 d_{\mathrm{ref}}^2`
    and not :math:`\sigma_s^2 d^2` (``eq-jac-standin``); ``None`` (the embeddings as drawn) at
    :math:`\sigma_0` itself."""
    init_std = check_float("init_std", init_std, low=0.0, low_open=True)
    return None if math.isclose(init_std, PAPER_INIT_STD) else PAPER_INIT_STD


def _forward_with_hooks(model: torch.nn.Module, inputs: torch.Tensor, hooks: list) -> None:
    """One forward pass of ``inputs`` (as ``inputs_embeds``, no gradients, no cache) while the forward
    ``hooks`` already registered read what they need; they are removed afterwards, whatever happens."""
    try:
        with torch.no_grad():
            model(inputs_embeds=inputs, use_cache=False)
    finally:
        for h in hooks:
            h.remove()


def _attention_modules(model):
    return [m for m in model.modules() if type(m).__name__.endswith("Attention")]


def measured_score_std(model: torch.nn.Module, h0: torch.Tensor) -> np.ndarray:
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
    _forward_with_hooks(model, h0, hooks)
    L = h0.shape[1]
    causal = mask_tensor("causal", L)
    out = []
    for s in captured:
        q = s["q"][0].reshape(L, n_heads, d_head).transpose(0, 1).double()
        k = s["k"][0].reshape(L, n_kv, d_head).transpose(0, 1).double()
        k = k.repeat_interleave(n_heads // n_kv, dim=0)
        scores = q @ k.transpose(1, 2) / math.sqrt(d_head)
        out.append(float(scores[:, causal].std()))
    return np.array(out)


def _block_norms(model):
    """``[(attention norm, MLP norm)]`` of every block: Qwen2/Llama ``input_layernorm`` and
    ``post_attention_layernorm``, GPT-2 ``ln_1`` and ``ln_2``."""
    pairs = []
    for block in model.modules():
        if hasattr(block, "input_layernorm") and hasattr(block, "post_attention_layernorm"):
            pairs.append((block.input_layernorm, block.post_attention_layernorm))
        elif hasattr(block, "ln_1") and hasattr(block, "ln_2"):
            pairs.append((block.ln_1, block.ln_2))
    if not pairs:
        raise fail("model", type(model).__name__, "a Qwen2/Llama- or GPT-2-shaped decoder (blocks with two norms)")
    return pairs


def residual_mean_square(model: torch.nn.Module, inputs: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    r"""``(attention, mlp)``, each ``(H, n, L)``: the mean square over the ``d`` coordinates of
    the residual stream where block ``l``'s attention norm and its MLP norm read it, in one
    forward pass of ``inputs: (n, L, d)`` (``attention[0]`` is the input's own mean square).
    A pre-norm branch sees its input divided by the RMS, so its Jacobian carries
    :math:`1/r_l(k)` at the position ``k`` it reads (``eq-jac-predicted``)."""
    n, L, d = _check_inputs(model, inputs)
    attention, mlp, hooks = [], [], []
    for attn_norm, mlp_norm in _block_norms(model):
        hooks.append(attn_norm.register_forward_hook(lambda m, i, o: attention.append(i[0].double().pow(2).mean(-1))))
        hooks.append(mlp_norm.register_forward_hook(lambda m, i, o: mlp.append(i[0].double().pow(2).mean(-1))))
    _forward_with_hooks(model, inputs, hooks)
    return torch.stack(attention).cpu().numpy(), torch.stack(mlp).cpu().numpy()


def mlp_input_cosines(model: torch.nn.Module, inputs: torch.Tensor) -> np.ndarray:
    r"""``(H, L, L)`` float32: the cosine between two positions' inputs of block ``l``'s MLP (the
    output of its norm: for GPT-2's LayerNorm the centred residual stream), averaged over the ``n`` sequences of ``inputs: (n, L, d)`` (one
    forward pass). A SwiGLU shares the fraction :math:`c(r)` of its gain between two positions
    whose inputs have cosine :math:`r` (:func:`~.theory.mlp_cross_fraction`)."""
    n, L, d = _check_inputs(model, inputs)
    cosines, hooks = [], []

    def keep(module, args, output):  # the norm's output: LayerNorm's is centred, RMSNorm's is its input scaled
        x = torch.nn.functional.normalize(output.double(), dim=-1)
        cosines.append((x @ x.transpose(-1, -2)).mean(0).float())

    for _, mlp_norm in _block_norms(model):
        hooks.append(mlp_norm.register_forward_hook(keep))
    _forward_with_hooks(model, inputs, hooks)
    return torch.stack(cosines).cpu().numpy()


@contextlib.contextmanager
def positions_off(model: torch.nn.Module) -> Iterator[torch.nn.Module]:
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
def value_only_attention(model: torch.nn.Module) -> Iterator[torch.nn.Module]:
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


def first_token_attention(model: torch.nn.Module, inputs: torch.Tensor) -> tuple[np.ndarray, float]:
    r"""``((n_layers,), uniform)``: the attention weight on the first position, averaged over
    sequences ``inputs: (n, L, d)``, heads and the queries in the second half of the
    context, per layer -- an *attention sink* is a weight far above the uniform
    attention's :math:`\overline{1/i}` over the same queries (``uniform``). Eager
    attention, which returns the weights; restored afterwards."""
    L = _check_inputs(model, inputs)[1]
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
