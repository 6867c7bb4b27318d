"""``Block.save(prefix)`` / ``Block.load(prefix)``: MXNet 1.9.1's model files.

``<prefix>-model.json`` records the block tree: for each block, in creation
order, its class name and index (``myblock0``, ``dense1``...), its name when
saved (``orig_name``), whether it was hybridized, and which child key
(``children``: child name -> key in its parent) each child had. The files load
in MXNet 1.9.1 too, and MXNet's load here (its saved graphs are not used).
``<prefix>-model.params`` holds the parameters under structural names.

``load`` is for a model built again by the same code: it walks the new tree in
the same order, gives each block its saved name back and re-keys the children
as they were, so the structural parameter names match the file, then loads the
parameters. Hybridized blocks are hybridized again (gluonjax traces them anew
on the next call: the saved graph is not needed, and none is written).
"""

from __future__ import annotations

import json
import os

from .._io.atomic import atomic_write
from ..base import FileFormatError

__all__ = ["save_model", "load_model"]


def _key(block, index):
    return f"{type(block).__name__.lower()}{index}"


def save_model(block, prefix):
    """Write ``<prefix>-model.json`` and ``<prefix>-model.params`` (see module docstring)."""
    from .hybrid import HybridBlock

    model = {}
    counter = [0]

    def visit(blk, structure):
        entry = {"orig_name": blk.name}
        structure[_key(blk, counter[0])] = entry
        if isinstance(blk, HybridBlock):
            # MXNet reads "hybridized": true as "a saved graph follows"; gluonjax keeps
            # no graph, so it records the mode under its own key (MXNet ignores it)
            entry["hybridized"] = False
            entry["active"] = bool(blk._active)
        children = {}
        entry["children"] = children
        for ch_name, child in blk._children.items():
            counter[0] += 1
            children[child.name] = ch_name
            visit(child, entry)

    visit(block, model)
    atomic_write(f"{prefix}-model.json", json.dumps(model).encode("utf-8"))
    block.save_parameters(f"{prefix}-model.params")


def _bad(fname, msg):
    return FileFormatError(f"{fname}: {msg}; was it written by Block.save for this model?")


def load_model(block, prefix):
    """Restore names and child keys from ``<prefix>-model.json``, then load the parameters."""
    from .block import STRUCTURE_EPOCH
    from .hybrid import HybridBlock

    fname = f"{prefix}-model.json"
    try:
        with open(fname, encoding="utf-8") as f:
            model = json.load(f)
    except (OSError, ValueError) as err:
        raise FileFormatError(f"cannot read model file {os.fspath(fname)!r}: {err}") from None
    counter = [0]

    def visit(blk, structure):
        key = _key(blk, counter[0])
        entry = structure.get(key) if isinstance(structure, dict) else None
        if not isinstance(entry, dict) or not isinstance(entry.get("orig_name"), str):
            raise _bad(fname, f"no entry {key!r} for block {blk.name!r} ({type(blk).__name__})")
        blk._name = entry["orig_name"]
        if isinstance(blk, HybridBlock) and (entry.get("hybridized") or entry.get("active")):
            blk._active = True
            blk._clear_cached()
        children = entry.get("children")
        if not isinstance(children, dict):
            raise _bad(fname, f"entry {key!r} has no 'children' map")
        for child in blk._children.values():
            counter[0] += 1
            visit(child, entry)
        rekeyed = {}
        for child in blk._children.values():
            if child.name not in children:
                raise _bad(fname, f"block {blk.name!r} has no saved child {child.name!r}")
            rekeyed[children[child.name]] = child
        blk._children.clear()
        blk._children.update(rekeyed)

    visit(block, model)
    STRUCTURE_EPOCH[0] += 1
    block.load_parameters(f"{prefix}-model.params")
