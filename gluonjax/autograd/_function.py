"""``autograd.Function``: user-defined forward and backward."""

from __future__ import annotations

import jax

from .._tape.node import Kind, Node, entry, needs_grad
from .._tape.state import _local, pause
from ..base import MXNetError
from ..ndarray.ndarray import NDArray

__all__ = ["Function"]


class Function:
    """Custom differentiable function: subclass and define ``forward``/``backward``.

    ``backward`` gets one gradient per output and returns one per input (NDArrays).

    Examples
    --------
    >>> import gluonjax as mx
    >>> class Square(mx.autograd.Function):
    ...     def forward(self, x):
    ...         self.save_for_backward(x)
    ...         return x * x
    ...     def backward(self, dy):
    ...         (x,) = self.saved_tensors
    ...         return 2 * x * dy
    >>> x = mx.nd.array([3.0]); x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = Square()(x)
    >>> y.backward(); float(x.grad.asscalar())
    6.0
    """

    def save_for_backward(self, *args):
        self.saved_tensors = args

    def __call__(self, *inputs):
        with pause(_local.training):
            outs = self.forward(*inputs)
        single = not isinstance(outs, (list, tuple))
        outs = [outs] if single else list(outs)
        for o in outs:
            if not isinstance(o, NDArray):
                raise MXNetError(
                    f"{type(self).__name__}.forward must return NDArrays, got {type(o).__name__}"
                )
        if _local.recording:
            diff = [k for k, x in enumerate(inputs) if isinstance(x, NDArray) and needs_grad(x)]
            if diff:
                outs = [NDArray(o._data) for o in outs]
                node = Node(
                    Kind.FUNCTION,
                    type(self).__name__,
                    tuple(entry(inputs[k]) for k in diff),
                    tuple(jax.ShapeDtypeStruct(o.shape, o.dtype) for o in outs),
                )
                node.bwd = self._bwd(inputs, diff)
                for i, o in enumerate(outs):
                    o._node = (node, i)
        return outs[0] if single else outs

    def _bwd(self, inputs, diff):
        name, n_in = type(self).__name__, len(inputs)

        def bwd(cts):
            with pause():
                res = self.backward(*[NDArray(c) for c in cts])
            res = list(res) if isinstance(res, (list, tuple)) else [res]
            if len(res) != n_in:
                raise MXNetError(
                    f"{name}.backward returned {len(res)} gradient(s) for {n_in} input(s); "
                    f"return one per input of forward"
                )
            out = []
            for k in diff:
                g, x = res[k], inputs[k]
                raw = g._data if isinstance(g, NDArray) else g
                if tuple(raw.shape) != tuple(x.shape):
                    raise MXNetError(
                        f"{name}.backward: the gradient of input {k} has shape "
                        f"{tuple(raw.shape)}, its input has shape {tuple(x.shape)}"
                    )
                out.append(raw)
            return tuple(out)

        return bwd
