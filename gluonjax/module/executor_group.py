"""``DataParallelExecutorGroup``: one executor per context, each on a slice of the batch.

As in MXNet 1.9.1, a batch is split along each input's batch axis (the ``N`` of its
``DataDesc.layout``) in proportion to the workload; every context runs its own
bound executor with its own copy of the parameters, and outputs and input
gradients are concatenated back along their batch axis (an output's layout comes
from its ``__layout__`` attribute). Contexts may be logical: ``cpu(1)`` on a
machine with one CPU device is device 0 (see :mod:`gluonjax.context`).

Parameter arrays named in ``param_names`` are shared with ``shared_group``'s
executors (bucketing); the other arguments (data, labels, extra parameters) are
kept per context in ``shared_data_arrays`` and reused by name when shapes fit.
"""

from __future__ import annotations

import logging
import math
from collections import OrderedDict

import jax.numpy as jnp
import numpy as np

from ..base import MXNetError
from ..context import Context
from ..io import DataDesc
from ..ndarray import NDArray

__all__ = ["DataParallelExecutorGroup", "split_input_slice"]


class ExecutorGroupError(MXNetError, ValueError):
    """Shapes, contexts or arguments an executor group cannot work with."""


def split_input_slice(batch_size, work_load_list):
    """Slices of ``range(batch_size)``, one per context, sized by ``work_load_list``.

    Examples
    --------
    >>> from gluonjax.module.executor_group import split_input_slice
    >>> split_input_slice(10, [1, 1, 2])  # 2.5 rounds to 2 (Python 3, as MXNet)
    [slice(0, 2, None), slice(2, 4, None), slice(4, 10, None)]
    """
    total = float(sum(work_load_list))
    counts = [int(round(w * batch_size / total)) for w in work_load_list]
    counts[-1] += batch_size - sum(counts)
    slices, end = [], 0
    for n in counts:
        begin = min(end, batch_size)
        end = min(begin + n, batch_size)
        if begin >= end:
            raise ExecutorGroupError(
                f"Too many slices: a batch of {batch_size} cannot be split over "
                f"{len(work_load_list)} contexts with workload {list(work_load_list)} (some "
                f"splits would be empty); use fewer contexts or a larger batch"
            )
        slices.append(slice(begin, end))
    return slices


def _raw(x):
    return x._data if isinstance(x, NDArray) else jnp.asarray(np.asarray(x))


def _take(x, axis, sl):
    """``x[..., sl, ...]`` along ``axis`` as a jax array (whole array when it covers all)."""
    if sl.start == 0 and sl.stop == x.shape[axis]:
        return x
    index = [slice(None)] * x.ndim
    index[axis] = sl
    return x[tuple(index)]


def _assign(dst, src, name):
    if tuple(src.shape) != dst.shape:
        raise ExecutorGroupError(
            f"batch input '{name}' has shape {tuple(src.shape)}, the executor is bound for "
            f"{dst.shape}"
        )
    dst._data = src if src.dtype == dst.dtype else src.astype(dst.dtype)
    dst._node = None


def _merge_multi_context(outputs, major_axis):
    """Concatenate per-context arrays along their batch axis (axis < 0: take the first)."""
    merged = []
    for tensors, axis in zip(outputs, major_axis, strict=False):
        if axis >= 0 and len(tensors) > 1:
            merged.append(NDArray(jnp.concatenate([t._data for t in tensors], axis=axis)))
        else:
            merged.append(tensors[0])
    return merged


