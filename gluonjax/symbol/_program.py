"""The compiled programs behind an Executor.

``forward`` is ONE ``jax.jit`` call of the graph (``symbol._eval.graph_function``)
returning the outputs and, in training mode, the new auxiliary states.

``backward`` is ONE ``jax.jit`` call too: it RECOMPUTES the forward pass from the
argument values, auxiliary states and random key saved by the last ``forward``
inside ``jax.vjp`` and pulls the head gradients back (so no residuals are kept
between the two calls; Dropout masks agree because the key is reused). Gradients
of ``grad_req='add'`` arguments are summed with the old ones inside the same call.
One program is cached per (differentiated names, added names, mode); jax caches
the compiled executable per input shape, so executors made by ``reshape`` share
them.
"""

from __future__ import annotations

import jax

from .. import _compile
from .._caches import LRU
from .._tape.node import pullback
from ._eval import graph_function

__all__ = ["Program", "program_for"]

# compiled programs by graph structure: executors of equal graphs (rebinding, the same
# symbol bound several times, bucketing modules) share one Program and its jit caches.
# A Program runs a copy of the graph's nodes, so the cache keeps no user symbol alive.
_PROGRAMS = LRU(64, "executor programs")


def _signature(symbol):
    """A hashable description of everything the compiled program depends on, or None."""
    from .._ops.graph import topo

    order = topo(symbol._outputs)
    index = {id(n): i for i, n in enumerate(order)}
    sig = []
    for n in order:
        if n.op is None:
            sig.append((None, n.name))
        else:
            ins = tuple((index[id(s)], i) for s, i in n.inputs)
            sig.append((n.op.name, n.name, n.static_key, n.dyn, ins, n.num_outputs))
    sig.append(tuple((index[id(n)], i) for n, i in symbol._outputs))
    sig = tuple(sig)
    try:
        hash(sig)
    except TypeError:
        return None
    return sig


def program_for(symbol):
    """The :class:`Program` of ``symbol``, shared with earlier equal graphs."""
    from ._compose import copy_graph

    key = _signature(symbol)
    if key is None:
        return Program(symbol)
    prog = _PROGRAMS.get(key)
    if prog is None:
        prog = _PROGRAMS.put(key, Program(copy_graph(symbol)))
    return prog


class Program:
    """Compiled forward/backward of one symbol (shared by reshaped executors)."""

    def __init__(self, symbol):
        self.symbol = symbol
        self.graph = graph_function(symbol)
        self.random = any(n.op is not None and n.op.random for n in self.graph.nodes)
        self.no_head = [n.op is not None and n.op.head_free for n, _ in symbol._outputs]
        # only train/predict-mode ops (Dropout, BatchNorm...) read the mode: without them
        # the training and inference programs are one (one compilation fewer)
        self.moded = any(n.op is not None and n.op.mode for n in self.graph.nodes)
        self._fwd = _compile.jit(self._forward, "train", static_argnames=("training",))
        self._bwd = {}
        self._internals = None

    def _forward(self, args, aux, seed_key, counter, training):
        return self.graph(args, aux, seed_key, counter, training)

    def forward(self, args, aux, seed_key, counter, training):
        """``(outputs list, new aux dict)`` as jax arrays."""
        return self._fwd(args, aux, seed_key, counter, training=bool(training) and self.moded)

    def output_specs(self, args, aux, seed_key, counter):
        """Shapes/dtypes of the outputs (``jax.ShapeDtypeStruct``), without running."""
        outs, _ = jax.eval_shape(
            lambda a, x, k, c: self.graph(a, x, k, c, False), args, aux, seed_key, counter
        )
        return outs

    def backward(self, diff_names, add_names, training):
        """The jitted ``fn(args, aux, key, counter, heads, old_grads) -> {name: grad}``."""
        cache_key = (tuple(diff_names), tuple(add_names), bool(training) and self.moded)
        fn = self._bwd.get(cache_key)
        if fn is None:
            fn = self._bwd[cache_key] = _compile.jit(self._make_backward(*cache_key), "train")
        return fn

    def _make_backward(self, diff_names, add_names, training):
        graph = self.graph

        def bwd(args, aux, seed_key, counter, heads, old_grads):
            fixed = {k: v for k, v in args.items() if k not in diff_names}

            def f(diff):
                outs, _ = graph({**fixed, **diff}, aux, seed_key, counter, training)
                return outs

            _, (grads,) = pullback(f, ({n: args[n] for n in diff_names},), list(heads))
            for n in add_names:
                grads[n] = grads[n] + old_grads[n].astype(grads[n].dtype)
            return grads

        return bwd

    def internals(self, args, aux, seed_key, counter, training):
        """``(names, values)`` of every internal output (for monitor callbacks)."""
        if self._internals is None:
            inner = self.symbol.get_internals()
            g = graph_function(inner)
            self._internals = (
                inner.list_outputs(),
                jax.jit(lambda a, x, k, c, t: g(a, x, k, c, t)[0], static_argnums=(4,)),
            )
        names, fn = self._internals
        return names, fn(args, aux, seed_key, counter, bool(training))
