"""Exceptions of user code run by C++ runner threads never end the process.

A Python producer, a keep_input predicate, a map_filter / map_filter_rows
function or a cancel_op may raise any exception, including one whose
``__str__`` raises or returns a non-string, or one that refuses attributes.
The runner turns it into a status, and ``coord.join`` raises the original
exception object. Each case runs in a subprocess: the defect was a SIGABRT
(std::terminate of an escaped nanobind::python_error).
"""

import os
import subprocess
import sys

import numpy as np
import pytest

from sluice import errors
from sluice import queue as sq
from sluice import train

_PRELUDE = """
import numpy as np
import sluice as sl

class BadStr(Exception):
    def __str__(self):
        raise RuntimeError("str failed")

class IntStr(ValueError):
    def __str__(self):
        return 42

class NoAttrs(Exception):
    def __setattr__(self, name, value):
        raise TypeError("no attributes")

class BadStrOpError(sl.errors.InvalidArgumentError):
    error_code = "not a code"

    def __init__(self):
        super().__init__(None, None, "unused")

    @property
    def message(self):
        raise RuntimeError("no message")

def raiser(exc_type):
    def fn(*args):
        raise exc_type()
    return fn

def join(make_batch, exc_type):
    make_batch(raiser(exc_type))
    coord = sl.train.Coordinator()
    threads = sl.train.start_queue_runners(coord=coord)
    try:
        coord.join(threads, stop_grace_period_secs=5)
        print("join raised nothing")
    except BaseException as e:
        print("join raised", type(e).__name__, type(e) is exc_type)
    return coord
"""

_BATCHERS = {
    "producer": "lambda f: sl.train.batch(f, batch_size=1, dtypes=[sl.int64], shapes=[[]])",
    "keep_input": "lambda f: sl.train.maybe_batch(lambda: np.int64(1), f, batch_size=1, dtypes=sl.int64, shapes=())",
    "map_filter": "lambda f: sl.train.batch(sl.train.limit_epochs(np.int64(1), None).map_filter(f), batch_size=1)",
    "map_filter_rows": "lambda f: sl.train.maybe_batch(sl.train.limit_epochs(np.arange(3), None), f, "
                       "batch_size=1, enqueue_many=True)",
}


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(sq.__file__)) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.mark.timeout(120)
@pytest.mark.parametrize("where", sorted(_BATCHERS))
@pytest.mark.parametrize("exc_type", ["BadStr", "IntStr", "NoAttrs", "BadStrOpError"])
def test_unprintable_exception_reaches_coord_join_as_itself(where, exc_type):
    script = _PRELUDE + "join(%s, %s)\nprint('process survived')\n" % (_BATCHERS[where], exc_type)
    done = subprocess.run([sys.executable, "-c", script], env=_env(), capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert done.stdout.decode().split("\n")[:2] == ["join raised %s True" % exc_type, "process survived"]


class _BadStr(Exception):
    def __str__(self):
        raise RuntimeError("str failed")


@pytest.mark.timeout(60)
def test_unprintable_exception_status_has_a_fallback_message():
    script = _PRELUDE + "coord = join(%s, BadStr)\nprint(tuple(coord.core.requested_status()[:2]))\n" % (
        _BATCHERS["producer"])
    done = subprocess.run([sys.executable, "-c", script], env=_env(), capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert done.stdout.decode().split("\n")[1] == "(%d, 'BadStr: <unprintable BadStr object>')" % errors.UNKNOWN


@pytest.mark.timeout(60)
def test_cancel_op_with_unprintable_exception_is_ignored():
    def cancel():
        raise _BadStr()

    q = train.string_input_producer([b"a"], num_epochs=None, capacity=1, cancel_op=cancel)
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    q.dequeue()
    coord.request_stop()
    q.close(cancel_pending_enqueues=True)  # what the ignored cancel_op did not do
    coord.join(threads, stop_grace_period_secs=5)


def test_direct_call_raises_the_predicate_exception_itself():
    exc = _BadStr()

    def keep(example):
        raise exc

    p = train.limit_epochs(np.int64(1), None).map_filter(keep)
    with pytest.raises(_BadStr) as info:
        p()
    assert info.value is exc


@pytest.mark.timeout(60)
def test_the_routine_end_of_python_inputs_is_not_stashed():
    # One OutOfRangeError per runner thread: stashing them would push the
    # error coord.join() must raise out of the bounded stash.
    from sluice import _input  # noqa: PLC0415 - the stash is private

    def done():
        raise errors.OutOfRangeError(None, None, "done")

    before = next(_input._stash_ids)
    b = train.batch_join([done] * 80, batch_size=1, dtypes=[np.int64], shapes=[[]])
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    with pytest.raises(errors.OutOfRangeError):
        b.dequeue(timeout=30)
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=10)
    assert next(_input._stash_ids) == before + 1
