"""Data-parallel cases run by tests/gluon/test_data_parallel.py in a subprocess.

The subprocess has 4 forced CPU devices
(``XLA_FLAGS=--xla_force_host_platform_device_count=4``); the rest of the suite
keeps one. ``python data_parallel_worker.py CASE [OUTDIR]`` runs one case and
raises (non-zero exit) on a mismatch; it prints ``ok CASE`` at the end.
"""

from __future__ import annotations

import os
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np

import gluonjax as mx
from gluonjax import autograd, gluon, nd
from gluonjax.gluon.contrib.nn import SyncBatchNorm

STEPS = 20
BATCH = 16


def _ctx(n):
    return [mx.cpu(i) for i in range(n)]


def _mlp():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(16, activation="relu", in_units=10), gluon.nn.Dense(5, in_units=16))
    return net


def _lenet():
    net = gluon.nn.HybridSequential()
    net.add(
        gluon.nn.Conv2D(4, 3, in_channels=1, activation="relu"),
        gluon.nn.MaxPool2D(2),
        gluon.nn.Flatten(),
        gluon.nn.Dense(5, in_units=36),
    )
    return net


def _data(shape):
    rng = np.random.RandomState(0)
    x = rng.randn(STEPS, BATCH, *shape).astype(np.float32)
    y = rng.randint(0, 5, (STEPS, BATCH)).astype(np.float32)
    return x, y


def _build(make, ctx, init):
    net = make()
    net.initialize(ctx=ctx)
    for p, v in zip(net.collect_params().values(), init):
        p.set_data(nd.array(v))
    return net


def _train(make, init, xs, ys, n, mode, kvstore="device", opt=("sgd", {"learning_rate": 0.1})):
    """Final parameters (NumPy, one list per context) of STEPS steps on n devices."""
    ctx = _ctx(n)
    net = _build(make, ctx, init)
    if mode != "eager":
        net.hybridize()
    tr = gluon.Trainer(net.collect_params(), opt[0], dict(opt[1]), kvstore=kvstore)
    _steps(net, tr, ctx, xs, ys, mode)
    params = list(net.collect_params().values())
    for p in params:  # every context holds the same value, on its own device
        assert p.list_ctx() == ctx
        assert [d.context for d in p.list_data()] == ctx == [g.context for g in p.list_grad()]
        for c in ctx:
            assert p.data(c)._data.devices() == {c.jax_device}, (p.name, c)
            assert p.grad(c).context == c, (p.name, c)
            np.testing.assert_array_equal(p.data(c).asnumpy(), p.data(ctx[0]).asnumpy())
    return [p.data(ctx[0]).asnumpy() for p in params]


def _mlp_loss(w, x, y):
    """The MLP's summed softmax cross-entropy in pure JAX."""
    h = jax.nn.relu(x @ w[0].T + w[1])
    logits = h @ w[2].T + w[3]
    logp = jax.nn.log_softmax(logits)
    return -jnp.sum(jnp.take_along_axis(logp, y.astype(jnp.int32)[:, None], 1))


def _jax_mlp_reference(init, xs, ys, lr=0.1):
    """The MLP trained with plain SGD in pure JAX on the whole batch (one device)."""
    w = [jnp.asarray(v) for v in init]
    grad = jax.jit(jax.grad(_mlp_loss))
    for x, y in zip(xs, ys):
        g = grad(w, x, y)
        w = [a - lr * b / BATCH for a, b in zip(w, g)]
    return [np.asarray(a) for a in w]


def _close(got, want, what):
    for k, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=f"{what} param {k}")


