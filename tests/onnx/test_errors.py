"""Bad input to mx.onnx / mx.contrib.onnx: clear MXNetErrors, nothing half-written."""

from __future__ import annotations

import os

import numpy as np
import pytest
from onnx_common import onnx

import gluonjax as mx
from gluonjax import base
from gluonjax.onnx import ONNXExportError, ONNXImportError, ONNXUnsupportedOpError


def _unsupported_graph():
    data = mx.sym.var("data")
    return mx.sym.cumsum(mx.sym.relu(data, name="r"), axis=0, name="running")


def test_op_without_converter_names_node_op_and_opset(tmp_path):
    target = tmp_path / "m.onnx"
    with pytest.raises(ONNXUnsupportedOpError) as err:
        mx.onnx.export_model(
            _unsupported_graph(), {}, [(2, 3)], np.float32, str(target), opset_version=13
        )
    msg = str(err.value)
    assert "'running'" in msg and "cumsum" in msg and "opset 13" in msg
    assert isinstance(err.value, (base.MXNetError, AttributeError))  # MXNet: AttributeError
    assert not target.exists() and os.listdir(tmp_path) == []  # nothing written


def test_failed_export_keeps_an_existing_file(tmp_path):
    target = tmp_path / "m.onnx"
    target.write_bytes(b"old")
    with pytest.raises(ONNXUnsupportedOpError):
        mx.onnx.export_model(_unsupported_graph(), {}, [(2, 3)], np.float32, str(target))
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["m.onnx"]


@pytest.mark.parametrize("opset", [11, onnx.defs.onnx_opset_version() + 1, "x"])
def test_unsupported_opset(opset, tmp_path):
    sym = mx.sym.relu(mx.sym.var("data"))
    with pytest.raises(ONNXExportError, match="opset") as err:
        mx.onnx.export_model(
            sym, {}, [(2,)], np.float32, str(tmp_path / "m.onnx"), opset_version=opset
        )
    assert isinstance(err.value, ValueError)
    with pytest.raises(ONNXExportError, match="opset"):
        mx.onnx.get_operator_support(opset)
    assert not (tmp_path / "m.onnx").exists()


def test_wrong_number_of_input_shapes(tmp_path):
    sym = mx.sym.elemwise_add(mx.sym.var("a"), mx.sym.var("b"))
    with pytest.raises(ONNXExportError, match=r"2 input\(s\) \['a', 'b'\]"):
        mx.onnx.export_model(sym, {}, [(2,)], np.float32, str(tmp_path / "m.onnx"))


def _model(tmp_path):
    sym = mx.sym.relu(mx.sym.var("data"))
    return mx.onnx.export_model(sym, {}, [(2, 3)], np.float32, str(tmp_path / "m.onnx"))


def test_truncated_file(tmp_path):
    net = mx.gluon.nn.Dense(4, in_units=8)
    net.initialize()
    net.hybridize()
    net(mx.nd.ones((1, 8)))
    path = mx.onnx.export_block(net, mx.nd.ones((1, 8)), str(tmp_path / "m.onnx"))
    data = open(path, "rb").read()
    bad = tmp_path / "cut.onnx"
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(ONNXImportError, match="cut.onnx") as err:
        mx.contrib.onnx.import_model(str(bad))
    assert isinstance(err.value, (base.FileFormatError, ValueError))


def test_not_an_onnx_file(tmp_path):
    bad = tmp_path / "junk.onnx"
    bad.write_bytes(b"\xff\xfe this is not protobuf")
    with pytest.raises(ONNXImportError, match="junk.onnx"):
        mx.contrib.onnx.get_model_metadata(str(bad))
    with pytest.raises(base.MissingFileError, match="nothere.onnx"):
        mx.contrib.onnx.import_model(str(tmp_path / "nothere.onnx"))


def test_missing_external_data(tmp_path):
    from onnx import external_data_helper, helper, numpy_helper

    w = numpy_helper.from_array(np.arange(4096, dtype=np.float32).reshape(64, 64), "w")
    node = helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 64])],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    external_data_helper.convert_model_to_external_data(
        model, location="weights.bin", size_threshold=0
    )
    onnx.save(model, str(tmp_path / "ext.onnx"))
    sym, arg, _ = mx.contrib.onnx.import_model(str(tmp_path / "ext.onnx"))
    np.testing.assert_array_equal(arg["w"].asnumpy(), numpy_helper.to_array(w))
    os.remove(tmp_path / "weights.bin")
    with pytest.raises(base.MissingFileError, match="weights.bin") as err:
        mx.contrib.onnx.import_model(str(tmp_path / "ext.onnx"))
    assert "'w'" in str(err.value)


def test_op_without_importer_names_node_op_and_opset(tmp_path):
    from onnx import helper

    node = helper.make_node("Hardmax", ["x"], ["y"], name="hm")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])],
    )
    path = tmp_path / "hm.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    with pytest.raises(ONNXImportError) as err:
        mx.contrib.onnx.import_model(str(path))
    msg = str(err.value)
    assert "'hm'" in msg and "Hardmax" in msg and "opset 13" in msg


def test_shape_computed_from_a_run_time_size_names_node(tmp_path):
    """Reshape(x, (2 * x.shape[0], 2)) with a symbolic batch: the product of a size known
    only when the graph runs does not import; the error says which node and why."""
    from onnx import helper

    def const(name, value):
        return helper.make_node(
            "Constant", [], [name], value=helper.make_tensor(name, 7, [len(value)], value)
        )

    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        const("i", [0]),
        helper.make_node("Gather", ["s", "i"], ["n"]),
        const("two", [2]),
        helper.make_node("Mul", ["n", "two"], ["n2"]),
        helper.make_node("Concat", ["n2", "two"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["y"], name="fold"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["m", 2])],
    )
    path = tmp_path / "dyn.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    with pytest.raises(ONNXImportError) as err:
        mx.contrib.onnx.import_model(str(path))
    msg = str(err.value)
    assert "'fold'" in msg and "Reshape" in msg and "the target shape ('shape')" in msg
    assert isinstance(err.value, (base.MXNetError, ValueError))


def test_importing_gluonjax_does_not_import_onnx():
    import subprocess
    import sys

    code = "import sys, gluonjax as mx; mx.nd.ones(1); assert 'onnx' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
