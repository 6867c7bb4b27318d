"""Eager ops on size classes (gluonjax/_ops/buckets.py), tested differentially: the
size-class path against the op's exact-shape kernel (elementwise ops bit for bit,
reductions within rounding, checked against float64), gradients against plain
``jax.grad``, and the persistent store across processes."""

from __future__ import annotations

import contextlib
import json
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gluonjax as mx
from gluonjax._ops import buckets
from gluonjax._ops import registry as reg
from tests.ops.eager_process import run_script

RNG = np.random.RandomState(7)
SHAPES = [(1,), (7,), (3, 5), (40, 25), (1025,), (2, 3, 171), (65, 64)]

# ops that need attributes, and inputs in their domain
ATTRS = {
    "Cast": {"dtype": "float16"},
    "Activation": {"act_type": "softrelu"},
    "clip": {"a_min": -0.3, "a_max": 0.4},
    "smooth_l1": {"scalar": 0.7},
}
POSITIVE = {"log", "log2", "log10", "log1p", "sqrt", "rsqrt", "gammaln", "gamma", "rcbrt",
            "reciprocal", "_power", "broadcast_power", "_power_scalar", "_rpower_scalar",
            "arccosh", "_rdiv_scalar"}  # fmt: skip
UNIT = {"arcsin", "arccos", "arctanh", "erfinv"}


def _ops(kind):
    seen, out = set(), []
    for _name, op in reg.items():
        b = op.bucket
        if op in seen or b is None or (b[0] if isinstance(b, tuple) else b) != kind:
            continue
        seen.add(op)
        out.append(op.name)
    return sorted(out)


def _data(name, shape, dtype):
    x = RNG.standard_normal(shape)
    if name in POSITIVE or name.startswith("_mod") or name.startswith("_rmod"):
        x = np.abs(x) + 0.5
    if name in UNIT:
        x = np.tanh(x) * 0.9
    if name == "arccosh":
        x = x + 1.0
    if np.issubdtype(dtype, np.integer):
        x = np.round(x * 5) + (10 if name in POSITIVE or "mod" in name or "div" in name else 0)
    return jnp.asarray(x.astype(dtype))


def _both(op, attrs, arrays):
    """(size-class result, exact-kernel result) of one call."""
    static_key, dyn = op.parse_attrs(attrs)
    args = list(arrays) + list(dyn)
    p = buckets.plan(op, static_key, args, len(arrays))
    assert p is not None, f"{op.name} did not take the size-class path"
    got = np.asarray(buckets.forward(p))
    want = np.asarray(op.kernel(static_key)(*args))
    assert got.shape == want.shape and got.dtype == want.dtype, op.name
    return got, want


# XLA:CPU computes transcendental functions (exp, log, arctan...) in a loop's scalar
# remainder (the last n mod vector-width elements of an exact-shape program) 1-2 ulp away
# from its vector body for some inputs: the exact program disagrees with itself (test
# below). A size class is a multiple of the vector width, so it gives every element the
# vector body's value. Correctly rounded ops have one answer: equal bit for bit.
_IEEE_PARTS = ("add", "sub", "plus", "minus", "mul", "div", "maximum", "minimum", "equal",
               "greater", "lesser", "logical", "mod")  # fmt: skip
_IEEE = {"negative", "abs", "square", "sqrt", "floor", "ceil", "trunc", "round", "rint", "fix",
         "sign", "clip", "where", "Cast", "relu", "zeros_like", "ones_like", "_copy",
         "BlockGrad", "reciprocal", "degrees", "radians"}  # fmt: skip


def _correctly_rounded(name):
    return name in _IEEE or any(part in name for part in _IEEE_PARTS)


