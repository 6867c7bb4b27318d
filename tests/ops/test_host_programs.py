"""Size-class programs computed by NumPy on the host (gluonjax/_ops/host.py), tested
differentially: the host form against XLA:CPU's compiled program for the same key, bit
for bit, on values chosen to find where XLA:CPU is not plain IEEE (signed zeros, NaN,
infinities, subnormals that XLA flushes, products it fuses into FMAs)."""

from __future__ import annotations

import textwrap

import jax
import ml_dtypes
import numpy as np
import pytest

import gluonjax as mx
from gluonjax._ops import buckets, host
from gluonjax._ops import registry as reg
from tests.ops.eager_process import run_script

RNG = np.random.RandomState(11)
TINY32 = np.finfo(np.float32).tiny

# ops whose size-class program NumPy must run (the point of the host path)
MUST = [
    "elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "broadcast_add",
    "broadcast_sub", "broadcast_mul", "broadcast_div", "broadcast_maximum",
    "broadcast_minimum", "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar",
    "_div_scalar", "_rdiv_scalar", "negative", "abs", "sqrt", "square", "relu", "_equal",
    "broadcast_greater", "_lesser_scalar", "where", "floor", "ceil",
]  # fmt: skip
SCALAR = {"_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar",
          "_rdiv_scalar", "_lesser_scalar"}  # fmt: skip


def _specials(dtype, shape):
    """Random values with the awkward ones mixed in: +-0, +-inf, NaN, +-1, the largest
    finite, and (float32) subnormals and values just above the smallest normal."""
    x = RNG.standard_normal(shape) * 3
    flat = x.reshape(-1)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -2.5]
    if dtype == np.float32:
        special += [TINY32 * 3, -TINY32 * 5, float(np.finfo(np.float32).max)]
    k = min(len(special), flat.size // 2)
    idx = RNG.choice(flat.size, size=k, replace=False)
    flat[idx] = special[:k]
    if np.dtype(dtype).kind in "iu":
        x = np.nan_to_num(np.round(x), posinf=7, neginf=-7)
    return x.astype(dtype)


def _via_xla(p):
    """The compiled size-class program's result for plan ``p`` (host form bypassed)."""
    prog = buckets.program(p.key, p.make, p.avals, host=False)
    assert not isinstance(prog, host.HostProgram)
    return p.unpad([np.asarray(o) for o in prog(*p.args)])[0]


def _same_bits(got, want, msg):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, msg
    if got.dtype.kind == "f" or got.dtype == np.dtype(ml_dtypes.bfloat16):
        nan = np.isnan(got.astype(np.float32))
        np.testing.assert_array_equal(nan, np.isnan(want.astype(np.float32)), err_msg=msg)
        got, want = got[~nan], want[~nan]
        u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[got.dtype.itemsize]
        np.testing.assert_array_equal(got.view(u), want.view(u), err_msg=msg)
    else:
        np.testing.assert_array_equal(got, want, err_msg=msg)


def _plan(name, arrays, attrs):
    op = reg.get(name)
    static_key, dyn = op.parse_attrs(attrs)
    args = [jax.device_put(a) for a in arrays] + list(dyn)
    p = buckets.plan(op, static_key, args, len(arrays))
    assert p is not None, name
    return p


def _arrays(name, dtype, shape):
    op = reg.get(name)
    n = len(op.input_names(op.attr_dict(op.parse_attrs({"scalar": 1.0} if name in SCALAR
                                                       else {})[0])))  # fmt: skip
    if op.bucket == "broadcast":
        return [_specials(dtype, shape), _specials(dtype, shape[1:] or (1,))]
    arrays = [_specials(dtype, shape) for _ in range(n)]
    if name == "where":
        arrays[0] = (RNG.rand(*shape) > 0.5).astype(dtype)
    return arrays


@pytest.mark.parametrize("name", MUST)
def test_host_form_exists_and_runs_any_shape(name):
    attrs = {"scalar": 1.5} if name in SCALAR else {}
    p = _plan(name, _arrays(name, np.float32, (3, 4)), attrs)
    prog = buckets.program(p.key, p.make, p.avals)
    assert isinstance(prog, host.HostProgram) and prog.generic, name


@pytest.mark.parametrize("name", MUST)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])  # bfloat16 keeps exact shapes
def test_host_equals_xla_bit_for_bit(name, dtype):
    if np.dtype(dtype).kind == "i" and name in (
        "sqrt",
        "elemwise_div",
        "broadcast_div",
        "_div_scalar",
        "_rdiv_scalar",
        "floor",
        "ceil",
    ):
        pytest.skip("integer division and sqrt are not defined for int32 operands here")
    scalars = [0.0, -0.0, 2.0, -3.0, np.inf] if name in SCALAR else [None]
    for shape in [(1,), (7,), (3, 5), (2, 3, 41), (40, 30)]:
        for s in scalars:
            attrs = {} if s is None else {"scalar": s}
            p = _plan(name, _arrays(name, dtype, shape), attrs)
            got = np.asarray(buckets.forward(p))
            _same_bits(got, _via_xla(p), f"{name} {np.dtype(dtype)} {shape} scalar={s}")


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_host_max_min_reductions_bit_for_bit(name, dtype):
    for shape, axis in [((5,), 0), ((3, 17), 0), ((3, 17), 1), ((4, 5, 6), (0, 2))]:
        p = _plan(name, [_specials(dtype, shape)], {"axis": axis})
        _same_bits(np.asarray(buckets.forward(p)), _via_xla(p), f"{name} {shape} {axis}")


