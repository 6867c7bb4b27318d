"""Per-thread scopes, as in MXNet 1.9.1: the default context, AttrScope, NameManager, the
Gluon block scope and the NumPy-array switch set in one thread never leak into another,
whether set with ``with`` or through MXNet's (deprecated) class attributes."""

from __future__ import annotations

import threading

import pytest

import gluonjax as mx
from gluonjax.attribute import AttrScope
from gluonjax.context import Context
from gluonjax.gluon import block
from gluonjax.name import NameManager
from gluonjax.util import _NumpyArrayScope


def in_thread(fn):
    """Run ``fn`` in a new thread; return its result (re-raising its exception)."""
    box = {}

    def run():
        try:
            box["out"] = fn()
        except BaseException as err:  # noqa: BLE001 - re-raised below
            box["err"] = err

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "err" in box:
        raise box["err"]
    return box["out"]


@pytest.fixture(autouse=True)
def _restore_main_thread():
    yield
    Context.default_ctx = Context("cpu", 0)
    AttrScope.current = AttrScope()
    NameManager.current = NameManager()


def test_context_type_ids_are_mxnets():
    assert Context.devtype2str == {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
    assert {k: v for v, k in Context.devtype2str.items()} == Context.devstr2type
    assert mx.cpu().device_typeid == 1 and mx.gpu(3).device_typeid == 2
    assert mx.cpu_pinned().device_typeid == 3


def test_default_ctx_is_per_thread():
    def spawned():
        Context.default_ctx = mx.gpu(11)  # a GPU context may be named without a GPU
        return Context.default_ctx

    got = in_thread(spawned)
    assert (got.device_type, got.device_id) == ("gpu", 11)
    assert mx.current_context() == mx.cpu(0)
    Context.default_ctx = mx.cpu(3)
    assert mx.current_context() == mx.cpu(3)
    assert in_thread(mx.current_context) == mx.cpu(0)


def test_with_context_is_per_thread():
    entered, release = threading.Event(), threading.Event()
    seen = []

    def spawned():
        with mx.cpu(10):
            entered.set()
            release.wait(10)
            seen.append(mx.current_context())

    t = threading.Thread(target=spawned)
    t.start()
    entered.wait(10)
    Context.default_ctx = Context("cpu", 11)
    release.set()
    t.join()
    assert seen == [mx.cpu(10)]
    assert mx.current_context() == mx.cpu(11)


def test_attrscope_current_is_per_thread():
    AttrScope.current = AttrScope(y="hi", z="hey")

    def spawned():
        AttrScope.current = AttrScope(x="hello")
        return AttrScope.current

    assert in_thread(spawned)._attr == {"x": "hello"}
    assert AttrScope.current._attr == {"y": "hi", "z": "hey"}
    with mx.AttrScope(group="4"):
        assert AttrScope.current._attr == {"y": "hi", "z": "hey", "group": "4"}
        assert in_thread(lambda: AttrScope.current._attr) == {}
        assert mx.sym.var("v").attr("group") == "4"
    with pytest.raises(TypeError):
        AttrScope.current = {"x": "1"}
    with pytest.raises(ValueError, match="strings"):
        AttrScope(lr_mult=2)


def test_namemanager_current_is_per_thread():
    NameManager.current = NameManager()
    NameManager.current.get(None, "main_thread")

    def spawned():
        with NameManager():
            return "main_thread" in NameManager.current._counter

    assert in_thread(spawned) is False
    assert "main_thread" in NameManager.current._counter
    with mx.name.Prefix("p_"):
        assert mx.sym.var("a").name == "a"
        assert mx.sym.relu(mx.sym.var("a")).name == "p_relu0"


def test_blockscope_is_mxnets_name_and_per_thread():
    class Dummy:
        prefix = "spawned_"
        _empty_prefix = False

    entered, release = threading.Event(), threading.Event()
    names = []

    def spawned():
        with block._BlockScope(Dummy()):
            entered.set()
            release.wait(10)
            names.append(NameManager.current.get(None, "hello"))

    t = threading.Thread(target=spawned)
    t.start()
    entered.wait(10)
    prefix, params = block._BlockScope.create("main_thread", None, "hi")
    release.set()
    t.join()
    assert names == ["spawned_hello0"]
    assert prefix == "main_thread" and params.prefix == "main_thread"
    assert block._BlockScope is block.BlockScope


def test_np_array_scope_is_per_thread():
    assert mx.is_np_array() is False
    _NumpyArrayScope._current = _NumpyArrayScope(False)
    assert _NumpyArrayScope._current._is_np_array is False

    def spawned():
        _NumpyArrayScope._current = _NumpyArrayScope(True)
        return _NumpyArrayScope._current

    assert in_thread(spawned)._is_np_array is True
    assert _NumpyArrayScope._current._is_np_array is False
    with mx.np_array(True) as scope:
        assert isinstance(scope, _NumpyArrayScope) and _NumpyArrayScope._current is scope
        assert mx.is_np_array() is True
        assert in_thread(mx.is_np_array) is False
    assert mx.is_np_array() is False
    with pytest.raises(TypeError):
        _NumpyArrayScope._current = True
