"""``CheckpointHandler``: parameters and trainer states every period, the best model,
rotation of old checkpoints and resuming from the newest one."""

from __future__ import annotations

import os
import re
import warnings

import numpy as np

from ...._io.atomic import atomic_write
from ....base import EstimatorSetupError, InvalidArgumentError, MXNetError, file_error
from ....metric import EvalMetric
from ._events import BatchEnd, EpochEnd, TrainBegin, _monitor_op

__all__ = ["CheckpointHandler"]


class CheckpointHandler(TrainBegin, BatchEnd, EpochEnd):
    """Save the model every ``epoch_period`` epochs and/or ``batch_period`` batches.

    Files in ``model_dir``: ``<prefix>-epoch<E>batch<B>.params`` and ``.states`` (the
    trainer's), ``<prefix>-best.params``/``.states`` with ``save_best``, and
    ``<prefix>-symbol.json`` after the first batch when the net is a hybridized
    HybridBlock. Every file is written atomically (an interrupted save leaves the
    previous file intact); the ``.states`` file is written before its ``.params``.

    Parameters
    ----------
    model_dir : str
        Folder of the files (created if needed).
    model_prefix : str, default 'model'
    monitor : EvalMetric, optional
        The metric deciding the best model (with ``save_best``).
    verbose : int, default 0
        1 logs every save.
    save_best : bool, default False
    mode : {'auto', 'min', 'max'}, default 'auto'
        'auto': 'max' for accuracy and F1 metrics, 'min' otherwise.
    epoch_period : int, default 1
    batch_period : int, default None
    max_checkpoints : int, default 5
        Epoch/batch checkpoints kept in ``model_dir`` (the oldest are removed; the best
        one is not counted).
    resume_from_checkpoint : bool, default False
        Load the newest checkpoint found at train begin and train only the remaining
        epochs (or batches).
    """

    def __init__(
        self,
        model_dir,
        model_prefix="model",
        monitor=None,
        verbose=0,
        save_best=False,
        mode="auto",
        epoch_period=1,
        batch_period=None,
        max_checkpoints=5,
        resume_from_checkpoint=False,
    ):
        model_dir = os.fspath(model_dir)
        try:
            os.makedirs(model_dir, exist_ok=True)
        except OSError as err:
            raise file_error(err, model_dir, "creating the checkpoint folder") from None
        if save_best and not isinstance(monitor, EvalMetric):
            raise InvalidArgumentError(
                "To save best model only, please provide one of the metric objects from "
                "estimator.train_metrics and estimator.val_metrics as monitor."
            )
        self.monitor, self.verbose = monitor, verbose
        self.model_dir, self.model_prefix = model_dir, model_prefix
        self.save_best = save_best
        self.epoch_period, self.batch_period = epoch_period, batch_period
        self.current_batch = self.current_epoch = 0
        self.max_checkpoints = max_checkpoints
        self.resume_from_checkpoint = resume_from_checkpoint
        self.saved_checkpoints = []
        self.trained_epoch = self.trained_batch = -1
        if save_best:
            self.monitor_op = _monitor_op(monitor, mode, "CheckpointHandler")
            self.best = np.inf if self.monitor_op is np.less else -np.inf

    # ------------------------------------------------------------------ events
    def train_begin(self, estimator, *args, **kwargs):
        self.current_epoch = self.current_batch = 0
        if self.save_best:
            self.best = np.inf if self.monitor_op is np.less else -np.inf
        if self.resume_from_checkpoint:
            by_batch = bool(estimator.max_batch)
            if (by_batch and (not self.batch_period or self.epoch_period)) or (
                not by_batch and (not self.epoch_period or self.batch_period)
            ):
                unit, fix = (
                    ("batches", "batch_period=N, epoch_period=None")
                    if by_batch
                    else (
                        "epochs",
                        "epoch_period=N, batch_period=None",
                    )
                )
                raise EstimatorSetupError(
                    f"CheckpointHandler: to resume from a checkpoint, save only with the "
                    f"type of period the fit uses: it trains by {unit} here, so pass {fix} "
                    f"(got epoch_period={self.epoch_period!r}, "
                    f"batch_period={self.batch_period!r})"
                )
            self._resume(estimator)

    def batch_end(self, estimator, *args, **kwargs):
        if self.current_batch == 0:  # the architecture, once, after the first batch
            self._save_symbol(estimator, kwargs.get("batch"))
        if self.batch_period and (self.current_batch + 1) % self.batch_period == 0:
            self._save_checkpoint(estimator)
        self.current_batch += 1

    def epoch_end(self, estimator, *args, **kwargs):
        if self.epoch_period and (self.current_epoch + 1) % self.epoch_period == 0:
            self._save_checkpoint(estimator)
        self.current_epoch += 1

    # ------------------------------------------------------------------ saving
    def _save_checkpoint(self, estimator):
        if self.resume_from_checkpoint and self.trained_epoch >= 0:
            epoch = self.current_epoch + self.trained_epoch + 1
            # at an epoch end the batch count is already past the epoch's last batch
            batch = self.current_batch + self.trained_batch + (0 if estimator.max_epoch else 1)
        else:
            epoch, batch = self.current_epoch, self.current_batch
        prefix = f"{self.model_prefix}-epoch{epoch}batch{batch}"
        self._save_params_and_trainer(estimator, prefix)
        if self.verbose > 0:
            estimator.logger.info(
                "[Epoch %d] CheckpointHandler: trained total %d batches, saving model at %s "
                "with prefix: %s",
                self.current_epoch,
                self.current_batch + 1,
                self.model_dir,
                prefix,
            )
        if self.save_best:
            self._save_best(estimator)

    def _save_best(self, estimator):
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(
                RuntimeWarning(
                    f"Skipping save best because {name} is not updated, make sure you pass "
                    f"one of the metric objects estimator.train_metrics and "
                    f"estimator.val_metrics as monitor"
                ),
                stacklevel=3,
            )
            return
        if not self.monitor_op(value, self.best):
            if self.verbose > 0:
                estimator.logger.info(
                    "[Epoch %d] CheckpointHandler: %s did not improve from %0.5f, skipping "
                    "updating best model",
                    self.current_epoch,
                    name,
                    self.best,
                )
            return
        prefix = self.model_prefix + "-best"
        self._save_params_and_trainer(estimator, prefix)
        if self.verbose > 0:
            estimator.logger.info(
                "[Epoch %d] CheckpointHandler: %s improved from %0.5f to %0.5f, updating best "
                "model at %s with prefix: %s",
                self.current_epoch,
                name,
                self.best,
                value,
                self.model_dir,
                prefix,
            )
        self.best = value

    def _save_symbol(self, estimator, batch):
        from ...._ops.jaxops import ExportError
        from ..._export import block_symbol
        from ...hybrid import HybridBlock

        net = estimator.net
        symbol_file = os.path.join(self.model_dir, self.model_prefix + "-symbol.json")
        if isinstance(net, HybridBlock) and net._active:
            example = None
            if getattr(getattr(net, "_cached", None), "input_signature", None) is None:
                example = [batch[0]] if batch is not None else None
            try:
                symbol = block_symbol(net, example)[0]
            except (ExportError, MXNetError) as err:
                estimator.logger.info(
                    "Model architecture(symbol file) is not saved as %s: %s", symbol_file, err
                )
                return
            atomic_write(symbol_file, symbol.tojson().encode("utf-8"))
            return
        estimator.logger.info(
            "Model architecture(symbol file) is not saved, please use HybridBlock to construct "
            "your model, and call net.hybridize() before passing to Estimator in order to save "
            "model architecture as %s.",
            symbol_file,
        )

    def _save_params_and_trainer(self, estimator, file_prefix):
        base = os.path.join(self.model_dir, file_prefix)
        estimator.trainer.save_states(base + ".states")  # first: a .params has its .states
        estimator.net.save_parameters(base + ".params")
        if file_prefix == self.model_prefix + "-best":
            return
        if file_prefix in self.saved_checkpoints:
            self.saved_checkpoints.remove(file_prefix)
        self.saved_checkpoints.append(file_prefix)
        while len(self.saved_checkpoints) > self.max_checkpoints:
            old = self.saved_checkpoints.pop(0)
            for ext in (".params", ".states"):
                try:
                    os.remove(os.path.join(self.model_dir, old + ext))
                except FileNotFoundError:
                    pass

    # ------------------------------------------------------------------ resuming
    def _checkpoints(self):
        """``[(epoch, batch, prefix)]`` of this prefix's checkpoints in model_dir, sorted."""
        pattern = re.compile(re.escape(self.model_prefix) + r"-epoch(\d+)batch(\d+)\.params")
        found = []
        for fname in os.listdir(self.model_dir):
            m = pattern.fullmatch(fname)
            if m:
                found.append((int(m.group(1)), int(m.group(2)), fname[: -len(".params")]))
        return sorted(found)

    def _resume(self, estimator):
        found = self._checkpoints()
        self.saved_checkpoints = [prefix for _, _, prefix in found]
        if not found:
            self.trained_epoch = self.trained_batch = -1
            what = (
                f"{estimator.max_batch} batches"
                if estimator.max_batch
                else f"{estimator.max_epoch} epochs"
            )
            estimator.logger.info(
                "CheckpointHandler: No checkpoint found, training from scratch for %s", what
            )
            return
        self.trained_epoch, self.trained_batch, prefix = found[-1]
        msg = (
            f"CheckpointHandler: Checkpoint resumed from epoch {self.trained_epoch} batch "
            f"{self.trained_batch}, continue to train for "
        )
        if estimator.max_epoch:
            if self.trained_epoch >= estimator.max_epoch - 1:
                raise InvalidArgumentError(
                    f"Found checkpoint {prefix} with maximum number of epoch "
                    f"{estimator.max_epoch} reached, please specify "
                    f"resume_from_checkpoint=False (default value) if you want to train "
                    f"from scratch, or fit for more epochs."
                )
            estimator.max_epoch -= self.trained_epoch + 1
            msg += f"{estimator.max_epoch} epochs "
        if estimator.max_batch:
            if self.trained_batch >= estimator.max_batch - 1:
                raise InvalidArgumentError(
                    f"Found checkpoint {prefix} with maximum number of batch "
                    f"{estimator.max_batch} reached, please specify "
                    f"resume_from_checkpoint=False (default value) if you want to train "
                    f"from scratch, or fit for more batches."
                )
            estimator.max_batch -= self.trained_batch + 1
            msg += f"{estimator.max_batch} batches "
        base = os.path.join(self.model_dir, prefix)
        estimator.net.load_parameters(base + ".params", ctx=estimator.context)
        estimator.trainer.load_states(base + ".states")
        estimator.logger.warning(msg)
