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


def export_model(
    sym,
    params,
    in_shapes=None,
    in_types=np.float32,
    onnx_file_path="model.onnx",
    verbose=False,
    dynamic=False,
    dynamic_input_shapes=None,
    run_shape_inference=False,
    input_type=None,
    input_shape=None,
    *,
    opset_version=None,
):
    """Export a symbol graph and its parameters to an ONNX file (MXNet 1.9.1's API).

    Parameters
    ----------
    sym : str or Symbol
        A ``-symbol.json`` file (gluonjax's or real MXNet's) or a Symbol.
    params : str, dict or list of two dicts
        A ``.params`` file, a dict of NDArrays (names may carry ``arg:``/``aux:``), or
        ``[arg_params, aux_params]``.
    in_shapes : list of tuple
        One shape per graph input (variables that are no parameter, in graph order;
        ``SoftmaxOutput`` labels are dropped).
    in_types : dtype or list of dtypes
        The inputs' types (default float32).
    onnx_file_path : str
        The file to write (atomically); returned.
    verbose : bool
        Log the ONNX graph (logger ``gluonjax.onnx``).
    dynamic : bool
        Every input axis symbolic (MXNet's rule), unless ``dynamic_input_shapes`` gives
        the shapes with ``None`` for each symbolic axis (e.g. ``[(None, 3, 224, 224)]``).
    run_shape_inference : bool
        Run ONNX shape inference on the model before saving (kept as is if it fails).
    input_type, input_shape :
        MXNet's old names of ``in_types``/``in_shapes``.
    opset_version : int, optional (keyword; gluonjax's addition)
        The ONNX opset, 12 up to the newest the installed onnx knows (default: that newest,
        as MXNet).

    Returns
    -------
    str
        ``onnx_file_path``.

    Raises
    ------
    ONNXUnsupportedOpError
        A node whose op has no converter (the message names the node, the op and the opset).
    ONNXExportError
        An unsupported opset, inputs that do not fit the graph.
    """
    from ._export import export_model as _export

    return _export(
        sym,
        params,
        in_shapes,
        in_types,
        onnx_file_path,
        verbose,
        dynamic,
        dynamic_input_shapes,
        run_shape_inference,
        input_type,
        input_shape,
        opset_version=opset_version,
    )


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
