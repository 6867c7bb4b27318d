"""Record real MXNet 1.9.1 ``mx.viz`` output for ``tests/test_viz.py``.

Run with the reference interpreter::

    .venv-mxnet/bin/python tools/make_viz_fixtures.py [--out FILE]

Each case is Python source that builds ``net`` with ``mx.sym`` (it runs the
same under ``import gluonjax as mx``; both run it inside a fresh
``mx.name.NameManager()``), plus lists of ``plot_network`` and
``print_summary`` keyword arguments. Output (default ``tests/fixtures/viz.json``):
a list of ``{"id", "code", "plots": [{"kwargs", "source"}], "summaries":
[{"kwargs", "text"}]}``; ``kwargs`` values are JSON (shapes as lists).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "viz.json"

MLP = """
net = mx.sym.Variable('data')
net = mx.sym.FullyConnected(data=net, name='fc1', num_hidden=128)
net = mx.sym.Activation(data=net, name='relu1', act_type="relu")
net = mx.sym.FullyConnected(data=net, name='fc2', num_hidden=10)
net = mx.sym.SoftmaxOutput(data=net, name='out')
"""

CONVNET = """
d = mx.sym.Variable('data')
c = mx.sym.Convolution(d, kernel=(3, 3), num_filter=8, name='c1')
c2 = mx.sym.Convolution(c, kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=8,
                        name='c2', no_bias=True)
bn = mx.sym.BatchNorm(c2, name='bn')
lr = mx.sym.LeakyReLU(bn, act_type='elu', name='lr')
p = mx.sym.Pooling(lr, kernel=(2, 2), pool_type='max', name='p')
p2 = mx.sym.Pooling(lr, kernel=(2, 2), stride=(1, 1), pool_type='avg', name='p2')
gp = mx.sym.Pooling(lr, kernel=(1, 1), global_pool=True, pool_type='avg', name='gp')
cat = mx.sym.Concat(p, p2, name='cat')
sl = mx.sym.SliceChannel(cat, num_outputs=2, name='sl')
f = mx.sym.Flatten(sl[0], name='fl')
r = mx.sym.Reshape(sl[1], shape=(0, -1), name='rs')
s = mx.sym.softmax(f, name='sm')
s2 = mx.sym.Softmax(r, name='sm2')
dr = mx.sym.Dropout(f, name='dr')
ad = f + r
e = mx.sym.Embedding(mx.sym.Variable('idx'), input_dim=5, output_dim=3, name='emb')
net = mx.sym.Group([s, s2, dr, ad, gp, e])
"""

# the seed tutorial's ConvFactory / InceptionFactoryA
INCEPTION = """
def ConvFactory(data, num_filter, kernel, stride=(1, 1), pad=(0, 0), name=None, suffix=''):
    conv = mx.sym.Convolution(data=data, num_filter=num_filter, kernel=kernel, stride=stride,
                              pad=pad, name='conv_%s%s' % (name, suffix))
    bn = mx.sym.BatchNorm(data=conv, name='bn_%s%s' % (name, suffix))
    act = mx.sym.Activation(data=bn, act_type='relu', name='relu_%s%s' % (name, suffix))
    return act

