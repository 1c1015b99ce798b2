"""Independent units of work (trainings of separate models) in parallel processes.

One helper for every chapter that trains several models, so that a long paper
run uses every core: each unit runs in its own spawned process (torch starts
clean there), the results come back in the order of the units, a failed unit
raises at once and the units not yet started never start.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Callable, Iterable, TypeVar

from ._checks import check_int

T = TypeVar("T")
R = TypeVar("R")


def progress_bar(show: bool, total: int, initial: int, desc: str):
    """A tqdm bar (disabled unless ``show``) that redraws at most every 2 s."""
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc=desc, mininterval=2.0, disable=not show)


def map_processes(fn: Callable[[T], R], units: Iterable[T], workers: int, *, progress: bool = False,
                  desc: str = "units") -> list[R]:
    """``[fn(u) for u in units]``, up to ``workers`` units at once in spawned processes
    (``fn`` and the units must pickle). One worker, or one unit, runs in this
    process. A progress bar counts the finished units when ``progress``."""
    check_int("workers", workers, low=1)
    units = list(units)
    if workers == 1 or len(units) <= 1:
        return [fn(u) for u in units]
    with ProcessPoolExecutor(min(workers, len(units)), mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(fn, u) for u in units]
        bar = progress_bar(progress, len(units), 0, f"{desc}, {len(units)} units")
        try:
            for future in as_completed(futures):
                future.result()  # a failed unit raises here, at once
                bar.update(1)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # units not started never start; running ones finish
            raise
        finally:
            bar.close()
        return [f.result() for f in futures]
