"""Chapter 9, *Synthesis: what each component does to attention* (``book/09_synthesis.md``): its parameters."""

from typing import Annotated, Sequence

from pydantic import Field, model_validator

from ..cost import CostModel
from ..params import ChapterParams, Seed

__all__ = ["SynthesisParams", "rate_words", "window_reach_words", "window_first_words", "first_token_spread_words",
           "recency_visible_words", "ledger_status_words", "PROVED_HERE", "own_source_words", "yardstick_words", "selectability_reading",
           "first_key_words", "CITES", "alpha_trend_words",
           "residual_depth_words", "DESIGN_NORMS", "DESIGN_MASKS", "RESPONSES", "run_design", "stored_design",
           "decisive", "trend_words", "effect_rows", "line_rows", "line_estimates", "design_claims",
           "design_source_words", "interaction_words", "lines_words", "term_name"]


class SynthesisParams(ChapterParams):
    """The parameters of chapter ``synthesis``; each default is the value in its ``parameters`` cell."""

    seed: Seed = 0
    d: int = Field(32, ge=4, le=512, description="width of the switchable decoder (a multiple of 2 n_heads)")
    n_tokens: int = Field(64, ge=8, le=256, description="tokens per sequence")
    n_layers: int = Field(4, ge=1, le=32,
        description="depth H of the baseline decoder (the depth variant doubles it)")
    n_heads: int = Field(4, ge=1, le=16, description="attention heads")
    batch: int = Field(64, ge=8, le=100_000, description="sequences per variant")
    jac_batch: int = Field(8, ge=2, le=256, description="sequences for the exact Jacobian profiles")
    anisotropy: float = Field(0.5, ge=0.0, le=0.99, description="anisotropy a of the inputs")
    alpha: float = Field(0.5, ge=0.01, le=1.0, description="residual weight alpha of the baseline (1: no residual)")
    window: int = Field(8, ge=1, le=255, description="width w of the one-sided window variant")
    scales: list[Annotated[float, Field(gt=0.0, le=100.0)]] = Field([0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0],
        min_length=2, max_length=12, description="weight scales of the uniformity study")
    cesaro_L: int = Field(64, ge=4, le=1024, description="sequence length of the Cesàro collapse check")
    n_draws: int = Field(8, ge=1, le=256,
        description="independent draws of the weights, the sequences spread over them (at most jac_batch); "
                    "verdicts decide on 8 or more")
    design_draws: int = Field(8, ge=2, le=256,
        description="weight draws of the designed sweep, the same in every cell of one width (verdicts decide on 8 "
                    "or more)")
    design_batch: int = Field(2, ge=2, le=256, description="input sequences per draw and cell of the designed sweep")
    design_jac: int = Field(2, ge=2, le=64,
        description="of them, sequences with exact Jacobian profiles (at most design_batch)")
    design_alphas: list[Annotated[float, Field(gt=0.0, le=1.0)]] = Field([0.5, 1.0], min_length=2, max_length=6,
        description="residual weights of the norm x residual x mask design (1: no residual)")
    design_depths: list[Annotated[int, Field(ge=1, le=64)]] = Field([2, 4, 8], min_length=2, max_length=6,
        description="depths H of the depth x width design")
    design_widths: list[Annotated[int, Field(ge=4, le=512)]] = Field([16, 32], min_length=2, max_length=6,
        description="widths d of the depth x width design (multiples of 2 n_heads)")

    @model_validator(mode="after")
    def _heads_fit_the_width(self):
        # each head's width d / n_heads is even: the rotary embedding turns pairs of coordinates
        if self.d % (2 * self.n_heads):
            raise self.reject("d", f"is not a multiple of 2 n_heads = {2 * self.n_heads}", "a multiple of 2 n_heads")
        # every draw has at least one sequence with exact Jacobians
        if self.n_draws > self.jac_batch:
            raise self.reject("n_draws", f"is more than jac_batch = {self.jac_batch}", "at most jac_batch")
        if self.design_jac > self.design_batch:
            raise self.reject("design_jac", f"is more than design_batch = {self.design_batch}", "at most design_batch")
        if any(w % (2 * self.n_heads) for w in self.design_widths):
            raise self.reject("design_widths", f"holds a width that is not a multiple of 2 n_heads = {2 * self.n_heads}",
                              "multiples of 2 n_heads")
        for name in ("design_alphas", "design_depths", "design_widths"):
            if len(set(getattr(self, name))) < len(getattr(self, name)):
                raise self.reject(name, "repeats a level", "distinct levels")
        return self

    # smoke: window = 5 gives H w = 10 >= L - 1 = 9, so the first input reaches the last output, which
    # the defaults' 4 x 8 < 63 does not (tests/test_chapters.py)
    smoke = {"d": 8, "n_tokens": 10, "n_layers": 2, "n_heads": 2, "batch": 8, "jac_batch": 2, "window": 5,
             "scales": [0.5, 1.0], "cesaro_L": 8, "n_draws": 2, "design_draws": 2, "design_batch": 2,
             "design_jac": 2, "design_depths": [1, 2], "design_widths": [8, 16]}
    # the designed sweep at a size that decides its interactions: 128 weight draws of 8 sequences (4 with
    # exact Jacobians) per cell, three residual weights and four depths and widths; the rest of the chapter
    # at four times the defaults' draws and sequences. The stored run took 1,055 s on the idle 2-core
    # machine (2026-12-04); a paper run resumes (cell, group of draws) by (cell, group)
    presets = {
        "paper": {"design_draws": 128, "design_batch": 8, "design_jac": 4, "design_alphas": [0.25, 0.5, 1.0],
                  "design_depths": [2, 4, 8, 16], "design_widths": [16, 32, 64, 128], "n_draws": 32,
                  "batch": 256, "jac_batch": 32},
    }
    # the shares of the time at the defaults that scale with each group of parameters; the seconds: the
    # chapter at its defaults in the cold book build of a clean clone on 2026-12-03 (commit 11be456; two
    # kernels at a time on the 2-core reference machine, synthesis alone on both cores); a clean clone's
    # build starts the longest first by them
    # (the designed sweep, added after that build: about a quarter of the chapter's time at the defaults in
    # a timed run, two thirds of it the norm x residual x mask design)
    cost = CostModel(60, (
        (0.55, {"batch": 1, "n_layers": 1, "d": 2, "n_tokens": 2}),
        (0.18, {"design_draws": 1, "design_batch": 1, "len:design_alphas": 1}),
        (0.09, {"design_draws": 1, "design_batch": 1, "sum:design_depths": 1, "sum:design_widths": 1.5}),
    ))


