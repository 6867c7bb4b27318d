"""ONNX graph -> symbol graph: one importer per ONNX op, into registry ops."""

from __future__ import annotations

import numpy as np

from ... import symbol as S
from ...onnx._errors import ONNXImportError
from ._import_dims import fold

__all__ = ["IMPORTERS", "Graph"]

#: ONNX op type -> ``fn(g, node) -> Symbol or list of Symbols``
IMPORTERS: dict = {}


def importer(*names):
    def deco(fn):
        for n in names:
            IMPORTERS[n] = fn
        return fn

    return deco


class Graph:
    """Translates one ONNX graph; collects ``arg_params`` and ``aux_params``."""

    def __init__(self, onnx, model, path):
        from onnx import numpy_helper

        self.onnx, self.path = onnx, path
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
        graph = model.graph
        self.graph = graph
        self.consts = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        self.ranks, self.shapes = {}, {}
        self.partial = {}  # tensor -> its shape from ONNX shape inference, None where symbolic
        self.dims = {}  # tensor -> a shape value holding run-time sizes (_import_dims.Dim)
        self.shape_of = {}  # output of a Shape node -> the tensor it measures
        try:
            inferred = onnx.shape_inference.infer_shapes(model)
            for vi in (
                list(inferred.graph.value_info)
                + list(inferred.graph.input)
                + list(inferred.graph.output)
            ):
                if vi.type.tensor_type.HasField("shape"):
                    dims = vi.type.tensor_type.shape.dim
                    self.ranks[vi.name] = len(dims)
                    self.partial[vi.name] = tuple(
                        d.dim_value if d.HasField("dim_value") else None for d in dims
                    )
                    if all(d.HasField("dim_value") for d in dims):
                        self.shapes[vi.name] = tuple(d.dim_value for d in dims)
        except Exception:  # ranks unknown: importers that need one say so
            pass
        self.syms = {}
        self.arg, self.aux = {}, {}
        self.aux_names = set()
        for node in graph.node:  # BatchNormalization's statistics are auxiliary states
            if node.op_type == "BatchNormalization":
                self.aux_names.update(node.input[3:5])
        self.node = None

    # -- tensors
    def const(self, name):
        """The value of a constant tensor (initializer or Constant output), else None."""
        return self.consts.get(name)

    def need_shape(self, name, what):
        """The static shape of a tensor: a constant's, or ONNX shape inference's."""
        if name in self.consts:
            return self.consts[name].shape
        if name in self.shapes:
            return self.shapes[name]
        raise self.fail(f"{what} ('{name}') needs a static shape")

    def need_const(self, name, what):
        value = self.const(name)
        if value is None and name in self.dims:
            raise self.fail(
                f"{what} ('{name}') must be a constant; it is {self.dims[name].tolist()}, "
                "sizes known only when the graph runs"
            )
        if value is None:
            raise self.fail(f"{what} ('{name}') must be a constant (an initializer)")
        return value

    def sym(self, name):
        if name in self.syms:
            return self.syms[name]
        if name in self.consts:
            from ... import ndarray as nd

            value = self.consts[name]
            s = S.var(name, shape=value.shape, dtype=value.dtype)
            (self.aux if name in self.aux_names else self.arg)[name] = nd.array(
                value, dtype=value.dtype
            )
            self.syms[name] = s
            return s
        raise self.fail(f"input '{name}' is not produced by any earlier node")

    def rank(self, name):
        if name in self.ranks:
            return self.ranks[name]
        if name in self.consts:
            return self.consts[name].ndim
        raise self.fail(f"the rank of '{name}' is unknown (ONNX shape inference did not give it)")

    def attrs(self, node):
        from onnx import helper

        return {a.name: helper.get_attribute_value(a) for a in node.attribute}

    # -- errors
    def fail(self, why):
        node = self.node
        where = f"node '{node.name or node.output[0]}' (op {node.op_type})" if node else "graph"
        return ONNXImportError(f"'{self.path}': {where}, opset {self.opset}: {why}")

    # -- the walk
    def run(self):
        for vi in self.graph.input:
            if vi.name not in self.consts:
                self.syms[vi.name] = S.var(vi.name)
        for node in self.graph.node:
            self.node = node
            if node.op_type == "Constant":
                self.consts[node.output[0]] = _constant_value(self, node)
                continue
            onnx_op = node.domain in ("", "ai.onnx")
            if onnx_op and _fold(self, node):  # integer shape arithmetic, at import time
                continue
            fn = IMPORTERS.get(node.op_type) if onnx_op else None
            if fn is None:
                raise self.fail(
                    "no importer for this op; mx.contrib.onnx.get_import_support() lists "
                    "the ONNX ops that import"
                )
            try:
                out = fn(self, node)
            except ONNXImportError:
                raise
            except Exception as err:
                raise self.fail(f"{type(err).__name__}: {err}") from err
            outs = out if isinstance(out, (list, tuple)) else [out]
            for name, s in zip(node.output, outs):
                self.syms[name] = s
        self.node = None
        heads = []
        for vi in self.graph.output:
            if vi.name in self.syms:
                heads.append(self.syms[vi.name])
            else:
                heads.append(self.sym(vi.name))
        return heads[0] if len(heads) == 1 else S.Group(heads)


def _fold(g, node):
    try:
        return fold(g, node)
    except ONNXImportError:
        raise
    except Exception as err:
        raise g.fail(f"computing it at import time: {type(err).__name__}: {err}") from err


def _constant_value(g, node):
    from onnx import numpy_helper

    a = {x.name: x for x in node.attribute}
    if "value" in a:
        return numpy_helper.to_array(a["value"].t)
    for key, conv in (("value_float", np.float32), ("value_int", np.int64)):
        if key in a:
            return np.asarray(g.attrs(node)[key], conv)
    for key, conv in (("value_floats", np.float32), ("value_ints", np.int64)):
        if key in a:
            return np.asarray(g.attrs(node)[key], conv)
    raise g.fail("a Constant without a tensor, float or int value")
