"""Chapter 1's computed words flip on either side of their thresholds (no chapter execution)."""

import numpy as np

from attention_geometry.book.chapters import layernorm as ch


def _text(value) -> str:
    return getattr(value, "data", value)


def test_sphere_words_follow_the_tolerance():
    assert "working precision" in ch.sphere_words(True, 1e-6)
    assert "above 1e-06" in ch.sphere_words(False, 1e-6)


def test_eps_scale_words_compare_unit_norm_and_unit_variance():
    assert "negligible or not" in ch.eps_scale_words(1e-8, 1e-5)
    assert "barely matters" in ch.eps_scale_words(1e-8, 1.5e-8)
    assert "by less than an order of magnitude" in ch.eps_scale_words(1e-8, 6.6e-8)  # the smoke set's d = 8


def test_selected_words_say_every_only_when_all_are_selected():
    assert ch.selected_words(1.0, "every output wins") == "every output wins"
    assert "only 50.0%" in ch.selected_words(0.5, "every output wins")


def test_affine3_words_flip_with_the_naive_query():
    fails = ch.affine3_glue(200, 0.3, 1.0)
    works = ch.affine3_glue(200, 1.0, 0.9)
    assert "fails" in _text(fails["aff3-naive-words"]) and "every one" in _text(fails["aff3-selected-words"])
    assert "works" in _text(works["aff3-naive-words"]) and "90.0%" in _text(works["aff3-selected-words"])


def test_affine_words_flip():
    base = dict(mean_median=0.5, norm_ratio=2.0, plane_residual=1e-16, uniform_spread=1e-16, selected=1.0,
                min_margin=0.1, self_selected=1.0)
    out = ch.affine_glue(base, 10, 5)
    assert "gone" in _text(out["aff-gone-words"]) and "happens to work" in _text(out["aff-self-words"])
    out = ch.affine_glue({**base, "mean_median": 0.0, "norm_ratio": 1.0, "selected": 0.9, "self_selected": 0.5}, 10, 5)
    assert "happen to leave" in _text(out["aff-gone-words"]) and "fails" in _text(out["aff-self-words"])
    assert "only 90.0%" in _text(out["aff-selected-words"])


def test_rms_words_flip():
    yes = ch.rms_glue(dict(norm_dev=0, mean_err=0, mean_median=3.0, ln_err=1e-15), 1e-6)
    no = ch.rms_glue(dict(norm_dev=0, mean_err=0, mean_median=0.0, ln_err=1e-3), 1e-6)
    assert _text(yes["rms-project-words"]) == "RMSNorm does not project" and "to rounding" in _text(yes["rms-ln-words"])
    assert "near zero" in _text(no["rms-project-words"]) and "more than" in _text(no["rms-ln-words"])


def test_circle_words_flip():
    circle = np.sqrt(3) * np.array([[1.0, -1.0, 0.0]]) / np.sqrt(2)
    assert "every output lies" in _text(ch.circle_glue(circle, 1, 1e-6)["ln3d-words"])
    assert "stray" in _text(ch.circle_glue(2 * circle, 1, 1e-6)["ln3d-words"])


def test_lowvar_words_flip_with_the_pentagon():
    inside = dict(norm_exact=1.732, wins_exact=0.1, norm_eps=0.5, wins_eps=0.0)
    outside = dict(norm_exact=1.732, wins_exact=0.1, norm_eps=1.7, wins_eps=0.1)
    assert "no query selects it" in _text(ch.lowvar_glue(inside, 1e-5, 100, 10)["lowvar-words"])
    assert "stays outside" in _text(ch.lowvar_glue(outside, 1e-5, 100, 10)["lowvar-words"])
