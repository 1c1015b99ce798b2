"""Run reports: an executed rerun rendered through the book's own pipeline.

A run (``make run``) or a sweep point is a chapter executed with other
parameters. Its report is a one-chapter book built by Jupyter Book exactly as
the book is (same configuration, extensions, bundled MathJax, no CDN): the
prose is filled with the run's own glued numbers and figures, and the
bibliography page comes along for the citations. On top of the chapter a box
states what differs from the book: the parameters that are not the defaults,
the commit, the date and the command. References to other chapters link into
the main book's HTML (``_build/html``) when it has been built
(:mod:`.sphinx_report`).

:func:`build_report` writes a folder such as ``runs/<chapter>/<run>/html/`` (open its
``index.html``);
:func:`sweep_index` writes a sweep's ``index.html``, one row per point with a
link to its report.

A report's ``_static`` files (MathJax, the theme: ~33 MB) are hard links to those of
another run report's, when they are the same bytes (:func:`share_static`): each
report stays a folder that opens alone, and the disk holds one copy. A report is
built in a scratch folder beside it (``.report-<pid>-...``); one left by a killed
run is removed by the next (:mod:`.leftovers`).
"""

import html
import json
import os
import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping

import yaml

from .appendices import chapter_title
from .files import write_text_atomic
from .leftovers import clean_leftovers, report_dir
from .notebooks import strip_machine_paths
from .project import Project
from .provenance import Provenance
from .registry import Chapter
from .stage import page_assets, run_jupyter_book
from .toc import parameters_cell, toc_pages

__all__ = ["ReportFailed", "Report", "changed_parameters", "header_markdown", "build_report", "share_static",
           "sweep_index"]

REPORT_TAG = "attention-geometry-run-header"
BIBLIOGRAPHY = "book/bibliography"


class ReportFailed(RuntimeError):
    """Jupyter Book could not build a run report (its warnings were printed)."""


@dataclass(frozen=True)
class Report:
    folder: Path  # <run>/html
    page: Path  # the chapter's page in it

    @property
    def index(self) -> Path:
        return self.folder / "index.html"


def changed_parameters(chapter: Chapter, parameters: Mapping, project: Project) -> dict[str, tuple]:
    """``{name: (this run's value, the default)}`` for every parameter that is not the default."""
    defaults = parameters_cell(chapter, project)
    return {name: (value, defaults.get(name)) for name, value in parameters.items()
            if json.dumps(value, sort_keys=True) != json.dumps(defaults.get(name), sort_keys=True)}


def _value(value) -> str:
    return "`" + (json.dumps(value) if not isinstance(value, str) else repr(value)).replace("|", "\\|") + "`"


def _date(iso: str | None) -> str:
    try:
        return datetime.fromisoformat(iso).astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    except (TypeError, ValueError):
        return iso or "?"


def header_markdown(changed: Mapping[str, tuple], provenance: Provenance | Mapping, book_page: str | None,
                    chapter_name: str) -> str:
    """The box on top of a report: what differs from the book, and where it came from
    (``provenance``: a :class:`~.provenance.Provenance`, or its stored form)."""
    p = Provenance.from_json(provenance)
    where = (f"commit `{p.commit[:10]}`" + (" with uncommitted changes" if p.dirty else "")
             if p.commit else "a folder that is not a git checkout")
    lines = [":::{admonition} A rerun of this chapter, not the book's page", ":class: important", ""]
    if changed:
        lines += ["Parameters that differ from the book's defaults:", "",
                  "| parameter | this run | default |", "|---|---|---|"]
        lines += [f"| `{name}` | {_value(value)} | {_value(default)} |" for name, (value, default) in changed.items()]
    else:
        lines += ["Every parameter has its default value."]
    seconds = p.wall_seconds
    lines += ["", f"Executed {_date(p.date)} from {where}"
              + (f" in {seconds:.1f} s" if isinstance(seconds, (int, float)) else "") + "."]
    if p.command:
        lines += ["", f"Command: `{p.command}`."]
    if book_page:
        lines += ["", f'The book\'s own page, at the default parameters: <a href="{html.escape(book_page)}">'
                      f"{html.escape(chapter_name)}</a>."]
    lines += [":::"]
    return "\n".join(lines)


