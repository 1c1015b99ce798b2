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


def test_speed_words_read_the_interval_against_three():
    assert ch.speed_words((3.6, 5.0), 0).startswith("more than three times")
    assert ch.speed_words((3.6, 5.0), 2).startswith("more than three times")  # a lower bound above the band
    assert ch.speed_words((2.6, 3.4), 0).startswith("about three times")
    assert "lower bound" in ch.speed_words((2.6, 3.4), 1)
    assert ch.speed_words((0.5, 0.9), 0) == "fewer steps than LayerNorm"
    assert ch.speed_words((1.2, 2.0), 0).startswith("more steps than LayerNorm, but fewer")
    assert "not told apart from LayerNorm's" in ch.speed_words((0.8, 2.0), 0)
    assert "not told apart from three times" in ch.speed_words((2.0, 4.0), 0)


def test_speed_verdict_sizes_signs_and_censoring():
    """Over 8 seeds each rule decides both ways; a decisive verdict rests on the seeds (draws_verdict)."""
    import numpy as np
    three = np.array([2.9, 3.0, 3.1, 3.05, 2.95, 3.02, 2.98, 3.04])
    none = np.zeros(8, bool)
    assert ch.speed_verdict(three, none, 5.0, claimed=3.0, what="x").label == "reproduced"
    assert ch.speed_verdict(three / 2, none, 5.0, claimed=3.0, what="x").label == "differs"
    assert ch.speed_verdict(three / 2, none, 5.0, claimed=None, what="x").label == "reproduced"
    assert ch.speed_verdict(three / 4, none, 5.0, claimed=None, what="x").label == "refuted"
    some = np.array([1, 0, 0, 0, 0, 0, 0, 0], bool)
    assert ch.speed_verdict(three, some, 3.0, claimed=3.0, what="x").label == "not decided"
    assert ch.speed_verdict(three * 2, some, 6.0, claimed=3.0, what="x").label == "differs"


def test_speed_verdict_needs_eight_seeds_that_share_its_side():
    import numpy as np
    rng = np.random.default_rng(0)
    three, none = np.array([2.9, 3.0, 3.1, 3.05, 2.95]), np.zeros(5, bool)
    for claimed in (3.0, None):  # a clear effect over 5 seeds decides nothing
        v = ch.speed_verdict(three / 2, none, 5.0, claimed=claimed, what="x")
        assert v.label == "not decided" and "5 weight draws" in v.reason
    noise = np.exp(rng.normal(0.0, 0.5, 10))  # ratios around 1: no direction
    assert ch.speed_verdict(noise, np.zeros(10, bool), 5.0, claimed=None, what="x").label == "not decided"
    # the mean log ratio is clear of 0, but 6 of 8 seeds on its side is no majority beyond chance
    lopsided = np.exp([2.0, 2.0, 2.0, 2.0, 2.0, 2.0, -0.1, -0.1])
    v = ch.speed_verdict(lopsided, np.zeros(8, bool), 10.0, claimed=None, what="x")
    assert v.label == "not decided" and "6 of 8" in v.reason


ROW = dict(paper="brody2023expressivity", section="ua-majority")


def _labels(claims) -> dict:
    return {c.id: c.verdict.label for c in claims}


def test_majority_claims_decide_over_the_seeds_both_ways_and_not_on_noise():
    import numpy as np
    rng = np.random.default_rng(1)

    def per_seed(code_gap, fair_gap):
        ln = rng.normal(1.0, 0.01, code_gap.size)
        return {"layernorm": {"mean training loss": ln}, "original_code": {"mean training loss": ln - code_gap},
                "rmsnorm": {"mean training loss": ln - fair_gap}}
    faster, slower = np.full(8, -0.2) + rng.normal(0, 0.02, 8), np.full(8, 0.2) + rng.normal(0, 0.02, 8)
    labels = _labels(ch.majority_claims(per_seed(faster, slower), ROW, "s"))
    assert labels == {"ua-majority-vs-original_code": "reproduced", "ua-majority-vs-rmsnorm": "refuted"}
    noise = rng.normal(0, 0.2, 8)
    assert set(_labels(ch.majority_claims(per_seed(noise, noise), ROW, "s")).values()) == {"not decided"}
    assert set(_labels(ch.majority_claims(per_seed(faster[:5], slower[:5]), ROW, "s")).values()) == {"not decided"}
    # 8 of 10 seeds on the side of the mean (as LN − rmsnorm at the defaults): not a majority beyond chance
    eight = np.array([0.05] * 8 + [-0.01, -0.01])
    v = ch.majority_claims(per_seed(eight, eight), ROW, "s")[1].verdict
    assert v.label == "not decided" and "8 of 10" in v.reason


