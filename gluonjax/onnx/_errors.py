"""The errors of ``mx.onnx`` and ``mx.contrib.onnx`` (listed in docs/errors.md)."""

from __future__ import annotations

from ..base import FileFormatError, MXNetError

__all__ = ["ONNXExportError", "ONNXUnsupportedOpError", "ONNXImportError", "require_onnx"]


class ONNXExportError(MXNetError, ValueError):
    """A graph, its arguments or the opset cannot be written as an ONNX model."""


class ONNXUnsupportedOpError(ONNXExportError, AttributeError):
    """A node whose op (or attribute value) has no ONNX converter; MXNet raises
    ``AttributeError`` for an op with no conversion function."""


class ONNXImportError(FileFormatError):
    """An ONNX file that is damaged, truncated, or uses an op the importer lacks."""


def require_onnx(what="mx.onnx"):
    """The ``onnx`` module; an :class:`ONNXExportError` saying how to install it."""
    try:
        import onnx
    except ImportError as err:
        onnx, why = None, str(err)
    else:  # a folder named onnx on sys.path (tests/onnx) imports as an empty namespace
        why = "found only a namespace package without onnx's code"
    if onnx is None or getattr(onnx, "__file__", None) is None:
        raise ONNXExportError(
            f"{what} needs the 'onnx' package: pip install 'gluonjax[onnx]' "
            f"(or pip install onnx) ({why})"
        )
    return onnx
