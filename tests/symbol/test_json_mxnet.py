"""Symbol JSON interop with the real MXNet 1.9.1, both directions.

Fixtures (tests/fixtures/symbol/, made by tools/make_symbol_fixtures.py under
.venv-mxnet) hold MXNet's JSON, random arguments/aux states and MXNet's
inference outputs for a resnet-like block, an inception-like block and a graph
of miscellaneous operators/attributes. The graph builders in that tool take the
framework module, so gluonjax builds exactly the same graphs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.symbol._eval import graph_function

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import make_symbol_fixtures as fixtures  # noqa: E402
from mxnet_ref import needs_mxnet, run_mxnet  # noqa: E402

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "symbol"
NAMES = list(fixtures.GRAPHS)


def _fixture(name):
    ref_json = (FIX / f"{name}-symbol.json").read_text()
    meta = json.loads((FIX / f"{name}-meta.json").read_text())
    with np.load(FIX / f"{name}.npz") as z:
        arrays = {k: z[k] for k in z.files}
    args = {k[4:]: v for k, v in arrays.items() if k.startswith("arg:")}
    aux = {k[4:]: v for k, v in arrays.items() if k.startswith("aux:")}
    outs = [arrays[f"out{i}"] for i in range(len(meta["outputs"]))]
    return ref_json, meta, args, aux, outs


def _run(sym, args, aux):
    outs, _ = graph_function(sym)(args, aux, training=False)
    return [np.asarray(o) for o in outs]


@pytest.mark.parametrize("name", NAMES)
def test_tojson_equals_mxnet_tojson(name):
    """(c) the same graph built in both frameworks serialises to the same JSON."""
    ref_json, *_ = _fixture(name)
    build, _ = fixtures.GRAPHS[name]
    assert json.loads(build(mx).tojson()) == json.loads(ref_json)


@pytest.mark.parametrize("name", NAMES)
def test_load_mxnet_json_and_run(name):
    """(a) gluonjax loads MXNet's JSON and reproduces MXNet's outputs."""
    ref_json, meta, args, aux, outs = _fixture(name)
    sym = mx.sym.load_json(ref_json)
    assert sym.list_arguments() == meta["arguments"]
    assert sym.list_auxiliary_states() == meta["aux_states"]
    assert sym.list_outputs() == meta["outputs"]
    assert sym.list_inputs() == meta["inputs"]
    got = _run(sym, args, aux)
    assert len(got) == len(outs)
    for g, r in zip(got, outs):
        assert g.shape == r.shape
        assert g.dtype == r.dtype
        np.testing.assert_allclose(
            g.astype(np.float32),
            r.astype(np.float32),
            rtol=1e-4,
            atol=1e-5 if r.dtype != np.float16 else 1e-3,
        )
    # writing it back gives MXNet's document again
    assert json.loads(sym.tojson()) == json.loads(ref_json)


@pytest.mark.parametrize("name", NAMES)
def test_loaded_graph_metadata_matches_mxnet(name):
    ref_json, meta, *_ = _fixture(name)
    sym = mx.sym.load_json(ref_json)
    arg_s, out_s, aux_s = sym.infer_shape(**meta["input_shapes"])
    assert [list(s) for s in arg_s] == meta["arg_shapes"]
    assert [list(s) for s in out_s] == meta["out_shapes"]
    assert [list(s) for s in aux_s] == meta["aux_shapes"]
    arg_t, out_t, aux_t = sym.infer_type(**{k: "float32" for k in meta["input_shapes"]})
    assert [np.dtype(t).name for t in arg_t] == meta["arg_types"]
    assert [np.dtype(t).name for t in out_t] == meta["out_types"]
    assert [np.dtype(t).name for t in aux_t] == meta["aux_types"]
    assert sym.get_internals().list_outputs() == meta["internals"]
    assert sym.debug_str() == meta["debug_str"]
    assert sym.attr_dict() == meta["attr_dict"]


@pytest.mark.parametrize("name", NAMES)
def test_file_roundtrip_matches_mxnet_outputs(name, tmp_path):
    ref_json, _, args, aux, outs = _fixture(name)
    fname = tmp_path / f"{name}-symbol.json"
    fname.write_text(ref_json)
    sym = mx.sym.load(str(fname))
    sym.save(str(tmp_path / "again.json"))
    again = mx.sym.load(str(tmp_path / "again.json"))
    for g, r in zip(_run(again, args, aux), outs):
        np.testing.assert_allclose(g.astype(np.float32), r.astype(np.float32), rtol=1e-4, atol=1e-3)


MXNET_RUN = r"""
import json, sys
import numpy as np
import mxnet as mx
out = {}
for name in json.loads(sys.argv[1] if len(sys.argv) > 1 else %(names)r):
    sym = mx.sym.load('%(tmp)s/' + name + '-symbol.json')
    z = np.load('%(tmp)s/' + name + '-args.npz')
    args = {k[4:]: mx.nd.array(z[k]) for k in z.files if k.startswith('arg:')}
    aux = {k[4:]: mx.nd.array(z[k]) for k in z.files if k.startswith('aux:')}
    exe = sym.bind(mx.cpu(), args, aux_states=aux, grad_req='null')
    res = [o.asnumpy() for o in exe.forward(is_train=False)]
    np.savez('%(tmp)s/' + name + '-mxout.npz', *res)
    out[name] = [sym.list_arguments(), sym.list_auxiliary_states(), sym.list_outputs()]
print(json.dumps(out))
"""


@needs_mxnet
def test_mxnet_loads_gluonjax_json(tmp_path):
    """(b) real MXNet loads gluonjax's JSON, binds the stored args and agrees."""
    ours = {}
    for name in NAMES:
        _, _, args, aux, _ = _fixture(name)
        build, _ = fixtures.GRAPHS[name]
        sym = build(mx)
        sym.save(str(tmp_path / f"{name}-symbol.json"))
        arrays = {f"arg:{k}": v for k, v in args.items()}
        arrays.update({f"aux:{k}": v for k, v in aux.items()})
        np.savez(tmp_path / f"{name}-args.npz", **arrays)
        ours[name] = (sym, _run(sym, args, aux))
    listing = json.loads(run_mxnet(MXNET_RUN % {"names": json.dumps(NAMES), "tmp": tmp_path}))
    for name in NAMES:
        sym, got = ours[name]
        assert listing[name] == [
            sym.list_arguments(),
            sym.list_auxiliary_states(),
            sym.list_outputs(),
        ]
        with np.load(tmp_path / f"{name}-mxout.npz") as z:
            ref = [z[f"arr_{i}"] for i in range(len(z.files))]
        assert len(ref) == len(got)
        for g, r in zip(got, ref):
            assert g.dtype == r.dtype
            np.testing.assert_allclose(
                g.astype(np.float32),
                r.astype(np.float32),
                rtol=1e-4,
                atol=1e-5 if r.dtype != np.float16 else 1e-3,
            )
