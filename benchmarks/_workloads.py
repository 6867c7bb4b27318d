"""The training workloads of ``bench_first_step`` and ``bench_conv_cpu``, written once per
framework: Gluon (gluonjax, or MXNet 1.9.1 in its own interpreter: the same code, ``mx`` is
whichever library runs it), pure JAX + optax, and PyTorch (eager, hand-written: torchvision
has no CPU build here).

- ``mlp``: Dense 256-128-10 (relu) on 512 features, batch 64;
- ``lenet``: Conv(6,5)-pool-Conv(16,5)-pool-Dense 120-84-10 on 1x28x28, batch 64;
- ``resnet18``: the model zoo's ``resnet18_v1(classes=10, thumbnail=True)``, the CIFAR
  ResNet-18 (a 3x3 stem, no max-pool, BasicBlockV1 2-2-2-2, 64-512 channels) on 3x32x32,
  batch 32; BatchNorm in training mode (batch statistics, moving averages updated).

- ``mobilenet``: the model zoo's ``mobilenet1.0`` (depthwise convolutions) on 3x224x224,
  inference only;
- ``dcgan``: the DCGAN generator (``Conv2DTranspose`` 100 -> 512 -> 256 -> 128 -> 64 -> 3,
  BatchNorm, ReLU, tanh: 64x64 images from 100-d noise), batch 64; its step fits the
  images to fixed targets with an L2 loss (the generator's share of a GAN step).

All use SGD (lr 0.05) and softmax cross-entropy (L2 for ``dcgan``). Imports happen inside
the functions: this module is loaded by MXNet's interpreter too, where neither jax nor
gluonjax exist.
"""

from __future__ import annotations

LR = 0.05
BATCH = {"mlp": 64, "lenet": 64, "resnet18": 32, "mobilenet": 1, "dcgan": 64}
SHAPE = {
    "mlp": (512,),
    "lenet": (1, 28, 28),
    "resnet18": (3, 32, 32),
    "mobilenet": (3, 224, 224),
    "dcgan": (100, 1, 1),
}
# DCGAN generator: (channels, kernel, stride, pad) of each Conv2DTranspose
DCGAN = ((512, 4, 1, 0), (256, 4, 2, 1), (128, 4, 2, 1), (64, 4, 2, 1), (3, 4, 2, 1))
# (channels, stride of the stage's first block) of the four stages
STAGES = ((64, 1), (128, 2), (256, 2), (512, 2))


def data(kind, batch=None):
    """``(x, y)`` numpy arrays (float32; y holds class indices as float32, as Gluon's loss)."""
    import numpy as np

    rs = np.random.RandomState(0)
    n = BATCH[kind] if batch is None else batch
    x = rs.randn(n, *SHAPE[kind]).astype(np.float32)
    if kind == "dcgan":  # targets: images in [-1, 1]
        return x, np.tanh(rs.randn(n, 3, 64, 64)).astype(np.float32)
    return x, rs.randint(0, 10, n).astype(np.float32)


# ----------------------------------------------------------------------------- Gluon
def gluon_net(mx, kind):
    """The workload as a Gluon block of library ``mx`` (gluonjax or mxnet)."""
    nn = mx.gluon.nn
    if kind == "resnet18":
        return mx.gluon.model_zoo.vision.resnet18_v1(classes=10, thumbnail=True)
    if kind == "mobilenet":
        return mx.gluon.model_zoo.vision.mobilenet1_0()
    if kind == "dcgan":
        net = nn.HybridSequential()
        for i, (c, k, s, p) in enumerate(DCGAN):
            net.add(nn.Conv2DTranspose(c, k, s, p, use_bias=False))
            if i < len(DCGAN) - 1:
                net.add(nn.BatchNorm(), nn.Activation("relu"))
        net.add(nn.Activation("tanh"))
        return net
    net = nn.HybridSequential()
    if kind == "mlp":
        net.add(nn.Dense(256, activation="relu"), nn.Dense(128, activation="relu"))
    else:
        net.add(
            nn.Conv2D(6, 5, activation="relu"),
            nn.MaxPool2D(2),
            nn.Conv2D(16, 5, activation="relu"),
            nn.MaxPool2D(2),
            nn.Dense(120, activation="relu"),
            nn.Dense(84, activation="relu"),
        )
    net.add(nn.Dense(10))
    return net


