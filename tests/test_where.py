"""Every number in one hop: each glue key the book uses is a literal in one chapter cell, and
`attention-geometry where KEY` finds it; the golden ledger shows every verdict that moves."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from attention_geometry.book.golden import GOLDEN_FILE, golden_of, read_golden, verdict_changes, write_golden
from attention_geometry.book.project import Project
from attention_geometry.book.toc import book_chapters
from attention_geometry.book.where import describe, find_key, glue_sites, glued_keys, module_keys, referenced_keys

ROOT = Path(__file__).resolve().parents[1]


def _chapters():
    chapters = book_chapters(Project(ROOT))
    assert len(chapters) >= 9
    return chapters


def test_every_key_the_chapters_use_is_found_by_where():
    missing = {}
    for chapter in _chapters():
        text = (ROOT / "book" / f"{chapter.stem}.md").read_text()
        used = referenced_keys(text)
        assert used, chapter.name
        lost = sorted(k for k in used if find_key(k, Project(ROOT)) is None)
        if lost:
            missing[chapter.name] = lost
    assert not missing


def test_each_used_key_is_a_literal_in_exactly_one_place():
    """grep '"KEY"' finds the key where it is glued: one glue call in one chapter writes it, or one
    chapter's module (its glue dictionaries) does."""
    glued = {c.name: glued_keys(ROOT / "book" / f"{c.stem}.md") for c in _chapters()}
    modules = {c.name: module_keys(ROOT / "book" / f"{c.stem}.md", c.name) for c in _chapters()}
    assert sum(map(len, glued.values())) + sum(map(len, modules.values())) > 500
    wrong = {}
    for chapter in _chapters():
        for key in referenced_keys((ROOT / "book" / f"{chapter.stem}.md").read_text()):
            site = find_key(key, Project(ROOT))
            assert site is not None, key
            places = (sum(keys.count(site.key) for keys in glued.values())
                      + sum(site.key in keys for keys in modules.values())
                      + (site.function != "" and site.key not in modules[site.chapter]))  # an f-string key
            if places != 1 or site.chapter != chapter.name:
                wrong[key] = (places, site.chapter)
    assert not wrong


def test_glue_sites_read_literal_keys_and_what_computes_them(tmp_path):
    chapter = tmp_path / "toy.md"
    chapter.write_text(
        "```{code-cell} ipython3\nimport attention_geometry as ag\nfrom attention_geometry.book import glue\n```\n\n"
        "```{code-cell} ipython3\nrows = ag.last_row(8, 2, 0.5)\nm = rows.max()\n```\n\n"
        "```{code-cell} ipython3\n:tags: [remove-cell]\n"
        'glue({"toy-max": m, "toy-sum": float(ag.tail_mass(rows, 0.1))})\nglue("toy-n", 8)\n```\n')
    sites = glue_sites(chapter, "toy")
    assert set(sites) == {"toy-max", "toy-sum", "toy-n"}
    assert sites["toy-max"].cell == 3 and sites["toy-max"].line == 13
    assert sites["toy-max"].functions == ("attention_geometry.cesaro.last_row",)
    assert sites["toy-sum"].functions[0] == "attention_geometry.cesaro.tail_mass"
    assert sites["toy-n"].functions == ()
    assert "no library function" in describe(sites["toy-n"], Project(ROOT))
    assert referenced_keys("a {glue:text}`toy-max:.2f` b {glue}`toy-n`\n```{glue:figure} toy-fig\n```") == {
        "toy-max", "toy-n", "toy-fig"}


def test_where_command_names_the_cell_and_the_function():
    out = subprocess.run([sys.executable, "-m", "attention_geometry.book.cli", "where", "cesaro-floor"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert re.match(r"cesaro-floor: book/07_cesaro\.md:\d+ \(code cell \d+ of the cesaro chapter\)", out.stdout)
    assert "attention_geometry.cesaro.peak_to_trough_floor" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "attention_geometry.book.cli", "where", "no-such-key"],
                         capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "no-such-key" in bad.stderr


# ---- the golden ledger


def _rows(**verdicts):
    return [{"id": k, "chapter": "toy", "verdict": v} for k, v in verdicts.items()]


def test_verdict_changes_sees_a_moved_a_new_and_a_gone_row():
    golden = golden_of(_rows(a="reproduced", b="refuted", c="not decided"))
    assert verdict_changes(golden, golden) == []
    moved = golden_of(_rows(a="reproduced", b="not decided", d="differs"))
    assert verdict_changes(golden, moved) == ["b (toy): 'refuted' -> 'not decided'",
                                              "c (toy): row gone (was 'not decided')",
                                              "d (toy): new row, 'differs'"]


def test_the_golden_file_round_trips(tmp_path):
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: index\n")
    (tmp_path / "tests").mkdir()
    project = Project(tmp_path)
    assert read_golden(project) == {}
    write_golden(_rows(b="refuted", a="reproduced"), project)
    text = (tmp_path / GOLDEN_FILE).read_text()
    assert text.index('"a"') < text.index('"b"') and text.count("\n") == 4  # one row per line, sorted
    assert read_golden(project) == golden_of(_rows(a="reproduced", b="refuted"))


@pytest.mark.book
def test_no_verdict_moved_without_the_golden_file(built_book):
    """A change that moves a verdict updates tests/golden_ledger.json in the same commit
    (`attention-geometry golden` after `make book`), so that its diff shows the move."""
    rows = json.loads((built_book / "claims.json").read_text())
    assert rows
    changes = verdict_changes(read_golden(Project(ROOT)), golden_of(rows))
    assert not changes, ("verdicts moved; if that is intended, run `.venv/bin/attention-geometry golden` and "
                         "commit tests/golden_ledger.json:\n" + "\n".join(changes))


def test_a_key_written_by_the_chapters_module_is_found_there_with_its_function(tmp_path):
    (tmp_path / "book").mkdir()
    chapter = tmp_path / "book" / "toy.md"
    chapter.write_text("```{code-cell} ipython3\nfrom attention_geometry.book.chapters import toy as ch\n"
                       "glue(ch.toy_glue(3));\n```\n\n{glue:text}`toy-words` and {glue:text}`toy-3-wins`\n")
    module = tmp_path / "src" / "attention_geometry" / "book" / "chapters" / "toy.py"
    module.parent.mkdir(parents=True)
    module.write_text("def toy_glue(n):\n    from ... import stats\n    values = {'toy-words': stats.mean_estimate([n])}\n"
                      "    values['toy-n'] = n\n    values[f'toy-{n}-wins'] = n\n    return values\n")
    sites = glue_sites(chapter, "toy")
    assert sites["toy-words"].function == "toy_glue" and sites["toy-words"].cell == 0
    assert sites["toy-words"].functions == ("attention_geometry.stats.mean_estimate",)
    assert "toy-n" in sites and "^toy\\-.+\\-wins$" in sites
    assert module_keys(chapter, "toy") >= {"toy-words", "toy-n"}
    assert "toy_glue in the toy chapter's module" in describe(sites["toy-words"], Project(tmp_path))
