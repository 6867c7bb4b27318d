"""``python -m gluonjax.demo``: a small eager example (the full demo comes with the notebooks issue)."""

from __future__ import annotations

import time


def main(argv=None):
    import gluonjax as mx

    nd = mx.nd
    mx.random.seed(0)
    x = nd.array([[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 0.0]])
    w = nd.array([[0.1, 0.2, 0.3, 0.4], [-0.4, 0.3, -0.2, 0.1], [0.0, 0.5, 0.5, 0.0]])
    b = nd.array([0.1, 0.0, -0.1])
    x.attach_grad()
    t0 = time.perf_counter()
    with mx.autograd.record():
        y = nd.Activation(nd.FullyConnected(x, w, b, num_hidden=3), act_type="relu")
        loss = (y * y).sum()
    loss.backward()
    dt = time.perf_counter() - t0
    print("FullyConnected + relu output:", y)
    print("d loss / d x:", x.grad)
    print(f"eager forward+backward (includes compilation): {dt * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
