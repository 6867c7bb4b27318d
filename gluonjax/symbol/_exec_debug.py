"""``Executor.debug_str``: a text listing of the bound graph, in MXNet's layout."""

from __future__ import annotations

from .._ops.graph import topo


def describe(executor):
    sym = executor._symbol
    lines = ["Symbol Outputs:"]
    for i, (node, idx) in enumerate(sym._outputs):
        lines.append(f"\toutput[{i}]={node.name}({idx})")
    for node in topo(sym._outputs):
        if node.op is None:
            lines.append(f"Variable:{node.name}")
            continue
        lines.append("--------------------")
        lines.append(f"Op:{node.op.name}, Name={node.name}")
        lines.append("Inputs:")
        for k, (src, idx) in enumerate(node.inputs):
            tail = " version=0" if src.op is None else ""
            lines.append(f"\targ[{k}]={src.name}({idx}){tail}")
        attrs = node.str_attrs()
        if attrs:
            lines.append("Attrs:")
            lines.extend(f"\t{k}={v}" for k, v in attrs.items())
    nbytes = sum(a.size * a.dtype.itemsize for a in executor.arg_arrays + executor.aux_arrays)
    nbytes += sum(a.size * a.dtype.itemsize for a in executor.grad_arrays if a is not None)
    lines.append(f"Total {nbytes >> 20} MB allocated")
    return "\n".join(lines) + "\n"
