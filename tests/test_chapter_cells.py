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


# A name a cell reads must be bound by that cell or an earlier one. A branch that only a paper run takes
# (``if ctx.is_paper_run``) is never executed by ``make book``, so a name it reads that a later cell binds
# would stop the paper run hours in; this finds it without executing anything.
_COMPREHENSIONS = ("listcomp", "dictcomp", "setcomp", "genexpr")


def _reads_and_binds(code: str) -> tuple[set[str], set[str]]:
    """The global names a cell's top-level code reads (comprehensions included; the bodies of the
    functions and lambdas it defines are not, since they run later) and the names it binds."""
    import symtable

    top = symtable.symtable(code, "<cell>", "exec")
    binds = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported() or s.is_namespace()}
    reads = {s.get_name() for s in top.get_symbols() if s.is_referenced()}
    stack = [t for t in top.get_children() if t.get_name() in _COMPREHENSIONS]
    while stack:
        table = stack.pop()
        reads |= {s.get_name() for s in table.get_symbols() if s.is_referenced() and s.is_global()}
        stack += [t for t in table.get_children() if t.get_name() in _COMPREHENSIONS]
    return reads, binds


def forward_reads(cell_codes: list[str]) -> list[tuple[int, str]]:
    """``(cell, name)`` for each name a cell reads before any cell binds it, where a later cell binds it."""
    per_cell = [_reads_and_binds(code) for code in cell_codes]
    later_bound = set().union(*(b for _, b in per_cell)) if per_cell else set()
    bound, out = set(), []
    for i, (reads, binds) in enumerate(per_cell):
        out += [(i, n) for n in sorted(reads - bound - binds) if n in later_bound]
        bound |= binds
    return out


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_no_cell_reads_a_name_a_later_cell_binds(path):
    assert forward_reads(list(cells(path))) == []


def test_the_forward_read_finder_sees_a_branch_a_comprehension_and_not_a_function_body():
    assert forward_reads(["if paper:\n    x = panels\n", "panels = 1\n"]) == [(0, "panels")]
    assert forward_reads(["y = [panels for _ in range(2)]\n", "panels = 1\n"]) == [(0, "panels")]
    assert forward_reads(["def f():\n    return panels\n", "panels = 1\n", "f()\n"]) == []
    assert forward_reads(["panels = 1\n", "x = panels\n"]) == []
    assert forward_reads(["x = len([])\n"]) == []