def _prepare_group2ctxs(group2ctxs, n):
    """One ``{ctx_group: Context}`` (or None) per context."""
    if group2ctxs is None:
        return [None] * n
    if isinstance(group2ctxs, list):
        if len(group2ctxs) != n:
            raise ExecutorGroupError(f"group2ctxs has {len(group2ctxs)} entries for {n} contexts")
        return group2ctxs
    if isinstance(group2ctxs, dict):
        out = [{} for _ in range(n)]
        for group, value in group2ctxs.items():
            ctxs = [value] * n if isinstance(value, Context) else list(value)
            if len(ctxs) == 1:
                ctxs = ctxs * n
            if len(ctxs) != n:
                raise ExecutorGroupError(
                    f"group2ctxs[{group!r}] has {len(ctxs)} contexts; give 1 or {n}"
                )
            for i in range(n):
                out[i][group] = ctxs[i]
        return out
    raise ExecutorGroupError(
        "group2ctxs must be a dict of ctx_group -> Context (or list of Contexts), or a list "
        "of such dicts, one per context"
    )


def _grad_reqs(arg_names, param_names, data_names, fixed, grad_req, for_training, need_grad):
    if not for_training:
        grad_req = "null"
    if isinstance(grad_req, str):
        reqs = {}
        for k in arg_names:
            if k in param_names:
                reqs[k] = "null" if k in fixed else grad_req
            elif k in data_names:
                reqs[k] = grad_req if need_grad else "null"
            else:
                reqs[k] = "null"
        return reqs
    if isinstance(grad_req, (list, tuple)):
        if len(grad_req) != len(arg_names):
            raise ExecutorGroupError(
                f"grad_req has {len(grad_req)} entries for {len(arg_names)} arguments"
            )
        return dict(zip(arg_names, grad_req, strict=True))
    if isinstance(grad_req, dict):
        reqs = _grad_reqs(arg_names, param_names, data_names, fixed, "write", True, need_grad)
        reqs.update(grad_req)
        return reqs
    raise ExecutorGroupError("grad_req must be one of str, list, tuple, or dict.")