def case_train():
    """MLP and LeNet, 20 steps on 1, 2 and 4 devices, eager / hybridized / compile_step."""
    xs, ys = _data((10,))
    net = _mlp()
    net.initialize()
    init = [p.data().asnumpy() for p in net.collect_params().values()]
    ref = _jax_mlp_reference(init, xs, ys)
    for n in (1, 2, 4):
        for mode in ("eager", "hybrid", "compile"):
            _close(_train(_mlp, init, xs, ys, n, mode), ref, f"MLP {n} devices {mode}")
    # the compiled step is one program (XLA sums the gradients): no store involved
    _close(_train(_mlp, init, xs, ys, 4, "compile", kvstore=None), ref, "MLP kvstore=None")
    _close(_train(_mlp, init, xs, ys, 4, "eager", kvstore="local"), ref, "MLP eager local")

    xs, ys = _data((1, 8, 8))
    net = _lenet()
    net.initialize()
    init = [p.data().asnumpy() for p in net.collect_params().values()]
    ref = _train(_lenet, init, xs, ys, 1, "eager")
    for n, mode in ((4, "eager"), (2, "hybrid"), (4, "compile")):
        _close(_train(_lenet, init, xs, ys, n, mode), ref, f"LeNet {n} devices {mode}")


def case_stores():
    """The store's meanings on 4 devices: after ``step`` (a store, the trainer updating)
    or ``allreduce_grads``, every context's gradient is the whole batch's; without a
    store (kvstore=None) each context is updated with its own shard's gradient, as
    MXNet 1.9.1 does."""
    xs, ys = _data((10,))
    net = _mlp()
    net.initialize()
    init = [p.data().asnumpy() for p in net.collect_params().values()]
    ctx = _ctx(4)
    lossf = gluon.loss.SoftmaxCrossEntropyLoss()
    grad = jax.grad(_mlp_loss)
    for kv, how in (("device", "step"), ("local", "allreduce"), (None, "step")):
        net = _build(_mlp, ctx, init)
        tr = gluon.Trainer(
            net.collect_params(), "sgd", {"learning_rate": 0.1}, kvstore=kv, update_on_kvstore=False
        )
        params = list(net.collect_params().values())
        w = [[jnp.asarray(v) for v in init] for _ in ctx]  # each context's weights
        for x, y in zip(xs[:3], ys[:3]):
            xp = gluon.utils.split_and_load(nd.array(x), ctx)
            yp = gluon.utils.split_and_load(nd.array(y), ctx)
            with autograd.record():
                losses = [lossf(net(a), b) for a, b in zip(xp, yp)]
            for ls in losses:
                ls.backward()
            if how == "step":
                tr.step(BATCH)
            else:
                tr.allreduce_grads()
                tr.update(BATCH)
            shard = [grad(w[k], x[k * 4 : (k + 1) * 4], y[k * 4 : (k + 1) * 4]) for k in range(4)]
            if kv is None:
                gk = shard
            else:
                gk = [[sum(g[j] for g in shard) for j in range(4)]] * 4
                for p, gw in zip(params, gk[0]):  # every context's gradient is the sum
                    for c in ctx:
                        np.testing.assert_allclose(p.grad(c).asnumpy(), gw, rtol=1e-5, atol=1e-5)
            w = [[a - 0.1 * b / BATCH for a, b in zip(w[k], gk[k])] for k in range(4)]
        for k, c in enumerate(ctx):
            got = [p.data(c).asnumpy() for p in params]
            _close(got, [np.asarray(a) for a in w[k]], f"kvstore={kv} {how} context {c}")
    assert not np.allclose(w[0][0], w[1][0])  # without a store the contexts drift apart


def _bn_net(norm):
    net = gluon.nn.HybridSequential()
    net.add(
        gluon.nn.Conv2D(3, 3, in_channels=2),
        norm,
        gluon.nn.Flatten(),
        gluon.nn.Dense(5, in_units=27),
    )
    return net


