"""Symbol graph -> ONNX ModelProto: the walk over the nodes, the files, the checks."""

from __future__ import annotations

import json
import logging
import sys

import numpy as np

from .._io.atomic import atomic_write
from ..base import MXNetError
from ._context import Context, Node
from ._errors import ONNXExportError, ONNXUnsupportedOpError, require_onnx
from ._table import IGNORED_INPUTS, check_opset, lookup

__all__ = ["export_model", "build_model", "onnx_dtype", "load_params"]

_LOG = logging.getLogger("gluonjax.onnx")


def onnx_dtype(onnx, dtype):
    """The ONNX element type of a numpy dtype (name or type)."""
    try:
        return onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    except (KeyError, TypeError) as err:
        raise ONNXExportError(f"dtype {dtype!r} has no ONNX element type ({err})") from None


def load_params(params):
    """``{name: numpy array}`` from a file name, a dict, or ``[arg_params, aux_params]``;
    ``arg:``/``aux:`` prefixes are dropped."""
    from .. import ndarray as nd

    if isinstance(params, (str, bytes)) or hasattr(params, "__fspath__"):
        params = nd.load(params)
    if isinstance(params, (list, tuple)) and not params:  # a file with no parameters
        params = {}
    if (
        isinstance(params, (list, tuple))
        and len(params) == 2
        and all(isinstance(p, dict) for p in params)
    ):
        merged = {}
        merged.update(params[0])
        merged.update(params[1])
        params = merged
    if not isinstance(params, dict):
        raise ONNXExportError(
            "params must be a .params file name, a dict of NDArrays or [arg_params, aux_params], "
            f"not {type(params).__name__}"
        )
    out = {}
    for key, value in params.items():
        name = key.split(":", 1)[1] if key.startswith(("arg:", "aux:")) else key
        out[name] = value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)
    return out


def _load_symbol(sym):
    from .. import symbol

    if isinstance(sym, (str, bytes)) or hasattr(sym, "__fspath__"):
        return symbol.load(sym)
    if isinstance(sym, symbol.Symbol):
        return sym
    raise ONNXExportError(
        f"sym must be a -symbol.json file name or a Symbol, not {type(sym).__name__}"
    )


def _clean_attrs(attrs):
    return {k: v for k, v in (attrs or {}).items() if not (k.startswith("__") and k.endswith("__"))}


def _as_list(value, n, what):
    if isinstance(value, (list, tuple)) and not (what == "in_shapes" and _is_shape(value)):
        return list(value)
    return [value] * n if what == "in_types" else [value]


def _is_shape(value):
    return all(isinstance(d, (int, np.integer)) or d is None for d in value)


def _infer(sym, data, dtypes, params):
    """``{output name: (shape, dtype)}`` of every internal output of ``sym``."""
    internals = sym.get_internals()
    names = internals.list_outputs()
    shapes = dict(data)
    shapes.update({k: v.shape for k, v in params.items()})
    known = set(sym.list_inputs())
    shapes = {k: v for k, v in shapes.items() if k in known}
    types = {k: np.dtype(v) for k, v in dtypes.items()}
    types.update({k: v.dtype for k, v in params.items() if k in known})
    try:
        _, out_shapes, _ = internals.infer_shape_partial(**shapes)
        _, out_types, _ = internals.infer_type(**types)
    except MXNetError as err:
        raise ONNXExportError(f"shape or type inference of the graph failed: {err}") from None
    return {
        n: (tuple(s) if s is not None else None, t) for n, s, t in zip(names, out_shapes, out_types)
    }


def _lookup_info(info, node, j, op=None, attrs=None):
    name = node["name"]
    if node["op"] == "null":
        return info.get(name, (None, None))
    keys = [f"{name}_output{j}"] + ([f"{name}_output"] if j == 0 else [])
    if op is not None:
        out_names = op.output_names(attrs) if callable(op.output_names) else op.output_names
        if j < len(out_names):
            keys.append(f"{name}_{out_names[j]}")
    for key in keys:
        if key in info:
            return info[key]
    return (None, None)


