r"""A tiny pre-norm byte-level decoder, trainable on a CPU in seconds (chapter 3).

The model (:class:`TinyDecoder`) follows GPT-2's layout at toy size: byte
embeddings plus learned position embeddings, ``n_layers`` blocks

.. math:: x \leftarrow x + \mathrm{Attn}(N_1(x)), \qquad x \leftarrow x + \mathrm{MLP}(N_2(x)),

with causal multi-head attention, then a final norm and an unembedding tied to
the byte embedding. The norm :math:`N` is one of

* ``"layernorm"``: :math:`\gamma \odot \sqrt d\,Px/\lVert Px\rVert + \beta`
  (projection onto :math:`H \perp \mathbf 1`, then scaling; ``torch``'s
  ``layer_norm`` with its default :math:`\varepsilon = 10^{-5}`);
* ``"projection"``: :math:`\gamma \odot Px + \beta`, the centring without
  the scaling (the paper's "no scaling" variant).

The affine map :math:`(\gamma, \beta)` is kept in both, so the variants differ
only by the scaling. :func:`attention_inputs` returns, per layer, what the
attention sees: the residual stream before the norm, the normed inputs (the
keys as the sphere argument sees them) and the per-head keys :math:`W_K N_1(x)`.

Shapes: ``ids: (batch, seq)`` integer bytes; hidden states ``(batch, seq, d)``;
per-head keys ``(batch, heads, seq, d_head)``.
"""

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .._checks import check_choice, check_int, fail, torch_threads
from ..attention import causal_softmax
from ..layernorm import normalise

__all__ = [
    "TinyDecoderConfig",
    "TinyDecoder",
    "attention_inputs",
    "train_tiny_decoder",
    "layer_selectability",
]

#: The norms the tiny decoder is trained with (the book's vocabulary).
NORMS = ("layernorm", "projection")


@dataclass(frozen=True)
class TinyDecoderConfig:
    """Sizes of the tiny decoder (defaults: the paper's d = 8, 4 layers, 4 heads)."""

    d: int = 8  # the paper's width: small enough that unselectable keys are common
    n_layers: int = 4  # as in the paper
    n_heads: int = 4  # d_head = 2
    max_len: int = 128  # learned positions up to this length
    mlp_ratio: int = 4  # the usual 4d hidden units
    vocab: int = 256  # bytes
    norm: str = "layernorm"  # or "projection"

    def __post_init__(self):
        for name in ("d", "n_layers", "n_heads", "max_len", "mlp_ratio", "vocab"):
            check_int(name, getattr(self, name), low=1)
        if self.d % self.n_heads:
            raise fail("d", self.d, f"a multiple of n_heads = {self.n_heads}")
        check_choice("norm", self.norm, NORMS)


class Norm(nn.Module):
    """LayerNorm or its projection-only variant, both with ``gamma, beta: (d,)``."""

    def __init__(self, d: int, kind: str):
        super().__init__()
        self.kind = kind
        self.gamma = nn.Parameter(torch.ones(d))
        self.beta = nn.Parameter(torch.zeros(d))

    def forward(self, x):
        eps = 1e-5 if self.kind == "layernorm" else 0.0  # nn.LayerNorm's default
        return normalise(x, self.kind, eps=eps) * self.gamma + self.beta


class Block(nn.Module):
    """One pre-norm block; holds parameters only (the maths is in ``TinyDecoder``)."""

    def __init__(self, c: TinyDecoderConfig):
        super().__init__()
        self.norm1, self.norm2 = Norm(c.d, c.norm), Norm(c.d, c.norm)
        self.W_Q, self.W_K, self.W_V, self.W_O = (nn.Linear(c.d, c.d, bias=False) for _ in range(4))
        self.mlp = nn.Sequential(nn.Linear(c.d, c.mlp_ratio * c.d), nn.GELU(), nn.Linear(c.mlp_ratio * c.d, c.d))


