"""Stand-alone GPU check: the paper-shaped Jacobian profile on CUDA (no book machinery).

Builds the paper's random-init Qwen2-shaped decoder (24 layers, width 896,
14 heads / 2 key-value heads, L = 2048) on ``cuda`` and times:

1. a partial exact profile: the first ``--exact-dirs`` of the d = 896 output
   directions (the full exact profile needs all 896; the script extrapolates);
2. the estimator with ``--k`` Gaussian probes, looped (batch 1) and batched
   (``--batch`` copies of the sequence per backward pass);
3. the estimator with ``--k`` orthogonal probes;

and prints timings, the estimated cost of the full exact profile, the
Cesàro fit of the k-probe estimate (fitted alpha, Spearman, W, peak/trough),
and the RoPE vs no-RoPE Spearman of the estimates.

Usage: ``python benchmarks/gpu_check_jacobians.py [--exact-dirs 32] [--k 16] [--batch 4]``
(``--device cpu --seq-len 128 --width 64 --heads 4`` for a quick CPU dry run).
"""

import argparse
import time

import numpy as np
import torch

import attention_geometry as ag


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--width", type=int, default=896)
    ap.add_argument("--heads", type=int, default=14)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--seq-len", type=int, default=2048)
    ap.add_argument("--exact-dirs", type=int, default=32)
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    dev = a.device
    print(f"device {dev}: {torch.cuda.get_device_name() if dev == 'cuda' else 'cpu'}; "
          f"H={a.layers} d={a.width} heads={a.heads}/{a.kv_heads} L={a.seq_len}", flush=True)
    estimates = {}
    for rope in (True, False):
        t = time.perf_counter()
        model = ag.build_decoder("qwen2", a.layers, a.width, a.heads, a.kv_heads, context=a.seq_len,
                                 rope=rope, seed=a.seed, device=dev)
        h0 = ag.random_embeddings(model, a.seq_len, a.seed)
        sync(dev)
        print(f"[rope={rope}] build + inputs: {time.perf_counter() - t:.1f} s; "
              f"params on {next(model.parameters()).device}, h0 on {h0.device}", flush=True)
        if rope:
            probes = ag.draw_probes(a.width, a.width, "exact", 0)[: a.exact_dirs]
            t = time.perf_counter()
            ag.probe_norms(model, h0, probes)
            sync(dev)
            dt = time.perf_counter() - t
            print(f"  exact, {a.exact_dirs} of {a.width} directions: {dt:.2f} s "
                  f"-> full exact profile ~ {dt / a.exact_dirs * a.width:.0f} s", flush=True)
            t = time.perf_counter()
            e_b = ag.estimate_profile(model, h0, a.k, "gaussian", a.seed, batch_size=a.batch)
            sync(dev)
            print(f"  gaussian k={a.k}, batch {a.batch}: {time.perf_counter() - t:.2f} s", flush=True)
            if dev == "cuda":
                print(f"  peak GPU memory: {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB", flush=True)
        t = time.perf_counter()
        est = ag.estimate_profile(model, h0, a.k, "gaussian", a.seed)
        sync(dev)
        print(f"  gaussian k={a.k}, looped: {time.perf_counter() - t:.2f} s", flush=True)
        if rope:
            print(f"  batched vs looped (same probes) max rel. diff: "
                  f"{np.max(np.abs(e_b.rho2 / est.rho2 - 1)):.2e}", flush=True)
            t = time.perf_counter()
            ag.estimate_profile(model, h0, a.k, "orthogonal", a.seed)
            sync(dev)
            print(f"  orthogonal k={a.k}, looped: {time.perf_counter() - t:.2f} s", flush=True)
        estimates[rope] = est.rho
        s = ag.summarise_profile(est.rho, a.layers)
        print(f"  Cesàro fit: alpha={s.fit.alpha:.3f} gain/layer={s.fit.gain_per_layer:.3f} "
              f"Spearman={s.spearman:.3f} W={s.wasserstein:.4f} peak/trough={s.peak_to_trough:.1f} "
              f"shape={s.shape} j_min/L={s.j_min / a.seq_len:.3f}", flush=True)
        del model
        if dev == "cuda":
            torch.cuda.empty_cache()
    print(f"Spearman RoPE vs no RoPE (k={a.k} estimates): "
          f"{ag.profile_spearman(estimates[True], estimates[False]):.4f}")
    print(f"score sd at init (sigma^2 d): {ag.attention_score_std(a.width, 0.02):.3f}")


if __name__ == "__main__":
    main()
