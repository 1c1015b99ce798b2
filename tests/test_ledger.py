"""The claims ledger is built from the chapters' glued records, never typed by hand."""

import csv
import io
import json
import re

import pytest

from attention_geometry.book.claims import CLAIMS_KEY, CLAIMS_MIME, claims_markdown, glue_claim_records
from attention_geometry.book.ledger import (LEDGER_FIELDS, chapter_claims, collect_ledger, ledger_page,
                                            write_ledger_files)
from attention_geometry.stats import Estimate
from attention_geometry.verdicts import VERDICTS, Claim, Label, sign_verdict, value_verdict

PREFIX = "application/papermill.record/"  # myst_nb.glue's, for a value glued without display


def _notebook(records):
    """An executed notebook as show_claims leaves it: the records as a structured output (JSON)."""
    out = {"output_type": "display_data", "metadata": {"scrapbook": {"name": CLAIMS_KEY, "mime_prefix": PREFIX}},
           "data": {f"{PREFIX}{CLAIMS_MIME}": json.loads(json.dumps(records))}}
    return {"cells": [{"cell_type": "code", "source": "", "outputs": [out]}]}


def _records(ids):
    claims = [Claim(id=i, paper="kim2025recency", where="Theorem 1", source="full text",
                    statement="$S_{n,n-1} > S_{n,1}$ & <b>", measured="0.1 ± 0.01", settings="d = 16",
                    verdict=sign_verdict(Estimate(0.1, 0.01), 1), section="sec-thm1") for i in ids]
    return claims_markdown(claims)[1]


def test_every_ledger_verdict_is_a_label_whatever_the_source(tmp_path):
    """A row resting on the summary carries a label too, never words compounded with its source;
    claims.json and claims.csv carry each row's claim_kind."""
    claims = [Claim(id=f"s-{i}", paper="wu2024masks", where="summary table", source=source, statement="s",
                    measured="m", settings="d = 16", verdict=verdict, claim_kind=kind)
              for i, (source, verdict, kind) in enumerate([
                  ("summary", value_verdict(Estimate(0.9, 0.01), 0.5, atol=0.1), "paper"),
                  ("summary", sign_verdict(Estimate(0.1, 0.01), 1), "paper"),
                  ("summary", sign_verdict(Estimate(-0.1, 0.01), 1), "reading"),
                  ("full text", sign_verdict(Estimate(0.1, 0.2), 1), "paper")])]
    nb = tmp_path / "a.ipynb"
    nb.write_text(json.dumps(_notebook(claims_markdown(claims)[1])))
    rows = collect_ledger([("rank_collapse", "04_rank_collapse", nb)])
    assert [r["verdict"] for r in rows] == ["differs", "reproduced", "refuted", "not decided"]
    assert all(r["verdict"] in VERDICTS for r in rows)
    js, cs = write_ledger_files(rows, tmp_path / "html")
    assert [r["claim_kind"] for r in json.loads(js.read_text())] == ["paper", "paper", "reading", "paper"]
    table = list(csv.DictReader(io.StringIO(cs.read_text())))
    assert [r["claim_kind"] for r in table] == ["paper", "paper", "reading", "paper"]
    assert {r["verdict"] for r in table} <= set(VERDICTS) and "claim_kind" in LEDGER_FIELDS


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


@pytest.fixture
def shell(tmp_path_factory, monkeypatch):
    """An IPython shell, as a chapter's kernel has one: what display() publishes is captured."""
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path_factory.mktemp("ipython")))
    from IPython.core.interactiveshell import InteractiveShell

    return InteractiveShell.instance()


def test_show_claims_records_are_stored_as_json_read_back_by_the_ledger_and_not_rendered(shell, tmp_path):
    """The records a chapter glues (glue_claim_records, called by show_claims) are one
    output whose data the notebook file holds as JSON (not a repr of a string); the
    ledger reads them back as they were; myst-nb drops the output before rendering."""
    import nbformat
    from IPython.utils.capture import capture_output
    from myst_nb.ext.glue import extract_glue_data_cell

    records = _records(["k-1", "k-2"])
    assert records[0]["verdict"]["label"] is Label.REPRODUCED  # typed in the chapter ...
    with capture_output() as captured:
        stored = glue_claim_records(records)
    (shown,) = captured.outputs
    output = nbformat.v4.new_output("display_data", data=shown.data, metadata=shown.metadata)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=[output])])
    nbformat.validate(nb)
    path = tmp_path / "chapter.ipynb"
    nbformat.write(nb, path)
    (on_disk,) = json.loads(path.read_text())["cells"][0]["outputs"]
    assert on_disk["data"] == {f"{PREFIX}{CLAIMS_MIME}": stored} and isinstance(stored, list)
    assert chapter_claims(path) == stored == json.loads(json.dumps(records))  # ... plain JSON in the notebook
    assert type(chapter_claims(path)[0]["verdict"]["label"]) is str
    assert collect_ledger([("recency", "06_recency", path)])[1]["id"] == "k-2"
    cell = nbformat.read(path, as_version=4).cells[0]
    assert [key for key, _ in extract_glue_data_cell(cell)] == [CLAIMS_KEY] and cell.outputs == []


