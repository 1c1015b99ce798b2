"""Chapter 6's computed words flip when their numbers cross the threshold they name, so that a
rerun at other parameters cannot leave a false comparison in the text (no chapter execution)."""

import math

import numpy as np
import pytest

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


def test_the_share_of_wins_is_resolved_off_one_half_only_where_its_interval_excludes_it():
    from attention_geometry.stats import Estimate

    above = ch.half_words(Estimate(0.50148, 0.000022))  # the stored paper-scale run: 67 standard errors above
    assert above.startswith("more often than the farther one, resolved above 1/2 by 0.0015 (67 standard errors)")
    below = ch.half_words(Estimate(0.4985, 0.0001))
    assert below.startswith("less often than the farther one, resolved below 1/2 by 0.0015 (15 standard errors)")
    noise = ch.half_words(Estimate(0.49994, 0.00021))  # the defaults
    assert noise.startswith("about half the time, within the noise of 1/2 (0.3 standard errors")
    assert "about half" not in above + below and "resolved" not in noise


def test_the_rows_without_layernorm_are_flat_only_when_no_key_strays():
    assert ch.flat_words(38.3).startswith("not flat (a key strays up to 38")
    assert ch.flat_words(1.2).startswith("flat (no key strays more than 3")


def test_the_excess_without_layernorm_is_named_only_beyond_three_standard_errors():
    assert ch.excess_words(6.2).startswith("6 standard errors above 1/2")
    assert ch.excess_words(-4.0).startswith("4 standard errors below 1/2")
    assert ch.excess_words(1.0) == "within 3 standard errors of 1/2, as flat as the large-width limit"
    assert "where the large-width limit is flat" in ch.excess_words(6.2)


def test_the_residual_ratio_words_name_the_weight_it_follows():
    from attention_geometry.stats import Estimate

    m = Estimate(0.736, 0.001)
    assert ch.ratio_words(m, 0.712, 0.452).startswith("follows the residual weight θ")
    assert ch.ratio_words(m, 0.452, 0.74).startswith("follows the paper's weight ω")
    assert ch.ratio_words(m, 0.5, 0.45).startswith("does not single out")


def test_the_null_words_state_the_interval_over_the_draws():
    from attention_geometry.stats import Estimate

    text = ch.null_words("random W_Q, W_K", Estimate(0.50026, 0.0013, 31))
    assert "95% interval [-0.0024, 0.003]" in text or "95% interval [-0.0024, 0.0029]" in text
    assert "any recency left is below" in text and "no preference (RP = 1/2) lies inside it" in text


def test_the_peak_words_say_whether_the_predicted_rp_turns_inside_the_widths():
    assert "rises and falls, largest at d = 256" in ch.peak_words([16, 64, 256, 1024], [0.6, 0.7, 0.75, 0.5], 0.8)
    assert "largest at the grid's smallest width" in ch.peak_words([16, 64], [0.7, 0.6], 0.8)
    assert "largest at the grid's largest width" in ch.peak_words([16, 64], [0.6, 0.7], 0.8)


def test_the_qk_peak_words_name_an_interior_peak_only_when_there_is_one():
    assert ch.qk_peak_words(None).startswith("it is largest at the identity")
    assert ch.qk_peak_words(0.706).startswith("it is not monotone in the dominance: largest at dom = 0.71")


def test_the_gap_order_words_name_the_steadier_scaling():
    assert "of relative order 1/d, not 1/√d" in ch.gap_order_words(1.6, 5.0)
    assert ch.gap_order_words(5.0, 1.6).endswith("of relative order 1/√d")
    v = ch.gap_order_values([16, 64, 256], [0.36, 0.063, 0.0153])
    assert v["rec-factor-gap-d-max"] == pytest.approx(5.76) and "1/d, not" in v["rec-factor-gap-order"]


def _nope(per_seed):
    from attention_geometry.stats import Estimate

    return {"runs": [{"after": (Estimate(v, 0.0), Estimate(v, 0.0))} for v in per_seed]}


