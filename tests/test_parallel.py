"""The one process executor (``_parallel``): the book build's chapters and the
maths' trainings run through it."""

import math
import os
import signal

import pytest

from attention_geometry._parallel import ProcessSlots, map_processes


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
