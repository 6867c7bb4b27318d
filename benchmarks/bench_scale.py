"""Data-parallel step time on 1, 2 and 4 forced CPU devices.

Each device count runs in a fresh process with
``XLA_FLAGS=--xla_force_host_platform_device_count=4`` and a mesh of its first n
devices. Rows: gluonjax's ``Trainer.compile_step`` (the batch's shards from
``split_and_load``), gluonjax's hybridized three-line loop over the shards, and the
baseline, a hand-written ``jax.jit`` SGD step with the parameters replicated and the
batch sharded (``NamedSharding``) over the same mesh, all measured interleaved in the
same process (same MLP 256-128-10, batch 64). An extra row shows that hand-written step
doing what ``compile_step`` must also do: return the per-sample losses and read the
learning rates, weight decays and gradient scale from an input. Target (issue "Scale out"):
compile_step <= 1.1x the hand-written step. Forced CPU devices share the machine's
cores: the rows measure overhead over the same program, not a speed-up.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from .common import Table, compare

BATCH, IN, HID, OUT = 64, 256, 128, 10


def _child(n):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    import gluonjax as mx
    from gluonjax import autograd, gluon, nd

    rs = np.random.RandomState(0)
    xn, yn = rs.randn(BATCH, IN).astype(np.float32), rs.randint(0, OUT, BATCH).astype(np.float32)
    ctx = [mx.cpu(i) for i in range(n)]

    def make():
        net = gluon.nn.HybridSequential()
        net.add(
            gluon.nn.Dense(HID, activation="relu", in_units=IN), gluon.nn.Dense(OUT, in_units=HID)
        )
        net.initialize(mx.init.Xavier(), ctx=ctx)
        net.hybridize()
        return net, gluon.loss.SoftmaxCrossEntropyLoss()

    xs = gluon.utils.split_and_load(nd.array(xn), ctx)
    ys = gluon.utils.split_and_load(nd.array(yn), ctx)

    net1, loss1 = make()
    step = gluon.Trainer(net1.collect_params(), "sgd", {"learning_rate": 0.01}).compile_step(
        net1, loss1
    )

    def fused():
        return step(xs, ys)

    net2, loss2 = make()
    tr2 = gluon.Trainer(net2.collect_params(), "sgd", {"learning_rate": 0.01})

    def loop():
        with autograd.record():
            losses = [loss2(net2(a), b) for a, b in zip(xs, ys)]
        for ls in losses:
            ls.backward()
        tr2.step(BATCH)
        return losses

    mesh = Mesh(np.array(jax.devices()[:n]), ("data",))
    rep, shard = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    w = [p.data(ctx[0]).asnumpy() for p in net1.collect_params().values()]
    state = {"w": jax.device_put([jnp.asarray(a) for a in w], rep)}
    xj, yj = jax.device_put(xn, shard), jax.device_put(yn.astype(np.int32), shard)

    def loss_fn(w, x, y):
        h = jax.nn.relu(x @ w[0].T + w[1])
        logp = jax.nn.log_softmax(h @ w[2].T + w[3])
        return -jnp.sum(jnp.take_along_axis(logp, y[:, None], 1))

    @jax.jit
    def pure_step(w, x, y):
        g = jax.grad(loss_fn)(w, x, y)
        return [a - 0.01 * b / BATCH for a, b in zip(w, g)]

    def pure():
        state["w"] = pure_step(state["w"], xj, yj)
        return state["w"]

    # the same step doing compile_step's extra work: it returns the per-sample losses
    # (``step(x, y) -> loss``) and reads the learning rate, weight decay and gradient
    # scale from an input (they change between steps) instead of baking them in
    def losses_fn(w, x, y):
        h = jax.nn.relu(x @ w[0].T + w[1])
        logp = jax.nn.log_softmax(h @ w[2].T + w[3])
        per = -jnp.take_along_axis(logp, y[:, None], 1)[:, 0]
        return jnp.sum(per), per

    @jax.jit
    def loss_step(w, x, y, hyper):
        g, per = jax.grad(losses_fn, has_aux=True)(w, x, y)
        m = len(w)
        lrs, wds, scale = hyper[:m], hyper[m : 2 * m], hyper[2 * m]
        new = [a - lrs[k] * (b * scale + wds[k] * a) for k, (a, b) in enumerate(zip(w, g))]
        return new, per

    hyper = jax.device_put(np.array([0.01] * 4 + [0.0] * 4 + [1 / BATCH], np.float32), rep)
    state["w2"] = jax.device_put([jnp.asarray(a) for a in w], rep)

    def pure_loss():
        state["w2"], per = loss_step(state["w2"], xj, yj, hyper)
        return state["w2"], per

    # every call waits for its result: XLA:CPU can deadlock with several collective
    # programs over forced CPU devices in flight (the hand-written jit step too), and
    # gluonjax's mesh programs wait on CPU for that reason (gluon/_mesh.py)
    fns = {"pure": pure, "pure_loss": pure_loss, "fused": fused, "loop": loop}
    t = compare(
        {k: (lambda f=f: jax.block_until_ready(_raw(f()))) for k, f in fns.items()},
        n=40,
        rounds=5,
        warmup=5,
    )
    print(json.dumps(t))


def _raw(out):
    """jax arrays of a contender's output (NDArrays unwrapped)."""
    if isinstance(out, (list, tuple)):
        return [_raw(o) for o in out]
    return getattr(out, "_data", out)


def _measure(n):
    env = dict(os.environ, GLUONJAX_COMPILE_NOTICE="0", JAX_PLATFORMS="cpu")
    # 4 CPU devices; XLA aborts a collective whose devices do not all arrive within its
    # timeouts, which a loaded 2-core machine can exceed: give them 10 minutes
    env["XLA_FLAGS"] = (
        env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"
        " --xla_cpu_collective_call_terminate_timeout_seconds=600"
        " --xla_cpu_collective_timeout_seconds=600"
    ).strip()
    cmd = [sys.executable, "-m", "benchmarks.bench_scale", "--child", str(n)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(n=None):
    table = Table(
        "data-parallel step on forced CPU devices (MLP 256-128-10, batch 64, SGD); "
        "baseline: hand-written jax.jit step with NamedSharding over the same mesh"
    )
    for devices in (1, 2, 4):
        t = _measure(devices)
        table.add(f"{devices} device(s): hand-written jax.jit", t["pure"])
        table.add(
            f"{devices} device(s): hand-written, + loss out, lr in", t["pure_loss"], t["pure"]
        )
        table.add(f"{devices} device(s): compile_step", t["fused"], t["pure"], 1.1)
        table.add(f"{devices} device(s): hybridized 3-line loop", t["loop"], t["pure"])
    table.show()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        _child(int(sys.argv[2]))
    else:
        run()