# The words of chapter 9 that compare or conclude, from the run's numbers, so that a rerun at other
# parameters says what its own numbers show.


def rate_words(labels: Sequence[str]) -> str:
    """How many fitted collapse rates the rule "within 0.01 of the proposition's rate" reproduces."""
    n_ok = sum(label == "reproduced" for label in labels)
    if n_ok == len(labels):
        return f"all {len(labels)} lie within 0.01 of the proposition's rate"
    if n_ok == 0:
        return f"none of the {len(labels)} lies within 0.01 of the proposition's rate"
    return f"{n_ok} of the {len(labels)} lie within 0.01 of the proposition's rate"


def window_reach_words(reach: int, distance: int) -> str:
    """Whether ``H w`` (``reach``) covers the distance ``L - 1`` from the first token to the last."""
    if reach < distance:
        return "so the first input is out of the last output's reach"
    return "so the first input is within the last output's reach"


def window_first_words(first_over_middle: float, same_in_every_sequence: bool) -> str:
    """The first input's share over the middle's in the windowed decoder."""
    if same_in_every_sequence:
        return f"exactly {first_over_middle:.1f} in every sequence"
    return f"{first_over_middle:.3g} on average, not the same in every sequence"


def first_token_spread_words(farthest_is_first: bool) -> str:
    """Whether the first token is the farthest from the mean token after the last layer."""
    return "stays farthest" if farthest_is_first else "is not the farthest"


def recency_visible_words(seen: bool) -> tuple[str, str]:
    """Whether the recency probability of the scores lies above 1/2 at random weights: the clause of the
    two-recencies paragraph and that of the open questions."""
    if seen:
        return ("and at random weights it is visible here (the recency probability is above 1/2)",
                "is above 1/2 here")
    return ("but at random weights it is not visible here (the recency probability is not above 1/2)",
            "is not above 1/2 here")


