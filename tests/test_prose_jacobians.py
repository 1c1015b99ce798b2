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
    assert ch.heads_flat_words("reproduced").startswith("flat")
    assert "against" in ch.heads_flat_words("differs") and "not resolved" in ch.heads_flat_words("not decided")


def test_unbiased_words_flip_below_the_share_an_unbiased_estimator_gives():
    assert ch.unbiased_words(0.95).startswith("consistent with")
    assert ch.unbiased_words(0.5).startswith("fewer than")


def test_sizes_and_timing_words():
    assert "paper's shapes" in ch.sizes_note(True) and "small sizes" in ch.sizes_note(False)
    assert "timed none" in ch.timing_words({"qwen2": (0, 0.0)})
    words = ch.timing_words({"qwen2": (24, 12.0), "gpt2": (8, 40.0), "other": (0, 0.0)})
    assert "qwen2: 0.5 s per profile (24 timed)" in words and "gpt2: 5 s per profile (8 timed)" in words
    assert "other:" not in words


def test_paper_cost_words_without_a_stored_run_say_so_and_print_no_nan():
    preset = {"width": 896, "probes": 4, "n_sequences": 16, "gpt2_probes": 4}
    assert "nan" not in ch.paper_cost_words({}, preset, None).lower()
    assert "nan" not in ch.paper_cost_words({"qwen2": math.nan}, preset, 7200.0).lower()
    words = ch.paper_cost_words({"qwen2": 10.0, "gpt2": 2.0}, preset, 7200.0)
    assert "10 s per Qwen2-shaped profile" in words and "2 s per GPT-2-shaped" in words and "2.0 hours" in words
    assert "124 hours" in words  # 10 s x 896 / 4 x 200 sequences, in hours
    assert "GPT-2" not in ch.paper_cost_words({"qwen2": 10.0}, preset, 7200.0)


def test_tables_show_no_nan_or_none():
    text = ch.table([{"a": math.nan, "b": None, "c": "nan ± nan", "d": 1.5}]).data
    assert "nan" not in text.lower() and "none" not in text.lower() and text.count("not defined") == 3


def test_w_source_words_split_at_a_quarter_and_three_quarters():
    assert ch.w_source_words(0.16, 0.014).startswith("most of it comes from the last position")
    assert ch.w_source_words(0.05, 0.045).startswith("little of it")
    assert ch.w_source_words(0.05, 0.025).startswith("the last position and the rest")


def test_prediction_words_flip_at_twice_the_noise():
    assert ch.prediction_words(0.05, 0.04).startswith("within twice the noise level")
    assert ch.prediction_words(0.5, 0.04).startswith("more than twice the noise level")


def test_first_layer_words_follow_the_gains():
    assert ch.first_layer_words(23.0, 1.5).startswith("the first layer's attention outweighs")
    assert ch.first_layer_words(0.13, 0.12).startswith("every layer's branch is smaller")
    assert ch.first_layer_words(2.0, 1.5).startswith("several layers")


def test_stored_table_rows_read_a_wrapped_frame_and_its_gains():
    text = ("   model  score  \\\n0  qwen2, a  0.349   \n1   gpt2, b  0.302   \n\n"
            "      gain g; growth κ  noise level  \n0  370 [362, 379]; 1.52e+03 [1.4e+03, 1.6e+03]  0.042  \n"
            "1  degenerate (0.01; x); 10 [8, 11]  0.021  \n")
    rows = ch.stored_table_rows(text)
    assert [r["model"] for r in rows] == ["qwen2, a", "gpt2, b"]
    cells = [ch.shape_cells(r) for r in rows]
    assert (cells[0]["gain"], cells[0]["growth"]) == (370.0, 1520.0)
    assert cells[1]["gain"] is None and cells[1]["growth"] == 10.0
    assert cells[0]["noise"] == "0.042"
    # a run that glued the table as Markdown (ch.table) gives the same cells
    md = ch.table([{"model": "qwen2, a", "gain g; growth κ": "370 [362, 379]; 1.52e+03 [1.4e+03, 1.6e+03]",
                    "noise level": "0.042"}]).data
    assert ch.stored_table_rows(md) == [{"model": "qwen2, a", "gain g; growth κ": "370 [362, 379]; "
                                         "1.52e+03 [1.4e+03, 1.6e+03]", "noise level": "0.042"}]
    assert ch.shape_cells(ch.stored_table_rows(md)[0])["gain"] == 370.0


