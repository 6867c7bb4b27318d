"""The Symbol-API seed tutorial (seed 004) run as written, ``import gluonjax as mx``.

Every code example of the tutorial is copied verbatim (only the import changes)
and followed by asserts on what it prints or returns. Expected values were
checked with real MXNet 1.9.1 (names, argument lists, shapes, dtypes, JSON
round trip) or are computed here with NumPy (numbers). Each test runs inside a
fresh ``mx.name.NameManager()`` so auto-names start at 0 as in a new session.
Seed 002's plain-Python examples (imperative vs. symbolic ``fancy_func``) are at
the end; its PyTorch code has no gluonjax counterpart.
"""

# ruff: noqa: UP031, B905 (the tutorial code is kept as written)

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: test_viz.parse_dot


@pytest.fixture(autouse=True)
def _fresh_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the tutorial writes symbol-c.json in the cwd
    with mx.name.NameManager():
        yield


def _dot_nodes_edges(dot):
    """[(node, label, fillcolor)], [(tail, head, label)] of a plot_network Digraph."""
    from test_viz import parse_dot

    _, _, nodes, edges = parse_dot(dot.source)
    return (
        [(n, a["label"], a["fillcolor"]) for n, a in nodes],
        [(t, h, a["label"]) for t, h, a in edges],
    )


@pytest.fixture
def _viz_parser():
    pytest.importorskip("graphviz")


def _abc():
    a = mx.sym.Variable("a")
    b = mx.sym.Variable("b")
    c = a + b
    return a, b, c


# ---------------------------------------------------------------- Basic Operators
def test_basic_operators_tuple():
    a = mx.sym.Variable("a")
    b = mx.sym.Variable("b")
    c = a + b
    res = (a, b, c)
    assert repr(res) == "(<Symbol a>, <Symbol b>, <Symbol _plus0>)"


def test_basic_operators_plot(_viz_parser):
    a, b, c = _abc()
    # elemental wise multiplication
    d = a * b
    # matrix multiplication
    e = mx.sym.dot(a, b)
    # reshape
    f = mx.sym.reshape(d + e, shape=(1, 4))
    # broadcast
    g = mx.sym.broadcast_to(f, shape=(2, 4))
    # plot
    dot = mx.viz.plot_network(symbol=g, node_attrs={"shape": "oval", "fixedsize": "false"})
    nodes, edges = _dot_nodes_edges(dot)
    # c = a + b is not part of g's graph (MXNet draws the same 7 nodes)
    assert nodes == [
        ("a", "a", "#8dd3c7"),
        ("b", "b", "#8dd3c7"),
        ("_mul0", "_mul0", "#fccde5"),
        ("dot0", "dot0", "#fccde5"),
        ("_plus1", "_plus1", "#fccde5"),
        ("reshape0", "reshape0", "#fdb462"),
        ("broadcast_to0", "broadcast_to0", "#fccde5"),
    ]
    assert edges == [
        ("_mul0", "a", ""),
        ("_mul0", "b", ""),
        ("dot0", "a", ""),
        ("dot0", "b", ""),
        ("_plus1", "_mul0", ""),
        ("_plus1", "dot0", ""),
        ("reshape0", "_plus1", ""),
        ("broadcast_to0", "reshape0", ""),
    ]
    assert g.list_arguments() == ["a", "b"]
    assert g.infer_shape(a=(2, 2), b=(2, 2)) == ([(2, 2), (2, 2)], [(2, 4)], [])
    an, bn = np.array([[1.0, 2], [3, 4]]), np.array([[5.0, 6], [7, 8]])
    out = g.eval(ctx=mx.cpu(), a=mx.nd.array(an), b=mx.nd.array(bn))[0].asnumpy()
    expect = np.broadcast_to((an * bn + an @ bn).reshape(1, 4), (2, 4))
    np.testing.assert_allclose(out, expect)


# ---------------------------------------------------------------- Basic Neural Networks
def _mlp():
    net = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data=net, name="fc1", num_hidden=128)
    net = mx.sym.Activation(data=net, name="relu1", act_type="relu")
    net = mx.sym.FullyConnected(data=net, name="fc2", num_hidden=10)
    net = mx.sym.SoftmaxOutput(data=net, name="out")
    return net


