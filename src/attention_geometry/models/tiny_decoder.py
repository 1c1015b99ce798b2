r"""The small GPT-2 of Brody et al.'s unselectable-key experiments, byte-level (chapter 3).

The original (``unselectable/train_GPT2.py`` with ``gpt2_small_dim_config.json``,
launched by ``unselectable_experiments.sh``) trains Hugging Face's GPT-2 at
width :math:`d = 8` with 4 layers, 4 heads, 1,024 positions, GELU (tanh form)
MLPs of width :math:`4d` and dropout 0.1, for 50,000 steps of 16 sequences of
1,024 tokens, with the Trainer's defaults (AdamW at learning rate
:math:`5\cdot10^{-5}` decaying linearly to 0, no weight decay, gradients clipped
to norm 1). It freezes the gain and bias of every ``ln_1`` (the norm in front
of attention) at 1 and 0 and the bias of the query/key/value map at 0; the
"no scaling" model replaces ``ln_1`` by a centring without scaling
(``FactorizedLayerNorm(do_projection=True, do_scale=False)``). ``ln_2`` and the
final norm stay ordinary LayerNorms with learned gain and bias.

:class:`TinyDecoder` is that model, with two differences forced by this book's
offline setting and CPU budget: the vocabulary is the 256 byte values (GPT-2's
tokenizer cannot be loaded offline), and the dropout on the attention
probabilities is left out (on a CPU it makes a step of 1,024 tokens about ten
times slower); the embedding and residual dropout are kept.

The norm in front of attention (``config.norm``, through
:func:`~attention_geometry.layernorm.normalise`):

* ``"layernorm"``: :math:`\sqrt d\,Px/\sqrt{\lVert Px\rVert^2 + d\varepsilon}`,
  :math:`\varepsilon = 10^{-5}` (``GPT2_W_SCALE``);
* ``"projection"``: :math:`Px`, the centring without the scaling (``GPT2_WO_SCALE``);
* ``"rmsnorm"``: :math:`\sqrt d\,x/\sqrt{\lVert x\rVert^2 + d\varepsilon}`, the scaling without the
  centring, and ``"none"``: :math:`x` (the controls of chapter 6's trained NoPE decoder).

:func:`attention_inputs` returns, per layer, what the attention sees: the
residual stream before the norm (the original's "before"), the normed states
(its "after"), the same states normed with :math:`\varepsilon = 0` (``"sphere"``:
the theorem's LayerNorm, every state on the sphere of radius :math:`\sqrt d`;
the model itself never sees them) and the per-head keys :math:`W_K N_1(x)`.
:func:`normed_radius` measures how far the :math:`\varepsilon` term pulls the
normed states inside that sphere.

Shapes: ``ids: (batch, seq)`` byte ids; hidden states ``(batch, seq, d)``;
per-head keys ``(batch, heads, seq, d_head)``.
"""

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import torch
import torch.nn.functional as F
from torch import nn

from .._checks import as_torch_generator, check_choice, check_float, check_int, fail, shape_of, torch_threads
from .._parallel import progress_bar
from ..checkpoint import CheckpointStore
from ..layernorm import normalise

__all__ = [
    "TinyDecoderConfig",
    "TinyDecoder",
    "TinyTraining",
    "Plateau",
    "TrainingRun",
    "attention_inputs",
    "tiny_residual_stream",
    "train_tiny_decoder",
    "train_to_plateau",
    "learning_rate",
    "plateau_reached",
    "snapshot_grid",
    "snapshot_model",
    "sequence_losses",
    "split_texts",
    "byte_windows",
    "layer_selectability",
    "snapshot_selectability",
    "normed_radius",
]

#: What :func:`attention_inputs` returns per layer (``layer_selectability``'s ``places``).
PLACES = ("residual", "normed", "sphere", "keys")

#: The norms in front of attention the tiny decoder is trained with (the book's vocabulary).
NORMS = ("layernorm", "projection")
#: The controls of chapter 6's trained NoPE decoder: the scaling without the centring, and no norm.
CONTROL_NORMS = ("rmsnorm", "none")


