"""The error catalogue: what a user's mistake raises, area by area (docs/errors.md).

Each case checks the gluonjax class, the builtin it also derives from (so MXNet-era
``except ValueError:`` code keeps working), that the message names the op / block /
parameter / file and the shapes, and that nothing changed after the error. Where MXNet
1.9.1 behaves differently the test says so in its name and docstring.
"""

from __future__ import annotations

import contextlib
import os
import re

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import base
from gluonjax.base import MXNetError
from gluonjax.gluon import nn


@contextlib.contextmanager
def raises(cls, builtin, *needles):
    """Expect ``cls`` (an MXNetError, also a ``builtin``) whose message has ``needles``."""
    with pytest.raises(cls) as info:
        yield info
    err = info.value
    assert isinstance(err, MXNetError), type(err).__mro__
    if builtin is not None:
        assert isinstance(err, builtin), type(err).__mro__
    msg = str(err)
    for n in needles:
        assert n in msg, f"{n!r} not in {msg!r}"


def _a(*shape):
    return mx.nd.array(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape))


# ----------------------------------------------------------------------------- indexing
@pytest.mark.parametrize(
    "key, axis, size, index",
    [
        (5, 0, 2, 5),
        (-3, 0, 2, -3),
        ((0, 7), 1, 3, 7),
        ((1, -4), 1, 3, -4),
        ((slice(None), 3), 1, 3, 3),
    ],
)
def test_basic_index_out_of_range_read(key, axis, size, index):
    a = _a(2, 3)
    with raises(base.IndexOutOfRangeError, IndexError, f"index {index}", f"axis {axis}", "(2, 3)"):
        a[key]
    np.testing.assert_array_equal(a.asnumpy(), np.arange(6).reshape(2, 3))


@pytest.mark.parametrize("key", [3, (0, 3), (-3, 0), ([0, 2],), (slice(None), [1, 5])])
def test_index_out_of_range_write_changes_nothing(key):
    a = _a(2, 3)
    with raises(base.IndexOutOfRangeError, IndexError, "out of bounds", "(2, 3)"):
        a[key] = 0
    np.testing.assert_array_equal(a.asnumpy(), np.arange(6).reshape(2, 3))


@pytest.mark.parametrize("key", [[0, 2], [-3], np.array([1, 9])])
def test_advanced_index_out_of_range_read(key):
    with raises(base.IndexOutOfRangeError, IndexError, "axis 0 with size 2", "(2, 3)"):
        _a(2, 3)[mx.nd.array(key)]


def test_too_many_indices():
    with raises(base.IndexOutOfRangeError, IndexError, "too many indices", "(2, 3)"):
        _a(2, 3)[0, 0, 0]


def test_in_range_indices_still_match_numpy():
    ref = np.arange(6, dtype=np.float32).reshape(2, 3)
    a = _a(2, 3)
    np.testing.assert_array_equal(a[-2, -3].asnumpy(), [ref[-2, -3]])
    np.testing.assert_array_equal(a[:, [0, -1]].asnumpy(), ref[:, [0, -1]])
    a[1, -1] = 7
    ref[1, -1] = 7
    np.testing.assert_array_equal(a.asnumpy(), ref)


def test_hybridized_integer_index_checked_at_trace():
    class Pick(nn.HybridBlock):
        def hybrid_forward(self, F, x):
            return x[5]

    blk = Pick()
    blk.hybridize()
    with raises(base.IndexOutOfRangeError, IndexError, "index 5", "(2, 3)"):
        blk(_a(2, 3))


@pytest.mark.parametrize("axis, bad", [(0, 2), (1, 3), (1, -1), (-1, 5)])
def test_take_mode_raise(axis, bad):
    a = _a(2, 3)
    idx = mx.nd.array([0, bad])
    with raises(base.IndexOutOfRangeError, IndexError, "take(mode='raise')", f"index {bad}"):
        mx.nd.take(a, idx, axis=axis, mode="raise")
    # clip / wrap keep MXNet's documented behaviour
    ref = np.arange(6, dtype=np.float32).reshape(2, 3)
    n = ref.shape[axis]
    np.testing.assert_array_equal(
        mx.nd.take(a, idx, axis=axis, mode="wrap").asnumpy(),
        np.take(ref, np.mod([0, bad], n), axis=axis),
    )
    np.testing.assert_array_equal(
        mx.nd.take(a, idx, axis=axis, mode="clip").asnumpy(),
        np.take(ref, np.clip([0, bad], 0, n - 1), axis=axis),
    )


