"""``Symbol.bind``, ``Symbol.simple_bind`` and ``Symbol.eval`` (see gluonjax.executor)."""

from __future__ import annotations

import warnings

import jax
import numpy as np

from .._ops.registry import dtype_of
from ..base import MXNetError
from ..ndarray import NDArray
from ..ndarray.sparse import _infer as _sparse_infer

__all__ = ["install", "infer_all"]

_REQS = ("write", "add", "null", "inplace")


def _err(msg):
    from .executor import BindError

    return BindError(msg)


def infer_all(sym, shapes):
    """``(arg_shapes, out_shapes, aux_shapes)`` from ``{input name: shape}``; names the
    graph does not have are ignored (as MXNet does); unknown shapes raise."""
    from ._infer import infer_shape

    inputs = set(sym.list_inputs())
    given = {k: tuple(int(d) for d in v) for k, v in shapes.items() if k in inputs}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        arg, out, aux = infer_shape(sym, (), given, partial=False)
    if arg is None:
        part, _, aux_part = infer_shape(sym, (), given, partial=True)
        unknown = [
            n
            for n, s in zip(sym.list_arguments(), part, strict=False)
            if s == () and n not in given
        ]
        raise _err(
            f"cannot infer the shapes of {unknown} from the given shapes {given}; "
            f"pass their shapes as keyword arguments"
        )
    return [tuple(s) for s in arg], [tuple(s) for s in out], [tuple(s) for s in aux]


def _grad_reqs(sym, grad_req):
    names = sym.list_arguments()
    if isinstance(grad_req, str):
        reqs = dict.fromkeys(names, grad_req)
    elif isinstance(grad_req, (list, tuple)):
        if len(grad_req) != len(names):
            raise _err(f"grad_req has {len(grad_req)} entries for {len(names)} arguments")
        reqs = dict(zip(names, grad_req, strict=False))
    elif isinstance(grad_req, dict):
        unknown = [k for k in grad_req if k not in names]
        if unknown:
            raise _err(f"grad_req names {unknown} are not arguments of the symbol")
        reqs = {n: grad_req.get(n, "null") for n in names}
    else:
        raise _err(f"grad_req must be a str, list or dict, got {type(grad_req).__name__}")
    for n, r in reqs.items():
        if r not in _REQS:
            raise _err(f"grad_req of '{n}' is {r!r}; use 'write', 'add' or 'null'")
    return {n: "write" if r == "inplace" else r for n, r in reqs.items()}


# ops MXNet 1.9.1 registers without a gradient: binding for a gradient through them fails
_NON_DIFFERENTIABLE = frozenset({"batch_take", "argmax_channel", "_shuffle"})
_STOPS = frozenset({"BlockGrad"})


def check_differentiable(sym, reqs):
    """Raise BindError if a gradient must flow through an op MXNet cannot differentiate.

    That is an op without a gradient whose output reaches an output of ``sym`` (not
    through ``stop_gradient``) and whose inputs depend on an argument with a gradient.
    """
    from .._ops.graph import topo

    nodes = topo(sym._outputs)
    wanted = {n for n, r in reqs.items() if r != "null"}
    if not wanted:
        return
    carries = set()
    for node in nodes:
        if node.op is None:
            if node.name in wanted:
                carries.add(id(node))
        elif node.op.name not in _STOPS and any(id(s) in carries for s, _ in node.inputs):
            carries.add(id(node))
    live = {id(n) for n, _ in sym._outputs}
    for node in reversed(nodes):
        if id(node) not in live or node.op is None or node.op.name in _STOPS:
            continue
        live.update(id(s) for s, _ in node.inputs)
        if node.op.name in _NON_DIFFERENTIABLE and id(node) in carries:
            raise _err(
                f"Operator {node.op.name} (node '{node.name}') is non-differentiable: MXNet "
                f"registers no gradient for it. Bind with grad_req='null' for the arguments "
                f"before it, or cut the gradient with mx.sym.stop_gradient"
            )


def _arrays(names, given, what, required):
    """A list of NDArrays (or None) in ``names`` order from a list or a dict."""
    if given is None:
        if required and names:
            raise _err(f"{what} must be given for {names}")
        return [None] * len(names)
    if isinstance(given, (list, tuple)):
        if len(given) != len(names):
            raise _err(
                f"Length of {what} does not match the number of arguments: got "
                f"{len(given)}, the symbol has {len(names)} ({names})"
            )
        out = list(given)
        first = {}
        for n, a in zip(names, out, strict=False):
            if n in first and None not in (a, first[n]) and a is not first[n]:
                raise _err(
                    f"the graph has two different variables named '{n}', and {what} gives "
                    f"them two different arrays; gluonjax keys a graph's arguments by name, "
                    f"so it cannot keep them apart: give the variables distinct names "
                    f"(mx.sym.var('{n}_1')), or pass {what} as a dict (one array per name)"
                )
            first.setdefault(n, a)
    elif isinstance(given, dict):
        out = []
        for n in names:
            if n not in given and required:
                raise _err(f"key `{n}` is missing in `{what}`")
            out.append(given.get(n))
    else:
        raise _err(f"{what} must be a list or a dict of NDArrays, got {type(given).__name__}")
    for n, a in zip(names, out, strict=False):
        if a is not None and not isinstance(a, NDArray):
            raise _err(f"{what}['{n}'] must be an NDArray, got {type(a).__name__}")
    return out


