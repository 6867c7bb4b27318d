"""The optimizers of ``SVRGModule``: ``_SVRGOptimizer`` routes each key either to the
user's optimizer or, for the ``<name>_full`` keys that accumulate full gradients in a
kvstore, to ``_AssignmentOptimizer`` (which stores the pushed value).

Both follow gluonjax's single update path: ``_SVRGOptimizer``'s rule is its default
optimizer's rule (applied in the Module's one compiled update); its eager ``update`` (the
kvstore's updater) routes by key name.

Examples
--------
>>> import gluonjax as mx
>>> from gluonjax.contrib.svrg_optimization.svrg_optimizer import _SVRGOptimizer
>>> opt = _SVRGOptimizer("sgd", param_idx2name={0: "w", 1: "w_full"}, learning_rate=1.0)
>>> w, w_full = mx.nd.zeros((2,)), mx.nd.zeros((2,))
>>> opt.update(0, w, mx.nd.ones((2,)), opt.create_state(0, w))
>>> opt.update(1, w_full, mx.nd.array([5, 6]), opt.create_state(1, w_full))
>>> w.asnumpy().tolist(), w_full.asnumpy().tolist()
([-1.0, -1.0], [5.0, 6.0])
"""

from __future__ import annotations

from ... import optimizer as _opt
from ...base import MXNetError
from ...optimizer import Optimizer

__all__ = ["_SVRGOptimizer", "_AssignmentOptimizer", "SVRGKeyError"]

# the keyword arguments the base Optimizer takes (the rest go to the default optimizer)
_BASE_PARAMS = (
    "rescale_grad",
    "param_idx2name",
    "wd",
    "clip_gradient",
    "learning_rate",
    "lr_scheduler",
    "sym",
    "begin_num_update",
    "multi_precision",
    "param_dict",
)


class SVRGKeyError(MXNetError, KeyError):
    """An optimizer index ``_SVRGOptimizer`` cannot name (not in ``param_idx2name``)."""


def _is_full(name):
    """The keys of accumulated full gradients are ``<param>_full``."""
    return isinstance(name, str) and name.endswith("_full")


@_opt.register
class _AssignmentOptimizer(Optimizer):
    """Stores the pushed value as the weight (``weight[:] = grad``), to accumulate full
    gradients in a kvstore; used by ``SVRGModule`` only."""

    def create_state(self, index, weight):
        return ()

    def step(self, weight, grad, state, lr, wd, t, key):
        return grad, ()


@_opt.register
class _SVRGOptimizer(Optimizer):
    """Wraps the user's optimizer (``default_opt``) and an ``_AssignmentOptimizer``
    (``aux_opt``) for ``SVRGModule``.

    Parameters
    ----------
    default_optimizer : str or Optimizer
        The optimizer of the parameters; a name is created with all ``kwargs``.
    **kwargs
        Optimizer arguments; the base ones (``learning_rate``, ``rescale_grad``,
        ``param_idx2name``...) also configure this wrapper.
    """

    def __init__(self, default_optimizer, **kwargs):
        super().__init__(**{k: v for k, v in kwargs.items() if k in _BASE_PARAMS})
        if isinstance(default_optimizer, str):
            self.default_opt = _opt.create(default_optimizer, **kwargs)
        elif isinstance(default_optimizer, Optimizer):
            self.default_opt = default_optimizer
        else:
            raise MXNetError(
                f"_SVRGOptimizer: default_optimizer must be an optimizer name or an Optimizer, "
                f"got {type(default_optimizer).__name__}"
            )
        self.aux_opt = _opt.create(_AssignmentOptimizer.__name__)
        # the Module's compiled update applies the default optimizer's rule
        self.clip_in_step = self.default_opt.clip_in_step
        self._mx_single = self.default_opt._mx_single

    def _check_index(self, index):
        """The parameter name of ``index`` (an int index or a name)."""
        if index in self.idx2name.values():
            return index
        if index not in self.idx2name:
            raise SVRGKeyError(
                f"_SVRGOptimizer: index {index!r} is not in param_idx2name "
                f"({len(self.idx2name)} entries); SVRGModule.init_optimizer fills it"
            )
        return self.idx2name[index]

    def _route(self, index):
        return self.aux_opt if _is_full(self._check_index(index)) else self.default_opt

    def create_state(self, index, weight):
        return self._route(index).create_state(index, weight)

    def update(self, index, weight, grad, state):
        """Update by the key's optimizer: ``<name>_full`` keys are assigned, the others
        stepped by the default optimizer."""
        if isinstance(index, (list, tuple)):
            for i, w, g, s in zip(index, weight, grad, state, strict=True):
                self.update(i, w, g, s)
            return
        self._route(index).update(index, weight, grad, state)

    # the compiled update (Module.update) of the parameters: the default optimizer's rule
    def preprocess(self, grad, rescale_grad):
        return self.default_opt.preprocess(grad, rescale_grad)

    def step(self, weight, grad, state, lr, wd, t, key):
        return self.default_opt.step(weight, grad, state, lr, wd, t, key)

    def needs_key(self):
        return self.default_opt.needs_key()

    def lrs_wds(self, indices):
        inner = self.default_opt
        inner.num_update = max(inner.num_update, self.num_update)  # its lr_scheduler's step
        return inner.lrs_wds(indices)

    def rescale_array(self):
        return self.default_opt.rescale_array()
