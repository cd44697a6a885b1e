"""queue.py's _to_component is the one definition of converting a Python value to a component;
bind_queue.cc's QueueOps takes the values it can convert exactly in C++ and declines the others.
Here every (dtype, value) of a grid is enqueued both ways: the same tensor, or the same error and
warnings."""
import warnings

import numpy as np
import pytest

import sluice
from sluice.queue import FIFOQueue

DTYPES = [sluice.bool, sluice.int8, sluice.uint8, sluice.int16, sluice.uint16, sluice.int32, sluice.uint32,
          sluice.int64, sluice.uint64, sluice.float16, sluice.bfloat16, sluice.float32, sluice.float64, sluice.string]

VALUES = [True, False, 0, 1, -1, 127, 128, 255, 256, -129, 2**31 - 1, 2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**63,
          2**64 - 1, 2**64, -2**63, -2**63 - 1, 0.0, -0.0, 1.5, -0.5, 1e38, 1e39, 1e300, float("nan"),
          float("inf"), b"x", "\u00e9", "\ud800", [1, 2], (1.5,), np.int8(-3), np.float64(2.5),
          np.arange(3, dtype=np.int32), np.arange(3, dtype=np.float32), np.array([b"a", b"b"]),
          np.array([300], dtype=np.int64), np.array(True)]


class _PythonPathOnly:
    """QueueOps declining every enqueue: the caller takes the Python path."""

    def __init__(self, ops):
        self._ops = ops

    def enqueue(self, *_):
        return False

    def enqueue_many(self, *_):
        return False

    def __getattr__(self, name):
        return getattr(self._ops, name)


def _outcome(dtype, value, many, python_only):
    q = FIFOQueue(8, dtype)
    if python_only:
        q._ops = _PythonPathOnly(q._ops)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            q.enqueue_many([value]) if many else q.enqueue(value)
        except Exception as e:  # noqa: BLE001 - the outcome compared
            return ("error", type(e).__name__, str(e), [w.category for w in caught])
    rows = [_described(q.dequeue()) for _ in range(q.size())]
    return ("value", rows, [w.category for w in caught])


def _described(component):
    if isinstance(component, bytes):
        return component
    out = np.asarray(component)
    return str(out.dtype), out.shape, out.tolist() if out.dtype == object else out.tobytes()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_enqueue_fast_path_agrees_with_the_python_path(dtype):
    for value in VALUES:
        assert _outcome(dtype, value, False, False) == _outcome(dtype, value, False, True), (dtype.name, value)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_enqueue_many_fast_path_agrees_with_the_python_path(dtype):
    for value in VALUES:
        if isinstance(value, np.ndarray) and value.ndim == 1:
            assert _outcome(dtype, value, True, False) == _outcome(dtype, value, True, True), (dtype.name, value)
