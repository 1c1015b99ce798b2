"""Chapter 8's computed words flip on the two sides of their thresholds, so its prose holds at any
parameters (no chapter execution: the functions of its chapter module are called directly)."""

import math

from attention_geometry.book.chapters import jacobians as ch


def test_single_probe_words_flip_at_ten_percent():
    assert ch.single_probe_words(0.5) == "one probe is a rough estimate"
    assert "within 10 %" in ch.single_probe_words(0.05)


def test_float32_words_flip_at_1e_3():
    assert ch.float32_words(1e-5).startswith("below 1e-3")
    assert ch.float32_words(1e-2).startswith("above 1e-3")


def test_float64_words_say_whether_the_unpatched_model_is_float64():
    assert ch.float64_words(1e-7).startswith("float32 accuracy")
    assert ch.float64_words(1e-14).startswith("float64 accuracy")


def test_uniform_and_regime_words_follow_the_score_spreads():
    assert ch.uniform_words(0.01, 0.36) == "far more uniform than the paper's"
    assert ch.uniform_words(0.2, 0.36) == "more uniform than the paper's"
    assert ch.uniform_words(0.36, 0.36) == "no more uniform than the paper's"
    assert "not in" in ch.regime_words(0.05, 0.36)
    assert "close to" in ch.regime_words(0.36, 0.36)


def test_gain_words_follow_the_interval():
    assert ch.gain_words(True).startswith("within")
    assert ch.gain_words(False).startswith("outside")


def test_late_rise_words_name_the_rising_configurations_or_none():
    listed, reading = ch.late_rise_words([])
    assert listed == "none of them" and reading.startswith("No configuration")
    listed, reading = ch.late_rise_words(["qwen2, σ₀ = 0.02", "gpt2, σ₀ = 0.1"])
    assert listed == "qwen2, σ₀ = 0.02, gpt2, σ₀ = 0.1" and reading.startswith("Where such a rise is found")


def test_fit_quality_words_flip_at_twice_the_noise():
    assert ch.fit_quality_words(0.5, 0.1).startswith("a poor fit")
    assert ch.fit_quality_words(0.15, 0.1) == "a fit within twice the noise level"


def test_heads_words_follow_the_verdict():
    assert ch.heads_words("reproduced") == "falls like"
    assert ch.heads_words("differs") == "does not fall like"
    assert ch.heads_words("not decided") == "is not resolved against"


def test_unbiased_words_flip_below_the_share_an_unbiased_estimator_gives():
    assert ch.unbiased_words(0.95).startswith("consistent with")
    assert ch.unbiased_words(0.5).startswith("fewer than")


def test_sizes_and_timing_words():
    assert "paper's shapes" in ch.sizes_note(True) and "small sizes" in ch.sizes_note(False)
    assert "timed none" in ch.timing_words(0.0, 0, 48)
    assert "0.5 s per sequence" in ch.timing_words(12.0, 24, 48)


def test_paper_cost_words_without_a_stored_run_say_so_and_print_no_nan():
    preset = {"width": 896, "probes": 4, "n_sequences": 16}
    assert "nan" not in ch.paper_cost_words(math.nan, preset, None).lower()
    words = ch.paper_cost_words(10.0, preset, 7200.0)
    assert "10 s per sequence" in words and "2.0 hours" in words


def test_tables_show_no_nan_or_none():
    text = ch.table([{"a": math.nan, "b": None, "c": "nan ± nan", "d": 1.5}]).data
    assert "nan" not in text.lower() and "none" not in text.lower() and text.count("not defined") == 3
