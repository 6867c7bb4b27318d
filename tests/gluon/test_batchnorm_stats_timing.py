"""BatchNorm's running statistics move only when the backward runs, as in MXNet 1.x.

Expected values: ``tests/fixtures/bn_timing/stats.npz``, written by real MXNet 1.9.1
(``tools/make_bn_timing_fixtures.py``, whose scenario functions this test runs on
gluonjax).
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "make_bn_timing_fixtures", ROOT / "tools" / "make_bn_timing_fixtures.py"
)
fx = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fx)
REF = np.load(ROOT / "tests" / "fixtures" / "bn_timing" / "stats.npz")


def _check(prefix, got):
    keys = sorted(k for k in REF.files if k.startswith(prefix + "."))
    assert keys == sorted(f"{prefix}.{k}" for k in got)
    for k, v in got.items():
        np.testing.assert_allclose(v, REF[f"{prefix}.{k}"], rtol=1e-6, atol=1e-6, err_msg=k)


@pytest.mark.filterwarnings("ignore:Caution using SyncBatchNorm")
@pytest.mark.parametrize("case", fx.CASES)
@pytest.mark.parametrize("kind", fx.KINDS)
def test_stats_move_in_backward(kind, case):
    _check(f"{kind}.{case}", fx.timing(mx, kind, case))


def test_unbackpropagated_forward_leaves_stats():
    for kind in fx.KINDS:
        for case in ("train_mode", "record_only"):
            for k in REF.files:
                if k.startswith(f"{kind}.{case}.") and k.endswith("running_mean"):
                    assert not REF[k].any()  # MXNet left them at their initial zeros


@pytest.mark.parametrize("hybridize", [False, True])
def test_dcgan_three_calls_two_backwards(hybridize):
    _check(f"dcgan{int(hybridize)}", fx.dcgan(mx, hybridize))


def test_fused_step_moves_stats_every_step():
    net = fx._mlp(mx, 2, 4)
    net.hybridize()
    tr = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    step = tr.compile_step(net, mx.gluon.loss.L2Loss())
    rs = np.random.RandomState(9)
    for _ in range(2):
        x = mx.nd.array(rs.randn(8, 4).astype(np.float32))
        y = mx.nd.array(rs.randn(8, 2).astype(np.float32))
        step(x, y, 8)
    _check("fused", fx._stats(net))


def test_executor_moves_aux_in_backward():
    data = mx.sym.var("data")
    exe = mx.sym.BatchNorm(data, name="bn").simple_bind(mx.cpu(), data=(4, 3))
    x = np.random.RandomState(0).randn(4, 3).astype(np.float32) + 1
    exe.arg_dict["data"][:] = x
    exe.arg_dict["bn_gamma"][:] = 1
    exe.forward(is_train=True)
    np.testing.assert_array_equal(exe.aux_dict["bn_moving_mean"].asnumpy(), 0)
    exe.backward(mx.nd.ones((4, 3)))
    # moving = moving * 0.9 + batch mean * 0.1 (MXNet's float momentum)
    want = x.mean(0) * (1 - np.float32(0.9))
    np.testing.assert_allclose(exe.aux_dict["bn_moving_mean"].asnumpy(), want, rtol=1e-6)
