"""Chapter 7, *The Cesàro calculus* (``book/07_cesaro.md``): its parameters."""

import math
import sys

import numpy as np
from typing import Annotated, Sequence

from pydantic import Field

from ..cost import CostModel
from ..params import ChapterParams, Seed

__all__ = ["CesaroParams", "agreement_words", "alternating_onset_words", "float64_range_words", "cancellation_words",
           "finite_words", "underflow_words", "limit_share_words", "limit_end_words", "total_variation_words",
           "first_token_words", "tail_words", "alpha_d_words", "spike_at_dead_zone_words", "middle_at_spike_words",
           "apart_words", "trend_words", "floor_words", "eta_words", "SCHEDULE_A_MINS", "schedule_values",
           "schedule_words", "eta_all_words"]


class CesaroParams(ChapterParams):
    """The parameters of chapter ``cesaro``; each default is the value in its ``parameters`` cell."""

    seed: Seed = 0
    L: int = Field(2048, ge=3, le=1_048_576, description="sequence length of the profiles studied (the paper: 2048)")
    H: int = Field(24, ge=2, le=400, description="depth, number of layers (the paper: 24)")
    alphas: list[Annotated[float, Field(ge=0.0, le=1.0)]] = Field([0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 0.99, 1.0],
        min_length=1, max_length=12, description="residual mixing weights alpha compared")
    exact_L_max: int = Field(7, ge=2, le=12, description="largest L for the exact matrix-power checks")
    n_random_checks: int = Field(20, ge=1, le=500,
        description="random (L, H, alpha) cases checked in exact arithmetic")
    heatmap_L_max: int = Field(2048, ge=4, le=4096,
        description="largest L (powers of 2 from 4) in the float64 error map")
    heatmap_H_max: int = Field(48, ge=1, le=96, description="largest H in the float64 error map")
    exact_reference_L_max: int = Field(256, ge=4, le=1024,
        description="largest L with an exact-rational reference in the error map")
    limit_L_max: int = Field(1_048_576, ge=16, le=8_388_608, description="largest L in the continuous-limit study")
    limit_Hs: list[Annotated[int, Field(ge=1, le=200)]] = Field([4, 8, 24], min_length=1, max_length=6,
        description="depths H of the continuous-limit study")
    n_alpha_grid: int = Field(101, ge=11, le=2001, description="alphas on the grid of the which-claim-holds figure")

    smoke = {"L": 128, "H": 8, "alphas": [0.1, 0.5, 1.0], "exact_L_max": 4, "n_random_checks": 3,
             "heatmap_L_max": 64, "heatmap_H_max": 8, "exact_reference_L_max": 64, "limit_L_max": 4096,
             "limit_Hs": [2, 4], "n_alpha_grid": 11}
    presets = {
        "paper": {"L": 2048, "H": 24},
    }
    # the shares of the time at the defaults that scale with each group of parameters; the seconds: the
    # chapter at its defaults in the cold book build of a clean clone on 2026-12-03 (commit 11be456; two
    # kernels at a time on the 2-core reference machine, synthesis alone on both cores); a clean clone's
    # build starts the longest first by them
    cost = CostModel(28, (
        (0.3, {"L": 1, "H": 1, "len:alphas": 1}),
        (0.3, {"heatmap_L_max": 1, "heatmap_H_max": 1}),
        (0.2, {"limit_L_max": 1, "len:limit_Hs": 1}),
    ))


# The words of chapter 7 that compare or conclude. Each function takes the run's numbers and returns
# the words the chapter glues, so that a rerun at other parameters says what its own numbers show.

#: log10 of the largest finite float64 (about 1.8e308).
FLOAT64_MAX_LOG10 = math.log10(sys.float_info.max)
#: Decimal digits a float64 carries (53 bits).
FLOAT64_DIGITS = 53 * math.log10(2)


def agreement_words(n_equal: int, n_checked: int) -> str:
    """How ``n_equal`` of ``n_checked`` exact comparisons came out."""
    if n_equal == n_checked:
        return "agree exactly"
    return f"agree exactly, and the other {n_checked - n_equal} do not: a closed form is wrong"


def alternating_onset_words(first_1e6: int, first_bad: int, L_max: int) -> tuple[str, str]:
    """Where, in a scan of ``L`` up to ``L_max``, the float64 alternating sum's error first exceeds
    one part in a million and first reaches 100 % (0: not within the scan)."""
    onset = (f"first exceeds one part in a million at L = {first_1e6}" if first_1e6
             else f"stays within one part in a million up to L = {L_max}")
    total = f"reaches 100 % at L = {first_bad}" if first_bad else f"stays below 100 % up to L = {L_max}"
    return onset, total


def float64_range_words(max_term_log10: float) -> str:
    """Whether a term of size ``10**max_term_log10`` lies beyond float64's range."""
    return "beyond" if max_term_log10 > FLOAT64_MAX_LOG10 else "within"


