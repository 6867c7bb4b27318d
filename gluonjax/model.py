"""``mx.model``: checkpoints (``prefix-symbol.json`` + ``prefix-EPOCH.params``).

The files are MXNet 1.9.1's: the symbol as MXNet JSON and the parameters in the
NDArray file format with ``arg:``/``aux:`` name prefixes, so checkpoints move
between MXNet and gluonjax both ways.
"""

from __future__ import annotations

import logging
from collections import namedtuple

from .base import MXNetError
from .kvstore import create_kvstore as _create_kvstore  # noqa: F401  (MXNet's model helpers)
from .kvstore import create_sparse_kvstore as _create_sparse_kvstore  # noqa: F401

__all__ = ["BatchEndParam", "save_checkpoint", "load_checkpoint", "load_params"]

#: what batch-end callbacks receive: ``epoch``, ``nbatch``, ``eval_metric``, ``locals``
BatchEndParam = namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])


def _param_file(prefix, epoch):
    return f"{prefix}-{int(epoch):04d}.params"


def save_params_file(fname, arg_params, aux_params):
    """Write ``{'arg:name': ..., 'aux:name': ...}`` to ``fname`` with ``nd.save``."""
    from . import ndarray as nd

    save_dict = {f"arg:{k}": v for k, v in arg_params.items()}
    save_dict.update({f"aux:{k}": v for k, v in (aux_params or {}).items()})
    nd.save(fname, save_dict)


def split_params(save_dict, fname, strict=False):
    """``(arg_params, aux_params)`` from a loaded ``arg:``/``aux:`` dict."""
    if not isinstance(save_dict, dict):
        raise MXNetError(f"'{fname}' holds an unnamed list of arrays, not module parameters")
    arg_params, aux_params = {}, {}
    for key, value in save_dict.items():
        kind, _, name = key.partition(":")
        if kind == "arg" and name:
            arg_params[name] = value
        elif kind == "aux" and name:
            aux_params[name] = value
        elif strict:
            raise MXNetError(f"Invalid param file {fname}: entry {key!r} is not 'arg:' or 'aux:'")
    return arg_params, aux_params


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Write ``prefix-symbol.json`` (unless ``symbol`` is None) and ``prefix-%04d.params``.

    Parameters
    ----------
    prefix : str
    epoch : int
    symbol : Symbol or None
    arg_params, aux_params : dict of str to NDArray
    remove_amp_cast : bool
        Accepted for compatibility (graphs here have no AMP casts to remove).
    """
    if symbol is not None:
        symbol.save(f"{prefix}-symbol.json", remove_amp_cast=remove_amp_cast)
    fname = _param_file(prefix, epoch)
    save_params_file(fname, arg_params, aux_params)
    logging.info('Saved checkpoint to "%s"', fname)


def load_params(prefix, epoch):
    """``(arg_params, aux_params)`` from ``prefix-%04d.params``."""
    from . import ndarray as nd

    fname = _param_file(prefix, epoch)
    save_dict = nd.load(fname)
    if not save_dict:
        logging.warning("Params file '%s' is empty", fname)
        return {}, {}
    return split_params(save_dict, fname)


def load_checkpoint(prefix, epoch):
    """``(symbol, arg_params, aux_params)`` from a checkpoint written by
    :func:`save_checkpoint` or by MXNet."""
    from . import symbol as sym

    symbol = sym.load(f"{prefix}-symbol.json")
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params
