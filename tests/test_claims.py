"""The generated "Paper vs. this book" tables: every verdict from a rule, the paper column filled."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from attention_geometry.book.claims import claims_markdown, provenance_line
from attention_geometry.book.paper import load_paper_run
from attention_geometry.stats import Estimate
from attention_geometry.verdicts import Claim, sign_verdict, value_verdict


def _claims():
    return [
        Claim(id="toy-sign", paper="kim2025recency", where="Theorem 1", source="full text",
              statement="the contrast is positive", measured="0.1 ± 0.01", settings="d = 16",
              verdict=sign_verdict(Estimate(0.1, 0.01), 1)),
        Claim(id="toy-value", paper="wu2024masks", where="Fig. 2", source="summary",
              statement="a |pipe| in the text", measured="0.9 ± 0.01", settings="N = 8",
              verdict=value_verdict(Estimate(0.9, 0.01), 0.5, atol=0.1)),
    ]


def test_table_without_a_stored_run_says_so_and_qualifies_the_verdicts():
    table, records = claims_markdown(_claims())
    rows = table.splitlines()[2:]
    assert len(rows) == 2 and all(r.count(" | ") == 4 for r in rows)  # the escaped pipe stays in its cell
    assert all("not run at the paper's settings" in r for r in rows)
    assert "smaller settings only" in rows[0]
    assert "(summary)" in rows[1] and "**differs**" in rows[1]  # the source in the claim cell, the label alone
    assert "summary's reading" not in table
    assert [r["final_verdict"]["label"] for r in records] == ["reproduced", "differs"]
    assert [r["final_verdict"]["phrase"] for r in records] == ["reproduced", "differs"]
    assert "no stored run" in provenance_line(None)


def test_a_stored_run_decides_the_verdict(tmp_path):
    (tmp_path / "_toc.yml").write_text("root: x\n")
    folder = tmp_path / "results" / "toy" / "paper"
    folder.mkdir(parents=True)
    at_paper = _claims()[0].record()
    made = sign_verdict(Estimate(-0.2, 0.01, df=50), +1, what="the slope at d = 1024")  # the run's rule, evidence kept
    at_paper.update(measured="-0.2 ± 0.01", settings="d = 1024",
                    verdict={"label": made.label, "reason": made.reason, "evidence": made.evidence})
    (folder / "values.json").write_text(json.dumps({"x": 1.0, "claims": [at_paper]}))
    (folder / "parameters.json").write_text("{}")
    (folder / "provenance.json").write_text(json.dumps(
        {"commit": "abcdef1234", "dirty": False, "date": "2026-12-01", "device": "cpu", "wall_seconds": 600}))
    run = load_paper_run("toy", tmp_path)
    table, records = claims_markdown(_claims(), run)
    first, second = table.splitlines()[2:]
    assert "-0.2 ± 0.01 (d = 1024)" in first and "**refuted**" in first and "paper's settings" in first
    assert "not run at the paper's settings" in second  # no stored record for this claim
    assert records[0]["final_verdict"]["label"] == "refuted"
    assert "abcdef1234" in provenance_line(run) and "10.0 min" in provenance_line(run)
    assert "parts" not in provenance_line(run)  # one part, or parts at one commit: nothing to say
    run = replace(run, provenance=run.provenance.replace(parts=3, part_commits=[None, "1111111111aa", "abcdef1234"]))
    assert "in 3 parts, at commits `1111111111`, `abcdef1234`" in provenance_line(run)
    # the stored run's own shortfall (not the claim's at the defaults) turns its decisive verdict undecided
    at_paper["shortfall"] = "the model trained 1,000 of 50,000 steps"
    (folder / "values.json").write_text(json.dumps({"x": 1.0, "claims": [at_paper]}))
    table, records = claims_markdown(_claims(), load_paper_run("toy", tmp_path))
    first = table.splitlines()[2]
    assert records[0]["final_verdict"]["label"] == "not decided" and "*not decided*" in first
    assert "refuted as measured, but the model trained 1,000 of 50,000 steps" in first
    # the stored run's stand-in no longer calls it the paper's settings, and a paper claim refuted only in
    # a stand-in is not decided
    at_paper.update(shortfall="", stand_in="a 4-layer decoder swept in width")
    (folder / "values.json").write_text(json.dumps({"x": 1.0, "claims": [at_paper]}))
    table, records = claims_markdown(_claims(), load_paper_run("toy", tmp_path))
    verdict_cell = table.splitlines()[2].rsplit(" | ", 1)[1]
    assert records[0]["final_verdict"]["label"] == "not decided" and "paper's settings" not in verdict_cell
    assert "refuted in the stand-in (a 4-layer decoder swept in width)" in verdict_cell
    assert "in the paper-scale run, with a 4-layer decoder swept in width: the slope at d = 1024" in verdict_cell
    # a stored verdict without evidence cannot be computed by today's rules: it does not stand
    at_paper.update(stand_in="", verdict={"label": "refuted", "reason": "negative at d = 1024"})
    (folder / "values.json").write_text(json.dumps({"x": 1.0, "claims": [at_paper]}))
    table, records = claims_markdown(_claims(), load_paper_run("toy", tmp_path))
    first = table.splitlines()[2]
    assert records[0]["final_verdict"]["label"] == "reproduced" and "smaller settings only" in first
    assert "no verdict: the stored run keeps no evidence" in first and "make paper CHAPTER=toy" in first
    # nor does one from a rule that no longer judges the row (the row's rule was replaced)
    other = value_verdict(Estimate(-0.2, 0.01), 0.1, atol=0.05)
    at_paper.update(verdict={"label": other.label, "reason": other.reason, "evidence": other.evidence})
    (folder / "values.json").write_text(json.dumps({"x": 1.0, "claims": [at_paper]}))
    table, records = claims_markdown(_claims(), load_paper_run("toy", tmp_path))
    first = table.splitlines()[2]
    assert records[0]["final_verdict"]["label"] == "reproduced" and "smaller settings only" in first
    assert "`value_verdict` judges, and this row is judged by `sign_verdict`" in first


def test_duplicate_ids_are_refused():
    c = _claims()[0]
    with pytest.raises(ValueError, match="appears twice"):
        claims_markdown([c, c])