class DataParallelExecutorGroup:
    """Executors of one symbol on several contexts (see the module docstring).

    Parameters
    ----------
    symbol : Symbol
    contexts : list of Context
    workload : list of number
        Relative share of the batch for each context.
    data_shapes, label_shapes : list of DataDesc or (name, shape)
    param_names : list of str
        The arguments that are parameters.
    for_training : bool
        Without it no gradient arrays are made.
    inputs_need_grad : bool
        Also compute the gradients of the data inputs.
    shared_group : DataParallelExecutorGroup, optional
        Share parameter arrays and ``shared_data_arrays`` with it (bucketing).
    logger : logging.Logger or module
    fixed_param_names : list of str, optional
        Parameters without gradient.
    grad_req : str, list or dict
    state_names : list of str, optional
    group2ctxs : dict or list of dict, optional
        ``ctx_group`` attribute -> Context.
    """

    def __init__(
        self,
        symbol,
        contexts,
        workload,
        data_shapes,
        label_shapes,
        param_names,
        for_training,
        inputs_need_grad,
        shared_group=None,
        logger=logging,
        fixed_param_names=None,
        grad_req="write",
        state_names=None,
        group2ctxs=None,
    ):
        self.param_names = list(param_names)
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.symbol = symbol
        self.contexts = list(contexts)
        self.workload = list(workload) if workload is not None else [1] * len(self.contexts)
        self.group2ctxs = _prepare_group2ctxs(group2ctxs, len(self.contexts))
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.logger = logger
        self._total_exec_bytes = 0
        self.fixed_param_names = list(fixed_param_names or [])
        self.state_names = list(state_names or [])
        data_shapes = [d if isinstance(d, DataDesc) else DataDesc(*d) for d in data_shapes]
        if label_shapes is not None:
            label_shapes = [d if isinstance(d, DataDesc) else DataDesc(*d) for d in label_shapes]
        self.grad_req = _grad_reqs(
            self.arg_names,
            self.param_names,
            [d.name for d in data_shapes],
            self.fixed_param_names,
            grad_req,
            for_training,
            inputs_need_grad,
        )
        if shared_group is not None:
            self.shared_data_arrays = shared_group.shared_data_arrays
        else:
            self.shared_data_arrays = [{} for _ in self.contexts]
        self.batch_size = None
        self.slices = None
        self.execs = []
        self._default_execs = None
        self.data_arrays = self.label_arrays = self.param_arrays = None
        self.state_arrays = self.grad_arrays = self.aux_arrays = None
        self.input_grad_arrays = None
        self.data_shapes = self.label_shapes = None
        self.data_names = self.label_names = None
        self.data_layouts = self.label_layouts = None
        self.output_names = symbol.list_outputs()
        self.num_outputs = len(self.output_names)
        self.output_layouts = [
            DataDesc.get_batch_axis(symbol[i].attr("__layout__")) for i in range(self.num_outputs)
        ]
        self.bind_exec(data_shapes, label_shapes, shared_group)

    # ------------------------------------------------------------ binding
    def decide_slices(self, data_shapes):
        """Batch axes of ``data_shapes``; sets :attr:`batch_size` and :attr:`slices`."""
        axes = [DataDesc.get_batch_axis(d.layout) for d in data_shapes]
        for desc, axis in zip(data_shapes, axes, strict=True):
            if axis == -1:
                continue
            size = desc.shape[axis]
            if self.batch_size is None:
                self.batch_size = size
                self.slices = split_input_slice(size, self.workload)
            elif size != self.batch_size:
                raise ExecutorGroupError(
                    f"all data must have the same batch size: batch_size = {self.batch_size}, "
                    f"but {desc.name} has shape {desc.shape}"
                )
        return axes

    def _sliced_shape(self, shapes, i, axes):
        out = []
        for desc, axis in zip(shapes, axes, strict=True):
            shape = list(desc.shape)
            if axis >= 0:
                shape[axis] = self.slices[i].stop - self.slices[i].start
            out.append(DataDesc(desc.name, tuple(shape), desc.dtype, desc.layout))
        return out

    def bind_exec(self, data_shapes, label_shapes, shared_group=None, reshape=False):
        """Bind (or with ``reshape`` re-shape) one executor per context."""
        if not reshape and self.execs:
            raise ExecutorGroupError("the executors are already bound; use reshape()")
        self.batch_size = None
        self.data_layouts = self.decide_slices(data_shapes)
        if label_shapes is not None:
            self.label_layouts = self.decide_slices(label_shapes)
        for i in range(len(self.contexts)):
            data_i = self._sliced_shape(data_shapes, i, self.data_layouts)
            label_i = []
            if label_shapes is not None:
                label_i = self._sliced_shape(label_shapes, i, self.label_layouts)
            if reshape:
                self.execs[i] = self._default_execs[i].reshape(
                    partial_shaping=True,
                    allow_up_sizing=True,
                    **{d.name: d.shape for d in data_i + label_i if d.name in self.arg_names},
                )
            else:
                self.execs.append(self._bind_ith_exec(i, data_i, label_i, shared_group))
        self.data_shapes = data_shapes
        self.label_shapes = label_shapes
        self.data_names = [d.name for d in data_shapes]
        if label_shapes is not None:
            self.label_names = [d.name for d in label_shapes]
        self._collect_arrays()

    def _bind_ith_exec(self, i, data_shapes, label_shapes, shared_group):
        from ..symbol._json import dtype_from_attr

        shared_exec = None if shared_group is None else shared_group.execs[i]
        inputs = set(self.symbol.list_inputs())
        attrs = self.symbol.attr_dict()
        types = {d.name: d.dtype for d in data_shapes}
        for name in types:
            code = attrs.get(name, {}).get("__dtype__", "-1")
            if name in inputs and code != "-1":
                types[name] = dtype_from_attr(code)
        types.update({d.name: d.dtype for d in label_shapes})
        exe = self.symbol.simple_bind(
            self.contexts[i],
            grad_req=self.grad_req,
            type_dict={k: v for k, v in types.items() if k in inputs},
            shared_arg_names=self.param_names,
            shared_exec=shared_exec,
            group2ctx=self.group2ctxs[i],
            shared_buffer=self.shared_data_arrays[i],
            **{d.name: d.shape for d in data_shapes + label_shapes if d.name in inputs},
        )
        arrays = list(exe.arg_arrays) + [g for g in exe.grad_arrays if g is not None]
        arrays += list(exe.aux_arrays)
        # shape, not size: a sparse array has no size (MXNet counts its dense bytes)
        self._total_exec_bytes += sum(math.prod(a.shape) * a.dtype.itemsize for a in arrays)
        return exe

    def _collect_arrays(self):
        slices = self.slices or [slice(i, i + 1) for i in range(len(self.execs))]
        self.data_arrays = [
            [(slices[i], e.arg_dict[d.name]) for i, e in enumerate(self.execs)]
            for d in self.data_shapes
            if d.name in self.arg_names
        ]
        self.state_arrays = [[e.arg_dict[n] for e in self.execs] for n in self.state_names]
        if self.label_shapes is not None:
            self.label_arrays = [
                [(slices[i], e.arg_dict[d.name]) for i, e in enumerate(self.execs)]
                for d in self.label_shapes
                if d.name in self.arg_names
            ]
        else:
            self.label_arrays = None
        idx = [k for k, n in enumerate(self.arg_names) if n in self.param_names]
        self.param_arrays = [[e.arg_arrays[k] for e in self.execs] for k in idx]
        self.grad_arrays = (
            [[e.grad_arrays[k] for e in self.execs] for k in idx] if self.for_training else None
        )
        if self.inputs_need_grad:
            self.input_grad_arrays = [
                [e.grad_arrays[self.arg_names.index(d.name)] for e in self.execs]
                for d in self.data_shapes
                if d.name in self.arg_names
            ]
        else:
            self.input_grad_arrays = None
        self.aux_arrays = [
            [e.aux_arrays[k] for e in self.execs] for k in range(len(self.aux_names))
        ]

    def reshape(self, data_shapes, label_shapes):
        """Re-shape every executor for new input shapes (parameters are kept)."""
        data_shapes = [d if isinstance(d, DataDesc) else DataDesc(*d) for d in data_shapes]
        if label_shapes is not None:
            label_shapes = [d if isinstance(d, DataDesc) else DataDesc(*d) for d in label_shapes]
        if data_shapes == self.data_shapes and label_shapes == self.label_shapes:
            return
        if self._default_execs is None:
            self._default_execs = list(self.execs)
        self.bind_exec(data_shapes, label_shapes, reshape=True)

    # ------------------------------------------------------------ parameters
    def set_params(self, arg_params, aux_params, allow_extra=False):
        """Copy parameter values into every executor."""
        for exe in self.execs:
            exe.copy_params_from(arg_params, aux_params, allow_extra_params=allow_extra)

    def get_params(self, arg_params, aux_params):
        """Write the average over contexts of each parameter into the given dicts' arrays."""
        for names, blocks, target in (
            (self.param_names, self.param_arrays, arg_params),
            (self.aux_names, self.aux_arrays, aux_params),
        ):
            for name, block in zip(names, blocks, strict=False):
                dst = target[name]
                value = block[0]._data
                if len(block) > 1:
                    value = sum(w._data for w in block) / len(block)
                dst._data, dst._node = value.astype(dst.dtype), None

    # ------------------------------------------------------------ running
    @staticmethod
    def _load(sources, targets, axes):
        for src, dsts, axis in zip(sources, targets, axes, strict=False):
            raw = _raw(src)
            for sl, dst in dsts:
                split = axis >= 0 and raw.ndim > axis and raw.shape[axis] != dst.shape[axis]
                _assign(dst, _take(raw, axis, sl) if split else raw, "input")

    def forward(self, data_batch, is_train=None):
        """Load the batch (split over contexts) and run every executor."""
        self._load(data_batch.data, self.data_arrays, self.data_layouts)
        if is_train is None:
            is_train = self.for_training
        label = getattr(data_batch, "label", None)
        if self.label_arrays is not None and label:
            self._load(label, self.label_arrays, self.label_layouts)
        for exe in self.execs:
            exe.forward(is_train=is_train)

    def backward(self, out_grads=None):
        """Run backward on every executor (``out_grads`` split along the output layouts)."""
        if not self.for_training:
            raise ExecutorGroupError("re-bind with for_training=True to run backward")
        if out_grads is not None and not isinstance(out_grads, (list, tuple)):
            out_grads = [out_grads]
        slices = self.slices or [slice(None)] * len(self.execs)
        for exe, sl in zip(self.execs, slices, strict=True):
            if out_grads is None:
                exe.backward()
                continue
            parts = []
            for g, axis in zip(out_grads, self.output_layouts, strict=False):
                raw = _raw(g)
                parts.append(
                    NDArray(_take(raw, axis, sl) if axis >= 0 and len(self.execs) > 1 else raw)
                )
            exe.backward(out_grads=parts)

    def get_output_shapes(self):
        """``[(name, shape)]`` of the merged outputs."""
        out = []
        for name, o, axis in zip(
            self.output_names, self.execs[0].outputs, self.output_layouts, strict=False
        ):
            shape = list(o.shape)
            if axis >= 0 and self.batch_size is not None:
                shape[axis] = self.batch_size
            out.append((name, tuple(shape)))
        return out

    def get_outputs(self, merge_multi_context=True, begin=0, end=None):
        """Outputs of the last forward: merged, or ``[[out_ctx0, out_ctx1], ...]``."""
        end = self.num_outputs if end is None else end
        outputs = [[e.outputs[i] for e in self.execs] for i in range(begin, end)]
        if merge_multi_context:
            return _merge_multi_context(outputs, self.output_layouts[begin:end])
        return outputs

    def get_states(self, merge_multi_context=True):
        """The state arrays, ``[[state_ctx0, ...], ...]``."""
        if merge_multi_context:
            raise ExecutorGroupError(
                "merge_multi_context=True is not supported for get_states; pass False"
            )
        return self.state_arrays

    def set_states(self, states=None, value=None):
        """Set the states from ``[[state_ctx0, ...], ...]`` arrays, or all to ``value``."""
        if (states is None) == (value is None):
            raise ExecutorGroupError("give exactly one of states and value")
        for k, dsts in enumerate(self.state_arrays):
            for i, dst in enumerate(dsts):
                if states is not None:
                    src = states[k][i] if isinstance(states[k], (list, tuple)) else states[k]
                    _assign(dst, _raw(src), self.state_names[k])
                else:
                    dst._data, dst._node = jnp.full(dst.shape, value, dst.dtype), None

    def get_input_grads(self, merge_multi_context=True):
        """Gradients of the data inputs (bind with ``inputs_need_grad``)."""
        if not self.inputs_need_grad:
            raise ExecutorGroupError("bind with inputs_need_grad=True to get input gradients")
        if merge_multi_context:
            return _merge_multi_context(self.input_grad_arrays, self.data_layouts)
        return self.input_grad_arrays

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with each context's outputs and its slice of ``labels``."""
        slices = self.slices or [slice(None)] * len(self.execs)
        layouts = self.label_layouts or [0] * len(labels or [])
        for k, (exe, sl) in enumerate(zip(self.execs, slices, strict=True)):
            if pre_sliced:
                part = labels[k]
            elif len(self.execs) == 1:
                part = list(labels or [])
            else:
                part = [
                    NDArray(_take(_raw(label), axis, sl)) if axis >= 0 else label
                    for label, axis in zip(labels or [], layouts, strict=False)
                ]
            eval_metric.update_dict(
                OrderedDict(zip(self.label_names or [], part, strict=False)),
                OrderedDict(zip(self.output_names, exe.outputs, strict=False)),
            )

    def install_monitor(self, mon):
        """Install ``mon`` on every executor."""
        for exe in self.execs:
            mon.install(exe)
