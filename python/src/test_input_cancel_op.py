"""cancel_op of string_input_producer / input_producer (tf.train's input.py).

The C++ runner of the producer calls the Python callable, instead of
``queue.close(cancel_pending_enqueues=True)``, when the Coordinator stops;
its exceptions are logged and ignored, as TensorFlow's
QueueRunner._close_on_stop does.
"""

import logging
import threading

import numpy as np
import pytest

from sluice import errors
from sluice import train

from conftest import wait_until


@pytest.fixture(autouse=True)
def _clean_registry():
    train.clear_queue_runners()
    yield
    train.clear_queue_runners()


class _CancelOp:
    """Counts its calls, remembers their threads, then closes `queue` as the default cancel op does."""

    def __init__(self, error=None, close=True):
        self.queue = None
        self.calls = 0
        self.threads = []
        self._error = error
        self._close = close
        self._lock = threading.Lock()

    def __call__(self):
        with self._lock:
            self.calls += 1
            self.threads.append(threading.current_thread())
        if self._close:
            self.queue.close(cancel_pending_enqueues=True)
        if self._error is not None:
            raise self._error


def _string_producer(cancel_op, **kwargs):
    return train.string_input_producer(["a", "b", "c"], shuffle=False, capacity=2, cancel_op=cancel_op, **kwargs)


def _input_producer(cancel_op, **kwargs):
    return train.input_producer(np.arange(6, dtype=np.int64).reshape(3, 2), shuffle=False, capacity=2,
                                cancel_op=cancel_op, **kwargs)


def _start_blocked(q):
    """Starts the runners and waits until the producer fills q (capacity 2) and blocks."""
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    wait_until(lambda: q.size() == 2, what="the producer to fill the queue")
    return coord, threads


@pytest.mark.parametrize("build", [_string_producer, _input_producer])
def test_cancel_op_runs_once_when_the_coordinator_stops_a_blocked_producer(build):
    cancel = _CancelOp()
    q = cancel.queue = build(cancel)
    coord, threads = _start_blocked(q)
    assert cancel.calls == 0  # not before the stop
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=30)
    assert cancel.calls == 1
    assert not [t for t in threads if t.is_alive()]
    assert q.is_closed() and q.size() == 2  # cancelled, not drained
    assert cancel.threads[0] is not threading.main_thread()  # the C++ close-on-stop thread


def test_cancel_op_replaces_the_default_close():
    # A cancel op that does not close the queue leaves the producer blocked on
    # it, as in TensorFlow: the default close(cancel_pending_enqueues=True) is
    # not run as well.
    cancel = _CancelOp(close=False)
    q = cancel.queue = _string_producer(cancel)
    coord, threads = _start_blocked(q)
    coord.request_stop()
    with pytest.raises(RuntimeError, match="Coordinator stopped with threads still running: "
                                           "QueueRunnerThread-input_producer.*fifo_queue-enqueue"):
        coord.join(threads, stop_grace_period_secs=0.2)
    assert cancel.calls == 1 and not q.is_closed()
    q.close(cancel_pending_enqueues=True)  # what the default would have done: the producer ends
    for t in threads:
        t.join(30)
        assert not t.is_alive()


def test_an_exception_from_cancel_op_is_logged_and_ignored(caplog):
    caplog.set_level(logging.DEBUG, logger="sluice.train")
    cancel = _CancelOp(error=ValueError("cancel failed"))
    q = cancel.queue = _string_producer(cancel)
    coord, threads = _start_blocked(q)
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=30)  # TF ignores cancel_op's errors: nothing raised
    assert cancel.calls == 1
    assert not [t for t in threads if t.is_alive()]
    ignored = [r for r in caplog.records if r.name == "sluice.train" and r.getMessage() ==
               "Ignored exception: cancel failed"]
    assert len(ignored) == 1 and ignored[0].levelno == logging.DEBUG
    assert train.get_queue_runners()[0].exceptions_raised == []


def test_cancel_op_is_not_called_when_the_input_ends_without_a_stop():
    cancel = _CancelOp()
    q = cancel.queue = _string_producer(cancel, num_epochs=1)
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    got = []
    while True:
        try:
            got.append(q.dequeue(timeout=30))
        except errors.OutOfRangeError:
            break
    assert got == [b"a", b"b", b"c"] and cancel.calls == 0
    coord.request_stop()  # the close-on-stop thread now runs it, on an already closed queue
    coord.join(threads, stop_grace_period_secs=30)
    assert cancel.calls == 1


def test_without_cancel_op_a_stop_closes_the_queue_cancelling_enqueues():
    q = _string_producer(None)
    coord, threads = _start_blocked(q)
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=30)
    assert q.is_closed() and q.size() == 2
    assert not [t for t in threads if t.is_alive()]


def test_cancel_op_goes_to_the_new_runner_of_a_shared_queue():
    first = _string_producer(None, shared_name="shared_names")
    cancel = _CancelOp()
    second = cancel.queue = _string_producer(cancel, shared_name="shared_names")
    assert first.queue_ref == second.queue_ref
    assert len(train.get_default_graph().registry.runners()) == 2
    coord, threads = _start_blocked(second)
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=30)
    assert cancel.calls == 1  # once: the first runner keeps the default cancel op
    assert not [t for t in threads if t.is_alive()]


def test_cancel_op_must_be_a_callable():
    with pytest.raises(TypeError, match="cancel_op must be a callable"):
        train.input_producer(np.zeros((2, 2)), cancel_op=42)
    assert len(train.get_default_graph().registry.runners()) == 0
