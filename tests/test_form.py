"""The form checker (attention_geometry.book.form) on synthetic MyST sources, each rule in both
directions: what it must find, and the near miss it must leave alone."""

import textwrap

from attention_geometry.book import form
from attention_geometry.book.form import (ANY_PARAMETERS, MAX_CELL_LINES, MAX_GLUED_PER_PARAGRAPH, MAX_VISIBLE_CELLS,
                                          broken_fences, chapter_report, code_cells, crowded_paragraphs, fixed_comparisons,
                                          form_problems, glued_count, prose_paragraphs, visible_cells)

HEADER = "---\njupytext:\n  text_representation:\n    format_name: myst\n---\n\n# A chapter\n\n"


def cell(code: str = "x = 1", tags: tuple[str, ...] = ()) -> str:
    head = f":tags: [{', '.join(tags)}]\n" if tags else ""
    return f"```{{code-cell}} ipython3\n{head}{code}\n```\n"


def source(*blocks: str) -> str:
    return HEADER + "\n".join(textwrap.dedent(b) for b in blocks)


def lines(n: int) -> str:
    return "\n".join(f"x{i} = {i}" for i in range(n))


def glued(n: int) -> str:
    return ", ".join(f"{{glue:text}}`v{i}:.2f`" for i in range(n))


# --- code cells ---

def test_code_cells_read_tags_and_code():
    src = source(cell("a = 1\n\nb = 2", ("remove-cell",)), "Some prose.\n", cell("c = 3", ("parameters",)),
                 cell("d = 4", ("remove-input", "hide-output")), cell("e = 5"))
    cells = code_cells(src)
    assert [c.index for c in cells] == [0, 1, 2, 3]
    assert cells[0].tags == ("remove-cell",) and cells[0].lines == ("a = 1", "", "b = 2") and cells[0].length == 2
    assert cells[2].tags == ("remove-input", "hide-output")
    assert [c.visible for c in cells] == [False, True, False, True]
    assert [c.index for c in visible_cells(src)] == [1, 3]


def test_quoted_tags_and_fenced_cells_inside_text():
    src = source(cell("a = 1", ("'remove-cell'",)), '```{code-cell} ipython3\n:tags: ["remove-input"]\nb = 2\n```\n',
                 "```python\nnot = 'a notebook cell'\n```\n")
    assert [c.tags for c in code_cells(src)] == [("remove-cell",), ("remove-input",)]
    assert visible_cells(src) == []


def test_too_many_visible_cells_is_a_problem_and_hidden_cells_do_not_count():
    at_limit = source(*[cell() for _ in range(MAX_VISIBLE_CELLS)], *[cell(tags=("remove-cell",))] * 5)
    assert form_problems(at_limit) == []
    over = source(*[cell() for _ in range(MAX_VISIBLE_CELLS + 1)])
    assert form_problems(over) == [f"{MAX_VISIBLE_CELLS + 1} visible code cells (at most {MAX_VISIBLE_CELLS})"]


def test_a_long_visible_cell_is_a_problem_a_short_or_hidden_one_is_not():
    short = lines(MAX_CELL_LINES) + "\n\n\n"  # blank lines do not count
    assert form_problems(source(cell(short))) == []
    long = lines(MAX_CELL_LINES + 1)
    problems = form_problems(source(cell(), cell(long)))
    assert problems == [f"code cell 2 shows {MAX_CELL_LINES + 1} lines (at most {MAX_CELL_LINES}): x0 = 0"]
    assert form_problems(source(cell(long, ("remove-cell",)))) == []
    assert form_problems(source(cell(long, ("remove-input",)))) == []
    assert form_problems(source(cell(long, ("parameters",)))) == []  # what a reader may set, listed in full


# --- paragraphs and glued values ---

def test_prose_paragraphs_skip_front_matter_code_fences_and_display_math():
    src = source("First paragraph\ncontinues here.\n",
                 cell("prose = 'not this'"),
                 "$$\nx = {glue:text}`in-math`\n$$ (eq-x)\n",
                 "````{admonition} Box\n```{glue:md} key\n:format: myst\n```\n````\n",
                 "Second paragraph.\n")
    paragraphs = prose_paragraphs(src)
    assert [p for _, p in paragraphs] == ["# A chapter", "First paragraph\ncontinues here.", "Second paragraph."]
    numbered = src.splitlines()
    for start, p in paragraphs:  # each with the line it starts on
        assert numbered[start - 1] == p.splitlines()[0]


