import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"


@pytest.fixture(scope="session")
def built_book() -> Path:
    """The book built by `make book` (which `make test` runs first)."""
    if not (HTML / "index.html").exists():
        pytest.fail("no built book at _build/html: run `make book` first (make test does)")
    return HTML


def require_browser() -> bool:
    """CI sets AG_REQUIRE_BROWSER=1: there a missing Chromium is a failure, not a skip."""
    return os.environ.get("AG_REQUIRE_BROWSER") == "1"


# The Jupytext header of a chapter, for the toy chapters the tests build.
CHAPTER_HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""
