"""Every chapter executes through the book's own papermill path: at its defaults in
the book build that ``make test`` runs first (checked here from what that build
wrote, without a kernel), at its smoke parameters, and there twice for the chapters
whose determinism is checked; a bad parameter stops a chapter in the validation cell,
before any computation (every kind of bad value for every chapter, and every
chapter's smoke set, is checked without a kernel in test_parameters.py). Each smoke
set crosses a threshold its chapter's prose names, and a computed clause of the
chapter reads otherwise there than in the book (issue 32: the prose holds at any
parameters)."""

import json
from pathlib import Path

import pytest

from attention_geometry._parallel import map_processes
from attention_geometry.book import CHAPTERS
from attention_geometry.book.context import thread_env
from attention_geometry.book.execute import ChapterFailed, execute_chapter
from attention_geometry.book.notebooks import glued_text, glued_values, parse_glued
from attention_geometry.book.project import Project
from attention_geometry.book.toc import book_chapters, parameters_cell

PROJECT = Project.find(__file__)


def test_every_toc_chapter_is_registered():
    assert {c.name for c in book_chapters(PROJECT)} == set(CHAPTERS)


# Every chapter runs at its smoke parameters (its `smoke` set, the one a reader's quick
# rerun uses: `make run CHAPTER=... PRESET=smoke`), through the same papermill path as the
# book. Two of them run twice, to check that the same seed glues the same numbers: the two
# whose numbers come from the most generators (training data, initial weights, Monte Carlo
# and a trained decoder). Every chapter draws through the same seeded generators. Cost on
# 2 cores: 11 kernels, about 200 CPU-s, two at a time (the README gives the suite's time).
DETERMINISM_CHECKED = {"uniform_attention", "recency"}


def _smoke_seconds(chapter) -> float:
    """The chapter's cost model at its smoke set."""
    return chapter.cost.estimate(chapter.smoke, chapter.model().model_dump()) if chapter.cost else 0.0


def _smoke_run(job: tuple[str, str]) -> str | None:
    """One smoke run (chapter name, notebook) in a worker process: None, or the failure's message."""
    chapter_name, out = job
    try:
        execute_chapter(PROJECT, CHAPTERS[chapter_name], out, dict(CHAPTERS[chapter_name].smoke), kind="test",
                        env=thread_env(1))
    except ChapterFailed as err:
        return str(err)
    return None


@pytest.fixture(scope="module")
def smoke_runs(tmp_path_factory) -> dict[tuple[str, int], tuple[Path, str | None]]:
    """One smoke run of every chapter and a second of each chapter whose determinism is
    checked, two kernels at a time as in the book's own build, each capped at one thread
    (the longest first, so that the two workers finish together)."""
    folder = tmp_path_factory.mktemp("smoke")
    jobs = [(name, 0) for name in CHAPTERS] + [(name, 1) for name in sorted(DETERMINISM_CHECKED)]
    jobs.sort(key=lambda job: -_smoke_seconds(CHAPTERS[job[0]]))
    notebooks = [folder / f"{name}-{run}.ipynb" for name, run in jobs]
    failures = map_processes(_smoke_run, [(name, str(nb)) for (name, _), nb in zip(jobs, notebooks)], workers=2)
    return {job: (nb, failure) for job, nb, failure in zip(jobs, notebooks, failures)}


def _executed_without_error(notebook: Path) -> dict:
    nb = json.loads(notebook.read_text())
    errors = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
              if o["output_type"] == "error"]
    assert not errors, notebook
    assert glued_values(notebook), f"{notebook.name} glues no values"
    return nb["metadata"]["attention_geometry"]


@pytest.mark.book
@pytest.mark.parametrize("name", sorted(CHAPTERS))
def test_the_book_build_executed_the_chapter_at_its_defaults(name, built_book):
    chapter = CHAPTERS[name]
    record = _executed_without_error(PROJECT.executed / f"{chapter.stem}.ipynb")
    assert record["chapter"] == name and record["kind"] == "book"
    assert record["parameters"] == {}  # the book runs every chapter at its defaults: nothing injected


