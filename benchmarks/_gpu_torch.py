"""PyTorch's side of ``python -m benchmarks --gpu`` (driver: :mod:`benchmarks.gpu`).

The same nets as the CPU rows: ``_workloads.torch_net`` (MLP, LeNet, CIFAR ResNet-18),
bench_gluoncv's PyTorch ResNets (its ``TORCH_CHILD`` source, run up to the model
definitions) and bench_rnn's LSTM LM, on ``cfg['torch_device']`` (``cuda``, or ``cpu`` in
a dry run). On CUDA: ``cudnn.benchmark`` on and TF32 matmuls allowed
(``set_float32_matmul_precision('high')``), which is what jax does by default on an
Ampere-or-newer GPU; every timed call ends with ``torch.cuda.synchronize()``.
"""

from __future__ import annotations

import statistics
import time

from ._gpu_jobs import GLUONCV, RNN, TRAIN_MODES, TRAIN_NETS, USER_LENET, train_row


def start(cfg):
    """Import torch and start its device (CUDA context, cuDNN): ``(torch, device)``."""
    import torch

    dev = torch.device(cfg["torch_device"])
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False")
        torch.backends.cudnn.benchmark = True
        torch.set_float32_matmul_precision("high")
    else:  # untrained nets in predict mode make denormals, very slow on x86 (bench_gluoncv)
        torch.set_flush_denormal(True)
    torch.zeros(1, device=dev).sum().item()
    return torch, dev


def _sync(torch, dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def timed(fn, n, rounds, sync, warmup=3):
    """Seconds per call of ``fn()``: the best over ``rounds`` of ``n`` calls, synchronized."""
    for _ in range(warmup):
        fn()
    sync()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def median_single(fn, repeats, sync):
    """The median time of one synchronized call (bench_gluoncv's measure)."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def train_step_factory(cfg, wait=True):
    """``_workloads.torch_step`` on the run's device: ``f(kind) -> step`` (one SGD step;
    ``wait``: synchronized, as bench_first_step's Gluon step waits for its loss)."""

    def torch_step(kind):
        from . import _workloads as w

        torch, dev = start(cfg)
        torch.manual_seed(0)
        net = w.torch_net(kind).to(dev)
        opt = torch.optim.SGD(net.parameters(), lr=w.LR)
        loss_fn = torch.nn.CrossEntropyLoss()
        xn, yn = w.data(kind)
        x, y = torch.from_numpy(xn).to(dev), torch.from_numpy(yn).long().to(dev)

        def step():
            opt.zero_grad()
            loss = loss_fn(net(x), y)
            loss.backward()
            opt.step()
            if wait:
                _sync(torch, dev)

        return step

    return torch_step


def _train_cells(cfg, torch, dev):
    """PyTorch's step beside each of bench_train's rows (the same net and batch)."""
    make = train_step_factory(cfg, wait=False)  # as bench_train: one wait after n steps
    sync = lambda: _sync(torch, dev)  # noqa: E731
    cells = []
    for kind in TRAIN_NETS:
        sec = timed(make(kind), max(cfg["n_train"] // 20, 10), cfg["rounds"], sync)
        cells += [[train_row(kind, m), "torch", sec, ""] for m in TRAIN_MODES]
        if kind == "lenet":
            cells.append([USER_LENET, "torch", sec, ""])
    return cells


def _rnn_cells(cfg, torch, dev):
    """bench_rnn's LM as ``torch.nn.LSTM`` (its sizes, patched by a dry run)."""
    from . import bench_rnn as r
    from ._gpu_jobs import shrink

    shrink(cfg)
    torch.manual_seed(0)
    emb = torch.nn.Embedding(r.VOCAB, r.EMBED).to(dev)
    rnn = torch.nn.LSTM(r.EMBED, r.HIDDEN, r.LAYERS).to(dev)
    dec = torch.nn.Linear(r.HIDDEN, r.VOCAB).to(dev)
    params = [*emb.parameters(), *rnn.parameters(), *dec.parameters()]
    opt = torch.optim.SGD(params, lr=r.LR)
    x, y, xi = (torch.as_tensor(a, dtype=torch.long, device=dev) for a in r._data())

    def zeros(n):
        return [torch.zeros(r.LAYERS, n, r.HIDDEN, device=dev) for _ in range(2)]

    state, h0 = zeros(r.BATCH), zeros(1)

    def train():
        out, (h, c) = rnn(emb(x), (state[0].detach(), state[1].detach()))
        loss = torch.nn.functional.cross_entropy(dec(out).reshape(-1, r.VOCAB), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        state[0], state[1] = h, c

    def infer():
        with torch.no_grad():
            return dec(rnn(emb(xi), tuple(h0))[0])

    sync = lambda: _sync(torch, dev)  # noqa: E731
    n, rounds = cfg["n_rnn"], cfg["rounds"]
    return [
        [RNN["train"], "torch", timed(train, n, rounds, sync), ""],
        [RNN["infer"], "torch", timed(infer, n, rounds, sync), ""],
    ]


def _resnet(cfg):
    """bench_gluoncv's PyTorch ResNet builder, ``resnet(layers, expansion)``."""
    from . import bench_gluoncv as g

    src = g.TORCH_CHILD.split("\ndef median")[0]
    scope = {}
    exec(src.format(repeats=0, batch=0), scope)  # noqa: S102 - bench_gluoncv's own source
    return scope["resnet"]


def _gluoncv_cells(cfg, torch, dev):
    """bench_gluoncv's rows for PyTorch (eager): ResNet-50 inference, ResNet-18 training."""
    import numpy as np

    resnet, g = _resnet(cfg), cfg["gluoncv"]
    sync = lambda: _sync(torch, dev)  # noqa: E731
    rng = np.random.RandomState(0)
    size, batch = g["size"], g["batch"]
    x1 = torch.as_tensor(rng.uniform(size=(1, 3, size, size)).astype(np.float32), device=dev)
    xb = torch.as_tensor(rng.uniform(size=(batch, 3, size, size)).astype(np.float32), device=dev)
    yb = torch.as_tensor(rng.randint(0, 1000, size=batch), device=dev)
    res = {}
    t0 = time.perf_counter()
    net = resnet(g["infer_layers"], 4).to(dev).eval()
    with torch.no_grad():
        net(x1)
        sync()
        res["infer_first"] = time.perf_counter() - t0
        net(x1), net(xb)
        res["infer1"] = median_single(lambda: net(x1), g["repeats"], sync)
        res["infer32"] = median_single(lambda: net(xb), g["repeats"], sync)
    t0 = time.perf_counter()
    net = resnet(g["train_layers"], 1).to(dev).train()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)

    def step():
        loss = torch.nn.functional.cross_entropy(net(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()

    step()
    sync()
    res["train_first"] = time.perf_counter() - t0
    step()
    res["train32"] = median_single(step, g["repeats"], sync)
    return [[GLUONCV[k], "torch", v, ""] for k, v in res.items()]


def job_torch(cfg):
    """Every PyTorch cell but bench_first_step's (those run in fresh processes):
    ``(cells, info)``. gluoncv first, so its first output is a cold one."""
    torch, dev = start(cfg)
    cells = _gluoncv_cells(cfg, torch, dev)
    cells += _train_cells(cfg, torch, dev)
    cells += _rnn_cells(cfg, torch, dev)
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    return cells, {"torch": f"torch {torch.__version__} on {name}"}