def test_basic_neural_network(_viz_parser):
    net = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data=net, name="fc1", num_hidden=128)
    net = mx.sym.Activation(data=net, name="relu1", act_type="relu")
    net = mx.sym.FullyConnected(data=net, name="fc2", num_hidden=10)
    net = mx.sym.SoftmaxOutput(data=net, name="out")
    dot = mx.viz.plot_network(
        net, shape={"data": (100, 200)}, node_attrs={"shape": "oval", "fixedsize": "false"}
    )
    nodes, edges = _dot_nodes_edges(dot)
    assert [n[:2] for n in nodes] == [
        ("data", "data"),
        ("fc1", "FullyConnected\n128"),
        ("relu1", "Activation\nrelu"),
        ("fc2", "FullyConnected\n10"),
        ("out_label", "out_label"),
        ("out", "out"),
    ]
    assert [e[2] for e in edges] == ["200", "128", "128", "10", ""]
    assert net.list_arguments() == [
        "data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias", "out_label",
    ]  # fmt: skip
    assert net.list_outputs() == ["out_output"]
    assert net.infer_shape(data=(100, 200)) == (
        [(100, 200), (128, 200), (128,), (10, 128), (10,), (100,)],
        [(100, 10)],
        [],
    )


def test_named_weight_variable():
    net = mx.symbol.Variable("data")
    w = mx.symbol.Variable("myweight")
    net = mx.symbol.FullyConnected(data=net, weight=w, name="fc1", num_hidden=128)
    assert net.list_arguments() == ["data", "myweight", "fc1_bias"]


# ---------------------------------------------------------------- More Complicated Composition
def test_composition_of_sum():
    lhs = mx.symbol.Variable("data1")
    rhs = mx.symbol.Variable("data2")
    net = mx.symbol.FullyConnected(data=lhs + rhs, name="fc1", num_hidden=128)
    assert net.list_arguments() == ["data1", "data2", "fc1_weight", "fc1_bias"]


def test_composition_by_call(_viz_parser):
    data = mx.symbol.Variable("data")
    net1 = mx.symbol.FullyConnected(data=data, name="fc1", num_hidden=10)
    assert net1.list_arguments() == ["data", "fc1_weight", "fc1_bias"]
    net2 = mx.symbol.Variable("data2")
    net2 = mx.symbol.FullyConnected(data=net2, name="fc2", num_hidden=10)
    composed = net2(data2=net1, name="composed")
    assert composed.list_arguments() == ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    # MXNet 1.9.1: the name given to the call renames the head node; net2 is unchanged
    assert composed.name == "composed"
    assert composed.list_outputs() == ["composed_output"]
    assert net2.list_arguments() == ["data2", "fc2_weight", "fc2_bias"]
    assert composed.infer_shape(data=(3, 5)) == (
        [(3, 5), (10, 5), (10,), (10, 10), (10,)],
        [(3, 10)],
        [],
    )
    # "the network graph": two chained FC layers
    nodes, edges = _dot_nodes_edges(mx.viz.plot_network(composed, shape={"data": (3, 5)}))
    assert [n[:2] for n in nodes] == [
        ("data", "data"),
        ("fc1", "FullyConnected\n10"),
        ("composed", "FullyConnected\n10"),
    ]
    assert edges == [("fc1", "data", "5"), ("composed", "fc1", "10")]


def test_name_prefix():
    data = mx.sym.Variable("data")
    net = data
    n_layer = 2
    for i in range(n_layer):
        with mx.name.Prefix("layer%d_" % (i + 1)):
            net = mx.sym.FullyConnected(data=net, name="fc", num_hidden=100)
    assert net.list_arguments() == [
        "data", "layer1_fc_weight", "layer1_fc_bias", "layer2_fc_weight", "layer2_fc_bias",
    ]  # fmt: skip
    assert net.name == "layer2_fc"


# ---------------------------------------------------------------- Modularized Construction
def ConvFactory(data, num_filter, kernel, stride=(1, 1), pad=(0, 0), name=None, suffix=""):
    conv = mx.sym.Convolution(
        data=data, num_filter=num_filter, kernel=kernel, stride=stride, pad=pad,
        name="conv_%s%s" % (name, suffix),
    )  # fmt: skip
    bn = mx.sym.BatchNorm(data=conv, name="bn_%s%s" % (name, suffix))
    act = mx.sym.Activation(data=bn, act_type="relu", name="relu_%s%s" % (name, suffix))
    return act


