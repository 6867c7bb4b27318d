"""The Symbol surface: composition, debug_str, attributes, children/internals,
indexing, copies, infer_shape/infer_type.

Expected values were taken from the real MXNet 1.9.1 running the same code
(``test_same_as_mxnet`` re-runs a script in both when .venv-mxnet exists).
"""

from __future__ import annotations

import copy
import json
import pickle
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import MXNetError
from gluonjax.symbol._eval import graph_function

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mxnet_ref import needs_mxnet, run_mxnet  # noqa: E402


def _names(sym):
    return [n["name"] for n in json.loads(sym.tojson())["nodes"]]


def _ab():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    s = mx.sym.elemwise_add(a, b, name="s")
    return a, b, s, mx.sym.Activation(s, act_type="relu", name="r")


# ----------------------------------------------------------------------------- composition
def test_compose_keyword_replaces_variable():
    data = mx.sym.var("data")
    net1 = mx.sym.FullyConnected(data, num_hidden=10, name="fc1")
    net2 = mx.sym.FullyConnected(mx.sym.var("data2"), num_hidden=5, name="fc2")
    before = net2.tojson()
    c = net2(data2=net1, name="composed")
    assert c.name == "composed"
    assert c.list_arguments() == ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    assert c.list_outputs() == ["composed_output"]
    assert _names(c) == [
        "data",
        "fc1_weight",
        "fc1_bias",
        "fc1",
        "fc2_weight",
        "fc2_bias",
        "composed",
    ]
    assert net2.tojson() == before and net2.name == "fc2"  # original untouched
    _, outs, _ = c.infer_shape(data=(4, 7))
    assert outs == [(4, 5)]


def test_compose_computes_the_composition():
    x = mx.sym.var("x")
    inner = mx.sym.clip(x * 2, a_min=-1, a_max=1)
    y = mx.sym.var("y")
    outer = mx.sym.exp(y) + y
    comp = outer(y=inner)
    xv = np.array([-2.0, -0.25, 0.3, 4.0], np.float32)
    (out,), _ = graph_function(comp)({"x": xv}, {})
    ref = np.clip(xv * 2, -1, 1)
    np.testing.assert_allclose(np.asarray(out), np.exp(ref) + ref, rtol=1e-6)


def test_compose_details():
    a, b, s, r = _ab()
    z = mx.sym.var("z")
    assert r(b=z).list_arguments() == ["a", "z"]
    assert r(b=z).name == "r" and r(b=z, name="nn").name == "nn"
    assert r(name="renamed").list_outputs() == ["renamed_output"]
    assert r().name == "r" and r().tojson() == r.tojson()
    # every variable of that name is replaced
    t = a * a + b
    assert t(a=mx.sym.var("u")).list_arguments() == ["u", "b"]
    # variables of the called graph are copied, the substituted graph is shared
    x2 = r(a=r)
    assert x2.list_arguments() == ["a", "b", "b"]
    assert _names(x2) == ["a", "b", "s", "r", "b", "s", "r"]
    # groups: all outputs kept, name renames the first head
    g = mx.sym.Group([r, s])
    assert g(a=mx.sym.var("k")).list_arguments() == ["k", "b"]
    assert g(a=mx.sym.var("k"), name="gg").list_outputs() == ["gg_output", "s_output"]
    # aux states can be replaced too
    bn = mx.sym.BatchNorm(mx.sym.var("x"), name="bn")
    c = bn(bn_moving_mean=mx.sym.var("mm"))
    assert c.list_auxiliary_states() == ["mm", "bn_moving_var"]
    assert c.list_arguments() == ["x", "bn_gamma", "bn_beta"]
    # one output of a multi-output node
    sp = mx.sym.split(mx.sym.var("d"), num_outputs=2, name="sp")
    doc = json.loads(r(a=sp[1]).tojson())
    assert doc["nodes"][2] == {"op": "null", "name": "b", "inputs": []}
    assert doc["nodes"][3]["inputs"] == [[1, 1, 0], [2, 0, 0]]


