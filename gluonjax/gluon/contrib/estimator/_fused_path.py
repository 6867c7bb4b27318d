"""The Estimator's fast path: a training batch as ONE compiled call
(``Trainer.compile_step``: forward, backward and update), where that gives exactly
what the plain loop (record, backward, ``GradientUpdateHandler``'s ``trainer.step``)
gives."""

from __future__ import annotations

from ....base import HybridizationError
from ...hybrid import HybridBlock
from ._checkpoint import CheckpointHandler
from ._logging import LoggingHandler
from .batch_processor import BatchProcessor
from .event_handler import (
    EarlyStoppingHandler,
    GradientUpdateHandler,
    MetricHandler,
    StoppingHandler,
    ValidationHandler,
)

__all__ = ["plan"]

# Handlers known not to read gradients (a user handler might, between or after steps;
# the compiled step never writes them).
_BUILTIN = (
    StoppingHandler,
    MetricHandler,
    ValidationHandler,
    LoggingHandler,
    CheckpointHandler,
    EarlyStoppingHandler,
    GradientUpdateHandler,
)

PLAIN = "plain loop (autograd.record, backward, Trainer.step per batch)"
FUSED = "fused step (Trainer.compile_step: forward, backward and update in one compiled call)"


def _static_reason(est, handlers, batch_axis):
    """Why the fused step cannot be used for this fit, or None."""
    if type(est.batch_processor) is not BatchProcessor:
        return f"a custom batch processor ({type(est.batch_processor).__name__})"
    if len(est.context) != 1:
        return f"{len(est.context)} contexts"
    if batch_axis != 0:
        return f"batch_axis={batch_axis}"
    net = est.net
    if not isinstance(net, HybridBlock) or not net._active:
        return "the net is not a hybridized HybridBlock (call net.hybridize() to enable it)"
    if getattr(net, "_host_only", False):
        return "the net's forward needs values on the host"
    custom = [type(h).__name__ for h in handlers if type(h) not in _BUILTIN]
    if custom:
        return f"custom event handler(s) {', '.join(custom)} may read gradients"
    updates = [h for h in handlers if isinstance(h, GradientUpdateHandler)]
    if len(updates) != 1:
        return f"{len(updates)} GradientUpdateHandlers"
    params = list(net.collect_params().values()) + list(est.loss.collect_params().values())
    add = [p.name for p in params if p.grad_req == "add"]
    if add:
        return f"grad_req='add' on {add[0]}"
    return None


class FusedFit:
    """The fused training step of one fit; the first batch runs the plain loop, which
    also checks that the loss has one value per sample (``trainer.step``'s batch size)."""

    def __init__(self, est, update_handler):
        self.est, self.update_handler = est, update_handler
        self.ready = False
        self.step = None

    def check_probe(self, data, loss, pred):
        """After a plain batch: whether the following batches may take the fused step
        (None) or why not (a reason; the fit then stays on the plain loop)."""
        if len(loss) != 1 or len(data) != 1 or len(pred) != 1:
            return "several shards per batch"
        if loss[0].ndim == 0 or loss[0].shape[0] != data[0].shape[0]:
            return (
                f"the loss has shape {tuple(loss[0].shape)} for a batch of "
                f"{tuple(data[0].shape)} (the update's batch size would differ)"
            )
        trainer = self.est.trainer
        if trainer._kvstore is not None or trainer._update_on_kvstore:
            return "the trainer updates through a key-value store"
        self.ready = True
        return None

    def fit_batch(self, batch):
        """``(data, label, pred, loss)`` of one fused step (parameters updated)."""
        est = self.est
        data, label = est.batch_processor._get_data_and_label(batch, est.context, 0)
        cached = getattr(est, "_fused_step", None)
        key = (id(est.trainer), id(est.net), id(est.loss))
        if cached is None or cached[0] != key:
            cached = (key, est.trainer.compile_step(est.net, est.loss, return_output=True))
            est._fused_step = cached
        loss, out = cached[1](data[0], label[0], batch_size=data[0].shape[0])
        return data, label, [out], [loss]


def plan(est, handlers, batch_axis):
    """``(FusedFit or None, message)`` for this fit; the message names the path."""
    reason = _static_reason(est, handlers, batch_axis)
    if reason is not None:
        return None, f"{PLAIN}; the fused step is not used: {reason}"
    update = next(h for h in handlers if isinstance(h, GradientUpdateHandler))
    return FusedFit(est, update), f"{FUSED}, from the second batch on"


def run_fused(fused, batch, log):
    """The fused step of ``batch``; on a forward the trace cannot follow, None (nothing
    was updated) after logging that the fit goes on with the plain loop."""
    try:
        return fused.fit_batch(batch)
    except HybridizationError as err:
        fused.ready = False
        log(f"Training path: {PLAIN} from here on; the fused step cannot trace the net: {err}")
        return None
