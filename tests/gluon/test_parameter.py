"""Parameter and Constant (MXNet 1.9.1 semantics, checked with the real MXNet)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import nd
from gluonjax.base import DeferredInitializationError, MXNetError
from gluonjax.gluon import Constant, Parameter, ParameterDict, nn


def test_embedding_full_shape_no_deferral():
    emb = nn.Embedding(7, 3)
    assert emb.weight.shape == (7, 3)
    emb.initialize()
    assert emb.weight.data().shape == (7, 3)
    out = emb(nd.array([[0, 6], [1, 2]]))
    np.testing.assert_allclose(out.asnumpy(), emb.weight.data().asnumpy()[[[0, 6], [1, 2]]])


def test_deferred_hybridized_inference():
    net = nn.HybridSequential()
    net.add(nn.Dense(4, activation="relu"), nn.Dense(2))
    net.initialize()
    net.hybridize()
    assert net(nd.ones((3, 7))).shape == (3, 2)
    assert net[0].weight.shape == (4, 7)
    assert net[1].weight.shape == (2, 4)


def test_deferred_error_message():
    p = Parameter("q", shape=(0, 2), allow_deferred_init=True)
    p.initialize()
    with pytest.raises(DeferredInitializationError) as err:
        p.data()
    msg = str(err.value)
    assert "'q'" in msg and "deferred" in msg and "forward" in msg
    assert isinstance(err.value, MXNetError)


def test_uninitialized_error_message():
    p = Parameter("q2", shape=(3, 2))
    with pytest.raises(MXNetError) as err:
        p.data()
    assert not isinstance(err.value, DeferredInitializationError)
    assert "'q2'" in str(err.value) and "initialize" in str(err.value)
    with pytest.raises(MXNetError):
        p.grad()


def test_initialize_invalid_shape_without_deferral():
    # MXNet: "Cannot initialize Parameter 'q3' because it has invalid shape: (0, 2)."
    p = Parameter("q3", shape=(0, 2))
    with pytest.raises(MXNetError, match="q3"):
        p.initialize()


# ---------------------------------------------------------------- init / data
def test_initialize_and_force_reinit():
    p = Parameter("w", shape=(3, 2))
    p.initialize(init="ones")
    np.testing.assert_array_equal(p.data().asnumpy(), np.ones((3, 2), np.float32))
    with pytest.warns(UserWarning):
        p.initialize(init="zeros")  # ignored without force_reinit
    np.testing.assert_array_equal(p.data().asnumpy(), np.ones((3, 2), np.float32))
    p.initialize(init=mx.init.Constant(3), force_reinit=True)
    np.testing.assert_array_equal(p.data().asnumpy(), np.full((3, 2), 3, np.float32))


def test_own_init_wins_over_default():
    # MXNet: the parameter's own init beats the block-level initialize(init)
    net = nn.Dense(2, in_units=3, weight_initializer="ones")
    net.initialize(mx.init.Constant(5))
    np.testing.assert_array_equal(net.weight.data().asnumpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(net.bias.data().asnumpy(), np.zeros(2))  # bias init 'zeros'


def test_default_uniform_range():
    p = Parameter("u", shape=(50, 40))
    p.initialize()
    v = p.data().asnumpy()
    assert v.min() >= -0.07 and v.max() <= 0.07 and v.std() > 0.02


def test_set_data_keeps_identity_and_checks_shape():
    p = Parameter("w", shape=(2, 2))
    p.initialize()
    arr = p.data()
    new = np.arange(4, dtype=np.float32).reshape(2, 2)
    p.set_data(nd.array(new))
    np.testing.assert_array_equal(p.data().asnumpy(), new)
    assert p.data() is arr
    with pytest.raises(MXNetError):
        p.set_data(nd.ones((3, 2)))


def test_grad_and_zero_grad():
    p = Parameter("w", shape=(2, 3))
    p.initialize(init="ones")
    np.testing.assert_array_equal(p.grad().asnumpy(), np.zeros((2, 3)))
    x = nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    with mx.autograd.record():
        y = (p.data() * x).sum()
    y.backward()
    np.testing.assert_allclose(p.grad().asnumpy(), x.asnumpy())
    p.zero_grad()
    np.testing.assert_array_equal(p.grad().asnumpy(), np.zeros((2, 3)))


@pytest.mark.parametrize("req", ["write", "add"])
def test_grad_req_write_add(req):
    p = Parameter("w", shape=(3,), grad_req=req)
    p.initialize(init="ones")
    x = nd.array([1.0, 2.0, 3.0])
    for _ in range(2):
        with mx.autograd.record():
            y = (p.data() * p.data() * x).sum()  # d/dw = 2 w x
        y.backward()
    expect = 2 * x.asnumpy() * (2 if req == "add" else 1)
    np.testing.assert_allclose(p.grad().asnumpy(), expect)


def test_grad_req_null_and_invalid():
    p = Parameter("w", shape=(2,))
    p.initialize()
    p.grad_req = "null"
    with pytest.raises(MXNetError, match="null"):
        p.grad()
    with pytest.raises(MXNetError):
        p.grad_req = "foo"
    p.grad_req = "write"
    np.testing.assert_array_equal(p.grad().asnumpy(), np.zeros(2))


def test_not_differentiable_is_null():
    p = Parameter("w", shape=(2,), differentiable=False)
    assert p.grad_req == "null"
    p.grad_req = "write"
    assert p.grad_req == "null"


def test_lr_wd_mult():
    p = Parameter("w", shape=(2,), lr_mult=0.5, wd_mult=0.0)
    assert (p.lr_mult, p.wd_mult) == (0.5, 0.0)
    p.lr_mult = 2.0
    assert p.lr_mult == 2.0
    net = nn.Dense(2, in_units=2)
    net.collect_params().setattr("lr_mult", 3.0)
    assert all(q.lr_mult == 3.0 for q in net.collect_params().values())


def test_cast():
    p = Parameter("w", shape=(2, 2))
    p.initialize(init="ones")
    p.cast("float16")
    assert p.dtype == np.float16
    assert p.data().dtype == np.float16
    assert p.grad().dtype == np.float16
    np.testing.assert_array_equal(p.data().asnumpy(), np.ones((2, 2), np.float16))


def test_repr():
    # MXNet 1.9.1 prints dtype=<class 'numpy.float32'>
    p = Parameter("q2", shape=(3, 2))
    assert repr(p) == "Parameter q2 (shape=(3, 2), dtype=<class 'numpy.float32'>)"
    c = Constant("k", nd.ones((2,)))
    assert repr(c) == "Constant k (shape=(2,), dtype=<class 'numpy.float32'>)"


def test_constant():
    value = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    c = Constant("const", nd.array(value))
    assert c.grad_req == "null"
    assert c.shape == (2, 2)
    c.initialize()
    np.testing.assert_array_equal(c.data().asnumpy(), value)
    c.grad_req = "write"  # a constant stays untrainable
    assert c.grad_req == "null"


def test_constant_in_block():
    class Scale(mx.gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            self.s = self.params.get_constant("s", [[2.0, 3.0]])

        def hybrid_forward(self, F, x, s):
            return F.broadcast_mul(x, s)

    blk = Scale()
    blk.initialize(init="zeros")  # the constant keeps its value whatever the init
    x = np.array([[1.0, 1.0], [2.0, 5.0]], np.float32)
    expect = x * np.array([[2.0, 3.0]])
    np.testing.assert_allclose(blk(nd.array(x)).asnumpy(), expect)
    blk.hybridize()
    np.testing.assert_allclose(blk(nd.array(x)).asnumpy(), expect)


def test_var():
    p = Parameter("q2", shape=(3, 2), lr_mult=2.0)
    v = p.var()
    assert isinstance(v, mx.sym.Symbol)
    assert v.name == "q2"
    assert v.list_arguments() == ["q2"]
    assert v.attr("__shape__") == "(3, 2)"
    assert v.attr("__lr_mult__") == "2.0"
    assert p.var() is v


@pytest.mark.parametrize(
    "value, dtype",
    [([[1, 2]], np.float32), ([1.5, 2.0], np.float32), (nd.array([1, 2], dtype="int32"), np.int32)],
)
def test_constant_dtype(value, dtype):
    # MXNet 1.9.1 turns a Python list into nd.array(value): float32
    c = Constant("k", value)
    assert c.dtype == dtype
    c.initialize()
    assert c.data().dtype == dtype


# ---------------------------------------------------------------- ParameterDict
def test_paramdict_get_create_retrieve_merge():
    pd = ParameterDict("p_")
    a = pd.get("w", shape=(0, 3))
    b = pd.get("w", shape=(2, 0))
    assert a is b and a.name == "p_w" and a.shape == (2, 3)
    assert list(pd.keys()) == ["p_w"] and pd.prefix == "p_"


@pytest.mark.parametrize("kwargs", [{"lr_mult": 2.0}, {"shape": (3, 3)}, {"dtype": "float16"}])
def test_paramdict_get_mismatch(kwargs):
    pd = ParameterDict("p_")
    pd.get("w", shape=(2, 3))
    with pytest.raises(MXNetError, match="p_w"):
        pd.get("w", **kwargs)


def test_paramdict_get_constant():
    pd = ParameterDict("p_")
    c = pd.get_constant("c", [[1, 2]])
    assert c.shape == (1, 2) and c.grad_req == "null" and pd.get_constant("c") is c
    with pytest.raises(MXNetError, match="p_nope"):
        pd.get_constant("nope")


def test_paramdict_shared():
    sh = ParameterDict("s_")
    w = sh.get("w", shape=(2,))
    c = ParameterDict("s_", shared=sh)
    assert c.get("w") is w and list(c.keys()) == ["s_w"]


def test_paramdict_update_conflict_changes_nothing():
    a = ParameterDict("a_")
    a.get("x", shape=(1,))
    a.get("y", shape=(1,))
    b = ParameterDict("a_")
    b.get("w", shape=(1,))
    b.get("y", shape=(1,))
    with pytest.raises(MXNetError, match="a_y"):
        a.update(b)
    assert list(a.keys()) == ["a_x", "a_y"]  # MXNet checks before adding anything
    c = ParameterDict("c_")
    c.get("z", shape=(1,))
    a.update(c)
    assert list(a.keys()) == ["a_x", "a_y", "c_z"]


def test_paramdict_initialize_zero_grad_setattr():
    pd = ParameterDict("t_")
    p = pd.get("z", shape=(2,))
    pd.initialize(mx.init.One())
    np.testing.assert_array_equal(p.data().asnumpy(), [1, 1])
    with mx.autograd.record():
        loss = (p.data() * 3).sum()
    loss.backward()
    np.testing.assert_array_equal(p.grad().asnumpy(), [3, 3])
    pd.zero_grad()
    np.testing.assert_array_equal(p.grad().asnumpy(), [0, 0])
    pd.setattr("grad_req", "null")
    assert p.grad_req == "null"


def _select_net():
    net = nn.HybridSequential(prefix="hs_")
    with net.name_scope():
        net.add(nn.Dense(2, in_units=2), nn.Dense(2, in_units=2), nn.BatchNorm(in_channels=2))
    return net


@pytest.mark.parametrize(
    "select",
    [".*weight", ".*dense0.*|.*bias", "dense", ".*running_.*", "hs_batchnorm0_(gamma|beta)"],
)
def test_collect_params_select_regex(select):
    net = _select_net()
    names = list(net.collect_params().keys())
    expect = [n for n in names if re.match(select, n)]  # MXNet: re.compile(select).match
    assert list(net.collect_params(select).keys()) == expect


def test_collect_params_select_known_values():
    net = _select_net()
    assert list(net.collect_params(".*dense0.*|.*bias").keys()) == [
        "hs_dense0_weight",
        "hs_dense0_bias",
        "hs_dense1_bias",
    ]
    assert list(net.collect_params("dense").keys()) == []  # anchored at the start
    net.collect_params(".*running.*").setattr("grad_req", "null")
    net.collect_params().setattr("grad_req", "null")
    assert {p.grad_req for p in net.collect_params().values()} == {"null"}
