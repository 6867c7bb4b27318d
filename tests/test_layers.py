"""The package keeps its layers (docs/architecture.md): no import from a lower layer
to a higher one and no cycle between packages, counting every ``import`` and
``from ... import`` in ``gluonjax/``, at module level and inside functions alike, and
``importlib.import_module`` of a literal name.

Run as a script to print every edge that breaks the rules:
``python tests/test_layers.py``.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "gluonjax"

# Bottom to top. A unit is a top-level module or package of gluonjax (``gluonjax.X``);
# it may import units of its own layer or of layers below it, never above.
LAYERS = [
    (
        "core",
        "base _caches _collectives _compile _distributed _graph _inline _io _rng _data _metric "
        "_progress context name attribute util runtime profiler lr_scheduler metric recordio",
    ),
    ("ops", "_ops _control_flow _step_keys contrib"),
    ("tape", "_tape"),
    ("nd", "ndarray random numpy numpy_extension numpy_dispatch_protocol"),
    ("sym", "symbol executor viz"),
    ("autograd", "autograd contrib.autograd"),
    (
        "optimizer/kvstore",
        "optimizer kvstore initializer _init operator _custom_op _legacy_op monitor",
    ),
    ("gluon", "gluon io image data rnn deploy contrib.text onnx contrib.onnx"),
    ("module", "module model callback contrib.svrg_optimization"),
    ("tools", "test_utils tools demo mxnet_alias run launch"),
]
LAYER_OF = {u: i for i, (_, units) in enumerate(LAYERS) for u in units.split()}

# Imports that go up on purpose, each with its reason (also listed in docs/architecture.md).
ALLOWED_UP: dict[tuple[str, str], str] = {
    ("gluonjax._data.lite", "gluonjax"): (
        "a data-loader worker that started without jax turns itself into a full gluonjax "
        "process (in that worker, never in the importing process)"
    ),
}


def _modules():
    mods = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    return mods


def _resolve(name, mods):
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def edges():
    """``(importer, imported, line)`` for every import of a gluonjax module in gluonjax/."""
    mods = _modules()
    out = []
    for mod, path in mods.items():
        pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = pkg
                    for _ in range(node.level - 1):
                        up = up.rpartition(".")[0]
                    base = up + ("." + node.module if node.module else "")
                names = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names
                ]
            elif (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                names = [str(node.args[0].value)]
            for name in names:
                if name.startswith("gluonjax"):
                    target = _resolve(name, mods)
                    if target and target != mod:
                        out.append((mod, target, node.lineno))
    return out


# ``mx.contrib`` gathers MXNet's contrib modules of every height: its package (control
# flow, ``nd.contrib``) is an ops unit, each of these submodules a unit of its own layer.
CONTRIB_UNITS = {"autograd", "text", "svrg_optimization", "onnx"}


def unit(mod):
    parts = mod.split(".")
    if len(parts) > 2 and parts[1] == "contrib" and parts[2] in CONTRIB_UNITS:
        return f"contrib.{parts[2]}"
    return parts[1] if len(parts) > 1 else ""


def violations():
    """Upward imports (not allowed) and cycles between units, as messages."""
    bad = []
    graph = defaultdict(set)
    for a, b, line in edges():
        ua, ub = unit(a), unit(b)
        if ua == ub or ua == "":  # gluonjax/__init__ assembles the public namespace
            continue
        if ua not in LAYER_OF or (ub and ub not in LAYER_OF):
            continue  # test_every_unit_has_a_layer names it
        if ub == "":  # only the top layer may import the whole package
            if LAYER_OF[ua] < len(LAYERS) - 1 and (a, b) not in ALLOWED_UP:
                bad.append(f"{a}:{line} imports the whole gluonjax package (it imports everything)")
            continue
        graph[ua].add(ub)
        if LAYER_OF[ub] > LAYER_OF[ua] and (a, b) not in ALLOWED_UP:
            bad.append(
                f"{a}:{line} imports {b}: layer {LAYERS[LAYER_OF[ua]][0]!r} reaches up to "
                f"{LAYERS[LAYER_OF[ub]][0]!r}"
            )
    bad.extend(f"import cycle between packages: {' -> '.join(c)}" for c in _cycles(graph))
    return sorted(set(bad))


def _cycles(graph):
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_upward_import_and_no_cycle():
    bad = violations()
    assert not bad, "layering broken (see docs/architecture.md):\n" + "\n".join(bad)


def test_every_unit_has_a_layer():
    units = {unit(m) for m in _modules()} - {""}
    missing = sorted(units - set(LAYER_OF))
    assert not missing, f"add these to LAYERS in tests/test_layers.py: {missing}"


def test_architecture_doc_lists_layers_and_exceptions():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    for _, units in LAYERS:
        for u in units.split():
            assert re.search(rf"`{re.escape(u)}`", doc), f"docs/architecture.md does not place {u}"
    for a, b in ALLOWED_UP:
        assert f"{a} -> {b}" in doc, f"docs/architecture.md does not explain {a} -> {b}"


if __name__ == "__main__":
    print("\n".join(violations()) or "layers hold")
