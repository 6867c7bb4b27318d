"""Subgraphs of control-flow nodes (``_foreach``, ``_while_loop``, ``_cond``).

A loop body or branch is traced by calling the user's function on fresh variables
inside ``AttrScope(__subgraph_name__=name)``, as MXNet does; :func:`cut` then copies
the nodes made in that scope into a separate graph. Everything the body used from
outside becomes an input of the subgraph: variables by name, other outside entries
("cut" entries, e.g. ``v5 + v6`` computed before the loop) as new variables. The
control-flow node takes those outside entries as its inputs.

:class:`Subgraph` is the value of the ops' hidden ``_subgraphs`` attribute: a
callable on input values by position, compared by graph structure (so equal graphs
share compiled kernels and executor programs).
"""

from __future__ import annotations

import zlib

from .._graph import postorder
from .._ops.graph import Node
from ._eval import graph_function

__all__ = ["Subgraph", "cut", "SCOPE_KEY"]

SCOPE_KEY = "__subgraph_name__"


class Subgraph:
    """A symbol graph run as a function of its inputs (``list_inputs()`` order).

    Parameters
    ----------
    symbol : Symbol
        The graph; its heads are the subgraph's outputs.
    """

    __slots__ = ("symbol", "names", "_graph", "_key", "_repr")

    def __init__(self, symbol):
        from ._program import _signature

        self.symbol = symbol
        self.names = symbol.list_inputs()
        self._graph = None
        sig = _signature(symbol)
        self._key = sig if sig is not None else ("id", id(self))
        self._repr = None

    def __hash__(self):
        return hash(self._key)

    def __eq__(self, other):
        return isinstance(other, Subgraph) and self._key == other._key

    def __repr__(self):
        if self._repr is None:
            self._repr = f"subgraph<{zlib.crc32(repr(self._key).encode()):08x}>"
        return self._repr

    def __call__(self, values):
        """The outputs (a list of arrays) for input ``values`` (by position)."""
        if self._graph is None:
            self._graph = graph_function(self.symbol)
        outs, _ = self._graph.evaluate(dict(zip(self.names, values)), {})
        return outs

    def infer(self, known):
        """``{input name: partial shape}`` the graph implies, from ``{name: shape}``."""
        from .._ops.graph import topo
        from ._infer_graph import infer_shapes

        shapes = infer_shapes(self.symbol, known)
        out = {}
        for node in topo(self.symbol._outputs):
            if node.op is None and shapes.get((id(node), 0)) is not None:
                out[node.name] = shapes[(id(node), 0)]
        return out

    @staticmethod
    def infer_op_inputs(attrs, shapes):
        """Input shapes of a control-flow node that its subgraphs imply (the op's
        ``infer_args`` rule): ``{"argK": shape}`` from the known ``{"argK": shape}``."""
        graphs = attrs["_subgraphs"]
        if "in_data_locs" in attrs:  # _foreach: subgraph position -> node input
            order = list(attrs["in_data_locs"]) + list(attrs["in_state_locs"])
            order += list(attrs["remain_locs"])
            pos = [0] * len(order)
            for k, loc in enumerate(order):
                pos[loc] = k
            pairs = [(graphs[0], pos)]
            n_data = len(attrs["in_data_locs"])
        elif "func_input_locs" in attrs:
            pairs = list(zip(graphs, (attrs["cond_input_locs"], attrs["func_input_locs"])))
            n_data = 0
        else:
            locs = (attrs["cond_input_locs"], attrs["then_input_locs"], attrs["else_input_locs"])
            pairs = list(zip(graphs, locs))
            n_data = 0
        found = {}
        for graph, pos in pairs:
            known = {}
            for j, k in enumerate(pos):
                s = shapes.get(f"arg{k}")
                if s is not None:
                    known[graph.names[j]] = tuple(s)[1:] if k < n_data else tuple(s)
            inferred = graph.infer(known)
            for j, k in enumerate(pos):
                s = inferred.get(graph.names[j])
                if s is not None and k >= n_data and f"arg{k}" not in shapes:
                    found[f"arg{k}"] = s
        return found


def cut(heads, name):
    """Copy the nodes of scope ``name`` behind ``heads`` into a separate graph.

    Parameters
    ----------
    heads : list of (node, index)
        The subgraph's outputs (nodes made in the scope).
    name : str
        The ``__subgraph_name__`` of the scope.

    Returns
    -------
    (Symbol, list of (input name, outside entry))
        The subgraph, and for each of its inputs (``list_inputs()`` order) the entry
        outside the scope that feeds it: a variable node, or a cut entry.
    """
    from .symbol import Symbol

    def inside(node):
        return node.op is not None and node.extra.get(SCOPE_KEY) == name

    order = postorder(
        [n for n, _ in heads], lambda n: [s for s, _ in n.inputs] if inside(n) else []
    )
    leaves, outer, cut_names, memo = {}, {}, {}, {}

    def leaf(var_name, entry, extra):
        if var_name not in leaves:
            leaves[var_name] = Node(None, var_name, extra=extra)
            outer[var_name] = entry
        return (leaves[var_name], 0)

    def entry_of(node, idx):
        if node.op is None:
            return leaf(node.name, (node, 0), node.extra)
        if not inside(node):
            key = (id(node), idx)
            if key not in cut_names:
                base = node.output_names()[idx]
                new, k = base, 0
                while new in leaves:
                    k += 1
                    new = f"{base}{k}"
                cut_names[key] = new
            return leaf(cut_names[key], (node, idx), {})
        return (memo[id(node)], idx)

    for node in order:
        if inside(node):
            ins = [entry_of(s, i) for s, i in node.inputs]
            memo[id(node)] = Node(
                node.op, node.name, node.attrs, ins, node.static_key, node.dyn, node.extra
            )
    sub = Symbol([entry_of(n, i) for n, i in heads])
    return sub, [(nm, outer[nm]) for nm in sub.list_inputs()]