def cancellation_words(digits: float) -> str:
    """The ``digits`` a sum must cancel against the digits a float64 carries."""
    return "more than" if digits > FLOAT64_DIGITS else "fewer than"


def finite_words(n_finite: int, L: int, digits: float) -> str:
    """How many of the ``L`` entries of the float64 alternating sum are finite, and what that is worth
    when up to ``digits`` decimal digits must cancel."""
    if n_finite < L:
        return f"only {n_finite} of the {L} entries come out finite at all"
    if digits > FLOAT64_DIGITS:
        return (f"all {L} entries come out finite, but those that must cancel more digits than float64 "
                "carries have no correct digit")
    return f"all {L} entries come out finite, with at least {FLOAT64_DIGITS - digits:.0f} correct digits"


def underflow_words(n_zeros: int) -> str:
    """What the plain float64 recursion returns at a large depth, by its count of exact zeros."""
    if n_zeros:
        return f"underflows: it returns {n_zeros} exact zeros"
    return "does not underflow yet: it returns no zeros"


def limit_share_words(j0: int, L: int) -> str:
    """Where the continuous limit is off by more than 10 %, given that it is accurate from ``j0`` on."""
    if j0 <= 1:
        return "everywhere"
    return f"so an error above 10 % is confined to the first {(j0 - 1) / L:.1%} of the positions"


def limit_end_words(j0: int, L: int) -> str:
    """Where the 1 % stretch of the limit starts at alpha = 1."""
    if j0 >= L - 1:
        return f"starts only at j = {j0}: never before the end"
    return f"starts at j = {j0}"


def total_variation_words(tv: float, L_e_H: float) -> str:
    """The total variation between the exact profile and the limit at alpha = 1, with ``L e^{-H}``."""
    if tv < 0.01:
        return (f"Total variation is no guide: at α = 1 it is only {tv:.1e}, because both put nearly all "
                f"their mass on the first token (L e^-H = {L_e_H:.1e})")
    return f"At α = 1 the total variation between the two is {tv:.1e} (L e^-H = {L_e_H:.1e})"


def first_token_words(p1_at_half_or_more: Sequence[float]) -> str:
    """The first token's probability over the residual weights alpha >= 1/2 of the run."""
    if not len(p1_at_half_or_more):
        return "(no residual weight of 1/2 or more is among the parameter alphas)"
    low = min(p1_at_half_or_more)
    if low > 0.5:
        return "which for α ≥ 1/2 is most of the mass"
    return f"which for α ≥ 1/2 is at least {low:.2f} of the mass"


def tail_words(tail_max: float, fraction: float = 0.1) -> str:
    """The largest share of the profile on the last ``fraction`` of positions without the last token,
    against the share ``fraction`` a flat profile would give."""
    if tail_max < fraction:
        return ("less influential than its share, apart from the final token itself, so a one-token spike "
                "cannot be what makes a whole final document easier to use")
    return "at least as influential as its share"


def alpha_d_words(alpha_d: float) -> str:
    """The threshold alpha_D, or words that say there is none."""
    return f"{alpha_d:.3f}" if math.isfinite(alpha_d) else "not reached for any α"


def spike_at_dead_zone_words(log10_last: float, log10_middle: float) -> str:
    """At alpha_D: the last token's influence against the middle's (both log10)."""
    if log10_last < log10_middle - 1:
        return "far below the middle: where the middle is a dead zone, there is no recency at all"
    if log10_last < log10_middle:
        return "below the middle: where the middle is a dead zone, there is no recency spike"
    return "above the middle: here a dead zone and a recency spike hold together"


def middle_at_spike_words(log10_excess: float) -> str:
    """At alpha_U: log10 of the middle density in units of 1/(H-1)!, against the dead-zone factor 10."""
    if log10_excess > 1:
        return "more than ten times the dead-zone bound: where the spike rises, the middle is no dead zone"
    return "within the dead-zone bound: here the spike rises over a dead zone"


def apart_words(depths: Sequence[int], both: Sequence[bool], L: int) -> tuple[str, int | None]:
    """Whether the U and the dead zone exclude each other over the ``depths`` tested (``both[k]``:
    some alpha has both at ``depths[k]``), and from which depth on they do (None: not at the
    largest depth)."""
    apart = [h for h, b in zip(depths, both) if not b]
    n_overlap = sum(map(bool, both))
    if depths[-1] not in apart:
        return (f"fails at L = {L}: at the largest depth tested, H = {depths[-1]}, some α has both "
                f"(they overlap at {n_overlap} of the {len(depths)} depths)"), None
    h_apart = min(h for h in apart if all(h2 in apart for h2 in depths if h2 >= h))
    words = f"holds at L = {L} for every depth tested from H = {h_apart} to {depths[-1]}"
    if n_overlap:
        words += (f"; below H = {h_apart}, 1/(H-1)! is not small, the dead-zone bound says nothing about a "
                  f"dead zone, and the two overlap ({n_overlap} of the {len(depths)} depths)")
    return words, h_apart


