"""Verdicts that cannot be fooled (issue 30): no selection bias, the right reference for a
correlation, tests with power, proportions and ratios, assumptions that are not the paper's,
the six labels, claim kinds, and one verdict per quoted sentence.

Every statistical rule has synthetic tests in both directions and a null simulation: on
200 seeded pure-noise data sets it returns a decisive verdict no more often than its
nominal rate, up to three binomial standard errors (``_tolerance``)."""

import json
import math

import numpy as np
import pytest

import attention_geometry as ag
from attention_geometry.book.ledger import (LEDGER_FIELDS, ConflictingVerdicts, check_one_verdict, conflicting_verdicts,
                                           normalised_statement, write_ledger_files)
from attention_geometry.power import (
    detectable_effect,
    model_reference,
    projected_reliability,
    samples_for_reliability,
    samples_to_decide,
)
from attention_geometry.ratios import clopper_pearson, fieller_interval
from attention_geometry.selection import cross_fit_extreme, naive_extreme, split_half_extreme
from attention_geometry.stats import Estimate, difference_estimate, mean_estimate
from attention_geometry.verdicts import (
    ratio_verdict,
    Claim,
    ClaimKind,
    Label,
    Verdict,
    all_verdict,
    bound_verdict,
    ceiling_verdict,
    extreme_change_verdict,
    heterogeneity_verdict,
    hypothesis_verdict,
    phrase,
    proportion_verdict,
    range_verdict,
    settle,
    sign_and_size_verdict,
    sign_verdict,
    value_verdict,
    verdict_words,
)
from attention_geometry.words import share_of_words, share_words

N_NULL = 200
DECISIVE = (Label.REPRODUCED, Label.REPRODUCED_IN_STAND_IN, Label.DIFFERS, Label.REFUTED)


def _tolerance(rate: float, n: int = N_NULL) -> float:
    """The nominal rate plus three binomial standard errors over ``n`` data sets."""
    return rate + 3 * math.sqrt(rate * (1 - rate) / n)


# ---------------------------------------------------------------- rule 2: no selection bias

def _two_noise_profiles(rng, n=24, L=32, quiet=0.5, loud=2.0):
    """Two flat profiles (value 5 everywhere), one four times noisier than the other."""
    return 5 + quiet * rng.standard_normal((n, L)), 5 + loud * rng.standard_normal((n, L))


def test_the_naive_extreme_is_biased_and_the_split_half_one_is_not():
    rng = np.random.default_rng(0)
    naive, split = [], []
    for _ in range(100):
        x = 5 + 2.0 * rng.standard_normal((24, 32))  # flat: the true log max/min is 0
        naive.append(naive_extreme(x).value)
        split.append(split_half_extreme(x).value)
    assert np.mean(naive) > 0.3  # the maximum of 32 noisy means picks the noise
    assert abs(np.mean(split)) < 3 * np.std(split) / math.sqrt(100)  # unbiased, to its Monte Carlo error


def test_split_half_extreme_finds_a_real_peak_and_trough():
    rng = np.random.default_rng(1)
    profile = np.ones(32)
    profile[5], profile[20] = 4.0, 0.5
    x = profile * (1 + 0.1 * rng.standard_normal((24, 32)))
    assert split_half_extreme(x).interval()[0] > math.log(8) - 0.3
    assert split_half_extreme(x, "max").value == pytest.approx(4.0, rel=0.1)
    assert split_half_extreme(x, "min").value == pytest.approx(0.5, rel=0.1)
    with pytest.raises(ValueError, match="extreme = 'median'"):
        split_half_extreme(x, "median")
    with pytest.raises(ValueError, match="samples"):
        split_half_extreme(np.ones(8))


def test_cross_fit_extreme_is_unbiased_on_noise_and_pairs_two_models_row_by_row():
    rng = np.random.default_rng(3)
    naive, cross = [], []
    for _ in range(200):
        x = 5 + 2.0 * rng.standard_normal((16, 8))  # flat: the true minimum is 5
        naive.append(x.mean(0).min())
        cross.append(cross_fit_extreme(x, "min").mean())
    assert np.mean(naive) < 5 - 0.5  # the smallest of 8 noisy means picks the noise
    assert abs(np.mean(cross) - 5) < 3 * np.std(cross) / math.sqrt(200)
    # a real trough at position 3 is found from either half, and each row is read there
    profile = np.ones(8)
    profile[3] = 0.2
    x = profile + 0.01 * rng.standard_normal((10, 8))
    np.testing.assert_array_equal(cross_fit_extreme(x, "min"), x[:, 3])
    np.testing.assert_array_equal(cross_fit_extreme(-x, "max"), -x[:, 3])
    # the result has a row per replicate, so a second model on the same rows pairs with it
    assert cross_fit_extreme(x).shape == (10,)
    with pytest.raises(ValueError, match="extreme"):
        cross_fit_extreme(x, "log max/min")