def test_angle_claims_read_the_band_over_the_seeds():
    import types

    import numpy as np
    rng = np.random.default_rng(2)

    def runs(ln, code, last=16_000):
        run = lambda a: types.SimpleNamespace(final={"angle": np.asarray(a)}, steps=np.array([0, last]))
        return {"layernorm": run(ln), "original_code": run(code)}
    near = lambda v, k=8: v + rng.normal(0, 0.3, k)
    assert set(_labels(ch.angle_claims(runs(near(12), near(83)), ROW, "s")).values()) == {"reproduced"}
    assert set(_labels(ch.angle_claims(runs(near(40), near(50)), ROW, "s")).values()) == {"differs"}
    assert set(_labels(ch.angle_claims(runs(near(12, 5), near(83, 5)), ROW, "s")).values()) == {"not decided"}
    noisy = _labels(ch.angle_claims(runs(12 + rng.normal(0, 20, 8), 83 + rng.normal(0, 20, 8)), ROW, "s"))
    assert set(noisy.values()) == {"not decided"}
    assert set(_labels(ch.angle_claims(runs(near(12), near(83), last=800), ROW, "s")).values()) == {"not tested"}


def test_query_claims_decide_over_the_seeds_both_ways_and_not_on_noise():
    import numpy as np
    rng = np.random.default_rng(3)
    split = lambda along, across: {"layernorm": {"log_along": along, "log_across": across}}
    up, down = 1.0 + rng.normal(0, 0.1, 8), -1.0 + rng.normal(0, 0.1, 8)
    assert _labels(ch.query_claims(split(up, down), ROW, "s")) == {"ua-query-alignment": "reproduced",
                                                                   "ua-query-shrinkage": "reproduced"}
    assert _labels(ch.query_claims(split(down, up), ROW, "s")) == {"ua-query-alignment": "refuted",
                                                                   "ua-query-shrinkage": "refuted"}
    noise = rng.normal(0, 1.0, 8)
    assert set(_labels(ch.query_claims(split(noise, noise), ROW, "s")).values()) == {"not decided"}
    assert set(_labels(ch.query_claims(split(up[:5], down[:5]), ROW, "s")).values()) == {"not decided"}


def test_geometry_claim_decides_over_the_seeds_both_ways_and_not_on_noise():
    import types

    import numpy as np

    import attention_geometry as ag
    rng = np.random.default_rng(4)
    P = types.SimpleNamespace(geo_seeds=8, geo_steps=500, geo_batch=512, geo_lr=0.01)
    label = lambda diffs: ch.geometry_claim(P, ag.over_draws(diffs), ROW).verdict.label
    assert label(40 + rng.normal(0, 5, 8)) == "reproduced"
    assert label(-40 + rng.normal(0, 5, 8)) == "refuted"
    assert label(rng.normal(0, 20, 8)) == "not decided"
    assert label(40 + rng.normal(0, 5, 5)) == "not decided"