@dataclass(frozen=True)
class TinyDecoderConfig:
    """Sizes of the tiny decoder; the defaults are ``gpt2_small_dim_config.json``'s."""

    d: int = 8  # n_embd: small enough that unselectable keys are common
    n_layers: int = 4  # n_layer
    n_heads: int = 4  # n_head (d_head = 2)
    max_len: int = 1024  # n_positions
    mlp_ratio: int = 4  # n_inner = None: 4 d
    vocab: int = 256  # bytes (the original: GPT-2's 50,257 BPE tokens)
    norm: str = "layernorm"  # ln_1: "layernorm" (GPT2_W_SCALE), "projection" (GPT2_WO_SCALE), "rmsnorm" or "none"
    dropout: float = 0.1  # embd_pdrop = resid_pdrop (attn_pdrop is left out)
    init_std: float = 0.02  # initializer_range
    eps: float = 1e-5  # layer_norm_epsilon

    def __post_init__(self):
        for name in ("d", "n_layers", "n_heads", "max_len", "mlp_ratio", "vocab"):
            check_int(name, getattr(self, name), low=1)
        if self.d % self.n_heads:
            raise fail("d", self.d, f"a multiple of n_heads = {self.n_heads}")
        check_choice("norm", self.norm, NORMS + CONTROL_NORMS)
        check_float("dropout", self.dropout, low=0.0, high=1.0, high_open=True)
        check_float("init_std", self.init_std, low=0.0, low_open=True)
        check_float("eps", self.eps, low=0.0)


class AffineNorm(nn.Module):
    """LayerNorm with learned gain and bias (GPT-2's ``ln_2`` and ``ln_f``), through
    :func:`~attention_geometry.layernorm.normalise`."""

    def __init__(self, d: int, eps: float):
        super().__init__()
        self.eps = eps
        self.gain, self.bias = nn.Parameter(torch.ones(d)), nn.Parameter(torch.zeros(d))

    def forward(self, x):
        return normalise(x, "layernorm", eps=self.eps) * self.gain + self.bias


class Block(nn.Module):
    """One GPT-2 block's parameters (the maths is in :meth:`TinyDecoder.run`)."""

    def __init__(self, c: TinyDecoderConfig):
        super().__init__()
        self.W_Q, self.W_K, self.W_V = (nn.Linear(c.d, c.d, bias=False) for _ in range(3))  # c_attn, bias frozen at 0
        self.W_O = nn.Linear(c.d, c.d)  # attn.c_proj
        self.ln_2 = AffineNorm(c.d, c.eps)
        self.fc, self.proj = nn.Linear(c.d, c.mlp_ratio * c.d), nn.Linear(c.mlp_ratio * c.d, c.d)


class TinyDecoder(nn.Module):
    """The tiny decoder; ``forward(ids: (batch, seq)) -> logits (batch, seq, vocab)``."""

    def __init__(self, config: TinyDecoderConfig, generator: torch.Generator | int):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab, c.d)
        self.pos = nn.Embedding(c.max_len, c.d)
        self.blocks = nn.ModuleList(Block(c) for _ in range(c.n_layers))
        self.ln_f = AffineNorm(c.d, c.eps)
        generator = as_torch_generator("generator", generator)
        with torch.no_grad():  # GPT-2's initialisation, from the generator (no global RNG)
            for name, p in self.named_parameters():
                if "ln_" in name:
                    continue
                if p.ndim == 1:
                    p.zero_()
                else:
                    std = c.init_std / math.sqrt(2 * c.n_layers) if name.endswith(("W_O.weight", "proj.weight")) \
                        else c.init_std
                    p.normal_(0.0, std, generator=generator)

    def norm_1(self, x):
        """The norm in front of attention, without gain or bias (frozen at 1 and 0 in the original)."""
        if self.config.norm in ("layernorm", "rmsnorm"):
            return normalise(x, self.config.norm, eps=self.config.eps)
        return normalise(x, self.config.norm)

    def _split(self, t):  # (batch, seq, d) -> (batch, heads, seq, d_head)
        b, s, d = t.shape
        h = self.config.n_heads
        return t.view(b, s, h, d // h).transpose(1, 2)

    def run(self, ids, record: bool = False):
        """``(logits (batch, seq, vocab), records)``; ``records`` is empty unless ``record``.

        A record per block, ``(residual, normed, keys)``: its input ``(batch, seq, d)``, that
        input after ``norm_1`` and its keys ``(batch, heads, seq, d_head)``; then one more, the
        last block's output before ``ln_f``, with ``normed`` and ``keys`` None. The residuals
        are the residual stream, ``n_layers + 1`` tensors. Dropout acts only in training
        mode, drawn from torch's global generator (the training loop seeds it for every step
        inside ``fork_rng``)."""
        if ids.ndim != 2 or ids.shape[1] > self.config.max_len:
            raise fail("ids", shape_of(ids, "a tensor"), f"(batch, seq) with seq <= {self.config.max_len}",
                       "has the wrong shape")
        p = self.config.dropout if self.training else 0.0
        x = F.dropout(self.embed(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device)), p)
        records = []
        for blk in self.blocks:
            u = self.norm_1(x)
            q, k, v = self._split(blk.W_Q(u)), self._split(blk.W_K(u)), self._split(blk.W_V(u))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # softmax(q k^T / sqrt(d_head)) v
            if record:
                records.append((x, u, k))
            x = x + F.dropout(blk.W_O(a.transpose(1, 2).reshape(x.shape)), p)
            x = x + F.dropout(blk.proj(F.gelu(blk.fc(blk.ln_2(x)), approximate="tanh")), p)
        if record:
            records.append((x, None, None))
        return self.ln_f(x) @ self.embed.weight.T, records

    def forward(self, ids):
        return self.run(ids)[0]


