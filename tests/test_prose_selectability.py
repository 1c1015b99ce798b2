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


def test_sets_spread_over_the_training_seeds_are_estimated_over_the_seeds():
    """Each seed measures a consecutive share of the sets; stacked they are the sets in order, and the
    estimate over the seeds is the mean of the seeds' means with their spread (one seed: over its sets)."""
    import numpy as np
    import pytest

    assert ch.training_seeds(ch.SelectabilityParams(seed=5, tiny_seeds=3)) == [5, 6, 7]
    shares = ch.spread(list(range(10)), 4)
    assert sorted(len(s) for s in shares) == [2, 2, 3, 3] and sum(shares, []) == list(range(10))
    values = np.array([1.0, 2.0, 3.0, 10.0, 11.0, 12.0])
    two = ch.over_seeds(values, 2)
    assert two.n_draws == 2 and two.draw_means == (2.0, 11.0) and two.value == pytest.approx(6.5)
    assert two.se == pytest.approx(4.5) and two.df == 1
    one = ch.over_seeds(values, 1)
    assert one.n_draws == 1 and one.df == 5 and one.value == pytest.approx(values.mean())
    per_seed = [{"layernorm": {"normed": np.zeros((2, 4))}}, {"layernorm": {"normed": np.ones((3, 4))}}]
    stacked = ch.stack_seeds(per_seed)["layernorm"]["normed"]
    assert stacked.shape == (5, 4) and stacked[:2].sum() == 0 and stacked[2:].min() == 1


def test_a_table_row_over_seeds_judges_each_layer_against_its_band():
    """The departures from the paper's values carry each seed's side of the band ± TABLE_ATOL."""
    import numpy as np

    import attention_geometry as ag
    paper = ch.PAPER_TABLES[("projection", "normed")]
    rng = np.random.default_rng(0)
    near = np.array(paper)[None] + rng.normal(0, 0.2, (16, 4))  # 8 seeds of 2 sets, each layer at the paper's value
    est, departure = ch.table_draws({"projection": {"normed": near}}, "projection", "normed", 8)
    assert all(e.n_draws == 8 for e in est) and all(abs(d.value) < 1 for d in departure)
    inner = ag.table_verdict(est, paper, (768, 1024), (768, 1024), atol=ch.TABLE_ATOL)
    assert inner.label.value == "reproduced"
    band = (-ch.TABLE_ATOL, ch.TABLE_ATOL)
    assert ag.draws_verdict(inner, departure, reference=band).label.value == "reproduced"
    one_seed = ch.table_draws({"projection": {"normed": near}}, "projection", "normed", 1)
    verdict = ag.table_verdict(one_seed[0], paper, (768, 1024), (768, 1024), atol=ch.TABLE_ATOL)
    assert ag.draws_verdict(verdict, one_seed[1], reference=band).label.value == "not decided"


def test_stopping_and_settings_words_count_the_training_seeds():
    from types import SimpleNamespace as S

    P = ch.SelectabilityParams()
    one = {"layernorm": S(plateau=True, steps=300), "projection": S(plateau=False, steps=450)}
    assert ch.stopped_words(one) == ("the LayerNorm model at step 300 (a plateau of its held-out loss) and the model "
                                     "without scaling at step 450 (the step cap, before a plateau)")
    other = {"layernorm": S(plateau=False, steps=450), "projection": S(plateau=False, steps=450)}
    words = ch.stopped_words([one, other])
    assert "the LayerNorm model at steps 300-450 over its 2 seeds (a plateau of the held-out loss in 1 of 2" in words
    assert "the model without scaling at step 450 in each of its 2 seeds (the step cap" in words
    assert ch.training_settings(P, one).startswith("1 training seed per model, trained to step 300 / 450 (")
    assert ch.training_settings(P, [one, other]).startswith("2 training seeds per model, trained to step 300-450 / 450")
    assert "one training seed" in ch.seeds_words(1, 64) and ch.seeds_words(8, 64) == "8 training seeds"
    assert "over the 8 training seeds" in ch.replicate_words(8, "windows")
    assert "cover the choice of windows, not the training seed" in ch.replicate_words(1, "windows")


