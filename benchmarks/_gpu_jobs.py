"""The jobs of ``python -m benchmarks --gpu`` (driver: :mod:`benchmarks.gpu`).

A child process runs ``python -m benchmarks._gpu_jobs SPEC`` (SPEC: JSON with the run's
sizes, ``cfg``, and a list of ``jobs``) and prints, for each job as it ends, one line
``@@gpu-bench {json}`` holding table cells ``[row, column, seconds, note]`` (columns:
``gluonjax``, ``jax``, ``torch``) or the job's error. The rows' code is the CPU benchmarks'
own (``bench_train._row``, ``bench_first_step._child``, ``bench_rnn``'s model, the workloads
of ``_workloads``); here they run under ``with mx.Context(cfg['ctx'], 0)`` (gluonjax, like
MXNet, puts arrays on ``cpu(0)`` unless told otherwise). PyTorch's jobs are in
:mod:`benchmarks._gpu_torch`. jax, gluonjax and torch are imported inside the jobs only: a
PyTorch child never starts jax's GPU backend (which would take most of the GPU's memory).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import time
import traceback

MARK = "@@gpu-bench "

# ----------------------------------------------------------------------------- the rows
# bench_train's names for its two nets, and its rows that have the pure JAX step as baseline
TRAIN_NETS = {"mlp": "MLP 512-256-128-10", "lenet": "LeNet 1x28x28"}
TRAIN_MODES = (
    "Gluon loop eager",
    "Gluon loop hybridized",
    "fused compile_step",
    "hybridized, deferral off",
)
USER_LENET = "train LeNet user HybridBlock: eager three-line loop"
KINDS = ("mlp", "lenet", "resnet18")
# bench_first_step's measurements: row suffix -> (run, gluonjax mode, metric, pure JAX
# mode, has a PyTorch cell); "second run" rows reuse the persistent cache of the cold run
FIRST = {
    "cold: first step (hybridized)": ("cold", "hybrid", "first", "pure", True),
    "cold: steady at (hybridized)": ("cold", "hybrid", "steady_at", "pure", True),
    "cold: steady at vs pure-out": ("cold", "hybrid", "steady_at", "pure-out", False),
    "cold: first step (eager)": ("cold", "eager", "first", "pure", True),
    "cold: steady at (eager)": ("cold", "eager", "steady_at", "pure", True),
    "step (hybridized)": ("cold", "hybrid", "step", "pure", True),
    "step (eager)": ("cold", "eager", "step", "pure", True),
    "second run: first step (hybridized)": ("second", "hybrid", "first", "pure", False),
    "second run: steady at (hybridized)": ("second", "hybrid", "steady_at", "pure", False),
    "second run: steady at vs pure-out": ("second", "hybrid", "steady_at", "pure-out", False),
    "second run: steady at (eager)": ("second", "eager", "steady_at", "pure", False),
}
SECOND_EAGER = ("mlp", "lenet")  # bench_first_step has no eager second run of the ResNet


def first_modes(kind, run):
    """The JAX processes bench_first_step runs for ``kind`` in ``run`` ('cold' or
    'second'); the driver adds PyTorch's cold one."""
    if run == "cold":
        return ["hybrid", "pure", "pure-out", "eager"]
    return ["hybrid", "pure", "pure-out"] + (["eager"] if kind in SECOND_EAGER else [])


def first_suffixes(kind):
    return [
        s for s in FIRST if not (s == "second run: steady at (eager)" and kind not in SECOND_EAGER)
    ]


RNN = {"train": "LSTM LM train step", "infer": "LSTM LM inference, batch 1"}
GLUONCV = {
    "infer1": "gluoncv resnet50_v1b inference, batch 1",
    "infer32": "gluoncv resnet50_v1b inference, batch N",
    "train32": "gluoncv resnet18_v1b SGD step, batch N",
    "infer_first": "gluoncv resnet50_v1b: get_model to first output",
    "train_first": "gluoncv resnet18_v1b: get_model to first step",
}
GLUONCV_SECOND = {
    "infer_first": "gluoncv resnet50_v1b: first output, second run",
    "train_first": "gluoncv resnet18_v1b: first step, second run",
}


def train_row(kind, mode):
    return f"train {TRAIN_NETS[kind]}: {mode}"


def first_row(kind, suffix):
    return f"first-step {kind} {suffix}"


def rows():
    """Every row of the table, in order: ``[(name, has a pure JAX cell, has a torch cell)]``."""
    out = [(train_row(k, m), True, True) for k in TRAIN_NETS for m in TRAIN_MODES]
    out.append((USER_LENET, True, True))
    out += [(first_row(k, s), True, FIRST[s][4]) for k in KINDS for s in first_suffixes(k)]
    out += [(name, True, True) for name in RNN.values()]
    out += [(name, key != "train32", True) for key, name in GLUONCV.items() if "first" not in key]
    out += [(name, False, True) for key, name in GLUONCV.items() if "first" in key]
    out += [(name, False, False) for name in GLUONCV_SECOND.values()]
    return out


