"""InitDesc and the Initializer base class (name-based dispatch)."""

from __future__ import annotations

import json
import logging

import numpy as np

from ..base import ArgumentTypeError
from .registry import create
from .util import InitializerError, _assign, _check_array, _json_default, _sample

__all__ = ["InitDesc", "Initializer"]


class InitDesc(str):
    """The name of a parameter, with the attributes an initializer may look at.

    Parameters
    ----------
    name : str
        Name of the parameter.
    attrs : dict, optional
        Attributes; ``attrs['__init__']`` (an initializer, its name or its
        :meth:`Initializer.dumps` string) overrides the name-based choice.
    global_init : Initializer, optional
        The initializer to fall back to.

    Examples
    --------
    >>> from gluonjax import initializer as init
    >>> d = init.InitDesc("fc1_weight", {"__init__": "zeros"})
    >>> d, d.attrs, d.global_init
    ('fc1_weight', {'__init__': 'zeros'}, None)
    """

    def __new__(cls, name, attrs=None, global_init=None):
        ret = super().__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


# ----------------------------------------------------------------------------- base class
# (suffix, method, label): checked in this order for an InitDesc without '__init__'.
_DESC_RULES = (
    ("weight", "_init_weight"),
    ("bias", "_init_bias"),
    ("gamma", "_init_gamma"),
    ("beta", "_init_beta"),
    ("moving_mean", "_init_zero"),
    ("running_mean", "_init_zero"),
    ("moving_var", "_init_one"),
    ("running_var", "_init_one"),
    ("moving_inv_var", "_init_zero"),
    ("moving_avg", "_init_zero"),
    ("min", "_init_zero"),
    ("max", "_init_one"),
    ("weight_quantize", "_init_quantized_weight"),
    ("bias_quantize", "_init_quantized_bias"),
)
# order MXNet uses for a plain-string name (after the upsampling/stn_loc prefixes)
_LEGACY_RULES = (
    ("bias", "_init_bias"),
    ("gamma", "_init_gamma"),
    ("beta", "_init_beta"),
    ("weight", "_init_weight"),
    ("moving_mean", "_init_zero"),
    ("running_mean", "_init_zero"),
    ("moving_var", "_init_one"),
    ("running_var", "_init_one"),
    ("moving_inv_var", "_init_zero"),
    ("moving_avg", "_init_zero"),
    ("min", "_init_zero"),
    ("max", "_init_one"),
)


def _norm_stat(x):
    v = x.asnumpy().astype(np.float64).ravel()
    return str(float(np.linalg.norm(v) / np.sqrt(max(v.size, 1))))


class Initializer:
    """Base class of the initializers: ``init(desc, arr)`` fills ``arr`` in place.

    The parameter's name picks what is filled: ``desc.attrs['__init__']`` if
    given, else names ending in ``weight`` get :meth:`_init_weight` (what the
    subclass defines), ``bias``/``beta``/``moving_mean``/``running_mean``/``min``
    get 0, ``gamma``/``moving_var``/``running_var``/``max`` get 1; any other
    name raises :class:`InitializerError` (an ``MXNetError``).

    Parameters
    ----------
    **kwargs
        The constructor arguments, kept for :meth:`dumps`, ``repr`` and ``==``.

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax import initializer as init
    >>> b = mx.nd.ones((3,))
    >>> init.Uniform()(init.InitDesc("fc_bias"), b)
    >>> b.asnumpy().tolist()
    [0.0, 0.0, 0.0]
    """

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def set_verbosity(self, verbose=False, print_func=None):
        """Log a statistic of every array this initializer fills.

        Parameters
        ----------
        verbose : bool
            Switch logging (``logging.info``) on or off.
        print_func : callable, optional
            NDArray -> str; default: ``norm(x) / sqrt(x.size)``.

        Returns
        -------
        Initializer
            ``self``.
        """
        self._verbose = verbose
        self._print_func = print_func if print_func is not None else _norm_stat
        return self

    def _verbose_print(self, desc, init, arr):
        if self._verbose and self._print_func:
            logging.info("Initialized %s as %s: %s", desc, init, self._print_func(arr))

    def dumps(self):
        """The initializer as a JSON string ``[name, kwargs]`` that :func:`create` reads.

        Examples
        --------
        >>> from gluonjax import initializer as init
        >>> init.Normal(0.5).dumps()
        '["normal", {"sigma": 0.5}]'
        """
        return json.dumps([type(self).__name__.lower(), self._kwargs], default=_json_default)

    def __call__(self, desc, arr):
        """Fill ``arr`` (an NDArray) in place; ``desc`` is an :class:`InitDesc` or a name."""
        if not isinstance(desc, InitDesc):
            self._legacy_init(desc, arr)
            return
        _check_array(arr)
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get("__init__", "")
        if init:
            create(init)._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
            return
        self._dispatch(desc, arr, _DESC_RULES)

    def _dispatch(self, name, arr, rules):
        for suffix, method in rules:
            if name.endswith(suffix):
                getattr(self, method)(name, arr)
                self._verbose_print(name, suffix, arr)
                return
        self._init_default(name, arr)

    def _legacy_init(self, name, arr):
        if not isinstance(name, str):
            raise ArgumentTypeError(
                f"the parameter name must be a string, got {type(name).__name__}"
            )
        _check_array(arr)
        if name.startswith("upsampling"):
            self._init_bilinear(name, arr)
        elif name.startswith("stn_loc") and name.endswith("weight"):
            self._init_zero(name, arr)
        elif name.startswith("stn_loc") and name.endswith("bias"):
            self._init_loc_bias(name, arr)
        else:
            self._dispatch(name, arr, _LEGACY_RULES)

    # ---------------------------------------------------------------- fills
    def _init_bilinear(self, _, arr):
        from .simple import bilinear_kernel

        _assign(arr, bilinear_kernel(arr.shape))

    def _init_loc_bias(self, _, arr):
        if arr.shape != (6,):
            raise InitializerError(f"an stn_loc bias must have shape (6,), got {arr.shape}")
        _assign(arr, np.array([1.0, 0, 0, 0, 1.0, 0]))

    def _init_zero(self, _, arr):
        _assign(arr, 0.0)

    def _init_one(self, _, arr):
        _assign(arr, 1.0)

    _init_bias = _init_beta = _init_zero
    _init_gamma = _init_one

    def _init_quantized_bias(self, _, arr):
        _assign(arr, 0)

    def _init_quantized_weight(self, _, arr):
        _assign(arr, _sample("int8", arr.shape, np.int8).astype(arr.dtype))

    def _init_weight(self, name, arr):
        raise NotImplementedError(f"{type(self).__name__} must define _init_weight")

    def _init_default(self, name, _):
        raise InitializerError(
            f"Unknown initialization pattern for {str(name)!r}: only names ending in 'weight', "
            "'bias' (0), 'gamma' (1), 'beta' (0), 'moving_mean'/'running_mean' (0), "
            "'moving_var'/'running_var' (1), 'min' (0) or 'max' (1) get a default. Give this "
            "parameter its own initializer, e.g. Parameter(..., init=mx.init.Zero()) or "
            "InitDesc(name, attrs={'__init__': mx.init.Zero().dumps()})."
        )

    def __eq__(self, other):
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    __hash__ = None  # as MXNet: equal by value, so not hashable

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args})"
