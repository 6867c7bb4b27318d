"""``nd.arange`` and the ``_arange`` op against real MXNet 1.9.1: integer dtypes cast start
and step to the dtype first (and wrap), floats compute start + i*step in the dtype."""

import json

import numpy as np
import pytest

import gluonjax as mx
from tests.mxnet_ref import needs_mxnet, run_mxnet

CASES = [
    ((10,), "int32"),
    ((5, 100, 4), "int32"),
    ((1.3, 456.6, 1.3), "int32"),
    ((1.3, 456.6, 1.3), "uint8"),
    ((50, -50, -2), "uint8"),
    ((-100, 100, 1), "int8"),
    ((1.3, 456.6, 1.3), "float32"),
    ((50, -50, -2.5), "float32"),
]


@pytest.fixture(scope="module")
def mxnet_values():
    script = (
        "import json, mxnet as mx\n"
        f"cases = {CASES!r}\n"
        "print(json.dumps([mx.nd.arange(*c, repeat=2, dtype=d).asnumpy().tolist()"
        " for c, d in cases]))\n"
    )
    return json.loads(run_mxnet(script).strip().splitlines()[-1])


@needs_mxnet
@pytest.mark.parametrize("k", range(len(CASES)))
def test_arange_matches_mxnet(k, mxnet_values):
    args, dtype = CASES[k]
    want = np.array(mxnet_values[k], dtype=dtype)
    got = mx.nd.arange(*args, repeat=2, dtype=dtype).asnumpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    start, stop = (0, args[0]) if len(args) == 1 else args[:2]
    step = args[2] if len(args) > 2 else 1
    sym = mx.sym.arange(start=start, stop=stop, step=step, repeat=2, dtype=dtype)
    out = sym.bind(mx.cpu(), args={}).forward()[0].asnumpy()
    np.testing.assert_array_equal(out, want)


def test_arange_step_zero_raises():
    with pytest.raises(mx.base.MXNetError, match="step cannot be 0"):
        mx.nd.arange(0, 5, 0)
