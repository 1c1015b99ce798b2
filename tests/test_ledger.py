"""The claims ledger is built from the chapters' glued records, never typed by hand."""

import json

import pytest

from attention_geometry.book.claims import CLAIMS_KEY, claims_markdown
from attention_geometry.book.ledger import chapter_claims, collect_ledger, ledger_page, write_ledger_files
from attention_geometry.stats import Estimate
from attention_geometry.verdicts import Claim, sign_verdict, value_verdict


def _notebook(records):
    """An executed notebook as myst_nb.glue leaves it: the JSON string's repr under text/plain."""
    prefix = "application/papermill.record/"
    out = {"output_type": "display_data", "metadata": {"scrapbook": {"name": CLAIMS_KEY, "mime_prefix": prefix}},
           "data": {f"{prefix}text/plain": repr(json.dumps(records))}}
    return {"cells": [{"cell_type": "code", "source": "", "outputs": [out]}]}


def _records(ids):
    claims = [Claim(id=i, paper="kim2025recency", where="Theorem 1", source="full text",
                    statement="$S_{n,n-1} > S_{n,1}$ & <b>", measured="0.1 ± 0.01", settings="d = 16",
                    verdict=sign_verdict(Estimate(0.1, 0.01), 1), section="sec-thm1") for i in ids]
    return claims_markdown(claims)[1]


def test_ledger_rows_come_from_the_glued_records(tmp_path):
    nb1, nb2 = tmp_path / "a.ipynb", tmp_path / "b.ipynb"
    nb1.write_text(json.dumps(_notebook(_records(["k-1", "k-2"]))))
    nb2.write_text(json.dumps(_notebook(_records(["k-3"]))))
    assert [r["id"] for r in chapter_claims(nb1)] == ["k-1", "k-2"]
    rows = collect_ledger([("recency", "06_recency", nb1), ("other", "07_other", nb2)])
    assert [r["id"] for r in rows] == ["k-1", "k-2", "k-3"]
    assert rows[0]["paper"] == "Kim et al. 2025" and rows[0]["link"] == "06_recency.html#sec-thm1"
    assert rows[0]["verdict"] == "reproduced" and "smaller settings" in rows[0]["reason"]
    js, cs = write_ledger_files(rows, tmp_path / "html")
    assert json.loads(js.read_text()) == rows and cs.read_text().count("\n") == 4
    page = ledger_page(rows)
    assert "3 claims" in page and "\\(S_{n,n-1} &gt; S_{n,1}\\)" in page and "&lt;b&gt;" in page
    assert page.count("<tr data-paper") == 3


def test_one_id_in_two_chapters_is_an_error(tmp_path):
    nb = tmp_path / "a.ipynb"
    nb.write_text(json.dumps(_notebook(_records(["k-1"]))))
    with pytest.raises(ValueError, match="k-1"):
        collect_ledger([("a", "a", nb), ("b", "b", nb)])


def test_executed_values_reads_a_chapters_glued_numbers(tmp_path):
    from conftest import chapter_text, make_project, toy_chapter

    from attention_geometry.book.ledger import executed_values

    project = make_project(tmp_path, {"toy": (chapter_text("Toy", "n = 1", "x = 1"), toy_chapter("toy"))})
    assert executed_values("toy", project) is None  # not executed yet
    prefix = "application/papermill.record/"
    out = {"output_type": "display_data", "metadata": {"scrapbook": {"name": "rc-rate", "mime_prefix": prefix}},
           "data": {f"{prefix}text/plain": "0.25"}}
    project.executed.mkdir(parents=True, exist_ok=True)
    (project.executed / "toy.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "source": "",
                                                                       "outputs": [out]}]}))
    assert executed_values("toy", project) == {"rc-rate": 0.25}
    with pytest.raises(ValueError, match="chapter_name = 'nope'"):
        executed_values("nope", project)


def test_ledger_untested_lists_only_the_untested_claims_with_their_reasons():
    from attention_geometry.book.ledger import ledger_untested

    rows = [{"id": "a", "paper": "Wu et al. 2024", "where": "Fig. 3", "statement": "claim A.", "verdict": "not tested",
             "reason": "needs pretrained weights", "link": "04_rank_collapse.html#x"},
            {"id": "b", "paper": "Wu et al. 2024", "where": "abstract", "statement": "claim B.",
             "verdict": "reproduced", "reason": "-", "link": "04_rank_collapse.html#y"}]
    text = ledger_untested(rows)
    assert "claim A." in text and "needs pretrained weights" in text and "{doc}`04_rank_collapse`" in text
    assert "claim B." not in text
    assert "every claim" in ledger_untested(rows[1:]) and "not built" in ledger_untested(None)
