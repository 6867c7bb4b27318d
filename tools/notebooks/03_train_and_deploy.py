# ruff: noqa: E402, E501, B018, B905
# %% [markdown]
# # Train a LeNet, export it, and serve it elsewhere
#
# The whole life of a model with gluonjax's MXNet API:
#
# 1. train a LeNet (a `HybridBlock` with `hybrid_forward`) on handwritten digits,
# 2. hybridize and `export` it,
# 3. load it back with `gluon.SymbolBlock.imports` and with the Module API,
# 4. run the exported StableHLO artifact in a fresh Python process that does not import gluonjax.
#
# The data are the 8x8 handwritten digits of the UCI repository (1797 images, as shipped with
# scikit-learn), stored inside gluonjax (`gluonjax.data.digits`, no download). Each 8x8 image is
# enlarged 3x to 24x24 and centred in a 28x28 frame, the input size of the classic LeNet.

# %%
import io
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import namedtuple
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Image, Pretty, display

import gluonjax as mx
from gluonjax import autograd, deploy, gluon, nd
from gluonjax.data import batches, digits
from gluonjax.gluon import nn

mx.random.seed(7)
x_train, y_train = digits("train")
x_test, y_test = digits("test")
print(x_train.shape, y_train.shape, x_test.shape, y_test.shape)


