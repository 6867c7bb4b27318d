"""``mx.contrib.onnx``: import ONNX models as symbol graphs or Gluon blocks (MXNet 1.9.1's
``import_model``, ``import_to_gluon``, ``get_model_metadata``), and MXNet's old path of
``export_model``.

The ``onnx`` package is imported only when a function here runs. Each ONNX op maps to
registry ops through one importer (``_import.IMPORTERS``); see docs/onnx.md.
"""

from __future__ import annotations

import os
import tempfile

from ...onnx import export_model
from ...onnx._errors import ONNXImportError, require_onnx
from . import _import_more, _import_ops, _import_rnn, _import_shape  # noqa: F401
from ._import import IMPORTERS, Graph
from ._load import load_model

__all__ = [
    "import_model",
    "import_to_gluon",
    "get_model_metadata",
    "get_import_support",
    "export_model",
    "ONNXImportError",
]


def import_model(model_file):
    """Import an ONNX file as ``(sym, arg_params, aux_params)``.

    Parameters
    ----------
    model_file : str
        The ``.onnx`` file (external-data files beside it).

    Returns
    -------
    sym : Symbol
        The graph; its inputs are the ONNX graph inputs that are no initializer.
    arg_params, aux_params : dict of str to NDArray
        The initializers (BatchNormalization statistics are auxiliary states).

    Raises
    ------
    ONNXImportError
        A damaged or truncated file, or a node whose op or attributes do not import
        (the message names the node, the op and the opset).
    MissingFileError
        An external-data file that is not there.
    """
    onnx = require_onnx("mx.contrib.onnx")
    model = load_model(model_file)
    g = Graph(onnx, model, model_file)
    sym = g.run()
    # constants the outputs do not depend on are no parameters of the graph
    args, auxs = set(sym.list_arguments()), set(sym.list_auxiliary_states())
    arg = {k: v for k, v in g.arg.items() if k in args}
    aux = {k: v for k, v in g.aux.items() if k in auxs}
    return sym, arg, aux


def get_model_metadata(model_file):
    """The inputs and outputs of an ONNX model.

    Returns
    -------
    dict
        ``{'input_tensor_data': [(name, shape)], 'output_tensor_data': [(name, shape)]}``;
        inputs are those that are no initializer, a symbolic axis is its name (or None).
    """
    model = load_model(model_file)
    inits = {t.name for t in model.graph.initializer}

    def shape(vi):
        dims = vi.type.tensor_type.shape.dim
        return tuple(
            d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in dims
        )

    return {
        "input_tensor_data": [(v.name, shape(v)) for v in model.graph.input if v.name not in inits],
        "output_tensor_data": [(v.name, shape(v)) for v in model.graph.output],
    }


def import_to_gluon(model_file, ctx=None):
    """Import an ONNX file as a :class:`~gluonjax.gluon.SymbolBlock` holding its parameters.

    Parameters
    ----------
    model_file : str
        The ``.onnx`` file.
    ctx : Context or list of Context, optional
        Where the parameters live (default: the current context).

    Returns
    -------
    SymbolBlock
        Called with the model's inputs in graph order.
    """
    from ... import ndarray as nd
    from ... import symbol as S
    from ...gluon import SymbolBlock

    sym, arg, aux = import_model(model_file)
    names = [n for n, _ in get_model_metadata(model_file)["input_tensor_data"]]
    net = SymbolBlock(sym, [S.var(n) for n in names])
    saved = {f"arg:{k}": v for k, v in arg.items()}
    saved.update({f"aux:{k}": v for k, v in aux.items()})
    if not saved:
        return net
    with tempfile.TemporaryDirectory(prefix="gluonjax-onnx-") as tmp:
        path = os.path.join(tmp, "model.params")
        nd.save(path, saved)
        net.collect_params().load(path, ctx=ctx, cast_dtype=True, dtype_source="saved")
    return net


def get_import_support():
    """The sorted ONNX op types that import."""
    return sorted(IMPORTERS)
