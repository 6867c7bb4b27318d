"""The fused ``RNN`` op and ``_rnn_param_concat`` against a NumPy reference.

The reference unpacks MXNet's parameter vector and runs the cuDNN formulas step
by step (the layers themselves are checked against MXNet in tests/gluon).
"""

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import nd
from gluonjax._ops.defs.rnn_scan import layer_shapes, param_size
from gluonjax.base import MXNetError

RNG = np.random.default_rng(11)


def _sig(x):
    return 1 / (1 + np.exp(-x))


def np_rnn(mode, x, params, states, layers, hidden, bi, proj=None, lengths=None, clip=None):
    """A step-by-step NumPy RNN over time-major ``x``: (output, final states)."""
    shapes = layer_shapes(mode, layers, x.shape[2], hidden, bi, proj)
    w, off = {}, 0
    for name, shape in shapes:
        n = int(np.prod(shape))
        w[name] = params[off : off + n].reshape(shape)
        off += n
    t_len, batch = x.shape[:2]
    lengths = np.full(batch, t_len) if lengths is None else np.asarray(lengths, int)
    dirs = ("l", "r") if bi else ("l",)
    finals = [np.zeros_like(s) for s in states]
    inp = x
    for layer in range(layers):
        outs = []
        for k, d in enumerate(dirs):
            p = {n.split("_", 1)[1]: v for n, v in w.items() if n.startswith(f"{d}{layer}_")}
            idx = layer * len(dirs) + k
            carry = [s[idx].copy() for s in states]
            y = np.zeros((t_len, batch, (proj or hidden)))
            for b in range(batch):
                steps = range(lengths[b]) if d == "l" else reversed(range(lengths[b]))
                st = [c[b] for c in carry]
                for t in steps:
                    xi = p["i2h_weight"] @ inp[t, b] + p["i2h_bias"]
                    hh = p["h2h_weight"] @ st[0] + p["h2h_bias"]
                    if mode == "lstm":
                        i, f, g, o = np.split(xi + hh, 4)
                        c = _sig(f) * st[1] + _sig(i) * np.tanh(g)
                        if clip is not None:
                            c = np.clip(c, *clip)
                        h = _sig(o) * np.tanh(c)
                        if proj:
                            h = p["h2r_weight"] @ h
                        st = [h, c]
                    elif mode == "gru":
                        xr, xz, xn = np.split(xi, 3)
                        hr, hz, hn = np.split(hh, 3)
                        r, z = _sig(xr + hr), _sig(xz + hz)
                        h = (1 - z) * np.tanh(xn + r * hn) + z * st[0]
                        st = [h]
                    else:
                        act = np.tanh if mode == "rnn_tanh" else (lambda v: np.maximum(v, 0))
                        st = [act(xi + hh)]
                    y[t, b] = st[0]
                for f, s in zip(finals, st):
                    f[idx, b] = s
            outs.append(y)
        inp = np.concatenate(outs, axis=-1)
    return inp, finals


CASES = [
    ("rnn_relu", 1, False, None, None, None),
    ("rnn_tanh", 2, True, None, [3, 1], None),
    ("gru", 2, True, None, [2, 3], None),
    ("lstm", 2, False, None, None, (-0.2, 0.3)),
    ("lstm", 1, True, 2, [3, 2], None),
]


@pytest.mark.parametrize("mode,layers,bi,proj,lengths,clip", CASES)
def test_rnn_op_matches_numpy(mode, layers, bi, proj, lengths, clip):
    t_len, batch, c_in, hidden = 3, 2, 2, 3
    d = 2 if bi else 1
    x = RNG.standard_normal((t_len, batch, c_in)).astype(np.float32)
    n = param_size(mode, layers, c_in, hidden, bi, proj)
    params = RNG.uniform(-0.8, 0.8, n).astype(np.float32)
    states = [RNG.standard_normal((layers * d, batch, proj or hidden)).astype(np.float32)]
    if mode == "lstm":
        states.append(RNG.standard_normal((layers * d, batch, hidden)).astype(np.float32))
    kw = dict(state_size=hidden, num_layers=layers, bidirectional=bi, mode=mode)
    kw.update(state_outputs=True, projection_size=proj)
    if clip is not None:
        kw.update(lstm_state_clip_min=clip[0], lstm_state_clip_max=clip[1])
    args = [nd.array(x), nd.array(params), *[nd.array(s) for s in states]]
    if lengths is not None:
        kw["use_sequence_length"] = True
        args.append(nd.array(lengths))
    got = nd.RNN(*args, **kw)
    want, finals = np_rnn(mode, x, params, states, layers, hidden, bi, proj, lengths, clip)
    np.testing.assert_allclose(got[0].asnumpy(), want, rtol=1e-4, atol=1e-5)
    for g, f in zip(got[1:], finals):
        np.testing.assert_allclose(g.asnumpy(), f, rtol=1e-4, atol=1e-5)