def test_take_mode_raise_in_hybridized_forward_clips():
    """Inside a traced forward index values are unknown: mode='raise' clips (documented)."""

    class Take(nn.HybridBlock):
        def hybrid_forward(self, F, x, i):
            return F.take(x, i, mode="raise")

    blk = Take()
    blk.hybridize()
    out = blk(_a(2, 3), mx.nd.array([0, 9]))
    np.testing.assert_array_equal(out.asnumpy(), np.arange(6).reshape(2, 3)[[0, 1]])


def test_embedding_index_out_of_range_eager_differs_from_mxnet():
    """MXNet 1.9.1's dense Embedding clips an index >= input_dim silently; gluonjax raises
    in eager mode (the values are known) and clips when hybridized, as MXNet."""
    emb = nn.Embedding(4, 2)
    emb.initialize()
    w = emb.weight.data().asnumpy().copy()
    with raises(base.IndexOutOfRangeError, IndexError, "Embedding", "index 4", "size 4"):
        emb(mx.nd.array([1, 4]))
    with raises(base.IndexOutOfRangeError, IndexError, "index -1"):
        mx.nd.Embedding(mx.nd.array([-1]), emb.weight.data(), input_dim=4, output_dim=2)
    np.testing.assert_array_equal(emb.weight.data().asnumpy(), w)
    emb.hybridize()
    np.testing.assert_array_equal(emb(mx.nd.array([1, 4])).asnumpy(), w[[1, 3]])


def test_embedding_weight_shape_must_match_input_dim():
    emb = nn.Embedding(4, 2)
    emb.initialize()
    w = emb.weight.data().asnumpy().copy()
    with raises(base.ShapeError, ValueError, "(3, 2)", "(4, 2)"):
        emb.weight.set_data(mx.nd.ones((3, 2)))
    np.testing.assert_array_equal(emb.weight.data().asnumpy(), w)
    with raises(base.ShapeError, ValueError, "Embedding", "(3, 2)", "input_dim=4"):
        mx.nd.Embedding(mx.nd.array([0]), mx.nd.ones((3, 2)), input_dim=4, output_dim=2)


def test_embedding_weight_of_another_shape_in_a_file(tmp_path):
    small = nn.Embedding(3, 2, prefix="e_")
    small.initialize()
    f = str(tmp_path / "e.params")
    small.save_parameters(f)
    emb = nn.Embedding(4, 2, prefix="e_")
    emb.initialize()
    w = emb.weight.data().asnumpy().copy()
    with pytest.raises(MXNetError, match=r"\(3, 2\)") as info:
        emb.load_parameters(f)
    assert "weight" in str(info.value)
    np.testing.assert_array_equal(emb.weight.data().asnumpy(), w)


# ----------------------------------------------------------------------------- ops
@pytest.mark.parametrize(
    "call, needles",
    [
        (lambda: mx.nd.dot(_a(2, 3), _a(4, 5)), ["dot", "(2, 3)", "(4, 5)"]),
        (lambda: _a(2, 3) + _a(4, 5), ["broadcast_add", "(2, 3)", "(4, 5)"]),
        (lambda: _a(2, 3).reshape((4,)), ["Reshape", "(2, 3)", "(4,)"]),
        (lambda: mx.nd.sum(_a(2, 3), axis=5), ["sum", "axis 5"]),
        (lambda: mx.nd.concat(_a(2, 3), _a(4, 5), dim=1), ["Concat", "(2, 3)", "(4, 5)"]),
        (
            lambda: mx.nd.FullyConnected(_a(2, 5), _a(3, 3), num_hidden=3, no_bias=True),
            ["FullyConnected", "(2, 5)", "(3, 3)"],
        ),
    ],
)
def test_op_shape_errors_are_value_errors(call, needles):
    with raises(base.ShapeError, ValueError, *needles):
        call()


def test_unknown_dtype():
    with raises(base.DTypeError, TypeError, "foo"):
        mx.nd.ones((2,), dtype="foo")


def test_context_that_does_not_exist():
    with raises(base.ContextError, None, "gpu(7)"):
        mx.nd.ones(2, ctx=mx.gpu(7))


def test_estimator_context_that_does_not_exist():
    """MXNet 1.9.1's Estimator fails an ``assert`` there: AssertionError is a base."""
    from gluonjax.gluon.contrib.estimator import Estimator

    net = nn.Dense(2, in_units=3)
    net.initialize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd")
    with raises(base.EstimatorSetupError, AssertionError, "gpu(100)", "not available", "cpu()"):
        Estimator(net, mx.gluon.loss.L2Loss(), trainer=trainer, context=[mx.gpu(100)])


