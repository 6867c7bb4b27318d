"""``mx.operator``: operators written in Python (``CustomOp``, ``CustomOpProp``, ``register``).

As in MXNet: subclass :class:`CustomOpProp` to describe the operator (arguments,
outputs, shape and type inference) and create it, subclass :class:`CustomOp` for
``forward``/``backward`` on NDArrays, register the prop under a name, and call it
with ``mx.nd.Custom(*inputs, op_type=name, **kwargs)`` (keyword arguments reach the
prop's constructor as strings, as in MXNet). Under ``autograd.record()`` the
op's ``backward`` gives the input gradients (through ``mx.autograd.Function``).

Examples
--------
>>> import gluonjax as mx
>>> class Scale(mx.operator.CustomOp):
...     def __init__(self, k):
...         super().__init__()
...         self.k = k
...     def forward(self, is_train, req, in_data, out_data, aux):
...         self.assign(out_data[0], req[0], in_data[0] * self.k)
...     def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
...         self.assign(in_grad[0], req[0], out_grad[0] * self.k)
>>> @mx.operator.register("demo_scale")
... class ScaleProp(mx.operator.CustomOpProp):
...     def __init__(self, k="2"):
...         super().__init__(need_top_grad=True)
...         self.k = float(k)
...     def create_operator(self, ctx, shapes, dtypes):
...         return Scale(self.k)
>>> x = mx.nd.array([1.0, 2.0]); x.attach_grad()
>>> with mx.autograd.record():
...     y = mx.nd.Custom(x, op_type="demo_scale", k=3)
>>> y.backward(); (y.asnumpy().tolist(), x.grad.asnumpy().tolist())
([3.0, 6.0], [3.0, 3.0])
"""

from __future__ import annotations

import contextlib

import jax
import numpy as np

from . import autograd
from . import ndarray as _nd
from . import symbol as _sym
from ._custom_op import (
    _REGISTRY,  # noqa: F401  (mx.operator._REGISTRY, as before)
    CustomOp,
    CustomOpError,
    CustomOpProp,
    _prop,
    get_all_registered_operators,
    register,
)
from ._ops.registry import REQUIRED, Attr
from ._ops.registry import get as _get_op
from ._ops.registry import register as _register_op
from .base import MXNetError
from .context import current_context
from .ndarray import NDArray, zeros

__all__ = ["CustomOp", "CustomOpProp", "register", "get_all_registered_operators", "Custom"]


def _inference(prop, inputs, n_args):
    shapes = [x.shape for x in inputs]
    res = prop.infer_shape(shapes[:n_args])
    out_shapes = list(res[1])
    types = [x.dtype for x in inputs]
    tres = prop.infer_type(types[:n_args])
    out_types = list(tres[1])
    return out_shapes, out_types


def Custom(*args, op_type=None, name=None, out=None, **kwargs):  # noqa: N802  (MXNet's name)
    """Run the custom operator registered as ``op_type`` on NDArrays.

    Inputs are the positional NDArrays (arguments, then auxiliary states), or given
    by name; other keyword arguments go to the prop's constructor as strings.
    Returns one NDArray or a list (several outputs).
    """
    if op_type is None:
        raise CustomOpError("Custom needs op_type=<registered name>")
    named = {k: v for k, v in kwargs.items() if isinstance(v, NDArray)}
    params = {k: v for k, v in kwargs.items() if k not in named}
    prop = _prop(op_type, params)
    arg_names = prop.list_arguments()
    aux_names = prop.list_auxiliary_states()
    inputs = list(args)
    for n in (arg_names + aux_names)[len(inputs) :]:
        if n in named:
            inputs.append(named.pop(n))
    if named:
        raise CustomOpError(
            f"Custom({op_type}): unknown input(s) {sorted(named)}; inputs are "
            f"{arg_names + aux_names}"
        )
    if len(inputs) != len(arg_names) + len(aux_names):
        raise CustomOpError(
            f"Custom({op_type}): {len(inputs)} inputs given, the prop lists arguments "
            f"{arg_names} and auxiliary states {aux_names}"
        )
    n_args = len(arg_names)
    out_shapes, out_types = _inference(prop, inputs, n_args)
    op = prop.create_operator(
        current_context(), [x.shape for x in inputs[:n_args]], [x.dtype for x in inputs[:n_args]]
    )
    fn = _CustomFunction(op, n_args, out_shapes, out_types, zeros)
    fn._op_type = op_type
    res = fn(*inputs)
    outs = res if isinstance(res, list) else [res]
    if out is not None:
        targets = out if isinstance(out, (list, tuple)) else [out]
        for t, r in zip(targets, outs):
            t._data, t._node = r._data, r._node
        return out
    return outs[0] if len(outs) == 1 else outs


