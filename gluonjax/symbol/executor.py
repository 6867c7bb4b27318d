"""Executor: a symbol bound to argument, gradient and auxiliary-state arrays.

Made by ``Symbol.bind`` / ``Symbol.simple_bind``. ``forward`` runs the whole
graph as one ``jax.jit`` call; ``backward`` is one more compiled call (a
``jax.vjp`` that recomputes the forward pass from the values the last forward
used, see :mod:`gluonjax.symbol._program`). The arrays in ``arg_dict``,
``grad_dict``, ``aux_dict`` and ``outputs`` are NDArrays that keep their
identity: new values replace their contents, so code holding them sees the
updates, as with MXNet's shared memory.

Examples
--------
>>> import gluonjax as mx
>>> a, b = mx.sym.var('a'), mx.sym.var('b')
>>> ex = (a * b).bind(mx.cpu(), {'a': mx.nd.array([1, 2]), 'b': mx.nd.array([3, 4])},
...                   args_grad={'a': mx.nd.zeros(2), 'b': mx.nd.zeros(2)})
>>> ex.forward(is_train=True)[0].asnumpy().tolist()
[3.0, 8.0]
>>> ex.backward(mx.nd.ones(2)); ex.grad_dict['a'].asnumpy().tolist()
[3.0, 4.0]
"""

from __future__ import annotations

import weakref

import jax
import jax.numpy as jnp
import numpy as np

from .. import _rng as _random
from .._caches import PROCESS
from .._ops import buckets
from .._ops.graph import topo
from ..base import ArgumentTypeError, MXNetError
from ..ndarray import NDArray
from ..ndarray.sparse import _infer as _sparse_infer
from ._exec_check import FailedValue, check_forward
from ._program import program_for

__all__ = ["Executor", "BindError"]


class BindError(MXNetError, ValueError):
    """Arrays given to bind/forward/copy_params_from/reshape do not fit the graph."""


def _raw(value, dtype=None):
    # host data goes over with device_put: jnp.asarray compiles a program per shape
    x = value._data if isinstance(value, NDArray) else jax.device_put(np.asarray(value))
    return x if dtype is None or x.dtype == dtype else x.astype(dtype)


def _set(arr, value):
    """Replace the contents of NDArray ``arr`` (same shape; cast to its dtype)."""
    arr._data = _raw(value, arr.dtype)
    arr._node = None


def _output_storage(ex):
    """The storage types (and patterns) MXNet gives the outputs for the arguments'
    storage types; an op that refuses its inputs' storage types raises here, as
    MXNet's bind does. All-dense results are cached per argument storage types."""
    names = ex._arg_names + ex._aux_names
    arrays = dict(zip(names, ex.arg_arrays + ex.aux_arrays, strict=False))
    key = tuple(a.stype for a in arrays.values())
    dense = ex.__dict__.setdefault("_dense_stypes", {})
    if key in dense:
        return dense[key]
    found = _sparse_infer.infer(ex._symbol, arrays)
    if all(st == "default" for st, _ in found):
        dense[key] = found
    return found


# ops whose auxiliary states MXNet 1.x writes in the backward pass (running statistics)
_STATS_OPS = frozenset(
    ("BatchNorm", "BatchNorm_v1", "_contrib_BatchNormWithReLU", "_contrib_SyncBatchNorm")
)


def _backward_written(ex):
    """Names of the auxiliary states that a statistics op (BatchNorm...) owns: the
    backward writes them; cached per executor."""
    names = ex.__dict__.get("_stats_aux")
    if names is None:
        names = set()
        for node in topo(ex._symbol._outputs):
            if node.op is None or node.op.name not in _STATS_OPS:
                continue
            attrs = node.attr_dict()
            aux = node.op.aux_names(attrs)
            for (src, _), nm in zip(node.inputs, node.op.input_names(attrs, len(node.inputs))):
                if nm in aux and src.op is None:
                    names.add(src.name)
        ex._stats_aux = names = frozenset(names)
    return names