def test_a_real_deepening_is_reproduced_and_a_flattening_refuted():
    rng = np.random.default_rng(2)
    shallow, deep = np.ones(32), np.ones(32)
    shallow[10], deep[10] = 0.8, 0.3
    a = shallow * (1 + 0.05 * rng.standard_normal((24, 32)))
    b = deep * (1 + 0.05 * rng.standard_normal((24, 32)))
    assert extreme_change_verdict(a, b, +1).label == "reproduced"
    assert extreme_change_verdict(b, a, +1).label == "refuted"
    assert extreme_change_verdict(a, b, 0).label == "reproduced"
    assert "split-half" in extreme_change_verdict(a, b, +1).reason


def test_null_two_noise_profiles_do_not_deepen_but_the_naive_ratio_says_they_do():
    """Pure noise, the second profile 4x noisier: the split-half rule is decisive at most at its
    nominal 5 % (either sign of a 95 % interval); the naive max/min ratio calls "deepens" in most."""
    rng = np.random.default_rng(3)
    decisive = differs = naive = 0
    for _ in range(N_NULL):
        a, b = _two_noise_profiles(rng)
        decisive += extreme_change_verdict(a, b, +1).label in DECISIVE
        differs += extreme_change_verdict(a, b, 0).label in DECISIVE
        naive += sign_verdict(difference_estimate(naive_extreme(b), naive_extreme(a)), +1).label == "reproduced"
    assert decisive / N_NULL <= _tolerance(0.05)
    assert differs / N_NULL <= _tolerance(0.05)
    assert naive / N_NULL > 0.3  # the bias the rule removes


# ---------------------------------------------------------------- rule 3: the right reference

def _ranks(x):
    return np.argsort(np.argsort(x, axis=-1), axis=-1).astype(float)


def _corr(a, b):
    a, b = a - a.mean(-1, keepdims=True), b - b.mean(-1, keepdims=True)
    return (a * b).sum(-1) / np.sqrt((a * a).sum(-1) * (b * b).sum(-1))


def _spearman(a, b):  # continuous data, no ties: Pearson on ranks (vectorised over leading axes)
    return _corr(_ranks(a), _ranks(b))


