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

A graph made only of size-class ops (elementwise, broadcast, reductions: the registry's
``bucket`` ops) runs node by node on size classes (``_ops.buckets``) while its argument
shapes are new, forward and backward, so binding it to many shapes compiles no program
per shape; after ``buckets.HOT`` calls on one set of shapes it gets its compiled
programs.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from .. import _compile
from .._caches import LRU
from .._ops import buckets
from .._ops.hostcall import HostCalls
from .._tape import sizeclass
from .._tape.node import inexact, pullback
from ._eval import graph_function, run_node
from ._int_grads import backward_runs, cast_runs, float_standins

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
        # (backward, input structure) -> which head gradients it reads
        self._heads = LRU(64, "executor head-gradient use")
        self._internals = None
        # graphs of size-class ops only (elementwise, broadcast, reductions) run node by
        # node on size classes while their argument shapes are new (no compile per shape)
        # casts to integer dtypes: the backward passes gradients through them (MXNet)
        self.int_casts = cast_runs(self.graph)
        self.sized = (
            not self.random
            and not self.int_casts
            and not self.graph.deferred
            and any(n.op is not None for n in self.graph.nodes)
            and all(n.op is None or n.op.bucket is not None for n in self.graph.nodes)
        )
        self._seen = {}
        self._host = {}  # training flag -> the forward's exact-shape host programs

    def _count(self, args, peek):
        """Whether a call on these argument shapes runs node by node; ``peek``: do not
        count it (backward follows the forward's choice)."""
        if not self.sized or not buckets.enabled():
            return False
        k = tuple((n, v.shape, v.dtype) for n, v in args.items())
        c = self._seen.get(k, 0)
        if peek:
            return c <= buckets.HOT
        if c > buckets.HOT:
            return False
        if len(self._seen) >= 4096:
            self._seen.clear()
        self._seen[k] = c + 1
        return c < buckets.HOT

    def _sized_forward(self, args, aux):
        """The outputs, node by node; and per node (node, plan or None, input values)."""
        env, steps = {}, []
        for node in self.graph.nodes:
            if node.op is None:
                env[(id(node), 0)] = self.graph.input_value(node.name, args, aux, {})
                continue
            ins = [env[(id(src), i)] for src, i in node.inputs]
            p = out = None
            try:
                p = buckets.plan(node.op, node.static_key, ins + list(node.dyn), len(ins))
                if p is not None:
                    out = buckets.forward(p)
            except Exception:  # noqa: BLE001 - the node's exact kernel runs it (or raises)
                p = None
            if p is None:
                out = run_node(node, ins)[0][0]
            env[(id(node), 0)] = out
            steps.append((node, p, ins))
        return [env[(id(n), i)] for n, i in self.graph.heads], steps

    def _sized_backward(self, args, aux, heads, diff_names, add_names, old_grads):
        outs, steps = self._sized_forward(args, aux)
        cts, grads = {}, {}

        def acc(table, key, g):
            prev = table.get(key)
            table[key] = g if prev is None else buckets.add(prev, g)

        for (n, i), h, o in zip(self.graph.heads, heads, outs):
            h = h if h.dtype == o.dtype else h.astype(o.dtype)
            if n.op is None:
                if n.name in diff_names:
                    acc(grads, n.name, h)
            else:
                acc(cts, (id(n), i), h)
        for node, p, ins in reversed(steps):
            ct = cts.pop((id(node), 0), None)
            if ct is None:
                continue
            positions = [
                k
                for k, (src, _) in enumerate(node.inputs)
                if inexact(ins[k].dtype) and (src.op is not None or src.name in diff_names)
            ]
            if not positions:
                continue
            if p is not None:
                gs = sizeclass.vjp(p, positions, ct)
            else:

                def f(*d, node=node, ins=ins, positions=positions):
                    full = list(ins)
                    for k, v in zip(positions, d):
                        full[k] = v
                    return (run_node(node, full)[0][0],)

                gs = pullback(f, [ins[k] for k in positions], (ct,))[1]
            for k, g in zip(positions, gs):
                src, idx = node.inputs[k]
                if src.op is None:
                    acc(grads, src.name, g)
                else:
                    acc(cts, (id(src), idx), g)
        for n in diff_names:
            if n not in grads:
                grads[n] = buckets.filled(args[n].shape, args[n].dtype, 0)
        for n in add_names:
            old = old_grads[n]
            grads[n] = buckets.add(grads[n], old if old.dtype == grads[n].dtype else
                                   old.astype(grads[n].dtype))  # fmt: skip
        return grads

    def _forward(self, args, aux, seed_key, counter, training):
        return self.graph(args, aux, seed_key, counter, training)

    def forward(self, args, aux, seed_key, counter, training):
        """``(outputs list, new aux dict)`` as jax arrays."""
        if self._count(args, peek=False):
            return self._sized_forward(args, aux)[0], {}
        training = bool(training) and self.moded
        host = self._host.get(training)
        if host is None:
            host = self._host[training] = HostCalls(
                functools.partial(self._forward, training=training)
            )
        res = host(args, aux, seed_key, counter)
        if res is not None:
            return res
        return self._fwd(args, aux, seed_key, counter, training=training)

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
            bwd = self._make_backward(*cache_key)
            fn = self._either(_compile.jit(bwd, "train"), HostCalls(bwd), *cache_key[:2])
            self._bwd[cache_key] = fn
        return fn

    def heads_used(self, diff_names, add_names, training, inputs):
        """Per output, whether the gradients of ``diff_names`` depend on its head gradient.

        An output whose gradient never reaches an argument (comparisons, ``shape_array``,
        ``BlockGrad``...) needs no head gradient, as in MXNet, whose backward graph has no
        head-gradient entry for it. ``inputs`` are the backward's arguments; read from the
        backward's jaxpr once per structure."""
        cache_key = (tuple(diff_names), tuple(add_names), bool(training) and self.moded)
        leaves, tree = jax.tree_util.tree_flatten(inputs)
        key = (cache_key, tree, tuple((jnp.shape(x), jnp.result_type(x)) for x in leaves))
        hit = self._heads.get(key)
        if hit is None:
            closed = jax.make_jaxpr(self._make_backward(*cache_key))(*inputs)
            n_before = sum(len(jax.tree_util.tree_leaves(x)) for x in inputs[:4])
            used = _used_inputs(closed.jaxpr)
            hit = [used[n_before + i] for i in range(len(inputs[4]))]
            self._heads.put(key, hit)
        return hit

    def _either(self, compiled, host, diff_names, add_names):
        """The backward: node by node on size classes (a graph of size-class ops on new
        shapes), else as one host program (its jaxpr in NumPy, new shapes), else
        compiled."""

        def fn(args, aux, seed_key, counter, heads, old_grads):
            ints = any(not inexact(args[n].dtype) for n in diff_names)
            if self.sized and not ints and self._count(args, peek=True):
                try:
                    return self._sized_backward(args, aux, heads, diff_names, add_names, old_grads)
                except Exception:  # noqa: BLE001 - the compiled backward runs it (or raises
                    pass  # the op's own error, naming the node)
            res = host(args, aux, seed_key, counter, heads, old_grads)
            if res is not None:
                return res
            return compiled(args, aux, seed_key, counter, heads, old_grads)

        return fn

    def _make_backward(self, diff_names, add_names, training):
        graph, casts = self.graph, self.int_casts

        def bwd(args, aux, seed_key, counter, heads, old_grads):
            fixed = {k: v for k, v in args.items() if k not in diff_names}
            # integer arguments are differentiated through float32 stand-ins, and
            # integer casts pass gradients on (MXNet)
            primal = float_standins({n: args[n] for n in diff_names})
            ints = any(primal[n] is not args[n] for n in diff_names)
            runs = backward_runs(graph, casts, {**aux, **args}) if casts or ints else None

            def f(diff):
                outs, _ = graph({**fixed, **diff}, aux, seed_key, counter, training, runs)
                return outs

            _, (grads,) = pullback(f, (primal,), list(heads))
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


def _used_inputs(jaxpr):
    """Which of ``jaxpr``'s inputs its outputs depend on (dead code removed)."""
    from jax._src.interpreters import partial_eval as pe

    _, used = pe.dce_jaxpr(jaxpr, [True] * len(jaxpr.outvars))
    return used
