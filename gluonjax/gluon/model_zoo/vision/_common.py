"""What every model-zoo constructor shares: loading pretrained weights."""

from __future__ import annotations


def load_pretrained(net, name, pretrained, ctx, root):
    """Load ``name``'s published weights into ``net`` when ``pretrained``; return ``net``."""
    if pretrained:
        from ..model_store import get_model_file

        net.load_parameters(get_model_file(name, root=root), ctx=ctx)
    return net