def _reliability(y, corr):
    """The split-half correlation (even/odd rows) stepped up to the full sample (Spearman-Brown)."""
    n = y.shape[-2]
    half = corr(y[..., 0::2, :].mean(-2), y[..., 1::2, :].mean(-2))
    return np.vectorize(lambda r: projected_reliability(float(r), n // 2, n))(half)


TRUTH = np.linspace(-1, 1, 40) ** 2 + 0.3 * np.linspace(-1, 1, 40)


@pytest.mark.parametrize("sigma", [0.5, 1.0])
def test_a_noiseless_model_correlates_with_one_average_at_the_square_root_of_the_reliability(sigma):
    """Pearson: E corr(truth, average) = sqrt(r) to Monte Carlo error (r = 0.9 and 0.7 here; at
    r near 0.3 the finite number of positions adds about 0.02); Spearman (what the book computes)
    falls a little short of it (ranks are not Gaussian), but is far above r itself."""
    rng = np.random.default_rng(4)
    y = TRUTH + sigma * rng.standard_normal((N_NULL, 16, TRUTH.size))
    for corr, tol in [(_corr, 0.015), (_spearman, 0.035)]:
        r = _reliability(y, corr)
        model = corr(np.broadcast_to(TRUTH, (N_NULL, TRUTH.size)), y.mean(1))
        assert model.mean() == pytest.approx(math.sqrt(r.mean()), abs=tol)
        assert model.mean() > r.mean() + 0.02  # the old reference, r, sat too low


def test_spearman_brown_prophecy():
    assert projected_reliability(0.5, 10, 10) == 0.5
    assert projected_reliability(0.5, 10, 20) == pytest.approx(2 / 3)
    assert projected_reliability(2 / 3, 20, 10) == pytest.approx(0.5)  # and back
    assert projected_reliability(-0.1, 10, 1000) == -0.1
    assert samples_for_reliability(0.5, 10, 2 / 3) == 20 and samples_for_reliability(0.0, 10, 0.5) == math.inf
    assert projected_reliability(0.3, 16, int(samples_for_reliability(0.3, 16, 0.9))) >= 0.9
    ref = model_reference(Estimate(0.81, 0.02))
    assert ref.value == pytest.approx(0.9) and ref.se == pytest.approx(0.02 / 1.8)


def test_ceiling_verdict_reads_a_model_against_the_square_root():
    measured, reliability = Estimate(0.83, 0.03), Estimate(0.86, 0.02)
    new = ceiling_verdict(measured, 0.99, reliability)  # sqrt(0.86) = 0.927: the model falls short
    assert new.label == "differs" and "sqrt(reliability)" in new.reason
    # two averages are read against r itself: 0.83 is within the noise of 0.86
    assert ceiling_verdict(measured, 0.99, reliability, compares="averages").label == "not decided"
    short = ceiling_verdict(Estimate(0.7, 0.03), 0.99, Estimate(0.5, 0.05), n=16)
    assert short.label == "not decided" and "samples (now 16)" in short.reason
    with pytest.raises(ValueError, match="compares"):
        ceiling_verdict(measured, 0.99, reliability, compares="halves")


def test_ceiling_verdict_is_uninformative_when_an_alternative_would_reach_the_claim_at_the_papers_n():
    est, rel = Estimate(0.76, 0.03), Estimate(0.6, 0.05)
    kw = dict(n=16, paper_n=1000)
    weak = ceiling_verdict(est, 0.99, rel, alternative=Estimate(0.5, 0.05), **kw)
    assert weak.label == "not decided"
    strong = ceiling_verdict(est, 0.99, rel, alternative=Estimate(0.77, 0.05), **kw)
    assert strong.label == "uninformative" and "1,000 samples" in strong.reason
    assert ceiling_verdict(Estimate(0.995, 0.002), 0.99, Estimate(0.999, 0.001), n=16, paper_n=1000,
                           alternative=Estimate(0.99, 0.01)).label == "uninformative"  # never reproduced


def test_null_a_perfect_model_is_not_said_to_differ():
    """The model *is* the truth; its Spearman with the average and the reliability are
    bootstrapped over the sequences. The rule says "differs" at most at its nominal 2.5 %
    (the lower tail of a 95 % interval)."""
    rng = np.random.default_rng(5)
    n, boot = 16, 100
    differs = 0
    for _ in range(N_NULL):
        y = TRUTH + 1.0 * rng.standard_normal((n, TRUTH.size))
        idx = rng.integers(0, n, (boot, n))
        yb = y[idx]  # (boot, n, L)
        est = Estimate(float(_spearman(TRUTH, y.mean(0))), float(_spearman(np.broadcast_to(TRUTH, (boot, TRUTH.size)),
                                                                              yb.mean(1)).std(ddof=1)))
        rel = Estimate(float(_reliability(y, _spearman)), float(_reliability(yb, _spearman).std(ddof=1)))
        differs += ceiling_verdict(est, 0.99, rel).label == "differs"
    assert differs / N_NULL <= _tolerance(0.025)


# ---------------------------------------------------------------- rule 4: tests with power

def test_not_decided_says_what_would_decide_it():
    v = sign_verdict(Estimate(0.1, 0.1), +1, n=10)
    needed = samples_to_decide(0.1, 0.1, 10)
    assert needed == 39 and "about 39 samples (now 10)" in v.reason
    shrunk = Estimate(0.1, 0.1 * math.sqrt(10 / needed))
    assert sign_verdict(shrunk, +1).label == "reproduced"  # at that n the same centre decides
    assert "times as many samples" in sign_verdict(Estimate(0.1, 0.1), +1).reason
    assert "no sample size" in sign_verdict(Estimate(0.0, 0.1), +1).reason
    assert "samples (now 10)" in value_verdict(Estimate(0.54, 0.02), 0.5, atol=0.05, n=10).reason
    assert "samples (now 10)" in bound_verdict(Estimate(0.95, 0.05), 1.0, at_most=True, n=10).reason
    assert samples_to_decide(0.1, 0.0, 10) == math.inf
    assert "samples (now 10)" in ag.range_verdict(Estimate(0.95, 0.05), 0.0, 1.0, n=10).reason
    assert "samples (now 200)" in ag.proportion_verdict(196, 200, at_least=0.99).reason
    two = ag.values_verdict([Estimate(1.0, 0.01), Estimate(2.04, 0.02)], [1.0, 2.0], atol=0.05)
    assert two.label == "not decided" and "for 2, the hardest item" in two.reason and "samples" in two.reason


def test_a_reproduced_tolerance_rule_reports_what_it_could_have_seen():
    v = value_verdict(Estimate(0.5, 0.01), 0.5, atol=0.05)
    assert v.label == "reproduced" and "a departure of 0.028 beyond the band (80 % power)" in v.reason
    assert "past the bound" in bound_verdict(Estimate(0.1, 0.05), 1.0, at_most=True).reason
    assert "past the nearer bound" in ag.range_verdict(Estimate(0.5, 0.01), 0.0, 1.0).reason
    every = ag.proportion_verdict(1000, 1000, at_least=0.99)
    assert every.label == "reproduced" and "a true proportion of 0.981" in every.reason
    both = ag.values_verdict([Estimate(1.0, 0.01), Estimate(2.0, 0.02)], [1.0, 2.0], atol=0.1)
    assert both.label == "reproduced" and "0.056 beyond the band on every item" in both.reason


def test_detectable_effect_is_seen_with_its_power():
    """A true value ``detectable_effect(se)`` beyond a band's edge gives ``differs`` in 80 % of draws."""
    rng = np.random.default_rng(6)
    se, edge = 0.1, 0.55  # the band 0.5 ± 0.05
    delta = detectable_effect(se)
    assert delta == pytest.approx(2.8016 * se, rel=1e-3)
    draws = rng.normal(edge + delta, se, 2000)
    seen = np.mean([value_verdict(Estimate(v, se), 0.5, atol=0.05).label == "differs" for v in draws])
    assert seen == pytest.approx(0.8, abs=3 * math.sqrt(0.16 / 2000))


def test_a_rule_that_cannot_tell_the_claim_from_its_negation_is_uninformative():
    # the band 1 ± 1.5 contains "no effect" (0): inside it proves nothing
    assert value_verdict(Estimate(1.0, 0.1), 1.0, atol=1.5, alternative=0.0).label == "uninformative"
    assert value_verdict(Estimate(1.0, 0.1), 1.0, atol=0.5, alternative=0.0).label == "reproduced"
    # "W at most 0.025" when a flat profile has W = 0.01 as well
    assert bound_verdict(Estimate(0.01, 0.002), 0.025, at_most=True, alternative=0.01).label == "uninformative"
    assert bound_verdict(Estimate(0.01, 0.002), 0.025, at_most=True, alternative=0.2).label == "reproduced"
    assert bound_verdict(Estimate(0.1, 0.002), 0.025, at_most=True, alternative=0.01).label == "refuted"


def test_null_value_sign_and_bound_rules_keep_their_nominal_rates():
    """True value on the band's edge (the interval narrow beside the band) / at 0 / on the bound,
    ten samples each (t intervals), on 1000 data sets: the nominal rates are 2.5 % (one edge), 5 % and 5 %."""
    rng = np.random.default_rng(7)
    runs = 5 * N_NULL  # cheap: more data sets, a tighter check
    value = sign = bound = 0
    for _ in range(runs):
        x = rng.standard_normal(10)
        value += value_verdict(mean_estimate(0.55 + 0.01 * x), 0.5, atol=0.05).label == "reproduced"
        sign += sign_verdict(mean_estimate(x), +1).label in DECISIVE
        bound += bound_verdict(mean_estimate(1.0 + x), 1.0, at_most=True).label in DECISIVE
    assert value / runs <= _tolerance(0.025, runs)
    assert sign / runs <= _tolerance(0.05, runs)
    assert bound / runs <= _tolerance(0.05, runs)


# ---------------------------------------------------------------- rule 9: ratios and proportions

def test_proportion_verdict_reads_every_as_a_proportion_with_a_tolerance():
    assert clopper_pearson(100, 100)[0] == pytest.approx(0.025 ** (1 / 100))
    assert proportion_verdict(100, 100, at_least=0.95).label == "reproduced"
    assert proportion_verdict(10, 10, at_least=0.95).label == "not decided"  # too few windows to say
    assert proportion_verdict(80, 100, at_least=0.95).label == "refuted"
    assert proportion_verdict(199, 200, at_least=0.95).label == "reproduced"  # one failure is within tolerance


def test_null_proportion_on_its_threshold_is_rarely_decisive():
    rng = np.random.default_rng(8)
    k = rng.binomial(200, 0.95, N_NULL)
    decisive = sum(proportion_verdict(int(s), 200, at_least=0.95).label in DECISIVE for s in k)
    assert decisive / N_NULL <= _tolerance(0.05)


def test_a_share_word_needs_a_denominator_that_excludes_zero():
    lo, hi = fieller_interval(Estimate(0.9, 0.02), Estimate(1.0, 0.02))
    assert lo < 0.9 < hi and share_of_words(Estimate(0.9, 0.02), Estimate(1.0, 0.02)) == "almost entirely"
    assert fieller_interval(Estimate(0.9, 0.02), Estimate(0.1, 0.1)) is None
    assert share_of_words(Estimate(0.9, 0.02), Estimate(0.1, 0.1)).startswith("to an undetermined extent")
    # a bootstrap interval of the share with the whole's own interval (chapter 2): both directions
    assert share_words(1.3, 10.3, True, whole=(0.01, 0.03)) == "more than entirely"
    assert share_words(1.3, 10.3, True, whole=(-0.005, 0.03)) == "to an undetermined extent"


def test_null_a_whole_of_zero_gets_no_share_word():
    rng = np.random.default_rng(9)
    worded = sum(fieller_interval(Estimate(rng.normal(0.5, 0.1), 0.1), Estimate(rng.normal(0.0, 0.1), 0.1))
                 is not None for _ in range(N_NULL))
    assert worded / N_NULL <= _tolerance(0.05)


# ---------------------------------------------------------------- labels, kinds, assumptions

def test_stand_in_and_assumption_in_settle():
    ok = Verdict("reproduced", "r")
    assert settle(ok, None, defaults_are_paper=True, stand_in="a one-head decoder").label == "reproduced in a stand-in"
    assert settle(Verdict("refuted", "r"), None, stand_in="x").label == "refuted"
    stored = settle(ok, ok, stand_in="a 4-layer decoder")
    assert stored.label == Label.REPRODUCED_IN_STAND_IN and stored.reason.startswith("in the paper-scale run")
    capped = settle(ok, None, defaults_are_paper=True, assumption="an assumed σ")
    assert capped.label == "not decided" and "rests on an assumed σ, not the paper's" in capped.reason
    kept = settle(ok, None, defaults_are_paper=True, assumption="an assumed σ",
                  assumption_checked="the verdict is the same for σ from 0.5 to 2")
    assert kept.label == "reproduced" and "σ from 0.5 to 2" in kept.reason
    assert settle(Verdict("not decided", "r"), None, assumption="float32").label == "not decided"
    assert "would decide it" in capped.reason


def test_a_refutation_in_a_stand_in_does_not_refute_the_paper():
    """A paper claim found wrong in a stand-in is not decided (what would decide it is said); a reading
    keeps its verdict; a reproduction is qualified."""
    for label in ("refuted", "differs"):
        capped = settle(Verdict(label, "r"), Verdict(label, "r"), stand_in="a byte-level decoder", paper_claim=True)
        assert capped.label == "not decided" and f"{label} in the stand-in (a byte-level decoder)" in capped.reason
        assert "would decide it" in capped.reason
        checked = settle(Verdict(label, "r"), None, defaults_are_paper=True, stand_in="x", paper_claim=True,
                         assumption="one weight draw", assumption_checked="the draws agree")
        assert checked.label == "not decided"  # a checked assumption is not a checked stand-in
        assert settle(Verdict(label, "r"), None, defaults_are_paper=True, stand_in="x").label == label  # a reading
    ok = settle(Verdict("reproduced", "r"), None, defaults_are_paper=True, stand_in="x", paper_claim=True)
    assert ok.label == "reproduced in a stand-in"


def test_new_labels_read_as_words():
    words = dict(reproduced="holds", otherwise="fails", undecided="is open")
    assert verdict_words(Verdict(Label.REPRODUCED_IN_STAND_IN, ""), **words) == "holds"
    assert verdict_words(Verdict(Label.UNINFORMATIVE, ""), **words) == "is open"
    assert phrase(Verdict(Label.UNINFORMATIVE, ""), "summary") == "uninformative"
    assert phrase(Verdict(Label.REPRODUCED_IN_STAND_IN, ""), "full text") == "reproduced in a stand-in"
    assert phrase(Verdict(Label.REPRODUCED_IN_STAND_IN, ""), "summary") == "reproduced in a stand-in"
    assert phrase(Verdict(Label.REFUTED, ""), "summary") == "refuted"


def test_claims_carry_their_kind_into_the_records():
    v = sign_verdict(Estimate(1.0, 0.1), 1)
    c = Claim(id="a", paper="p", where="w", source="full text", statement="s", measured="m", settings="s", verdict=v)
    assert c.claim_kind is ClaimKind.PAPER and json.loads(json.dumps(c.record()))["claim_kind"] == "paper"
    r = Claim(id="b", paper="p", where="w", source="full text", statement="s", measured="m", settings="s", verdict=v,
              claim_kind="reading")
    assert r.record()["claim_kind"] == "reading"
    with pytest.raises(ValueError, match="claim_kind = 'opinion'"):
        Claim(id="c", paper="p", where="w", source="full text", statement="s", measured="m", settings="s",
              verdict=v, claim_kind="opinion")


# ---------------------------------------------------------------- rule 6: one claim, one verdict

def _row(id, chapter, statement, verdict, differs_from=""):
    return {"id": id, "paper": "Chowdhury 2026", "where": "§5", "source": "full text", "claim_kind": "paper",
            "statement": statement, "settings": "s", "measured": "m", "verdict": verdict, "reason": "r",
            "differs_from": differs_from, "chapter": chapter, "link": "x.html"}


def test_rows_quoting_one_sentence_must_agree_or_say_how_they_differ(tmp_path):
    a = _row("a", "cesaro", "“a peak-to-trough ratio of ≈ $10^2$”", "differs")
    b = _row("b", "jacobians", "A peak-to-trough ratio of ≈ 10^2.", "reproduced")
    c = _row("c", "jacobians", "a peak-to-trough ratio of ≈ 10^2", "reproduced in a stand-in",
             differs_from="the trained model, not the random initialisation")
    d = _row("d", "cesaro", "a peak-to-trough ratio of ≈ 10^2", "reproduced")  # same chapter as a: its own business
    assert normalised_statement(a["statement"]) == normalised_statement(b["statement"])
    assert [(x["id"], y["id"]) for x, y in conflicting_verdicts([a, b, c, d])] == [("a", "b")]
    assert conflicting_verdicts([b, d]) == []  # the same verdict
    half = _row("e", "synthesis", "this book's reading of “A peak-to-trough ratio of ≈ 10^2”: with the residual",
                "refuted")
    assert [x["id"] for pair in conflicting_verdicts([d, half]) for x in pair] == ["d", "e"]  # a quote inside
    short = _row("f", "synthesis", "“of ≈ 10^2” again", "refuted")  # too short a fragment to be a sentence
    assert conflicting_verdicts([d, short]) == []
    with pytest.raises(ConflictingVerdicts, match="e \\(synthesis: refuted\\)"):
        check_one_verdict([d, half])
    check_one_verdict([d, _row("g", "synthesis", half["statement"], "refuted", differs_from="with the residual")])
    js, cs = write_ledger_files([a, b], tmp_path)
    assert "claim_kind" in LEDGER_FIELDS and cs.read_text().splitlines()[0].split(",")[4] == "claim_kind"


# ---------------------------------------------------------------- null simulations of the other rules

def test_null_every_case_rule_refutes_no_more_often_than_one_case_would():
    """Seven cases, each at 0 (the edge of "positive"), on 400 data sets: without the
    Bonferroni check a counterexample turns up in about 1 - 0.975^7 = 16 % of them."""
    rng = np.random.default_rng(11)
    decisive = 0
    for _ in range(N_NULL * 2):
        parts = {f"m{i}": sign_verdict(mean_estimate(rng.standard_normal(10)), +1) for i in range(7)}
        decisive += all_verdict(parts).label in DECISIVE
    assert decisive / (N_NULL * 2) <= _tolerance(0.05, N_NULL * 2)


def test_every_case_rule_still_refutes_a_real_counterexample_and_reproduces_a_real_effect():
    rng = np.random.default_rng(12)
    good = {f"m{i}": sign_verdict(mean_estimate(1 + 0.1 * rng.standard_normal(10)), +1) for i in range(7)}
    assert all_verdict(good).label == "reproduced"
    bad = {**good, "m0": sign_verdict(mean_estimate(-1 + 0.1 * rng.standard_normal(10)), +1)}
    assert all_verdict(bad).label == "refuted"
    weak = {**good, "m0": sign_verdict(Estimate(-0.22, 0.1), +1)}  # refuted alone, not among seven
    assert weak["m0"].label == "refuted" and all_verdict(weak).label == "not decided"
    assert "Bonferroni" in all_verdict(weak).reason


def test_null_hypothesis_range_and_sign_and_size_rules_keep_their_nominal_rates():
    """p uniform under the null; a value on the edge of a range; an effect on the edge of the
    size band: 400 pure-noise data sets each, decisive no more often than the nominal rate."""
    rng = np.random.default_rng(13)
    hyp = rng_ = size = ratio = 0
    for _ in range(N_NULL * 2):
        ratio += ratio_verdict(mean_estimate(1.2 + 0.01 * rng.standard_normal(10)), 1.0, rtol=0.2).label in DECISIVE
        hyp += hypothesis_verdict(float(rng.uniform()), claim_rejects_null=True).label in DECISIVE
        rng_ += range_verdict(mean_estimate(2.0 + rng.standard_normal(10)), -1.0, 2.0).label in DECISIVE
        size += sign_and_size_verdict(mean_estimate(1.2 + 0.01 * rng.standard_normal(10)), 1.0,
                                      rtol=0.2).label in DECISIVE
    runs = N_NULL * 2
    assert hyp / runs <= _tolerance(0.01, runs)
    assert rng_ / runs <= _tolerance(0.05, runs)
    assert size / runs <= _tolerance(0.05, runs)
    assert ratio / runs <= _tolerance(0.05, runs)


def test_the_size_rule_sees_a_right_size_a_wrong_size_and_says_what_a_miss_it_could_see():
    """The size row in both directions: inside the band, well outside it, and on the edge."""
    ok = ratio_verdict(Estimate(1.01, 0.005), 1.0, rtol=0.05)
    assert ok.label == "reproduced" and "beyond ±0.05 would have been seen" in ok.reason
    off = ratio_verdict(Estimate(2.7, 0.01), 1.0, rtol=0.05)
    assert off.label == "differs" and "factor 2.7" in off.reason
    edge = ratio_verdict(Estimate(1.0, 0.2), 1.0, rtol=0.05)
    assert edge.label == "not decided" and "would decide it" in edge.reason
    # the sign is another row's: a negative effect is a size that differs, not a refutation here
    assert ratio_verdict(Estimate(-1.0, 0.01), 1.0, rtol=0.05).label == "differs"


def test_null_a_uniform_effect_is_not_called_mixed():
    """Three cases with one true effect (0, tol 0): "differs in kind" no more than 5 %."""
    rng = np.random.default_rng(14)
    mixed = sum(heterogeneity_verdict({k: mean_estimate(rng.standard_normal(10)) for k in "abc"}).label
                == "reproduced" for _ in range(N_NULL * 2))
    assert mixed / (N_NULL * 2) <= _tolerance(0.05, N_NULL * 2)


def test_a_paired_difference_says_how_many_pairs_would_decide_it():
    from attention_geometry.stats import paired_difference

    rng = np.random.default_rng(15)
    est = paired_difference(0.1 + rng.standard_normal(10), rng.standard_normal(10))
    v = sign_verdict(est, +1)
    assert v.label == "not decided" and "samples (now 10) would decide it" in v.reason


def test_every_case_rule_looks_through_the_draws_qualifier():
    """A case refuted over 8 draws, every draw on its side, at 95 % but not at the level of seven
    cases: the every-case rule judges the sign inside draws_verdict again, and does not refute."""
    from attention_geometry.draws import over_draws
    from attention_geometry.verdicts import draws_verdict

    rng = np.random.default_rng(16)
    good = {f"m{i}": sign_verdict(mean_estimate(1 + 0.1 * rng.standard_normal(10)), +1) for i in range(7)}
    weak = over_draws(np.array([-0.001, -0.002, -0.005, -0.01, -0.3, -0.5, -0.6, -0.62]))
    part = draws_verdict(sign_verdict(weak, +1), weak)
    assert part.label == "refuted"
    assert all_verdict({**good, "m0": part}).label == "not decided"
    strong = over_draws(-1.0 + 0.01 * np.arange(8))
    assert all_verdict({**good, "m0": draws_verdict(sign_verdict(strong, +1), strong)}).label == "refuted"
