"""``nd.contrib`` / ``sym.contrib``: control flow and the registry's ``_contrib_*`` ops."""

from __future__ import annotations

import types

from ._control_flow import cond, foreach, while_loop


def prefixed(parent, prefix, sub, doc):
    """A submodule ``parent.<sub>`` holding ``parent``'s ``<prefix>*`` ops without the prefix.

    ``nd.image`` / ``sym.image`` are made this way from the ``_image_*`` ops.
    """
    import sys

    mod = types.ModuleType(f"{parent.__name__}.{sub}", doc)
    for attr in dir(parent):
        if attr.startswith(prefix):
            setattr(mod, attr[len(prefix) :], getattr(parent, attr))
    sys.modules[mod.__name__] = mod
    return mod


def namespace(parent, name):
    """A ``contrib`` module for ``parent`` (nd or sym): control flow + ``_contrib_*`` ops."""
    mod = types.ModuleType(f"{parent.__name__}.contrib", "Contrib operators and control flow.")
    mod.cond, mod.foreach, mod.while_loop = cond, foreach, while_loop
    for attr in dir(parent):
        if attr.startswith("_contrib_"):
            setattr(mod, attr[len("_contrib_") :], getattr(parent, attr))
    return mod
