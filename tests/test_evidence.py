"""Verdicts keep their evidence (the rule and its arguments), and a stored verdict is computed
again with today's rules: editing a rule changes a stored run's verdict at the next build."""

import inspect
import json
from types import SimpleNamespace

import numpy as np
import pytest

from attention_geometry import evidence, verdicts as vd
from attention_geometry.book.claims import claims_markdown
from attention_geometry.stats import Estimate, PairedDifference

E = Estimate(1.0, 0.2, df=10)


def calls():
    """One call of every rule (the arguments a chapter would pass)."""
    rng = np.random.default_rng(0)
    return {
        "value_verdict": lambda: vd.value_verdict(E, 1.1, atol=0.5, n=11),
        "sign_verdict": lambda: vd.sign_verdict(E, -1, what="slope"),
        "bound_verdict": lambda: vd.bound_verdict(E, 2.0, at_most=True, alternative=1.5),
        "floor_verdict": lambda: vd.floor_verdict(3.0, 10.0, atol=1.0),
        "sign_and_size_verdict": lambda: vd.sign_and_size_verdict(E, 1.05, rtol=0.2),
        "ratio_verdict": lambda: vd.ratio_verdict(E, 1.05, rtol=0.2, note="the factor tends to e"),
        "censored_verdict": lambda: vd.censored_verdict(E, 3.0, censored=2, n=10, what="step ratio", decide="a longer run would"),
        "hypothesis_verdict": lambda: vd.hypothesis_verdict(1e-4, claim_rejects_null=True),
        "property_verdict": lambda: vd.property_verdict(True, "exact"),
        "ceiling_verdict": lambda: vd.ceiling_verdict(Estimate(0.9, 0.01), 0.99, Estimate(0.95, 0.01)),
        "extreme_change_verdict": lambda: vd.extreme_change_verdict(rng.gamma(4, size=(8, 12)),
                                                                    rng.gamma(4, size=(8, 12))),
        "proportion_verdict": lambda: vd.proportion_verdict(97, 100, at_least=0.9),
        "range_verdict": lambda: vd.range_verdict(E, -1, 2),
        "all_verdict": lambda: vd.all_verdict({"a": vd.sign_verdict(E, 1), "b": vd.not_tested("no model")}),
        "heterogeneity_verdict": lambda: vd.heterogeneity_verdict({"x": E, "y": PairedDifference(-1.0, 0.1, df=9)}),
        "not_tested": lambda: vd.not_tested("needs the trained model"),
        "values_verdict": lambda: vd.values_verdict([E, Estimate(2.0, 0.1)], (1.0, 2.0), atol=0.5),
        "angle_verdict": lambda: vd.angle_verdict(np.array([11.0, 12.5, 13.0]), 16_000, 12, 16_000),
        "table_verdict": lambda: vd.table_verdict([E], [1.0], (3, 10), (5, 20)),
        "after_norm_verdict": lambda: vd.after_norm_verdict(0.0, 0.0, 0.9, eps=1e-5),
        "draws_verdict": lambda: _draws_call(rng),
    }


def _draws_call(rng):
    from attention_geometry.draws import over_draws

    est = over_draws([1 + rng.standard_normal(16) for _ in range(8)])
    return vd.draws_verdict(vd.sign_verdict(est, +1), est)


def stored(verdict):
    """The verdict as a stored run keeps it: through JSON."""
    return json.loads(json.dumps({"label": verdict.label, "reason": verdict.reason, "evidence": verdict.evidence}))


def test_every_rule_is_registered_and_exercised_here():
    returns_verdict = {name for name in vd.__all__ if inspect.isfunction(getattr(vd, name))
                       and inspect.signature(getattr(vd, name)).return_annotation is vd.Verdict}
    registered = set(evidence.rules())
    assert returns_verdict - {"settle", "recompute"} <= registered
    assert registered == set(calls())


@pytest.mark.parametrize("name", sorted(calls()))
def test_a_stored_verdict_is_computed_again_to_the_same_verdict(name):
    verdict = calls()[name]()
    assert verdict.evidence["rule"] == name
    again = vd.recompute(stored(verdict))
    assert (again.label, again.reason) == (verdict.label, verdict.reason)


def test_only_the_arguments_given_are_kept_so_a_changed_default_applies():
    v = vd.sign_verdict(E, 1)
    assert v.evidence == {"rule": "sign_verdict", "args": {"est": {"__estimate__": "Estimate", "value": 1.0,
                                                                   "se": 0.2, "df": 10}, "claimed_sign": 1}}


