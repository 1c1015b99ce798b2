r"""Beyond Kim et al.'s model: does LayerNorm's recency survive a real layer? (chapter 6)

The paper's layer (:func:`attention_geometry.recency.simulation.decoder_layer`) has no
parameters. Its Limitations name what a real layer adds; :class:`LayerSpec`
adds them one at a time:

* ``random_qk``: scores :math:`(YW_Q)(YW_K)^\top/\sqrt d` with :math:`W_Q, W_K` drawn
  with entries :math:`\mathcal N(0, 1/d)` (independent: the diagonal no longer
  dominates; :math:`W_V = W_O = I`);
* ``qk_interp``: :math:`W_Q = I` and :math:`W_K^\top = B_t`, the interpolation
  :math:`B_t = \sqrt d\,\bigl((1-t)I + t\Xi\bigr)/\lVert (1-t)I + t\Xi\rVert_F` from the identity
  (:math:`t = 0`, the paper's layer) to a random :math:`\Xi` with entries :math:`\mathcal N(0, 1/d)`
  (:math:`t = 1`), at a fixed Frobenius norm so that only the shape changes
  (:func:`qk_matrix`); :func:`diagonal_dominance` measures how close :math:`B_t` is to the identity;
* ``n_heads``: :math:`H` heads, each the paper's layer on its own block of
  :math:`d/H` coordinates, scored at :math:`1/\sqrt{d/H}`, outputs concatenated;
* ``ffn``: a feed-forward block after the attention,
  :math:`X \leftarrow O + W_2\,\mathrm{GELU}(W_1\,\mathrm{LN}(O))` with
  :math:`W_1: d\times 4d`, :math:`W_2: 4d \times d` of entries :math:`\mathcal N(0, 1/\text{fan-in})`;
* ``ln_eps`` and ``ln_affine``: LayerNorm with :math:`\varepsilon` and an affine map
  :math:`g \odot \cdot + b`, :math:`g = 1 + s\,\mathcal N(0,1)`, :math:`b = s\,\mathcal N(0,1)` per
  coordinate (``s = ln_affine``; PyTorch's initial :math:`g = 1, b = 0` would change nothing).

:func:`simulate_extended` measures the recency probability of every layer
(averaged over heads) over ``n_models`` independent draws of the weights; its
standard errors come from the spread across those draws (weights and inputs
both random), never from the sequences of one draw.

Two further checks of the paper: :func:`relativity_test` asks whether the mean
scores are a function of :math:`i - j` (the paper's Section 4 says they are not),
and :func:`nope_decoder` / :func:`train_nope` / :func:`nope_recency` train the
book's tiny decoder without position embeddings (NoPE) on the book's corpus
and measure the recency of its attention scores.

Shapes: ``X: (batch, n, d)``; scores ``(batch, heads, n, n)``.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from .._checks import check_float, check_int, fail, torch_threads
from .._parallel import map_processes
from ..attention import causal_softmax
from ..checkpoint import CheckpointStore, resumable_map
from ..draws import DrawEstimate, over_draws
from ..layernorm import normalise
from ..models.tiny_decoder import TinyDecoder, TinyDecoderConfig
from ..stats import Estimate, mean_estimate, wald_test
from .simulation import RecencyStats, check_model, inputs, recency_fraction, triples

__all__ = [
    "LayerSpec",
    "limitation_specs",
    "qk_matrix",
    "diagonal_dominance",
    "nope_dominance",
    "extended_weights",
    "extended_layer",
    "ExtendedRecency",
    "simulate_extended",
    "same_lag_probes",
    "relativity_test",
    "nope_decoder",
    "train_nope",
    "attention_scores",
    "nope_recency",
    "nope_experiment",
    "nope_over_seeds",
]


@dataclass(frozen=True)
class LayerSpec:
    """What a layer adds to the paper's parameter-free one (defaults: nothing)."""

    random_qk: bool = False  # W_Q, W_K with N(0, 1/d) entries
    n_heads: int = 1  # heads on blocks of d / n_heads coordinates
    ffn: bool = False  # a feed-forward block with its own LayerNorm and residual
    ln_eps: float = 0.0  # LayerNorm's epsilon
    ln_affine: float = 0.0  # spread of the affine gain and bias (0: none)
    qk_interp: float | None = None  # W_Q W_K^T from the identity (0) to a random matrix (1); None: off

    def __repr__(self):  # without qk_interp when off, so that stored runs of the other specs keep their keys
        fields = ["random_qk", "n_heads", "ffn", "ln_eps", "ln_affine"] + ([] if self.qk_interp is None else ["qk_interp"])
        return f"LayerSpec({', '.join(f'{f}={getattr(self, f)!r}' for f in fields)})"

    def check(self, d):
        if self.qk_interp is not None:
            check_float("qk_interp", self.qk_interp, low=0.0, high=1.0)
            if self.random_qk:
                raise fail("qk_interp", self.qk_interp, "None when random_qk is set (one choice of W_Q, W_K)")
        check_int("n_heads", self.n_heads, low=1)
        if d % self.n_heads:
            raise fail("n_heads", self.n_heads, f"a divisor of d = {d}")
        check_float("ln_eps", self.ln_eps, low=0.0)
        check_float("ln_affine", self.ln_affine, low=0.0)
        return self


