"""Benchmark: the selectability test on the paper's heat-map grid.

Grid: n in [3, 60] x d in [3, 15], 100 Gaussian key sets per cell, without and
with LayerNorm (2 x 754 cells, 2.4 M keys each) -- the chapter's default.
The fast test (`selectability_grid`: batched query certificates, then NNLS,
then the LP) runs on the whole grid. The reference (`unselectable_mask_lp`:
one HiGHS LP per key) is far too slow for that, so it runs on a subsample
(one set per cell on a 5 x 5 sub-grid of n and d, with and without LN), the
fast test is checked to agree there, and the reference's time for the full
grid is extrapolated from a least-squares fit of its time per key against n.
"""

import time

import numpy as np

from attention_geometry import selectability as sel

NS, DS, SETS = np.arange(3, 61), np.arange(3, 16), 100
SUB_NS, SUB_DS = [3, 15, 30, 45, 60], [3, 6, 9, 12, 15]


def main():
    rng = np.random.default_rng(0)
    full = {}
    for ln in (False, True):
        t = time.perf_counter()
        grid = sel.selectability_grid(NS, DS, SETS, rng, layer_norm=ln)
        full[ln] = (time.perf_counter() - t, int(grid["stages"].sum()))

    # the reference on a subsample: per-key LP times against n, and agreement
    ns_per_key, secs_per_key, disagree, fast_secs, ref_secs = [], [], 0, 0.0, 0.0
    for ln in (False, True):
        for n in SUB_NS:
            for d in SUB_DS:
                keys = sel.gaussian_key_sets(1, n, d, rng, ln)[0]
                t0 = time.perf_counter()
                fast = sel.unselectable_mask(keys)
                t1 = time.perf_counter()
                ref = sel.unselectable_mask_lp(keys)
                t2 = time.perf_counter()
                disagree += int((fast != ref).sum())
                fast_secs, ref_secs = fast_secs + t1 - t0, ref_secs + t2 - t1
                ns_per_key.append(n)
                secs_per_key.append((t2 - t1) / n)
    slope, intercept = np.polyfit(ns_per_key, secs_per_key, 1)
    ref_full = float(SETS * len(DS) * sum(n * (intercept + slope * n) for n in NS))
    sub_keys = 2 * sum(SUB_NS) * len(SUB_DS)

    print(f"{'operation':<46} {'size':<44} {'time (s)':>9} {'ratio vs ref':>13}")
    size = f"{len(NS)}x{len(DS)} cells x {SETS} sets ({full[False][1]:,} keys)"
    print(f"{'reference: one LP per key (EXTRAPOLATED)':<46} {size:<44} {ref_full:>9.0f} {1.0:>13.2f}")
    for ln in (False, True):
        name = f"fast test, full grid, {'with LN' if ln else 'no LN'}"
        print(f"{name:<46} {size:<44} {full[ln][0]:>9.1f} {ref_full / full[ln][0]:>13.1f}")
    both = full[False][0] + full[True][0]
    print(f"{'fast test, full grid, both (the heat map)':<46} {'2 x the above':<44} {both:>9.1f} "
          f"{2 * ref_full / both:>13.1f}")
    size = f"5x5 sub-grid x 1 set x 2 ({sub_keys} keys)"
    print(f"{'reference: one LP per key (measured)':<46} {size:<44} {ref_secs:>9.2f} {1.0:>13.2f}")
    print(f"{'fast test, set by set (measured)':<46} {size:<44} {fast_secs:>9.2f} {ref_secs / fast_secs:>13.1f}")
    print(f"disagreements between fast test and reference on the sub-grid: {disagree}")
    print(f"reference time per key fitted as {intercept * 1e3:.2f} ms + {slope * 1e6:.1f} us x n")


if __name__ == "__main__":
    main()
