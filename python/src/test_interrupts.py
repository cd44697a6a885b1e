"""Ctrl-C reaches every blocking call: each raises KeyboardInterrupt within 0.2 s of SIGINT.

Each test blocks the main thread (where Python runs signal handlers) in one
call that cannot finish, sends SIGINT from another thread, and checks the
call raised KeyboardInterrupt promptly and left the object usable.
"""

import os
import signal
import threading
import time

import numpy as np
import pytest

import sluice as sl
from sluice import errors

train = sl.train

DELAY = 0.1  # the call is blocked by then
PROMPT = 0.2  # KeyboardInterrupt within this of the signal


def _interrupted(call):
    """Runs `call()` on the main thread; SIGINT after DELAY; returns seconds from signal to exception."""
    assert threading.current_thread() is threading.main_thread()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    sent = {}

    def send():
        time.sleep(DELAY)
        sent["at"] = time.monotonic()
        os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    with pytest.raises(KeyboardInterrupt):
        call()
        time.sleep(5)  # only reached if the call returned: the signal then lands here, too late
    elapsed = time.monotonic() - sent["at"]
    sender.join()
    return elapsed


def _assert_prompt(call):
    elapsed = _interrupted(call)
    assert elapsed < PROMPT, "KeyboardInterrupt %.3f s after SIGINT" % elapsed


@pytest.fixture
def full_queue():
    q = sl.queue.FIFOQueue(1, [sl.int64], shapes=[[]])
    q.enqueue([1])
    return q


@pytest.fixture
def empty_queue():
    return sl.queue.FIFOQueue(4, [sl.int64], shapes=[[]])


def test_enqueue_on_a_full_queue(full_queue):
    _assert_prompt(lambda: full_queue.enqueue([2]))
    assert full_queue.size() == 1


def test_enqueue_many_on_a_full_queue(full_queue):
    _assert_prompt(lambda: full_queue.enqueue_many([np.arange(3)]))


@pytest.mark.parametrize("op", ["dequeue", "dequeue_many", "dequeue_up_to"])
def test_dequeues_on_an_empty_queue(empty_queue, op):
    call = {"dequeue": lambda: empty_queue.dequeue(),
            "dequeue_many": lambda: empty_queue.dequeue_many(2),
            "dequeue_up_to": lambda: empty_queue.dequeue_up_to(2)}[op]
    _assert_prompt(call)
    empty_queue.enqueue([7])
    assert empty_queue.dequeue() == 7  # still usable


def test_close_waiting_behind_a_pending_enqueue(full_queue):
    blocked = threading.Thread(target=lambda: pytest.raises(errors.CancelledError, full_queue.enqueue, [2]),
                               daemon=True)
    blocked.start()
    time.sleep(0.05)
    try:
        _assert_prompt(lambda: full_queue.close(cancel_pending_enqueues=False))
    finally:
        full_queue.close(cancel_pending_enqueues=True)
        blocked.join(5)


def test_reader_read_on_an_empty_filename_queue():
    files = sl.queue.FIFOQueue(4, [sl.string], shapes=[[]])
    reader = sl.io.TFRecordReader()
    _assert_prompt(lambda: reader.read(files))
    _assert_prompt(lambda: reader.read_up_to(files, 4))


def test_batch_dequeue_whose_input_never_comes():
    with train.Graph().as_default():
        q = sl.queue.FIFOQueue(4, [sl.int64], shapes=[[]])
        batch_queue = train.batch(q, batch_size=2)
        coord = train.Coordinator()
        threads = train.start_queue_runners(coord=coord)
        _assert_prompt(batch_queue.dequeue)
        coord.request_stop()
        q.close()  # its reader thread waits on it: an input of the pipeline, not its queue
        coord.join(threads, stop_grace_period_secs=10)


def test_batch_dequeue_before_its_inferred_signature_is_known():
    with train.Graph().as_default():
        batch_queue = train.batch(lambda: 1, batch_size=2)  # never started
        _assert_prompt(batch_queue.dequeue)


def test_session_run_of_a_batch_whose_input_never_comes():
    with train.Graph().as_default():
        q = sl.queue.FIFOQueue(4, [sl.int64], shapes=[[]])
        batch_queue = train.batch(q, batch_size=2)
        with train.Session() as sess:
            coord = train.Coordinator()
            threads = train.start_queue_runners(sess, coord)
            _assert_prompt(lambda: sess.run(batch_queue))
            coord.request_stop()
            q.close()
            coord.join(threads, stop_grace_period_secs=10)


def test_coordinator_join_and_wait_for_stop():
    coord = train.Coordinator()
    forever = threading.Event()
    t = threading.Thread(target=forever.wait, daemon=True)
    t.start()
    _assert_prompt(lambda: coord.join([t]))
    _assert_prompt(coord.wait_for_stop)
    forever.set()
    t.join(5)


def test_join_of_a_cpp_runner_thread():
    with train.Graph().as_default():
        q = sl.queue.FIFOQueue(4, [sl.int64], shapes=[[]])
        batch_queue = train.batch(q, batch_size=2)
        coord = train.Coordinator()
        threads = train.start_queue_runners(coord=coord)
        core_thread = next(t for t in threads if isinstance(t, sl._core.Thread))
        _assert_prompt(lambda: core_thread.join())
        coord.request_stop()
        q.close()
        coord.join(threads, stop_grace_period_secs=10)
        del batch_queue


def test_next_of_a_data_iterator_reading_an_empty_queue(empty_queue):
    it = iter(sl.data.experimental.from_queue(empty_queue))
    _assert_prompt(lambda: next(it))
    empty_queue.enqueue([7])
    assert next(it) == 7  # the interrupted next's element is not lost
    empty_queue.close()
    with pytest.raises(StopIteration):
        next(it)


def test_next_of_a_data_iterator_waiting_for_a_parallel_map():
    release = threading.Event()

    def slow(x):
        release.wait()
        return x

    release.set()  # map probes its function on the first element when it is built
    ds = sl.data.Dataset.range(3).map(slow, num_parallel_calls=2)
    release.clear()
    it = iter(ds)
    _assert_prompt(lambda: next(it))
    release.set()
    assert [int(x) for x in it] == [0, 1, 2]  # usable after, nothing skipped


def test_next_of_a_data_iterator_running_a_python_map_on_the_main_thread():
    def slow(x):
        if x == 1:
            time.sleep(5)  # interrupted by the signal, on this thread
        return x

    it = iter(sl.data.Dataset.range(3).map(slow))
    assert next(it) == 0
    _assert_prompt(lambda: next(it))
    assert next(it) == 2  # usable after; the interrupted element is lost
