"""NDArray: creation, properties, conversion, repr, in-place writes, save/load, contexts."""

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import nd


def test_creation_functions_and_default_dtypes():
    assert nd.array([[1, 2], [3, 4]]).dtype == np.float32  # lists -> float32, as MXNet
    assert nd.array(np.arange(3)).dtype == np.float32  # numpy too, without dtype=
    assert nd.array(np.arange(3), dtype="int32").dtype == np.int32
    assert nd.array(nd.array([1], dtype="int32")).dtype == np.int32  # NDArray keeps dtype
    np.testing.assert_array_equal(nd.zeros((2, 3)).asnumpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(nd.ones(3, dtype="float16").asnumpy(), np.ones(3, np.float16))
    np.testing.assert_array_equal(nd.full((2,), 7).asnumpy(), [7, 7])
    assert nd.empty((4, 1)).shape == (4, 1)
    np.testing.assert_allclose(nd.arange(1, 4, 0.5).asnumpy(), np.arange(1, 4, 0.5))
    np.testing.assert_array_equal(nd.arange(3, repeat=2).asnumpy(), [0, 0, 1, 1, 2, 2])
    np.testing.assert_array_equal(nd.eye(3, 4, 1).asnumpy(), np.eye(3, 4, 1))
    np.testing.assert_array_equal(nd.zeros_like(nd.ones((2,))).asnumpy(), [0, 0])
    np.testing.assert_allclose(nd.linspace(0, 1, 5).asnumpy(), np.linspace(0, 1, 5))


def test_properties_and_conversion():
    a = nd.array(np.arange(6).reshape(2, 3))
    assert (a.shape, a.size, a.ndim, a.dtype) == ((2, 3), 6, 2, np.float32)
    assert a.context == mx.cpu(0)
    np.testing.assert_array_equal(a.T.asnumpy(), np.arange(6).reshape(2, 3).T)
    assert nd.array([5.0]).asscalar() == 5.0
    with pytest.raises(mx.MXNetError, match="size 1"):
        a.asscalar()
    b = a.astype("int32")
    assert b.dtype == np.int32 and a.astype("float32", copy=False) is a
    c = a.copy()
    c[0, 0] = 100
    assert a.asnumpy()[0, 0] == 0
    d = nd.zeros((2, 3))
    a.copyto(d)
    np.testing.assert_array_equal(d.asnumpy(), a.asnumpy())
    assert a.as_in_context(mx.cpu()) is a
    assert len(a) == 2 and [r.shape for r in a] == [(3,), (3,)]
    assert a.tolist() == np.arange(6).reshape(2, 3).tolist()
    a.wait_to_read()
    nd.waitall()


def test_repr_is_mxnet_style():
    text = repr(nd.ones((2, 3)))
    assert text.startswith("\n[[1. 1. 1.]") and text.endswith("<NDArray 2x3 @cpu(0)>")


def test_inplace_and_slice_assignment():
    a = nd.zeros((3, 4))
    a[1:3] = 5
    a[:, 0] = nd.array([1.0, 2.0, 3.0])
    a += 1
    a *= 2
    ref = np.zeros((3, 4), np.float32)
    ref[1:3] = 5
    ref[:, 0] = [1, 2, 3]
    np.testing.assert_array_equal(a.asnumpy(), (ref + 1) * 2)
    b = nd.ones((2, 2))
    b[:] = nd.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(b.asnumpy(), [[1, 2], [3, 4]])


def test_fluent_methods():
    a = nd.array(np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(a.sum(axis=1).asnumpy(), [3, 12])
    np.testing.assert_array_equal(a.reshape((3, 2)).shape, (3, 2))
    np.testing.assert_array_equal(a.reshape(3, -1).shape, (3, 2))
    np.testing.assert_allclose(a.exp().asnumpy(), np.exp(np.arange(6).reshape(2, 3)), rtol=1e-6)
    assert a.swapaxes(0, 1).shape == (3, 2)
    assert a.expand_dims(axis=0).shape == (1, 2, 3)


def test_random_is_reproducible_with_seed():
    mx.random.seed(42)
    a = nd.random.normal(shape=(3,)).asnumpy()
    b = nd.random.uniform(shape=(3,)).asnumpy()
    mx.random.seed(42)
    np.testing.assert_array_equal(nd.random.normal(shape=(3,)).asnumpy(), a)
    np.testing.assert_array_equal(nd.random.uniform(shape=(3,)).asnumpy(), b)
    assert nd.random_normal is not None and nd.random_uniform is not None


def test_save_load_list_and_dict(tmp_path):
    f = str(tmp_path / "arrays")
    nd.save(f, [nd.ones((2,)), nd.zeros((1, 3))])
    loaded = nd.load(f)
    assert isinstance(loaded, list) and loaded[1].shape == (1, 3)
    nd.save(f, {"a": nd.array([1.0, 2.0])})
    assert nd.load(f)["a"].asnumpy().tolist() == [1.0, 2.0]


def test_contexts():
    assert mx.cpu() == mx.cpu(0) and repr(mx.gpu(1)) == "gpu(1)"
    assert mx.current_context() == mx.cpu()
    with mx.Context("cpu", 0):
        assert mx.current_context() == mx.cpu(0)
        assert nd.ones((1,)).context == mx.cpu(0)
    if mx.num_gpus() == 0:
        with pytest.raises(mx.base.ContextError, match="not available"):
            nd.ones((2,), ctx=mx.gpu(0))
        with pytest.raises(mx.base.ContextError):
            with mx.gpu(0):
                pass
    with pytest.raises(mx.base.ContextError, match="unknown device type"):
        mx.Context("tpu9")


def test_errors_are_mxnet_errors():
    assert issubclass(mx.base.ShapeError, mx.base.MXNetError)
    with pytest.raises(mx.base.MXNetError):
        nd.dot(nd.ones((2, 3)), nd.ones((4, 5)))
    with pytest.raises(mx.base.DTypeError):
        nd.ones((2,)).astype("no_such_dtype")


def test_waitall_waits_for_computations_whose_outputs_were_dropped():
    # MXNet's waitall waits for every pending operation; timing scripts do
    # ``net(x); mx.nd.waitall()`` with the output unused. Not a speed check: from the
    # dispatch of a dropped computation to waitall's return must span the computation
    # (it spans only the dispatch when waitall does not wait for it).
    import time

    import jax
    import jax.numpy as jnp

    @jax.jit
    def heavy(x):
        for _ in range(20):
            x = jnp.tanh(x @ x)
        return x

    x = jnp.full((600, 600), 1e-3, jnp.float32)
    heavy(x).block_until_ready()  # compiled
    alone = []
    for _ in range(3):
        t = time.perf_counter()
        heavy(x).block_until_ready()
        alone.append(time.perf_counter() - t)
    t = time.perf_counter()
    heavy(x)  # dispatched, output dropped
    nd.waitall()
    assert time.perf_counter() - t >= 0.5 * min(alone)
