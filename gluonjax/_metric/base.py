"""EvalMetric base class, the metric registry, composite and custom metrics.

Metrics run on the host: labels and predictions (NDArrays, numpy arrays or
anything ``np.asarray`` accepts) are converted to numpy before any arithmetic.
"""

from __future__ import annotations

import json
import numbers
import warnings
from collections import OrderedDict

import numpy

from ..base import InvalidArgumentError

__all__ = [
    "EvalMetric",
    "CompositeEvalMetric",
    "CustomMetric",
    "register",
    "alias",
    "create",
    "np",
    "check_label_shapes",
    "to_numpy",
]

_REGISTRY: dict[str, type] = {}


def to_numpy(x):
    """Host numpy copy of an NDArray / numpy array / array-like."""
    if hasattr(x, "asnumpy"):
        return x.asnumpy()
    return numpy.asarray(x)


def _is_array(x):
    return hasattr(x, "asnumpy") or isinstance(x, numpy.ndarray)


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """Raise ValueError unless ``labels`` and ``preds`` have the same length (or
    ``shape``); with ``wrap``, a single array becomes a one-element list."""
    if not shape:
        label_shape, pred_shape = len(labels), len(preds)
    else:
        label_shape, pred_shape = labels.shape, preds.shape
    if label_shape != pred_shape:
        raise InvalidArgumentError(
            f"Shape of labels {label_shape} does not match shape of predictions {pred_shape}"
        )
    if wrap:
        if _is_array(labels):
            labels = [labels]
        if _is_array(preds):
            preds = [preds]
    return labels, preds


