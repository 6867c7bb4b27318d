"""``mx.test_utils``' data helpers (get_mnist, get_mnist_ubyte, get_mnist_iterator,
get_mnist_pkl, get_cifar10, get_zip_data, get_bz2_data) on small synthetic files in
MXNet's formats, with the network replaced by a fake ``gluon.utils.download`` that
serves prepared bytes for MXNet's URLs (and records the calls).

Expected values follow MXNet 1.9.1's definitions (checked against real MXNet on these
synthetic files): ``get_mnist`` gives pixel / 255 as float32 and int8 labels, MNISTIter
pixel / 256 and float32 labels, in a shuffled order, ``num_parts`` taking contiguous
parts of the file.
"""

from __future__ import annotations

import bz2
import gzip
import io
import os
import struct
import zipfile

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import test_utils as tu
from gluonjax.base import FileFormatError

MNIST = "http://data.mxnet.io/data/mnist/"


def _idx(arr, magic):
    head = struct.pack(">II", magic, len(arr)) + (b"" if arr.ndim == 1 else b"\0\0\0\x1c" * 2)
    return head + arr.astype(np.uint8).tobytes()


def _mnist_arrays(seed=0):
    rng = np.random.RandomState(seed)
    return {
        "train": (rng.randint(0, 256, (12, 28, 28)), rng.randint(0, 10, 12)),
        "t10k": (rng.randint(0, 256, (10, 28, 28)), rng.randint(0, 10, 10)),
    }


def _mnist_files(arrays):
    """MNIST's idx files (uncompressed) by name."""
    out = {}
    for prefix, (img, lbl) in arrays.items():
        out[f"{prefix}-images-idx3-ubyte"] = _idx(img, 2051)
        out[f"{prefix}-labels-idx1-ubyte"] = _idx(lbl, 2049)
    return out