def _with_header(notebook: dict, header: str) -> dict:
    """A copy of ``notebook`` with a Markdown cell ``header`` right under the title
    (the cell holding the title is split there)."""
    nb = json.loads(json.dumps(notebook))
    cell = {"cell_type": "markdown", "id": "ag-run-header", "metadata": {"tags": [REPORT_TAG]}, "source": header}
    for i, c in enumerate(nb["cells"]):
        lines = "".join(c["source"]).splitlines(keepends=True)
        title = next((j for j, line in enumerate(lines) if line.startswith("# ")), None)
        if c["cell_type"] != "markdown" or title is None:
            continue
        rest = "".join(lines[title + 1:])
        c["source"] = "".join(lines[:title + 1])
        after = [{**c, "id": "ag-after-run-header", "source": rest}] if rest.strip() else []
        nb["cells"][i + 1:i + 1] = [cell, *after]
        return nb
    nb["cells"].insert(0, cell)
    return nb


def _config(project: Project, title: str, main_html: Path | None, main_url: str) -> dict:
    config = yaml.safe_load((project.root / "_config.yml").read_text()) or {}
    config["title"] = title
    config["only_build_toc_files"] = True
    sphinx = config.setdefault("sphinx", {})
    extensions = list(sphinx.get("extra_extensions") or [])
    if "attention_geometry.book.sphinx_report" not in extensions:
        extensions.append("attention_geometry.book.sphinx_report")
    sphinx["extra_extensions"] = extensions
    sphinx.setdefault("config", {}).update(
        {"ag_main_book": str(main_html) if main_html else "", "ag_main_book_url": main_url})
    config.setdefault("html", {})["home_page_in_navbar"] = False
    return config