@pytest.mark.parametrize("name", sorted(CHAPTERS))
def test_every_chapter_runs_at_its_smoke_parameters(name, smoke_runs):
    out, failure = smoke_runs[(name, 0)]
    assert failure is None, failure
    assert _executed_without_error(out)["parameters"] == dict(CHAPTERS[name].smoke)


@pytest.mark.parametrize("name", sorted(DETERMINISM_CHECKED))
def test_the_same_seed_glues_the_same_numbers_at_the_smoke_parameters(name, smoke_runs):
    (out, failure), (again, failure_again) = smoke_runs[(name, 0)], smoke_runs[(name, 1)]
    assert failure is None, failure
    assert failure_again is None, failure_again
    assert _executed_without_error(out)["parameters"] == dict(CHAPTERS[name].smoke)
    assert glued_values(out) == glued_values(again)


# The computed words flip. Each chapter's smoke set crosses a threshold that its prose names, so one
# clause the chapter computes must read otherwise in the smoke run than in the book: each test reads
# that clause from the book's build (the defaults) and from the smoke run above (no execution of its
# own), checks that on each side it is the chapter's wording function of that run's own glued
# numbers, that the two differ, and that the parameter lies on either side of the threshold.
# Chapter 7's test, at a run of its own, is in test_prose_cesaro.py.

def _glued(notebook: Path) -> dict:
    """What a notebook glued: numbers as numbers, words as the text the book shows (Markdown too)."""
    return {k: parse_glued(v) for k, v in glued_text(notebook).items()}


def _flip(name: str, smoke_runs, key: str, words, book: str, smoke: str) -> tuple[dict, dict]:
    """The book's and the smoke run's glued values of chapter ``name``, once their clause ``key`` is
    ``words(values)`` in both, starts with ``book`` in the book and with ``smoke`` in the smoke run."""
    out, failure = smoke_runs[(name, 0)]
    assert failure is None, failure
    runs = _glued(PROJECT.executed / f"{CHAPTERS[name].stem}.ipynb"), _glued(out)
    for run, expected in zip(runs, (book, smoke)):
        assert run[key] == words(run), (key, run[key])
        assert run[key].startswith(expected), (key, run[key])
    assert runs[0][key] != runs[1][key]
    return runs


@pytest.mark.book
def test_layernorm_eps_sentence_flips_below_ten_dimensions(smoke_runs, built_book):
    """The deficit eps makes is about d times larger for unit-norm inputs than for unit-variance
    ones (per-coordinate variance 1/d), and the words call the scale decisive from a factor ten:
    so at d_max = 4096 it is, at the smoke set's d_max = 8 it matters by less than an order of magnitude."""
    from attention_geometry.book.chapters import layernorm as ch
    book, smoke = _flip("layernorm", smoke_runs, "eps-scale-words",
                        lambda v: ch.eps_scale_words(v["eps-ref-unitvar"], v["eps-ref-unitnorm"]),
                        book="the unit-norm deficit is", smoke="the two deficits are within a factor")
    assert book["d-max"] >= 10 > smoke["d-max"]
    assert book["eps-ref-unitnorm"] / book["eps-ref-unitvar"] >= 10 > smoke["eps-ref-unitnorm"] / smoke["eps-ref-unitvar"]


