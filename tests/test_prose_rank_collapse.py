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
