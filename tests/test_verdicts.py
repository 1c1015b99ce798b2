"""The verdict rules: each can return every one of its verdicts, and says why."""

import math

import numpy as np
import pytest

from attention_geometry.stats import Estimate
from attention_geometry.verdicts import (
    SOURCES,
    VERDICTS,
    Claim,
    Label,
    Source,
    Verdict,
    bound_verdict,
    not_tested,
    phrase,
    verdict_words,
    property_verdict,
    settle,
    sign_verdict,
    value_verdict,
)


@pytest.mark.parametrize("est, claimed, tol, label", [
    (Estimate(0.50, 0.01), 0.5, 0.05, "reproduced"),   # interval inside the band
    (Estimate(0.80, 0.01), 0.5, 0.05, "differs"),      # disjoint
    (Estimate(0.54, 0.02), 0.5, 0.05, "not decided"),  # straddles the band's edge
    (Estimate(0.5, 0.0), 0.5, 0.0, "reproduced"),      # exact agreement
])
def test_value_verdict_returns_each_label(est, claimed, tol, label):
    v = value_verdict(est, claimed, atol=tol)
    assert v.label == label and "interval" in v.reason


def test_value_verdict_uses_t_intervals_for_few_seeds():
    normal, three = Estimate(1.0, 0.3), Estimate(1.0, 0.3, df=2)  # t(2) is much wider
    assert value_verdict(normal, 0.3, atol=0.05).label == "differs"
    assert value_verdict(three, 0.3, atol=0.05).label == "not decided"


@pytest.mark.parametrize("value, sign, label", [
    (0.5, +1, "reproduced"), (-0.5, +1, "refuted"), (0.01, +1, "not decided"),
    (-0.5, -1, "reproduced"), (0.5, -1, "refuted"),
])
def test_sign_verdict_returns_each_label(value, sign, label):
    assert sign_verdict(Estimate(value, 0.1), sign).label == label


@pytest.mark.parametrize("value, at_most, label", [
    (0.1, True, "reproduced"), (2.0, True, "refuted"), (0.95, True, "not decided"),
    (2.0, False, "reproduced"), (0.1, False, "refuted"),
])
def test_bound_verdict_returns_each_label(value, at_most, label):
    assert bound_verdict(Estimate(value, 0.05), 1.0, at_most=at_most).label == label


def test_property_and_not_tested():
    assert property_verdict(True, "exact").label == "reproduced"
    assert property_verdict(False, "counterexample").label == "refuted"
    assert not_tested("needs a GPU").label == "not tested"
    with pytest.raises(ValueError, match="reason"):
        not_tested("")


def test_every_label_is_reachable_by_some_rule():
    reached = {
        value_verdict(Estimate(0.5, 0.01), 0.5, atol=0.1).label,
        value_verdict(Estimate(0.9, 0.01), 0.5, atol=0.1).label,
        sign_verdict(Estimate(-1, 0.1), 1).label,
        sign_verdict(Estimate(0, 0.1), 1).label,
        not_tested("x").label,
        settle(Verdict("reproduced", "r"), None, defaults_are_paper=True, stand_in="a one-head decoder").label,
        value_verdict(Estimate(0.5, 0.01), 0.5, atol=0.1, alternative=0.45).label,
    }
    assert reached == set(VERDICTS)


def test_verdict_label_is_checked():
    with pytest.raises(ValueError, match="label = 'holds'"):
        Verdict("holds", "typed by hand")


def test_phrase_is_the_label_whatever_the_source():
    """No compound words: a row resting on the summary reads as its label too (its source
    has a column of its own)."""
    for label in VERDICTS:
        for source in SOURCES:
            assert phrase(Verdict(label, "r"), source) == label
    with pytest.raises(ValueError, match="source = 'a blog'"):
        phrase(Verdict("reproduced", "r"), "a blog")


def test_settle_prefers_the_paper_settings_and_says_when_it_cannot():
    small, big = Verdict("reproduced", "small"), Verdict("refuted", "big")
    assert settle(small, big).label == "refuted" and "paper's settings" in settle(small, big).reason
    only_small = settle(small, None)
    assert only_small.label == "reproduced" and "smaller settings only" in only_small.reason
    assert settle(small, None, defaults_are_paper=True) == small
    short = settle(small, big, shortfall="the model trained 2 % of the original's steps")
    assert short.label == "not decided" and short.reason.startswith("refuted as measured, but the model trained")
    assert settle(Verdict("not tested", "no data"), None, shortfall="anything").label == "not tested"
    stand = settle(small, big, stand_in="a 4-layer decoder swept in width")
    assert stand.label == "refuted" and stand.reason == "in the paper-scale run, with a 4-layer decoder swept in width: big"
    assert "paper's settings" not in stand.reason