def test_paper_results_words_read_the_stored_intervals():
    def values(code, fair, acc):
        v = {}
        for key, (lo, hi) in (("layernorm-original_code-mean-training-loss", code),
                              ("layernorm-rmsnorm-mean-training-loss", fair),
                              ("layernorm-rmsnorm-final-test-accuracy", acc)):
            v[f"ua-d-{key}-lo"], v[f"ua-d-{key}-hi"] = lo, hi
        return v
    words = ch.paper_results_words(values((-2, -1), (1, 2), (-2, -1)))
    assert "learns faster than the original's" in words and "it learns more slowly than the fair" in words
    assert "ends less accurate than" in words
    words = ch.paper_results_words(values((1, 2), (-1, 1), (1, 2)))
    assert "more slowly than the original's" in words and "not told apart from the fair" in words
    assert "ends more accurate than" in words
    split = values((-2, -1), (1, 2), (-2, -1))  # the stored counts of seeds: 8 of 10 cannot decide a side
    split.update({"ua-seeds": 10, "ua-d-layernorm-rmsnorm-mean-training-loss-wins": 8,
                  "ua-d-layernorm-rmsnorm-final-test-accuracy-wins": 1})
    words = ch.paper_results_words(split)
    assert "more slowly than the fair control on average, though in 8 of 10 seeds, too few" in words
    assert words.endswith("ends less accurate than the fair control.")  # 9 of 10 below: decided


def test_sign_words_say_on_average_when_too_few_seeds_share_the_side():
    assert ch.sign_words((0.1, 0.5), "lower", "higher", "neither", 9, 10) == "higher"
    assert ch.sign_words((0.1, 0.5), "lower", "higher", "neither", 8, 10).startswith("higher on average, though in 8")
    assert ch.sign_words((-0.5, -0.1), "lower", "higher", "neither", 1, 10) == "lower"
    assert "2 of 10 seeds" not in ch.sign_words((-0.5, -0.1), "lower", "higher", "neither", 1, 10)
    assert "in 8 of 10 seeds" in ch.sign_words((-0.5, -0.1), "lower", "higher", "neither", 2, 10)
    assert ch.sign_words((-0.5, 0.1), "lower", "higher", "neither", 0, 10) == "neither"
    # the words' test and the ledger's agree: 8 of 10 is what draws_verdict leaves undecided
    import attention_geometry as ag
    est = ag.over_draws([0.3] * 8 + [-0.1] * 2)
    assert ag.draws_verdict(ag.sign_verdict(est, 1, what="x"), est).label == "not decided"


def test_confound_sentence_gives_a_share_only_when_the_gap_excludes_zero():
    none = ch.confound_sentence("final test accuracy", 2.07, 1.3, 10.3, (-0.005, 0.034), True)
    assert "no share of it is a number" in none and "2.07" not in none
    some = ch.confound_sentence("mean training loss", 1.16, 1.05, 1.3, (-0.23, -0.14), True)
    assert "1.16" in some and "more than entirely" in some
    assert "entirely the confound" in ch.confound_sentence("mean training loss", 1.16, 1.05, 1.3, (-0.23, -0.14), False)


def test_alignment_words_read_both_growths():
    assert ch.alignment_words((0.1, 0.5), (-0.2, 0.2)).startswith("alignment")
    assert ch.alignment_words((-0.1, 0.1), (-0.5, -0.1)).startswith("shrinkage")
    assert ch.alignment_words((-0.5, -0.1), (-0.9, -0.6)).endswith("shrinks too")
    assert ch.alignment_words((-0.1, 0.1), (-0.5, -0.1)).endswith("does not grow")
    assert ch.alignment_words((0.1, 0.5), (-0.5, -0.1)).startswith("both")
    assert ch.alignment_words((-0.1, 0.1), (-0.1, 0.1)).startswith("not resolved")


def test_one_dimension_words_read_the_shift_and_the_gain():
    gain = (0.05, 0.1)  # the control gains accuracy from the extra dimension
    assert ch.one_dimension_words((-0.04, -0.01), gain, True).startswith("lies nearer the fair control one dimension narrower")
    assert ch.one_dimension_words((0.01, 0.04), gain, True).startswith("lies nearer the fair control of its own width")
    assert ch.one_dimension_words((-0.01, 0.01), gain, True).startswith("is not told apart from the midpoint")
    assert ch.one_dimension_words((-0.04, -0.01), (-0.01, 0.1), True).startswith("cannot be placed")
    # a loss: lower is better, so the signs turn over
    assert ch.one_dimension_words((0.01, 0.04), (-0.1, -0.05), False).startswith("lies nearer the fair control one")
    assert ch.one_dimension_words((-0.04, -0.01), (-0.1, -0.05), False).startswith("lies nearer the fair control of its")
    assert ch.one_dimension_words((0.01, 0.04), (0.05, 0.1), False).startswith("cannot be placed")


