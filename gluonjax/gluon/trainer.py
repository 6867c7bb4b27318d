"""Trainer: applies an optimizer to a set of Parameters (``gluon.Trainer``).

``step(batch_size)`` updates every parameter in ONE ``jax.jit``-compiled call:
the per-parameter learning rates, weight decays and update counts are traced
arguments, so schedules and ``set_learning_rate`` never recompile.
"""

from __future__ import annotations

import json

import jax
import numpy as np

from .. import optimizer as opt
from .._caches import LRU
from ..autograd._deferred import is_pending, pending_call
from ..base import InvalidArgumentError, MXNetError, StaleGradientError
from ..optimizer._fused_update import apply_update
from ._param_array import write_values
from ._trainer_store import StoreMixin, _LocalUpdater
from .parameter import Parameter
from .parameter_dict import ParameterDict

__all__ = ["Trainer"]


class Trainer(StoreMixin):
    """Updates parameters with an optimizer.

    Parameters
    ----------
    params : ParameterDict, dict or list of Parameter
    optimizer : str or Optimizer
        MXNet name ('sgd', 'adam', ...) or an instance.
    optimizer_params : dict, optional
        e.g. ``{'learning_rate': 0.1, 'momentum': 0.9, 'wd': 1e-4}``.
    kvstore, compression_params, update_on_kvstore
        Accepted for compatibility; one process updates its own parameters.

    Examples
    --------
    >>> import gluonjax as mx
    >>> net = mx.gluon.nn.Dense(1, in_units=2); net.initialize(mx.init.One())
    >>> trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.5})
    >>> x = mx.nd.ones((4, 2))
    >>> with mx.autograd.record():
    ...     loss = net(x).sum()
    >>> loss.backward(); trainer.step(4)
    >>> net.weight.data().asnumpy().tolist()
    [[0.5, 0.5]]
    """

    def __init__(
        self,
        params,
        optimizer,
        optimizer_params=None,
        kvstore="device",
        compression_params=None,
        update_on_kvstore=None,
    ):
        if isinstance(params, (dict, ParameterDict)):
            params = list(params.values())
        if not isinstance(params, (list, tuple)):
            raise InvalidArgumentError(
                f"First argument must be a list or dict of Parameters, got {type(params).__name__}"
            )
        self._params, seen = [], set()
        for p in params:
            if not isinstance(p, Parameter):
                raise InvalidArgumentError(
                    f"Trainer: the first argument must be a list or dict of Parameters, got a "
                    f"list with a {type(p).__name__}; pass net.collect_params()"
                )
            if id(p) not in seen:
                seen.add(id(p))
                self._params.append(p)
        self._param2idx = {p.name: i for i, p in enumerate(self._params)}
        for p in self._params:
            p._set_trainer(self)
        self._contains_sparse_weight = any(p._stype != "default" for p in self._params)
        self._contains_sparse_grad = any(p._grad_stype != "default" for p in self._params)
        self._compression_params = compression_params
        optimizer_params = dict(optimizer_params or {})
        self._scale = float(optimizer_params.get("rescale_grad", 1.0))
        param_dict = dict(enumerate(self._params))
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise MXNetError(
                    "optimizer_params must be None if optimizer is an Optimizer instance"
                )
            self._optimizer = optimizer
            optimizer.param_dict = param_dict
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._states = {}
        self._ctx_states = {}  # contexts after the first, without a key-value store
        self._last_grad = {}
        self._fns = LRU(64, "Trainer updates")  # compiled updates, by plan and indices
        self._updaters = [_LocalUpdater(self)]  # MXNet: one Updater per context
        self._kvstore_params = {"kvstore": kvstore, "update_on_kvstore": update_on_kvstore}
        self._kv_initialized = False
        self._kvstore = None
        self._update_on_kvstore = None
        self._distributed = None
        self._params_to_init = []
        self._reset_kvstore()

    # ------------------------------------------------------------ properties
    @property
    def optimizer(self):
        return self._optimizer

    @property
    def learning_rate(self):
        return self._optimizer.learning_rate

    def set_learning_rate(self, lr):
        """Set the learning rate (not with an lr_scheduler)."""
        self._optimizer.set_learning_rate(lr)

    # ------------------------------------------------------------ steps
    def step(self, batch_size, ignore_stale_grad=False):
        """One update with gradients scaled by ``1/batch_size``."""
        self._optimizer.rescale_grad = self._rescale(batch_size, "step")
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()
        if self._kvstore is None:
            self._update(ignore_stale_grad)
            return
        mesh = self._mesh_update
        if mesh is not None and mesh.valid():  # several devices: one program sums and updates
            active = self._active(ignore_stale_grad)
            if active:
                mesh.step(active, write_grads=not self._update_on_kvstore)
            return
        self._allreduce_grads()
        self._update_with_kvstore(ignore_stale_grad)

    def _rescale(self, batch_size, what):
        try:
            return self._scale / batch_size
        except ZeroDivisionError:
            raise InvalidArgumentError(
                f"Trainer.{what}(batch_size={batch_size!r}): gradients are divided by "
                f"batch_size, which must not be 0; pass the number of samples in the batch "
                f"(e.g. data.shape[0])"
            ) from None

    def allreduce_grads(self):
        """Sum gradients across devices (with a store); the update comes with ``update``."""
        self._check_local_update("allreduce_grads()")
        self._allreduce_grads()

    def update(self, batch_size, ignore_stale_grad=False):
        """The update half of ``step`` (after ``allreduce_grads``)."""
        self._check_local_update("update()")
        self._optimizer.rescale_grad = self._rescale(batch_size, "update")
        self._update(ignore_stale_grad)

    def _active(self, ignore_stale_grad):
        active, last = [], self._last_grad
        for i, p in enumerate(self._params):
            if p._grad_req == "null":
                continue
            d = p._data
            if d is None:
                p._check()
            g = d._grad
            if g is None:
                stale = True
            elif is_pending(g):  # waits on a backward that has not run: fresh
                stale = False
            else:
                stale = g._data is last.get(i, p._grad_token)
            if stale:
                if ignore_stale_grad:
                    continue
                raise StaleGradientError(
                    f"Gradient of Parameter `{p.name}` on context {p.list_ctx()[0]} has not been "
                    f"updated by backward since last `step`. This could mean a bug in your model "
                    f"that made it only use a subset of the Parameters (Blocks) for this "
                    f"iteration. If you are intentionally only using a subset, call step with "
                    f"ignore_stale_grad=True to suppress this warning and skip updating of "
                    f"Parameters with stale gradient"
                )
            active.append(i)
        return active

    def _pending(self):
        """``(active, datas, call, pos)`` when every gradient waits on one planned
        backward that has not run (``autograd._deferred.pending_call``), so none is
        stale; else None."""
        active, datas = [], []
        for i, p in enumerate(self._params):
            if p._grad_req == "null":
                continue
            d = p._data
            if d is None or not is_pending(d._grad):
                return None
            active.append(i)
            datas.append(d)
        call, pos = pending_call([d._grad for d in datas])
        return None if call is None else (active, datas, call, pos)

    def _update(self, ignore_stale_grad=False):
        o = self._optimizer
        found = self._pending()
        if found is None:
            active = self._active(ignore_stale_grad)
            if not active:
                return
            datas = [self._params[i]._data for i in active]
            call, pos = pending_call([d._grad for d in datas])
        else:
            active, datas, call, pos = found
        if self._kvstore is None and any(self._params[i]._copies for i in active):
            self._update_each_context(active)  # no store: each context its own gradient
            return
        all_states, states = self._states, []
        for i, d in zip(active, datas):
            s = all_states.get(i)
            if s is None:
                s = all_states[i] = o.create_state(i, d._data)
            states.append(s)
        weights = [d._data for d in datas]
        # the backward has not run (call): it and the update run as one call
        pending = None if call is None else (call, pos)
        grads = None if call is not None else [d._grad._data for d in datas]
        new_w, new_s = apply_update(o, active, weights, grads, states, self._fns, pending)
        used = [d._grad._data for d in datas]  # delivered by that call, if any
        self._last_grad.update(zip(active, used))
        write_values(datas, new_w)
        all_states.update(zip(active, new_s))
        for i in active:  # the other contexts' copies take the same value (summed gradients)
            if self._params[i]._copies:
                self._params[i]._sync_copies()

    def _update_each_context(self, active):
        """MXNet without a key-value store: every context's copy is updated with its own
        gradient and optimizer state (one Updater per context)."""
        o = self._optimizer
        n_ctx = max(len(self._params[i]._arrays()) for i in active)
        for k in range(n_ctx):
            idx = [i for i in active if k < len(self._params[i]._arrays())]
            datas = [self._params[i]._arrays()[k] for i in idx]
            states_k = self._states if k == 0 else self._ctx_states.setdefault(k, {})
            states = []
            for i, d in zip(idx, datas):
                s = states_k.get(i)
                if s is None:
                    s = states_k[i] = o.create_state(i, d._data)
                states.append(s)
            used = [d._grad._data for d in datas]
            if k:  # the update counts advance once per step, not once per context
                counts = dict(o._index_update_count)
            new_w, new_s = apply_update(o, idx, [d._data for d in datas], used, states, self._fns)
            if k:
                o._index_update_count.clear()
                o._index_update_count.update(counts)
            if k == 0:
                self._last_grad.update(zip(idx, used))
            write_values(datas, new_w)
            states_k.update(zip(idx, new_s))

    def compile_step(self, net, loss_fn, return_output=False):
        """Fuse forward, backward and this trainer's update into one compiled call.

        Returns ``step(data, label, batch_size=None) -> loss``, equivalent to::

            with autograd.record():
                loss = loss_fn(net(data), label)
            loss.backward()
            trainer.step(batch_size)

        With ``return_output=True`` the step returns ``(loss, net(data))``, the
        output of the step's forward (for metrics), from the same compiled call.

        Parameters and optimizer states are donated to the compiled call (their
        old buffers are reused on accelerators).

        Several devices: when the parameters were initialized on a list of contexts
        that are distinct devices (``net.initialize(ctx=[mx.gpu(0), mx.gpu(1)])``),
        ``data`` and ``label`` are the whole batch or its shards, one per context
        (``gluon.utils.split_and_load(batch, ctx)``), and the step is ONE compiled
        program over a mesh of those devices: the parameters and optimizer states
        replicated, the batch sharded along its first axis, XLA summing the gradients.
        The result equals one device on the whole batch (BatchNorm and SyncBatchNorm
        then normalize with the whole batch's statistics); ``batch_size`` defaults to
        the whole batch's size. A batch that does not divide over the devices is
        replicated (the same result, without the speed-up). The trainer keeps the
        optimizer states (with a local store too), so ``save_states`` writes them and
        any number of devices loads them. Logical contexts (``cpu(i)`` beyond jax's
        devices) run on one device, and every context's copy takes the new values.
        """
        from ._fused import FusedStep

        return FusedStep(self, net, loss_fn, return_output)

    # ------------------------------------------------------------ states
    def save_states(self, fname):
        """Save optimizer states (arrays and update counts) without pickle, atomically."""
        from ..ndarray import NDArray, save

        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()
        if self._update_on_kvstore and self._mesh_update is None:
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
            return

        o = self._optimizer
        arrays = {}
        for i, state in self._states.items():
            for j, leaf in enumerate(jax.tree_util.tree_leaves(state)):
                arrays[f"state:{i}:{j}"] = NDArray(leaf)
        meta = {
            "optimizer": type(o).__name__.lower(),
            "num_update": o.num_update,
            "index_update_count": {str(k): v for k, v in o._index_update_count.items()},
            "lr": o.lr,
            "params": [p.name for p in self._params],
        }
        arrays["__meta__"] = NDArray(np.frombuffer(json.dumps(meta).encode(), np.uint8).copy())
        save(fname, arrays)

    def load_states(self, fname):
        """Load states saved by :meth:`save_states`; nothing changes if the file does not fit."""
        from ..ndarray import load

        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()
        if self._update_on_kvstore and self._mesh_update is None:
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer
            self._optimizer.param_dict = dict(enumerate(self._params))
            return
        data = load(fname)
        if not isinstance(data, dict) or "__meta__" not in data:
            raise MXNetError(f"'{fname}' is not a Trainer state file (no __meta__ entry)")
        try:
            meta = json.loads(bytes(np.asarray(data.pop("__meta__").asnumpy(), np.uint8)))
            counts = {int(k): int(v) for k, v in meta["index_update_count"].items()}
        except (ValueError, KeyError, TypeError) as err:
            raise MXNetError(f"'{fname}': damaged Trainer state metadata ({err})") from None
        o = self._optimizer
        if meta.get("optimizer") != type(o).__name__.lower():
            raise MXNetError(
                f"'{fname}' holds states of optimizer {meta.get('optimizer')!r}, "
                f"this Trainer uses {type(o).__name__.lower()!r}"
            )
        new_states = {}
        for i in sorted({int(k.split(":")[1]) for k in data}):
            if i >= len(self._params):
                raise MXNetError(
                    f"'{fname}' has states for parameter #{i}; this Trainer has "
                    f"{len(self._params)} parameters"
                )
            template = o.create_state(i, self._params[i]._data._data)
            leaves, tree = jax.tree_util.tree_flatten(template)
            got = []
            for j, t in enumerate(leaves):
                arr = data.get(f"state:{i}:{j}")
                if arr is None or arr.shape != t.shape:
                    raise MXNetError(
                        f"'{fname}': state {j} of parameter #{i} is missing or has the wrong shape"
                    )
                got.append(arr._data.astype(t.dtype))
            new_states[i] = jax.tree_util.tree_unflatten(tree, got)
        self._states = new_states
        o._index_update_count = counts
        o.num_update = int(meta["num_update"])
        if o.lr_scheduler is None:
            o.lr = meta.get("lr", o.lr)
        self._last_grad = {}
