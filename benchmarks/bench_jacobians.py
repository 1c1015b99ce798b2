"""Benchmark: the Jacobian profile of the default CPU decoder of chapter 8.

The exact profile (d backward passes, the reference) against the random-
projection estimator with k = 16 Gaussian and orthogonal probes, in one
process: time, ratio to the exact time, and the largest relative error of
rho over all positions. Sizes are the chapter's defaults (parameters cell).
"""

import time

import numpy as np

import attention_geometry as ag
from attention_geometry.book.toc import parameters_cell
from attention_geometry.book import CHAPTERS

K = 16


def defaults():
    return parameters_cell(CHAPTERS["jacobians"])


def main():
    p = defaults()
    model = ag.build_decoder("qwen2", p["n_layers"], p["width"], p["n_heads"], p["n_kv_heads"],
                             context=p["seq_len"], init_std=p["init_stds"][0], seed=p["seed"])
    h0 = ag.random_embeddings(model, p["seq_len"], p["seed"])
    size = f"H={p['n_layers']}, d={p['width']}, L={p['seq_len']}"
    t = time.perf_counter()
    exact = ag.exact_profile(model, h0)
    t_exact = time.perf_counter() - t
    rows = [("exact profile (d backward passes)", t_exact, 0.0)]
    for kind in ("gaussian", "orthogonal"):
        t = time.perf_counter()
        est = ag.estimate_profile(model, h0, K, kind, 0)
        rows.append((f"estimator, k = {K}, {kind}", time.perf_counter() - t,
                     float(np.max(np.abs(est.rho / exact - 1)))))
    print(f"Jacobian profile of the default Qwen2-shaped decoder ({size})")
    print(f"{'operation':<38} {'size':>22} {'time [s]':>9} {'time / exact':>13} {'max rel. error':>15}")
    for name, secs, err in rows:
        print(f"{name:<38} {size:>22} {secs:>9.2f} {secs / t_exact:>13.3f} {err:>15.2e}")


if __name__ == "__main__":
    main()
