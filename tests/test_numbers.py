"""Numbers where they belong (issue 31 item 3): no NaN, None, inf or unresolved glue reaches the
text a reader reads, and a table is shown as a numbered table, not as a figure."""

import re
from pathlib import Path

import pytest

from test_reader_notes import page_text

ROOT = Path(__file__).resolve().parents[1]

_MATH = re.compile(r'<(span|div)\s+class="math\b[^"]*"[^>]*>.*?</\1>', re.S)
_CODE = re.compile(r"<code\b[^>]*>.*?</code>", re.S)
#: A missing value as Python or pandas prints it; "None" not when an English word follows
#: ("None of the keys ..."), none of them inside quotes (a label named "None") or identifiers.
_VALUE = re.compile(r"(?<![\w.\\“\"'-])(NaN|nan|[+-]?inf|None(?!\s+[a-z]))(?![\w\-”\"'])")
#: Glue that was not replaced, a format field left in a string ("{ua-share:.2f}"), a reference
#: Sphinx could not resolve. Braces after ^ or _ are plain-text formulas ("(-1)^{m-j}").
_PLACEHOLDER = re.compile(r"\{glue|(?<![\^_])\{[A-Za-z][\w-]*(?::[^{}\s]*)?\}|\?\?\?|<no title>")
#: The parameters appendix lists the chapters' settings, where None is a value a reader may set.
_NONE_IS_A_SETTING = ("appendix_parameters.html",)


def reader_text(raw: str) -> str:
    """A built page's text as :func:`page_text` gives it, without math and inline code."""
    return page_text(_CODE.sub(" ", _MATH.sub(" ", raw)))


def missing_values(text: str, *, none_is_a_value: bool = True) -> list[str]:
    """Each NaN, nan, None or inf shown as a value, and each unresolved placeholder, with context."""
    found = []
    for pattern in (_VALUE, _PLACEHOLDER):
        for m in pattern.finditer(text):
            if m.group(0) == "None" and not none_is_a_value:
                continue
            found.append(f"{m.group(0)!r}: …{text[max(0, m.start() - 50):m.end() + 30]}…")
    return found


def test_the_scan_finds_missing_values_and_placeholders_not_words_math_or_code():
    page = ("<p>The share is nan (NaN: not reached) and the bound inf; the default is None.</p>"
            "<table><tr><td>-inf</td><td>1.5</td></tr></table>"
            "<p>Left over: {glue:text}`k:.2f`, {ua-share:.2f} and {rec-d}; see ???.</p>")
    found = missing_values(reader_text(page))
    assert [f.split(": …", 1)[0] for f in found] == ["'nan'", "'NaN'", "'inf'", "'None'", "'-inf'",
                                                  "'{glue'", "'{ua-share:.2f}'", "'{rec-d}'", "'???'"]
    fine = ("<p>None of the keys is unselectable; the “None” mask has no centre; the infimum, "
            "a nanosecond, <code>None</code> and <code>float('nan')</code> in code.</p>"
            '<p><span class="math notranslate nohighlight">\\(\\inf_x f, \\{a\\}, \\frac{1}{2}\\)</span> and '
            "(-1)^{m-j} C(L-j, m-j) in a formula written as text; the set {0, 1}.</p>")
    assert missing_values(reader_text(fine)) == []
    assert missing_values("the default is None", none_is_a_value=False) == []


@pytest.mark.book
def test_no_built_page_shows_a_missing_value_or_a_placeholder(built_book):
    pages = sorted((built_book / "book").glob("*.html"))
    assert len(pages) > 10
    bad = {p.name: found for p in pages
           if (found := missing_values(reader_text(p.read_text(encoding="utf-8")),
                                       none_is_a_value=p.name not in _NONE_IS_A_SETTING))}
    assert not bad, "\n".join(f"{page}: {item}" for page, items in bad.items() for item in items)


_GLUE_FIGURE = re.compile(r"^(`{3,})\{glue:figure\}\s*(\S+)[^\n]*\n(.*?)^\1\s*$", re.M | re.S)


def glued_tables_as_figures(text: str) -> list[str]:
    """The ``{glue:figure}`` directives of a MyST source whose glue key or ``:name:`` names a
    table ("tab" in it): a table shown that way is numbered and referred to as a figure."""
    found = []
    for m in _GLUE_FIGURE.finditer(text):
        name = re.search(r"^:name:\s*(\S+)", m.group(3), re.M)
        names = [m.group(2)] + ([name.group(1)] if name else [])
        if any("tab" in n for n in names):
            found.append(names[-1])
    return found


def test_the_source_scan_finds_tables_in_glue_figures():
    text = ("```{glue:figure} rec-tab-level\n:name: rec-tab-level\n\nCaption.\n```\n\n"
            "```{glue:figure} fig-rec-h\n:name: fig-rec-h\n\nA figure.\n```\n\n"
            "```{glue:figure} syn-table\n:name: syn-fig\n```\n\n"
            "````{table} A numbered table.\n:name: tab-x\n\n```{glue:md} tab-x\n:format: myst\n```\n````\n")
    assert glued_tables_as_figures(text) == ["rec-tab-level", "syn-fig"]


def test_no_chapter_shows_a_table_as_a_figure():
    bad = {p.name: found for p in sorted((ROOT / "book").glob("*.md"))
           if (found := glued_tables_as_figures(p.read_text()))}
    assert not bad, "tables shown with {glue:figure} (use a {table} directive, see tables.py): " + str(bad)