def test_labels_and_sources_are_enums_that_read_as_their_words():
    """A verdict's label is a Label, made from its word; it compares, formats and is written
    to JSON as that word, so records and tables read as before."""
    import json

    assert VERDICTS == tuple(Label) and SOURCES == tuple(Source)  # members equal their words
    assert VERDICTS == ("reproduced", "reproduced in a stand-in", "differs", "refuted", "not decided",
                        "uninformative", "not tested")
    assert len([v for v in VERDICTS if v != "not tested"]) <= 6  # the ledger's six labels, no compound ones
    v = Verdict("not decided", "r")
    assert v.label is Label.NOT_DECIDED and v.label == "not decided" and str(v) == "not decided: r"
    assert f"{v.label}" == "not decided" and Verdict(Label.REFUTED, "r") == Verdict("refuted", "r")
    assert sign_verdict(Estimate(1.0, 0.1), 1).label is Label.REPRODUCED
    c = Claim(id="a", paper="p", where="w", source="summary", statement="s", measured="m", settings="s",
              verdict=v)
    assert c.source is Source.SUMMARY and phrase(v, c.source) == "not decided"
    assert json.loads(json.dumps(c.record()))["verdict"] == {"label": "not decided", "reason": "r", "evidence": None}
    assert json.loads(json.dumps(c.record()))["source"] == "summary"
    with pytest.raises(ValueError, match="label = 'maybe' is not one of the choices; allowed: one of 'reproduced'"):
        Verdict("maybe", "r")


def test_claim_records_and_checks():
    v = sign_verdict(Estimate(1.0, 0.1), 1)
    c = Claim(id="kim-thm1", paper="kim2025recency", where="Theorem 1", source="full text",
              statement="LN induces recency", measured="1.0 ± 0.1", settings="defaults", verdict=v)
    rec = c.record()
    assert rec["verdict"]["label"] == "reproduced" and rec["source"] in SOURCES
    with pytest.raises(ValueError, match="source = 'blog'"):
        Claim(id="x", paper="p", where="w", source="blog", statement="s", measured="m", settings="s", verdict=v)
    with pytest.raises(TypeError):
        Claim(id="x", paper="p", where="w", source="summary", statement="s", measured="m", settings="s",
              verdict="reproduced")


def test_floor_verdict_can_return_each_label():
    from attention_geometry.verdicts import floor_verdict

    assert floor_verdict(2.78, 2.0, atol=0.5).label == "differs"  # the paper's 10^2 below the model's floor
    assert floor_verdict(1.2, 2.0, atol=0.5).label == "reproduced"
    assert floor_verdict(2.2, 2.0, atol=0.5).label == "not decided"
    assert "floor" in floor_verdict(2.78, 2.0, atol=0.5, what="the scalar model").reason


def test_verdict_words_follow_the_verdict():
    words = dict(reproduced="holds", otherwise="fails", undecided="is open")
    assert [verdict_words(Verdict(label, ""), **words) for label in VERDICTS] == [
        "holds", "holds", "fails", "fails", "is open", "is open", "is open"]
    with pytest.raises(ValueError, match="verdict.label = 'maybe' is not allowed; allowed: reproduced"):
        verdict_words(_bad_label(), **words)


def _bad_label():  # Verdict refuses an unknown label itself; verdict_words checks it again
    v = Verdict("reproduced", "")
    object.__setattr__(v, "label", "maybe")
    return v


def test_a_censored_mean_is_not_decided_and_says_what_would_decide_it():
    """A lower bound (censored units at the most the run can show) decides nothing against a claimed
    value it lies below or around; the reason gives the bound and what would decide it."""
    from attention_geometry.verdicts import censored_verdict

    v = censored_verdict(Estimate(2.4, 0.2, 9), 3.0, censored=4, n=10, what="step ratio", decide="a longer run would")
    assert v.label == "not decided" and "at least 2.4" in v.reason and "4 of 10" in v.reason
    assert v.reason.endswith("a longer run would") and v.evidence["rule"] == "censored_verdict"
    with pytest.raises(ValueError):
        censored_verdict(Estimate(2.4, 0.2, 9), 3.0, censored=0, n=10, what="step ratio", decide="a longer run")
    with pytest.raises(ValueError):
        censored_verdict(Estimate(2.4, 0.2, 9), 3.0, censored=4, n=10, what="step ratio", decide="")
