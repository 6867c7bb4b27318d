"""Graph walking shared by the autograd tape and symbol graphs."""

from __future__ import annotations


def postorder(roots, children):
    """Nodes reachable from ``roots``, each after all of its ``children(node)``.

    Iterative depth-first search (no recursion limit); children are visited in
    the order ``children`` gives them, so the result is deterministic.
    """
    order, seen = [], set()
    for root in roots:
        stack = [(root, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            for child in reversed(list(children(node))):
                if id(child) not in seen:
                    stack.append((child, False))
    return order
