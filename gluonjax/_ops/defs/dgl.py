"""DGL's graph ops on CSR adjacency matrices (``contrib.edge_id``, ``dgl_adjacency``,
``dgl_subgraph``, ``dgl_csr_neighbor_uniform_sample``,
``dgl_csr_neighbor_non_uniform_sample``, ``dgl_graph_compact``).

The value of a CSR graph is its stored *pattern* (``indptr``/``indices``, edge ids in
``data``, where an edge may have id 0), which gluonjax keeps on the host next to the
dense value (see ``docs/sparse.md``); the output shapes of most of these ops also
depend on it. So they run eagerly, on the host: ``nd.contrib.<op>``
(``ndarray/sparse/_graph.py``). These entries give them MXNet's names, inputs and
attributes (for ``sym.contrib`` and symbol JSON); a compiled graph that meets one
raises :class:`~gluonjax.base.HostOnlyError` (a hybridized block then runs op by op).
"""

from __future__ import annotations

from ...base import HostOnlyError
from ..registry import Attr, register


def _host_only(name):
    def impl(*arrays, **attrs):
        raise HostOnlyError(
            f"contrib.{name} works on a CSR graph's stored pattern on the host (its output "
            f"depends on it), so it cannot run inside a compiled graph; call "
            f"mx.nd.contrib.{name} eagerly on a CSRNDArray (a hybridized block calling it "
            f"runs op by op)"
        )

    impl.__name__ = name
    return impl


_SAMPLE = {
    "num_args": Attr("int"),
    "num_hops": Attr("int", 1),
    "num_neighbor": Attr("int", 2),
    "max_num_vertices": Attr("int", 100),
}

register(
    "_contrib_dgl_csr_neighbor_uniform_sample",
    variadic=True,
    attrs=dict(_SAMPLE),
    num_outputs=lambda a: 3 * (a["num_args"] - 1),
    doc="Sample sub-graphs around seed vertices, neighbours drawn uniformly (host only).",
)(_host_only("dgl_csr_neighbor_uniform_sample"))

register(
    "_contrib_dgl_csr_neighbor_non_uniform_sample",
    variadic=True,
    attrs=dict(_SAMPLE),
    num_outputs=lambda a: 4 * (a["num_args"] - 2),
    doc="Sample sub-graphs around seed vertices, neighbours drawn by probability (host only).",
)(_host_only("dgl_csr_neighbor_non_uniform_sample"))

register(
    "_contrib_dgl_subgraph",
    variadic=True,
    attrs={"num_args": Attr("int"), "return_mapping": Attr("bool")},
    num_outputs=lambda a: (a["num_args"] - 1) * (2 if a["return_mapping"] else 1),
    doc="The sub-graphs induced by sorted vertex lists (host only).",
)(_host_only("dgl_subgraph"))

register(
    "_contrib_dgl_graph_compact",
    variadic=True,
    attrs={
        "num_args": Attr("int"),
        "return_mapping": Attr("bool"),
        "graph_sizes": Attr("shape"),
    },
    num_outputs=lambda a: (a["num_args"] // 2) * (2 if a["return_mapping"] else 1),
    doc="Renumber sampled sub-graphs' vertices 0..n-1 (host only).",
)(_host_only("dgl_graph_compact"))

register(
    "_contrib_edge_id",
    inputs=("data", "u", "v"),
    doc="The edge id stored at (u[i], v[i]) of a CSR graph, -1 without an edge (host only).",
)(_host_only("edge_id"))

register(
    "_contrib_dgl_adjacency",
    doc="The CSR graph's adjacency matrix: 1.0 at every stored edge (host only).",
)(_host_only("dgl_adjacency"))
