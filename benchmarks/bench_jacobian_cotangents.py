"""Benchmark: one forward pass and batched cotangents against a forward pass per batch of probes.

A random-init decoder of Qwen2-0.5B's layer shape (width d = 896, 14 heads,
2 key/value heads, SwiGLU width 4864, stand-in sigma), one sequence of
``L = 256`` positions (the paper's is longer; the shape of the work per layer
is the same), ``k = 4`` orthogonal probes, at depths ``H = 1, 2, 4``. Three
ways to get the ``k`` squared probe norms of every position, which agree to
float rounding (``tests/test_jacobians.py``):

* **per-batch forward**: the sequence repeated ``k`` times along the batch
  axis, one forward and one backward pass for the ``k`` probes;
* **per-probe backward**: one forward pass, then one backward pass per probe;
* **batched cotangents** (:func:`attention_geometry.probe_norms`): one forward
  pass, then one backward pass carrying the ``k`` probes at once
  (``is_grads_batched``).

After a warm-up on a small model, prints the best of ``--repeat`` interleaved timings, the seconds per layer
(time / H) and the ratio of each former path's time to the batched one.
Every layer does the same work, so the ratio per layer at the paper's
H = 24 is the ratio here (``--layers 24`` measures it, about a minute per path
on one core). Measured, not asserted.

Usage: ``PYTHONPATH=src python benchmarks/bench_jacobian_cotangents.py [--layers 1,2,4] [--seq-len 256] [--k 4]``
"""

import argparse
import math
import time

import torch

import attention_geometry as ag
from attention_geometry.jacobians import profiles


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", default="1,2,4", help="depths H, comma-separated")
    ap.add_argument("--width", type=int, default=896)
    ap.add_argument("--heads", type=int, default=14)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--seq-len", type=int, default=256)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    depths = [int(h) for h in a.layers.split(",")]
    small = ag.build_decoder("qwen2", 1, 64, 4, 2, context=16, seed=0)  # warm-up: the first vmapped backward
    x, u = ag.random_embeddings(small, 16, 0), ag.draw_probes(64, 2, "orthogonal", 0)  # pays a one-off cost
    ag.probe_norms(small, x, u, 2), profiles._probe_norms_per_batch(small, x, u, 2)
    print(f"Probe norms, Qwen2-0.5B layer shape (d = {a.width}, {a.heads} heads, {a.kv_heads} kv heads), "
          f"one sequence of L = {a.seq_len}, k = {a.k} orthogonal probes, float32, {a.threads} thread(s)")
    print(f"{'H':>3} {'batched cotangents':>19} {'per-batch forward':>18} {'per-probe backward':>19}"
          f" {'ratio fwd/batched':>18} {'ratio bwd/batched':>18}")
    print(f"{'':>3} {'[s per layer]':>19} {'[s per layer]':>18} {'[s per layer]':>19}")
    for H in depths:
        model = ag.build_decoder("qwen2", H, a.width, a.heads, a.kv_heads, context=a.seq_len,
                                 init_std=ag.standin_init_std(a.width), seed=0)
        h0 = ag.random_embeddings(model, a.seq_len, 0)
        probes = ag.draw_probes(a.width, a.k, "orthogonal", 0)
        paths = {"batched": lambda: ag.probe_norms(model, h0, probes, a.k),
                 "forward": lambda: profiles._probe_norms_per_batch(model, h0, probes, a.k),
                 "backward": lambda: profiles._probe_norms_per_batch(model, h0, probes, 1)}
        best = dict.fromkeys(paths, math.inf)
        for _ in range(a.repeat):  # interleaved, so that a busy moment of the machine hits every path
            for name, f in paths.items():
                t = time.perf_counter()
                f()
                best[name] = min(best[name], time.perf_counter() - t)
        new = best["batched"]
        print(f"{H:>3} {new / H:>19.3f} {best['forward'] / H:>18.3f} {best['backward'] / H:>19.3f}"
              f" {best['forward'] / new:>18.2f} {best['backward'] / new:>18.2f}")


if __name__ == "__main__":
    main()