# ----------------------------------------------------------------------------- blocks
def _two_fc():
    net = nn.Sequential()
    net.add(nn.Dense(3, prefix="fc_"), nn.Dense(3, prefix="fc_"))
    return net


def test_duplicate_parameter_names_refused_with_both_blocks():
    net = _two_fc()
    with raises(
        base.DuplicateParameterError, ValueError, "'fc_weight'", "child '0'", "child '1'", "Dense"
    ):
        net.collect_params()
    with pytest.raises(AssertionError):  # what MXNet 1.9.1 raises (a failed assert)
        net.initialize()
    assert all(p._data is None for p in net[0].collect_params().values())


def test_duplicate_names_in_a_selection_only():
    net = _two_fc()
    with raises(base.DuplicateParameterError, ValueError, "'fc_bias'"):
        net.collect_params(".*bias")


def test_shared_parameters_are_not_duplicates():
    net = nn.Sequential()
    d = nn.Dense(2, in_units=2)
    net.add(d, nn.Dense(2, in_units=2, params=d.collect_params()))
    assert sorted(net.collect_params()) == sorted([d.weight.name, d.bias.name])
    net2 = nn.Sequential()
    net2.add(d, d)
    assert len(net2.collect_params()) == 2


@pytest.mark.parametrize("pattern", ["(", "[a-", "*weight"])
def test_bad_collect_params_regex(pattern):
    net = nn.Dense(2)
    with raises(base.InvalidArgumentError, ValueError, repr(pattern), "regular expression"):
        net.collect_params(pattern)


def test_replacing_a_child_with_another_type():
    class Net(nn.HybridBlock):
        def __init__(self):
            super().__init__()
            self.a = nn.Dense(2)

    net = Net()
    child = net.a
    with pytest.raises(TypeError, match="Dense"):  # MXNet: TypeError
        net.a = nn.Conv2D(2, 1)
    assert net.a is child


class _Returns(nn.HybridBlock):
    def __init__(self, fn, **kw):
        super().__init__(**kw)
        self.fn = fn

    def hybrid_forward(self, F, x):
        return self.fn(x)


class _Returns2(nn.HybridBlock):
    def __init__(self, fn, **kw):
        super().__init__(**kw)
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def _no_return(x):
    x * 2


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("cls", [_Returns, _Returns2])
@pytest.mark.parametrize(
    "fn, shown",
    [
        (_no_return, "NoneType"),
        (lambda x: 1.5, "float"),
        (lambda x: np.ones(2), "numpy.ndarray"),
        (lambda x: [x, 2], "int"),
    ],
)
def test_forward_returning_a_non_array(hybridize, cls, fn, shown):
    blk = cls(fn, prefix="odd_")
    blk.hybridize(hybridize)
    mode = "hybridized" if hybridize else "eager"
    with raises(base.ForwardOutputError, TypeError, "'odd'", shown, mode):
        blk(mx.nd.ones(2))
    assert isinstance(ValueError, type) and issubclass(base.ForwardOutputError, ValueError)


@pytest.mark.parametrize("hybridize", [False, True])
def test_forward_returning_none_inside_a_tuple_is_allowed(hybridize):
    blk = _Returns(lambda x: (x * 2, None))
    blk.hybridize(hybridize)
    out, none = blk(mx.nd.ones(2))
    assert none is None
    np.testing.assert_array_equal(out.asnumpy(), [2, 2])


def _write_slice(x):
    x[:] = 0
    return x * 1


def _write_iadd(x):
    x += 1
    return x * 1


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("cls", [_Returns, _Returns2])
@pytest.mark.parametrize("fn", [_write_slice, _write_iadd])
def test_writes_into_inputs_refused_in_both_modes(hybridize, cls, fn):
    """MXNet 1.9.1 lets an eager forward change the caller's array but a hybridized one
    cannot; gluonjax refuses in both modes and leaves the caller's array unchanged."""
    blk = cls(fn, prefix="w_")
    blk.hybridize(hybridize)
    x = mx.nd.array([1.0, 2.0])
    with raises(base.InputWriteError, ValueError, "'w'", "input 0", "(2,)"):
        blk(x)
    np.testing.assert_array_equal(x.asnumpy(), [1, 2])


@pytest.mark.parametrize("hybridize", [False, True])
def test_numpy_input_refused_in_both_modes(hybridize):
    blk = _Returns(lambda x: x * 2, prefix="np_")
    blk.hybridize(hybridize)
    with raises(
        base.BlockInputError, ValueError, "numpy.ndarray", "(2,)", "input 0", "mx.nd.array"
    ):
        blk(np.ones(2, np.float32))
    assert isinstance(blk(mx.nd.ones(2)), mx.nd.NDArray)