def test_compose_positional_in_argument_order():
    a, b, s, r = _ab()
    p, q = mx.sym.var("p"), mx.sym.var("q")
    assert r(p).list_arguments() == ["p", "b"]
    assert r(p, q).list_arguments() == ["p", "q"]
    assert r(None, q).list_arguments() == ["a", "q"]


@pytest.mark.parametrize(
    "call,exc,needle",
    [
        (lambda r: r(q=mx.sym.var("z")), MXNetError, "q not found"),
        (lambda r: r(b=3), TypeError, "Symbol"),
        (lambda r: r(b="x"), TypeError, "Symbol"),
        (lambda r: r(a=mx.sym.Group([mx.sym.var("u"), mx.sym.var("v")])), MXNetError, "group"),
        (lambda r: r(mx.sym.var("u"), b=mx.sym.var("v")), TypeError, "not both"),
        (lambda r: r(*[mx.sym.var(f"u{i}") for i in range(3)]), MXNetError, "positional"),
        (lambda r: r(name=5), TypeError, "name"),
        (lambda r: mx.sym.var("v")(v=mx.sym.var("w")), MXNetError, "variable"),
    ],
)
def test_compose_errors(call, exc, needle):
    *_, r = _ab()
    with pytest.raises(exc, match=needle) as info:
        call(r)
    assert isinstance(info.value, MXNetError)


# ----------------------------------------------------------------------------- debug_str
def test_debug_str_group():
    a, b, s, r = _ab()
    g = mx.sym.Group([r, s])
    assert g.debug_str() == (
        "Symbol Outputs:\n\toutput[0]=r(0)\n\toutput[1]=s(0)\nVariable:a\nVariable:b\n"
        "--------------------\nOp:elemwise_add, Name=s\nInputs:\n\targ[0]=a(0) version=0\n"
        "\targ[1]=b(0) version=0\n--------------------\nOp:Activation, Name=r\nInputs:\n"
        "\targ[0]=s(0)\nAttrs:\n\tact_type=relu\n"
    )
    assert a.debug_str() == "Variable:a\n"


def test_debug_str_multi_output_and_aux_versions():
    sp = mx.sym.split(mx.sym.var("d"), num_outputs=2, name="sp")
    body = (
        "Variable:d\n--------------------\nOp:SliceChannel, Name=sp\nInputs:\n"
        "\targ[0]=d(0) version=0\nAttrs:\n\tnum_outputs=2\n"
    )
    assert sp.debug_str() == "Symbol Outputs:\n\toutput[0]=sp(0)\n\toutput[1]=sp(1)\n" + body
    assert sp[1].debug_str() == "Symbol Outputs:\n\toutput[0]=sp(1)\n" + body
    bn = mx.sym.BatchNorm(mx.sym.var("x"), name="bnx", attr={"__a__": "1"}, fix_gamma=False)
    out = mx.sym.elemwise_add(bn, bn, name="add")
    assert out.debug_str() == (
        "Symbol Outputs:\n\toutput[0]=add(0)\nVariable:x\nVariable:bnx_gamma\n"
        "Variable:bnx_beta\nVariable:bnx_moving_mean\nVariable:bnx_moving_var\n"
        "--------------------\nOp:BatchNorm, Name=bnx\nInputs:\n\targ[0]=x(0) version=0\n"
        "\targ[1]=bnx_gamma(0) version=0\n\targ[2]=bnx_beta(0) version=0\n"
        "\targ[3]=bnx_moving_mean(0) version=1\n\targ[4]=bnx_moving_var(0) version=1\n"
        "Attrs:\n\t__a__=1\n\tfix_gamma=False\n--------------------\n"
        "Op:elemwise_add, Name=add\nInputs:\n\targ[0]=bnx(0)\n\targ[1]=bnx(0)\n"
    )


