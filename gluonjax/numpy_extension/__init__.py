"""``mx.npx``: MXNet's NumPy extensions: the NumPy-mode switches and the neural-network
operators (``npx.relu``, ``npx.convolution``, ...) returning ``mx.np.ndarray``.

Each operator here is the registry op ``nd`` uses (``relu`` is ``Activation``'s family,
``convolution`` is ``Convolution``), called through the same eager path; only the result
class differs. See docs/numpy.md.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as _onp

from .. import _rng
from .._ops import registry as _reg
from ..base import MXNetError
from ..context import Context, cpu, current_context, gpu, num_gpus  # noqa: F401
from ..ndarray import _io as _ndio
from ..ndarray import waitall  # noqa: F401
from ..ndarray.ndarray import NDArray
from ..numpy._array import as_np, call, host_value, ndarray, to_array
from ..util import (  # noqa: F401
    is_np_array,
    is_np_shape,
    np_array,
    np_shape,
    reset_np,
    set_np_shape,
    use_np,
    use_np_array,
    use_np_shape,
)
from ..util import set_np as _set_np
from . import image, random  # noqa: F401


def set_np(shape=True, array=True, dtype=False):
    """Turn on NumPy shape and array semantics (``dtype=True``, MXNet's float64 default,
    is refused: see docs/numpy.md)."""
    if dtype:
        raise MXNetError(
            "npx.set_np(dtype=True): gluonjax keeps MXNet's float32 default for creation "
            "functions; pass dtype='float64' where float64 is wanted (see docs/numpy.md)"
        )
    _set_np(shape=shape, array=array)


def seed(seed_state, ctx="all"):
    """Seed gluonjax's random stream (``mx.random.seed``)."""
    _rng.seed(seed_state, ctx)


def _op_fn(public, op_name, fixed=None, rename=None):
    op = _reg.get(op_name)
    fixed = dict(fixed or {})
    rename = dict(rename or {})

    def f(*args, out=None, name=None, **kwargs):
        for k, v in rename.items():
            if k in kwargs:
                kwargs[v] = kwargs.pop(k)
        kwargs.update(fixed)
        args = [a if isinstance(a, NDArray) or a is None else to_array(a) for a in args]
        while args and args[-1] is None:
            args.pop()
        full = {k: kwargs.get(k, a.default) for k, a in op.attrs.items()}
        for n in op.input_names(full) if not op.variadic else ():
            if n in kwargs and (isinstance(kwargs[n], NDArray) or kwargs[n] is None):
                v = kwargs.pop(n)
                if v is not None:
                    args.append(v)
        return call(op, tuple(args), kwargs, out)

    f.__name__ = f.__qualname__ = public
    f.__doc__ = f"``npx.{public}``: MXNet op ``{op_name}``, returning ``mx.np.ndarray``."
    return f


_TABLE = {
    "activation": ("Activation", None),
    "relu": ("Activation", {"act_type": "relu"}),
    "sigmoid": ("Activation", {"act_type": "sigmoid"}),
    "leaky_relu": ("LeakyReLU", None),
    "softmax": ("softmax", None),
    "log_softmax": ("log_softmax", None),
    "batch_norm": ("BatchNorm", None),
    "layer_norm": ("LayerNorm", None),
    "group_norm": ("GroupNorm", None),
    "instance_norm": ("InstanceNorm", None),
    "convolution": ("Convolution", None),
    "deconvolution": ("Deconvolution", None),
    "pooling": ("Pooling", None),
    "fully_connected": ("FullyConnected", None),
    "embedding": ("Embedding", None),
    "dropout": ("Dropout", None),
    "one_hot": ("one_hot", None),
    "pick": ("pick", None),
    "topk": ("topk", None),
    "batch_dot": ("batch_dot", None),
    "batch_flatten": ("Flatten", None),
    "sequence_mask": ("SequenceMask", None),
    "sequence_last": ("SequenceLast", None),
    "sequence_reverse": ("SequenceReverse", None),
    "gamma": ("gamma", None),
    "gammaln": ("gammaln", None),
    "erf": ("erf", None),
    "erfinv": ("erfinv", None),
    "smooth_l1": ("smooth_l1", None),
    "arange_like": ("_contrib_arange_like", None),
    "shape_array": ("shape_array", None),
    "slice": ("slice", None),
    "rnn": ("RNN", None),
    "roi_pooling": ("ROIPooling", None),
    "reshape_like": ("reshape_like", None),
    "broadcast_like": ("broadcast_like", None),
    "stop_gradient": ("BlockGrad", None),
    "softmin": ("softmin", None),
}
for _name, (_opname, _fixed) in _TABLE.items():
    globals()[_name] = _op_fn(_name, _opname, _fixed)


