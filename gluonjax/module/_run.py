"""Module batch methods: ``forward`` (rebinding for new shapes), ``backward``,
metrics, outputs, input gradients and states."""

from __future__ import annotations

from collections import OrderedDict

from ..base import MXNetError
from ..io import DataDesc
from ..ndarray import NDArray


class RunMixin:
    """Batch part of :class:`~gluonjax.module.Module`."""

    def forward(self, data_batch, is_train=None):
        """Run the graph on ``data_batch`` (rebinding if its shapes differ)."""
        self._check_ready()
        new_shapes = tuple(tuple(d.shape) for d in data_batch.data)
        if tuple(tuple(d.shape) for d in self._data_shapes) != new_shapes:
            if getattr(data_batch, "provide_data", None):
                dshapes = data_batch.provide_data
            else:
                dshapes = [
                    DataDesc(d.name, s, d.dtype, d.layout)
                    for d, s in zip(self._data_shapes, new_shapes, strict=False)
                ]
            if getattr(data_batch, "provide_label", None):
                lshapes = data_batch.provide_label
            elif getattr(data_batch, "label", None) and self._label_shapes:
                lshapes = [
                    DataDesc(d.name, tuple(x.shape), d.dtype, d.layout)
                    for d, x in zip(self._label_shapes, data_batch.label, strict=False)
                ]
            else:
                lshapes = None
            self.reshape(dshapes, lshapes)
        args = self._exec.arg_dict
        _load(args, self._data_shapes, data_batch.data)
        label = getattr(data_batch, "label", None)
        if self._label_shapes and label:
            _load(args, self._label_shapes, label)
        self._exec.forward(is_train=self.for_training if is_train is None else is_train)

    def backward(self, out_grads=None):
        """Gradients of the last forward (``out_grads`` for non-loss outputs)."""
        self._check_ready()
        self._exec.backward(out_grads=out_grads)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with the outputs of the last forward and ``labels``."""
        if pre_sliced:
            labels = labels[0]
        names = [d.name for d in self._label_shapes] if self._label_shapes else []
        eval_metric.update_dict(
            OrderedDict(zip(names, labels or [], strict=False)),
            OrderedDict(zip(self._output_names, self._exec.outputs, strict=False)),
        )

    def get_outputs(self, merge_multi_context=True):
        """Outputs of the last forward (``[[out], ...]`` without merging)."""
        self._check_ready()
        outs = list(self._exec.outputs)
        return outs if merge_multi_context else [[o] for o in outs]

    def get_input_grads(self, merge_multi_context=True):
        """Gradients of the data inputs (bind with ``inputs_need_grad=True``)."""
        self._check_ready()
        if not self.inputs_need_grad:
            raise MXNetError("bind with inputs_need_grad=True to get input gradients")
        grads = self._exec.grad_dict
        outs = [grads[d.name] for d in self._data_shapes]
        return outs if merge_multi_context else [[g] for g in outs]

    def get_states(self, merge_multi_context=True):
        """Values of the ``state_names`` arguments."""
        self._check_ready()
        outs = [self._exec.arg_dict[n] for n in self._state_names]
        return outs if merge_multi_context else [[s] for s in outs]

    def set_states(self, states=None, value=None):
        """Set the state arguments from a list of arrays, or all to the scalar ``value``."""
        self._check_ready()
        import jax.numpy as jnp

        args = self._exec.arg_dict
        for k, n in enumerate(self._state_names):
            arr = args[n]
            if states is not None:
                src = states[k][0] if isinstance(states[k], (list, tuple)) else states[k]
                arr._data = src._data.astype(arr.dtype)
            else:
                arr._data = jnp.full(arr.shape, value, arr.dtype)
            arr._node = None

    def install_monitor(self, mon):
        """Install a monitor (an object with ``install(executor)``)."""
        self._need_bind()
        mon.install(self._exec)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Nothing to prepare for dense, single-device modules."""


def raw(x):
    import jax.numpy as jnp
    import numpy as np

    return x._data if isinstance(x, NDArray) else jnp.asarray(np.asarray(x))


def _load(arg_dict, descs, arrays):
    for d, x in zip(descs, arrays, strict=False):
        arr = arg_dict.get(d.name)
        if arr is None:
            continue
        src = raw(x)
        if tuple(src.shape) != arr.shape:
            raise MXNetError(
                f"batch input '{d.name}' has shape {tuple(src.shape)}, the module "
                f"is bound for {arr.shape}"
            )
        arr._data = src if src.dtype == arr.dtype else src.astype(arr.dtype)
        arr._node = None