def InceptionFactoryA(data, num_1x1, num_3x3red, num_3x3, num_d3x3red, num_d3x3, pool, proj,
                      name):
    c1x1 = ConvFactory(data=data, num_filter=num_1x1, kernel=(1, 1), name=('%s_1x1' % name))
    c3x3r = ConvFactory(data=data, num_filter=num_3x3red, kernel=(1, 1),
                        name=('%s_3x3' % name), suffix='_reduce')
    c3x3 = ConvFactory(data=c3x3r, num_filter=num_3x3, kernel=(3, 3), pad=(1, 1),
                       name=('%s_3x3' % name))
    cd3x3r = ConvFactory(data=data, num_filter=num_d3x3red, kernel=(1, 1),
                         name=('%s_double_3x3' % name), suffix='_reduce')
    cd3x3 = ConvFactory(data=cd3x3r, num_filter=num_d3x3, kernel=(3, 3), pad=(1, 1),
                        name=('%s_double_3x3_0' % name))
    cd3x3 = ConvFactory(data=cd3x3, num_filter=num_d3x3, kernel=(3, 3), pad=(1, 1),
                        name=('%s_double_3x3_1' % name))
    pooling = mx.sym.Pooling(data=data, kernel=(3, 3), stride=(1, 1), pad=(1, 1),
                             pool_type=pool, name=('%s_pool_%s_pool' % (pool, name)))
    cproj = ConvFactory(data=pooling, num_filter=proj, kernel=(1, 1), name=('%s_proj' % name))
    concat = mx.sym.Concat(*[c1x1, c3x3, cd3x3, cproj], name='ch_concat_%s_chconcat' % name)
    return concat

prev = mx.sym.Variable(name="Previous Output")
conv_comp = ConvFactory(data=prev, num_filter=64, kernel=(7, 7), stride=(2, 2))
net = InceptionFactoryA(prev, 64, 64, 64, 64, 96, "avg", 32, name="in3a")
"""

BASIC = """
a = mx.sym.Variable('a')
b = mx.sym.Variable('b')
d = a * b
e = mx.sym.dot(a, b)
f = mx.sym.reshape(d + e, shape=(1, 4))
net = mx.sym.broadcast_to(f, shape=(2, 4))
"""

WEIGHT_NAMES = """
names = ['myweight', 'x_weight', 'x_bias', 'x_gamma', 'x_beta', 'x_moving_mean', 'x_moving_var',
         'x_running_mean', 'x_running_var', 'weight', 'x_weights', 'x_label', 'x_Weight']
net = mx.sym.Group([mx.sym.var(n) * 2 for n in names])
"""

HEADS = """
a = mx.sym.var('a'); b = mx.sym.var('b'); c = mx.sym.var('c')
net = mx.sym.FullyConnected(a + b + c, num_hidden=3, name='fc')
"""

GROUP_HEADS = """
a = mx.sym.var('a'); b = mx.sym.var('b'); c = mx.sym.var('c')
sl = mx.sym.SliceChannel(a + b, num_outputs=3, name='sl')
net = mx.sym.Group([sl[1] * c, sl[1]])
"""

CONV_PARAMS = """
x = mx.sym.var('Previous Output')
g = mx.sym.Convolution(x, kernel=(3, 3), num_filter=4, num_group=2, stride='(2, 2)', name='cg')
nb = mx.sym.Convolution(x, kernel=(3, 3), num_filter=4, num_group=2, no_bias=1, name='nb1')
nt = mx.sym.Convolution(x, kernel=(3, 3), num_filter=4, no_bias=True, name='nbt')
f1 = mx.sym.FullyConnected(x, num_hidden=4, no_bias=True, name='f1')
f2 = mx.sym.FullyConnected(x, num_hidden=4, no_bias='True', name='f2')
f3 = mx.sym.FullyConnected(x, num_hidden=4, flatten=False, name='f3')
gp = mx.sym.Pooling(x, global_pool=True, pool_type='max', name='gp')
p1 = mx.sym.Pooling(mx.sym.Reshape(x, shape=(0, 0, -1)), kernel=(3,), pool_type='sum',
                    stride=3, name='p1d')
t = mx.sym.Activation(x, act_type='tanh', name='t')
net = mx.sym.Group([g, nb, nt, f1, f2, f3, gp, p1, t])
"""

GLUON = """
nn = mx.gluon.nn
blk = nn.HybridSequential()
blk.add(nn.Conv2D(4, 3, padding=1), nn.BatchNorm(), nn.Activation('relu'), nn.MaxPool2D(),
        nn.Conv2D(4, 3, strides=2, use_bias=False), nn.Flatten(), nn.Dense(8, activation='relu'),
        nn.Dropout(0.5), nn.Dense(3))