def test_ends_misfit_words_flip_at_three_times_the_rms():
    assert ch.ends_misfit_words(0.135, -1.29, -0.49) == "the misfit is largest at the ends"
    assert ch.ends_misfit_words(0.135, -0.2, 0.1) == "the misfit is spread over the positions"


def test_proxy_words_flip_at_twice_the_noise():
    assert "can stand in" in ch.proxy_words(0.044, 0.042)
    assert "only roughly" in ch.proxy_words(0.2, 0.042)
    assert "not available" in ch.proxy_words(None, 0.04)


def test_embedding_meaning_words_follow_the_change():
    assert "initialisation choice" in ch.embedding_meaning_words(True)
    assert "does not measurably depend" in ch.embedding_meaning_words(False)


def test_stored_figure_reads_the_png_of_the_stored_run():
    import pytest

    from attention_geometry.book.paper import load_paper_run

    run = load_paper_run("jacobians")
    if run is None:
        pytest.skip("no stored paper run of chapter 8")
    assert ch.stored_figure(run, "jac-fig-profiles").startswith(b"\x89PNG")
    assert ch.stored_figure(run, "no-such-figure") is None
    assert ch.stored_figure(None, "jac-fig-profiles") is None


def test_paper_shape_table_says_when_there_is_no_stored_run():
    assert "not run at the paper's settings" in ch.paper_shape_table([], []).data


def test_largest_level_words_name_the_level_that_holds_most_of_the_variance():
    assert "mostly from the probes" in ch.largest_level_words((0.1, 0.2, 0.7, 1.0))
    assert "mostly from the weight draws" in ch.largest_level_words((0.6, 0.2, 0.2, 1.0))
    spread = ch.largest_level_words((0.3, 0.45, 0.25, 1.0))
    assert "spread over the levels" in spread and "sequences" in spread
    assert "cannot be split" in ch.largest_level_words(None)
    assert "cannot be split" in ch.largest_level_words((math.nan, math.nan, math.nan, 0.0))


def test_variance_shares_split_a_synthetic_design_and_say_when_they_cannot():
    """Per-probe profiles with a known split of log10 rho^2: draws 0, sequences 0, probes
    only (so the shares are (0, 0, 1)); and one probe per sequence, which cannot be split."""
    import numpy as np

    rng = np.random.default_rng(0)
    on = 10 ** (0.3 * rng.standard_normal((4, 3, 2, 50)))
    arrays = {"main-on": on, "main-off": on / 2}
    shares = ch.variance_shares(arrays, "main")
    assert shares["on"][2] > 0.8 and shares["on"][3] > 0
    assert shares["on minus off"][3] < 1e-20  # the paired difference is a constant
    rows = ch.variance_rows({"this run": shares, "the paper's shape": None})
    assert rows[-1]["setting"] == "not run at the paper's settings" and len(rows) == 4
    one = ch.variance_shares({"main-on": on[:, :, :1], "main-off": on[:, :, :1]}, "main")
    assert one["on"] is None
    assert ch.stack_draws([on[0], on[1, :2]]).shape == (2, 2, 2, 50)


def test_verdict_count_words_count_each_label():
    words = ch.verdict_count_words(["reproduced", "differs", "differs", "not decided"])
    assert words.startswith("1 of the 4 measured numbers lie inside") and "2 outside" in words and "1 are not decided" in words
    assert "not decided" not in ch.verdict_count_words(["reproduced", "differs"])
    assert ch.verdict_count_words([]) == "no comparison was made"


def test_the_paper_preset_is_the_paired_200_sequence_design_and_its_arrays_fit():
    """200 Qwen2-shaped sequences over 8 weight draws (25 each, none cut when stacked), 1-2
    probes each, checkpointed per sequence; the per-probe arrays it stores (float32, every
    position, positions on and off, Qwen2 and GPT-2) stay under 20 MB."""
    from attention_geometry.book import CHAPTERS

    # the preset stays the stored run's (16 x 4) until this design's run; the design is its next values
    p = {**CHAPTERS["jacobians"].presets["paper"], "n_sequences": 200, "probes": 2}
    assert p["n_sequences"] == 200 and p["n_draws"] == 8 and p["n_sequences"] % p["n_draws"] == 0
    assert p["probes"] in (1, 2) and p["batch_size"] == 1 and p["seq_len"] == 2048 and p["width"] == 896
    size = 2 * 4 * (p["n_sequences"] * p["probes"] * p["seq_len"] + p["gpt2_sequences"] * p["gpt2_probes"] * p["gpt2_seq_len"])
    assert size < 20 * 2**20


