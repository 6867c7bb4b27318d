"""Symbol API details MXNet 1.9.1 code relies on: bool(), children, atomic symbols,
node attributes given as op keywords, fluent methods with names, non-differentiable
ops at bind time, and Executor.reshape sharing outputs. Expected values are MXNet's
(as its own unit tests state them) or NumPy's."""

from __future__ import annotations

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import MXNetError, NotImplementedForSymbol


def test_bool_of_a_declarative_symbol_raises_not_implemented_for_symbol():
    x = mx.sym.var("x")
    with pytest.raises(NotImplementedForSymbol, match="bool"):
        bool(x)


def test_bool_of_a_traced_symbol_is_both_errors():
    """Inside a trace a symbol has a value; bool() of it is a hybridization error that
    MXNet code catching NotImplementedForSymbol also catches."""
    import jax.numpy as jnp

    traced = mx.sym.Symbol(mx.sym.var("x")._outputs, value=jnp.ones(1))
    with pytest.raises(NotImplementedForSymbol) as err:
        bool(traced)
    assert isinstance(err.value, mx.base.HybridizationError)


def test_get_children_lists_each_node_once():
    data = mx.sym.var("data")
    fc1 = mx.sym.FullyConnected(data, name="fc1", num_hidden=10)
    fc2 = mx.sym.FullyConnected(fc1, name="fc2", num_hidden=100)
    assert fc2.get_children().list_outputs() == ["fc1_output", "fc2_weight", "fc2_bias"]
    assert fc2.get_children()["fc2_weight"].get_children() is None
    sliced = mx.sym.SliceChannel(data, num_outputs=3, name="slice")
    assert sliced.get_children().list_outputs() == ["data"]
    concat = mx.sym.Concat(*list(sliced))
    assert concat.get_children().list_outputs() == [f"slice_output{i}" for i in range(3)]


def test_gen_atomic_symbol_keeps_the_op_and_all_outputs():
    data = mx.sym.var("data")
    sliced = mx.sym.SliceChannel(data * 2, num_outputs=3, axis=1, name="slice")
    atom = sliced._gen_atomic_symbol()
    assert atom.list_arguments() == ["data"]
    assert atom.list_outputs() == [f"slice_output{i}" for i in range(3)]
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    outs = atom.eval(data=mx.nd.array(x))
    for got, want in zip(outs, np.split(x, 3, axis=1), strict=True):
        np.testing.assert_array_equal(got.asnumpy(), want)
    with pytest.raises(MXNetError, match="one node"):
        mx.sym.Group([data * 2, data + 1])._gen_atomic_symbol()


def test_op_keywords_lr_mult_and_dunder_keys_are_node_attributes():
    data = mx.sym.var("data", attr={"mood": "angry"})
    op = mx.sym.Convolution(
        data, name="conv", kernel=(1, 1), num_filter=1, attr={"__mood__": "so so"}, lr_mult=1
    )
    attrs = op.attr_dict()
    assert attrs["data"] == {"mood": "angry"}
    assert {"__mood__": "so so", "lr_mult": "1", "__lr_mult__": "1"}.items() <= attrs[
        "conv"
    ].items()
    assert attrs["conv_weight"]["__mood__"] == "so so"
    act = mx.sym.Activation(data, act_type="relu", __layout__="TNC")
    assert act.attr("__layout__") == "TNC"
    assert mx.sym.load_json(act.tojson()).attr("__layout__") == "TNC"
    with pytest.raises(MXNetError, match="deprecated"):
        mx.sym.FullyConnected(data, num_hidden=2, weight_lr_mult=2)


def test_fluent_methods_take_name_and_attr():
    data = mx.sym.var("data")
    s = data.abs(name="abs0", attr={"k": "v"})
    assert s.name == "abs0" and s.attr("k") == "v"
    assert data.reshape((2, 3), name="r").name == "r"


def test_binding_for_a_gradient_through_a_non_differentiable_op_raises():
    x, idx = mx.sym.var("x"), mx.sym.var("idx")
    y = mx.sym.batch_take(x, idx)
    types = {"x": np.float32, "idx": np.int32}
    with pytest.raises(MXNetError, match="non-differentiable"):
        y.simple_bind(mx.cpu(), x=(4, 3), idx=(4,), type_dict=types)
    exe = mx.sym.stop_gradient(y).simple_bind(mx.cpu(), x=(4, 3), idx=(4,), type_dict=types)
    xv = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = exe.forward(x=xv, idx=np.array([0, 2, 1, 0]))[0].asnumpy()
    np.testing.assert_array_equal(out, xv[np.arange(4), [0, 2, 1, 0]])
    y.simple_bind(mx.cpu(), x=(4, 3), idx=(4,), type_dict=types, grad_req="null")