def test_the_matched_decoder_words_follow_the_paired_difference():
    ln = _nope([0.60, 0.62, 0.61, 0.63, 0.60])
    values, rows = ch.nope_norm_values(ln, {"rmsnorm": _nope([0.50, 0.53, 0.51]),
                                            "none": _nope([0.70, 0.71, 0.72])})
    assert values["rec-nope-rmsnorm-words"] == "exceeds" and values["rec-nope-none-words"] == "falls short of"
    assert values["rec-nope-control-seeds"] == 3 and rows["rmsnorm"]["diff"].df == 2
    assert values["rec-nope-rmsnorm-diff"] == pytest.approx((0.10 + 0.09 + 0.10) / 3, abs=1e-12)  # paired with the first three seeds
    values, _ = ch.nope_norm_values(ln, {"rmsnorm": _nope([0.55, 0.68, 0.58])})
    assert values["rec-nope-rmsnorm-words"] == "does not measurably differ from"


def _rises(values, se):
    from attention_geometry.stats import Estimate

    return {c: Estimate(v, se) for c, v in zip((0.0, 0.2, 0.4, 0.6, 0.8), values)}


def test_the_figure_2_order_sees_a_rise_that_grows_with_c_and_one_that_turns():
    grows = ch.figure2_order(_rises([0.0, 0.015, 0.045, 0.097, 0.15], 1e-4))
    assert grows["above_zero"].label == "reproduced" and grows["adjacent"].label == "reproduced"
    turns = ch.figure2_order(_rises([0.0, 0.015, 0.045, 0.097, 0.090], 1e-4))  # d = 64: largest at c = 0.6
    assert turns["above_zero"].label == "reproduced" and turns["adjacent"].label == "refuted"
    below = ch.figure2_order(_rises([0.05, 0.015, 0.045, 0.097, 0.15], 1e-4))
    assert below["above_zero"].label == "refuted"


def test_the_figure_2_order_decides_nothing_on_pure_noise():
    rng = np.random.default_rng(0)
    labels = [ch.figure2_order(_rises(rng.normal(0.0, 1.0, 5), 1.0))["adjacent"].label for _ in range(200)]
    assert sum(lab == "reproduced" for lab in labels) == 0
    assert sum(lab == "refuted" for lab in labels) < 0.1 * len(labels)
    assert ch.figure2_order({0.2: _rises([0.0], 1.0)[0.0]})["adjacent"].label == "not tested"


def test_the_dominance_words_follow_the_paired_change():
    from attention_geometry.stats import Estimate

    assert ch.dominance_words(Estimate(0.2, 0.01, 4)) == "moves W_QᵀW_K towards the identity"
    assert ch.dominance_words(Estimate(-0.2, 0.01, 4)) == "moves W_QᵀW_K away from the identity"
    assert "does not measurably move" in ch.dominance_words(Estimate(0.01, 0.05, 4))


def test_the_gap_series_fit_recovers_its_terms_and_says_what_the_next_one_buys():
    import numpy as np

    d = np.array([16, 25, 36, 49, 64, 100, 144, 196, 256, 400], dtype=float)
    v = ch.gap_series_values(d, -(3.3 / d + 40 / d ** 2), np.full(d.size, 1e-3))
    assert v["rec-factor-next-a"] == pytest.approx(-3.3) and v["rec-factor-next-b"] == pytest.approx(-40)
    assert v["rec-factor-next-miss"] < 1e-6 and v["rec-factor-next-left"] == pytest.approx(40 / 256)
    assert abs(3.3 / v["rec-factor-next-within"] + 40 / v["rec-factor-next-within"] ** 2) == pytest.approx(0.01)
    assert v["rec-factor-next-exact-within"] == pytest.approx(np.sqrt(4000))
    assert "needs the whole series in 1/d" in v["rec-factor-next-words"]
    small_b = ch.gap_series_values(d, -(3.3 / d + 0.5 / d ** 2), np.full(d.size, 1e-3))
    assert small_b["rec-factor-next-words"].endswith("from d = 16 on.")
    tiny = ch.gap_series_values(d, 0.1 / d, np.full(d.size, 1e-3))
    assert "from the narrowest width on" in tiny["rec-factor-next-words"]