def _zip(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


@pytest.fixture
def served(monkeypatch, tmp_path):
    """``{url: bytes}`` the fake downloader serves; ``served.calls`` lists (url, path)."""
    monkeypatch.chdir(tmp_path)

    class Served(dict):
        calls = []

    table = Served()

    def fake_download(url, path=None, overwrite=False, sha1_hash=None, retries=5, **kw):
        table.calls.append((url, path))
        if url not in table:
            raise AssertionError(f"unexpected download of {url}")
        with open(path, "wb") as f:
            f.write(table[url])
        return path

    monkeypatch.setattr(mx.gluon.utils, "download", fake_download)
    return table


def test_get_mnist_reads_the_gz_files_in_the_current_folder(served):
    arrays = _mnist_arrays()
    for name, data in _mnist_files(arrays).items():
        with open(name + ".gz", "wb") as f:
            f.write(gzip.compress(data))
    got = tu.get_mnist()
    assert served.calls == []
    for split, prefix in (("train", "train"), ("test", "t10k")):
        img, lbl = arrays[prefix]
        data, label = got[f"{split}_data"], got[f"{split}_label"]
        assert data.dtype == np.float32 and data.shape == (len(lbl), 1, 28, 28)
        assert label.dtype == np.int8
        np.testing.assert_array_equal(label, lbl)
        np.testing.assert_allclose(data, img[:, None] / 255.0, rtol=1e-6)


def test_get_mnist_downloads_missing_files_from_mxnets_url(served):
    arrays = _mnist_arrays(1)
    for name, data in _mnist_files(arrays).items():
        served[MNIST + name + ".gz"] = gzip.compress(data)
    got = tu.get_mnist()
    assert sorted(u for u, _ in served.calls) == sorted(served)
    assert all(os.path.basename(u) == p for u, p in served.calls)
    np.testing.assert_array_equal(got["train_label"], arrays["train"][1])
    np.testing.assert_allclose(got["test_data"], arrays["t10k"][0][:, None] / 255.0, rtol=1e-6)


def test_get_mnist_ubyte_extracts_mxnets_zip_only_when_a_file_is_missing(served):
    files = _mnist_files(_mnist_arrays())
    served["http://data.mxnet.io/mxnet/data/mnist.zip"] = _zip(files)
    tu.get_mnist_ubyte()
    assert served.calls == [
        ("http://data.mxnet.io/mxnet/data/mnist.zip", os.path.join("data", "mnist.zip"))
    ]
    for name, data in files.items():
        with open(os.path.join("data", name), "rb") as f:
            assert f.read() == data
    tu.get_mnist_ubyte()  # everything present: no second download
    assert len(served.calls) == 1


def _check_mnist_batches(it, img, lbl, rows, shape):
    """Every batch holds distinct samples of ``rows``, pixel / 256 with their labels."""
    seen = []
    for batch in it:
        x, y = batch.data[0], batch.label[0]
        assert x.shape == shape and x.dtype == np.float32 and y.dtype == np.float32
        for xi, yi in zip(x.asnumpy().reshape(shape[0], -1), y.asnumpy(), strict=True):
            diff = np.abs(img[rows].reshape(len(rows), -1) / 256.0 - xi).max(1)
            j = rows[int(diff.argmin())]
            assert diff.min() < 1e-6 and yi == lbl[j]
            seen.append(j)
    assert len(seen) == len(set(seen)) == len(rows) // shape[0] * shape[0]


def test_get_mnist_iterator_reads_data_folder(served):
    arrays = _mnist_arrays()
    os.makedirs("data")
    for name, data in _mnist_files(arrays).items():
        with open(os.path.join("data", name), "wb") as f:
            f.write(data)
    train, val = tu.get_mnist_iterator(4, (1, 28, 28))
    assert served.calls == []
    assert [tuple(d) for d in train.provide_data] == [("data", (4, 1, 28, 28))]
    assert [tuple(d) for d in val.provide_label] == [("softmax_label", (4,))]
    _check_mnist_batches(train, *arrays["train"], list(range(12)), (4, 1, 28, 28))
    _check_mnist_batches(val, *arrays["t10k"], list(range(10)), (4, 1, 28, 28))
    train, val = tu.get_mnist_iterator(2, (784,), num_parts=2, part_index=1)
    _check_mnist_batches(train, *arrays["train"], list(range(6, 12)), (2, 784))
    _check_mnist_batches(val, *arrays["t10k"], list(range(5, 10)), (2, 784))


def _cifar_rec(path, images, labels):
    rec = mx.recordio.MXRecordIO(path, "w")
    for i, (img, lab) in enumerate(zip(images, labels, strict=True)):
        header = mx.recordio.IRHeader(0, float(lab), i, 0)
        rec.write(mx.recordio.pack_img(header, img[:, :, ::-1], img_fmt=".png"))  # BGR
    rec.close()


def test_get_cifar10_extracts_the_record_files_and_they_read(served, tmp_path):
    pytest.importorskip("cv2", reason="packing the PNG records needs OpenCV")
    rng = np.random.RandomState(3)
    members = {}
    images = {}
    for split in ("train", "test"):
        img = rng.randint(0, 256, (4, 8, 8, 3)).astype(np.uint8)  # RGB
        lab = rng.randint(0, 10, 4)
        images[split] = (img, lab)
        _cifar_rec(str(tmp_path / "tmp.rec"), img, lab)
        members[f"cifar/{split}.rec"] = (tmp_path / "tmp.rec").read_bytes()
        members[f"cifar/{split}.lst"] = "".join(
            f"{i}\t{float(v)}\t{i}.png\n" for i, v in enumerate(lab)
        )
    served["http://data.mxnet.io/mxnet/data/cifar10.zip"] = _zip(members)
    tu.get_cifar10()
    assert served.calls == [
        ("http://data.mxnet.io/mxnet/data/cifar10.zip", os.path.join("data", "cifar10.zip"))
    ]
    for split in ("train", "test"):
        img, lab = images[split]
        it = mx.io.ImageRecordIter(
            path_imgrec=os.path.join("data", "cifar", f"{split}.rec"),
            data_shape=(3, 8, 8),
            batch_size=2,
        )
        got_x = np.concatenate([b.data[0].asnumpy() for b in it])
        it.reset()
        got_y = np.concatenate([b.label[0].asnumpy() for b in it])
        assert got_x.dtype == np.float32 and got_x.shape == (4, 3, 8, 8)
        np.testing.assert_array_equal(got_x, img.transpose(0, 3, 1, 2).astype(np.float32))
        np.testing.assert_array_equal(got_y, lab)
    tu.get_cifar10()  # all four files present: no second download
    assert len(served.calls) == 1


def test_get_mnist_pkl_downloads_but_never_opens_the_pickle(served):
    url = "http://deeplearning.net/data/mnist/mnist.pkl.gz"
    served[url] = b"not a pickle: it must never be loaded"
    assert tu.get_mnist_pkl() is None
    assert served.calls == [(url, os.path.join("data", "mnist.pkl.gz"))]
    tu.get_mnist_pkl()
    assert len(served.calls) == 1


def test_get_zip_data_and_get_bz2_data(served):
    url = "http://files.example.org/datasets/ml-tiny.zip"
    served[url] = _zip({"ml-tiny/ratings.dat": b"1::2::5\n"})
    tu.get_zip_data("zdir", url, "ml-tiny.zip")
    with open(os.path.join("zdir", "ml-tiny", "ratings.dat"), "rb") as f:
        assert f.read() == b"1::2::5\n"
    tu.get_zip_data("zdir", url, "ml-tiny.zip")  # the archive is there: nothing to do
    assert len(served.calls) == 1

    payload = b"".join(b"%d 1:0.5 7:1.25\n" % i for i in range(1000))
    url = "http://files.example.org/libsvm/tiny.t.bz2"
    served[url] = bz2.compress(payload)
    tu.get_bz2_data("bdir", "tiny.t", url, "tiny.t.bz2")
    with open(os.path.join("bdir", "tiny.t"), "rb") as f:
        assert f.read() == payload
    assert not os.path.exists(os.path.join("bdir", "tiny.t.bz2"))  # removed, as MXNet
    tu.get_bz2_data("bdir", "tiny.t", url, "tiny.t.bz2")
    assert served.calls[-1] == (url, os.path.join("bdir", "tiny.t.bz2"))
    assert len(served.calls) == 2


def test_damaged_archives_raise_file_format_errors(served):
    url = "http://files.example.org/broken.zip"
    served[url] = b"PK this is no zip"
    with pytest.raises(FileFormatError, match="broken.zip"):
        tu.get_zip_data("zdir", url, "broken.zip")
    served["http://files.example.org/broken.bz2"] = b"BZh9 nor a bz2 stream"
    with pytest.raises(FileFormatError, match="broken.bz2"):
        tu.get_bz2_data("bdir", "out", "http://files.example.org/broken.bz2", "broken.bz2")
    assert not os.path.exists(os.path.join("bdir", "out"))
    with open("t10k-labels-idx1-ubyte.gz", "wb") as f:  # a wrong magic number
        f.write(gzip.compress(_idx(np.zeros((2, 28, 28)), 2051)))
    for name, data in _mnist_files(_mnist_arrays()).items():
        if not os.path.exists(name + ".gz"):
            with open(name + ".gz", "wb") as f:
                f.write(gzip.compress(data))
    with pytest.raises(FileFormatError, match="t10k-labels-idx1-ubyte.gz"):
        tu.get_mnist()
