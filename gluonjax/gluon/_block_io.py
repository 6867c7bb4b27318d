"""``Block.save`` / ``Block.load``: MXNet 1.9's whole-model files.

``<prefix>-model.json`` records the block tree: each block under
``<classname><index>`` (a depth-first count), with its name when saved, whether
it was hybridized, and its children's names and attribute keys. ``<prefix>-model.params``
holds the parameters (:meth:`Block.save_parameters`). ``load`` walks a freshly built
model of the same architecture in the same order, gives every block and
parameter its saved name back, and loads the parameters. The file holds no
code and no pickles: the architecture comes from the user's classes.

MXNet also stores the cached symbol of each hybridized block; here a loaded
block is hybridized again and traces its forward on the first call.
"""

from __future__ import annotations

import json

from .._io.atomic import atomic_write, read_bytes
from ..base import FileFormatError

__all__ = ["save_model", "load_model"]


def _flags(block):
    flags = getattr(block, "_flags", None) or {}
    try:
        json.dumps(flags)
    except (TypeError, ValueError):
        return {}
    return flags


def save_model(block, prefix):
    """Write ``prefix-model.json`` (the block tree) and ``prefix-model.params``."""
    model = {}
    index = [0]

    def visit(blk, structure):
        entry = {"orig_name": blk.name, "hybridized": bool(getattr(blk, "_active", False))}
        if entry["hybridized"]:
            entry["flags"] = _flags(blk)
        structure[type(blk).__name__.lower() + str(index[0])] = entry
        children = {}
        entry["children"] = children
        for key, child in blk._children.items():
            index[0] += 1
            children[child.name] = key
            visit(child, entry)

    visit(block, model)
    atomic_write(prefix + "-model.json", json.dumps(model).encode())
    block.save_parameters(prefix + "-model.params")


def load_model(block, prefix):
    """Restore names from ``prefix-model.json`` into ``block`` and load its parameters."""
    fname = prefix + "-model.json"
    model = json.loads(read_bytes(fname, "reading model file").decode("utf-8"))
    index = [0]

    def visit(blk, structure):
        key = type(blk).__name__.lower() + str(index[0])
        entry = structure.get(key)
        if not isinstance(entry, dict) or "orig_name" not in entry:
            raise FileFormatError(
                f"'{fname}' has no entry {key!r} for {type(blk).__name__} '{blk.name}': the "
                f"model was not built with the same architecture (or in the same order) as "
                f"the saved one"
            )
        blk._name = entry["orig_name"]
        params = blk.params._params
        plen = len(blk.params.prefix)
        blk.params._prefix = blk.name + "_"  # local names (Block._own_params) stay the same
        for name in list(params):
            param = params.pop(name)
            new_name = blk.params.prefix + name[plen:]
            if param.name == name:  # (MXNet renames only the key; the display name follows)
                param.name, param._var = new_name, None
            params[new_name] = param
        for child in blk._children.values():
            index[0] += 1
            visit(child, entry)
        saved_children = entry.get("children", {})
        renamed = []
        for child in list(blk._children.values()):
            if child.name not in saved_children:
                raise FileFormatError(
                    f"'{fname}': block '{blk.name}' had no child named '{child.name}' when saved"
                )
            renamed.append((saved_children[child.name], child))
        blk._children.clear()
        blk._children.update(renamed)
        if entry.get("hybridized") and not getattr(blk, "_active", True):
            blk.hybridize(True, **entry.get("flags", {}))

    visit(block, model)
    block.load_parameters(prefix + "-model.params")
