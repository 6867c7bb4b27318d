"""ParameterDict: an ordered name -> Parameter mapping with a prefix (MXNet 1.x)."""

from __future__ import annotations

import re
from collections import OrderedDict

import numpy as np

from ..base import MXNetError
from .parameter import Constant, Parameter

__all__ = ["ParameterDict"]


class ParameterDict:
    """Parameters of a block, keyed by their display names.

    Parameters
    ----------
    prefix : str
        Prepended to names given to :meth:`get`.
    shared : ParameterDict, optional
        Look here first, so blocks can share parameters.
    """

    def __init__(self, prefix="", shared=None):
        self._prefix = prefix
        self._params = OrderedDict()
        self._shared = shared

    def __repr__(self):
        body = "\n".join(f"  {p!r}" for p in self._params.values())
        return f"{self._prefix} (\n{body}\n)"

    def __getitem__(self, key):
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __contains__(self, key):
        return key in self._params

    def __len__(self):
        return len(self._params)

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    def items(self):
        return self._params.items()

    @property
    def prefix(self):
        return self._prefix

    def _get_impl(self, name):
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._params[name]
        return None

    def get(self, name, **kwargs):
        """The parameter ``prefix + name``, created with ``kwargs`` if it does not exist.

        An existing parameter's attributes must agree with ``kwargs``; unknown (0)
        dimensions of its shape are filled in from ``shape``.
        """
        name = self._prefix + name
        param = self._get_impl(name)
        if param is None:
            param = self._params[name] = Parameter(name, **kwargs)
            return param
        for k, v in kwargs.items():
            if k == "shape" and v is not None:
                param.shape = tuple(v) if not isinstance(v, int) else (v,)
            elif k == "dtype" and v is not None:
                if np.dtype(v) != np.dtype(param.dtype):
                    raise MXNetError(
                        f"Parameter '{name}' exists with dtype {np.dtype(param.dtype).name}, "
                        f"requested {np.dtype(v).name}"
                    )
            elif hasattr(param, k) and v is not None and k != "init":
                existing = getattr(param, k)
                if existing is not None and existing != v:
                    raise MXNetError(
                        f"Cannot retrieve Parameter '{name}' because desired attribute does not "
                        f"match stored for attribute '{k}': desired {v!r} vs stored {existing!r}"
                    )
        return param

    def get_constant(self, name, value=None):
        """The constant ``prefix + name`` (created from ``value`` if new)."""
        full = self._prefix + name
        param = self._get_impl(full)
        if param is None:
            if value is None:
                raise MXNetError(f"No constant named '{full}'; give value= to create it")
            param = self._params[full] = Constant(full, value)
        elif not isinstance(param, Constant):
            raise MXNetError(f"Parameter '{full}' exists but is not a Constant")
        return param

    def update(self, other):
        """Add ``other``'s parameters (a different object under a used name is an error)."""
        clash = [k for k, v in other.items() if k in self._params and self._params[k] is not v]
        if clash:
            raise MXNetError(
                f"Cannot update self with other because they have different Parameters with the "
                f"same name {clash}; nothing was changed"
            )
        for k, v in other.items():
            self._params[k] = v

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False):
        """Initialize every parameter (``init`` is the default for those without their own)."""
        from .. import initializer as _init

        if init is None:
            init = _init.Uniform()
        for p in self.values():
            p.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self):
        for p in self.values():
            p.zero_grad()

    def reset_ctx(self, ctx):
        for p in self.values():
            p.reset_ctx(ctx)

    def list_ctx(self):
        out = []
        for p in self.values():
            for c in p.list_ctx():
                if c not in out:
                    out.append(c)
        return out

    def setattr(self, name, value):
        """Set attribute ``name`` (e.g. ``grad_req``, ``lr_mult``) on every parameter."""
        for p in self.values():
            setattr(p, name, value)

    def select(self, pattern):
        """A new ParameterDict with the parameters whose names match the regex(es)."""
        pats = pattern.split("|") if isinstance(pattern, str) else list(pattern)
        regex = re.compile("|".join(f"(?:{p})" for p in pats))
        out = ParameterDict(self._prefix)
        out._params.update((k, v) for k, v in self.items() if regex.match(k))
        return out

    def save(self, filename, strip_prefix=""):
        """Save in MXNet's .params format under display names (minus ``strip_prefix``)."""
        from ..ndarray import save

        arrays = {}
        for name, p in self.items():
            if strip_prefix and not name.startswith(strip_prefix):
                raise MXNetError(
                    f"Prefix '{strip_prefix}' is to be stripped before saving, but Parameter "
                    f"'{name}' does not start with it"
                )
            arrays[name[len(strip_prefix) :]] = p._reduce()
        save(filename, arrays)

    def load(
        self,
        filename,
        ctx=None,
        allow_missing=False,
        ignore_extra=False,
        restore_prefix="",
        cast_dtype=False,
        dtype_source="current",
    ):
        """Load a file saved by :meth:`save` (or MXNet); all-or-nothing."""
        from ..ndarray import load
        from ._loading import apply_loaded

        loaded = load(filename)
        if not isinstance(loaded, dict):
            raise MXNetError(f"'{filename}' holds an unnamed list of arrays, not parameters")
        loaded = {restore_prefix + k.split(":", 1)[-1]: v for k, v in loaded.items()}
        apply_loaded(
            dict(self.items()),
            loaded,
            filename,
            allow_missing,
            ignore_extra,
            cast_dtype,
            dtype_source,
            ctx,
        )
