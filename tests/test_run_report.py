"""Run reports on a toy project: `make run` renders the rerun through the book's own
Jupyter Book pipeline (glued numbers and figures, math, a header with what differs,
references to other chapters as links into the main book), and sweeps render one
report per point plus an index page."""

import re
import subprocess
from html import unescape
from pathlib import Path

import pytest
from pydantic import Field

from attention_geometry.book import cli
from attention_geometry.book.project import Project

from conftest import make_project, toy_chapter

OTHER = """
# The other chapter

```{code-cell} ipython3
:tags: [parameters]
k = 1
```

(sec-other)=
## A section elsewhere

```{math}
:label: eq-other
a^2 + b^2 = c^2
```

```{code-cell} ipython3
%matplotlib inline
from matplotlib.figure import Figure
from myst_nb import glue
fig = Figure(figsize=(2, 2))
fig.subplots().plot([0, 1], [k, 2 * k])
glue("other-fig", fig, display=False)
```

```{glue:figure} other-fig
:name: fig-other

A figure in the other chapter.
```
"""

TOY = """
# Toy rerun

Squares: $n^2$ grows, and

$$
\\sum_{i=1}^n i = \\frac{n(n+1)}{2}.
$$

```{code-cell} ipython3
:tags: [parameters]
n = 3
```

```{code-cell} ipython3
%matplotlib inline
from matplotlib.figure import Figure
from myst_nb import glue
glue("square", n * n, display=False)
fig = Figure(figsize=(3, 2))
fig.subplots().plot(range(n), [i * i for i in range(n)])
glue("toy-fig", fig, display=False)
```

The square of $n$ is {glue:text}`square`. See {doc}`other`, {ref}`sec-other`,
{numref}`fig-other` and equation {eq}`eq-other`.

```{glue:figure} toy-fig
:name: fig-toy

The squares.
```
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A toy book with two chapters, built, and a rerun of one of them with n=5."""
    root = tmp_path_factory.mktemp("report")
    project = make_project(root, {"other": (OTHER, toy_chapter("other", params={"k": (int, Field(1, ge=0, le=9, description="k"))})),
                                  "toy": (TOY, toy_chapter("toy"))})
    for name in ("_config.yml", "references.bib"):  # the book's own configuration
        (root / name).write_text((Path(__file__).parents[1] / name).read_text())
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-C", str(root)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "toy"], check=True)
    assert cli.main(["book", "--jobs", "1"], project=project) == 0
    assert cli.main(["run", "toy", "n=5"], project=project) == 0
    return project


def test_the_run_folder_holds_the_notebook_and_its_report(built, capsys):
    folder = built.runs / "toy" / "n-5"
    assert (folder / "toy.ipynb").is_file()
    assert (folder / "html" / "index.html").is_file()
    page = (folder / "html" / "book" / "toy.html").read_text()
    assert "{glue" not in page and "{doc}" not in page and "{numref}" not in page
    text = re.sub(r"<[^>]+>", " ", page)
    assert re.search(r"The square of\s+\$?n\$?\s+is\s+25\s*\.", text) or "is 25" in " ".join(text.split()), text[:2000]
    assert all(f.stat().st_mode & 0o777 == 0o644 for f in folder.rglob("*") if f.is_file())


def test_the_header_states_what_differs_commit_and_date(built):
    page = (built.runs / "toy" / "n-5" / "html" / "book" / "toy.html").read_text()
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", page)).split())
    header = text[text.index("A rerun of this chapter"):]
    assert text.index("Toy rerun") < text.index("A rerun of this chapter") < text.index("Squares")
    assert re.search(r"parameter this run default n 5 3", header), "the changed parameter, its value, its default"
    assert re.search(r"Executed \d{4}-\d\d-\d\d \d\d:\d\d UTC from commit [0-9a-f]{10}", header), header[:300]
    assert 'make run CHAPTER=toy PARAMS="n=5"' in header


def test_references_to_other_chapters_link_into_the_main_book(built):
    page = (built.runs / "toy" / "n-5" / "html" / "book" / "toy.html").read_text()
    links = dict((m.group(2).strip(), m.group(1)) for m in
                 re.finditer(r'<a class="[^"]*ag-main-book[^"]*" href="([^"]+)"[^>]*>(?:<span[^>]*>)?([^<]*)', page))
    assert links, page[:3000]
    report_page = built.runs / "toy" / "n-5" / "html" / "book" / "toy.html"
    for text, href in links.items():
        target = (report_page.parent / href.split("#")[0]).resolve()
        assert target.is_file() and target.is_relative_to(built.html.resolve()), (text, href)
    assert "The other chapter" in links
    assert any(t.startswith("Fig") for t in links), links
    assert any(re.fullmatch(r"\(\d+(\.\d+)*\)", t) for t in links), links


def test_math_is_the_bundled_mathjax_and_nothing_is_remote(built):
    html = built.runs / "toy" / "n-5" / "html"
    page = (html / "book" / "toy.html").read_text()
    assert re.search(r'<script[^>]+src="[^"]*_static/mathjax/tex-chtml\.js', page)
    assert (html / "_static" / "mathjax" / "tex-chtml.js").exists()
    for f in html.rglob("*.html"):
        text = f.read_text()
        assert not re.search(r"""<(?:script|link|img|iframe)[^>]+(?:src|href)=["'](?:https?:)?//""", text), f
    assert re.search(r'<img[^>]+src="[^"]*\.png"', page), "the glued figure"