def _vector_body(op, attrs, arrays):
    """The exact kernel on the inputs laid out in a length that is a multiple of 256:
    another exact-shape program, whose vector body computes every element."""
    static_key, dyn = op.parse_attrs(attrs)
    out_shape = np.broadcast_shapes(*[a.shape for a in arrays])
    n = int(np.prod(out_shape))
    m = -(-n // 256) * 256
    flat = []
    for a in arrays:
        buf = np.ones(m, np.asarray(a).dtype)
        buf[:n] = np.broadcast_to(np.asarray(a), out_shape).reshape(-1)
        flat.append(jnp.asarray(buf))
    res = np.asarray(op.kernel(static_key)(*flat, *dyn))
    return res[:n].reshape(out_shape)


def test_xla_exact_programs_depend_on_the_position():
    x = np.full(1027, 1.0281718, np.float32)
    y = np.asarray(jax.jit(jnp.arctan)(x))
    assert len(set(y.tolist())) == 2  # one value in the vector body, another in the tail
    assert len(set(y[:1024].tolist())) == 1


@pytest.mark.parametrize("name", _ops("map"))
def test_map_ops_equal_bit_for_bit(name):
    op = reg.get(name)
    n_in = len(op.input_names(op.attr_dict(op.parse_attrs(ATTRS.get(name, {}))[0])))
    dtypes = [np.float32, np.float16]
    if name.startswith("_") and "scalar" in name or name in ("negative", "abs", "square"):
        dtypes.append(np.int32)
    attrs = dict(ATTRS.get(name, {}))
    if "scalar" in op.attrs and "scalar" not in attrs:
        attrs["scalar"] = 1.7 if name not in ("_rpower_scalar",) else 1.3
    for dtype in dtypes:
        for shape in SHAPES:
            arrays = [_data(name, shape, dtype) for _ in range(n_in)]
            if name == "where":
                arrays[0] = jnp.asarray((RNG.rand(*shape) > 0.5).astype(dtype))
            got, want = _both(op, attrs, arrays)
            msg = f"{name} {dtype} {shape}"
            np.testing.assert_array_equal(got, _vector_body(op, attrs, arrays), err_msg=msg)
            if _correctly_rounded(name) or got.dtype.kind != "f":
                np.testing.assert_array_equal(got, want, err_msg=msg)
            else:
                np.testing.assert_array_max_ulp(got, want, maxulp=2)


@pytest.mark.parametrize("name", _ops("broadcast"))
def test_broadcast_ops_equal_bit_for_bit(name):
    op = reg.get(name)
    pairs = [((3, 1, 5), (4, 1)), ((7,), (1,)), ((2, 3), (2, 3)), ((1, 40), (33, 1)),
             ((5, 1, 1), (1, 6, 7))]  # fmt: skip
    for a, b in pairs:
        x, y = _data(name, a, np.float32), _data(name, b, np.float32)
        got, want = _both(op, {}, [x, y])
        np.testing.assert_array_equal(got, _vector_body(op, {}, [x, y]), err_msg=name)
        if _correctly_rounded(name):
            np.testing.assert_array_equal(got, want, err_msg=f"{name} {a} {b}")
        else:
            np.testing.assert_array_max_ulp(got, want, maxulp=2)


REDUCE_CASES = [
    ((40, 25), {}),
    ((40, 25), {"axis": 0}),
    ((40, 25), {"axis": -1, "keepdims": True}),
    ((3, 17, 9), {"axis": (1, 2)}),
    ((3, 17, 9), {"axis": 1}),
    ((3, 17, 9), {"axis": 0, "exclude": True}),
    ((1000,), {"axis": 0}),
    ((5, 1, 300), {"axis": 2}),
    ((3, 4, 5, 6), {"axis": (0, 2)}),  # axes apart: moved together on the host
    ((3, 4, 5, 6), {"axis": (1, 3), "keepdims": True}),
    ((3, 4, 5, 6), {"axis": (1, 3), "exclude": True}),
]


@pytest.mark.parametrize("name", _ops("reduce"))
def test_reductions_within_rounding(name):
    op = reg.get(name)
    for shape, attrs in REDUCE_CASES:
        if name == "norm":
            attrs = {k: v for k, v in attrs.items() if k != "exclude"}
        for dtype in (np.float32, np.float16, np.int32):
            if dtype == np.int32 and name in ("mean", "norm"):
                continue
            x = _data(name, shape, dtype)
            if name in ("prod", "nanprod"):
                x = jnp.asarray((1 + 0.01 * RNG.standard_normal(shape)).astype(dtype))
                if dtype == np.int32:
                    x = jnp.asarray(RNG.choice([1, -1, 2], size=shape).astype(dtype))
            got, want = _both(op, attrs, [x])
            # the float64 answer: both must be within rounding of it
            ref = np.asarray(op.kernel(op.parse_attrs(attrs)[0])(np.asarray(x, np.float64)))
            if name in ("max", "min") or dtype == np.int32:
                np.testing.assert_array_equal(got, want, err_msg=f"{name} {shape} {attrs}")
                continue
            eps = np.finfo(dtype).eps
            n = np.prod(shape)
            scale = np.abs(ref) + 1.0
            for label, v in (("size class", got), ("exact", want)):
                err = np.max(np.abs(v.astype(np.float64) - ref) / scale)
                assert err <= 4 * eps * np.sqrt(n), (name, label, shape, attrs, dtype, err)


def test_shapes_the_classes_do_not_take_keep_exact_shapes():
    add = reg.get("elemwise_add")
    x, y = jnp.ones((3, 4)), jnp.ones((4, 3))
    sk, _ = add.parse_attrs({})
    assert buckets.plan(add, sk, [x, y], 2) is None  # the exact kernel raises the error
    with pytest.raises(mx.base.MXNetError, match="elemwise_add"):
        mx.nd.elemwise_add(mx.nd.ones((3, 4)), mx.nd.ones((4, 3)))
    assert buckets.plan(add, add.parse_attrs({})[0], [jnp.zeros((0, 3))] * 2, 2) is None
    b = jnp.asarray(np.array([True, False]))
    assert buckets.plan(reg.get("logical_not"), (), [b], 1) is None  # bool: exact shapes


def test_through_nd_and_hot_shapes_get_their_program():
    x = mx.nd.array(RNG.rand(37, 11))
    before = buckets.stats()["runs"]
    want = np.exp(x.asnumpy().astype(np.float64))
    for _ in range(buckets.HOT + 3):
        got = mx.nd.exp(x).asnumpy()
        np.testing.assert_allclose(got, want, rtol=2e-7)
    runs = buckets.stats()["runs"] - before
    assert runs == buckets.HOT  # the calls after HOT run the exact kernel


def test_hybridized_blocks_keep_exact_shapes():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(3))
    net.initialize()
    net.hybridize()
    x = mx.nd.array(RNG.rand(5, 4))
    net(x).wait_to_read()
    before = buckets.stats()["runs"]
    y = net(mx.nd.array(RNG.rand(6, 4)))  # a new shape: traced, exact
    assert y.shape == (6, 3)
    assert buckets.stats()["runs"] == before


