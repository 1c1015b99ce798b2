"""Static checks of the chapters' code cells: a cell whose last statement is a
``glue(...)`` call ends in ``;`` (glue returns what it glued, which the kernel
would otherwise display under the cell: a dict, a string, or a second copy of
a glued figure)."""

import ast
import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[1] / "book"
CELL = re.compile(r"```\{code-cell\}[^\n]*\n(.*?)```", re.S)


def cells(path: Path):
    for body in CELL.findall(path.read_text()):
        yield "\n".join(line for line in body.split("\n") if not line.startswith(":"))


@pytest.mark.parametrize("path", sorted(BOOK.glob("0*.md")), ids=lambda p: p.name)
def test_no_cell_displays_what_it_glued(path):
    for code in cells(path):
        tree = ast.parse(code)
        last = tree.body[-1] if tree.body else None
        if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and \
                getattr(last.value.func, "id", None) == "glue":
            assert code.rstrip().endswith(";"), f"{path.name}: a cell ends in glue(...) without ';':\n{code[-300:]}"
