"""Run every benchmark row: ``python -m benchmarks [--quick] [--only NAME] [--budget S]``.

``--budget S``: seconds for the whole run; a row not started when they are spent says so,
and a row whose ``run`` takes ``budget`` (bench_onnx) gets the seconds left.

``python -m benchmarks --gpu [--dry-run] [--out PATH]``: the one-command GPU run (a
correctness pass, then gluonjax against pure JAX and PyTorch on CUDA; see benchmarks/gpu.py).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import platform
import sys
import time

import jax

ROWS = [
    "bench_ops",
    "bench_nd",
    "bench_np",
    "bench_hybrid",
    "bench_train",
    "bench_first_step",
    "bench_conv_cpu",
    "bench_deploy",
    "bench_onnx",
    "bench_sparse",
    "bench_detect",
    "bench_zoo",
    "bench_gluoncv",
    "bench_rnn",
    "bench_data",
    "bench_scale",
    "bench_dist",
]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--gpu" in argv:  # its own options and --help (benchmarks/gpu.py)
        from .gpu import main as gpu_main

        return gpu_main([a for a in argv if a != "--gpu"])
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer iterations")
    ap.add_argument("--only", choices=ROWS, action="append", help="run only these rows")
    ap.add_argument("--budget", type=float, help="seconds for the whole run (default: no limit)")
    ap.add_argument(
        "--gpu",
        action="store_true",
        help="the one-command GPU run of benchmarks/gpu.py (--gpu --help: its options)",
    )
    args = ap.parse_args(argv)
    end = None if args.budget is None else time.perf_counter() + args.budget
    n = 200 if args.quick else 1000
    cpu = platform.processor() or platform.machine()
    print(f"jax {jax.__version__} on {jax.devices()[0].platform} ({cpu})")
    for name in args.only or ROWS:
        left = None if end is None else end - time.perf_counter()
        if left is not None and left <= 0:
            print(f"\n== {name}: not run (time budget spent)")
            continue
        try:
            mod = importlib.import_module(f"benchmarks.{name}")
        except ModuleNotFoundError:
            continue
        if left is not None and "budget" in inspect.signature(mod.run).parameters:
            mod.run(n, budget=end - time.perf_counter())
        else:
            mod.run(n)


if __name__ == "__main__":
    raise SystemExit(main())