def first_cells(kind, mode, run, res):
    """The cells one bench_first_step process gives (``run``: 'cold' or 'second')."""
    cells = []
    for suffix in first_suffixes(kind):
        row_run, gj, metric, pure, has_torch = FIRST[suffix]
        if row_run != run:
            continue
        note = ""
        if mode == gj:
            col = "gluonjax"
            if metric == "steady_at":
                note = f"{mode}: {res['compiles']} compiles + {res['cached']} cached"
        elif mode == pure:
            col = "jax"
        elif mode == "torch" and has_torch:
            col = "torch"
        else:
            continue
        cells.append([first_row(kind, suffix), col, res[metric], note])
    return cells


# ----------------------------------------------------------------------------- helpers
def emit(payload):
    print(MARK + json.dumps(payload), flush=True)


def _context(cfg, array=True):
    """gluonjax's default context for the run (``gpu(0)``, or ``cpu(0)`` in a dry run),
    checked: its device (``array``: and an array made under it) must be of that kind."""
    import gluonjax as mx

    ctx = mx.Context(cfg["ctx"], 0)
    where = [ctx.jax_device]
    if array:  # not before bench_first_step's clock: this runs an op
        with ctx:
            where += list(mx.nd.zeros((1,))._data.devices())
    kinds = {d.platform for d in where}
    want = {"gpu": {"gpu", "cuda", "rocm"}, "cpu": {"cpu"}}[cfg["ctx"]]
    if not kinds <= want:
        raise RuntimeError(f"gluonjax arrays under {ctx} live on {kinds}, not {cfg['ctx']}")
    return ctx


def shrink(cfg):
    """The dry run's sizes for the shared workloads (bench_first_step, bench_rnn)."""
    from . import _workloads as w
    from . import bench_first_step as fs

    small = cfg.get("first") or {}
    if small.get("batch"):
        w.BATCH = {k: small["batch"] for k in w.BATCH}
        fs.STEPS = {k: small["steps"] for k in fs.STEPS}
    if small.get("mini_resnet") and w.STAGES != ((512, 1),):
        # one stage of two 512-channel blocks on 8x8 images: the ResNet-18 code path, a
        # fraction of its compile time and work (the pure JAX and PyTorch nets read STAGES)
        w.STAGES = ((512, 1),)
        w.SHAPE = {**w.SHAPE, "resnet18": (3, 8, 8)}
        full = w.gluon_net

        def gluon_net(mx, kind):
            if kind != "resnet18":
                return full(mx, kind)
            v = mx.gluon.model_zoo.vision
            return v.ResNetV1(v.BasicBlockV1, [2], [64, 512], classes=10, thumbnail=True)

        w.gluon_net = gluon_net
    if cfg.get("rnn"):
        from . import bench_rnn

        for k, v in cfg["rnn"].items():
            setattr(bench_rnn, k, v)


# ----------------------------------------------------------------------------- jobs
class _Cells:
    """A ``common.Table`` stand-in that keeps bench_train's rows."""

    def __init__(self):
        self.rows = []

    def add(self, name, seconds, baseline=None, target=None, note=""):
        self.rows.append((name, seconds, baseline, note))


def job_train(cfg):
    """bench_train's rows (MLP and LeNet, batch 64; the tutorial LeNet's eager loop)."""
    import gluonjax as mx

    from . import bench_train as bt

    cells, t = [], _Cells()
    with _context(cfg):
        for kind in TRAIN_NETS:
            bt._row(t, kind, cfg["n_train"])
        scope = {"mx": mx}
        exec(bt.LENET_SRC, scope)  # noqa: S102 - bench_train's own benchmark source
        user = scope["eager_loop"](cfg["n_eager"], cfg["rounds"])
    for name, sec, base, note in t.rows:
        if base is None:  # the pure JAX row: the baseline column of the others
            continue
        kind = next(k for k, v in TRAIN_NETS.items() if name.startswith(v))
        row = train_row(kind, name[len(TRAIN_NETS[kind]) + 2 :])
        cells += [[row, "gluonjax", sec, note], [row, "jax", base, ""]]
    lenet_pure = next(c[2] for c in cells if c[0].startswith("train LeNet") and c[1] == "jax")
    cells += [[USER_LENET, "gluonjax", user, ""], [USER_LENET, "jax", lenet_pure, "pure: LeNet"]]
    return cells


def job_first(cfg, kind, mode, run):
    """One bench_first_step measurement (a fresh process on the GPU)."""
    from . import bench_first_step as fs

    shrink(cfg)
    if mode == "torch":
        from . import _gpu_torch, _workloads

        _workloads.torch_step = _gpu_torch.train_step_factory(cfg)
        _gpu_torch.start(cfg)  # CUDA up before the clock, as the imports are
    else:
        import jax

        jax.devices()  # the backend up before the clock, as the imports are
    ctx = _context(cfg, array=False) if mode in ("hybrid", "eager") else contextlib.nullcontext()
    buf = io.StringIO()
    with ctx, contextlib.redirect_stdout(buf):
        fs._child(kind, mode)
    res = json.loads(buf.getvalue().strip().splitlines()[-1])
    return first_cells(kind, mode, run, res)


