"""Provenance: one record of how a stored result was made, written by every writer
and read by one reader that also understands the names older files used."""

import json
from pathlib import Path

import pytest

from attention_geometry.book.claims import provenance_line
from attention_geometry.book.paper import load_paper_run
from attention_geometry.book.project import Project
from attention_geometry.book.provenance import Provenance, computed_by
from attention_geometry.book.report import header_markdown

ROOT = Path(__file__).resolve().parents[1]
STORED = sorted(ROOT.glob("results/*/paper/provenance.json")) + sorted(ROOT.glob("results/*/sweeps/*/provenance.json"))


@pytest.mark.parametrize("path", STORED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_committed_provenance_reads_and_writes_back_unchanged(path):
    stored = json.loads(path.read_text())
    p = Provenance.from_json(stored)
    assert p.to_json() == stored and Provenance.from_json(p.to_json()) == p
    assert p.commit == stored["commit"] and p.wall_seconds == stored["wall_seconds"] > 0


def test_the_committed_paper_runs_are_read_as_provenance():
    runs = [load_paper_run(path.parent.parent.name, ROOT) for path in ROOT.glob("results/*/paper/provenance.json")]
    assert runs and all(isinstance(run.provenance, Provenance) and run.provenance.device_name for run in runs)


def test_legacy_keys_are_read_as_the_fields_they_became():
    old = {"commit": "0123456789ab", "dirty": False, "date": "2026-11-01", "device": "NVIDIA H200",
           "wall_time_s": 1800, "part_commits": ["aaaaaaaaaaaa", "bbbbbbbbbbbb"], "scheduler": "local"}
    p = Provenance.from_json(old)
    assert p.wall_seconds == 1800 and "wall_time_s" not in p.to_json()
    assert p.device_name == "NVIDIA H200"  # an old file named the device only under "device"
    assert p.parts == 2  # one part per recorded commit
    assert p.extra == {"scheduler": "local"} and p.to_json()["scheduler"] == "local"
    assert Provenance.from_json({"seconds": 2.5}).wall_seconds == 2.5  # a run report's
    assert Provenance.from_json({"wall_seconds": 3, "wall_time_s": 9}).wall_seconds == 3  # the new name wins
    assert Provenance.from_json(None) == Provenance() and Provenance.from_json(p) is p


def test_the_provenance_line_reads_a_legacy_stored_run(tmp_path):
    (tmp_path / "_toc.yml").write_text("root: x\n")
    folder = tmp_path / "results" / "toy" / "paper"
    folder.mkdir(parents=True)
    (folder / "values.json").write_text(json.dumps({"x": 1.0}))
    (folder / "parameters.json").write_text("{}")
    (folder / "provenance.json").write_text(json.dumps(
        {"commit": "abcdef1234", "date": "2026-12-01", "device": "Tesla T4", "wall_time_s": 600,
         "part_commits": ["1111111111aa", "abcdef1234"]}))
    line = provenance_line(load_paper_run("toy", tmp_path))
    assert "on Tesla T4" in line and "10.0 min in 2 parts, at commits `1111111111`, `abcdef1234`" in line


def test_it_reads_as_the_mapping_it_is_stored_as():
    p = Provenance(commit="c", dirty=None, wall_seconds=60.0, chapter="toy", extra={"sweep": "s"})
    assert p["wall_seconds"] == 60.0 and p.get("commit") == "c" and p.get("device", "?") == "?"
    assert dict(p) == {**p} == p.to_json() == {"commit": "c", "dirty": None, "wall_seconds": 60.0, "chapter": "toy",
                                               "sweep": "s"}
    assert "device" not in p and "sweep" in p
    changed = p.replace(parts=2, points=4)
    assert changed.parts == 2 and changed.extra == {"sweep": "s", "points": 4} and p.parts is None


def test_computed_by_records_the_machine_and_the_writers_own_fields(tmp_path):
    project = Project(tmp_path, chapters={})
    p = computed_by(project, command="make x", device="cpu", git={"commit": "abc", "dirty": True},
                    wall_seconds=1.5, chapter="toy", points=3)
    assert isinstance(p, Provenance) and p.command == "make x" and p.commit == "abc" and p.dirty is True
    assert p.device == "cpu" and p.device_name and p.cpu_cores and p.python and p.date
    assert p.wall_seconds == 1.5 and p.chapter == "toy" and p.extra == {"points": 3}
    assert "device" not in computed_by(project, command="make sweep", device=None, git={"commit": None,
                                                                                        "dirty": None})


def test_a_report_header_reads_either_form():
    stored = {"commit": "abcdef123456", "dirty": True, "date": "2026-12-01T10:00:00+00:00", "seconds": 1.5,
              "command": "make run CHAPTER=toy"}  # as run.py hands it over
    for provenance in (stored, Provenance.from_json(stored)):
        text = header_markdown({}, provenance, None, "Toy")
        assert "commit `abcdef1234` with uncommitted changes in 1.5 s" in text
        assert "Command: `make run CHAPTER=toy`" in text
