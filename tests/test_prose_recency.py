"""Chapter 6's computed words flip when their numbers cross the threshold they name, so that a
rerun at other parameters cannot leave a false comparison in the text (no chapter execution)."""

import math

from attention_geometry.book.chapters import recency as ch


def test_the_heat_map_words_follow_whether_the_effect_is_below_one_standard_error():
    assert ch.observability_words(True, 64).startswith("below one standard error")
    assert ch.observability_words(False, 64).startswith("above one standard error")
    assert "d = 64" in ch.observability_words(False, 64)


def test_the_sign_words_follow_the_rows_below_zero():
    assert "never contradicts" in ch.closed_sign_words(0)
    assert "contradicts the sign" in ch.closed_sign_words(2) and "never" not in ch.closed_sign_words(2)


def test_the_adjusted_form_removes_most_of_the_miss_only_below_half_of_it():
    assert ch.adjusted_words(-0.40, -0.10) == "the adjusted form removes most of it"
    assert ch.adjusted_words(-0.40, -0.30) == "the adjusted form does not remove most of it"


def test_the_rise_words_name_an_interior_peak_only_when_there_is_one():
    assert "largest at the largest c" in ch.rise_trend_words({})
    assert "up to c = 0.6 (ω = 0)" in ch.rise_trend_words({0.0: 0.6})


def test_the_isotropic_words_follow_the_distance_from_one_half():
    assert ch.iso_words(1.5, 24).startswith("stays within 1.5 standard errors")
    assert ch.iso_words(4.2, 24).startswith("strays up to 4.2 standard errors")
    assert "not measured" in ch.iso_words(math.nan, 0)


def test_the_extension_summary_groups_the_additions_by_outcome():
    text = ch.extension_summary(["a", "b", "c"], ["survives", "is not established", "survives"])
    assert text == "it survives with a, c; it is not established with b"


def test_the_share_of_wins_is_about_half_only_near_one_half():
    assert ch.half_words(0.505).startswith("about half the time")
    assert ch.half_words(0.56).startswith("in a share well away from half")
