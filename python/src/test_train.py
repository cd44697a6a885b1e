"""sluice.train: Coordinator, LooperThread and QueueRunner (cases from TF's
coordinator_test.py and queue_runner_test.py), through bind_train.cc."""

import _thread
import sys
import threading
import time

import numpy as np
import pytest

import sluice
from sluice import _core
from sluice import errors
from sluice import train
from sluice.queue import FIFOQueue

from conftest import Background, wait_until


def _stop_on_event(coord, wait_for_stop, has_stopped):
    wait_for_stop.wait()
    coord.request_stop()
    has_stopped.set()


def _raise_once_in_loop_until_stop(coord, ex, report_exception):
    try:
        while not coord.should_stop():
            raise ex
    except BaseException as e:
        coord.request_stop(e if report_exception else sys.exc_info())


def _sleep_until_released(release):
    release.wait()


# ---- Coordinator --------------------------------------------------------------------

def test_stop_api():
    coord = train.Coordinator()
    assert not coord.should_stop()
    assert not coord.wait_for_stop(0.01)
    coord.request_stop()
    assert coord.should_stop()
    assert coord.wait_for_stop(0.01)
    assert coord.wait_for_stop(-1)  # a negative timeout just checks


def test_stop_async():
    coord = train.Coordinator()
    go = threading.Event()
    t = threading.Thread(target=lambda: (go.wait(), coord.request_stop()))
    t.start()
    assert not coord.should_stop()
    assert not coord.wait_for_stop(0.01)
    go.set()
    assert coord.wait_for_stop(10)
    assert coord.should_stop()
    t.join()


def test_join():
    coord = train.Coordinator()
    events = [(threading.Event(), threading.Event()) for _ in range(3)]
    threads = [threading.Thread(target=_stop_on_event, args=(coord, w, h)) for w, h in events]
    for t in threads:
        t.start()
    events[1][0].set()
    events[1][1].wait()
    events[0][0].set()
    events[2][0].set()
    coord.join(threads)
    assert not any(t.is_alive() for t in threads)


def test_join_all_registered_and_some_registered():
    for register_all in (True, False):
        coord = train.Coordinator()
        events = [(threading.Event(), threading.Event()) for _ in range(3)]
        threads = [threading.Thread(target=_stop_on_event, args=(coord, w, h)) for w, h in events]
        for i, t in enumerate(threads):
            if register_all or i != 2:
                coord.register_thread(t)
            t.start()
        for w, _ in events:
            w.set()
        coord.join(None if register_all else [threads[2]])
        assert not any(t.is_alive() for t in threads)


def test_join_without_threads_or_stop_returns_at_once():
    coord = train.Coordinator()
    coord.join()
    assert coord.joined


def test_join_grace_expires():
    coord = train.Coordinator()
    release = threading.Event()
    threads = [threading.Thread(target=_sleep_until_released, args=(release,), name="sleeper%d" % i)
               for i in range(2)]
    for t in threads:
        t.start()
    coord.request_stop()
    with pytest.raises(RuntimeError, match="Coordinator stopped with threads still running: sleeper0 sleeper1"):
        coord.join(threads, stop_grace_period_secs=0.02)
    release.set()
    for t in threads:
        t.join()


def test_join_ignore_live_threads():
    coord = train.Coordinator()
    release = threading.Event()
    t = threading.Thread(target=_sleep_until_released, args=(release,))
    t.start()
    coord.request_stop()
    coord.join([t], stop_grace_period_secs=0.01, ignore_live_threads=True)
    release.set()
    t.join()


def test_join_waits_for_threads_that_end_within_the_grace_period():
    coord = train.Coordinator()
    t = threading.Thread(target=lambda: coord.wait_for_stop())
    t.start()
    coord.request_stop()
    coord.join([t], stop_grace_period_secs=10)
    assert not t.is_alive()


@pytest.mark.parametrize("report_exception", [False, True])
def test_join_raises_the_first_reported_exception(report_exception):
    coord = train.Coordinator()
    first = threading.Thread(target=_raise_once_in_loop_until_stop,
                             args=(coord, RuntimeError("First"), report_exception))
    first.start()
    first.join()
    second = threading.Thread(target=_raise_once_in_loop_until_stop,
                              args=(coord, RuntimeError("Second"), report_exception))
    second.start()
    with pytest.raises(RuntimeError, match="First") as info:
        coord.join([first, second])
    assert info.value.__traceback__ is not None  # the thread's traceback survives


