"""gluon.utils: split_data, split_and_load, clip_global_norm vs NumPy."""

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import nd
from gluonjax.gluon import utils


def test_split_data_even_and_uneven():
    xv = np.arange(14, dtype=np.float32).reshape(7, 2)
    parts = utils.split_data(nd.array(xv), 3, even_split=False)
    assert [p.shape for p in parts] == [(2, 2), (2, 2), (3, 2)]
    np.testing.assert_array_equal(np.concatenate([p.asnumpy() for p in parts]), xv)
    cols = utils.split_data(nd.array(xv.T), 2, batch_axis=1, even_split=False)
    assert [c.shape for c in cols] == [(2, 3), (2, 4)]
    # MXNet 1.9.1 raises ValueError for both (its test_split_data catches ValueError)
    with pytest.raises(ValueError, match="evenly split") as err:
        utils.split_data(nd.array(xv), 3)
    assert isinstance(err.value, mx.MXNetError)
    with pytest.raises(ValueError, match="Too many slices"):
        utils.split_data(nd.array(xv), 9, even_split=False)


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
