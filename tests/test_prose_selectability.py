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


def test_along_words_read_each_trend_both_ways():
    from attention_geometry.stats import Estimate
    down, up, flat = Estimate(-5.0, 1.0, 20), Estimate(5.0, 1.0, 20), Estimate(0.1, 1.0, 20)
    keys = ch.TREND
    assert ch.along_words({keys[0]: down, keys[1]: down}).startswith("training lowers the fraction")
    assert ch.along_words({keys[0]: up, keys[1]: up}).startswith("training raises the fraction")
    assert "does not measurably change" in ch.along_words({keys[0]: flat, keys[1]: flat})
    mixed = ch.along_words({keys[0]: down, keys[1]: up})
    assert "lowers the fraction before LayerNorm" in mixed and "raises the fraction after the norm without" in mixed


def test_plateau_shortfall_and_stand_in_follow_the_schedule_and_the_stop():
    from types import SimpleNamespace

    from attention_geometry.models.tiny_decoder import TinyTraining
    original = TinyTraining(steps=1000)
    stand_in = TinyTraining(steps=2000, schedule_steps=2000, lr=1e-2, warmup=100, decay="cosine")
    stopped, capped = SimpleNamespace(plateau=True), SimpleNamespace(plateau=False)
    assert ch.schedule_stand_in(original) == "" and "1,000 of the original's 50,000 steps" in \
        ch.plateau_shortfall(original, {"layernorm": stopped})
    assert "stand-in schedule" in ch.schedule_stand_in(stand_in) and "cosine" in ch.schedule_stand_in(stand_in)
    assert ch.plateau_shortfall(stand_in, {"layernorm": stopped, "projection": stopped}) == ""
    assert "step cap" in ch.plateau_shortfall(stand_in, {"layernorm": stopped, "projection": capped})
    short = TinyTraining(steps=450, schedule_steps=450, seq_len=128, lr=1e-2, warmup=10)
    assert "128 of the original's 1,024" in ch.plateau_shortfall(short, {"layernorm": stopped})
    assert "a plateau" in ch.stopped_words({"layernorm": SimpleNamespace(plateau=True, steps=300)})
    assert "the step cap" in ch.stopped_words({"layernorm": SimpleNamespace(plateau=False, steps=450)})


def test_the_trace_along_training_at_the_paper_settings_comes_from_the_stored_run(tmp_path):
    """The stored run's words and table with its stopping points; this run's figure and table, with a
    sentence saying so, where no stored run holds the trace or this run is the paper run."""
    import json

    from attention_geometry.book.chapters import selectability as chapter
    from attention_geometry.book.paper import PaperRun

    def glue(name, value):
        return {"output_type": "display_data", "metadata": {"scrapbook": {"name": name, "mime_prefix": ""}},
                "data": {"text/markdown": value, "text/plain": "<IPython.core.display.Markdown object>"}}
    (tmp_path / "03_selectability.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "source": "",
        "outputs": [glue("sel-along-words", "training raises it"), glue("sel-tab-along", "| step |")]}]}))
    stored = PaperRun(chapter="selectability", folder=tmp_path, parameters={}, claims=None, provenance=None,
                      values={"sel-along-sets": 24, "sel-along-stopped": "both at step 1,700",
                              "sel-along-held-0": 5.54, "sel-along-held-ln": 2.57})
    g = chapter.along_paper_glue(stored, "this run's figure", "| this |")
    assert g["sel-along-paper-words"].data == (
        "At the paper's settings (the stored run: 24 key sets; training stopped for both at step 1,700; held-out "
        "loss from 5.54 to 2.57 nats per byte with LayerNorm), training raises it.")
    assert g["sel-tab-along-paper"].data == "| step |" and g["fig-sel-along-paper"] == "this run's figure"
    none = chapter.along_paper_glue(None, "this run's figure", "| this |")
    assert none["sel-along-paper-words"].data.startswith("No stored run") and none["sel-tab-along-paper"].data == "| this |"
    own = chapter.along_paper_glue(stored, "this run's figure", "| this |", this_is_the_run=True)
    assert own["sel-along-paper-words"].data.startswith("This run is the paper-scale run")