def _check_dtypes(sym, arg_names, arg_arrays, aux_names, aux_arrays):
    """Refuse arrays whose dtypes MXNet's type inference refuses (a float64 weight for
    float32 data): jax would promote them silently."""
    from ..base import DTypeError
    from ._infer_graph import infer_dtypes

    given = {n: a.dtype for n, a in zip(arg_names, arg_arrays, strict=False) if a is not None}
    given.update((n, a.dtype) for n, a in zip(aux_names, aux_arrays, strict=False) if a is not None)
    try:
        infer_dtypes(sym, given)
    except DTypeError:
        raise
    except Exception:  # noqa: BLE001 - inference gaps are the executor's to report
        return


def bind(
    self,
    ctx,
    args,
    args_grad=None,
    grad_req="write",
    aux_states=None,
    group2ctx=None,
    shared_exec=None,
):
    """Bind the graph to arrays and return an :class:`~gluonjax.executor.Executor`.

    Parameters
    ----------
    ctx : Context
    args : list or dict of NDArray
        Argument values (list in ``list_arguments()`` order). The executor keeps
        these very NDArrays and writes new values into them.
    args_grad : list or dict of NDArray, optional
        Arrays that receive gradients; arguments without one get none.
    grad_req : str, list or dict
        'write', 'add' or 'null', for all or per argument (dict: missing -> 'null').
    aux_states : list or dict of NDArray, optional
        Auxiliary states (required if the graph has any).
    group2ctx, shared_exec : optional
        ``shared_exec``'s compiled program is reused.
    """
    from .executor import Executor

    arg_names = self.list_arguments()
    aux_names = self.list_auxiliary_states()
    arg_arrays = _arrays(arg_names, args, "args", True)
    grad_arrays = _arrays(arg_names, args_grad, "args_grad", False)
    aux_arrays = _arrays(aux_names, aux_states, "aux_states", True)
    _check_dtypes(self, arg_names, arg_arrays, aux_names, aux_arrays)
    reqs = _grad_reqs(self, grad_req)
    check_differentiable(
        self, {n: r for (n, r), g in zip(reqs.items(), grad_arrays, strict=False) if g is not None}
    )
    for n, a, g in zip(arg_names, arg_arrays, grad_arrays, strict=False):
        if g is not None and g.shape != a.shape:
            raise _err(f"args_grad['{n}'] has shape {g.shape}, the argument has {a.shape}")
    program = None
    if shared_exec is not None and shared_exec._symbol is self:
        program = shared_exec._program
    return Executor(self, ctx, arg_arrays, grad_arrays, reqs, aux_arrays, group2ctx, program)


def _zeros(shape, dtype, ctx=None, stype=None):
    """A zero NDArray on ``ctx`` (made on the host: no compilation per shape)."""
    if stype not in (None, "default"):
        from ..ndarray import sparse

        return sparse.zeros(stype, shape, ctx=ctx, dtype=dtype)
    host = np.zeros(shape, dtype)
    if ctx is None:
        return NDArray(jax.device_put(host))
    out = NDArray(jax.device_put(host, ctx.jax_device))
    if ctx.device_id and ctx.is_logical:  # cpu(1) without a second device: keep its name
        out._ctx = ctx
    return out


def _arg_contexts(sym, ctx, group2ctx):
    """{input name: Context}: ``group2ctx[ctx_group]`` for inputs with a ``ctx_group``."""
    if not group2ctx:
        return {}
    attrs = sym.attr_dict()
    out = {}
    for name in sym.list_inputs():
        group = attrs.get(name, {}).get("__ctx_group__")
        if group is not None and group in group2ctx:
            out[name] = group2ctx[group]
    return out


