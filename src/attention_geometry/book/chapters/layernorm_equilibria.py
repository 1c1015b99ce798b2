"""Chapter 5, *LayerNorm can prevent collapse* (``book/05_layernorm_equilibria.md``): its parameters."""

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field

from ..cost import CostModel
from ..params import ChapterParams, CorpusDir, Seed

if TYPE_CHECKING:
    from ...ratios import ExactProportion

__all__ = ["LayerNormEquilibriaParams", "rank_constructions", "constructions_table", "equilibria_table",
           "ranks_table", "final_mu_table", "geometry_table", "proof_steps_words", "heights_words", "max_rank_words",
           "stable_constructions", "stability_summary", "stability_table", "instability_words", "stable_words",
           "basin_words", "basin_share", "share_text", "by_rank", "causal_over_draws", "ablation_training", "ablation_geometry", "ablation_table",
           "ABLATION_STATISTICS", "ablation_effects", "ablation_verdicts", "ablation_words", "ablation_layer_table"]


class LayerNormEquilibriaParams(ChapterParams):
    """The parameters of chapter ``layernorm_equilibria``; each default is the value in its ``parameters`` cell."""

    seed: Seed = 0
    corpus_dir: CorpusDir = None
    n_tokens_a: int = Field(32, ge=2, le=512, description="tokens N in the orthogonal-W_V experiment")
    d_a: int = Field(16, ge=2, le=1024, description="dimension d in the orthogonal-W_V experiment")
    n_samples_a: int = Field(64, ge=2, le=10_000, description="random inputs in the orthogonal-W_V experiment")
    n_steps_a: int = Field(80, ge=5, le=5000, description="layers iterated in the orthogonal-W_V experiment")
    qk_scales: list[Annotated[float, Field(ge=0.0, le=100.0)]] = Field([0.0625, 10.0], min_length=1, max_length=4,
        description="standard deviations s of random W_QK (logit std for unit tokens): nearly uniform, then peaked")
    beta_similarity: float = Field(20.0, ge=0.0, le=200.0,
        description="beta of W_QK = beta I (attention to similar tokens)")
    grid_2x2: int = Field(200, ge=10, le=1000, description="grid points per angle in the L = d = 2 basin map")
    steps_2x2: int = Field(300, ge=10, le=5000, description="layers iterated in the L = d = 2 basin map")
    rank_n: int = Field(6, ge=2, le=64, description="tokens N in the rank construction")
    rank_d: int = Field(4, ge=3, le=16,
        description="dimension d in the rank construction (the centred version uses d - 1)")
    n_random: int = Field(2000, ge=10, le=100_000, description="random inputs run in the basin and rank experiments")
    steps_rank: int = Field(400, ge=10, le=10_000, description="layers iterated from the random inputs")
    n_text_samples: int = Field(64, ge=4, le=3000,
        description="text windows for the pretrained-model geometry (the paper: 3000); at least 4, since the "
                    "ablation chooses each decoder's worst layer on half of them and reads it on the other")
    seq_len: int = Field(128, ge=8, le=1024, description="tokens per text window (the paper: 128)")
    device: Literal["cpu", "cuda"] = Field("cpu", description="where the pretrained model runs")
    full_rank_tol: float = Field(0.05, ge=0.0, le=0.5,
        description="share of windows allowed below full rank when 'every layer keeps full rank' is judged")
    ablation_seeds: int = Field(8, ge=2, le=100,
        description="tiny decoders trained with the LayerNorm in front of attention, and as many without it: the "
                    "replicate of the ablation rows, which decide over at least 8")
    ablation_steps: int = Field(450, ge=1, le=1_000_000,
        description="training steps of each tiny decoder (chapter 3's default schedule)")

    # smoke: rank_n = 2 < rank_d - 1 = 3, so the centred ranks (at most min(L, d - 1)) stop short of
    # d - 1, which the defaults reach (tests/test_chapters.py)
    smoke = {"n_tokens_a": 8, "d_a": 4, "n_samples_a": 4, "n_steps_a": 20, "grid_2x2": 20, "steps_2x2": 60,
             "rank_n": 2, "rank_d": 4, "n_random": 50, "steps_rank": 50, "n_text_samples": 4,
             "seq_len": 16, "ablation_seeds": 2, "ablation_steps": 3}
    # windows of the paper's 128 tokens, 1,000 of its 3000: about 1 s of CPU per window (two
    # models), so all 3000 take about 50 min of one core; the rest of the chapter runs at its
    # defaults (its experiments are the book's own, not the paper's)
    presets = {
        "paper": {"n_text_samples": 1000, "seq_len": 128},
    }
    # the shares of the time at the defaults that scale with each group of parameters; the seconds: the
    # chapter at its defaults in the cold book build of a clean clone on 2026-12-03 (commit 11be456; two
    # kernels at a time on the 2-core reference machine, synthesis alone on both cores); a clean clone's
    # build starts the longest first by them
    # since the tiny decoders were added: 158 s for the whole chapter at its defaults, about 110 s of it the six
    # trainings (one kernel on the 2-core reference machine, the other core busy; model weights cached); at 8
    # seeds per norm (16 trainings, about 18 s each) and 64 windows (about 0.6 s each) the same parts scale to
    # about 363 s, which the shares below split
    cost = CostModel(363, (
        (0.035, {"n_samples_a": 1, "n_steps_a": 1, "n_tokens_a": 2}),
        (0.022, {"grid_2x2": 2, "steps_2x2": 1}),
        (0.03, {"n_random": 1, "steps_rank": 1}),
        (0.10, {"n_text_samples": 1, "seq_len": 1}),
        (0.81, {"ablation_seeds": 1, "ablation_steps": 1, "seq_len": 1}),
    ))


