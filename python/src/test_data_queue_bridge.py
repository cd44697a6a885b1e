"""sluice.data and the TF1 queues feeding each other: from_queue and dataset_queue_runner."""

import threading

import numpy as np
import pytest

import sluice as sl
from sluice import errors

from_queue = sl.data.experimental.from_queue


def _fifo(capacity, dtypes=(sl.int64,), shapes=((),), names=None):
    return sl.queue.FIFOQueue(capacity, list(dtypes), shapes=[list(s) for s in shapes], names=names)


def test_from_queue_reads_until_the_queue_is_closed_and_empty():
    q = _fifo(5)
    q.enqueue_many([np.arange(4)])
    q.close()
    ds = from_queue(q)
    assert ds.cardinality() == sl.data.UNKNOWN_CARDINALITY
    assert [int(x) for x in ds] == [0, 1, 2, 3]


def test_from_queue_waits_for_a_producer_and_feeds_a_pipeline():
    q = _fifo(2)

    def produce():
        for i in range(10):
            q.enqueue([i])
        q.close()

    t = threading.Thread(target=produce)
    t.start()
    got = [b.tolist() for b in from_queue(q).map(lambda x: x * 10).batch(4)]
    t.join()
    assert got == [[0, 10, 20, 30], [40, 50, 60, 70], [80, 90]]


def test_from_queue_with_names_gives_dicts():
    q = _fifo(4, (sl.int64, sl.string), ((), ()), names=["a", "b"])
    q.enqueue({"a": 1, "b": b"x"})
    q.close()
    (element,) = list(from_queue(q))
    assert element["a"] == 1 and element["b"] == b"x"


def test_dataset_queue_runner_fills_a_queue_and_closes_it_at_the_end():
    q = _fifo(3)
    coord = sl.train.Coordinator()
    qr = sl.train.dataset_queue_runner(sl.data.Dataset.range(12).map(lambda x: x * 2), q)
    qr.create_threads(coord=coord, start=True)
    got = []
    with pytest.raises(errors.OutOfRangeError):
        while True:
            got.append(int(q.dequeue()))
    assert got == list(range(0, 24, 2))
    coord.request_stop()  # the consumer saw the end (TF's pattern)
    coord.join()
    assert qr.input_exhausted


def test_enqueue_dataset_feeds_tf1_batch_through_start_queue_runners():
    with sl.train.Graph().as_default():
        q = _fifo(8)
        sl.train.enqueue_dataset(sl.data.Dataset.range(10), q, num_threads=2)
        coord = sl.train.Coordinator()
        threads = sl.train.start_queue_runners(coord=coord)
        got = []
        try:
            while True:
                got.append(int(q.dequeue()))
        except errors.OutOfRangeError:
            pass
        coord.request_stop()
        coord.join(threads)
    assert sorted(got) == list(range(10))


def test_a_dataset_error_stops_the_coordinator_with_it():
    def check(x):
        if x == 2:
            raise errors.DataLossError(None, None, "bad record")
        return x

    q = _fifo(10)
    coord = sl.train.Coordinator()
    qr = sl.train.dataset_queue_runner(sl.data.Dataset.range(5).map(check), q)  # kept: dropping it stops it
    qr.create_threads(coord=coord, start=True)
    assert coord.wait_for_stop(30)
    with pytest.raises(errors.DataLossError, match="bad record"):
        coord.join()


def test_a_coordinator_stop_ends_a_runner_blocked_in_its_dataset():
    source = _fifo(2)  # never filled: the runner's GetNext blocks in the dataset
    q = _fifo(2)
    coord = sl.train.Coordinator()
    qr = sl.train.dataset_queue_runner(from_queue(source), q)
    threads = qr.create_threads(coord=coord, start=True)
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=30)
    assert not qr.running
    assert q.is_closed()


def test_a_dataset_that_does_not_fit_the_queue_is_rejected():
    q = _fifo(2)
    with pytest.raises(errors.InvalidArgumentError):
        sl.train.dataset_queue_runner(sl.data.Dataset.range(3, dtype=sl.float32), q)
    with pytest.raises(errors.InvalidArgumentError):
        sl.train.dataset_queue_runner(sl.data.Dataset.zip((sl.data.Dataset.range(1), sl.data.Dataset.range(1))), q)
    with pytest.raises(ValueError):
        sl.train.dataset_queue_runner(sl.data.Dataset.range(1), q, num_threads=0)
