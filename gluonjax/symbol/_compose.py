"""Composition of symbols by call: ``net2(data2=net1)`` (placeholder)."""

from ..base import MXNetError


def compose(sym, *args, **kwargs):
    raise MXNetError("symbol composition is not implemented yet")
