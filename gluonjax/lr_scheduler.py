"""Learning-rate schedules (``mx.lr_scheduler``), MXNet 1.x semantics.

A scheduler maps ``num_update`` (the largest update count over all weights) to a
learning rate. As in MXNet, Factor/MultiFactor schedulers are stateful (they
lower ``base_lr`` as ``num_update`` passes each step and never raise it again),
and Poly/Cosine keep the last value once ``num_update`` exceeds ``max_update``.
"""

from __future__ import annotations

import logging
import math

from .base import InvalidArgumentError

__all__ = [
    "LRScheduler",
    "FactorScheduler",
    "MultiFactorScheduler",
    "PolyScheduler",
    "CosineScheduler",
]


class LRScheduler:
    """Base class of learning-rate schedulers.

    Parameters
    ----------
    base_lr : float, default 0.01
    warmup_steps : int, default 0
        Updates spent warming up before the schedule proper.
    warmup_begin_lr : float, default 0
        Learning rate at update 0 of the warm-up.
    warmup_mode : {'linear', 'constant'}
        Linear ramp from ``warmup_begin_lr`` to ``base_lr``, or ``warmup_begin_lr``
        held constant.
    """

    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"):
        if not isinstance(warmup_steps, int):
            raise InvalidArgumentError(f"warmup_steps must be an int, got {warmup_steps!r}")
        if warmup_begin_lr > base_lr:
            raise InvalidArgumentError("Base lr has to be higher than warmup_begin_lr")
        if warmup_steps < 0:
            raise InvalidArgumentError("Warmup steps has to be positive or 0")
        if warmup_mode not in ("linear", "constant"):
            raise InvalidArgumentError("Supports only linear and constant modes of warmup")
        self.base_lr = base_lr
        self.warmup_steps = warmup_steps
        self.warmup_final_lr = base_lr
        self.warmup_begin_lr = warmup_begin_lr
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update):
        """Learning rate at ``num_update < warmup_steps``."""
        if num_update >= self.warmup_steps:
            raise InvalidArgumentError(
                f"num_update {num_update} is past the {self.warmup_steps} warm-up steps"
            )
        if self.warmup_mode == "linear":
            frac = float(num_update) / float(self.warmup_steps)
            return self.warmup_begin_lr + (self.warmup_final_lr - self.warmup_begin_lr) * frac
        return self.warmup_begin_lr

    def __call__(self, num_update):
        raise NotImplementedError("must override this")


class FactorScheduler(LRScheduler):
    """Multiply the learning rate by ``factor`` every ``step`` updates.

    ``lr = base_lr * factor ** floor((num_update - 1) / step)``, never below
    ``stop_factor_lr``.

    Parameters
    ----------
    step : int
    factor : float, default 1
    stop_factor_lr : float, default 1e-8
    """

    def __init__(
        self,
        step,
        factor=1,
        stop_factor_lr=1e-8,
        base_lr=0.01,
        warmup_steps=0,
        warmup_begin_lr=0,
        warmup_mode="linear",
    ):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if step < 1:
            raise InvalidArgumentError("Schedule step must be greater or equal than 1 round")
        if factor > 1.0:
            raise InvalidArgumentError("Factor must be no more than 1 to make lr reduce")
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr *= self.factor
            if self.base_lr < self.stop_factor_lr:
                self.base_lr = self.stop_factor_lr
            logging.info("Update[%d]: learning rate is now %0.5e", num_update, self.base_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Multiply the learning rate by ``factor`` once ``num_update`` passes each step.

    Parameters
    ----------
    step : list of int
        Strictly increasing update counts.
    factor : float, default 1
    """

    def __init__(
        self, step, factor=1, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"
    ):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(step, list) or not step:
            raise InvalidArgumentError(f"step must be a non-empty list of ints, got {step!r}")
        for i, s in enumerate(step):
            if i and s <= step[i - 1]:
                raise InvalidArgumentError("Schedule step must be an increasing integer list")
            if s < 1:
                raise InvalidArgumentError("Schedule step must be greater or equal than 1 round")
        if factor > 1.0:
            raise InvalidArgumentError("Factor must be no more than 1 to make lr reduce")
        self.step = step
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind < len(self.step) and num_update > self.step[self.cur_step_ind]:
            self.count = self.step[self.cur_step_ind]
            self.cur_step_ind += 1
            self.base_lr *= self.factor
            logging.info("Update[%d]: learning rate is now %0.5e", num_update, self.base_lr)
        return self.base_lr


class PolyScheduler(LRScheduler):
    """Polynomial decay to ``final_lr`` at ``max_update``.

    ``lr = final_lr + (base_lr - final_lr) * (1 - (n - warmup_steps)/(max_update -
    warmup_steps)) ** pwr`` for ``n <= max_update``.

    Parameters
    ----------
    max_update : int
    base_lr : float, default 0.01
    pwr : float, default 2
    final_lr : float, default 0
    """

    def __init__(
        self,
        max_update,
        base_lr=0.01,
        pwr=2,
        final_lr=0,
        warmup_steps=0,
        warmup_begin_lr=0,
        warmup_mode="linear",
    ):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(max_update, int):
            raise InvalidArgumentError(f"max_update must be an int, got {max_update!r}")
        if max_update < 1:
            raise InvalidArgumentError("maximum number of updates must be strictly positive")
        self.power = pwr
        self.base_lr_orig = self.base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = self.max_update - self.warmup_steps

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            frac = float(num_update - self.warmup_steps) / float(self.max_steps)
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * pow(
                1 - frac, self.power
            )
        return self.base_lr


class CosineScheduler(LRScheduler):
    """Cosine decay to ``final_lr`` at ``max_update``.

    ``lr = final_lr + (base_lr - final_lr) * (1 + cos(pi * (n - warmup_steps) /
    (max_update - warmup_steps))) / 2`` for ``n <= max_update``.

    Parameters
    ----------
    max_update : int
    base_lr : float, default 0.01
    final_lr : float, default 0
    """

    def __init__(
        self,
        max_update,
        base_lr=0.01,
        final_lr=0,
        warmup_steps=0,
        warmup_begin_lr=0,
        warmup_mode="linear",
    ):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(max_update, int):
            raise InvalidArgumentError(f"max_update must be an int, got {max_update!r}")
        if max_update < 1:
            raise InvalidArgumentError("maximum number of updates must be strictly positive")
        self.base_lr_orig = base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = self.max_update - self.warmup_steps

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            frac = (num_update - self.warmup_steps) / self.max_steps
            decay = (1 + math.cos(math.pi * frac)) / 2
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * decay
        return self.base_lr