def InceptionFactoryA(data, num_1x1, num_3x3red, num_3x3, num_d3x3red, num_d3x3, pool, proj, name):
    # 1x1
    c1x1 = ConvFactory(data=data, num_filter=num_1x1, kernel=(1, 1), name=("%s_1x1" % name))
    # 3x3 reduce + 3x3
    c3x3r = ConvFactory(
        data=data, num_filter=num_3x3red, kernel=(1, 1), name=("%s_3x3" % name), suffix="_reduce"
    )
    c3x3 = ConvFactory(
        data=c3x3r, num_filter=num_3x3, kernel=(3, 3), pad=(1, 1), name=("%s_3x3" % name)
    )
    # double 3x3 reduce + double 3x3
    cd3x3r = ConvFactory(
        data=data, num_filter=num_d3x3red, kernel=(1, 1), name=("%s_double_3x3" % name),
        suffix="_reduce",
    )  # fmt: skip
    cd3x3 = ConvFactory(
        data=cd3x3r, num_filter=num_d3x3, kernel=(3, 3), pad=(1, 1),
        name=("%s_double_3x3_0" % name),
    )  # fmt: skip
    cd3x3 = ConvFactory(
        data=cd3x3, num_filter=num_d3x3, kernel=(3, 3), pad=(1, 1),
        name=("%s_double_3x3_1" % name),
    )  # fmt: skip
    # pool + proj
    pooling = mx.sym.Pooling(
        data=data, kernel=(3, 3), stride=(1, 1), pad=(1, 1), pool_type=pool,
        name=("%s_pool_%s_pool" % (pool, name)),
    )  # fmt: skip
    cproj = ConvFactory(data=pooling, num_filter=proj, kernel=(1, 1), name=("%s_proj" % name))
    # concat
    concat = mx.sym.Concat(*[c1x1, c3x3, cd3x3, cproj], name="ch_concat_%s_chconcat" % name)
    return concat


def test_conv_factory(_viz_parser):
    prev = mx.sym.Variable(name="Previous Output")
    conv_comp = ConvFactory(data=prev, num_filter=64, kernel=(7, 7), stride=(2, 2))
    shape = {"Previous Output": (128, 3, 28, 28)}
    dot = mx.viz.plot_network(
        symbol=conv_comp, shape=shape, node_attrs={"shape": "oval", "fixedsize": "false"}
    )
    nodes, edges = _dot_nodes_edges(dot)
    assert nodes == [
        ("Previous Output", "Previous Output", "#8dd3c7"),
        ("conv_None", "Convolution\n7x7/2x2, 64", "#fb8072"),
        ("bn_None", "bn_None", "#bebada"),
        ("relu_None", "Activation\nrelu", "#ffffb3"),
    ]
    # (28 - 7) // 2 + 1 = 11
    assert edges == [
        ("conv_None", "Previous Output", "3x28x28"),
        ("bn_None", "conv_None", "64x11x11"),
        ("relu_None", "bn_None", "64x11x11"),
    ]
    assert conv_comp.list_arguments() == [
        "Previous Output", "conv_None_weight", "conv_None_bias", "bn_None_gamma", "bn_None_beta",
    ]  # fmt: skip
    assert conv_comp.list_auxiliary_states() == ["bn_None_moving_mean", "bn_None_moving_var"]


def test_inception_factory(_viz_parser):
    shape = {"Previous Output": (128, 3, 28, 28)}
    prev = mx.sym.Variable(name="Previous Output")
    in3a = InceptionFactoryA(prev, 64, 64, 64, 64, 96, "avg", 32, name="in3a")
    dot = mx.viz.plot_network(
        symbol=in3a, shape=shape, node_attrs={"shape": "oval", "fixedsize": "false"}
    )
    nodes, edges = _dot_nodes_edges(dot)
    assert len(nodes) == 1 + 7 * 3 + 1 + 1  # input, 7 conv/bn/relu, pooling, concat
    assert nodes[-1] == ("ch_concat_in3a_chconcat", "ch_concat_in3a_chconcat", "#fdb462")
    assert ("avg_pool_in3a_pool", "Pooling\navg, 3x3/1x1", "#80b1d3") in nodes
    concat_in = [(h, lab) for t, h, lab in edges if t == "ch_concat_in3a_chconcat"]
    assert concat_in == [
        ("relu_in3a_1x1", "64x28x28"),
        ("relu_in3a_3x3", "64x28x28"),
        ("relu_in3a_double_3x3_1", "96x28x28"),
        ("relu_in3a_proj", "32x28x28"),
    ]
    _, out_shapes, _ = in3a.infer_shape(**shape)
    assert out_shapes == [(128, 64 + 64 + 96 + 32, 28, 28)]


