"""Convolutions on CPU (issue "Fast from the first step", section 2): where the time of the
conv nets goes, and what XLA:CPU can do about it.

Rows, per-step milliseconds (the minimum over interleaved rounds, so a burst of load on the
machine hits every contender alike), for the LeNet train step (batch 64), the CIFAR
ResNet-18 train step (batch 32) and ResNet-18 inference at batch 1 (see ``_workloads``):

- pure JAX with MXNet's NCHW layout, and the same net computing in NHWC inside (one
  transpose at the input; the parameters keep MXNet's OIHW layout);
- pure JAX NCHW under XLA:CPU flags this jaxlib has (each set in a fresh process, as
  ``XLA_FLAGS`` is read once);
- gluonjax hybridized (what users run), and PyTorch eager (oneDNN) as the target.

Target: gluonjax's rows at least as fast as PyTorch's (ratio <= 1.0).

Findings (jax/jaxlib 0.10.2, x86 CPU, 2 cores; the compiled programs' HLO counted with
``jax.jit(f).lower(...).compile().as_text()``):

- Layout. XLA:CPU's layout assignment already gives every convolution an NHWC physical
  layout whatever the logical one: the compiled ResNet-18 inference program is the same for
  NCHW, NHWC inside, and NCHW with NHWC convolutions (61 YNNPACK conv fusions, 42
  transposes/copies each). In the train step, NHWC inside cuts transposes/copies from 593
  to 171 (ResNet-18; LeNet 33 to 22), but transposing around each convolution (what an op
  lowering could do without a graph-wide layout pass) does not: 628, XLA does not cancel
  the transposes of consecutive layers through BatchNorm, pooling and the residual adds.
  Measured, NHWC inside is within about 10% of NCHW on every row (the noise of a shared
  machine), so gluonjax keeps MXNet's NCHW lowering; a graph-wide NHWC pass is not worth
  its complexity on this evidence.
- Flags. This jaxlib has ``--xla_cpu_use_onednn``, ``--xla_cpu_experimental_onednn_custom_call``,
  ``--xla_cpu_use_xnnpack`` (default on), ``--xla_cpu_experimental_{xnn,ynn,onednn}_fusion_type``,
  ``--xla_cpu_experimental_xnn_graph_fusion_mode``, ``--xla_cpu_enable_fast_math``,
  ``--xla_cpu_opt_preset`` and ``--xla_cpu_multi_thread_eigen``; ``--xla_cpu_use_thunk_runtime``
  is deprecated (the thunk runtime is the only one). Forward convolutions already run as
  YNNPACK fusions by default (turning them off slows the ResNet-18 step); oneDNN is slower
  on every row; XNNPACK graph fusion does not help; fast math changes results (NaN/inf
  handling), so it is not a default for a library that follows MXNet's numerics.
- Kernels. 53 of the 59 convolutions of the ResNet-18 train step (forward and both
  gradients) compile to YNNPACK fusions; the other 6 are the input gradients of the
  stride-2 convolutions (input-dilated, run by XLA's own emitter), timed alone at about the
  cost of the forward convolution, so not the bottleneck. The gap to PyTorch on the
  ResNet-18 step is the convolution kernels themselves (about 40-50 GFLOP/s here for
  XLA:CPU against about twice that for PyTorch's oneDNN in the issue's measurement), which
  no flag or layout of this jaxlib changes.
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
    """Minimum over interleaved rounds of the per-call time of each ``fns[name]``."""
    for f in fns.values():  # compile and warm up
        f()
        f()
    best = dict.fromkeys(fns, float("inf"))
    n = CALLS[(kind, what)]
    for _ in range(ROUNDS[kind]):
        for k, f in fns.items():
            t = time.perf_counter()
            for _ in range(n):
                f()
            best[k] = min(best[k], (time.perf_counter() - t) / n)
    return best


def _child(which):
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
        "\n== conv nets on CPU: per-step ms (min of interleaved rounds); ratio vs PyTorch "
        "eager in the same run;\n   target: gluonjax <= 1.0x PyTorch"
    )
    try:
        import torch  # noqa: F401

        ref = _measure("torch")
    except ImportError:
        ref = None
    res = {"layouts": _measure("layouts")}
    for label, flags in FLAGS[1:]:
        res[label] = _measure("flags", flags)
    print(f"{'row':<52}{'ms':>10}{'vs torch':>10}  status")
    for key in res["layouts"]:
        base = ref[key]["torch"] if ref else None
        lines = [("pure JAX NCHW", res["layouts"][key]["NCHW"])]
        lines.append(("pure JAX NHWC inside", res["layouts"][key]["NHWC"]))
        lines.append(("pure JAX NCHW, NHWC convs", res["layouts"][key]["NCHW-T"]))
        lines += [(f"pure JAX NCHW, {lab}", res[lab][key]["NCHW"]) for lab, _ in FLAGS[1:]]
        lines.append(("gluonjax hybridized", res["layouts"][key]["gluonjax"]))
        if ref:
            lines.append(("PyTorch eager", base))
        for name, t in lines:
            ratio = f"{t / base:>9.2f}x" if base else f"{'-':>10}"
            status = ""
            if name.startswith("gluonjax") and base:
                status = "meets" if t <= base else "MISSES"
            print(f"{key + ': ' + name:<52}{t * 1e3:>10.2f}{ratio}  {status}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        _child(sys.argv[2])
    else:
        run()