def case_syncbn():
    """SyncBatchNorm on 4 devices normalizes with the whole batch's statistics: the same
    training as BatchNorm over the concatenated batch on one device."""
    xs, ys = _data((2, 5, 5))
    x0 = xs[0]
    # the statistics differ between shards (else the comparison below proves nothing)
    shard_means = [x0[k * 4 : (k + 1) * 4].mean() for k in range(4)]
    assert np.ptp(shard_means) > 1e-3
    init_net = _bn_net(gluon.nn.BatchNorm(in_channels=3))
    init_net.initialize()
    init = [p.data().asnumpy() for p in init_net.collect_params().values()]

    def run(norm, n, mode, hybridize=True):
        ctx = _ctx(n)
        net = _bn_net(norm)
        net.initialize(ctx=ctx)
        for p, v in zip(net.collect_params().values(), init):
            p.set_data(nd.array(v))
        if hybridize:
            net.hybridize()
        tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
        loss = gluon.loss.SoftmaxCrossEntropyLoss()
        if mode == "compile":
            step = tr.compile_step(net, loss)
            for x, y in zip(xs[:5], ys[:5]):
                step(gluon.utils.split_and_load(nd.array(x), ctx), nd.array(y))
        else:
            for x, y in zip(xs[:5], ys[:5]):
                with autograd.record():
                    ls = loss(net(nd.array(x)), nd.array(y))
                ls.backward()
                tr.step(BATCH)
        return [p.data(ctx[-1]).asnumpy() for p in net.collect_params().values()]

    want = run(gluon.nn.BatchNorm(in_channels=3), 1, "loop")  # whole batch, one device
    for hybridize in (True, False):
        got = run(SyncBatchNorm(in_channels=3, num_devices=4), 4, "compile", hybridize)
        _close(got, want, f"SyncBatchNorm(4 devices, hybridize={hybridize}) vs BatchNorm")
    # a loop over the shards cannot see the other shards: it says so, once
    ctx = _ctx(4)
    layer = SyncBatchNorm(in_channels=2, num_devices=4)
    layer.initialize(ctx=ctx)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            with autograd.record():
                [layer(s) for s in gluon.utils.split_and_load(nd.array(x0), ctx)]
    assert len([w for w in caught if "own shard's statistics" in str(w.message)]) == 1
    # the running mean after the first step is 0.9 * 0 + 0.1 * the whole batch's mean
    bn = _bn_net(SyncBatchNorm(in_channels=3, num_devices=4))
    ctx = _ctx(4)
    bn.initialize(ctx=ctx)
    for p, v in zip(bn.collect_params().values(), init):
        p.set_data(nd.array(v))
    w, b = init[0], init[1]
    conv = (
        np.stack(
            [
                np.einsum("nchw,ochw->no", x0[:, :, i : i + 3, j : j + 3], w)
                for i in range(3)
                for j in range(3)
            ],
            -1,
        )
        + b[None, :, None]
    )
    step = gluon.Trainer(bn.collect_params(), "sgd", {"learning_rate": 0.0}).compile_step(
        bn, gluon.loss.SoftmaxCrossEntropyLoss()
    )
    step(gluon.utils.split_and_load(nd.array(x0), ctx), nd.array(ys[0]))
    rm = bn[1].running_mean.data(ctx[2]).asnumpy()
    np.testing.assert_allclose(rm, 0.1 * conv.mean(axis=(0, 2)), rtol=1e-4, atol=1e-6)


def case_split():
    """split_and_load of a batch that does not divide evenly (MXNet 1.9.1 semantics)."""
    ctx = _ctx(4)
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    parts = gluon.utils.split_and_load(nd.array(x), ctx, even_split=False)
    want = np.array_split(x, 4)  # MXNet 1.9.1 splits as numpy.array_split
    assert [p.shape for p in parts] == [w.shape for w in want] == [(3, 2), (3, 2), (2, 2), (2, 2)]
    for p, w, c in zip(parts, want, ctx):
        np.testing.assert_array_equal(p.asnumpy(), w)
        assert p.context == c and p._data.devices() == {c.jax_device}
    for axis in (0, 1):  # an even split, along either axis
        xe = np.arange(32, dtype=np.float32).reshape(8, 4)
        parts = gluon.utils.split_and_load(nd.array(xe), ctx, batch_axis=axis)
        for p, w, c in zip(parts, np.split(xe, 4, axis=axis), ctx):
            np.testing.assert_array_equal(p.asnumpy(), w)
            assert p.context == c and p._data.devices() == {c.jax_device}
    try:
        gluon.utils.split_and_load(nd.array(x), ctx)
    except ValueError as err:
        assert isinstance(err, mx.MXNetError) and "evenly split" in str(err)
    else:
        raise AssertionError("an uneven split with even_split=True must raise ValueError")
    # an uneven batch still trains as one device does (the step replicates it)
    xs, ys = _data((10,))
    net = _mlp()
    net.initialize()
    init = [p.data().asnumpy() for p in net.collect_params().values()]
    xs, ys = xs[:, :10], ys[:, :10]
    ref = _jax_mlp_reference(init, xs, ys, lr=0.1 * BATCH / 10)
    net = _build(_mlp, ctx, init)
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1 * BATCH / 10})
    step = tr.compile_step(net, gluon.loss.SoftmaxCrossEntropyLoss())
    for a, b in zip(xs, ys):
        step(
            gluon.utils.split_and_load(nd.array(a), ctx, even_split=False),
            gluon.utils.split_and_load(nd.array(b), ctx, even_split=False),
            BATCH,
        )
    _close([p.data(ctx[3]).asnumpy() for p in net.collect_params().values()], ref, "uneven")


