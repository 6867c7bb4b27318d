"""Convolutions on CPU (issue "Fast from the first step", section 2): where the time of the
conv nets goes, and what XLA:CPU can do about it.

Rows, per-step milliseconds of wall time and of CPU time (each the minimum over interleaved
rounds, so a burst of load on the machine hits every contender alike), for the LeNet train
step (batch 64), the CIFAR ResNet-18 train step (batch 32) and ResNet-18 inference at batch 1
(see ``_workloads``):

- pure JAX with MXNet's NCHW layout, and the same net computing in NHWC inside (one
  transpose at the input; the parameters keep MXNet's OIHW layout);
- pure JAX NCHW under XLA:CPU flags this jaxlib has (each set in a fresh process, as
  ``XLA_FLAGS`` is read once);
- gluonjax hybridized (what users run), and PyTorch eager (oneDNN) as the target.

Target: gluonjax's rows at least as fast as PyTorch's (ratio <= 1.0).

``BENCH_ONE_CORE=1`` pins every process to one core (and PyTorch to one thread): the rows
then compare the kernels, and hardly move when other jobs load the machine.

Findings (jax/jaxlib 0.10.2, x86 CPU, 2 cores shared with other jobs; the compiled
programs' HLO counted with ``jax.jit(f).lower(...).compile().as_text()``; "CPU" below is
process CPU time pinned to one core with ``taskset``, which moved by under 2% between
repeats while wall times on the loaded machine moved by 2x):

- Layout. XLA:CPU's layout assignment already gives every convolution an NHWC physical
  layout whatever the logical one: the compiled ResNet-18 inference program is the same for
  NCHW, NHWC inside, and NCHW with NHWC convolutions (all 20 convolutions YNNPACK fusions,
  42 transposes/copies each). In the train step, NHWC inside cuts transposes/copies from
  593 to 171 (LeNet 33 to 22) and CPU time by about 12% (ResNet-18 782 against 890 ms);
  transposing around each convolution (what an op lowering can do without a graph-wide
  layout pass) does not: 628, XLA does not cancel the transposes of consecutive layers
  through BatchNorm, pooling and the residual adds. A graph-wide NHWC pass could win
  those 12% on training; it is not in gluonjax (MXNet's NCHW lowering is kept).
- Flags. This jaxlib has ``--xla_cpu_use_onednn``, ``--xla_cpu_experimental_onednn_custom_call``,
  ``--xla_cpu_use_xnnpack`` (default on), ``--xla_cpu_experimental_{xnn,ynn,onednn}_fusion_type``,
  ``--xla_cpu_experimental_xnn_graph_fusion_mode``, ``--xla_cpu_enable_fast_math``,
  ``--xla_cpu_opt_preset`` and ``--xla_cpu_multi_thread_eigen``; ``--xla_cpu_use_thunk_runtime``
  is deprecated (the thunk runtime is the only one). Convolutions compile to YNNPACK
  fusions by default; ``--xla_cpu_experimental_ynn_fusion_type=`` (empty) sends them to
  Eigen instead. Each flag needs its own process, so its rows compare across time: on
  this shared machine no flag won consistently (YNNPACK off cost 3-12% less CPU in two
  alternating one-core runs, and twice as much on ResNet-18 inference in a third; oneDNN,
  XNNPACK graph fusion and fast math lost or tied most rows; fast math also changes
  results). No flag is set by default: none wins reliably, XLA_FLAGS only acts before jax
  starts, and an unknown flag aborts the process in another jaxlib version.
- Kernels. 53 of the 59 convolutions of the ResNet-18 train step (forward and both
  gradients) compile to YNNPACK fusions; the other 6 are the input gradients of the
  stride-2 convolutions (input-dilated, XLA's own emitter), timed alone at about the cost
  of the forward convolution. On one core PyTorch (1 thread, oneDNN) needs 558 ms for the
  ResNet-18 step (pure JAX 890, gluonjax 888), 11.8 ms for ResNet-18 inference (pure JAX
  33, gluonjax 39: its program has 80 transposes/copies against pure JAX's 42, the extra
  ones copying the OIHW weights into the convolutions' layout on every call) and 2.8 ms
  for the LeNet step (5.8): the gap is the convolution kernels themselves, which no
  layout or flag of this jaxlib closes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

# (label, XLA_FLAGS) measured on pure JAX NCHW; every flag exists in jax 0.10.2's jaxlib
FLAGS = (
    ("default", ""),
    ("fast math", "--xla_cpu_enable_fast_math=true"),
    ("oneDNN", "--xla_cpu_use_onednn=true --xla_cpu_experimental_onednn_custom_call=true"),
    (
        "XNNPACK graph fusion",
        "--xla_cpu_experimental_xnn_graph_fusion_mode=XNN_GRAPH_FUSION_MODE_GREEDY",
    ),
    ("no YNNPACK convs", "--xla_cpu_experimental_ynn_fusion_type="),
)
ROWS = (("lenet", "train"), ("resnet18", "train"), ("resnet18", "infer"))
ROUNDS = {"lenet": 5, "resnet18": 3}
CALLS = {("lenet", "train"): 10, ("resnet18", "train"): 1, ("resnet18", "infer"): 10}


def _time(fns, kind, what):
    """Per-call ``(wall, cpu)`` seconds of each ``fns[name]``: the minimum over interleaved
    rounds. CPU time (this process, all its threads) is what the step costs the machine;
    it moves much less than wall time when other processes load the cores."""
    for f in fns.values():  # compile and warm up
        f()
        f()
    best = {k: [float("inf"), float("inf")] for k in fns}
    n = CALLS[(kind, what)]
    for _ in range(ROUNDS[kind]):
        for k, f in fns.items():
            t, c = time.perf_counter(), time.process_time()
            for _ in range(n):
                f()
            best[k][0] = min(best[k][0], (time.perf_counter() - t) / n)
            best[k][1] = min(best[k][1], (time.process_time() - c) / n)
    return best


def _child(which):
    if os.environ.get("BENCH_ONE_CORE"):  # before jax or torch size their thread pools
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
        if which == "torch":
            import torch

            torch.set_num_threads(1)
    from . import _workloads as w

    out = {}
    for kind, what in ROWS:
        fns = {}
        if which == "torch":
            import torch  # noqa: F401

            fns["torch"] = w.torch_step(kind) if what == "train" else w.torch_infer(kind)
        elif which == "layouts":
            import gluonjax as mx

            for layout in ("NCHW", "NHWC", "NCHW-T"):
                fns[layout] = (
                    w.pure_step(kind, layout) if what == "train" else w.pure_infer(kind, layout)
                )
            if what == "train":
                fns["gluonjax"] = w.gluon_step(mx, kind, hybridize=True)
            else:
                fns["gluonjax"] = _gluon_infer(mx, kind)
        else:
            fns["NCHW"] = w.pure_step(kind) if what == "train" else w.pure_infer(kind)
        out[f"{kind} {what}"] = _time(fns, kind, what)
    print(json.dumps(out))


def _gluon_infer(mx, kind):
    from . import _workloads as w

    net = w.gluon_net(mx, kind)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.array(w.data(kind, 1)[0])
    return lambda: net(x).wait_to_read()


def _measure(which, flags=""):
    env = dict(os.environ, GLUONJAX_COMPILE_NOTICE="0", GLUONJAX_CACHE_DIR="off")
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " " + flags).strip()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cmd = [sys.executable, "-m", "benchmarks.bench_conv_cpu", "--child", which]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900, cwd=root)
    if proc.returncode != 0:
        raise RuntimeError(f"{which} {flags}: " + proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(n=None):
    print(
        "\n== conv nets on CPU: per-step wall and CPU ms (min of interleaved rounds); ratio vs "
        "PyTorch eager in the same run;\n   target: gluonjax <= 1.0x PyTorch"
        + ("; every process pinned to one core" if os.environ.get("BENCH_ONE_CORE") else "")
    )
    try:
        import torch  # noqa: F401

        ref = _measure("torch")
    except ImportError:
        ref = None
    res = {"layouts": _measure("layouts")}
    for label, flags in FLAGS[1:]:
        res[label] = _measure("flags", flags)
    print(f"{'row':<52}{'wall ms':>10}{'vs torch':>10}{'CPU ms':>10}{'vs torch':>10}  status")
    for key in res["layouts"]:
        base = ref[key]["torch"] if ref else None
        lines = [("pure JAX NCHW", res["layouts"][key]["NCHW"])]
        lines.append(("pure JAX NHWC inside", res["layouts"][key]["NHWC"]))
        lines.append(("pure JAX NCHW, NHWC convs", res["layouts"][key]["NCHW-T"]))
        lines += [(f"pure JAX NCHW, {lab}", res[lab][key]["NCHW"]) for lab, _ in FLAGS[1:]]
        lines.append(("gluonjax hybridized", res["layouts"][key]["gluonjax"]))
        if ref:
            lines.append(("PyTorch eager", base))
        for name, (t, c) in lines:
            ratios = [f"{'-':>10}"] * 2
            if base:
                ratios = [f"{t / base[0]:>9.2f}x", f"{c / base[1]:>9.2f}x"]
            status = ""
            if name.startswith("gluonjax") and base:
                status = "meets" if t <= base[0] else "MISSES"
            print(
                f"{key + ': ' + name:<52}{t * 1e3:>10.2f}{ratios[0]}{c * 1e3:>10.2f}{ratios[1]}"
                f"  {status}"
            )


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        _child(sys.argv[2])
    else:
        run()