def attention_inputs(model: TinyDecoder, ids: torch.Tensor | npt.ArrayLike) -> list[dict]:
    r"""Per layer, what its attention sees, as float64 NumPy arrays:
    ``{"residual": (batch, seq, d), "normed": (batch, seq, d), "sphere": (batch, seq, d),
    "keys": (batch, heads, seq, d_head)}``; ``"sphere"`` is the residual normed
    with :math:`\varepsilon = 0` in float64 (:math:`\sqrt d\,Px/\lVert Px\rVert`).

    ``"normed"`` is the model's own norm applied to the residual in float64, not the float32
    states the forward pass computes: centring in float32 leaves each state about
    :math:`10^{-7}` of its norm off the hyperplane :math:`H`, at random, and the selectability
    test, whose tolerance is :math:`10^{-10}`, would read that as one more dimension
    (:func:`~attention_geometry.selectability.centring_rounding_percent`)."""
    model.eval()
    with torch.no_grad():
        _, layers = model.run(torch.as_tensor(ids), record=True)
    return [{"residual": x.double().numpy(), "normed": model.norm_1(x.double()).numpy(),
             "sphere": normalise(x.double(), "layernorm").numpy(), "keys": k.double().numpy()}
            for x, u, k in layers[:-1]]  # the last record is the last block's output


def tiny_residual_stream(model: TinyDecoder, ids: torch.Tensor) -> list[torch.Tensor]:
    """The residual stream of ``ids: (batch, seq)``: ``n_layers + 1`` tensors ``(batch, seq, d)``, index 0
    the embeddings (tokens plus positions), index ``l`` the output of block ``l`` (before ``ln_f``, also
    for the last), as :func:`~attention_geometry.models.pretrained.residual_stream` has it; eval mode."""
    model.eval()
    with torch.no_grad():
        _, records = model.run(torch.as_tensor(ids), record=True)
    return [x for x, _, _ in records]


def normed_radius(model: TinyDecoder, windows: Sequence[torch.Tensor]) -> np.ndarray:
    r"""Per window and layer, the smallest :math:`\lVert N_1(x_t)\rVert/\sqrt d` over the
    window's tokens: ``(N, n_layers)``. It is 1 on the sphere (:math:`\varepsilon = 0`)
    and :math:`(1 + d\varepsilon/\lVert Px_t\rVert^2)^{-1/2}` with LayerNorm's
    :math:`\varepsilon`, so values below 1 say that the :math:`\varepsilon` term
    pulls the states with the smallest centred norm inside the sphere, where
    they can lie in the convex hull of the others."""
    d = model.config.d
    return np.asarray([[np.linalg.norm(a["normed"][0], axis=-1).min() / math.sqrt(d)
                        for a in attention_inputs(model, w[None])] for w in windows])


# ------------------------------------------------------------------ the text