class TinyDecoder(nn.Module):
    """The tiny decoder; ``forward(ids: (batch, seq)) -> logits (batch, seq, vocab)``."""

    def __init__(self, config: TinyDecoderConfig, generator: torch.Generator):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab, c.d)
        self.pos = nn.Embedding(c.max_len, c.d)
        self.blocks = nn.ModuleList(Block(c) for _ in range(c.n_layers))
        self.norm_f = Norm(c.d, c.norm)
        with torch.no_grad():  # seeded initialisation, no global RNG
            for name, p in self.named_parameters():
                if name.endswith(("gamma", "beta")):
                    continue
                if p.ndim == 1:
                    p.zero_()
                else:
                    p.normal_(0.0, 1.0 / math.sqrt(p.shape[-1]) if "embed" not in name and "pos" not in name
                              else 1.0, generator=generator)

    def _split(self, t):  # (batch, seq, d) -> (batch, heads, seq, d_head)
        b, s, d = t.shape
        h = self.config.n_heads
        return t.view(b, s, h, d // h).transpose(1, 2)

    def run(self, ids):
        """``(logits (batch, seq, vocab), per-layer [(residual, normed, keys)])``."""
        if ids.ndim != 2 or ids.shape[1] > self.config.max_len:
            raise ValueError(f"ids has shape {tuple(ids.shape)}; allowed: (batch, seq) with seq <= {self.config.max_len}")
        x = self.embed(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        record = []
        for blk in self.blocks:
            u = blk.norm1(x)
            q, k, v = self._split(blk.W_Q(u)), self._split(blk.W_K(u)), self._split(blk.W_V(u))
            # explicit softmax(q k^T / sqrt(d_head)) v: at d_head = 2 this is ~10x
            # faster on a CPU than scaled_dot_product_attention's flash kernel
            scores = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
            a = causal_softmax(scores) @ v
            record.append((x, u, k))
            x = x + blk.W_O(a.transpose(1, 2).reshape(x.shape))
            x = x + blk.mlp(blk.norm2(x))
        return self.norm_f(x) @ self.embed.weight.T, record

    def forward(self, ids):
        return self.run(ids)[0]


def attention_inputs(model: TinyDecoder, ids) -> list[dict]:
    """Per layer, what its attention sees, as float64 NumPy arrays:
    ``{"residual": (batch, seq, d), "normed": (batch, seq, d), "keys": (batch, heads, seq, d_head)}``."""
    with torch.no_grad():
        _, record = model.run(torch.as_tensor(ids))
    return [
        {"residual": x.double().numpy(), "normed": u.double().numpy(), "keys": k.double().numpy()}
        for x, u, k in record
    ]


def train_tiny_decoder(config: TinyDecoderConfig, data, n_steps: int, batch_size: int, seed: int,
                       lr: float = 1e-2, progress: bool = False):
    """Train with Adam on next-byte prediction.

    ``data: (N, seq)`` byte ids (LongTensor); each step draws ``batch_size``
    rows with a generator seeded by ``seed``. Returns ``(model, losses (n_steps,))``.
    Bit-for-bit reproducible for a given seed on the same machine.
    """
    for name, v, lo in [("n_steps", n_steps, 1), ("batch_size", batch_size, 1), ("seed", seed, 0)]:
        check_int(name, v, low=lo)
    data = torch.as_tensor(data, dtype=torch.long)
    if data.ndim != 2 or data.shape[1] < 2 or data.shape[1] > config.max_len:
        raise ValueError(f"data has shape {tuple(data.shape)}; allowed: (N, seq) with 2 <= seq <= {config.max_len}")
    with torch_threads(1):  # ops this small run fastest (and reproducibly) on one thread
        return _train(config, data, n_steps, batch_size, seed, lr, progress)


def _train(config, data, n_steps, batch_size, seed, lr, progress):
    g = torch.Generator().manual_seed(seed)
    model = TinyDecoder(config, g)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = torch.empty(n_steps)
    steps = range(n_steps)
    if progress:
        from tqdm import tqdm

        steps = tqdm(steps, desc=f"train {config.norm}")
    for step in steps:
        batch = data[torch.randint(len(data), (batch_size,), generator=g)]
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, config.vocab), batch[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses[step] = loss.detach()
    model.eval()
    return model, losses.numpy()


def layer_selectability(model: TinyDecoder, ids) -> list[dict]:
    """Per layer, the % of unselectable keys of each sequence of ``ids: (batch, seq)``
    (the key set of a sequence: its ``seq`` vectors), in three places:
    ``"residual"`` (before the norm), ``"normed"`` (after it) and ``"keys"``
    (per head, :math:`W_K` of the normed states)."""
    from ..selectability import percent_unselectable

    return [{name: percent_unselectable(arrays[name])[0] for name in ("residual", "normed", "keys")}
            for arrays in attention_inputs(model, ids)]
