"""``nd.save``/``nd.load`` and the MXNet NDArray-list format: round trips, byte
layout, cross-checks with the real MXNet 1.9.1, corrupted files, atomic writes."""

import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax._io import atomic, atomic_write, read_arrays, write_arrays
from gluonjax.base import FileFormatError, MXNetError

nd = mx.nd
MXNET_PY = Path(__file__).resolve().parents[2] / ".venv-mxnet" / "bin" / "python"
DTYPES = ["float32", "float64", "float16", "uint8", "int8", "int32", "int64", "bool"]
FLAGS = {
    "float32": 0,
    "float64": 1,
    "float16": 2,
    "uint8": 3,
    "int32": 4,
    "int8": 5,
    "int64": 6,
    "bool": 7,
}


def _values(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("float"):
        return rng.normal(size=shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), size=shape).astype(dtype)


def _loaded_dtype(dtype):
    return np.dtype(dtype)  # every dtype comes back as saved (float64/int64 too, as MXNet)


def _by_hand(arrays, names=(), magic=0xF993FAC9):
    """The format written out field by field from the layout MXNet's files show."""
    out = struct.pack("<QQQ", 0x112, 0, len(arrays))
    for a in arrays:
        out += struct.pack("<IiI", magic, 0, a.ndim) + struct.pack(f"<{a.ndim}q", *a.shape)
        out += struct.pack("<iii", 1, 0, FLAGS[a.dtype.name])
        out += a.astype(a.dtype.newbyteorder("<")).tobytes()
    out += struct.pack("<Q", len(names))
    for n in names:
        out += struct.pack("<Q", len(n.encode())) + n.encode()
    return out


# ----------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3,), (2, 3, 4), (), (0,), (0, 3)])
def test_numpy_level_roundtrip_keeps_dtype(dtype, shape):
    a = _values(dtype, shape)
    arrays, names = read_arrays(write_arrays([a, a[..., None]], ["x", "y"]))
    assert names == ["x", "y"]
    for got, want in zip(arrays, [a, a[..., None]], strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_bytes_match_layout(dtype):
    a = _values(dtype, (2, 3))
    assert write_arrays([a]) == _by_hand([a])
    assert write_arrays([a, a[0]], ["w", "bias"]) == _by_hand([a, a[0]], ["w", "bias"])


def test_zero_size_and_scalar_use_v3_records():
    a, s = np.ones((2,), np.float32), np.float32(3.0)
    assert write_arrays([a, s]) == _by_hand([a, np.asarray(s)], magic=0xF993FACA)
    assert write_arrays([a, np.zeros((0, 2), np.int8)])[ARR0 : ARR0 + 4] == b"\xca\xfa\x93\xf9"


def test_reads_v1_records():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    raw = struct.pack("<QQQ", 0x112, 0, 1) + struct.pack("<II2q", 0xF993FAC8, 2, 2, 3)
    raw += struct.pack("<iii", 1, 0, 0) + a.tobytes() + struct.pack("<Q", 0)
    (got,), names = read_arrays(raw)
    np.testing.assert_array_equal(got, a)
    assert names == []


@pytest.mark.parametrize("shape", [(4,), (2, 3), (), (0, 2)])
def test_nd_save_load_list_and_dict(tmp_path, shape):
    data = {d: _values(d, shape, seed=i) for i, d in enumerate(DTYPES)}
    f = tmp_path / "x.nd"
    nd.save(str(f), [nd.array(v, dtype=_loaded_dtype(d)) for d, v in data.items()])
    out = nd.load(str(f))
    assert isinstance(out, list) and len(out) == len(data)
    for got, (d, v) in zip(out, data.items(), strict=True):
        assert got.dtype == _loaded_dtype(d) and got.shape == shape
        np.testing.assert_array_equal(got.asnumpy(), v.astype(_loaded_dtype(d)))
    nd.save(f, {d: nd.array(v, dtype=_loaded_dtype(d)) for d, v in data.items()})  # PathLike
    out = nd.load(f)
    assert isinstance(out, dict) and list(out) == list(data)
    for d, v in data.items():
        np.testing.assert_array_equal(out[d].asnumpy(), v.astype(_loaded_dtype(d)))


def test_load_keeps_64bit_from_numpy_writer(tmp_path):
    f = tmp_path / "w.nd"
    a, b = np.array([1.5, 1.0 + 2.0**-40]), np.array([7, -(2**40)], np.int64)
    f.write_bytes(write_arrays([a, b], ["a", "b"]))
    out = nd.load(str(f))
    assert out["a"].dtype == np.float64 and out["b"].dtype == np.int64  # as MXNet
    np.testing.assert_array_equal(out["a"].asnumpy(), a)
    np.testing.assert_array_equal(out["b"].asnumpy(), b)


def test_save_single_array_and_empty(tmp_path):
    f = str(tmp_path / "one.nd")
    nd.save(f, nd.array([[1, 2]]))
    (a,) = nd.load(f)
    np.testing.assert_array_equal(a.asnumpy(), [[1, 2]])
    nd.save(f, [])
    assert nd.load(f) == []


@pytest.mark.parametrize(
    "make", [lambda: 5, lambda: [np.ones(2)], lambda: {"a": 1.0}, lambda: {1: nd.ones((1,))}]
)
def test_save_rejects_bad_data(tmp_path, make):
    with pytest.raises(MXNetError):
        nd.save(str(tmp_path / "bad.nd"), make())
    assert not os.listdir(tmp_path)


def test_write_rejects_unsupported_dtype():
    with pytest.raises(MXNetError, match="int16"):
        write_arrays([np.zeros(2, np.int16)])


# ----------------------------------------------------------------------------- corrupt files
GOOD = _by_hand(
    [np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1, 2], np.int32)], ["w", "b"]
)
ARR0 = 24  # first array record
DATA0 = ARR0 + 12 + 16 + 12  # magic, stype, ndim, 2 dims, ctx, flag


