"""Network visualization (``mx.viz``): ``plot_network`` and ``print_summary``.

Both walk the symbol graph in the node order of its MXNet JSON (inputs before
users) and reproduce MXNet 1.9.1's drawing and table: same nodes, labels,
colors, edge labels and column layout. ``plot_network`` needs the optional
``graphviz`` Python package (``pip install graphviz``); rendering the returned
``Digraph`` to an image also needs Graphviz's ``dot`` program.
"""

from __future__ import annotations

import re
import warnings

import numpy as np

from .base import ArgumentTypeError, InvalidArgumentError, MXNetError

__all__ = ["plot_network", "print_summary"]

# fill colors per op family, as MXNet draws them
_COLORS = ("#8dd3c7", "#fb8072", "#ffffb3", "#bebada", "#80b1d3", "#fdb462", "#b3de69", "#fccde5")
_WEIGHT_SUFFIXES = (
    "_weight", "_bias", "_beta", "_gamma",
    "_moving_var", "_moving_mean", "_running_var", "_running_mean",
)  # fmt: skip


def _check_symbol(symbol, what):
    from .symbol import Symbol

    if not isinstance(symbol, Symbol):
        raise ArgumentTypeError(f"{what}: symbol must be a Symbol, got {type(symbol).__name__}")


def _nodes(symbol):
    from ._ops.graph import topo

    return topo(symbol._outputs)


def _digits(text):
    """The integers written in an attribute string: ``'(3, 3)'`` -> ``['3', '3']``."""
    return re.findall(r"\d+", str(text))


def _internal_shapes(symbol, shape):
    """{output name: shape} of every internal output, from ``infer_shape(**shape)``."""
    internals = symbol.get_internals()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, out_shapes, _ = internals.infer_shape(**shape)
    if out_shapes is None:
        raise InvalidArgumentError("Input shape is incomplete")
    return dict(zip(internals.list_outputs(), out_shapes, strict=True))


def _internal_types(symbol, dtype):
    internals = symbol.get_internals()
    _, out_types, _ = internals.infer_type(**dtype)
    if out_types is None:
        raise InvalidArgumentError("Input type is incomplete")
    names = internals.list_outputs()
    return {n: np.dtype(t).name for n, t in zip(names, out_types, strict=True) if t is not None}


def _out_key(node):
    """The internal-output name MXNet looks an input node's shape up by."""
    return node.name if node.op is None else node.name + "_output"


# ---------------------------------------------------------------- print_summary
def _print_row(fields, positions):
    line = ""
    for field, pos in zip(fields, positions, strict=False):
        line = (line + str(field))[:pos]
        line += " " * (pos - len(line))
    print(line)


def _layer_params(node, attrs, pre_filter, shape_dict):
    """Parameter count MXNet's summary reports for one layer."""
    op = node.op.name if node.op is not None else "null"
    has_bias = attrs.get("no_bias") != "True"
    if op == "Convolution":
        num_filter = int(attrs["num_filter"])
        count = pre_filter * num_filter // int(attrs.get("num_group", "1"))
        for k in _digits(attrs["kernel"]):
            count *= int(k)
        return count + (num_filter if has_bias else 0)
    if op == "FullyConnected":
        return (pre_filter + (1 if has_bias else 0)) * int(attrs["num_hidden"])
    if op == "BatchNorm":
        shape = shape_dict.get(node.name + "_output") if shape_dict is not None else None
        return 2 * int(shape[1]) if shape is not None and len(shape) > 1 else 0
    if op == "Embedding":
        return int(attrs["input_dim"]) * int(attrs["output_dim"])
    return 0


def print_summary(symbol, shape=None, line_length=120, positions=(0.44, 0.64, 0.74, 1.0)):
    """Print a table of the layers of ``symbol``: name (op), output shape, params, inputs.

    Parameters
    ----------
    symbol : Symbol
    shape : dict of str to tuple, optional
        Input shapes; when given, output shapes and parameter counts are computed.
    line_length : int
        Width of the table.
    positions : sequence of float
        Right edge of each of the four columns, relative to ``line_length`` (or
        absolute columns when the last one is above 1).
    """
    _check_symbol(symbol, "print_summary")
    shape_dict = _internal_shapes(symbol, shape) if shape is not None else None
    nodes = _nodes(symbol)
    index = {id(n): i for i, n in enumerate(nodes)}
    head, head_idx = symbol._outputs[0]
    # MXNet counts as "previous layers" op inputs, plus the variables whose node
    # index appears in the first head entry [node, output, version]
    heads = {index[id(head)], head_idx, 0}
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]
    print("_" * line_length)
    _print_row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"], positions)
    print("=" * line_length)
    total = 0
    for i, node in enumerate(nodes):
        if node.op is None and i > 0:
            continue
        out_shape = ()
        if shape_dict is not None and (node.op is not None or i in heads):
            out_shape = shape_dict.get(_out_key(node), (None,))[1:]
        previous, pre_filter = [], 0
        for src, _ in node.inputs:
            if src.op is None and index[id(src)] not in heads:
                continue
            previous.append(src.name)
            src_shape = shape_dict.get(_out_key(src)) if shape_dict is not None else None
            if src_shape is not None and len(src_shape) > 1:
                pre_filter += int(src_shape[1])
        attrs = node.str_attrs()
        params = _layer_params(node, attrs, pre_filter, shape_dict)
        op = node.op.name if node.op is not None else "null"
        fields = [f"{node.name}({op})", "x".join(str(d) for d in out_shape), params]
        _print_row(fields + [previous[0] if previous else ""], positions)
        for name in previous[1:]:
            _print_row(["", "", "", name], positions)
        total += params
        print(("=" if i == len(nodes) - 1 else "_") * line_length)
    print(f"Total params: {total}")
    print("_" * line_length)


