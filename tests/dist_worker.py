"""A worker of the multi-process tests (tests/test_dist.py), started by gluonjax.launch.

``python dist_worker.py MODE OUTDIR``: MODE ``train`` checks the store API across
the workers and trains small MLPs on this worker's half of a fixed batch (with
``kvstore='dist_sync'``; ``'horovod'``, which updates on the worker; hybridized with
``allreduce_grads`` and ``update``; as a Module), writing ``OUTDIR/rank<r>.json``.
MODE ``devices``: the same over 2 devices per worker. MODE ``syncbn``: a
SyncBatchNorm + Dense net on this worker's rows of a fixed batch (5 rows on worker 0,
3 on worker 1), eager / hybridized / ``compile_step``. MODE ``raise`` (``kill``):
worker 1 raises (kills itself with SIGKILL) after one step; worker 0 goes on and
would wait for it forever.
"""

import json
import os
import signal
import sys
from pathlib import Path

import numpy as np

import gluonjax as mx

STEPS = 3
LR = 0.1


def data():
    rs = np.random.RandomState(0)
    x = rs.randn(8, 3).astype(np.float32)
    y = rs.randn(8, 2).astype(np.float32)
    w1 = (rs.randn(5, 3) * 0.5).astype(np.float32)
    b1 = (rs.randn(5) * 0.1).astype(np.float32)
    w2 = (rs.randn(2, 5) * 0.5).astype(np.float32)
    b2 = (rs.randn(2) * 0.1).astype(np.float32)
    return x, y, [w1, b1, w2, b2]


def train(
    kvstore, rank, n, steps=STEPS, crash_after=None, crash=None, split=False, ctx=None, fused=False
):
    """``split``: hybridized, ``update_on_kvstore=False``, and ``allreduce_grads()``
    then ``update()`` in place of ``step()``. ``ctx``: this worker's contexts (its
    half batch split over them with ``split_and_load``). ``fused``: hybridized, one
    ``trainer.compile_step`` call per step."""
    x, y, init = data()
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(5, activation="tanh", in_units=3), mx.gluon.nn.Dense(2, in_units=5))
    net.initialize(ctx=ctx)
    if split or fused:
        net.hybridize()
    for p, v in zip(net.collect_params().values(), init):
        # worker 0's values must win (the store broadcasts them); the others start wrong
        p.set_data(mx.nd.array(v if rank == 0 else v * 0 + rank))
    trainer = mx.gluon.Trainer(
        net.collect_params(),
        "sgd",
        {"learning_rate": LR},
        kvstore=kvstore,
        update_on_kvstore=False if split else None,
    )
    loss_fn = mx.gluon.loss.L2Loss()
    part = len(x) // n
    xs = mx.nd.array(x[rank * part : (rank + 1) * part])
    ys = mx.nd.array(y[rank * part : (rank + 1) * part])
    fused_step = trainer.compile_step(net, loss_fn) if fused else None
    for step in range(steps):
        if fused:
            fused_step(xs, ys, len(x))
            continue
        if ctx is None:
            with mx.autograd.record():
                loss = loss_fn(net(xs), ys)
            loss.backward()
        else:
            pieces = zip(*(mx.gluon.utils.split_and_load(a, ctx) for a in (xs, ys)))
            with mx.autograd.record():
                losses = [loss_fn(net(a), b) for a, b in pieces]
            for loss in losses:
                loss.backward()
        if split:
            trainer.allreduce_grads()
            trainer.update(len(x))
        else:
            trainer.step(len(x))  # the global batch: gradients are summed over the workers
        if crash_after is not None and step + 1 == crash_after:
            print(f"worker {rank} fails on purpose", flush=True)
            if crash == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            raise RuntimeError(f"worker {rank} fails on purpose")
    return [p.data(p.list_ctx()[-1]).asnumpy().tolist() for p in net.collect_params().values()]