def masked_softmax(data, mask, axis=-1, temperature=1.0, normalize=True):
    """Softmax over ``axis`` where ``mask`` is true; masked positions give 0."""
    return _masked(data, mask, axis, temperature, log=False)


def masked_log_softmax(data, mask, axis=-1, temperature=1.0, normalize=True):
    """Log-softmax over ``axis`` where ``mask`` is true; masked positions give -inf."""
    return _masked(data, mask, axis, temperature, log=True)


def _masked(data, mask, axis, temperature, log):
    from ..numpy import _FUNCS as F

    data, mask = to_array(data), to_array(mask)
    m = mask.astype("bool")
    x = F["where"](m, data / temperature, -_onp.inf)
    x = x - F["max"](F["where"](m, x, -_onp.inf), axis=axis, keepdims=True)
    e = F["where"](m, F["exp"](x), 0.0)
    s = F["sum"](e, axis=axis, keepdims=True)
    if log:
        return F["where"](m, x - F["log"](s), -_onp.inf)
    return e / s


def reshape(a, newshape, reverse=False, order="C"):
    """MXNet's ``npx.reshape``: NumPy's reshape plus the codes -2 (copy this axis), -3 (drop
    an axis of size 1), -4 (copy all remaining axes), -5 (merge two axes), -6 (split an
    axis in two: the next two values, one may be -1)."""
    a = to_array(a)
    src = list(a.shape)
    spec = list(newshape) if isinstance(newshape, (tuple, list)) else [newshape]
    if reverse:
        src, spec = src[::-1], spec[::-1]
    out, i, j = [], 0, 0
    while j < len(spec):
        c = spec[j]
        if c == -2:
            out.append(src[i])
            i += 1  # noqa: E702
        elif c == -3:
            if src[i] != 1:
                raise MXNetError(f"npx.reshape: -3 drops an axis of size 1, axis {i} is {src[i]}")
            i += 1
        elif c == -4:
            out.extend(src[i:])
            i = len(src)  # noqa: E702
        elif c == -5:
            out.append(src[i] * src[i + 1])
            i += 2  # noqa: E702
        elif c == -6:
            d1, d2 = spec[j + 1], spec[j + 2]
            d1 = src[i] // d2 if d1 == -1 else d1
            d2 = src[i] // d1 if d2 == -1 else d2
            out.extend([d1, d2])
            i += 1
            j += 2  # noqa: E702
        else:
            out.append(c)
            i += 1
        j += 1
    if reverse:
        out = out[::-1]
    return a.reshape(tuple(out))


def nonzero(a):
    """Indices of the non-zero elements as an ``(N, ndim)`` int array (MXNet's layout)."""
    idx = _onp.argwhere(host_value(to_array(a), "npx.nonzero")).astype(_onp.int32)
    return ndarray(jnp.asarray(idx))


def constraint_check(input, msg="Constraint violated!"):  # noqa: A002
    """Raise ``ValueError`` (an ``MXNetError``) with ``msg`` unless every element holds."""
    x = to_array(input)
    if not bool(host_value(x, "npx.constraint_check").all()):
        raise ConstraintError(msg)
    return ndarray(jnp.asarray(True))


class ConstraintError(MXNetError, ValueError):
    """``npx.constraint_check`` found an element that does not hold."""


def save(file, arr):
    """Save an array, a list or a dict of arrays in MXNet's format (``npx.load`` reads it)."""
    _ndio.save(file, arr)


def load(file):
    """Arrays saved by ``npx.save`` (or ``nd.save``), as ``mx.np.ndarray``."""
    res = _ndio.load(file)
    if isinstance(res, dict):
        return {k: as_np(v) for k, v in res.items()}
    return [as_np(v) for v in res]


def from_numpy(ndarray_, zero_copy=True):
    return to_array(ndarray_)


def current_device():
    return current_context()


__all__ = [n for n in globals() if not n.startswith("_") and n not in ("annotations",)]
_ = Context
