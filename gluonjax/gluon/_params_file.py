"""``save_parameters`` / ``load_parameters``: structural names, MXNet's .params format.

Files hold ``{structural name: array}`` (``0.weight``, ``fc1.bias``), so a file
saved from one instance loads into a fresh instance of the same architecture,
whatever its MXNet-style prefixes are. Files whose keys carry MXNet's
``arg:``/``aux:`` markers (from ``export``) or display names (from
``ParameterDict.save`` / MXNet's legacy ``save_params``) load too.
"""

from __future__ import annotations

from ..base import FileFormatError


def save_structural(block, filename, deduplicate=False):
    """Write every parameter of ``block`` under its structural name (atomically)."""
    from ..ndarray import save

    params = block._collect_params_with_prefix()
    arrays, seen = {}, set()
    for name, p in params.items():
        if deduplicate and id(p) in seen:
            continue
        seen.add(id(p))
        arrays[name] = p._reduce()
    save(filename, arrays)


def _strip(key):
    return key.split(":", 1)[1] if key.startswith(("arg:", "aux:")) else key


def load_structural(
    block,
    filename,
    ctx=None,
    allow_missing=False,
    ignore_extra=False,
    cast_dtype=False,
    dtype_source="current",
):
    """Load ``filename`` into ``block``; checks everything before changing anything."""
    from ..ndarray import load
    from ._loading import apply_loaded

    loaded = load(filename)
    if not isinstance(loaded, dict):
        raise FileFormatError(f"'{filename}' holds an unnamed list of arrays, not parameters")
    loaded = {_strip(k): v for k, v in loaded.items()}
    structural = block._collect_params_with_prefix()
    if loaded and not any("." in k for k in loaded) and not any(k in structural for k in loaded):
        # display names (ParameterDict.save / export), or MXNet's legacy save_params,
        # which strips the block's prefix: restore it when the names then match
        by_name = {p.name: p for p in structural.values()}
        if not any(k in by_name for k in loaded):
            loaded = {block.prefix + k: v for k, v in loaded.items()}
        apply_loaded(
            by_name, loaded, filename, allow_missing, ignore_extra, cast_dtype, dtype_source, ctx
        )
        return
    # a parameter shared under several structural names is satisfied by any of them
    present = {id(p) for k, p in structural.items() if k in loaded}
    wanted = {k: p for k, p in structural.items() if k in loaded or id(p) not in present}
    unique, seen = {}, set()
    for k, p in wanted.items():
        if k in loaded or id(p) not in seen:
            unique[k] = p
            seen.add(id(p))
    apply_loaded(
        unique, loaded, filename, allow_missing, ignore_extra, cast_dtype, dtype_source, ctx
    )
