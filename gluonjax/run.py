"""``python -m gluonjax.run [--force] script.py [args]``: run MXNet code unchanged on gluonjax.

Turns the ``mxnet`` alias on (:func:`gluonjax.mxnet_alias.install`) and runs ``script.py`` as
``__main__`` with ``sys.argv = [script.py, *args]`` and the script's folder first on
``sys.path``, as ``python script.py`` would. ``python -m gluonjax.run -m pkg.module [args]`` runs
a module the same way. ``--force`` aliases even when a real MXNet is installed.

Examples
--------
A script written for MXNet (``train.py`` says ``import mxnet as mx``)::

    python -m gluonjax.run train.py --epochs 2
    python -m gluonjax.run -m my_package.train --epochs 2
"""

from __future__ import annotations

import os
import runpy
import sys

USAGE = "usage: python -m gluonjax.run [--force] (script.py | -m module) [args ...]"


def main(argv=None):
    """Install the alias and run a script or module as ``__main__``.

    Parameters
    ----------
    argv : list of str, optional
        The command line after ``gluonjax.run`` (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0 (the script's own ``sys.exit`` propagates).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    force = False
    while argv and argv[0] == "--force":
        force = True
        argv.pop(0)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    from . import mxnet_alias

    mxnet_alias.install(force=force)
    if argv[0] == "-m":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        sys.argv = [argv[1], *argv[2:]]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    script = argv[0]
    sys.argv = [script, *argv[1:]]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
