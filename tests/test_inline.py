"""gluonjax._inline: a traced program evaluated with its plain nested jit calls inlined
gives the values and gradients of ``jaxpr_as_fun`` (the reference), and keeps the calls
that carry more than their program."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import jaxpr_as_fun
from jax.sharding import NamedSharding, PartitionSpec

from gluonjax._inline import inline_fun
from gluonjax._ops.registry import get


def _prims(closed_or_jaxpr):
    jaxpr = getattr(closed_or_jaxpr, "jaxpr", closed_or_jaxpr)
    return [e.primitive.name for e in jaxpr.eqns]


def _kernel(name, **attrs):
    op = get(name)
    return op.kernel(op.parse_attrs(attrs)[0])


def test_values_and_gradients_match_jaxpr_as_fun():
    # registry kernels (named jits) with custom_jvp (relu at 0) and custom_vjp (max
    # pooling ties) inside, and jnp functions (jits of their own)
    conv = _kernel("Convolution", kernel=(3, 3), num_filter=4, no_bias=True)
    relu = _kernel("Activation", act_type="relu")
    pool = _kernel("Pooling", kernel=(2, 2), stride=(2, 2), pool_type="max")
    dense = _kernel("FullyConnected", num_hidden=3, no_bias=True)

    def prog(w, v, x):
        y = dense(pool(relu(conv(x, w))), v)
        return jnp.sum(jax.nn.log_softmax(y) * 2)

    rs = np.random.RandomState(0)
    x = rs.randn(2, 1, 8, 8).astype(np.float32)
    x[0, 0, :5] = 0.0  # exact zeros (relu's kink) and ties in the pooling windows
    w, v = rs.randn(4, 1, 3, 3).astype(np.float32), rs.randn(3, 36).astype(np.float32)
    closed = jax.make_jaxpr(prog)(w, v, x)
    assert "jit" in _prims(closed)
    ref, flat = jaxpr_as_fun(closed), inline_fun(closed)
    np.testing.assert_array_equal(np.asarray(flat(w, v, x)[0]), np.asarray(ref(w, v, x)[0]))
    g_ref = jax.grad(lambda *a: ref(*a)[0], argnums=(0, 1, 2))(w, v, x)
    g_flat = jax.grad(lambda *a: flat(*a)[0], argnums=(0, 1, 2))(w, v, x)
    for a, b in zip(g_flat, g_ref):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-7)
    # and the same as the program itself (no trace at all)
    np.testing.assert_allclose(np.asarray(flat(w, v, x)[0]), np.asarray(prog(w, v, x)), rtol=1e-6)
    assert "jit" not in _prims(jax.make_jaxpr(flat)(w, v, x))


def test_calls_with_shardings_or_donation_are_kept():
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("d",))
    pinned = jax.jit(lambda v: v * 2, out_shardings=NamedSharding(mesh, PartitionSpec()))
    donating = jax.jit(lambda v: v + 1, donate_argnums=0)
    plain = jax.jit(lambda v: v - 1)
    closed = jax.make_jaxpr(lambda v: plain(donating(pinned(v))))(jnp.ones(3))
    flat = inline_fun(closed)
    assert _prims(jax.make_jaxpr(flat)(jnp.ones(3))) == ["jit", "jit", "sub"]
    np.testing.assert_array_equal(np.asarray(flat(jnp.arange(3.0))[0]), [0.0, 2.0, 4.0])