def split_texts(texts: Sequence[str], every: int = 10) -> tuple[list[str], list[str]]:
    """``(training paragraphs, held-out paragraphs)``: every ``every``-th paragraph is held out."""
    check_int("every", every, low=2)
    texts = list(texts)
    return [t for i, t in enumerate(texts) if i % every], [t for i, t in enumerate(texts) if not i % every]


def _stream(texts) -> torch.Tensor:
    data = "\n\n".join(texts).encode("utf-8")
    return torch.frombuffer(bytearray(data), dtype=torch.uint8).long()


def byte_windows(texts: Sequence[str], n_windows: int, min_len: int, max_len: int, seed: int) -> list[torch.Tensor]:
    """``n_windows`` windows of the UTF-8 bytes of the paragraphs (joined by blank
    lines), each of a length drawn uniformly from ``[min_len, max_len]`` and
    starting uniformly at random (``torch.Generator().manual_seed(seed)``)."""
    check_int("n_windows", n_windows, low=1)
    check_int("min_len", min_len, low=1)
    check_int("max_len", max_len, low=min_len)
    stream = _stream(texts)
    if len(stream) < max_len:
        raise fail("max_len", max_len, f"at most the text's {len(stream)} bytes")
    g = as_torch_generator("seed", seed)
    lengths = torch.randint(min_len, max_len + 1, (n_windows,), generator=g)
    return [stream[s:s + n] for n in lengths.tolist()
            for s in [int(torch.randint(len(stream) - n + 1, (1,), generator=g))]]


# ----------------------------------------------------------------- training


@dataclass(frozen=True)
class TinyTraining:
    """How the tiny decoder is trained; the defaults are the original's (``unselectable_experiments.sh``
    and the Hugging Face Trainer's defaults)."""

    steps: int = 50_000  # --max_steps (a run may stop earlier and resume later)
    schedule_steps: int = 50_000  # the linear decay reaches 0 here (the Trainer: max_steps)
    batch: int = 16  # --per_device_train_batch_size
    seq_len: int = 1024  # block_size: the tokenizer's model_max_length, capped at 1024
    lr: float = 5e-5  # TrainingArguments.learning_rate (default)
    clip: float = 1.0  # max_grad_norm (default)
    checkpoint_every: int = 200
    warmup: int = 0  # warmup_steps (default): the rate rises linearly to lr over these steps
    decay: str = "linear"  # lr_scheduler_type (default); "cosine" for a stand-in schedule

    def __post_init__(self):
        for name, low in [("steps", 1), ("schedule_steps", 1), ("batch", 1), ("seq_len", 2), ("checkpoint_every", 1),
                          ("warmup", 0)]:
            check_int(name, getattr(self, name), low=low)
        check_float("lr", self.lr, low=0.0, low_open=True)
        check_float("clip", self.clip, low=0.0, low_open=True)
        check_choice("decay", self.decay, ("linear", "cosine"))
        if self.warmup >= self.schedule_steps:
            raise fail("warmup", self.warmup, f"below schedule_steps = {self.schedule_steps}")


def learning_rate(training: TinyTraining, step: int) -> float:
    r"""The learning rate of step ``step`` (from 0): a linear warm-up from 0 over
    ``warmup`` steps to ``lr``, then a linear or cosine decay
    (:math:`\tfrac12(1 + \cos\pi u)`, :math:`u` the fraction of the decay done) that
    reaches 0 at ``schedule_steps`` and stays there (the Trainer's schedules)."""
    if step < training.warmup:
        return training.lr * step / training.warmup
    u = min(1.0, (step - training.warmup) / (training.schedule_steps - training.warmup))
    return training.lr * ((1 - u) if training.decay == "linear" else 0.5 * (1 + math.cos(math.pi * u)))