def test_a_one_line_display_does_not_swallow_the_prose_after_it():
    src = source("$$ a = b $$\n", "Prose between the displays.\n", "$$\nc = d\n$$ (eq-c)\n", "After.\n")
    assert [p for _, p in prose_paragraphs(src)] == ["# A chapter", "Prose between the displays.", "After."]


def test_glued_count_counts_text_and_plain_glue_not_figures_or_other_roles():
    p = ("Values {glue:text}`a:.2f`, {glue}`b`, {glue:md}`c` and {glue:text}`ch.ipynb::d:s`, "
         "not {ref}`sec-x`, {eq}`eq-y` or {numref}`fig-z`.")
    assert glued_count(p) == 4
    assert glued_count("No values, only {cite:t}`key`.") == 0


def test_a_crowded_paragraph_is_found_and_one_at_the_limit_is_not():
    at_limit = f"The values are {glued(MAX_GLUED_PER_PARAGRAPH)}."
    assert crowded_paragraphs(source(at_limit)) == []
    crowded = f"The values are {glued(MAX_GLUED_PER_PARAGRAPH + 1)}."
    src = source("Intro.\n", crowded)
    found = crowded_paragraphs(src)
    assert len(found) == 1 and f"{MAX_GLUED_PER_PARAGRAPH + 1} glued values" in found[0]
    assert found[0].startswith(f"line {src.splitlines().index(crowded) + 1}:")
    # the same values split over two paragraphs are two paragraphs
    split = source(f"First {glued(3)}.\n", f"Then {glued(3)}.\n")
    assert crowded_paragraphs(split) == []
    assert crowded_paragraphs(source(crowded), limit=MAX_GLUED_PER_PARAGRAPH + 1) == []


# --- literal comparisons beside glued numbers ---

def test_a_literal_comparison_beside_a_glued_number_is_found():
    src = source("The error is {glue:text}`err:.1e`, below the tolerance.\n")
    found = fixed_comparisons(src)
    assert len(found) == 1 and "'below'" in found[0]
    for word in ("exceeds", "only", "holds", "never", "Within", "reproduces"):
        assert fixed_comparisons(source(f"{word} it: the value {{glue:text}}`v`.\n")), word


def test_a_glued_comparison_is_not_found():
    assert fixed_comparisons(source("The error {glue:text}`err-words` the tolerance {glue:text}`tol:.0e`.\n")) == []
    assert fixed_comparisons(source("The value is {glue:text}`v:.2f` at this width.\n")) == []


def test_a_comparison_without_a_glued_number_is_not_found():
    assert fixed_comparisons(source("The theorem holds for every d.\n")) == []


def test_only_the_sentence_with_the_glued_number_counts():
    src = source("The bound holds for all inputs. The value is {glue:text}`v:.2f`.\n")
    assert fixed_comparisons(src) == []
    src = source("The value is {glue:text}`v:.2f`. It is below the bound.\n")
    assert fixed_comparisons(src) == []


def test_a_paragraph_under_the_any_parameters_comment_is_skipped():
    vouched = source(f"{ANY_PARAMETERS}\nThe sum is {{glue:text}}`s`, never below zero.\n")
    assert fixed_comparisons(vouched) == []
    apart = source(f"{ANY_PARAMETERS}\n", "The sum is {glue:text}`s`, never below zero.\n")
    assert len(fixed_comparisons(apart)) == 1  # the comment vouches for the paragraph right below it only
    other = source("% a note to the authors\nThe sum is {glue:text}`s`, never below zero.\n")
    assert len(fixed_comparisons(other)) == 1  # another comment vouches for nothing


