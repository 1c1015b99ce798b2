"""The built book in a real browser (headless Chromium), with the network cut
off: math typeset by the local MathJax, figures loaded, navigation works, a
clean console, search without accents, the build's provenance in the footer;
and a run report (a chapter rerun with other parameters) the same way. Saves
screenshots under _build/."""

import functools
import http.server
import re
import shutil
import sys
import threading
from pathlib import Path

import pytest

from attention_geometry.book.toc import toc_pages
from conftest import require_browser

pytestmark = [pytest.mark.browser, pytest.mark.book]

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
# The pydata theme logs this once on first load with default settings (harmless).
BENIGN = ("Got invalid theme mode",)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):  # the browser closing a connection early is not an error
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def serve(folder):
    handler = functools.partial(QuietHandler, directory=str(folder))
    httpd = QuietServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


@pytest.fixture(scope="module")
def server(built_book):
    httpd, url = serve(built_book)
    yield url
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        msg = "Chromium not found: install Debian's package with `apt-get install chromium`"
        if require_browser():
            pytest.fail(msg + " (AG_REQUIRE_BROWSER=1: a skip is a failure here)")
        pytest.skip(msg)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def open_page(browser, server, path):
    page = browser.new_page()
    console, blocked, failed = [], [], []
    page.on("console", lambda m: console.append((m.type, m.text)))
    page.on("pageerror", lambda e: console.append(("pageerror", str(e))))
    page.on("requestfailed", lambda r: failed.append(r.url))

    def route(r):
        if r.request.url.startswith(server):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.goto(f"{server}/{path}", wait_until="load")
    if page.locator("script[src*='mathjax']").count():
        # MathJax 3 typesets asynchronously: wait until its first typeset is done.
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise",
                               timeout=30_000)
        page.evaluate("() => MathJax.startup.promise")
    return page, console, blocked, failed


@pytest.mark.parametrize("page_path", [f"{p}.html" for p in toc_pages()])
def test_page_renders_offline(browser, server, page_path):
    page, console, blocked, failed = open_page(browser, server, page_path)
    assert not blocked, f"requests to the network: {blocked}"
    assert not failed, f"failed requests: {failed}"
    errors = [t for kind, t in console if kind in ("error", "pageerror") and not t.startswith(BENIGN)]
    assert not errors, errors
    # The prose as a reader sees it: code (which may hold TeX in plot labels),
    # typeset math and scripts left out.
    prose = page.evaluate(
        """() => { const a = document.querySelector('article').cloneNode(true);
                   a.querySelectorAll('pre, code, .highlight, .cell_input, mjx-container, script, style')
                    .forEach(e => e.remove());
                   return a.innerText; }"""
    )
    raw = [line for line in prose.splitlines() if "$$" in line or line.count("$") >= 2]
    assert not raw, f"raw TeX left untypeset: {raw[:3]}"
    broken = page.evaluate(
        "() => Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)"
    )
    assert not broken, f"images that did not load: {broken}"
    page.close()


def test_chapter_math_and_figures(browser, server):
    page, *_ = open_page(browser, server, "book/01_layernorm.html")
    assert page.locator("mjx-container").count() > 10
    assert page.locator("article img").count() >= 3
    page.set_viewport_size({"width": 1280, "height": 900})
    page.screenshot(path=str(ROOT / "_build" / "screenshot-layernorm.png"), full_page=False)
    page.close()


@pytest.mark.parametrize("chapter", [p for p in toc_pages() if re.match(r"book/0\d_", p)])
def test_each_chapter_opens_with_its_findings(browser, server, chapter):
    """A reader who opens a chapter sees "What this chapter finds" in the first screen, with its
    sentences; the screenshot of that first screen is kept under _build/screenshots/."""
    page, *_ = open_page(browser, server, f"{chapter}.html")
    page.set_viewport_size({"width": 1280, "height": 900})
    box = page.locator(".ag-findings").first
    assert box.count() == 1, "no findings box"
    top = box.bounding_box()["y"]
    assert top < 900, f"the findings box starts {top:.0f} px down, below the first screen"
    assert "finds" in box.inner_text() and len(box.inner_text().split()) > 20
    out = ROOT / "_build" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out / f"{chapter.split('/')[-1]}.png"), full_page=False)
    page.close()


def _prev_next(html: str) -> dict[str, str]:
    """``{"left-prev": href, "right-next": href}``: the page's previous and next links."""
    from html.parser import HTMLParser

    found = {}

    class Links(HTMLParser):
        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            for kind in ("left-prev", "right-next"):
                if tag == "a" and kind in (a.get("class") or "").split():
                    found[kind] = a.get("href")

    Links().feed(html)
    return found