class Executor:
    """A bound symbol (see the module docstring). Do not construct directly."""

    def __init__(
        self,
        symbol,
        ctx,
        arg_arrays,
        grad_arrays,
        grad_req,
        aux_arrays,
        group2ctx=None,
        program=None,
    ):
        self._symbol = symbol
        self._ctx = ctx
        self._group2ctx = group2ctx
        self._program = program if program is not None else program_for(symbol)
        self._arg_names = symbol.list_arguments()
        self._aux_names = symbol.list_auxiliary_states()
        self._output_names = symbol.list_outputs()
        self.arg_arrays = list(arg_arrays)
        self.grad_arrays = list(grad_arrays)
        self.aux_arrays = list(aux_arrays)
        self._grad_req = dict(grad_req)
        self._outputs = None
        self._saved = None
        self._failed = None  # the error of the last forward's value checks
        self._monitor = None
        # executors made by reshape() share the front of this one's output memory in
        # MXNet: their newest outputs show through in ours (copied when we are read)
        self._views = weakref.WeakSet()
        self._view_fresh = False
        if PROCESS.sparse_types:
            _output_storage(self)  # MXNet checks the storage types at bind time

    # ------------------------------------------------------------ views
    @property
    def arg_dict(self):
        """{argument name: NDArray}."""
        return dict(zip(self._arg_names, self.arg_arrays, strict=False))

    @property
    def grad_dict(self):
        """{argument name: gradient NDArray or None (grad_req 'null')}."""
        return dict(zip(self._arg_names, self.grad_arrays, strict=False))

    @property
    def aux_dict(self):
        """{auxiliary state name: NDArray}."""
        return dict(zip(self._aux_names, self.aux_arrays, strict=False))

    @property
    def outputs(self):
        """The output NDArrays (zeros before the first ``forward``)."""
        if self._outputs is None:
            args, aux = self._values()
            key, counter = self._key(peek=True)
            specs = self._program.output_specs(args, aux, key, counter)
            self._outputs = [NDArray(jnp.zeros(s.shape, s.dtype)) for s in specs]
        if self._views:
            self._pull_views()
        return self._outputs

    def _pull_views(self):
        """Copy the outputs of a reshaped executor that ran after us into our front."""
        for view in list(self._views):
            if not view._view_fresh or view._outputs is None:
                continue
            view._view_fresh = False
            for mine, theirs in zip(self._outputs, view._outputs, strict=False):
                if theirs.size <= mine.size and theirs.dtype == mine.dtype:
                    flat = mine._data.reshape(-1).at[: theirs.size].set(theirs._data.reshape(-1))
                    mine._data, mine._node = flat.reshape(mine.shape), None

    @property
    def output_dict(self):
        """{output name: NDArray}."""
        return dict(zip(self._output_names, self.outputs, strict=False))

    def _values(self):
        args = {n: a._data for n, a in zip(self._arg_names, self.arg_arrays, strict=False)}
        aux = {n: a._data for n, a in zip(self._aux_names, self.aux_arrays, strict=False)}
        return args, aux

    def _key(self, peek=False):
        if not self._program.random:
            return None, None
        if peek:
            key, n = _random.peek()
            return key, np.uint32(n & 0xFFFFFFFF)
        return _random.key_and_counter()

    # ------------------------------------------------------------ running
    def forward(self, is_train=False, **kwargs):
        """Run the graph; ``kwargs`` (name=array) are copied into the arguments first.

        In training mode the new auxiliary states (BatchNorm statistics) are kept for
        :meth:`backward`, which writes them, as MXNet 1.x does. Returns :attr:`outputs`.
        """
        arg_dict = self.arg_dict
        for name, value in kwargs.items():
            if name not in arg_dict:
                raise ArgumentTypeError(f"Unknown argument {name}")
            arr = arg_dict[name]
            shape = tuple(np.shape(value) if not isinstance(value, NDArray) else value.shape)
            if shape != arr.shape:
                raise BindError(
                    f"Shape not match! Argument {name}, need: {arr.shape}, received: {shape}"
                )
            _set(arr, value)
        args, aux = self._values()
        key, counter = self._key()
        # bad index values (take mode='raise'...): raised when an output is read, as MXNet
        self._failed = check_forward(self._program, args, aux)
        outs, new_aux = self._program.forward(args, aux, key, counter, is_train)
        self._saved = (args, aux, key, counter)
        if self._failed is not None:
            outs = [FailedValue(self._failed, o) for o in outs]
        if self._outputs is None or len(self._outputs) != len(outs):
            self._outputs = [NDArray(o) for o in outs]
        else:
            for arr, o in zip(self._outputs, outs, strict=False):
                arr._data, arr._node = o, None
        if PROCESS.sparse_types:  # MXNet's storage types of the outputs
            _sparse_infer.restype(self._outputs, _output_storage(self))
        self._view_fresh = True
        for view in self._views:
            view._view_fresh = False
        # MXNet 1.x moves BatchNorm's statistics in backward(); other auxiliary states (a
        # Custom op's, written by its forward) are written now
        if is_train and new_aux:
            later = _backward_written(self)
            now = {n: v for n, v in new_aux.items() if n not in later}
            new_aux = {n: v for n, v in new_aux.items() if n in later}
            arrays = dict(zip(self._aux_names, self.aux_arrays, strict=False))
            for name, value in now.items():
                arrays[name]._data, arrays[name]._node = value.astype(arrays[name].dtype), None
        self._pending_aux = (aux, new_aux) if is_train and new_aux else None
        if self._monitor is not None:
            self._run_monitor(args, aux, key, counter, is_train)
        return self._outputs

    def backward(self, out_grads=None, is_train=True):
        """Compute gradients of the arguments into :attr:`grad_arrays`.

        Parameters
        ----------
        out_grads : NDArray, list or dict of NDArray, optional
            Head gradients, one per output. May be omitted when every output is a
            loss output (SoftmaxOutput, *RegressionOutput, MakeLoss, BlockGrad...),
            whose gradient does not use it.
        is_train : bool, default True
            Mode the forward pass is recomputed in.
        """
        if self._failed is not None:
            raise self._failed
        diff, add = [], []
        triples = zip(self._arg_names, self.grad_arrays, self.arg_arrays, strict=False)
        for name, garr, arr in triples:
            req = self._grad_req.get(name, "null")
            # integer arguments get gradients too (MXNet), through float32 stand-ins
            numeric = jnp.issubdtype(arr.dtype, jnp.inexact) or jnp.issubdtype(
                arr.dtype, jnp.integer
            )
            if garr is None or req == "null" or not numeric:
                continue
            diff.append(name)
            if req == "add":
                add.append(name)
        if not diff:
            return
        outs = self.outputs
        if self._saved is None:
            args, aux = self._values()
            key, counter = self._key()
        else:
            args, aux, key, counter = self._saved
        gdict = self.grad_dict
        if out_grads is None:
            heads = [buckets.filled(o.shape, o.dtype, 1) for o in outs]
            pairs = zip(self._output_names, self._program.no_head, strict=False)
            bad = [(i, n) for i, (n, ok) in enumerate(pairs) if not ok]
            if bad:
                olds = {n: gdict[n]._data for n in add}
                used = self._program.heads_used(
                    diff, add, is_train, (args, aux, key, counter, heads, olds)
                )
                bad = [n for i, n in bad if used[i]]
            if bad:
                raise MXNetError(
                    f"backward() needs out_grads: the gradients depend on the head gradient "
                    f"of output(s) {bad}, which are not loss outputs. To minimise an output, "
                    f"wrap it in mx.sym.MakeLoss, or pass out_grads."
                )
        else:
            if isinstance(out_grads, dict):
                out_grads = [out_grads[k] for k in self._output_names]
            elif not isinstance(out_grads, (list, tuple)):
                out_grads = [out_grads]
            if len(out_grads) < len(outs):
                raise BindError(f"backward: {len(out_grads)} out_grads for {len(outs)} outputs")
            # More than one per output: MXNet reads the first len(outputs) and ignores the rest
            heads, wrong = [], []
            for i, (g, o) in enumerate(zip(out_grads, outs, strict=False)):
                shape = tuple(np.shape(g) if not isinstance(g, NDArray) else g.shape)
                if shape != o.shape:
                    wrong.append((i, shape))
                    g = buckets.filled(o.shape, o.dtype, 0)
                heads.append(_raw(g))
            if wrong:  # fine where that head gradient is never used (as MXNet: no check)
                olds = {n: gdict[n]._data for n in add}
                used = self._program.heads_used(
                    diff, add, is_train, (args, aux, key, counter, heads, olds)
                )
                for i, shape in wrong:
                    if used[i]:
                        raise BindError(
                            f"backward: out_grad of '{self._output_names[i]}' has shape "
                            f"{shape}, the output has {outs[i].shape}"
                        )
        fn = self._program.backward(diff, add, is_train)
        grads = fn(args, aux, key, counter, heads, {n: gdict[n]._data for n in add})
        for name in diff:
            arr = gdict[name]
            arr._data, arr._node = grads[name].astype(arr.dtype), None
        self._write_aux(args, key, counter)
        if self._monitor is not None:
            from ._eval_monitor import node_input_grads

            found = node_input_grads(self._program.graph, args, aux, key, counter, heads, is_train)
            for name, value in found:
                self._monitor[0](name, NDArray(value))

    # ------------------------------------------------------------ parameters
    def _write_aux(self, args, key, counter):
        """The auxiliary states of the last training forward, written by the backward
        (as MXNet 1.x does); computed again from the current states when something
        wrote them since that forward."""
        pending = getattr(self, "_pending_aux", None)
        if pending is None:
            return
        old, new = pending
        arrays = dict(zip(self._aux_names, self.aux_arrays, strict=False))
        if any(arrays[n]._data is not old[n] for n in new):
            cur = {n: a._data for n, a in arrays.items()}
            new = self._program.forward(args, cur, key, counter, True)[1]
        for name, value in new.items():
            arr = arrays[name]
            arr._data, arr._node = value.astype(arr.dtype), None

    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copy values into the argument (and auxiliary) arrays by name.

        Names the executor does not have raise :class:`BindError` unless
        ``allow_extra_params``.
        """
        for params, table, kind in (
            (arg_params, self.arg_dict, "arguments"),
            (aux_params or {}, self.aux_dict, "auxiliary states"),
        ):
            for name, value in params.items():
                if name not in table:
                    if allow_extra_params:
                        continue
                    raise BindError(f'Find name "{name}" that is not in the {kind}')
                dst = table[name]
                shape = tuple(value.shape)
                if shape != dst.shape:
                    raise BindError(
                        f"copy_params_from: '{name}' has shape {shape}, the "
                        f"executor's array has {dst.shape}"
                    )
                _set(dst, value)

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """A new executor for new input shapes, sharing the arrays whose shape stays.

        As MXNet's reshaped executors write into the front of the original's memory,
        this executor's :attr:`outputs` show the new executor's latest outputs in
        their first elements when it ran last.

        Parameters
        ----------
        partial_shaping : bool
            Allow arguments not named in ``kwargs`` to change shape.
        allow_up_sizing : bool
            Allow an array to grow (new zero arrays are made); otherwise only
            shrinking is allowed, as in MXNet.
        **kwargs
            ``name=shape`` for inputs.
        """
        from ._bind import infer_all

        arg_shapes, _, aux_shapes = infer_all(self._symbol, kwargs)
        new_args, new_grads, new_aux = [], [], []
        for name, shape, arr, garr in zip(
            self._arg_names, arg_shapes, self.arg_arrays, self.grad_arrays, strict=False
        ):
            if not (partial_shaping or name in kwargs or shape == arr.shape):
                raise BindError(
                    f"Shape of unspecified arg: {name} changed. This can cause the new executor "
                    f"to not share parameters with the old one. Please check for error in "
                    f"network. If this is intended, set partial_shaping=True to suppress this "
                    f"warning."
                )
            new_args.append(_resized(name, arr, shape, allow_up_sizing))
            new_grads.append(None if garr is None else _resized(name, garr, shape, allow_up_sizing))
        for name, shape, arr in zip(self._aux_names, aux_shapes, self.aux_arrays, strict=False):
            if not (partial_shaping or shape == arr.shape):
                raise BindError(
                    f"Shape of unspecified aux: {name} changed; set "
                    f"partial_shaping=True if this is intended."
                )
            new_aux.append(_resized(name, arr, shape, allow_up_sizing))
        new = Executor(
            self._symbol,
            self._ctx,
            new_args,
            new_grads,
            self._grad_req,
            new_aux,
            self._group2ctx,
            program=self._program,
        )
        self._views.add(new)
        return new

    # ------------------------------------------------------------ debugging
    def set_monitor_callback(self, callback, monitor_all=False):
        """Call ``callback(name, NDArray)`` after each forward for every internal output
        (and with ``monitor_all`` every input), computed by one extra compiled call; and
        after each backward for the gradient each op passes to each of its inputs
        (``<node>_backward_output<k>``, recomputed op by op)."""
        self._monitor = (callback, monitor_all)

    def _run_monitor(self, args, aux, key, counter, is_train):
        callback, monitor_all = self._monitor
        if monitor_all:
            for name, value in {**args, **aux}.items():
                callback(name, NDArray(value))
        names, values = self._program.internals(args, aux, key, counter, is_train)
        arg_set = set(args) | set(aux)
        for name, value in zip(names, values, strict=False):
            if name not in arg_set:
                callback(name, NDArray(value))

    def debug_str(self):
        """A text description of the bound graph (outputs, variables, ops)."""
        from ._exec_debug import describe

        return describe(self)

    def __repr__(self):
        return f"<Executor {self._symbol!r} @{self._ctx}>"


def _resized(name, arr, shape, allow_up_sizing):
    shape = tuple(shape)
    if shape == arr.shape:
        return arr
    new_size, old_size = int(np.prod(shape)), arr.size
    if new_size > old_size:
        if not allow_up_sizing:
            raise BindError(
                f"New shape of arg: {name} is larger than original. First making a big "
                f"executor and then down sizing it is more efficient than the reverse. If you "
                f"really want to up size, set allow_up_sizing=True to enable allocation of new "
                f"arrays."
            )
        return NDArray(jnp.zeros(shape, arr.dtype))
    return NDArray(arr._data.reshape(-1)[:new_size].reshape(shape))