def train_module(kvstore, rank, n, steps=STEPS):
    """The same MLP as a Module (LinearRegressionOutput's gradient is L2Loss's)."""
    x, y, init = data()
    h = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=5, name="fc1")
    out = mx.sym.FullyConnected(mx.sym.Activation(h, act_type="tanh"), num_hidden=2, name="fc2")
    net = mx.sym.LinearRegressionOutput(out, mx.sym.Variable("label"), name="lro")
    part = len(x) // n
    mod = mx.mod.Module(net, data_names=["data"], label_names=["label"])
    mod.bind(data_shapes=[("data", (part, 3))], label_shapes=[("label", (part, 2))])
    names = ["fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    values = {k: mx.nd.array(v if rank == 0 else v * 0 + rank) for k, v in zip(names, init)}
    mod.init_params(arg_params=values)
    mod.init_optimizer(kvstore=kvstore, optimizer="sgd", optimizer_params={"learning_rate": LR})
    rows = slice(rank * part, (rank + 1) * part)
    batch = mx.io.DataBatch([mx.nd.array(x[rows])], [mx.nd.array(y[rows])])
    for _ in range(steps):
        mod.forward(batch, is_train=True)
        mod.backward()
        mod.update()
    args, _ = mod.get_params()
    return [args[k].asnumpy().tolist() for k in names]


SBN_ROWS = (5, 3)  # worker 0's and worker 1's rows of the batch: uneven on purpose


def syncbn_data():
    """A (8, 3, 4) batch, (8, 2) labels and the initial gamma, beta, weight, bias."""
    rs = np.random.RandomState(1)
    x = (rs.randn(8, 3, 4) * 2 + 1).astype(np.float32)
    y = rs.randn(8, 2).astype(np.float32)
    gamma = (1 + rs.randn(3) * 0.2).astype(np.float32)
    beta = (rs.randn(3) * 0.2).astype(np.float32)
    w = (rs.randn(2, 12) * 0.3).astype(np.float32)
    b = (rs.randn(2) * 0.1).astype(np.float32)
    return x, y, [gamma, beta, w, b]


def syncbn(mode, kvstore, rank, steps=2):
    """SyncBatchNorm(3 channels) then Dense(2), L2Loss, SGD; this worker's rows.

    ``mode``: ``eager``, ``hybrid`` (both blocks hybridized) or ``compile``
    (``trainer.compile_step``). Returns, per step, the BatchNorm output (eager,
    hybrid), the Dense output or the loss, the gradient of each parameter and of the
    input (before the update), then the final parameters and moving statistics.
    """
    from gluonjax.gluon.contrib.nn import SyncBatchNorm

    x, y, init = syncbn_data()
    start = sum(SBN_ROWS[:rank])
    rows = slice(start, start + SBN_ROWS[rank])
    bn = SyncBatchNorm(in_channels=3, num_devices=1)
    dense = mx.gluon.nn.Dense(2, in_units=12)
    net = mx.gluon.nn.HybridSequential()
    net.add(bn, dense)
    net.initialize()
    for p, v in zip([bn.gamma, bn.beta, dense.weight, dense.bias], init):
        p.set_data(mx.nd.array(v))
    if mode != "eager":
        net.hybridize()
    params = [bn.gamma, bn.beta, dense.weight, dense.bias]
    trainer = mx.gluon.Trainer(params, "sgd", {"learning_rate": LR}, kvstore=kvstore)
    loss_fn = mx.gluon.loss.L2Loss()
    xs, ys = mx.nd.array(x[rows]), mx.nd.array(y[rows])
    fused = trainer.compile_step(net, loss_fn) if mode == "compile" else None
    out = {"steps": []}
    for _ in range(steps):
        if fused is not None:
            loss = fused(xs, ys, len(x))
            out["steps"].append({"loss": loss.asnumpy().tolist()})
            continue
        xs.attach_grad()
        with mx.autograd.record():
            if mode == "eager":
                h = bn(xs)
                o = dense(h)
            else:
                o = net(xs)
            loss = loss_fn(o, ys)
        loss.backward()
        rec = {"out": o.asnumpy().tolist(), "xgrad": xs.grad.asnumpy().tolist()}
        rec["grads"] = [p.grad().asnumpy().tolist() for p in params]
        if mode == "eager":
            rec["bn"] = h.asnumpy().tolist()
        out["steps"].append(rec)
        trainer.step(len(x))
    out["params"] = [p.data().asnumpy().tolist() for p in params]
    out["moving"] = [bn.running_mean.data().asnumpy().tolist()]
    out["moving"].append(bn.running_var.data().asnumpy().tolist())
    if rank == 0:  # inference on one worker alone: moving statistics, no collective to wait in
        out["predict"] = bn(mx.nd.array(x)).asnumpy().tolist()
    mx.kv.create("dist_sync").barrier()
    return out


def store_checks(rank, n):
    kv = mx.kv.create("dist_sync")
    got = {"rank": kv.rank, "num_workers": kv.num_workers, "type": kv.type}
    kv.init(3, mx.nd.ones((2, 3)) * (rank + 5))  # worker 0's value is kept
    out = mx.nd.zeros((2, 3))
    kv.pull(3, out=out)
    got["init"] = out.asnumpy().tolist()
    kv.push(3, [mx.nd.ones((2, 3)) * (rank + 1), mx.nd.ones((2, 3))])  # two local values
    kv.pull(3, out=out)
    got["push"] = out.asnumpy().tolist()
    val = mx.nd.array([rank + 1.0, 10.0])
    kv.init(7, mx.nd.zeros((2,)))
    kv.pushpull(7, val)
    got["pushpull"] = val.asnumpy().tolist()
    b = mx.nd.zeros((2,))
    kv.broadcast(8, mx.nd.array([rank + 2.0, 1.0]), out=b)
    got["broadcast"] = b.asnumpy().tolist()
    kv.barrier()
    return got


def main():
    mode, outdir = sys.argv[1], Path(sys.argv[2])
    kv = mx.kv.create("dist_sync")
    rank, n = kv.rank, kv.num_workers
    if mode in ("raise", "kill"):
        train("dist_sync", rank, n, steps=200, crash_after=1 if rank == 1 else None, crash=mode)
        return
    if mode == "syncbn":
        result = {
            "eager": syncbn("eager", "dist_sync", rank),
            "hybrid": syncbn("hybrid", "horovod", rank),
            "compile": syncbn("compile", "dist_sync", rank),
        }
        (outdir / f"rank{rank}.json").write_text(json.dumps(result))
        return
    if mode == "devices":  # two devices in each worker
        ctx = [mx.cpu(0), mx.cpu(1)]
        result = {name: train(name, rank, n, ctx=ctx) for name in ("dist_sync", "horovod")}
        try:  # a compiled step over several devices per worker: refused, not run wrong
            train("dist_sync", rank, n, steps=1, ctx=ctx, fused=True)
        except mx.base.MXNetError as err:
            result["compile_error"] = str(err)
        (outdir / f"rank{rank}.json").write_text(json.dumps(result))
        return
    result = {"store": store_checks(rank, n)}
    result["dist_sync"] = train("dist_sync", rank, n)
    result["horovod"] = train("horovod", rank, n)
    result["split"] = train("dist_device_sync", rank, n, split=True)
    result["module"] = train_module("dist_sync", rank, n)
    result["compile"] = train("dist_sync", rank, n, fused=True)
    (outdir / f"rank{rank}.json").write_text(json.dumps(result))


if __name__ == "__main__":
    main()
