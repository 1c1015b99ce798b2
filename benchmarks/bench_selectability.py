"""Benchmark: the selectability test on the paper's heat-map grid.

Grid: n in [3, 60] x d in [3, 15], 100 Gaussian key sets per cell, without and
with LayerNorm (2 x 754 cells, 2.4 M keys each) -- the chapter's default.
The fast test (`selectability_grid`: batched query certificates, then NNLS,
then the LP) runs on the whole grid. The reference (`unselectable_mask_lp`:
one HiGHS LP per key) is far too slow for that, so it runs on a subsample
(one set per cell on a 5 x 5 sub-grid of n and d, with and without LN), the
fast test is checked to agree there, and the reference's time for the full
grid is extrapolated from a least-squares fit of its time per key against n.

A second part times the paper's Tables 1-2 size: sets of 768 and 1,024
Gaussian keys in d = 8 and d = 7 (the states after a centring norm). The fast
test decides every key; the reference LP runs on 40 keys of each set (its time
per key scaled to the whole set), and the two are checked to agree on them.
Times are CPU times (``time.process_time``): the machine is shared.
"""

import time

from attention_geometry.selectability import l1_margin_lp, normalise_keys

import numpy as np

from attention_geometry import selectability as sel

NS, DS, SETS = np.arange(3, 61), np.arange(3, 16), 100
SUB_NS, SUB_DS = [3, 15, 30, 45, 60], [3, 6, 9, 12, 15]


def main():
    rng = np.random.default_rng(0)
    full = {}
    for ln in (False, True):
        t = time.process_time()
        grid = sel.selectability_grid(NS, DS, SETS, rng, layer_norm=ln)
        full[ln] = (time.process_time() - t, int(grid["stages"].sum()))

    # the reference on a subsample: per-key LP times against n, and agreement
    ns_per_key, secs_per_key, disagree, fast_secs, ref_secs = [], [], 0, 0.0, 0.0
    for ln in (False, True):
        for n in SUB_NS:
            for d in SUB_DS:
                keys = sel.gaussian_key_sets(1, n, d, rng, ln)[0]
                t0 = time.process_time()
                fast = sel.unselectable_mask(keys)
                t1 = time.process_time()
                ref = sel.unselectable_mask_lp(keys)
                t2 = time.process_time()
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
    large_sets(rng)


def large_sets(rng, n_sets=3, n_ref=40):
    print(f"\n{'operation':<46} {'size':<30} {'CPU s/set':>10} {'ratio vs ref':>13} {'% unsel':>8}")
    for n, d in [(768, 8), (1024, 8), (1024, 7)]:
        keys = rng.standard_normal((n_sets, n, d))
        t = time.process_time()
        fast, _ = sel.classify_keys(keys)
        t_fast = (time.process_time() - t) / n_sets
        k = normalise_keys(keys[0])
        idx = rng.choice(n, n_ref, replace=False)
        t = time.process_time()
        ref = np.array([l1_margin_lp(k, i) <= sel.SELECTABILITY_TOL for i in idx])
        t_ref = (time.process_time() - t) / n_ref * n
        assert (ref == fast[0, idx]).all(), "fast test and LP disagree"
        print(f"{'reference LP (per key, scaled to the set)':<46} {f'n={n}, d={d}':<30} {t_ref:>10.2f} {1.0:>13.1f}")
        print(f"{'fast test (classify_keys)':<46} {f'n={n}, d={d}, {n_sets} sets':<30} {t_fast:>10.2f} "
              f"{t_ref / t_fast:>13.1f} {100 * fast.mean():>8.1f}")


if __name__ == "__main__":
    main()
