"""RecordIO, vision datasets, file iterators and im2rec on MXNet-made fixture files."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _data_fixtures import FIXTURES, REF, image_paths  # noqa: E402

import gluonjax as mx  # noqa: E402
from gluonjax.gluon.data import vision  # noqa: E402


def test_reads_mxnet_rec_and_writes_identical_bytes(tmp_path):
    r = mx.recordio.MXIndexedRecordIO(str(FIXTURES / "tiny.idx"), str(FIXTURES / "tiny.rec"), "r")
    records = [r.read_idx(k) for k in r.keys]
    for i, (rec, path) in enumerate(zip(records, image_paths())):
        header, body = mx.recordio.unpack(rec)
        assert header.label == float(i % 2) and header.id == i
        assert body == open(path, "rb").read()
    w = mx.recordio.MXIndexedRecordIO(str(tmp_path / "t.idx"), str(tmp_path / "t.rec"), "w")
    for i, rec in enumerate(records):
        w.write_idx(i, rec)
    w.close()
    assert (tmp_path / "t.rec").read_bytes() == (FIXTURES / "tiny.rec").read_bytes()
    assert (tmp_path / "t.idx").read_text() == (FIXTURES / "tiny.idx").read_text()
    # records holding the magic word are split as dmlc's writer does
    m = mx.recordio.MXRecordIO(str(FIXTURES / "magic.rec"), "r")
    payloads = [m.read() for _ in range(3)]
    assert m.read() is None
    w = mx.recordio.MXRecordIO(str(tmp_path / "m.rec"), "w")
    for p in payloads:
        w.write(p)
    w.close()
    assert (tmp_path / "m.rec").read_bytes() == (FIXTURES / "magic.rec").read_bytes()
    assert payloads[1] == b"ab\x0a\x23\xd7\xcecd"
    h, arr = mx.recordio.unpack(mx.recordio.pack(mx.recordio.IRHeader(0, [1, 2], 3, 0), b"x"))
    assert h.flag == 2 and arr == b"x" and h.label.tolist() == [1.0, 2.0]


def test_malformed_rec_idx_lst_raise_mxnet_errors(tmp_path):
    rec = (FIXTURES / "tiny.rec").read_bytes()
    (tmp_path / "cut.rec").write_bytes(rec[:100])
    (tmp_path / "bad.rec").write_bytes(b"\0" * 64)
    for name, what in (("cut.rec", "ends first"), ("bad.rec", "magic word")):
        r = mx.recordio.MXRecordIO(str(tmp_path / name), "r")
        with pytest.raises(mx.MXNetError, match=f"{name}.*record 0.*{what}"):
            r.read()
    (tmp_path / "bad.idx").write_text("0\t0\nx\ty\n")
    with pytest.raises(mx.MXNetError, match="bad.idx' line 2"):
        mx.recordio.MXIndexedRecordIO(str(tmp_path / "bad.idx"), str(FIXTURES / "tiny.rec"), "r")
    (tmp_path / "far.idx").write_text("0\t999999\n")
    with pytest.raises(mx.MXNetError, match="outside"):
        mx.recordio.MXIndexedRecordIO(str(tmp_path / "far.idx"), str(FIXTURES / "tiny.rec"), "r")
    (tmp_path / "bad.lst").write_text("1\t0.0\ta.jpg\nnot a line\n")
    with pytest.raises(mx.MXNetError, match="bad.lst' line 2"):
        vision.ImageListDataset(str(tmp_path), "bad.lst")
    with pytest.raises(mx.MXNetError, match="bad.lst' line 2"):
        from gluonjax.tools.im2rec import read_list

        list(read_list(str(tmp_path / "bad.lst")))
    with pytest.raises(mx.MXNetError, match="at least 24 header bytes"):
        mx.recordio.unpack(b"abc")


def test_image_datasets_match_mxnet():
    ds = vision.ImageRecordDataset(str(FIXTURES / "tiny.rec"))
    for i in range(len(ds)):
        x, y = ds[i]
        np.testing.assert_array_equal(x.asnumpy(), REF[f"recds_{i}"])
        assert y == REF[f"recds_label_{i}"]
    folder = vision.ImageFolderDataset(str(FIXTURES / "images"))
    assert folder.synsets == list(REF["folder_synsets"])
    assert [lab for _, lab in folder.items] == REF["folder_labels"].tolist()
    x, y = folder[0]
    np.testing.assert_array_equal(x.asnumpy(), REF["imread_0"])
    lst = vision.ImageListDataset(str(FIXTURES / "images"), [[1.0, "cat/cat0.jpg"]])
    np.testing.assert_array_equal(lst[0][0].asnumpy(), REF["imread_0"])


def _idx(path, magic, dims):
    with gzip.open(path) as f:
        data = f.read()
    return np.frombuffer(data, np.uint8, offset=8 + 4 * len(dims)).reshape((-1, *dims))


@pytest.mark.filterwarnings("ignore:.*published sha1")
def test_mnist_cifar_read_their_formats(tmp_path, monkeypatch):
    m = vision.MNIST(root=str(FIXTURES / "mnist"), train=False)
    imgs = _idx(FIXTURES / "mnist" / "t10k-images-idx3-ubyte.gz", 2051, (28, 28))
    labels = _idx(FIXTURES / "mnist" / "t10k-labels-idx1-ubyte.gz", 2049, ())
    assert len(m) == 6 and m[2][0].shape == (28, 28, 1) and m[2][0].dtype == np.uint8
    np.testing.assert_array_equal(m[2][0].asnumpy()[..., 0], imgs[2])
    assert m[2][1] == labels[2] and m[2][1].dtype == np.int32
    assert len(vision.FashionMNIST(root=str(FIXTURES / "mnist"))) == 12
    c10 = vision.CIFAR10(root=str(FIXTURES / "cifar10"))
    raw = np.fromfile(FIXTURES / "cifar10" / "data_batch_1.bin", np.uint8).reshape(2, 3073)
    assert len(c10) == 10 and c10[0][1] == raw[0, 0]
    np.testing.assert_array_equal(
        c10[0][0].asnumpy(), raw[0, 1:].reshape(3, 32, 32).transpose(1, 2, 0)
    )
    c100 = vision.CIFAR100(root=str(FIXTURES / "cifar100"), fine_label=True, train=False)
    raw = np.fromfile(FIXTURES / "cifar100" / "test.bin", np.uint8).reshape(2, 3074)
    assert c100[1][1] == raw[1, 1]
    # absent files, no network: the error names the files and the folder
    monkeypatch.setenv("MXNET_HOME", str(tmp_path))
    monkeypatch.setenv("MXNET_GLUON_REPO", "http://127.0.0.1:9/")
    with pytest.raises(mx.MXNetError) as info:
        vision.MNIST(train=False)
    msg = str(info.value)
    assert "t10k-images-idx3-ubyte.gz" in msg and str(tmp_path / "datasets" / "mnist") in msg
    shutil.copytree(FIXTURES / "mnist", tmp_path / "datasets" / "mnist", dirs_exist_ok=True)
    assert len(vision.MNIST(train=False)) == 6  # MXNET_HOME is the default root


def test_iterators_match_mxnet(tmp_path):
    it = mx.io.ImageRecordIter(
        path_imgrec=str(FIXTURES / "tiny.rec"),
        data_shape=(3, 14, 12),
        batch_size=2,
        mean_r=10.0,
        mean_g=20.0,
        mean_b=30.0,
        std_r=2.0,
        std_g=3.0,
        std_b=4.0,
        scale=0.5,
        preprocess_threads=1,
    )
    batches = list(it)
    assert len(batches) == 2
    for k, b in enumerate(batches):
        np.testing.assert_allclose(b.data[0].asnumpy(), REF[f"recit_data_{k}"], atol=1e-5)
        np.testing.assert_array_equal(b.label[0].asnumpy(), REF[f"recit_label_{k}"])
        assert b.pad == REF[f"recit_pad_{k}"]
    it = mx.image.ImageIter(2, (3, 10, 10), path_imgrec=str(FIXTURES / "tiny.rec"))
    for k, b in enumerate(it):
        np.testing.assert_allclose(b.data[0].asnumpy(), REF[f"imgiter_data_{k}"], atol=1)
        np.testing.assert_array_equal(b.label[0].asnumpy(), REF[f"imgiter_label_{k}"])
    mn = mx.io.MNISTIter(
        image=str(FIXTURES / "mnist" / "t10k-images-idx3-ubyte.gz"),
        label=str(FIXTURES / "mnist" / "t10k-labels-idx1-ubyte.gz"),
        batch_size=4,
        shuffle=False,
        flat=True,
    )
    np.testing.assert_allclose(np.concatenate([b.data[0].asnumpy() for b in mn]), REF["mnistiter"])
    (tmp_path / "d.csv").write_text("1,2\n3,4\n5,6\n")
    csv = mx.io.CSVIter(data_csv=str(tmp_path / "d.csv"), data_shape=(2,), batch_size=2)
    got = [(b.data[0].asnumpy().tolist(), b.pad) for b in csv]
    assert got == [([[1, 2], [3, 4]], 0), ([[5, 6], [1, 2]], 1)]
    (tmp_path / "d.t").write_text("1.0 0:0.5 2:1.2\n-2.0\n-3.0 0:0.6 1:2.4 2:1.2\n4 2:-1.2\n")
    svm = mx.io.LibSVMIter(data_libsvm=str(tmp_path / "d.t"), data_shape=(3,), batch_size=3)
    first = next(iter(svm)).data[0].asnumpy()
    np.testing.assert_allclose(first, [[0.5, 0, 1.2], [0, 0, 0], [0.6, 2.4, 1.2]])
    (tmp_path / "e.t").write_text("1.0 -1:0.5\n")
    with pytest.raises(mx.MXNetError, match="e.t' line 1"):
        mx.io.LibSVMIter(data_libsvm=str(tmp_path / "e.t"), data_shape=(3,), batch_size=1)
    pre = mx.io.PrefetchingIter(mx.io.NDArrayIter(np.arange(6).reshape(6, 1), batch_size=2))
    assert [b.data[0].asnumpy().ravel().tolist() for b in pre] == [[0, 1], [2, 3], [4, 5]]
    pre.reset()
    assert len(list(pre)) == 3


@pytest.mark.parametrize("channels", [3, 1])
def test_image_record_iter_center_crop_and_mirror(channels):
    import cv2

    # reference: OpenCV's decode of each record (MXNet's decoder), center crop 16x16
    r = mx.recordio.MXIndexedRecordIO(str(FIXTURES / "tiny.idx"), str(FIXTURES / "tiny.rec"), "r")
    crops, labels = [], []
    for k in r.keys:
        header, payload = mx.recordio.unpack(r.read_idx(k))
        img = cv2.imdecode(np.frombuffer(payload, np.uint8), 1 if channels == 3 else 0)
        img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB) if channels == 3 else img[:, :, None]
        y, x = (img.shape[0] - 16) // 2, (img.shape[1] - 16) // 2
        crops.append(img[y : y + 16, x : x + 16].transpose(2, 0, 1).astype(np.float32))
        labels.append(header.label)
    it = mx.io.ImageRecordIter(
        path_imgrec=str(FIXTURES / "tiny.rec"),
        data_shape=(channels, 16, 16),
        batch_size=4,
        rand_mirror=True,
        preprocess_threads=2,
    )
    mirrored = []
    for _ in range(8):
        it.reset()
        batch = next(it)
        x = batch.data[0].asnumpy()
        assert x.shape == (4, channels, 16, 16) and x.dtype == np.float32
        np.testing.assert_array_equal(batch.label[0].asnumpy(), labels)
        for got, crop in zip(x, crops):
            flipped = not np.array_equal(got, crop)
            if flipped:
                np.testing.assert_array_equal(got, crop[:, :, ::-1])
            mirrored.append(flipped)
    assert any(mirrored) and not all(mirrored)


def test_im2rec_round_trip(tmp_path):
    root = str(FIXTURES / "images")
    prefix = str(tmp_path / "data")
    from gluonjax.tools import im2rec

    im2rec.main([prefix, root, "--quiet", "--list", "--recursive", "--no-shuffle"])
    lines = (tmp_path / "data.lst").read_text().splitlines()
    assert lines[0] == "0\t0.000000\tcat/cat0.jpg" and len(lines) == 4
    # the command line, as users run it
    env = dict(os.environ, PYTHONPATH=str(FIXTURES.parents[2]))
    cmd = [sys.executable, "-m", "gluonjax.tools.im2rec", prefix, root, "--quiet"]
    subprocess.run(cmd + ["--pass-through"], check=True, env=env)
    ds = vision.ImageRecordDataset(prefix + ".rec")
    np.testing.assert_array_equal(ds[3][0].asnumpy(), REF["imread_3"])
    assert ds[3][1] == 1.0
