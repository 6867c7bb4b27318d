"""``mx.viz.plot_network`` / ``print_summary`` against real MXNet 1.9.1.

Expected output comes from ``tests/fixtures/viz.json`` (made by
``tools/make_viz_fixtures.py`` under the MXNet interpreter): the Digraph source
of each plot and the printed text of each summary. Digraph sources are compared
after parsing (graph name, ordered nodes with their attributes, ordered edges
with theirs), so graphviz versions that quote differently still compare equal.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
from pathlib import Path

import pytest

import gluonjax as mx
from gluonjax.base import MXNetError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mxnet_ref import needs_mxnet, run_mxnet  # noqa: E402

graphviz = pytest.importorskip("graphviz")

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "viz.json"
CASES = {c["id"]: c for c in json.loads(FIXTURE.read_text())}


def build(case_id):
    env = {"mx": mx}
    with mx.name.NameManager():
        exec(CASES[case_id]["code"], env)  # noqa: S102
    return env["net"]


def call_kwargs(kwargs):
    out = dict(kwargs)
    if "shape" in out:
        out["shape"] = {k: tuple(v) for k, v in out["shape"].items()}
    return out


# ------------------------------------------------------------------ DOT parsing
_TOKEN = re.compile(r'\s*(?:(->)|([\[\]=;{},])|"((?:[^"\\]|\\.)*)"|([^\s\[\]=;{},"]+))', re.S)


def _tokens(src):
    pos, out = 0, []
    src = src.rstrip()
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        assert m and m.end() > pos, f"cannot tokenize DOT at {src[pos : pos + 40]!r}"
        arrow, punct, quoted, bare = m.groups()
        out.append(("id", quoted) if quoted is not None else ("id", bare) if bare else
                   ("p", arrow or punct))  # fmt: skip
        pos = m.end()
    return out


def parse_dot(src):
    """(graph name, graph attrs, [(node, attrs)], [(tail, head, attrs)])."""
    toks = _tokens(src)
    assert toks[0] == ("id", "digraph"), src[:40]
    name = toks[1][1]
    assert toks[2] == ("p", "{") and toks[-1] == ("p", "}")
    toks = toks[3:-1]
    graph, nodes, edges = {}, [], []
    i = 0

    def attr_list(i):
        attrs = {}
        if i < len(toks) and toks[i] == ("p", "["):
            i += 1
            while toks[i] != ("p", "]"):
                if toks[i] in (("p", ","), ("p", ";")):
                    i += 1
                    continue
                key, eq, val = toks[i], toks[i + 1], toks[i + 2]
                assert eq == ("p", "="), toks[i : i + 3]
                attrs[key[1]] = val[1]
                i += 3
            i += 1
        return attrs, i

    while i < len(toks):
        if toks[i] == ("p", ";"):
            i += 1
            continue
        first = toks[i][1]
        if i + 1 < len(toks) and toks[i + 1] == ("p", "->"):
            second = toks[i + 2][1]
            attrs, i = attr_list(i + 3)
            edges.append((first, second, attrs))
        elif i + 1 < len(toks) and toks[i + 1] == ("p", "="):
            graph[first] = toks[i + 2][1]
            i += 3
        else:
            attrs, i = attr_list(i + 1)
            nodes.append((first, attrs))
    return name, graph, nodes, edges


def test_parse_dot_reads_quoted_multiline_labels():
    src = 'digraph t {\n\t"a b" [label="Pooling\nmax, 2x2/1" shape=box]\n\tc -> "a b" [label=""]\n}'
    assert parse_dot(src) == (
        "t",
        {},
        [("a b", {"label": "Pooling\nmax, 2x2/1", "shape": "box"})],
        [("c", "a b", {"label": ""})],
    )


# ------------------------------------------------------------------ vs MXNet
PLOT_PARAMS = [
    pytest.param(cid, k, id=f"{cid}-{k}")
    for cid, c in CASES.items()
    for k in range(len(c["plots"]))
]
SUMMARY_PARAMS = [
    pytest.param(cid, k, id=f"{cid}-{k}")
    for cid, c in CASES.items()
    for k in range(len(c["summaries"]))
]


@pytest.mark.parametrize("case_id,k", PLOT_PARAMS)
def test_plot_network_matches_mxnet(case_id, k):
    rec = CASES[case_id]["plots"][k]
    dot = mx.viz.plot_network(build(case_id), **call_kwargs(rec["kwargs"]))
    assert isinstance(dot, graphviz.Digraph)
    got, want = parse_dot(dot.source), parse_dot(rec["source"])
    assert got[0] == want[0]  # title
    assert got[1] == want[1]  # graph attributes
    assert [n for n, _ in got[2]] == [n for n, _ in want[2]]  # node set and order
    for (name, attrs), (_, ref) in zip(got[2], want[2], strict=True):
        assert attrs == ref, name  # label, fillcolor, shape, size...
    assert got[3] == want[3]  # edges with shape/type labels, in order


@pytest.mark.parametrize("case_id,k", SUMMARY_PARAMS)
def test_print_summary_matches_mxnet(case_id, k, capsys):
    rec = CASES[case_id]["summaries"][k]
    mx.viz.print_summary(build(case_id), **call_kwargs(rec["kwargs"]))
    got = capsys.readouterr().out.split("\n")
    want = rec["text"].split("\n")
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        assert g == w, f"line {i}"
    assert len(got) == len(want)


def test_plot_network_digraph_object():
    dot = mx.viz.plot_network(build("mlp"), title="mlp", save_format="svg")
    assert isinstance(dot, graphviz.Digraph)
    assert dot.name == "mlp" and dot.format == "svg"
    # defaults: title 'plot', format 'pdf'; node_attrs given by the caller are not modified
    attrs = {"shape": "oval"}
    dot = mx.viz.plot_network(build("mlp"), node_attrs=attrs)
    assert (dot.name, dot.format) == ("plot", "pdf") and attrs == {"shape": "oval"}


def test_plot_network_seed_mlp_text():
    """The seed's MLP plot, checked by hand against MXNet's drawing rules."""
    dot = mx.viz.plot_network(build("mlp"), shape={"data": (100, 200)})
    _, _, nodes, edges = parse_dot(dot.source)
    labels = {n: a["label"] for n, a in nodes}
    assert labels == {
        "data": "data",
        "fc1": "FullyConnected\n128",
        "relu1": "Activation\nrelu",
        "fc2": "FullyConnected\n10",
        "out_label": "out_label",
        "out": "out",
    }
    assert [(t, h, a["label"]) for t, h, a in edges] == [
        ("fc1", "data", "200"),
        ("relu1", "fc1", "128"),
        ("fc2", "relu1", "128"),
        ("out", "fc2", "10"),
        ("out", "out_label", ""),
    ]


def test_duplicate_variable_names_warn():
    x, y = mx.sym.var("x"), mx.sym.var("x")
    with mx.name.NameManager():
        s = x + y
    with pytest.warns(RuntimeWarning, match="Repeated names: x"):
        dot = mx.viz.plot_network(s)
    _, _, nodes, edges = parse_dot(dot.source)
    assert [n for n, _ in nodes] == ["x", "x", "_plus0"]
    assert [(t, h) for t, h, _ in edges] == [("_plus0", "x"), ("_plus0", "x")]


def test_bad_arguments():
    with pytest.raises(TypeError, match="must be a Symbol"):
        mx.viz.plot_network(3)
    with pytest.raises(TypeError, match="must be a Symbol"):
        mx.viz.print_summary(mx.nd.ones((2,)))
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3)
    with pytest.raises(ValueError, match="Input shape is incomplete"):
        mx.viz.plot_network(fc, shape={})
    with pytest.raises(ValueError, match="Input shape is incomplete"):
        mx.viz.print_summary(fc, shape={})


def test_missing_graphviz_raises_mxneterror(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "graphviz", None)  # makes `import graphviz` fail
    with pytest.raises(MXNetError, match="pip install graphviz"):
        mx.viz.plot_network(build("mlp"))
    mx.viz.print_summary(build("mlp"), shape={"data": (1, 3)})  # needs no graphviz
    assert "Total params: 1802" in capsys.readouterr().out  # (3+1)*128 + (128+1)*10


@needs_mxnet
def test_live_mxnet_mlp_plot_and_summary():
    """One case regenerated with MXNet in a subprocess (guards the fixture)."""
    code = CASES["mlp"]["code"]
    script = (
        "import mxnet as mx\nwith mx.name.NameManager():\n"
        + "".join(f"    {line}\n" for line in code.strip().splitlines())
        + "print(mx.viz.plot_network(net, shape={'data': (4, 7)}).source)\n"
        + "print('@@')\nmx.viz.print_summary(net, shape={'data': (4, 7)}, line_length=90)\n"
    )
    dot_src, summary = run_mxnet(script).split("@@\n")
    net = build("mlp")
    assert parse_dot(mx.viz.plot_network(net, shape={"data": (4, 7)}).source) == parse_dot(dot_src)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        mx.viz.print_summary(net, shape={"data": (4, 7)}, line_length=90)
    assert buf.getvalue() == summary