def show_figure(fig):
    """Display a matplotlib figure as a PNG, whatever the matplotlib backend is."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, bbox_inches="tight")
    plt.close(fig)
    display(Image(buf.getvalue()))


fig, axes = plt.subplots(1, 8, figsize=(8, 1.3))
for ax, img, label in zip(axes, x_train, y_train):
    ax.imshow(img[0], cmap="gray_r")
    ax.set_title(int(label))
    ax.axis("off")
show_figure(fig)

# %% [markdown]
# ## The network

# %%
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
        x = self.pool1(self.conv1(x))
        x = self.pool2(self.conv2(x))
        x = F.flatten(x)
        return self.fc3(self.fc2(self.fc1(x)))


net = LeNet()
net.initialize(mx.init.Xavier())
net.summary(nd.array(x_train[:2]))
net.hybridize()

# %% [markdown]
# ## Training, with a progress bar
#
# The usual Gluon loop: `autograd.record()`, `backward()`, `trainer.step()`. The bar is a small
# display that updates in place.

# %%
class ProgressBar:
    def __init__(self, total, title, width=30):
        self.total, self.title, self.width = total, title, width
        self.handle = display(Pretty(self._text(0, "")), display_id=True)

    def _text(self, done, info):
        fill = int(self.width * done / self.total)
        return f"{self.title} [{'#' * fill}{'.' * (self.width - fill)}] {done}/{self.total} {info}"

    def update(self, done, info=""):
        self.handle.update(Pretty(self._text(done, info)))


def accuracy(net, x, y):
    return float((net(nd.array(x)).argmax(axis=1).asnumpy() == y).mean())


loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 2e-3})
batch_size, epochs = 32, 6
n_batches = len(x_train) // batch_size
history = {"loss": [], "train_acc": [], "test_acc": []}
for epoch in range(epochs):
    bar = ProgressBar(n_batches, f"epoch {epoch + 1}/{epochs}")
    total_loss, correct, seen, t0 = 0.0, 0, 0, time.perf_counter()
    for i, (xb, yb) in enumerate(batches(x_train, y_train, batch_size, shuffle=True, seed=epoch,
                                         last_batch="discard")):
        data, label = nd.array(xb), nd.array(yb)
        with autograd.record():
            output = net(data)
            loss = loss_fn(output, label)
        loss.backward()
        trainer.step(batch_size)
        total_loss += float(loss.sum().asscalar())
        correct += int((output.argmax(axis=1).asnumpy() == yb).sum())
        seen += len(yb)
        if (i + 1) % 5 == 0 or i + 1 == n_batches:
            bar.update(i + 1, f"loss {total_loss / seen:.3f} acc {correct / seen:.3f} "
                              f"({seen / (time.perf_counter() - t0):.0f} img/s)")
    history["loss"].append(total_loss / seen)
    history["train_acc"].append(correct / seen)
    history["test_acc"].append(accuracy(net, x_test, y_test))
print("test accuracy per epoch:", [round(a, 3) for a in history["test_acc"]])

# %% [markdown]
# ## Loss and accuracy

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.2))
epochs_axis = np.arange(1, epochs + 1)
ax1.plot(epochs_axis, history["loss"], "o-")
ax1.set(title="training loss", xlabel="epoch", ylabel="softmax cross-entropy")
ax2.plot(epochs_axis, history["train_acc"], "o-", label="train")
ax2.plot(epochs_axis, history["test_acc"], "s-", label="test")
ax2.set(title="accuracy", xlabel="epoch", ylim=(0, 1))
ax2.legend(loc="lower right")
fig.tight_layout()
show_figure(fig)

# %%
expected = net(nd.array(x_test)).asnumpy()
test_accuracy = float((expected.argmax(axis=1) == y_test).mean())
print(f"test accuracy: {test_accuracy:.4f}")
assert test_accuracy > 0.95

# %% [markdown]
# ## Export
#
# The hybridized network has run, so `export` knows its input shape. It writes MXNet's symbol JSON
# and parameters plus a StableHLO artifact with its manifest.

# %%
workdir = Path(tempfile.mkdtemp(prefix="lenet_"))
prefix = str(workdir / "lenet")
for f in net.export(prefix):
    print(f"{os.path.basename(f):28s} {os.path.getsize(f):8d} bytes")

# %% [markdown]
# ## Load it back: `SymbolBlock.imports`

# %%
loaded = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
out = loaded(nd.array(x_test)).asnumpy()
print("max abs difference:", np.abs(out - expected).max())
np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)

# %% [markdown]
# ## Load it back: the Module API
#
# As in MXNet: load the symbol, bind it for the batch shape, load the parameters, forward a batch.

# %%
symbol = mx.sym.load(prefix + "-symbol.json")
mod = mx.mod.Module(symbol=symbol, context=mx.cpu(), data_names=["data"], label_names=None)
mod.bind(data_shapes=[("data", x_test.shape)], for_training=False)
mod.load_params(prefix + "-0000.params")
print(mod.data_shapes, mod.output_shapes)
Batch = namedtuple("Batch", ["data"])
mod.forward(Batch([nd.array(x_test)]))
out = mod.get_outputs()[0].asnumpy()
print("max abs difference:", np.abs(out - expected).max())
np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)

# %% [markdown]
# ## Serve the StableHLO artifact without gluonjax
#
# `gluonjax/deploy.py` is one file that needs only NumPy and jax. Copy it next to the artifact,
# its manifest and the parameters, and run it in a fresh interpreter in which importing gluonjax
# is made impossible.

# %%
serve_dir = Path(tempfile.mkdtemp(prefix="serve_"))
shutil.copy(deploy.__file__, serve_dir / "deploy.py")
for name in ("lenet-0000.stablehlo", "lenet-0000.manifest.json", "lenet-0000.params"):
    shutil.copy(workdir / name, serve_dir / name)
np.save(serve_dir / "images.npy", x_test)
print(sorted(os.listdir(serve_dir)))

server = """
import sys
sys.modules["gluonjax"] = None  # "import gluonjax" fails from here on
import numpy as np
import deploy

f = deploy.load("lenet")
scores = np.asarray(f(np.load("images.npy")))
np.save("scores.npy", scores)
loaded = sorted({m.split(".")[0] for m, mod in sys.modules.items() if mod is not None})
print("gluonjax imported:", "gluonjax" in loaded, "| jax imported:", "jax" in loaded)
print("predictions for the first 10 images:", scores[:10].argmax(axis=1).tolist())
"""
result = subprocess.run([sys.executable, "-c", server], cwd=serve_dir, capture_output=True,
                        text=True, timeout=300)
print(result.stdout or result.stderr)
assert result.returncode == 0

# %%
served = np.load(serve_dir / "scores.npy")
print("labels of the first 10 images:     ", y_test[:10].tolist())
print("max abs difference to the trained net:", np.abs(served - expected).max())
np.testing.assert_allclose(served, expected, rtol=1e-5, atol=1e-5)

# %% [markdown]
# The same files also load in MXNet 1.x (`SymbolBlock.imports`), and `net.export(prefix,
# iree=True)` adds an IREE module for runtimes without Python: see `docs/export.md`.
