"""Conv nets on CPU (issue "Conv nets on CPU at least as fast as PyTorch"): gluonjax
hybridized against PyTorch eager (oneDNN) and pure JAX, in one run.

Rows (per step or call):

- ResNet-18 (CIFAR, the model zoo's ``resnet18_v1(thumbnail=True)``): SGD train step at
  batch 32, inference at batch 1 and at batch 32;
- LeNet: train step at batch 64;
- MobileNet 1.0 (depthwise convolutions): inference at batch 1, 224x224;
- the DCGAN generator (transposed convolutions): train step at batch 64.

``BENCH_PROFILE=1`` adds, under each gluonjax row, where its one-core XLA time goes
(milliseconds per step by kind of thunk: YNNPACK fusions, convolutions, transposes...).

Every contender runs in its own process, twice: once free on every core (wall time per
step, the minimum over interleaved rounds), and once pinned to one core with PyTorch on
one thread (process CPU time per step: what the step costs, steady under load on the
shared machine). Targets: gluonjax/PyTorch <= 1.0 on the ResNet-18 and LeNet rows; the
MobileNet and DCGAN rows are reported beside PyTorch. The pure JAX rows are the same nets
written by hand in MXNet's NCHW/OIHW layout with jax's default compiler options.

What gluonjax does for these rows (``gluon/_fast.py``, ``_compile.py``,
``_ops/defs/norm.py``; the measurements that chose it are in docs/performance.md): a
hybridized inference call passes its 4-D weights as HWIO twins made once per parameter
value, so the program holds no weight transposes, and compiles with XLA:CPU's own
convolution emitter instead of YNNPACK fusions; BatchNorm in training computes one-pass
statistics with a hand-written VJP.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

# (kind, what, batch): the rows; CALLS per timed round, ROUNDS interleaved rounds
ROWS = (
    ("resnet18", "train", 32),
    ("resnet18", "infer", 1),
    ("resnet18", "infer", 32),
    ("lenet", "train", 64),
    ("mobilenet", "infer", 1),
    ("dcgan", "train", 64),
)
TARGETS = {("resnet18", "train"), ("resnet18", "infer"), ("lenet", "train")}
CALLS = {"train": {"resnet18": 1, "lenet": 10, "dcgan": 1}, "infer": {1: 10, 32: 1}}
ROUNDS = 3
PURE = ("resnet18", "lenet")  # nets written in pure JAX too (_workloads.pure_*)


def _calls(kind, what, batch):
    return CALLS["train"][kind] if what == "train" else CALLS["infer"][batch]


def _time(fns, rows):
    """Per-call ``(wall, cpu)`` seconds of each ``fns[row]``: the minimum over interleaved
    rounds (a burst of load on the machine hits every row alike)."""
    for f in fns.values():  # compile and warm up
        f()
        f()
    best = {k: [float("inf"), float("inf")] for k in fns}
    for _ in range(ROUNDS):
        for k, f in fns.items():
            n = _calls(*rows[k])
            t, c = time.perf_counter(), time.process_time()
            for _ in range(n):
                f()
            best[k][0] = min(best[k][0], (time.perf_counter() - t) / n)
            best[k][1] = min(best[k][1], (time.process_time() - c) / n)
    return best


def _child(which, one_core):
    if one_core:  # before jax or torch size their thread pools
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
        if which == "torch":
            import torch

            torch.set_num_threads(1)
    from . import _workloads as w

    fns, rows = {}, {}
    for kind, what, batch in ROWS:
        key = f"{kind} {what} b{batch}"
        rows[key] = (kind, what, batch)
        if which == "torch":
            fns[key] = w.torch_step(kind) if what == "train" else w.torch_infer(kind, batch)
        elif which == "pure":
            if kind in PURE:
                fns[key] = (
                    w.pure_step(kind) if what == "train" else w.pure_infer(kind, "NCHW", batch)
                )
        else:
            import gluonjax as mx

            if what == "train":
                fns[key] = w.gluon_step(mx, kind, hybridize=True)
            else:
                fns[key] = _gluon_infer(mx, kind, batch)
    res = _time(fns, rows)
    if os.environ.get("BENCH_PROFILE") and which == "gluonjax" and one_core:
        from .common import fusion_profile

        for k, f in fns.items():
            res[k].append(fusion_profile(f, calls=_calls(*rows[k])))
    print(json.dumps(res))


def _gluon_infer(mx, kind, batch):
    from . import _workloads as w

    net = w.gluon_net(mx, kind)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.array(w.data(kind, batch)[0])
    return lambda: net(x).wait_to_read()


def _measure(which, one_core):
    env = dict(os.environ, GLUONJAX_COMPILE_NOTICE="0", GLUONJAX_CACHE_DIR="off")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cmd = [sys.executable, "-m", "benchmarks.bench_conv_cpu", "--child", which]
    cmd += ["--one-core"] if one_core else []
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800, cwd=root)
    if proc.returncode != 0:
        raise RuntimeError(f"{which}: " + proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(n=None):
    print(
        "\n== conv nets on CPU: wall ms per step on every core, and CPU ms per step pinned to "
        "one core (PyTorch on one thread);\n   min of interleaved rounds; ratio vs PyTorch "
        "eager in the same run; target: gluonjax <= 1.0x PyTorch"
    )
    try:
        import torch  # noqa: F401

        have_torch = True
    except ImportError:
        have_torch = False
        print("   (PyTorch is not installed: `pip install torch` for its rows)")
    res = {}
    for which in ("gluonjax", "pure", "torch") if have_torch else ("gluonjax", "pure"):
        res[which] = {"wall": _measure(which, False), "cpu": _measure(which, True)}
    head = f"{'row':<44}{'wall ms':>10}{'vs torch':>10}{'1-core ms':>11}{'vs torch':>10}  status"
    print(head)
    for kind, what, batch in ROWS:
        key = f"{kind} {what} b{batch}"
        ref = res.get("torch")
        for which, label in (("gluonjax", "gluonjax"), ("pure", "pure JAX"), ("torch", "PyTorch")):
            if which not in res or key not in res[which]["wall"]:
                continue
            t, c = res[which]["wall"][key][0], res[which]["cpu"][key][1]
            rt = rc = f"{'-':>10}"
            status = ""
            if ref and which != "torch":
                bt, bc = ref["wall"][key][0], ref["cpu"][key][1]
                rt, rc = f"{t / bt:>9.2f}x", f"{c / bc:>9.2f}x"
                if which == "gluonjax":
                    meets = t <= bt and c <= bc
                    status = "(reported)"
                    if (kind, what) in TARGETS:
                        status = "meets" if meets else "MISSES"
            print(f"{key + ': ' + label:<44}{t * 1e3:>10.2f}{rt}{c * 1e3:>11.2f}{rc}  {status}")
            prof = res[which]["cpu"][key][2:]
            if prof:
                print("      one core, XLA time by kind: " + ", ".join(
                    f"{name} {ms:.1f}" for name, ms in prof[0]
                ))  # fmt: skip


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--child":
        _child(sys.argv[2], "--one-core" in sys.argv)
    else:
        run()
