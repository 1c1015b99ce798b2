"""Chapter 4's computed words flip with the numbers they describe (no chapter execution)."""

import math

from attention_geometry.book.chapters import rank_collapse as ch
from attention_geometry.stats import Estimate


def test_a_bound_holds_or_fails():
    assert ch.holds_word(True) == "holds" and ch.holds_word(False) == "fails"
    assert "every run" in ch.holds_everywhere_words(True)
    assert "at least one" in ch.holds_everywhere_words(False)


def test_slack_words_follow_the_sign():
    assert ch.slack_words(7.9) == "lies 7.9 decades above"
    assert ch.slack_words(-0.5) == "lies 0.5 decades below"
    assert ch.slack_words(0.0) == "coincides with"


def test_the_window_bound_against_the_complete_one():
    assert "does not fall at all" in ch.bound_fall_words(1.0, 0.5)
    assert "less than" in ch.bound_fall_words(0.9, 0.5)
    assert "at least as far" in ch.bound_fall_words(0.1, 0.5)


def test_skip_scale_words_flip_at_zero_growth():
    assert "more than one" in ch.skip_scale_words(0.3)
    assert ch.skip_scale_words(-0.3) == "does not grow the scale"


def test_heads_words():
    assert ch.heads_words(True) == "collapse the tokens as well"
    assert "do not" in ch.heads_words(False)


def test_decades_words_flip_and_say_level_within_the_tolerance():
    assert ch.decades_words(9.4) == "9.4 decades above"
    assert ch.decades_words(-2.0, below="lower") == "2.0 decades lower"
    assert ch.decades_words(0.01) == "level with"
    assert ch.decades_words(-0.01, level="the float32 level") == "the float32 level"


def test_depth_words_say_whether_every_run_reached_the_threshold():
    assert ch.depth_words(3.0, 1.0) == "reaches 10⁻⁴ after 3.0 layers on average"
    assert "in any run" in ch.depth_words(65.0, 0.0)
    assert "fraction 0.50" in ch.depth_words(40.0, 0.5)


def test_fraction_words():
    assert ch.fraction_words(1.0, "x") == "x in every run"
    assert ch.fraction_words(0.0, "x") == "x in no run"
    assert ch.fraction_words(0.25, "x") == "x in a fraction 0.25 of the runs"


def test_tables_show_no_nan_or_none():
    radius = {"complete": 1, "two documents": None}
    summ = {"complete": {"rate": [math.nan, math.nan], "depth": [3, 3], "reached": [1, 1], "points": [2, 2],
                         "mean_log_spread": [-4.0, -4.2]},
            "complete + LN": {"rate": [0.5, 0.7], "depth": [4, 4], "reached": [1, 1], "points": [4, 4],
                              "mean_log_spread": [-3.0, -3.2]}}
    text = ch.radius_table(radius) + ch.collapse_table(summ, radius)
    text += ch.estimate_table({"causal": Estimate(0.1, 0.02)}, ["mask", "effect"])
    assert "nan" not in text.lower() and "None" not in text
    assert "no centre" in text and "too few layers to fit" in text


def test_late_rate_cells_say_what_an_infinite_or_zero_rate_means():
    assert ch.late_rate_cell(float("inf")).startswith("∞") and ch.late_rate_cell(0.0).startswith("0 (no collapse")
    assert ch.late_rate_cell(math.log(2)) == "0.6931"
    assert ch.late_start_cell([3, 5, 7], 10) == "5"
    assert ch.late_start_cell([3, 11, 5], 10) == "4 (2 of 3 inputs)"
    assert ch.late_start_cell([11, 11], 10) == "not within the depth"