def build_report(project: Project, chapter: Chapter, notebook: Path, out: Path, *,
                 parameters: Mapping, provenance: Provenance | Mapping, title: str | None = None) -> Report:
    """Render the executed ``notebook`` of ``chapter`` as a one-chapter book in the folder ``out``.

    ``provenance``: the run's :class:`~.provenance.Provenance` (commit, dirty flag, date,
    wall time, command), or its stored form.
    Raises :class:`ReportFailed` if Jupyter Book fails (the notebook is untouched).
    """
    out = Path(out).resolve()  # a relative out (sweep --out results/...) must not resolve twice in the stage
    out.parent.mkdir(parents=True, exist_ok=True)
    page = chapter.source.removesuffix(".md")
    main_html = project.html if (project.html / "index.html").exists() else None
    main_url = os.path.relpath(project.html, out)
    book_page = (os.path.relpath(project.html / f"{page}.html", (out / page).parent)
                 if main_html else None)
    chapter_name = chapter_title(chapter, project.root)
    header = header_markdown(changed_parameters(chapter, parameters, project), provenance, book_page, chapter_name)
    pages = [page] + ([BIBLIOGRAPHY] if BIBLIOGRAPHY in toc_pages(project) else [])
    clean_leftovers(out.parent)  # the build folder of a report whose run was killed
    with report_dir(out.parent) as tmp:
        stage = Path(tmp) / "stage"
        stage.mkdir()
        nb = _with_header(json.loads(Path(notebook).read_text()), header)
        strip_machine_paths(nb, project.root)  # a stored notebook written before execute stripped them
        (stage / f"{page}.ipynb").parent.mkdir(parents=True, exist_ok=True)
        (stage / f"{page}.ipynb").write_text(json.dumps(nb))
        for extra in pages[1:]:
            shutil.copyfile(project.root / f"{extra}.md", stage / f"{extra}.md")
        for asset, rel in page_assets(project, pages):
            (stage / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(asset, stage / rel)
        for name in ("references.bib",):
            if (project.root / name).exists():
                shutil.copyfile(project.root / name, stage / name)
        config = _config(project, title or f"{chapter_name}: a rerun", main_html, main_url)
        (stage / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
        toc = {"format": "jb-book", "root": page}
        if len(pages) > 1:
            toc["chapters"] = [{"file": p} for p in pages[1:]]
        (stage / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))
        building = Path(tmp) / "html"
        done = run_jupyter_book(project, stage, building, Path(tmp) / "doctrees")
        if done.returncode != 0:
            raise ReportFailed(f"the report of {notebook} could not be built (Jupyter Book exit "
                               f"{done.returncode}; its warnings are above); the notebook is kept")
        if out.exists():
            shutil.rmtree(out)
        os.replace(building, out)
    twin = _report_sharing_static(project, out)
    if twin is not None:
        share_static(twin, out)
    return Report(folder=out, page=out / f"{page}.html")


def _report_sharing_static(project: Project, out: Path) -> Path | None:
    """Another run report whose ``_static`` files this one's can be hard links to: the first
    under ``runs/``, else the first sibling (a sweep's points). Not the main book's: Sphinx
    rewrites its ``_static`` files in place, which would change a linked report."""
    candidates = [*sorted(project.runs.glob("*/*/html")), *sorted(out.parent.glob("*"))]
    for other in candidates:
        if other.is_dir() and other.resolve() != out and (other / "_static").is_dir():
            return other
    return None


def share_static(first: Path, other: Path) -> int:
    """Make the files of ``other/_static`` that are byte-identical to ``first/_static``'s
    hard links to them (each report carries ~33 MB of MathJax and theme files; the run
    reports and a sweep's store them once). Returns the bytes saved."""
    saved = 0
    for path in sorted((Path(other) / "_static").rglob("*")):
        twin = Path(first) / "_static" / path.relative_to(Path(other) / "_static")
        if not path.is_file() or path.is_symlink() or not twin.is_file() or os.path.samefile(path, twin):
            continue
        if path.stat().st_size == twin.stat().st_size and path.read_bytes() == twin.read_bytes():
            tmp = path.with_name(f".{path.name}.link")
            try:
                os.link(twin, tmp)
            except OSError:  # another file system, or links not allowed: the copy stays
                return saved
            os.replace(tmp, path)
            saved += path.stat().st_size
    return saved


def _number(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def sweep_index(out_dir: Path, title: str, rows: list[dict], varying: list[str], summary: str | None,
                headline: str = "headline") -> Path:
    """``out_dir/index.html``: the sweep's points (values that vary, status, headline) with
    links to their reports, and the summary figure. ``rows``: ``run``, ``parameters``,
    ``status``, ``error``, ``headline`` (text), ``report`` (a path relative to ``out_dir``
    or ``None``)."""
    esc = html.escape
    head = "".join(f"<th>{esc(v)}</th>" for v in varying)
    body = []
    for row in rows:
        cells = "".join(f"<td>{esc(json.dumps(row['parameters'].get(v)))}</td>" for v in varying)
        link = f'<a href="{esc(row["report"])}">report</a>' if row.get("report") else ""
        status = esc(row["status"]) + (f" <small>{esc(row['error'])}</small>" if row.get("error") else "")
        body.append(f"<tr><td><code>{esc(row['run'])}</code></td>{cells}<td>{status}</td>"
                    f"<td>{esc(_number(row.get('headline', '')))}</td><td>{link}</td></tr>")
    figure = f'<p><img src="{esc(summary)}" alt="summary figure" style="max-width:100%"></p>' if summary else ""
    if not any(row["status"] == "done" for row in rows):  # say so, rather than show nothing, or an old figure
        figure = (f"<p><strong>No point of this sweep finished</strong> ({len(rows)} point(s): the reason of "
                  "each is in the table), so there is no summary figure and no report.</p>")
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#222}}
table{{border-collapse:collapse}}td,th{{border-bottom:1px solid #ccc;padding:.3rem .6rem;text-align:left}}
small{{color:#a00}}</style></head>
<body><h1>{esc(title)}</h1>
<p>One row per point of the sweep; each report is the chapter rendered with that point's parameters.
The table of every glued number is <a href="results.csv">results.csv</a>; where and how it ran:
<a href="provenance.json">provenance.json</a>.</p>
{figure}
<table><thead><tr><th>point</th>{head}<th>status</th><th>{esc(headline)}</th><th></th></tr></thead>
<tbody>
{chr(10).join(body)}
</tbody></table></body></html>
"""
    return write_text_atomic(Path(out_dir) / "index.html", page)
