"""``npx.image``: the image operators (``_image_*``) returning ``mx.np.ndarray``."""

from __future__ import annotations

from .._ops import registry as _reg
from ..ndarray.ndarray import NDArray
from ..numpy._array import call, to_array


def _image(name):
    op = _reg.get(f"_image_{name}")

    def f(*args, **kwargs):
        args = [a if isinstance(a, NDArray) else to_array(a) for a in args]
        return call(op, tuple(args), kwargs)

    f.__name__ = name
    f.__doc__ = f"``npx.image.{name}`` (MXNet op ``_image_{name}``)."
    return f


for _n in (
    "to_tensor normalize resize crop flip_left_right flip_top_bottom "
    "random_flip_left_right random_flip_top_bottom adjust_lighting random_lighting "
    "random_brightness random_contrast random_saturation random_hue "
    "random_color_jitter"
).split():
    try:
        globals()[_n] = _image(_n)
    except Exception:  # noqa: BLE001 - an op gluonjax does not have
        pass