def test_the_share_of_recency_a_control_loses_sees_both_causes_and_noise():
    """LayerNorm as the cause of the trained recency: a control that loses all of it, one that keeps it
    all, pure noise, and a decoder without recency; the row's rule (over the seeds, jackknifed) with each,
    and the words that follow it."""
    rng = np.random.default_rng(1)
    ln = 0.68 + rng.normal(0, 0.01, 8)
    lost = ch.nope_share_over_seeds(ln, 0.5 + rng.normal(0, 0.005, 8))
    kept = ch.nope_share_over_seeds(ln, ln + rng.normal(0, 0.005, 8))
    noise = ch.nope_share_over_seeds(ln, ln - 0.09 + rng.normal(0, 0.2, 8))
    assert lost.n_draws == 8 and len(lost.draw_means) == 8 and lost.value == pytest.approx(1.0, abs=0.1)
    rule = lambda s: ch.nope_share_verdict(s, "rmsnorm").label
    assert (rule(lost), rule(kept), rule(noise)) == ("reproduced", "refuted", "not decided")
    assert rule(ch.nope_share_over_seeds(ln[:5], 0.5 + rng.normal(0, 0.005, 5))) == "not decided"  # 5 seeds
    assert ch.nope_share_over_seeds(0.5 + rng.normal(0, 0.01, 8), rng.normal(0.5, 0.01, 8)) is None  # no recency
    assert rule(None) == "not tested"
    assert "mostly LayerNorm's" in ch.nope_share_words({"rmsnorm": lost})
    assert "whatever its norm" in ch.nope_share_words({"rmsnorm": kept, "none": kept})
    assert "do not decide" in ch.nope_share_words({"rmsnorm": kept, "none": noise})
    assert "no share of it" in ch.nope_share_words({"rmsnorm": None})
    mixed = ch.nope_share_words({"rmsnorm": kept, "none": noise})  # each control's row says its own part
    assert "with RMSNorm the decoder keeps most of it; with no norm the seeds do not decide" in mixed
    assert "its centring, is not what makes it" in mixed
    # a stored run's rows decide what its means alone cannot (the seeds' sides are not stored)
    stored_rows = ch.nope_share_words({"rmsnorm": noise, "none": noise}, {"rmsnorm": "refuted", "none": "not decided"})
    assert "with RMSNorm the decoder keeps most of it; with no norm the seeds do not decide" in stored_rows
    # a stored run's delta-method share over five seeds: its sign shows, but five seeds do not decide
    from attention_geometry.stats import Estimate as E

    stored = ch.nope_share(E(-0.003, 0.01, 4), E(0.18, 0.012, 4))
    assert stored.interval()[1] < ch.NOPE_SHARE_CLAIMED and rule(stored) == "not decided"


def _draws(values):
    from attention_geometry.draws import over_draws

    return over_draws(np.asarray(values, dtype=float))


def test_the_trained_recency_decides_only_over_eight_seeds_on_its_side():
    rng = np.random.default_rng(2)
    rule = lambda v: ch.nope_trained_verdict(_draws(v)).label
    assert rule(0.65 + rng.normal(0, 0.02, 8)) == "reproduced"
    assert rule(0.35 + rng.normal(0, 0.02, 8)) == "refuted"
    assert rule(0.65 + rng.normal(0, 0.02, 5)) == "not decided"  # five seeds: one trained model too few
    noise = [rule(0.5 + rng.normal(0, 0.05, 8)) for _ in range(200)]
    assert sum(lab != "not decided" for lab in noise) <= 4
    from attention_geometry.stats import Estimate as E

    assert ch.nope_trained_verdict(E(0.685, 0.012, 4)).label == "not decided"  # a stored run of five seeds
    # the chapter's sentence says what the row decides
    assert ch.nope_words(ch.nope_trained_verdict(_draws(0.65 + rng.normal(0, 0.02, 8)))) == "shows recency after training"
    assert ch.nope_words(ch.nope_trained_verdict(_draws(0.35 + rng.normal(0, 0.02, 8)))) == "shows primacy after training"
    assert "agree" in ch.nope_words(ch.nope_trained_verdict(_draws(0.65 + rng.normal(0, 0.02, 5))))