def lstm_pure(vocab, embed, hidden, layers, lr):
    """A pure JAX version of bench_rnn's LM: ``(params, train, infer)``, jitted, with
    ``train(params, x, y, h, c) -> (params, loss, h, c)`` (SGD, params donated)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    rs = np.random.RandomState(0)

    def u(*shape):
        return jnp.asarray(rs.uniform(-0.1, 0.1, shape).astype(np.float32))

    ins = [embed] + [hidden] * (layers - 1)
    params = {
        "emb": u(vocab, embed),
        "rnn": [(u(4 * hidden, n), u(4 * hidden, hidden), u(4 * hidden)) for n in ins],
        "dec": (u(vocab, hidden), u(vocab)),
    }

    def layer(p, xs, h, c):
        wx, wh, b = p
        gx = xs @ wx.T + b  # every step's input projection at once

        def cell(carry, g):
            h, c = carry
            i, f, z, o = jnp.split(g + h @ wh.T, 4, -1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(z)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h

        (h, c), ys = jax.lax.scan(cell, (h, c), gx)
        return ys, h, c

    def forward(ps, x, h, c):
        z, hs, cs = ps["emb"][x], [], []
        for i, p in enumerate(ps["rnn"]):
            z, hi, ci = layer(p, z, h[i], c[i])
            hs.append(hi)
            cs.append(ci)
        return z @ ps["dec"][0].T + ps["dec"][1], jnp.stack(hs), jnp.stack(cs)

    def loss_fn(ps, x, y, h, c):
        out, h, c = forward(ps, x, h, c)
        logp = jax.nn.log_softmax(out)
        return -jnp.mean(jnp.take_along_axis(logp, y[..., None], -1)), (h, c)

    def train(ps, x, y, h, c):
        (loss, (h, c)), g = jax.value_and_grad(loss_fn, has_aux=True)(ps, x, y, h, c)
        return jax.tree_util.tree_map(lambda p, d: p - lr * d, ps, g), loss, h, c

    infer = jax.jit(lambda ps, x, h, c: forward(ps, x, h, c)[0])
    return params, jax.jit(train, donate_argnums=0), infer


def job_rnn(cfg):
    """bench_rnn's LM: gluonjax's Gluon loop (hybridized) against a pure JAX LSTM."""
    import jax
    import jax.numpy as jnp

    from . import bench_rnn as r

    shrink(cfg)
    n_train, n_infer, rounds = cfg["n_rnn"], cfg["n_rnn"], cfg["rounds"]
    with _context(cfg):
        train, infer = r._gluonjax_steps()
        ours = {
            "train": r._timed(train, n_train, rounds),
            "infer": r._timed(infer, n_infer, rounds),
        }
    params, p_train, p_infer = lstm_pure(r.VOCAB, r.EMBED, r.HIDDEN, r.LAYERS, r.LR)
    x, y, xi = (jnp.asarray(a, jnp.int32) for a in r._data())
    zeros = lambda n: jnp.zeros((r.LAYERS, n, r.HIDDEN), jnp.float32)  # noqa: E731
    box = [params, zeros(r.BATCH), zeros(r.BATCH)]

    def pure_train():
        box[0], loss, box[1], box[2] = p_train(box[0], x, y, box[1], box[2])
        return loss

    h1 = zeros(1)
    pure = {
        "train": r._timed(pure_train, n_train, rounds),
        "infer": r._timed(lambda: p_infer(box[0], xi, h1, h1), n_infer, rounds),
    }
    jax.block_until_ready(box)
    cells = []
    for key, row in RNN.items():
        cells += [[row, "gluonjax", ours[key], ""], [row, "jax", pure[key], ""]]
    return cells


def run_jobs(spec):
    cfg = spec["cfg"]
    for job in spec["jobs"]:
        name, args = job[0], job[1:]
        t0 = time.perf_counter()
        try:
            if name == "torch":
                from . import _gpu_torch

                cells, info = _gpu_torch.job_torch(cfg)
            else:
                fn = {"train": job_train, "first": job_first, "rnn": job_rnn}[name]
                cells, info = fn(cfg, *args), {}
            emit({"job": job, "cells": cells, "info": info, "seconds": time.perf_counter() - t0})
        except Exception as e:  # noqa: BLE001 - one failed job is a note in the table
            traceback.print_exc()
            emit({"job": job, "error": f"{type(e).__name__}: {e}"[:300]})


if __name__ == "__main__":
    run_jobs(json.loads(sys.argv[1]))
