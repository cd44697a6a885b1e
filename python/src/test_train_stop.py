"""Stopping sluice.train pipelines: filters that reject, clean-stop types, exit.

* A keep_input / map_filter that rejects examples must not hold up a stop:
  in TF each rejected example is one no-op step of the enqueue op, after
  which the runner thread checks the coordinator again.
* Coordinator(clean_stop_exception_types=...) judges an error by the type of
  the exception, as TF does, for the exceptions of Python producers run by
  C++ batchers as for those of pure-Python QueueRunners.
* The interpreter exits cleanly while a runner thread is still inside a
  long Python producer call.
"""

import os
import subprocess
import sys
import time

import numpy as np
import pytest

from sluice import dtypes
from sluice import errors
from sluice import queue as sq
from sluice import train


@pytest.fixture(autouse=True)
def _clean_registry():
    train.clear_queue_runners()
    yield
    train.clear_queue_runners()


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(sq.__file__)) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _run_script(script, timeout=60):
    return subprocess.run([sys.executable, "-c", script], env=_env(), capture_output=True, timeout=timeout)


def _stop_and_time_join(threads, coord):
    time.sleep(0.3)  # the runner threads are busy rejecting
    coord.request_stop()
    t0 = time.monotonic()
    coord.join(threads, stop_grace_period_secs=10)  # RuntimeError if a thread ignores the stop
    return time.monotonic() - t0


# ---- 1. a rejecting filter sees the stop -----------------------------------------------------


def _reject_all_pipelines():
    python = train.maybe_batch(lambda: np.int64(1), lambda x: False, batch_size=2, dtypes=dtypes.int64,
                               shapes=())
    native = train.maybe_batch(train.limit_epochs(np.int64(1), None), lambda x: False, batch_size=2)
    python_many = train.maybe_batch(lambda: np.arange(3, dtype=np.int64), lambda b: [False] * 3, batch_size=2,
                                    enqueue_many=True, dtypes=dtypes.int64, shapes=())
    native_many = train.maybe_batch(train.limit_epochs(np.arange(3, dtype=np.int64), None),
                                    lambda b: np.zeros(3, bool), batch_size=2, enqueue_many=True)
    shuffled = train.maybe_shuffle_batch(train.limit_epochs(np.int64(1), None), 2, 10, 2, lambda x: False,
                                         num_threads=2)
    return [python, native, python_many, native_many, shuffled]


@pytest.mark.timeout(60)
def test_keep_input_that_rejects_everything_does_not_hold_up_request_stop():
    bqs = _reject_all_pipelines()
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    assert len(threads) == 11  # one op thread each (2 for the shuffled one) + a close_on_stop each
    elapsed = _stop_and_time_join(threads, coord)
    assert elapsed < 5
    assert not [t.name for t in threads if t.is_alive()]
    for bq in bqs:  # the queues were cancelled, nothing was enqueued
        with pytest.raises(errors.OutOfRangeError):
            bq.dequeue(timeout=5)


@pytest.mark.timeout(60)
def test_map_filter_that_rejects_everything_does_not_hold_up_request_stop():
    p = train.limit_epochs(np.int64(7), None).map_filter(lambda x: False)
    train.batch(p.map_filter(lambda x: True), batch_size=2)  # a filter over a filter
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    assert _stop_and_time_join(threads, coord) < 5
    assert not [t.name for t in threads if t.is_alive()]


@pytest.mark.timeout(60)
def test_keep_input_that_rejects_everything_does_not_hang_clear_queue_runners():
    # Subprocess: before the fix the runner's destructor waited for ever.
    script = "\n".join([
        "import time, numpy as np",
        "from sluice import train, dtypes",
        "bq = train.maybe_batch(train.limit_epochs(np.int64(1), None), lambda x: False, batch_size=2)",
        "bq2 = train.maybe_batch(lambda: np.int64(1), lambda x: False, batch_size=2, dtypes=dtypes.int64,"
        " shapes=())",
        "del bq, bq2",
        "coord = train.Coordinator()",
        "train.start_queue_runners(coord=coord)",
        "time.sleep(0.3)",
        "coord.request_stop()",
        "train.clear_queue_runners()",
        "print('cleared')",
    ])
    done = _run_script(script, timeout=45)
    assert (done.returncode, done.stdout.strip()) == (0, b"cleared"), done.stderr.decode()[-2000:]


@pytest.mark.timeout(60)
def test_rejected_examples_are_skipped_steps_and_the_accepted_ones_all_arrive():
    n = 200
    it = iter(range(n))

    def count():
        try:
            return np.int64(next(it))
        except StopIteration:
            raise errors.OutOfRangeError(None, None, "done") from None

    py = train.maybe_batch(count, lambda x: x % 7 == 0, batch_size=4, allow_smaller_final_batch=True,
                           dtypes=dtypes.int64, shapes=())
    native = train.maybe_batch(train.limit_epochs(np.arange(10, dtype=np.int64), 3),
                               lambda b: b >= 8, batch_size=4, enqueue_many=True, allow_smaller_final_batch=True)
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    got_py = np.concatenate(list(py.batches())).tolist()
    got_native = np.concatenate(list(native.batches())).tolist()
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=10)
    assert got_py == list(range(0, n, 7))
    assert got_native == [8, 9] * 3