def gluon_step(mx, kind, hybridize, static_alloc=False):
    """A function running one Gluon training step (record, backward, Trainer.step) and
    waiting for it; the net is built and initialized, nothing is compiled yet."""
    xn, yn = data(kind)
    net = gluon_net(mx, kind)
    net.initialize(mx.init.Xavier())
    if hybridize:
        net.hybridize(static_alloc=True, static_shape=True) if static_alloc else net.hybridize()
    if kind == "dcgan":
        loss_fn = mx.gluon.loss.L2Loss()
    else:
        loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    tr = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": LR})
    x, y = mx.nd.array(xn), mx.nd.array(yn)
    real_mxnet = mx.__name__ == "mxnet"

    def step():
        with mx.autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        tr.step(xn.shape[0])
        if real_mxnet:  # its update runs asynchronously, after the loss is ready
            mx.nd.waitall()
        else:  # gluonjax's update is in the program that computes the loss
            loss.wait_to_read()

    return step


# ----------------------------------------------------------------------------- pure JAX
def _init_params(kind, rs):
    """Parameters in MXNet's layouts ((out, in), (out, in, kh, kw)), plus BN states."""
    import numpy as np

    def w(*shape):
        return (rs.randn(*shape) * 0.05).astype(np.float32)

    def zeros(n):
        return np.zeros((n,), np.float32)

    if kind == "mlp":
        dims = [(256, 512), (128, 256), (10, 128)]
        return {"dense": [(w(*d), zeros(d[0])) for d in dims]}, {}
    if kind == "lenet":
        convs = [(w(6, 1, 5, 5), zeros(6)), (w(16, 6, 5, 5), zeros(16))]
        dims = [(120, 256), (84, 120), (10, 84)]
        return {"conv": convs, "dense": [(w(*d), zeros(d[0])) for d in dims]}, {}

    def bn(c):
        return (np.ones((c,), np.float32), zeros(c))

    params = {"stem": (w(64, 3, 3, 3), bn(64)), "blocks": [], "fc": (w(10, 512), zeros(10))}
    stats = {"stem": (zeros(64), np.ones((64,), np.float32)), "blocks": []}
    cin = 64
    for cout, stride in STAGES:
        for b in range(2):
            s = stride if b == 0 else 1
            p = {"c1": (w(cout, cin, 3, 3), bn(cout)), "c2": (w(cout, cout, 3, 3), bn(cout))}
            st = {k: (zeros(cout), np.ones((cout,), np.float32)) for k in ("c1", "c2")}
            if s != 1 or cin != cout:
                p["down"] = (w(cout, cin, 1, 1), bn(cout))
                st["down"] = (zeros(cout), np.ones((cout,), np.float32))
            params["blocks"].append(p)
            stats["blocks"].append(st)
            cin = cout
    return params, stats