# ----------------------------------------------------------------------------- structure
def test_children_internals_inputs():
    a, b, s, r = _ab()
    assert r.get_children().list_outputs() == ["s_output"]
    assert a.get_children() is None
    assert mx.sym.Group([r, s]).get_children().list_outputs() == ["s_output", "a", "b"]
    assert mx.sym.Group([r, s]).get_internals().list_outputs() == ["a", "b", "s_output", "r_output"]
    bn = mx.sym.BatchNorm(mx.sym.var("x"), name="bn")
    assert bn.get_internals().list_outputs() == [
        "x",
        "bn_gamma",
        "bn_beta",
        "bn_moving_mean",
        "bn_moving_var",
        "bn_output",
    ]
    assert bn.list_inputs() == ["x", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var"]
    bn3 = mx.sym.BatchNorm(mx.sym.var("x"), name="bn3", output_mean_var=True)
    assert bn3.list_outputs() == ["bn3_output", "bn3_mean", "bn3_var"] and len(bn3) == 3


def test_indexing_by_name_and_position():
    a, b, s, r = _ab()
    internals = r.get_internals()
    assert internals["s_output"].name == "s"
    assert internals[1].name == "b"
    sp = mx.sym.split(mx.sym.var("d"), num_outputs=2, name="sp")
    assert sp["sp_output1"].list_outputs() == ["sp_output1"]
    assert [x.list_outputs() for x in sp] == [["sp_output0"], ["sp_output1"]]
    with pytest.raises(ValueError, match="nope"):
        r["nope"]
    with pytest.raises(IndexError):
        mx.sym.Group([r, s])[5]


def test_group_name_and_repr():
    a, b, s, r = _ab()
    g = mx.sym.Group([r, s])
    assert g.name is None
    assert repr(g) == "<Symbol group [r, s]>" and repr(r) == "<Symbol r>"
    assert g.list_outputs() == ["r_output", "s_output"]


def test_copy_deepcopy_pickle():
    a, b, s, r = _ab()
    for c in (copy.copy(r), copy.deepcopy(r), pickle.loads(pickle.dumps(r))):
        assert c is not r and c.tojson() == r.tojson()
    c = copy.copy(r)
    c._set_attr(__mark__="1")
    assert r.attr("__mark__") is None  # nodes are copied


# ----------------------------------------------------------------------------- attributes
def test_attr_and_list_attr():
    bn = mx.sym.BatchNorm(mx.sym.var("x"), name="bn", attr={"__a__": "1"}, fix_gamma=False)
    assert bn.attr("fix_gamma") == "False"
    assert bn.attr("__a__") == "1"
    assert bn.attr("a") is None and bn.attr("eps") is None
    assert bn.list_attr() == {"fix_gamma": "False", "__a__": "1"}
    with mx.attribute.AttrScope(ctx_group="g", lr_mult="2"):
        fc = mx.sym.FullyConnected(mx.sym.var("d", attr={"mood": "x"}), num_hidden=3, name="fc")
    scoped = {"__lr_mult__": "2", "lr_mult": "2", "__ctx_group__": "g", "ctx_group": "g"}
    assert fc.list_attr() == {"num_hidden": "3", **scoped}
    assert fc.attr("ctx_group") == "g" and fc.attr("lr_mult") == "2"
    assert fc.attr_dict() == {
        "d": {"mood": "x", **scoped},
        "fc_weight": {"num_hidden": "3", **scoped},
        "fc_bias": {"num_hidden": "3", **scoped},
        "fc": {"num_hidden": "3", **scoped},
    }
    g = mx.sym.Group([fc, bn])
    assert g.list_attr() == fc.list_attr() and g.attr("x") is None
    assert list(g.attr_dict()) == [
        "d",
        "fc_weight",
        "fc_bias",
        "fc",
        "bn_gamma",
        "bn_beta",
        "bn_moving_mean",
        "bn_moving_var",
        "bn",
    ]
    with pytest.warns(DeprecationWarning):
        assert fc.list_attr(recursive=True) == fc.list_attr()


def test_set_attr():
    fc = mx.sym.FullyConnected(mx.sym.var("d"), num_hidden=3, name="fc")
    fc._set_attr(num_hidden="5")
    assert fc.list_attr() == {"num_hidden": "5"}
    assert fc.infer_shape(d=(2, 3))[1] == [(2, 5)]
    fc._set_attr(ctx_group="h", __z__="1")
    assert fc.list_attr() == {
        "num_hidden": "5",
        "__ctx_group__": "h",
        "ctx_group": "h",
        "__z__": "1",
    }
    with pytest.raises(ValueError, match="string"):
        fc._set_attr(__foo__=3)
    with pytest.raises(MXNetError, match="foo"):
        fc._set_attr(foo="x")
    v = mx.sym.var("v")
    v._set_attr(anything="ok")
    assert v.list_attr() == {"anything": "ok"}


def test_var_attributes():
    assert mx.sym.var("x", shape=(0, 3)).list_attr() == {"__shape__": "(0, 3)"}
    assert mx.sym.var("x", init="zeros").list_attr() == {"__init__": "zeros"}
    assert mx.sym.var("x", stype="csr").list_attr() == {"__storage_type__": "2"}
    assert mx.sym.var("x", __extra__=5).list_attr() == {"__extra__": "5"}
    assert mx.sym.var("x", dtype="float64").list_attr() == {"__dtype__": "1"}
    assert mx.sym.var("x", lr_mult=0.5, wd_mult=2).list_attr() == {
        "__wd_mult__": "2",
        "wd_mult": "2",
        "__lr_mult__": "0.5",
        "lr_mult": "0.5",
    }
    assert mx.sym.var("x", attr={"lr_mult": "3"}).list_attr() == {
        "__lr_mult__": "3",
        "lr_mult": "3",
    }


def test_auto_variables_inherit_attributes():
    with mx.attribute.AttrScope(__foo__="bar"):
        fc = mx.sym.FullyConnected(mx.sym.var("d"), num_hidden=10, attr={"__x__": "y"}, name="fc")
    assert fc.attr_dict()["fc_weight"] == {"__foo__": "bar", "__x__": "y", "num_hidden": "10"}
    pr = mx.sym.LeakyReLU(mx.sym.var("d"), act_type="prelu", name="pr")
    assert pr.attr_dict()["pr_gamma"] == {
        "__init__": '["Constant", {"value": 0.25}]',
        "act_type": "prelu",
    }


# ----------------------------------------------------------------------------- inference
F32, F16, F64 = np.float32, np.float16, np.float64


def test_infer_shape_cases():
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=10, name="fc1")
    assert fc.infer_shape(data=(2, 3)) == ([(2, 3), (10, 3), (10,)], [(2, 10)], [])
    assert fc.infer_shape((2, 3)) == ([(2, 3), (10, 3), (10,)], [(2, 10)], [])
    with pytest.warns(UserWarning, match="data"):
        assert fc.infer_shape() == (None, None, None)
    assert fc.infer_shape_partial() == ([(), (), ()], [()], [])
    assert fc.infer_shape_partial(fc1_weight=(10, 3)) == ([(), (10, 3), ()], [()], [])
    with pytest.warns(UserWarning):
        assert fc.infer_shape(data=(0, 3)) == (None, None, None)
    assert fc.infer_shape_partial(data=(0, 3))[0] == [(0, 3), (10, 3), (10,)]
    with pytest.raises(MXNetError):
        fc.infer_shape(data=(2, 3), fc1_weight=(10, 4))
    with pytest.raises(MXNetError, match="nope"):
        fc.infer_shape(nope=(1, 2))
    conv = mx.sym.Convolution(mx.sym.var("x"), kernel=(3, 3), num_filter=4, name="c")
    p = mx.sym.Pooling(
        mx.sym.BatchNorm(conv, name="bn"), kernel=(2, 2), stride=(2, 2), pool_type="avg"
    )
    expect = ([(1, 2, 8, 8), (4, 2, 3, 3), (4,), (4,), (4,)], [(1, 4, 3, 3)], [(4,), (4,)])
    assert p.infer_shape(x=(1, 2, 8, 8)) == expect
    assert p.infer_shape_partial(x=(1, 2, 8, 8)) == expect
    assert (mx.sym.var("v", shape=(4, 5)) * 2).infer_shape() == ([(4, 5)], [(4, 5)], [])
    g = mx.sym.Group([fc, mx.sym.Cast(fc.get_children()[0], dtype="float16")])
    assert g.infer_shape(data=(2, 3)) == ([(2, 3), (10, 3), (10,)], [(2, 10), (2, 3)], [])


