"""Chapter 7's computed words: each wording function of the chapter module on both sides of its
threshold (cheap), and one execution of the chapter at parameters where its float64 sentences
must say the opposite of what they say at the defaults (issue 32, item 1)."""

import math

import pytest

from attention_geometry.book.chapters import cesaro as words


def test_agreement_words_flip_when_one_check_fails():
    assert words.agreement_words(10, 10) == "agree exactly"
    assert "do not" in words.agreement_words(9, 10) and "1 do not" in words.agreement_words(9, 10)


def test_alternating_onset_words_say_where_or_that_the_scan_never_got_there():
    onset, total = words.alternating_onset_words(12, 40, 128)
    assert onset == "first exceeds one part in a million at L = 12" and total == "reaches 100 % at L = 40"
    onset, total = words.alternating_onset_words(0, 0, 128)
    assert "stays within" in onset and "128" in onset
    assert "stays below 100 %" in total and "128" in total


def test_float64_range_words_flip_at_the_largest_double():
    assert words.FLOAT64_MAX_LOG10 == pytest.approx(308.25, abs=0.01)
    assert words.float64_range_words(898.0) == "beyond"   # L = 2048, H = 24: the defaults
    assert words.float64_range_words(211.0) == "within"   # L = 512, H = 12
    assert words.float64_range_words(308.2) == "within" and words.float64_range_words(308.3) == "beyond"


def test_cancellation_words_flip_at_the_digits_of_a_double():
    assert words.cancellation_words(48.0) == "more than"
    assert words.cancellation_words(10.0) == "fewer than"


def test_finite_words_count_the_finite_entries_and_say_what_they_are_worth():
    assert words.finite_words(228, 2048, 923.0) == "only 228 of the 2048 entries come out finite at all"
    some = words.finite_words(512, 512, 220.0)
    assert some.startswith("all 512 entries come out finite") and "no correct digit" in some
    assert "only" not in some
    good = words.finite_words(64, 64, 5.0)
    assert good.startswith("all 64 entries come out finite") and "at least 11 correct digits" in good


def test_underflow_words():
    assert words.underflow_words(2000) == "underflows: it returns 2000 exact zeros"
    assert words.underflow_words(0).startswith("does not underflow")


def test_limit_words():
    assert words.limit_share_words(1, 2048) == "everywhere"
    assert "first 2.0% of the positions" in words.limit_share_words(42, 2048)
    assert "never before the end" in words.limit_end_words(2047, 2048)
    assert words.limit_end_words(100, 2048) == "starts at j = 100"
    assert words.total_variation_words(1e-4, 1e-7).startswith("Total variation is no guide")
    assert not words.total_variation_words(0.08, 0.04).startswith("Total variation is no guide")


def test_first_token_words():
    assert words.first_token_words([0.9, 0.99]) == "which for α ≥ 1/2 is most of the mass"
    assert words.first_token_words([0.3, 0.9]) == "which for α ≥ 1/2 is at least 0.30 of the mass"
    assert "no residual weight" in words.first_token_words([])


def test_tail_words_flip_at_the_flat_share():
    assert words.tail_words(0.04).startswith("less influential")
    assert words.tail_words(0.12) == "at least as influential as its share"


def test_regime_words():
    assert words.alpha_d_words(0.98456) == "0.985"
    assert "not reached" in words.alpha_d_words(math.inf)
    assert words.spike_at_dead_zone_words(-20.0, -5.0).startswith("far below the middle")
    assert words.spike_at_dead_zone_words(-5.5, -5.0).startswith("below the middle")
    assert words.spike_at_dead_zone_words(-4.0, -5.0).startswith("above the middle")
    assert words.middle_at_spike_words(3.0).startswith("more than ten times")
    assert words.middle_at_spike_words(0.5).startswith("within the dead-zone bound")


def test_apart_words_say_from_which_depth_or_that_the_largest_fails():
    text, h = words.apart_words([2, 4, 8, 24], [True, True, False, False], 2048)
    assert h == 8 and text.startswith("holds at L = 2048 for every depth tested from H = 8 to 24")
    assert "overlap (2 of the 4 depths)" in text
    text, h = words.apart_words([2, 4, 8, 24], [False, False, False, False], 2048)
    assert h == 2 and "overlap" not in text
    text, h = words.apart_words([2, 4, 8, 24], [False, False, False, True], 2048)
    assert h is None and text.startswith("fails at L = 2048") and "H = 24" in text


