"""Chapter 9's computed words: each wording function of the chapter module on both sides of its
threshold (no chapter execution)."""

from attention_geometry.book.chapters import synthesis as words


def test_rate_words_count_the_rates_the_rule_reproduces():
    assert words.rate_words(["reproduced"] * 3) == "all 3 lie within 0.01 of the proposition's rate"
    assert words.rate_words(["reproduced", "differs", "reproduced"]).startswith("2 of the 3")
    assert words.rate_words(["differs", "not decided"]).startswith("none of the 2")


def test_window_reach_words_flip_where_the_window_reaches_the_first_token():
    assert "out of" in words.window_reach_words(32, 63)   # H w = 4 * 8 < L - 1 = 63
    assert "within" in words.window_reach_words(64, 63)
    assert "within" in words.window_reach_words(63, 63)   # exactly reached: L - j <= H w


def test_window_first_words():
    assert words.window_first_words(0.0, True) == "exactly 0.0 in every sequence"
    assert words.window_first_words(0.123, False) == "0.123 on average, not the same in every sequence"


def test_first_token_spread_words():
    assert words.first_token_spread_words(True) == "stays farthest"
    assert words.first_token_spread_words(False) == "is not the farthest"


def test_recency_visible_words_flip_with_the_verdict():
    seen, open_ = words.recency_visible_words(True)
    assert seen.startswith("and at random weights it is visible") and open_ == "is above 1/2 here"
    unseen, open_ = words.recency_visible_words(False)
    assert unseen.startswith("but at random weights it is not visible") and open_ == "is not above 1/2 here"


def test_ledger_status_words():
    assert "read from" in words.ledger_status_words(True)
    assert "make book" in words.ledger_status_words(False)


def test_own_source_words_name_the_proposition_where_one_proves_the_row():
    assert "prop-syn-window" in words.own_source_words("window-field")
    assert words.own_source_words("rope-recency").startswith("measured in this chapter only")


def test_yardstick_words_flip_at_d_h_plus_one_keys():
    assert "all selectable" in words.yardstick_words(9, 8)
    assert "outnumber" in words.yardstick_words(10, 8)


def test_first_key_words_name_the_variants_with_primacy():
    assert words.first_key_words({"a": "reproduced", "b": "not decided"}).endswith("in a")
    assert words.first_key_words({"a": "refuted"}).startswith("in none")


def test_alpha_trend_words_follow_the_change_and_its_error():
    from attention_geometry.stats import Estimate

    assert words.alpha_trend_words(Estimate(0.41, 0.01), Estimate(0.64, 0.01)) == "rises from 0.41 to 0.64"
    assert words.alpha_trend_words(Estimate(0.64, 0.01), Estimate(0.41, 0.01)).startswith("falls")
    assert words.alpha_trend_words(Estimate(0.41, 0.05), Estimate(0.43, 0.05)) == "stays near 0.41"


def test_residual_depth_words_flip_at_half_the_asymptotic_effect():
    assert "less than half" in words.residual_depth_words(1.19, 5.06)
    assert "at least half" in words.residual_depth_words(3.0, 5.06)


def test_trend_words_read_the_rule_and_the_sign():
    assert words.trend_words("reproduced", 0.3) == "rises"
    assert words.trend_words("reproduced", -0.3) == "falls"
    assert words.trend_words("not decided", 0.3) == "no decided trend"
    assert words.trend_words("reproduced", -1.0, up="up", down="down") == "down"


def test_decisive_decides_a_clear_direction_and_not_noise():
    from attention_geometry.draws import over_draws

    assert words.decisive(over_draws([0.9, 1.1, 1.0, 0.95, 1.05, 1.0, 0.98, 1.02])).label == "reproduced"
    assert words.decisive(over_draws([-0.9, -1.1, -1.0, -0.95, -1.05, -1.0, -0.98, -1.02])).label == "reproduced"
    assert words.decisive(over_draws([0.1, -0.2, 0.15, -0.1, 0.05, -0.05, 0.2, -0.15])).label == "not decided"
    # a clear mean, but one draw of eight on the other side: the draws do not agree
    assert words.decisive(over_draws([1.0, 1.1, 0.9, 1.2, 1.0, 0.9, 1.1, -0.1])).label == "not decided"
    # at a family-wise level a borderline interval no longer clears 0
    borderline = over_draws([0.2, 0.5, 0.3, 0.6, 0.1, 0.4, 0.2, 0.05])
    assert words.decisive(borderline).label == "reproduced"
    assert words.decisive(borderline, level=1 - 0.05 / 1000).label == "not decided"


def test_interaction_words_flip_with_the_count_of_decided_interactions():
    assert words.interaction_words(0, 35).startswith("No interaction has a decided direction")
    assert words.interaction_words(7, 35).startswith("The components interact: 7 of 35")


def test_lines_words_say_every_line_or_name_each():
    assert words.lines_words({"a": "falls", "b": "falls"}, "it") == "it falls on every one of the 2 lines"
    assert words.lines_words({"a": "no decided trend"}, "it") == "it has no decided trend on any of the 1 lines"
    mixed = words.lines_words({"d 16": "falls", "d 32": "rises"}, "it")
    assert mixed == "it falls at d 16; rises at d 32"


def test_design_source_words():
    assert "stored run" in words.design_source_words(True)
    assert words.design_source_words(False).startswith("this run")


def test_selectability_reading_says_which_comparisons_are_informative():
    from attention_geometry.stats import Estimate
    from attention_geometry.book.chapters.synthesis import selectability_reading

    zero, one = Estimate(0.0, 0.0), Estimate(1.0, 0.0)
    none, half, every = [0.0] * 64, [0.0] * 32 + [3.0] * 32, [20.0, 21.0, 22.0, 23.0] * 16
    assert selectability_reading(zero, 0.0, none, 9, 8).startswith("uninformative: n = 9 ≤ d_h + 1 = 9")
    assert selectability_reading(zero, 0.0, none, 12, 8) == "uninformative: neither has an unselectable key"
    assert selectability_reading(Estimate(0.1, 0.02), 1.0, none, 9, 8).startswith("informative")
    assert selectability_reading(Estimate(0.1, 0.02), 1.0, half, 20, 8).startswith("fewer")
    assert selectability_reading(Estimate(0.9, 0.02), 1.0, half, 20, 8).startswith("more")
    assert selectability_reading(Estimate(0.5, 0.05), 1.0, half, 20, 8).startswith("as many")
    for pct, where in ((10.0, "below"), (30.0, "above"), (21.5, "within")):
        text = selectability_reading(one, pct, every, 64, 8)
        assert text.startswith("sets uninformative") and f"lies {where}" in text
