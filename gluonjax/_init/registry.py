"""The initializer registry: ``register``, ``alias`` and ``create``."""

from __future__ import annotations

import json
import warnings

from ..base import ArgumentTypeError
from .util import InitializerError

__all__ = ["register", "alias", "create"]

_REGISTRY: dict[str, type] = {}


def _register(klass, name=None):
    from .core import Initializer

    if not (isinstance(klass, type) and issubclass(klass, Initializer)):
        raise ArgumentTypeError(f"only Initializer subclasses can be registered, got {klass!r}")
    name = (name or klass.__name__).lower()
    if name in _REGISTRY and _REGISTRY[name] is not klass:
        warnings.warn(
            f"initializer {klass.__module__}.{klass.__name__} registered as {name!r} replaces "
            f"{_REGISTRY[name].__module__}.{_REGISTRY[name].__name__}",
            UserWarning,
            stacklevel=3,
        )
    _REGISTRY[name] = klass
    return klass


def register(klass):
    """Class decorator: make ``create(klass.__name__.lower())`` build ``klass``.

    Parameters
    ----------
    klass : type
        A subclass of :class:`Initializer`.

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax import initializer as init
    >>> @init.register
    ... @init.alias("fives")
    ... class FiveInit(init.Initializer):
    ...     def _init_weight(self, _, arr):
    ...         arr[:] = 5
    >>> w = mx.nd.zeros((2,))
    >>> init.create("fives")(init.InitDesc("w_weight"), w)
    >>> w.asnumpy().tolist()
    [5.0, 5.0]
    """
    return _register(klass)


def alias(*aliases):
    """Class decorator: register ``klass`` under extra (lower-cased) names.

    Parameters
    ----------
    *aliases : str
        The names.
    """

    def reg(klass):
        for name in aliases:
            _register(klass, name)
        return klass

    return reg


def create(*args, **kwargs):
    """An initializer from a name, a ``dumps()`` string, a dict or an instance.

    Parameters
    ----------
    initializer : str, dict or Initializer
        A registered name (case-insensitive: ``'xavier'``, ``'zeros'``...), a JSON
        ``'[name, {kwargs}]'`` string, or an instance (returned as is).
    *args, **kwargs
        Arguments for the constructor when a name is given.

    Examples
    --------
    >>> from gluonjax import initializer as init
    >>> init.create("xavier", magnitude=2)
    Xavier(rnd_type='uniform', factor_type='avg', magnitude=2)
    >>> init.create('["normal", {"sigma": 0.5}]')
    Normal(sigma=0.5)
    """
    if args:
        name, args = args[0], args[1:]
    elif "initializer" in kwargs:
        name = kwargs.pop("initializer")
    else:
        raise InitializerError("create() needs an initializer name, JSON string or instance")
    from .core import Initializer

    if isinstance(name, Initializer):
        if args or kwargs:
            raise InitializerError(f"{name!r} is already an instance; extra arguments are invalid")
        return name
    if isinstance(name, dict):
        return create(**name)
    if not isinstance(name, str):
        raise ArgumentTypeError(
            "initializer must be a name, a JSON string or an Initializer, "
            f"got {type(name).__name__}"
        )
    text = name.strip()
    if text.startswith(("[", "{")):
        if args or kwargs:
            raise InitializerError("a JSON initializer string takes no extra arguments")
        spec = json.loads(text)
        return create(spec[0], **spec[1]) if isinstance(spec, list) else create(**spec)
    key = text.lower()
    if key not in _REGISTRY:
        raise InitializerError(
            f"{name!r} is not a registered initializer (known: {', '.join(sorted(_REGISTRY))}); "
            "register new ones with gluonjax.initializer.register"
        )
    return _REGISTRY[key](*args, **kwargs)
