"""What a HybridBlock may take and return, checked the same way eager and hybridized.

- Inputs: NDArrays (or jax arrays), Symbols, None, nested in lists/tuples, and Python
  numbers beside an NDArray. A numpy array is refused in both modes, as MXNet refuses it
  (convert with ``mx.nd.array``).
- Outputs: NDArrays or Symbols, nested in lists/tuples (None allowed inside a
  list/tuple, as MXNet; jax arrays too, for forwards written with jax.numpy). None, a
  Python number or a numpy array is refused, naming the block and the type (a
  forgotten ``return`` gives None).
- Writes into an input (``x[:] = 0``, ``x += 1``, ``out=x``) inside ``forward`` /
  ``hybrid_forward`` are refused in both modes: hybridized, the write cannot reach the
  caller's array, so eager calls may not change it either. Eager calls restore the
  input before raising. Write into a copy (``y = x.copy()``) or return a new array.

Hybridized, the checks run once per traced signature, never per call.
"""

from __future__ import annotations

import jax
import numpy as np

from ..base import BlockInputError, ForwardOutputError, InputWriteError
from ..ndarray.ndarray import NDArray


def _who(block):
    return f"{type(block).__name__} '{block.name}'"


def check_inputs(block, args):
    """Refuse numpy arrays among ``args`` (nested lists/tuples too), inputs with no
    NDArray or Symbol at all (``net(None, None)``), and NDArrays mixed with Symbols, as
    MXNet does (``ValueError``)."""
    kinds = set()
    for i, a in enumerate(args):
        _walk_input(block, a, i, kinds)
    if "nd" in kinds and "sym" in kinds:
        raise BlockInputError(
            f"{_who(block)} was called with NDArrays and Symbols mixed; pass all inputs as "
            f"NDArrays (to run) or all as Symbols (to build a graph)."
        )
    if not kinds and args:
        raise BlockInputError(
            f"{_who(block)} was called without any NDArray or Symbol input (got "
            f"{[type(a).__name__ for a in args]}); at least one input must be an NDArray."
        )


def _walk_input(block, a, i, kinds):
    if isinstance(a, (NDArray, jax.Array)):
        kinds.add("nd")
    elif hasattr(a, "_outputs"):
        kinds.add("sym")
    elif isinstance(a, np.ndarray):
        raise BlockInputError(
            f"{_who(block)} was called with a numpy.ndarray of shape {a.shape} in input {i}; "
            f"HybridBlocks take NDArrays (as MXNet). Convert it with mx.nd.array(x)."
        )
    elif isinstance(a, (list, tuple)):
        for v in a:
            _walk_input(block, v, i, kinds)
    elif isinstance(a, (int, float, complex, np.number)):
        kinds.add("scalar")


def check_hybrid_inputs(block, args):
    """:func:`check_inputs`, and no Python number among the inputs of a hybridized
    block: its graph has array inputs only (MXNet raises ``ValueError``)."""
    kinds = set()
    for i, a in enumerate(args):
        _walk_input(block, a, i, kinds)
    if "scalar" in kinds:
        shown = [type(a).__name__ for a in args]
        raise BlockInputError(
            f"{_who(block)} is hybridized and was called with a Python number among its "
            f"inputs ({shown}); a hybridized block takes NDArrays only: pass "
            f"mx.nd.array([value]), make the number an attribute of the block, or call it "
            f"without hybridize()."
        )
    check_inputs(block, args)
    # only contexts an array was placed on (``_ctx``): reading a deferred array's device
    # would run the work the training step defers
    ctxs = {_ctx_key(a._ctx) for a in _leaves(args) if getattr(a, "_ctx", None) is not None}
    if len(ctxs) > 1:
        raise BlockInputError(
            f"{_who(block)} is hybridized and was called with inputs on different contexts "
            f"{sorted(ctxs)}; move them to one first (x.as_in_context(ctx))."
        )


def _leaves(args):
    for a in args:
        if isinstance(a, (list, tuple)):
            yield from _leaves(a)
        else:
            yield a


def _ctx_key(c):
    # cpu_pinned memory is CPU memory: MXNet lets it mix with cpu
    return f"{'cpu' if c.device_type == 'cpu_pinned' else c.device_type}({c.device_id})"


def _bad_leaf(out, top=True):
    if out is None:
        return None if not top else type(None)
    if isinstance(out, (NDArray, jax.Array)) or hasattr(out, "_outputs"):
        return None
    if isinstance(out, (list, tuple)):
        for o in out:
            bad = _bad_leaf(o, False)
            if bad is not None:
                return bad
        return None
    return type(out)


def check_output(block, out, mode):
    """Raise :class:`ForwardOutputError` unless ``out`` is NDArray/Symbol (nested)."""
    bad = _bad_leaf(out)
    if bad is None:
        return out
    fn = "hybrid_forward" if type(block).forward is _hybrid_forward_attr() else "forward"
    hint = " (a forgotten `return`?)" if out is None else ""
    name = bad.__qualname__ if bad.__module__ == "builtins" else f"{bad.__module__}.{bad.__name__}"
    raise ForwardOutputError(
        f"{_who(block)}.{fn} returned {name}{hint} "
        f"({mode}); a HybridBlock returns NDArrays (F.* results), or lists/tuples of them. "
        f"Build outputs with F ops, e.g. F.array / F.ones_like(x) * value."
    )


def _hybrid_forward_attr():
    from .hybrid import HybridBlock

    return HybridBlock.forward


def input_write_error(block, i, shape, mode):
    """The error for a write into input ``i`` (of ``shape``) of ``block``."""
    return InputWriteError(
        f"{_who(block)} wrote in place into its input {i} (shape {tuple(shape)}) "
        f"({mode}); a hybridized forward cannot change the caller's array, so no forward "
        f"may. Write into a copy (y = x.copy(); y[:] = 0) or return a new array (x + 1)."
    )


def snapshot(args):
    """The arrays held by the NDArray inputs, to find writes into them afterwards."""
    return [a._data if isinstance(a, NDArray) else None for a in args]


def restore_and_check(block, args, before):
    """Undo writes into the NDArray inputs since :func:`snapshot`, then raise."""
    for i, (a, d) in enumerate(zip(args, before)):
        if d is not None and a._data is not d:
            shape = a.shape
            a._data = d
            raise input_write_error(block, i, shape, "eager")
