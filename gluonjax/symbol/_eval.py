"""Run a symbol graph: one pure function of (arguments, auxiliary states, key, mode).

``graph_function(symbol)`` walks the graph once and returns
``fn(args, aux, seed_key, counter, training) -> (outputs, new_aux)``, where
``args``/``aux`` map variable names to arrays. Every node calls its op's cached
kernel, so under ``jax.jit`` the whole graph compiles to one XLA program (and
each registry op stays a named sub-call in the jaxpr). The Executor, the Module
API and SymbolBlock all run graphs through this.
"""

from __future__ import annotations

import jax

from .. import random as _random
from ..autograd import _state as _ag
from ..base import MXNetError
from ._infer import created_shape, resolve_created
from ._node import Node, topo


class GraphFunction:
    """A symbol graph prepared for evaluation (see module docstring)."""

    def __init__(self, symbol):
        self.symbol = symbol
        self.nodes = topo(symbol._outputs)
        self.heads = list(symbol._outputs)
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self._plan = []
        for node in self.nodes:
            if node.op is None:
                self._plan.append((node, None, None))
                continue
            names = node.op.input_names(node.attr_dict(), len(node.inputs))
            aux_slots = tuple(
                (k, src.name)
                for k, ((src, _), nm) in enumerate(zip(node.inputs, names))
                if nm in node.op.aux and src.op is None
            )
            self._plan.append((node, names, aux_slots))
        # input-less nodes with unknown (0) shape dims, e.g. an RNN cell's
        # ``zeros((0, H))`` begin state: their shapes come from inference on each call's
        # input shapes (as MXNet's bind does)
        self._unknown = any(
            created_shape(n, {}, 0) is not None for n in self.nodes if n.op is not None
        )
        self._resolved = {}

    def _resolve(self, args, aux):
        shapes = {k: tuple(v.shape) for k, v in {**aux, **args}.items()}
        key = tuple(sorted(shapes.items()))
        found = self._resolved.get(key)
        if found is None:
            keys = resolve_created(self.symbol, shapes)
            found = {}
            for node in self.nodes:
                if id(node) in keys:
                    found[id(node)] = Node(
                        node.op,
                        node.name,
                        node.attrs,
                        node.inputs,
                        keys[id(node)],
                        node.dyn,
                        node.extra,
                    )
            if len(self._resolved) < 64:
                self._resolved[key] = found
        return found

    def __call__(self, args, aux, seed_key=None, counter=None, training=False):
        env, new_aux = {}, {}
        resolved = self._resolve(args, aux) if self._unknown else {}
        scope = _random.traced_key(seed_key, counter) if seed_key is not None else _NoScope()
        with scope, _ag._Scope(None, training):
            for node, _names, aux_slots in self._plan:
                if node.op is None:
                    name = node.name
                    if name in new_aux:
                        env[(id(node), 0)] = new_aux[name]
                    elif name in args:
                        env[(id(node), 0)] = args[name]
                    elif name in aux:
                        env[(id(node), 0)] = aux[name]
                    else:
                        raise MXNetError(
                            f"graph input '{name}' was not given; the graph needs arguments "
                            f"{self.arg_names} and auxiliary states {self.aux_names}"
                        )
                    continue
                ins = [env[(id(src), idx)] for src, idx in node.inputs]
                outs, updated = run_node(resolved.get(id(node), node), ins)
                for (_k, aux_name), value in zip(aux_slots, updated or ()):
                    new_aux[aux_name] = value
                for i, o in enumerate(outs):
                    env[(id(node), i)] = o
        return [env[(id(n), i)] for n, i in self.heads], new_aux


class _NoScope:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def run_node(node, ins):
    """Run one op node on input values: ``(outputs list, new aux values or None)``."""
    op = node.op
    key = node.static_key
    if op.mode:
        key = key[:-1] + (_ag.is_training(),)
    vals = list(ins)
    if op.random:
        vals[0:0] = _random.key_and_counter()
    vals.extend(node.dyn)
    try:
        # the node's MXNet name rides along in the jaxpr (export names nodes with it)
        with jax.named_scope(node.name):
            res = op.kernel(key)(*vals)
    except MXNetError as err:
        raise type(err)(f"node '{node.name}': {err}") from None
    except Exception as err:
        if "Tracer" in type(err).__name__ or "Concretization" in type(err).__name__:
            raise
        failed = op.fail(err, vals, key)
        raise type(failed)(f"node '{node.name}': {failed}") from None
    updated = None
    if op.aux:
        res, new_aux = res
        names = op.input_names(node.attr_dict(), len(ins))
        updated = [v for nm, v in zip(op.aux, new_aux) if nm in names]
    return (list(res) if isinstance(res, (tuple, list)) else [res]), updated


def graph_function(symbol):
    """A :class:`GraphFunction` for ``symbol``."""
    return GraphFunction(symbol)
