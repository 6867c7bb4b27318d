"""Run unmodified code that says ``import mxnet``: alias ``mxnet`` to gluonjax.

After :func:`install`, ``import mxnet`` and every ``mxnet.x.y`` resolve to gluonjax's own
module objects (``mxnet.gluon.nn is gluonjax.gluon.nn``), so ``isinstance`` checks between code
that imports one name and code that imports the other agree. Only the top module differs: it is a
thin module that forwards every attribute to :mod:`gluonjax` but answers ``__version__`` as the
MXNet release whose API gluonjax implements (``MXNET_VERSION``, 1.9.1), so libraries' version
checks pass; ``gluonjax.__version__`` stays gluonjax's own. ``importlib.metadata.version('mxnet')``
answers the same while the alias is on.

The alias is never on by default. Three ways to turn it on:

* ``gluonjax.mxnet_alias.install()`` in your own code, before the library imports ``mxnet``;
* ``python -m gluonjax.run script.py [args]`` (see :mod:`gluonjax.run`);
* ``GLUONJAX_MXNET_ALIAS=1`` in the environment, honoured only after an explicit, opt-in
  ``python -m gluonjax.mxnet_alias pth-install`` (writes ``gluonjax_mxnet_alias.pth`` into
  site-packages; ``pth-remove`` deletes it). Nothing installs that file by default.

It never shadows a real MXNet: if ``mxnet`` is importable without the alias, :func:`install`
raises :class:`~gluonjax.base.MXNetError` unless called with ``force=True``.

Examples
--------
>>> import subprocess, sys
>>> code = ("import gluonjax.mxnet_alias as a; a.install(); import mxnet as mx, gluonjax;"
...         "print(mx.__version__, mx.gluon.nn is gluonjax.gluon.nn)")
>>> subprocess.run([sys.executable, "-c", code], capture_output=True,
...                text=True).stdout.split()  # doctest: +SKIP
['1.9.1', 'True']
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import os
import sys
import sysconfig
import types

from .base import MXNetError

__all__ = ["MXNET_VERSION", "ENV_VAR", "install", "uninstall", "is_installed"]

#: The MXNet release whose API gluonjax implements; what ``mxnet.__version__`` answers.
MXNET_VERSION = "1.9.1"
#: Environment variable honoured by the opt-in ``.pth`` file (see the module docstring).
ENV_VAR = "GLUONJAX_MXNET_ALIAS"

_ALIAS = "mxnet"
_TARGET = "gluonjax"
_PTH_NAME = "gluonjax_mxnet_alias.pth"


def _is_alias_name(fullname):
    return fullname == _ALIAS or fullname.startswith(_ALIAS + ".")


def _target_name(fullname):
    return _TARGET + fullname[len(_ALIAS) :]


class _MXNetModule(types.ModuleType):
    """The top ``mxnet`` module: forwards attributes to gluonjax, with MXNet's version."""

    def __getattr__(self, name):
        target = importlib.import_module(_TARGET)
        try:
            return getattr(target, name)
        except AttributeError:
            raise AttributeError(
                f"module 'mxnet' (aliased to gluonjax) has no attribute {name!r}: gluonjax "
                f"does not implement mxnet.{name}"
            ) from None

    def __dir__(self):
        target = importlib.import_module(_TARGET)
        return sorted(set(super().__dir__()) | set(dir(target)))


def _resolve_target(fullname):
    """The gluonjax module object that ``mxnet.<...>`` names, or None if there is none."""
    target = _target_name(fullname)
    if target in sys.modules:
        return sys.modules[target]
    parent, _, child = target.rpartition(".")
    try:
        if importlib.util.find_spec(target) is not None:
            return importlib.import_module(target)
    except ModuleNotFoundError:
        return None
    # a submodule that gluonjax exposes as a module attribute (built at import time)
    obj = getattr(importlib.import_module(parent), child, None)
    return obj if isinstance(obj, types.ModuleType) else None


