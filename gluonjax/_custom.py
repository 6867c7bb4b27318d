"""``autograd.Function``: user-defined forward and backward."""

from __future__ import annotations

from ._tape import Node, _raw, needs_grad

__all__ = ["Function"]


class Function:
    """Custom differentiable function: subclass and define ``forward``/``backward``.

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
    >>> y.backward(); x.grad.asscalar()
    6.0
    """

    def save_for_backward(self, *args):
        self.saved_tensors = args

    def __call__(self, *inputs):
        from . import autograd
        from .ndarray.ndarray import NDArray

        with autograd.pause(autograd.is_training()):
            outs = self.forward(*inputs)
        single = not isinstance(outs, (list, tuple))
        outs = [outs] if single else list(outs)
        if autograd.is_recording():
            parents = tuple(x for x in inputs if isinstance(x, NDArray) and needs_grad(x))

            def bwd(cts):
                with autograd.pause():
                    res = self.backward(*[NDArray(c) for c in cts])
                res = [res] if not isinstance(res, (list, tuple)) else res
                by_input = {id(x): r for x, r in zip(inputs, res)}
                return tuple(_raw(by_input[id(p)]) for p in parents)

            node = Node(bwd, parents, tuple(o._data for o in outs), type(self).__name__)
            outs = [NDArray(o._data) for o in outs]
            for i, o in enumerate(outs):
                o._node = (node, i)
        return outs[0] if single else outs