def ledger_status_words(have_ledger: bool) -> str:
    """Where the last column of the component table comes from."""
    if have_ledger:
        return "the last column is read from the executed chapters' verdict tables"
    return "the last column needs the other chapters executed first: `make book`"



#: The rows of the component table that a proposition of chapter 9 proves (row key -> its label).
PROVED_HERE = {"residual-collapse": "prop-syn-cesaro-collapse", "window-field": "prop-syn-window"}

#: Ledger ids cited outside the component table: the collapse rates of chapter 4, and what the other
#: chapters found beyond their papers' models.
CITES = {"cesaro-rates": ["late-rate", "exponential", "local-helps"],
         "beyond-trained": ["sel-lm", "pretrained-rank-anisotropy", "nope-trained", "u-persists", "ptt-pretrained",
                            "valley-deepens"]}


def own_source_words(key: str) -> str:
    """The last column of a component row that no other chapter measures (its quantity: the row's tag)."""
    if key in PROVED_HERE:
        return f"proved in this chapter ({{prf:ref}}`{PROVED_HERE[key]}`); no other chapter measures it"
    return "measured in this chapter only: no other chapter measures this quantity"


def yardstick_words(n_keys: int, d_h: int) -> str:
    """What a head of width ``d_h`` against the last query's ``n_keys`` keys does to the Gaussian yardstick."""
    if n_keys <= d_h + 1:
        return (f"the last query's {n_keys} keys are at most d_h + 1 = {d_h + 1}, so Gaussian keys of width "
                f"{d_h} are all selectable, and an unselectable key needs more than chance")
    return (f"the last query's {n_keys} keys outnumber d_h + 1 = {d_h + 1}, so a Gaussian cloud of width {d_h} "
            "already hides keys inside its hull: an unselectable key is what the head's width predicts, "
            "with or without a norm")


def selectability_reading(sets, keys_pct: float, gauss_keys_pct, n_keys: int, d_h: int) -> str:
    """Whether a variant's selectability column says anything against Gaussian keys of the same n and d_h, and
    what. ``sets``: the variant's fraction of key sets with an unselectable key (an estimate over draws);
    ``keys_pct``: its mean % of unselectable keys per set; ``gauss_keys_pct``: that % in each Gaussian set
    (chapter 3's ``gaussian_percent``). A fraction of 0 for both is uninformative (at n <= d_h + 1 keys in
    general position are all selectable), and so is 1 for both (every set has one): the percentage of keys
    then decides."""
    import numpy as np

    from ...stats import mean_estimate, proportion_estimate
    g = np.asarray(gauss_keys_pct, dtype=float)
    if g.max() == 0:
        if sets.value == 0:
            why = (f"n = {n_keys} ≤ d_h + 1 = {d_h + 1}, where keys in general position are all selectable"
                   if n_keys <= d_h + 1 else "neither has an unselectable key")
            return f"uninformative: {why}"
        return "informative: unselectable keys where Gaussian keys have none"
    if sets.value < 1 or g.min() == 0:
        lo, hi = sets.interval()
        g_lo, g_hi = proportion_estimate(int((g > 0).sum()), g.size).interval()
        return ("fewer sets with one than Gaussian keys" if hi < g_lo else "more sets with one than Gaussian keys"
                if lo > g_hi else "as many sets with one as Gaussian keys (not told apart)")
    g_lo, g_hi = mean_estimate(g).interval() if g.size > 1 and g.std() > 0 else (g.mean(), g.mean())
    where = "below" if keys_pct < g_lo else "above" if keys_pct > g_hi else "within the 95 % interval of"
    return f"sets uninformative (every set has one, Gaussian too); the % of keys lies {where} the Gaussian level"


def first_key_words(labels: dict[str, str]) -> str:
    """Which variants' last query scores the first key above the middle (``labels``: variant -> the label of
    the sign rule "key 1 above the middle, over the draws")."""
    above = [name for name, label in labels.items() if label == "reproduced"]
    if not above:
        return "in none of the variants drawn does the first key score measurably above the middle"
    return "the first key scores above the middle (score primacy) in " + ", ".join(above)


def alpha_trend_words(first, last) -> str:
    """How the effective residual weight moves from the first layer to the last (two estimates over draws)."""
    from ...stats import difference_estimate
    from ...words import trend_word

    change = difference_estimate(last, first)
    return trend_word(change, above=f"rises from {first.value:.2f} to {last.value:.2f}",
                      below=f"falls from {first.value:.2f} to {last.value:.2f}",
                      neither=f"stays near {first.value:.2f}")


