"""NumPy's dispatch protocols for ``mx.np.ndarray`` (MXNet's ``mxnet.numpy_dispatch_protocol``).

``numpy.f(mx_array)`` runs ``mx.np.f`` through ``__array_function__`` (NEP 18) and
``numpy.ufunc(mx_array)`` through ``__array_ufunc__`` (NEP 13); both are always on here (NumPy
2 has them built in; see ``gluonjax.numpy._array.PROTOCOL``). The two decorators are
MXNet's test helpers: they run the function as it is.
"""

from __future__ import annotations

import functools

__all__ = [
    "with_array_function_protocol",
    "with_array_ufunc_protocol",
    "_NUMPY_ARRAY_FUNCTION_LIST",
    "_NUMPY_ARRAY_UFUNC_LIST",
]


def _passthrough(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper


with_array_function_protocol = _passthrough
with_array_ufunc_protocol = _passthrough


# the NumPy functions and ufuncs whose dispatch MXNet 1.9.1 documents (all reach mx.np here)
_NUMPY_ARRAY_FUNCTION_LIST = (
    "all any sometrue argmin argmax around round round_ argsort sort append broadcast_arrays "
    "broadcast_to clip concatenate copy cumsum diag diagonal diagflat dot expand_dims fix flip "
    "flipud fliplr inner insert max amax mean min amin nonzero ones_like atleast_1d atleast_2d "
    "atleast_3d prod product ravel repeat reshape roll split array_split hsplit vsplit dsplit "
    "squeeze stack std sum swapaxes take tensordot tile transpose unique unravel_index "
    "diag_indices_from delete var vdot vstack column_stack hstack dstack zeros_like "
    "linalg.norm linalg.cholesky linalg.inv linalg.solve linalg.tensorinv linalg.tensorsolve "
    "linalg.pinv linalg.eigvals linalg.eig linalg.eigvalsh linalg.eigh shape trace tril meshgrid "
    "outer einsum polyval shares_memory may_share_memory quantile percentile diff ediff1d resize "
    "where full_like bincount empty_like nan_to_num isnan isfinite isposinf isneginf isinf pad"
).split()
_NUMPY_ARRAY_UFUNC_LIST = (
    "abs fabs add arctan2 copysign degrees hypot lcm subtract multiply true_divide negative "
    "power mod matmul absolute rint sign exp log log2 log10 expm1 sqrt square cbrt reciprocal "
    "invert bitwise_not remainder sin cos tan sinh cosh tanh arcsin arccos arctan arcsinh "
    "arccosh arctanh maximum minimum ceil trunc floor bitwise_and bitwise_xor bitwise_or "
    "logical_not equal not_equal less less_equal greater greater_equal"
).split()
