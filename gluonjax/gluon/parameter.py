"""Parameter and Constant: named, lazily-initialised arrays owned by blocks.

A Parameter keeps ONE NDArray (a ``ParamArray``) for its whole life (``set_data``
and optimizer updates replace the jax array inside it), so compiled blocks can
hold on to it, and know from ``_param_array.VERSION`` when any value changed.
"""

from __future__ import annotations

import jax
import numpy as np

from .._caches import PROCESS
from .._ops.registry import dtype_of
from .._tape import state as _trace
from ..base import DeferredInitializationError, MXNetError, ShapeError
from ..context import current_context
from ..ndarray.ndarray import NDArray
from ..util import is_np_array
from . import _np_mode as _npm
from ._param_ctx import ContextParameterMixin, as_context_list
from ._param_sparse import SparseParameterMixin, check_stypes

__all__ = ["Parameter", "Constant", "DeferredInitializationError"]


class _Multiplier:
    """``Parameter.lr_mult``/``wd_mult``: setting one bumps ``PROCESS.mult_version``, so
    optimizers rebuild their per-parameter rates only after a change."""

    def __init__(self, what):
        self.__doc__ = f"Multiplier of the {what} for this parameter."

    def __set_name__(self, owner, name):
        self.key = "_" + name

    def __get__(self, obj, owner=None):
        return self if obj is None else obj.__dict__[self.key]

    def __set__(self, obj, value):
        obj.__dict__[self.key] = value
        PROCESS.mult_version += 1


def _merge_shape(name, old, new):
    """Fill unknown dims of ``old`` from ``new``; error if known dims disagree.

    0 marks an unknown dimension (and -1, its spelling under MXNet's NumPy shape semantics).
    """
    if old is None:
        return tuple(new)
    if len(old) != len(new) or any(o > 0 and n > 0 and o != n for o, n in zip(old, new)):
        raise ShapeError(
            f"Parameter '{name}': shape {tuple(new)} does not match the declared shape "
            f"{tuple(old)} (0 marks an unknown dimension)"
        )
    return tuple(o if o > 0 else n for o, n in zip(old, new))