# ---------------------------------------------------------------------------------------------
# What the chapter shows beside its mathematics: the checks of its constructions, its numbered
# tables and the words its sentences choose from the run's numbers. The maths stays in
# attention_geometry.ln_dynamics; nothing here imports torch at module level.

def rank_constructions(n: int, d: int, centre: bool):
    """Build construction (c)'s equilibria of every rank ``k`` for ``n`` tokens in dimension ``d``
    (with ``centre``: in ``d - 1`` dimensions lifted by ``centred_lift``) and check each: a fixed
    point of the dynamics, of numerical rank ``k``, ``2^k`` of them. Returns the value matrix the
    dynamics use and one row per rank ``{k: {"built", "2^k", "max residual", "ranks", "ok", "X"}}``, ``X:
    (2^k, n, d)`` the equilibria."""
    import numpy as np
    import torch

    from ... import attention as mk
    from ... import ln_dynamics as ld

    W = ld.rank_construction_wv(n, d - centre)
    Wd, U = ld.centred_lift(W) if centre else (W, np.eye(d))
    out = {}
    for k in range(1, min(n, d - centre) + 1):
        X = torch.tensor(ld.rank_k_equilibria(W, n, k) @ U)
        res = (ld.ln_step(X, torch.tensor(Wd), mk.causal_mask(n), centre=bool(centre)) - X).abs().amax((1, 2))
        ranks = ld.numerical_rank(X)
        out[k] = {"built": len(X), "2^k": 2**k, "max residual": float(res.max()), "ranks": sorted(set(ranks.tolist())),
                  "ok": len(X) == 2**k and float(res.max()) < 1e-10 and bool((ranks == k).all()), "X": X.numpy()}
    return Wd, out


