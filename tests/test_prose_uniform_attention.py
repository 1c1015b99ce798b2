"""Chapter 2's computed words flip on either side of their thresholds (no chapter execution)."""

from attention_geometry.book.chapters import uniform_attention as ch


def test_sign_words_read_the_interval():
    assert ch.sign_words((-2.0, -1.0), "lower", "higher", "neither") == "lower"
    assert ch.sign_words((1.0, 2.0), "lower", "higher", "neither") == "higher"
    assert ch.sign_words((-1.0, 1.0), "lower", "higher", "neither") == "neither"


def test_rounding_words_flip_at_rounding():
    assert "up to rounding" in ch.rounding_words(1e-15)
    assert "more than rounding" in ch.rounding_words(1e-3)


def test_enumeration_words_flip():
    assert ch.enumeration_words(3, 5) == "stops before it has visited"
    assert ch.enumeration_words(5, 5) == "visits"
