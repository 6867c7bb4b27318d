"""A word-level LSTM language model trains on a small text and its perplexity falls.

The model, loop and truncated back-propagation through time are the ones of
MXNet's word language model example (gluonnlp's ``StandardRNN``): embedding,
fused LSTM, dense decoder, hidden states carried (detached) between batches.
"""

import math
from pathlib import Path

import numpy as np

import gluonjax as mx
from gluonjax import autograd, gluon, nd

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "rnn" / "corpus.txt"


class LanguageModel(gluon.HybridBlock):
    def __init__(self, vocab, embed=16, hidden=32, layers=1, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.embedding = gluon.nn.Embedding(vocab, embed)
            self.rnn = gluon.rnn.LSTM(hidden, layers, dropout=0.1, input_size=embed)
            self.decoder = gluon.nn.Dense(vocab, flatten=False, in_units=hidden)

    def hybrid_forward(self, F, x, h, c):
        out, (h, c) = self.rnn(self.embedding(x), [h, c])
        return self.decoder(out), h, c


def _batches(ids, batch, bptt):
    n = len(ids) // batch
    data = np.asarray(ids[: n * batch], np.float32).reshape(batch, n).T  # (T, N)
    return [(data[i : i + bptt], data[i + 1 : i + 1 + bptt]) for i in range(0, n - 1 - bptt, bptt)]


def test_lstm_language_model_perplexity_falls():
    words = CORPUS.read_text().split()
    vocab = {w: i for i, w in enumerate(sorted(set(words)))}
    ids = [vocab[w] for w in words]
    mx.random.seed(7)
    model = LanguageModel(len(vocab))
    model.initialize(mx.init.Xavier())
    model.hybridize()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(model.collect_params(), "adam", {"learning_rate": 0.02})
    batches = _batches(ids, batch=4, bptt=10)

    def perplexity():
        h, c = model.rnn.begin_state(4)
        total, count = 0.0, 0
        for x, y in batches:
            out, h, c = model(nd.array(x), h, c)
            # the loss averages over every axis but the first: the mean is per word
            total += float(loss_fn(out, nd.array(y)).mean().asscalar()) * y.size
            count += y.size
        return math.exp(total / count)

    before = perplexity()
    for _ in range(16):  # 16 epochs of 13 batches: under a second once compiled
        h, c = model.rnn.begin_state(4)
        for x, y in batches:
            h, c = h.detach(), c.detach()
            with autograd.record():
                out, h, c = model(nd.array(x), h, c)
                loss = loss_fn(out, nd.array(y))
            loss.backward()
            trainer.step(x.size)
    after = perplexity()
    assert before > 0.8 * len(vocab)  # an untrained model: close to uniform guessing
    assert after < before / 20, (before, after)
