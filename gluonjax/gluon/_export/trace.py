"""The inference function of a block, with its parameters as inputs.

``inference_function(block, signature)`` returns ``fn(*params, *inputs) ->
outputs`` (a flat list): the hybridized forward (``CachedGraph._pure``) with
``training=False``, plus the parameters' structural names ('0.weight') in the
order ``fn`` takes them. The block itself is not changed.
"""

from __future__ import annotations

import contextlib
import io

import jax
import numpy as np

from ...base import MXNetError
from ...ndarray.ndarray import NDArray

__all__ = ["Traced", "signature_of", "input_names"]


def input_names(n):
    """``['data']`` for one input, ``['data0', 'data1', ..]`` for several (as MXNet)."""
    return ["data"] if n == 1 else [f"data{i}" for i in range(n)]


def _spec(x):
    raw = x._data if isinstance(x, NDArray) else x
    if raw is None:
        raise MXNetError("export: None inputs cannot be exported")
    if not (hasattr(raw, "shape") and hasattr(raw, "dtype")):
        raw = np.asarray(raw)
    return jax.ShapeDtypeStruct(tuple(raw.shape), np.dtype(raw.dtype))


def signature_of(block, example_inputs=None):
    """Input shapes/dtypes: from ``example_inputs`` or from the block's first call."""
    if example_inputs is not None:
        if isinstance(example_inputs, (NDArray, np.ndarray, jax.Array)):
            example_inputs = [example_inputs]
        return [_spec(x) for x in example_inputs]
    cached = getattr(block, "_cached", None)
    sig = getattr(cached, "input_signature", None)
    if sig is None:  # run by net.forward(x) only
        sig = block.__dict__.get("_forward_signature")
    if sig is None:
        raise MXNetError(
            f"export: {type(block).__name__} '{block.name}' has not been run yet, so its "
            f"input shapes are unknown. Call net.hybridize() and run it once on example "
            f"data (net(x)) before net.export(...), or pass example_inputs=[x]."
        )
    if any(s is None for s in sig):
        raise MXNetError("export: blocks called with None inputs cannot be exported")
    return [jax.ShapeDtypeStruct(tuple(s), np.dtype(d)) for s, d in sig]


class Traced:
    """A block's inference function and its parameter naming.

    Attributes
    ----------
    fn : callable
        ``fn(*params, *inputs) -> list of outputs``.
    names : list of str
        Structural parameter names, in ``fn``'s order.
    params : list of Parameter
    signature : list of jax.ShapeDtypeStruct
        The data inputs.
    """

    def __init__(self, block, signature):
        from .._cached import CachedGraph

        if any(p._data is None for p in block._all_params()):
            block._deferred_init([NDArray(jax.numpy.zeros(s.shape, s.dtype)) for s in signature])
        for p in block._all_params():
            p._check()
        by_id = {}
        for name, p in block._collect_params_with_prefix().items():
            by_id.setdefault(id(p), name)
        graph = CachedGraph(block)
        self.params = list(graph.params)
        self.names = [by_id[id(p)] for p in self.params]
        self.signature = list(signature)
        self.input_names = input_names(len(signature))
        n_p = len(self.params)
        key = jax.random.PRNGKey(0)  # random ops are identities in inference

        def fn(*flat):
            out, _ = graph._pure(list(flat[:n_p]), list(flat[n_p:]), key, np.uint32(0), False)
            return jax.tree_util.tree_leaves(out)

        self.fn = fn

    def values(self):
        """The parameters' current values (jax arrays), in ``fn``'s order."""
        return [p._data._data for p in self.params]

    def param_specs(self):
        return [jax.ShapeDtypeStruct(tuple(v.shape), np.dtype(v.dtype)) for v in self.values()]

    def jaxpr(self):
        """The closed jaxpr of ``fn`` at the signature's shapes.

        Tracing runs the block's Python once more; MXNet exports the graph it cached
        at the first call, so (as there) the forward's prints do not show again.
        """
        with contextlib.redirect_stdout(io.StringIO()):
            return jax.make_jaxpr(self.fn)(*self.param_specs(), *self.signature)
