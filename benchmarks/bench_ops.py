"""Issue "Foundation": eager dispatch of single registry ops vs jax.numpy op by op."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import gluonjax as mx

from .common import Table, compare


def run(n=1000):
    nd = mx.nd
    rng = np.random.RandomState(0)
    t = Table("eager op dispatch (gluonjax.nd vs the same math in jax.numpy, op by op)")
    x = nd.array(rng.randn(32, 256))
    w = nd.array(rng.randn(128, 256))
    b = nd.array(rng.randn(128))
    xr, wr, br = x._data, w._data, b._data
    r = compare(
        {
            "fc": lambda: nd.FullyConnected(x, w, b, num_hidden=128),
            "jfc": lambda: jnp.dot(xr, wr.T) + br,  # what a jax.numpy user writes
            "act": lambda: nd.Activation(x, act_type="relu"),
            "jact": lambda: jnp.maximum(xr, 0),
        },
        n,
    )
    t.add("FullyConnected (32x256 -> 128)", r["fc"], r["jfc"])
    t.add("  jax.numpy: dot + transpose + add", r["jfc"])
    t.add("Activation(relu)", r["act"], r["jact"])
    t.add("  jax.numpy: maximum", r["jact"])
    img = nd.array(rng.randn(8, 3, 28, 28))
    k = nd.array(rng.randn(6, 3, 5, 5))
    kb = nd.array(rng.randn(6))
    ir, kr, kbr = img._data, k._data, kb._data

    def jconv():
        y = jax.lax.conv_general_dilated(
            ir, kr, (1, 1), [(0, 0), (0, 0)], dimension_numbers=("NCHW", "OIHW", "NCHW")
        )
        return y + kbr.reshape(1, -1, 1, 1)

    r = compare(
        {"conv": lambda: nd.Convolution(img, k, kb, kernel=(5, 5), num_filter=6), "jconv": jconv},
        max(n // 4, 10),
    )
    t.add("Convolution (8x3x28x28, 6x5x5)", r["conv"], r["jconv"])
    t.add("  jax: conv_general_dilated + reshape + add", r["jconv"])
    t.show()
    run_max_pool_grad()


def run_max_pool_grad(shape=(32, 64, 112, 112)):
    """ResNet-stem max pooling (3x3, stride 2, pad 1) forward + backward.

    gluonjax: a hybridized ``MaxPool2D`` under ``autograd.record`` + ``backward`` (the
    op's unrolled first-maximum gradient). Baseline: ``jax.jit(jax.grad)`` of
    ``lax.reduce_window`` max (XLA's select_and_scatter), the same gradient.
    """
    nd = mx.nd
    x = nd.array(np.random.RandomState(0).randn(*shape).astype(np.float32))
    x.attach_grad()
    net = mx.gluon.nn.MaxPool2D(3, 2, 1)
    net.hybridize()
    pads = ((0, 0), (0, 0), (1, 1), (1, 1))

    def jax_pool(v):
        return jax.lax.reduce_window(v, -jnp.inf, jax.lax.max, (1, 1, 3, 3), (1, 1, 2, 2), pads)

    jgrad = jax.jit(jax.grad(lambda v: jnp.sum(jax_pool(v))))
    xr = x._data

    def gluon_step():
        with mx.autograd.record():
            y = net(x)
        y.backward()
        return x.grad

    r = compare({"gluon": gluon_step, "jax": lambda: jgrad(xr)}, n=1, rounds=3, warmup=2)
    t = Table(f"max pooling 3x3/2 pad 1 forward + backward on {shape} (CPU)")
    t.add("MaxPool2D hybridized: record + backward", r["gluon"], r["jax"], target=1.0)
    t.add("  jax.grad of lax.reduce_window max", r["jax"])
    t.show()