def build_model(
    sym,
    params,
    in_shapes,
    in_types=np.float32,
    *,
    opset=None,
    dynamic=False,
    dynamic_input_shapes=None,
    verbose=False,
):
    """The ONNX ``ModelProto`` of ``sym`` with ``params`` (numpy arrays by name)."""
    onnx = require_onnx()
    opset = check_opset(opset)
    graph = json.loads(sym.tojson())
    nodes, heads = graph["nodes"], graph["heads"]

    # graph inputs: variables that are no parameter; a loss's label variable that the
    # loss created itself ('softmax_label' of node 'softmax') is dropped, as MXNet does;
    # a label the user passed in stays an (unused) input, as in MXNet
    labels, as_data = set(), set()
    for node in nodes:
        if node["op"] != "null":
            op, _ = _safe_lookup(node, opset)
            skip = IGNORED_INPUTS.get(op.name, ())
            for pos, entry in enumerate(node["inputs"]):
                own = nodes[entry[0]]["name"] == f"{node['name']}_label"
                (labels if pos in skip and own else as_data).add(entry[0])
    labels = {i for i in labels - as_data if nodes[i]["op"] == "null"}
    data_ids = [i for i, n in enumerate(nodes) if n["op"] == "null" and n["name"] not in params]
    if in_shapes is None:
        raise ONNXExportError(
            f"in_shapes is required: one shape per input {[nodes[i]['name'] for i in data_ids]}"
        )
    in_shapes = [tuple(s) for s in _as_list(in_shapes, len(data_ids), "in_shapes")]
    kept = [i for i in data_ids if i not in labels]
    in_types = _as_list(in_types, len(in_shapes), "in_types")
    if len(kept) != len(data_ids):  # entries given for the labels too: drop them
        if len(in_shapes) == len(data_ids):
            in_shapes = [s for i, s in zip(data_ids, in_shapes) if i not in labels]
        if len(in_types) == len(data_ids):
            in_types = [t for i, t in zip(data_ids, in_types) if i not in labels]
    if len(in_shapes) != len(kept) or len(in_types) != len(kept):
        raise ONNXExportError(
            f"the graph has {len(kept)} input(s) {[nodes[i]['name'] for i in kept]} but "
            f"in_shapes has {len(in_shapes)} and in_types {len(in_types)} entries"
        )
    sig = _signature(in_shapes, dynamic, dynamic_input_shapes)
    if not dynamic and dynamic_input_shapes is None:
        seen_sig = sig
    data = {nodes[i]["name"]: s for i, s in zip(kept, in_shapes)}
    dtypes = {nodes[i]["name"]: np.dtype(t) for i, t in zip(kept, in_types)}
    # the converters see a dynamic axis as 0; with MXNet's every-axis-dynamic signature
    # they see the batch axis dynamic and the others as in_shapes gives them
    if dynamic or dynamic_input_shapes is not None:
        seen_sig = (
            sig
            if dynamic_input_shapes is not None
            else [(None, *s[1:]) if s else s for s in in_shapes]
        )
    probe = {k: tuple(0 if d is None else d for d in sd) for k, sd in zip(data, seen_sig)}
    try:  # dynamic axes stay unknown (0) for the converters
        info = _infer(sym, probe, dtypes, params)
    except ONNXExportError:
        info = _infer(sym, data, dtypes, params)

    cx = Context(onnx, opset, params)
    cx.values.update(params)
    tensor = {}  # (node id, output index) -> ONNX name
    known = {}  # (node id, output index) -> (shape, dtype) as converted
    taken = {n["name"] for n in nodes if n["op"] == "null"}  # ONNX names must be unique
    used_params = []
    for nid, node in enumerate(nodes):
        if node["op"] == "null":
            tensor[(nid, 0)] = node["name"]
            continue
        op, conv = _safe_lookup(node, opset)
        if conv is None:
            raise ONNXUnsupportedOpError(
                f"node '{node['name']}' (op {node['op']}) has no ONNX converter for opset "
                f"{opset}; mx.onnx.get_operator_support() lists the ops that export"
            )
        try:
            static, dynamic_vals = op.parse_attrs(
                _clean_attrs(node.get("attrs") or node.get("param"))
            )
        except MXNetError as err:
            raise ONNXExportError(f"node '{node['name']}' (op {node['op']}): {err}") from None
        attrs = op.attr_dict(static, dynamic_vals)
        if _fold(cx, op, node, nid, static, dynamic_vals, tensor, taken):
            continue
        skip = IGNORED_INPUTS.get(op.name, ())
        entries = [e for k, e in enumerate(node["inputs"]) if k not in skip]
        inputs = []
        for e in entries:
            src = nodes[e[0]]
            if src["op"] == "null" and src["name"] in params and src["name"] not in used_params:
                used_params.append(src["name"])
            inputs.append(tensor[(e[0], e[1])])
        n_out = op.n_visible(attrs)
        base = node["name"] if node["name"] not in taken else f"{node['name']}_{nid}"
        outputs = [base if j == 0 else f"{base}_output{j}" for j in range(n_out)]
        taken.update(outputs)
        for j, name in enumerate(outputs):
            tensor[(nid, j)] = name
        ins = [known.get((e[0], e[1])) or _lookup_info(info, nodes[e[0]], e[1]) for e in entries]
        outs = [_lookup_info(info, node, j, op, attrs) for j in range(n_out)]
        cx.node = Node(
            name=node["name"],
            op=op,
            op_name=node["op"],
            attrs=attrs,
            inputs=inputs,
            outputs=outputs,
            in_shapes=[s for s, _ in ins],
            in_dtypes=[t for _, t in ins],
            out_shapes=[s for s, _ in outs],
            out_dtypes=[t for _, t in outs],
        )
        try:
            conv(cx, cx.node)
            # a converter may correct an inferred output type (the type it wrote)
            for j, (shape, dtype) in enumerate(zip(cx.node.out_shapes, cx.node.out_dtypes)):
                known[(nid, j)] = (shape, dtype)
        except MXNetError:
            raise
        except Exception as err:  # a converter's own failure: name the node
            raise cx.fail(f"{type(err).__name__}: {err}") from err
    cx.node = None

    helper, numpy_helper = onnx.helper, onnx.numpy_helper
    graph_inputs = [
        helper.make_tensor_value_info(
            nodes[i]["name"], onnx_dtype(onnx, dtypes[nodes[i]["name"]]), list(s)
        )
        for i, s in zip(kept, sig)
    ]
    graph_outputs, seen = [], set(tensor[(i, 0)] for i in kept) | set(params) | set(cx.values)
    for h in heads:
        name = tensor[(h[0], h[1])]
        shape, dtype = known.get((h[0], h[1])) or _lookup_info(info, nodes[h[0]], h[1])
        if name in params and name not in used_params:  # a parameter as an output
            used_params.append(name)
        if name in seen:  # an input, a parameter or a repeated output: a copy of it
            cx.node = None
            name = cx.add("Identity", [name], [f"{name}_copy{len(graph_outputs)}"])
        seen.add(name)
        dims = None if not shape else [None if d == 0 else int(d) for d in shape]
        graph_outputs.append(helper.make_tensor_value_info(name, onnx_dtype(onnx, dtype), dims))
    consumed = {name for n in cx.nodes for name in n.input}
    inits = [
        numpy_helper.from_array(np.asarray(params[n]), n) for n in used_params if n in consumed
    ]
    consumed |= {o.name for o in graph_outputs}
    # folded intermediates no node reads are left out
    inits += [numpy_helper.from_array(v, n) for n, v in cx.initializers.items() if n in consumed]
    g = helper.make_graph(cx.nodes, "gluonjax", graph_inputs, graph_outputs, inits)
    # the package's version, read without importing the whole package from this layer
    version = getattr(sys.modules.get("gluonjax"), "__version__", "")
    model = helper.make_model(
        g,
        opset_imports=[helper.make_opsetid("", opset)],
        producer_name="gluonjax",
        producer_version=version,
    )
    if verbose:
        _LOG.info("ONNX graph:\n%s", helper.printable_graph(g))
    return model


