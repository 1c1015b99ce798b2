"""Benchmark: a run report, on top of the chapter's own execution (issue 16: under 20 s).

A run report (`make run`, each sweep point) is the executed chapter rendered as a
one-chapter book through Jupyter Book. Here each chapter's notebook from the book's
own build (`_build/executed/`) is rendered as a run report would be, so the time is
the report alone, without the chapter's execution; the target is in seconds, not a
ratio (there is no simpler reference that renders the same page). Needs `make book`.
"""

import os
import resource
import tempfile
from pathlib import Path

from _timing import timed  # noqa: E402 (benchmarks/ is on sys.path when run as a script)
from attention_geometry.book.project import Project
from attention_geometry.book.provenance import git_state, now
from attention_geometry.book.report import build_report
from attention_geometry.book.toc import book_chapters, parameters_cell

TARGET = 20.0
CHAPTERS = ("cesaro", "synthesis", "recency")  # small, most cross-references, most figures


def main():
    project = Project.find(Path(__file__).parent)
    print(f"{'chapter':<12} {'notebook (MB)':>13} {'report (s)':>10} {'CPU (s)':>8}  target < {TARGET:.0f} s "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    worst = 0.0
    for chapter in book_chapters(project):
        if chapter.name not in CHAPTERS:
            continue
        notebook = project.executed / f"{chapter.stem}.ipynb"
        if not notebook.exists():
            raise SystemExit(f"no executed notebook {notebook}: run `make book` first")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        with tempfile.TemporaryDirectory() as tmp:
            seconds, _ = timed(lambda: build_report(
                project, chapter, notebook, Path(tmp) / "html", parameters=parameters_cell(chapter, project),
                provenance={**git_state(project), "date": now(), "command": "benchmark"}))
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime  # Jupyter Book's process
        worst = max(worst, seconds)
        print(f"{chapter.name:<12} {notebook.stat().st_size / 1e6:>13.1f} {seconds:>10.1f} {cpu:>8.1f}")
    print(f"slowest report: {worst:.1f} s ({'within' if worst < TARGET else 'OVER'} the {TARGET:.0f} s target)")


if __name__ == "__main__":
    main()
