"""Stand-alone device check: the paper-shaped Jacobian profile, exact and estimated (no book machinery).

Builds the paper's random-init Qwen2-shaped decoder (24 layers, width 896, 14
heads / 2 key-value heads, L = 2048, sigma = 0.02) on ``--device`` and, for
``--sequences`` sequences, measures

1. the exact profile (all d output directions, batched ``--batch`` at a time)
   -- on a GPU only; ``--exact-dirs`` < d gives a partial, timed run;
2. the k-probe estimate (orthogonal probes), with RoPE and without;

then prints timings, the median relative error of the estimate against the
exact average profile, the statistics of the book (Cesàro and derived fits,
Spearman with the noise ceiling, W) and the RoPE vs no-RoPE Spearman with its
ceiling. A GPU check is a measurement, not a test: nothing is asserted.

With ``--out`` the result is also stored, with its provenance (command, commit,
date, device), as chapter 8's device check (``results/jacobians/device_check.json``,
:func:`attention_geometry.book.paper.store_device_check`); the chapter shows it.

Usage: ``python benchmarks/gpu_check_jacobians.py [--sequences 8] [--k 16] [--exact-dirs 896] [--out]``
(``--device cpu --seq-len 128 --width 64 --heads 4 --exact-dirs 64`` for a dry run).

Cost of the defaults, from the FLOPs (:func:`estimated_seconds`; printed at the start): the
decoder has 358 M weights outside its embedding table, so one forward pass at L = 2048 is
about 2 x 358 M x 2048 = 1.47 TFLOP plus 0.36 TFLOP of attention scores, and one cotangent
back to the inputs about as much again: about 1.8 TFLOP each. The exact profile sends 896
cotangents back per sequence (1.7 PFLOP), the estimate 2 x 16 per sequence with RoPE and
without. In float32 (no TF32: torch's default for matmuls), an H200 sustains about 40 of its
67 TFLOP/s, so 8 sequences take about 8 x 43 s = 6 min exact and 15 s estimated: the defaults fit
in 10 minutes on one GPU with room to spare (16 sequences would not). Memory: the forward
graph of one sequence (about 0.5 GB per layer, 12 GB) and the gradients of ``--probe-batch``
cotangents at once (64 x 2048 x 4864 x 4 B = 2.5 GB per MLP activation) fit in its 139 GB.
"""

import argparse
import sys
import time

import numpy as np
import torch

