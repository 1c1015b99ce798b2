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


def test_fig1c_verdict_reads_each_column_both_ways():
    import numpy as np
    ds = np.arange(3, 16)
    read = np.array([np.nan if v is None else v for v in ch.PAPER_FIG1C_CONTOUR.values()])
    close = (read, read - 0.5, read + 0.5)
    assert ch.fig1c_verdict(ds, close).label.value == "reproduced"
    far = (read + 20, read + 19.5, read + 20.5)
    assert ch.fig1c_verdict(ds, far).label.value in ("refuted", "differs")
    reached = np.where(np.isnan(read), 58.0, read)  # the book reaches one half where the paper does not
    assert ch.fig1c_verdict(ds, (reached, reached - 0.5, reached + 0.5)).label.value in ("refuted", "differs")


def test_yardstick_words_say_when_a_comparison_is_uninformative():
    assert ch.yardstick_words([0.0, 0.0], [0.0, 0.0]).startswith("uninformative")
    assert ch.yardstick_words([0.0, 1.0], [0.0, 0.0]).startswith("above a Gaussian level of 0")
    assert ch.yardstick_words([10.0, 11.0, 12.0], [90.0, 92.0, 94.0]) == "below the Gaussian level"
    assert ch.yardstick_words([95.0, 96.0, 97.0], [90.0, 91.0, 92.0]) == "above the Gaussian level"
    assert ch.yardstick_words([90.0, 92.0, 94.0], [91.0, 92.0, 93.0]).startswith("within")


def test_corner_words_read_the_interval_against_one_half():
    assert ch.corner_words(0.9, 100).startswith("the rule")
    assert ch.corner_words(1 / 12, 12).startswith("the exception")   # the smoke set's corner, n = 6, d = 4
    assert ch.corner_words(2 / 12, 12).startswith("the exception")
    assert ch.corner_words(0.5, 4).startswith("neither")             # four sets resolve nothing
    assert ch.corner_words(0.0, 4).startswith("neither")


def test_reach_words_and_rows_read_the_interval_over_heads():
    import numpy as np

    gauss = np.array([0.80, 0.82, 0.85, 0.90, 0.88, 0.81])
    for shift, word, label in ((-0.2, "less reachable than", "refuted"), (+0.05, "more reachable than", "reproduced"),
                               (0.0, "not told apart from", "not decided")):
        measured = gauss + shift + (np.array([0.01, -0.01, 0.02, -0.02, 0.0, 0.0]) if shift == 0 else 0.001 * np.arange(6))
        summary = ch.reach_summary(np.stack([measured, gauss, np.ones(6)])[None])  # one "layer" of six heads
        assert ch.reach_words(summary["diff"]) == word
        glued = ch.reach_glue({"SmolLM2-135M": summary}, {"SmolLM2-135M": (600, 64)})
        assert glued["sel-reach-smol-words"].data == word
        P = ch.SelectabilityParams()
        rows = ch.reach_claims(P, {"SmolLM2-135M": summary}, {}, "")
        assert [r.id for r in rows] == ["sel-reach-smol"] and rows[0].verdict.label.value == label
        assert rows[0].claim_kind.value == "reading"