def test_bracket_words_place_the_measurement_between_the_mlp_ends():
    import attention_geometry as ag
    assert "independent" in ch.bracket_words(ag.Estimate(1.2, 0.05), 1.18, 1.5)
    assert "same matrix" in ch.bracket_words(ag.Estimate(1.45, 0.05), 1.18, 1.5)
    assert "outside" in ch.bracket_words(ag.Estimate(2.0, 0.05), 1.18, 1.5)


# --- this run beside the stored paper-scale run ------------------------------------------------

class _StoredRun:
    """A stand-in for a stored paper run: its glued values, parameters, claims, texts and figures."""

    def __init__(self, values=None, parameters=None, claims=None, texts=None, figures=None):
        self.values, self.parameters, self.claims = values or {}, parameters or {}, claims
        self._texts, self._figures = texts or {}, figures or {}

    def text(self, name):
        return self._texts.get(name)

    def figure(self, name):
        return self._figures.get(name)


def test_ptt_pretrained_words_flip_with_the_sign_of_the_resolved_difference():
    import attention_geometry as ag

    assert "deeper after" in ch.ptt_pretrained_words(ag.Estimate(2.97, 0.08), ag.Estimate(2.63, 0.01))
    assert "shallower after" in ch.ptt_pretrained_words(ag.Estimate(0.32, 0.18), ag.Estimate(1.59, 0.02))
    assert "unresolved" in ch.ptt_pretrained_words(ag.Estimate(1.6, 0.2), ag.Estimate(1.59, 0.02))


def test_local_u_words_flip_with_the_sign_of_the_interval():
    import attention_geometry as ag

    assert ch.local_u_words(ag.Estimate(0.19, 0.05)).startswith("the profile inside the chunks is U-shaped")
    assert ch.local_u_words(ag.Estimate(-0.3, 0.05)).startswith("the profile inside the chunks is not U-shaped")
    assert "not resolved" in ch.local_u_words(ag.Estimate(-0.10, 0.06))


def test_stored_words_give_the_stored_runs_numbers_or_say_it_lacks_them():
    values = {"jac-pre-lptt": 2.97, "jac-pre-lptt-se": 0.08, "jac-twin-lptt": 2.63, "jac-twin-lptt-se": 0.01,
              "jac-local-u": 0.19, "jac-local-u-se": 0.05}
    run = _StoredRun(values, {"pretrained_seq_len": 2048})
    words = ch.stored_ptt_words(run, this_is_the_run=False)
    assert words.startswith("In the stored paper-scale run") and "2.97 ± 0.08 pretrained" in words
    assert "windows of 2048 tokens" in words and "deeper after pretraining" in words
    shallow = ch.stored_ptt_words(_StoredRun({**values, "jac-pre-lptt": 1.0}), this_is_the_run=False)
    assert "shallower after pretraining" in shallow and "windows" not in shallow
    local = ch.stored_local_u_words(run, this_is_the_run=False)
    assert "+0.19 ± 0.05" in local and "is U-shaped" in local and "vanilla" not in local
    controlled = ch.stored_local_u_words(_StoredRun({**values, "jac-local-u-control": 0.02, "jac-local-u-control-se": 0.03}),
                                         this_is_the_run=False)
    assert "+0.02 ± 0.03, not measurably different from theirs" in controlled
    assert "not U-shaped" in ch.stored_local_u_words(_StoredRun({**values, "jac-local-u": -0.5}), this_is_the_run=False)
    older = _StoredRun({"jac-pre-lptt": 2.97})  # a run from before the measurement
    assert "not in the stored run" in ch.stored_ptt_words(older, this_is_the_run=False)
    assert "not in the stored run" in ch.stored_local_u_words(older, this_is_the_run=False)
    assert ch.stored_ptt_words(None, this_is_the_run=False).startswith("No paper-scale run is stored")
    assert ch.stored_local_u_words(run, this_is_the_run=True) == ch.THIS_IS_THE_RUN


