"""``autograd.get_symbol``: the recorded graph of an array as a Symbol."""

from __future__ import annotations

import itertools

from .._tape.node import OpOrigin, toposort
from ..base import MXNetError

__all__ = ["get_symbol"]

_COUNT = itertools.count()  # MXNet numbers get_symbol's variables and nodes process-wide


def get_symbol(x):
    """The computation that recorded ``x``, as a Symbol.

    Variables (arrays with ``attach_grad``, parameters) become arguments named
    ``var<N>``; other array inputs ``null<N>``; each recorded op a node
    ``node_<N>``, as in MXNet. A hybridized block's call shows its own graph
    (its ``hybrid_forward`` run on symbols), with the block's parameter names.

    Examples
    --------
    >>> import gluonjax as mx
    >>> x = mx.nd.ones((1,)); x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = x * x + 2 * x - 1
    >>> len(mx.autograd.get_symbol(y).list_arguments())
    1
    """
    from .. import symbol as sym
    from .._ops.graph import Node as SymNode
    from ..symbol.symbol import Symbol

    hn = getattr(x, "_node", None)
    if hn is None:
        raise MXNetError(
            "autograd.get_symbol: the array was not computed under autograd.record() from "
            "arrays that need a gradient, so no graph was recorded for it"
        )
    env, leaves = {}, {}

    def var(arr, prefix):
        got = leaves.get(id(arr))
        if got is None:
            got = leaves[id(arr)] = sym.var(f"{prefix}{next(_COUNT)}")
        return got

    def of(e):
        return env[(id(e[0]), e[1])] if type(e) is tuple else var(e, "var")

    for node in reversed(toposort([hn[0]])):
        ins = [of(e) for e in node.inputs]
        if type(node.origin) is OpOrigin:  # an eager op (OP or BUCKET node)
            op, static_key, n_args = node.origin.op, node.origin.static_key, node.origin.n_args
            args, it = [], iter(ins)
            # positions index the op's array list (after a random key); others are constants
            diff = {p - node.origin.offset for p in node.origin.positions}
            for k in range(n_args):
                args.append(next(it) if k in diff else sym.var(f"null{next(_COUNT)}"))
            attrs = {k: v for k, v in op.attr_dict(static_key).items() if not k.startswith("_")}
            names = op.input_names(attrs, n_args if op.variadic else None)
            inputs = [a._outputs[0] for a in args[: len(names)]]
            snode = SymNode(op, f"node_{next(_COUNT)}", {}, inputs, static_key, ())
            outs = [Symbol([(snode, i)]) for i in range(len(node.avals))]
        elif node.origin is not None:  # a hybridized block's call: its symbolic graph
            outs = _block_graph(node, ins)
        else:
            raise MXNetError(
                f"autograd.get_symbol: cannot show '{node.name}' ({node.kind.value}) as a "
                f"symbol node"
            )
        for i, o in enumerate(outs):
            env[(id(node), i)] = o
    return env[(id(hn[0]), hn[1])]


def _block_graph(node, ins):
    """The symbolic graph of a hybridized block's recorded call (``node.origin``)."""
    from .. import symbol as sym

    cached, imask = node.origin.cached, node.origin.imask
    block, dparams = cached.block, [cached.params[i] for i in node.origin.param_idx]
    n_in = len(imask)
    data = [sym.var("data" if n_in == 1 else f"data{i}") for i in range(n_in)]
    try:
        out = block(*data)
    except Exception as err:
        raise MXNetError(
            f"autograd.get_symbol: block '{block.name}' cannot run on symbols ({err}); only "
            f"blocks written with hybrid_forward show their graph"
        ) from None
    mapping = {p.name: s for p, s in zip(dparams, ins)}
    rest = iter(ins[len(dparams) :])
    for d, m in zip(data, imask):
        mapping[d.name] = next(rest) if m else sym.var(f"null{next(_COUNT)}")
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    return [_substitute(o, mapping) for o in outs]


def _substitute(s, mapping):
    """``s`` with its variables replaced by the symbols in ``mapping`` (by name)."""
    from .._ops.graph import Node as SymNode
    from .._ops.graph import topo
    from ..symbol.symbol import Symbol

    new = {}  # id(old node) -> (new node, output offset): variables map to an output
    for n in topo(s._outputs):
        if n.op is None:
            rep = mapping.get(n.name)
            new[id(n)] = rep._outputs[0] if rep is not None else (n, 0)
            continue
        inputs = []
        for src, i in n.inputs:
            got = new[id(src)]
            inputs.append(got if src.op is None else (got[0], i))
        new[id(n)] = (SymNode(n.op, n.name, n.attrs, inputs, n.static_key, n.dyn, n.extra), 0)
    outs = []
    for n, i in s._outputs:
        got = new[id(n)]
        outs.append(got if n.op is None else (got[0], i))
    return Symbol(outs)