def test_infer_type_cases():
    d = mx.sym.var("data")
    c = mx.sym.Cast(d, dtype="float16")
    assert c.infer_type(data="float32") == ([F32], [F16], [])
    with pytest.warns(UserWarning, match="data"):
        assert c.infer_type() == (None, None, None)
    fc = mx.sym.FullyConnected(d, num_hidden=10, name="fc1")
    assert fc.infer_type(data=np.float64) == ([F64] * 3, [F64], [])
    assert fc.infer_type(np.float16) == ([F16] * 3, [F16], [])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert fc.infer_type() == (None, None, None)
    fc16 = mx.sym.FullyConnected(c, num_hidden=3, name="f2")
    assert fc16.infer_type(data="float32") == ([F32, F16, F16], [F16], [])
    assert (mx.sym.var("q", dtype="float16") + 1).infer_type() == ([F16], [F16], [])
    g = mx.sym.Group([fc, c])
    assert g.infer_type(data="float32") == ([F32] * 3, [F32, F16], [])
    conv = mx.sym.Convolution(mx.sym.var("x"), kernel=(3, 3), num_filter=4, name="c")
    bn = mx.sym.BatchNorm(conv, name="bn")
    assert bn.infer_type(x="float16") == ([F16, F16, F16, F32, F32], [F16], [F32, F32])
    ij = mx.sym.var("i") + mx.sym.var("j")
    assert ij.infer_type(i="int32") == ([np.int32, np.int32], [np.int32], [])


