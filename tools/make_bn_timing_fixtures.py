"""Record when MXNet 1.9.1 moves BatchNorm's running statistics, for
``tests/gluon/test_batchnorm_stats_timing.py``.

MXNet 1.x moves ``running_mean``/``running_var`` in BatchNorm's backward pass: an
unrecorded training-mode forward, or a recorded one never backpropagated, leaves them
as they were. Run with the reference interpreter::

    MXNET_MKLDNN_ENABLED=0 .venv-mxnet/bin/python tools/make_bn_timing_fixtures.py

The scenarios are written once here, as functions of the ``mx`` module, and the test
runs the same functions on gluonjax. Output: ``tests/fixtures/bn_timing/stats.npz``,
``<scenario>.<case>.<structural parameter name>`` for every running statistic.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "bn_timing"
KINDS = ("eager", "hybrid", "seq", "sync", "sync_hybrid")
CASES = ("train_mode", "record_only", "record_backward", "two_forwards_one_backward")


def _set_params(net, seed):
    rs = np.random.RandomState(seed)
    for name, p in sorted(net._collect_params_with_prefix().items()):
        if name.endswith(("running_mean", "running_var", "gamma", "beta")):
            continue
        p.set_data(rs.uniform(-0.5, 0.5, p.shape).astype(np.float32))


def make_net(mx, kind):
    """A BatchNorm net of ``kind`` (see ``KINDS``) with set parameters."""
    nn = mx.gluon.nn
    if kind.startswith("sync"):
        from importlib import import_module

        net = import_module(mx.__name__ + ".gluon.contrib.nn").SyncBatchNorm(in_channels=3)
    elif kind == "seq":
        net = nn.HybridSequential()
        net.add(nn.Dense(3, in_units=4), nn.BatchNorm(in_channels=3), nn.Activation("relu"))
    else:
        net = nn.BatchNorm(in_channels=3)
    net.initialize()
    _set_params(net, 1)
    if kind in ("hybrid", "seq", "sync_hybrid"):
        net.hybridize()
    return net


def _data(kind):
    rs = np.random.RandomState(0)
    shape = (5, 4) if kind == "seq" else (5, 3)
    return (rs.randn(*shape) * 2 + 1).astype(np.float32), (rs.randn(*shape) - 1).astype(np.float32)


def _stats(net):
    return {
        k: v.data().asnumpy().copy()
        for k, v in net._collect_params_with_prefix().items()
        if k.endswith(("running_mean", "running_var"))
    }


def timing(mx, kind, case):
    """The running statistics of a ``kind`` net after ``case``."""
    autograd = mx.autograd
    net = make_net(mx, kind)
    a, b = (mx.nd.array(v) for v in _data(kind))
    if case == "train_mode":
        with autograd.train_mode():
            net(a)
    elif case == "record_only":
        with autograd.record():
            net(a)
    elif case == "record_backward":
        with autograd.record():
            y = net(a)
        y.backward()
    else:
        with autograd.record():
            net(a)
            z = net(b)
        z.backward()
    return _stats(net)


def _mlp(mx, out, seed):
    nn = mx.gluon.nn
    net = nn.HybridSequential()
    net.add(nn.Dense(6, in_units=4), nn.BatchNorm(in_channels=6), nn.LeakyReLU(0.2))
    net.add(nn.Dense(out, in_units=6))
    net.initialize()
    _set_params(net, seed)
    return net


def dcgan(mx, hybridize):
    """Three steps of a DCGAN-like loop: the discriminator runs three times a step
    (real, detached fake, fake for the generator) and is backpropagated through two."""
    autograd, gluon = mx.autograd, mx.gluon
    g, d = _mlp(mx, 4, 2), _mlp(mx, 1, 3)
    if hybridize:
        g.hybridize()
        d.hybridize()
    loss = gluon.loss.SigmoidBinaryCrossEntropyLoss()
    tg = gluon.Trainer(g.collect_params(), "sgd", {"learning_rate": 0.1})
    td = gluon.Trainer(d.collect_params(), "sgd", {"learning_rate": 0.1})
    rs = np.random.RandomState(7)
    ones, zeros = mx.nd.ones((8, 1)), mx.nd.zeros((8, 1))
    for _ in range(3):
        real = mx.nd.array(rs.randn(8, 4).astype(np.float32) + 1)
        noise = mx.nd.array(rs.randn(8, 4).astype(np.float32))
        with autograd.record():
            err_real = loss(d(real), ones)
            fake = g(noise)
            err_fake = loss(d(fake.detach()), zeros)
            err_d = err_real + err_fake
        err_d.backward()
        td.step(8)
        with autograd.record():
            err_g = loss(d(fake), ones)
        err_g.backward()
        tg.step(8)
    return {"g." + k: v for k, v in _stats(g).items()} | {"d." + k: v for k, v in _stats(d).items()}


def fused(mx, steps=2):
    """A Dense+BatchNorm net trained ``steps`` SGD steps (record, backward, step)."""
    autograd, gluon = mx.autograd, mx.gluon
    net = _mlp(mx, 2, 4)
    net.hybridize()
    loss = gluon.loss.L2Loss()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    rs = np.random.RandomState(9)
    for _ in range(steps):
        x = mx.nd.array(rs.randn(8, 4).astype(np.float32))
        y = mx.nd.array(rs.randn(8, 2).astype(np.float32))
        with autograd.record():
            err = loss(net(x), y)
        err.backward()
        tr.step(8)
    return _stats(net)


def scenarios(mx):
    """``{key: array}`` of every scenario, keys as stored in the fixture."""
    out = {}
    for kind in KINDS:
        for case in CASES:
            for k, v in timing(mx, kind, case).items():
                out[f"{kind}.{case}.{k}"] = v
    for hyb in (False, True):
        for k, v in dcgan(mx, hyb).items():
            out[f"dcgan{int(hyb)}.{k}"] = v
    for k, v in fused(mx).items():
        out[f"fused.{k}"] = v
    return out


def main():
    import mxnet as mx

    OUT.mkdir(parents=True, exist_ok=True)
    np.savez(OUT / "stats.npz", **scenarios(mx))
    print(f"wrote {OUT / 'stats.npz'}")


if __name__ == "__main__":
    main()