def stable_constructions(n: int, d: int, centre: bool) -> dict:
    """Construction (d), ``stable_rank_construction``, for every rank ``k <= min(n, d - centre)`` (with
    ``centre``: built in ``d - 1`` dimensions and lifted by ``centred_lift``), with its checks: a fixed
    point of numerical rank ``k`` whose spectral radius is the predicted ``1 - 1/(2 k^2)`` (at ``k = 1``
    the extension's ratio, 1/2). Returns ``{k: {"W": (d, d), "X": (1, n, d), "radius", "predicted", "rank", "ok"}}``."""
    import numpy as np
    import torch

    from ... import attention as mk
    from ... import ln_dynamics as ld

    out = {}
    for k in range(1, min(n, d - centre) + 1):
        W, X = ld.stable_rank_construction(n, d - centre, k)
        W, U = ld.centred_lift(W) if centre else (W, np.eye(d))
        X = (X @ U)[None]
        radius = float(ld.equilibrium_stability(X, W, mk.causal_mask(n), centre=bool(centre))[0])
        predicted = 1 - 1 / (2 * k * k)
        rank = int(ld.numerical_rank(torch.tensor(X))[0])
        out[k] = {"W": W, "X": X, "radius": radius, "predicted": predicted, "rank": rank,
                  "ok": rank == k and radius < 1 and abs(radius - predicted) < 1e-6}
    return out


def by_rank(X, k_max: int) -> dict:
    """Equilibria ``X: (m, n, d)`` grouped by their numerical rank: ``{k: (m_k, n, d)}`` for the ranks present."""
    import numpy as np
    import torch

    from ... import ln_dynamics as ld

    X = np.asarray(X)
    r = ld.numerical_rank(torch.tensor(X))
    return {k: X[r == k] for k in range(1, k_max + 1) if (r == k).any()}


def stability_summary(W, equilibria: dict, centre: bool, n_steps: int) -> dict:
    """The linearised stability of each group of equilibria ``{k: (m, n, d)}`` under ``W: (d, d)`` (or one
    ``{k: W}`` per group) (causal, uniform
    attention): ``{k: {"equilibria", "stable", "radius": (min, max), "stable directions": (min, max),
    "unstable directions": (min, max), "growth"}}``; directions count the eigenvalues of modulus below and
    above 1, ``growth`` is the largest ``transient_growth`` over ``n_steps`` steps at a stable one (None if
    none is stable)."""
    import numpy as np

    from ... import attention as mk
    from ... import ln_dynamics as ld

    out = {}
    for k, X in equilibria.items():
        n, Wk = X.shape[-2], W[k] if isinstance(W, dict) else W
        ev = np.abs(ld.tangent_eigenvalues(X, Wk, mk.causal_mask(n), centre=bool(centre)))
        radius = ev.max(-1)
        below, above = (ev < 1).sum(-1), (ev > 1).sum(-1)
        growth = [ld.transient_growth(ld.ln_step_jacobian(x, Wk, mk.causal_mask(n), centre=bool(centre)), n_steps)
                  for x, r in zip(X, radius) if r < 1]
        out[k] = {"equilibria": len(X), "stable": int((radius < 1).sum()),
                  "radius": (float(radius.min()), float(radius.max())),
                  "stable directions": (int(below.min()), int(below.max())),
                  "unstable directions": (int(above.min()), int(above.max())),
                  "growth": max(growth) if growth else None}
    return out


def _span(lo, hi, fmt="d") -> str:
    lo, hi = format(lo, fmt), format(hi, fmt)
    return lo if lo == hi else f"{lo}–{hi}"


def _growth(g) -> str:
    return "–" if g is None else (f"{g:,.0f}" if g >= 10 else f"{g:.2f}")


def stability_table(summaries: dict, shares: dict) -> str:
    """Markdown: one row per construction and rank, from ``{name: stability_summary(...)}`` and the share of
    random inputs ending at that rank, ``{name: {k: ExactProportion}}`` (:func:`basin_share`: the fraction
    with its exact interval; shown only where some equilibrium of that rank is stable: an unstable one
    attracts a set of measure zero)."""
    from ..tables import markdown_table

    rows = []
    for name, summary in summaries.items():
        for k, r in summary.items():
            est = shares.get(name, {}).get(k)
            if r["stable"] and est is not None:
                lo, hi = est.interval()
                share = f"{est.value:.4f} [{lo:.4f}, {hi:.4f}]"
            else:
                share = "measure zero (none stable)"
            rows.append((name, k, r["equilibria"], r["stable"],
                         f"{_span(*r['stable directions'])} / {_span(*r['unstable directions'])}",
                         _span(*r["radius"], ".4g"), _growth(r["growth"]), share))
    return markdown_table(["construction", "rank k", "equilibria", "stable", "directions: stable / unstable",
                           "spectral radius", "largest transient growth", "random inputs ending at rank k [95 %]"],
                          rows)