def test_records_glued_as_text_by_an_older_notebook_are_refused_with_what_to_do(tmp_path):
    out = {"output_type": "display_data", "metadata": {"scrapbook": {"name": CLAIMS_KEY, "mime_prefix": PREFIX}},
           "data": {f"{PREFIX}text/plain": repr(json.dumps(_records(["k-1"])))}}
    nb = tmp_path / "old.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "code", "source": "", "outputs": [out]}]}))
    with pytest.raises(ValueError, match="execute the chapter again"):
        chapter_claims(nb)


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
    assert "claim B." not in text and "`a`" not in text  # where the paper says it, not the ledger's id
    assert "every claim" in ledger_untested(rows[1:]) and "not built" in ledger_untested(None)


def test_ledger_verdicts_name_the_chapter_the_verdict_and_where_the_paper_says_it():
    from attention_geometry.book.ledger import ledger_verdicts

    rows = [{"id": "fig-1-row-3", "paper": "Kim et al. 2025", "where": "Figure 1 row 3", "verdict": "reproduced",
             "link": "06_recency.html#x"}]
    text = ledger_verdicts(rows, ["fig-1-row-3"])
    assert text == "{doc}`06_recency`: reproduced (Kim et al. 2025, Figure 1 row 3)"
    assert "not in the ledger" in ledger_verdicts(rows, ["nope"]) and "not built" in ledger_verdicts(None, ["a"])


def test_short_reason_keeps_the_first_clause_and_cuts_only_what_is_too_long():
    from attention_geometry.book.ledger import short_reason

    assert short_reason("largest |mu(y)| 5.2e-12 <= 1e-06") == "largest |mu(y)| 5.2e-12 <= 1e-06"  # short: whole
    assert short_reason("  two\n spaces ") == "two spaces"
    # the first clause (a semicolon) or sentence (a stop before a capital), not one inside brackets or math
    assert short_reason("the effect = 0.1 ± 0.01, 95% interval [0.08; 0.12]; claimed positive") == \
        "the effect = 0.1 ± 0.01, 95% interval [0.08; 0.12]"
    assert short_reason("Fig. 2 shows it (d = 16; L = 8). It would take 4x the data. More.") == \
        "Fig. 2 shows it (d = 16; L = 8)."
    assert short_reason("$a; b$ holds; the rest") == "$a; b$ holds"
    long = "in the paper-scale run, with " + "a very long stand-in description " * 10 + "; claimed positive"
    cut = short_reason(long)
    assert len(cut) <= 160 and cut.endswith("…") and long.startswith(cut[:-1])
    assert long[len(cut) - 1] == " "  # cut at a word boundary
    assert short_reason("one two three four", limit=12) == "one two…" and len(short_reason(long, 40)) <= 40
    assert short_reason("measured $x_{1} + x_{2} + x_{3}$ here", limit=20) == "measured…"  # not inside math
    assert short_reason("the effect = 12.2 ± 0.3 and so on", limit=22) == "the effect = 12.2…"
    with pytest.raises(ValueError, match="limit = 1"):
        short_reason("x", limit=1)


def test_the_ledger_docstring_examples_run():
    import doctest

    from attention_geometry.book import ledger

    result = doctest.testmod(ledger)
    assert result.attempted >= 3 and result.failed == 0


def test_the_verdict_cell_holds_the_label_a_short_reason_and_the_full_reason_on_hover(tmp_path):
    reason = 'first clause with "quotes" & <b>; ' + "second clause " * 20
    row = {"id": "k-1", "paper": "Kim et al. 2025", "where": "Theorem 1", "source": "full text",
           "claim_kind": "paper", "statement": "s", "settings": "d = 16", "measured": "0.1 ± 0.01",
           "verdict": "refuted", "reason": reason, "differs_from": "", "chapter": "recency",
           "link": "06_recency.html#x"}
    page = ledger_page([row])
    cell = ('<strong>refuted</strong><br><small title="first clause with &quot;quotes&quot; &amp; &lt;b&gt;; '
            'second clause second clause')
    assert cell in page and 'first clause with "quotes" &amp; &lt;b&gt;</small>' in page
    assert "<td>0.1 ± 0.01</td>" in page  # the measurement in a column of its own
    js, cs = write_ledger_files([row], tmp_path)
    assert json.loads(js.read_text())[0]["reason"] == reason  # the files keep the full reason
    assert next(csv.DictReader(io.StringIO(cs.read_text())))["reason"] == reason


def _row(i, paper, verdict, kind="paper", where="Theorem 1"):
    return {"id": f"c-{i}", "paper": paper, "where": where, "source": "full text", "claim_kind": kind,
            "statement": f"claim {i}", "settings": "d = 16", "measured": "m", "verdict": verdict, "reason": "r",
            "differs_from": "", "chapter": "x", "link": "x.html#y"}


