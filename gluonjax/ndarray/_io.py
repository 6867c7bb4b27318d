"""``nd.save`` / ``nd.load`` (placeholder)."""


def save(fname, data):
    raise NotImplementedError


def load(fname):
    raise NotImplementedError