def test_join_ignores_out_of_range():
    coord = train.Coordinator()
    t = threading.Thread(target=_raise_once_in_loop_until_stop,
                         args=(coord, errors.OutOfRangeError(None, None, "First"), True))
    t.start()
    coord.join([t])


def test_join_ignores_my_exception_type():
    coord = train.Coordinator(clean_stop_exception_types=(ValueError,))
    t = threading.Thread(target=_raise_once_in_loop_until_stop, args=(coord, ValueError("Clean"), True))
    t.start()
    coord.join([t])


def test_op_error_is_raised_unless_clean():
    coord = train.Coordinator()
    coord.request_stop(errors.DataLossError(None, None, "corrupted record at 12"))
    with pytest.raises(errors.DataLossError, match="corrupted record at 12"):
        coord.join()
    coord2 = train.Coordinator(clean_stop_exception_types=(errors.OpError,))
    coord2.request_stop(errors.DataLossError(None, None, "x"))
    coord2.join()
    coord3 = train.Coordinator(clean_stop_exception_types=(errors.OpError,))
    coord3.request_stop(ValueError("not an OpError"))  # every C++ code is clean here
    with pytest.raises(ValueError, match="not an OpError"):
        coord3.join()


def test_exception_after_plain_stop_is_dropped():
    coord = train.Coordinator()
    coord.request_stop()
    coord.request_stop(RuntimeError("late"))
    coord.join()
    coord.raise_requested_exception()


def test_stop_on_exception_handler():
    coord = train.Coordinator()

    def run():
        with coord.stop_on_exception():
            raise RuntimeError("First")

    t = threading.Thread(target=run)
    t.start()
    with pytest.raises(RuntimeError, match="First"):
        coord.join([t])


def test_raise_requested_exception():
    coord = train.Coordinator()
    coord.raise_requested_exception()
    try:
        raise RuntimeError("Reported")
    except RuntimeError:
        coord.request_stop(sys.exc_info())
    with pytest.raises(RuntimeError, match="Reported"):
        coord.raise_requested_exception()


def test_clear_stop_clears_exception_too():
    coord = train.Coordinator()
    t = threading.Thread(target=_raise_once_in_loop_until_stop, args=(coord, RuntimeError("First"), True))
    t.start()
    with pytest.raises(RuntimeError, match="First"):
        coord.join([t])
    assert coord.joined
    coord.clear_stop()
    assert not coord.should_stop() and not coord.joined
    t = threading.Thread(target=_raise_once_in_loop_until_stop, args=(coord, RuntimeError("Second"), True))
    t.start()
    with pytest.raises(RuntimeError, match="Second"):
        coord.join([t])


def test_request_stop_raises_if_joined():
    coord = train.Coordinator()
    coord.request_stop()
    coord.join()
    try:
        raise RuntimeError("First")
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match="First"):
            coord.request_stop(e)
        with pytest.raises(RuntimeError, match="First"):
            coord.request_stop(sys.exc_info())
    coord.request_stop()  # no exception: fine
    coord.request_stop(errors.OutOfRangeError(None, None, "clean"))  # clean: fine


