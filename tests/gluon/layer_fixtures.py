"""Load the MXNet 1.9.1 layer fixtures written by ``tools/make_layer_fixtures.py``."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import numpy as np

import gluonjax as mx

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "layers"
RTOL, ATOL = 1e-4, 1e-5


def _decode(v):
    if isinstance(v, dict) and "__tuple__" in v:
        return tuple(_decode(x) for x in v["__tuple__"])
    return v


@cache
def _records():
    return json.loads((FIXTURES / "cases.json").read_text())


@cache
def _npz(name):
    with np.load(FIXTURES / name) as f:
        return {k: f[k] for k in f.files}


def cases(families):
    """Fixture records whose npz file is one of ``families`` (e.g. ``{'conv.npz'}``)."""
    return [r for r in _records() if r["file"] in families]


def arrays(record):
    """{suffix: array} of one case (``x``, ``y``, ``head``, ``xgrad``, ``p.<name>``...)."""
    pre = record["id"] + "."
    return {k[len(pre) :]: v for k, v in _npz(record["file"]).items() if k.startswith(pre)}


def build(record):
    kwargs = {k: _decode(v) for k, v in record["kwargs"].items()}
    return getattr(mx.gluon.nn, record["cls"])(**kwargs)


def check_repr_and_params(record):
    """repr before/after the first forward; structural names, shapes, display names."""
    layer = build(record)
    assert repr(layer) == record["repr_init"]
    layer.initialize()
    layer(mx.nd.array(arrays(record)["x"]))
    assert repr(layer) == record["repr"]
    params = layer._collect_params_with_prefix()
    assert list(params) == list(record["params"])
    # display names: <alias><counter>_<local>; counters depend on creation order
    alias = re.sub(r"\d+_$", "", record["prefix"])
    assert re.fullmatch(re.escape(alias) + r"\d+_", layer.prefix)
    for name, p in params.items():
        want = record["params"][name]
        assert tuple(p.shape) == tuple(want["shape"])
        assert p.name == layer.prefix + want["name"][len(record["prefix"]) :]


def check_values(record, hybridize, xgrad=True):
    """Forward output, input gradient (unless ``xgrad=False``) and parameter gradients."""
    data = arrays(record)
    layer = build(record)
    layer.initialize()
    if hybridize:
        layer.hybridize()
    layer(mx.nd.array(data["x"]))  # completes deferred init
    params = layer._collect_params_with_prefix()
    for name, p in params.items():
        p.set_data(mx.nd.array(data["p." + name]))
    x = mx.nd.array(data["x"])
    x.attach_grad()
    with mx.autograd.record():
        y = layer(x)
    y.backward(mx.nd.array(data["head"]))
    np.testing.assert_allclose(y.asnumpy(), data["y"], rtol=RTOL, atol=ATOL)
    if xgrad:
        np.testing.assert_allclose(x.grad.asnumpy(), data["xgrad"], rtol=RTOL, atol=ATOL)
    for name, p in params.items():
        np.testing.assert_allclose(
            p.grad().asnumpy(), data["g." + name], rtol=RTOL, atol=ATOL, err_msg=name
        )