@pytest.mark.parametrize("name, attrs", [("sum", {"axis": 1}), ("prod", {"axis": (0, 2)}),
                                         ("max", {"axis": 0, "keepdims": True}),
                                         ("nansum", {"axis": 1, "exclude": True})])  # fmt: skip
def test_a_reduction_family_with_a_host_program_runs_without_a_plan(name, attrs, monkeypatch):
    # once the family's generic program exists, a new shape runs it on the (outer, reduced,
    # inner) view directly: the plan path's values bit for bit
    op = reg.get(name)
    static_key, _ = op.parse_attrs(attrs)
    first = jnp.asarray(RNG.standard_normal((4, 5, 6)).astype(np.float32))
    buckets.forward(buckets.plan(op, static_key, [first], 1))  # makes the family's program
    plans = []
    real_plan = buckets.plan
    monkeypatch.setattr(buckets, "plan", lambda *a: plans.append(a) or real_plan(*a))
    for shape in [(3, 7, 2), (9, 1, 4), (2, 30, 3)]:
        x = jnp.asarray(RNG.standard_normal(shape).astype(np.float32))
        got = buckets.run(op, static_key, [x], 1)
        assert got is not None and not plans
        want = buckets.forward(real_plan(op, static_key, [x], 1))
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        exact = np.asarray(op.kernel(static_key)(x))
        assert got.shape == exact.shape
        np.testing.assert_allclose(np.asarray(got), exact, rtol=1e-6, atol=1e-6)


# (op, lhs shape, rhs shape, transpose_a, transpose_b)
PRODUCTS = [
    ("batch_dot", (2, 3, 4), (2, 4, 5), False, False),
    ("batch_dot", (2, 4, 3), (2, 4, 5), True, False),
    ("batch_dot", (3, 2, 3, 4), (3, 2, 5, 4), False, True),
    ("batch_dot", (1, 7, 19), (1, 5, 7), True, True),
    ("dot", (3, 4), (4, 5), False, False),
    ("dot", (4, 3), (4, 5), True, False),
    ("dot", (3, 40), (5, 40), False, True),
    ("dot", (7,), (7, 3), False, False),
    ("dot", (2, 3, 4), (4, 6), False, False),
    ("dot", (4, 2, 3), (5, 6, 4), True, True),
    ("dot", (6, 4), (4,), False, False),
]