def test_the_stored_runs_one_seed_decides_only_where_the_seeds_here_agree():
    """A stored paper-scale run with one seed per model (no tiny_seeds parameter) gets the assumption on the
    rows measured on the trained models that it holds, checked only by a decisive verdict over the seeds."""
    from types import SimpleNamespace as S

    import attention_geometry as ag
    est = ag.over_draws([[0.1, 0.2]] * 8)
    decisive = ag.draws_verdict(ag.sign_verdict(est, +1), est)
    assert decisive.label.value == "reproduced"
    undecided = ag.not_tested("no values")
    rows = [ag.Claim("sel-lm", paper="p", where="w", source="abstract", statement="s", measured="m", settings="x",
                     verdict=decisive),
            ag.Claim("sel-table3", paper="p", where="w", source="abstract", statement="s", measured="m", settings="x",
                     verdict=undecided),
            ag.Claim("sel-fig1d", paper="p", where="w", source="abstract", statement="s", measured="m", settings="x",
                     verdict=decisive)]
    stored = S(parameters={}, claims=[{"id": "sel-lm"}, {"id": "sel-table3"}, {"id": "sel-fig1d"}])
    out = {c.id: c for c in ch.with_stored_seeds(rows, stored)}
    assert out["sel-lm"].assumption.startswith("a single draw") and "agree" in out["sel-lm"].assumption_checked
    assert out["sel-table3"].assumption and out["sel-table3"].assumption_checked == ""
    assert out["sel-fig1d"].assumption == ""  # not measured on the trained models
    assert ch.with_stored_seeds(rows, None) == rows
    enough = S(parameters={"tiny_seeds": 8}, claims=stored.claims)
    assert all(c.assumption == "" for c in ch.with_stored_seeds(rows, enough))
    assert "1 seed per model" in ch.stored_seeds_words(stored) and "enough" in ch.stored_seeds_words(enough)
    assert ch.stored_seeds_words(None).startswith("No paper-scale run")


def test_reach_and_trend_over_seeds_take_each_seeds_mean():
    import numpy as np
    import pytest

    heads = np.array([0.5, 0.6, 0.7, 0.8])
    reach = [np.stack([heads + shift, heads, np.ones(4)])[None] for shift in (0.01, 0.03)]  # (layers, 3, heads)
    summary = ch.reach_over_seeds(reach)
    assert summary["seeds"] == 2 and summary["measured"].size == 8
    assert summary["diff"].draw_means == pytest.approx((0.01, 0.03)) and summary["diff"].n_draws == 2
    rows = ch.reach_claims(ch.SelectabilityParams(), {"tiny decoder, LayerNorm": summary}, {}, "")
    assert rows[0].id == "sel-reach-tiny" and "2 training seeds (8 heads)" in rows[0].measured
    assert rows[0].verdict.label.value == "not decided"  # two seeds cannot decide
    first, last = np.zeros((2, 4)), np.full((2, 4), -3.0)
    along = [{norm: {0: {p: first for p in ch.ALONG[norm]}, 450: {p: last - s for p in ch.ALONG[norm]}}
              for norm in ch.ALONG} for s in range(3)]
    trends = ch.trend_estimates(along)
    assert set(trends) == set(ch.TREND)
    assert trends[ch.TREND[0]].draw_means == pytest.approx((-3.0, -4.0, -5.0))


def test_one_seed_keeps_its_verdict_for_the_assumption_and_several_need_min_draws():
    """A run of one training seed (the stored paper run) keeps its verdict over the key sets, for
    ``draws_assumption`` to qualify in the book; a run of several seeds is qualified by ``draws_verdict``
    here, so fewer than MIN_DRAWS seeds cannot decide."""
    import attention_geometry as ag
    from attention_geometry.draws import DrawEstimate
    from attention_geometry.stats import Estimate

    decided = ag.sign_verdict(Estimate(1.0, 0.1), +1)
    assert ch.seeds_verdict(decided, 1) is decided
    one = DrawEstimate(1.0, 0.1, df=9, n_draws=1, draw_means=(1.0,))
    assert ch.seeds_verdict(decided, one) is decided
    three = DrawEstimate(1.0, 0.1, df=2, n_draws=3, draw_means=(0.9, 1.0, 1.1))
    assert ch.seeds_verdict(decided, three).label == "not decided"
    eight = DrawEstimate(1.0, 0.1, df=7, n_draws=8, draw_means=tuple(0.9 + 0.03 * i for i in range(8)))
    assert ch.seeds_verdict(decided, eight).label == "reproduced"
