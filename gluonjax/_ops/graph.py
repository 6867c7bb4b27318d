"""Graph nodes behind Symbol: a variable or one registry-op call."""

from __future__ import annotations

from .._graph import postorder
from .registry import attr_to_str


class Node:
    """One graph node.

    ``op`` is None for a variable. ``attrs`` holds the attributes the user gave
    (as MXNet keeps them for JSON); ``static_key``/``dyn`` the parsed values;
    ``inputs`` a list of ``(node, output_index)``; ``extra`` variable metadata
    and AttrScope attributes (``__shape__``, ``__lr_mult__``...).
    """

    __slots__ = ("op", "name", "attrs", "inputs", "static_key", "dyn", "extra", "num_outputs")

    def __init__(self, op, name, attrs=None, inputs=(), static_key=(), dyn=(), extra=None):
        self.op = op
        self.name = name
        self.attrs = dict(attrs or {})
        self.inputs = list(inputs)
        self.static_key = static_key
        self.dyn = dyn
        self.extra = dict(extra or {})
        self.num_outputs = 1 if op is None else op.n_outputs(self.attr_dict())

    @property
    def is_var(self):
        return self.op is None

    def attr_dict(self):
        """Every attribute value (defaults filled in) of an op node."""
        return self.op.attr_dict(self.static_key, self.dyn) if self.op is not None else {}

    def visible(self):
        return 1 if self.op is None else self.op.n_visible(self.attr_dict())

    def output_names(self):
        """``name_output`` (or ``name_output0``.. for several outputs) as MXNet lists them."""
        if self.op is None:
            return [self.name]
        n = self.visible()
        names = self.op.output_names
        if n == 1:  # MXNet's first name: ``output``, or ``output0`` (CTCLoss) of several
            return [f"{self.name}_{names[0] if names else 'output'}"]
        if len(names) >= n:
            return [f"{self.name}_{names[i]}" for i in range(n)]
        return [f"{self.name}_output{i}" for i in range(n)]

    def str_attrs(self):
        """Attributes as MXNet writes them in JSON (strings; user-given ones only)."""
        return {k: v if isinstance(v, str) else attr_to_str(v) for k, v in self.attrs.items()}


def topo(heads):
    """Nodes reachable from ``heads`` ((node, idx) pairs), inputs before users."""
    return postorder([n for n, _ in heads], lambda n: [src for src, _ in n.inputs])