@pytest.mark.timeout(60)
def test_calling_a_filtered_native_producer_returns_the_next_accepted_example():
    q = train.range_input_producer(10, num_epochs=1, shuffle=False)
    p = train.dequeue_producer(q).map_filter(lambda x: x % 3 == 2)
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    assert [int(p()) for _ in range(3)] == [2, 5, 8]
    with pytest.raises(errors.OutOfRangeError):
        p()
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=10)


# ---- 2. exit while a Python producer call runs -----------------------------------------------


@pytest.mark.timeout(180)
def test_interpreter_exits_cleanly_while_a_python_producer_call_outlasts_the_atexit_wait():
    # The runner thread is inside a 3 s Python call when the interpreter
    # finalizes (the atexit hook waits ~1 s): CPython ends the thread when it
    # takes the GIL back, which used to abort the process (PyGILState_Release).
    script = "\n".join([
        "import time, numpy as np",
        "from sluice import train, dtypes",
        "def slow():",
        "    t = time.monotonic()",
        "    while time.monotonic() - t < 3:",
        "        pass",
        "    return np.int64(1)",
        "bq = train.batch(slow, batch_size=1, dtypes=dtypes.int64, shapes=())",
        "coord = train.Coordinator()",
        "train.start_queue_runners(coord=coord)",
        "time.sleep(0.5)",
        "coord.request_stop()",
        "print('main done', flush=True)",
    ])
    for _ in range(3):
        done = _run_script(script, timeout=50)
        assert (done.returncode, done.stdout.strip()) == (0, b"main done"), done.stderr.decode()[-2000:]


# ---- 3. clean-stop exception types are judged by type -----------------------------------------


def _failing_pipeline(kind, exc):
    def fail():
        raise exc

    if kind == "python_queue_runner":
        q = sq.FIFOQueue(4, [dtypes.int64], shapes=[()])
        train.add_queue_runner(train.QueueRunner(q, [fail]))
    elif kind == "cpp_batcher":
        train.batch(fail, batch_size=2, dtypes=dtypes.int64, shapes=())
    else:  # a C++ batcher with a keep_input that raises, on a native producer
        def keep(x):
            raise exc

        train.maybe_batch(train.limit_epochs(np.int64(1), None), keep, batch_size=2)


KINDS = ["python_queue_runner", "cpp_batcher", "cpp_batcher_native_keep"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", KINDS)
def test_producer_exception_of_a_clean_stop_type_stops_without_being_raised(kind):
    _failing_pipeline(kind, ValueError("boom"))
    coord = train.Coordinator(clean_stop_exception_types=(ValueError, errors.OutOfRangeError))
    threads = train.start_queue_runners(coord=coord)
    assert coord.wait_for_stop(10)
    coord.join(threads, stop_grace_period_secs=10)  # TF: returns normally
    coord.raise_requested_exception()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", KINDS)
def test_producer_value_error_is_raised_when_only_op_errors_are_clean(kind):
    _failing_pipeline(kind, ValueError("boom"))
    coord = train.Coordinator(clean_stop_exception_types=(errors.OpError,))
    threads = train.start_queue_runners(coord=coord)
    assert coord.wait_for_stop(10)
    with pytest.raises(ValueError, match="boom"):
        coord.join(threads, stop_grace_period_secs=10)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", KINDS)
def test_producer_op_error_is_clean_when_op_errors_are_clean(kind):
    _failing_pipeline(kind, errors.DataLossError(None, None, "bad record"))
    coord = train.Coordinator(clean_stop_exception_types=(errors.OpError,))
    threads = train.start_queue_runners(coord=coord)
    assert coord.wait_for_stop(10)
    coord.join(threads, stop_grace_period_secs=10)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", KINDS)
def test_producer_exception_not_of_a_clean_stop_type_is_raised_by_join(kind):
    _failing_pipeline(kind, ValueError("boom"))
    coord = train.Coordinator(clean_stop_exception_types=(TypeError, errors.OutOfRangeError))
    threads = train.start_queue_runners(coord=coord)
    assert coord.wait_for_stop(10)
    with pytest.raises(ValueError, match="boom"):
        coord.raise_requested_exception()
    with pytest.raises(ValueError, match="boom"):
        coord.join(threads, stop_grace_period_secs=10)


@pytest.mark.timeout(60)
def test_native_error_of_a_clean_stop_type_stops_without_being_raised():
    # A C++ stage's InvalidArgument (a keep_input mask of the wrong length).
    p = train.limit_epochs(np.arange(6, dtype=np.int64), None)
    train.maybe_batch(p, lambda batch: [True, False], batch_size=2, enqueue_many=True)
    coord = train.Coordinator(clean_stop_exception_types=(errors.InvalidArgumentError,))
    threads = train.start_queue_runners(coord=coord)
    assert coord.wait_for_stop(10)
    coord.join(threads, stop_grace_period_secs=10)