def _patch(raw, offset, fmt, value):
    b = bytearray(raw)
    b[offset : offset + struct.calcsize(fmt)] = struct.pack(fmt, value)
    return bytes(b)


def _fails(raw, *words, source="bad.params"):
    with pytest.raises(FileFormatError) as info:
        read_arrays(raw, source=source)
    msg = str(info.value)
    assert source in msg and "byte" in msg
    for w in words:
        assert w in msg, msg
    return msg


def test_good_file_reads():
    arrays, names = read_arrays(GOOD)
    assert names == ["w", "b"]
    np.testing.assert_array_equal(arrays[0], np.arange(6).reshape(2, 3))


@pytest.mark.parametrize(
    "cut",
    sorted({1, 8, 23, ARR0 + 2, ARR0 + 9, DATA0 - 1, DATA0 + 5, len(GOOD) - 9, len(GOOD) - 1}),
)
def test_truncated(cut):
    _fails(GOOD[:cut], "truncated")


def test_every_prefix_fails_cleanly():
    for cut in range(len(GOOD)):
        with pytest.raises(FileFormatError):
            read_arrays(GOOD[:cut])


def test_wrong_list_magic():
    _fails(b"\x89PNG\r\n\x1a\n" + GOOD[8:], "list magic", "0x112")
    _fails(b"", "truncated")


def test_wrong_array_magic():
    _fails(_patch(GOOD, ARR0, "<I", 0xDEADBEEF), "magic", "array 0")


def test_huge_count_is_bounded_by_file_size():
    _fails(_patch(GOOD, 16, "<Q", 2**62), "count")
    _fails(_patch(GOOD, 16, "<Q", 1000), "count")


def test_huge_ndim_and_dims():
    _fails(_patch(GOOD, ARR0 + 8, "<I", 2**31), "ndim")
    _fails(_patch(GOOD, ARR0 + 8, "<I", 40), "ndim")
    _fails(_patch(GOOD, ARR0 + 12, "<q", 2**40), "needs")  # data larger than the file
    _fails(_patch(GOOD, ARR0 + 12, "<q", -1), "negative")