def test_trend_words_read_the_slope_and_the_gap():
    assert ch.trend_words((0.01, 0.03), (-0.2, -0.1), True) == "shrinks as the width grows"
    assert ch.trend_words((-0.03, -0.01), (-0.2, -0.1), True) == "grows with the width"
    assert ch.trend_words((-0.01, 0.03), (-0.2, -0.1), True).startswith("is not told")
    assert ch.trend_words((0.01, 0.03), (-0.1, 0.05), True).startswith("is not resolved at the smallest")
    assert ch.trend_words((-0.03, -0.01), (0.1, 0.2), False) == "shrinks as the width grows"
    assert ch.trend_words((0.01, 0.03), (0.1, 0.2), False) == "grows with the width"
    assert ch.trend_words((-0.03, -0.01), (-0.1, 0.2), False).startswith("is not resolved at the smallest")


def test_value_rank_words_flip():
    assert "spans 2 dimensions in every seed" in ch.value_rank_words([2, 2], [3, 3], 3)
    assert "that of the original's variant all 3 in every seed" in ch.value_rank_words([2, 2], [3, 3], 3)
    assert "spans at most 2" in ch.value_rank_words([2, 1], [3, 2], 3)
    assert "between 2 and 3" in ch.value_rank_words([2, 1], [3, 2], 3)
    assert "more than $d - 1$" in ch.value_rank_words([3, 2], [3, 3], 3)


def test_the_width_sweep_at_the_paper_settings_comes_from_the_stored_run(tmp_path):
    """The stored run's own words and table, in its settings; a sentence (and this run's figure) where no
    stored run holds the sweep; and the paper-scale run itself says so."""
    import json

    from attention_geometry.book.paper import PaperRun

    def glue(name, mime, value):
        return {"output_type": "display_data", "metadata": {"scrapbook": {"name": name, "mime_prefix": ""}},
                "data": {mime: value, "text/plain": "<IPython.core.display.Markdown object>"}}
    words = {f"ua-width-{kind}-{short}-words": f"<{kind} {short}>" for short in ("acc", "loss")
             for kind in ("one-dim", "trend")}
    outputs = [glue(k, "text/markdown", v) for k, v in words.items()]
    outputs.append(glue("ua-tab-width", "text/markdown", "| d |\n|---|\n| 3 |"))
    (tmp_path / "02_uniform_attention.ipynb").write_text(json.dumps(
        {"cells": [{"cell_type": "code", "source": "", "outputs": outputs}]}))
    stored = PaperRun(chapter="uniform_attention", folder=tmp_path, parameters={}, claims=None, provenance=None,
                      values={"ua-width-seeds": 10, "ua-width-dims": "3, 4", "ua-width-steps": 3000})
    g = ch.width_paper_glue(stored, "this run's figure")
    said = g["ua-width-paper-words"].data
    assert said.startswith("At the paper's settings (the stored run: 10 seeds per variant and width")
    assert r"$d \in \{3, 4\}$" in said and "3,000 steps" in said
    assert all(w in said for w in words.values()) and g["ua-tab-width-paper"].data == "| d |\n|---|\n| 3 |"
    assert g["fig-ua-width-paper"] == "this run's figure"  # the toy notebook holds no PNG
    none = ch.width_paper_glue(None, "this run's figure")
    assert none["ua-width-paper-words"].data == "No stored run at the paper's settings holds the width sweep."
    assert none["fig-ua-width-paper"] == "this run's figure" and "no stored run" in none["ua-width-paper-source"]
    (tmp_path / "02_uniform_attention.ipynb").write_text(json.dumps({"cells": []}))  # a run from before the sweep
    assert ch.width_paper_glue(stored, None)["ua-width-paper-words"].data.startswith("No stored run")
    itself = ch.width_paper_glue(stored, None, this_is_the_run=True)
    assert itself["ua-width-paper-words"].data.startswith("This run is the paper-scale run")


