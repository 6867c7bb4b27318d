"""``python -m gluonjax.demo`` (``make demo``): train, hybridize, export, reload, check.

Trains a LeNet on the 8x8 digits shipped in :mod:`gluonjax.data` (about 20 s on
two CPU cores), prints eager vs hybridized speed measured in the same run and the
test accuracy, exports the model (symbol JSON + params + StableHLO artifact),
loads it back with ``gluon.SymbolBlock.imports`` and with :mod:`gluonjax.deploy`,
and exits with status 1 if a reloaded model disagrees with the trained one.

Options: ``--epochs N``, ``--batch-size N``, ``--out DIR`` (default ``./demo_out``),
``--no-hybridize`` (train op by op), ``--quiet`` (no progress bar, no speed runs).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from ._progress import ProgressBar

TOLERANCE = 1e-4  # max abs difference allowed between trained and reloaded outputs


def make_lenet():
    """The LeNet of the Gluon tutorials, as a ``HybridBlock`` with ``hybrid_forward``."""
    from gluonjax.gluon import nn

    class LeNet(nn.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.conv1 = nn.Conv2D(6, kernel_size=5, activation="relu")
                self.pool1 = nn.MaxPool2D(pool_size=2)
                self.conv2 = nn.Conv2D(16, kernel_size=5, activation="relu")
                self.pool2 = nn.MaxPool2D(pool_size=2)
                self.fc1 = nn.Dense(120, activation="relu")
                self.fc2 = nn.Dense(84, activation="relu")
                self.fc3 = nn.Dense(10)

        def hybrid_forward(self, F, x):
            x = self.pool2(self.conv2(self.pool1(self.conv1(x))))
            x = F.flatten(x)
            return self.fc3(self.fc2(self.fc1(x)))

    return LeNet()


def _train_step(net, trainer, loss_fn, xb, yb):
    from gluonjax import autograd, nd

    xb, yb = nd.array(xb), nd.array(yb)
    with autograd.record():
        out = net(xb)
        loss = loss_fn(out, yb)
    loss.backward()
    trainer.step(xb.shape[0])
    return loss, out


def measure_speed(x, y, batch_size, steps=8, calls=50):
    """Images/s of training steps and of batch-1 predictions, eager then hybridized,
    on a scratch LeNet (the model being trained is not touched)."""
    import gluonjax as mx
    from gluonjax import gluon, nd

    net = make_lenet()
    net.initialize(mx.init.Xavier())
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    one = nd.array(x[:1])
    result = {}
    for mode in ("eager", "hybridized"):
        net.hybridize(mode == "hybridized")
        for _ in range(3):  # the first steps compile (forward, then the fused step): untimed
            _train_step(net, trainer, loss_fn, x[:batch_size], y[:batch_size])[0].wait_to_read()
        net(one).wait_to_read()
        t0 = time.perf_counter()
        for i in range(steps):
            j = (i * batch_size) % (len(x) - batch_size)
            loss, _ = _train_step(
                net, trainer, loss_fn, x[j : j + batch_size], y[j : j + batch_size]
            )
        loss.wait_to_read()
        train = steps * batch_size / (time.perf_counter() - t0)
        t0 = time.perf_counter()
        for _ in range(calls):
            out = net(one)
        out.wait_to_read()
        result[mode] = (train, calls / (time.perf_counter() - t0))
    return result


def train(net, x, y, epochs, batch_size, quiet):
    """Adam on softmax cross-entropy; returns the per-epoch (loss, train accuracy)."""
    from gluonjax import gluon
    from gluonjax.data import batches

    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 2e-3})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    n_batches = len(x) // batch_size
    history = []
    for epoch in range(epochs):
        bar = ProgressBar(n_batches, f"epoch {epoch + 1}/{epochs}", enabled=not quiet)
        total_loss, correct, seen = 0.0, 0, 0
        t0 = time.perf_counter()
        for i, (xb, yb) in enumerate(
            batches(x, y, batch_size, shuffle=True, seed=epoch, last_batch="discard")
        ):
            loss, out = _train_step(net, trainer, loss_fn, xb, yb)
            total_loss += float(loss.sum().asscalar())
            correct += int((out.argmax(axis=1).asnumpy() == yb).sum())
            seen += len(yb)
            speed = seen / (time.perf_counter() - t0)
            bar.update(
                i + 1, f"loss {total_loss / seen:.3f} acc {correct / seen:.3f} {speed:.0f} img/s"
            )
        history.append((total_loss / seen, correct / seen))
        bar.close(f"loss {total_loss / seen:.3f} acc {correct / seen:.3f} {speed:.0f} img/s")
    return history


def _fresh_dir(path):
    os.makedirs(path, exist_ok=True)
    return os.path.abspath(path)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m gluonjax.demo", description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=5, help="training epochs (default 5)")
    p.add_argument("--batch-size", type=int, default=32, help="mini-batch size (default 32)")
    p.add_argument(
        "--out",
        default="demo_out",
        help="folder for the exported files "
        "(default ./demo_out, created if needed; files in it are replaced)",
    )
    p.add_argument(
        "--no-hybridize",
        action="store_true",
        help="train op by op (eager); the model is hybridized only to export it",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar and no speed runs")
    args = p.parse_args(argv)
    if args.epochs < 1 or args.batch_size < 1:
        p.error("--epochs and --batch-size must be positive")

    import gluonjax as mx
    from gluonjax import deploy, gluon, nd
    from gluonjax.data import digits

    t_start = time.perf_counter()
    mx.random.seed(42)
    x, y = digits("train")
    xt, yt = digits("test")
    print(
        f"data: {len(x)} training and {len(xt)} test images of 8x8 digits, "
        f"shown to the LeNet as {x.shape[1:]} (gluonjax.data.digits)"
    )

    if not args.quiet:
        speed = measure_speed(x, y, args.batch_size)
        (te, pe), (th, ph) = speed["eager"], speed["hybridized"]
        print("speed measured now (images/s):        eager   hybridized   ratio")
        print(
            f"  training step, batch {args.batch_size:<4d}       {te:8.0f}   {th:10.0f}   "
            f"{th / te:5.2f}x"
        )
        print(f"  prediction, batch 1              {pe:8.0f}   {ph:10.0f}   {ph / pe:5.2f}x")

    net = make_lenet()
    net.initialize(mx.init.Xavier())
    if not args.no_hybridize:
        net.hybridize()
    mode = "eager (op by op)" if args.no_hybridize else "hybridized (one jax.jit)"
    print(
        f"training LeNet, {mode}, {args.epochs} epoch(s), batch size {args.batch_size} "
        "(epoch 1 includes compilation)"
    )
    train(net, x, y, args.epochs, args.batch_size, args.quiet)

    net.hybridize()
    xt_nd = nd.array(xt)
    expected = net(xt_nd).asnumpy()
    accuracy = float((expected.argmax(axis=1) == yt).mean())
    print(f"test accuracy: {accuracy:.4f} ({len(yt)} images)")

    out_dir = _fresh_dir(args.out)
    prefix = os.path.join(out_dir, "lenet")
    files = net.export(prefix)

    ok = True
    loaded = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    ok &= _compare(
        "gluon.SymbolBlock.imports (symbol JSON + params)", loaded(xt_nd).asnumpy(), expected
    )
    served = deploy.load(prefix)
    ok &= _compare("gluonjax.deploy.load (StableHLO artifact)", np.asarray(served(xt)), expected)

    print(f"exported files in {out_dir}:")
    for f in files:
        print(f"  {os.path.basename(f):28s} {os.path.getsize(f):9d} bytes")
    print(
        f"serve it without gluonjax: copy {deploy.__file__} next to them, then\n"
        f"  import deploy; f = deploy.load('lenet'); f(images)  # images: (N, 1, 28, 28) float32"
    )
    print(f"done in {time.perf_counter() - t_start:.1f}s" + ("" if ok else " -- MISMATCH"))
    return 0 if ok else 1


def _compare(what, got, expected):
    diff = float(np.max(np.abs(got - expected))) if got.shape == expected.shape else float("inf")
    ok = diff <= TOLERANCE
    print(f"reloaded with {what}: max abs diff {diff:.2e} {'OK' if ok else 'FAILED'}")
    if not ok:
        try:
            np.testing.assert_allclose(got, expected, rtol=0, atol=TOLERANCE)
        except AssertionError as err:
            print(err, file=sys.stderr)
    return ok


if __name__ == "__main__":
    raise SystemExit(main())
