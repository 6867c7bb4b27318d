"""``mx.mod.PythonModule`` and ``PythonLossModule``: modules written in Python.

A ``PythonModule`` has no parameters of its own: the module calls that deal with
parameters and optimizers do nothing, and a subclass supplies ``forward``,
``backward``, ``get_outputs`` and ``_compute_output_shapes``. ``PythonLossModule`` is
the usual case: a loss stage at the end of a ``SequentialModule`` whose gradient with
respect to the scores is a Python function (``grad_func(scores, labels)``), as in
MXNet's ``example/module/python_loss.py``.
"""

from __future__ import annotations

import logging

from ..base import InvalidArgumentError, MXNetError
from ..initializer import Uniform
from ..ndarray import NDArray
from ..ndarray import array as _array
from .base_module import BaseModule

__all__ = ["PythonModule", "PythonLossModule"]


class PythonModuleError(MXNetError, ValueError, AssertionError):
    """A misused Python module: names that do not match the bound shapes, a gradient
    request other than ``'write'``, a loss module given head gradients (MXNet fails an
    ``assert`` there)."""


def _names(names):
    return None if names is None else list(names)


class PythonModule(BaseModule):
    """A module with no parameters, whose computation a subclass writes in Python.

    Parameters
    ----------
    data_names : list of str
        Names of the data the module takes.
    label_names : list of str or None
        Names of its labels (None: it takes none).
    output_names : list of str
        Names of its outputs.
    """

    def __init__(self, data_names, label_names, output_names, logger=logging):
        super().__init__(logger=logger)
        self._data_names = _names(data_names)
        self._label_names = _names(label_names)
        self._output_names = _names(output_names)
        self._data_shapes = self._label_shapes = self._output_shapes = None

    # ------------------------------------------------------------ names and shapes
    @property
    def data_names(self):
        return self._data_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        return self._data_shapes

    @property
    def label_shapes(self):
        return self._label_shapes

    @property
    def output_shapes(self):
        return self._output_shapes

    # ------------------------------------------------------------ no parameters
    def get_params(self):
        """``({}, {})``: a Python module holds no parameters (a subclass that does
        overrides this)."""
        return {}, {}

    def init_params(
        self,
        initializer=Uniform(0.01),  # noqa: B008  (MXNet's default)
        arg_params=None,
        aux_params=None,
        allow_missing=False,
        force_init=False,
        allow_extra=False,
    ):
        """Nothing to initialize."""
        self.params_initialized = True

    def init_optimizer(
        self,
        kvstore="local",
        optimizer="sgd",
        optimizer_params=(("learning_rate", 0.01),),
        force_init=False,
    ):
        """Nothing to optimize."""
        self.optimizer_initialized = True

    def update(self):
        """Nothing to update."""

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Feed the metric ``labels`` and this module's outputs (a module bound without
        labels has nothing to evaluate)."""
        if self._label_shapes is None:
            return
        if pre_sliced:
            raise PythonModuleError(f"{type(self).__name__} takes no pre-sliced labels")
        eval_metric.update(labels, self.get_outputs())

    # ------------------------------------------------------------ binding
    def bind(
        self,
        data_shapes,
        label_shapes=None,
        for_training=True,
        inputs_need_grad=False,
        force_rebind=False,
        shared_module=None,
        grad_req="write",
    ):
        """Record the shapes; the output shapes come from :meth:`_compute_output_shapes`."""
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if grad_req != "write":
            raise PythonModuleError(
                f"{type(self).__name__} computes its gradients itself: grad_req must be "
                f"'write', got {grad_req!r}"
            )
        data_shapes = [tuple(d) for d in data_shapes]
        given = [d[0] for d in data_shapes]
        if given != self._data_names:
            raise PythonModuleError(
                f"{type(self).__name__}: data_shapes name {given}, the module takes "
                f"data_names={self._data_names}"
            )
        if label_shapes is not None:
            label_shapes = [tuple(d) for d in label_shapes]
            given = [d[0] for d in label_shapes]
            if self._label_names is None or given != self._label_names:
                raise PythonModuleError(
                    f"{type(self).__name__}: label_shapes name {given}, the module takes "
                    f"label_names={self._label_names}"
                )
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self._data_shapes, self._label_shapes = data_shapes, label_shapes
        self._output_shapes = self._compute_output_shapes()
        self.binded = True

    def _compute_output_shapes(self):
        """``[(name, shape)]`` of the outputs, from the bound data and label shapes."""
        raise NotImplementedError(f"{type(self).__name__} must define _compute_output_shapes()")


class PythonLossModule(PythonModule):
    """A loss stage written in Python: its output is its input (the scores), and its
    backward gives the scores' gradient from ``grad_func(scores, labels)``.

    Parameters
    ----------
    name : str
        The output is named ``name + '_output'``.
    data_names, label_names : one name each
        Default ``('data',)`` and ``('softmax_label',)``.
    grad_func : callable, optional
        ``grad_func(scores, labels)`` (NDArrays) returns the gradient with respect to the
        scores, as an NDArray or a numpy array. Without it, a subclass overrides
        :meth:`_backward_impl`.
    """

    def __init__(
        self,
        name="pyloss",
        data_names=("data",),
        label_names=("softmax_label",),
        logger=logging,
        grad_func=None,
    ):
        super().__init__(data_names, label_names, [name + "_output"], logger=logger)
        if len(self._data_names) != 1 or len(self._label_names) != 1:
            raise PythonModuleError(
                f"PythonLossModule takes one data and one label name, got "
                f"data_names={self._data_names}, label_names={self._label_names}"
            )
        if grad_func is not None and not callable(grad_func):
            raise InvalidArgumentError(
                f"PythonLossModule: grad_func must be callable, got {type(grad_func).__name__}"
            )
        self._name = name
        self._grad_func = grad_func
        self._scores = self._labels = self._scores_grad = None

    def _compute_output_shapes(self):
        return [(self._name + "_output", self._data_shapes[0][1])]

    def forward(self, data_batch, is_train=None):
        """Keep the scores (and, when training, the labels) for the backward."""
        self._scores = data_batch.data[0]
        if is_train is None:
            is_train = self.for_training
        if is_train:
            self._labels = data_batch.label[0]

    def get_outputs(self, merge_multi_context=True):
        """The scores this module was given."""
        if not merge_multi_context:
            raise PythonModuleError("PythonLossModule computes on one context only")
        return [self._scores]

    def backward(self, out_grads=None):
        """The scores' gradient, from ``grad_func`` (or :meth:`_backward_impl`)."""
        if out_grads is not None:
            raise PythonModuleError("PythonLossModule is a loss: backward() takes no out_grads")
        if not self.for_training:
            raise PythonModuleError("PythonLossModule.backward() needs a module bound for training")
        self._backward_impl()

    def _backward_impl(self):
        if self._grad_func is None:
            raise NotImplementedError(
                "PythonLossModule needs grad_func=, or a subclass that overrides _backward_impl()"
            )
        grad = self._grad_func(self._scores, self._labels)
        self._scores_grad = grad if isinstance(grad, NDArray) else _array(grad)

    def get_input_grads(self, merge_multi_context=True):
        """``[gradient of the scores]``, from the last backward."""
        if not merge_multi_context:
            raise PythonModuleError("PythonLossModule computes on one context only")
        return [self._scores_grad]

    def install_monitor(self, mon):
        raise NotImplementedError("PythonLossModule has no executors to monitor")