def test_the_matched_controls_are_paired_by_seed_and_decide_only_over_eight():
    rng = np.random.default_rng(3)
    base = 0.65 + rng.normal(0, 0.05, 8)  # seed effects shared by both decoders: pairing removes them
    ln = _nope(base + 0.03)
    _, rows = ch.nope_norm_values(ln, {"rmsnorm": _nope(base + rng.normal(0, 0.003, 8)),
                                       "none": _nope(base + 0.06 + rng.normal(0, 0.003, 8))})
    assert rows["rmsnorm"]["diff"].n_draws == 8 and rows["rmsnorm"]["diff"].value == pytest.approx(0.03, abs=0.005)
    labels = {n: ch.nope_control_verdict(r["diff"], n).label for n, r in rows.items()}
    assert labels == {"rmsnorm": "reproduced", "none": "refuted"}
    _, five = ch.nope_norm_values(_nope(base[:5] + 0.03), {"rmsnorm": _nope(base[:5])})
    assert ch.nope_control_verdict(five["rmsnorm"]["diff"], "rmsnorm").label == "not decided"
    noise = []
    for _ in range(200):
        _, r = ch.nope_norm_values(ln, {"none": _nope(base + 0.03 + rng.normal(0, 0.02, 8))})
        noise.append(ch.nope_control_verdict(r["none"]["diff"], "none").label)
    assert sum(lab != "not decided" for lab in noise) <= 4


def test_the_stored_matched_decoders_are_read_from_the_stored_values():
    values = {"rec-nope-after": 0.685, "rec-nope-after-se": 0.012, "rec-nope-steps": 8000, "rec-nope-control-seeds": 5,
              "rec-nope-rmsnorm": 0.688, "rec-nope-rmsnorm-se": 0.003, "rec-nope-rmsnorm-diff": -0.0035,
              "rec-nope-rmsnorm-diff-se": 0.01}
    words = ch.nope_paper_words(values)
    # five seeds: the share kept shows, but a verdict over training seeds needs eight
    assert words.startswith("In the stored paper-scale run (8,000 steps, 5 seeds)") and "do not decide" in words
    assert ch.nope_paper_words(None).startswith("No stored paper-scale run")
    # where the stored run's rows are stored, the words follow them, as the ledger does
    rows = [{"id": "nope-share-rmsnorm", "final_verdict": {"label": "refuted"}}]
    assert "keeps most of it" in ch.nope_paper_words(values, rows)
    assert ch.nope_paper_words({**values, "rec-nope-control-seeds": 0}).startswith("No stored")


def test_the_stored_runs_matched_decoder_sentence_says_what_its_share_rows_say():
    """The book's sentence on the stored run's matched decoders (built from the stored means, whose
    seeds' sides are gone) takes each control's verdict from that run's own share row."""
    from attention_geometry.book.paper import load_paper_run

    run = load_paper_run("recency")
    labels = {r["id"].removeprefix("nope-share-"): r["final_verdict"]["label"] for r in run.claims
              if r["id"].startswith("nope-share-")}
    assert set(labels) == {"rmsnorm", "none"}
    words = ch.paper_run_words(run)["rec-nope-paper-words"]
    said = {"refuted": "keeps most of it", "reproduced": "loses most of it", "not decided": "do not decide"}
    for norm, label in labels.items():
        name = {"rmsnorm": "RMSNorm", "none": "no norm"}[norm]
        assert (f"with {name} the decoder {said[label]}" in words or f"with {name} it {said[label]}" in words
                or f"with {name} the seeds {said[label]}" in words or f"each control {said[label]}" in words
                or (label == "not decided" and "the seeds do not decide whether" in words)), (norm, label, words)


