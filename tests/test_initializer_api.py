"""gluonjax.initializer: name dispatch, create/dumps/registry, Mixed and Load."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

import gluonjax as mx
import gluonjax.initializer as init
from gluonjax.base import MXNetError

D = init.InitDesc
# MXNet 1.9.1: mx.init.Bilinear()._init_weight('x', mx.nd.zeros((1, 1, 4, 4))) rows 0 and 1
BILINEAR_2x4 = [[0.0625, 0.1875, 0.1875, 0.0625], [0.1875, 0.5625, 0.5625, 0.1875]]


def filled(initializer, shape, name="fc_weight", dtype="float32", seed=0):
    mx.random.seed(seed)
    arr = mx.nd.zeros(shape, dtype=dtype) + 7  # non-zero start: every entry must be written
    initializer(D(name), arr)
    return arr


def test_mixed_routing_and_errors():
    mixed = init.Mixed(["conv", ".*_weight$", ".*"], [init.Constant(3), "ones", init.Zero()])
    cases = {"conv1_weight": 3.0, "fc_weight": 1.0, "fc_gamma": 1.0, "fc_beta": 0.0}
    for name, value in cases.items():
        np.testing.assert_array_equal(filled(mixed, (2,), name=name).asnumpy(), [value] * 2)
    # re.match anchors at the start: 'xconv_weight' is not routed to 'conv'
    assert filled(mixed, (2,), name="xconv_weight").asnumpy().tolist() == [1.0, 1.0]
    strict = init.Mixed(["conv"], [init.One()])
    with pytest.raises(MXNetError, match="fc_weight.*did not match"):
        strict(D("fc_weight"), mx.nd.zeros((2,)))
    with pytest.raises(MXNetError, match="one initializer per pattern"):
        init.Mixed(["a", "b"], [init.One()])


def test_load_from_dict():
    saved = {"arg:fc_weight": mx.nd.array([[1, 2], [3, 4]]), "aux:bn_moving_var": np.ones(3) * 5}
    loader = init.Load(saved)
    w, v = mx.nd.zeros((2, 2)), mx.nd.zeros((3,))
    loader(D("fc_weight"), w)
    loader("bn_moving_var", v)
    assert w.asnumpy().tolist() == [[1, 2], [3, 4]] and v.asnumpy().tolist() == [5, 5, 5]
    with pytest.raises(MXNetError, match="fc_bias.*no default_init"):
        loader(D("fc_bias"), mx.nd.zeros((2,)))
    with pytest.raises(MXNetError, match="shape mismatch"):
        loader(D("fc_weight"), mx.nd.zeros((4,)))
    with_default = init.Load(saved, default_init=init.Constant(9))
    b = mx.nd.zeros((2,))
    with_default(D("fc_beta"), b)  # missing name: default_init, with its name rules (beta -> 0)
    assert b.asnumpy().tolist() == [0.0, 0.0]
    with_default(D("fc_extra_weight"), b)
    assert b.asnumpy().tolist() == [9.0, 9.0]


def test_load_from_file_uses_nd_load(monkeypatch, tmp_path):
    fname = str(tmp_path / "p.params")
    calls = []
    monkeypatch.setattr(mx.nd, "load", lambda f: calls.append(f) or {"w_weight": np.ones(2)})
    loader = init.Load(fname, default_init="zeros")
    w = mx.nd.zeros((2,))
    loader("w_weight", w)
    assert calls == [fname] and w.asnumpy().tolist() == [1.0, 1.0]
    assert json.loads(loader.dumps()) == [
        "load",
        {"param": fname, "default_init": '["zero", {}]', "verbose": False},
    ]


RULES = {
    "fc_weight": "W",
    "fc_bias": 0,
    "bn_gamma": 1,
    "bn_beta": 0,
    "bn_moving_mean": 0,
    "bn_running_mean": 0,
    "bn_moving_var": 1,
    "bn_running_var": 1,
    "bn_moving_inv_var": 0,
    "q_min": 0,
    "q_max": 1,
}


@pytest.mark.parametrize("as_desc", [True, False])
@pytest.mark.parametrize("name", list(RULES))
def test_name_dispatch(name, as_desc):
    arr = mx.nd.zeros((2, 2)) + 7
    init.Constant(5)(D(name) if as_desc else name, arr)
    expect = 5 if RULES[name] == "W" else RULES[name]
    np.testing.assert_array_equal(arr.asnumpy(), np.full((2, 2), expect))


def test_unknown_name_and_legacy_prefixes():
    with pytest.raises(MXNetError, match="'fc_foo'.*init="):
        init.Uniform()(D("fc_foo"), mx.nd.zeros((2,)))
    with pytest.raises(ValueError):
        init.Uniform()("fc_foo", mx.nd.zeros((2,)))
    up = mx.nd.zeros((1, 1, 2, 4))
    init.Uniform()("upsampling0_weight", up)  # a plain-string name starting with 'upsampling'
    np.testing.assert_array_equal(up.asnumpy()[0, 0], BILINEAR_2x4)
    loc = mx.nd.zeros((6,)) + 3
    init.Uniform()("stn_loc_bias", loc)
    assert loc.asnumpy().tolist() == [1, 0, 0, 0, 1, 0]
    with pytest.raises(TypeError):
        init.One()(D("w_weight"), np.zeros(2))


ATTRS = [
    ('["constant", {"value": 4}]', 4.0),
    ("ones", 1.0),
    (init.One(), 1.0),
    ({"initializer": "constant", "value": 2}, 2.0),
    (init.LSTMBias(3.0).dumps(), 0.0),
]


@pytest.mark.parametrize("attr,expect", ATTRS)
def test_init_attr_overrides_name(attr, expect):
    desc = D("bn_running_mean", {"__init__": attr})  # the name alone would give 0
    arr = mx.nd.zeros((3,)) + 7
    init.Zero()(desc, arr)
    assert arr.asnumpy().tolist() == [expect] * 3  # LSTMBias on 3 entries: no forget quarter
    assert desc.global_init == init.Zero()


NAMES = {
    "uniform": init.Uniform,
    "normal": init.Normal,
    "xavier": init.Xavier,
    "msraprelu": init.MSRAPrelu,
    "orthogonal": init.Orthogonal,
    "bilinear": init.Bilinear,
    "zeros": init.Zero,
    "zero": init.Zero,
    "ones": init.One,
    "one": init.One,
    "constant": init.Constant,
    "lstmbias": init.LSTMBias,
    "mixed": init.Mixed,
    "load": init.Load,
}
ARGS = {"constant": (1.0,), "mixed": ([".*"], ["zeros"]), "load": ({},)}


@pytest.mark.parametrize("name", list(NAMES))
def test_create_by_string_and_instance(name):
    obj = init.create(name.upper() if name == "xavier" else name, *ARGS.get(name, ()))
    assert type(obj) is NAMES[name]
    assert init.create(obj) is obj
    if name not in ARGS:
        assert type(init.create(initializer=name)) is NAMES[name]
    with pytest.raises(MXNetError, match="already an instance"):
        init.create(obj, 1)


def test_create_kwargs_and_unknown():
    assert init.create("normal", sigma=0.3).sigma == 0.3
    assert init.create("xavier", rnd_type="gaussian").rnd_type == "gaussian"
    with pytest.raises(MXNetError, match="not a registered initializer"):
        init.create("nope")


DUMPABLE = [
    init.Uniform(0.2),
    init.Normal(0.3),
    init.Xavier("gaussian", "in", 2.5),
    init.MSRAPrelu("out", 0.1),
    init.Orthogonal(2.0, "normal"),
    init.Bilinear(),
    init.Zero(),
    init.One(),
    init.Constant(1.5),
    init.LSTMBias(3.0),
    init.Mixed(["b", ".*"], [init.Zero(), init.Uniform(0.5)]),
]


@pytest.mark.parametrize("obj", DUMPABLE, ids=lambda v: type(v).__name__)
def test_dumps_round_trip(obj):
    again = init.create(obj.dumps())
    assert again == obj and type(again) is type(obj) and repr(again) == repr(obj)
    shape = (2, 1, 2, 4)
    np.testing.assert_array_equal(
        filled(obj, shape, seed=5).asnumpy(), filled(again, shape, seed=5).asnumpy()
    )


def test_dumps_format_and_eq():  # strings as MXNet 1.9.1 writes them
    assert init.Normal(0.5).dumps() == '["normal", {"sigma": 0.5}]'
    assert init.MSRAPrelu().dumps() == '["msraprelu", {"factor_type": "avg", "slope": 0.25}]'
    assert init.Zero().dumps() == '["zero", {}]'
    assert init.Constant(mx.nd.array([1, 2])).dumps() == '["constant", {"value": [1.0, 2.0]}]'
    assert init.Uniform(0.1) == init.Uniform(0.1) and init.Uniform(0.1) != init.Normal(0.1)
    assert init.Uniform(0.1) != init.Uniform(0.2) and repr(init.Uniform()) == "Uniform(scale=0.07)"


@pytest.mark.parametrize("obj", [init.Uniform(), init.Normal(), init.Xavier(), init.Orthogonal()])
def test_reproducible_with_seed(obj):
    a, b = filled(obj, (4, 6), seed=11).asnumpy(), filled(obj, (4, 6), seed=11).asnumpy()
    c = filled(obj, (4, 6), seed=12).asnumpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_register_alias_and_verbosity(caplog):
    @init.register
    @init.alias("sevens_alias")
    class Sevens(init.Initializer):
        def _init_weight(self, _, arr):
            arr[:] = 7

    assert type(init.create("sevens")) is Sevens and type(init.create("Sevens_Alias")) is Sevens
    with pytest.raises(TypeError):
        init.register(dict)
    arr = mx.nd.array([3.0, 4.0])
    with caplog.at_level(logging.INFO):
        init.Constant(2).set_verbosity(True)(D("v_weight"), arr)
    assert "v_weight" in caplog.text and str(2.0) in caplog.text  # norm([2,2]) / sqrt(2) = 2


def test_initdesc():
    d = D("a_weight", {"k": "v"})
    assert (
        isinstance(d, str) and d == "a_weight" and d.attrs == {"k": "v"} and d.global_init is None
    )
    assert D("b").attrs == {}