def _step_seed(seed: int, step: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{step}".encode()).digest()[:8], "little") >> 1


def train_tiny_decoder(config: TinyDecoderConfig, texts: Sequence[str], training: TinyTraining, seed: int, *,
                       store: CheckpointStore | None = None, progress: bool = False) -> tuple[TinyDecoder, np.ndarray]:
    """Train on next-byte prediction; returns ``(model, losses (steps,))`` (per-step training loss).

    Step ``t`` draws ``batch`` windows of ``seq_len + 1`` bytes of ``texts`` and its
    dropout from generators seeded by ``(seed, t)``, so a run that resumes from a
    checkpoint (``store``: parameters, AdamW state, step and losses, every
    ``checkpoint_every`` steps, under a key holding the configuration, the
    training set-up without ``steps``, the seed and a digest of the text)
    continues exactly as an uninterrupted one. One torch thread.
    """
    check_int("seed", seed, low=0)
    stream = _stream(texts)
    _check_stream(stream, config, training)
    key = _training_key("tiny_decoder", stream, config, training, seed)
    with torch_threads(1):
        return _train(config, stream, training, seed, store or CheckpointStore(None), key, progress)


def _check_stream(stream, config, training):
    if len(stream) <= training.seq_len + 1 or training.seq_len + 1 > config.max_len + 1:
        raise fail("training.seq_len", training.seq_len,
                   f"at most {min(len(stream) - 2, config.max_len)} (the text and the positions)")


def _training_key(what, stream, config, training, seed, **more):
    """The checkpoint key of a training run: everything that determines its trajectory
    except the step cap (a later run with more steps continues from it)."""
    key = {"what": what, **asdict(config), **asdict(training), **more, "seed": seed,
           "text": hashlib.sha256(stream.numpy().tobytes()).hexdigest()[:16]}
    for k in ("steps", "checkpoint_every"):
        key.pop(k)
    return key


def _start(config, training, seed, store, name, key):
    """A fresh model and AdamW, resumed from ``store``'s checkpoint ``name``/``key`` when it
    holds one of at most ``training.steps`` steps. Returns ``(model, opt, saved, store)``;
    ``saved`` is the checkpoint (None when training starts afresh) and ``store`` is
    detached when the checkpoint belongs to a longer run (which is left alone)."""
    model = TinyDecoder(config, seed)
    opt = torch.optim.AdamW(model.parameters(), lr=training.lr, weight_decay=0.0)
    saved = store.load(name, key)
    if saved is not None and saved["step"] > training.steps:
        return model, opt, None, CheckpointStore(None)
    if saved is not None:
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
    return model, opt, saved, store


def _train(config, stream, training, seed, store, key, progress):
    model, opt, saved, store = _start(config, training, seed, store, "tiny_decoder", key)
    losses, step = ([], 0) if saved is None else (list(saved["losses"]), saved["step"])
    bar = progress_bar(progress, training.steps, step, f"train {config.norm}")
    model.train()
    while step < training.steps:
        losses.append(_train_step(model, opt, stream, training, seed, step))
        step += 1
        bar.update(1)
        if step % training.checkpoint_every == 0 or step == training.steps:
            store.save("tiny_decoder", key, {"model": model.state_dict(), "opt": opt.state_dict(), "step": step,
                                             "losses": losses})
    bar.close()
    model.eval()
    return model, np.asarray(losses, dtype=float)


def _train_step(model, opt, stream, training, seed, step):
    for group in opt.param_groups:
        group["lr"] = learning_rate(training, step)
    g = torch.Generator().manual_seed(_step_seed(seed, step))
    starts = torch.randint(len(stream) - training.seq_len, (training.batch,), generator=g)
    batch = stream[starts[:, None] + torch.arange(training.seq_len + 1)]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(_step_seed(seed, step) ^ 1)  # the step's dropout
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, model.config.vocab), batch[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), training.clip)
    opt.step()
    return float(loss.detach())


# ------------------------------------------------- training to a plateau


@dataclass(frozen=True)
class Plateau:
    """When :func:`train_to_plateau` stops before its step cap, and when it keeps snapshots.

    Every ``eval_every`` steps the mean loss of the held-out windows is measured;
    training stops once the best of the last ``evals`` measurements improves on
    the one before them by less than the fraction ``tol`` (:func:`plateau_reached`).
    A snapshot of the parameters is kept at every step of :func:`snapshot_grid`
    (0, 10, 30, 100, 300, ...) and at the last step."""

    eval_every: int = 50  # steps between held-out measurements
    evals: int = 4  # K: the measurements a plateau spans
    tol: float = 0.005  # relative improvement over them below which the loss has reached a plateau

    def __post_init__(self):
        check_int("eval_every", self.eval_every, low=1)
        check_int("evals", self.evals, low=1)
        check_float("tol", self.tol, low=0.0)