# ----------------------------------------------------------------------------- live check
SAME = r"""
import json
def show(x):
    print(json.dumps(x, default=str, sort_keys=True))
a = mx.sym.var('a'); b = mx.sym.var('b')
s = mx.sym.elemwise_add(a, b, name='s')
r = mx.sym.Activation(s, act_type='relu', name='r')
c = r(b=mx.sym.FullyConnected(mx.sym.var('z'), num_hidden=2, name='fz'), name='cc')
show(json.loads(c.tojson()))
show(c.debug_str())
show([c.list_arguments(), c.list_outputs(), c.list_inputs(), c.name])
show(c.get_internals().list_outputs())
show(c.get_children().list_outputs())
show(c.attr_dict())
show(c.infer_shape(z=(3, 4)))
show([str(t) for t in c.infer_type(z='float64')[1]])
with mx.attribute.AttrScope(ctx_group='q'):
    bn = mx.sym.BatchNorm(c, name='bn', momentum=0.8)
show(json.loads(bn.tojson()))
show(bn.debug_str())
show(bn.list_attr())
"""


@needs_mxnet
def test_same_as_mxnet(capsys):
    ref = run_mxnet("import mxnet as mx\n" + SAME)
    exec(compile(SAME, "<same>", "exec"), {"mx": mx})
    assert capsys.readouterr().out == ref


