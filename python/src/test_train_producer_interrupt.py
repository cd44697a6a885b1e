"""Calling a native producer directly answers Ctrl-C and takes a timeout, as a queue dequeue does.

A producer called from Python blocks without the GIL while its input is
empty (an empty queue to dequeue from, an empty filename queue). Its queue
waits run Python's signal check on the main thread, so SIGINT raises
KeyboardInterrupt within a fraction of a second, and ``timeout=`` raises
DeadlineExceededError. The defect: only SIGKILL ended such a call.
"""

import os
import signal
import threading
import time

import numpy as np
import pytest

from sluice import dtypes
from sluice import errors
from sluice import io
from sluice import queue as sq
from sluice import train

_SIGNAL_AFTER = 0.3
_PROMPT = 0.2  # seconds from the signal to KeyboardInterrupt


def _empty_filename_queue():
    return sq.FIFOQueue(4, [dtypes.string], shapes=[[]])


def _dequeue_producer():
    return train.dequeue_producer(sq.FIFOQueue(4, [dtypes.int32], shapes=[[]]))


def _read_producer():
    return train.read_producer(io.TFRecordReader(), _empty_filename_queue())


def _read_up_to_producer():
    return train.read_up_to_producer(io.TFRecordReader(), _empty_filename_queue(), 4)


def _parse_over_read_producer():
    return train.read_producer(io.TFRecordReader(), _empty_filename_queue()).map_parse_example(
        {"x": io.FixedLenFeature([], dtypes.int64)})


def _filter_rejecting_everything():
    return train.limit_epochs(np.int64(1), None).map_filter(lambda x: False)


_PRODUCERS = {
    "dequeue": _dequeue_producer,
    "read": _read_producer,
    "read_up_to": _read_up_to_producer,
    "parse_over_read": _parse_over_read_producer,
    "filter_rejecting_everything": _filter_rejecting_everything,
}


def _interrupted_after(call):
    """Seconds from a SIGINT (sent by another thread) to `call` raising KeyboardInterrupt."""
    sent = []

    def interrupt():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(_SIGNAL_AFTER, interrupt)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            call()
        return time.monotonic() - sent[0]
    finally:
        timer.cancel()
        timer.join()


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", sorted(_PRODUCERS))
def test_sigint_interrupts_a_blocked_native_producer_call(kind):
    producer = _PRODUCERS[kind]()
    assert _interrupted_after(producer) < _PROMPT
    # The core producer, called as it is, answers the same way.
    assert _interrupted_after(producer.core) < _PROMPT


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", sorted(_PRODUCERS))
def test_timeout_ends_a_blocked_native_producer_call(kind):
    producer = _PRODUCERS[kind]()
    t0 = time.monotonic()
    with pytest.raises(errors.DeadlineExceededError, match="Timed out waiting for notification"):
        producer(timeout=0.1)
    assert 0.1 <= time.monotonic() - t0 < 5


def test_producer_still_delivers_after_an_interrupted_call():
    q = sq.FIFOQueue(4, [dtypes.int32], shapes=[[]])
    producer = train.dequeue_producer(q)
    _interrupted_after(producer)
    q.enqueue(np.int32(7))
    assert producer(timeout=5) == 7


def test_negative_timeout_is_a_value_error():
    with pytest.raises(ValueError, match="timeout"):
        _dequeue_producer()(timeout=-1)
