"""The one process executor (``_parallel``): the book build's chapters and the
maths' trainings run through it."""

import math
import os
import signal
import sys

import pytest

from attention_geometry._parallel import ProcessSlots, map_processes, worker_modules


def test_map_processes_keeps_the_order_of_the_units_and_raises_a_units_error():
    assert map_processes(abs, [-1, -2, 3, -4], workers=2) == [1, 2, 3, 4]
    with pytest.raises(ValueError, match="math domain error"):
        map_processes(math.sqrt, [4.0, -1.0, 9.0], workers=2)
    with pytest.raises(ValueError, match="workers"):
        map_processes(abs, [1], workers=0)


def test_a_worker_that_dies_fails_only_its_task_and_its_slot_gets_a_new_process():
    with ProcessSlots(2) as slots:
        dies, lives = slots.submit(os.abort), slots.submit(os.getpid)
        assert slots.free == 0
        with pytest.raises(RuntimeError, match="all 2 slots are busy"):
            slots.submit(os.getpid)
        while slots.pending:
            slots.wait_any()
        assert slots.exitcode(dies) == -signal.SIGABRT and slots.exitcode(lives) is None
        assert lives.result() != os.getpid()  # it ran in a worker
        again = slots.submit(abs, -5)
        assert slots.wait_any() == [again] and again.result() == 5


def test_the_modules_a_worker_imports_are_recorded_in_the_parent(tmp_path, monkeypatch):
    """A chapter's kernel records the library modules it used (the book's cache); a
    function run in a worker imports its own, which this process never loads."""
    (tmp_path / "ag_unit.py").write_text("def square(x):\n    import ag_helper\n    return x * x + ag_helper.ZERO\n")
    (tmp_path / "ag_helper.py").write_text("ZERO = 0\n")
    monkeypatch.syspath_prepend(str(tmp_path))  # the workers start with this process's sys.path
    import ag_unit

    assert map_processes(ag_unit.square, [1, 2, 3], workers=2) == [1, 4, 9]
    assert "ag_helper" not in sys.modules
    recorded = worker_modules()
    assert {os.path.realpath(tmp_path / name) for name in ("ag_unit.py", "ag_helper.py")} <= recorded
    assert not {os.path.realpath(m.__file__) for m in (os, pytest)} & recorded  # standard library, installed