def test_host_sum_is_a_sum_within_rounding():
    x = RNG.rand(37, 53).astype(np.float32)
    p = _plan("sum", [x], {"axis": 0})
    got = np.asarray(buckets.forward(p))
    np.testing.assert_allclose(got, x.astype(np.float64).sum(0), rtol=2e-6)
    np.testing.assert_allclose(got, _via_xla(p), rtol=2e-6)


def test_subnormals_run_the_compiled_program():
    # XLA:CPU flushes subnormal inputs and results to zero; NumPy does not. Such a call
    # is handed to the compiled program.
    x = np.array([TINY32 / 4, 1.0, -TINY32 / 8, 2.0], np.float32)
    y = np.array([1.0, 1.0, 1.0, 0.5], np.float32)
    p = _plan("elemwise_mul", [x, y], {})
    got = np.asarray(buckets.forward(p))
    np.testing.assert_array_equal(got, [0.0, 1.0, -0.0, 1.0])
    _same_bits(got, _via_xla(p), "mul with subnormals")
    # a result that underflows: XLA gives zero
    z = np.array([TINY32 * 2, 3.0], np.float32)
    p = _plan("_mul_scalar", [z], {"scalar": 0.25})
    _same_bits(np.asarray(buckets.forward(p)), _via_xla(p), "underflowing product")
    assert np.asarray(buckets.forward(p))[0] == 0.0


def test_xla_order_of_signed_zeros_and_sign():
    a = np.array([-0.0, 0.0, -0.0, 0.0, np.nan, 1.0], np.float32)
    b = np.array([0.0, -0.0, -0.0, 0.0, 1.0, np.nan], np.float32)
    for name in ("broadcast_maximum", "broadcast_minimum"):
        p = _plan(name, [a, b], {})
        _same_bits(np.asarray(buckets.forward(p)), _via_xla(p), name)
    p = _plan("sign", [a], {})
    _same_bits(np.asarray(buckets.forward(p)), _via_xla(p), "sign")


def test_a_product_summed_in_one_program_is_compiled():
    # XLA:CPU fuses x*y + z into one FMA (one rounding): such a program has no host form
    def fma(x, y, z):
        return x * y + z

    avals = [jax.ShapeDtypeStruct((64,), np.float32)] * 3
    assert host.translate(fma, avals) is None
    assert host.translate(lambda x, y: x * y, avals[:2]) is not None
    # hypot's 1 + (min / max) ** 2 is such a sum: compiled, and equal to the exact kernel
    p = _plan("_hypot_scalar", [_specials(np.float32, (40,))], {"scalar": 1.5})
    assert not isinstance(buckets.program(p.key, p.make, p.avals), host.HostProgram)


