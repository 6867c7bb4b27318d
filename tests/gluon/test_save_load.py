"""save_parameters / load_parameters and ParameterDict.save / load (MXNet 1.9.1 semantics)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import nd
from gluonjax.base import MXNetError
from gluonjax.gluon import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mxnet_ref import REPO_ROOT, needs_mxnet, run_mxnet  # noqa: E402

X = np.random.RandomState(5).randn(2, 4).astype(np.float32)

BUILD = """
def build(nn, hidden=3, extra=False):
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(hidden, activation="relu"), nn.BatchNorm(), nn.Dense(2))
        if extra:
            net.add(nn.Dense(2))
    return net
"""
exec(BUILD)  # defines build(nn, hidden, extra)


def _trained(tmp_path):
    net = build(nn)  # noqa: F821
    net.initialize(mx.init.Normal(0.5))
    with mx.autograd.record():  # move BatchNorm's running statistics away from 0/1
        y = net(nd.array(X))
    y.backward()
    path = str(tmp_path / "net.params")
    net.save_parameters(path)
    return net, path


def _snapshot(net):
    return {
        k: p.data().asnumpy().copy() for k, p in net.collect_params().items() if p._data is not None
    }


def test_structural_names_in_file(tmp_path):
    _, path = _trained(tmp_path)
    assert sorted(nd.load(path)) == sorted(
        [
            "0.weight",
            "0.bias",
            "1.gamma",
            "1.beta",
            "1.running_mean",
            "1.running_var",
            "2.weight",
            "2.bias",
        ]
    )


def test_load_in_new_process_same_outputs(tmp_path):
    net, path = _trained(tmp_path)
    expect = net(nd.array(X)).asnumpy()
    script = (
        BUILD
        + f"""
import json, numpy as np
import gluonjax as mx
from gluonjax.gluon import nn
for _ in range(3):
    build(nn)  # shift the global name counters: the prefixes differ from the saver's