def pure_forward(kind, layout="NCHW"):
    """``f(params, stats, x) -> (logits, new_stats)`` in pure JAX (``x`` in NCHW).

    ``layout``: ``'NCHW'`` computes in MXNet's layout; ``'NHWC'`` transposes the input once
    and computes in NHWC inside; ``'NCHW-T'`` keeps NCHW between layers but runs each
    convolution in NHWC with an HWIO kernel, transposing around it (what a Convolution op
    lowered that way gives; XLA may cancel the transposes of consecutive layers).
    """
    import jax
    import jax.numpy as jnp

    nhwc = layout == "NHWC"
    dn = ("NHWC", "OIHW", "NHWC") if nhwc else ("NCHW", "OIHW", "NCHW")

    def dense(x, wb):
        return jax.lax.dot_general(x, wb[0], (((1,), (1,)), ((), ()))) + wb[1]

    def conv(x, w, stride=1, pad=0):
        if layout == "NCHW-T":
            y = jax.lax.conv_general_dilated(
                jnp.transpose(x, (0, 2, 3, 1)),
                jnp.transpose(w, (2, 3, 1, 0)),
                (stride, stride),
                [(pad, pad)] * 2,
                dimension_numbers=("NHWC", "HWIO", "NHWC"),
            )
            return jnp.transpose(y, (0, 3, 1, 2))
        return jax.lax.conv_general_dilated(
            x, w, (stride, stride), [(pad, pad)] * 2, dimension_numbers=dn
        )

    def cshape(v):
        return (1, 1, 1, -1) if nhwc else (1, -1, 1, 1)

    def bn(x, gb, st):
        axes = (0, 1, 2) if nhwc else (0, 2, 3)
        mean = jnp.mean(x, axes)
        var = jnp.mean(jnp.square(x - mean.reshape(cshape(mean))), axes)
        y = (x - mean.reshape(cshape(mean))) * jax.lax.rsqrt(var + 1e-5).reshape(cshape(var))
        y = y * gb[0].reshape(cshape(var)) + gb[1].reshape(cshape(var))
        m, v = st
        new = (0.9 * m + 0.1 * mean, 0.9 * v + 0.1 * var)
        return y, jax.tree_util.tree_map(jax.lax.stop_gradient, new)

    def pool(x):
        win = (1, 2, 2, 1) if nhwc else (1, 1, 2, 2)
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, win, win, "VALID")

    def head(ps, x):
        for wb in ps[:-1]:
            x = jax.nn.relu(dense(x, wb))
        return dense(x, ps[-1])

    def mlp(params, stats, x):
        return head(params["dense"], x), stats

    def lenet(params, stats, x):
        if nhwc:
            x = jnp.transpose(x, (0, 2, 3, 1))
        for w, b in params["conv"]:
            x = pool(jax.nn.relu(conv(x, w) + b.reshape(cshape(b))))
        if nhwc:  # Flatten's order is MXNet's (C, H, W)
            x = jnp.transpose(x, (0, 3, 1, 2))
        return head(params["dense"], x.reshape(x.shape[0], -1)), stats

    def resnet(params, stats, x):
        if nhwc:
            x = jnp.transpose(x, (0, 2, 3, 1))
        w, gb = params["stem"]
        x, st_stem = bn(conv(x, w, 1, 1), gb, stats["stem"])
        x = jax.nn.relu(x)
        new_blocks = []
        strides = [s if b == 0 else 1 for _, s in STAGES for b in range(2)]
        for p, st, s in zip(params["blocks"], stats["blocks"], strides):
            new = {}
            h, new["c1"] = bn(conv(x, p["c1"][0], s, 1), p["c1"][1], st["c1"])
            h, new["c2"] = bn(conv(jax.nn.relu(h), p["c2"][0], 1, 1), p["c2"][1], st["c2"])
            if "down" in p:
                x, new["down"] = bn(conv(x, p["down"][0], s, 0), p["down"][1], st["down"])
            x = jax.nn.relu(h + x)
            new_blocks.append(new)
        x = jnp.mean(x, (1, 2) if nhwc else (2, 3))
        return dense(x, params["fc"]), {"stem": st_stem, "blocks": new_blocks}

    return {"mlp": mlp, "lenet": lenet, "resnet18": resnet}[kind]


