"""Export of hybrid blocks: MXNet symbol JSON + params, and a StableHLO artifact.

:func:`export_block` is ``HybridBlock.export``. It traces the block's inference
forward once (:mod:`.trace`), converts the jaxpr into an MXNet symbol graph
(:mod:`.jaxpr_to_symbol`) and writes, each file atomically and only after all of
them were built:

* ``path-symbol.json``: the graph, variables named by the parameters' structural
  names (``0.weight``) and ``data``/``data0``.. for the inputs;
* ``path-%04d.params``: MXNet's binary format, keys ``arg:0.weight``,
  ``aux:1.running_mean`` (and ``arg:_const0``.. for constant arrays of the graph);
* ``path-%04d.stablehlo`` + ``path-%04d.manifest.json`` (:mod:`.stablehlo`),
  runnable with :mod:`gluonjax.deploy` and only jax installed.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..._io.atomic import atomic_write
from ..._io.ndformat import write_arrays
from ..._ops.jaxops import ExportError
from ...util import is_np_shape
from .jaxpr_to_symbol import jaxpr_to_symbol
from .trace import Traced, signature_of

__all__ = ["export_block", "block_symbol", "ExportError"]


def block_symbol(block, example_inputs=None, remove_amp_cast=True):
    """``(symbol, {file key: numpy array}, traced)`` for a block (nothing written)."""
    traced = Traced(block, signature_of(block, example_inputs))
    symbol, consts = jaxpr_to_symbol(
        traced.jaxpr(), traced.names + traced.input_names, remove_amp_cast
    )
    args = set(symbol.list_arguments())
    aux = set(symbol.list_auxiliary_states())
    arrays = {}
    for name, value in zip(traced.names, traced.values(), strict=True):
        if name in aux:
            arrays["aux:" + name] = np.asarray(value)
        elif name in args:
            arrays["arg:" + name] = np.asarray(value)
    for name, value in consts.items():
        arrays["arg:" + name] = np.asarray(value)
    return symbol, arrays, traced


def export_block(
    block,
    path,
    epoch=0,
    remove_amp_cast=True,
    example_inputs=None,
    stablehlo=True,
    dynamic_batch=None,
    stablehlo_text=False,
    iree=False,
):
    """Write the files of ``HybridBlock.export`` and return their paths (see module doc).

    ``dynamic_batch=None`` (the default) makes the StableHLO artifact's batch size symbolic
    when the forward allows it, and otherwise (a model that fixes its batch, e.g. with a
    constant-length ``arange`` or per-image proposal counts) exports at the example's batch
    size with a warning, as MXNet's ``export`` writes any model; ``True`` requires a symbolic
    batch (raises), ``False`` never tries it.
    """
    from . import stablehlo as _shlo

    path = str(path)
    symbol, arrays, traced = block_symbol(block, example_inputs, remove_amp_cast)
    prefix = f"{path}-{epoch:04d}"
    files = {
        path + "-symbol.json": symbol.tojson().encode("utf-8"),
        # NumPy-shape (V3) records in NumPy mode, as MXNet writes them
        prefix + ".params": write_arrays(list(arrays.values()), list(arrays), is_np_shape()),
    }
    if stablehlo:
        key_of = {k.split(":", 1)[1]: k for k in arrays}
        used = [i for i, n in enumerate(traced.names) if n in key_of]
        values = traced.values()
        fn = traced.fn

        def sub_fn(*flat):  # only the parameters the graph reads are inputs
            full = list(values)
            for i, v in zip(used, flat[: len(used)], strict=True):
                full[i] = v
            return fn(*full, *flat[len(used) :])

        specs = traced.param_specs()
        names = [traced.names[i] for i in used]

        def artifact(dynamic):
            return _shlo.build_artifact(
                sub_fn,
                names,
                [key_of[n] for n in names],
                [specs[i] for i in used],
                traced,
                prefix,
                dynamic_batch=dynamic,
                stablehlo_text=stablehlo_text,
                iree=iree,
            )

        try:
            files.update(artifact(True if dynamic_batch is None else dynamic_batch))
        except _shlo.SymbolicBatchError as err:
            if dynamic_batch is not None:
                raise
            warnings.warn(
                f"{err}; exporting the StableHLO artifact at the example's batch size",
                stacklevel=3,
            )
            files.update(artifact(False))
    for fname, data in files.items():
        atomic_write(fname, data)
    return list(files)