@contextlib.contextmanager
def _user_code(fn, stage):
    """An error in a custom operator's Python code is an MXNetError, as in MXNet (which
    reports it from the engine); MXNet's own errors pass as they are."""
    try:
        yield
    except MXNetError:
        raise
    except Exception as err:
        raise CustomOpError(
            f"Custom operator {getattr(fn, '_op_type', '?')!r}: its {stage} raised "
            f"{type(err).__name__}: {err}"
        ) from err


class _CustomFunction(autograd.Function):
    """A CustomOp seen through ``autograd.Function`` (forward, and backward when recorded)."""

    def __init__(self, op, n_args, out_shapes, out_types, zeros):
        self._op = op
        self._n_args = n_args
        self._out = list(zip(out_shapes, out_types))
        self._zeros = zeros
        self._inputs = None
        self._outputs = None

    def forward(self, *inputs):
        data, aux = list(inputs[: self._n_args]), list(inputs[self._n_args :])
        outs = [self._zeros(tuple(s), dtype=np.dtype(t)) for s, t in self._out]
        with _user_code(self, "forward"):
            self._op.forward(autograd.is_training(), ["write"] * len(outs), data, outs, aux)
        self._inputs, self._outputs = inputs, [o.copy() for o in outs]
        return outs if len(outs) > 1 else outs[0]

    def backward(self, *out_grads):
        inputs = self._inputs
        data, aux = list(inputs[: self._n_args]), list(inputs[self._n_args :])
        grads = [self._zeros(x.shape, dtype=x.dtype) for x in data]
        with _user_code(self, "backward"):
            self._op.backward(
                ["write"] * len(grads), list(out_grads), data, self._outputs, grads, aux
            )
        return grads + [self._zeros(a.shape, dtype=a.dtype) for a in aux]


# ---------------------------------------------------------------- Custom inside a graph
# Symbols, hybridized blocks and executors compile whole graphs with ``jax.jit``; a
# ``Custom`` node calls its ``CustomOp.forward`` / ``backward`` on the host through
# ``jax.pure_callback``, with NDArrays, exactly as MXNet runs them. The op is created
# once per compiled kernel (as MXNet creates it once per bound executor), so state an
# op keeps between its forward and backward survives. Eager ``nd.Custom`` calls the
# same methods directly (:func:`Custom`).


def _graph_prop(attrs):
    return _prop(attrs["op_type"], dict(attrs.get("kwargs") or ()))


def _input_names(attrs):
    if attrs.get("op_type") is None:
        return ("data",)
    prop = _graph_prop(attrs)
    return tuple(prop.list_arguments()) + tuple(prop.list_auxiliary_states())


def _aux_names(attrs):
    """The prop's auxiliary states: inputs the operator may write (MXNet's aux)."""
    if attrs.get("op_type") is None:
        return ()
    return tuple(_graph_prop(attrs).list_auxiliary_states())


def _infer_inputs(attrs, given):
    """The prop's ``infer_shape`` fills unknown arguments and auxiliary states (MXNet's
    shape inference of a Custom node: ``[]`` aux shapes leave them unknown)."""
    if attrs.get("op_type") is None:
        return {}
    prop = _graph_prop(attrs)
    names = list(prop.list_arguments())
    res = prop.infer_shape([tuple(given.get(n, ())) for n in names])
    found = dict(zip(names, res[0], strict=False))
    if len(res) > 2:
        found.update(zip(prop.list_auxiliary_states(), res[2], strict=False))
    return {n: tuple(int(d) for d in s) for n, s in found.items() if s is not None and len(s)}


def _n_outputs(attrs):
    return len(_graph_prop(attrs).list_outputs()) if attrs.get("op_type") else 1


def _host(fn):
    """A host function on NumPy arrays running ``fn`` on NDArrays, outside any trace."""

    def call(*arrays):
        with autograd.pause():
            outs = fn([NDArray(jax.numpy.asarray(a)) for a in arrays])
        return tuple(np.asarray(o.asnumpy()) for o in outs)

    return call