class Parameter(SparseParameterMixin, ContextParameterMixin):
    """A weight of a Block.

    Parameters
    ----------
    name : str
        Display name (MXNet 1.x style, e.g. ``dense0_weight``).
    grad_req : {'write', 'add', 'null'}
    shape : tuple of int, optional
        0 marks a dimension inferred at the first forward (deferred init).
    dtype : str or numpy dtype, default float32
    lr_mult, wd_mult : float
        Multipliers applied by the Trainer.
    init : Initializer or str, optional
        This parameter's own initializer (wins over the one given to initialize()).
    allow_deferred_init : bool
    differentiable : bool
        False makes grad_req 'null'.
    stype, grad_stype : {'default', 'row_sparse', 'csr'}
        Storage types of the data and of the gradient (see ``row_sparse_data``).

    Examples
    --------
    >>> import gluonjax as mx
    >>> p = mx.gluon.Parameter('w', shape=(2, 3), init='ones')
    >>> p.initialize()
    >>> float(p.data().asnumpy().sum())
    6.0
    """

    def __init__(
        self,
        name,
        grad_req="write",
        shape=None,
        dtype=np.float32,
        lr_mult=1.0,
        wd_mult=1.0,
        init=None,
        allow_deferred_init=False,
        differentiable=True,
        stype="default",
        grad_stype="default",
    ):
        check_stypes(name, stype, grad_stype)
        self._stype, self._grad_stype = stype, grad_stype
        self.name = name
        self._shape = (
            None
            if shape is None
            else (
                (int(shape),)
                if isinstance(shape, (int, np.integer))
                else tuple(int(s) for s in shape)
            )
        )
        self.dtype = dtype_of(dtype).type
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.init = init
        self.allow_deferred_init = allow_deferred_init
        self._differentiable = differentiable
        self._grad_req = None
        self._var = None
        self._data = None
        self._deferred = None  # (init, ctx, default_init) while waiting for a shape
        self.grad_req = grad_req if differentiable else "null"
        self._grad_token = None  # the gradient array no backward has written (Trainer staleness)

    def __repr__(self):
        return f"Parameter {self.name} (shape={self.shape}, dtype={self.dtype})"

    # ------------------------------------------------------------ MXNet's private views
    @property
    def _grad(self):
        """MXNet's per-context gradient list: ``None`` while uninitialized or when
        ``grad_req`` is 'null' (MXNet 1.x code reads it)."""
        if self._data is None or self._data._grad is None:
            return None
        return [a._grad for a in self._arrays()]

    # ------------------------------------------------------------ attributes
    @property
    def shape(self):
        return self._shape

    @shape.setter
    def shape(self, new):
        self._shape = _merge_shape(self.name, self._shape, new)

    lr_mult = _Multiplier("learning rate")
    wd_mult = _Multiplier("weight decay")

    @property
    def grad_req(self):
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        if req not in ("write", "add", "null"):
            raise MXNetError(
                f"Parameter '{self.name}': grad_req must be write/add/null, got {req!r}"
            )
        if not self._differentiable:
            req = "null"
        self._grad_req = req
        if self._data is not None:
            self._attach(req)

    def _attach(self, req):
        for k, d in enumerate(self._arrays()):
            if req == "null":
                d._grad, d._grad_req = None, "null"
                continue
            g = d._grad
            if g is None or g.shape != d.shape or g.stype != self._grad_stype:
                d._grad = self._new_grad(d.shape, d.dtype)
                d._grad._ctx = d._ctx
                if k == 0:
                    self._grad_token = d._grad._data  # not "fresh" until a backward writes it
            d._grad_req = req
        if self._copies and req != "null":
            self._place_grads()

    def _shape_known(self):
        return self._shape is not None and all(d > 0 for d in self._shape)

    # ------------------------------------------------------------ initialization
    def initialize(self, init=None, ctx=None, default_init=None, force_reinit=False):
        """Create the data now, or defer it until the shape is known.

        ``init`` (if given) wins, then this parameter's own ``init``, then
        ``default_init`` (``Uniform()`` by default), as in MXNet.
        """
        from .. import initializer as _init

        if self._data is not None and not force_reinit:
            import warnings

            warnings.warn(
                f"Parameter '{self.name}' is already initialized, ignoring. "
                f"Set force_reinit=True to re-initialize.",
                stacklevel=2,
            )
            return
        ctx = as_context_list(ctx)
        if default_init is None:
            default_init = _init.Uniform()
        chosen = (
            init if init is not None else (self.init if self.init is not None else default_init)
        )
        if not self._shape_known():
            if not self.allow_deferred_init:
                raise MXNetError(
                    f"Cannot initialize Parameter '{self.name}' because it has invalid shape "
                    f"{self.shape}. Give it a full shape, or allow_deferred_init=True."
                )
            self._deferred = (chosen, ctx, default_init)
            return
        self._init_now(chosen, ctx, default_init)

    def _init_now(self, init, ctx, default_init):
        from .. import initializer as _init

        arr = NDArray(np.zeros(self._shape, self.dtype))
        ini = _init.create(init if init is not None else default_init)
        ini._init_weight(_init.InitDesc(self.name), arr)  # MXNet: the chosen init fills it
        ctxs = as_context_list(ctx)
        if ctxs[0].device_type == "gpu":
            arr = arr.as_in_context(ctxs[0])
        self._ctx_list = ctxs
        self._deferred = None
        self._set_array(arr._data)

    def _set_array(self, value):
        """Point the parameter's arrays (one per context) at ``value`` (creating them once)."""
        if self._data is None:
            self._data = self._array_class()(value)
            self._sync_copies()
            self._attach(self._grad_req)
        else:
            self._data._data = value
            self._data._node = None
            if self._copies or self._ctx_list is not None:
                self._sync_copies()

    def _finish_deferred_init(self, shape=None):
        """Complete deferred initialization once the shape is known."""
        if shape is not None:
            self.shape = shape
        if self._deferred is None:
            return
        if not self._shape_known():
            raise DeferredInitializationError(
                f"Parameter '{self.name}' still has unknown shape {self.shape} after shape "
                f"inference; declare its full shape."
            )
        init, ctx, default_init = self._deferred
        self._init_now(init, ctx, default_init)

    # ------------------------------------------------------------ access
    def _check(self):
        if self._data is not None:
            return
        if self._deferred is not None:
            raise DeferredInitializationError(
                f"Parameter '{self.name}' has not been initialized yet because initialization "
                f"was deferred: its shape {self.shape} is only known after the first forward "
                f"pass. Run the block on an input first (net(x)), or give the layer its input "
                f"size (e.g. in_units=/in_channels=)."
            )
        raise MXNetError(
            f"Parameter '{self.name}' has not been initialized. Call net.initialize() "
            f"(or param.initialize()) before using it."
        )

    def data(self, ctx=None):
        """The parameter's NDArray on ``ctx`` (the traced value inside a hybridized forward).

        A ``row_sparse`` parameter is read with :meth:`row_sparse_data` instead, as in MXNet.
        """
        if self._stype != "default":
            self._refuse_dense_access(f"data() on ctx {ctx}")
        traced = _trace.lookup(self)
        if traced is not None:
            return traced
        self._check()
        arr = self._data if not self._copies and ctx is None else self._array_for(ctx)
        return _npm.param_view(arr) if is_np_array() else _npm.nd_param_view(arr)

    def list_data(self):
        """The arrays of every context, in ``list_ctx()`` order."""
        self._refuse_dense_access("list_data()")
        traced = _trace.lookup(self)
        if traced is not None:
            return [traced]
        self._check()
        if is_np_array():
            return [_npm.param_view(a) for a in self._arrays()]
        return self._arrays()

    def grad(self, ctx=None):
        """The gradient buffer on ``ctx`` (written by backward)."""
        self._check()
        arr = self._data if not self._copies and ctx is None else self._array_for(ctx, "grad")
        if arr._grad is None:
            raise MXNetError(
                f"Cannot get gradient array for Parameter '{self.name}' because grad_req='null'"
            )
        return _npm.np_view(arr.grad) if is_np_array() else arr.grad

    def list_grad(self):
        """The gradient buffers of every context, in ``list_ctx()`` order."""
        self._check()
        if self._data._grad is None:
            raise MXNetError(
                f"Cannot get gradient array for Parameter '{self.name}' because grad_req='null'"
            )
        if is_np_array():
            return [_npm.np_view(d.grad) for d in self._arrays()]
        return [d.grad for d in self._arrays()]

    def list_ctx(self):
        """The contexts this parameter is (or will be, when deferred) initialized on."""
        if self._data is None and self._deferred is not None:
            return list(as_context_list(self._deferred[1]))
        self._check()
        return list(self._ctx_list or [current_context()])

    def set_data(self, data):
        """Replace the values (same shape; a deferred parameter takes data's shape)."""
        raw = data._data if isinstance(data, NDArray) else np.asarray(data)
        self.shape = tuple(raw.shape)
        if self._data is None:
            if self._deferred is not None:
                self._deferred = None
        import jax.numpy as jnp

        self._set_array(jnp.asarray(raw, self.dtype))
        self._reset_trainer_kvstore()

    def zero_grad(self):
        if self._data is None or self._data._grad is None:
            return
        for k, d in enumerate(self._arrays()):
            g = d._grad
            g._data = np.zeros(g.shape, g.dtype)
            if k == 0:
                self._grad_token = g._data
        if self._copies:
            self._place_grads()

    def reset_ctx(self, ctx):
        """Move the parameter to ``ctx`` (a context or a list: one array per context)."""
        ctxs = as_context_list(ctx)
        if self._data is None:
            if self._deferred is not None:
                init, _, default_init = self._deferred
                self._deferred = (init, ctxs, default_init)
            self._ctx_list = ctxs
            return
        self._ctx_list = ctxs
        value = self._data._data
        self._data._data = jax.device_put(value, ctxs[0].jax_device)
        self._sync_copies()
        self._attach(self._grad_req)

    def cast(self, dtype):
        """Change the dtype of the data (and gradient)."""
        self.dtype = dtype_of(dtype).type
        if self._data is not None:
            self._set_array(self._data._data.astype(self.dtype))
            for d in self._arrays():
                if d._grad is not None:
                    d._grad = self._new_grad(d.shape, self.dtype)

    def var(self):
        """A symbol variable for this parameter (shape, dtype, multipliers attached)."""
        from ..symbol import var

        if self._var is None:
            self._var = var(
                self.name,
                shape=self.shape,
                dtype=self.dtype,
                lr_mult=self.lr_mult,
                wd_mult=self.wd_mult,
                # an Initializer object travels as its JSON (MXNet's __init__ attribute)
                init=self.init
                if isinstance(self.init, str) or hasattr(self.init, "dumps")
                else None,
                stype=None if self._stype == "default" else self._stype,
            )
        return self._var


class Constant(Parameter):
    """A parameter that is not trained (grad_req 'null'), holding ``value``."""

    def __init__(self, name, value):
        if isinstance(value, NDArray):  # keeps its dtype
            value = np.asarray(value._data)
        else:  # numpy arrays, lists and scalars become float32, as MXNet's nd.array makes them
            value = np.asarray(value, dtype=np.float32)
        from .. import initializer as _init

        super().__init__(
            name,
            grad_req="null",
            shape=value.shape,
            dtype=value.dtype,
            init=_init.Constant(value),
            differentiable=False,
        )
        self.value = value

    def __repr__(self):
        return f"Constant {self.name} (shape={self.shape}, dtype={self.dtype})"