class _Either(nn.HybridBlock):
    def hybrid_forward(self, F, a, b):
        return a if b is None else (b if a is None else a + b)


@pytest.mark.parametrize("hybridize", [False, True])
def test_inputs_need_an_ndarray_and_no_mixing_with_symbols(hybridize):
    """As MXNet: at least one NDArray/Symbol input, and never both kinds (ValueError)."""
    blk = _Either(prefix="either_")
    blk.hybridize(hybridize)
    with raises(base.BlockInputError, ValueError, "'either'", "without any NDArray"):
        blk(None, None)
    for args in [(mx.nd.ones(2), mx.sym.var("a")), (mx.sym.var("a"), mx.nd.ones(2))]:
        with raises(base.BlockInputError, ValueError, "mixed"):
            blk(*args)
    with raises(base.BlockInputError, ValueError, "numpy.ndarray", "input 0"):
        blk([mx.nd.ones(2), np.ones(2)], None)
    np.testing.assert_array_equal(blk(None, mx.nd.ones(2)).asnumpy(), [1, 1])
    np.testing.assert_array_equal(blk(mx.nd.ones(2), 1).asnumpy(), [2, 2])


def test_writes_into_a_copy_are_fine():
    def fn(x):
        y = x * 1
        y[:] = 3
        return y

    for h in (False, True):
        blk = _Returns(fn)
        blk.hybridize(h)
        x = mx.nd.ones(2)
        np.testing.assert_array_equal(blk(x).asnumpy(), [3, 3])
        np.testing.assert_array_equal(x.asnumpy(), [1, 1])


def test_uninferable_deferred_shape():
    d = nn.Dense(3)
    with raises(base.MXNetError, None, "dense", "initialize"):
        d(_a(2, 3))


def test_layer_input_shape_mismatch_names_the_node():
    d = nn.Dense(3, in_units=3)
    d.initialize()
    with raises(base.ShapeError, ValueError, "FullyConnected", "(2, 5)"):
        d(_a(2, 5))


# ----------------------------------------------------------------------------- parameters
def test_parameter_uninitialized():
    p = mx.gluon.Parameter("w", shape=(2, 3))
    with raises(MXNetError, None, "'w'", "initialize"):
        p.data()


def test_parameter_set_data_shape():
    p = mx.gluon.Parameter("w", shape=(2, 3))
    p.initialize(mx.init.One())
    with raises(base.ShapeError, ValueError, "'w'", "(3, 3)", "(2, 3)"):
        p.set_data(mx.nd.zeros((3, 3)))
    np.testing.assert_array_equal(p.data().asnumpy(), np.ones((2, 3)))


def test_load_parameters_missing_and_extra(tmp_path):
    a = nn.Dense(2, in_units=2)
    a.initialize()
    f = str(tmp_path / "a.params")
    a.save_parameters(f)
    b = nn.HybridSequential()
    b.add(nn.Dense(2, in_units=2), nn.Dense(2, in_units=2))
    b.initialize()
    before = {k: p.data().asnumpy().copy() for k, p in b.collect_params().items()}
    # MXNet 1.9.1 fails an assert for a missing name and raises ValueError for an extra one
    for builtin in (KeyError, ValueError, AssertionError):
        with raises(base.ParameterMismatchError, builtin, "a.params", "missing"):
            b.load_parameters(f)
    for k, p in b.collect_params().items():
        np.testing.assert_array_equal(p.data().asnumpy(), before[k])


# ----------------------------------------------------------------------------- Trainer
def _trained():
    net = nn.Dense(2, in_units=3)
    net.initialize()
    tr = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 1.0})
    with mx.autograd.record():
        y = net(mx.nd.ones((2, 3)))
    y.backward()
    return net, tr


@pytest.mark.parametrize("bs", [0, 0.0])
def test_trainer_step_zero(bs):
    net, tr = _trained()
    w = net.weight.data().asnumpy().copy()
    with raises(base.InvalidArgumentError, ValueError, "batch_size", "0"):
        tr.step(bs)
    np.testing.assert_array_equal(net.weight.data().asnumpy(), w)
    tr.step(2)  # the trainer still works
    assert not np.array_equal(net.weight.data().asnumpy(), w)