class _AliasDistribution(importlib.metadata.Distribution):
    """``importlib.metadata`` view of the alias: name ``mxnet``, MXNet's version."""

    def read_text(self, filename):
        if filename == "METADATA":
            return (
                f"Metadata-Version: 2.1\nName: {_ALIAS}\nVersion: {MXNET_VERSION}\n"
                f"Summary: alias of gluonjax (MXNet {MXNET_VERSION} API on JAX)\n"
            )
        return None

    def locate_file(self, path):
        import pathlib

        return pathlib.Path(os.path.dirname(importlib.util.find_spec(_TARGET).origin)) / path


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Meta-path finder and loader mapping ``mxnet`` / ``mxnet.*`` to ``gluonjax`` / ``.*``."""

    def find_spec(self, fullname, path=None, target=None):
        if not _is_alias_name(fullname):
            return None
        if fullname != _ALIAS and _resolve_target(fullname) is None:
            return None  # the import system raises "No module named 'mxnet.x'"
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        if spec.name == _ALIAS:
            module = _MXNetModule(_ALIAS)
            module.__version__ = MXNET_VERSION
            module.__doc__ = f"mxnet {MXNET_VERSION} API, aliased to gluonjax"
            return module
        return None  # a placeholder that exec_module swaps for gluonjax's module

    def exec_module(self, module):
        name = module.__spec__.name
        if name == _ALIAS:
            importlib.import_module(_TARGET)
            return
        # the import system returns whatever sys.modules holds after exec_module: the same
        # module object as gluonjax's, so isinstance checks agree across both names
        sys.modules[name] = _resolve_target(name)

    def find_distributions(self, context=importlib.metadata.DistributionFinder.Context()):
        name = context.name
        if name is None or name.lower().replace("-", "_") == _ALIAS:
            return iter([_AliasDistribution()])
        return iter([])


_FINDER = _AliasFinder()


def is_installed():
    """Whether the ``mxnet`` alias is on in this interpreter.

    Returns
    -------
    bool
    """
    return _FINDER in sys.meta_path


def _real_mxnet_origin():
    """Where a real ``mxnet`` would be imported from, or None."""
    loaded = sys.modules.get(_ALIAS)
    if loaded is not None and not isinstance(loaded, _MXNetModule):
        return getattr(loaded, "__file__", None) or repr(loaded)
    for finder in sys.meta_path:
        if finder is _FINDER or not hasattr(finder, "find_spec"):
            continue
        spec = finder.find_spec(_ALIAS, None)
        if spec is not None:
            return spec.origin or (list(spec.submodule_search_locations or []) or [_ALIAS])[0]
    return None


def _drop_mxnet_modules():
    for key in [k for k in sys.modules if _is_alias_name(k)]:
        del sys.modules[key]


def install(force=False):
    """Turn the ``mxnet`` alias on: ``import mxnet`` gives gluonjax's modules.

    Parameters
    ----------
    force : bool, default False
        Alias even when a real MXNet is importable (or already imported: its modules are then
        dropped from ``sys.modules``, so later imports get gluonjax). Without it, a real MXNet
        makes this raise.

    Returns
    -------
    module
        The ``mxnet`` alias module.

    Raises
    ------
    MXNetError
        A real MXNet is installed and ``force`` is False.
    """
    if not is_installed():
        origin = _real_mxnet_origin()
        if origin is not None:
            if not force:
                raise MXNetError(
                    f"gluonjax.mxnet_alias.install: a real MXNet is importable ({origin}); the "
                    "alias would shadow it. Uninstall MXNet or run in another environment, or "
                    "call install(force=True) (python -m gluonjax.run --force) to alias anyway."
                )
            _drop_mxnet_modules()
        sys.meta_path.insert(0, _FINDER)
    return importlib.import_module(_ALIAS)


def uninstall():
    """Turn the alias off and forget the ``mxnet`` modules it made (gluonjax's stay loaded).

    Returns
    -------
    None
    """
    if is_installed():
        sys.meta_path.remove(_FINDER)
        for key in [k for k in sys.modules if _is_alias_name(k)]:
            mod = sys.modules[key]
            if isinstance(mod, _MXNetModule) or getattr(mod, "__name__", "").startswith(_TARGET):
                del sys.modules[key]


def _pth_line():
    return (
        "import os; os.environ.get('GLUONJAX_MXNET_ALIAS', '0') not in ('', '0') and "
        "__import__('gluonjax.mxnet_alias', fromlist=['install']).install("
        "force=os.environ.get('GLUONJAX_MXNET_ALIAS') == 'force')\n"
    )


def _main(argv=None):
    """``python -m gluonjax.mxnet_alias pth-install|pth-remove|status``."""
    import argparse

    from ._io.atomic import atomic_write

    parser = argparse.ArgumentParser(prog="python -m gluonjax.mxnet_alias")
    parser.add_argument("action", choices=["pth-install", "pth-remove", "status"])
    args = parser.parse_args(argv)
    path = os.path.join(sysconfig.get_paths()["purelib"], _PTH_NAME)
    if args.action == "pth-install":
        atomic_write(path, _pth_line().encode())
        print(f"wrote {path}: {ENV_VAR}=1 now turns the mxnet alias on in this environment")
    elif args.action == "pth-remove":
        if os.path.exists(path):
            os.remove(path)
        print(f"removed {path}")
    else:
        print(f"{path}: {'present' if os.path.exists(path) else 'absent'}")
    return 0


if __name__ == "__main__":
    sys.exit(_main())