def _fold(cx, op, node, nid, static, dynamic_vals, tensor, taken):
    """Compute a node whose inputs are all constants (parameters reshaped and concatenated
    for a fused RNN, say) with the registry op now, as an initializer; True if done."""
    entries = node["inputs"]
    if not entries or op.random or op.aux or op.mode:
        return False
    names = [tensor[(e[0], e[1])] for e in entries]
    if not all(n in cx.values for n in names):
        return False
    import jax.numpy as jnp

    try:
        res = op.bound(static)(*[jnp.asarray(cx.values[n]) for n in names], *dynamic_vals)
    except Exception:  # leave it to its converter
        return False
    res = res if isinstance(res, (tuple, list)) else (res,)
    base = node["name"] if node["name"] not in taken else f"{node['name']}_{nid}"
    for j, value in enumerate(res):
        name = base if j == 0 else f"{base}_output{j}"
        taken.add(name)
        tensor[(nid, j)] = name
        cx.values[name] = cx.initializers[name] = np.asarray(value)
    return True


def _safe_lookup(node, opset):
    try:
        return lookup(node["op"])
    except MXNetError:
        raise ONNXUnsupportedOpError(
            f"node '{node['name']}' (op {node['op']}) is not an op of the registry: no ONNX "
            f"converter for opset {opset}"
        ) from None


def _signature(in_shapes, dynamic, dynamic_input_shapes):
    """Each input's ONNX shape: ints, with None for a dynamic axis."""
    if dynamic_input_shapes is not None:
        sig = [tuple(None if d is None else int(d) for d in s) for s in dynamic_input_shapes]
        if len(sig) != len(in_shapes):
            raise ONNXExportError(
                f"dynamic_input_shapes has {len(sig)} entries for {len(in_shapes)} inputs"
            )
        return sig
    if dynamic:  # MXNet: every axis dynamic unless dynamic_input_shapes says otherwise
        return [tuple(None for _ in s) for s in in_shapes]
    return [tuple(int(d) for d in s) for s in in_shapes]


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
        the label variable ``SoftmaxOutput`` created, ``softmax_label``, is dropped, as
        MXNet does).
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
    onnx = require_onnx()
    if input_type is not None:
        in_types = input_type
    if input_shape is not None:
        in_shapes = input_shape
    symbol = _load_symbol(sym)
    model = build_model(
        symbol,
        load_params(params),
        in_shapes,
        in_types,
        opset=opset_version,
        dynamic=dynamic,
        dynamic_input_shapes=dynamic_input_shapes,
        verbose=verbose,
    )
    if run_shape_inference:
        try:
            model = onnx.shape_inference.infer_shapes(model)
        except Exception as err:  # MXNet keeps the model as it is
            _LOG.info("ONNX shape inference failed (%s); the model is kept as exported", err)
    atomic_write(onnx_file_path, model.SerializeToString())
    _LOG.info("exported ONNX model %s (inputs %s)", onnx_file_path, in_shapes)
    return onnx_file_path