def test_trainer_stale_gradient_is_a_user_warning():
    net, tr = _trained()
    tr.step(2)
    w = net.weight.data().asnumpy().copy()
    with raises(base.StaleGradientError, UserWarning, net.weight.name, "ignore_stale_grad"):
        tr.step(2)
    np.testing.assert_array_equal(net.weight.data().asnumpy(), w)
    tr.step(2, ignore_stale_grad=True)  # skips the stale parameters
    np.testing.assert_array_equal(net.weight.data().asnumpy(), w)


def test_trainer_unknown_optimizer():
    """MXNet 1.9.1: ``ValueError: Cannot find optimizer nosuchopt``."""
    net = nn.Dense(2, in_units=3)
    net.initialize()
    with raises(base.InvalidArgumentError, ValueError, "nosuchopt", "sgd"):
        mx.gluon.Trainer(net.collect_params(), "nosuchopt")
    with raises(base.InvalidArgumentError, ValueError, "nosuchopt"):
        mx.optimizer.create("nosuchopt")


def test_trainer_given_something_else_than_parameters():
    """MXNet 1.9.1 raises ``ValueError`` ("First argument must be a list or dict of
    Parameters")."""
    with raises(base.InvalidArgumentError, ValueError, "Parameters", "int"):
        mx.gluon.Trainer([1, 2], "sgd")
    with raises(base.InvalidArgumentError, ValueError, "Parameters", "str"):
        mx.gluon.Trainer("weights", "sgd")


def test_misspelled_optimizer_argument_suggests_the_name():
    """MXNet 1.9.1 raises ``TypeError`` (an unexpected keyword argument)."""
    net = nn.Dense(2, in_units=3)
    net.initialize()
    with raises(base.ArgumentTypeError, TypeError, "learning_rat", "'learning_rate'"):
        mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rat": 0.1})
    with raises(base.ArgumentTypeError, TypeError, "momentun", "'momentum'"):
        mx.optimizer.SGD(momentun=0.9)


def test_asscalar_of_a_non_scalar():
    """MXNet 1.9.1: ``ValueError: The current array is not a scalar``."""
    with raises(base.InvalidArgumentError, ValueError, "asscalar", "(2, 3)"):
        _a(2, 3).asscalar()


# ----------------------------------------------------------------------------- autograd
def test_backward_without_record():
    x = _a(2, 3)
    with raises(MXNetError, None, "record", "(2, 3)"):
        x.backward()


def test_in_place_write_into_recorded_result():
    x = mx.nd.ones(2)
    x.attach_grad()
    with mx.autograd.record():
        y = x * 2
        with raises(MXNetError, None, "_mul_scalar", "(2,)"):
            y[:] = 1
    np.testing.assert_array_equal(y.asnumpy(), [2, 2])


# ----------------------------------------------------------------------------- symbols
def test_symbol_shape_inference_names_the_node():
    s = mx.sym.dot(mx.sym.var("a"), mx.sym.var("b"), name="d")
    with raises(MXNetError, ValueError, "'d'", "(2, 3)", "(4, 5)"):
        s.infer_shape(a=(2, 3), b=(4, 5))


def test_symbol_eval_missing_argument():
    s = mx.sym.var("a") + mx.sym.var("b")
    with raises(MXNetError, ValueError, "b"):
        s.eval(a=mx.nd.ones(2))


def test_symbol_output_name_unknown():
    s = mx.sym.var("a") + 1
    with raises(MXNetError, None, "'nope'"):
        s["nope"]


# ----------------------------------------------------------------------------- Module
def test_module_used_before_bind():
    mod = mx.mod.Module(mx.sym.var("data"), label_names=None)
    with raises(MXNetError, None, "bind"):
        mod.forward(None)


def _module():
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=2, name="fc")
    return mx.mod.Module(mx.sym.SoftmaxOutput(net, name="softmax"))


def test_module_bind_with_unknown_data_name():
    with raises(MXNetError, ValueError, "DataDesc[x,(2, 3)", "['data']"):
        _module().bind(data_shapes=[("x", (2, 3))])


def test_module_set_params_missing():
    mod = _module()
    mod.bind(data_shapes=[("data", (2, 3))], label_shapes=[("softmax_label", (2,))])
    mod.init_params()
    before = {k: v.asnumpy().copy() for k, v in mod.get_params()[0].items()}
    partial = {"fc_weight": mx.nd.zeros((2, 3))}  # fc_bias missing: nothing may change
    with raises(MXNetError, RuntimeError, "fc_bias is not presented", "allow_missing"):
        mod.set_params(partial, {}, allow_missing=False)
    after = mod.get_params()[0]
    for k, v in before.items():
        np.testing.assert_array_equal(after[k].asnumpy(), v)


