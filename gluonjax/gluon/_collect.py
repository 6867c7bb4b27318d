"""``Block.collect_params``: one ParameterDict of a block tree, names checked."""

from __future__ import annotations

import re

from ..base import DuplicateParameterError, InvalidArgumentError


def _where(path, block, local):
    child = f"child '{path}'" if path else "the block itself"
    return f"{type(block).__name__} with prefix {block.prefix!r} ({child}, parameter {local!r})"


def collect(root, select=None):
    """{display name: Parameter} of ``root`` and its descendants, optionally regex-selected.

    Raises :class:`DuplicateParameterError` when two different Parameters share a
    display name (MXNet refuses to merge them too), naming both blocks, and
    :class:`InvalidArgumentError` for a malformed ``select`` pattern.
    """
    pattern = None
    if select is not None:
        try:
            pattern = re.compile(select)
        except (re.error, TypeError) as err:
            raise InvalidArgumentError(
                f"collect_params: select={select!r} is not a valid regular expression "
                f"({err}); e.g. '.*weight|.*bias'"
            ) from None
    out, where = {}, {}
    for path, block, local, p in root._walk_params():
        if pattern is not None and not pattern.match(p.name):
            continue
        prev = out.get(p.name)
        if prev is None:
            out[p.name], where[p.name] = p, (path, block, local)
        elif prev is not p:
            raise DuplicateParameterError(
                f"collect_params of {type(root).__name__} '{root.name}': two different "
                f"Parameters are named '{p.name}': one of {_where(*where[p.name])} and one "
                f"of {_where(path, block, local)}. Give the blocks different prefixes "
                f"(prefix=...), or share one Parameter by passing params=... when building "
                f"the second block."
            )
    return out