def residual_depth_words(exact_ratio: float, asymptotic_ratio: float) -> str:
    """Whether, at the decoder's depth, the exact operator predicts a residual effect on the relative collapse
    closer to none (a ratio near 1) or to the asymptotic rates' ratio (on a log scale)."""
    import math

    if math.log(exact_ratio) < 0.5 * math.log(asymptotic_ratio):
        return ("at this depth the exact operator itself predicts less than half the asymptotic effect of the "
                "residual (on a log scale), so a small change in the residual's collapse row of the component "
                "table is what the operator predicts")
    return ("at this depth the exact operator already predicts at least half the asymptotic effect of the "
            "residual (on a log scale)")



# ---------------------------------------------------------------------------------------------
# The designed sweep: norm x residual x mask, and depth x width, over weight draws.

#: The norms and masks of the norm x residual x mask design (the window's width: the chapter's ``window``).
DESIGN_NORMS = ("none", "layernorm", "rmsnorm")
DESIGN_MASKS = ("causal", "window")

#: The responses of the designed sweep (:data:`attention_geometry.synthesis.DESIGN_RESPONSES`), as the tables
#: name them.
RESPONSES = {"rp_visible": "score recency (RP, visible keys)", "mu_rel": "relative collapse",
             "unselectable": "sets with an unselectable key", "log_last_mid": "log last/middle (spike)",
             "first_share": "first input's share (primacy)"}


def run_design(P, store=None) -> dict:
    """Both designs at the parameters ``P``: ``{"nrm": ..., "dw": ...}``, each ``{"factors": [(name,
    levels)], "Y": {response: nested list (draws, *levels)}}`` (JSON-able, as a paper run stores it)."""
    from dataclasses import replace

    from ... import synthesis as syn

    base = syn.SynthConfig(n_layers=P.n_layers, n_heads=P.n_heads, alpha=P.alpha)
    common = dict(n=P.n_tokens, batch=P.design_batch, jac_batch=P.design_jac, anisotropy=P.anisotropy,
                  seed=P.seed, n_draws=P.design_draws, store=store)

    def nrm(norm, alpha, mask):
        window = mask == "window"
        return replace(base, norm=norm, alpha=alpha, mask="one_sided" if window else "causal",
                       window=P.window if window else None), P.d

    def dw(depth, width):
        return replace(base, n_layers=depth), width

    out = {}
    for key, factors, cell in (
            ("nrm", [("norm", list(DESIGN_NORMS)), ("residual weight", sorted(P.design_alphas)),
                     ("mask", list(DESIGN_MASKS))], nrm),
            ("dw", [("depth", sorted(P.design_depths)), ("width", sorted(P.design_widths))], dw)):
        Y = syn.design_responses([levels for _, levels in factors], cell, name=f"design-{key}", **common)
        out[key] = {"factors": factors, "Y": {r: v.tolist() for r, v in Y.items()}}
    return out


def stored_design(values: dict | None) -> dict | None:
    """The designs a stored run glued (``syn-design-data``), or None."""
    data = (values or {}).get("syn-design-data")
    return data if isinstance(data, dict) and {"nrm", "dw"} <= set(data) else None


def term_name(term) -> str:
    """A factorial term as the tables name it: ``"norm: none - layernorm × mask: window - causal"``."""
    return " × ".join(f"{f}: {lev} - {ref}" for f, lev, ref in term.contrasts)


def decisive(est, *, level: float = 0.95, what: str = "the effect"):
    """The verdict on the direction of ``est`` (a DrawEstimate over the weight draws): the sign rule at
    ``level`` for the sign it has, through the draws rule. ``reproduced``: that direction is decided."""
    from ...verdicts import draws_verdict, sign_verdict

    return draws_verdict(sign_verdict(est, 1 if est.value >= 0 else -1, level=level, what=what), est)


def trend_words(label: str, value: float, *, up: str = "rises", down: str = "falls",
                neither: str = "no decided trend") -> str:
    """The word for a slope or an effect whose direction the rule judged (``label``: the label of
    :func:`decisive`): ``up`` or ``down`` where it is decided, by the sign of ``value``; ``neither``
    otherwise."""
    if label != "reproduced":
        return neither
    return up if value > 0 else down


