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

import jax
import numpy as np

from . import autograd
from . import ndarray as _nd
from . import symbol as _sym
from ._ops.registry import REQUIRED, Attr
from ._ops.registry import get as _get_op
from ._ops.registry import register as _register_op
from .base import MXNetError
from .context import current_context
from .ndarray import NDArray, zeros

__all__ = ["CustomOp", "CustomOpProp", "register", "get_all_registered_operators", "Custom"]

_REGISTRY: dict = {}


class CustomOpError(MXNetError, ValueError):
    """A custom operator that is unknown, or whose prop or op misbehaves."""


class CustomOp:
    """Base class of Python operators: define ``forward`` and ``backward``."""

    def __init__(self):
        pass

    def forward(self, is_train, req, in_data, out_data, aux):
        """Compute ``out_data`` from ``in_data`` (write with :meth:`assign`).

        Parameters
        ----------
        is_train : bool
        req : list of {'null', 'write', 'inplace', 'add'}
            How each output is to be written.
        in_data, out_data, aux : list of NDArray
        """
        raise NotImplementedError(f"{type(self).__name__}.forward")

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Compute ``in_grad`` from ``out_grad`` (write with :meth:`assign`)."""
        raise NotImplementedError(f"{type(self).__name__}.backward")

    def assign(self, dst, req, src):
        """Write ``src`` into NDArray ``dst`` as ``req`` says ('null': nothing, 'write' or
        'inplace': overwrite, 'add': accumulate)."""
        if req == "null":
            return
        if req in ("write", "inplace"):
            dst[:] = src
        elif req == "add":
            dst[:] = dst + src
        else:
            raise CustomOpError(f"assign: unknown req {req!r} (null, write, inplace or add)")


class CustomOpProp:
    """Base class of operator descriptions: arguments, outputs, inference, creation.

    Parameters
    ----------
    need_top_grad : bool
        Whether ``backward`` needs the output gradients (False for losses).
    """

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape):
        """``(arg_shapes, out_shapes, aux_shapes)``; by default every output and auxiliary
        state has the first input's shape."""
        first = in_shape[0]
        return (
            in_shape,
            [first] * len(self.list_outputs()),
            [first] * len(self.list_auxiliary_states()),
        )

    def infer_type(self, in_type):
        """``(arg_types, out_types, aux_types)``; by default the first input's type."""
        t = in_type[0]
        return (
            [t] * len(in_type),
            [t] * len(self.list_outputs()),
            [t] * len(self.list_auxiliary_states()),
        )

    def infer_storage_type(self, in_stype):
        """Dense storage for every array (gluonjax arrays are dense)."""
        return (
            ["default"] * len(in_stype),
            ["default"] * len(self.list_outputs()),
            ["default"] * len(self.list_auxiliary_states()),
        )

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype, aux_stype):
        """Dense storage for every gradient."""
        return (
            ["default"] * len(ograd_stype),
            ["default"] * len(in_stype),
            ["default"] * len(out_stype),
            ["default"] * len(igrad_stype),
            ["default"] * len(aux_stype),
        )

    def list_outputs(self):
        """Output names (default ``['output']``)."""
        return ["output"]

    def list_arguments(self):
        """Input names (default ``['data']``)."""
        return ["data"]

    def list_auxiliary_states(self):
        """Auxiliary state names (default none)."""
        return []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """The arrays ``backward`` reads (all of them by default)."""
        deps = list(out_grad) if self.need_top_grad_ else []
        return deps + list(in_data) + list(out_data)

    def create_operator(self, ctx, in_shapes, in_dtypes):
        """The :class:`CustomOp` for these input shapes and dtypes."""
        return CustomOp()


def register(reg_name):
    """Class decorator: register a :class:`CustomOpProp` subclass as ``op_type=reg_name``."""

    def deco(prop_cls):
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise CustomOpError(f"register({reg_name!r}) decorates CustomOpProp subclasses")
        _REGISTRY[reg_name] = prop_cls
        return prop_cls

    return deco


def get_all_registered_operators():
    """The names of the registered custom operators."""
    return sorted(_REGISTRY)


def _prop(op_type, kwargs):
    cls = _REGISTRY.get(op_type)
    if cls is None:
        raise CustomOpError(
            f"Custom: no operator registered as op_type={op_type!r}; registered: "
            f"{get_all_registered_operators()} (use @mx.operator.register(name))"
        )
    return cls(**{k: str(v) for k, v in kwargs.items()})


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
    res = fn(*inputs)
    outs = res if isinstance(res, list) else [res]
    if out is not None:
        targets = out if isinstance(out, (list, tuple)) else [out]
        for t, r in zip(targets, outs):
            t._data, t._node = r._data, r._node
        return out
    return outs[0] if len(outs) == 1 else outs


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
        self._op.forward(autograd.is_training(), ["write"] * len(outs), data, outs, aux)
        self._inputs, self._outputs = inputs, [o.copy() for o in outs]
        return outs if len(outs) > 1 else outs[0]

    def backward(self, *out_grads):
        inputs = self._inputs
        data, aux = list(inputs[: self._n_args]), list(inputs[self._n_args :])
        grads = [self._zeros(x.shape, dtype=x.dtype) for x in data]
        self._op.backward(["write"] * len(grads), list(out_grads), data, self._outputs, grads, aux)
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
    mode=True,
)
def _graph_custom(*arrays, op_type, kwargs, _train):
    """Run the Python operator registered as ``op_type`` (see ``mx.operator``).

    Inputs: the prop's arguments, then its auxiliary states. ``kwargs`` holds the prop's
    constructor arguments as ``((name, string), ...)``.
    """
    prop = _graph_prop({"op_type": op_type, "kwargs": kwargs})
    n_args = len(prop.list_arguments())
    in_shapes = [tuple(a.shape) for a in arrays]
    in_types = [np.dtype(a.dtype) for a in arrays]
    out_shapes = [tuple(s) for s in prop.infer_shape(in_shapes[:n_args])[1]]
    out_types = [np.dtype(t) for t in prop.infer_type(in_types[:n_args])[1]]
    op = prop.create_operator(current_context(), in_shapes[:n_args], in_types[:n_args])
    out_spec = tuple(jax.ShapeDtypeStruct(s, t) for s, t in zip(out_shapes, out_types))
    in_spec = tuple(jax.ShapeDtypeStruct(s, t) for s, t in zip(in_shapes, in_types))

    def forward(inputs):
        outs = [zeros(s, dtype=t) for s, t in zip(out_shapes, out_types)]
        op.forward(_train, ["write"] * len(outs), inputs[:n_args], outs, inputs[n_args:])
        return outs

    def backward(values):
        k = len(arrays)
        n_out = len(out_shapes)
        inputs, outs, cts = values[:k], values[k : k + n_out], values[k + n_out :]
        grads = [zeros(s, dtype=t) for s, t in zip(in_shapes, in_types)]
        op.backward(["write"] * n_args, cts, inputs[:n_args], outs, grads[:n_args], inputs[n_args:])
        return grads

    fwd_host, bwd_host = _host(forward), _host(backward)

    @jax.custom_vjp
    def run(*xs):
        return jax.pure_callback(fwd_host, out_spec, *xs)

    def run_fwd(*xs):
        outs = run(*xs)
        return outs, (xs, outs)

    def run_bwd(res, cts):
        xs, outs = res
        return tuple(jax.pure_callback(bwd_host, in_spec, *xs, *outs, *cts))

    run.defvjp(run_fwd, run_bwd)
    outs = run(*arrays)
    return outs[0] if len(outs) == 1 else tuple(outs)


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