net = blk(mx.sym.var('data'))
"""

CASES = [
    ("mlp", MLP, [
        {"shape": {"data": [100, 200]}, "node_attrs": {"shape": "oval", "fixedsize": "false"}},
        {},
        {"shape": {"data": [100, 200]}, "hide_weights": False},
    ], [{"shape": {"data": [100, 200]}}, {}]),
    ("convnet", CONVNET, [
        {"shape": {"data": [2, 3, 8, 8], "idx": [2, 4]}},
        {"shape": {"data": [2, 3, 8, 8], "idx": [2, 4]},
         "dtype": {"data": "float32", "idx": "int32"}},
        {"dtype": {"data": "float16", "idx": "int32"}},
        {"node_attrs": {"shape": "box", "color": "red"}, "title": "t", "save_format": "png"},
    ], [{"shape": {"data": [2, 3, 8, 8], "idx": [2, 4]}}, {}]),
    ("inception", INCEPTION, [
        {"shape": {"Previous Output": [128, 3, 28, 28]},
         "node_attrs": {"shape": "oval", "fixedsize": "false"}},
        {"hide_weights": False},
    ], [{"shape": {"Previous Output": [128, 3, 28, 28]}},
        {"shape": {"Previous Output": [128, 3, 28, 28]}, "line_length": 100,
         "positions": [30, 60, 72, 100]}]),
    ("basic", BASIC, [
        {"node_attrs": {"shape": "oval", "fixedsize": "false"}},
        {"shape": {"a": [2, 2], "b": [2, 2]}},
    ], [{}, {"shape": {"a": [2, 2], "b": [2, 2]}}]),
    ("weight_names", WEIGHT_NAMES, [{}, {"hide_weights": False}], [{}]),
    ("heads", HEADS, [{"shape": {"a": [2, 5], "b": [2, 5], "c": [2, 5]}}],
     [{"shape": {"a": [2, 5], "b": [2, 5], "c": [2, 5]}, "line_length": 80}]),
    ("group_heads", GROUP_HEADS, [{"shape": {"a": [2, 6], "b": [2, 6], "c": [2, 2]}}],
     [{"shape": {"a": [2, 6], "b": [2, 6], "c": [2, 2]}, "line_length": 100,
       "positions": [0.3, 0.6, 0.7, 1.0]}]),
    ("conv_params", CONV_PARAMS, [{}, {"shape": {"Previous Output": [1, 4, 6, 6]}}],
     [{"shape": {"Previous Output": [1, 4, 6, 6]}}, {}]),
    ("gluon", GLUON, [{"shape": {"data": [2, 3, 8, 8]}}, {"hide_weights": False}],
     [{"shape": {"data": [2, 3, 8, 8]}}]),
]  # fmt: skip


def as_call_kwargs(kwargs):
    """JSON kwargs -> call kwargs (shape lists become tuples)."""
    out = dict(kwargs)
    if "shape" in out:
        out["shape"] = {k: tuple(v) for k, v in out["shape"].items()}
    return out


def main():
    import mxnet as mx

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    args = parser.parse_args()
    records = []
    for cid, code, plots, summaries in CASES:
        env = {"mx": mx}
        with mx.name.NameManager():  # fresh auto-name counters per case
            exec(code, env)  # noqa: S102
        net = env["net"]
        rec = {"id": cid, "code": code, "plots": [], "summaries": []}
        for kw in plots:
            source = mx.viz.plot_network(net, **as_call_kwargs(kw)).source
            rec["plots"].append({"kwargs": kw, "source": source})
        for kw in summaries:
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                mx.viz.print_summary(net, **as_call_kwargs(kw))
            rec["summaries"].append({"kwargs": kw, "text": buf.getvalue()})
        records.append(rec)
    Path(args.out).write_text(json.dumps(records, indent=1) + "\n")
    print(f"wrote {len(records)} cases to {args.out}")


if __name__ == "__main__":
    main()
