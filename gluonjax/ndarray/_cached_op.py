"""``nd.CachedOp``: a Symbol graph called like a function on NDArrays.

The graph runs node by node through the registry's ``nd`` path, so under
``autograd.record()`` every op is on the tape and gradients reach the inputs.

Examples
--------
>>> import gluonjax as mx
>>> x, w = mx.sym.var('x'), mx.sym.var('w')
>>> op = mx.nd.CachedOp(x * w + 1)
>>> op(mx.nd.array([1, 2]), mx.nd.array([3, 4])).asnumpy().tolist()
[4.0, 9.0]
"""

from __future__ import annotations

from ..base import MXNetError
from ._invoke import invoke
from .ndarray import NDArray

__all__ = ["CachedOp", "run_graph"]


def run_graph(outputs, values):
    """Evaluate graph ``outputs`` (a Symbol's ``_outputs``) with ``values`` (input name ->
    NDArray) op by op; returns the list of output NDArrays."""
    from .._ops.graph import topo

    env = {}
    for node in topo(outputs):
        if node.op is None:
            if node.name not in values:
                raise MXNetError(f"CachedOp: graph input '{node.name}' was not given")
            env[(id(node), 0)] = values[node.name]
            continue
        ins = [env[(id(src), i)] for src, i in node.inputs]
        kwargs = {k: v for k, v in node.attr_dict().items() if k != "_train"}
        res = invoke(node.op, ins, kwargs)
        for i, r in enumerate(res if isinstance(res, (list, tuple)) else [res]):
            env[(id(node), i)] = r
    return [env[(id(n), i)] for n, i in outputs]


class CachedOp:
    """A callable made from a Symbol: ``CachedOp(sym)(*inputs)``.

    Parameters
    ----------
    sym : Symbol
        The graph; its inputs (``sym.list_inputs()``: arguments and auxiliary states)
        are the call's positional arguments, in that order.
    flags : sequence of (str, value)
        MXNet's static-allocation flags; accepted, no effect (every call is compiled op
        by op, and a hybridized block is one jax.jit).
    """

    def __init__(self, sym, flags=()):
        self._sym = sym
        self._outputs = list(sym._outputs)
        self._names = sym.list_inputs()
        self.flags = tuple(flags)

    def __call__(self, *args, out=None, **kwargs):
        if kwargs:
            raise MXNetError(f"CachedOp takes positional inputs only, got {sorted(kwargs)}")
        if len(args) != len(self._names):
            raise MXNetError(
                f"CachedOp expects {len(self._names)} inputs {self._names}, got {len(args)}"
            )
        if not all(isinstance(a, NDArray) for a in args):
            raise MXNetError("CachedOp inputs must be NDArrays")
        outs = run_graph(self._outputs, dict(zip(self._names, args)))
        if out is not None:
            targets = out if isinstance(out, (list, tuple)) else [out]
            for t, r in zip(targets, outs):
                t._data, t._node = r._data, r._node
            return out
        return outs[0] if len(outs) == 1 else outs
