"""``mx.np`` / ``mx.npx``: values against NumPy, gradients against ``jax.grad``, Gluon in
NumPy mode against the same model in nd mode."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import gluonjax as mx
from gluonjax import autograd, gluon, npx
from gluonjax import np as mnp
from gluonjax.gluon import nn

RNG = onp.random.default_rng(0)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(onp.float32)


# ---------------------------------------------------------------- arrays
def test_creation_dtypes_follow_mxnet():
    # MXNet's default dtype is float32 for Python data and the creation functions
    assert mnp.array([1, 2]).dtype == onp.float32
    assert mnp.array([[1.5]]).dtype == onp.float32
    assert mnp.ones(3).dtype == mnp.zeros((2, 2)).dtype == mnp.arange(4).dtype == onp.float32
    assert mnp.array([1, 2], dtype="int32").dtype == onp.int32
    assert mnp.array(onp.arange(3, dtype=onp.int32)).dtype == onp.int32  # NumPy keeps its own
    assert mnp.full((2,), True).dtype == onp.bool_
    assert mnp.eye(3).tolist() == onp.eye(3).tolist()
    assert mnp.linspace(0, 1, 5).tolist() == pytest.approx(onp.linspace(0, 1, 5).tolist())
    assert mnp.indices((2, 3)).tolist() == onp.indices((2, 3)).tolist()
    x = mnp.ones((2, 3))
    assert type(x) is mnp.ndarray and isinstance(x, mx.nd.NDArray)
    assert mnp.zeros_like(x).shape == (2, 3) and mnp.full_like(x, 7).tolist() == [[7.0] * 3] * 2


def test_64_bit_types_in_numpy_mode():
    @mx.use_np
    def run():
        a = mnp.array(onp.arange(4, dtype=onp.float64))
        b = mnp.array(onp.arange(4, dtype=onp.int64))
        a.attach_grad()
        with autograd.record():
            y = (a * a).sum()
        y.backward()
        return a.dtype, b.dtype, (a + 1).dtype, a.grad.dtype, a.grad.asnumpy()

    adt, bdt, sdt, gdt, g = run()
    assert (adt, bdt, sdt, gdt) == (onp.float64, onp.int64, onp.float64, onp.float64)
    assert g.tolist() == [0.0, 2.0, 4.0, 6.0]
    assert jax.config.jax_enable_x64  # on for the whole process (gluonjax turns it on)


@pytest.mark.parametrize(
    "a, b",
    [
        (onp.arange(6, dtype=onp.int32).reshape(2, 3), onp.arange(3, dtype=onp.float32)),
        (onp.arange(6, dtype=onp.int32).reshape(2, 3), onp.arange(1, 4, dtype=onp.int32)),
        (_f32(3, 1), _f32(1, 4)),
        (onp.arange(4, dtype=onp.float16), onp.arange(4, dtype=onp.float16)),
    ],
)
@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "true_divide", "maximum", "less"])
def test_binary_broadcasting_and_promotion_match_numpy(a, b, op):
    got = getattr(mnp, op)(mnp.array(a), mnp.array(b))
    want = getattr(onp, op)(a, b)
    if want.dtype == onp.float64:  # int / int: MXNet's float32 (NumPy says float64)
        want = want.astype(onp.float32)
    assert got.dtype == want.dtype
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-3)


def test_python_scalars_keep_the_array_type():
    i = mnp.array([1, 2, 3], dtype="int32")
    assert (i + 1).dtype == onp.int32 and (2 * i).dtype == onp.int32
    assert (i + 1.5).dtype == onp.float32  # NumPy 2 would say float64; MXNet float32
    assert (mnp.ones(2, dtype="float16") * 3.0).dtype == onp.float16
    assert (1 - mnp.ones(2)).tolist() == [0.0, 0.0] and (2 ** mnp.ones(2)).tolist() == [2.0, 2.0]
    assert (i == 2).dtype == onp.bool_ and (i == None) is False  # noqa: E711


def test_operators_with_numpy_arrays_return_mx_arrays():
    x = mnp.array([1.0, 2.0])
    for r in (x + onp.ones(2, onp.float32), x * [2, 2], onp.ones(2, onp.float32) - x):
        assert type(r) is mnp.ndarray


# ---------------------------------------------------------------- indexing
_BASE = onp.arange(60, dtype=onp.float32).reshape(3, 4, 5)


@pytest.mark.parametrize(
    "key",
    [
        1,
        -1,
        (1, 2),
        (slice(None), 2),
        (Ellipsis, 1),
        (None, 1),
        (1, slice(1, 3), -1),
        ([0, 2],),
        ([0, 2], [1, 3]),
        (slice(None), [3, 0, 3]),
        (0, onp.array([1, 2])),
        (_BASE[:, 0, 0] > 10,),
        (0, _BASE[0] > 7),
        (slice(None, None, -1), 0),
        (),
    ],
)
def test_getitem_matches_numpy(key):
    got = mnp.array(_BASE)[key]
    want = _BASE[key]
    assert type(got) is mnp.ndarray and got.shape == want.shape
    onp.testing.assert_array_equal(got.asnumpy(), want)


@pytest.mark.parametrize(
    "key, value",
    [
        (1, 0.0),
        ((slice(None), 2), onp.arange(5, dtype=onp.float32)),
        (([0, 2], 1), -1.0),
        ((_BASE > 30,), 5.0),
        ((Ellipsis, 0), onp.zeros((3, 4), onp.float32)),
    ],
)
def test_setitem_matches_numpy(key, value):
    got, want = mnp.array(_BASE), _BASE.copy()
    got[key] = value
    want[key] = value
    onp.testing.assert_array_equal(got.asnumpy(), want)


def test_bad_indices_raise_index_error():
    a = mnp.ones((5, 4))
    for key in (mnp.array([True], dtype=bool), mnp.zeros((4, 4), dtype=bool), 7, (0, 9)):
        with pytest.raises(IndexError):
            a[key]
    with pytest.raises(IndexError, match="integers or booleans"):
        a[mnp.array([0.5])]


def test_getitem_gradient_scatters_ones():
    x = mnp.array(_BASE)
    x.attach_grad()
    with autograd.record():
        y = x[([0, 2], slice(1, 3))]
    y.backward()
    want = onp.zeros_like(_BASE)
    want[[0, 2], 1:3] = 1
    onp.testing.assert_array_equal(x.grad.asnumpy(), want)


# ---------------------------------------------------------------- functions
_X = _f32(3, 4)
_CASES = [
    ("sum", (_X,), {"axis": 1}),
    ("sum", (_X,), {"axis": (0, 1), "keepdims": True}),
    ("mean", (_X,), {"axis": 0}),
    ("max", (_X,), {}),
    ("min", (_X,), {"axis": -1}),
    ("prod", (_X,), {"axis": 1}),
    ("std", (_X,), {"axis": 1}),
    ("var", (_X,), {"ddof": 1}),
    ("argmax", (_X,), {"axis": 1}),
    ("cumsum", (_X,), {"axis": 0}),
    ("transpose", (_X,), {}),
    ("reshape", (_X, (2, 6)), {}),
    ("swapaxes", (_X, 0, 1), {}),
    ("expand_dims", (_X, 1), {}),
    ("tile", (_X, (2, 1)), {}),
    ("repeat", (_X, 2), {"axis": 0}),
    ("flip", (_X,), {"axis": 1}),
    ("roll", (_X, 2), {}),
    ("tril", (_X,), {}),
    ("clip", (_X, -0.5, 0.5), {}),
    ("where", (_X > 0, _X, -_X), {}),
    ("dot", (_X, _X.T), {}),
    ("matmul", (_X, _X.T), {}),
    ("tensordot", (_X, _X), {"axes": ([1], [1])}),
    ("outer", (_X[0], _X[1]), {}),
    ("trace", (_X,), {}),
    ("diff", (_X,), {}),
    ("sort", (_X,), {"axis": 1}),
    ("argsort", (_X,), {}),
    ("around", (_X, 2), {}),
    ("exp", (_X,), {}),
    ("log1p", (onp.abs(_X),), {}),
    ("arctan2", (_X, _X + 1), {}),
    ("nan_to_num", (onp.array([onp.nan, onp.inf, 1], onp.float32),), {}),
    ("pad", (_X, ((1, 0), (0, 2))), {}),
    ("percentile", (_X, 40), {"axis": 1}),
]


@pytest.mark.parametrize("name, args, kwargs", _CASES, ids=[c[0] for c in _CASES])
def test_functions_match_numpy(name, args, kwargs):
    mx_args = [mnp.array(a) if isinstance(a, onp.ndarray) else a for a in args]
    got = getattr(mnp, name)(*mx_args, **kwargs)
    want = getattr(onp, name)(*args, **kwargs)
    assert type(got) is mnp.ndarray
    assert got.shape == onp.shape(want)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-5)


def test_joining_and_splitting_match_numpy():
    a, b = _f32(2, 3), _f32(2, 3)
    ma, mb = mnp.array(a), mnp.array(b)
    for name in ("concatenate", "stack", "vstack", "hstack", "dstack", "column_stack"):
        got = getattr(mnp, name)([ma, mb])
        onp.testing.assert_array_equal(got.asnumpy(), getattr(onp, name)([a, b]))
    for got, want in zip(mnp.split(ma, 3, axis=1), onp.split(a, 3, axis=1)):
        onp.testing.assert_array_equal(got.asnumpy(), want)
    for got, want in zip(mnp.array_split(ma, [1], axis=0), onp.array_split(a, [1], axis=0)):
        onp.testing.assert_array_equal(got.asnumpy(), want)
    assert [x.shape for x in mnp.atleast_3d(ma, mnp.ones(2))] == [(2, 3, 1), (1, 2, 1)]
    onp.testing.assert_allclose(
        mnp.einsum("ij,kj->ik", ma, mb).asnumpy(), onp.einsum("ij,kj->ik", a, b), rtol=1e-6
    )


def test_value_dependent_functions_run_on_the_host():
    x = onp.array([3, 1, 3, 0, 1, 3], onp.int32)
    u, counts = mnp.unique(mnp.array(x), return_counts=True)
    assert u.tolist() == [0, 1, 3] and counts.tolist() == [1, 2, 3]
    assert mnp.bincount(mnp.array(x)).tolist() == onp.bincount(x).tolist()
    assert [i.tolist() for i in mnp.nonzero(mnp.array(x))] == [onp.nonzero(x)[0].tolist()]
    assert mnp.array(x).nonzero()[0].tolist() == onp.nonzero(x)[0].tolist()


def test_linalg_matches_numpy():
    a = _f32(3, 3) + 3 * onp.eye(3, dtype=onp.float32)
    spd = a @ a.T
    ma = mnp.array(a)
    onp.testing.assert_allclose(mnp.linalg.inv(ma).asnumpy(), onp.linalg.inv(a), rtol=1e-4)
    onp.testing.assert_allclose(mnp.linalg.det(ma).asnumpy(), onp.linalg.det(a), rtol=1e-4)
    onp.testing.assert_allclose(mnp.linalg.norm(ma).asnumpy(), onp.linalg.norm(a), rtol=1e-5)
    onp.testing.assert_allclose(
        mnp.linalg.cholesky(mnp.array(spd)).asnumpy(),
        onp.linalg.cholesky(spd),
        rtol=1e-4,
        atol=1e-5,
    )
    sign, logdet = mnp.linalg.slogdet(ma)
    want = onp.linalg.slogdet(a)
    assert sign.item() == want[0] and logdet.item() == pytest.approx(want[1], rel=1e-5)


_GRADS = [
    ("sum", lambda x: jnp.sum(x, axis=1) ** 2, lambda x: mnp.sum(x, axis=1) ** 2),
    ("max", lambda x: jnp.max(x, axis=0), lambda x: mnp.max(x, axis=0)),
    ("std", lambda x: jnp.std(x, axis=1), lambda x: mnp.std(x, axis=1)),
    (
        "transpose",
        lambda x: jnp.transpose(x) * jnp.arange(4.0),
        lambda x: mnp.transpose(x) * mnp.arange(4),
    ),
    ("dot", lambda x: jnp.dot(x, x.T), lambda x: mnp.dot(x, x.T)),
    (
        "where",
        lambda x: jnp.where(x > 0, x * 2, jnp.exp(x)),
        lambda x: mnp.where(x > 0, x * 2, mnp.exp(x)),
    ),
    (
        "concatenate",
        lambda x: jnp.concatenate([x, x * x], 0),
        lambda x: mnp.concatenate([x, x * x], axis=0),
    ),
    ("getitem", lambda x: x[1:, ::2] * 3, lambda x: x[1:, ::2] * 3),
    ("linalg.norm", lambda x: jnp.linalg.norm(x), lambda x: mnp.linalg.norm(x)),
]


@pytest.mark.parametrize("name, jfn, mfn", _GRADS, ids=[g[0] for g in _GRADS])
def test_gradients_match_jax(name, jfn, mfn):
    x = _f32(4, 3)
    want = jax.grad(lambda v: jnp.sum(jfn(v) * 1.5))(jnp.asarray(x))
    mx_x = mnp.array(x)
    mx_x.attach_grad()
    with autograd.record():
        y = mfn(mx_x)
    y.backward(mnp.full(y.shape, 1.5))
    assert type(mx_x.grad) is mnp.ndarray
    onp.testing.assert_allclose(mx_x.grad.asnumpy(), onp.asarray(want), rtol=1e-5, atol=1e-6)


def test_bad_arguments_raise_numpy_builtin_errors():
    x = mnp.ones((2, 3))
    with pytest.raises(ValueError, match="_np_sum"):
        mnp.sum(x, axis=4)
    with pytest.raises(ValueError, match="_npi_add"):
        x + mnp.ones((4,))
    with pytest.raises(TypeError, match="unexpected keyword"):
        mnp.sum(x, axes=1)
    assert issubclass(type(pytest.raises(ValueError, mnp.reshape, x, (4, 4)).value), mx.MXNetError)


# ---------------------------------------------------------------- npx
def test_npx_operators():
    x = _f32(2, 5)
    mx_x = mnp.array(x)
    onp.testing.assert_allclose(npx.relu(mx_x).asnumpy(), onp.maximum(x, 0))
    e = onp.exp(x - x.max(-1, keepdims=True))
    onp.testing.assert_allclose(
        npx.softmax(mx_x).asnumpy(), e / e.sum(-1, keepdims=True), rtol=1e-5
    )
    assert type(npx.sigmoid(mx_x)) is mnp.ndarray
    assert npx.reshape(mnp.ones((2, 3, 4)), (-2, -5)).shape == (2, 12)
    assert npx.reshape(mnp.ones((2, 3, 4)), (-6, 1, 2, -4)).shape == (1, 2, 3, 4)
    assert npx.reshape(mnp.ones((1, 3)), (-3, -2)).shape == (3,)
    mask = mnp.array([[1, 1, 0, 0, 1]] * 2, dtype="bool")
    got = npx.masked_softmax(mx_x, mask).asnumpy()
    ref = onp.where(mask.asnumpy(), onp.exp(x), 0)
    onp.testing.assert_allclose(got, ref / ref.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match="violated"):
        npx.constraint_check(mnp.array([1, 0], dtype="bool"), "violated")


def test_set_np_and_reset_np():
    assert not mx.is_np_array()
    npx.set_np()
    try:
        assert mx.is_np_array() and mx.is_np_shape() and jax.config.jax_enable_x64
    finally:
        npx.reset_np()
    assert not mx.is_np_array() and not mx.is_np_shape() and jax.config.jax_enable_x64


def test_numpy_protocols_dispatch_to_mx_np():
    x = mnp.array([[1.0, 2.0], [3.0, 4.0]])
    for r in (onp.sum(x, axis=0), onp.exp(x), onp.add(x, 1), onp.linalg.inv(x), onp.median(x)):
        assert type(r) is mnp.ndarray
    assert onp.sum(x, axis=0).tolist() == [4.0, 6.0]


def test_nd_and_np_views_share_the_value():
    # real MXNet 1.9.1: both conversions share memory (a write to either shows in the other)
    a = mx.nd.ones((2, 2))
    b = a.as_np_ndarray()
    assert type(b) is mnp.ndarray and b._data is a._data
    b[0] = 5
    assert a.asnumpy().tolist() == [[5, 5], [1, 1]]
    c = b.as_nd_ndarray()
    assert isinstance(c, mx.nd.NDArray) and not isinstance(c, mnp.ndarray)
    c[1] = 7
    assert b.asnumpy().tolist() == [[5, 5], [7, 7]] and a.asnumpy().tolist() == [[5, 5], [7, 7]]
    assert mnp.shares_memory(b, c) and not mnp.shares_memory(b, b.copy())
    assert repr(mnp.array([1, 2], dtype="int32")) == "array([1, 2], dtype=int32)"
    assert repr(mnp.array([[1.0, 2.0]])) == "array([[1., 2.]])"
    assert f"{mnp.array(onp.pi):.2f}" == "3.14"


# ---------------------------------------------------------------- Gluon in NumPy mode
class _Net(gluon.HybridBlock):
    def __init__(self):
        super().__init__()
        with self.name_scope():
            self.dense = nn.Dense(3)

    def hybrid_forward(self, F, x):
        h = F.npx.relu(self.dense(x))
        return F.np.sum(h**2, axis=1) + x.mean()


@mx.use_np
def test_gluon_numpy_mode_eager_hybridized_and_trained(tmp_path):
    x = mnp.array(_f32(4, 5))
    net = _Net()
    net.initialize(mx.init.Xavier())
    eager = net(x)
    assert type(eager) is mnp.ndarray
    assert type(net.dense.weight.data()) is not mx.nd.NDArray
    assert isinstance(net.dense.weight.data(), mnp.ndarray)
    # the same computation in plain jax
    w, b = net.dense.weight.data().asnumpy(), net.dense.bias.data().asnumpy()
    ref = (onp.maximum(x.asnumpy() @ w.T + b, 0) ** 2).sum(1) + x.asnumpy().mean()
    onp.testing.assert_allclose(eager.asnumpy(), ref, rtol=1e-5)
    net.hybridize()
    hyb = net(x)
    assert type(hyb) is mnp.ndarray
    onp.testing.assert_allclose(hyb.asnumpy(), eager.asnumpy(), rtol=1e-6)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    g = net.dense.weight.grad()
    assert type(g) is mnp.ndarray
    trainer.step(1)
    onp.testing.assert_allclose(net.dense.weight.data().asnumpy(), w - 0.1 * g.asnumpy(), rtol=1e-5)
    net.export(str(tmp_path / "m"))
    ops = [n["op"] for n in json.loads((tmp_path / "m-symbol.json").read_text())["nodes"]]
    assert "_np_sum" in ops and "_npi_mean" in ops
    back = gluon.SymbolBlock.imports(
        str(tmp_path / "m-symbol.json"), ["data"], str(tmp_path / "m-0000.params")
    )
    onp.testing.assert_allclose(back(x).asnumpy(), net(x).asnumpy(), rtol=1e-5)


def test_block_outputs_keep_their_kind_and_a_mix_raises():
    class Both(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x.as_nd_ndarray() * 2, F.np.multiply(x, x)

    class Nd(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x.as_nd_ndarray() * 2

    x = mnp.ones((2, 3))
    for hybridize in (False, True):
        nd_net, both = Nd(), Both()
        if hybridize:
            nd_net.hybridize()
            both.hybridize()
        assert type(nd_net(x)) is mx.nd.NDArray
        with pytest.raises(TypeError, match="both mx.np.ndarray and mx.nd.NDArray"):
            mx.use_np(both)(x)


@mx.use_np
def test_deferred_shapes_are_inferred_in_numpy_mode():
    class Lin(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.w = self.params.get("w", shape=(0, 7), allow_deferred_init=True)

        def hybrid_forward(self, F, x, w):
            return F.npx.relu(x.dot(w))

    net = Lin()
    net.initialize()
    net.hybridize()
    assert net(mnp.ones((2, 5))).shape == (2, 7)
    assert net.w.shape == (5, 7)


def test_symbolic_np_ops_build_graph_nodes():
    x = mx.sym.var("x").as_np_ndarray()
    y = mx.sym.np.sum(x, axis=1)
    assert y.infer_shape(x=(2, 3))[1] == [(2,)]
    z = npx.relu(x)
    assert "Activation" in z.tojson()


@pytest.mark.parametrize("hybridize", [False, True])
def test_integer_inputs_get_gradients_in_blocks(hybridize):
    # MXNet 1.9.1 gives integer arrays gradients (e.g. its test_np_sum, test_np_flip)
    class Flip(gluon.HybridBlock):
        def hybrid_forward(self, F, a):
            return F.np.flip(a, 1) * 2

    net = Flip()
    if hybridize:
        net.hybridize()
    x = mnp.array(onp.arange(6, dtype=onp.int32).reshape(2, 3))
    x.attach_grad()
    with autograd.record():
        y = net(x)
    y.backward()
    assert y.dtype == onp.int32 and x.grad.dtype == onp.int32
    assert x.grad.tolist() == [[2, 2, 2], [2, 2, 2]]
    assert y.tolist() == (onp.flip(onp.arange(6).reshape(2, 3), 1) * 2).tolist()


# every NumPy-interface op, called by name against NumPy (the scalar forms too)
_UFUNC2 = [
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "copysign",
    "fmax",
    "fmin",
    "fmod",
    "gcd",
    "lcm",
    "ldexp",
    "less_equal",
]
_INT_UFUNCS = {"bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm"}


@pytest.mark.parametrize("name", _UFUNC2)
def test_binary_ufuncs_and_their_scalar_forms_match_numpy(name):
    dt = onp.int32 if name in _INT_UFUNCS else onp.float32
    a = onp.array([[3, 8, 5], [6, 2, 9]], dt)
    b = onp.array([2, 3, 4], onp.int32 if name in _INT_UFUNCS | {"ldexp"} else dt)
    f, g = getattr(mnp, name), getattr(onp, name)
    onp.testing.assert_allclose(f(mnp.array(a), mnp.array(b)).asnumpy(), g(a, b), rtol=1e-6)
    onp.testing.assert_allclose(f(mnp.array(a), 2).asnumpy(), g(a, 2), rtol=1e-6)  # _scalar
    if name != "ldexp":
        onp.testing.assert_allclose(f(7, mnp.array(a)).asnumpy(), g(7, a), rtol=1e-6)  # _r..


@pytest.mark.parametrize(
    "name, args",
    [
        ("absolute", (_X,)),
        ("fabs", (_X,)),
        ("bitwise_not", (onp.arange(4, dtype=onp.int32),)),
        ("deg2rad", (_X,)),
        ("rad2deg", (_X,)),
        ("isposinf", (onp.array([1, onp.inf], "f4"),)),
        ("cumprod", (_X,)),
        ("diagflat", (_X[0],)),
        ("vdot", (_X, _X)),
        ("fliplr", (_X,)),
        ("flipud", (_X,)),
        ("rot90", (_X,)),
        ("kron", (_X[:2, :2], _X[1:3, 1:3])),
        ("cross", (_X[:, :3], _X[::-1, :3])),
        ("cov", (_X,)),
        ("ediff1d", (_X,)),
        ("polyval", (_X[0], _X[1])),
        ("quantile", (_X, 0.3)),
        ("searchsorted", (onp.arange(5, dtype="f4"), onp.array([1.5, 3.2], "f4"))),
    ],
)
def test_more_functions_match_numpy(name, args):
    got = getattr(mnp, name)(*[mnp.array(a) if isinstance(a, onp.ndarray) else a for a in args])
    onp.testing.assert_allclose(got.asnumpy(), getattr(onp, name)(*args), rtol=1e-5, atol=1e-6)
    if name == "absolute":  # the mean without weights (_npi_average_unweighted)
        onp.testing.assert_allclose(mnp.average(mnp.array(_X)).item(), _X.mean(), rtol=1e-6)


def test_more_linalg_matches_numpy():
    a = _f32(3, 3) + 3 * onp.eye(3, dtype=onp.float32)
    s = a + a.T
    ma, ms = mnp.array(a), mnp.array(s)
    onp.testing.assert_allclose(mnp.linalg.solve(ma, ma).asnumpy(), onp.eye(3), atol=1e-5)
    onp.testing.assert_allclose(mnp.linalg.pinv(ma).asnumpy(), onp.linalg.pinv(a), atol=1e-5)
    onp.testing.assert_allclose(
        mnp.linalg.eigvalsh(ms).asnumpy(), onp.linalg.eigvalsh(s), rtol=1e-4, atol=1e-5
    )
    w, v = mnp.linalg.eigh(ms)
    onp.testing.assert_allclose(w.asnumpy(), onp.linalg.eigh(s)[0], rtol=1e-4, atol=1e-5)
    ev = onp.sort_complex(mnp.linalg.eigvals(ms).asnumpy())
    onp.testing.assert_allclose(ev.real, onp.sort(onp.linalg.eigvalsh(s)), rtol=1e-4, atol=1e-4)
    w2, _ = mnp.linalg.eig(ms)
    assert w2.shape == (3,)
    q, r = mnp.linalg.qr(ma)
    onp.testing.assert_allclose((q.asnumpy() @ r.asnumpy()), a, atol=1e-5)
    u, sv, vt = mnp.linalg.svd(ma)
    onp.testing.assert_allclose(sv.asnumpy(), onp.linalg.svd(a)[1], rtol=1e-5)
    assert mnp.linalg.matrix_rank(ma).item() == onp.linalg.matrix_rank(a)
    t = _f32(2, 3, 6)
    onp.testing.assert_allclose(
        mnp.linalg.tensorinv(mnp.array(t.reshape(6, 2, 3)), ind=1).asnumpy(),
        onp.linalg.tensorinv(t.reshape(6, 2, 3), ind=1),
        rtol=1e-3,
        atol=1e-4,
    )
    b = _f32(6)
    aa = onp.eye(6, dtype="f4").reshape(6, 2, 3) * 2
    onp.testing.assert_allclose(
        mnp.linalg.tensorsolve(mnp.array(aa), mnp.array(b)).asnumpy(),
        onp.linalg.tensorsolve(aa, b),
        rtol=1e-5,
    )


@pytest.mark.parametrize(
    "name, args, mean",
    [
        ("gumbel", (0.0, 1.0), 0.5772),
        ("laplace", (1.0, 1.0), 1.0),
        ("logistic", (2.0, 1.0), 2.0),
        ("lognormal", (0.0, 0.5), onp.exp(0.125)),
        ("rayleigh", (1.0,), onp.sqrt(onp.pi / 2)),
        ("weibull", (2.0,), 0.8862),
        ("pareto", (3.0,), 0.5),
        ("power", (2.0,), 2 / 3),
        ("chisquare", (3.0,), 3.0),
    ],
)
def test_samplers_have_their_distributions_mean(name, args, mean):
    mx.random.seed(3)
    x = getattr(mnp.random, name)(*args, size=(20000,))
    assert x.shape == (20000,) and x.dtype == onp.float32
    assert abs(x.mean().item() - mean) < 0.05 * max(1.0, abs(mean))


def test_randint_and_bernoulli():
    mx.random.seed(1)
    r = mnp.random.randint(3, 7, size=(1000,))
    assert r.dtype == onp.int32 and 3 <= r.min().item() and r.max().item() <= 6
    b = npx.random.bernoulli(prob=0.25, size=(20000,))
    assert abs(b.mean().item() - 0.25) < 0.02


def test_samplers_by_their_mxnet_op_names():
    # what an exported graph names them: _npi_powerd (np.random.power), _npi_random_randint
    mx.random.seed(5)
    p = mx.nd._npi_powerd(mx.nd.array([2.0]), size=(20000,))
    assert abs(p.asnumpy().mean() - 2 / 3) < 0.02
    r = mx.nd._npi_random_randint(low=2, high=5, size=(500,), dtype="int32")
    assert set(onp.unique(r.asnumpy())) <= {2, 3, 4}


# ------------------------------------------------ views (values from real MXNet 1.9.1)
@pytest.mark.parametrize(
    "key, total, shares",
    [
        (0, 105.0, True),
        (slice(1, 3), 210.0, True),
        ((0, 1), 35.0, True),
        ((0, slice(1, 2)), 35.0, True),
        ((0, 0, slice(2, 4)), 14.0, True),
        ((0, 0, 1), 7.0, True),
        ((slice(None), 0), 0.0, False),
        ((Ellipsis, 1), 0.0, False),
        ((slice(0, 4, 2),), 0.0, False),
        ((1, slice(0, 3), slice(1, 3)), 0.0, False),
    ],
)
def test_basic_indexing_of_a_contiguous_block_is_a_view(key, total, shares):
    # MXNet: a = np.zeros((4, 3, 5)); v = a[key]; v[...] = 7 -> a.sum(), np.shares_memory(a, v)
    a = mnp.zeros((4, 3, 5))
    v = a[key]
    v[...] = 7
    assert type(v) is mnp.ndarray
    assert float(a.sum()) == total
    assert mnp.shares_memory(a, v) is shares and mnp.may_share_memory(a, v) is shares
    if shares:  # and the other way round: the view reads the base's current value
        a[...] = -1
        assert (v.asnumpy() == -1).all()


def test_shares_memory_of_overlapping_views_matches_numpy():
    a, b = mnp.zeros((13, 21, 23, 22)), onp.zeros((13, 21, 23, 22))
    for ka, kb in [(0, 1), ((0, 0, 0, slice(2, 5)), (0, 0, 0, slice(4, 7)))]:
        assert mnp.shares_memory(a[ka], a[kb]) == onp.shares_memory(b[ka], b[kb])
    assert mnp.shares_memory(a, mnp.ones((5, 0))) is False
    with autograd.record():  # recorded indexing copies (MXNet records the slice)
        assert not mnp.shares_memory(a, a[0])


@mx.use_np
def test_remainder_matches_numpy_at_denormals_zeros_and_infinities():
    for dt in ("float16", "float32", "float64"):
        b = onp.array(1.0, dtype=dt)
        tiny = onp.nextafter(onp.array(0.0, dtype=dt), -b)  # a denormal: XLA:CPU flushes it
        for x, y in ((tiny, b), (-tiny, -b)):
            assert float(mnp.remainder(mnp.array(x), mnp.array(y))) == onp.remainder(x, y)
    x = onp.array([-3.0, -0.0, 0.0, 3.0, 5.5, -7.25, onp.inf, -1.0], dtype=onp.float32)
    y = onp.array([2.0, 2.0, -2.0, -2.0, 1.5, 2.0, 2.0, onp.inf], dtype=onp.float32)
    with onp.errstate(invalid="ignore"):
        want = onp.mod(x, y)
    got = mnp.mod(mnp.array(x), mnp.array(y)).asnumpy()
    onp.testing.assert_array_equal(got, want)
    assert (onp.signbit(got) == onp.signbit(want)).all()


def test_integer_clip_with_bounds_beyond_the_type_and_wrapping_array_creation():
    u = onp.array([0, 56, 200, 255], dtype=onp.uint8)
    want = onp.clip(u.astype(onp.int64), -120, 100).astype(onp.uint8)  # NumPy 1.x's arithmetic
    onp.testing.assert_array_equal(mnp.clip(mnp.array(u), -120, 100).asnumpy(), want)
    # real MXNet 1.9.1 (NumPy < 1.24) wraps out-of-range Python integers
    assert mnp.array([1621, -1], dtype="uint8").tolist() == [85, 255]
    assert mnp.array([300], dtype="int8").tolist() == [44]


def test_solve_of_stacked_vectors_and_tensorsolve_shapes_match_numpy_1():
    rng = onp.random.RandomState(0)
    a = rng.rand(3, 5, 5) + 3 * onp.eye(5)
    b = rng.rand(3, 5)
    want = onp.stack([onp.linalg.solve(a[i], b[i]) for i in range(3)])
    got = mnp.linalg.solve(mnp.array(a), mnp.array(b)).asnumpy()
    onp.testing.assert_allclose(got, want, rtol=1e-4)
    assert mnp.linalg.tensorsolve(mnp.ones((1, 1)) * 2, mnp.ones((1, 1))).shape == (1, 1)
    t = rng.rand(2, 3, 3, 4, 2)
    want = onp.linalg.tensorsolve(t, onp.ones((3, 4)), axes=(0, 2, 4))
    got = mnp.linalg.tensorsolve(mnp.array(t), mnp.ones((3, 4)), axes=(0, 2, 4))
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-3, atol=1e-3)


def test_results_are_tuples_and_linalg_results_are_numpys_named_tuples():
    x, y = mnp.ones((3, 1)), mnp.ones((1, 2))
    for got, want in [
        (mnp.broadcast_arrays(x, y), onp.broadcast_arrays(onp.ones((3, 1)), onp.ones((1, 2)))),
        (mnp.atleast_1d(x, y), onp.atleast_1d(onp.ones((3, 1)), onp.ones((1, 2)))),
        (mnp.meshgrid(mnp.arange(3)), onp.meshgrid(onp.arange(3))),
    ]:
        assert type(got) is type(want) and [g.shape for g in got] == [w.shape for w in want]
    m = onp.array([[2.0, 1.0], [1.0, 3.0]], dtype=onp.float32)
    for name in ("eig", "eigh", "slogdet", "qr", "svd"):
        got, want = getattr(mnp.linalg, name)(mnp.array(m)), getattr(onp.linalg, name)(m)
        assert type(got) is type(want), name
        if hasattr(want, "_fields"):
            assert got._fields == want._fields


def test_multinomial_with_no_categories_gives_empty_draws():
    # real MXNet 1.9.1: np.random.multinomial(5, [], size=s).shape
    for size, shape in [(None, (0,)), ((), (0,)), ((3,), (3, 0)), ((0, 2), (0, 2, 0))]:
        for pvals in ([], mnp.array([])):
            assert mnp.random.multinomial(5, pvals, size=size).shape == shape


def test_float_value_set_into_an_integer_array_gets_the_gradient():
    # real MXNet 1.9.1: x (int32)[key] = y (float64) under record, x.backward() -> y.grad ones
    base = onp.arange(8 * 16 * 9 * 9, dtype=onp.int32).reshape(8, 16, 9, 9)
    for key in [(), 0, (slice(1, 3), 2), [1, 2]]:
        x = mnp.array(base, dtype=base.dtype)
        y = mnp.array(onp.random.uniform(size=base[key].shape))
        y.attach_grad()
        with autograd.record():
            x[key] = y
            x.backward()
        onp.testing.assert_array_equal(y.grad.asnumpy(), onp.ones(y.shape))


def test_setitem_value_with_extra_leading_ones_matches_numpy():
    a, b = mnp.zeros((2, 3, 4)), onp.zeros((2, 3, 4))
    a[1, 2] = mnp.arange(4).reshape(1, 1, 4)
    b[1, 2] = onp.arange(4).reshape(1, 1, 4)
    onp.testing.assert_array_equal(a.asnumpy(), b)


def test_mean_with_an_integer_dtype_accumulates_in_it():
    # real MXNet 1.9.1 (and NumPy): np.mean(x, axis=1, dtype=...) of these int8/int32 rows
    x = onp.array([[100, 100, 100], [-100, -100, -50]], dtype=onp.int8)
    for itype in ("int8", "int32"):
        a = mnp.array(x.astype(itype))
        assert mnp.mean(a, axis=1, dtype="int8").tolist() == [14, 2]  # 300 wraps to 44
        assert mnp.mean(a, axis=1, dtype="int32").tolist() == [100, -83]
        onp.testing.assert_allclose(
            mnp.mean(a, axis=1, dtype="float32").asnumpy(), [100.0, -83.333336], rtol=1e-6
        )


def test_integer_reductions_with_an_integer_dtype_pass_gradients():
    # real MXNet 1.9.1: x (int) attach_grad, np.sum(x, axis, dtype=int...) backward -> ones
    x0 = onp.random.RandomState(0).randint(-128, 128, (3, 2, 1)).astype(onp.int8)
    for itype in ("int8", "int32"):
        for dtype in ("int8", "int32", "float16"):
            for axis in (0, None, ()):
                x = mnp.array(x0.astype(itype))
                x.attach_grad()
                with autograd.record():
                    y = mnp.sum(x, axis=axis, dtype=dtype)
                y.backward()
                assert x.grad.dtype == x.dtype
                onp.testing.assert_array_equal(x.grad.asnumpy(), onp.ones(x.shape))


def test_broadcast_to_copies_the_input_axis_for_minus_two():
    # real MXNet 1.9.1: np.broadcast_to(np.ones(src), shape).shape; (2, -2, 5) of (5,) raises
    for src, shape, want in [
        ((5,), (3, 4, -2), (3, 4, 5)),
        ((1, 0), (2, -2, -2), (2, 1, 0)),
        ((2, 1, 5), (4, 2, -2, -2), (4, 2, 1, 5)),
    ]:
        assert mnp.broadcast_to(mnp.ones(src), shape).shape == want
    with pytest.raises(ValueError, match="-2"):
        mnp.broadcast_to(mnp.ones(5), (2, -2, 5))


def test_argmax_of_a_0d_array_takes_axis_0_and_minus_1_only():
    # real MXNet 1.9.1: argmax(0-d, 0) and (0-d, -1) are 0 (int64); axis 1 raises
    for fn in (mnp.argmax, mnp.argmin):
        a = mnp.array(0.5)
        assert [int(fn(a, ax)) for ax in (None, 0, -1)] == [0, 0, 0]
        with pytest.raises(mx.MXNetError):
            fn(a, 1)


def test_delete_ignores_index_array_entries_outside_the_axis():
    # real MXNet 1.9.1: np.delete(np.arange(12).reshape(4, 3), idx, axis=0)
    a = mnp.arange(12).reshape(4, 3)
    got = mnp.delete(a, mnp.array([0, 4, -5, 3], dtype="int32"), axis=0)
    assert got.tolist() == [[3.0, 4.0, 5.0], [6.0, 7.0, 8.0]]
    assert mnp.delete(a, mnp.array([-1], dtype="int32"), axis=0).shape == (4, 3)
    assert mnp.delete(a, -1, axis=1).shape == (4, 2)
    assert mnp.delete(mnp.ones((0, 3)), mnp.array([0, 0], dtype="int32"), axis=0).shape == (0, 3)


def test_boolean_arrays_get_gradients_like_integer_ones():
    # real MXNet 1.9.1: concatenate of bool arrays with attach_grad -> grads of True
    xs = [mnp.array([[True, False]], dtype="bool") for _ in range(2)]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        y = mnp.concatenate(xs, axis=0)
    y.backward()
    for x in xs:
        assert x.grad.dtype == onp.bool_ and x.grad.asnumpy().all()


def test_gamma_needs_a_positive_shape_and_scale():
    # real MXNet 1.9.1 raises ValueError for each of these (scale 0 included)
    for shape, scale in [
        (1, 0),
        (mnp.array(1.0), mnp.array(-1.0)),
        (0, 1),
        (mnp.array([1.0, 0.0]), 1),
    ]:
        with pytest.raises(ValueError):
            mnp.random.gamma(shape, scale)
    assert mnp.random.gamma(2.0, 1.0, size=(3,)).shape == (3,)


@mx.use_np
def test_a_block_returning_a_named_linalg_result_hybridizes():
    class Svd(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.np.linalg.svd(x)

    m = onp.array([[3.0, 1.0], [1.0, 2.0]], dtype=onp.float32)
    want = onp.linalg.svd(m)
    for hybridize in (False, True):
        net = Svd()
        if hybridize:
            net.hybridize()
        got = net(mnp.array(m))
        assert type(got) is type(want) and all(type(g) is mnp.ndarray for g in got)
        onp.testing.assert_allclose(onp.abs(got[1].asnumpy()), onp.abs(want[1]), rtol=1e-5)


@mx.use_np
def test_choice_in_a_hybridized_block_draws_from_the_traced_key():
    # the traced path is the registry op _npi_choice; without replacement draws are distinct
    class Weighted(gluon.HybridBlock):
        def __init__(self, replace):
            super().__init__()
            self.replace = replace

        def hybrid_forward(self, F, a, p):
            return F.np.random.choice(a, 5, self.replace, p)

    weights = onp.zeros(10, dtype=onp.float32)
    weights[[1, 3, 5, 7, 9]] = 0.2
    for replace in (True, False):
        net = Weighted(replace)
        net.hybridize()
        got = net(mnp.arange(10), mnp.array(weights)).asnumpy()
        assert got.shape == (5,) and set(got.tolist()) <= {1.0, 3.0, 5.0, 7.0, 9.0}
        if not replace:
            assert sorted(got.tolist()) == [1.0, 3.0, 5.0, 7.0, 9.0]


@mx.use_np
def test_pinv_with_an_array_rcond_and_full_like_with_a_context_hybridize():
    class Pinv(gluon.HybridBlock):
        def hybrid_forward(self, F, a, rcond):
            return F.np.linalg.pinv(a, rcond)

    class FullLike(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.np.full_like(x, 3, dtype="int32", ctx=mx.cpu())

    rng = onp.random.RandomState(0)
    a = rng.rand(2, 2, 4, 3).astype(onp.float32)
    rcond = onp.array([[0.1], [0.5]], dtype=onp.float32)
    for hybridize in (False, True):
        net, full = Pinv(), FullLike()
        if hybridize:
            net.hybridize()
            full.hybridize()
        got = net(mnp.array(a), mnp.array(rcond)).asnumpy()
        onp.testing.assert_allclose(got, onp.linalg.pinv(a, rcond), rtol=1e-4, atol=1e-5)
        assert full(mnp.ones((2, 3))).tolist() == [[3, 3, 3], [3, 3, 3]]
    # a scalar rcond: _npi_pinv_scalar_rcond (an attribute, as MXNet's)
    got = mnp.linalg.pinv(mnp.array(a), 0.5).asnumpy()
    onp.testing.assert_allclose(got, onp.linalg.pinv(a, 0.5), rtol=1e-4, atol=1e-5)


def test_tensorsolve_of_a_0d_a_matches_numpy():
    got = mnp.linalg.tensorsolve(mnp.array(2.0), mnp.ones((1, 1, 1)))
    want = onp.linalg.tensorsolve(onp.array(2.0), onp.ones((1, 1, 1)))
    assert got.shape == want.shape and float(got) == float(want)


@mx.use_np
def test_a_hybridized_block_calling_a_value_dependent_function_runs_op_by_op():
    # MXNet runs np.unique / constraint_check inside hybridized graphs; a compiled jax
    # program cannot hold them, so the block (and its hybridized parents) run op by op
    class Unique(gluon.HybridBlock):
        def hybrid_forward(self, F, a):
            return F.np.unique(a)

    class Check(gluon.HybridBlock):
        def hybrid_forward(self, F, b):
            return F.npx.constraint_check(b, "violated")

    class Net(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.dense = nn.Dense(2)
                self.unique = Unique()

        def hybrid_forward(self, F, x):
            return self.dense(x) + self.unique(x).sum()

    unique, check, net = Unique(), Check(), Net()
    net.initialize()
    for block in (unique, check, net):
        block.hybridize()
    assert unique(mnp.array([3.0, 1.0, 3.0, 2.0])).tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="violated"):
        check(mnp.zeros(3, dtype="bool")).asnumpy()
    assert bool(check(mnp.ones(3, dtype="bool")))
    x = mnp.ones((2, 3))
    x.attach_grad()
    with autograd.record():
        y = net(x)
    y.backward()
    w = net.dense.weight.data().asnumpy()
    onp.testing.assert_allclose(x.grad.asnumpy(), onp.tile(w.sum(0), (2, 1)), rtol=1e-6)
    with pytest.raises(mx.base.HybridizationError, match="np.unique"):
        unique.export("never-written", example_inputs=[mnp.array([1.0])])


@mx.use_np
def test_astype_none_is_float32_and_empty_like_hybridizes():
    # real MXNet 1.9.1: float64 and int32 arrays .astype(None) -> float32
    assert mnp.ones(2, dtype="float64").astype(None).dtype == onp.float32
    assert mnp.ones(2, dtype="int32").astype(None).dtype == onp.float32

    class EmptyLike(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.np.empty_like(x, "int8")

    net = EmptyLike()
    net.hybridize()
    got = net(mnp.ones((2, 3)))
    assert got.shape == (2, 3) and got.dtype == onp.int8


@mx.use_np
def test_hybridized_integer_outputs_of_float_inputs_pass_gradients_under_record():
    # real MXNet 1.9.1: a hybridized x.mean(dtype='int32') of float x under record gives
    # x.grad == 1/N (the cast passes the gradient); jax has no integer cotangents, so such
    # a recorded call runs op by op
    class Mean(gluon.HybridBlock):
        def hybrid_forward(self, F, a):
            return a.mean(axis=0, dtype="int32")

    net = Mean()
    net.hybridize()
    x = mnp.random.uniform(-1, 1, size=(3, 2))
    x.attach_grad()
    with autograd.record():
        y = net(x)
    y.backward()
    assert y.dtype == onp.int32
    onp.testing.assert_allclose(x.grad.asnumpy(), onp.full((3, 2), 1 / 3), rtol=1e-6)
    assert net(x).dtype == onp.int32  # outside record(): the compiled call


@mx.use_np
def test_hybridized_builtin_layers_return_np_arrays_in_numpy_mode():
    # MXNet 1.9.1: nn.Dense in NumPy mode returns mx.np.ndarray (exactly), hybridized or not
    net = nn.Dense(3)
    net.initialize()
    net.hybridize()
    x = mnp.ones((2, 4))
    x.attach_grad()
    assert type(net(x)) is mnp.ndarray
    with autograd.record():
        y = net(x)
        assert type(y) is mnp.ndarray
        loss = (y * 2).sum()
    loss.backward()
    assert type(y + 1) is mnp.ndarray and type(y) is mnp.ndarray
    w = net.weight.data().asnumpy()
    onp.testing.assert_allclose(x.grad.asnumpy(), onp.tile(2 * w.sum(0), (2, 1)), rtol=1e-6)
