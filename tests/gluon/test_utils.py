"""gluon.utils: split_data, split_and_load, clip_global_norm vs NumPy."""

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import nd
from gluonjax.gluon import utils


def test_split_data_even_and_uneven():
    xv = np.arange(14, dtype=np.float32).reshape(7, 2)
    # MXNet 1.9.1 splits as numpy.array_split: the first slices take the extra rows
    for n, axis in ((3, 0), (2, 1), (4, 0), (9, 0)):
        data = xv if axis == 0 else xv.T
        parts = utils.split_data(nd.array(data), n, batch_axis=axis, even_split=False)
        want = np.array_split(data, n, axis=axis)
        assert [p.shape for p in parts] == [w.shape for w in want]
        for p, w in zip(parts, want):
            np.testing.assert_array_equal(p.asnumpy(), w)
    # MXNet 1.9.1 raises ValueError (its test_split_data catches ValueError)
    with pytest.raises(ValueError, match="evenly split") as err:
        utils.split_data(nd.array(xv), 3)
    assert isinstance(err.value, mx.MXNetError)


def test_split_and_load_on_cpu_contexts():
    xv = np.arange(8, dtype=np.float32).reshape(4, 2)
    parts = utils.split_and_load(xv, [mx.cpu(0), mx.cpu(0)])
    assert len(parts) == 2 and all(p.context == mx.cpu(0) for p in parts)
    np.testing.assert_array_equal(parts[1].asnumpy(), xv[2:])


def test_clip_global_norm():
    a, b = np.array([3.0, 0.0], np.float32), np.array([[4.0]], np.float32)
    arrs = [nd.array(a), nd.array(b)]
    norm = utils.clip_global_norm(arrs, 1.0)
    assert norm == pytest.approx(5.0)
    np.testing.assert_allclose(arrs[0].asnumpy(), a / 5, rtol=1e-6)
    np.testing.assert_allclose(arrs[1].asnumpy(), b / 5, rtol=1e-6)
    small = [nd.array(a)]
    utils.clip_global_norm(small, 10.0)
    np.testing.assert_array_equal(small[0].asnumpy(), a)
    with pytest.warns(UserWarning, match="nan or inf"):
        utils.clip_global_norm([nd.array([np.inf])], 1.0)
