"""Naive NumPy references of convolution, transposed convolution and pooling (NC layouts)."""

import numpy as np


def np_conv(x, w, b, stride, pad, dilate, groups):
    """Channel-first N-d cross-correlation by loops over output positions."""
    n = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    f, k = w.shape[0], w.shape[2:]
    osz = [(xp.shape[2 + i] - dilate[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(n)]
    out = np.zeros((x.shape[0], f, *osz))
    cg, fg = x.shape[1] // groups, f // groups
    axes = list(range(1, n + 2))
    for idx in np.ndindex(*osz):
        sl = tuple(
            slice(idx[i] * stride[i], idx[i] * stride[i] + dilate[i] * (k[i] - 1) + 1, dilate[i])
            for i in range(n)
        )
        patch = xp[(slice(None), slice(None)) + sl]
        for g in range(groups):
            out[(slice(None), slice(g * fg, (g + 1) * fg)) + idx] = np.tensordot(
                patch[:, g * cg : (g + 1) * cg], w[g * fg : (g + 1) * fg], (axes, axes)
            )
    return out + (0 if b is None else b.reshape((1, -1) + (1,) * n))


def np_deconv(x, w, b, stride, pad, dilate, adj, groups):
    """Transposed convolution by scattering every input element (channel-first)."""
    n, (bs, c) = x.ndim - 2, x.shape[:2]
    k, fpg = w.shape[2:], w.shape[1]
    cg = c // groups
    full = [
        (x.shape[2 + i] - 1) * stride[i] + dilate[i] * (k[i] - 1) + 1 + adj[i] for i in range(n)
    ]
    out = np.zeros((bs, fpg * groups, *full))
    for idx in np.ndindex(*x.shape[2:]):
        for kk in np.ndindex(*k):
            pos = tuple(idx[i] * stride[i] + kk[i] * dilate[i] for i in range(n))
            for g in range(groups):
                xs = x[(slice(None), slice(g * cg, (g + 1) * cg)) + idx]
                ws = w[(slice(g * cg, (g + 1) * cg), slice(None)) + kk]
                out[(slice(None), slice(g * fpg, (g + 1) * fpg)) + pos] += xs @ ws
    crop = tuple(slice(p, f - p) for p, f in zip(pad, full, strict=True))
    out = out[(slice(None), slice(None)) + crop]
    return out + (0 if b is None else b.reshape((1, -1) + (1,) * n))


def np_pool(x, kernel, stride, pad, kind, ceil=False, include_pad=True):
    """Channel-first max/avg pooling with MXNet's valid/full output size."""
    n = x.ndim - 2
    rnd = np.ceil if ceil else np.floor
    osz = [int(rnd((x.shape[2 + i] + 2 * pad[i] - kernel[i]) / stride[i])) + 1 for i in range(n)]
    out = np.zeros(x.shape[:2] + tuple(osz))
    for idx in np.ndindex(*osz):
        lo = [idx[i] * stride[i] - pad[i] for i in range(n)]
        hi = [lo[i] + kernel[i] for i in range(n)]
        sl = tuple(slice(max(lo[i], 0), min(hi[i], x.shape[2 + i])) for i in range(n))
        win = x[(slice(None), slice(None)) + sl].reshape(x.shape[:2] + (-1,))
        if kind == "max":
            val = win.max(-1)
        elif include_pad:
            val = win.sum(-1) / np.prod(
                [min(hi[i], x.shape[2 + i] + pad[i]) - lo[i] for i in range(n)]
            )
        else:
            val = win.mean(-1)
        out[(slice(None), slice(None)) + idx] = val
    return out
