"""Initializers built from others: Mixed (by name pattern) and Load (from saved arrays)."""

from __future__ import annotations

import json
import logging
import re

import numpy as np

from ..base import ArgumentTypeError
from .core import Initializer
from .registry import create, register
from .util import InitializerError, _assign

__all__ = ["Mixed", "Load"]


@register
class Mixed(Initializer):
    """Route each parameter to the first initializer whose pattern matches its name.

    Patterns are regular expressions matched at the start of the name
    (``re.match``); a name that matches none raises :class:`InitializerError`,
    so end the list with ``'.*'`` for a default. As in MXNet, the chosen
    initializer is called with the name, so its own name rules still apply
    (a ``..._bias`` routed to ``Constant(2)`` gets 0).

    Parameters
    ----------
    patterns : list of str
        Regular expressions.
    initializers : list of Initializer or str
        One initializer (or name/``dumps()`` string) per pattern.

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax import initializer as init
    >>> mixed = init.Mixed(["conv.*", ".*"], [init.Constant(2), init.One()])
    >>> c, w = mx.nd.zeros((2,)), mx.nd.zeros((2,))
    >>> mixed("conv0_weight", c); mixed("fc_weight", w)
    >>> c.asnumpy().tolist(), w.asnumpy().tolist()
    ([2.0, 2.0], [1.0, 1.0])
    """

    def __init__(self, patterns, initializers):
        patterns, initializers = list(patterns), list(initializers)
        if len(patterns) != len(initializers):
            raise InitializerError(
                f"Mixed needs one initializer per pattern, got {len(patterns)} patterns "
                f"and {len(initializers)} initializers"
            )
        inits = [create(i) for i in initializers]
        super().__init__(patterns=patterns, initializers=[i.dumps() for i in inits])
        self.map = list(zip([re.compile(p) for p in patterns], inits, strict=True))

    def _route(self, name):
        for prog, init in self.map:
            if prog.match(name):
                return init
        raise InitializerError(
            f"Parameter name {str(name)!r} did not match any pattern of Mixed "
            f"{[p.pattern for p, _ in self.map]}; add a '.*' pattern at the end with a "
            "default initializer."
        )

    def __call__(self, name, arr):
        self._route(name)(name, arr)

    def _init_weight(self, name, arr):  # Mixed given as a parameter's own init
        self._route(name)._init_weight(name, arr)


@register
class Load(Initializer):
    """Fill parameters from saved arrays, by name; others go to ``default_init``.

    ``'arg:'``/``'aux:'`` prefixes of the saved names are dropped.

    Parameters
    ----------
    param : str or dict of str to NDArray
        A file written by ``gluonjax.nd.save`` (read with ``gluonjax.nd.load``),
        or a dict of name -> NDArray / array.
    default_init : Initializer, optional
        For names not in ``param``; without one such names raise an error.
    verbose : bool, default False
        Log each initialization.

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax import initializer as init
    >>> loader = init.Load({"arg:fc_weight": mx.nd.ones((2,))}, default_init=init.Zero())
    >>> w, b = mx.nd.zeros((2,)), mx.nd.ones((2,))
    >>> loader("fc_weight", w); loader("fc_bias", b)
    >>> w.asnumpy().tolist(), b.asnumpy().tolist()
    ([1.0, 1.0], [0.0, 0.0])
    """

    def __init__(self, param, default_init=None, verbose=False):
        fname = param if isinstance(param, str) else None
        if fname is not None:
            from ..ndarray import load

            param = load(fname)
        if not isinstance(param, dict):
            raise InitializerError(
                "Load needs a dict of name -> array (or a file holding one), "
                f"got {type(param).__name__}"
            )
        if isinstance(default_init, (str, dict)):
            default_init = create(default_init)
        if default_init is not None and not callable(default_init):
            raise ArgumentTypeError(f"default_init must be an initializer, got {default_init!r}")
        super().__init__(
            param=fname,
            default_init=default_init.dumps() if isinstance(default_init, Initializer) else None,
            verbose=verbose,
        )
        self.param = {(k[4:] if k.startswith(("arg:", "aux:")) else k): v for k, v in param.items()}
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name, arr):
        self._load(name, arr, False)

    def _init_weight(self, name, arr):  # Load given as a parameter's own init
        self._load(name, arr, True)

    def _load(self, name, arr, explicit):
        if name in self.param:
            value = self.param[name]
            shape = tuple(value.shape) if hasattr(value, "shape") else np.shape(value)
            if shape != arr.shape:
                raise InitializerError(
                    f"Parameter {str(name)!r} cannot be initialized from loading: shape "
                    f"mismatch, target {arr.shape} vs loaded {shape}"
                )
            _assign(arr, value)
            if self.verbose:
                logging.info("Initialized %s by loading", name)
            return
        if self.default_init is None:
            raise InitializerError(
                f"Cannot initialize {str(name)!r}: not found in the loaded parameters "
                f"({len(self.param)} names) and no default_init was given"
            )
        if explicit and isinstance(self.default_init, Initializer):
            self.default_init._init_weight(name, arr)
        else:
            self.default_init(name, arr)
        if self.verbose:
            logging.info("Initialized %s by default", name)

    def dumps(self):
        """JSON of a Load built from a file name (a dict of arrays cannot be written)."""
        if self._kwargs["param"] is None:
            raise InitializerError("a Load built from a dict of arrays cannot be dumped")
        return json.dumps(["load", self._kwargs])

    def __eq__(self, other):
        if self._kwargs["param"] is None:
            return self is other
        return super().__eq__(other)

    __hash__ = None