def simple_bind(
    self,
    ctx,
    grad_req="write",
    type_dict=None,
    stype_dict=None,
    group2ctx=None,
    shared_arg_names=None,
    shared_exec=None,
    shared_buffer=None,
    **kwargs,
):
    """Bind with zero arrays allocated from inferred shapes and types.

    Parameters
    ----------
    ctx : Context
    grad_req : str, list or dict
        'null' arguments get no gradient array.
    type_dict : dict, optional
        ``{input name: dtype}`` (default float32, propagated by type inference).
    shared_arg_names : list of str, optional
        Arguments whose arrays (and gradients) are taken from ``shared_exec``
        when their shapes agree; ``shared_exec``'s auxiliary states are shared too.
    shared_buffer : dict, optional
        ``{name: NDArray}`` reused for other arguments of the same shape and dtype;
        newly made arrays are added to it.
    **kwargs
        ``name=shape`` for the inputs.
    """
    from .executor import Executor

    arg_st = _var_stypes(self, stype_dict)
    grad_st = _sparse_infer.grad_stypes(self, arg_st)  # MXNet's row_sparse gradients
    arg_shapes, _, aux_shapes = infer_all(self, kwargs)
    arg_types, aux_types = _infer_types(self, type_dict)
    reqs = _grad_reqs(self, grad_req)
    check_differentiable(self, reqs)
    arg_names, aux_names = self.list_arguments(), self.list_auxiliary_states()
    shared = set(shared_arg_names or ())  # never taken from shared_buffer
    s_args = shared_exec.arg_dict if shared_exec is not None else {}
    s_grads = shared_exec.grad_dict if shared_exec is not None else {}
    s_aux = shared_exec.aux_dict if shared_exec is not None else {}
    places = _arg_contexts(self, ctx, group2ctx)
    args, grads, aux = [], [], []
    for name, shape, dt in zip(arg_names, arg_shapes, arg_types, strict=False):
        dt = np.dtype(dt or np.float32)
        where = places.get(name, ctx)
        if name in shared and name in s_args and _fits(s_args[name], shape, dt):
            args.append(s_args[name])
            g = s_grads.get(name)
            grads.append(
                g
                if reqs[name] != "null" and g is not None
                else (_zeros(shape, dt, where, grad_st.get(name)) if reqs[name] != "null" else None)
            )
            continue
        if shared_buffer is not None and name not in shared:
            buf = shared_buffer.get(name)
            if buf is None or not _fits(buf, shape, dt):
                buf = shared_buffer[name] = _zeros(shape, dt, where, arg_st.get(name))
            args.append(buf)
        else:
            args.append(_zeros(shape, dt, where, arg_st.get(name)))
        grads.append(_zeros(shape, dt, where, grad_st.get(name)) if reqs[name] != "null" else None)
    for name, shape, dt in zip(aux_names, aux_shapes, aux_types, strict=False):
        dt = np.dtype(dt or np.float32)
        src = s_aux.get(name)
        if src is None or not _fits(src, shape, dt):
            src = _zeros(shape, dt, places.get(name, ctx))
        aux.append(src)
    program = None
    if shared_exec is not None and shared_exec._symbol is self:
        program = shared_exec._program
    return Executor(self, ctx, args, grads, reqs, aux, group2ctx, program)


_STYPE_NAMES = {"0": "default", "1": "row_sparse", "2": "csr"}


def _var_stypes(sym, stype_dict):
    """``{variable: stype}`` from ``stype_dict`` and the ``stype`` given to ``sym.var``."""
    out = {}
    for name, attrs in sym.attr_dict().items():
        code = attrs.get("__storage_type__")
        if code is not None:
            out[name] = _STYPE_NAMES.get(str(code), "default")
    for name, st in (stype_dict or {}).items():
        if st not in (None, "default", "row_sparse", "csr"):
            raise MXNetError(
                f"simple_bind: unknown storage type {st!r} for {name!r}; use 'default', "
                f"'row_sparse' or 'csr'"
            )
        out[name] = st or "default"
    return out


def _infer_types(sym, type_dict):
    """Argument/aux dtypes; as MXNet, arguments without a type (``type_dict`` or a
    ``__dtype__`` attribute) default to float32."""
    inputs = set(sym.list_inputs())
    types = {k: dtype_of(v) for k, v in (type_dict or {}).items() if k in inputs}
    if type_dict is None:
        attrs = sym.attr_dict()
        for n in sym.list_arguments():
            if "__dtype__" not in attrs.get(n, {}):
                types[n] = np.dtype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        arg_types, _, aux_types = sym.infer_type(**types)
    if arg_types is None:
        arg_types = [types.get(n) for n in sym.list_arguments()]
        aux_types = [None] * len(sym.list_auxiliary_states())
    return arg_types, aux_types


def _fits(arr, shape, dtype):
    return arr.shape == tuple(shape) and arr.dtype == dtype


def eval(self, ctx=None, **kwargs):  # noqa: A001  (MXNet's name)
    """Run the graph once on ``name=NDArray`` inputs; returns the list of outputs."""
    from ..context import current_context

    return bind(self, ctx or current_context(), kwargs).forward()


def install():
    """Attach ``bind``, ``simple_bind`` and ``eval`` to :class:`Symbol`."""
    from .symbol import Symbol

    Symbol.bind = bind
    Symbol.simple_bind = simple_bind
    Symbol.eval = eval


install()