def test_trend_words():
    assert words.trend_words([0.9, 0.6, 0.3], "rises", "falls") == "falls"
    assert words.trend_words([0.5, 0.9, math.inf], "rises", "falls") == "rises"
    assert words.trend_words([0.0, 0.0, 0.75, 0.9], "rises", "falls") == "does not move in one direction"


def test_floor_words_place_the_papers_ratio_against_the_floor():
    assert words.floor_words(2.8).startswith("lies below that floor")   # out of the model's reach
    assert words.floor_words(1.2).startswith("lies above that floor")   # the model can produce it
    assert words.floor_words(2.2).startswith("lies within half a decade")


def test_eta_words():
    assert words.eta_words(True).startswith("is attenuated")
    assert words.eta_words(False).startswith("is not attenuated")


# The chapter itself at L = 512, H = 12 (the rest at the smoke set): the largest term of the alternating
# sum is about 10^211, inside float64's range, and all 512 entries are finite, where at the defaults
# (L = 2048, H = 24) the largest term is about 10^898 and most entries overflow. About 40 s on one core.
RERUN = {"L": 512, "H": 12}


@pytest.fixture(scope="module")
def rerun(tmp_path_factory):
    from attention_geometry.book import CHAPTERS
    from attention_geometry.book.context import thread_env
    from attention_geometry.book.execute import execute_chapter
    from attention_geometry.book.notebooks import glued_values, parse_glued
    from attention_geometry.book.project import Project

    chapter = CHAPTERS["cesaro"]
    out = tmp_path_factory.mktemp("cesaro") / "cesaro.ipynb"
    execute_chapter(Project.find(__file__), chapter, out, {**chapter.smoke, **RERUN}, kind="test", env=thread_env(1))
    return {k: parse_glued(v) for k, v in glued_values(out).items()}


def _float64_words_at(L: int, H: int) -> dict:
    import numpy as np

    import attention_geometry as ag

    max_term = ag.alternating_max_term_log10(L, H, 1.0)
    lost = max_term - ag.log_last_row(L, H, 1.0) / math.log(10)
    with np.errstate(all="ignore"):
        n_finite = int(np.isfinite(ag.last_row_alternating(L, H, 1.0)).sum())
    return {"cesaro-range-words": words.float64_range_words(float(max_term.max())),
            "cesaro-finite-words": words.finite_words(n_finite, L, float(lost.max()))}


def test_the_float64_sentences_flip_between_the_defaults_and_a_smaller_run(rerun):
    assert (rerun["cesaro-L"], rerun["cesaro-H"]) == (512, 12)
    assert rerun["cesaro-cancel-max-term"] < words.FLOAT64_MAX_LOG10
    assert rerun["cesaro-alt-finite"] == 512
    assert rerun["cesaro-range-words"] == "within"
    assert rerun["cesaro-finite-words"].startswith("all 512 entries come out finite")
    defaults = _float64_words_at(2048, 24)
    assert defaults["cesaro-range-words"] == "beyond"
    assert defaults["cesaro-finite-words"].startswith("only ")
    for key, words_at_defaults in defaults.items():
        assert rerun[key] != words_at_defaults, key


def test_no_glued_word_of_the_rerun_is_a_placeholder(rerun):
    texts = {k: v for k, v in rerun.items() if isinstance(v, str) and k.endswith(("-words", "-trend", "-onset", "-total"))}
    assert len(texts) >= 15
    for key, text in texts.items():
        assert text and "nan" not in text.split() and "None" not in text, (key, text)


def test_eta_all_words_read_the_two_ratios():
    assert words.eta_all_words(0.04, 0.037).startswith("falls like the forward signal")
    assert words.eta_all_words(0.0077, 8.6e-6) == "falls too, but by less than the forward signal"
    assert words.eta_all_words(1e-8, 1e-5) == "falls by more than the forward signal"
    assert words.eta_all_words(0.9, 1e-5) == "does not fall towards the middle"


def test_schedule_words_say_where_the_floor_reaches_the_papers_ratio():
    assert "at least 0.054" in words.schedule_words(0.054, 2.78)
    assert words.schedule_words(None, 1.5).startswith("with layer-dependent weights the scalar model reaches")