def test_the_step_ratios_at_the_paper_settings_come_from_the_stored_run(tmp_path):
    import json

    from attention_geometry.book.paper import PaperRun

    def glue(name, mime, value):
        return {"output_type": "display_data", "metadata": {"scrapbook": {"name": name, "mime_prefix": ""}},
                "data": {mime: value}}
    outputs = [glue("ua-speed-original_code-training-loss-words", "text/markdown", "<code words>"),
               glue("ua-speed-rmsnorm-training-loss-words", "text/markdown", "<fair words>"),
               glue("ua-loss-level-words", "text/markdown", "<level words>")]
    (tmp_path / "02_uniform_attention.ipynb").write_text(json.dumps(
        {"cells": [{"cell_type": "code", "source": "", "outputs": outputs}]}))
    stored = PaperRun(chapter="uniform_attention", folder=tmp_path, parameters={}, claims=None, provenance=None,
                      values={})
    assert ch.speed_paper_words(stored).data == (
        "At the paper's settings (the stored run) <level words>, and to reach it the original's variant needs "
        "<code words>, and the fair control <fair words>.")
    assert ch.speed_paper_words(None).data.startswith("No stored run")
    assert ch.speed_paper_words(stored, this_is_the_run=True).data == ch.THIS_IS_THE_RUN


def test_the_angles_at_the_paper_settings_come_from_the_stored_run(tmp_path):
    import json

    from attention_geometry.book.paper import PaperRun

    out = {"output_type": "display_data", "metadata": {"scrapbook": {"name": "ua-query-words", "mime_prefix": ""}},
           "data": {"text/markdown": "<query words>"}}
    (tmp_path / "02_uniform_attention.ipynb").write_text(json.dumps({"cells": [{"outputs": [out]}]}))
    stored = PaperRun(chapter="uniform_attention", folder=tmp_path, parameters={}, claims=None, provenance=None, values={
        "ua-steps": 14000, "ua-layernorm-final-angle": 10.43, "ua-original_code-final-angle": 80.68,
        "ua-rmsnorm-final-angle": 77.29})
    assert ch.angle_paper_words(stored).data == (
        "At the paper's settings (the stored run, 14,000 steps) the angle at the end is 10.4° under LayerNorm, "
        "80.7° under the original's variant and 77.3° under the fair control, and what moves LayerNorm's angle is "
        "<query words>.")
    (tmp_path / "02_uniform_attention.ipynb").write_text(json.dumps({"cells": []}))
    assert ch.angle_paper_words(stored).data.startswith("No stored run")


def test_dimensions_lost_words_need_a_resolved_gain_and_read_the_band():
    gain = (0.05, 0.1)  # the control gains accuracy from its last dimension
    assert ch.dimensions_lost_words((0.85, 1.1), gain, True).startswith("costs the attention one dimension")
    assert ch.dimensions_lost_words((0.3, 0.6), gain, True) == "costs the attention less than one dimension"
    assert ch.dimensions_lost_words((1.4, 1.9), gain, True) == "costs the attention more than one dimension"
    assert ch.dimensions_lost_words((0.6, 1.1), gain, True).startswith("is not resolved against one dimension")
    assert ch.dimensions_lost_words((0.85, 1.1), (-0.01, 0.1), True).startswith("cannot be counted")
    assert ch.dimensions_lost_words((0.85, 1.1), (-0.1, -0.05), False).startswith("costs")  # a loss falls
    assert ch.dimensions_lost_words((0.85, 1.1), gain, False).startswith("cannot be counted")  # a loss that rises