def limitation_specs(n_heads: int = 4, ln_eps: float = 1e-5, ln_affine: float = 0.2) -> dict[str, LayerSpec]:
    """The paper's layer and the additions its Limitations name, one at a time: ``{label: LayerSpec}``."""
    return {
        "the paper's layer": LayerSpec(),
        "random W_Q, W_K": LayerSpec(random_qk=True),
        f"{n_heads} heads": LayerSpec(n_heads=n_heads),
        "feed-forward block": LayerSpec(ffn=True),
        f"LN with eps = {ln_eps:g}, affine ({ln_affine:g})": LayerSpec(ln_eps=ln_eps, ln_affine=ln_affine),
    }


def extended_weights(spec: LayerSpec, d: int, n_layers: int, *, generator: torch.Generator,
                     dtype: torch.dtype = torch.float32) -> list[dict]:
    """Per layer a dict of the parameters ``spec`` asks for (``W_Q, W_K: (d, d)``,
    ``W_1: (d, 4d)``, ``W_2: (4d, d)``, ``g, b, g2, b2: (d,)``), drawn from ``generator``."""
    spec.check(d)

    def normal(*shape, std):
        return torch.randn(*shape, generator=generator, dtype=dtype) * std

    layers = []
    for _ in range(check_int("n_layers", n_layers, low=1)):
        w = {}
        if spec.random_qk:
            w["W_Q"], w["W_K"] = normal(d, d, std=d**-0.5), normal(d, d, std=d**-0.5)
        if spec.qk_interp is not None:
            t = spec.qk_interp
            M = (1.0 - t) * torch.eye(d, dtype=dtype) + t * normal(d, d, std=d**-0.5)
            w["W_Q"], w["W_K"] = torch.eye(d, dtype=dtype), (math.sqrt(d) * M / torch.linalg.norm(M)).T
        if spec.ffn:
            w["W_1"], w["W_2"] = normal(d, 4 * d, std=d**-0.5), normal(4 * d, d, std=(4 * d) ** -0.5)
        for g, b in (("g", "b"), ("g2", "b2")):
            w[g] = 1.0 + normal(d, std=spec.ln_affine)
            w[b] = normal(d, std=spec.ln_affine)
        layers.append(w)
    return layers


def _norm(X, norm, spec, g, b):
    if norm == "none":
        return X
    return normalise(X, norm, eps=spec.ln_eps) * g + b


