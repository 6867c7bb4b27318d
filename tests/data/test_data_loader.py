"""DataLoader, samplers, batchify and worker processes (MXNet 1.9.1 fixtures, numpy)."""

from __future__ import annotations

import gc
import math
import subprocess
import sys
import time

import numpy as np
import pytest

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _data_fixtures import FIXTURES, REF  # noqa: E402

import gluonjax as mx  # noqa: E402
from gluonjax.gluon import data as gdata  # noqa: E402
from gluonjax.gluon.data.vision import transforms as T  # noqa: E402


class Squares(gdata.Dataset):
    def __len__(self):
        return 12

    def __getitem__(self, i):
        return np.full((2,), i * i, np.float32), i


class Failing(gdata.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise ValueError(f"bad sample {i}")
        return np.float32(i)


class Slow(gdata.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(3)
        return np.float32(i)


def test_rollover_order_matches_mxnet_with_the_same_seed():
    np.random.seed(5)
    data = gdata.ArrayDataset(np.arange(10), np.arange(10) * 2.0)
    loader = gdata.DataLoader(data, batch_size=3, shuffle=True, last_batch="rollover")
    order = [np.concatenate([x.asnumpy() for x, _ in loader]) for _ in range(2)]
    np.testing.assert_array_equal(np.stack(order), REF["rollover_order"])


def test_default_batchify_nested_values_and_dtypes():
    batch = gdata.dataloader.default_batchify_fn(
        [((1, 2.5), [1, 2], np.int32(3)), ((3, 4.5), [3, 4], np.int32(5))]
    )
    for got, name in ((batch[0][0], "a"), (batch[0][1], "b"), (batch[1], "c"), (batch[2], "d")):
        np.testing.assert_array_equal(got.asnumpy(), REF[f"batchify_{name}"])
    # MXNet keeps the NumPy dtypes (int64/float64 from Python values)
    assert [str(b.dtype) for b in (batch[0][0], batch[0][1], batch[1], batch[2])] == [
        s.split(".")[-1].strip("'>") for s in REF["batchify_dtypes"]
    ]


def test_samplers_and_dataset_views():
    assert list(gdata.BatchSampler(gdata.SequentialSampler(7), 3, "discard")) == [
        [0, 1, 2],
        [3, 4, 5],
    ]
    roll = gdata.BatchSampler(gdata.SequentialSampler(7), 3, "rollover")
    assert list(roll) == [[0, 1, 2], [3, 4, 5]] and len(roll) == 2
    assert list(roll)[0] == [6, 0, 1]
    assert list(gdata.IntervalSampler(7, 3)) == [0, 3, 6, 1, 4, 2, 5]
    d = gdata.SimpleDataset(list(range(9)))
    assert [len(d.shard(4, i)) for i in range(4)] == [3, 2, 2, 2]
    assert list(d.take(3)) == [0, 1, 2] and len(d.take(None)) == 9
    assert list(d.transform(lambda x: x + 1).filter(lambda x: x % 3 == 0)) == [3, 6, 9]
    assert list(d.sample(gdata.SequentialSampler(2, 4))) == [4, 5]
    with pytest.raises(ValueError):
        gdata.DataLoader(d, batch_size=2, shuffle=True, sampler=gdata.SequentialSampler(9))


@pytest.mark.parametrize("workers,threads", [(0, False), (2, False), (2, True)])
def test_loader_values_in_order(workers, threads):
    loader = gdata.DataLoader(Squares(), batch_size=5, num_workers=workers, thread_pool=threads)
    got = [(x.asnumpy(), y.asnumpy()) for x, y in loader]
    assert [len(y) for _, y in got] == [5, 5, 2]
    xs = np.concatenate([x for x, _ in got])
    np.testing.assert_array_equal(xs[:, 0], np.arange(12) ** 2)
    np.testing.assert_array_equal(np.concatenate([y for _, y in got]), np.arange(12))
    assert len(loader) == 3


@pytest.mark.parametrize("padded", [False, True])
def test_batches_from_workers_stay_intact_while_their_memory_is_reused(padded):
    from gluonjax._data.transport import MAX_IDLE_SLOTS

    # batches of 4 samples of 48 KiB travel in shared memory (stacked straight into it,
    # or copied into it when a batchify function made them); numpy-only data set: the
    # workers stay jax-free and start fast
    images = np.arange(24, dtype=np.float32).repeat(3 * 64 * 64).reshape(24, 3, 64, 64)
    data = gdata.ArrayDataset(images, np.arange(24))
    fn = gdata.batchify.Group(gdata.batchify.Pad(val=0), gdata.batchify.Stack()) if padded else None
    loader = gdata.DataLoader(data, batch_size=4, shuffle=True, num_workers=2, batchify_fn=fn)

    def check(batch):  # sample i is filled with i: each image must match its label
        x, y = batch[0].asnumpy(), batch[1].asnumpy()
        np.testing.assert_array_equal(x, images[y])

    kept = list(loader)  # held: each batch keeps its shared memory
    for _ in range(4):  # dropped at once: their memory goes back to the workers (and other
        for batch in loader:  # samples, in a new order, are written to it)
            check(batch)
    kept += list(loader)
    for batch in kept:
        check(batch)
    # 12 batches held, a few in flight: reused memory, not one mapping per batch (36)
    assert sum(len(c._maps) for c in loader._pool.channels) <= 20
    del kept, batch
    gc.collect()
    for _ in range(2):  # the held batches' memory came back: the workers keep a few of it
        for batch in loader:
            check(batch)
    assert sum(len(c._maps) for c in loader._pool.channels) <= 2 * (MAX_IDLE_SLOTS + 3)


def test_reused_batch_memory_waits_for_the_batch_to_die():
    from gluonjax._data.batch import BufferPool, as_ndarray

    pool = BufferPool()
    a = pool.take((4, 3, 64, 64), np.float32)  # 192 KiB: jax uses it in place
    a[...] = 1
    first = as_ndarray(a, fresh=True)
    del a
    gc.collect()
    b = pool.take((4, 3, 64, 64), np.float32)  # must not be the memory of `first`
    b[...] = 2
    np.testing.assert_array_equal(first.asnumpy(), np.ones((4, 3, 64, 64), np.float32))
    second = as_ndarray(b, fresh=True)
    del b, first
    gc.collect()
    c = pool.take((4, 3, 64, 64), np.float32)  # now it may (and does) reuse `first`'s
    c[...] = 3
    np.testing.assert_array_equal(second.asnumpy(), np.full((4, 3, 64, 64), 2, np.float32))
    assert len(pool._idle) == 0


def test_worker_error_names_the_sample_and_keeps_the_traceback():
    # math.sqrt fails on sample 5 (a stdlib function: the workers stay jax-free)
    data = gdata.SimpleDataset([0.0, 1.0, 4.0, 9.0, 16.0, -1.0, 36.0, 49.0]).transform(math.sqrt)
    loader = gdata.DataLoader(data, batch_size=3, num_workers=2)
    pools = []
    for _ in range(2):  # the error leaves the pool working: the next epoch uses it again
        with pytest.raises(ValueError) as info:
            list(loader)
        err = info.value
        assert isinstance(err, mx.MXNetError) and err.sample_index == 5
        assert "sample 5" in str(err) and "math domain error" in str(err)
        assert "__getitem__" in err.worker_traceback
        pools.append(loader._pool)
    assert pools[0] is pools[1] and pools[0].broken is None


def test_thread_error_names_the_sample():
    with pytest.raises(ValueError) as info:
        list(gdata.DataLoader(Failing(), batch_size=3, num_workers=2, thread_pool=True))
    assert "sample 5" in "".join(getattr(info.value, "__notes__", []))


def test_timeout_raises_instead_of_hanging():
    loader = gdata.DataLoader(Slow(), batch_size=1, num_workers=1, timeout=0.5)
    start = time.monotonic()
    with pytest.raises(gdata.DataLoaderTimeoutError, match="returned no batch"):
        list(loader)
    assert time.monotonic() - start < 10
    assert all(p.poll() is not None for p in loader._pool.procs)  # stopped, not left behind


def test_workers_exit_after_an_early_break():
    data = gdata.ArrayDataset(np.arange(12.0))  # numpy only: jax-free workers start fast
    loader = gdata.DataLoader(data, batch_size=1, num_workers=2)
    for _ in loader:
        break
    procs = loader._pool.procs
    assert all(p.poll() is None for p in procs)
    del loader
    gc.collect()
    assert all(p.wait(5) is not None for p in procs)  # ended (killed after 1 s if busy)


_SCRIPT = """
import numpy as np
from gluonjax.gluon import data as gdata

class Data(gdata.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return np.float32(i)

data = {data}
def main():
    loader = gdata.DataLoader(data, batch_size=4, num_workers=2, timeout=20)
    print([b.asnumpy().tolist() for b in loader])
{call}
"""


@pytest.mark.parametrize(
    "data,guarded,out",
    [
        ("Data()", True, "[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0]]"),  # a class of the script
        ("gdata.SimpleDataset([0, 1, 2, 3, 4, 5])", False, "[[0, 1, 2, 3], [4, 5]]"),
        ("Data()", False, "if __name__ == '__main__':"),  # the worker runs the script's loop
    ],
)
def test_data_sets_of_scripts(tmp_path, data, guarded, out):
    # workers load the script only for a class defined in it (as multiprocessing's spawn
    # does, which loads it always): MXNet scripts without the __main__ guard still work
    call = "if __name__ == '__main__':\n    main()" if guarded else "main()"
    script = tmp_path / "script.py"
    script.write_text(_SCRIPT.format(data=data, call=call))
    res = subprocess.run([sys.executable, str(script)], capture_output=True, timeout=120)
    assert out in (res.stdout + res.stderr).decode(), res.stderr.decode()[-2000:]


def test_unpicklable_transform_falls_back_to_threads():
    data = gdata.SimpleDataset(list(range(6))).transform(lambda x: x * 2)
    with pytest.warns(UserWarning, match="threads"):
        loader = gdata.DataLoader(data, batch_size=4, num_workers=2)
    assert [b.asnumpy().tolist() for b in loader] == [[0, 2, 4, 6], [8, 10]]


def test_workers_never_import_jax_for_the_vision_pipeline():
    # the worker side of an ImageFolderDataset + transforms pipeline, in a fresh process
    from gluonjax._data import pool

    ds = gdata.vision.ImageFolderDataset(str(FIXTURES / "images")).transform_first(
        T.Compose(
            [T.RandomResizedCrop(8), T.RandomFlipLeftRight(), T.ToTensor(), T.Normalize(0.5, 0.2)]
        )
    )
    payload, full = pool.payload(ds, None)
    assert not full, "the pipeline needs full gluonjax in the workers"
    lite = str(FIXTURES.parents[2] / "gluonjax" / "_data" / "lite.py")
    child = f"""
import importlib.util as u, sys, pickle
s = u.spec_from_file_location('gluonjax._data.lite', {lite!r})
m = u.module_from_spec(s); sys.modules[s.name] = m; s.loader.exec_module(m)
sys.path.insert(0, {str(FIXTURES.parents[2])!r}); m.enter()
from gluonjax._data import worker, batch
batch.IN_WORKER[0] = True
ds, fn = worker._Unpickler(sys.stdin.buffer.read(), None).load()
out = batch.default_batchify([ds[i] for i in range(len(ds))])
assert out[0].values.shape == (4, 3, 8, 8), out[0].values.shape
assert "jax" not in sys.modules and "gluonjax.ndarray" not in sys.modules
print("ok")
"""
    res = subprocess.run([sys.executable, "-c", child], input=payload, capture_output=True)
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    assert res.stdout.strip() == b"ok"


def test_vision_pipeline_through_workers_matches_main_process():
    ds = gdata.vision.ImageFolderDataset(str(FIXTURES / "images")).transform_first(
        T.Compose([T.Resize((8, 6)), T.ToTensor(), T.Normalize(0.5, 0.25)])
    )
    a = [(x.asnumpy(), y.asnumpy()) for x, y in gdata.DataLoader(ds, 2)]
    b = [(x.asnumpy(), y.asnumpy()) for x, y in gdata.DataLoader(ds, 2, num_workers=2)]
    for (xa, ya), (xb, yb) in zip(a, b):
        np.testing.assert_array_equal(xa, xb)
        np.testing.assert_array_equal(ya, yb)
    assert a[0][0].shape == (2, 3, 6, 8) and a[0][0].dtype == np.float32


def test_batchify_functions():
    from gluonjax.gluon.data import batchify as bf

    x, y = bf.Group(bf.Pad(val=-1), bf.Stack())([([1, 2, 3], 0), ([4], 1)])
    assert x.asnumpy().tolist() == [[1, 2, 3], [4, -1, -1]] and y.asnumpy().tolist() == [0, 1]
    assert bf.Stack()([[1, 2], [3, 4]]).shape == (2, 2)
    out, lengths = bf.Pad(axis=0, pad_val=0, ret_length=True)([np.ones(2), np.ones(4)])
    assert out.shape == (2, 4) and lengths.asnumpy().tolist() == [2, 4]
    assert [a.shape for a in bf.Append()([np.ones(2), np.ones(3)])] == [(1, 2), (1, 3)]
    assert bf.List()(["a", "b"]) == ["a", "b"] and bf.Tuple is bf.Group
    # numpy arrays (stacked), also mixed with lists (numpy.asarray), as MXNet's default
    big = [np.full((3, 80, 80), i, np.float32) for i in range(3)]  # large: aligned stack
    np.testing.assert_array_equal(gdata.dataloader.default_batchify_fn(big).asnumpy(), big)
    mixed = gdata.dataloader.default_batchify_fn([np.ones(2, np.float32), [3.0, 4.0]])
    np.testing.assert_array_equal(mixed.asnumpy(), [[1, 1], [3, 4]])