def _cell(est, label: str) -> str:
    if est.se == 0 and est.value == 0:  # a window's first input: out of reach in every draw
        return "0 in every draw"
    return f"{est.value:+.3g} ± {est.se:.2g} ({trend_words(label, est.value, up='up', down='down', neither='not decided')})"


def effect_rows(design: dict, *, level: float = 0.95) -> tuple[list[tuple], dict[int, int]]:
    """The rows of an effects table (term, then one cell per response: value ± se and its direction, or
    "not decided"), each response's terms judged at the Bonferroni level for their number; and the count of
    decided cells by the order of their term (1: main effects, 2 and more: interactions)."""
    import numpy as np

    from ...factorial import factorial_effects, familywise_level

    factors = [(name, levels) for name, levels in design["factors"]]
    per = {r: factorial_effects(np.asarray(design["Y"][r]), factors) for r in RESPONSES}
    n_terms = len(next(iter(per.values())))
    lev = familywise_level(n_terms, level)
    rows, decided = [], {}
    for i in range(n_terms):
        cells = []
        for r in RESPONSES:
            term = per[r][i]
            label = decisive(term.estimate, level=lev).label
            decided[term.order] = decided.get(term.order, 0) + (label == "reproduced")
            cells.append(_cell(term.estimate, label))
        rows.append((term_name(per[next(iter(RESPONSES))][i]), *cells))
    return rows, decided


def line_estimates(design: dict, axis: int) -> dict:
    """Per response, per line (the other factors' levels, as one label), the cell means along ``axis``
    with their standard errors over the draws: ``{response: {line: [DrawEstimate per level]}}``."""
    import numpy as np

    from ...draws import over_draws

    factors = design["factors"]
    out = {}
    for r in RESPONSES:
        Y = np.moveaxis(np.asarray(design["Y"][r]), axis + 1, -1)
        others = [f for j, f in enumerate(factors) if j != axis]
        lines = {}
        for idx in np.ndindex(Y.shape[1:-1]):
            name = ", ".join(f"{f[0]} {f[1][i]}" for f, i in zip(others, idx))
            lines[name] = [over_draws(Y[(slice(None), *idx, k)]) for k in range(Y.shape[-1])]
        out[r] = lines
    return out


def line_rows(design: dict, axis: int, x, *, level: float = 0.95) -> tuple[list[tuple], dict]:
    """Every plotted line's trend: the slope of each response against ``x`` (the levels of factor ``axis``,
    numeric) per draw, over the draws, judged at the Bonferroni level for the lines of one panel; rows
    (line, then one cell per response) and ``{response: {line: (slope, label)}}``."""
    import numpy as np

    from ...factorial import familywise_level, line_slopes

    factors = design["factors"]
    others = [f for j, f in enumerate(factors) if j != axis]
    read, names = {}, None
    for r in RESPONSES:
        slopes = line_slopes(np.asarray(design["Y"][r]), x, axis=axis)
        lev = familywise_level(slopes.size, level)
        read[r] = {", ".join(f"{f[0]} {f[1][i]}" for f, i in zip(others, idx)):
                   (slopes[idx], decisive(slopes[idx], level=lev).label) for idx in np.ndindex(slopes.shape)}
        names = list(read[r])
    rows = [(name, *(_cell(*read[r][name]) for r in RESPONSES)) for name in names]
    return rows, read