def test_the_query_and_speed_tables_and_the_d3_figure_at_the_paper_settings_come_from_the_stored_run(tmp_path):
    """The stored run's own tables under this run's table keys; this run's table or figure, with a sentence
    that says so, where the stored run lacks it or none is stored; and the paper-scale run itself says so."""
    import json

    from attention_geometry.book.paper import PaperRun

    def glue(name, value):
        return {"output_type": "display_data", "metadata": {"scrapbook": {"name": name, "mime_prefix": ""}},
                "data": {"text/markdown": value, "text/plain": "<IPython.core.display.Markdown object>"}}
    (tmp_path / "02_uniform_attention.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "source": "",
        "outputs": [glue("ua-tab-query", "| stored query |\n|---|"), glue("ua-tab-speed", "| stored speed |\n|---|")]}]}))
    stored = PaperRun(chapter="uniform_attention", folder=tmp_path, parameters={}, claims=None, provenance=None,
                      values={})
    q, s = ch.query_paper_glue(stored, "this query"), ch.speed_paper_glue(stored, "this speed")
    assert q["ua-tab-query-paper"].data == "| stored query |\n|---|" and s["ua-tab-speed-paper"].data.startswith(
        "| stored speed |")
    assert q["ua-query-paper-source"] == s["ua-speed-paper-source"] == "the stored run at the paper's settings"
    g = ch.geometry_paper_glue(stored, "this figure")  # the toy notebook holds no PNG
    assert g["fig-ua-geometry-paper"] == "this figure"
    assert g["ua-geometry-paper-source"] == "this run: no stored run at the paper's settings holds the figure"
    for run in (None, PaperRun(chapter="uniform_attention", folder=tmp_path / "none", parameters={}, claims=None,
                               provenance=None, values={})):
        (tmp_path / "none").mkdir(exist_ok=True)
        (tmp_path / "none" / "02_uniform_attention.ipynb").write_text(json.dumps({"cells": []}))  # lacks the tables
        lacking = ch.query_paper_glue(run, "this query")
        assert lacking == {"ua-tab-query-paper": "this query",
                           "ua-query-paper-source": "this run: no stored run at the paper's settings holds the table"}
        assert ch.speed_paper_glue(run, "this speed")["ua-tab-speed-paper"] == "this speed"
    itself = ch.speed_paper_glue(stored, "this speed", this_is_the_run=True)
    assert itself == {"ua-tab-speed-paper": "this speed", "ua-speed-paper-source": "this run, the paper-scale run itself"}


def test_the_early_stops_are_told_as_a_sentence_for_none_some_and_all():
    assert ch.stopped_words(0, 30).startswith("None of the 30 trainings")
    assert ch.stopped_words(4, 30).startswith("4 of the 30 trainings") and "stopped early" in ch.stopped_words(4, 30)
    assert ch.stopped_words(30, 30).startswith("All 30 trainings")


def test_the_split_of_the_query_says_on_average_when_too_few_seeds_share_the_direction():
    shrink = ch.alignment_words((-0.5, -0.1), (-4.5, -3.5), 2, 10)
    assert shrink.endswith("shrinks too on average, though in 8 of 10 seeds, too few to decide its side")
    assert ch.alignment_words((-0.5, -0.1), (-4.5, -3.5), 1, 10).endswith("shrinks too")
    assert ch.alignment_words((-0.5, -0.1), (-4.5, -3.5)).endswith("shrinks too")  # no counts: the interval alone
    assert "grows on average, though in 8 of 10" in ch.alignment_words((0.1, 0.5), (-4.5, -3.5), 8, 10)
    assert ch.too_few_words(9, 10) == "" and ch.too_few_words(None, None) == ""


def test_the_stored_split_is_read_from_the_rows_evidence():
    import types

    import numpy as np

    import attention_geometry as ag
    from attention_geometry.evidence import encode

    def record(cid, means, sign):
        est = ag.over_draws(np.asarray(means))
        verdict = ag.draws_verdict(ag.sign_verdict(est, sign, what="log growth"), est)
        return {"id": cid, "verdict": {"label": verdict.label, "evidence": encode(verdict.evidence)}}
    along = [-0.4, -0.5, -0.45, -0.38, -0.63, -0.35, -0.25, 0.07, -0.38, 0.09]  # 8 of 10 below 0
    stored = types.SimpleNamespace(claims=[record("ua-query-alignment", along, +1),
                                           record("ua-query-shrinkage", [-4.0 + 0.1 * i for i in range(10)], -1)])
    assert ch.stored_query_words(stored).endswith("shrinks too on average, though in 8 of 10 seeds, too few to "
                                                  "decide its side")
    assert ch.stored_query_words(types.SimpleNamespace(claims=[])) is None and ch.stored_query_words(None) is None