def test_the_scoreboard_counts_each_paper_and_keeps_readings_apart():
    from attention_geometry.book.ledger import paper_scoreboard

    kim = ["reproduced", "reproduced in a stand-in", "reproduced in a stand-in", "differs", "not decided",
           "not decided", "not tested"]
    rows = [_row(i, "Kim et al. 2025", v, where="Eq. 19" if v == "differs" else "Theorem 1") for i, v in enumerate(kim)]
    rows += [_row(8, "Kim et al. 2025", "refuted", "reading", "Fig. 3"),
             _row(9, "Brody et al. 2023", "refuted", where="abstract; Fig. 2a")]
    board = paper_scoreboard(rows)
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in board.splitlines()
             if line.startswith("| ") and "Paper" not in line]
    table = {tuple(c[:2]): c[2:] for c in cells}
    assert table[("Kim et al. 2025", "the paper's claims")] == ["1", "2", "1", "0", "2", "0", "1", "7"]
    assert table[("Kim et al. 2025", "the book's readings and controls")] == ["0", "0", "0", "1", "0", "0", "0", "1"]
    assert table[("Brody et al. 2023", "the paper's claims")] == ["0", "0", "0", "1", "0", "0", "0", "1"]
    assert "9 claims in the ledger: 8 of the papers' own and 1 reading or control of the book's" in board
    kim = board[board.index("**Kim et al. 2025.**"):board.index("**Chowdhury 2026.**")]
    assert "6 claims of the paper are tested here and 1 more is not." in kim
    assert "Of these, 3 are reproduced (2 of them in a stand-in model), 1 differs from the measurement and " \
           "2 are not decided." in kim
    assert "refuted" not in kim.split("Counted apart")[0]  # the reading's refutation is not the paper's
    assert "Counted apart from the paper's claims: 1 reading or control of the book's own (1 refuted)." in kim
    assert "The claim that does not hold:" in kim and '<a href="#claim-c-3" title="claim 3">Eq. 19</a> (differs)' in kim
    assert "claim-c-8" not in kim
    brody = board[board.index("**Brody et al. 2023.**"):board.index("**Wu et al. 2024.**")]
    assert "1 claim of the paper is tested here. It is refuted." in brody and "abstract; Fig. 2a</a> (refuted)" in brody
    # a paper with no row is said plainly, and the papers come in the order of PAPERS
    assert "**Wu et al. 2024.** No claim of this paper is in the ledger." in board
    assert ("Wu et al. 2024", "the paper's claims") not in table
    order = [board.index(f"**{p}.**") for p in ("Brody et al. 2023", "Wu et al. 2024", "Kim et al. 2025",
                                                 "Chowdhury 2026")]
    assert order == sorted(order)


@pytest.mark.parametrize("verdicts, words", [
    (["reproduced in a stand-in"], "1 claim of the paper is tested here. It is reproduced in a stand-in model."),
    (["reproduced in a stand-in"] * 2, "2 claims of the paper are tested here. Of these, 2 are reproduced in a "
                                       "stand-in model."),
    (["differs"], "It differs from the measurement. The claim that does not hold:"),
    (["refuted", "differs", "refuted"], "Of these, 1 differs from the measurement and 2 are refuted. "
                                        "The 3 claims that do not hold:"),
    (["uninformative", "not decided"], "Of these, 1 is not decided and 1 is uninformative."),
    (["not tested"], "Its one claim in the ledger is not tested here."),
    (["not tested"] * 2, "None of its 2 claims in the ledger is tested here."),
])
def test_the_scoreboard_sentences_hold_for_any_count(verdicts, words):
    from attention_geometry.book.ledger import paper_scoreboard

    board = paper_scoreboard([_row(i, "Wu et al. 2024", v) for i, v in enumerate(verdicts)])
    assert words in board
    assert not re.search(r"\b1 (claims|are)\b|\b0 \w|\(0 of", board)  # no "1 claims", no clause for a count of 0
    assert "does not hold" not in board or any(v in ("differs", "refuted") for v in verdicts)


def test_the_scoreboard_refuses_a_word_that_is_not_a_label_and_says_when_it_is_empty():
    from attention_geometry.book.ledger import paper_scoreboard

    with pytest.raises(ValueError, match="reading. is not one of the labels"):
        paper_scoreboard([_row(1, "Wu et al. 2024", "agrees with the summary's reading")])
    assert paper_scoreboard([]) == "No claim is in the ledger."
    page = ledger_page([_row(1, "Kim et al. 2025", "reproduced")])
    assert page.index("## Paper by paper") < page.index("1 claim in the ledger.") < page.index('id="ag-ledger"')


def test_the_verdict_cell_skips_where_a_reason_was_measured_and_keeps_what_it_found():
    from attention_geometry.book.ledger import reason_gist

    assert reason_gist("in the paper-scale run, with a (b: c) model: RP = 0.14 ± 3e-05; claimed positive") == "RP = 0.14 ± 3e-05"
    assert reason_gist("with X in place of Y: at the paper's settings: $a: b$ = 2") == "$a: b$ = 2"
    assert reason_gist("at the paper's settings: ") == "at the paper's settings:"
    assert reason_gist("at the book's smaller settings only: 0.5 ± 0.1") == "at the book's smaller settings only: 0.5 ± 0.1"
    assert reason_gist("the interval contains 0") == "the interval contains 0"