def test_unknown_dtype_flag():
    _fails(_patch(GOOD, DATA0 - 4, "<i", 42), "dtype flag 42")


def test_unknown_storage():
    _fails(_patch(GOOD, ARR0 + 4, "<i", 9), "unknown storage")


@pytest.mark.parametrize("stype", [1, 2])
def test_dense_record_relabelled_sparse_is_refused(stype):
    # a sparse record carries a storage shape and aux arrays a dense one lacks
    _fails(_patch(GOOD, ARR0 + 4, "<i", stype))


def test_bad_context_and_none_array():
    _fails(_patch(GOOD, DATA0 - 12, "<i", 77), "context")
    none = struct.pack("<QQQ", 0x112, 0, 1) + struct.pack("<IiI", 0xF993FAC9, 0, 0)
    _fails(none + struct.pack("<Q", 0), "none")


def test_names_checked():
    _fails(GOOD + b"xyz", "trailing")
    names_at = len(GOOD) - (8 + 8 + 1 + 8 + 1)
    _fails(_patch(GOOD, names_at, "<Q", 5), "5 names for 2 arrays")
    _fails(_patch(GOOD, names_at + 8, "<Q", 2**60), "name 0")
    _fails(_patch(GOOD, names_at + 16, "<B", 0xFF), "UTF-8")


def test_load_error_names_the_file(tmp_path):
    f = tmp_path / "model.params"
    f.write_bytes(GOOD[:50])
    with pytest.raises(FileFormatError, match="model.params"):
        nd.load(str(f))


# ----------------------------------------------------------------------------- atomic write
def test_atomic_write_replaces(tmp_path):
    f = tmp_path / "a.bin"
    atomic_write(f, b"old")
    os.chmod(f, 0o640)
    atomic_write(str(f), [b"ne", b"w"])
    assert f.read_bytes() == b"new"
    assert (os.stat(f).st_mode & 0o777) == 0o640
    assert os.listdir(tmp_path) == ["a.bin"]


def test_atomic_write_failure_midway_keeps_old_file(tmp_path):
    f = tmp_path / "a.bin"
    f.write_bytes(b"precious")

    def chunks():
        yield b"partial data"
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError, match="disk on fire"):
        atomic_write(f, chunks())
    assert f.read_bytes() == b"precious"
    assert os.listdir(tmp_path) == ["a.bin"]


def test_atomic_write_replace_failure_keeps_old_file(tmp_path, monkeypatch):
    f = tmp_path / "w.params"
    nd.save(str(f), [nd.array([1.0, 2.0])])
    before = f.read_bytes()

    def broken_replace(src, dst):
        raise OSError("replace failed")

    monkeypatch.setattr(atomic.os, "replace", broken_replace)
    with pytest.raises(OSError, match="replace failed"):
        nd.save(str(f), [nd.array([3.0, 4.0, 5.0])])
    assert f.read_bytes() == before
    assert os.listdir(tmp_path) == ["w.params"]


# ----------------------------------------------------------------------------- real MXNet
MX_SCRIPT = textwrap.dedent("""
    import sys, numpy as np, mxnet as mx
    d = sys.argv[1]
    ref = dict(np.load(d + "/ref.npz", allow_pickle=False))
    out = {}
    for k, v in enumerate(mx.nd.load(d + "/gj_list.nd")):
        out["list%d" % k] = v.asnumpy()
    for k, v in mx.nd.load(d + "/gj_dict.nd").items():
        out["dict_" + k] = v.asnumpy()
    with mx.util.np_shape(True):
        for k, v in mx.nd.load(d + "/gj_np.nd").items():
            out["np_" + k] = v.asnumpy()
    np.savez(d + "/from_gj.npz", **out)
    mx.nd.save(d + "/mx_list.nd", [mx.nd.array(ref[k], dtype=ref[k].dtype) for k in sorted(ref)])
    mx.nd.save(d + "/mx_dict.nd", {k: mx.nd.array(v, dtype=v.dtype) for k, v in ref.items()})
    csr = mx.nd.sparse.csr_matrix((np.array([1., 2.]), np.array([0, 1]), np.array([0, 1, 2])),
                                  shape=(2, 2))
    mx.nd.save(d + "/mx_csr.nd", [csr])
""")


