"""Chapter 3's computed words flip on either side of their thresholds (no chapter execution)."""

from attention_geometry.book.chapters import selectability as ch


def test_agreement_words_flip():
    assert ch.agreement_words(0) == "agree on every key"
    assert ch.agreement_words(3) == "disagree on 3 keys"


def test_small_and_ln_words_flip_at_zero():
    assert ch.small_words(0.0) == "as affine independence demands"
    assert "demands 0" in ch.small_words(0.25)
    assert "in action" in ch.ln_words(0.0)
    assert "demands 0" in ch.ln_words(0.25)


def test_lm_words_read_the_interval():
    assert "worse" in ch.lm_words((0.01, 0.02))
    assert "better" in ch.lm_words((-0.02, -0.01))
    assert "not told apart" in ch.lm_words((-0.01, 0.01))


def test_reading_words_flip_when_a_layer_is_not_below():
    assert "in every layer" in ch.reading_words(["below"] * 8)
    assert "4 of the 8" in ch.reading_words(["below"] * 4 + ["within"] * 4)


def test_corner_words_read_the_interval_against_one_half():
    assert ch.corner_words(0.9, 100).startswith("the rule")
    assert ch.corner_words(1 / 12, 12).startswith("the exception")   # the smoke set's corner, n = 6, d = 4
    assert ch.corner_words(2 / 12, 12).startswith("the exception")
    assert ch.corner_words(0.5, 4).startswith("neither")             # four sets resolve nothing
    assert ch.corner_words(0.0, 4).startswith("neither")