def test_reshaped_executor_outputs_show_in_the_original():
    x = mx.sym.var("x")
    y = mx.sym.FullyConnected(x, num_hidden=4)
    exe = y.simple_bind(mx.cpu(), x=(5, 4), grad_req="null")
    exe.arg_arrays[0][:] = 1
    exe.arg_arrays[1][:] = mx.nd.ones((4, 4))
    exe.arg_arrays[2][:] = 0
    small = exe.reshape(x=(3, 4))
    small.forward()
    np.testing.assert_array_equal(small.outputs[0].asnumpy(), np.full((3, 4), 4.0))
    np.testing.assert_array_equal(exe.outputs[0].asnumpy()[:3], np.full((3, 4), 4.0))
    exe.arg_arrays[0][:] = 2
    exe.forward()
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), np.full((5, 4), 8.0))
    big = exe.reshape(allow_up_sizing=True, x=(6, 4))
    big.arg_arrays[0][:] = 0
    np.testing.assert_array_equal(exe.arg_arrays[0].asnumpy(), np.full((5, 4), 2.0))
    assert big.arg_arrays[1] is exe.arg_arrays[1]


def test_equal_graphs_share_one_compiled_program():
    def net():
        return mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=3, name="fc")

    a = net().simple_bind(mx.cpu(), x=(2, 4))
    b = net().simple_bind(mx.cpu(), x=(5, 4))
    assert a._program is b._program
    c = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=2, name="fc").simple_bind(
        mx.cpu(), x=(2, 4)
    )
    assert c._program is not a._program


def test_group2ctx_places_arguments_of_a_ctx_group():
    with mx.AttrScope(ctx_group="dev1"):
        a = mx.sym.var("a") * 2
    with mx.AttrScope(ctx_group="dev2"):
        b = mx.sym.var("b")
        c = a + b
    exe = c.simple_bind(
        mx.cpu(0), group2ctx={"dev1": mx.cpu(1), "dev2": mx.cpu(2)}, a=(2, 3), b=(2, 3)
    )
    out = exe.forward(a=np.ones((2, 3)), b=np.full((2, 3), 5.0))[0].asnumpy()
    np.testing.assert_array_equal(out, np.full((2, 3), 7.0))
    exe.backward(mx.nd.ones((2, 3)))
    np.testing.assert_array_equal(exe.grad_dict["a"].asnumpy(), np.full((2, 3), 2.0))


def test_ops_without_parameters_ignore_extra_keywords_in_sym_as_in_nd():
    # MXNet stores unknown keywords of a parameterless op as node attributes and ignores
    # them; gluoncv's CenterNet calls F.zeros_like(x, dtype='int64') in a hybridized block
    x = mx.sym.var("x")
    y = mx.sym.zeros_like(x, dtype="int64")
    assert y.list_arguments() == ["x"]
    data = mx.nd.array(np.arange(3), dtype="int32")
    got = y.eval(x=data)[0]
    want = mx.nd.zeros_like(data, dtype="int64")
    np.testing.assert_array_equal(got.asnumpy(), np.zeros(3, np.int32))
    assert got.dtype == want.dtype == np.int32


def test_none_keywords_of_parameterless_ops_are_ignored_but_not_of_others():
    # MXNet 1.9.1: zeros_like(x, dtype=None) and relu(x, foo=None) run (the op has no
    # parameters to check them against); FullyConnected(..., foo=None) raises
    # "Cannot find argument 'foo'" (checked against MXNet 1.9.1)
    data = mx.nd.array(np.arange(6).reshape(2, 3))
    assert mx.nd.zeros_like(data, dtype=None).dtype == np.float32
    assert mx.nd.relu(data, foo=None).shape == (2, 3)
    x = mx.sym.var("x")
    assert mx.sym.ones_like(x, dtype=None).infer_type(x="float32")[1] == [np.float32]
    assert mx.sym.relu(x, foo=None).infer_shape(x=(2, 3))[1] == [(2, 3)]
    with pytest.raises(mx.base.MXNetError, match="foo"):
        mx.nd.FullyConnected(data, mx.nd.ones((2, 3)), mx.nd.ones(2), num_hidden=2, foo=None)
    with pytest.raises(mx.base.MXNetError, match="foo"):
        mx.sym.FullyConnected(x, num_hidden=2, foo=None)


def test_infer_type_of_ops_whose_outputs_take_their_own_dtype():
    # each expected list is what MXNet 1.9.1's infer_type answers for float16 data
    x = mx.sym.var("x")
    S, f16, f32, f64, i32 = mx.sym, np.float16, np.float32, np.float64, np.int32
    cases = [
        (S.argsort(x), [f32]),
        (S.argsort(x, dtype="int32"), [i32]),
        (S.topk(x), [f32]),
        (S.topk(x, ret_typ="both", dtype="int32"), [f16, i32]),
        (S.topk(x, ret_typ="value"), [f16]),
        (S.topk(x, ret_typ="mask"), [f16]),
        (S.sample_multinomial(x), [i32]),
        (S.sample_multinomial(x, get_prob=True, dtype="uint8"), [np.uint8, f16]),
        (S.sample_normal(x, x), [f32]),
        (S.sample_normal(x, x, dtype="float64"), [f64]),
        (S.softmax(x, dtype="float64"), [f64]),
        (S.argmax(x), [f16]),
        (S.random.uniform_like(x), [f16]),
        (S.Dropout(x, p=0.5), [f16]),
    ]
    for sym, want in cases:
        assert sym.infer_type(x="float16")[1] == want, sym.list_outputs()
    assert S.random.randint(0, 5, shape=(2,)).infer_type()[1] == [i32]
    assert S.random_uniform(shape=(2,)).infer_type()[1] == [f32]
    assert S.random_normal(shape=(2,), dtype="float64").infer_type()[1] == [f64]