def test_json_round_trip_is_the_same_program():
    p = _plan("broadcast_div", [RNG.rand(6, 9).astype(np.float32) + 0.5,
                                RNG.rand(9).astype(np.float32) + 0.5], {})  # fmt: skip
    prog = buckets.program(p.key, p.make, p.avals)
    again = host.HostProgram.from_json(prog.to_json())
    assert again.generic == prog.generic
    for a, b in zip(prog.raw(*p.raw), again.raw(*p.raw)):
        _same_bits(a, b, "json")
    with pytest.raises(ValueError):
        host.HostProgram.from_json(prog.to_json().replace('"div"', '"os.system"'))


SCRIPT = textwrap.dedent(
    """
    import json, numpy as np
    import gluonjax as mx
    from gluonjax._ops import buckets
    rng = np.random.RandomState(5)
    out = []
    for shape in [(5,), (17, 3), (40, 21)]:
        x = mx.nd.array(rng.rand(*shape)); y = mx.nd.array(rng.rand(*shape))
        z = mx.nd.sum(mx.nd.broadcast_add(x, y) / y - x, axis=0)
        out.append(z.asnumpy().tolist())
    print(json.dumps({"stats": buckets.stats(), "out": out}))
    """
)


def _run(cache, **env):
    return run_script(SCRIPT, cache, **env)


def test_second_process_reads_host_programs_without_tracing(tmp_path):
    first = _run(tmp_path)
    st = first["stats"]
    assert st["compiled"] == 0 and st["host_made"] >= 4 and st["runs"] == 12
    second = _run(tmp_path)
    assert second["stats"]["host_made"] == 0 and second["stats"]["compiled"] == 0
    assert second["stats"]["host_loaded"] == st["host_made"]
    assert second["out"] == first["out"]
    # a damaged description is not trusted: made again from the jaxpr, same values
    files = sorted((tmp_path / "eager").rglob("*.host"))
    assert files
    for f in files:
        f.write_bytes(f.read_bytes()[:60])
    third = _run(tmp_path)
    assert third["stats"]["host_made"] == st["host_made"] and third["out"] == first["out"]


def test_host_switched_off_compiles_and_agrees(tmp_path):
    on = _run(tmp_path / "on")
    off = _run(tmp_path / "off", GLUONJAX_HOST_OPS="0")
    assert off["stats"]["host"] == 0 and off["stats"]["compiled"] > 0
    # sums may add in another order; the elementwise parts are the same bits
    np.testing.assert_allclose(
        np.concatenate([np.ravel(v) for v in on["out"]]),
        np.concatenate([np.ravel(v) for v in off["out"]]),
        rtol=1e-6,
    )


def test_nd_ops_use_the_host_path_and_stay_correct():
    before = buckets.stats()["runs"]
    a = RNG.rand(3, 7).astype(np.float32)
    b = RNG.rand(7).astype(np.float32) + 0.5
    got = (mx.nd.broadcast_div(mx.nd.array(a), mx.nd.array(b)) * 3.0 - 1.0).asnumpy()
    np.testing.assert_array_equal(got, (a / b) * np.float32(3.0) - np.float32(1.0))
    assert buckets.stats()["runs"] >= before + 3


def _grads(host_on, xv, yv):
    old = buckets._state.get("host")
    buckets._state["host"] = host_on
    buckets._PROGRAMS.clear()
    buckets._GENERIC.clear()
    try:
        x, y = mx.nd.array(xv), mx.nd.array(yv)
        x.attach_grad()
        y.attach_grad()
        with mx.autograd.record():
            z = mx.nd.broadcast_div(mx.nd.broadcast_maximum(x, y), y) - x * 2.0
            w = mx.nd.relu(z) * z
        w.backward()
        return x.grad.asnumpy(), y.grad.asnumpy(), w.asnumpy()
    finally:
        buckets._state["host"] = old
        buckets._PROGRAMS.clear()
        buckets._GENERIC.clear()