def stable_words(ok: bool) -> str:
    """Whether construction (d) passed its checks at every rank."""
    return ("exist at every rank, with and without centring: each is fixed, has rank k and the predicted spectral "
            "radius" if ok else "do not pass every check (fixed, of rank k, with the predicted spectral radius)")


def basin_words(upper: float, small: float) -> str:
    """The basins of construction (d) against the reading of "small" (a share ``small`` of random inputs),
    from the largest upper end ``upper`` of their intervals."""
    return (f"every basin is small, each interval under {small:g} of the inputs" if upper < small
            else f"not every basin is shown to be small (an interval reaches {small:g} of the inputs)")


def basin_share(ranks, k: int) -> "ExactProportion":
    """The share of random inputs whose dynamics end at rank ``k`` (``ranks: (n,)``, ``ranks_reached``), as
    an :class:`~attention_geometry.ratios.ExactProportion`: the fraction with its exact (Clopper--Pearson)
    interval, which stays inside [0, 1] when no input, or a few, end there."""
    import numpy as np

    from ...ratios import exact_proportion

    ranks = np.asarray(ranks).ravel()
    return exact_proportion(int((ranks == k).sum()), ranks.size)


def share_text(est: "ExactProportion") -> str:
    """``132/2,000 = 0.066, exact 95 % interval [0.0559, 0.0778]``: a basin share of :func:`basin_share`
    as the table at the end states it."""
    lo, hi = est.interval()
    return f"{est.successes:,}/{est.n:,} = {est.value:.4g}, exact 95 % interval [{lo:.4g}, {hi:.4g}]"


def instability_words(summary: dict) -> str:
    """What a construction's equilibria are, from ``stability_summary``: stable, saddles (stable in some
    directions, unstable in others) or repellers (unstable in every direction), rank by rank."""
    kinds = {}
    for k, r in summary.items():
        if r["stable"] == r["equilibria"]:
            kind = "asymptotically stable"
        elif r["stable"]:
            kind = "partly stable"
        elif r["stable directions"][1] == 0:
            kind = "repellers, unstable in every direction"
        elif r["stable directions"][0] > 0:
            kind = "saddles, stable in some directions and unstable in others"
        else:
            kind = "unstable, some in every direction"
        kinds.setdefault(kind, []).append(k)
    parts = []
    for kind, ks in kinds.items():
        ranks = f"rank {ks[0]}" if len(ks) == 1 else (f"ranks {ks[0]}–{ks[-1]}" if ks == list(range(ks[0], ks[-1] + 1))
                                                      else "ranks " + ", ".join(map(str, ks)))
        parts.append(f"those of {ranks} are {kind}")
    return "; ".join(parts)


def constructions_table(tables: dict) -> str:
    """Markdown: ``{variant: rank_constructions(...)[1]}`` as one table."""
    from ..tables import markdown_table

    rows = [(name, k, r["built"], r["2^k"], f"{r['max residual']:.1e}", ", ".join(map(str, r["ranks"])),
             "yes" if r["ok"] else "no") for name, t in tables.items() for k, r in t.items()]
    return markdown_table(["variant", "rank k", "equilibria built", "2^k", "largest residual", "ranks found",
                           "every check passes"], rows)