def test_the_mechanism_words_follow_the_dominance_of_w_q_w_k_after_training():
    """The trained recency traced to a diagonally dominant W_QᵀW_K (Theorem 1's mechanism) or not: the
    row's rule and the sentence, both ways, undecided, on five seeds, and without recency to trace."""
    from attention_geometry.stats import Estimate as E

    rng = np.random.default_rng(4)
    rp = _draws(0.685 + rng.normal(0, 0.03, 8))
    dominant, random = _draws(0.6 + rng.normal(0, 0.05, 8)), _draws(0.014 + rng.normal(0, 0.02, 8))
    noise = _draws(0.1 + rng.normal(0, 0.15, 8))
    labels = [ch.nope_dominance_verdict(rp, d).label for d in (dominant, random, noise)]
    assert labels == ["reproduced", "refuted", "not decided"]
    assert ch.nope_dominance_verdict(rp, _draws(0.6 + rng.normal(0, 0.05, 5))).label == "not decided"  # 5 seeds
    assert ch.nope_dominance_verdict(E(0.5005, 0.001, 7), dominant).label == "not tested"
    yes = ch.nope_mechanism_words(rp, dominant)
    assert yes.startswith(f"In this run the trained decoder's recency probability is {rp.format(3)}")
    assert "above a random matrix's" in yes and yes.endswith("comes with a diagonally dominant W_QᵀW_K, Theorem 1's mechanism.")
    no = ch.nope_mechanism_words(rp, random, where="In the stored paper-scale run")
    assert "and below 0.1" in no and no.endswith("does not come through Theorem 1's diagonal mechanism.")
    assert "the seeds do not decide whether it reaches 0.1" in ch.nope_mechanism_words(rp, noise)
    stored = ch.nope_mechanism_words(E(0.685, 0.012, 4), E(0.014, 0.024, 4))  # the stored run: five seeds
    assert "not distinguishable from a random matrix's (about 0)" in stored and "the seeds do not decide" in stored
    assert "no recency whose interval excludes 1/2" in ch.nope_mechanism_words(E(0.5005, 0.001, 4), dominant)


def test_the_stored_run_words_are_computed_from_its_values_and_labelled_as_its():
    from types import SimpleNamespace

    params = {"d": 16, "n_samples": 10_000_000, "ext_models": 32, "nope_d": 64, "nope_steps": 8000,
              "nope_seq_len": 64, "nope_seeds": 5, "factor_dims": [16, 100, 400]}
    values = {"rec-thm1-rp2": 0.50148, "rec-thm1-rp2-se": 0.000022, "rec-noln-rp": 0.50039,
              "rec-noln-rp-se": 0.000064, "rec-noln-ln-diff": 0.00108, "rec-noln-ln-diff-se": 0.000068,
              "rec-noln-spread-max": 38.3, "rec-nope-after": 0.685, "rec-nope-after-se": 0.012,
              "rec-nope-dom-after": 0.014, "rec-nope-dom-after-se": 0.024}
    stored = SimpleNamespace(values=values, parameters=params, text=lambda k: {  # a str's text/plain form
        "rec-qk-peak-words": "'it is largest at the identity, within the noise'"}.get(k))
    w = ch.paper_run_words(stored)
    assert w["rec-thm1-rp2-paper-words"].startswith("In the stored paper-scale run (d = 16, 10,000,000 sequences) "
                                                    "the nearer key wins more often than the farther one, resolved above")
    assert "6 standard errors above 1/2" in w["rec-noln-paper-words"] and "is larger than without" in w["rec-noln-paper-words"]
    assert w["rec-row2-paper-words"] == ("in the stored paper-scale run (d = 16, 10,000,000 sequences) the second layer's "
                                         "rows are not flat (a key strays up to 38 standard errors from its row's mean)")
    assert w["rec-qk-peak-paper-words"].endswith("it is largest at the identity, within the noise")
    # five seeds: below 0.1 as measured, but a verdict over training seeds needs eight
    assert "the seeds do not decide whether it reaches 0.1" in w["rec-nope-mechanism-paper-words"]
    assert w["rec-nope-paper-setting-words"].startswith("the stored paper-scale run a 64-wide one for 8,000 steps")
    assert w["rec-paper-sizes-words"].endswith("10,000,000 per model at d = 16 and takes the study to d = 400")
    older = ch.paper_run_words(SimpleNamespace(values={}, parameters=params, text=lambda k: None))
    assert older["rec-noln-paper-words"] == "No stored paper-scale run holds it."
    assert older["rec-row2-paper-words"] == ch.NO_STORED_RUN
    assert set(ch.paper_run_words(None)) == set(w)
    assert ch.paper_run_words(None, this_is_the_run=True)["rec-qk-peak-paper-words"] == ch.THIS_IS_THE_RUN_CLAUSE