def pure_step(kind, layout="NCHW", outputs=False):
    """A function running one pure JAX + optax SGD step (jitted, params donated) and
    waiting for it; parameters are built on the host, nothing is compiled yet.

    ``outputs``: the step also returns what Gluon's loop leaves the user (the per-sample
    losses, the net's outputs and the gradients), the same work as gluonjax's step."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax

    fwd = pure_forward(kind, layout)
    params, stats = _init_params(kind, np.random.RandomState(1))
    params = jax.device_put(params)
    stats = jax.device_put(stats)
    tx = optax.sgd(LR)
    opt = tx.init(params)  # SGD without momentum: an empty state

    def loss_fn(ps, st, x, y):
        logits, st = fwd(ps, st, x)
        logp = jax.nn.log_softmax(logits)
        per = -jnp.take_along_axis(logp, y[:, None].astype(jnp.int32), 1)[:, 0]
        return jnp.mean(per), (st, per, logits)

    @jax.jit
    def step(ps, st, o, x, y):
        g, (st, per, logits) = jax.grad(loss_fn, has_aux=True)(ps, st, x, y)
        upd, o = tx.update(g, o, ps)
        out = (optax.apply_updates(ps, upd), st, o)
        return out + (per, logits, g) if outputs else out

    xn, yn = data(kind)
    x, y = jax.device_put(xn), jax.device_put(yn)
    box = [params, stats, opt]

    def run():
        box[:] = step(*box, x, y)[:3]
        jax.block_until_ready(box[0])

    return run


def pure_infer(kind, layout="NCHW", batch=1):
    """A function running the jitted forward (inference: BN with the moving statistics is
    what a deployed net runs; here batch statistics, the same cost) on ``batch`` inputs."""
    import jax
    import numpy as np

    fwd = pure_forward(kind, layout)
    params, stats = _init_params(kind, np.random.RandomState(1))
    params, stats = jax.device_put(params), jax.device_put(stats)
    x = jax.device_put(data(kind, batch)[0])
    f = jax.jit(lambda p, s, x: fwd(p, s, x)[0])
    return lambda: f(params, stats, x).block_until_ready()


# ----------------------------------------------------------------------------- PyTorch
def torch_net(kind):
    """The workload as a ``torch.nn.Module`` (NCHW, as MXNet)."""
    import torch
    from torch import nn

    if kind == "dcgan":
        layers, cin = [], SHAPE["dcgan"][0]
        for i, (c, k, s, p) in enumerate(DCGAN):
            layers.append(nn.ConvTranspose2d(cin, c, k, s, p, bias=False))
            if i < len(DCGAN) - 1:
                layers += [nn.BatchNorm2d(c), nn.ReLU()]
            cin = c
        return nn.Sequential(*layers, nn.Tanh())
    if kind == "mobilenet":  # MobileNet 1.0 as the model zoo's mobilenet1.0

        def cbr(cin, cout, k, s, groups=1):
            return [
                nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False),
                nn.BatchNorm2d(cout),
                nn.ReLU(),
            ]

        chans = [32, 64, 128, 128, 256, 256, 512, 512, 512, 512, 512, 512, 1024, 1024]
        strides = [1, 2, 1, 2, 1, 2, 1, 1, 1, 1, 1, 2, 1]
        layers = cbr(3, 32, 3, 2)
        for cin, cout, s in zip(chans[:-1], chans[1:], strides):
            layers += cbr(cin, cin, 3, s, groups=cin) + cbr(cin, cout, 1, 1)
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(1024, 1000)]
        return nn.Sequential(*layers)

    if kind == "mlp":
        return nn.Sequential(
            nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10)
        )
    if kind == "lenet":
        return nn.Sequential(
            nn.Conv2d(1, 6, 5),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(6, 16, 5),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(256, 120),
            nn.ReLU(),
            nn.Linear(120, 84),
            nn.ReLU(),
            nn.Linear(84, 10),
        )

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.body = nn.Sequential(
                nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
                nn.BatchNorm2d(cout),
                nn.ReLU(),
                nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
                nn.BatchNorm2d(cout),
            )
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
                )

        def forward(self, x):
            r = x if self.down is None else self.down(x)
            return torch.relu(self.body(x) + r)

    layers = [nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU()]
    cin = 64
    for cout, stride in STAGES:
        layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 10)]
    return nn.Sequential(*layers)


def torch_step(kind):
    """A function running one PyTorch eager SGD step."""
    import torch

    torch.manual_seed(0)
    net = torch_net(kind)
    opt = torch.optim.SGD(net.parameters(), lr=LR)
    xn, yn = data(kind)
    if kind == "dcgan":  # Gluon's L2Loss: half the squared error, averaged per sample
        x, y = torch.from_numpy(xn), torch.from_numpy(yn)

        def loss_fn(out, y):
            return 0.5 * ((out - y) ** 2).mean()

    else:
        loss_fn = torch.nn.CrossEntropyLoss()
        x, y = torch.from_numpy(xn), torch.from_numpy(yn).long()

    def step():
        opt.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()

    return step


def torch_infer(kind, batch=1):
    """A function running the PyTorch forward in inference mode on ``batch`` inputs."""
    import torch

    torch.manual_seed(0)
    net = torch_net(kind).eval()
    x = torch.from_numpy(data(kind, batch)[0])

    def run():
        with torch.inference_mode():
            net(x)

    return run