def test_recorded_elementwise_vjps_on_the_host_equal_the_compiled_ones():
    # the VJPs of elementwise ops run unpadded on the host; the same bits as compiled
    for sx, sy in [((13, 7), (7,)), ((3, 5, 6), (5, 6)), ((29,), (29,))]:
        xv = _specials(np.float32, sx)
        yv = np.abs(RNG.standard_normal(sy)).astype(np.float32) + 0.25
        xv[~np.isfinite(xv)] = 1.5
        made = buckets.stats()["host_made"] + buckets.stats()["host_loaded"]
        on = _grads(True, xv, yv)
        assert buckets.stats()["host_made"] + buckets.stats()["host_loaded"] > made
        off = _grads(False, xv, yv)
        for a, b in zip(on, off):
            _same_bits(a, b, f"grads {sx} {sy}")


# every elementwise op with a host form, on float32 values with the awkward ones mixed in
_ATTRS = {
    "Cast": {"dtype": "float16"},
    "Activation": {"act_type": "relu"},
    "clip": {"a_min": -0.3, "a_max": 0.4},
    "smooth_l1": {"scalar": 0.7},
}


def _elementwise_ops():
    seen, out = set(), []
    for _name, op in reg.items():
        if op in seen or op.bucket not in ("map", "broadcast"):
            continue
        seen.add(op)
        out.append(op.name)
    return sorted(out)


def test_every_host_form_equals_xla_on_special_values():
    translated = []
    for name in _elementwise_ops():
        op = reg.get(name)
        attrs = dict(_ATTRS.get(name, {}))
        if "scalar" in op.attrs and "scalar" not in attrs:
            attrs["scalar"] = 1.5
        n = len(op.input_names(op.attr_dict(op.parse_attrs(attrs)[0])))
        arrays = [_specials(np.float32, (5, 13)) for _ in range(n)]
        p = _plan(name, arrays, attrs)
        if not isinstance(buckets.program(p.key, p.make, p.avals), host.HostProgram):
            continue
        translated.append(name)
        _same_bits(np.asarray(buckets.forward(p)), _via_xla(p), name)
    assert set(MUST) <= set(translated)


# ----------------------------------------------------------------------------- exp
def _exp_inputs():
    """Every 40009th float32 bit pattern, dense samples of the range exp is finite and
    normal on, and the edges (clamps, overflow, underflow to zero, NaN payloads)."""
    pats = np.arange(0, 1 << 32, 40009, dtype=np.uint64).astype(np.uint32).view(np.float32)
    edges = np.array([0.0, -0.0, np.inf, -np.inf, 88.7, 88.72, 88.73, 88.8, 88.81, -87.3,
                      -87.34, -87.8, -87.81, -103.9, -104.0, 1e-30, -1e-30, 1e-7, 0.34657,
                      -0.34658, 1.0, -1.0], np.float32)  # fmt: skip
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF812345], np.uint32)
    x = np.concatenate([pats, RNG.uniform(-90, 90, 200_000).astype(np.float32),
                        RNG.uniform(-1, 1, 50_000).astype(np.float32), edges,
                        nans.view(np.float32)])  # fmt: skip
    return x[~((np.abs(x) < TINY32) & (x != 0))]  # subnormal inputs compile (XLA reads 0)