def test_late_roles_separate_a_slower_rate_from_a_delay():
    rates = {"causal": math.log(2), "one-sided": math.log(2), "window": 0.14, "complete": math.inf, "docs": 0.0}
    starts = {"causal": 21, "one-sided": 26, "window": 6, "complete": 65, "docs": 17}
    roles = ch.late_roles(rates, starts, 64)
    assert roles == {"one-sided": "delays", "window": "slows", "complete": "at once", "docs": "no collapse"}
    assert ch.late_roles(rates, {**starts, "one-sided": 21}, 64)["one-sided"] == "same"
    assert ch.late_roles(rates, {**starts, "causal": 65, "one-sided": 65}, 64)["one-sided"] == "same rate"
    assert ch.late_roles({**rates, "window": 0.8}, starts, 64)["window"] == "speeds"
    text = ch.late_roles_words(roles)
    assert "slow the late collapse (a smaller late rate): window" in text and "only delay it" in text
    assert "one-sided" in text.split("only delay it")[1]
    assert ch.late_roles_words({"one-sided": "delays"}).startswith("Against the causal mask, the masks that slow the "
                                                                 "late collapse: none")


def test_docs_start_words_say_whether_the_same_windows_collapse():
    assert ch.docs_start_words(1, 1, 1, 16).endswith("exactly this window collapses fully")
    assert "exactly these windows" in ch.docs_start_words(2, 2, 2, 16)
    assert "In none of the 3 windows" in ch.docs_start_words(0, 0, 0, 3)
    assert "2 collapse fully, 1 of them among the former" in ch.docs_start_words(1, 2, 1, 16)


def test_the_late_table_shows_no_nan_or_none():
    rows = {"complete": {"lam2": 0.0, "rate": math.inf, "start": "not within the depth", "z": None, "x": None,
                         "onset": None},
            "causal": {"lam2": 0.5, "rate": math.log(2), "start": "21", "z": Estimate(0.693, 0.0002),
                       "x": Estimate(0.69, 0.005), "onset": Estimate(5.6, 0.4)}}
    text = ch.late_table(rows)
    assert "nan" not in text.lower() and "None" not in text and "inf" not in text
    assert "no late window" in text and "∞" in text


def test_docs_apart_words():
    assert ch.docs_apart_words(0, "reproduced").startswith("No window")
    assert "too few" in ch.docs_apart_words(15, None)
    assert ch.docs_apart_words(1, "reproduced").endswith("the same rule gives *reproduced*")


def _late_fits(masks, n_layers, n_inputs, rate_of, seed=0):
    """Synthetic late-window fits: each input's μ decays at ``rate_of(mask name)`` per layer from its
    late window on, with a small random walk on the log (each input its own draw)."""
    import numpy as np

    from attention_geometry import collapse as cl

    rng = np.random.default_rng(seed)
    start, fits = {}, {"z": {}, "x": {}}
    for k, m in masks.items():
        kappa = cl.late_collapse_rate(m)
        t = np.arange(n_layers + 1)[:, None]
        start[k] = np.full(n_inputs, 2)
        if not 0 < kappa < np.inf:  # no late window: the fit is empty
            curve = np.ones((n_layers + 1, n_inputs))
            start[k] = np.full(n_inputs, n_layers + 1)
        else:
            log = -rate_of(k, kappa) * np.maximum(t - 2, 0) + 1e-3 * rng.standard_normal((n_layers + 1, n_inputs))
            curve = np.exp(log)
        fits["z"][k] = fits["x"][k] = cl.fit_late_rate(curve, start[k])
    return start, fits


def test_the_late_rate_rows_see_a_right_and_a_wrong_late_rate():
    """``late-rate`` is reproduced where each mask decays at -ln|λ₂| and differs where every mask
    decays 30 % faster; ``late-rate-local`` sees a one-sided window share the causal rate."""
    import functools

    from attention_geometry import verdicts as vd

    masks = {k: m for k, m in ch.mask_family(16, [3]).items()}
    claim = functools.partial(vd.Claim, paper="wu2024masks")
    start, fits = _late_fits(masks, 12, 8, lambda k, kappa: kappa)
    values, (rate, local) = ch.late_rate_rows(masks, start, fits, 12, "synthetic", claim)
    assert rate.id == "late-rate" and rate.verdict.label == "reproduced", rate.verdict
    assert "one-sided w=3" in local.measured and "nan" not in values["rc-tab-late"].data
    start, fits = _late_fits(masks, 12, 8, lambda k, kappa: 1.3 * kappa)
    _, (rate, _) = ch.late_rate_rows(masks, start, fits, 12, "synthetic", claim)
    assert rate.verdict.label not in ("reproduced", "not decided"), rate.verdict