def test_wait_for_stop_and_join_answer_ctrl_c():
    coord = train.Coordinator()
    timer = threading.Timer(0.05, _thread.interrupt_main)
    timer.start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        coord.wait_for_stop(20)
    assert time.monotonic() - start < 5
    timer.join()
    release = threading.Event()
    t = threading.Thread(target=release.wait)
    t.start()
    timer = threading.Timer(0.05, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        coord.join([t])
    timer.join()
    release.set()
    t.join()


def test_core_thread_join_answers_ctrl_c():
    src = FIFOQueue(10, sluice.float32, shapes=())
    dst = FIFOQueue(10, sluice.float32, shapes=())
    qr = train._transfer_queue_runner(src, dst)
    threads = qr.create_threads(start=True)
    timer = threading.Timer(0.05, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        threads[0].join(20)
    timer.join()
    assert threads[0].is_alive()
    src.close()
    threads[0].join(10)
    assert not threads[0].is_alive()


# ---- LooperThread ------------------------------------------------------------------------

def _stop_at_0(coord, n):
    if n[0] == 0:
        coord.request_stop()
    else:
        n[0] -= 1


def test_looper_target_args():
    n = [3]
    coord = train.Coordinator()
    thread = train.LooperThread.loop(coord, 0, target=_stop_at_0, args=(coord, n))
    coord.join([thread])
    assert n[0] == 0


def test_looper_target_kwargs_and_no_timer():
    n = [3]
    coord = train.Coordinator()
    thread = train.LooperThread.loop(coord, None, target=_stop_at_0, kwargs={"coord": coord, "n": n})
    coord.join([thread])
    assert n[0] == 0


def test_looper_registers_itself_and_reports_errors():
    coord = train.Coordinator()
    calls = []

    def target():
        calls.append(1)
        if len(calls) == 2:
            raise ValueError("looper failed")

    thread = train.LooperThread(coord, 0.001, target=target)
    assert thread.daemon
    thread.start()
    with pytest.raises(ValueError, match="looper failed"):
        coord.join()  # joins the registered looper
    assert len(calls) == 2


def test_looper_start_and_stop_loop():
    events = []

    class Looper(train.LooperThread):
        def start_loop(self):
            events.append("start")

        def run_loop(self):
            events.append("run")
            self._coord.request_stop()

        def stop_loop(self):
            events.append("stop")

    coord = train.Coordinator()
    Looper(coord, None).start()
    coord.join()
    assert events == ["start", "run", "stop"]


def test_looper_argument_errors():
    with pytest.raises(ValueError, match="must be a Coordinator"):
        train.LooperThread(object(), 1)
    with pytest.raises(ValueError, match="require that you also pass 'target'"):
        train.LooperThread(train.Coordinator(), 1, args=(1,))


# ---- QueueRunner ------------------------------------------------------------------------------

class CountUpTo:
    """count_up_to(limit) + enqueue: an enqueue op that ends with OutOfRange."""

    def __init__(self, queue, limit, shared=None):
        self.queue = queue
        self.limit = limit
        self.state = shared if shared is not None else {"n": 0}
        self.lock = threading.Lock()
        self.__name__ = "count_up_to_%d" % limit

    def __call__(self):
        with self.lock:
            n = self.state["n"]
            if n >= self.limit:
                raise errors.OutOfRangeError(None, None, "Reached limit of %d" % self.limit)
            self.state["n"] = n + 1
        self.queue.enqueue(n)


def _drain(q):
    out = []
    try:
        while True:
            out.append(int(q.dequeue(timeout=10)))
    except errors.OutOfRangeError:
        return out


def test_queue_runner_basic():
    q = FIFOQueue(10, sluice.int64, shapes=())
    op = CountUpTo(q, 3)
    qr = train.QueueRunner(q, [op])
    threads = qr.create_threads()
    assert len(threads) == 1 and not threads[0].is_alive()
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert qr.exceptions_raised == []
    assert op.state["n"] == 3
    assert q.is_closed()  # closed by the runner when its only op ran out
    assert _drain(q) == [0, 1, 2]


def test_queue_runner_two_ops_close_after_the_last():
    q = FIFOQueue(100, sluice.int64, shapes=())
    op1, op2 = CountUpTo(q, 3), CountUpTo(q, 30)
    qr = train.QueueRunner(q, [op1, op2])
    threads = qr.create_threads(start=True)
    assert len(threads) == 2
    for t in threads:
        t.join(10)
    assert qr.exceptions_raised == []
    assert op1.state["n"] == 3 and op2.state["n"] == 30
    assert sorted(_drain(q)) == sorted(list(range(3)) + list(range(30)))


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_queue_runner_exceptions_captured_without_coordinator():
    q = FIFOQueue(10, sluice.float32)

    def bad_op():
        raise errors.FailedPreconditionError(None, None, "Attempting to use uninitialized value")

    qr = train.QueueRunner(q, [bad_op, bad_op])
    threads = qr.create_threads(start=True)
    for t in threads:
        t.join(10)
    assert len(qr.exceptions_raised) == 2
    assert all(isinstance(e, errors.FailedPreconditionError) for e in qr.exceptions_raised)
    assert "uninitialized" in str(qr.exceptions_raised[0])
    assert not q.is_closed()  # only the "input exhausted" path closes the queue


def test_queue_runner_real_dequeue_enqueue():
    q0 = FIFOQueue(3, sluice.int64, shapes=())
    q1 = FIFOQueue(10, sluice.int64, shapes=())
    qr0 = train.QueueRunner(q0, [CountUpTo(q0, 3)])

    def move():
        q1.enqueue(q0.dequeue())

    qr1 = train.QueueRunner(q1, [move])
    threads = qr0.create_threads(start=True) + qr1.create_threads(start=True)
    assert sorted(int(q1.dequeue()) for _ in range(3)) == [0, 1, 2]
    with pytest.raises(errors.OutOfRangeError):
        q1.dequeue(timeout=10)  # q0 exhausted and closed -> q1's runner closed q1
    for t in threads:
        t.join(10)
    assert qr0.exceptions_raised == [] and qr1.exceptions_raised == []


def test_queue_runner_respects_coordinator_should_stop():
    q = FIFOQueue(10, sluice.int64, shapes=())
    op = CountUpTo(q, 3)
    qr = train.QueueRunner(q, [op])
    coord = train.Coordinator()
    coord.request_stop()
    threads = qr.create_threads(coord=coord, start=True)
    assert len(threads) == 2  # the op thread and the close-on-stop thread
    coord.join()
    assert op.state["n"] == 0
    assert q.is_closed()  # by the cancel op


def test_queue_runner_request_stop_on_exception():
    q = FIFOQueue(10, sluice.float32)

    def bad_op():
        raise errors.DataLossError(None, None, "corrupted record at 0")

    qr = train.QueueRunner(q, [bad_op])
    coord = train.Coordinator()
    qr.create_threads(coord=coord, start=True)
    with pytest.raises(errors.DataLossError, match="corrupted record at 0"):
        coord.join()
    assert qr.exceptions_raised == []


def test_queue_runner_grace_period_unblocks_enqueue():
    q = FIFOQueue(1, sluice.int64, shapes=())
    op = CountUpTo(q, 1000)
    qr = train.QueueRunner(q, [op])
    coord = train.Coordinator()
    threads = qr.create_threads(coord=coord, start=True)
    wait_until(lambda: q.size() == 1 and op.state["n"] == 2, what="the op to block on the full queue")
    coord.request_stop()  # the cancel op fails the blocked enqueue with Cancelled
    coord.join(stop_grace_period_secs=5)
    assert not any(t.is_alive() for t in threads)


def test_queue_runner_ignores_multi_starts():
    q = FIFOQueue(10, sluice.int64, shapes=())
    op = CountUpTo(q, 3)
    qr = train.QueueRunner(q, [op])
    threads = qr.create_threads()
    assert len(threads) == 1
    assert qr.create_threads() == []  # created but not started: still counted
    for t in threads:
        t.start()
        t.join(10)
    assert len(qr.create_threads()) == 1  # all finished: may create again


def test_queue_runner_thread_names_and_properties():
    q = FIFOQueue(10, sluice.int64, shapes=(), name="input_q")
    op = CountUpTo(q, 1)
    qr = train.QueueRunner(q, [op], queue_closed_exception_types=(errors.OutOfRangeError, errors.CancelledError))
    assert qr.name == "input_q" and qr.queue is q and qr.enqueue_ops == [op]
    assert qr.queue_closed_exception_types == (errors.OutOfRangeError, errors.CancelledError)
    coord = train.Coordinator()
    threads = qr.create_threads(coord=coord, daemon=True)
    assert [t.name for t in threads] == ["QueueRunnerThread-input_q-count_up_to_1",
                                         "QueueRunnerThread-input_q-close_on_stop"]
    assert all(t.daemon for t in threads)
    coord.request_stop()
    coord.join()


def test_queue_runner_argument_errors():
    q = FIFOQueue(10, sluice.int64)
    with pytest.raises(ValueError, match="Must provide queue and enqueue_ops"):
        train.QueueRunner(q, [])
    with pytest.raises(ValueError, match="Must provide queue and enqueue_ops"):
        train.QueueRunner(None, [lambda: None])
    with pytest.raises(TypeError, match="queue_closed_exception_types"):
        train.QueueRunner(q, [lambda: None], queue_closed_exception_types=[errors.OutOfRangeError])
    with pytest.raises(TypeError, match="queue_closed_exception_types"):
        train.QueueRunner(q, [lambda: None], queue_closed_exception_types=(ValueError,))


def test_start_queue_runners():
    q = FIFOQueue(10, sluice.int64, shapes=())
    qr = train.QueueRunner(q, [CountUpTo(q, 3)])
    train.add_queue_runner(qr)
    assert train.get_queue_runners() == [qr]
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    assert len(threads) == 2 and all(t.daemon for t in threads)
    assert _drain(q) == [0, 1, 2]
    coord.request_stop()
    coord.join(threads)


# ---- The shutdown cascade (spec section 12) ------------------------------------------------------

def _pipeline(num_epochs, batch_threads, bad_record=None):
    """filenames -> (T reader threads) -> batch queue, all with QueueRunners."""
    files = [b"file%d" % i for i in range(4)]
    records_per_file = 5
    filenames = FIFOQueue(32, sluice.string, shapes=(), name="input_producer")
    epochs = {"n": 0}

    def produce_filenames():
        if epochs["n"] >= num_epochs:
            raise errors.OutOfRangeError(None, None, "Reached limit of %d" % num_epochs)
        epochs["n"] += 1
        filenames.enqueue_many([files])

    batch_q = FIFOQueue(8, [sluice.string, sluice.int64], shapes=[(), ()], name="batch")

    def read_and_enqueue():
        name = filenames.dequeue()
        for r in range(records_per_file):
            if bad_record is not None and (name, r) == bad_record:
                raise errors.DataLossError(None, None, "corrupted record at %d" % (r * 16))
            batch_q.enqueue((name, r))

    train.add_queue_runner(train.QueueRunner(filenames, [produce_filenames]))
    train.add_queue_runner(train.QueueRunner(batch_q, [read_and_enqueue] * batch_threads))
    return batch_q, len(files) * records_per_file * num_epochs


def test_shutdown_cascade_end_of_epochs():
    batch_q, total = _pipeline(num_epochs=2, batch_threads=3)
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    batches = 0
    try:
        while not coord.should_stop():
            names, recs = batch_q.dequeue_many(3, timeout=20)
            assert names.shape == (3,) and recs.dtype == np.int64
            batches += 1
    except errors.OutOfRangeError:
        pass  # done
    finally:
        coord.request_stop()
    coord.join(threads, stop_grace_period_secs=10)
    assert batches == total // 3  # the final partial batch is dropped
    assert batch_q.size() == total % 3


def test_shutdown_cascade_early_stop_with_producers_blocked():
    batch_q, _ = _pipeline(num_epochs=100, batch_threads=3)
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    batch_q.dequeue_many(2, timeout=20)
    wait_until(lambda: batch_q.size() == 8, what="producers to fill the queue")
    coord.request_stop()  # cancel ops fail the blocked enqueues; Cancelled is then ignored
    start = time.monotonic()
    coord.join(threads, stop_grace_period_secs=10)
    assert time.monotonic() - start < 5


def test_shutdown_cascade_real_error_is_reraised():
    batch_q, _ = _pipeline(num_epochs=2, batch_threads=2, bad_record=(b"file2", 3))
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    with pytest.raises(errors.DataLossError, match="corrupted record at 48"):
        try:
            while not coord.should_stop():
                batch_q.dequeue_many(2, timeout=20)
        except errors.OutOfRangeError:
            pass  # the cancel ops closed the queue
        finally:
            coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)


# ---- C++ runners under the Python Coordinator -----------------------------------------------------

def test_core_runner_cascade_under_python_coordinator():
    src = FIFOQueue(100, sluice.float32, shapes=(2,), name="src")
    dst = FIFOQueue(4, sluice.float32, shapes=(2,), name="dst")
    src.enqueue_many(np.arange(40, dtype=np.float32).reshape(20, 2))
    src.close()
    qr = train._transfer_queue_runner(src, dst, num_threads=2)
    coord = train.Coordinator()
    threads = qr.create_threads(coord=coord, start=True)
    assert all(isinstance(t, _core.Thread) for t in threads) and len(threads) == 3
    assert threads[-1].name == "QueueRunnerThread-dst-close_on_stop"
    rows = []
    try:
        while True:
            rows.extend(dst.dequeue_many(3, timeout=20).tolist())
    except errors.OutOfRangeError:
        rows.extend(dst.dequeue_up_to(3).tolist() if dst.size() else [])
    finally:
        coord.request_stop()
    coord.join(stop_grace_period_secs=10)
    assert sorted(r[0] for r in rows) == list(range(0, 40, 2))
    assert not any(t.is_alive() for t in threads)


def test_core_runner_stops_with_python_coordinator():
    src = FIFOQueue(100, sluice.int64, shapes=())
    dst = FIFOQueue(2, sluice.int64, shapes=())
    src.enqueue_many([np.arange(50)])
    train.add_queue_runner(train._transfer_queue_runner(src, dst))
    producer = train.QueueRunner(FIFOQueue(1, sluice.int64), [lambda: None])  # a Python runner beside it
    train.add_queue_runner(producer)
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    assert sum(isinstance(t, _core.Thread) for t in threads) == 2
    wait_until(lambda: dst.size() == 2, what="the C++ runner to fill dst")
    coord.request_stop()  # the C++ close-on-stop thread cancels dst's blocked enqueue
    coord.join(threads, stop_grace_period_secs=10)
    assert dst.is_closed()


def test_core_runner_error_is_raised_by_python_join():
    src = FIFOQueue(10, sluice.float32, shapes=())
    dst = FIFOQueue(10, sluice.float32, shapes=(2,))  # element shapes differ: the C++ enqueue fails
    src.enqueue(1.0)
    qr = train._transfer_queue_runner(src, dst)
    coord = train.Coordinator()
    qr.create_threads(coord=coord, start=True)
    with pytest.raises(errors.InvalidArgumentError, match="Shape mismatch in tuple component 0"):
        coord.join(stop_grace_period_secs=10)


def test_core_runner_error_without_coordinator_is_kept():
    src = FIFOQueue(10, sluice.float32, shapes=())
    dst = FIFOQueue(10, sluice.int32, shapes=())
    src.enqueue(1.0)
    qr = train._transfer_queue_runner(src, dst)
    (t,) = qr.create_threads(start=True)
    t.join(10)
    (e,) = qr.exceptions_raised
    assert isinstance(e, errors.InvalidArgumentError) and "Type mismatch" in e.message


def test_python_error_wins_over_later_core_error():
    coord = train.Coordinator()
    try:
        raise KeyError("python first")
    except KeyError:
        coord.request_stop(sys.exc_info())
    coord.core.request_stop_with(errors.DATA_LOSS, "too late")
    with pytest.raises(KeyError, match="python first"):
        coord.join()


def test_core_error_first_wins_over_python_error():
    coord = train.Coordinator()
    coord.core.request_stop_with(errors.DATA_LOSS, "core first")
    coord.request_stop(KeyError("too late"))
    with pytest.raises(errors.DataLossError, match="core first"):
        coord.raise_requested_exception()
    with pytest.raises(errors.DataLossError, match="core first"):
        coord.join()


def test_core_thread_join_timeout_and_start_once():
    src = FIFOQueue(10, sluice.float32, shapes=())
    dst = FIFOQueue(10, sluice.float32, shapes=())
    qr = train._transfer_queue_runner(src, dst)
    (t,) = qr.create_threads()
    assert not t.is_alive() and not t.started and t.daemon
    t.join(0.01)  # never started: returns at once, as TF's join treats it as done
    t.start()
    with pytest.raises(RuntimeError, match="started once"):
        t.start()
    t.join(0.01)
    assert t.is_alive()  # blocked on the empty source
    src.close()
    t.join(10)
    assert not t.is_alive() and t.finished
    assert dst.is_closed()  # the last op thread closed it
    assert not train.Coordinator().wait_for_stop(0.01)