@pytest.fixture(scope="module")
def mxnet_files(tmp_path_factory):
    if not MXNET_PY.exists():
        pytest.skip(f"reference MXNet interpreter not found at {MXNET_PY} (.venv-mxnet missing)")
    d = tmp_path_factory.mktemp("mx")
    ref = {d_: _values(d_, (2, 3), seed=i) for i, d_ in enumerate(DTYPES)}
    np.savez(d / "ref.npz", **ref)
    arrays = [ref[k] for k in sorted(ref)]
    (d / "gj_list.nd").write_bytes(write_arrays(arrays))
    (d / "gj_dict.nd").write_bytes(write_arrays(list(ref.values()), list(ref)))
    scalars = {"s": np.float32(2.5), "z": np.zeros((0, 3), np.int32), "v": ref["float16"]}
    (d / "gj_np.nd").write_bytes(write_arrays(list(scalars.values()), list(scalars)))
    run = subprocess.run(
        [str(MXNET_PY), "-c", MX_SCRIPT, str(d)], capture_output=True, text=True, timeout=240
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return d, ref, scalars


@pytest.mark.mxnet
def test_mxnet_loads_gluonjax_files(mxnet_files):
    d, ref, scalars = mxnet_files
    got = np.load(d / "from_gj.npz", allow_pickle=False)
    for i, k in enumerate(sorted(ref)):
        assert got[f"list{i}"].dtype == ref[k].dtype
        np.testing.assert_array_equal(got[f"list{i}"], ref[k])
        np.testing.assert_array_equal(got["dict_" + k], ref[k])
        assert got["dict_" + k].dtype == ref[k].dtype
    for k, v in scalars.items():
        assert got["np_" + k].shape == np.shape(v) and got["np_" + k].dtype == np.asarray(v).dtype
        np.testing.assert_array_equal(got["np_" + k], v)


@pytest.mark.mxnet
def test_gluonjax_loads_mxnet_files(mxnet_files):
    d, ref, _ = mxnet_files
    arrays, names = read_arrays((d / "mx_list.nd").read_bytes())
    assert names == []
    for a, k in zip(arrays, sorted(ref), strict=True):
        assert a.dtype == ref[k].dtype
        np.testing.assert_array_equal(a, ref[k])
    out = nd.load(str(d / "mx_dict.nd"))
    assert sorted(out) == sorted(ref)
    for k, v in ref.items():
        assert out[k].dtype == _loaded_dtype(k)
        np.testing.assert_array_equal(out[k].asnumpy(), v.astype(_loaded_dtype(k)))
    lst = nd.load(str(d / "mx_list.nd"))
    np.testing.assert_array_equal(lst[0].asnumpy(), ref[sorted(ref)[0]])


@pytest.mark.mxnet
def test_mxnet_sparse_file_loads(mxnet_files):
    d = mxnet_files[0]
    (csr,) = nd.load(str(d / "mx_csr.nd"))
    assert csr.stype == "csr"
    np.testing.assert_array_equal(csr.asnumpy(), [[1, 0], [0, 2]])
    assert csr.indptr.asnumpy().tolist() == [0, 1, 2]
    assert csr.indices.asnumpy().tolist() == [0, 1]


@pytest.mark.mxnet
def test_gluonjax_bytes_equal_mxnet_bytes(mxnet_files):
    d, ref, _ = mxnet_files
    for name in ("mx_list.nd", "mx_dict.nd"):
        raw = (d / name).read_bytes()
        assert write_arrays(*read_arrays(raw)) == raw


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
