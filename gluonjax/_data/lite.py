"""Importing gluonjax's data modules in a worker process without importing jax.

A data-loader worker loads this file by path, then imports ``gluonjax._data.worker``.
While the worker is *lite*, importing a gluonjax package creates an empty package
module (its ``__init__``, which would import jax, does not run) and only the
modules in :data:`LITE_MODULES` (standard library, numpy and OpenCV only) may be
imported. When the data set or batchify function needs anything else (user code,
a Block, an NDArray method), :func:`upgrade` imports the real gluonjax first: the
worker is then a full gluonjax process (still never forked from a process that
runs jax). This module uses only the standard library.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys

LITE_MODULES = frozenset(
    {
        "gluonjax.base",
        "gluonjax.recordio",
        "gluonjax._io.atomic",
        "gluonjax._data.batch",
        "gluonjax._data.cv",
        "gluonjax._data.host",
        "gluonjax._data.kernels",
        "gluonjax._data.lite",
        "gluonjax._data.rng",
        "gluonjax._data.rotate",
        "gluonjax._data.transport",
        "gluonjax._data.worker",
        "gluonjax.gluon.data.batchify",
        "gluonjax.gluon.data.dataset",
        "gluonjax.gluon.data.sampler",
        "gluonjax.gluon.data.vision.datasets",
    }
)
_SAFE_TOP = frozenset({"numpy", "cv2"})
_STATE = {"lite": False, "stubs": []}


def module_is_lite(name):
    """True if a pickled global from module ``name`` can be loaded without jax."""
    top = name.partition(".")[0]
    if top == "gluonjax":
        return name in LITE_MODULES
    return top in _SAFE_TOP or (top in sys.stdlib_module_names and top != "__main__")


class _StubLoader:
    """Creates a package module without running its ``__init__``."""

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        _STATE["stubs"].append(module.__name__)


class _LiteFinder:
    def find_spec(self, name, path=None, target=None):
        if not _STATE["lite"] or not (name == "gluonjax" or name.startswith("gluonjax.")):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None:
            return None
        if spec.submodule_search_locations is not None:
            spec.loader = _StubLoader()
            return spec
        if name in LITE_MODULES:
            return spec
        raise ImportError(
            f"gluonjax data worker: '{name}' imports jax and cannot load in a jax-free worker "
            f"(a bug in gluonjax: a module of gluonjax._data.lite.LITE_MODULES imports it)"
        )


def enter():
    """Make this process lite (call before importing any gluonjax module)."""
    _STATE["lite"] = True
    sys.meta_path.insert(0, _LiteFinder())


def is_lite():
    return _STATE["lite"]


def upgrade():
    """Import the real gluonjax (jax included); leaf modules already loaded are kept."""
    if not _STATE["lite"]:
        return
    _STATE["lite"] = False
    for name in sorted(_STATE["stubs"], key=len, reverse=True):
        sys.modules.pop(name, None)
    _STATE["stubs"].clear()
    importlib.import_module("gluonjax")
    for name in LITE_MODULES:
        mod = sys.modules.get(name)
        if mod is None:
            continue
        parent, _, child = name.rpartition(".")
        owner = sys.modules.get(parent)
        if owner is not None and getattr(owner, child, None) is not mod:
            setattr(owner, child, mod)
