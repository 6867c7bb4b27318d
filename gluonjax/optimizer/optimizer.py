"""Optimizer base class and registry (``mx.optimizer``), MXNet 1.x update rules.

Each optimizer is a pure, jittable rule ``step(weight, grad, state, lr, wd, t, key)``
(grad already multiplied by ``rescale_grad`` and clipped to ``clip_gradient``); where
MXNet has an update op, ``step`` calls that op's rule
(``gluonjax._ops.defs.optimizer_ops``), so each update's math exists once.
The Trainer applies every parameter's rule inside ONE ``jax.jit`` call per step;
``update(index, weight, grad, state)`` runs the same rule eagerly for code that
drives optimizers by hand (MXNet's Updater style).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .._caches import PROCESS
from .._ops.defs.optimizer_ops import clip
from ..base import ArgumentTypeError, InvalidArgumentError, MXNetError
from ..util import is_np_array

__all__ = ["Optimizer", "register", "create", "preprocess_grad", "LRSchedulerWarning"]


class LRSchedulerWarning(MXNetError, UserWarning):
    """``set_learning_rate`` on an optimizer driven by an lr_scheduler (MXNet raises a
    UserWarning there)."""


def preprocess_grad(grad, rescale_grad, clip_gradient):
    """MXNet's common first step: ``clip(rescale_grad * grad, -c, c)`` (``c >= 0``)."""
    return clip(grad * rescale_grad, clip_gradient)


