"""``sluice.random``: the global random seed (``tf.random.set_seed``) and TensorFlow's seed rule.

With a global seed set, an op built without its own seed (``Dataset.shuffle()``,
``list_files``, ``sample_from_datasets``, ``Dataset.random``, the random ops of
``sluice.data.ops``, ...) gets a deterministic op seed: the next draw of a
``random.Random(global_seed)`` as TF eager's ``internal_operation_seed``, so a
program gives the same orders in every run (and a shuffle TF's order). An op
given a seed uses (global seed, its seed). Without a global seed, the default
graph's seed (TF 1's ``set_random_seed``: ``sluice.compat.v1.set_random_seed``,
``sluice.set_random_seed``) applies with its per-graph count of ops, as in TF 1
graph mode. Thread-safe.
"""

import operator
import random as _pyrandom
import sys
import threading

from sluice import _graph

__all__ = ["set_seed", "get_seed"]

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1

_lock = threading.Lock()
_global_seed = None  # guarded by _lock
_rng = None  # random.Random(_global_seed): the op seeds drawn, in order; guarded by _lock


def set_seed(seed):
    """Sets the global random seed (``tf.random.set_seed``) and restarts the sequence of op seeds; None unsets it."""
    global _global_seed, _rng
    seed = None if seed is None else operator.index(seed)
    with _lock:
        _global_seed = seed
        _rng = None if seed is None else _pyrandom.Random(seed)


def get_seed(op_seed):
    """TensorFlow's ``random_seed.get_seed``: the (seed, seed2) of an op given `op_seed` (None or an int).

    (None, None) when neither the op nor a global (or graph) seed gives one: the op is random.
    (0, 0), which ops read as random, becomes (0, 2^31 - 1), as in TF.
    """
    if op_seed is not None:
        op_seed = operator.index(op_seed)
    with _lock:
        global_seed = _global_seed
        if global_seed is not None and op_seed is None:
            op_seed = _rng.randint(0, _MAXINT32)
    if global_seed is None:
        graph = _seeded_graph()
        if graph is not None:
            global_seed = graph.seed
            if op_seed is None:
                with graph._lock:
                    op_seed = graph._seeded_ops
                    graph._seeded_ops += 1
    if global_seed is not None:
        seeds = global_seed % _MAXINT32, op_seed % _MAXINT32
    elif op_seed is not None:
        seeds = DEFAULT_GRAPH_SEED, op_seed % _MAXINT32
    else:
        seeds = None, None
    return (0, _MAXINT32) if seeds == (0, 0) else seeds


def _seeded_graph():
    """The default graph whose seed applies: sluice.compat.v1's (a TF 1 program), else sluice.train's; None
    when neither has a seed."""
    compat = sys.modules.get("sluice.compat.v1._graph")  # only where a program imported it
    graphs = ([compat.get_default_graph()] if compat is not None else []) + [_graph.get_default_graph()]
    return next((g for g in graphs if g.seed is not None), None)