def plateau_reached(held: Sequence[float], evals: int, tol: float) -> bool:
    """Whether the held-out losses ``held`` (one per ``eval_every`` steps, oldest
    first) have reached a plateau: the best of the last ``evals`` is above
    ``(1 - tol)`` times the one before them. False while there are ``evals`` or fewer."""
    check_int("evals", evals, low=1)
    if len(held) <= evals:
        return False
    before = held[-evals - 1]
    return bool(before - min(held[-evals:]) < tol * before)


def snapshot_grid(last: int) -> list[int]:
    r"""The steps at which :func:`train_to_plateau` keeps the parameters: 0 and
    :math:`10^k, 3\cdot10^k` (:math:`k \ge 1`) up to ``last``, and ``last``."""
    check_int("last", last, low=0)
    grid, k = [0], 10
    while k < last:
        grid.append(k)
        k = k * 3 if str(k)[0] == "1" else k // 3 * 10
    return grid + ([last] if last else [])


@dataclass
class TrainingRun:
    """What :func:`train_to_plateau` returns: the trained ``model``; the training
    loss of every step ``losses (steps,)``; the held-out loss of every window at
    each measured step, ``held (evals, windows)`` at ``held_steps (evals,)``; the
    parameters at each snapshot step (``snapshots``: step -> state dict); and
    whether it stopped at a plateau (``plateau``) or at the step cap."""

    model: TinyDecoder
    losses: np.ndarray
    held_steps: np.ndarray
    held: np.ndarray
    snapshots: dict
    plateau: bool

    @property
    def steps(self) -> int:
        return len(self.losses)

    def held_at(self, step: int) -> np.ndarray:
        """The held-out loss of every window at ``step`` (a measured step), ``(windows,)``."""
        return self.held[list(self.held_steps).index(step)]


def snapshot_model(run: TrainingRun, step: int) -> TinyDecoder:
    """The model as it was at snapshot ``step`` (in evaluation mode)."""
    if step not in run.snapshots:
        raise fail("step", step, f"one of the snapshot steps {sorted(run.snapshots)}")
    model = TinyDecoder(run.model.config, 0)
    model.load_state_dict(run.snapshots[step])
    return model.eval()


def train_to_plateau(config: TinyDecoderConfig, texts: Sequence[str], held_windows: Sequence[torch.Tensor],
                     training: TinyTraining, plateau: Plateau, seed: int, *, store: CheckpointStore | None = None,
                     progress: bool = False) -> TrainingRun:
    """Train as :func:`train_tiny_decoder` does (the same steps, bit for bit) until the
    held-out loss reaches a plateau (``plateau``) or ``training.steps``, keeping snapshots.

    The held-out loss (:func:`sequence_losses` of ``held_windows``) is measured at
    every snapshot step and every ``plateau.eval_every`` steps. With a ``store`` the
    whole state (parameters, AdamW state, losses, snapshots) is saved every
    ``training.checkpoint_every`` steps and at the end, under a key that holds
    everything that determines the trajectory and where it stops but not the
    step cap: a later run with a larger ``training.steps`` continues from it,
    and a run that reached its plateau is returned as it was.
    """
    check_int("seed", seed, low=0)
    stream = _stream(texts)
    _check_stream(stream, config, training)
    windows = [torch.as_tensor(w) for w in held_windows]
    if not windows:
        raise fail("held_windows", 0, "at least one window")
    digest = hashlib.sha256(b"".join(w.numpy().astype(np.uint8).tobytes() for w in windows)).hexdigest()[:16]
    key = {**_training_key("tiny_decoder_plateau", stream, config, training, seed, **asdict(plateau)),
           "held": digest}
    with torch_threads(1):
        return _train_to_plateau(config, stream, windows, training, plateau, seed,
                                 store or CheckpointStore(None), key, progress)