@pytest.mark.book
def test_uniform_attention_enumeration_sentence_flips_when_the_partitions_run_out(smoke_runs, built_book):
    """The depth-first enumeration stops at n_sequences: at the defaults (L = 50, C = 20) long before
    the kept partitions run out, so it visits few smallest parts; at the smoke set (L = 12, C = 5) the
    300 sequences outnumber ten per kept partition, so it visits every one."""
    from attention_geometry.book.chapters import uniform_attention as ch
    book, smoke = _flip("uniform_attention", smoke_runs, "ua-enumeration",
                        lambda v: ch.enumeration_words(v["ua-first-parts"], v["ua-first-parts-possible"]),
                        book="stops before", smoke="visits")
    drawn = lambda v: v["ua-n-train"] + v["ua-n-test"]
    assert drawn(book) > book["ua-n-sequences"]   # stopped at the limit: partitions were left
    assert drawn(smoke) < smoke["ua-n-sequences"]  # the partitions ran out first
    assert smoke["ua-first-parts"] == smoke["ua-first-parts-possible"] > 1


@pytest.mark.book
def test_selectability_heat_map_sentence_flips_near_n_equal_d_plus_one(smoke_runs, built_book):
    """Below n = d + 2 every set of Gaussian keys is affinely independent, and just above it an
    unselectable key is rare (about 1 % at n = 6, d = 4): the heat map's corner, n = 60 at d = 3 in
    the book, is past the 50 % contour; the smoke set's, n = 6 at d = 4, is far below it."""
    from attention_geometry.book.chapters import selectability as ch
    book, smoke = _flip("selectability", smoke_runs, "sel-corner-words",
                        lambda v: ch.corner_words(v["sel-corner-any"], v["sel-grid-sets"]),
                        book="the rule", smoke="the exception")
    assert book["sel-n-corner"] > 2 * book["sel-d-lo"] and smoke["sel-n-corner"] == smoke["sel-d-lo"] + 2
    assert book["sel-corner-any"] > 0.5 > smoke["sel-corner-any"]


@pytest.mark.book
def test_rank_collapse_depth_sentence_flips_below_the_causal_collapse_depth(smoke_runs, built_book):
    """The causal mask takes about 19 random layers to bring the relative spread to 1e-4 (at 32
    tokens as at 128): the book's 64 layers reach it, the smoke set's 10 do not."""
    from attention_geometry.book.chapters import rank_collapse as ch
    book, smoke = _flip("rank_collapse", smoke_runs, "rc-depth-causal-words",
                        lambda v: ch.depth_words(v["rc-tc-causal"], v["rc-reached-causal"]),
                        book="reaches 10⁻⁴ after", smoke="does not reach 10⁻⁴ within the depth")
    assert book["rc-reached-causal"] == 1 and smoke["rc-reached-causal"] == 0
    assert smoke["rc-depth"] < book["rc-tc-causal"] < book["rc-depth"]


@pytest.mark.book
def test_layernorm_equilibria_rank_sentence_flips_with_fewer_tokens_than_d_minus_one(smoke_runs, built_book):
    """With centring the rank is at most min(L, d - 1): the book's L = 6 tokens reach d - 1 = 3, the
    smoke set's L = 2 cannot."""
    from attention_geometry.book.chapters import layernorm_equilibria as ch
    book, smoke = _flip("layernorm_equilibria", smoke_runs, "le-max-rank-centred-vs-d",
                        lambda v: ch.max_rank_words(v["le-max-rank-centred"], v["le-rank-d"]),
                        book="= d − 1", smoke="(d − 1 = ")
    for run in (book, smoke):
        assert run["le-max-rank-centred"] == min(run["le-rank-n"], run["le-rank-d"] - 1)
    assert book["le-rank-n"] >= book["le-rank-d"] - 1 > smoke["le-rank-n"]


@pytest.mark.book
def test_recency_observability_sentence_flips_below_twenty_dimensions(smoke_runs, built_book):
    """The isotropic contrast falls steeply with the width (about d^-6): at d = 64 it is far below one
    standard error of the paper's heat map (100,000 plain sequences), at d = 16 (the smoke set's
    widest of the width study, which lacks 64) well above it."""
    from attention_geometry.book.chapters import recency as ch
    from attention_geometry.recency.simulation import ARXIV_FIGURE_1
    book, smoke = _flip("recency", smoke_runs, "rec-obs-fig1-words",
                        lambda v: ch.observability_words(v["rec-obs-fig1-ratio"] > 1, ARXIV_FIGURE_1["d"]),
                        book="below one standard error", smoke="above one standard error")
    assert (book["rec-obs-d"], smoke["rec-obs-d"]) == (64, 16)
    assert book["rec-obs-fig1-ratio"] > 1 > smoke["rec-obs-fig1-ratio"]


