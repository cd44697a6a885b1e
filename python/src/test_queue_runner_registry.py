"""get_queue_runners / start_queue_runners / clear_queue_runners with the C++ runners.

The input builders (producers, batchers) register C++ runners; the default
collection lists them, wrapped with QueueRunner's interface, among the Python
runners in the order they were added, and start_queue_runners starts each
listed runner once.
"""

import threading

import numpy as np
import pytest

from sluice import _core
from sluice import dtypes
from sluice import errors
from sluice import queue as sq
from sluice import train


@pytest.fixture(autouse=True)
def _clean_registry():
    train.clear_queue_runners()
    yield
    train.clear_queue_runners()


def _ones():
    return np.int64(1)


def _drain(q):
    out = []
    while True:
        try:
            out.append(q.dequeue(timeout=30))
        except errors.OutOfRangeError:
            return out


def test_get_queue_runners_lists_builder_runners_in_registration_order():
    names = train.string_input_producer(["a", "b"], num_epochs=1)
    py_queue = sq.FIFOQueue(4, dtypes.int64, shapes=())
    py_runner = train.QueueRunner(py_queue, [lambda: py_queue.enqueue(1)])
    train.add_queue_runner(py_runner)
    batches = train.batch(_ones, batch_size=2, num_threads=3, dtypes=dtypes.int64, shapes=())
    joined = train.shuffle_batch_join([_ones, _ones], batch_size=2, capacity=8, min_after_dequeue=2,
                                      dtypes=dtypes.int64, shapes=())

    runners = train.get_queue_runners()
    assert len(runners) == 4 and runners[1] is py_runner
    assert [qr.name for qr in runners] == [names.name, py_queue.name, batches.name, joined.name]
    assert runners[0].queue.name == names.name and runners[0].queue.queue_ref == names.queue_ref
    assert runners[2].queue.queue_ref == batches.queue.queue_ref
    assert [len(runners[i].enqueue_ops) for i in (0, 2, 3)] == [1, 3, 2]
    for qr in (runners[0], runners[2], runners[3]):
        assert qr.exceptions_raised == []
        assert qr.queue_closed_exception_types == (errors.OutOfRangeError,)
    assert train.get_queue_runners() == runners  # the same objects every time
    assert all(a is b for a, b in zip(train.get_queue_runners(), runners))


def test_slice_input_producer_lists_its_range_runner_then_the_batcher():
    slices = train.slice_input_producer([np.arange(4)], num_epochs=1, shuffle=False)
    bq = train.batch(slices, batch_size=2)
    runners = train.get_queue_runners()
    assert len(runners) == 2 and runners[1].name == bq.name
    assert runners[0].queue.dtypes == [dtypes.int32]  # the range producer's queue of indices


def test_a_padding_batcher_lists_its_queue_with_unknown_dims():
    bq = train.batch(lambda: np.ones(2, np.int32), batch_size=2, dynamic_pad=True, dtypes=dtypes.int32,
                     shapes=[None])
    [qr] = train.get_queue_runners()
    assert qr.queue.shapes == [(None,)] and qr.queue.dtypes == [dtypes.int32]
    assert bq.queue.shapes == [(None,)]


def test_listed_core_runners_run_the_pipeline_under_start_queue_runners():
    q = train.string_input_producer(["a", "b", "c"], num_epochs=2, shuffle=False)
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    assert [t.name for t in threads] == [
        "QueueRunnerThread-%s-enqueue" % q.name, "QueueRunnerThread-%s-close_on_stop" % q.name]
    assert all(isinstance(t, _core.Thread) for t in threads)
    assert _drain(q) == [b"a", b"b", b"c"] * 2
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=30)


def test_start_queue_runners_skips_a_runner_whose_create_threads_already_runs():
    # As TF: create_threads returns [] while the threads of an earlier call
    # run. capacity 2 < 6 strings keeps the producer blocked until drained.
    q = train.string_input_producer(["a", "b", "c"], num_epochs=2, shuffle=False, capacity=2)
    [qr] = train.get_queue_runners()
    coord = train.Coordinator()
    first = qr.create_threads(coord=coord, start=True)
    assert len(first) == 2
    assert train.start_queue_runners(coord=coord) == []  # not started twice
    assert _drain(q) == [b"a", b"b", b"c"] * 2  # every string num_epochs times, no more
    first[0].join(30)
    assert not first[0].is_alive()
    # Once its threads have ended, the runner's run is over: its queue is
    # closed, and it is not started again (a new Session runs it afresh).
    assert train.start_queue_runners() == []
    assert q.is_closed() and q.size() == 0
    coord.request_stop()
    coord.join(first, stop_grace_period_secs=30)


class _CountingRunner(train.QueueRunner):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.create_calls = 0

    def create_threads(self, *args, **kwargs):
        self.create_calls += 1
        return super().create_threads(*args, **kwargs)


def test_a_runner_listed_twice_is_started_once():
    q = sq.FIFOQueue(4, dtypes.int64, shapes=())
    done = threading.Event()

    def enqueue_once():
        if done.is_set():
            raise errors.OutOfRangeError(None, None, "done")
        done.set()
        q.enqueue(7)

    py_runner = _CountingRunner(q, [enqueue_once])
    train.add_queue_runner(py_runner)
    train.add_queue_runner(py_runner)
    names = train.string_input_producer(["a"], num_epochs=1)
    core_runner = train.get_queue_runners()[2]
    train.add_queue_runner(core_runner)
    assert len(train.get_queue_runners()) == 4
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    assert py_runner.create_calls == 1
    assert len(threads) == 4  # an op thread and a close-on-stop thread each
    assert _drain(q) == [7] and _drain(names) == [b"a"]
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=30)


def test_core_runner_exceptions_raised_without_a_coordinator():
    def bad():
        raise ValueError("bad example")

    train.batch(bad, batch_size=2, dtypes=dtypes.int64, shapes=())
    [qr] = train.get_queue_runners()
    threads = qr.create_threads(start=True)
    assert len(threads) == 1  # no coordinator: no close-on-stop thread
    threads[0].join(30)
    [exc] = qr.exceptions_raised
    assert isinstance(exc, ValueError) and str(exc) == "bad example"  # the producer's own exception


def test_clear_queue_runners_clears_python_and_core_runners():
    train.string_input_producer(["a"])
    train.add_queue_runner(train.QueueRunner(sq.FIFOQueue(1, dtypes.int64), [lambda: None]))
    train.add_queue_runner(train.QueueRunner(sq.FIFOQueue(1, dtypes.int64), [lambda: None]), "other")
    assert len(train.get_queue_runners()) == 2
    train.clear_queue_runners()
    assert train.get_queue_runners() == [] and len(train.get_default_graph().registry.runners()) == 0
    assert len(train.get_queue_runners("other")) == 1  # another collection is left alone
    train.clear_queue_runners("other")
    assert train.get_queue_runners("other") == []
    q = train.string_input_producer(["b"])  # registered after the clear: listed again
    assert [qr.name for qr in train.get_queue_runners()] == [q.name]


def test_other_collections_do_not_list_core_runners():
    train.string_input_producer(["a"])
    assert train.get_queue_runners("other") == []
    assert train.start_queue_runners(collection="other") == []