def test_a_comparison_inside_inline_math_or_a_role_is_not_found():
    assert fixed_comparisons(source("At $L \\le 40$ and $\\text{only}$ the value is {glue:text}`v`.\n")) == []
    assert fixed_comparisons(source("At $$\\text{below}$$ the value is {glue:text}`v`.\n")) == []
    assert fixed_comparisons(source("By {prf:ref}`thm-holds` and {ref}`sec-beyond` the value is {glue:text}`v`.\n")) == []
    assert fixed_comparisons(source("With `only_positive=True` the value is {glue:text}`v`.\n")) == []
    # a word outside the math is still found
    assert len(fixed_comparisons(source("At $L$ the value {glue:text}`v` exceeds the bound.\n"))) == 1


def test_glue_inside_code_and_math_blocks_is_not_prose():
    src = source(cell("glue('v', 1)  # below"), "$$\n{glue:text}`v` < 1 \\text{ only}\n$$\n")
    assert fixed_comparisons(src) == [] and crowded_paragraphs(src) == []


# --- the report ---

def test_chapter_report_and_main(tmp_path, capsys):
    bad = tmp_path / "bad.md"
    bad.write_text(source(*[cell() for _ in range(MAX_VISIBLE_CELLS + 1)],
                          f"Values {glued(MAX_GLUED_PER_PARAGRAPH + 1)} only.\n"))
    good = tmp_path / "good.md"
    good.write_text(source(cell(), "The value is {glue:text}`v`.\n"))
    report = chapter_report(bad)
    assert len(report["cells"]) == 1 and len(report["crowded"]) == 1 and len(report["comparisons"]) == 1
    assert chapter_report(good) == {"cells": [], "crowded": [], "comparisons": [], "fences": []}
    assert form.main([str(good)]) == 0
    assert form.main([str(good), str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{good}: 1 visible cells, 0 problems" in out and f"{bad}: {MAX_VISIBLE_CELLS + 1} visible cells, 3 problems" in out
    assert "[cells]" in out and "[crowded]" in out and "[comparisons]" in out


def test_the_limits_are_the_issues():
    """Issue 31: about 12 visible cells, none over 10 lines, a handful of glued numbers a paragraph."""
    assert (MAX_VISIBLE_CELLS, MAX_CELL_LINES, MAX_GLUED_PER_PARAGRAPH) == (12, 10, 5)


def test_every_chapter_of_the_book_passes_the_form_checker():
    """The book's own chapters: at most the visible cells and lines the reader issue allows, a few
    glued values per paragraph, and no literal comparison beside a glued number."""
    from pathlib import Path
    chapters = sorted((Path(__file__).resolve().parents[1] / "book").glob("0*.md"))
    assert len(chapters) >= 9
    bad = {p.name: found for p in chapters
           if (found := {kind: items for kind, items in chapter_report(p).items() if items})}
    assert not bad, bad


# --- fences that cut the notebook ---

TABLE = "{fence}{{table}} {caption}\n:name: tab-x\n\n```{{glue:md}} tab-x\n:format: myst\n```\n{fence}\n"


def _notebook_code_cells(text):
    import jupytext
    return sum(c.cell_type == "code" for c in jupytext.reads(text, fmt="md:myst").cells)


def test_a_backtick_in_a_backtick_fences_caption_is_found_and_cuts_the_notebook():
    """CommonMark: a backtick fence's info string may not hold a backtick. Jupytext then reads the
    rest of the chapter as Markdown, so the code cell after the table is lost; the checker names the
    line. A tilde fence, or a caption without a backtick, keeps every cell and is not reported."""
    for fence, caption, cut in (("````", "The `x` value.", True), ("````", "The {glue:text}`v` value.", True),
                                ("~~~~", "The {glue:text}`v` value.", False), ("````", "The $x$ value.", False)):
        src = source(cell(), TABLE.format(fence=fence, caption=caption), cell("y = 2"))
        assert _notebook_code_cells(src) == (1 if cut else 2), (fence, caption)
        found = broken_fences(src)
        assert len(found) == int(cut) and (not cut or found[0].startswith("line ")), (fence, caption, found)


def test_every_chapter_keeps_all_its_code_cells_in_the_notebook():
    """What jupytext reads from each chapter has every code cell of the source text."""
    from pathlib import Path
    for p in sorted((Path(__file__).resolve().parents[1] / "book").glob("0*.md")):
        text = p.read_text()
        assert _notebook_code_cells(text) == len(code_cells(text)), p.name