class Optimizer:
    """Base class; subclasses define ``create_state`` and ``step``.

    Parameters
    ----------
    learning_rate : float, default 0.01
    wd : float, default 0
        Weight decay (L2 penalty), scaled per parameter by its ``wd_mult``.
    rescale_grad : float, default 1
        Gradients are multiplied by this (the Trainer sets ``1/batch_size``).
    clip_gradient : float, optional
        Clip gradients to ``[-clip_gradient, clip_gradient]`` after rescaling.
    lr_scheduler : LRScheduler, optional
    param_dict : dict, optional
        ``{index: Parameter}`` for per-parameter ``lr_mult``/``wd_mult``.
    """

    opt_registry: dict = {}
    #: True where MXNet updates only the stored rows of a row_sparse gradient when the
    #: optimizer's ``lazy_update`` is on (SGD, Adam): other rows and their states stay as
    #: they are (no weight decay, no momentum step)
    lazy_rows = False
    #: True where MXNet's rule clips inside the step (after adding ``wd * weight``:
    #: Adam, RMSProp, FTML, Adamax, Nadam) or needs the unclipped gradient (LARS).
    clip_in_step = False

    def __init__(
        self,
        rescale_grad=1.0,
        param_idx2name=None,
        wd=0.0,
        clip_gradient=None,
        learning_rate=None,
        lr_scheduler=None,
        sym=None,
        begin_num_update=0,
        multi_precision=False,
        param_dict=None,
        **kwargs,
    ):
        if kwargs:
            import difflib
            import inspect

            known = {
                n
                for c in type(self).__mro__
                if "__init__" in vars(c)
                for n in inspect.signature(vars(c)["__init__"]).parameters
            } - {"self", "kwargs"}
            hints = [
                f"{k!r} -> did you mean {m[0]!r}?"
                for k in sorted(kwargs)
                if (m := difflib.get_close_matches(k, sorted(known), n=1))
            ]
            raise ArgumentTypeError(
                f"{type(self).__name__}: unknown argument(s) {sorted(kwargs)}"
                + (f" ({'; '.join(hints)})" if hints else "")
                + f"; see help(mx.optimizer.{type(self).__name__})"
            )
        self.rescale_grad = rescale_grad
        self.lr = 0.01 if learning_rate is None else learning_rate
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is not None and learning_rate is not None:
            lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.clip_gradient = clip_gradient
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._index_update_count = {}
        self.multi_precision = multi_precision
        self.param_dict = param_dict or {}
        self.idx2name = dict(param_idx2name or {})
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.set_lr_mult({})
        self.set_wd_mult({})
        # MXNet's flag: states made for mx.np arrays are mx.np arrays (gluonjax makes
        # states of the weight's own class either way; kept for code that reads it)
        self.allow_np_array = is_np_array()

    @property
    def clip_gradient(self):
        return self._clip_gradient

    @clip_gradient.setter
    def clip_gradient(self, value):
        self._clip_gradient = None if value is None else float(value)

    def preprocess(self, grad, rescale_grad):
        """The gradient ``step`` receives: rescaled, and clipped unless the step clips."""
        return preprocess_grad(
            grad, rescale_grad, None if self.clip_in_step else self._clip_gradient
        )

    # ------------------------------------------------------------ MXNet surface
    @property
    def learning_rate(self):
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def set_learning_rate(self, lr):
        """Set the base learning rate (not allowed while an lr_scheduler drives it)."""
        if self.lr_scheduler is not None:
            raise LRSchedulerWarning(
                "LRScheduler of the optimizer has already been defined. Note that "
                "set_learning_rate can mutate the value of the learning rate of the optimizer "
                "only when the LRScheduler of the optimizer is undefined."
            )
        self.lr = lr

    def _sym_mults(self, key):
        if not self.sym_info:
            return {}
        attr, arg_names = self.sym_info
        return {n: float(attr[n][key]) for n in arg_names if key in attr.get(n, {})}

    def set_lr_mult(self, args_lr_mult):
        """Per-parameter lr multipliers by index or name (``sym``'s ``__lr_mult__`` first)."""
        self.lr_mult = self._sym_mults("__lr_mult__")
        self.lr_mult.update(args_lr_mult)

    def _no_wd_name(self, name):
        return not (name.endswith("_weight") or name.endswith("_gamma"))

    def set_wd_mult(self, args_wd_mult):
        """Per-parameter wd multipliers; as in MXNet, names from ``param_idx2name`` not
        ending in ``_weight``/``_gamma`` default to 0."""
        self.wd_mult = {n: 0.0 for n in self.idx2name.values() if self._no_wd_name(n)}
        self.wd_mult.update(self._sym_mults("__wd_mult__"))
        self.wd_mult.update(args_wd_mult)

    def _update_count(self, index):
        indices = index if isinstance(index, (list, tuple)) else [index]
        counts, top = self._index_update_count, self.num_update
        for i in indices:
            c = counts[i] = counts.get(i, self.begin_num_update) + 1
            if c > top:
                top = c
        self.num_update = top

    def _mult(self, index, table, attr):
        p = self.param_dict.get(index)
        if p is not None:
            return getattr(p, attr)
        name = self.idx2name.get(index, index)
        return table.get(index, table.get(name, 1.0))

    def lrs_wds(self, indices):
        """Effective (lr, wd) arrays for ``indices`` (cached while nothing changes)."""
        lr, wd = self.learning_rate, self.wd
        cache = self.__dict__.setdefault("_lrs_wds_cache", {})
        # a Trainer's optimizer knows every Parameter, whose multipliers report writes
        fast = (lr, wd, PROCESS.mult_version, id(self.param_dict), tuple(indices))
        hit = cache.get(fast)
        if hit is not None:
            return hit
        pd = self.param_dict
        lm = tuple(self._mult(i, self.lr_mult, "lr_mult") for i in indices)
        wm = tuple(self._mult(i, self.wd_mult, "wd_mult") for i in indices)
        key = (lr, wd, lm, wm)
        hit = cache.get(key)
        if hit is None:
            if len(cache) > 64:
                cache.clear()
            # device arrays: a numpy argument would be copied in on every compiled call
            hit = cache[key] = (
                jax.device_put(np.array([lr * m for m in lm], np.float32)),
                jax.device_put(np.array([wd * m for m in wm], np.float32)),
            )
        if all(i in pd for i in indices):
            cache[fast] = hit
        return hit

    def rescale_array(self):
        """``rescale_grad`` as a device scalar (cached while it does not change)."""
        hit = self.__dict__.get("_rescale_cache")
        if hit is None or hit[0] != self.rescale_grad:
            hit = self._rescale_cache = (
                self.rescale_grad,
                jax.device_put(np.float32(self.rescale_grad)),
            )
        return hit[1]

    def _get_lr(self, index):
        return self.learning_rate * self._mult(index, self.lr_mult, "lr_mult")

    def _get_wd(self, index):
        return self.wd * self._mult(index, self.wd_mult, "wd_mult")

    def _get_lrs(self, indices):
        """Learning rates of several indices (MXNet's aggregated-update helper)."""
        return [self._get_lr(i) for i in indices]

    def _get_wds(self, indices):
        """Weight decays of several indices."""
        return [self._get_wd(i) for i in indices]

    # ------------------------------------------------------------ MXNet's NDArray states
    #: MXNet's ``create_state`` returns the lone state array itself (SGD's momentum...)
    _mx_single = False
    #: MXNet's multi-precision state is ``(state, weight32)`` (SGD, NAG, LARS); else
    #: ``(weight32, state)`` as its base class
    _mp_state_first = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # A class with its own pure ``step`` has a ``create_state`` making the rule's
        # internal state (a tuple of jax arrays). Called with an NDArray weight (MXNet's
        # API) it returns NDArrays in MXNet's layout instead.
        if "step" in cls.__dict__ and "create_state" in cls.__dict__:
            cls.create_state = _mx_create_state(cls.__dict__["create_state"])

    def _to_mx(self, internal):
        """The rule's state tuple in MXNet's layout: None, the lone array, or a tuple."""
        internal = tuple(internal)
        if not internal:
            return None
        if len(internal) == 1 and self._mx_single:
            return internal[0]
        return internal

    def _to_internal(self, state):
        """Inverse of :meth:`_to_mx` (an internal tuple passes unchanged)."""
        if state is None:
            return ()
        if isinstance(state, (tuple, list)):
            return tuple(state)
        return (state,)

    # ------------------------------------------------------------ the rule
    def create_state(self, index, weight):
        """Initial state for one weight: a tuple of jax arrays for a jax weight (the rule's
        state), MXNet's layout of NDArrays (None, an NDArray or a tuple) for an NDArray."""
        return None if _is_nd(weight) else ()

    def create_state_multi_precision(self, index, weight):
        """``create_state``, plus a float32 master copy of a float16 weight when
        ``multi_precision`` is on (MXNet's layout: see ``_mp_state_first``)."""
        if self.multi_precision and np.dtype(weight.dtype) == np.float16:
            w32 = weight.astype(np.float32)
            inner = self.create_state(index, w32)
            return (inner, w32) if self._mp_state_first else (w32, inner)
        return self.create_state(index, weight)

    def step(self, weight, grad, state, lr, wd, t, key):
        """Pure update rule; returns ``(new_weight, new_state)``."""
        raise NotImplementedError

    def needs_key(self):
        """True if ``step`` uses its random key (SGLD)."""
        return False

    def update(self, index, weight, grad, state):
        """Eager in-place update of NDArray ``weight`` (MXNet Updater style).

        ``state`` is what ``create_state`` returned (MXNet's layout or the rule's tuple);
        its arrays are updated in place. Lists of indices/weights/grads/states update
        each in turn.
        """
        if isinstance(index, (list, tuple)):
            for i, w, g, s in zip(index, weight, grad, state, strict=True):
                self.update(i, w, g, s)
            return
        state = self._to_internal(state)
        self._update_count(index)
        # float32 values, as the fused update's (MXNet's kernels take C floats)
        lr, wd = (float(np.float32(v)) for v in (self._get_lr(index), self._get_wd(index)))
        t = self._index_update_count[index]
        g = self.preprocess(grad._data, float(np.float32(self.rescale_grad)))
        from .. import _rng as _random

        key = _random.next_key() if self.needs_key() else None
        old_state = _unwrap(state)
        new_w, new_state = self.step(weight._data, g, old_state, lr, wd, t, key)
        mask = self._lazy_mask(weight, grad)
        if mask is not None:  # rows the gradient does not store keep weight and state
            new_w = jnp.where(mask, new_w, weight._data)
            new_state = jax.tree_util.tree_map(
                lambda n, o: jnp.where(mask, n, o) if jnp.shape(n) == weight.shape else n,
                new_state,
                old_state,
            )
        weight._data = new_w.astype(weight.dtype)
        _write_state(state, new_state)

    def _lazy_mask(self, weight, grad):
        """The stored rows of a row_sparse ``grad`` as a broadcastable mask, when this
        update is lazy (see :attr:`lazy_rows`); else None."""
        if not (self.lazy_rows and getattr(self, "lazy_update", False)):
            return None
        if getattr(grad, "stype", "default") != "row_sparse" or weight.ndim == 0:
            return None
        keep = np.zeros(weight.shape[0], bool)
        keep[np.asarray(grad._pattern(), np.int64)] = True
        return jnp.asarray(keep.reshape((-1,) + (1,) * (weight.ndim - 1)))

    def update_multi_precision(self, index, weight, grad, state):
        """:meth:`update`, on the float32 master copy for float16 weights with
        ``multi_precision`` (the weight then gets the master copy cast back)."""
        if isinstance(index, (list, tuple)):
            for i, w, g, s in zip(index, weight, grad, state, strict=True):
                self.update_multi_precision(i, w, g, s)
            return
        if self.multi_precision and np.dtype(weight.dtype) == np.float16:
            inner, w32 = state if self._mp_state_first else (state[1], state[0])
            self.update(index, w32, grad.astype(np.float32), inner)
            weight._data = w32._data.astype(weight.dtype)
            return
        self.update(index, weight, grad, state)

    def __repr__(self):
        return f"{type(self).__name__}(learning_rate={self.lr}, wd={self.wd})"