def test_next_and_previous_navigation(browser, server, built_book):
    """Every page's next link leads to the toc's next page and its previous link back,
    read from each page's HTML; in the browser, clicking a next and a previous link
    follows them (a page load each, not one per page: MathJax typesets every one)."""
    import posixpath

    pages = [f"{p}.html" for p in toc_pages()]
    for i, name in enumerate(pages):
        links = _prev_next((built_book / name).read_text())
        target = {kind: posixpath.normpath(posixpath.join(posixpath.dirname(name), href))
                  for kind, href in links.items()}
        assert target.get("right-next") == (pages[i + 1] if i + 1 < len(pages) else None), (name, links)
        assert target.get("left-prev") == (pages[i - 1] if i > 0 else None), (name, links)
    page, *_ = open_page(browser, server, pages[1])
    page.click("a.right-next")
    page.wait_for_load_state("load")
    assert page.url.endswith(pages[2]), (page.url, pages[2])
    page.click("a.left-prev")
    page.wait_for_load_state("load")
    assert page.url.endswith(pages[1]), (page.url, pages[1])
    page.close()


def test_search_without_accents_finds_the_accented_word(browser, server):
    page, _, blocked, _ = open_page(browser, server, "search.html?q=Cesaro")
    page.wait_for_function("() => document.querySelectorAll('#search-results li').length > 0", timeout=30_000)
    found = page.evaluate("() => Array.from(document.querySelectorAll('#search-results li a')).map(a => a.href)")
    assert any("07_cesaro" in url for url in found), found
    assert not blocked
    page.close()


def test_every_page_footer_gives_the_commit_and_build_date(browser, server):
    page, *_ = open_page(browser, server, "book/01_layernorm.html")
    text = page.locator("#ag-build").inner_text()
    assert re.fullmatch(r"Built \d{4}-\d\d-\d\d \d\d:\d\d UTC from commit [0-9a-f]{10}( with uncommitted changes)?\.",
                        text), text
    page.close()


@pytest.fixture(scope="module")
def run_report(tmp_path_factory, built_book):
    """A rerun of chapter 9 (it refers to the other chapters) at its smoke parameters,
    rendered as the run reports are: executed, then a one-chapter book."""
    from attention_geometry.book import CHAPTERS
    from attention_geometry.book.execute import execute_chapter
    from attention_geometry.book.project import Project
    from attention_geometry.book.provenance import git_state, now
    from attention_geometry.book.report import build_report

    project = Project.find(ROOT)
    chapter = CHAPTERS["synthesis"]
    folder = tmp_path_factory.mktemp("run-report")
    notebook = folder / f"{chapter.stem}.ipynb"
    ex = execute_chapter(project, chapter, notebook, dict(chapter.smoke), kind="run")
    report = build_report(project, chapter, notebook, folder / "html", parameters=dict(chapter.smoke),
                          provenance={**git_state(project), "date": now(), "seconds": ex.seconds,
                                      "command": "make run CHAPTER=synthesis PRESET=smoke"})
    return report


def test_a_run_report_renders_offline(browser, run_report):
    httpd, url = serve(run_report.folder)
    try:
        page, console, blocked, failed = open_page(browser, url, run_report.page.relative_to(run_report.folder)
                                                   .as_posix())
        assert not blocked, f"requests to the network: {blocked}"
        assert not failed, f"failed requests: {failed}"
        assert page.locator("article mjx-container").count() > 5, "math typeset by the bundled MathJax"
        images = page.evaluate("() => Array.from(document.querySelectorAll('article img'))"
                               ".map(i => [i.complete && i.naturalWidth > 0, i.src])")
        assert len(images) >= 3 and all(ok for ok, _ in images), images
        text = page.locator("article").inner_text()
        assert "{glue" not in text and "{doc}" not in text and "{numref}" not in text
        assert "A rerun of this chapter" in text
        links = page.evaluate("() => Array.from(document.querySelectorAll('a.ag-main-book'))"
                              ".map(a => a.getAttribute('href'))")
        assert links and all("_build/html/book/" in href for href in links), links
        errors = [t for kind, t in console if kind in ("error", "pageerror") and not t.startswith(BENIGN)]
        assert not errors, errors
        page.set_viewport_size({"width": 1280, "height": 900})
        page.screenshot(path=str(ROOT / "_build" / "screenshot-run-report.png"), full_page=False)
        page.close()
    finally:
        httpd.shutdown()
