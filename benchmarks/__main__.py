"""Run every benchmark row: ``python -m benchmarks [--quick] [--only NAME]``."""

from __future__ import annotations

import argparse
import importlib
import platform

import jax

ROWS = [
    "bench_ops",
    "bench_nd",
    "bench_hybrid",
    "bench_train",
    "bench_first_step",
    "bench_conv_cpu",
    "bench_deploy",
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
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer iterations")
    ap.add_argument("--only", choices=ROWS, action="append", help="run only these rows")
    args = ap.parse_args(argv)
    n = 200 if args.quick else 1000
    cpu = platform.processor() or platform.machine()
    print(f"jax {jax.__version__} on {jax.devices()[0].platform} ({cpu})")
    for name in args.only or ROWS:
        try:
            mod = importlib.import_module(f"benchmarks.{name}")
        except ModuleNotFoundError:
            continue
        mod.run(n)


if __name__ == "__main__":
    main()