def design_claims(nrm: dict, dw: dict, *, settings: str) -> list:
    """Chapter 9's readings of the designed sweep (rows of its verdict table):

    * ``syn-design-mask-residual``: the residual's effect on the first input's share depends on the mask,
      negatively (residual weight up: more primacy under the causal mask, by Prop. 9.1's rate
      ``1 - alpha/2``; none under a window whose receptive field misses the first input);
    * ``syn-design-depth-collapse``: the relative collapse falls with depth on every width line;
    * ``syn-design-depth-spike``: the last-token spike (log last/middle) falls with depth on every width line
      (the residual-only path ``(1 - alpha)^H``)."""
    import numpy as np

    from ...factorial import factorial_effects, line_slopes
    from ...verdicts import Claim, ClaimKind, Source, all_verdict, draws_verdict, sign_verdict

    factors = [(name, levels) for name, levels in nrm["factors"]]
    lo_a, hi_a = min(factors[1][1]), max(factors[1][1])
    term = next(t for t in factorial_effects(np.asarray(nrm["Y"]["first_share"]), factors,
                                             reference={"residual weight": lo_a})
                if term_name(t) == f"residual weight: {hi_a} - {lo_a} × mask: window - causal")
    est = term.estimate
    inter = draws_verdict(sign_verdict(est, -1, what="residual x mask interaction on the first input's share"), est)
    depths = np.log2(dw["factors"][0][1])
    lines = {}
    for r in ("mu_rel", "log_last_mid"):
        slopes = line_slopes(np.asarray(dw["Y"][r]), depths, axis=0)
        lines[r] = {f"d = {w}": s for w, s in zip(dw["factors"][1][1], slopes)}
    per_width = {r: all_verdict({k: draws_verdict(sign_verdict(s, -1, what=f"slope of {r} per doubling of H"), s)
                                 for k, s in v.items()}, what="every width") for r, v in lines.items()}

    def shown(r):
        return ", ".join(f"{k}: {s.format()}" for k, s in lines[r].items())

    return [
        Claim(id="syn-design-mask-residual", paper="chowdhury2026lost", where="abstract", source=Source.ABSTRACT,
              claim_kind=ClaimKind.READING,
              statement="this book's reading of “an inherent geometric property of the causal decoder with "
                        "residual connections”: the mask and the residual act on the first input's share "
                        "together, not additively (more residual weight on attention raises it under a causal "
                        "mask, and cannot under a window that keeps the first input out of reach)",
              measured=f"residual weight {hi_a} vs {lo_a} × window vs causal on the first input's share: "
                       f"{est.format()}", settings=settings, verdict=inter, section="sec-syn-design"),
        Claim(id="syn-design-depth-collapse", paper="wu2024masks", where="abstract", source=Source.ABSTRACT,
              claim_kind=ClaimKind.READING,
              statement="this book's reading of “pure masked attention still suffers from exponential collapse”: "
                        "with LayerNorm and the residual the relative collapse still deepens with depth, at "
                        "every width",
              measured=f"slope of mu(X)/||X|| per doubling of H: {shown('mu_rel')}", settings=settings,
              verdict=per_width["mu_rel"], section="sec-syn-design",
              differs_from="a decoder with LayerNorm and the residual, where the sentence is about pure masked "
                           "attention (chapter 4's row)"),
        Claim(id="syn-design-depth-spike", paper="chowdhury2026lost", where="§3.1", source=Source.FULL_TEXT,
              claim_kind=ClaimKind.READING,
              statement="this book's reading of “(N^H)_{L,j} = (1-α)^H δ_{L,j} + …”: the last-token spike, "
                        "carried by the residual-only path, shrinks with depth at every width",
              measured=f"slope of log(last/middle) per doubling of H: {shown('log_last_mid')}", settings=settings,
              verdict=per_width["log_last_mid"], section="sec-syn-design"),
    ]


def design_source_words(stored: bool) -> str:
    """Where the designed sweep's figures and tables come from."""
    if stored:
        return "the stored run at the paper preset's sizes (`results/synthesis/paper/`)"
    return ("this run, at its own parameters (no stored run at the paper preset's sizes yet: "
            "`make paper CHAPTER=synthesis` makes one)")


def interaction_words(decided: int, total: int) -> str:
    """The section's opening: how many interaction cells (term x response) have a decided direction."""
    if decided == 0:
        return (f"No interaction has a decided direction here (0 of {total} interaction terms over the "
                "responses): on this evidence the components act additively")
    return (f"The components interact: {decided} of {total} interaction terms over the responses have a decided "
            "direction, so the effect of one switch depends on the others")


def lines_words(words_by_line: dict[str, str], what: str) -> str:
    """One clause on the trends of several lines (``{line: word}``, words from :func:`trend_words`)."""
    kinds = set(words_by_line.values())
    if len(kinds) == 1:
        word = kinds.pop()
        if word == "no decided trend":
            return f"{what} has no decided trend on any of the {len(words_by_line)} lines"
        return f"{what} {word} on every one of the {len(words_by_line)} lines"
    return f"{what} " + "; ".join(f"{word} at {line}" for line, word in words_by_line.items())