def test_module_forward_with_another_feature_size():
    mod = _module()
    mod.bind(data_shapes=[("data", (2, 3))], label_shapes=[("softmax_label", (2,))])
    mod.init_params()
    batch = mx.io.DataBatch([mx.nd.ones((2, 5))], [mx.nd.ones(2)])
    with raises(MXNetError, None, "fc_weight", "(2, 3)", "(2, 5)"):
        mod.forward(batch, is_train=False)


# ----------------------------------------------------------------------------- files
def _listing(d):
    return sorted(os.listdir(d))


@pytest.mark.parametrize(
    "call",
    [
        lambda p, ok: mx.nd.load(p),
        lambda p, ok: mx.sym.load(p),
        lambda p, ok: nn.Dense(2, in_units=2).load_parameters(p),
        lambda p, ok: mx.gluon.SymbolBlock.imports(p, ["data"]),
        lambda p, ok: mx.gluon.SymbolBlock.imports(ok, ["data"], p),
    ],
)
def test_missing_file(tmp_path, call):
    x = mx.sym.var("data")
    ok = str(tmp_path / "ok-symbol.json")
    mx.sym.FullyConnected(x, num_hidden=2, name="fc").save(ok)
    before = _listing(tmp_path)
    p = str(tmp_path / "sub" / "missing.params")
    with raises(base.MissingFileError, FileNotFoundError, p):
        call(p, ok)
    assert _listing(tmp_path) == before


@pytest.mark.parametrize(
    "call",
    [
        lambda p: mx.nd.save(p, [mx.nd.ones(2)]),
        lambda p: mx.nd.load(p),
        lambda p: mx.sym.load(p),
        lambda p: mx.sym.var("a").save(p),
    ],
)
def test_directory_given_for_a_file(tmp_path, call):
    d = tmp_path / "dir"
    d.mkdir()
    with raises(base.IsADirectoryFileError, IsADirectoryError, str(d)) as info:
        call(str(d))
    assert info.value.filename == str(d)
    assert _listing(tmp_path) == ["dir"] and _listing(d) == []


def test_parent_folder_missing_names_the_users_path_not_a_temporary(tmp_path):
    net = nn.HybridSequential()
    net.add(nn.Dense(2, in_units=2))
    net.initialize()
    net.hybridize()
    net(mx.nd.ones((1, 2)))
    target = str(tmp_path / "no" / "m")
    for call, shown in [
        (lambda: net.save_parameters(target + ".params"), target + ".params"),
        (lambda: net.export(target), target),
        (lambda: mx.nd.save(target, {"a": mx.nd.ones(1)}), target),
    ]:
        with raises(base.MissingFileError, FileNotFoundError, shown) as info:
            call()
        assert not re.search(r"\.tmp\b", str(info.value)), str(info.value)
    assert _listing(tmp_path) == []


def test_parent_is_a_file(tmp_path):
    f = tmp_path / "file"
    f.write_bytes(b"x")
    p = str(f / "a.params")
    with raises(base.NotADirectoryFileError, NotADirectoryError, p):
        mx.nd.save(p, [mx.nd.ones(1)])
    with raises(base.NotADirectoryFileError, NotADirectoryError, p):
        mx.nd.load(p)
    assert f.read_bytes() == b"x"


def test_damaged_file_is_a_format_error(tmp_path):
    p = tmp_path / "bad.params"
    p.write_bytes(b"not an ndarray file")
    with raises(base.FileFormatError, ValueError, "bad.params"):
        mx.nd.load(str(p))


