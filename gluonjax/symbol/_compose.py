"""Composition of symbols by call: ``net2(data2=net1, name='composed')``.

As in MXNet, calling a symbol returns a new symbol whose free variables named
by the keywords are replaced by the given symbols. The called symbol's nodes
are copied (its variables too), the substituted symbols are shared, and the
original graph is left untouched. ``name`` renames the (first) head node.
Positional arguments replace the arguments in ``list_arguments()`` order
(MXNet 1.9.1 only accepts them for a not-yet-composed atomic symbol).
"""

from __future__ import annotations

from .._ops.graph import Node, topo
from ..base import MXNetError

__all__ = ["compose", "copy_graph"]


class ComposeTypeError(MXNetError, TypeError):
    """A composition argument of the wrong type."""


def copy_graph(sym, replace=None, name=None):
    """A Symbol over copies of ``sym``'s nodes.

    ``replace`` maps ``id(variable node)`` to the ``(node, index)`` entry that
    takes its place; ``name`` renames the copy of the first head node.
    """
    from .symbol import Symbol

    replace = replace or {}
    memo = {}

    def entry(node, idx):
        if id(node) in replace:
            return replace[id(node)]
        return memo[id(node)], idx

    for node in topo(sym._outputs):
        if id(node) in replace:
            continue
        new = Node.__new__(Node)
        new.op, new.name, new.attrs = node.op, node.name, dict(node.attrs)
        new.static_key, new.dyn, new.extra = node.static_key, node.dyn, dict(node.extra)
        new.num_outputs = node.num_outputs
        new.inputs = [entry(src, i) for src, i in node.inputs]
        memo[id(node)] = new
    outs = [entry(n, i) for n, i in sym._outputs]
    if name is not None:
        head = outs[0][0]
        if id(head) in {id(v) for v in memo.values()}:
            head.name = name
    return Symbol(outs)


def _single(value, key):
    from .symbol import Symbol

    if not isinstance(value, Symbol):
        raise ComposeTypeError(
            f"Compose expects Symbols as arguments; {key} is a {type(value).__name__}"
        )
    if len(value._outputs) != 1:
        raise MXNetError(
            f"Compose: argument {key} is a group of {len(value._outputs)} outputs; a single "
            f"output is required (select one with sym[i])"
        )
    return value._outputs[0]


def compose(sym, *args, **kwargs):
    """``sym(*args, name=None, **kwargs)``: see the module docstring."""
    name = kwargs.pop("name", None)
    if name is not None and not isinstance(name, str):
        raise ComposeTypeError(f"name must be a string, got {type(name).__name__}")
    if args and kwargs:
        raise ComposeTypeError(
            "compose only accept input Symbols either as positional or keyword arguments, not both"
        )
    nodes = topo(sym._outputs)
    variables = [n for n in nodes if n.op is None]
    if (args or kwargs) and len(nodes) == 1 and len(variables) == 1:
        raise MXNetError(
            f"cannot compose variable {variables[0].name!r}: a variable has no inputs to replace"
        )
    replace = {}
    if args:
        arg_names = sym.list_arguments()
        aux_ids = sym._aux_nodes()
        arg_nodes = [n for n in variables if id(n) not in aux_ids]
        if len(args) > len(arg_nodes):
            raise MXNetError(
                f"Compose: {len(args)} positional arguments given, the symbol has "
                f"{len(arg_nodes)} arguments {arg_names}"
            )
        for k, (node, value) in enumerate(zip(arg_nodes, args)):
            if value is not None:
                replace[id(node)] = _single(value, f"#{k} ({node.name})")
    for key, value in kwargs.items():
        matches = [n for n in variables if n.name == key]
        if not matches:
            cands = "\n".join(f"\t[{i}]{n}" for i, n in enumerate(sym.list_inputs()))
            raise MXNetError(
                f"Symbol.Compose: keyword argument name {key} not found.\n"
                f"Candidate arguments:\n{cands}"
            )
        ent = _single(value, repr(key))
        for node in matches:
            replace[id(node)] = ent
    return copy_graph(sym, replace, name)