# ---------------------------------------------------------------- Group Multiple Symbols
def test_group():
    net = mx.sym.Variable("data")
    fc1 = mx.sym.FullyConnected(data=net, name="fc1", num_hidden=128)
    net = mx.sym.Activation(data=fc1, name="relu1", act_type="relu")
    out1 = mx.sym.SoftmaxOutput(data=net, name="softmax")
    out2 = mx.sym.LinearRegressionOutput(data=net, name="regression")
    group = mx.sym.Group([out1, out2])
    assert group.list_outputs() == ["softmax_output", "regression_output"]
    assert group.list_arguments() == [
        "data", "fc1_weight", "fc1_bias", "softmax_label", "regression_label",
    ]  # fmt: skip
    assert group.infer_shape(data=(4, 6)) == (
        [(4, 6), (128, 6), (128,), (4,), (4, 128)],
        [(4, 128), (4, 128)],
        [],
    )


# ---------------------------------------------------------------- Shape and Type Inference
def test_shape_and_type_inference():
    a, b, c = _abc()
    arg_name = c.list_arguments()  # get the names of the inputs
    out_name = c.list_outputs()  # get the names of the outputs
    # infers output shape given the shape of input arguments
    arg_shape, out_shape, _ = c.infer_shape(a=(2, 3), b=(2, 3))
    # infers output type given the type of input arguments
    arg_type, out_type, _ = c.infer_type(a="float32", b="float32")
    shapes = {"input": dict(zip(arg_name, arg_shape)), "output": dict(zip(out_name, out_shape))}
    types = {"input": dict(zip(arg_name, arg_type)), "output": dict(zip(out_name, out_type))}
    assert shapes == {"input": {"a": (2, 3), "b": (2, 3)}, "output": {"_plus0_output": (2, 3)}}
    assert types == {
        "input": {"a": np.float32, "b": np.float32},
        "output": {"_plus0_output": np.float32},
    }


# ---------------------------------------------------------------- Bind with Data and Evaluate
def test_bind_and_forward(capsys):
    a, b, c = _abc()
    ex = c.bind(ctx=mx.cpu(), args={"a": mx.nd.ones([2, 3]), "b": mx.nd.ones([2, 3])})
    ex.forward()
    print(
        "number of outputs = %d\nthe first output = \n%s"
        % (len(ex.outputs), ex.outputs[0].asnumpy())
    )
    expect = np.ones((2, 3), np.float32) + np.ones((2, 3), np.float32)
    assert capsys.readouterr().out == ("number of outputs = 1\nthe first output = \n%s\n" % expect)
    assert str(expect) == "[[2. 2. 2.]\n [2. 2. 2.]]"


def test_bind_on_other_device():
    a, b, c = _abc()
    gpu_device = mx.cpu()  # Change this to mx.cpu() in absence of GPUs.
    ex_gpu = c.bind(
        ctx=gpu_device,
        args={"a": mx.nd.ones([3, 4], gpu_device) * 2, "b": mx.nd.ones([3, 4], gpu_device) * 3},
    )
    ex_gpu.forward()
    np.testing.assert_array_equal(ex_gpu.outputs[0].asnumpy(), np.full((3, 4), 5.0, np.float32))


def test_eval(capsys):
    a, b, c = _abc()
    ex = c.eval(ctx=mx.cpu(), a=mx.nd.ones([2, 3]), b=mx.nd.ones([2, 3]))
    print("number of outputs = %d\nthe first output = \n%s" % (len(ex), ex[0].asnumpy()))
    assert isinstance(ex, list)
    assert capsys.readouterr().out == (
        "number of outputs = 1\nthe first output = \n[[2. 2. 2.]\n [2. 2. 2.]]\n"
    )