class EvalMetric:
    """Base class of evaluation metrics.

    Parameters
    ----------
    name : str
    output_names, label_names : list of str, optional
        Names picked by :meth:`update_dict`.

    ``sum_metric / num_inst`` is the local value (since :meth:`reset_local`),
    ``global_sum_metric / global_num_inst`` the value since :meth:`reset`.
    """

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self):
        """Constructor arguments, to re-create the metric with :func:`create`."""
        config = self._kwargs.copy()
        config.update(
            {
                "metric": type(self).__name__,
                "name": self.name,
                "output_names": self.output_names,
                "label_names": self.label_names,
            }
        )
        return config

    def update_dict(self, label, pred):
        """Update from dicts name -> array (selected by label_names/output_names)."""
        pred = (
            [pred[n] for n in self.output_names]
            if self.output_names is not None
            else list(pred.values())
        )
        label = (
            [label[n] for n in self.label_names]
            if self.label_names is not None
            else list(label.values())
        )
        self.update(label, pred)

    def update(self, labels, preds):
        """Accumulate one batch: lists of label and prediction arrays."""
        raise NotImplementedError()

    def reset(self):
        """Clear local and global statistics."""
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self):
        """Clear the local statistics only."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self):
        """``(name, value)``; value is nan before any update."""
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self.sum_metric / self.num_inst)

    def get_global(self):
        """``(name, value)`` over everything since the last :meth:`reset`."""
        if self._has_global_stats:
            if self.global_num_inst == 0:
                return (self.name, float("nan"))
            return (self.name, self.global_sum_metric / self.global_num_inst)
        return self.get()

    @staticmethod
    def _pairs(name, value):
        name = name if isinstance(name, list) else [name]
        value = value if isinstance(value, list) else [value]
        return list(zip(name, value, strict=False))

    def get_name_value(self):
        """``[(name, value), ...]``."""
        return self._pairs(*self.get())

    def get_global_name_value(self):
        """``[(name, global value), ...]``."""
        if self._has_global_stats:
            return self._pairs(*self.get_global())
        return self.get_name_value()

    def _add(self, value, count):
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += count
        self.global_num_inst += count


# ----------------------------------------------------------------------------- registry
def register(klass):
    """Register a metric class under its lower-cased class name (a decorator)."""
    if not (isinstance(klass, type) and issubclass(klass, EvalMetric)):
        raise InvalidArgumentError(f"can only register EvalMetric subclasses, got {klass!r}")
    name = klass.__name__.lower()
    if name in _REGISTRY and _REGISTRY[name] is not klass:
        warnings.warn(
            f"metric {klass.__name__} overrides an already registered metric",
            UserWarning,
            stacklevel=2,
        )
    _REGISTRY[name] = klass
    return klass


def alias(*aliases):
    """Register a metric class under extra (lower-cased) names (a decorator)."""

    def reg(klass):
        for name in aliases:
            _REGISTRY[name.lower()] = klass
        return klass

    return reg


def _create(metric, *args, **kwargs):
    if isinstance(metric, EvalMetric):
        if args or kwargs:
            raise InvalidArgumentError("metric is already an instance; extra arguments are invalid")
        return metric
    if isinstance(metric, type) and issubclass(metric, EvalMetric):
        return metric(*args, **kwargs)
    if isinstance(metric, dict):
        kwargs = dict(metric, **kwargs)
        return _create(kwargs.pop("metric"), *args, **kwargs)
    if not isinstance(metric, str):
        raise InvalidArgumentError(
            f"metric must be a name, a callable, a list or an EvalMetric, got {metric!r}"
        )
    if metric.startswith("["):
        name, kw = json.loads(metric)
        return _create(name, **kw)
    if metric.startswith("{"):
        return _create(json.loads(metric))
    key = metric.lower()
    if key not in _REGISTRY:
        raise InvalidArgumentError(
            f"metric {metric!r} is not registered; known: {sorted(_REGISTRY)}"
        )
    return _REGISTRY[key](*args, **kwargs)


def create(metric, *args, **kwargs):
    """A metric from a name ('acc', 'f1', ...), a callable ``feval(label, pred)``
    (a :class:`CustomMetric`), a list of those (a :class:`CompositeEvalMetric`),
    a config dict / JSON string, or an instance (returned as is)."""
    if callable(metric) and not isinstance(metric, (type, EvalMetric)):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    return _create(metric, *args, **kwargs)


def _flatten_result(names, values, name, value):
    names.extend([name] if isinstance(name, str) else name)
    values.extend([value] if isinstance(value, numbers.Number) else value)


@register
@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get()`` returns lists of names/values.

    Parameters
    ----------
    metrics : list of metric specs (see :func:`create`), optional
    """

    def __init__(self, metrics=None, name="composite", output_names=None, label_names=None):
        self.metrics = []
        super().__init__(
            name, output_names=output_names, label_names=label_names, has_global_stats=True
        )
        self.metrics = [create(m) for m in (metrics or [])]

    def add(self, metric):
        """Append a metric (any :func:`create` spec)."""
        self.metrics.append(create(metric))

    def get_metric(self, index):
        """The child metric at ``index``."""
        try:
            return self.metrics[index]
        except IndexError:
            raise InvalidArgumentError(
                f"Metric index {index} is out of range 0 and {len(self.metrics)}"
            ) from None

    def update_dict(self, labels, preds):
        if self.label_names is not None:
            labels = OrderedDict(i for i in labels.items() if i[0] in self.label_names)
        if self.output_names is not None:
            preds = OrderedDict(i for i in preds.items() if i[0] in self.output_names)
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels, preds):
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self):
        for metric in getattr(self, "metrics", []):
            metric.reset()

    def reset_local(self):
        for metric in self.metrics:
            metric.reset_local()

    def get(self):
        names, values = [], []
        for metric in self.metrics:
            _flatten_result(names, values, *metric.get())
        return (names, values)

    def get_global(self):
        names, values = [], []
        for metric in self.metrics:
            _flatten_result(names, values, *metric.get_global())
        return (names, values)

    def get_config(self):
        config = super().get_config()
        config.update({"metrics": [m.get_config() for m in self.metrics]})
        return config


@register
class CustomMetric(EvalMetric):
    """A metric from ``feval(label, pred)`` on numpy arrays, returning a value
    (counted as one instance) or ``(sum_metric, num_inst)``.

    Parameters
    ----------
    feval : callable
    name : str, optional
        Defaults to ``feval.__name__`` (``custom(<lambda>)`` for a lambda).
    allow_extra_outputs : bool, default False
        Allow more predictions than labels.
    """

    def __init__(
        self, feval, name=None, allow_extra_outputs=False, output_names=None, label_names=None
    ):
        if name is None:
            name = feval.__name__
            if "<" in name:
                name = f"custom({name})"
        super().__init__(
            name,
            feval=feval,
            allow_extra_outputs=allow_extra_outputs,
            output_names=output_names,
            label_names=label_names,
            has_global_stats=True,
        )
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        elif _is_array(labels) or _is_array(preds):
            labels = [labels] if _is_array(labels) else labels
            preds = [preds] if _is_array(preds) else preds
        for pred, label in zip(preds, labels, strict=False):
            reval = self._feval(to_numpy(label), to_numpy(pred))
            if isinstance(reval, tuple):
                self._add(*reval)
            else:
                self._add(reval, 1)

    def get_config(self):
        raise NotImplementedError("CustomMetric cannot be serialized")


def np(numpy_feval, name=None, allow_extra_outputs=False):
    """A :class:`CustomMetric` from a numpy function ``feval(label, pred)``."""

    def feval(label, pred):
        return numpy_feval(label, pred)

    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)
