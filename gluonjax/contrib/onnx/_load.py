"""Reading an ONNX file: damaged, truncated and external-data files give clear errors."""

from __future__ import annotations

import os

from ..._io.atomic import read_bytes
from ...base import MissingFileError
from ...onnx._errors import ONNXImportError, require_onnx

__all__ = ["load_model"]


def load_model(path):
    """The checked ``ModelProto`` in ``path``, its external data loaded."""
    onnx = require_onnx("mx.contrib.onnx")
    data = read_bytes(path, "reading the ONNX model")
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except Exception as err:  # protobuf's DecodeError
        raise ONNXImportError(
            f"'{path}' is not a readable ONNX model (damaged or truncated file: {err})"
        ) from None
    if not model.HasField("graph") or not model.opset_import:
        raise ONNXImportError(f"'{path}' is not an ONNX model (no graph or no opset)")
    _load_external(onnx, model, path)
    try:
        onnx.checker.check_model(model)
    except Exception as err:  # onnx.checker.ValidationError
        raise ONNXImportError(f"'{path}' is not a valid ONNX model: {err}") from None
    return model


def _load_external(onnx, model, path):
    from onnx import external_data_helper as ext

    base = os.path.dirname(os.path.abspath(path))
    tensors = [t for t in ext._get_all_tensors(model) if ext.uses_external_data(t)]
    for t in tensors:
        info = {e.key: e.value for e in t.external_data}
        location = info.get("location", "")
        full = os.path.join(base, location)
        if not location or not os.path.isfile(full):
            raise MissingFileError(
                f"'{path}': tensor '{t.name}' keeps its data in the external file "
                f"'{full}', which does not exist; copy it beside the model"
            )
    if tensors:
        try:
            ext.load_external_data_for_model(model, base)
        except Exception as err:
            raise ONNXImportError(f"'{path}': its external data cannot be read: {err}") from None
