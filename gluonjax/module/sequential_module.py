"""SequentialModule: modules chained one after another (``mx.mod.SequentialModule``).

Each module's outputs are the next module's data; ``backward`` hands each module's
input gradients to the module before it as its output gradients. Modules added with
``take_labels=True`` get the batch's labels (and compute the metric); with
``auto_wiring=True`` the previous outputs are renamed to the module's data names.
"""

from __future__ import annotations

import copy
import logging

from ..base import DuplicateParameterError, InvalidArgumentError, MXNetError
from ..initializer import Uniform
from ..io import DataDesc
from .base_module import BaseModule

__all__ = ["SequentialModule"]


class SequentialModule(BaseModule):
    """A container that runs its modules as a chain.

    Parameters
    ----------
    logger : logging.Logger or module, default :mod:`logging`

    Examples
    --------
    >>> import gluonjax as mx
    >>> fc1 = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=4, name='fc1')
    >>> mod1 = mx.mod.Module(mx.sym.Activation(fc1, act_type='relu'), label_names=[])
    >>> fc2 = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, name='fc2')
    >>> mod2 = mx.mod.Module(mx.sym.SoftmaxOutput(fc2, name='softmax'))
    >>> seq = mx.mod.SequentialModule().add(mod1).add(mod2, take_labels=True, auto_wiring=True)
    >>> seq.bind(data_shapes=[('data', (2, 5))], label_shapes=[('softmax_label', (2,))])
    >>> seq.init_params()
    >>> seq.forward(mx.io.DataBatch([mx.nd.ones((2, 5))], [mx.nd.zeros((2,))]))
    >>> seq.get_outputs()[0].shape
    (2, 3)
    """

    META_TAKE_LABELS = "take_labels"
    META_AUTO_WIRING = "auto_wiring"

    def __init__(self, logger=logging):
        super().__init__(logger=logger)
        self._modules = []
        self._metas = []
        self._label_shapes = None
        self._meta_keys = {
            getattr(SequentialModule, k) for k in dir(SequentialModule) if k.startswith("META_")
        }

    def add(self, module, **kwargs):
        """Append ``module`` to the chain; the container must be bound again.

        Parameters
        ----------
        module : BaseModule
        take_labels : bool, default False
            The module gets the batch's labels (every such module gets the same ones).
        auto_wiring : bool, default False
            Rename the previous module's outputs to this module's ``data_names``.

        Returns
        -------
        SequentialModule
            ``self``, so that calls can be chained.
        """
        if not isinstance(module, BaseModule):
            raise InvalidArgumentError(
                f"SequentialModule.add: expected a module (mx.mod.Module, ...), got "
                f"{type(module).__name__}"
            )
        unknown = sorted(k for k in kwargs if k not in self._meta_keys)
        if unknown:
            raise InvalidArgumentError(
                f"SequentialModule.add: unknown meta {unknown} (a typo?); the known ones are "
                f"{sorted(self._meta_keys)}"
            )
        self._modules.append(module)
        self._metas.append(dict(kwargs))
        self.binded = False
        self.params_initialized = False
        self.optimizer_initialized = False
        return self

    def _takes_labels(self, i):
        return bool(self._metas[i].get(self.META_TAKE_LABELS, False))

    def _need(self, what, params=False, optimizer=False):
        ok = self.binded and (self.params_initialized or not params)
        ok = ok and (self.optimizer_initialized or not optimizer)
        if not ok:
            steps = ["bind()"] + ["init_params()"] * params + ["init_optimizer()"] * optimizer
            raise MXNetError(f"SequentialModule.{what}: call {', '.join(steps)} (or fit) first")

    # ------------------------------------------------------------ properties
    @property
    def data_names(self):
        """The first module's data names."""
        return self._modules[0].data_names if self._modules else []

    @property
    def output_names(self):
        """The last module's output names."""
        return self._modules[-1].output_names if self._modules else []

    @property
    def data_shapes(self):
        """The first module's data shapes."""
        self._need("data_shapes")
        return self._modules[0].data_shapes

    @property
    def label_shapes(self):
        """The label shapes given to ``bind`` (None when no module takes labels)."""
        self._need("label_shapes")
        return self._label_shapes

    @property
    def output_shapes(self):
        """The last module's output shapes."""
        self._need("output_shapes")
        return self._modules[-1].output_shapes

    # ------------------------------------------------------------ parameters
    def get_params(self):
        """``(arg_params, aux_params)`` of all the modules, merged into two dicts."""
        self._need("get_params", params=True)
        arg_params, aux_params = {}, {}
        for module in self._modules:
            arg, aux = module.get_params()
            arg_params.update(arg)
            aux_params.update(aux)
        return arg_params, aux_params

    def init_params(
        self,
        initializer=Uniform(0.01),  # noqa: B008
        arg_params=None,
        aux_params=None,
        allow_missing=False,
        force_init=False,
        allow_extra=False,
    ):
        """Initialise every module's parameters (see :meth:`Module.init_params`); each
        module takes its own names from ``arg_params``/``aux_params``. Two modules with a
        parameter of the same name raise :class:`~gluonjax.base.DuplicateParameterError`."""
        if self.params_initialized and not force_init:
            return
        self._need("init_params")
        for module in self._modules:
            module.init_params(
                initializer=initializer,
                arg_params=arg_params,
                aux_params=aux_params,
                allow_missing=allow_missing,
                force_init=force_init,
                allow_extra=allow_extra,
            )
        owners = ({}, {})
        for i, module in enumerate(self._modules):
            for known, names in zip(owners, module.get_params(), strict=True):
                for name in names:
                    if name in known:
                        j = known[name]
                        raise DuplicateParameterError(
                            f"SequentialModule: duplicated parameter name '{name}' in module "
                            f"{i} ({type(module).__name__}), already used in module {j} "
                            f"({type(self._modules[j]).__name__}); give the layers of the "
                            f"modules different names"
                        )
                    known[name] = i
        self.params_initialized = True

    # ------------------------------------------------------------ binding
    def bind(
        self,
        data_shapes,
        label_shapes=None,
        for_training=True,
        inputs_need_grad=False,
        force_rebind=False,
        shared_module=None,
        grad_req="write",
    ):
        """Bind every module: each one's data shapes are the previous one's output shapes.

        Parameters
        ----------
        data_shapes, label_shapes : list of DataDesc or (name, shape)
            For the first module / for the modules that take labels.
        for_training : bool
        inputs_need_grad : bool
            Gradients of the first module's data too (all later modules compute their
            input gradients when training, to pass them back).
        force_rebind : bool
        shared_module : None
            Not supported by a SequentialModule.
        grad_req : str, list or dict
        """
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if inputs_need_grad and not for_training:
            raise MXNetError("SequentialModule.bind: inputs_need_grad=True needs for_training=True")
        if shared_module is not None:
            raise InvalidArgumentError("SequentialModule.bind: shared_module is not supported")
        if not self._modules:
            raise MXNetError("SequentialModule.bind: the module is empty; add() modules first")
        self.binded = False
        shapes = data_shapes
        any_labels = False
        for i, module in enumerate(self._modules):
            labels = label_shapes if self._takes_labels(i) else None
            any_labels = any_labels or self._takes_labels(i)
            if self._metas[i].get(self.META_AUTO_WIRING, False):
                names = module.data_names
                if len(names) != len(shapes):
                    raise MXNetError(
                        f"SequentialModule: module {i} ({type(module).__name__}) takes "
                        f"{len(names)} data inputs {list(names)}, but the previous module "
                        f"gives {len(shapes)}: {[tuple(s) for s in shapes]}"
                    )
                shapes = [(name, _shape(s)) for name, s in zip(names, shapes, strict=True)]
            module.bind(
                data_shapes=shapes,
                label_shapes=labels,
                for_training=for_training,
                inputs_need_grad=bool(inputs_need_grad or (for_training and i > 0)),
                force_rebind=force_rebind,
                shared_module=None,
                grad_req=grad_req,
            )
            shapes = module.output_shapes
        self._label_shapes = label_shapes if any_labels else None
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self.binded = True

    def init_optimizer(
        self,
        kvstore="local",
        optimizer="sgd",
        optimizer_params=(("learning_rate", 0.01),),
        force_init=False,
    ):
        """Create every module's optimizer (see :meth:`Module.init_optimizer`)."""
        self._need("init_optimizer", params=True)
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        for module in self._modules:
            module.init_optimizer(
                kvstore=kvstore,
                optimizer=optimizer,
                optimizer_params=optimizer_params,
                force_init=force_init,
            )
        self.optimizer_initialized = True

    # ------------------------------------------------------------ computation
    def forward(self, data_batch, is_train=None):
        """Run the modules in order, each on the previous one's outputs."""
        self._need("forward", params=True)
        batch = copy.copy(data_batch)
        last = len(self._modules) - 1
        for i, module in enumerate(self._modules):
            if self._takes_labels(i):
                module.forward(batch, is_train=is_train)
            else:  # a module without labels is given none (nor their shapes)
                unlabelled = copy.copy(batch)
                unlabelled.label = unlabelled.provide_label = None
                module.forward(unlabelled, is_train=is_train)
            if i == last:
                break
            batch.data = module.get_outputs()
            if getattr(batch, "provide_data", None) is not None:
                names = [name for name, _ in module.output_shapes]
                nxt = self._modules[i + 1]
                if self._metas[i + 1].get(self.META_AUTO_WIRING, False):
                    names = list(nxt.data_names)
                batch.provide_data = [
                    DataDesc(n, tuple(x.shape)) for n, x in zip(names, batch.data, strict=False)
                ]

    def backward(self, out_grads=None):
        """Run the modules' backward in reverse; each gets the next one's input gradients."""
        self._need("backward", params=True)
        for i in range(len(self._modules) - 1, -1, -1):
            module = self._modules[i]
            module.backward(out_grads=out_grads)
            if i > 0:
                out_grads = module.get_input_grads()

    def update(self):
        """Apply every module's optimizer."""
        self._need("update", params=True, optimizer=True)
        for module in self._modules:
            module.update()

    def get_outputs(self, merge_multi_context=True):
        """The last module's outputs."""
        self._need("get_outputs", params=True)
        return self._modules[-1].get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """The gradients of the first module's data (bind with ``inputs_need_grad=True``)."""
        self._need("get_input_grads", params=True)
        if not self.inputs_need_grad:
            raise MXNetError(
                "SequentialModule.get_input_grads: bind with inputs_need_grad=True first"
            )
        return self._modules[0].get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` from every module that takes labels."""
        self._need("update_metric", params=True)
        for i, module in enumerate(self._modules):
            if self._takes_labels(i):
                module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        """Install ``mon`` on every module's executors."""
        self._need("install_monitor")
        for module in self._modules:
            module.install_monitor(mon)


def _shape(desc):
    """The shape of a ``DataDesc`` or ``(name, shape)`` pair."""
    return tuple(desc.shape) if isinstance(desc, DataDesc) else tuple(desc[1])
