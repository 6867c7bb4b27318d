"""gluonjax export -> real MXNet 1.9.1 import: same graph inputs, same outputs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import export_nets as nets
import numpy as np
import pytest

import gluonjax as mx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mxnet_ref import needs_mxnet, run_mxnet  # noqa: E402

SCRIPT = """
import json, numpy as np, mxnet as mx
res = {}
for name in %(names)r:
    x = mx.nd.array(np.load(name + '-x.npy'))
    sym = mx.sym.load(name + '-symbol.json')
    net = mx.gluon.SymbolBlock.imports(name + '-symbol.json', ['data'], name + '-0000.params')
    out = net(x).asnumpy()
    net.hybridize()
    out_h = net(x).asnumpy()
    # the executor path (bind) as the seed tutorial's Module does
    params = mx.nd.load(name + '-0000.params')
    args = {k[4:]: v for k, v in params.items() if k.startswith('arg:')}
    aux = {k[4:]: v for k, v in params.items() if k.startswith('aux:')}
    args['data'] = x
    ex = sym.bind(mx.cpu(), args, aux_states=aux)
    out_b = ex.forward(is_train=False)[0].asnumpy()
    np.save(name + '-mx.npy', np.stack([out, out_h, out_b]))
    res[name] = [sym.list_arguments(), sym.list_auxiliary_states()]
print(json.dumps(res))
"""


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    d = tmp_path_factory.mktemp("mxexport")
    made = {}
    for name, (make, ref, shape) in nets.NETS.items():
        net = make()
        net.hybridize()
        x = np.random.RandomState(7).normal(size=shape).astype(np.float32)
        ours = net(mx.nd.array(x)).asnumpy()
        net.export(str(d / name), example_inputs=[mx.nd.array(x)], stablehlo=False)
        np.save(d / f"{name}-x.npy", x)
        made[name] = (net, ref, x, ours)
    return d, made


@needs_mxnet
def test_real_mxnet_loads_and_matches(exported):
    d, made = exported
    lists = json.loads(run_mxnet(SCRIPT % {"names": sorted(made)}, cwd=d).strip().splitlines()[-1])
    for name, (net, ref, x, ours) in made.items():
        mx_out = np.load(d / f"{name}-mx.npy")
        expected = ref(net, x)
        for out in mx_out:  # imports eager, imports hybridized, bind
            np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(ours, mx_out[0], rtol=1e-5, atol=1e-5)
        params = net._collect_params_with_prefix()
        args, aux = lists[name]
        assert args == ["data"] + [k for k in params if "running" not in k]
        assert aux == [k for k in params if "running" in k]
