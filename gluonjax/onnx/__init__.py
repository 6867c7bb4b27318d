"""``mx.onnx``: export symbol graphs and hybrid blocks to ONNX (MXNet 1.9.1's API).

The ``onnx`` package is imported only when a function here runs (``pip install
'gluonjax[onnx]'``); importing gluonjax never imports it. Each MXNet op of the op
registry that exports has one converter (``_table.CONVERTERS``, keyed by registry
name; aliases resolve through the registry). Files are written atomically: a failed
export leaves nothing on disk. See docs/onnx.md.

Examples
--------
>>> import gluonjax as mx
>>> "Convolution" in mx.onnx.get_operator_support()
True
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

from ._errors import ONNXExportError, ONNXImportError, ONNXUnsupportedOpError
from ._export import export_model
from ._table import MIN_OPSET, MXNET_OPSETS, operator_support

__all__ = [
    "export_model",
    "export_block",
    "get_operator_support",
    "ONNXExportError",
    "ONNXUnsupportedOpError",
    "ONNXImportError",
    "MIN_OPSET",
    "MXNET_OPSETS",
]


def get_operator_support(opset_version=None):
    """The sorted names of the MXNet ops that export to ONNX (aliases included).

    Parameters
    ----------
    opset_version : int, optional
        Check that this opset is supported (12 up to the newest the installed onnx knows);
        every converter writes every supported opset.

    Returns
    -------
    list of str
    """
    return operator_support(opset_version)


def export_block(
    block,
    example_inputs,
    onnx_file_path="model.onnx",
    *,
    dynamic=False,
    dynamic_input_shapes=None,
    opset_version=None,
    run_shape_inference=False,
):
    """Export a hybrid block to ONNX directly (no symbol/params files on disk).

    Parameters
    ----------
    block : HybridBlock
        An initialized block; it runs once on ``example_inputs``.
    example_inputs : NDArray or list of NDArray
        Inputs of the shapes and types to export with.
    onnx_file_path : str
        The file to write (atomically); returned.
    dynamic, dynamic_input_shapes, opset_version, run_shape_inference :
        As :func:`export_model`; ``dynamic=True`` here makes only the batch axis (axis 0)
        symbolic.

    Returns
    -------
    str
        ``onnx_file_path``.
    """
    from ..gluon import HybridBlock

    if not isinstance(block, HybridBlock):
        raise ONNXExportError(f"export_block needs a HybridBlock, not {type(block).__name__}")
    if not isinstance(example_inputs, (list, tuple)):
        example_inputs = [example_inputs]
    if dynamic and dynamic_input_shapes is None:
        dynamic_input_shapes = [(None, *x.shape[1:]) for x in example_inputs]
    with tempfile.TemporaryDirectory(prefix="gluonjax-onnx-") as tmp:
        prefix = os.path.join(tmp, "model")
        block.export(prefix, 0, example_inputs=list(example_inputs), stablehlo=False)
        return export_model(
            prefix + "-symbol.json",
            prefix + "-0000.params",
            [tuple(x.shape) for x in example_inputs],
            [np.dtype(x.dtype) for x in example_inputs],
            onnx_file_path,
            dynamic=dynamic,
            dynamic_input_shapes=dynamic_input_shapes,
            run_shape_inference=run_shape_inference,
            opset_version=opset_version,
        )