@pytest.mark.parametrize("case", PRODUCTS, ids=lambda c: f"{c[0]}{c[1]}{c[2]}{c[3]:d}{c[4]:d}")
def test_products_within_rounding_with_their_gradients(case):
    # dot and batch_dot pad every axis with zeros to its class: the exact program's values
    # within rounding (the sums may add in another order), checked against float64, with
    # the gradients of both inputs
    name, sa, sb, ta, tb = case
    op = reg.get(name)
    av, bv = RNG.standard_normal(sa).astype(np.float32), RNG.standard_normal(sb).astype(np.float32)
    a, b = mx.nd.array(av), mx.nd.array(bv)
    a.attach_grad()
    b.attach_grad()
    before = buckets.stats()["runs"]
    with mx.autograd.record():
        c = getattr(mx.nd, name)(a, b, transpose_a=ta, transpose_b=tb)
    assert buckets.stats()["runs"] == before + 1 and c._node[0].kind.name == "BUCKET"
    head = RNG.standard_normal(c.shape).astype(np.float32)
    c.backward(mx.nd.array(head))
    exact = np.asarray(op.kernel((ta, tb, None))(jnp.asarray(av), jnp.asarray(bv)))
    assert c.shape == exact.shape and c.dtype == exact.dtype
    f = op.bound((ta, tb, None))
    with jax.enable_x64(True):
        want, pull = jax.vjp(f, jnp.asarray(av, jnp.float64), jnp.asarray(bv, jnp.float64))
        ga, gb = (np.asarray(g) for g in pull(jnp.asarray(head, jnp.float64)))
    np.testing.assert_allclose(c.asnumpy(), np.asarray(want), rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(exact, np.asarray(want), rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(a.grad.asnumpy(), ga, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(b.grad.asnumpy(), gb, rtol=2e-6, atol=2e-6)


def test_products_share_one_program_per_class():
    before = buckets.stats()["host"] + buckets.stats()["compiled"]
    for m, k, n in [(3, 5, 2), (9, 11, 14), (1, 16, 7), (16, 1, 1)]:
        a = mx.nd.array(RNG.standard_normal((2, m, k)).astype(np.float32))
        b = mx.nd.array(RNG.standard_normal((2, k, n)).astype(np.float32))
        want = np.einsum("bmk,bkn->bmn", a.asnumpy().astype(np.float64), b.asnumpy())
        np.testing.assert_allclose(mx.nd.batch_dot(a, b).asnumpy(), want, rtol=2e-6, atol=2e-6)
    assert buckets.stats()["host"] + buckets.stats()["compiled"] - before <= 1


def test_a_large_product_keeps_its_sizes():
    # past _CONTRACT_MAX padded multiply-adds, no padding: the class is the shape
    a = mx.nd.array(RNG.standard_normal((130, 129)).astype(np.float32))
    b = mx.nd.array(RNG.standard_normal((129, 140)).astype(np.float32))
    static_key, _ = reg.get("dot").parse_attrs({})
    p = buckets.plan(reg.get("dot"), static_key, [a._data, b._data], 2)
    assert p.specs[0][0] == (130, 129) and p.specs[1][0] == (129, 140)
    want = a.asnumpy().astype(np.float64) @ b.asnumpy().astype(np.float64)
    np.testing.assert_allclose(mx.nd.dot(a, b).asnumpy(), want, rtol=1e-5, atol=1e-5)


def test_product_errors_stay_the_ops():
    a, b = mx.nd.ones((2, 3, 4)), mx.nd.ones((2, 5, 4))
    with pytest.raises(mx.base.MXNetError, match="batch_dot"):
        mx.nd.batch_dot(a, b)
    with pytest.raises(mx.base.MXNetError, match="dot"):
        mx.nd.dot(mx.nd.ones((3, 4)), mx.nd.ones((5, 6)))


# ----------------------------------------------------------------------------- autograd
def _ref_grads(fn, *vals):
    return jax.grad(lambda *a: jnp.sum(fn(*a)), argnums=tuple(range(len(vals))))(*vals)


def test_recorded_ops_on_size_classes_match_jax_grad():
    shapes = [((13, 7), (7,)), ((3, 5, 6), (5, 6)), ((29,), (29,))]
    for sx, sy in shapes:
        xv, yv = RNG.rand(*sx).astype(np.float32), RNG.rand(*sy).astype(np.float32)
        x, y = mx.nd.array(xv), mx.nd.array(yv)
        x.attach_grad()
        y.attach_grad()
        with mx.autograd.record():
            z = mx.nd.broadcast_mul(x, y) - x
            z = mx.nd.clip(mx.nd.exp(z), 0.6, 1.2) * 3.0
            w = mx.nd.sum(z, axis=0)
            kind = w._node[0].kind
        w.backward()
        assert kind.name == "BUCKET"

        def ref(a, b):
            z = jnp.clip(jnp.exp(a * b - a), 0.6, 1.2) * 3.0
            return jnp.sum(z, axis=0)

        gx, gy = _ref_grads(ref, jnp.asarray(xv), jnp.asarray(yv))
        np.testing.assert_allclose(x.grad.asnumpy(), gx, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(y.grad.asnumpy(), gy, rtol=1e-5, atol=1e-5)


def test_recorded_reduction_over_axes_apart():
    xv = RNG.rand(3, 4, 5, 2).astype(np.float32)
    x = mx.nd.array(xv)
    x.attach_grad()
    head = RNG.rand(4, 2).astype(np.float32)
    with mx.autograd.record():
        y = mx.nd.sum(x * x, axis=(0, 2))
        assert y._node[0].kind.name == "BUCKET"
    y.backward(mx.nd.array(head))
    np.testing.assert_allclose(y.asnumpy(), (xv * xv).sum(axis=(0, 2)), rtol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * xv * head[None, :, None, :], rtol=1e-6)


def test_recorded_max_mean_and_head_gradient():
    xv = RNG.rand(6, 9).astype(np.float32)
    xv[2, 3] = xv[2, 4] = 5.0  # a tie: both get the gradient, as in MXNet
    x = mx.nd.array(xv)
    x.attach_grad()
    head = RNG.rand(6).astype(np.float32)
    with mx.autograd.record():
        m = mx.nd.max(x, axis=1) + mx.nd.mean(x, axis=1)
    m.backward(mx.nd.array(head))
    want = np.where(xv == xv.max(axis=1, keepdims=True), 1.0, 0.0) * head[:, None]
    want = want + head[:, None] / 9.0
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-6)


def test_reduction_vjps_run_one_host_program_per_family():
    # a reduction's VJP spreads the cotangent over the reduced axis: on the host it runs
    # on the unpadded (outer, reduced, inner) view, one program for every class
    cases = [("sum", {"axis": 0}), ("mean", {"axis": 1}), ("max", {"axis": 1}),
             ("sum", {"axis": (0, 2), "keepdims": True}),
             ("min", {"axis": 1, "exclude": True})]  # fmt: skip
    shapes = [(3, 40, 5), (17, 3, 2), (70, 9, 1), (2, 2, 300), (33, 65, 4)]
    for name, attrs in cases:
        before = buckets.stats()
        for shape in shapes:
            xv = RNG.standard_normal(shape).astype(np.float32)
            x = mx.nd.array(xv)
            x.attach_grad()
            with mx.autograd.record():
                y = getattr(mx.nd, name)(x, **attrs)
            head = RNG.standard_normal(y.shape).astype(np.float32)
            y.backward(mx.nd.array(head))
            axis = attrs["axis"]
            if attrs.get("exclude"):
                axis = tuple(k for k in range(3) if k not in (axis,))

            def f(v, name=name, axis=axis, keep=attrs.get("keepdims", False)):
                fn = {"sum": jnp.sum, "mean": jnp.mean, "max": jnp.max, "min": jnp.min}[name]
                return fn(v, axis=axis, keepdims=keep)

            _, pull = jax.vjp(f, jnp.asarray(xv))
            (want,) = pull(jnp.asarray(head))
            if name in ("max", "min"):  # ties share the gradient in MXNet, as here
                m = f(jnp.asarray(xv))
                hit = xv == np.asarray(jnp.expand_dims(m, axis) if not attrs.get("keepdims") else m)
                want = np.where(hit, np.expand_dims(head, axis), 0.0)
            np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-6, err_msg=f"{name} {shape}")
        made = buckets.stats()["host"] - before["host"]
        assert made <= 2, (name, attrs, made)  # the forward and the VJP: no program per class


def _count_puts(monkeypatch):
    puts = []
    put = buckets.to_device

    def counted(h, checked=False):
        puts.append(np.shape(h))
        return put(h, checked)

    monkeypatch.setattr(buckets, "to_device", counted)
    return puts


def test_cotangents_stay_on_the_host_between_size_class_vjps(monkeypatch):
    # x is read by three ops (its cotangents add on the host); only the two gradients
    # are put on the device, and they equal jax's op-by-op VJP bit for bit
    xv, yv = RNG.standard_normal((7, 9)).astype(np.float32), RNG.rand(7, 9).astype(np.float32)
    x, y = mx.nd.array(xv), mx.nd.array(yv)
    x.attach_grad()
    y.attach_grad()
    with mx.autograd.record():
        z = ((x + y) * x - x) * 0.5
    puts = _count_puts(monkeypatch)
    z.backward()
    assert z._node is None or z._node[0].kind.name == "FREED"
    assert puts == [(7, 9), (7, 9)]

    _, pull = jax.vjp(lambda a, b: ((a + b) * a - a) * 0.5, jnp.asarray(xv), jnp.asarray(yv))
    gx, gy = pull(jnp.ones((7, 9), jnp.float32))
    np.testing.assert_array_equal(x.grad.asnumpy(), np.asarray(gx))
    np.testing.assert_array_equal(y.grad.asnumpy(), np.asarray(gy))


def test_host_cotangents_flush_as_xla_does():
    # d(x*s*t)/dx = t*s = 1e-40: a subnormal that XLA:CPU flushes to zero, and a column
    # sum of the head that is subnormal (summed back on the host, unchecked) feeding the
    # next VJP; both as jax's
    s = np.full((4, 3), 1e-20, np.float32)
    head = np.tile(np.float32([[1.0e-38], [-0.99e-38], [0.5], [-0.5]]), (1, 3))
    xv, wv = RNG.rand(4, 3).astype(np.float32), RNG.rand(3).astype(np.float32)
    x, w = mx.nd.array(xv), mx.nd.array(wv)
    x.attach_grad()
    w.attach_grad()
    with mx.autograd.record():
        z = mx.nd.broadcast_add(x * mx.nd.array(s) * mx.nd.array(s), w * 3.0)
    z.backward(mx.nd.array(head))

    def f(a, b):
        return a * jnp.asarray(s) * jnp.asarray(s) + b * 3.0

    _, pull = jax.vjp(f, jnp.asarray(xv), jnp.asarray(wv))
    gx, gw = pull(jnp.asarray(head))
    np.testing.assert_array_equal(x.grad.asnumpy(), np.asarray(gx))
    assert not x.grad.asnumpy().any()
    np.testing.assert_allclose(w.grad.asnumpy(), np.asarray(gw), rtol=1e-6, atol=0)


def test_host_cotangents_reach_a_hybridized_block():
    # a size-class op after a hybridized block: the block's VJP gets a jax array
    net = mx.gluon.nn.Dense(5, in_units=4)
    net.initialize(mx.init.Normal(0.5))
    net.hybridize()
    xv = RNG.rand(3, 4).astype(np.float32)
    x = mx.nd.array(xv)
    x.attach_grad()
    with mx.autograd.record():
        out = mx.nd.sum(mx.nd.exp(net(x)) * 2.0, axis=0)
    out.backward()
    w, b = net.weight.data().asnumpy(), net.bias.data().asnumpy()

    def f(a, wt):
        return jnp.sum(jnp.exp(a @ wt.T + b) * 2.0, axis=0)

    gx, gw = _ref_grads(f, jnp.asarray(xv), jnp.asarray(w))
    np.testing.assert_allclose(x.grad.asnumpy(), gx, rtol=1e-5)
    np.testing.assert_allclose(net.weight.grad().asnumpy(), gw, rtol=1e-5)


def test_higher_order_and_get_symbol_through_size_class_nodes():
    x = mx.nd.array([0.5, 1.0, 2.0, 3.0, 4.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.sum(x * x * x)
        sym = mx.autograd.get_symbol(y)
        (dx,) = mx.autograd.grad(y, x, create_graph=True)
        z = mx.nd.sum(dx)
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 6 * x.asnumpy(), rtol=1e-6)
    assert any("sum" in n["op"] for n in json.loads(sym.tojson())["nodes"])


@contextlib.contextmanager
def _no_compile():
    """Asserts that XLA compiles nothing inside the block."""
    from jax._src import monitoring

    compiles = []

    def listener(event, duration, **_):
        if event == "/jax/core/compile/backend_compile_duration":
            compiles.append(duration)

    monitoring.register_event_duration_secs_listener(listener)
    try:
        yield
    finally:
        monitoring.unregister_event_duration_listener(listener)
    assert compiles == []


def test_recorded_new_shape_compiles_nothing_once_its_classes_exist():
    def step(shape):
        x = mx.nd.array(RNG.rand(*shape))
        x.attach_grad()
        with mx.autograd.record():
            y = mx.nd.sum(mx.nd.exp(x * 2.0) + x, axis=0)
        y.backward()
        return x.grad.asnumpy()

    step((31, 9))  # fills the classes of (<=1024 elements, (32, 16)) programs
    with _no_compile():
        g = step((29, 11))  # a new shape in the same classes
    assert g.shape == (29, 11)


# ----------------------------------------------------------------------------- on disk
SCRIPT = textwrap.dedent(
    """
    import json, sys, numpy as np
    from jax._src import monitoring
    import gluonjax as mx
    from gluonjax._ops import buckets
    compiles = []
    monitoring.register_event_duration_secs_listener(
        lambda e, d, **k: compiles.append(e) if e.endswith("backend_compile_duration") else 0)
    rng = np.random.RandomState(3)
    out = []
    for shape in [(5,), (17, 3), (40, 21)]:
        x = mx.nd.array(rng.rand(*shape)); y = mx.nd.array(rng.rand(*shape))
        z = mx.nd.sum(mx.nd.tanh(x * y + 0.5), axis=0)
        out.append(z.asnumpy().tolist())
    print(json.dumps({"stats": buckets.stats(), "compiles": len(compiles), "out": out}))
    """
)


def _run(cache, **env):
    return run_script(SCRIPT, cache, **env)


def test_second_process_loads_programs_without_tracing(tmp_path):
    first = _run(tmp_path)
    assert first["stats"]["compiled"] > 0 and first["stats"]["runs"] == 12
    second = _run(tmp_path)
    assert second["stats"]["compiled"] == 0
    assert second["stats"]["loaded"] == first["stats"]["compiled"]
    assert second["compiles"] == 0  # no XLA compile at all for these eager ops
    assert second["out"] == first["out"]
    # a damaged file is not trusted: compiled again, same values, file repaired
    files = sorted(p for p in (tmp_path / "eager").rglob("*.xla"))
    assert files
    files[0].write_bytes(files[0].read_bytes()[:100])
    third = _run(tmp_path)
    assert third["stats"]["compiled"] == 1 and third["out"] == first["out"]
    assert _run(tmp_path)["stats"]["compiled"] == 0


def test_switched_off(tmp_path):
    res = _run(tmp_path, GLUONJAX_SIZE_CLASSES="0")
    assert res["stats"]["runs"] == 0
    assert not (tmp_path / "eager").exists()


def test_size_class_is_a_power_of_two():
    assert buckets.size_class(1) == buckets.size_class(1024) == 1024
    assert buckets.size_class(1025) == 2048
    assert [buckets.size_class(n, 16) for n in (1, 16, 17, 100)] == [16, 16, 32, 128]


def test_executor_binds_new_shapes_without_compiling():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    c = mx.sym.sum(mx.sym.broadcast_div(a, b) - a, axis=1)

    def step(shape):
        va, vb = RNG.rand(*shape) + 0.5, RNG.rand(*shape) + 0.5
        ex = c.bind(
            mx.cpu(),
            {"a": mx.nd.array(va), "b": mx.nd.array(vb)},
            args_grad={"a": mx.nd.zeros(shape), "b": mx.nd.zeros(shape)},
        )
        out = ex.forward(is_train=True)[0]
        head = RNG.rand(*out.shape)
        ex.backward(mx.nd.array(head))
        va, vb = va.astype(np.float32), vb.astype(np.float32)
        np.testing.assert_allclose(out.asnumpy(), (va / vb - va).sum(axis=1), rtol=1e-5)
        ga = head[:, None].astype(np.float32) * (1 / vb - 1)
        np.testing.assert_allclose(ex.grad_dict["a"].asnumpy(), ga, rtol=1e-5, atol=1e-6)

    step((13, 7))  # fills the classes
    with _no_compile():
        step((11, 9))  # new shapes, the same classes


def test_host_float64_becomes_float32_as_device_put_does():
    assert buckets.to_device(np.ones(3, np.float64)).dtype == jax.device_put(np.ones(3)).dtype
    assert buckets.to_device(np.ones(3, np.int64)).dtype == jax.device_put(np.ones(3, int)).dtype
    a = mx.sym.var("a")
    ex = mx.sym.exp(a).bind(
        mx.cpu(),
        {"a": mx.nd.array(np.ones((9, 10)), dtype="float64")},
        args_grad={"a": mx.nd.zeros((9, 10), dtype="float64")},
    )
    out = ex.forward(is_train=True)[0]
    ex.backward(mx.nd.array(np.ones((9, 10)), dtype="float64"))
    np.testing.assert_allclose(ex.grad_dict["a"].asnumpy(), np.e * np.ones((9, 10)), rtol=1e-6)
    assert out.dtype == ex.grad_dict["a"].dtype


# ----------------------------------------------------------------------------- random ops
_RANDOM_ATTRS = {
    "_random_uniform": {"low": -2.0, "high": 3.0},
    "_random_normal": {"loc": 1.0, "scale": 2.0},
    "_random_exponential": {"lam": 0.5},
    "_random_poisson": {"lam": 4.0},
    "_random_randint": {"low": -5, "high": 100, "dtype": "int32"},
}


@pytest.mark.parametrize("name", sorted(buckets.RANDOM_CLASSES))
@pytest.mark.parametrize("dtype", [None, "float16", "float64"])
def test_random_draws_on_a_class_equal_the_exact_shapes(name, dtype):
    """The size-class draws, cut to the shape, are the exact kernel's draws (same key and
    counter), for shapes inside one class and across classes: bit for bit where the
    sampler is correctly rounded (uniform, randint); within 2 ulp where it calls a
    transcendental function, whose last (n mod vector width) elements XLA:CPU's exact
    program computes with scalar code (as for the map ops above)."""
    assert set(_RANDOM_ATTRS) == buckets.RANDOM_CLASSES
    op = reg.get(name)
    attrs = dict(_RANDOM_ATTRS[name])
    if dtype is not None and name != "_random_randint":
        attrs["dtype"] = dtype
    key = jax.random.key_data(jax.random.PRNGKey(11))
    for shape in [(1,), (3, 5, 7), (40, 25), (2, 3, 171), (33, 65)]:
        static_key, dyn = op.parse_attrs({**attrs, "shape": shape})
        args = [key, np.uint32(5), *dyn]
        exact = np.asarray(op.kernel(static_key)(*args))
        op._seen.pop(static_key, None)
        got = buckets.run_random(op, static_key, args)
        assert got is not None and got.shape == shape and got.dtype == exact.dtype
        if name in ("_random_uniform", "_random_randint"):
            np.testing.assert_array_equal(np.asarray(got), exact)
        else:
            np.testing.assert_array_max_ulp(np.asarray(got), exact, maxulp=2)


def test_random_through_nd_seeded_matches_the_exact_path(monkeypatch):
    """Trick on and off: the same seed gives the same arrays, and a new shape compiles no
    program of its own once its class exists."""
    shapes = [(3, 4), (5, 2, 3), (7,), (3, 4)]

    def draws():
        mx.random.seed(42)
        return [mx.nd.random.uniform(shape=s).asnumpy() for s in shapes] + [
            mx.nd.random.normal(0, 1, shape=s).asnumpy() for s in shapes
        ]

    on = draws()
    monkeypatch.setitem(buckets._state, "on", False)
    off = draws()
    for a, b in zip(on, off):
        np.testing.assert_array_equal(a, b)
    monkeypatch.setitem(buckets._state, "on", True)
    op = reg.get("_random_uniform")
    mx.nd.random.uniform(shape=(9, 9)).wait_to_read()  # the 1024 class exists now
    kernels = len(op._kernels)
    for s in [(2, 11), (13, 3), (4, 4, 4)]:
        assert mx.nd.random.uniform(shape=s).shape == s
    assert len(op._kernels) == kernels