def test_an_argument_without_a_json_form_is_refused_when_the_rule_is_called():
    with pytest.raises(evidence.EvidenceError, match="angle_verdict"):
        vd.angle_verdict(object(), 16_000, 12, 16_000)


def test_evidence_naming_a_rule_that_no_longer_exists_fails_loudly():
    record = stored(vd.sign_verdict(E, 1))
    record["evidence"]["rule"] = "old_sign_verdict"
    with pytest.raises(evidence.UnknownRule, match="old_sign_verdict"):
        vd.recompute(record)


def test_non_finite_numbers_arrays_and_tuples_survive_the_round_trip():
    value = {"x": float("nan"), "y": (1, 2.5), "z": np.arange(6.0).reshape(2, 3), "w": -float("inf")}
    back = evidence.decode(json.loads(json.dumps(evidence.encode(value), allow_nan=False)), vd.recompute)
    assert np.isnan(back["x"]) and back["y"] == (1, 2.5) and back["w"] == -np.inf
    np.testing.assert_array_equal(back["z"], value["z"])


def claim(verdict):
    return vd.Claim("c1", "kim2025recency", "Prop. 2", "full text", "the effect is positive", "m", "defaults",
                    verdict)


def test_editing_a_rule_changes_a_stored_runs_verdict_at_the_next_build(monkeypatch):
    at_defaults = vd.sign_verdict(Estimate(0.5, 0.2, df=30), 1)
    at_paper = vd.sign_verdict(Estimate(0.5, 0.2, df=300), 1)  # what the stored run measured
    run = SimpleNamespace(claims=[{**claim(at_paper).record(), "settings": "paper"}])
    run = json.loads(json.dumps(run.claims))  # stored: JSON
    table, records = claims_markdown([claim(at_defaults)], SimpleNamespace(claims=run))
    assert records[0]["final_verdict"]["label"] == "reproduced"

    original = evidence.rules()["sign_verdict"]

    def stricter(est, claimed_sign, **kw):  # a rule that now asks for a 99.9 % interval
        return original(est, claimed_sign, **{**kw, "level": 0.999})

    monkeypatch.setitem(evidence._RULES, "sign_verdict", stricter)
    table, records = claims_markdown([claim(at_defaults)], SimpleNamespace(claims=run))
    assert records[0]["final_verdict"]["label"] == "not decided"
    assert "99.9%" in records[0]["final_verdict"]["reason"]


def test_editing_a_rule_changes_a_committed_stored_runs_verdicts():
    """The stored paper-scale run of chapter 5 (results/layernorm_equilibria/paper): its rows judged
    by sign_verdict change when that rule is edited (here: it reads the claimed sign the other way),
    as at the next build."""
    from attention_geometry.book.paper import load_paper_run

    run = load_paper_run("layernorm_equilibria")
    records = [r for r in run.claims if not r.get("at_paper_settings")]
    uses_sign = [r["id"] for r in records if "sign_verdict" in json.dumps(r["verdict"]["evidence"])]
    assert uses_sign, "the stored run has rows judged by sign_verdict"
    claims = [vd.Claim(r["id"], r["paper"], r["where"], r["source"], r["statement"], r["measured"], r["settings"],
                       vd.recompute(r["verdict"]), stand_in=r.get("stand_in", "")) for r in records]

    def labels():
        return {r["id"]: r["final_verdict"]["label"] for r in claims_markdown(claims, run)[1]}

    before = labels()
    original = evidence.rules()["sign_verdict"]
    with pytest.MonkeyPatch.context() as m:
        m.setitem(evidence._RULES, "sign_verdict", lambda est, claimed_sign, **kw: original(est, -claimed_sign, **kw))
        after = labels()
    # a decided sign flips with the rule; one whose interval holds 0 stays not decided either way
    decided = [i for i in uses_sign if before[i] != "not decided"]
    assert decided, "the stored run has rows whose sign_verdict decides"
    assert {i for i in before if before[i] != after[i]} == set(decided)
    # a paper claim refuted only in a stand-in is not decided (rule 10 of the verdict discipline)
    in_stand_in = {r["id"] for r in records if r.get("stand_in")}
    assert all(before[i] in ("reproduced", "reproduced in a stand-in")
               and after[i] == ("not decided" if i in in_stand_in else "refuted") for i in decided)
    assert all(after[i] == "not decided" for i in uses_sign if i not in decided)


