"""MXNet's deprecated Python operators (``PythonOp``, ``NumpyOp``, ``NDArrayOp``), built on
:mod:`gluonjax.operator`'s custom operators: one op path, the old interface on top.

``op.get_symbol(*inputs, name=...)`` (or ``op(*inputs)``) registers the instance as a
custom operator and returns its symbol. ``NumpyOp``'s ``forward(in_data, out_data)`` and
``backward(out_grad, in_data, out_data, in_grad)`` fill NumPy arrays in place;
``NDArrayOp``'s fill NDArrays.

Examples
--------
>>> import warnings
>>> import gluonjax as mx
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     op = mx.operator.NumpyOp()
>>> s = op.get_symbol(mx.sym.Variable("X"), name="np_op")
>>> exe = s.bind(mx.cpu(), args=[mx.nd.ones(3) * 2])
>>> exe.forward()[0].asnumpy().tolist()
[2.0, 2.0, 2.0]
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np

from . import symbol
from ._custom_op import CustomOp, CustomOpProp, register

_COUNT = itertools.count()


class PythonOp:
    """Base class of MXNet's deprecated Python operators (use ``CustomOp`` instead).

    Parameters
    ----------
    need_top_grad : bool
        Whether ``backward`` reads the output gradients (False for loss layers).
    """

    _host_arrays = False  # NumpyOp: hand NumPy arrays to forward/backward

    def __init__(self, need_top_grad=True):
        self.info_ = None
        self.need_top_grad_ = need_top_grad
        warnings.warn(
            f"{type(self).__name__} has been deprecated. Please use CustomOp", stacklevel=2
        )

    def __call__(self, *args, **kwargs):
        return self.get_symbol(*args, **kwargs)

    def get_symbol(self, *args, **kwargs):
        """The symbol of this operator applied to ``args`` (symbols)."""
        op_type = f"_legacy_python_op{next(_COUNT)}"
        register(op_type)(_prop_class(self))
        return symbol.Custom(*args, op_type=op_type, **kwargs)

    def forward(self, in_data, out_data):
        """Fill ``out_data`` from ``in_data`` (default: copy the first input)."""
        out_data[0][:] = in_data[0]

    def backward(self, out_grad, in_data, out_data, in_grad):
        """Fill ``in_grad`` (default: ones, MXNet's default)."""
        in_grad[0][:] = 1.0

    def infer_shape(self, in_shape):
        """``(arg_shapes, out_shapes)``; by default the output has the first input's shape."""
        return in_shape, [in_shape[0]]

    def list_outputs(self):
        """Output names (default ``['output']``)."""
        return ["output"]

    def list_arguments(self):
        """Input names (default ``['data']``)."""
        return ["data"]

    def need_top_grad(self):
        """Whether ``backward`` needs the output gradients."""
        return self.need_top_grad_


class NumpyOp(PythonOp):
    """A deprecated Python operator whose ``forward``/``backward`` fill NumPy arrays."""

    _host_arrays = True


class NDArrayOp(PythonOp):
    """A deprecated Python operator whose ``forward``/``backward`` fill NDArrays."""

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """The arrays ``backward`` reads (all of them by default)."""
        deps = list(out_grad) if self.need_top_grad() else []
        return deps + list(in_data) + list(out_data)


def _prop_class(op):
    """A ``CustomOpProp`` class whose operators call ``op``'s old-style methods."""

    def host(arrays):
        return [np.array(a.asnumpy()) for a in arrays] if op._host_arrays else list(arrays)

    def put(custom, req, dst, src):
        for i, (d, v) in enumerate(zip(dst, src, strict=False)):
            custom.assign(d, req[i], v)

    class _Op(CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            outs = host(out_data)
            op.forward(in_data=host(in_data), out_data=outs)
            put(self, req, out_data, outs)

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            grads = host(in_grad)
            op.backward(
                out_grad=host(out_grad),
                in_data=host(in_data),
                out_data=host(out_data),
                in_grad=grads,
            )
            put(self, req, in_grad, grads)

    class _Prop(CustomOpProp):
        def __init__(self):
            super().__init__(need_top_grad=op.need_top_grad())

        def list_arguments(self):
            return op.list_arguments()

        def list_outputs(self):
            return op.list_outputs()

        def infer_shape(self, in_shape):
            args, outs = op.infer_shape(in_shape)[:2]
            return args, outs, []

        def create_operator(self, ctx, in_shapes, in_dtypes):
            return _Op()

    return _Prop