def test_error_classes_listed_in_docs():
    """docs/errors.md lists every public error class of gluonjax.base."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "docs", "errors.md"), encoding="utf-8") as f:
        page = f.read()
    classes = [
        n
        for n in base.__all__
        if isinstance(getattr(base, n), type) and issubclass(getattr(base, n), BaseException)
    ]
    missing = [n for n in classes if f"`{n}`" not in page]
    assert not missing, missing


# ----------------------------------------------------------------------------- thin contrib modules
def test_contrib_text_errors_keep_mxnet_builtins(tmp_path):
    from collections import Counter

    from gluonjax.contrib import text

    with raises(text.vocab.TextError, AssertionError, "duplicates", "['x', 'x']"):
        text.vocab.Vocabulary(Counter("ab"), reserved_tokens=["x", "x"])
    bad = tmp_path / "vec.txt"
    bad.write_text("a 1 2\nb 1\nc 1 2 3\n")
    with raises(text.vocab.TextError, ValueError, "line 3", "vec.txt", "3 numbers"):
        text.embedding.CustomEmbedding(str(bad))
    with raises(text.embedding.UnknownEmbeddingError, KeyError, "'nope'"):
        text.embedding.create("nope")


def test_svrg_optimizer_unknown_index():
    from gluonjax.contrib.svrg_optimization.svrg_optimizer import SVRGKeyError, _SVRGOptimizer

    opt = _SVRGOptimizer("sgd", param_idx2name={0: "w"})
    with raises(SVRGKeyError, KeyError, "index 3", "param_idx2name"):
        opt.create_state(3, mx.nd.zeros((2,)))


def test_control_flow_misuse():
    with raises(base.ControlFlowError, AssertionError, "state 0 is not used", "foreach"):
        mx.sym.contrib.foreach(lambda x, s: (x, [x]), mx.sym.var("x"), [mx.sym.var("s")])
    with raises(base.ControlFlowError, ValueError, "max_iterations"):
        mx.nd.contrib.while_loop(lambda i: i < 2, lambda i: (i, i + 1), [mx.nd.zeros((1,))])
    with raises(base.ControlFlowError, ValueError, "2 loop variables for 1"):
        mx.nd.contrib.while_loop(
            lambda i: i < 2, lambda i: (i, [i + 1, i]), [mx.nd.zeros((1,))], max_iterations=3
        )


# ----------------------------------------------------------------------------- ops and arrays
@pytest.mark.parametrize("F", ["nd", "sym"])
def test_misspelled_op_attribute_is_named_with_the_closest(F):
    """MXNet 1.9.1: ``Cannot find argument 'num_hiden'`` (an MXNetError)."""
    x = mx.nd.ones((2, 3)) if F == "nd" else mx.sym.var("x")
    w = mx.nd.ones((4, 3)) if F == "nd" else mx.sym.var("w")
    with raises(base.AttrError, TypeError, "FullyConnected", "'num_hiden'", "'num_hidden'"):
        getattr(mx, F).FullyConnected(x, w, num_hiden=4, no_bias=True)


def test_op_called_with_the_wrong_number_of_inputs_speaks_in_the_ops_terms():
    x = _a(2, 3)
    with raises(base.ShapeError, ValueError, "elemwise_add", "['lhs', 'rhs']", "got 1") as info:
        mx.nd.elemwise_add(x)
    assert "<locals>" not in str(info.value) and "impl" not in str(info.value)
    with raises(base.ShapeError, ValueError, "relu", "['data']", "got 2") as info:
        mx.nd.relu(x, x)
    assert "<locals>" not in str(info.value)


def test_one_hot_negative_depth():
    """MXNet 1.9.1: ``Check failed: *depth >= 0``."""
    with raises(base.OpError, ValueError, "one_hot", "depth=-1"):
        mx.nd.one_hot(mx.nd.array([1, 2]), depth=-1)


def test_ragged_nested_list_to_nd_array():
    """MXNet 1.9.1 raises ``TypeError`` ("source_array must be array like object")."""
    with raises(base.ArgumentTypeError, TypeError, "nd.array", "rectangular"):
        mx.nd.array([[1, 2], [3]])
    with raises(base.ArgumentTypeError, ValueError, "nd.array"):
        mx.nd.array([[1, 2], [3]])


def test_nd_save_of_a_numpy_array(tmp_path):
    """MXNet 1.9.1 raises ``ValueError``; a wrong type is also a ``TypeError`` here."""
    p = tmp_path / "x.params"
    for builtin in (TypeError, ValueError):
        with raises(base.ArgumentTypeError, builtin, "nd.save", "ndarray", "mx.nd.array"):
            mx.nd.save(str(p), np.ones(3))
        with raises(base.ArgumentTypeError, builtin, "nd.save", "data[0]"):
            mx.nd.save(str(p), [np.ones(3)])
    assert _listing(tmp_path) == []


def test_duplicate_variable_names_are_not_merged_silently():
    """Two variables named 'x': MXNet keeps them apart when bound by position; gluonjax
    keys arguments by name, so it refuses two different arrays for one name instead of
    binding one of them to both."""
    a, b = mx.sym.var("x"), mx.sym.var("x")
    c = a + 2 * b
    assert c.list_arguments() == ["x", "x"]
    with raises(base.MXNetError, ValueError, "two different variables named 'x'", "dict"):
        c.bind(mx.cpu(), [mx.nd.ones(2), mx.nd.zeros(2)])
    one = mx.nd.ones(2)  # one array for both (a dict, or the same array twice): MXNet's value
    for args in ({"x": one}, [one, one]):
        out = c.bind(mx.cpu(), args).forward()[0]
        np.testing.assert_array_equal(out.asnumpy(), [3.0, 3.0])


@pytest.mark.parametrize(
    "make",
    [
        lambda: mx.nd.zeros((-2, 3)),
        lambda: mx.nd.ones((2, -1)),
        lambda: mx.nd.full((-1,), 2.0),
        lambda: mx.nd.empty((-3,)),
    ],
)
def test_negative_dimension_in_a_creation_shape(make):
    """MXNet 1.9.1 raises an MXNetError; NumPy's builtin ValueError is a base here."""
    with raises(base.ShapeError, ValueError, "negative dimension", "nd."):
        make()