import attention_geometry as ag


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def estimated_seconds(a, tflops: float = 40.0) -> float:
    """Seconds the run should take at ``tflops`` sustained (float32): forward and cotangent
    passes counted as one forward pass's FLOPs each (weights without the embedding table,
    SwiGLU MLP of width 4864/896 d, attention scores)."""
    d, L, H = a.width, a.seq_len, a.layers
    d_kv = d // a.heads * a.kv_heads
    d_ff = round(d * 4864 / 896)
    weights = H * (2 * d * d + 2 * d * d_kv + 3 * d * d_ff)
    one_pass = 2 * weights * L + H * 4 * L * L * d
    passes = a.sequences * (1 + a.exact_dirs + 2 * (1 + a.k))
    return passes * one_pass / (tflops * 1e12)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--width", type=int, default=896)
    ap.add_argument("--heads", type=int, default=14)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--seq-len", type=int, default=2048)
    ap.add_argument("--sequences", type=int, default=8)
    ap.add_argument("--exact-dirs", type=int, default=896)
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--probe-batch", type=int, default=64, help="cotangents per backward pass")
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", action="store_true", help="store the result as chapter 8's device check")
    a = ap.parse_args(argv)
    dev, rng = a.device, np.random.default_rng(a.seed)
    print(f"device {dev}: {torch.cuda.get_device_name() if dev == 'cuda' else 'cpu'}; H={a.layers} d={a.width} "
          f"heads={a.heads}/{a.kv_heads} L={a.seq_len} n={a.sequences}; estimated {estimated_seconds(a) / 60:.1f} min "
          "at 40 TFLOP/s (float32)", flush=True)
    t = time.perf_counter()
    model = ag.build_decoder("qwen2", a.layers, a.width, a.heads, a.kv_heads, context=a.seq_len, init_std=0.02,
                             seed=a.seed, device=dev)
    X = ag.random_embeddings(model, a.seq_len, a.seed + 1, n=a.sequences)
    sync(dev)
    print(f"build + inputs: {time.perf_counter() - t:.1f} s", flush=True)
    t = time.perf_counter()
    exact = ag.sequence_profiles(model, X, a.exact_dirs, seed=a.seed, kind="orthogonal", batch_size=a.batch,
                                 probe_batch=a.probe_batch).mean(1)
    sync(dev)
    t_exact = time.perf_counter() - t
    print(f"{'exact' if a.exact_dirs == a.width else f'{a.exact_dirs} of {a.width} directions'}: {t_exact:.1f} s",
          flush=True)
    t = time.perf_counter()
    on, off = ag.positional_pair(model, X, a.k, seed=a.seed + 2, batch_size=a.batch, probe_batch=a.probe_batch)
    sync(dev)
    t_est = time.perf_counter() - t
    print(f"estimator, k={a.k}, RoPE and no RoPE: {t_est:.1f} s", flush=True)
    rel = ag.profile_relative_error(on.mean(0), exact.mean(0))
    print(f"estimate vs {'exact' if a.exact_dirs == a.width else 'partial exact'} average profile: median rel. err "
          f"{np.median(rel):.3e}, max {rel.max():.3e}", flush=True)
    for label, rho2 in [("exact", exact), ("estimate, RoPE", on), ("estimate, no RoPE", off)]:
        st = ag.profile_statistics(ag.ProfileSample(rho2), a.layers, n_boot=a.n_boot, rng=rng)
        print(f"[{label}] alpha {st.cesaro.alpha} misfit {st.cesaro.log_rmse:.3f} | derived g {st.derived_layers.gain} "
              f"kappa {st.derived_layers.growth} misfit {st.derived_layers.log_rmse:.3f} | noise {st.noise_log_rmse:.3f} "
              f"| Spearman {st.spearman} ceiling {st.ceiling} | W {st.wasserstein} | log10 ptt {st.log10_ptt} "
              f"| late minimum x={st.late_minimum.x_min:.3f} rise {st.late_minimum.rise}", flush=True)
    sp = ag.paired_spearman(ag.ProfileSample(on), ag.ProfileSample(off), n_boot=a.n_boot, rng=rng)
    ceil = ag.noise_ceiling_estimate(ag.ProfileSample(off), n_boot=a.n_boot, rng=rng)
    print(f"Spearman RoPE vs no RoPE: {sp} (ceiling {ceil}); score sd at init: "
          f"{ag.measured_score_std(model, X[:1, :256]).mean():.3f} (sigma^2 d = {ag.attention_score_std(a.width, 0.02):.3f})")
    if a.out:
        store(a, exact, on, rel, t_exact, t_est)


def store(a, exact, estimate, rel, t_exact, t_est):
    """Chapter 8's device check: the numbers, and a sentence composed from them."""
    from attention_geometry.book.paper import store_device_check
    from attention_geometry.book.project import Project

    against = "the exact profile" if a.exact_dirs == a.width else f"a partial profile ({a.exact_dirs} of {a.width} directions)"
    measured = (f"at H = {a.layers}, d = {a.width}, {a.heads}/{a.kv_heads} heads, L = {a.seq_len}, sigma = 0.02, the "
                f"estimate from k = {a.k} orthogonal probes against {against}, both averaged over {a.sequences} "
                f"sequences: median relative error of rho {np.median(rel):.2%} over positions, largest {rel.max():.2%}; "
                f"{t_exact:.0f} s for the exact profiles against {t_est / 2:.0f} s for one estimate "
                f"({2 * t_exact / t_est:.0f}x faster)")
    record = {"measured": measured, "layers": a.layers, "width": a.width, "heads": a.heads, "kv_heads": a.kv_heads,
              "seq_len": a.seq_len, "sequences": a.sequences, "k": a.k, "exact_dirs": a.exact_dirs, "seed": a.seed,
              "seconds_exact": t_exact, "seconds_estimate": t_est, "median_rel_error": float(np.median(rel)),
              "max_rel_error": float(rel.max()), "exact_rho2": exact.mean(0).tolist(),
              "estimate_rho2": estimate.mean(0).tolist()}
    command = "python benchmarks/gpu_check_jacobians.py " + " ".join(sys.argv[1:] or ["--out"])
    path = store_device_check(Project.find(), "jacobians", record, command=command, device=a.device)
    print(f"stored: {path}", flush=True)


if __name__ == "__main__":
    main()