def equilibria_table(xe, ranks, resid, eig_abs, stable) -> str:
    """Markdown: the equilibria of the ``L = d = 2`` counterexample, one row each."""
    import numpy as np

    from ..tables import markdown_table

    vec = lambda v: "(" + ", ".join(f"{x:.4f}" for x in v) + ")"
    rows = [(vec(xe[i, 0]), vec(xe[i, 1]), int(ranks[i]), f"{resid[i]:.1e}",
             ", ".join(f"{x:.4f}" for x in np.sort(eig_abs[i])), "yes" if stable[i] else "no") for i in range(len(xe))]
    return markdown_table(["token 1", "token 2", "rank", "fixed-point residual", "|Jacobian eigenvalues|", "stable"],
                          rows)


def ranks_table(reach: dict) -> str:
    """Markdown: the share of random inputs ending at each rank, per construction (``{name: ranks}``)."""
    import numpy as np

    from ..tables import markdown_table

    ranks = sorted({int(r) for v in reach.values() for r in np.asarray(v).ravel()})
    rows = [(f"rank {k}", *(f"{float(np.mean(np.asarray(v) == k)):.3f}" for v in reach.values())) for k in ranks]
    return markdown_table(["rank reached", *reach], rows)


def final_mu_table(final: dict, residual: dict) -> str:
    """Markdown: per (regime, mask), the largest final μ over inputs and the chart residual."""
    from ..tables import markdown_table

    return markdown_table(["attention regime", "mask", "largest final μ", "chart residual"],
                          [(r, m, f"{v:.1e}", f"{residual[(r, m)]:.1e}") for (r, m), v in final.items()])


def geometry_table(stats: dict, layers) -> str:
    """Markdown: the per-layer token geometry ``stats[model][key] = (layers,)``."""
    from ..tables import markdown_table

    keys = [("full_rank", "full rank", ".2f"), ("sigma_min", "smallest singular value", ".2e"),
            ("mean_abs_cos", "mean |cos|", ".3f"), ("rel_mu", "μ(X)/‖X‖", ".3f")]
    header = ["layer"] + [f"{label}, {model}" for model in stats for _, label, _ in keys]
    rows = [[int(layer)] + [format(float(stats[model][k][i]), f) for model in stats for k, _, f in keys]
            for i, layer in enumerate(layers)]
    return markdown_table(header, rows)


def proof_steps_words(ok: bool) -> str:
    """Whether both checked steps of proof (a) held on every run."""
    return "hold on every run" if ok else "do not hold on every run"


def heights_words(never_decrease: bool) -> str:
    """``never`` / ``sometimes``: how often the heights of proof (a) decreased."""
    return "never" if never_decrease else "sometimes"


def max_rank_words(max_rank: int, d: int) -> str:
    """The largest rank seen with centring, against ``d - 1``."""
    return "= d − 1" if max_rank == d - 1 else f"(d − 1 = {d - 1})"


# ------------------------------------------------------------------ the LayerNorm ablation stand-in

def causal_over_draws(X0, P, n_draws: int) -> dict:
    """Causal minus complete attention, the depth-averaged log10 relative spread (``mean_log_spread``
    of μ/√L, floor 1e-12) under LayerNorm with an orthogonal W_V, over ``n_draws`` weight draws: each
    draw its own Haar W_V and Gaussian W_QK per scale of ``P.qk_scales`` (seeds ``draw_seed``), the
    inputs ``X0`` spread over the draws (``draw_slices``) and each input run under both masks (paired).
    Returns ``{"s = <scale>": DrawEstimate}``; with fewer inputs than ``n_draws``, one draw per input."""
    import numpy as np
    import torch

    from ... import attention as mk
    from ... import collapse as cl
    from ... import ln_dynamics as ld
    from ...draws import draw_seed, draw_slices, over_draws

    per_draw = {f"s = {s:g}": [] for s in P.qk_scales}
    masks = {m: mk.make_mask(m, P.n_tokens_a) for m in ("complete", "causal")}
    for k, part in enumerate(draw_slices(len(X0), min(n_draws, len(X0)))):
        gen = torch.Generator().manual_seed(draw_seed(P.seed, k))
        W_V = ld.random_orthogonal(P.d_a, gen)
        for s in P.qk_scales:
            W_QK = torch.randn((P.d_a, P.d_a), generator=gen, dtype=torch.float64) * s
            spread = {m: cl.mean_log_spread(ld.iterate_ln(X0[part], W_V, mask, P.n_steps_a, W_QK)[1]
                                            / np.sqrt(P.n_tokens_a), floor=1e-12) for m, mask in masks.items()}
            per_draw[f"s = {s:g}"].append(spread["causal"] - spread["complete"])
    return {r: over_draws(v) for r, v in per_draw.items()}


