"""Small nets used by the export tests, each with a NumPy reference forward."""

from __future__ import annotations

import numpy as np

import gluonjax as mx
from gluonjax.gluon import nn


def _p(layer, name):
    return getattr(layer, name).data().asnumpy().astype(np.float64)


# ----------------------------------------------------------------------------- MLP (seed 000)
def mlp(in_units=0):
    net = nn.HybridSequential()
    net.add(
        nn.Dense(16, activation="relu", in_units=in_units),
        nn.Dense(8, activation="relu"),
        nn.Dense(2),
    )
    net.initialize(mx.init.Normal(0.5))
    return net


def mlp_ref(net, x):
    h = np.asarray(x, np.float64)
    for i, layer in enumerate(net._children.values()):
        h = h @ _p(layer, "weight").T + _p(layer, "bias")
        if i < 2:
            h = np.maximum(h, 0)
    return h


# ----------------------------------------------------------------------------- conv net
def convnet():
    net = nn.HybridSequential()
    net.add(
        nn.Conv2D(3, 3, in_channels=2),
        nn.BatchNorm(in_channels=3),
        nn.Activation("relu"),
        nn.MaxPool2D(),
        nn.Flatten(),
        nn.Dropout(0.5),
        nn.Dense(4, in_units=3 * 2 * 2),
    )
    net.initialize(mx.init.Normal(0.5))
    bn = net[1]
    bn.running_mean.set_data(mx.nd.array([0.1, -0.2, 0.3]))
    bn.running_var.set_data(mx.nd.array([1.5, 0.5, 2.0]))
    bn.gamma.set_data(mx.nd.array([1.2, 0.8, -1.0]))
    bn.beta.set_data(mx.nd.array([0.0, 0.1, -0.1]))
    return net


def convnet_ref(net, x):
    conv, bn, _, _, _, _, dense = list(net._children.values())
    x = np.asarray(x, np.float64)
    w, b = _p(conv, "weight"), _p(conv, "bias")
    n, _, hh, ww = x.shape
    oh, ow = hh - 2, ww - 2
    y = np.zeros((n, w.shape[0], oh, ow))
    for i in range(oh):
        for j in range(ow):
            y[:, :, i, j] = np.einsum("nchw,ochw->no", x[:, :, i : i + 3, j : j + 3], w) + b
    mean, var = _p(bn, "running_mean"), _p(bn, "running_var")
    gamma, beta = _p(bn, "gamma"), _p(bn, "beta")
    y = (y - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-5)
    y = np.maximum(y * gamma[:, None, None] + beta[:, None, None], 0)
    y = (
        y[:, :, : oh // 2 * 2, : ow // 2 * 2]
        .reshape(n, -1, oh // 2, 2, ow // 2, 2)
        .max(axis=(3, 5))
    )
    y = y.reshape(n, -1)
    return y @ _p(dense, "weight").T + _p(dense, "bias")


# ------------------------------------------------------------------ elemwise / Concat / clip
class Mixer(nn.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.a = nn.Dense(5, in_units=4)
            self.b = nn.Dense(5, in_units=4)

    def hybrid_forward(self, F, x):
        s = F.elemwise_add(self.a(x), self.b(x))
        c = F.Concat(s, F.clip(x, -0.5, 0.5), dim=1)
        return F.relu(c) * 2.0 + 1.0


def mixer():
    net = Mixer()
    net.initialize(mx.init.Normal(0.5))
    return net


def mixer_ref(net, x):
    x = np.asarray(x, np.float64)
    s = (
        x @ _p(net.a, "weight").T
        + _p(net.a, "bias")
        + x @ _p(net.b, "weight").T
        + _p(net.b, "bias")
    )
    c = np.concatenate([s, np.clip(x, -0.5, 0.5)], axis=1)
    return np.maximum(c, 0) * 2.0 + 1.0


# ------------------------------------------------------------------ Gluon-2 jax.numpy block
class JnpBlock(nn.HybridBlock):
    """A Gluon-2 style forward with plain jax.numpy code around a Dense layer."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.fc = nn.Dense(6, in_units=4)

    def forward(self, x):
        import jax
        import jax.numpy as jnp

        h = jnp.asarray(self.fc(x))
        h = jnp.tanh(h) * 0.5 + jax.nn.sigmoid(h) - jnp.exp(-jnp.abs(h))
        h = h.reshape(h.shape[0], 2, 3).transpose(0, 2, 1)
        m = jnp.max(h, axis=2, keepdims=True)
        h = jnp.concatenate([h - m, jnp.sqrt(jnp.square(h) + 1.0)], axis=2)
        h = jnp.where(h > 0.1, h, h**2)
        return h.sum(axis=1) / jnp.asarray([1.0, 2.0, 3.0, 4.0], h.dtype)


def jnp_block():
    net = JnpBlock()
    net.initialize(mx.init.Normal(0.5))
    return net


def jnp_block_ref(net, x):
    x = np.asarray(x, np.float64)
    h = x @ _p(net.fc, "weight").T + _p(net.fc, "bias")
    h = np.tanh(h) * 0.5 + 1 / (1 + np.exp(-h)) - np.exp(-np.abs(h))
    h = h.reshape(h.shape[0], 2, 3).transpose(0, 2, 1)
    m = h.max(axis=2, keepdims=True)
    h = np.concatenate([h - m, np.sqrt(h * h + 1.0)], axis=2)
    h = np.where(h > 0.1, h, h**2)
    return h.sum(axis=1) / np.array([1.0, 2.0, 3.0, 4.0])


NETS = {
    "mlp": (mlp, mlp_ref, (3, 10)),
    "convnet": (convnet, convnet_ref, (2, 2, 6, 6)),
    "mixer": (mixer, mixer_ref, (3, 4)),
}