def test_stored_oos_words_count_the_stored_rows_or_say_there_are_none():
    rows = [{"id": "oos-gpt2-alpha", "verdict": {"label": "reproduced"}},
            {"id": "oos-gpt2-wasserstein", "verdict": {"label": "differs"}}, {"id": "rope", "verdict": {"label": "x"}}]
    words = ch.stored_oos_words(_StoredRun(claims=rows), this_is_the_run=False)
    assert words.startswith("In the stored paper-scale run, 1 of the 2 measured numbers") and "1 outside" in words
    assert "not in the stored run" in ch.stored_oos_words(_StoredRun(claims=rows[2:]), this_is_the_run=False)
    assert ch.stored_oos_words(None, this_is_the_run=False).startswith("No paper-scale run is stored")
    assert ch.stored_oos_words(None, this_is_the_run=True) == ch.THIS_IS_THE_RUN


def test_profiles_words_follow_what_exists():
    run = _StoredRun()
    assert "kept with the stored paper-scale run" in ch.profiles_words(run, True, this_is_the_run=False)
    assert "not in the stored run" in ch.profiles_words(run, False, this_is_the_run=False)
    assert "No paper-scale run is stored" in ch.profiles_words(None, False, this_is_the_run=False)
    assert "kept with this run" in ch.profiles_words(None, False, this_is_the_run=True)
    assert ch.variance_absent_words(run) == "is not in the stored run"
    assert "no paper-scale run is stored" in ch.variance_absent_words(None)
    rows = ch.variance_rows({ch.STORED_RUN: None}, missing="not in the stored run")
    assert rows[0]["setting"] == "not in the stored run"


def test_shape_and_tolerance_words_come_from_their_sources():
    from attention_geometry.book import CHAPTERS

    p = CHAPTERS["jacobians"].presets["paper"]
    words = ch.shape_words(p, "qwen2", 0.02, 0.02)
    assert words.startswith(f"{p['n_layers']} layers, d = {p['width']}, {p['n_heads']} query and {p['n_kv_heads']}")
    assert f"L = {p['seq_len']}" in words and "σ₀ = 0.02, which is also the stand-in" in words
    assert "stand-in" not in ch.shape_words(p, "qwen2", 0.02, 0.05)
    assert ch.shape_words(p, "gpt2") == (f"{p['gpt2_layers']} layers, width {p['gpt2_width']}, {p['gpt2_heads']} heads, "
                                         f"L = {p['gpt2_seq_len']}")
    tol = ch.tolerance_words({"alpha": (0.2, 0.0), "log10_ptt": (0.0, 0.25)},
                             {"alpha": ("α", ""), "log10_ptt": ("the peak/trough", " decades")})
    assert tol == "α within 20 %, the peak/trough within 0.25 decades"
    assert "30 %" in ch.tolerance_words({"alpha": (0.3, 0.0)}, {"alpha": ("α", "")})


def test_positions_scale_words_flip_around_one():
    assert ch.positions_scale_words(1.0) == "about as large as the token embeddings"
    assert ch.positions_scale_words(3.0) == "larger than the token embeddings"
    assert ch.positions_scale_words(0.3) == "smaller than the token embeddings"


def test_pair_cosines_and_alike_words():
    import numpy as np

    cos = np.stack([np.eye(4) + 0.2 * (1 - np.eye(4)), np.eye(4) + 0.7 * (1 - np.eye(4))])
    cos[1, 0, 3] = 5.0  # above the diagonal: not a pair the mean reads
    assert np.allclose(ch.pair_cosines(cos), [0.2, 0.7])
    assert ch.alike_words(0.2, 0.7) == "after the first layer they are alike (more alike than in the first block)"
    assert ch.alike_words(0.5, 0.3).startswith("after the first layer they are partly alike (less alike")
    assert "nearly at right angles" in ch.alike_words(0.02, 0.03) and "as alike as" in ch.alike_words(0.02, 0.03)


