"""Every chapter executes with its smoke parameters through the book's own
papermill path, and bad parameters stop it in the validation cell, before any
computation."""

import json

import pytest

from attention_geometry.book import CHAPTERS
from attention_geometry.book.build import (
    ChapterFailed,
    book_chapters,
    execute_chapter,
    glued_values,
    parameters_cell,
)
from attention_geometry.book.params import Float, Int, _List


def test_every_toc_chapter_is_registered():
    assert {c.name for c in book_chapters()} == set(CHAPTERS)


# Chapters run twice to check that the same seed glues the same numbers; the
# others load SmolLM2 or train models, and a second run would double the
# suite's time (their randomness goes through the same seeded generators).
DETERMINISM_CHECKED = {"layernorm", "uniform_attention", "recency", "cesaro"}


@pytest.mark.parametrize("name", sorted(CHAPTERS))
def test_chapter_runs_with_smoke_parameters(name, tmp_path):
    chapter = CHAPTERS[name]
    out = tmp_path / f"{chapter.stem}.ipynb"
    execute_chapter(chapter, out, dict(chapter.smoke), progress=False)
    nb = json.loads(out.read_text())
    errors = [
        o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
        if o["output_type"] == "error"
    ]
    assert not errors
    assert nb["metadata"]["attention_geometry"]["parameters"] == dict(chapter.smoke)
    assert glued_values(out), "the chapter glues no values"
    if name not in DETERMINISM_CHECKED:
        return
    # Deterministic: a second run from the same seed glues identical numbers.
    again = tmp_path / "again.ipynb"
    execute_chapter(chapter, again, dict(chapter.smoke), progress=False)
    first, second = glued_values(out), glued_values(again)
    assert first, "the chapter glues no values"
    assert first == second


def _bad_values(chapter):
    """(label, name, value, expected fragment) for a wrong type, a value out of
    range and an unknown name."""
    name, param = next(
        (n, p) for n, p in chapter.params.items() if isinstance(p, (Int, Float)) and p.high is not None
    )
    return [
        ("wrong type", name, "abc", "has the wrong type str"),
        ("out of range", name, param.high * 10 + 1, "is out of range"),
        ("unknown name", "no_such_knob", 1, "unknown parameter 'no_such_knob'"),
    ]


# In a kernel: every kind of bad value for one chapter, and for every other
# chapter the unknown name (the case papermill itself only warns about). Every
# kind for every chapter is checked without a kernel in test_parameters.py.
CASES = [
    (n, *case)
    for n in sorted(CHAPTERS)
    for case in _bad_values(CHAPTERS[n])
    if n == "layernorm" or case[0] == "unknown name"
]


@pytest.mark.parametrize("chapter_name, label, name, value, fragment", CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_bad_parameter_stops_in_the_validation_cell(chapter_name, label, name, value, fragment, tmp_path):
    chapter = CHAPTERS[chapter_name]
    out = tmp_path / "out.ipynb"
    params = {**chapter.smoke, name: value}
    with pytest.raises(ChapterFailed) as err:
        # precheck=False: let the chapter's own validation catch it, as it does
        # for a reader who runs papermill by hand
        execute_chapter(chapter, out, params, progress=False, precheck=False)
    e = err.value
    assert e.ename == "ParameterError", str(e)
    assert fragment in e.evalue and repr(name) in e.evalue and "allowed" in e.evalue or label == "unknown name"
    assert "validate_parameters" in e.source  # nothing ran after the parameters
    assert not out.exists()
    assert out.with_suffix(".failed.ipynb").exists()


@pytest.mark.parametrize("name", sorted(CHAPTERS))
def test_defaults_fit_the_chapter_types(name):
    chapter = CHAPTERS[name]
    defaults = parameters_cell(chapter)
    for pname, param in chapter.params.items():
        if isinstance(param, _List):
            assert isinstance(defaults[pname], list)