# ---------------------------------------------------------------- plot_network
def _import_graphviz():
    try:
        import graphviz
    except ImportError:
        raise MXNetError(
            "plot_network needs the graphviz Python package: pip install graphviz "
            "(or pip install gluonjax[viz]); rendering images also needs Graphviz's dot"
        ) from None
    return graphviz


def _node_style(node, attrs, defaults):
    """(label, fill color) of an op node."""
    op = node.op.name
    if op == "Convolution":
        stride = "x".join(_digits(attrs["stride"])) if "stride" in attrs else "1"
        kernel = "x".join(_digits(attrs.get("kernel", "")))
        return f"Convolution\n{kernel}/{stride}, {attrs.get('num_filter', '')}", _COLORS[1]
    if op == "FullyConnected":
        return f"FullyConnected\n{attrs.get('num_hidden', '')}", _COLORS[1]
    if op == "BatchNorm":
        return node.name, _COLORS[3]
    if op in ("Activation", "LeakyReLU"):
        return f"{op}\n{attrs.get('act_type', defaults.get('act_type'))}", _COLORS[2]
    if op == "Pooling":
        kernel = "x".join(_digits(attrs["kernel"])) if "kernel" in attrs else "[]"
        stride = "x".join(_digits(attrs["stride"])) if "stride" in attrs else "1"
        pool_type = attrs.get("pool_type", defaults.get("pool_type"))
        return f"Pooling\n{pool_type}, {kernel}/{stride}", _COLORS[4]
    if op in ("Concat", "Flatten", "Reshape"):
        return node.name, _COLORS[5]
    if op == "Softmax":
        return node.name, _COLORS[6]
    return node.name, _COLORS[7]


def _edge_label(src, shape_dict, type_dict):
    key = _out_key(src)
    if src.op is not None:
        n_out = src.str_attrs().get("num_outputs")
        if n_out is not None:  # MXNet labels a multi-output node by its last output
            key += str(int(n_out) - 1)
    label = ""
    if shape_dict is not None:
        label = "x".join(str(d) for d in shape_dict.get(key, (None,))[1:])
    if type_dict is not None and key in type_dict:
        label += f"({type_dict[key]})"
    return label


def plot_network(
    symbol,
    title="plot",
    save_format="pdf",
    shape=None,
    dtype=None,
    node_attrs={},  # noqa: B006 (MXNet's signature; never mutated)
    hide_weights=True,
):
    """Draw ``symbol``'s graph as a ``graphviz.Digraph``, as MXNet 1.9.1 does.

    Parameters
    ----------
    symbol : Symbol
    title : str
        Name of the digraph (and of rendered files).
    save_format : str
        Format used by ``Digraph.render`` (``'pdf'``, ``'png'``, ``'svg'``...).
    shape : dict of str to tuple, optional
        Input shapes; edges are labeled with the (non-batch) shape they carry.
    dtype : dict of str to dtype, optional
        Input types; edge labels get ``(dtype)``.
    node_attrs : dict
        Graphviz node attributes overriding the defaults (box, 1.3 x 0.8034, filled).
    hide_weights : bool
        Leave out weight, bias, gamma/beta and moving statistics variables.

    Returns
    -------
    graphviz.Digraph
    """
    graphviz = _import_graphviz()
    _check_symbol(symbol, "plot_network")
    shape_dict = _internal_shapes(symbol, shape) if shape is not None else None
    type_dict = _internal_types(symbol, dtype) if dtype is not None else None
    nodes = _nodes(symbol)
    names = [n.name for n in nodes]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        warnings.warn(
            "There are multiple variables with the same name in your graph, this may result "
            f"in cyclic graph. Repeated names: {', '.join(repeated)}",
            RuntimeWarning,
            stacklevel=2,
        )
    base = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034",
            "style": "filled"}  # fmt: skip
    base.update(node_attrs)
    dot = graphviz.Digraph(name=title, format=save_format)
    hidden = set()
    for node in nodes:
        attr = dict(base)
        if node.op is None:
            if node.name.endswith(_WEIGHT_SUFFIXES):
                # weights are never drawn; with hide_weights=False their edges still are
                if hide_weights:
                    hidden.add(node.name)
                continue
            attr["shape"] = "oval"
            label, attr["fillcolor"] = node.name, _COLORS[0]
        else:
            label, attr["fillcolor"] = _node_style(node, node.str_attrs(), node.attr_dict())
        dot.node(name=node.name, label=label, **attr)
    for node in nodes:
        if node.op is None:
            continue
        inputs = node.inputs
        if node.op.name == "_contrib_BilinearResize2D":
            inputs = inputs[:1]  # MXNet draws only its data input
        for src, _ in inputs:
            if src.name in hidden:
                continue
            label = _edge_label(src, shape_dict, type_dict)
            dot.edge(tail_name=node.name, head_name=src.name, label=label,
                     dir="back", arrowtail="open")  # fmt: skip
    return dot
