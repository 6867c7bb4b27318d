"""BucketingModule with mx.rnn LSTM cells, against MXNet 1.9.1 running the same script."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mxnet_ref import needs_mxnet, run_mxnet  # noqa: E402

# Builds an LSTM language model per bucket (zeros begin states whose batch size comes
# from shape inference), sets fixed parameters, trains two steps on two buckets and
# records outputs and parameters.
SCRIPT = """
import numpy as np
V, E, H, B = 7, 4, 3, 2

def sym_gen(seq_len):
    data = mx.sym.Variable('data')
    label = mx.sym.Variable('softmax_label')
    embed = mx.sym.Embedding(data=data, input_dim=V, output_dim=E, name='embed')
    stack = mx.rnn.SequentialRNNCell()
    for i in range(2):
        stack.add(mx.rnn.LSTMCell(num_hidden=H, prefix='lstm_l%d_' % i))
    outputs, states = stack.unroll(seq_len, inputs=embed, merge_outputs=True)
    pred = mx.sym.Reshape(outputs, shape=(-1, H))
    pred = mx.sym.FullyConnected(data=pred, num_hidden=V, name='pred')
    label = mx.sym.Reshape(label, shape=(-1,))
    return mx.sym.SoftmaxOutput(data=pred, label=label, name='softmax'), ('data',), \\
        ('softmax_label',)

mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=4)
mod.bind([('data', (B, 4))], [('softmax_label', (B, 4))])
rng = np.random.RandomState(3)
shapes = dict(zip(mod.symbol.list_arguments(),
                  mod.symbol.infer_shape(data=(B, 4), softmax_label=(B, 4))[0]))
params = {k: mx.nd.array(rng.uniform(-0.5, 0.5, s)) for k, s in sorted(shapes.items())
          if k not in ('data', 'softmax_label')}
mod.init_params(arg_params=params)
mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.5})
RESULT = {}
for key in (4, 2, 4):
    x = mx.nd.array(rng.randint(0, V, (B, key)))
    y = mx.nd.array(rng.randint(0, V, (B, key)))
    batch = mx.io.DataBatch([x], [y], bucket_key=key,
                            provide_data=[mx.io.DataDesc('data', (B, key))],
                            provide_label=[mx.io.DataDesc('softmax_label', (B, key))])
    mod.forward_backward(batch)
    RESULT['out%d_%d' % (key, len(RESULT))] = mod.get_outputs()[0].asnumpy().tolist()
    mod.update()
for k, v in sorted(mod.get_params()[0].items()):
    RESULT[k] = v.asnumpy().tolist()
"""


def _run():
    scope = {"mx": mx}
    exec(SCRIPT, scope)  # noqa: S102  (the test's own script, shared with MXNet)
    return scope["RESULT"]


def test_buckets_share_parameters_and_train():
    res = _run()
    assert [k for k in res if k.startswith("out")] == ["out4_0", "out2_1", "out4_2"]
    assert np.asarray(res["out2_1"]).shape == (4, 7)
    probs = np.asarray(res["out4_2"])
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)
    assert "lstm_l1_h2h_weight" in res and "embed_weight" in res


@needs_mxnet
def test_bucketing_lstm_matches_mxnet():
    out = run_mxnet("import mxnet as mx\n" + SCRIPT + "\nimport json\nprint(json.dumps(RESULT))")
    import json

    ref = json.loads(out.strip().splitlines()[-1])
    mine = _run()
    assert set(mine) == set(ref)
    for k in ref:
        np.testing.assert_allclose(
            np.asarray(mine[k]), np.asarray(ref[k]), rtol=1e-4, atol=1e-6, err_msg=k
        )


def test_checkpoint_round_trip(tmp_path):
    scope = {"mx": mx}
    exec(SCRIPT, scope)  # noqa: S102
    mod, sym_gen = scope["mod"], scope["sym_gen"]
    mod.save_checkpoint(str(tmp_path / "b"), 1)
    back = mx.mod.BucketingModule.load(
        str(tmp_path / "b"), 1, sym_gen=sym_gen, default_bucket_key=4
    )
    back.bind([("data", (2, 4))], [("softmax_label", (2, 4))])
    for k, v in mod.get_params()[0].items():
        np.testing.assert_array_equal(back.get_params()[0][k].asnumpy(), v.asnumpy())
    with pytest.raises(mx.base.MXNetError, match="default_bucket_key"):
        mx.mod.BucketingModule.load(str(tmp_path / "b"), 1, sym_gen=sym_gen)


def test_bucket_sentence_iter_pads_buckets_and_shifts_labels():
    sents = [[1, 2, 3], [4, 5], [6, 7, 8, 9], [1, 2], [3, 4, 5], [9, 8, 7, 6, 5, 4]]
    it = mx.rnn.BucketSentenceIter(sents, batch_size=2, buckets=[2, 3, 4], invalid_label=0)
    assert it.default_bucket_key == 4 and it.buckets == [2, 3, 4]
    assert it.provide_data[0].shape == (2, 4)
    batches = list(it)
    assert sorted(b.bucket_key for b in batches) == [2, 3]  # the 4-bucket has one sentence
    for b in batches:
        data, label = b.data[0].asnumpy(), b.label[0].asnumpy()
        assert data.shape == (2, b.bucket_key) == b.provide_data[0].shape
        np.testing.assert_array_equal(label[:, :-1], data[:, 1:])
        np.testing.assert_array_equal(label[:, -1], 0)
    rows = sorted(tuple(r) for b in batches if b.bucket_key == 3 for r in b.data[0].asnumpy())
    assert rows == [(1, 2, 3), (3, 4, 5)]