def extended_layer(X: torch.Tensor, w: dict[str, torch.Tensor], spec: LayerSpec, *, norm: str = "layernorm",
                   gamma: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    r"""One layer: ``X: (batch, n, d) -> (X_next, S: (batch, heads, n, n))``.

    :math:`Y = g\odot\mathrm{norm}_\varepsilon(X) + b`; per head :math:`h` on its coordinates,
    :math:`S^h = Q^hK^{h\top}/\sqrt{d/H}` with :math:`Q = YW_Q, K = YW_K` (or :math:`Y`),
    :math:`O = \mathrm{concat}_h(A^hY^h) + \gamma X`; with ``spec.ffn``,
    :math:`X_{next} = O + \mathrm{GELU}(\mathrm{norm}(O)W_1)W_2`, else :math:`O`. With the default
    ``spec`` and ``gamma`` it is :func:`~attention_geometry.recency.simulation.decoder_layer`.
    """
    b_, n, d = X.shape
    H = spec.n_heads
    Y = _norm(X, norm, spec, w["g"], w["b"])
    Q, K = (Y @ w["W_Q"], Y @ w["W_K"]) if "W_Q" in w else (Y, Y)

    def heads(t):  # (batch, n, d) -> (batch, H, n, d/H)
        return t.view(b_, n, H, d // H).transpose(1, 2)

    S = heads(Q) @ heads(K).transpose(-1, -2) / math.sqrt(d // H)
    O = (causal_softmax(S) @ heads(Y)).transpose(1, 2).reshape(b_, n, d) + gamma * X
    if spec.ffn:
        O = O + F.gelu(_norm(O, norm, spec, w["g2"], w["b2"]) @ w["W_1"]) @ w["W_2"]
    return O, S


def qk_matrix(w: dict[str, torch.Tensor], d: int) -> torch.Tensor:
    r"""``(d, d)``: the bilinear form :math:`B = W_QW_K^\top` of a layer's scores,
    :math:`S = YBY^\top/\sqrt d` (the identity for the paper's layer)."""
    if "W_Q" not in w:
        return torch.eye(d, dtype=torch.float64)
    return (w["W_Q"] @ w["W_K"].T).double()


def diagonal_dominance(M: torch.Tensor) -> float:
    r"""How close :math:`B` (``(d, d)``) is to a multiple of the identity: the cosine of the two in the
    Frobenius inner product, :math:`\mathrm{dom}(B) = \operatorname{tr}B/(\sqrt d\,\lVert B\rVert_F)`.
    It is 1 for :math:`B = I`, the case Theorem 1 rests on (:math:`q_i\cdot k_i = \lVert y_i\rVert^2`
    dominates :math:`q_i\cdot k_j`); for a random :math:`B` with i.i.d. centred entries it is
    :math:`O(1/\sqrt d)` about 0; for :math:`(1-t)I + t\Xi` it tends to :math:`(1-t)/\sqrt{(1-t)^2 + t^2}`."""
    M = torch.as_tensor(M, dtype=torch.float64)
    if M.ndim != 2 or M.shape[0] != M.shape[1] or not torch.linalg.norm(M) > 0:
        raise fail("M", tuple(M.shape), "a non-zero square matrix")
    return float(torch.trace(M) / (math.sqrt(M.shape[0]) * torch.linalg.norm(M)))


@dataclass(frozen=True)
class ExtendedRecency:
    """``per_model: (n_models, layer)`` recency probability of each weight draw (head-averaged);
    ``estimates``: per layer an estimate over the draws (:func:`~attention_geometry.draws.over_draws`:
    t interval, ``n_models - 1`` df)."""

    per_model: np.ndarray
    estimates: tuple

    def later_layers(self) -> DrawEstimate:
        """The recency probability averaged over layers 2..L, as an estimate over the draws (each
        draw's mean kept, for :func:`~attention_geometry.verdicts.draws_verdict`)."""
        return over_draws(self.per_model[:, 1:].mean(1))


def simulate_extended(spec: LayerSpec, d: int, n: int, alpha: float, *, gamma: float = 1.0, norm: str = "layernorm",
                      n_layers: int = 4, n_models: int = 8, n_samples: int = 2048, seed: int = 0,
                      store: CheckpointStore | None = None, threads: int | None = 1) -> ExtendedRecency:
    """Recency probability over layers of ``n_models`` independent models (weights and
    ``n_samples`` input sequences each, drawn from ``(seed, model)``). Each model is
    one checkpointed piece of work (``store``). Returns :class:`ExtendedRecency`."""
    d, n, alpha, gamma, _, n_layers = check_model(d, n, alpha, gamma, "layernorm", n_layers)
    spec.check(d)
    check_int("n_models", n_models, low=2)  # a spread across draws needs two
    check_int("n_samples", n_samples, low=1)
    tri = triples(n)

    def one_model(m):
        gen = torch.Generator().manual_seed(int(np.random.SeedSequence([seed, m]).generate_state(1)[0]))
        weights = extended_weights(spec, d, n_layers, generator=gen)
        X = inputs(n_samples, n, d, alpha, generator=gen)
        out = []
        with torch.no_grad():
            for w in weights:
                X, S = extended_layer(X, w, spec, norm=norm, gamma=gamma)
                out.append(float(recency_fraction(S, tri).mean()))
        return out

    key = {"what": "simulate_extended/1", "spec": repr(spec), "d": d, "n": n, "alpha": alpha, "gamma": gamma,
           "norm": norm, "n_layers": n_layers, "n_samples": n_samples, "seed": seed}
    with torch_threads(threads):
        per_model = np.array(resumable_map(one_model, range(n_models), store=store, name="recency-extended",
                                           key=key))
    return ExtendedRecency(per_model, tuple(over_draws(per_model[:, l]) for l in range(n_layers)))


def same_lag_probes(n: int, lag: int = 1) -> dict[str, np.ndarray]:
    r"""Probes for :func:`~attention_geometry.recency.simulation.simulate_recency`: for queries
    :math:`i = lag+1, \dots, n-1`, the difference :math:`S_{i,i-lag} - S_{n,n-lag}` (all zero in
    mean if the scores are a function of :math:`i - j`). ``{name: (n, n) weights}``."""
    n = check_int("n", n, low=3)
    lag = check_int("lag", lag, low=1, high=n - 2)
    probes = {}
    for i in range(lag + 1, n):
        w = np.zeros((n, n))
        w[i - 1, i - 1 - lag], w[n - 1, n - 1 - lag] = 1.0, -1.0
        probes[f"lag{lag}-q{i}"] = w
    return probes


def relativity_test(stats: RecencyStats, layer: int, lag: int = 1) -> tuple[float, int, float]:
    r"""Wald test that every query's mean score at distance ``lag`` is the same (``sec-rec-notes-ext``):
    ``(chi2, df, p)`` from the probes :func:`same_lag_probes` recorded by ``stats``
    (a :class:`~attention_geometry.recency.simulation.RecencyStats` run with them)."""
    names = [f"{name}@{layer}" for name in same_lag_probes(stats.n, lag)]
    mean, cov = stats.probe_moments(names)
    return wald_test(mean, cov, stats.n_samples)


# ------------------------------------------------------------ a trained NoPE decoder


def nope_decoder(config: TinyDecoderConfig, generator: torch.Generator) -> TinyDecoder:
    """The book's tiny decoder (:class:`~attention_geometry.models.tiny_decoder.TinyDecoder`) without
    position embeddings: the learned positions are set to 0 and frozen (NoPE)."""
    model = TinyDecoder(config, generator)
    with torch.no_grad():
        model.pos.weight.zero_()
    model.pos.weight.requires_grad_(False)
    return model


def train_nope(config: TinyDecoderConfig, data: torch.Tensor, n_steps: int, batch_size: int, seed: int, *,
               lr: float = 3e-3, store: CheckpointStore | None = None,
               checkpoint_every: int = 200) -> tuple[TinyDecoder, np.ndarray]:
    """Adam on next-byte prediction of ``data: (N, seq)``; returns ``(model, losses (n_steps,))``.

    The training state (parameters, optimiser, sampling generator, step, losses) is
    saved to ``store`` every ``checkpoint_every`` steps and reloaded on a restart,
    so an interrupted run continues where it stopped, with the same result."""
    for name, v, lo in [("n_steps", n_steps, 1), ("batch_size", batch_size, 1), ("seed", seed, 0),
                        ("checkpoint_every", checkpoint_every, 1)]:
        check_int(name, v, low=lo)
    data = torch.as_tensor(data, dtype=torch.long)
    store = store or CheckpointStore(None)
    key = {"what": "train_nope/1", "config": repr(config), "n_steps": n_steps, "batch_size": batch_size,
           "seed": seed, "lr": lr, "data": [list(data.shape), int(data.sum()), int((data * data).sum() % 2**61)]}
    g = torch.Generator().manual_seed(seed)
    model = nope_decoder(config, g)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=lr)
    losses, start = torch.empty(n_steps), 0
    # one file per seed and norm, so that several seeds and norms share a store
    name = f"recency-nope-seed{seed}" if config.norm == "layernorm" else f"recency-nope-{config.norm}-seed{seed}"
    saved = store.load(name, key)
    if saved is not None:
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        g.set_state(saved["gen"])
        losses, start = saved["losses"], saved["step"]
    with torch_threads(1):
        for step in range(start, n_steps):
            batch = data[torch.randint(len(data), (batch_size,), generator=g)]
            with torch.random.fork_rng(devices=[]):  # the model's dropout draws from the global generator
                torch.manual_seed(seed * 1_000_003 + step)
                loss = F.cross_entropy(model(batch[:, :-1]).reshape(-1, config.vocab), batch[:, 1:].reshape(-1))
                opt.zero_grad(set_to_none=True)
                loss.backward()
            opt.step()
            losses[step] = loss.detach()
            if (step + 1) % checkpoint_every == 0 and step + 1 < n_steps:
                store.save(name, key, {"model": model.state_dict(), "opt": opt.state_dict(),
                                                 "gen": g.get_state(), "losses": losses, "step": step + 1})
    model.eval()
    return model, losses.numpy()


def attention_scores(model: TinyDecoder, ids: torch.Tensor) -> torch.Tensor:
    """``(batch, layer, heads, seq, seq)``: every layer's scores :math:`q k^\\top/\\sqrt{d_{head}}` (unmasked)."""
    was_training = model.training
    model.eval()  # no dropout: the scores of the model itself
    with torch.no_grad():
        _, record = model.run(torch.as_tensor(ids), record=True)
    model.train(was_training)
    with torch.no_grad():
        out = []
        for blk, (_, u, k) in zip(model.blocks, record):
            b, s, d = u.shape
            q = blk.W_Q(u).view(b, s, k.shape[1], -1).transpose(1, 2)
            out.append(q @ k.transpose(-1, -2) / math.sqrt(k.shape[-1]))
    return torch.stack(out, 1)


def nope_recency(model: TinyDecoder, ids: torch.Tensor) -> tuple[Estimate, ...]:
    """Per layer, the recency probability of the model's scores on ``ids: (batch, seq)``
    (per sequence the head average of :func:`~attention_geometry.recency.simulation.recency_fraction`),
    as an Estimate over the sequences."""
    S = attention_scores(model, ids)
    b, L, H, s, _ = S.shape
    rp = recency_fraction(S.reshape(b * L * H, s, s), triples(s)).reshape(b, L, H).mean(-1)
    return tuple(mean_estimate(rp[:, layer].numpy()) for layer in range(L))


def nope_dominance(model: TinyDecoder) -> np.ndarray:
    r"""``(layer,)``: :func:`diagonal_dominance` of each layer's :math:`B = W_Q^\top W_K` (the bilinear form
    :math:`q\cdot k = u^\top B u'` of the normed states, summed over the heads, as :func:`qk_matrix` does
    for the paper's layer)."""
    with torch.no_grad():
        return np.array([diagonal_dominance(blk.W_Q.weight.double().T @ blk.W_K.weight.double())
                         for blk in model.blocks])


def nope_experiment(texts: Sequence[str], *, d: int = 32, n_layers: int = 4, n_heads: int = 4, seq_len: int = 32,
                    n_steps: int = 300, batch_size: int = 16, n_eval: int = 256, seed: int = 0,
                    norm: str = "layernorm", store: CheckpointStore | None = None) -> dict:
    """Train a NoPE decoder on byte windows of ``texts`` and measure its recency before and after.

    Training windows: 20,000 random windows of ``seq_len + 1`` bytes (seed ``seed``);
    evaluation: ``n_eval`` other random windows of ``seq_len`` bytes (seed ``seed + 1``).
    Returns ``{"losses", "before", "after", "config", "dom_before", "dom_after"}`` (``before``/``after``:
    per layer an Estimate of the recency probability, :func:`nope_recency`; ``dom_*``: per layer
    :func:`nope_dominance`). ``norm``: the norm in front of
    attention (:data:`~attention_geometry.models.tiny_decoder.NORMS` or ``CONTROL_NORMS``, ``"rmsnorm"`` and ``"none"``, the
    controls of a decoder otherwise the same)."""
    from ..models.corpus import byte_batches

    config = TinyDecoderConfig(d=d, n_layers=n_layers, n_heads=n_heads, max_len=seq_len + 1, norm=norm)
    data = byte_batches(texts, 20_000, seq_len + 1, seed)
    held = byte_batches(texts, n_eval, seq_len, seed + 1)
    init = nope_decoder(config, torch.Generator().manual_seed(seed))
    before = nope_recency(init, held)
    model, losses = train_nope(config, data, n_steps, batch_size, seed, store=store)
    return {"losses": losses, "before": before, "after": nope_recency(model, held), "config": config,
            "dom_before": nope_dominance(init), "dom_after": nope_dominance(model)}


def _nope_seed(unit):
    texts, kwargs, threads, seed = unit
    with torch_threads(threads):
        return nope_experiment(texts, seed=seed, **kwargs)


def nope_over_seeds(texts: Sequence[str], *, seeds: Sequence[int], workers: int = 1, **kwargs) -> dict:
    """:func:`nope_experiment` once per training seed in ``seeds`` (at least two), with
    the recency probability's uncertainty taken over the seeds, where it belongs: the
    windows of one trained model say nothing about how much training itself varies.

    Returns ``{"runs", "losses", "before", "after", "before_mean", "after_mean", "dom_before_mean",
    "dom_after_mean"}`` (the last two: the layer-averaged :func:`nope_dominance` over the seeds):
    ``runs`` the per-seed results; ``losses (n_seeds, n_steps)``; ``before``/``after``
    per layer a :class:`~attention_geometry.draws.DrawEstimate` over the seeds of the
    per-seed recency probability (:func:`~attention_geometry.draws.over_draws`: the seed is
    the replicate, each seed's value the mean over its evaluation windows, so the
    within-seed error is included; ``n_seeds - 1`` degrees of freedom, the per-seed values
    in ``draw_means``); ``before_mean``/``after_mean`` the same of the per-seed average over
    layers. ``workers > 1`` trains that many seeds at once, each in its own process
    on one thread (training already runs on one thread): the same numbers in less
    wall time on several cores."""
    seeds = [check_int("seeds", s, low=0) for s in seeds]
    if len(seeds) < 2 or len(set(seeds)) != len(seeds):
        raise fail("seeds", seeds, "at least two distinct seeds (one trained model has no error over training)")
    threads = 1 if workers != 1 else None  # map_processes checks workers before any training
    runs = map_processes(_nope_seed, [(texts, kwargs, threads, s) for s in seeds], workers, desc="NoPE seeds")
    out = {"runs": runs, "losses": np.stack([r["losses"] for r in runs])}
    for which in ("before", "after"):
        per_seed = np.array([[e.value for e in r[which]] for r in runs])  # (seeds, layers)
        out[which] = tuple(over_draws(per_seed[:, layer]) for layer in range(per_seed.shape[1]))
        out[f"{which}_mean"] = over_draws(per_seed.mean(1))
        out[f"dom_{which}_mean"] = over_draws([r[f"dom_{which}"].mean() for r in runs])
    return out