def _steps(net, tr, ctx, xs, ys, mode):
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    step = tr.compile_step(net, loss) if mode == "compile" else None
    for x, y in zip(xs, ys):
        xp = gluon.utils.split_and_load(nd.array(x), ctx)
        yp = gluon.utils.split_and_load(nd.array(y), ctx)
        if step is not None:
            step(xp, yp)
            continue
        with autograd.record():
            losses = [loss(net(a), b) for a, b in zip(xp, yp)]
        for ls in losses:
            ls.backward()
        tr.step(BATCH)


def case_checkpoint(outdir):
    """Parameters and trainer states saved on 4 devices (compiled step or the loop,
    default store) load onto 1 and 2 devices and training goes on as on one device."""
    xs, ys = _data((10,))
    net = _mlp()
    net.initialize()
    init = [p.data().asnumpy() for p in net.collect_params().values()]
    opt = ("adam", {"learning_rate": 0.01})
    ref = _train(_mlp, init, xs[:6], ys[:6], 1, "compile", opt=opt)  # 6 steps, one device
    ctx4 = _ctx(4)
    for saver in ("compile", "eager"):
        sub = os.path.join(outdir, saver)
        os.makedirs(sub)
        net4 = _build(_mlp, ctx4, init)
        tr4 = gluon.Trainer(net4.collect_params(), *opt)
        _steps(net4, tr4, ctx4, xs[:3], ys[:3], saver)
        pfile, sfile = os.path.join(sub, "net.params"), os.path.join(sub, "net.states")
        net4.save_parameters(pfile)
        tr4.save_states(sfile)
        assert sorted(os.listdir(sub)) == ["net.params", "net.states"]  # one file each
        saved = mx.nd.load(pfile)
        assert [v.shape for v in saved.values()] == [v.shape for v in init]
        for n, mode in ((1, "compile"), (2, "eager"), (1, "no states")):
            ctx = _ctx(n)
            net = _mlp()
            net.load_parameters(pfile, ctx=ctx)
            assert all(p.list_ctx() == ctx for p in net.collect_params().values())
            tr = gluon.Trainer(net.collect_params(), *opt)
            if mode != "no states":
                tr.load_states(sfile)
            _steps(net, tr, ctx, xs[3:6], ys[3:6], "eager" if mode == "no states" else mode)
            got = [p.data(ctx[-1]).asnumpy() for p in net.collect_params().values()]
            if mode == "no states":  # the states matter: fresh ones give another result
                assert max(np.abs(a - b).max() for a, b in zip(got, ref)) > 1e-4
            else:
                _close(got, ref, f"checkpoint from {saver} on 4 -> {n} devices {mode}")