def trend_words(values: Sequence[float], up: str, down: str) -> str:
    """Whether ``values`` (over increasing depth; non-finite ones skipped) move in one direction."""
    v = [x for x in values if math.isfinite(x)]
    steps = [b - a for a, b in zip(v, v[1:])]
    if steps and all(s > 0 for s in steps):
        return up
    if steps and all(s < 0 for s in steps):
        return down
    return "does not move in one direction"


def floor_words(floor: float, claimed: float = 2.0, atol: float = 0.5) -> str:
    """The paper's peak-to-trough ``10**claimed`` (to within ``atol`` decades) against the scalar
    model's floor ``10**floor``."""
    if claimed + atol < floor:
        return ("lies below that floor by more than half a decade: the measured Qwen2 profile is shallower "
                "than anything the paper's own model can produce with one residual weight for every layer at "
                "this size")
    if claimed - atol >= floor:
        return "lies above that floor: the scalar model can produce it at this size"
    return "lies within half a decade of that floor: the scalar model may or may not reach it"


def eta_all_words(ratio_logit: float, ratio_rho: float, tol: float = 0.3) -> str:
    """Whether the logit gradient summed over layers and queries (middle over start, ``ratio_logit``)
    falls like the profile (``ratio_rho``): within ``tol`` decades, by less, or not at all."""
    if abs(math.log10(ratio_logit / ratio_rho)) < tol:
        return "falls like the forward signal, as §6 says"
    if ratio_logit < 10 ** -tol:
        return "falls too, but by less than the forward signal" if ratio_logit > ratio_rho else \
            "falls by more than the forward signal"
    return "does not fall towards the middle"


def eta_words(attenuated: bool) -> str:
    """Whether the logit gradient of the final query is attenuated like the profile."""
    return ("is attenuated by the positional factor, as §6 says" if attenuated
            else "is not attenuated by the positional factor")


#: The lower bounds on every layer's residual weight at which the floor over schedules is computed.
SCHEDULE_A_MINS = (0.0, 0.02, 0.05, 0.1, 0.2)


def schedule_values(L: int, H: int, floor: float, alpha_floor: float, claimed: float = 2.0) -> tuple[dict, float]:
    """The floor of the peak-to-trough ratio over schedules of residual weights, each at least
    ``a_min`` (:data:`SCHEDULE_A_MINS` and the constant floor's own weight): a table, the smallest
    lower bound at which the floor over schedules reaches ``10**claimed`` (bisection), and the words:
    ``(glued values, that bound)`` (NaN when even the constant floor's weight stays below it)."""
    import pandas as pd
    from IPython.display import Markdown

    import attention_geometry as ag
    from ..tables import dataframe_table
    rows = []
    for a in sorted(set(SCHEDULE_A_MINS) | {round(alpha_floor, 4)}):
        f, x = ag.schedule_floor(L, H, a)
        rows.append({"every α_ℓ at least": a, "log10 floor over schedules": round(f, 3),
                     "largest α_ℓ of that schedule": round(float(x.max()), 3),
                     "the others": f"{x.min():.3f} to {np.sort(x)[-2]:.3f}" if H > 1 else "—",
                     "log10 floor, one α for all": round(floor, 3) if a <= alpha_floor else "—"})
    lo, hi = 0.0, alpha_floor
    reach = None
    floor_at = lambda a: ag.schedule_floor(L, H, a, polish=False)[0]  # the two families; the table polishes
    if floor_at(hi) >= claimed:  # the floor over schedules grows with the bound
        for _ in range(30):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if floor_at(mid) < claimed else (lo, mid)
            if hi - lo < 1e-4:
                break
        reach = hi
    reach_value = reach if reach is not None else float("nan")
    return ({"cesaro-tab-schedules": Markdown(dataframe_table(pd.DataFrame(rows), index=False)),
             "cesaro-schedule-reach": reach_value, "cesaro-schedule-words": schedule_words(reach, floor, claimed)},
            reach_value)


def schedule_words(reach: float | None, floor: float, claimed: float = 2.0) -> str:
    """What the floor over schedules says against the constant-weight floor and the paper's ratio."""
    if reach is None:
        return (f"with layer-dependent weights the scalar model reaches the paper's 10^{claimed:g} even with every "
                "weight as large as at the constant floor")
    return (f"one residual weight for every layer cannot go below 10^{floor:.2f}, but layer-dependent weights can: "
            f"the floor over schedules is 1 (flat) when a layer may skip attention altogether, and stays below "
            f"the paper's 10^{claimed:g} until every layer's weight is at least {reach:.3f}; the schedule at the "
            "floor mixes in one layer and barely in the others")
