"""``mx.contrib.autograd``: MXNet's first autograd interface, kept for old scripts.

A thin layer over :mod:`gluonjax.autograd` (one tape, one backward): ``train_section``
and ``test_section`` are scopes that switch recording and training together,
``mark_variables``, ``backward`` and ``compute_gradient`` are the engine's own, and
``grad_and_loss`` / ``grad`` wrap a function so that it returns the gradients of its
arguments. New code uses ``mx.autograd.record()`` and ``x.attach_grad()``.

Examples
--------
>>> import gluonjax as mx
>>> from gluonjax.contrib import autograd as ag
>>> x = mx.nd.array([1.0, 2.0])
>>> grads, loss = ag.grad_and_loss(lambda v: (v * v).sum())(x)
>>> grads[0].asnumpy().tolist(), loss.asnumpy().tolist()
([2.0, 4.0], [5.0])
"""

from __future__ import annotations

import functools

from .. import autograd as _ag
from ..base import ArgumentTypeError
from ..ndarray import NDArray, zeros_like

__all__ = [
    "set_is_training",
    "TrainingStateScope",
    "train_section",
    "test_section",
    "mark_variables",
    "backward",
    "compute_gradient",
    "grad_and_loss",
    "grad",
]


def set_is_training(is_train):
    """Switch training mode and recording on or off together.

    Parameters
    ----------
    is_train : bool

    Returns
    -------
    bool
        The previous recording state (as MXNet returns it).
    """
    _ag.set_training(is_train)
    return _ag.set_recording(is_train)


class TrainingStateScope:
    """A ``with`` scope that sets training mode and recording to ``enter_state`` and
    restores both afterwards.

    Parameters
    ----------
    enter_state : bool
    """

    def __init__(self, enter_state):
        self._enter_state = bool(enter_state)
        self._prev = None

    def __enter__(self):
        self._prev = (_ag.is_recording(), _ag.is_training())
        set_is_training(self._enter_state)
        return self

    def __exit__(self, ptype, value, trace):
        rec, train = self._prev
        _ag.set_recording(rec)
        _ag.set_training(train)


def train_section():
    """A scope that records operations in training mode (``autograd.record()``).

    Returns
    -------
    TrainingStateScope
    """
    return TrainingStateScope(True)


def test_section():
    """A scope that neither records nor trains (``autograd.pause()``), e.g. for
    evaluation inside a :func:`train_section`.

    Returns
    -------
    TrainingStateScope
    """
    return TrainingStateScope(False)


def mark_variables(variables, gradients, grad_reqs="write"):
    """Mark NDArrays as variables whose gradients ``backward`` writes into ``gradients``.

    Parameters
    ----------
    variables : list of NDArray
    gradients : list of NDArray
        One buffer per variable, of its shape.
    grad_reqs : str or list of str
        'write', 'add' or 'null'.
    """
    _ag.mark_variables(variables, gradients, grad_reqs)


def backward(outputs, out_grads=None, retain_graph=False):
    """Compute the gradients of ``outputs`` with respect to the marked variables.

    Parameters
    ----------
    outputs : list of NDArray
    out_grads : list of NDArray or None, optional
        Head gradients; a None entry means ones.
    retain_graph : bool
        Keep the graph so that backward can run again.
    """
    if not isinstance(outputs, (list, tuple)):
        raise ArgumentTypeError(
            f"contrib.autograd.backward: outputs must be a list or tuple of NDArrays, got "
            f"{type(outputs).__name__}; wrap a single output as [output]"
        )
    _ag.backward(list(outputs), None if out_grads is None else list(out_grads), retain_graph)


def compute_gradient(outputs):
    """Deprecated alias of :func:`backward` (no head gradients).

    Parameters
    ----------
    outputs : list of NDArray
    """
    backward(outputs)


def grad_and_loss(func, argnum=None):
    """Wrap ``func`` so that it returns ``(gradients of its arguments, its output)``.

    Parameters
    ----------
    func : callable
        The forward (loss) function of NDArrays.
    argnum : int or list of int, optional
        The positions of the arguments to differentiate (default: all).

    Returns
    -------
    callable
        ``wrapped(*args) -> (list of NDArray, output)``.
    """

    @functools.wraps(func)
    def wrapped(*args):
        variables = args
        if argnum is not None:
            picks = argnum if isinstance(argnum, list) else [argnum]
            variables = [args[i] for i in picks]
        for k, x in enumerate(variables):
            if not isinstance(x, NDArray):
                raise ArgumentTypeError(
                    f"contrib.autograd.grad_and_loss({getattr(func, '__name__', func)}): "
                    f"argument {k} to differentiate is a {type(x).__name__}, not an NDArray; "
                    f"pass NDArrays or choose the NDArray arguments with argnum"
                )
        grads = [zeros_like(x) for x in variables]
        mark_variables(list(variables), grads)
        with train_section():
            outputs = func(*args)
        compute_gradient([outputs] if isinstance(outputs, NDArray) else outputs)
        return grads, outputs

    return wrapped


def grad(func, argnum=None):
    """Wrap ``func`` so that it returns the gradients of its arguments.

    Parameters
    ----------
    func : callable
    argnum : int or list of int, optional

    Returns
    -------
    callable
        ``wrapped(*args) -> list of NDArray``.
    """
    with_loss = grad_and_loss(func, argnum)

    @functools.wraps(with_loss)
    def wrapped(*args):
        return with_loss(*args)[0]

    return wrapped