def test_param_size_is_mxnets_formula():
    # GetRnnParamSize: (I + H + 2) * G*H*D for layer 0, (H*D + H + 2) * G*H*D after
    assert param_size("lstm", 2, 3, 4, True) == (3 + 4 + 2) * 32 + (8 + 4 + 2) * 32
    assert param_size("gru", 1, 5, 2, False) == (5 + 2 + 2) * 6
    # with a projection P: (I + P + 2) * G*H*D + (P*D + P + 2) * G*H*D + P*H*L*D
    assert param_size("lstm", 2, 3, 4, True, 2) == (3 + 2 + 2) * 32 + (4 + 2 + 2) * 32 + 2 * 4 * 4


def test_symbol_rnn_infers_shapes_and_names_outputs():
    data = mx.sym.var("data")
    s = mx.sym.RNN(
        data,
        mode="lstm",
        state_size=4,
        num_layers=2,
        bidirectional=True,
        state_outputs=True,
        name="rnn0",
    )
    assert s.list_arguments() == ["data", "rnn0_parameters", "rnn0_state", "rnn0_state_cell"]
    assert s.list_outputs() == ["rnn0_output", "rnn0_state_output", "rnn0_statecell_output"]
    args, outs, _ = s.infer_shape(data=(5, 2, 3))
    assert args == [(5, 2, 3), (param_size("lstm", 2, 3, 4, True),), (4, 2, 4), (4, 2, 4)]
    assert outs == [(5, 2, 8), (4, 2, 4), (4, 2, 4)]
    one = mx.sym.RNN(data, mode="gru", state_size=4, num_layers=1, name="g")
    assert one.list_outputs() == ["g_output"]


def test_param_concat_packs_in_order():
    a, b = nd.array([[1, 2], [3, 4]]), nd.array([5, 6])
    out = nd._rnn_param_concat(a.reshape(-1), b, dim=0)
    np.testing.assert_array_equal(out.asnumpy(), [1, 2, 3, 4, 5, 6])


def test_invalid_attributes_raise():
    x, h = nd.ones((2, 1, 2)), nd.zeros((1, 1, 3))
    w = nd.ones((param_size("gru", 1, 2, 3, False),))
    with pytest.raises(MXNetError, match="projection_size"):
        nd.RNN(x, w, h, mode="gru", state_size=3, num_layers=1, projection_size=2)
    with pytest.raises(MXNetError, match="together"):
        nd.RNN(x, w, h, h, mode="lstm", state_size=3, num_layers=1, lstm_state_clip_min=0.0)
    with pytest.raises(MXNetError, match="parameters"):
        nd.RNN(x, nd.ones((3,)), h, mode="gru", state_size=3, num_layers=1)
    with pytest.raises(MXNetError, match="state has shape"):
        nd.RNN(x, w, nd.zeros((2, 1, 3)), mode="gru", state_size=3, num_layers=1)


def test_clip_nan_stops_nan_states():
    x = np.full((2, 1, 1), np.nan, np.float32)
    w = nd.ones((param_size("lstm", 1, 1, 1, False),))
    h, c = nd.zeros((1, 1, 1)), nd.zeros((1, 1, 1))
    kw = dict(mode="lstm", state_size=1, num_layers=1, state_outputs=True)
    kw.update(lstm_state_clip_min=-1.0, lstm_state_clip_max=1.0)
    plain = nd.RNN(nd.array(x), w, h, c, **kw)
    assert np.isnan(plain[2].asnumpy()).all()
    stopped = nd.RNN(nd.array(x), w, h, c, lstm_state_clip_nan=True, **kw)
    assert stopped[2].asnumpy().item() == -1.0