def case_gradplace():
    """A gradient lands on its variable's device, whatever the head (ones as the implicit
    head gradient are made on the head's device, not on the default one)."""
    for f, want in [
        (lambda w: w + 1, 1.0),
        (lambda w: w.sum(), 1.0),
        (lambda w: (w * w).sum(), 2.0),
    ]:
        w = nd.ones((3,), ctx=mx.cpu(2))
        w.attach_grad()
        with autograd.record():
            y = f(w)
        y.backward()
        assert w.grad.context == mx.cpu(2), w.grad.context
        assert list(w.grad._data.devices()) == [jax.devices()[2]]
        np.testing.assert_allclose(w.grad.asnumpy(), np.full(3, want))


def case_fastbatch():
    """compile_step over 2 devices takes split_and_load's sharded batch as is only when
    it is given exactly that batch's pieces (the same arrays, in order, on the mesh's
    devices); reordered pieces, a piece replaced by another array (even of equal values)
    or written in place, pieces of two batches, another device order, another axis and
    an uneven split are assembled from the pieces given (values checked against NumPy).
    Training on the fast path matches training on the whole batch (an NDArray)."""
    import gc
    import weakref

    ctx = _ctx(2)
    rng = np.random.RandomState(3)
    x = rng.randn(8, 10).astype(np.float32)
    y = rng.randint(0, 5, 8).astype(np.float32)
    net = _mlp()
    net.initialize()
    init = [p.data().asnumpy() for p in net.collect_params().values()]
    nets, losses = [], []
    for whole in (False, True):  # split_and_load's pieces (fast path), the whole batch
        net = _build(_mlp, ctx, init)
        tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
        step = tr.compile_step(net, gluon.loss.SoftmaxCrossEntropyLoss())
        for _ in range(3):
            if whole:
                loss = step(nd.array(x), nd.array(y))
            else:
                loss = step(*(gluon.utils.split_and_load(nd.array(a), ctx) for a in (x, y)))
        nets.append([p.data(ctx[1]).asnumpy() for p in net.collect_params().values()])
        losses.append(loss.asnumpy())
    _close(nets[0], nets[1], "compile_step on split_and_load's pieces vs the whole batch")
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-6)

    ms = step.mesh
    xs = gluon.utils.split_and_load(nd.array(x), ctx)
    info = xs[0].__dict__["_sharded_batch"]
    assert all(p.__dict__["_sharded_batch"] is info for p in xs)
    assert ms.batch(xs) is info.whole and ms.batch(tuple(xs)) is info.whole
    np.testing.assert_array_equal(np.asarray(info.whole), x)
    first = weakref.ref(info.whole)

    def assembled(pieces, want, axis=0):
        got = ms.batch(pieces, axis)
        assert got is not first()
        for p in pieces:
            got_info = p.__dict__.get("_sharded_batch")
            assert got_info is None or got is not got_info.whole
        np.testing.assert_array_equal(np.asarray(got), want)

    assembled([xs[1], xs[0]], np.concatenate([x[4:], x[:4]]))  # reordered
    assembled([xs[0], nd.array(x[4:] + 1, ctx=ctx[1])], np.concatenate([x[:4], x[4:] + 1]))
    assembled([xs[0], nd.array(x[4:], ctx=ctx[1])], x)  # equal values, another array
    again = gluon.utils.split_and_load(nd.array(x), ctx)
    assembled([xs[0], again[1]], x)  # pieces of two batches
    again[1][:] = 7  # written in place: the piece now holds another array
    assembled(again, np.concatenate([x[:4], np.full((4, 10), 7, np.float32)]))
    swapped = gluon.utils.split_and_load(nd.array(x), [ctx[1], ctx[0]])
    assert swapped[0].context == ctx[1]
    assembled(swapped, x)  # the mesh's devices in another order
    cols = gluon.utils.split_and_load(nd.array(x), ctx, batch_axis=1)
    assert ms.batch(cols, 1) is cols[0].__dict__["_sharded_batch"].whole
    assembled(cols, np.concatenate([x[:, :5], x[:, 5:]]), axis=0)  # another axis
    uneven = gluon.utils.split_and_load(nd.array(x[:5]), ctx, even_split=False)
    assert [p.shape[0] for p in uneven] == [3, 2]  # numpy.array_split's pieces
    assert all("_sharded_batch" not in p.__dict__ for p in uneven)
    assembled(uneven, x[:5])
    # the pieces keep the sharded batch alive, nothing else does
    del xs, info
    gc.collect()
    assert first() is None
    # the learning rates, weight decays and gradient scale as one input: float32 only
    lrs, wds = jnp.ones(2, jnp.float32), jnp.zeros(2, jnp.float32)
    packed = ms.packed(lrs, wds, jnp.float32(0.5))
    np.testing.assert_array_equal(np.asarray(packed), [1, 1, 0, 0, 0.5])
    assert ms.packed(lrs.astype(jnp.float16), wds, jnp.float32(0.5)) is None


