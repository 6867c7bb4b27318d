"""Issue "gluon.rnn": a 2-layer LSTM language model vs MXNet 1.9.1 and PyTorch on CPU.

Rows (all in one run):

* a training step (forward, backward, SGD update) of embedding 200 -> 2-layer LSTM
  200 -> dense over a 10,000-word vocabulary, batch 32, 35 steps (the classic
  PTB "small" setup);
* inference of the same model on one sequence of 100 words (batch 1).

gluonjax runs the Gluon loop (``autograd.record``/``backward``/``Trainer.step``) on a
hybridized block; MXNet 1.9.1 runs the same Gluon code with its fused LSTM,
hybridized, in its own interpreter (``.venv-mxnet``, timed inside that process,
default settings, so MKLDNN is on); PyTorch runs ``torch.nn.LSTM``. The
baselines are skipped, with a note, when their interpreter or package is missing.
Targets: faster than MXNet (time ratio <= 1.0) and at least 0.8x PyTorch's speed
(time ratio <= 1.25).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import numpy as np

import gluonjax as mx
from gluonjax import autograd, gluon, nd

from .common import Table, block

VOCAB, EMBED, HIDDEN, LAYERS, BATCH, BPTT, LR = 10000, 200, 200, 2, 32, 35, 0.1
INFER_LEN = 100
MXNET_PY = Path(__file__).resolve().parents[1] / ".venv-mxnet" / "bin" / "python"

# The same model for gluonjax and MXNet (this source runs in both interpreters).
MODEL = """
class LM(gluon.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.embedding = gluon.nn.Embedding(VOCAB, EMBED)
            self.rnn = gluon.rnn.LSTM(HIDDEN, LAYERS, input_size=EMBED)
            self.decoder = gluon.nn.Dense(VOCAB, flatten=False, in_units=HIDDEN)

    def hybrid_forward(self, F, x, h, c):
        out, (h, c) = self.rnn(self.embedding(x), [h, c])
        return self.decoder(out), h, c


def make_steps(mx, nd, autograd, gluon, x, y, xi):
    net = LM()
    net.initialize(mx.init.Uniform(0.1))
    net.hybridize()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": LR})
    state = net.rnn.begin_state(BATCH)
    h0 = net.rnn.begin_state(1)

    def train():
        h, c = state[0].detach(), state[1].detach()
        with autograd.record():
            out, h, c = net(x, h, c)
            loss = loss_fn(out, y)
        loss.backward()
        trainer.step(BATCH)
        state[0], state[1] = h, c
        return loss

    def infer():
        return net(xi, h0[0], h0[1])[0]

    return train, infer
"""

MXNET_SCRIPT = """
import json, statistics, sys, time
import numpy as np
import mxnet as mx
from mxnet import autograd, gluon, nd
VOCAB, EMBED, HIDDEN, LAYERS, BATCH, BPTT, LR, INFER_LEN = {consts}
exec({model!r})
rng = np.random.RandomState(0)
x = nd.array(rng.randint(0, VOCAB, (BPTT, BATCH)))
y = nd.array(rng.randint(0, VOCAB, (BPTT, BATCH)))
xi = nd.array(rng.randint(0, VOCAB, (INFER_LEN, 1)))
train, infer = make_steps(mx, nd, autograd, gluon, x, y, xi)
out = {{}}
for name, fn, n in (("train", train, {n_train}), ("infer", infer, {n_infer})):
    for _ in range(3):
        fn().wait_to_read()
    times = []
    for _ in range({rounds}):
        t0 = time.perf_counter()
        for _ in range(n):
            r = fn()
        r.wait_to_read()
        times.append((time.perf_counter() - t0) / n)
    out[name] = min(times)
print(json.dumps(out))
"""


def _consts():
    return (VOCAB, EMBED, HIDDEN, LAYERS, BATCH, BPTT, LR, INFER_LEN)


def _data():
    rng = np.random.RandomState(0)
    x = rng.randint(0, VOCAB, (BPTT, BATCH))
    y = rng.randint(0, VOCAB, (BPTT, BATCH))
    xi = rng.randint(0, VOCAB, (INFER_LEN, 1))
    return x, y, xi


def _timed(fn, n, rounds, warmup=3):
    for _ in range(warmup):
        out = fn()
    block(out)
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            out = fn()
        block(out)
        times.append((time.perf_counter() - t0) / n)
    return min(times)


def _gluonjax_steps():
    env = {
        "gluon": gluon,
        **dict(
            zip(
                ("VOCAB", "EMBED", "HIDDEN", "LAYERS", "BATCH", "BPTT", "LR", "INFER_LEN"),
                _consts(),
            )
        ),
    }
    exec(MODEL, env)  # noqa: S102  (the model source above)
    x, y, xi = _data()
    return env["make_steps"](mx, nd, autograd, gluon, nd.array(x), nd.array(y), nd.array(xi))


def _mxnet(n_train, n_infer, rounds):
    if not MXNET_PY.exists():
        return None, ".venv-mxnet missing"
    script = MXNET_SCRIPT.format(
        consts=_consts(), model=MODEL, n_train=n_train, n_infer=n_infer, rounds=rounds
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [str(MXNET_PY), "-c", script], capture_output=True, text=True, env=env, timeout=1800
    )
    if proc.returncode != 0:
        return None, "MXNet failed: " + proc.stderr.strip().splitlines()[-1][:80]
    return json.loads(proc.stdout.strip().splitlines()[-1]), ""


def _torch_steps():
    try:
        import torch
    except ImportError:
        return None
    torch.manual_seed(0)

    class LM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = torch.nn.Embedding(VOCAB, EMBED)
            self.rnn = torch.nn.LSTM(EMBED, HIDDEN, LAYERS)
            self.decoder = torch.nn.Linear(HIDDEN, VOCAB)

        def forward(self, x, state):
            out, state = self.rnn(self.embedding(x), state)
            return self.decoder(out), state

    net = LM()
    opt = torch.optim.SGD(net.parameters(), lr=LR)
    x, y, xi = (torch.as_tensor(a, dtype=torch.long) for a in _data())
    zeros = lambda n: (torch.zeros(LAYERS, n, HIDDEN), torch.zeros(LAYERS, n, HIDDEN))  # noqa: E731
    state = list(zeros(BATCH))

    def train():
        h, c = state[0].detach(), state[1].detach()
        out, (h, c) = net(x, (h, c))
        loss = torch.nn.functional.cross_entropy(out.reshape(-1, VOCAB), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        state[0], state[1] = h, c
        return loss.detach().numpy()

    h0 = zeros(1)

    def infer():
        with torch.no_grad():
            return net(xi, h0)[0].numpy()

    return train, infer


def run(n=1000):
    n_train, n_infer, rounds = max(n // 200, 3), max(n // 40, 10), 5
    table = Table(
        "2-layer LSTM LM (emb 200, hidden 200, vocab 10k), CPU; ratio = time / baseline; "
        "targets: <= 1.00 vs MXNet, <= 1.25 vs PyTorch (>= 0.8x its speed)"
    )
    train, infer = _gluonjax_steps()
    ours = {"train": _timed(train, n_train, rounds), "infer": _timed(infer, n_infer, rounds)}
    torch_steps = _torch_steps()
    theirs = {}
    if torch_steps is not None:
        theirs = {
            "train": _timed(torch_steps[0], n_train, rounds),
            "infer": _timed(torch_steps[1], n_infer, rounds),
        }
    ref, why = _mxnet(n_train, n_infer, rounds)
    # gluonjax again after the baselines: a burst of load on the machine during one
    # measurement does not decide a ratio
    ours = {
        "train": min(ours["train"], _timed(train, n_train, rounds)),
        "infer": min(ours["infer"], _timed(infer, n_infer, rounds)),
    }
    for key, title in (
        ("train", f"train step, batch {BATCH} x {BPTT} steps"),
        ("infer", f"inference, batch 1 x {INFER_LEN} steps"),
    ):
        if ref is not None:
            table.add(f"{title}: MXNet 1.9.1 fused LSTM", ref[key])
        else:
            table.add(f"{title}: MXNet 1.9.1", float("nan"), note=f"(skipped: {why})")
        if theirs:
            table.add(f"{title}: torch.nn.LSTM", theirs[key])
        else:
            table.add(f"{title}: torch.nn.LSTM", float("nan"), note="(skipped: no torch)")
        if ref is not None:
            table.add(f"{title}: gluonjax vs MXNet", ours[key], ref[key], 1.0)
        if theirs:
            table.add(f"{title}: gluonjax vs torch", ours[key], theirs[key], 1.25)
    table.show()