def ablation_training(P):
    """The tiny decoders' schedule: chapter 3's default (16 sequences a step, AdamW at 0.01 decaying
    linearly to 0), ``P.ablation_steps`` steps of ``P.seq_len`` bytes."""
    from ...models import tiny_decoder as td

    return td.TinyTraining(steps=P.ablation_steps, schedule_steps=P.ablation_steps, batch=16, seq_len=P.seq_len,
                           lr=0.01)


def ablation_geometry(norm: str, texts, windows, training, seed: int, store=None) -> dict:
    """Train the tiny decoder with ``norm`` in front of attention (``"layernorm"`` or ``"none"``) and
    measure its residual stream on ``windows: (n, seq)`` (``layer_geometry``). Returns per-model numbers:
    ``full`` the full-rank share of the worst layer after the embeddings, ``sigma`` that layer's mean
    smallest singular value of the unit tokens (the worst over layers after the embeddings), ``mu`` the
    last layer's mean μ(X)/‖X‖, ``cos`` the largest layer mean |cos| after the embeddings, ``loss`` the
    mean training loss of the last tenth of the steps; ``layers``, each of :data:`ABLATION_STATISTICS` per
    layer and window, ``(layers, windows)``, which :func:`ablation_effects` pairs across the two norms."""
    import numpy as np

    from ...ln_dynamics import layer_geometry
    from ...models import tiny_decoder as td

    model, losses = td.train_tiny_decoder(td.TinyDecoderConfig(norm=norm), texts, training, seed, store=store)
    g = layer_geometry(lambda ids: td.tiny_residual_stream(model, ids), windows, chunk=64, store=store,
                       key={"model": f"tiny decoder, {norm}", "seed": seed, "steps": training.steps})
    m = {k: v.mean(1) for k, v in g.items()}
    return {"full": float(m["full_rank"][1:].min()), "sigma": float(m["sigma_min"][1:].min()),
            "mu": float(m["rel_mu"][-1]), "cos": float(m["mean_abs_cos"][1:].max()),
            "loss": float(losses[-max(1, len(losses) // 10):].mean()),
            "layers": {k: np.asarray(g[k], dtype=float) for k in ABLATION_STATISTICS}}


#: The residual-stream statistics of the ablation kept per layer and window (``layer_geometry``'s names).
ABLATION_STATISTICS = ("rel_mu", "sigma_min", "full_rank", "mean_abs_cos")


def ablation_effects(runs: dict) -> dict:
    """With LayerNorm minus without, paired by seed and by window, each an estimate over the seeds
    (``over_draws``: a seed is one pair of decoders, the spread of its windows' differences the
    within-seed error). ``runs``: ``{"layernorm": [...], "none": [...]}`` of :func:`ablation_geometry`,
    seed by seed on the same windows. ``mu``: the last layer's μ(X)/‖X‖; ``sigma`` and ``full``: the
    smallest singular value of the unit tokens and the full-rank share in each decoder's worst layer after
    the embeddings, each window read at the layer chosen on the other half of the windows
    (``cross_fit_extreme``, so the noise does not pick the worst layer); ``per_layer``: for each of
    :data:`ABLATION_STATISTICS`, the estimate at every layer (0: the embeddings)."""
    import attention_geometry as ag
    from ...selection import cross_fit_extreme

    pairs = list(zip(runs["layernorm"], runs["none"]))

    def diff(read):
        return ag.over_draws([read(a["layers"]) - read(b["layers"]) for a, b in pairs])

    def worst(key):
        return lambda layers: cross_fit_extreme(layers[key][1:].T, "min")

    n_layers = pairs[0][0]["layers"]["rel_mu"].shape[0]
    return {"mu": diff(lambda layers: layers["rel_mu"][-1]), "sigma": diff(worst("sigma_min")),
            "full": diff(worst("full_rank")),
            "per_layer": {k: [diff(lambda layers, k=k, i=i: layers[k][i]) for i in range(n_layers)]
                          for k in ABLATION_STATISTICS}}


def ablation_verdicts(effects: dict) -> dict:
    """The verdicts of the ablation's two rows, over the seeds (:func:`ablation_effects`): ``"mu"``, the last
    layer's μ(X)/‖X‖ with LayerNorm minus without, and ``"sigma"``, the worst layer's smallest singular value
    with LayerNorm minus without; each the sign of the paired difference, decisive only over enough seeds on
    its side (``draws_verdict``). The rows and :func:`ablation_words` both read these."""
    import attention_geometry as ag

    what = {"mu": "μ(X)/‖X‖ with LayerNorm minus without",
            "sigma": "smallest singular value with LayerNorm minus without"}
    return {k: ag.draws_verdict(ag.sign_verdict(effects[k], +1, what=w), effects[k]) for k, w in what.items()}


def ablation_words(verdicts: dict) -> str:
    """What the ablation's two rows decide (``verdicts``: :func:`ablation_verdicts`): a sentence on the last
    layer's distance from rank one and on the worst layer's smallest singular value."""
    mu = {"reproduced": "the decoders with LayerNorm end further from rank one than those without",
          "refuted": "the decoders with LayerNorm end nearer rank one than those without"}.get(
        str(verdicts["mu"].label), "the seeds do not agree on which decoders end further from rank one")
    sigma = {"reproduced": "their worst layer keeps a larger smallest singular value",
             "refuted": "their worst layer has a smaller smallest singular value"}.get(
        str(verdicts["sigma"].label), "they do not agree on which worst layer keeps the larger smallest singular value")
    return f"In this stand-in, {mu}, and {sigma}."


def ablation_layer_table(runs: dict, effects: dict) -> str:
    """Markdown: per layer (0: the embeddings), the smallest singular value of the unit tokens and the
    mean |cos| of each decoder (mean over seeds and windows) and with LayerNorm minus without (over the
    seeds, 95 % interval; :func:`ablation_effects`)."""
    import numpy as np

    from ..tables import markdown_table

    def mean(norm, key, i):
        return np.mean([r["layers"][key][i].mean() for r in runs[norm]])

    def interval(e):
        lo, hi = e.interval()
        return f"{e.value:+.3f} ({lo:+.3f} to {hi:+.3f})"

    rows = [(i, *(f"{mean(n, key, i):.3f}" if n else interval(effects["per_layer"][key][i])
                  for key in ("sigma_min", "mean_abs_cos") for n in ("layernorm", "none", None)))
            for i in range(len(effects["per_layer"]["sigma_min"]))]
    return markdown_table(["layer", "smallest singular value, LayerNorm", "without", "difference (95 % interval)",
                           "mean |cos|, LayerNorm", "without", "difference (95 % interval)"], rows)


def ablation_table(runs: dict) -> str:
    """Markdown: per norm, each measure's mean over the seeds ± its standard error (``{norm: [ablation_geometry
    results]}``)."""
    import numpy as np

    from ..tables import markdown_table

    labels = [("full", "full-rank share, worst layer"), ("sigma", "smallest singular value, worst layer"),
              ("mu", "μ(X)/‖X‖, last layer"), ("cos", "largest layer mean |cos|"), ("loss", "training loss, last tenth")]
    rows = []
    for norm, results in runs.items():
        cells = []
        for key, _ in labels:
            x = np.array([r[key] for r in results])
            cells.append(f"{x.mean():.3f} ± {x.std(ddof=1) / np.sqrt(x.size):.3f}")
        rows.append((norm, len(results), *cells))
    return markdown_table(["norm in front of attention", "decoders", *(label for _, label in labels)], rows)