def test_prediction_paper_glue_shows_the_stored_runs_figure_and_rows_or_says_it_has_none():
    from IPython.display import Image

    from attention_geometry.figures.theme import new_figure

    def figure():
        fig = new_figure(figsize=(3, 2))
        fig.subplots().plot([1, 2], [1, 2])
        return fig

    rows = [{"embeddings": "RMS σ₀", "rms ln-misfit, predicted": 0.27}]
    stored_table = ch.table([{"run": "this run", "embeddings": "RMS σ₀", "rms ln-misfit, predicted": 0.11}]).data
    held = _StoredRun(texts={"jac-tab-prediction": stored_table},
                      figures={"jac-fig-prediction": ch.figure_png(figure())})
    out = ch.prediction_paper_glue(held, figure(), rows, this_is_the_run=False)
    assert isinstance(out["jac-fig-prediction"], Image) and out["jac-fig-prediction"].data.startswith(b"\x89PNG")
    assert "below: the stored paper-scale run" in out["jac-fig-prediction-source"]
    table = ch.markdown_table_rows(out["jac-tab-prediction"].data)
    assert [(r["run"], r["rms ln-misfit, predicted"]) for r in table] == [("this run", "0.27"),
                                                                          (ch.STORED_RUN, "0.11")]
    mine = figure()
    lacking = ch.prediction_paper_glue(_StoredRun(), mine, rows, this_is_the_run=False)
    assert lacking["jac-fig-prediction"] is mine and "not in the stored run" in lacking["jac-pred-paper-words"]
    assert len(ch.markdown_table_rows(lacking["jac-tab-prediction"].data)) == 1
    assert "No paper-scale run is stored" in ch.prediction_paper_glue(None, mine, rows, this_is_the_run=False)[
        "jac-pred-paper-words"]
    itself = ch.prediction_paper_glue(held, mine, rows, this_is_the_run=True)
    assert itself["jac-fig-prediction"] is mine and itself["jac-pred-paper-words"] == ch.THIS_IS_THE_RUN


def test_stacked_png_puts_the_second_image_under_the_first():
    import io

    from matplotlib import image as mpimg

    from attention_geometry.figures.theme import new_figure

    a, b = new_figure(figsize=(3, 2)), new_figure(figsize=(2, 1))
    a.subplots(), b.subplots()
    top, bottom = (mpimg.imread(io.BytesIO(ch.figure_png(f, dpi=50)), format="png") for f in (a, b))
    assert top.shape[1] > bottom.shape[1]
    both = mpimg.imread(io.BytesIO(ch.stacked_png(ch.figure_png(a, dpi=50), ch.figure_png(b, dpi=50))), format="png")
    assert both.shape[:2] == (top.shape[0] + bottom.shape[0], top.shape[1])
    assert (both[: top.shape[0], :, :3] == top[..., :3]).all()  # the first image on top, unchanged


def test_the_paper_shape_gain_sentence_reads_the_runs_gains():
    words = ch.paper_gain_words({"jac-pred-g1": 3.2, "jac-pred-m1": 0.5, "jac-pred-g2": 0.4, "jac-pred-gH": 0.05,
                                 "jac-pred-layer-words": ch.first_layer_words(3.2, 0.4)})
    assert "falls from 0.4 to 0.05" in words and "outweighs the residual stream" in words
    rising = ch.paper_gain_words({"jac-pred-g1": 0.2, "jac-pred-m1": 0.1, "jac-pred-g2": 0.1, "jac-pred-gH": 0.3,
                                  "jac-pred-layer-words": ch.first_layer_words(0.2, 0.3)})
    assert "rises from 0.1 to 0.3" in rising and "more paths stay" in rising
    assert "does not hold" in ch.paper_gain_words({"jac-pred-g1": 3.2}) and "does not hold" in ch.paper_gain_words(None)


def test_the_continuous_limit_sentence_follows_where_the_limit_holds():
    from attention_geometry.stats import FittedParameter

    def alpha(v, degenerate=False):
        return FittedParameter("alpha", v, (0.005, 1.0), None, degenerate)

    assert "only at the first positions" in ch.limit_words(2048, 24, alpha(0.3))  # from position 83 of 2,048
    assert "only from position 1525 of 2048" in ch.limit_words(2048, 24, alpha(0.7))
    assert "not within 1 % of the discrete row over any stretch" in ch.limit_words(2048, 24, alpha(0.9))
    assert "not defined" in ch.limit_words(2048, 24, alpha(1.0, degenerate=True))
