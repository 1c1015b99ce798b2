"""Chapter 9, *Synthesis: what each component does to attention* (``book/09_synthesis.md``): its parameters."""

from typing import Annotated, Sequence

from pydantic import Field, model_validator

from ..cost import CostModel
from ..params import ChapterParams, Seed

__all__ = ["SynthesisParams", "rate_words", "window_reach_words", "window_first_words", "first_token_spread_words",
           "recency_visible_words", "ledger_status_words", "PROVED_HERE", "own_source_words", "yardstick_words", "selectability_reading",
           "first_key_words", "CITES", "alpha_trend_words",
           "residual_depth_words"]


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

    @model_validator(mode="after")
    def _heads_fit_the_width(self):
        # each head's width d / n_heads is even: the rotary embedding turns pairs of coordinates
        if self.d % (2 * self.n_heads):
            raise self.reject("d", f"is not a multiple of 2 n_heads = {2 * self.n_heads}", "a multiple of 2 n_heads")
        # every draw has at least one sequence with exact Jacobians
        if self.n_draws > self.jac_batch:
            raise self.reject("n_draws", f"is more than jac_batch = {self.jac_batch}", "at most jac_batch")
        return self

    # smoke: window = 5 gives H w = 10 >= L - 1 = 9, so the first input reaches the last output, which
    # the defaults' 4 x 8 < 63 does not (tests/test_chapters.py)
    smoke = {"d": 8, "n_tokens": 10, "n_layers": 2, "n_heads": 2, "batch": 8, "jac_batch": 2, "window": 5,
             "scales": [0.5, 1.0], "cesaro_L": 8, "n_draws": 2}
    # the shares of the time at the defaults that scale with each group of parameters; the seconds: the
    # chapter at its defaults in the cold book build of a clean clone on 2026-12-03 (commit 11be456; two
    # kernels at a time on the 2-core reference machine, synthesis alone on both cores); a clean clone's
    # build starts the longest first by them
    cost = CostModel(26, (
        (0.8, {"batch": 1, "n_layers": 1, "d": 2, "n_tokens": 2}),
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
CITES = {"cesaro-rates": ["exponential", "local-helps"],
         "beyond-trained": ["sel-lm", "pretrained-geometry", "nope-trained", "u-persists", "ptt-pretrained",
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