def test_a_stored_verdict_qualified_by_draws_is_compared_by_the_rule_that_read_the_measurement():
    """Chapter rows whose verdict goes through draws_verdict keep the stored verdict of the rule
    inside it (the rule that read the measurement); a stored verdict of another rule does not stand."""
    from attention_geometry.book.claims import _same_rule

    rng = np.random.default_rng(3)
    today = claim(_draws_call(rng))
    assert today.verdict.evidence["rule"] == "draws_verdict"
    same = claim(vd.sign_verdict(E, 1)).record()
    other = claim(vd.value_verdict(E, 1.0, atol=0.5)).record()
    assert _same_rule(today, json.loads(json.dumps(same)))
    assert not _same_rule(today, json.loads(json.dumps(other)))
    # where the defaults cannot measure the claim (a smaller L), the stored run's verdict stands
    assert _same_rule(claim(vd.not_tested("the paper's value is at L = 2048")), json.loads(json.dumps(other)))


def test_a_stored_verdict_of_the_same_rule_on_another_quantity_does_not_stand():
    """A row whose rule now reads another quantity (the sign of a level, then the sign of its
    difference from a control) needs a run that measured the new one; a rule told no quantity
    matches by its rule alone."""
    from attention_geometry.book.claims import _same_rule

    level = claim(vd.sign_verdict(E, 1, what="local U")).record()
    today = claim(vd.sign_verdict(E, 1, what="local U, chunked minus vanilla"))
    assert not _same_rule(today, json.loads(json.dumps(level)))
    assert _same_rule(claim(vd.sign_verdict(E, 1, what="local U")), json.loads(json.dumps(level)))
    assert _same_rule(claim(vd.sign_verdict(E, 1)), json.loads(json.dumps(level)))


def test_a_stored_sign_and_size_verdict_gives_the_sign_row_and_the_size_row_their_own_verdicts():
    """A stored run that judged a sign and a closed form at once (sign_and_size_verdict) still
    gives today's two rows their verdicts from its one measurement: the sign row by sign_verdict,
    the size row (measured_as the sign row's id) by ratio_verdict; a rule with no such part does not."""
    measured = Estimate(2.7, 0.01, df=300)  # positive, and 2.7 times the closed form
    run = SimpleNamespace(claims=[{**claim(vd.sign_and_size_verdict(measured, 1.0, rtol=0.05)).record(),
                                   "settings": "paper"}])
    run.claims = json.loads(json.dumps(run.claims))
    at_defaults = Estimate(2.5, 0.5, df=10)  # undecided at the defaults, both ways
    sign = claim(vd.sign_verdict(Estimate(0.1, 0.2), +1))
    size = vd.Claim("c1-size", "kim2025recency", "Eq. 5", "full text", "the size is Eq. 5", "m", "defaults",
                    vd.ratio_verdict(at_defaults, 1.0, rtol=0.05), measured_as="c1")
    _, records = claims_markdown([sign, size], run)
    final = {r["id"]: r["final_verdict"]["label"] for r in records}
    assert final == {"c1": "reproduced", "c1-size": "differs"}
    assert all(r["paper_run_verdict"] for r in records)
    assert vd.part_evidence(vd.sign_verdict(measured, 1).evidence, "ratio_verdict") is None


def test_a_size_row_reads_its_own_stored_row_where_the_stored_run_holds_one():
    """measured_as stands in only for a run that judged the size under the sign row's id: where the stored
    run holds the size row itself (its own ratio_verdict), that row is the one judged, not the sign row."""
    measured = Estimate(2.7, 0.01, df=300)
    stored = [{**claim(vd.sign_verdict(measured, +1)).record(), "settings": "paper"},
              {**vd.Claim("c1-size", "kim2025recency", "Eq. 5", "full text", "the size is Eq. 5", "m", "paper",
                          vd.ratio_verdict(measured, 1.0, rtol=0.05)).record(), "settings": "paper"}]
    run = SimpleNamespace(claims=json.loads(json.dumps(stored)))
    size = vd.Claim("c1-size", "kim2025recency", "Eq. 5", "full text", "the size is Eq. 5", "m", "defaults",
                    vd.ratio_verdict(Estimate(2.5, 0.5, df=10), 1.0, rtol=0.05), measured_as="c1")
    _, records = claims_markdown([size], run)
    assert records[0]["paper_run_verdict"] and records[0]["final_verdict"]["label"] == "differs"
    assert records[0]["at_paper_settings_record"]["id"] == "c1-size"


