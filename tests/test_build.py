"""The build pipeline: cache keys, atomic execution, failure reports, runs."""

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from attention_geometry.book import build
from attention_geometry.book.registry import Chapter
from attention_geometry.book.params import Int

from conftest import CHAPTER_HEADER as HEADER


def make_root(tmp_path: Path, body: str) -> tuple[Path, Chapter]:
    """A tiny repository with one chapter whose cells are `body`."""
    (tmp_path / "book").mkdir()
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "lib.py").write_text("X = 1\n")
    (tmp_path / "requirements.txt").write_text("numpy\n")
    (tmp_path / "book" / "toy.md").write_text(HEADER + textwrap.dedent(body))
    chapter = Chapter(name="toy", source="book/toy.md", params={"n": Int("n", low=0, high=100)}, smoke={"n": 1})
    return tmp_path, chapter


TOY = """
# Toy

```{code-cell} ipython3
:tags: [parameters]
n = 3
```

```{code-cell} ipython3
assert n < 50, "n too large"
value = n * 2
```
"""


def test_cache_key_tracks_source_parameters_library_and_requirements(tmp_path):
    root, chapter = make_root(tmp_path, TOY)
    key = build.cache_key(chapter, {}, root)
    assert build.cache_key(chapter, {}, root) == key
    assert build.cache_key(chapter, {"n": 4}, root) != key
    for path, text in [
        (root / "src" / "pkg" / "lib.py", "X = 2\n"),
        (root / "requirements.txt", "numpy\nscipy\n"),
        (root / "book" / "toy.md", (root / "book" / "toy.md").read_text() + "\nmore prose\n"),
    ]:
        old = path.read_text()
        path.write_text(text)
        assert build.cache_key(chapter, {}, root) != key, path
        path.write_text(old)
        assert build.cache_key(chapter, {}, root) == key
    (root / "src" / "pkg" / "build.py").write_text("# build tooling")
    assert build.cache_key(chapter, {}, root) == key  # the tooling is not the library
    (root / "src" / "pkg" / "new.py").write_text("")
    assert build.cache_key(chapter, {}, root) != key


def test_failure_names_chapter_and_cell_and_keeps_previous_good(tmp_path):
    root, chapter = make_root(tmp_path, TOY)
    out = tmp_path / "out" / "toy.ipynb"
    build.execute_chapter(chapter, out, {}, root=root, progress=False)
    good = out.read_bytes()
    with pytest.raises(build.ChapterFailed) as err:
        build.execute_chapter(chapter, out, {"n": 60}, root=root, progress=False)
    msg = str(err.value)
    assert "'toy'" in msg and "In [" in msg and "AssertionError: n too large" in msg
    assert out.read_bytes() == good  # the previous good notebook is untouched
    assert out.with_suffix(".failed.ipynb").exists()
    assert not list(out.parent.glob(".*partial*"))


def test_sigterm_mid_chapter_leaves_no_partial_notebook(tmp_path):
    slow = TOY + "\n```{code-cell} ipython3\nimport time\ntime.sleep(60)\n```\n"
    root, _ = make_root(tmp_path, slow)
    out = tmp_path / "out" / "toy.ipynb"
    script = textwrap.dedent(f"""
        import sys
        from attention_geometry.book import build
        from attention_geometry.book.registry import Chapter
        from attention_geometry.book.params import Int
        build.interrupt_on_sigterm()
        ch = Chapter(name="toy", source="book/toy.md", params={{"n": Int("n", low=0, high=100)}}, smoke={{}})
        print("started", flush=True)
        try:
            build.execute_chapter(ch, {str(out)!r}, {{}}, root=build.Path({str(root)!r}), progress=False)
        except KeyboardInterrupt:
            sys.exit(130)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "started"
    deadline = time.time() + 60
    while not list(out.parent.glob(".*partial*")) and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(3)  # let the kernel reach the slow cell
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 130
    assert not out.exists()
    assert not list(out.parent.glob(".*")), list(out.parent.iterdir())


def test_run_name_is_derived_from_parameters():
    assert build.run_name({}) == "defaults"
    assert build.run_name({"seed": 3, "d_max": 128}) == "d_max-128_seed-3"
    assert build.run_name({"eps_values": [1e-05, 0.1]}) == "eps_values-1e-05+0.1"


def test_parse_assignments_reads_yaml_values():
    assert build.parse_assignments(["d=128", "xs=[1, 2.5]", "mode=paper", "flag=true"]) == {
        "d": 128, "xs": [1, 2.5], "mode": "paper", "flag": True,
    }
    with pytest.raises(build.ParameterError, match="NAME=VALUE"):
        build.parse_assignments(["d128"])


def test_run_unknown_chapter_lists_chapters(capsys):
    assert build.main(["run", "no_such_chapter"]) == 2
    err = capsys.readouterr().err
    assert "unknown chapter 'no_such_chapter'" in err and "layernorm" in err


def test_run_bad_parameter_stops_before_executing(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(build, "RUNS", tmp_path)
    assert build.main(["run", "layernorm", "seed=-1"]) == 2
    assert "parameter 'seed' = -1 is out of range" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_run_writes_notebook_and_html(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(build, "RUNS", tmp_path / "runs")
    assert build.main(["run", "layernorm", "--preset", "smoke", "seed=3"]) == 0
    out = capsys.readouterr().out
    nb = next((tmp_path / "runs" / "layernorm").glob("*.ipynb"))
    html = nb.with_suffix(".html")
    assert nb.name.startswith("smoke_") and "seed-3" in nb.name
    assert str(nb) in out and str(html) in out
    text = html.read_text()
    assert "cdn.jsdelivr" not in text and "mathjax" in text.lower()
