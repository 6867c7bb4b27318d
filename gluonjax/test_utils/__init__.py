"""``mx.test_utils``: MXNet 1.x's testing helpers, written for gluonjax.

Use them to test your own operators, symbols and blocks the way MXNet's test suite
does: compare with NumPy under dtype-aware tolerances, check gradients against
finite differences, compare optimizers, and check random generators statistically.

* comparing: :func:`assert_almost_equal`, :func:`almost_equal`, :func:`same`,
  :func:`assert_exception`, :func:`retry`, :func:`np_reduce`;
* data: :func:`rand_ndarray`, :func:`rand_shape_nd` (``_2d``, ``_3d``),
  :func:`random_arrays`, :func:`random_uniform_arrays`, :func:`random_sample`;
* symbols and blocks: :func:`check_symbolic_forward`, :func:`check_symbolic_backward`,
  :func:`check_numeric_gradient`, :func:`check_consistency`,
  :func:`check_gluon_hybridize_consistency`, :func:`simple_forward`;
* optimizers: :func:`compare_optimizer`;
* random generators: :func:`verify_generator`, :func:`gen_buckets_probs_with_ppf`;
* data sets: :func:`get_mnist`, :func:`get_mnist_ubyte`, :func:`get_mnist_iterator`,
  :func:`get_mnist_pkl`, :func:`get_cifar10`, :func:`get_zip_data`, :func:`get_bz2_data`;
* environment: :func:`default_context`, :func:`set_default_context`,
  :func:`default_dtype`, :func:`effective_dtype`, :func:`environment`,
  :func:`discard_stderr`, :func:`use_np`.

As in MXNet, ``from mxnet.test_utils import *`` also brings ``np``, ``mx``, ``array``,
``sys``, ``os`` and a few more module names that MXNet's test files rely on.

Examples
--------
>>> import numpy as np
>>> import gluonjax as mx
>>> from gluonjax.test_utils import assert_almost_equal, check_numeric_gradient
>>> x = mx.sym.var('x')
>>> check_numeric_gradient(mx.sym.tanh(x), [np.array([[0.1, -0.5, 0.9]])])
>>> assert_almost_equal(mx.nd.tanh(mx.nd.array([0.5])), np.tanh([0.5]))
"""

# Module names MXNet's test_utils exposes to ``from mxnet.test_utils import *``
import json  # noqa: F401
import logging  # noqa: F401
import numbers  # noqa: F401
import os  # noqa: F401
import platform  # noqa: F401
import sys  # noqa: F401
import time  # noqa: F401
import traceback  # noqa: F401
from collections import OrderedDict  # noqa: F401
from contextlib import contextmanager  # noqa: F401

import numpy as np  # noqa: F401
import numpy.random as rnd  # noqa: F401
import numpy.testing as npt  # noqa: F401

import gluonjax as mx  # noqa: F401

from ..context import Context, current_context  # noqa: F401
from ..ndarray import array  # noqa: F401
from ..symbol import Symbol  # noqa: F401
from ..util import getenv, setenv, use_np  # noqa: F401
from ._compare import *  # noqa: F403
from ._compare import __all__ as _a1
from ._data import *  # noqa: F403
from ._data import __all__ as _a2
from ._datasets import *  # noqa: F403
from ._datasets import __all__ as _a7
from ._env import *  # noqa: F403
from ._env import __all__ as _a3
from ._optim import *  # noqa: F403
from ._optim import __all__ as _a4
from ._stats import *  # noqa: F403
from ._stats import __all__ as _a5
from ._symbolic import *  # noqa: F403
from ._symbolic import __all__ as _a6

HELPERS = tuple(_a1 + _a2 + _a3 + _a4 + _a5 + _a6 + _a7 + ["use_np"])