# ----------------------------------------------------------------------------- names, functions
def test_auto_names_follow_mxnet():
    with mx.name.NameManager():
        a, b = mx.sym.var("a"), mx.sym.var("b")
        got = [
            s.name
            for s in (
                mx.sym.broadcast_to(a, shape=(2,)),
                a + 1,
                a * b,
                a + b,
                1 - a,
                a / 2,
                2 / a,
                a**2,
                mx.sym.elemwise_add(a, b),
                mx.sym.FullyConnected(a, num_hidden=2),
                mx.sym.Cast(a, dtype="float16"),
                a.astype("float16"),
                -a,
                a > b,
                a > 1,
                mx.sym.slice_axis(a, axis=0, begin=0, end=1),
                mx.sym.expand_dims(a, axis=0),
                mx.sym.add_n(a, b),
                mx.sym.concat(a, b),
                mx.sym.SoftmaxOutput(a),
                mx.sym.zeros((2,)),
                mx.sym.maximum(a, b),
                mx.sym.maximum(a, 1),
                mx.sym.power(2, a),
            )
        ]
    assert got == [
        "broadcast_to0",
        "_plusscalar0",
        "_mul0",
        "_plus0",
        "_rminusscalar0",
        "_divscalar0",
        "_rdivscalar0",
        "_powerscalar0",
        "elemwise_add0",
        "fullyconnected0",
        "cast0",
        "cast1",
        "_mulscalar0",
        "_greater0",
        "_greater_scalar0",
        "slice_axis0",
        "expand_dims0",
        "add_n0",
        "concat0",
        "softmaxoutput0",
        "_zeros0",
        "_maximum0",
        "_maximumscalar0",
        "_rpowerscalar0",
    ]


def test_creation_and_binary_functions():
    with mx.name.NameManager():
        doc = json.loads(
            mx.sym.Group(
                [
                    mx.sym.zeros((2, 3)),
                    mx.sym.ones(4, dtype="int32"),
                    mx.sym.full((2,), 3.5),
                    mx.sym.arange(1, 7, 2, repeat=2, dtype="int32"),
                    mx.sym.eye(3),
                ]
            ).tojson()
        )
    assert [(n["op"], n["name"], n["attrs"]) for n in doc["nodes"]] == [
        ("_zeros", "_zeros0", {"dtype": "float32", "shape": "(2, 3)"}),
        ("_ones", "_ones0", {"dtype": "int32", "shape": "4"}),
        ("_full", "_full0", {"dtype": "float32", "shape": "(2,)", "value": "3.5"}),
        (
            "_arange",
            "_arange0",
            {
                "dtype": "int32",
                "infer_range": "False",
                "repeat": "2",
                "start": "1",
                "step": "2",
                "stop": "7",
            },
        ),
        ("_eye", "_eye0", {"M": "0", "N": "3", "dtype": "float32", "k": "0"}),
    ]
    assert mx.sym.maximum(1, 2) == 2 and mx.sym.minimum(1, 2) == 1
    a = mx.sym.var("a")
    m = mx.sym.Group(
        [
            mx.sym.maximum(a, 0.5),
            mx.sym.minimum(0.5, a),
            mx.sym.power(a, 2),
            mx.sym.power(2, a),
            mx.sym.pow(a, a),
        ]
    )
    av = np.array([0.25, 1.5], np.float32)
    outs, _ = graph_function(m)({"a": av}, {})
    refs = [np.maximum(av, 0.5), np.minimum(av, 0.5), av**2, 2**av, av**av]
    for o, r in zip(outs, refs):
        np.testing.assert_allclose(np.asarray(o), r, rtol=1e-6)
    with pytest.raises(MXNetError):
        mx.sym.maximum("x", a)


def test_declarative_symbol_has_no_shape():
    a = mx.sym.var("a")
    assert not hasattr(a, "shape") and not hasattr(a, "dtype")
    with pytest.raises(AttributeError, match="infer_shape"):
        a.shape