@pytest.mark.book
def test_jacobians_uniformity_sentence_flips_above_a_quarter_of_the_papers_width(smoke_runs, built_book):
    """The score spread at sigma_0 = 0.02 is sigma_0^2 d, and the words say "far more uniform" below a
    quarter of the paper's (d = 896 / 4 = 224): the book's d = 64 is, the smoke set's d = 256 is not."""
    from attention_geometry.book.chapters import jacobians as ch
    book, smoke = _flip("jacobians", smoke_runs, "jac-uniform-words",
                        lambda v: ch.uniform_words(v["jac-score-ours"], v["jac-score-paper"]),
                        book="far more uniform than", smoke="more uniform than")
    assert book["jac-width"] < 896 / 4 < smoke["jac-width"] < 896
    for run in (book, smoke):
        assert run["jac-score-ours"] == pytest.approx(0.02**2 * run["jac-width"])


@pytest.mark.book
def test_synthesis_window_sentence_flips_when_h_w_reaches_l_minus_one(smoke_runs, built_book):
    """A one-sided window of width w lets the first input reach the last output after H layers only
    when H w >= L - 1: the book's 4 x 8 < 63 leaves it out of reach, with an influence of exactly 0;
    the smoke set's 2 x 5 >= 9 brings it within reach, with a positive one."""
    from attention_geometry.book.chapters import synthesis as ch
    book, smoke = _flip("synthesis", smoke_runs, "syn-window-reach-words",
                        lambda v: ch.window_reach_words(v["syn-hw"], v["syn-n-1"]),
                        book="so the first input is out of", smoke="so the first input is within")
    assert book["syn-hw"] < book["syn-n-1"] and smoke["syn-hw"] >= smoke["syn-n-1"]
    assert book["syn-window-first"] == 0 < smoke["syn-window-first"]  # what the proposition says follows
    assert book["syn-window-first-words"].startswith("exactly 0.0")
    assert not smoke["syn-window-first-words"].startswith("exactly 0.0")


def test_bad_parameter_stops_in_the_validation_cell(tmp_path):
    """In a kernel, the one case papermill itself only warns about: an unknown name.
    The chapter's validation cell raises and no later cell runs."""
    chapter = CHAPTERS["layernorm"]
    out = tmp_path / "out.ipynb"
    with pytest.raises(ChapterFailed) as err:
        # precheck=False: let the chapter's own validation catch it, as it does
        # for a reader who runs papermill by hand
        execute_chapter(PROJECT, chapter, out, {**chapter.smoke, "no_such_knob": 1}, kind="test", precheck=False)
    e = err.value
    assert e.ename == "ParameterError"
    assert e.evalue == ("unknown parameter 'no_such_knob' = 1; known parameters: "
                        + ", ".join(sorted(chapter.params)))
    assert "validate_parameters" in e.source
    assert not out.exists()
    cells = json.loads(out.with_suffix(".failed.ipynb").read_text())["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    failing = next(i for i, c in enumerate(code) if "validate_parameters(" in "".join(c["source"]))
    assert all(c["execution_count"] is None and not c["outputs"] for c in code[failing + 1:])


@pytest.mark.parametrize("name", sorted(CHAPTERS))
def test_defaults_fit_the_chapter_types(name):
    chapter = CHAPTERS[name]
    defaults = parameters_cell(chapter, PROJECT)
    for pname, param in chapter.params.items():
        if param.schema.get("type") == "array":
            assert isinstance(defaults[pname], list)