def case_lazysplit():
    """After compile_step over 2 devices every context's array holds its device's piece
    of the new values however it is next used: read, written in place, set_data,
    written directly (``write_values``), copied, or left for the next step while
    another parameter is set; the values follow a pure-JAX SGD reference."""
    import copy

    from gluonjax.gluon._param_array import write_values

    ctx = _ctx(2)
    rng = np.random.RandomState(5)
    x = rng.randn(8, 10).astype(np.float32)
    y = rng.randint(0, 5, 8).astype(np.float32)
    net = _mlp()
    net.initialize()
    w = [jnp.asarray(p.data().asnumpy()) for p in net.collect_params().values()]
    net = _build(_mlp, ctx, [np.asarray(v) for v in w])
    params = list(net.collect_params().values())
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    step = tr.compile_step(net, gluon.loss.SoftmaxCrossEntropyLoss())
    grad = jax.jit(jax.grad(_mlp_loss))

    def both():  # one step of gluonjax and of the reference
        nonlocal w
        step(*(gluon.utils.split_and_load(nd.array(a), ctx) for a in (x, y)))
        g = grad(w, x, y)
        w = [a - 0.1 * b / len(x) for a, b in zip(w, g)]

    def check(what, skip=()):
        for k, p in enumerate(params):
            for c in ctx:
                if (k, c) in skip:
                    continue
                arr = p.data(c)
                assert arr._data.devices() == {c.jax_device}, (what, p.name, c)
                _close([arr.asnumpy()], [np.asarray(w[k])], f"{what}: {p.name} on {c}")

    both()
    both()
    check("read after 2 steps")
    both()
    params[0].data(ctx[1])[:] = 0  # in place, on one context: the other keeps its value
    np.testing.assert_array_equal(params[0].data(ctx[1]).asnumpy(), 0)
    check("in-place write on cpu(1)", skip={(0, ctx[1])})
    params[0].set_data(nd.array(np.asarray(w[0])))
    both()
    new_bias = np.full(5, 0.25, np.float32)
    params[3].set_data(nd.array(new_bias))  # another parameter set while the rest is pending
    w[3] = jnp.asarray(new_bias)
    both()
    check("a step after set_data of one parameter")
    both()
    arrays = params[1]._arrays()
    direct = jax.device_put(np.full(16, 3.0, np.float32), ctx[1].jax_device)
    write_values([arrays[1]], [direct])  # a direct write wins over the pending piece
    np.testing.assert_array_equal(arrays[1].asnumpy(), 3.0)
    _close([arrays[0].asnumpy()], [np.asarray(w[1])], "bias on cpu(0) after a direct write")
    params[1].set_data(nd.array(np.asarray(w[1])))
    both()
    clone = copy.deepcopy(params[2].data(ctx[1]))  # a copy taken while pending
    _close([clone.asnumpy()], [np.asarray(w[2])], "deepcopy")
    check("after the copy")
    both()
    for k, p in enumerate(params):
        got = [d.asnumpy() for d in p.list_data()]
        _close(got, [np.asarray(w[k])] * len(ctx), f"list_data of {p.name}")


def main():
    assert len(jax.devices()) == 4, "run with XLA_FLAGS=--xla_force_host_platform_device_count=4"
    for case in sys.argv[1].split(","):
        if case == "checkpoint":
            case_checkpoint(sys.argv[2])
        else:
            globals()["case_" + case]()
        print("ok", case, flush=True)


if __name__ == "__main__":
    main()
