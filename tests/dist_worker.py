"""A worker of the multi-process tests (tests/test_dist.py), started by gluonjax.launch.

``python dist_worker.py MODE OUTDIR``: MODE ``train`` checks the store API across
the workers and trains two small MLPs on this worker's half of a fixed batch (one
with ``kvstore='dist_sync'``, one with ``'horovod'``, which updates on the worker),
writing ``OUTDIR/rank<r>.json``. MODE ``raise`` (``kill``): worker 1 raises (kills
itself with SIGKILL) after one step; worker 0 goes on and would wait for it forever.
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


def train(kvstore, rank, n, steps=STEPS, crash_after=None, crash=None):
    x, y, init = data()
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(5, activation="tanh", in_units=3), mx.gluon.nn.Dense(2, in_units=5))
    net.initialize()
    for p, v in zip(net.collect_params().values(), init):
        # worker 0's values must win (the store broadcasts them); the others start wrong
        p.set_data(mx.nd.array(v if rank == 0 else v * 0 + rank))
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": LR}, kvstore=kvstore)
    loss_fn = mx.gluon.loss.L2Loss()
    part = len(x) // n
    xs = mx.nd.array(x[rank * part : (rank + 1) * part])
    ys = mx.nd.array(y[rank * part : (rank + 1) * part])
    for step in range(steps):
        with mx.autograd.record():
            loss = loss_fn(net(xs), ys)
        loss.backward()
        trainer.step(len(x))  # the global batch: gradients are summed over the workers
        if crash_after is not None and step + 1 == crash_after:
            print(f"worker {rank} fails on purpose", flush=True)
            if crash == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            raise RuntimeError(f"worker {rank} fails on purpose")
    return [p.data().asnumpy().tolist() for p in net.collect_params().values()]


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
    result = {"store": store_checks(rank, n)}
    result["dist_sync"] = train("dist_sync", rank, n)
    result["horovod"] = train("horovod", rank, n)
    (outdir / f"rank{rank}.json").write_text(json.dumps(result))


if __name__ == "__main__":
    main()