def _is_nd(x):
    from ..ndarray.ndarray import NDArray

    return isinstance(x, NDArray)


def _mx_create_state(fn):
    def create_state(self, index, weight):
        if not _is_nd(weight):
            return fn(self, index, weight)
        from ..ndarray.ndarray import NDArray

        internal = fn(self, index, weight._data)
        as_nd = jax.tree_util.tree_map(lambda a: NDArray(jax.numpy.asarray(a)), tuple(internal))
        return self._to_mx(as_nd)

    create_state.__name__ = fn.__name__
    create_state.__doc__ = fn.__doc__
    create_state.__wrapped__ = fn
    return create_state


def _unwrap(state):
    return jax.tree_util.tree_map(
        lambda s: getattr(s, "_data", s), state, is_leaf=lambda s: hasattr(s, "_data")
    )


def _write_state(state, new):
    for old, n in zip(
        jax.tree_util.tree_leaves(state, is_leaf=lambda s: hasattr(s, "_data")),
        jax.tree_util.tree_leaves(new),
    ):
        if hasattr(old, "_data"):
            old._data = n


def register(klass):
    """Register an Optimizer subclass under its lower-cased class name."""
    name = klass.__name__.lower()
    Optimizer.opt_registry[name] = klass
    return klass


def create(name, **kwargs):
    """An optimizer by MXNet name (``'sgd'``, ``'adam'``...) or an instance (returned)."""
    if isinstance(name, Optimizer):
        if kwargs:
            raise MXNetError("optimizer_params must be None when an Optimizer instance is given")
        return name
    key = str(name).lower()
    if key not in Optimizer.opt_registry:
        raise InvalidArgumentError(
            f"unknown optimizer {name!r}; known: {sorted(Optimizer.opt_registry)}"
        )
    return Optimizer.opt_registry[key](**kwargs)