def test_a_stored_run_is_judged_with_todays_tolerance_and_keeps_its_own_measurements():
    """A chapter that narrows a tolerance (here 0.1 -> none) judges the stored run's own estimates
    with it, through draws_verdict, whose stored band goes with the tolerance; the estimates, the
    claimed value and a band today's call still gives are the stored run's."""
    from attention_geometry.draws import DrawEstimate
    small = {k: DrawEstimate(v, 0.005, df=127, n_draws=128, draw_means=tuple(np.full(128, v)))
             for k, v in (("a", 0.03), ("b", -0.03))}
    stored_verdict = vd.draws_verdict(vd.heterogeneity_verdict(small, tol=0.1), list(small.values()),
                                      reference=(-0.1, 0.1))
    assert stored_verdict.label == "refuted"  # within ±0.1 everywhere: the same (null) in every case
    run = SimpleNamespace(claims=json.loads(json.dumps([{**claim(stored_verdict).record(), "settings": "paper"}])))
    defaults = {k: DrawEstimate(0.0, 1.0, df=7, n_draws=8, draw_means=tuple(np.zeros(8))) for k in small}
    today = claim(vd.draws_verdict(vd.heterogeneity_verdict(defaults), list(defaults.values())))
    _, records = claims_markdown([today], run)
    assert records[0]["paper_run_verdict"]
    assert records[0]["final_verdict"]["label"] == "reproduced"  # +0.03 and -0.03 differ in sign
    args = records[0]["at_paper_settings_record"]["verdict"]["evidence"]["args"]
    assert "reference" not in args
    inner = args["verdict"]["__verdict__"]["evidence"]["args"]
    assert "tol" not in inner and inner["estimates"]["a"]["value"] == 0.03
    # a claimed value and a band the call still gives stay the run's; only the policy moves
    stored = vd.draws_verdict(vd.value_verdict(E, 1.1, atol=0.5), 3, reference=(0.6, 1.6)).evidence
    now = vd.draws_verdict(vd.value_verdict(Estimate(5.0, 1.0), 4.0, atol=0.2, level=0.99), 8,
                           reference=(3.8, 4.2)).evidence
    merged = vd.with_todays_policy(json.loads(json.dumps(stored)), json.loads(json.dumps(now)))
    assert merged["args"]["reference"] == evidence.encode((0.6, 1.6))
    assert merged["args"]["draws"] == 3
    inner = merged["args"]["verdict"]["__verdict__"]["evidence"]["args"]
    assert (inner["claimed"], inner["atol"], inner["level"]) == (1.1, 0.2, 0.99)
    assert vd.with_todays_policy(stored, vd.sign_verdict(E, 1).evidence) is stored  # another rule: as stored


def test_a_stored_verdict_judged_without_draws_stands_only_where_todays_draws_agree():
    """A row that today's rule judges over weight draws (draws_verdict), whose stored run judged it
    without them, keeps the stored verdict only where this run's draws agree on it; where they do
    not decide, the row is not decided and says what the stored run assumed."""
    from attention_geometry.book.claims import STORED_WITHOUT_DRAWS
    from attention_geometry.draws import over_draws

    rng = np.random.default_rng(5)
    run = SimpleNamespace(claims=json.loads(json.dumps([claim(vd.sign_verdict(E, 1)).record()])))

    def final(per_draw):
        est = over_draws(per_draw)
        _, records = claims_markdown([claim(vd.draws_verdict(vd.sign_verdict(est, +1), est))], run)
        return records[0]["final_verdict"]

    agree = final([1 + 0.1 * rng.standard_normal(16) for _ in range(8)])  # eight draws, all positive
    assert agree["label"] == "reproduced" and "at the paper's settings" in agree["reason"]
    few = final([1 + 0.1 * rng.standard_normal(16) for _ in range(4)])  # too few draws to decide
    assert few["label"] == "not decided" and STORED_WITHOUT_DRAWS in few["reason"]
    split = final([(-1) ** k + 0.1 * rng.standard_normal(16) for k in range(8)])  # draws disagree
    assert split["label"] == "not decided"
    # a stored run that was itself judged over draws is not asked again
    est = over_draws([1 + 0.1 * rng.standard_normal(16) for _ in range(4)])
    wrapped = json.loads(json.dumps([claim(vd.draws_verdict(vd.sign_verdict(E, 1), 8)).record()]))
    _, records = claims_markdown([claim(vd.draws_verdict(vd.sign_verdict(est, +1), est))],
                                 SimpleNamespace(claims=wrapped))
    assert STORED_WITHOUT_DRAWS not in records[0]["final_verdict"]["reason"]
