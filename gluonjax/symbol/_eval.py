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
from jax.extend.core import Var

from .. import _rng as _random
from .._ops.graph import topo
from .._ops.shape_rules import attr_shape, is_creation, is_known
from .._tape import state as _ag
from ..base import MXNetError


class GraphFunction:
    """A symbol graph prepared for evaluation (see module docstring)."""

    def __init__(self, symbol):
        self.symbol = symbol
        self.nodes = topo(symbol._outputs)
        self.heads = list(symbol._outputs)
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self._plan = []
        # creation ops whose shape attribute leaves dims to shape inference (MXNet's
        # ``sym.zeros((0, n))`` begin states): their shapes are found per input shapes
        self.deferred = [
            n
            for n in self.nodes
            if n.op is not None
            and is_creation(n.op)
            and not is_known(attr_shape(n.attr_dict().get("shape")))
        ]
        self._by_id = {id(n): n for n in self.deferred}
        for node in self.nodes:
            if node.op is None:
                self._plan.append((node, None, None))
                continue
            names = node.op.input_names(node.attr_dict(), len(node.inputs))
            aux_slots = tuple(
                (k, src.name)
                for k, ((src, _), nm) in enumerate(zip(node.inputs, names))
                if nm in node.op.aux_names(node.attr_dict()) and src.op is None
            )
            self._plan.append((node, names, aux_slots))

    def _deferred_keys(self, args, aux):
        """{id(node): (static_key, dyn)} of the deferred creation nodes for these inputs."""
        from ._infer import resolve_created
        from ._infer_graph import infer_dtypes

        values = {**aux, **args}
        dtypes = infer_dtypes(self.symbol, {n: v.dtype for n, v in values.items()})
        keys = resolve_created(self.symbol, {n: v.shape for n, v in values.items()}, dtypes)
        return {i: (key, self._by_id[i].dyn) for i, key in keys.items()}

    def input_value(self, name, args, aux, new_aux):
        """The value of graph input ``name`` (an auxiliary state updated earlier wins)."""
        for table in (new_aux, args, aux):
            if name in table:
                return table[name]
        raise MXNetError(
            f"graph input '{name}' was not given; the graph needs arguments "
            f"{self.arg_names} and auxiliary states {self.aux_names}"
        )

    def scope(self, seed_key, counter, training):
        """The random-key and train-mode scope a run of the graph needs."""
        rnd = _random.traced_key(seed_key, counter) if seed_key is not None else _NoScope()
        return rnd, _ag._Scope(None, training)

    def __call__(self, args, aux, seed_key=None, counter=None, training=False, runs=None):
        rnd, mode = self.scope(seed_key, counter, training)
        with rnd, mode:
            return self.evaluate(args, aux, runs)

    def evaluate(self, args, aux, runs=None):
        """``(outputs, new aux)`` in the current random-key and train-mode scope (a
        control-flow subgraph runs in its enclosing graph's scope). ``runs`` maps
        ``id(node)`` to a ``fn(node, ins) -> (outputs, new aux)`` run instead of
        :func:`run_node` (the executor's backward passes gradients through integer
        casts with it)."""
        env, new_aux = {}, {}
        overrides = self._deferred_keys(args, aux) if self.deferred else {}
        for node, _names, aux_slots in self._plan:
            if node.op is None:
                env[(id(node), 0)] = self.input_value(node.name, args, aux, new_aux)
                continue
            ins = [env[(id(src), idx)] for src, idx in node.inputs]
            run = runs.get(id(node)) if runs else None
            if run is not None:
                outs, updated = run(node, ins)
            else:
                outs, updated = run_node(node, ins, overrides.get(id(node)))
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


def run_node(node, ins, override=None):
    """Run one op node on input values: ``(outputs list, new aux values or None)``.

    ``override`` is a ``(static_key, dyn)`` pair replacing the node's attributes.
    """
    op = node.op
    key, dyn = override if override is not None else (node.static_key, node.dyn)
    if op.mode:
        key = key[:-1] + (_ag.is_training(),)
    vals = list(ins)
    if op.random:
        vals[0:0] = _random.key_and_counter()
    vals.extend(dyn)
    kernel = op.kernel(key)
    try:
        # the node's MXNet name rides along in the jaxpr (export names nodes with it)
        with jax.named_scope(node.name):
            res = kernel(*vals)
    except MXNetError as err:
        raise type(err)(f"node '{node.name}': {err}") from None
    except Exception as err:
        if "Tracer" in type(err).__name__ or "Concretization" in type(err).__name__:
            raise
        failed = op.fail(err, vals, key)
        raise type(failed)(f"node '{node.name}': {failed}") from None
    updated = None
    aux_names = op.aux_names(node.attr_dict())
    if aux_names:
        res, new_aux = res
        # an auxiliary state the op returns as it got it (BatchNorm in inference) stays
        # the input itself: not a write (a compiled call then neither returns nor copies it)
        same = _forwarded(kernel, vals, len(new_aux))
        new_aux = [v if i is None else vals[i] for v, i in zip(new_aux, same)]
        names = op.input_names(node.attr_dict(), len(ins))
        updated = [v for nm, v in zip(aux_names, new_aux) if nm in names]
    return (list(res) if isinstance(res, (tuple, list)) else [res]), updated


def _forwarded(kernel, vals, n):
    """For each of a kernel's last ``n`` outputs, the position of the input it returns
    unchanged, or None (read off the kernel's jaxpr; jax caches the trace)."""
    try:
        jaxpr = kernel.trace(*vals).jaxpr.jaxpr
    except Exception:  # noqa: BLE001  (no jaxpr: nothing is known to be unchanged)
        return [None] * n
    pos = {v: i for i, v in enumerate(jaxpr.invars)}
    return [pos.get(v) if isinstance(v, Var) else None for v in jaxpr.outvars[-n:]]


def graph_function(symbol):
    """A :class:`GraphFunction` for ``symbol``."""
    return GraphFunction(symbol)