@pytest.mark.parametrize(
    "call",
    [
        lambda a, b: a + b,
        lambda a, b: mx.nd.broadcast_mul(a, b),
        lambda a, b: mx.nd.elemwise_add(a, b),
        lambda a, b: mx.nd.dot(a, b.T),
        lambda a, b: mx.nd.concat(a, b, dim=0),
        lambda a, b: mx.nd.FullyConnected(a, b, num_hidden=2, no_bias=True),
    ],
)
@pytest.mark.parametrize("other", ["float64", "float16", "int32"])
def test_mixed_input_dtypes_refused_as_mxnet(call, other):
    """MXNet 1.9.1's type inference refuses float32 with float64/float16/int32 inputs in
    these ops; with jax's 64-bit mode on, gluonjax would otherwise promote silently."""
    a = mx.nd.ones((2, 3))
    b = mx.nd.ones((2, 3), dtype=other)
    with raises(base.DTypeError, TypeError, "one dtype", "float32", other):
        call(a, b)


def test_mixed_dtypes_stay_allowed_where_mxnet_allows_them():
    x = mx.nd.ones((2, 3), dtype="float64")
    assert (x * 2).dtype == np.float64  # a Python scalar is not an input
    idx = mx.nd.array([0, 1], dtype="int32")
    assert mx.nd.take(x, idx).dtype == np.float64  # indices of another dtype
    assert mx.nd.where(mx.nd.ones((2, 3)), x, x).dtype == np.float64  # cond of another
    # mx.np promotes as NumPy does
    assert (mx.np.ones((2,)) + mx.np.ones((2,), dtype="float64")).dtype == np.float64


class _AddTwo(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, a, b):
        return a + b


def test_hybridized_block_refuses_python_numbers_and_mixed_contexts():
    """MXNet 1.9.1 raises ``ValueError`` for both; without hybridize() a number is fine."""
    plain = _AddTwo()
    np.testing.assert_array_equal(plain(mx.nd.ones((3,)), 1).asnumpy(), [2.0, 2.0, 2.0])
    net = _AddTwo()
    net.hybridize()
    with raises(base.BlockInputError, ValueError, "_AddTwo", "Python number", "['NDArray', 'int']"):
        net(mx.nd.ones((3,)), 1)
    net = _AddTwo()
    net.hybridize()
    with raises(base.BlockInputError, ValueError, "different contexts", "cpu(1)", "cpu(2)"):
        net(mx.nd.ones((3,), ctx=mx.cpu(1)), mx.nd.ones((3,), ctx=mx.cpu(2)))
    net = _AddTwo()
    net.hybridize()  # cpu_pinned is CPU memory: it mixes with cpu, as in MXNet
    out = net(mx.nd.ones((3,), ctx=mx.cpu_pinned(0)), mx.nd.ones((3,)))
    np.testing.assert_array_equal(out.asnumpy(), [2.0, 2.0, 2.0])


def test_mixed_dtypes_in_a_symbol_graph_refused_as_mxnet():
    """MXNet 1.9.1's infer_type, simple_bind and bind refuse a float64 weight for float32
    data (``Incompatible attr``); the message names the node and each input's dtype."""
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    with raises(base.DTypeError, TypeError, "'fc'", "'data': 'float32'", "'weight': 'float64'"):
        fc.infer_type(data="float32", fc_weight="float64")
    with raises(base.DTypeError, TypeError, "'fc'"):
        fc.simple_bind(mx.cpu(), data=(2, 4), type_dict={"data": "float32", "fc_weight": "float64"})
    add = mx.sym.var("a") + mx.sym.var("b")
    with raises(base.DTypeError, TypeError, "float32", "float64"):
        add.bind(mx.cpu(), {"a": mx.nd.ones(2), "b": mx.nd.ones(2, dtype="float64")})
    out = add.bind(mx.cpu(), {"a": mx.nd.ones(2), "b": mx.nd.ones(2)}).forward()[0]
    assert out.dtype == np.float32
