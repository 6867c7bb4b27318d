"""``Custom``: a Python operator (``mx.operator``) inside a graph.

Symbols, hybridized blocks and executors compile whole graphs with ``jax.jit``; a
``Custom`` node calls its ``CustomOp.forward`` / ``backward`` on the host through
``jax.pure_callback``, with NDArrays, exactly as MXNet runs them. The op is created
once per compiled kernel (as MXNet creates it once per bound executor), so state an
op keeps between its forward and backward survives. Eager ``nd.Custom`` calls the
same methods directly (see :mod:`gluonjax.operator`).

Examples
--------
>>> import numpy as np
>>> import gluonjax as mx
>>> class Double(mx.operator.CustomOp):
...     def forward(self, is_train, req, in_data, out_data, aux):
...         self.assign(out_data[0], req[0], in_data[0] * 2)
...     def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
...         self.assign(in_grad[0], req[0], out_grad[0] * 2)
>>> @mx.operator.register("doc_double")
... class DoubleProp(mx.operator.CustomOpProp):
...     def create_operator(self, ctx, shapes, dtypes):
...         return Double()
>>> y = mx.sym.Custom(mx.sym.var("data"), op_type="doc_double", name="dbl")
>>> y.list_arguments()
['data']
>>> y.eval(data=mx.nd.array([1.0, 2.0]))[0].asnumpy().tolist()
[2.0, 4.0]
"""

from __future__ import annotations

import jax
import numpy as np

from ..registry import REQUIRED, Attr, register


def _prop(attrs):
    from ...operator import _prop as make

    return make(attrs["op_type"], dict(attrs.get("kwargs") or ()))


def _input_names(attrs):
    if attrs.get("op_type") is None:
        return ("data",)
    prop = _prop(attrs)
    return tuple(prop.list_arguments()) + tuple(prop.list_auxiliary_states())


def _n_outputs(attrs):
    return len(_prop(attrs).list_outputs()) if attrs.get("op_type") else 1


def _host(fn):
    """A host function on NumPy arrays running ``fn`` on NDArrays, outside any trace."""

    def call(*arrays):
        from ... import autograd
        from ...ndarray import NDArray

        with autograd.pause():
            outs = fn([NDArray(jax.numpy.asarray(a)) for a in arrays])
        return tuple(np.asarray(o.asnumpy()) for o in outs)

    return call


@register(
    "Custom",
    inputs=_input_names,
    attrs={"op_type": Attr("str", REQUIRED), "kwargs": Attr("pairs", ())},
    num_outputs=_n_outputs,
    mode=True,
)
def custom(*arrays, op_type, kwargs, _train):
    """Run the Python operator registered as ``op_type`` (see ``mx.operator``).

    Inputs: the prop's arguments, then its auxiliary states. ``kwargs`` holds the prop's
    constructor arguments as ``((name, string), ...)``.
    """
    from ...context import current_context
    from ...ndarray import zeros

    prop = _prop({"op_type": op_type, "kwargs": kwargs})
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