@_register_op(
    "Custom",
    inputs=_input_names,
    attrs={"op_type": Attr("str", REQUIRED), "kwargs": Attr("pairs", ())},
    num_outputs=_n_outputs,
    aux=_aux_names,
    infer_args=_infer_inputs,
    mode=True,
)
def _graph_custom(*arrays, op_type, kwargs, _train):
    """Run the Python operator registered as ``op_type`` (see ``mx.operator``).

    Inputs: the prop's arguments, then its auxiliary states, which the operator may write
    (their new values are returned, as BatchNorm's statistics are, and ``backward`` sees
    them). ``kwargs`` holds the prop's constructor arguments as ``((name, string), ...)``.
    """
    prop = _graph_prop({"op_type": op_type, "kwargs": kwargs})
    n_args = len(prop.list_arguments())
    in_shapes = [tuple(a.shape) for a in arrays]
    in_types = [np.dtype(a.dtype) for a in arrays]
    out_shapes = [tuple(s) for s in prop.infer_shape(in_shapes[:n_args])[1]]
    out_types = [np.dtype(t) for t in prop.infer_type(in_types[:n_args])[1]]
    op = prop.create_operator(current_context(), in_shapes[:n_args], in_types[:n_args])
    n_out, has_aux = len(out_shapes), len(arrays) > n_args
    out_spec = tuple(jax.ShapeDtypeStruct(s, t) for s, t in zip(out_shapes, out_types))
    in_spec = tuple(jax.ShapeDtypeStruct(s, t) for s, t in zip(in_shapes, in_types))
    aux_spec = in_spec[n_args:]

    def forward(inputs):
        outs = [zeros(s, dtype=t) for s, t in zip(out_shapes, out_types)]
        aux = inputs[n_args:]
        op.forward(_train, ["write"] * len(outs), inputs[:n_args], outs, aux)
        return outs + aux

    def backward(values):
        k = len(arrays)
        inputs, outs, cts = values[:k], values[k : k + n_out], values[k + n_out :]
        grads = [zeros(s, dtype=t) for s, t in zip(in_shapes, in_types)]
        op.backward(["write"] * n_args, cts, inputs[:n_args], outs, grads[:n_args], inputs[n_args:])
        return grads

    fwd_host, bwd_host = _host(forward), _host(backward)

    @jax.custom_vjp
    def run(*xs):
        return tuple(jax.pure_callback(fwd_host, out_spec + aux_spec, *xs))

    def run_fwd(*xs):
        res = run(*xs)
        # backward sees the auxiliary states as the forward left them
        return res, (xs[:n_args] + res[n_out:], res[:n_out])

    need_top = prop.need_top_grad_

    def run_bwd(res, cts):
        xs, outs = res
        heads = cts[:n_out]
        if not need_top:  # a loss: its backward never reads the head gradient (as MXNet)
            heads = [jax.numpy.zeros_like(c) for c in heads]
        return tuple(jax.pure_callback(bwd_host, in_spec, *xs, *outs, *heads))

    run.defvjp(run_fwd, run_bwd)
    res = run(*arrays)
    outs, new_aux = list(res[:n_out]), list(res[n_out:])
    if has_aux:
        return (outs[0] if n_out == 1 else tuple(outs)), new_aux
    return outs[0] if n_out == 1 else tuple(outs)


_GRAPH_OP = _get_op("Custom")


def _symbol_custom(*args, op_type=None, name=None, attr=None, **kwargs):
    """A node running the Python operator registered as ``op_type`` (``mx.operator``).

    Symbol keyword arguments are inputs by name; the others go to the prop's constructor
    as strings, as in MXNet.
    """
    inputs = {k: v for k, v in kwargs.items() if isinstance(v, _sym.Symbol)}
    params = tuple(sorted((k, str(v)) for k, v in kwargs.items() if k not in inputs))
    attrs = dict(inputs, op_type=op_type, kwargs=params)
    return _sym.create(_GRAPH_OP, args, attrs, name=name, attr=attr, hint="custom")


_symbol_custom.__name__ = _symbol_custom.__qualname__ = "Custom"
# mx.operator installs Custom into nd and sym (they sit below it and never import it)
_nd.Custom, _sym.Custom = Custom, _symbol_custom


from ._legacy_op import NDArrayOp, NumpyOp, PythonOp  # noqa: E402  (they build on CustomOp)

__all__ += ["NDArrayOp", "NumpyOp", "PythonOp"]
