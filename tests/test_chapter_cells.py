"""Static checks of the chapters' code cells: a cell whose last statement is a
``glue(...)`` call ends in ``;`` (glue returns what it glued, which the kernel
would otherwise display under the cell: a dict, a string, or a second copy of
a glued figure)."""

import ast
import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[1] / "book"
CHAPTERS = sorted(BOOK.glob("0*.md"))
CELL = re.compile(r"```\{code-cell\}[^\n]*\n(.*?)```", re.S)


def cells(path: Path):
    for body in CELL.findall(path.read_text()):
        yield "\n".join(line for line in body.split("\n") if not line.startswith(":"))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_no_cell_displays_what_it_glued(path):
    for code in cells(path):
        tree = ast.parse(code)
        last = tree.body[-1] if tree.body else None
        if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and \
                getattr(last.value.func, "id", None) == "glue":
            after = code.split("\n")[last.end_lineno - 1][last.end_col_offset:]  # what follows the call
            assert after.lstrip().startswith(";"), f"{path.name}: a cell ends in glue(...) without ';':\n{code[-300:]}"


# "No code cell over about 15 lines" (read like the Annotated Transformer): 17 non-blank lines at most.
# Exempt: the parameters cell (papermill takes one, and it declares every parameter with its comment)
# and the bookkeeping cells removed from the HTML (`remove-cell`: the literal glue dictionaries).
MAX_CELL_LINES = 17
EXEMPT = re.compile(r"```\{code-cell\}[^\n]*\n:tags: \[(parameters|remove-cell)\]")


def long_cells(text: str) -> list[tuple[int, int]]:
    """``(line, length)`` of every code cell but the exempt ones longer than :data:`MAX_CELL_LINES`."""
    out = []
    for m in CELL.finditer(text):
        if EXEMPT.match(text, m.start()):
            continue
        n = sum(1 for line in m.group(1).split("\n") if line.strip() and not line.startswith(":"))
        if n > MAX_CELL_LINES:
            out.append((text.count("\n", 0, m.start()) + 1, n))
    return out


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_no_code_cell_is_longer_than_about_15_lines(path):
    assert long_cells(path.read_text()) == []


def test_the_long_cell_finder_counts_code_not_blanks_or_the_parameters_cell():
    body = "\n".join(f"x{i} = {i}" for i in range(18))
    text = (f"```{{code-cell}} ipython3\n:tags: [parameters]\n\n{body}\n```\n\n"
            f"```{{code-cell}} ipython3\n:tags: [remove-cell]\n{body}\n```\n\n"
            f"```{{code-cell}} ipython3\n{body}\n\n\n```\n\n```{{code-cell}} ipython3\nx = 1\n```\n")
    assert long_cells(text) == [(46, 18)]


# One hop from equation to function: the library (its docstrings) names every labelled equation.
SRC = BOOK.parent / "src" / "attention_geometry"
EQUATION = re.compile(r"^\$\$ \((eq-[\w-]+)\)", re.M)


def unnamed_equations(chapter_text: str, library_text: str) -> list[str]:
    """The labels of the chapter's numbered equations that the library's source does not name."""
    return [label for label in EQUATION.findall(chapter_text)
            if not re.search(rf"(?<![\w-]){re.escape(label)}(?![\w-])", library_text)]


def test_every_numbered_equation_is_named_by_a_library_docstring():
    library = "\n".join(p.read_text() for p in SRC.rglob("*.py"))
    assert CHAPTERS and library
    missing = {p.name: unnamed_equations(p.read_text(), library) for p in CHAPTERS}
    assert not {k: v for k, v in missing.items() if v}


def test_the_unnamed_equation_finder_finds_them():
    text = "$$\nx = 1\n$$ (eq-one)\n\n$$\ny = 2\n$$ (eq-two)\n"
    assert unnamed_equations(text, "def f():\n    '''Computes ``eq-one``, not eq-two-b.'''") == ["eq-two"]


FIGURE_IMPORT = re.compile(r"^from attention_geometry\.figures import (\w+) as (\w+)$", re.M)


def test_each_figure_module_has_one_alias_across_the_chapters():
    """``from attention_geometry.figures import cesaro as cesaro_fig``: one name per figure
    module in every chapter, so that an alias never names two modules."""
    found = [m.groups() for p in sorted(BOOK.glob("0*.md")) for m in FIGURE_IMPORT.finditer(p.read_text())]
    assert len(found) >= 9
    assert all(alias == f"{module}_fig" for module, alias in found), found
    assert not re.search(r"^from attention_geometry\.figures import \w+$", "\n".join(
        p.read_text() for p in BOOK.glob("0*.md")), re.M)
