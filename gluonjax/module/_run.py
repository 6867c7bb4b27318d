"""Module batch methods: ``forward`` (rebinding for new shapes), ``backward``,
metrics, outputs, input gradients and states."""

from __future__ import annotations

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
        self._exec_group.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        """Gradients of the last forward (``out_grads`` for non-loss outputs)."""
        self._check_ready()
        self._exec_group.backward(out_grads=out_grads)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with the outputs of the last forward and ``labels``."""
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def get_outputs(self, merge_multi_context=True):
        """Outputs of the last forward (``[[out_ctx0, out_ctx1], ...]`` without merging)."""
        self._check_ready()
        return self._exec_group.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """Gradients of the data inputs (bind with ``inputs_need_grad=True``)."""
        self._check_ready()
        if not self.inputs_need_grad:
            raise MXNetError("bind with inputs_need_grad=True to get input gradients")
        return self._exec_group.get_input_grads(merge_multi_context=merge_multi_context)

    def get_states(self, merge_multi_context=True):
        """Values of the ``state_names`` arguments (``[[ctx0, ctx1], ...]`` unmerged)."""
        self._check_ready()
        states = self._exec_group.get_states(merge_multi_context=False)
        if not merge_multi_context:
            return states
        from .executor_group import _merge_multi_context

        return _merge_multi_context(states, [0] * len(states))

    def set_states(self, states=None, value=None):
        """Set the state arguments from arrays (per state, or per state and context), or
        all to the scalar ``value``."""
        self._check_ready()
        self._exec_group.set_states(states, value)

    def install_monitor(self, mon):
        """Install a monitor (an object with ``install(executor)``) on every executor."""
        self._need_bind()
        self._exec_group.install_monitor(mon)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Nothing to prepare for dense parameters."""


def raw(x):
    import jax.numpy as jnp
    import numpy as np

    return x._data if isinstance(x, NDArray) else jnp.asarray(np.asarray(x))
