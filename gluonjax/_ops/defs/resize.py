"""Resizing and adaptive pooling of NCHW data: contrib.BilinearResize2D and
contrib.AdaptiveAvgPooling2D.

Sampling positions depend only on the shapes, so they are computed once with
NumPy (in float32, in MXNet's order of operations) into small interpolation or
averaging matrices; the ops are matmuls, and so are their gradients.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ..registry import Attr, register

_MODES = ("size", "odd_scale", "like", "to_even_down", "to_even_up", "to_odd_down", "to_odd_up")


def _check4(data, op):
    if data.ndim != 4:
        raise ValueError(f"{op} expects 4-D NCHW data, got shape {tuple(data.shape)}")


def resize_output_size(shape, like_shape, *, height, width, scale_height, scale_width, mode):
    """``(out_height, out_width)`` of BilinearResize2D for an NCHW ``shape``.

    MXNet 1.9.1 applies ``scale_width`` only when ``scale_height`` is also given and
    otherwise keeps ``width``; gluonjax uses each scale that is given.
    """
    h, w = shape[2], shape[3]
    if mode == "size":
        oh = int(np.float32(scale_height) * h) if scale_height is not None else height
        ow = int(np.float32(scale_width) * w) if scale_width is not None else width
    elif mode == "odd_scale":
        if scale_height is None or scale_width is None:
            raise ValueError("mode='odd_scale' needs both scale_height and scale_width")

        def odd(n, s):
            return int(n * np.float32(s)) if n % 2 == 0 else int((n - 1) * np.float32(s)) + 1

        oh, ow = odd(h, scale_height), odd(w, scale_width)
    elif mode == "like":
        oh, ow = like_shape[2], like_shape[3]
    else:
        even = mode.startswith("to_even")
        step = -1 if mode.endswith("down") else 1

        def fix(n):
            return n if (n % 2 == 0) == even else n + step

        oh, ow = fix(h), fix(w)
    if oh < 1 or ow < 1:
        raise ValueError(f"output size ({oh}, {ow}) for input {tuple(shape)} must be positive")
    return oh, ow


def _linear_taps(n_in, n_out, align_corners):
    """Indices ``(i0, i1)`` and weights ``(l0, l1)`` of linear interpolation, one axis."""
    f32 = np.float32
    if n_out > 1:
        scale = f32(n_in - 1) / f32(n_out - 1) if align_corners else f32(n_in) / f32(n_out)
    else:
        scale = f32(0)
    dst = np.arange(n_out)
    if align_corners:
        src = scale * dst.astype(f32)
    else:
        src = (np.float64(scale) * (dst + 0.5) - 0.5).astype(f32)
        src = np.where(src < 0, f32(0), src)
    i0 = src.astype(np.int64)
    lam1 = (src - i0.astype(f32)).astype(f32)
    i1 = np.where(i0 < n_in - 1, i0 + 1, i0)
    return i0, i1, (f32(1) - lam1).astype(f32), lam1


def _interp_matrix(n_in, n_out, align_corners):
    """(n_out, n_in) float32 matrix of linear interpolation along one axis."""
    i0, i1, l0, l1 = _linear_taps(n_in, n_out, align_corners)
    m = np.zeros((n_out, n_in), np.float32)
    np.add.at(m, (np.arange(n_out), i0), l0)
    np.add.at(m, (np.arange(n_out), i1), l1)
    return m


def _separable(x, mh, mw):
    """``out[n, c] = mh @ x[n, c] @ mw.T`` as two matmuls, the cheaper order first
    (XLA's own choice for a three-operand einsum can be several times slower)."""
    (oh, h), (ow, w) = mh.shape, mw.shape
    mh, mw = jnp.asarray(mh, x.dtype), jnp.asarray(mw, x.dtype)
    if h * w * ow + oh * h * ow <= oh * h * w + oh * w * ow:
        return jnp.einsum("ph,nchq->ncpq", mh, jnp.einsum("nchw,qw->nchq", x, mw))
    return jnp.einsum("ncpw,qw->ncpq", jnp.einsum("ph,nchw->ncpw", mh, x), mw)


@register(
    "_contrib_BilinearResize2D",
    inputs=lambda a: ("data", "like") if a["mode"] == "like" else ("data",),
    attrs={
        "height": Attr("int", 1),
        "width": Attr("int", 1),
        "scale_height": Attr("float?", None),
        "scale_width": Attr("float?", None),
        "mode": Attr("str", "size", choices=_MODES),
        "align_corners": Attr("bool", True),
    },
)
def bilinear_resize(
    data, like=None, *, height, width, scale_height, scale_width, mode, align_corners
):
    """Bilinear resize of NCHW ``data``.

    Output size by ``mode``: ``size`` -> (``height``, ``width``), or the input size
    times ``scale_height``/``scale_width`` when given; ``odd_scale`` -> an odd
    dimension ``n`` becomes ``(n - 1) * scale + 1`` (an even one ``n * scale``);
    ``like`` -> the height and width of the second input ``like``; ``to_even_down``,
    ``to_even_up``, ``to_odd_down``, ``to_odd_up`` -> the nearest even/odd size.
    ``align_corners`` keeps the corner pixels' centres aligned (source index
    ``dst * (in - 1) / (out - 1)``); otherwise ``(dst + 0.5) * in / out - 0.5``.
    ``like`` gets a zero gradient.

    Examples
    --------
    >>> import gluonjax as mx
    >>> x = mx.nd.array([[[[0., 2.], [4., 6.]]]])
    >>> mx.nd.contrib.BilinearResize2D(x, height=3, width=3)[0, 0].asnumpy()
    array([[0., 1., 2.],
           [2., 3., 4.],
           [4., 5., 6.]], dtype=float32)
    """
    _check4(data, "BilinearResize2D")
    if mode == "like" and (like is None or like.ndim != 4):
        raise ValueError("mode='like' needs a 4-D second input 'like'")
    oh, ow = resize_output_size(
        data.shape,
        None if like is None else like.shape,
        height=height,
        width=width,
        scale_height=scale_height,
        scale_width=scale_width,
        mode=mode,
    )
    if (oh, ow) == data.shape[2:]:
        return data
    h, w = data.shape[2:]
    return _separable(
        data, _interp_matrix(h, oh, align_corners), _interp_matrix(w, ow, align_corners)
    )


def _avg_matrix(n_in, n_out):
    """(n_out, n_in) averaging weights of adaptive pooling along one axis."""
    out = np.arange(n_out)
    start = np.floor((out * n_in).astype(np.float32) / np.float32(n_out)).astype(np.int64)
    end = np.ceil(((out + 1) * n_in).astype(np.float32) / np.float32(n_out)).astype(np.int64)
    idx = np.arange(n_in)
    inside = (idx[None, :] >= start[:, None]) & (idx[None, :] < end[:, None])
    return inside / (end - start)[:, None]


@register("_contrib_AdaptiveAvgPooling2D", attrs={"output_size": Attr("shape", ())})
def adaptive_avg_pooling(data, *, output_size):
    """Average pooling of NCHW data to ``output_size`` (an int or (height, width);
    empty: 1x1). Output cell ``i`` averages input rows ``floor(i*H/oh)`` to
    ``ceil((i+1)*H/oh) - 1`` (likewise for columns).

    Examples
    --------
    >>> import gluonjax as mx
    >>> x = mx.nd.arange(16).reshape((1, 1, 4, 4))
    >>> mx.nd.contrib.AdaptiveAvgPooling2D(x, output_size=2)[0, 0].asnumpy()
    array([[ 2.5,  4.5],
           [10.5, 12.5]], dtype=float32)
    """
    _check4(data, "AdaptiveAvgPooling2D")
    if len(output_size) > 2:
        raise ValueError(f"output_size must be an int or (height, width), got {output_size}")
    if not output_size:
        output_size = (1, 1)
    oh, ow = output_size if len(output_size) == 2 else output_size * 2
    if oh < 1 or ow < 1:
        raise ValueError(f"output_size must be positive, got {output_size}")
    h, w = data.shape[2:]
    return _separable(data, _avg_matrix(h, oh), _avg_matrix(w, ow))


def crop_window(data_shape, like_shape, *, offset, h_w, center_crop):
    """``(top, left, height, width)`` of MXNet's legacy ``Crop`` for NCHW ``data_shape``."""
    if len(data_shape) != 4:
        raise ValueError(f"Crop expects 4-D NCHW data, got shape {tuple(data_shape)}")
    big_h, big_w = data_shape[2], data_shape[3]
    if like_shape is None:
        if len(h_w) != 2:
            raise ValueError(f"Crop needs h_w=(height, width) with one input, got {h_w}")
        h, w = h_w
        if not (1 <= h <= big_h and 1 <= w <= big_w):
            raise ValueError(f"Crop h_w={tuple(h_w)} must lie within the input's {big_h}x{big_w}")
    else:
        if len(like_shape) != 4:
            raise ValueError(f"Crop's crop_like must be 4-D NCHW, got {tuple(like_shape)}")
        h, w = like_shape[2], like_shape[3]
        if h > big_h or w > big_w:
            raise ValueError(
                f"Crop to crop_like's {h}x{w} is larger than the input's {big_h}x{big_w}"
            )
    if center_crop:
        return (big_h - h) // 2, (big_w - w) // 2, h, w
    if len(offset) != 2:
        raise ValueError(f"Crop offset must be (y, x), got {offset}")
    top, left = offset
    if not (0 <= top <= big_h - h and 0 <= left <= big_w - w):
        raise ValueError(
            f"Crop offset={tuple(offset)} puts the {h}x{w} window outside the input's "
            f"{big_h}x{big_w}: it must be within (0..{big_h - h}, 0..{big_w - w})"
        )
    return top, left, h, w


@register(
    "Crop",
    variadic=True,
    attrs={
        "num_args": Attr("int"),
        "offset": Attr("shape", (0, 0)),
        "h_w": Attr("shape", (0, 0)),
        "center_crop": Attr("bool", False),
    },
)
def crop(*args, num_args, offset, h_w, center_crop):
    """MXNet's legacy ``Crop`` of NCHW data (not ``crop``, the alias of ``slice``): a
    window of height and width ``h_w`` (one input) or of the second input's height and
    width (two inputs; that input gives its shape only and gets a zero gradient), at
    ``offset`` (y, x), or centred with ``center_crop``.

    Examples
    --------
    >>> import gluonjax as mx
    >>> x = mx.nd.arange(16).reshape((1, 1, 4, 4))
    >>> mx.nd.Crop(x, h_w=(2, 2), offset=(1, 2))[0, 0].asnumpy()
    array([[ 6.,  7.],
           [10., 11.]], dtype=float32)
    """
    if num_args != len(args) or not 1 <= len(args) <= 2:
        raise ValueError(f"Crop takes 1 or 2 inputs (num_args={num_args}), got {len(args)}")
    top, left, h, w = crop_window(
        args[0].shape,
        args[1].shape if len(args) == 2 else None,
        offset=offset,
        h_w=h_w,
        center_crop=center_crop,
    )
    return args[0][:, :, top : top + h, left : left + w]