def _train_to_plateau(config, stream, windows, training, plateau, seed, store, key, progress):
    model, opt, saved, store = _start(config, training, seed, store, "tiny_decoder_plateau", key)
    state = {"step": 0, "losses": [], "held_steps": [], "held": [], "snapshots": {}, "plateau": False}
    if saved is not None:
        state = {k: saved[k] for k in state}
    grid = set(snapshot_grid(training.steps))

    def measure(step):
        state["held_steps"].append(step)
        state["held"].append(sequence_losses(model, windows))
        if step in grid:
            state["snapshots"][step] = {k: v.clone() for k, v in model.state_dict().items()}
        model.train()

    def regular():  # the mean held-out losses at the multiples of eval_every
        return [h.mean() for s, h in zip(state["held_steps"], state["held"]) if s % plateau.eval_every == 0]

    if not state["held_steps"]:
        measure(0)
    bar = progress_bar(progress, training.steps, state["step"], f"train {config.norm}")
    model.train()
    while state["step"] < training.steps and not state["plateau"]:
        state["losses"].append(_train_step(model, opt, stream, training, seed, state["step"]))
        state["step"] += 1
        step = state["step"]
        bar.update(1)
        if step in grid or step % plateau.eval_every == 0:
            measure(step)
            state["plateau"] = step % plateau.eval_every == 0 and plateau_reached(regular(), plateau.evals, plateau.tol)
        done = state["step"] == training.steps or state["plateau"]
        if done and step not in state["snapshots"]:  # the last step is a snapshot too
            grid.add(step)
            if state["held_steps"][-1] == step:
                state["snapshots"][step] = {k: v.clone() for k, v in model.state_dict().items()}
            else:
                measure(step)
        if step % training.checkpoint_every == 0 or done:
            store.save("tiny_decoder_plateau", key, {**state, "model": model.state_dict(), "opt": opt.state_dict()})
    bar.close()
    model.eval()
    return TrainingRun(model, np.asarray(state["losses"], dtype=float), np.asarray(state["held_steps"]),
                       np.asarray(state["held"], dtype=float), dict(state["snapshots"]), bool(state["plateau"]))


# --------------------------------------------------------------- measuring


def sequence_losses(model: TinyDecoder, windows: Sequence[torch.Tensor]) -> np.ndarray:
    """Mean next-byte cross-entropy (nats) of each window (a list of 1-D byte tensors), ``(N,)``."""
    model.eval()
    out = []
    with torch.no_grad():
        for w in windows:
            logits = model(w[None, :-1])[0]
            out.append(float(F.cross_entropy(logits, w[1:])))
    return np.asarray(out)


def layer_selectability(model: TinyDecoder, windows: Sequence[torch.Tensor],
                        places: Sequence[str] = ("residual", "normed"), *, store: CheckpointStore | None = None,
                        name: str = "tiny", key: Mapping[str, Any] | None = None) -> dict:
    """Per window and layer, the % of unselectable keys among its ``len(window)`` vectors.

    ``places``: any of ``"residual"`` (before the norm; the original's "before"),
    ``"normed"`` (after it; its "after"), ``"sphere"`` (normed with
    :math:`\varepsilon = 0`) and ``"keys"`` (per head, :math:`W_K`
    of the normed states, averaged over heads). Returns ``{place: (N, n_layers)}``.
    With a ``store`` the windows are checkpointed as they are done (``key``
    must determine the model and the windows).
    """
    from ..checkpoint import resumable_map
    from ..selectability import percent_unselectable

    for p in places:
        check_choice("places", p, PLACES)

    def one(w):  # keys: (heads, seq, d_head), one set per head, averaged
        layers = attention_inputs(model, w[None])
        return [[percent_unselectable(arrays[p][0])[0] for arrays in layers] for p in places]

    results = resumable_map(one, list(windows), store=store, name=name,
                            key={**(key or {}), "places": list(places), "n_windows": len(windows)})
    arr = np.asarray(results, dtype=float)  # (N, places, layers)
    return {p: arr[:, i] for i, p in enumerate(places)}


def snapshot_selectability(run: TrainingRun, windows: Sequence[torch.Tensor], places: Sequence[str], *,
                           store: CheckpointStore | None = None, name: str = "snapshots",
                           key: Mapping[str, Any] | None = None) -> dict[int, dict]:
    """:func:`layer_selectability` of the model at every snapshot of ``run``:
    ``{step: {place: (N, n_layers)}}``, steps in increasing order. ``key`` must
    determine the run and the windows (each snapshot is checkpointed under it and its step)."""
    return {step: layer_selectability(snapshot_model(run, step), windows, places, store=store,
                                      name=f"{name}-{step}", key={**(key or {}), "step": step})
            for step in sorted(run.snapshots)}
