"""gluonjax.data.digits: the embedded 8x8 digits and the batch iterator."""

from __future__ import annotations

import numpy as np
import pytest

from gluonjax.data import DIGITS_FILE, batches, digits

# scikit-learn's load_digits(): 1797 images, class counts as documented by the UCI set
CLASS_COUNTS = [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]


def test_file_is_small_and_pickle_free():
    assert DIGITS_FILE.stat().st_size < 100_000
    with np.load(DIGITS_FILE, allow_pickle=False) as f:
        assert sorted(f.files) == ["test_images", "test_labels", "train_images", "train_labels"]
        assert all(f[k].dtype == np.uint8 for k in f.files)


def test_raw_split():
    xtr, ytr = digits("train", raw=True)
    xte, yte = digits("test", raw=True)
    assert xtr.shape == (1497, 8, 8) and xte.shape == (300, 8, 8)
    assert xtr.dtype == np.uint8 and ytr.dtype == np.uint8
    assert xtr.max() == 16 and xtr.min() == 0
    counts = np.bincount(np.concatenate([ytr, yte]), minlength=10)
    assert counts.tolist() == CLASS_COUNTS
    assert set(yte.tolist()) == set(range(10))


@pytest.mark.parametrize("size", [8, 16, 28, 30])
def test_resize_matches_loop_reference(size):
    raw, labels = digits("test", raw=True)
    x, y = digits("test", size=size)
    assert x.shape == (300, 1, size, size) and x.dtype == np.float32
    assert y.dtype == np.int32 and (y == labels).all()
    f = size // 8
    lo = (size - 8 * f) // 2
    ref = np.zeros((300, 1, size, size), np.float32)
    for n in range(0, 300, 37):
        for i in range(8 * f):
            for j in range(8 * f):
                ref[n, 0, lo + i, lo + j] = raw[n, i // f, j // f] / 16.0
        np.testing.assert_array_equal(x[n], ref[n])


def test_bad_arguments():
    with pytest.raises(ValueError, match="split"):
        digits("validation")
    with pytest.raises(ValueError, match="size"):
        digits(size=4)
    x, y = digits("test")
    with pytest.raises(ValueError, match="labels"):
        next(batches(x, y[:5], 4))


def test_batches_cover_everything_once():
    x = np.arange(10)[:, None].astype(np.float32)
    y = np.arange(10)
    got = [b for b, _ in batches(x, y, 4)]
    assert [len(b) for b in got] == [4, 4, 2]
    shuffled = list(batches(x, y, 4, shuffle=True, seed=1, last_batch="discard"))
    assert [len(b) for b, _ in shuffled] == [4, 4]
    seen = np.concatenate([lab for _, lab in shuffled])
    assert len(set(seen.tolist())) == 8
    for b, lab in shuffled:
        assert (b[:, 0] == lab).all()
    again = list(batches(x, y, 4, shuffle=True, seed=1, last_batch="discard"))
    assert all((a[1] == b[1]).all() for a, b in zip(shuffled, again, strict=True))