net = build(nn)
net.load_parameters({path!r})
x = mx.nd.array(np.array({X.tolist()!r}, np.float32))
print(json.dumps([net.prefix, net(x).asnumpy().tolist()]))
"""
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=str(REPO_ROOT),
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    prefix, out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert prefix != net.prefix
    np.testing.assert_allclose(np.array(out, np.float32), expect, rtol=1e-5, atol=1e-6)


def test_load_into_uninitialized_and_deferred(tmp_path):
    net, path = _trained(tmp_path)
    expect = net(nd.array(X)).asnumpy()
    fresh = build(nn)  # noqa: F821  never initialized (MXNet allows this)
    fresh.load_parameters(path)
    np.testing.assert_allclose(fresh(nd.array(X)).asnumpy(), expect, rtol=1e-5, atol=1e-6)
    deferred = build(nn)  # noqa: F821
    deferred.initialize()
    deferred.load_parameters(path)
    assert deferred[0].weight.shape == (3, 4)
    np.testing.assert_allclose(deferred(nd.array(X)).asnumpy(), expect, rtol=1e-5, atol=1e-6)


def _initialized(**kw):
    net = build(nn, **kw)  # noqa: F821
    net.initialize(mx.init.Uniform(1.0))
    net(nd.array(X))
    return net


@pytest.mark.parametrize(
    "kw, names, load_kw",
    [
        ({"extra": True}, ["3.weight"], {"allow_missing": True}),  # missing in the file
        ({"hidden": 5}, ["0.weight"], None),  # wrong shape
    ],
)
def test_failed_load_changes_nothing(tmp_path, kw, names, load_kw):
    _, path = _trained(tmp_path)
    net = _initialized(**kw)
    before = _snapshot(net)
    with pytest.raises(MXNetError) as err:
        net.load_parameters(path)
    for n in names:
        assert n in str(err.value)
    after = _snapshot(net)
    assert before.keys() == after.keys()
    for k in before:
        np.testing.assert_array_equal(after[k], before[k])
    if load_kw:
        net.load_parameters(path, **load_kw)
        saved = nd.load(path)
        np.testing.assert_array_equal(net[0].weight.data().asnumpy(), saved["0.weight"].asnumpy())


def test_extra_in_file(tmp_path):
    _, path = _trained(tmp_path)
    small = nn.HybridSequential()
    small.add(nn.Dense(3, activation="relu"))
    small.initialize()
    small(nd.array(X))
    before = small[0].weight.data().asnumpy().copy()
    with pytest.raises(MXNetError) as err:
        small.load_parameters(path)
    assert "1.gamma" in str(err.value) or "2.weight" in str(err.value)
    np.testing.assert_array_equal(small[0].weight.data().asnumpy(), before)
    small.load_parameters(path, ignore_extra=True)
    np.testing.assert_array_equal(
        small[0].weight.data().asnumpy(), nd.load(path)["0.weight"].asnumpy()
    )


def test_paramdict_display_names_roundtrip(tmp_path):
    net, _ = _trained(tmp_path)
    path = str(tmp_path / "display.params")
    net.collect_params().save(path)
    assert sorted(nd.load(path)) == sorted(net.collect_params().keys())
    before = _snapshot(net)
    net.collect_params().initialize(mx.init.Zero(), force_reinit=True)
    net.collect_params().load(path)
    for k, v in _snapshot(net).items():
        np.testing.assert_array_equal(v, before[k])


def test_paramdict_strip_and_restore_prefix(tmp_path):
    net, _ = _trained(tmp_path)
    path = str(tmp_path / "strip.params")
    net.collect_params().save(path, strip_prefix=net.prefix)
    assert sorted(nd.load(path)) == sorted(k[len(net.prefix) :] for k in net.collect_params())
    other = build(nn)  # noqa: F821
    other.collect_params().load(path, restore_prefix=other.prefix)
    np.testing.assert_allclose(
        other(nd.array(X)).asnumpy(), net(nd.array(X)).asnumpy(), rtol=1e-5, atol=1e-6
    )
    # MXNet 1.9.1 legacy route: load_parameters on a file without '.' in its keys
    # restores the block's own prefix
    legacy = build(nn)  # noqa: F821
    legacy.load_parameters(path)
    np.testing.assert_allclose(
        legacy(nd.array(X)).asnumpy(), net(nd.array(X)).asnumpy(), rtol=1e-5, atol=1e-6
    )


def test_paramdict_load_missing_name(tmp_path):
    net, _ = _trained(tmp_path)
    path = str(tmp_path / "display.params")
    net.collect_params().save(path)
    other = _initialized()  # other prefix: every name is missing
    before = _snapshot(other)
    with pytest.raises(MXNetError) as err:
        other.collect_params().load(path)
    assert other[0].weight.name in str(err.value)
    for k, v in _snapshot(other).items():
        np.testing.assert_array_equal(v, before[k])
    with pytest.raises(MXNetError):
        net.collect_params().save(path, strip_prefix="nope_")


@needs_mxnet
@pytest.mark.mxnet
def test_file_interchange_with_real_mxnet(tmp_path):
    net, path = _trained(tmp_path)
    expect = net(nd.array(X)).asnumpy()
    back = str(tmp_path / "from_mxnet.params")
    script = (
        BUILD
        + f"""
import json, numpy as np, mxnet as mx
from mxnet.gluon import nn
net = build(nn)
net.load_parameters({path!r})
x = mx.nd.array(np.array({X.tolist()!r}, np.float32))
net.save_parameters({back!r})
print(json.dumps(net(x).asnumpy().tolist()))
"""
    )
    out = json.loads(run_mxnet(script).strip().splitlines()[-1])
    np.testing.assert_allclose(np.array(out, np.float32), expect, rtol=1e-5, atol=1e-6)
    fresh = build(nn)  # noqa: F821
    fresh.load_parameters(back)
    np.testing.assert_allclose(fresh(nd.array(X)).asnumpy(), expect, rtol=1e-5, atol=1e-6)
