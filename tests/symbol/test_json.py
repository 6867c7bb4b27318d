"""Symbol JSON: MXNet 1.9.1 schema written by tojson/save, and load/load_json.

Expected documents are written by hand from MXNet 1.9.1's format (checked
against ``mx.sym.*.tojson()`` of the real MXNet for the same graphs).
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import FileFormatError, MXNetError
from gluonjax.symbol import _json


def _fc_graph():
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=10, name="fc1")
    return mx.sym.Activation(fc, act_type="relu", name="relu1")


FC_EXPECTED = {
    "nodes": [
        {"op": "null", "name": "data", "inputs": []},
        {"op": "null", "name": "fc1_weight", "attrs": {"num_hidden": "10"}, "inputs": []},
        {"op": "null", "name": "fc1_bias", "attrs": {"num_hidden": "10"}, "inputs": []},
        {
            "op": "FullyConnected",
            "name": "fc1",
            "attrs": {"num_hidden": "10"},
            "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]],
        },
        {"op": "Activation", "name": "relu1", "attrs": {"act_type": "relu"}, "inputs": [[3, 0, 0]]},
    ],
    "arg_nodes": [0, 1, 2],
    "node_row_ptr": [0, 1, 2, 3, 4, 5],
    "heads": [[4, 0, 0]],
    "attrs": {"mxnet_version": ["int", 10901]},
}


def test_tojson_schema_matches_mxnet():
    assert json.loads(_fc_graph().tojson()) == FC_EXPECTED


def test_batchnorm_aux_versions_and_init():
    data = mx.sym.var("data")
    bn = mx.sym.BatchNorm(data, fix_gamma=False, name="bn")
    doc = json.loads(bn.tojson())
    by_name = {n["name"]: n for n in doc["nodes"]}
    assert by_name["bn_moving_mean"]["attrs"] == {"__init__": '["zero", {}]', "fix_gamma": "False"}
    assert by_name["bn_moving_var"]["attrs"] == {"__init__": '["one", {}]', "fix_gamma": "False"}
    # aux states are mutated by BatchNorm: their entries carry version 1
    assert by_name["bn"]["inputs"] == [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 1], [4, 0, 1]]
    assert doc["node_row_ptr"] == [0, 1, 2, 3, 4, 5, 8]  # BatchNorm has 3 outputs
    assert doc["heads"] == [[5, 0, 0]]


def test_variable_attrs_written():
    v = mx.sym.var(
        "x", shape=(2, 3), lr_mult=2.0, wd_mult=0.5, dtype="float16", init=mx.init.Zero()
    )
    node = json.loads(v.tojson())["nodes"][0]
    assert node["attrs"] == {
        "__dtype__": "2",
        "__init__": '["zero", {}]',
        "__lr_mult__": "2.0",
        "__shape__": "(2, 3)",
        "__wd_mult__": "0.5",
    }


def test_group_heads_and_shared_inputs():
    a = mx.sym.var("a")
    b = mx.sym.var("b")
    s = a + b
    g = mx.sym.Group([s * a, s])
    doc = json.loads(g.tojson())
    names = [n["name"] for n in doc["nodes"]]
    ops = [n["op"] for n in doc["nodes"]]
    assert ops == ["null", "null", "elemwise_add", "elemwise_mul"]
    assert doc["heads"] == [[3, 0, 0], [2, 0, 0]]
    assert doc["nodes"][3]["inputs"] == [[2, 0, 0], [0, 0, 0]]
    assert "attrs" not in doc["nodes"][2]
    assert names[:2] == ["a", "b"]


def test_roundtrip_preserves_everything(tmp_path):
    data = mx.sym.var("data", shape=(1, 3, 8, 8))
    conv = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name="c")
    bn = mx.sym.BatchNorm(conv, name="bn")
    pool = mx.sym.Pooling(bn, kernel=(2, 2), stride=(2, 2), pool_type="max", name="p")
    out = mx.sym.Concat(pool, pool * 2, dim=1, name="cat")
    fname = str(tmp_path / "net-symbol.json")
    out.save(fname)
    text = open(fname).read()
    back = mx.sym.load(fname)
    assert back.tojson() == text
    assert back.list_arguments() == ["data", "c_weight", "c_bias", "bn_gamma", "bn_beta"]
    assert back.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert back.list_outputs() == ["cat_output"]
    _, outs, _ = back.infer_shape()
    assert outs == [(1, 8, 4, 4)]
    assert mx.sym.fromjson(text).tojson() == text
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_loaded_graph_computes():
    x = mx.sym.var("x")
    y = mx.sym.clip(x * 3 + 1, a_min=0, a_max=5)
    back = mx.sym.load_json(y.tojson())
    from gluonjax.symbol._eval import graph_function

    xv = np.array([-1.0, 0.5, 2.0], np.float32)
    (out,), _ = graph_function(back)({"x": xv}, {})
    np.testing.assert_allclose(np.asarray(out), np.clip(xv * 3 + 1, 0, 5))


def test_aliases_and_string_attrs_parse():
    doc = {
        "nodes": [
            {"op": "null", "name": "x", "inputs": []},
            {"op": "flatten", "name": "f", "inputs": [[0, 0, 0]]},
            {
                "op": "clip",
                "name": "c",
                "attrs": {"a_min": "-1", "a_max": "1.5"},
                "inputs": [[1, 0, 0]],
            },
        ],
        "arg_nodes": [0],
        "heads": [[2, 0, 0]],
    }
    s = mx.sym.load_json(json.dumps(doc))
    _, outs, _ = s.infer_shape(x=(2, 3, 4))
    assert outs == [(2, 12)]
    assert s.list_attr() == {"a_min": "-1", "a_max": "1.5"}
    assert json.loads(s.tojson())["nodes"][1]["op"] == "Flatten"


def test_legacy_formats():
    doc = {
        "nodes": [
            {
                "op": "null",
                "param": {},
                "name": "data",
                "inputs": [],
                "backward_source_id": -1,
                "attr": {"ctx_group": "g1"},
            },
            {
                "op": "null",
                "param": {},
                "name": "fc_weight",
                "inputs": [],
                "backward_source_id": -1,
            },
            {"op": "null", "param": {}, "name": "fc_bias", "inputs": [], "backward_source_id": -1},
            {
                "op": "FullyConnected",
                "param": {"no_bias": "False", "num_hidden": "5"},
                "name": "fc",
                "inputs": [[0, 0], [1, 0], [2, 0]],
                "backward_source_id": -1,
                "attr": {"lr_mult": "0.1"},
            },
        ],
        "arg_nodes": [0, 1, 2],
        "heads": [[3, 0]],
    }
    s = mx.sym.load_json(json.dumps(doc))
    assert s.list_arguments() == ["data", "fc_weight", "fc_bias"]
    assert s.attr("lr_mult") == "0.1"
    assert s.get_internals()["data"].list_attr()["__ctx_group__"] == "g1"
    _, outs, _ = s.infer_shape(data=(3, 7))
    assert outs == [(3, 5)]


def test_node_loaders_hook():
    from gluonjax._ops.registry import Attr, Op

    def build(name, attrs):
        return Op(name=name, impl=lambda data, k: data * k, attrs={"k": Attr("float", 1.0)})

    _json.NODE_LOADERS["testprefix."] = build
    try:
        doc = {
            "nodes": [
                {"op": "null", "name": "x", "inputs": []},
                {
                    "op": "testprefix.scale",
                    "name": "s",
                    "attrs": {"k": "2.5"},
                    "inputs": [[0, 0, 0]],
                },
            ],
            "arg_nodes": [0],
            "heads": [[1, 0, 0]],
        }
        s = mx.sym.load_json(json.dumps(doc))
        from gluonjax.symbol._eval import graph_function

        (out,), _ = graph_function(s)({"x": np.ones(2, np.float32)}, {})
        np.testing.assert_allclose(np.asarray(out), [2.5, 2.5])
        assert json.loads(s.tojson())["nodes"][1] == doc["nodes"][1]
    finally:
        del _json.NODE_LOADERS["testprefix."]


# ----------------------------------------------------------------------------- malformed input
def _doc(**over):
    doc = {
        "nodes": [
            {"op": "null", "name": "x", "inputs": []},
            {"op": "relu", "name": "r", "inputs": [[0, 0, 0]]},
        ],
        "arg_nodes": [0],
        "node_row_ptr": [0, 1, 2],
        "heads": [[1, 0, 0]],
        "attrs": {"mxnet_version": ["int", 10901]},
    }
    doc.update(over)
    return doc


def _node1(**over):
    n = {"op": "relu", "name": "r", "inputs": [[0, 0, 0]]}
    n.update(over)
    return _doc(nodes=[{"op": "null", "name": "x", "inputs": []}, n])


BAD = [
    ("truncated", lambda: json.dumps(_doc())[:-7], "not valid JSON"),
    ("empty", lambda: "", "not valid JSON"),
    ("top list", lambda: "[1, 2]", "top level"),
    ("no nodes", lambda: json.dumps({"heads": [[0, 0, 0]]}), "'nodes'"),
    ("no heads", lambda: json.dumps({"nodes": _doc()["nodes"]}), "'heads'"),
    ("nodes not list", lambda: json.dumps(_doc(nodes={"a": 1})), "'nodes'"),
    ("node not object", lambda: json.dumps(_doc(nodes=[1])), "node 0"),
    ("unknown op", lambda: json.dumps(_node1(op="Convolutin")), "Convolution"),
    ("op not string", lambda: json.dumps(_node1(op=3)), "'op' must be a string"),
    (
        "missing name",
        lambda: json.dumps(_doc(nodes=[{"op": "null", "inputs": []}])),
        "missing field 'name'",
    ),
    (
        "missing inputs",
        lambda: json.dumps(_doc(nodes=[_doc()["nodes"][0], {"op": "relu", "name": "r"}])),
        "missing field 'inputs'",
    ),
    ("forward input", lambda: json.dumps(_node1(inputs=[[1, 0, 0]])), "comes after"),
    ("out of range input", lambda: json.dumps(_node1(inputs=[[7, 0, 0]])), "does not exist"),
    ("negative input", lambda: json.dumps(_node1(inputs=[[-1, 0, 0]])), "does not exist"),
    ("bad output index", lambda: json.dumps(_node1(inputs=[[0, 1, 0]])), "output 1"),
    ("input not list", lambda: json.dumps(_node1(inputs=[5])), "input 0 must be"),
    ("input float", lambda: json.dumps(_node1(inputs=[[0.0, 0, 0]])), "input 0 must be"),
    ("too many inputs", lambda: json.dumps(_node1(inputs=[[0, 0, 0], [0, 0, 0]])), "takes 1 input"),
    ("head out of range", lambda: json.dumps(_doc(heads=[[5, 0, 0]])), "head 0"),
    ("head hidden output", lambda: json.dumps(_doc(heads=[[1, 3, 0]])), "head 0"),
    (
        "duplicate key",
        lambda: json.dumps(_doc()).replace('"name": "r"', '"name": "r", "name": "q"'),
        "duplicate key 'name'",
    ),
    (
        "bad attr value",
        lambda: json.dumps(_node1(op="clip", attrs={"a_min": "abc", "a_max": "1"})),
        "a_min",
    ),
    ("missing required attr", lambda: json.dumps(_node1(op="clip", attrs={"a_min": "0"})), "a_max"),
    ("unknown attr", lambda: json.dumps(_node1(attrs={"bogus": "1"})), "bogus"),
    (
        "attr not string",
        lambda: json.dumps(_node1(op="clip", attrs={"a_min": 0, "a_max": "1"})),
        "must be a string",
    ),
    ("attrs not object", lambda: json.dumps(_node1(attrs=[1])), "'attrs' must be an object"),
    (
        "variable with inputs",
        lambda: json.dumps(
            _doc(
                nodes=[
                    {"op": "null", "name": "x", "inputs": []},
                    {"op": "null", "name": "y", "inputs": [[0, 0, 0]]},
                ],
                heads=[[1, 0, 0]],
            )
        ),
        "cannot have inputs",
    ),
    ("backward node", lambda: json.dumps(_node1(backward_source_id=0)), "backward"),
    ("unknown node field", lambda: json.dumps(_node1(extra_field=1)), "unknown field"),
    ("NaN constant", lambda: json.dumps(_doc()).replace("10901", "NaN"), "NaN"),
    ("arg_nodes not var", lambda: json.dumps(_doc(arg_nodes=[1])), "arg_nodes"),
    (
        "bad dtype flag",
        lambda: json.dumps(
            _doc(
                nodes=[
                    {"op": "null", "name": "x", "attrs": {"__dtype__": "99"}, "inputs": []},
                    _doc()["nodes"][1],
                ]
            )
        ),
        "__dtype__",
    ),
]


@pytest.mark.parametrize("case,make,needle", BAD, ids=[b[0] for b in BAD])
def test_malformed_json_raises(case, make, needle):
    with pytest.raises(FileFormatError) as info:
        mx.sym.load_json(make())
    msg = str(info.value)
    assert needle in msg, msg
    assert isinstance(info.value, MXNetError)


def test_malformed_errors_name_the_node():
    with pytest.raises(FileFormatError, match=r"node 1 \('r'\)"):
        mx.sym.load_json(json.dumps(_node1(inputs=[[1, 0, 0]])))
    with pytest.raises(FileFormatError, match=r"node 1 \('r'\).*unknown operator 'relux'"):
        mx.sym.load_json(json.dumps(_node1(op="relux")))


def test_load_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.json") as err:  # a FileError
        mx.sym.load(str(tmp_path / "missing.json"))
    assert isinstance(err.value, MXNetError)
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe{")
    with pytest.raises(FileFormatError, match="bad.json"):
        mx.sym.load(str(bad))
    with pytest.raises(MXNetError):
        mx.sym.load_json(42)


def test_passthrough_attributes_round_trip():
    doc = _node1(op="_plus_scalar", attrs={"is_int": "True", "scalar": "2"})
    s = mx.sym.load_json(json.dumps(doc))
    assert json.loads(s.tojson())["nodes"][1]["attrs"] == {"is_int": "True", "scalar": "2"}
    (out,), _ = graph_function_of(s)({"x": np.array([1.0, 2.0], np.float32)}, {})
    np.testing.assert_allclose(np.asarray(out), [3.0, 4.0])


def graph_function_of(s):
    from gluonjax.symbol._eval import graph_function

    return graph_function(s)


MORE_BAD = [
    ("heads not list", lambda: json.dumps(_doc(heads=5)), "'heads'"),
    ("head entry str", lambda: json.dumps(_doc(heads=["x"])), "head 0 must be"),
    ("row_ptr type", lambda: json.dumps(_doc(node_row_ptr="x")), "node_row_ptr"),
    ("top attrs type", lambda: json.dumps(_doc(attrs=[])), "'attrs'"),
    ("arg_nodes type", lambda: json.dumps(_doc(arg_nodes=[0.5])), "arg_nodes"),
    ("deep nesting", lambda: "[" * 100000 + "]" * 100000, "nesting too deep"),
    (
        "empty var name",
        lambda: json.dumps(
            _doc(nodes=[{"op": "null", "name": "", "inputs": []}], heads=[[0, 0, 0]])
        ),
        "non-empty name",
    ),
    ("name not string", lambda: json.dumps(_node1(name=7)), "'name' must be a string"),
    ("inputs not list", lambda: json.dumps(_node1(inputs={"a": 1})), "'inputs' must be a list"),
    ("bool in entry", lambda: json.dumps(_node1(inputs=[[True, 0, 0]])), "input 0 must be"),
    ("entry too long", lambda: json.dumps(_node1(inputs=[[0, 0, 0, 0]])), "input 0 must be"),
]


@pytest.mark.parametrize("case,make,needle", MORE_BAD, ids=[b[0] for b in MORE_BAD])
def test_more_malformed_json(case, make, needle):
    with pytest.raises(FileFormatError, match=needle):
        mx.sym.load_json(make())


def test_getitem_node_survives_a_json_round_trip(tmp_path):
    """x[0:1] in a hybridized forward is a _getitem node; its key, stored as text in the
    JSON file, is read back (shape inference and execution of the loaded graph)."""
    import numpy as np

    import gluonjax as mx

    class M(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x[1:3, ::-1][None] * 2

    net = M()
    net.initialize()
    net.hybridize()
    x = mx.nd.array(np.arange(12).reshape(3, 4))
    net(x)
    net.export(str(tmp_path / "m"), stablehlo=False)
    sym = mx.sym.load(str(tmp_path / "m-symbol.json"))
    assert sym.infer_shape(data=(3, 4))[1] == [(1, 2, 4)]
    out = sym.bind(mx.cpu(), {"data": x}).forward()[0].asnumpy()
    np.testing.assert_array_equal(out, (np.arange(12).reshape(3, 4)[1:3, ::-1][None] * 2))
