"""Issue "Autograd, Trainer": one SGD training step, batch 64, vs pure JAX + optax."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

import gluonjax as mx
from gluonjax import autograd, gluon, nd
from gluonjax.gluon import nn

from ._workloads import gluon_net
from .bench_hybrid import dense
from .common import Table, block, compare

LR = 0.05


def _net(kind):
    """The MLP or LeNet of this bench (one definition, shared with bench_first_step)."""
    return gluon_net(mx, kind)


def _pure_forward(kind):
    def mlp(ps, x):
        for i in range(0, len(ps) - 2, 2):
            x = jnp.maximum(dense(x.reshape(x.shape[0], -1), ps[i], ps[i + 1]), 0)
        return dense(x, ps[-2], ps[-1])

    def conv(x, w, b):
        y = jax.lax.conv_general_dilated(
            x, w, (1, 1), "VALID", dimension_numbers=("NCHW", "OIHW", "NCHW")
        )
        return jnp.maximum(y + b.reshape(1, -1, 1, 1), 0)

    def pool(x):
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def lenet(ps, x):
        x = pool(conv(x, ps[0], ps[1]))
        x = pool(conv(x, ps[2], ps[3]))
        return mlp(ps[4:], x)

    return mlp if kind == "mlp" else lenet


def _pure_step(kind, params):
    fwd = _pure_forward(kind)
    tx = optax.sgd(LR)
    state = tx.init(params)

    def loss_fn(ps, x, y):
        logp = jax.nn.log_softmax(fwd(ps, x))
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None].astype(jnp.int32), 1))

    @jax.jit
    def step(ps, st, x, y):
        g = jax.grad(loss_fn)(ps, x, y)
        upd, st = tx.update(g, st, ps)
        return optax.apply_updates(ps, upd), st

    box = [params, state]

    def run(x, y):
        box[0], box[1] = step(box[0], box[1], x, y)
        return box[0]

    return run


def _step_fn(mode, net, tr, loss_fn, x, y):
    if mode == "fused":
        step = tr.compile_step(net, loss_fn)
        return lambda: step(x, y)

    def loop():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        tr.step(64)
        return loss

    if mode != "no_defer":
        return loop

    def no_defer():  # the same loop with deferred execution switched off
        old = autograd.set_deferral(False)
        try:
            return loop()
        finally:
            autograd.set_deferral(old)

    return no_defer


def _row(t, kind, n):
    rng = np.random.RandomState(0)
    shape = (64, 512) if kind == "mlp" else (64, 1, 28, 28)
    X = rng.randn(*shape).astype(np.float32)
    Y = rng.randint(0, 10, 64).astype(np.float32)
    x, y = nd.array(X), nd.array(Y)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    steps = {}
    for mode in ("eager", "hybrid", "no_defer", "fused"):
        mx.random.seed(0)
        net = _net(kind)
        net.initialize(mx.init.Xavier())
        if mode != "eager":
            net.hybridize()
        net(x)
        tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": LR})
        steps[mode] = _step_fn(mode, net, tr, loss_fn, x, y)
        params = [p.data()._data for p in net.collect_params().values()]
    pure = _pure_step(kind, params)
    xr, yr = x._data, y._data
    block(pure(xr, yr))
    steps["pure"] = lambda: pure(xr, yr)
    results = compare(steps, n, rounds=5, warmup=5)
    base = results["pure"]
    name = "MLP 512-256-128-10" if kind == "mlp" else "LeNet 1x28x28"
    t.add(f"{name}: pure JAX + optax jit step", base)
    t.add(f"{name}: Gluon loop eager", results["eager"], base)
    t.add(f"{name}: Gluon loop hybridized", results["hybrid"], base, 1.15)
    t.add(f"{name}: fused compile_step", results["fused"], base, 1.05)
    t.add(
        f"{name}: hybridized, deferral off",
        results["no_defer"],
        base,
        note=f"(deferral on / off: {results['hybrid'] / results['no_defer']:.2f}x)",
    )


def run(n=1000):
    t = Table("training step, SGD, batch 64 (ratio vs pure JAX + optax in the same run)")
    _row(t, "mlp", max(n // 5, 20))
    if hasattr(nn, "Conv2D"):
        _row(t, "lenet", max(n // 20, 10))
    t.show()
    eager_vs_mxnet(max(n // 20, 10))


# The LeNet of the Gluon tutorials as a user HybridBlock (hybrid_forward), run eagerly: the
# same source for gluonjax and MXNet (``mx`` is whichever library runs it).
LENET_SRC = """
class LeNet(mx.gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        nn = mx.gluon.nn
        with self.name_scope():
            self.conv1 = nn.Conv2D(6, kernel_size=5, activation="relu")
            self.pool1 = nn.MaxPool2D(pool_size=2)
            self.conv2 = nn.Conv2D(16, kernel_size=5, activation="relu")
            self.pool2 = nn.MaxPool2D(pool_size=2)
            self.fc1 = nn.Dense(120, activation="relu")
            self.fc2 = nn.Dense(84, activation="relu")
            self.fc3 = nn.Dense(10)

    def hybrid_forward(self, F, x):
        x = self.pool2(self.conv2(self.pool1(self.conv1(x))))
        return self.fc3(self.fc2(self.fc1(F.flatten(x))))


def eager_loop(n, rounds):
    import time
    import numpy as np
    rng = np.random.RandomState(0)
    x = mx.nd.array(rng.randn(64, 1, 28, 28).astype(np.float32))
    y = mx.nd.array(rng.randint(0, 10, 64).astype(np.float32))
    net = LeNet()
    net.initialize(mx.init.Xavier())
    tr = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05})
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()

    def step():
        with mx.autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        tr.step(64)
        return loss

    for _ in range(5):
        step().wait_to_read()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            loss = step()
        loss.wait_to_read()
        best = min(best, (time.perf_counter() - t0) / n)
    return best
"""


def eager_vs_mxnet(n, rounds=5):
    """The eager three-line loop on the tutorial LeNet: gluonjax against real MXNet 1.9.1."""
    from .common import mxnet_seconds

    scope = {"mx": mx}
    exec(LENET_SRC, scope)  # noqa: S102 - our own benchmark source, shared with MXNet's run
    ours = scope["eager_loop"](n, rounds)
    theirs = mxnet_seconds(LENET_SRC + f"\nprint(eager_loop({n}, {rounds}))\n")
    t = Table("eager three-line loop, LeNet as a user HybridBlock, SGD, batch 64")
    if theirs is None:
        t.add("MXNet 1.9.1 eager loop", float("nan"), note="(.venv-mxnet not installed)")
        t.add("gluonjax eager loop", ours)
    else:
        t.add("MXNet 1.9.1 eager loop", theirs)
        t.add("gluonjax eager loop", ours, theirs)
    t.show()
