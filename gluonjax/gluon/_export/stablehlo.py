"""The StableHLO artifact of an exported block, with its manifest.

``path-0000.stablehlo`` is a serialized :mod:`jax.export` module of the inference
function ``f(*params, *inputs) -> outputs``; it is written with ``vjp_order=1``
so a loader can also differentiate it (fine-tuning). The batch (first) dimension
of the inputs is symbolic (``batch``) unless ``dynamic_batch=False`` (for each
input whose first dimension equals the first input's in the example).
``path-0000.manifest.json`` names everything needed to call it without
gluonjax: the inputs (shape with ``"batch"`` for the symbolic dimension, dtype),
the parameters in calling order with their key in the ``.params`` file, and the
outputs. :mod:`gluonjax.deploy` reads these three files.

IREE cannot compile shape-polymorphic modules with jax's shape assertions, so
``iree=True`` also writes ``path-0000.iree.mlir``: the StableHLO text of a
second export at the example's concrete batch size (``manifest["iree"]``), and
compiles it to ``path-0000.vmfb`` (this needs ``iree-base-compiler``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os

import jax
import numpy as np

from ...base import MXNetError

__all__ = ["FORMAT", "BATCH", "export_function", "build_artifact", "compile_iree", "IREE_FLAGS"]

FORMAT = "gluonjax.stablehlo"
BATCH = "batch"
IREE_FLAGS = (
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=host",
)


def _dims(shape):
    return [d if isinstance(d, int) else str(d) for d in shape]


def _input_specs(signature, dynamic_batch):
    """Inputs whose first dimension equals the first input's share the symbol ``batch``."""
    if not dynamic_batch or not signature or not signature[0].shape:
        return list(signature)
    (b,) = jax.export.symbolic_shape(BATCH)
    n = signature[0].shape[0]
    return [
        jax.ShapeDtypeStruct((b,) + tuple(s.shape[1:]), s.dtype)
        if s.shape and s.shape[0] == n
        else s
        for s in signature
    ]


class SymbolicBatchError(MXNetError):
    """The forward cannot be traced with a symbolic batch size (export at a fixed one)."""


def _symbolic_batch_error(what, err):
    return SymbolicBatchError(
        f"export: the {what} cannot be traced with a symbolic batch size "
        f"({type(err).__name__}: {str(err).splitlines()[0]}); pass dynamic_batch=False to "
        f"export at the example's batch size"
    )


def export_function(fn, param_specs, signature, dynamic_batch=True):
    """``jax.export.Exported`` of ``fn(*params, *inputs)``; batch symbolic if asked."""
    specs = list(param_specs) + _input_specs(signature, dynamic_batch)
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # no second print (see trace.jaxpr)
            return jax.export.export(jax.jit(fn))(*specs)
    except Exception as err:  # noqa: BLE001 - report which part failed
        if not dynamic_batch:
            raise
        raise _symbolic_batch_error("forward", err) from None


def manifest(exp, names, keys, signature, input_names, base, params_file, dynamic_batch):
    """The manifest dict (see module docstring)."""
    n_p = len(names)
    in_avals = exp.in_avals[n_p:]
    return {
        "format": FORMAT,
        "version": 1,
        "artifact": base + ".stablehlo",
        "params_file": params_file,
        "calling_convention": "f(*params, *inputs) -> list of outputs",
        "batch_symbol": BATCH if dynamic_batch else None,
        "vjp_order": 1,
        "jax_version": jax.__version__,
        "inputs": [
            {"name": n, "shape": _dims(a.shape), "dtype": np.dtype(a.dtype).name}
            for n, a in zip(input_names, in_avals, strict=True)
        ],
        "params": [
            {"name": n, "key": k, "shape": _dims(a.shape), "dtype": np.dtype(a.dtype).name}
            for n, k, a in zip(names, keys, exp.in_avals[:n_p], strict=True)
        ],
        "outputs": [
            {"shape": _dims(a.shape), "dtype": np.dtype(a.dtype).name} for a in exp.out_avals
        ],
    }


def build_artifact(
    fn,
    names,
    keys,
    param_specs,
    traced,
    prefix,
    *,
    dynamic_batch=True,
    stablehlo_text=False,
    iree=False,
):
    """The artifact files ``{path: bytes}`` for ``prefix`` (``path-%04d``).

    ``prefix.stablehlo`` and ``prefix.manifest.json``, plus ``prefix.mlir`` with
    ``stablehlo_text`` and ``prefix.iree.mlir``/``prefix.vmfb`` with ``iree``.
    """
    exp = export_function(fn, param_specs, traced.signature, dynamic_batch)
    base = os.path.basename(prefix)
    man = manifest(
        exp,
        names,
        keys,
        traced.signature,
        traced.input_names,
        base,
        base + ".params",
        dynamic_batch,
    )
    try:  # the VJP is traced here: with a symbolic batch it can fail where the forward did not
        files = {prefix + ".stablehlo": bytes(exp.serialize(vjp_order=1))}
    except Exception as err:  # noqa: BLE001 - report which part failed
        if not dynamic_batch:
            raise
        raise _symbolic_batch_error("forward's gradient", err) from None
    if stablehlo_text:
        files[prefix + ".mlir"] = exp.mlir_module().encode("utf-8")
    if iree:
        fixed = export_function(fn, param_specs, traced.signature, dynamic_batch=False)
        text = fixed.mlir_module()
        files[prefix + ".iree.mlir"] = text.encode("utf-8")
        batch = traced.signature[0].shape[0] if traced.signature[0].shape else None
        man["iree"] = {
            "mlir": base + ".iree.mlir",
            "vmfb": base + ".vmfb",
            "batch": batch,
            "flags": list(IREE_FLAGS),
        }
        files[prefix + ".vmfb"] = compile_iree(text)
    files[prefix + ".manifest.json"] = json.dumps(man, indent=2).encode("utf-8")
    return files


def compile_iree(mlir_text):
    """Compile StableHLO text to an IREE module (bytes) for this CPU (``iree-base-compiler``)."""
    try:
        from iree.compiler import tools as iree_tools
    except ImportError:
        raise MXNetError(
            "IREE compilation needs the iree-base-compiler package (pip install "
            "iree-base-compiler iree-base-runtime)"
        ) from None
    return iree_tools.compile_str(mlir_text, input_type="stablehlo", extra_args=list(IREE_FLAGS))