def test_simple_bind_forward_backward():
    """ "simple_bind creates all the argument arrays; then forward and backward"."""
    net = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data=net, name="fc1", num_hidden=4)
    net = mx.sym.SoftmaxOutput(data=net, name="out")
    ex = net.simple_bind(ctx=mx.cpu(), data=(3, 5))
    shapes = {k: v.shape for k, v in ex.arg_dict.items()}
    assert shapes == {"data": (3, 5), "fc1_weight": (4, 5), "fc1_bias": (4,), "out_label": (3,)}
    assert sorted(ex.grad_dict) == ["data", "fc1_bias", "fc1_weight", "out_label"]
    r = np.random.RandomState(0)
    x, w, bias = r.randn(3, 5), r.randn(4, 5), r.randn(4)
    label = np.array([0, 3, 1])
    for k, v in (("data", x), ("fc1_weight", w), ("fc1_bias", bias), ("out_label", label)):
        ex.arg_dict[k][:] = v
    ex.forward(is_train=True)
    z = x @ w.T + bias
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), p, rtol=1e-5, atol=1e-6)
    ex.backward()
    dz = p - np.eye(4)[label]  # SoftmaxOutput's gradient (grad_scale 1, no normalization)
    np.testing.assert_allclose(ex.grad_dict["fc1_weight"].asnumpy(), dz.T @ x, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ex.grad_dict["fc1_bias"].asnumpy(), dz.sum(0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ex.grad_dict["data"].asnumpy(), dz @ w, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- Load and Save
def test_tojson_save_load(capsys):
    a, b, c = _abc()
    print(c.tojson())
    c.save("symbol-c.json")
    c2 = mx.sym.load("symbol-c.json")
    assert c.tojson() == c2.tojson()
    # the printed JSON is MXNet's graph format (checked against MXNet 1.9.1's output)
    graph = json.loads(capsys.readouterr().out)
    assert graph["nodes"] == [
        {"op": "null", "name": "a", "inputs": []},
        {"op": "null", "name": "b", "inputs": []},
        {"op": "elemwise_add", "name": "_plus0", "inputs": [[0, 0, 0], [1, 0, 0]]},
    ]
    assert graph["arg_nodes"] == [0, 1]
    assert graph["node_row_ptr"] == [0, 1, 2, 3]
    assert graph["heads"] == [[2, 0, 0]]
    assert graph["attrs"] == {"mxnet_version": ["int", 10901]}
    with open("symbol-c.json") as fh:
        assert json.load(fh) == graph
    assert c2.list_arguments() == ["a", "b"] and c2.list_outputs() == ["_plus0_output"]
    out = c2.eval(ctx=mx.cpu(), a=mx.nd.ones([2, 3]), b=mx.nd.ones([2, 3]) * 4)[0]
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 3), 5.0, np.float32))


# ---------------------------------------------------------------- Type Cast
def test_type_cast(capsys):
    a = mx.sym.Variable("data")
    b = mx.sym.cast(data=a, dtype="float16")
    arg, out, _ = b.infer_type(data="float32")
    print({"input": arg, "output": out})
    c = mx.sym.cast(data=a, dtype="uint8")
    arg, out, _ = c.infer_type(data="int32")
    print({"input": arg, "output": out})
    assert capsys.readouterr().out == (
        "{'input': [<class 'numpy.float32'>], 'output': [<class 'numpy.float16'>]}\n"
        "{'input': [<class 'numpy.int32'>], 'output': [<class 'numpy.uint8'>]}\n"
    )
    assert (b.name, c.name) == ("cast0", "cast1")


# ---------------------------------------------------------------- Variable Sharing
def test_variable_sharing():
    a = mx.sym.Variable("a")
    b = mx.sym.Variable("b")
    b = a + a * a
    data = mx.nd.ones((2, 3)) * 2
    ex = b.bind(ctx=mx.cpu(), args={"a": data, "b": data})
    ex.forward()
    res = ex.outputs[0].asnumpy()
    an = np.full((2, 3), 2.0, np.float32)
    np.testing.assert_array_equal(res, an + an * an)  # all 6
    assert b.list_arguments() == ["a"]


# ---------------------------------------------------------------- seed 002 (plain Python)
def test_seed002_imperative_fancy_func(capsys):
    def add(a, b):
        return a + b

    def fancy_func(a, b, c, d):
        e = add(a, b)
        f = add(c, d)
        g = add(e, f)
        return g

    print(fancy_func(1, 2, 3, 4))
    assert capsys.readouterr().out == "10\n"


def test_seed002_symbolic_fancy_func(capsys):
    def add_():
        return """
def add(a, b):
    return a + b
"""

    def fancy_func_():
        return """
def fancy_func(a, b, c, d):
    e = add(a, b)
    f = add(c, d)
    g = add(e, f)
    return g
"""

    def evoke_():
        return add_() + fancy_func_() + "print(fancy_func(1, 2, 3, 4))"

    prog = evoke_()
    print(prog)
    y = compile(prog, "", "exec")
    exec(y, {})  # noqa: S102
    out = capsys.readouterr().out
    assert out == prog + "\n10\n"
    assert out.endswith("print(fancy_func(1, 2, 3, 4))\n10\n")