def _xla_exp(x):
    """XLA:CPU's float32 exp of every element in its vector body: laid out in a length
    that is a multiple of 256, as a size class is (the scalar remainder of an exact
    program may differ by an ulp; see tests/ops/test_size_classes.py)."""
    flat = np.asarray(x, np.float32).reshape(-1)
    buf = np.zeros(-(-flat.size // 256) * 256, np.float32)
    buf[: flat.size] = flat
    return np.asarray(jax.jit(jax.numpy.exp)(buf))[: flat.size].reshape(np.shape(x))


def test_host_exp_float32_equals_xla_bit_for_bit():
    # tools/verify_host_exp.py compares all 2**32 inputs; this is a sample of them
    x = _exp_inputs()
    want = _xla_exp(x)
    if not host._exp_verified():
        with pytest.raises(host.Unsupported):
            host._exp(x[:8])
        pytest.skip("XLA:CPU's float32 exp here is not the verified one: it compiles")
    step = host._EXP_HOST_MAX
    with np.errstate(all="ignore"):
        got = np.concatenate([host._exp(x[k : k + step]) for k in range(0, x.size, step)])
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_host_exp_other_types_and_accuracy_compile():
    for dtype in (np.float16, np.float64, ml_dtypes.bfloat16):
        with pytest.raises(host.Unsupported):
            host._exp(np.ones(3, dtype))
    with pytest.raises(host.Unsupported):
        host._exp(np.ones(3, np.float32), accuracy="high")
    with pytest.raises(host.Unsupported):  # a large array: the compiled program is faster
        host._exp(np.ones(host._EXP_HOST_MAX + 1, np.float32))


def test_host_exp_is_off_where_not_verified(monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math=true")
    assert host._exp_platform() is False
    monkeypatch.setattr(host, "_EXP_VERIFIED", ())
    monkeypatch.delenv("XLA_FLAGS")
    assert host._exp_platform() is False


def test_exp_is_translated_only_where_every_element_is_in_the_vector_body():
    # exp ends in a multiply (its 2**n scaling) that XLA may fuse with a following add
    flat = [jax.ShapeDtypeStruct((256,), np.float32)] * 2
    assert host.translate(lambda x, y: jax.numpy.exp(x) + y, flat, vector_body=True) is None
    assert host.translate(lambda x, y: jax.numpy.exp(x) * y - x, flat, True) is None

    def fn(x, y):
        return jax.numpy.maximum(jax.numpy.exp(x) * y, x)

    # an exact-shape program, or one with an array that is not a flat multiple of 256,
    # computes a scalar remainder: compiled
    assert host.translate(fn, flat) is None
    assert host.translate(fn, [jax.ShapeDtypeStruct((64,), np.float32)] * 2, True) is None
    assert host.translate(fn, [jax.ShapeDtypeStruct((16, 16), np.float32)] * 2, True) is None
    prog = host.translate(fn, flat, vector_body=True)
    assert prog is not None
    x = _specials(np.float32, (256,))
    x = np.where((np.abs(x) < TINY32 * 8) & (x != 0), 1.0, x).astype(np.float32)
    y = RNG.standard_normal(256).astype(np.float32)
    if host._exp_verified():
        with np.errstate(all="ignore"):
            _same_bits(prog(x, y)[0], jax.jit(fn)(x, y), "max(exp(x) * y, x)")


def test_nd_exp_on_new_shapes_runs_on_the_host():
    before = buckets.stats()
    for shape in [(3, 41), (7,), (2, 5, 9)]:
        x = RNG.uniform(-20, 20, shape).astype(np.float32)
        got = mx.nd.exp(mx.nd.array(x)).asnumpy()
        _same_bits(got, _xla_exp(x), f"nd.exp {shape}")
    after = buckets.stats()
    assert after["runs"] - before["runs"] == 3
    if host._exp_verified():
        assert after["compiled"] == before["compiled"] and after["loaded"] == before["loaded"]


@pytest.mark.parametrize("quiet", ["context variable", "np.errstate"])
def test_host_programs_warn_nothing_and_leave_numpy_error_state(quiet, monkeypatch):
    # overflow, 0/0 and 1/0 raise nothing in XLA; the host ignores NumPy's warnings for
    # the call only, by its context variable or (another NumPy) np.errstate
    if quiet == "np.errstate":
        monkeypatch.setattr(host, "_QUIET", None)
    prog = host.translate(lambda a, b: (a * a) / b, (jax.ShapeDtypeStruct((4,), np.float32),) * 2)
    a = np.float32([3e38, 0.0, 1.0, 2.0])
    b = np.float32([1.0, 0.0, 0.0, 4.0])
    before = np.geterr()
    with np.errstate(all="raise"):
        (got,) = prog(a, b)
        assert np.geterr()["over"] == "raise"
    assert np.geterr() == before
    want = jax.jit(lambda a, b: (a * a) / b)(a, b)
    np.testing.assert_array_equal(got, np.asarray(want))
