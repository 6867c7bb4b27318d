"""Value checks of a bound executor's forward (``take(mode='raise')``, ``gather_nd``...).

A registry op's ``check`` hook raises on bad input *values* (out-of-range indices); in
eager mode it runs before the kernel. An executor's forward runs one compiled program,
where values are traced, so the hook cannot run inside it. Its arguments are concrete,
though: every checked node whose inputs are graph arguments or auxiliary states (directly
or through ``BlockGrad``/``identity``) is checked on those values before the program
runs. A node that reads a value computed inside the graph is not checked (its indices
follow the op's traced mode, as in a hybridized block).

MXNet runs the graph asynchronously and raises when an output is read
(``asnumpy``, ``wait_to_read``); a failed check therefore leaves the error in the
outputs: reading them raises it (:class:`FailedValue`), and so does ``backward``.
"""

from __future__ import annotations

import weakref

from ..base import MXNetError

__all__ = ["FailedValue", "check_forward"]

# ops that pass their input through unchanged (the checked values are the argument's)
_PASS = frozenset(("BlockGrad", "_copy", "identity", "stop_gradient"))
_PLANS = weakref.WeakKeyDictionary()  # Program -> [(node, attrs, input names)]


def _source(node, idx):
    """The graph input name behind entry ``(node, idx)`` through pass-through ops."""
    while node.op is not None:
        if node.op.name not in _PASS or not node.inputs:
            return None
        node, idx = node.inputs[0]
    return node.name


def _plan(program):
    plan = _PLANS.get(program)
    if plan is None:
        plan = []
        for node in program.graph.nodes:
            if node.op is None or node.op.check is None or not node.op.graph_check:
                continue
            names = [_source(src, i) for src, i in node.inputs]
            if all(n is not None for n in names):
                plan.append((node, node.attr_dict(), names))
        _PLANS[program] = plan
    return plan


def check_forward(program, args, aux):
    """The error a checked node raises on these argument values, or None.

    Parameters
    ----------
    program : Program
        The executor's compiled program (``symbol._program``).
    args, aux : dict
        Argument and auxiliary-state values by name (concrete jax arrays).

    Returns
    -------
    MXNetError or None
        The first error, with the node's name in its message.
    """
    for node, attrs, names in _plan(program):
        values = [args[n] if n in args else aux.get(n) for n in names]
        if any(v is None for v in values):
            continue
        try:
            node.op.check(attrs, values + list(node.dyn))
        except MXNetError as err:
            return type(err)(f"node '{node.name}': {err}")
    return None


class FailedValue:
    """The value of an executor output whose computation raised: it keeps the shape,
    dtype and device of the array it stands for, and raises the error when read.

    Parameters
    ----------
    error : MXNetError
        The error to raise.
    value : jax.Array
        The array computed (unchecked), for its shape, dtype and device.
    """

    def __init__(self, error, value):
        self._error = error
        self._value = value

    shape = property(lambda self: self._value.shape)
    dtype = property(lambda self: self._value.dtype)
    ndim = property(lambda self: self._value.ndim)
    size = property(lambda self: self._value.size)

    def devices(self):
        return self._value.devices()

    def _raise(self, *args, **kwargs):
        raise self._error

    __array__ = __jax_array__ = block_until_ready = _raise
    __iter__ = __len__ = __bool__ = __float__ = __int__ = __index__ = _raise

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise self._error

    def __repr__(self):
        return f"<failed value {tuple(self.shape)}: {self._error}>"


def _register_with_jax():
    """Make jax raise the stored error when an op reads a failed value (instead of its
    own "not a valid JAX type"), as MXNet's engine passes a failed op's error on."""
    try:
        from jax._src import core
    except ImportError:  # pragma: no cover - another jax layout: jax's TypeError stays
        return
    mappings = getattr(core, "pytype_aval_mappings", None)
    if isinstance(mappings, dict):
        mappings[FailedValue] = FailedValue._raise


_register_with_jax()
