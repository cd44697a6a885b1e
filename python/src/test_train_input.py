"""sluice.train's input producers and batchers (tf.train's input.py), from Python.

Each test builds its pipeline, starts it with start_queue_runners under a
Coordinator, and stops and joins it; the registry of runners is cleared
around every test.
"""

import threading
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


def _start():
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    return coord, threads


def _stop(coord, threads):
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=30)
    assert not [t for t in threads if t.is_alive()]


def _drain(q):
    out = []
    while True:
        try:
            out.append(q.dequeue(timeout=30))
        except errors.OutOfRangeError:
            return out


def _drain_batches(bq):
    return list(bq.batches())


def _wait_for_producers(threads):
    """Joins the enqueue threads (not the close-on-stop ones, which wait for a stop)."""
    for t in threads:
        if not t.name.endswith("close_on_stop"):
            t.join(30)
            assert not t.is_alive()


class _Counter:
    """A thread-safe producer of 0..n-1 (as int64 scalars), then OutOfRangeError."""

    def __init__(self, n):
        self._n = n
        self._next = 0
        self._lock = threading.Lock()
        self.calls = 0

    def next(self):
        with self._lock:
            self.calls += 1
            if self._next >= self._n:
                raise errors.OutOfRangeError(None, None, "end of input")
            i = self._next
            self._next += 1
            return i


# ---- input producers -------------------------------------------------------------------


def test_string_input_producer_returns_a_fifo_queue_filled_only_after_start():
    q = train.string_input_producer(["a", "b", b"c"], num_epochs=2, shuffle=False)
    assert isinstance(q, sq.FIFOQueue)
    assert q.dtypes == [dtypes.string]
    assert q.size() == 0  # nothing runs before start_queue_runners
    coord, threads = _start()
    assert _drain(q) == [b"a", b"b", b"c"] * 2
    _stop(coord, threads)


def test_string_input_producer_reshuffles_every_epoch_reproducibly_by_seed():
    names = ["f%02d" % i for i in range(20)]
    q1 = train.string_input_producer(names, num_epochs=3, seed=7)
    q2 = train.string_input_producer(names, num_epochs=3, seed=7)
    coord, threads = _start()
    out1, out2 = _drain(q1), _drain(q2)
    _stop(coord, threads)
    assert out1 == out2
    epochs = [out1[i * 20:(i + 1) * 20] for i in range(3)]
    for epoch in epochs:
        assert sorted(epoch) == sorted(n.encode() for n in names)
    assert epochs[0] != epochs[1] or epochs[1] != epochs[2]


def test_range_and_input_producer():
    r = train.range_input_producer(4, num_epochs=1, shuffle=False)
    rows = np.arange(6, dtype=np.float32).reshape(3, 2)
    q = train.input_producer(rows, num_epochs=2, shuffle=False)
    assert r.dtypes == [dtypes.int32] and q.shapes == [(2,)]
    coord, threads = _start()
    assert [int(v) for v in _drain(r)] == [0, 1, 2, 3]
    got = _drain(q)
    _stop(coord, threads)
    np.testing.assert_array_equal(np.stack(got), np.concatenate([rows, rows]))


def test_input_producer_argument_errors():
    with pytest.raises(ValueError, match="num_epochs must be > 0"):
        train.string_input_producer(["a"], num_epochs=0)
    with pytest.raises(ValueError, match="non-null"):
        train.string_input_producer([])
    with pytest.raises(ValueError):
        train.input_producer(np.zeros((3, 2)), element_shape=[3])
    with pytest.raises(ValueError):
        train.input_producer(5)  # rank 0
    with pytest.raises(TypeError, match="cancel_op must be a callable"):
        train.string_input_producer(["a"], cancel_op="close")
    assert train.get_queue_runners() == []  # a refused builder registers nothing


def test_slice_input_producer_keeps_rows_aligned_once_per_epoch():
    a = np.arange(10, dtype=np.int64)
    b = np.array([b"r%d" % i for i in range(10)], dtype=object)
    slices = train.slice_input_producer([a, b], num_epochs=2, seed=3)
    assert isinstance(slices, train.NativeProducer)
    assert slices.dtypes == [dtypes.int64, dtypes.string] and slices.shapes == [(), ()]
    bq = train.batch(slices, batch_size=4, allow_smaller_final_batch=True)
    coord, threads = _start()
    batches = _drain_batches(bq)
    _stop(coord, threads)
    ids = np.concatenate([x for x, _ in batches])
    labels = np.concatenate([y for _, y in batches])
    assert sorted(ids.tolist()) == sorted(list(range(10)) * 2)
    assert [b"r%d" % i for i in ids] == labels.tolist()


def test_limit_epochs_yields_the_value_num_epochs_times():
    p = train.limit_epochs(np.array([1, 2], dtype=np.int32), num_epochs=3)
    for _ in range(3):
        np.testing.assert_array_equal(p(), [1, 2])
    with pytest.raises(errors.OutOfRangeError, match="Reached limit of 3"):
        p()
    with pytest.raises(ValueError):
        train.limit_epochs(1, num_epochs=0)


def test_limit_epochs_of_a_native_producer_passes_calls_through():
    inner = train.limit_epochs(b"x")  # unlimited
    p = train.limit_epochs(inner, num_epochs=2)
    assert p() == b"x" and p() == b"x"
    with pytest.raises(errors.OutOfRangeError):
        p()


def test_match_filenames_once_sorts_matches(tmp_path):
    for name in ["b.rec", "a.rec", "c.txt"]:
        (tmp_path / name).write_bytes(b"")
    files = train.match_filenames_once(str(tmp_path / "*.rec"))
    assert files == [str(tmp_path / "a.rec").encode(), str(tmp_path / "b.rec").encode()]


# ---- batchers with Python producers -----------------------------------------------------


def test_batch_of_a_list_is_called_only_after_start_and_keeps_structure():
    counter = _Counter(8)

    def example():
        i = counter.next()
        return [np.int64(i), np.full(3, i, np.float32), b"s%d" % i]

    bq = train.batch(example, batch_size=4, dtypes=[dtypes.int64, dtypes.float32, dtypes.string],
                     shapes=[(), (3,), ()])
    assert counter.calls == 0
    coord, threads = _start()
    first, second = bq.dequeue(), bq.dequeue()
    with pytest.raises(errors.OutOfRangeError):
        bq.dequeue()
    _stop(coord, threads)
    assert isinstance(first, list) and len(first) == 3
    np.testing.assert_array_equal(first[0], [0, 1, 2, 3])
    np.testing.assert_array_equal(second[1], np.repeat(np.arange(4, 8, dtype=np.float32), 3).reshape(4, 3))
    assert second[2].tolist() == [b"s4", b"s5", b"s6", b"s7"]


def test_batch_of_a_dict_and_of_a_single_tensor():
    c1, c2 = _Counter(6), _Counter(6)
    bd = train.batch(lambda: {"y": c1.next(), "x": [c1.calls, 0]}, batch_size=3,
                     dtypes={"x": dtypes.int32, "y": dtypes.int64}, shapes={"x": [2], "y": []})
    bs = train.batch(lambda: np.float64(c2.next()), batch_size=2, dtypes=dtypes.float64, shapes=[])
    coord, threads = _start()
    d = bd.dequeue()
    singles = _drain_batches(bs)
    _stop(coord, threads)
    assert sorted(d) == ["x", "y"] and d["x"].shape == (3, 2) and d["x"].dtype == np.int32
    np.testing.assert_array_equal(d["y"], [0, 1, 2])
    assert [s.tolist() for s in singles] == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]


def test_batch_enqueue_many_and_allow_smaller_final_batch():
    chunks = iter([np.arange(0, 4), np.arange(4, 7), np.arange(7, 10)])

    def many():
        try:
            return [next(chunks)]
        except StopIteration:
            raise errors.OutOfRangeError(None, None, "done") from None

    bq = train.batch(many, batch_size=4, enqueue_many=True, allow_smaller_final_batch=True,
                     dtypes=[dtypes.int64], shapes=[[]])
    coord, threads = _start()
    batches = [b.tolist() for b in bq.batches()]  # a one-tensor list's batch is that tensor's, as in TF
    _stop(coord, threads)
    assert batches == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_final_short_batch_is_dropped_by_default():
    counter = _Counter(10)
    bq = train.batch(counter.next, batch_size=4, dtypes=dtypes.int64, shapes=())
    coord, threads = _start()
    batches = [b.tolist() for b in bq.batches()]
    _stop(coord, threads)
    assert batches == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_dynamic_pad_pads_each_batch_to_its_longest_example():
    counter = _Counter(4)

    def example():
        i = counter.next()
        return [np.arange(1, i + 2, dtype=np.int32)]

    bq = train.batch(example, batch_size=2, dynamic_pad=True, dtypes=[dtypes.int32], shapes=[[None]])
    coord, threads = _start()
    batches = [b.tolist() for b in bq.batches()]  # a one-tensor list's batch is that tensor's, as in TF
    _stop(coord, threads)
    assert batches == [[[1, 0], [1, 2]], [[1, 2, 3, 0], [1, 2, 3, 4]]]


def test_maybe_batch_keeps_what_keep_input_accepts():
    c1, c2, c3 = _Counter(10), _Counter(10), _Counter(4)
    evens = train.maybe_batch(c1.next, lambda x: x % 2 == 0, batch_size=5, dtypes=dtypes.int64, shapes=())
    none = train.maybe_batch(c2.next, False, batch_size=1, dtypes=dtypes.int64, shapes=())
    masked = train.maybe_batch(lambda: np.full(3, c3.next()) * 10 + np.arange(3), lambda b: b % 2 == 0,
                               batch_size=2, enqueue_many=True, allow_smaller_final_batch=True,
                               dtypes=dtypes.int64, shapes=())
    coord, threads = _start()
    got_evens = _drain_batches(evens)
    got_none = _drain_batches(none)
    got_masked = np.concatenate(_drain_batches(masked)).tolist()
    _stop(coord, threads)
    assert [b.tolist() for b in got_evens] == [[0, 2, 4, 6, 8]]
    assert got_none == []
    assert got_masked == [0, 2, 10, 12, 20, 22, 30, 32]


def test_maybe_batch_of_native_batches_keeps_the_rows_keep_input_marks():
    p = train.limit_epochs(np.arange(6, dtype=np.int64), num_epochs=2)
    calls = []

    def keep(batch):
        calls.append(batch.tolist())
        return batch % 2 == 0

    bq = train.maybe_batch(p, keep, batch_size=2, enqueue_many=True, allow_smaller_final_batch=True)
    coord, threads = _start()
    got = np.concatenate(_drain_batches(bq)).tolist()
    _stop(coord, threads)
    assert got == [0, 2, 4, 0, 2, 4]
    assert calls == [list(range(6))] * 2


def test_batch_of_native_batches_takes_the_example_shape_from_the_batch_shape():
    p = train.limit_epochs(np.arange(6, dtype=np.int64).reshape(3, 2), num_epochs=1)
    bq = train.batch(p, batch_size=2, enqueue_many=True, allow_smaller_final_batch=True)
    assert bq.queue.shapes == [(2,)]
    coord, threads = _start()
    got = [b.tolist() for b in _drain_batches(bq)]
    _stop(coord, threads)
    assert got == [[[0, 1], [2, 3]], [[4, 5]]]
    with pytest.raises(ValueError, match="rank >= 1"):
        train.batch(train.limit_epochs(np.int64(3)), batch_size=2, enqueue_many=True)


def test_maybe_batch_of_native_batches_rejects_a_mask_of_the_wrong_length():
    p = train.limit_epochs(np.arange(6, dtype=np.int64), num_epochs=1)
    bq = train.maybe_batch(p, lambda batch: [True, False], batch_size=2, enqueue_many=True)
    coord, threads = _start()
    list(bq.batches())  # ends once the error has stopped the coordinator
    with pytest.raises(errors.InvalidArgumentError, match="one value per example: got 2 for a batch of 6"):
        coord.join(threads, stop_grace_period_secs=30)
    assert not [t for t in threads if t.is_alive()]


def test_batch_join_runs_one_thread_per_producer_and_keeps_each_order():
    a, b = _Counter(6), _Counter(6)
    bq = train.batch_join([lambda: [0, a.next()], lambda: [1, b.next()]], batch_size=3,
                          dtypes=[dtypes.int32, dtypes.int64], shapes=[(), ()])
    coord, threads = _start()
    batches = _drain_batches(bq)
    _stop(coord, threads)
    src = np.concatenate([x for x, _ in batches])
    val = np.concatenate([y for _, y in batches])
    assert val[src == 0].tolist() == list(range(6)) and val[src == 1].tolist() == list(range(6))


def _shuffled_run(seed):
    counter = _Counter(40)
    bq = train.shuffle_batch(counter.next, batch_size=8, capacity=50, min_after_dequeue=10, seed=seed,
                             dtypes=dtypes.int64, shapes=())
    coord, threads = _start()
    _wait_for_producers(threads)  # every example queued: the order depends on the seed alone
    out = [b.tolist() for b in bq.batches()]
    _stop(coord, threads)
    train.clear_queue_runners()
    return out


def test_shuffle_batch_is_reproducible_by_seed_and_loses_nothing():
    first, again = _shuffled_run(5), _shuffled_run(5)
    assert first == again
    flat = sorted(x for b in first for x in b)
    assert flat == list(range(40))
    assert [x for b in first for x in b] != list(range(40))


def test_shuffle_batch_argument_errors():
    with pytest.raises(ValueError, match="must be bigger than min_after_dequeue"):
        train.shuffle_batch(lambda: 1, 2, capacity=5, min_after_dequeue=5, dtypes=dtypes.int64, shapes=())
    with pytest.raises(ValueError, match="Expected at least one set of tensors"):
        train.batch_join([], 2, dtypes=dtypes.int64, shapes=())
    with pytest.raises(ValueError):
        train.batch(lambda: 1, 0, dtypes=dtypes.int64, shapes=())
    with pytest.raises(ValueError):
        train.batch(lambda: [1], 2, dtypes=[dtypes.int64], shapes=[[None]])  # not fully defined


# ---- errors ------------------------------------------------------------------------------


def test_a_python_exception_stops_the_coordinator_and_reaches_join():
    counter = _Counter(1000)

    def failing():
        i = counter.next()
        if i == 5:
            raise KeyError("bad record 5")
        return i

    bq = train.batch(failing, batch_size=2, dtypes=dtypes.int64, shapes=())
    coord, threads = _start()
    assert coord.wait_for_stop(30)
    with pytest.raises(errors.OutOfRangeError):  # the stop closes the queue; it drains, then ends
        while True:
            bq.dequeue(timeout=30)
    with pytest.raises(KeyError, match="bad record 5") as info:
        coord.join(threads, stop_grace_period_secs=30)
    assert info.value.__traceback__ is not None  # the original exception, not a copy
    assert not [t for t in threads if t.is_alive()]


def test_a_wrong_structure_is_an_error_of_the_pipeline():
    bq = train.batch(lambda: {"a": 1}, batch_size=1, dtypes=[dtypes.int64], shapes=[()])
    coord, threads = _start()
    with pytest.raises(errors.OutOfRangeError):
        bq.dequeue(timeout=30)
    with pytest.raises(ValueError, match="expected a list of 1 tensors"):
        coord.join(threads, stop_grace_period_secs=30)


def test_an_op_error_keeps_its_code():
    def lost():
        raise errors.DataLossError(None, None, "corrupt")

    train.batch(lost, batch_size=1, dtypes=dtypes.int64, shapes=())
    coord, threads = _start()
    with pytest.raises(errors.DataLossError, match="corrupt"):
        coord.join(threads, stop_grace_period_secs=30)


# ---- observability ---------------------------------------------------------------------------


def test_all_queue_stats_reports_counts_and_fill():
    counter = _Counter(6)
    bq = train.batch(counter.next, batch_size=2, capacity=10, dtypes=dtypes.int64, shapes=(),
                     name="stats_batch")
    coord, threads = _start()
    assert len(_drain_batches(bq)) == 3
    stats = {s["name"]: s for s in sq.all_queue_stats()}
    _stop(coord, threads)
    mine = stats[bq.name]
    assert mine["name"].startswith("stats_batch")
    assert (mine["capacity"], mine["size"], mine["enqueued"], mine["dequeued"], mine["closed"]) == (10, 0, 6, 6, True)
    assert mine["fraction_full"] == 0.0
    assert bq.name in {s["name"] for s in train.all_queue_stats()}


def test_queue_monitor_keeps_a_series_per_queue():
    q = sq.FIFOQueue(4, dtypes.int64, name="monitored")
    monitor = train.QueueMonitor(interval_secs=60, history=3)
    monitor.sample()
    q.enqueue(1)
    q.enqueue(2)
    monitor.sample()
    series = {s["name"]: s for s in monitor.series()}
    points = series[q.name]["points"]
    assert [p["size"] for p in points] == [0, 2]
    assert [p["fraction_full"] for p in points] == [0.0, 0.5]
    assert points[-1]["enqueued"] == 2
    assert q.name in monitor.report()
    with pytest.raises(ValueError):
        train.QueueMonitor(interval_secs=0)


# ---- found by a differential review against TF 2.21's tf.compat.v1.train -------------

@pytest.mark.timeout(60)
def test_batch_of_a_one_tensor_list_is_a_bare_array_as_in_tensorflow():
    p = train.slice_input_producer([np.arange(7, dtype=np.int32)], num_epochs=1, shuffle=False)
    b = train.batch(p, 3, allow_smaller_final_batch=True)
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    first = b.dequeue()
    assert isinstance(first, np.ndarray) and first.tolist() == [0, 1, 2]
    coord.request_stop()
    coord.join(threads)


@pytest.mark.timeout(60)
def test_constant_vector_keep_input_is_a_mask_of_every_batch():
    rows = iter(range(3))

    def producer():
        i = next(rows, None)
        if i is None:
            raise errors.OutOfRangeError(None, None, "done")
        return [np.arange(10 * i, 10 * i + 4, dtype=np.int32)]

    b = train.maybe_batch(producer, [True, False, True, False], 2, enqueue_many=True,
                          allow_smaller_final_batch=True, dtypes=[np.int32], shapes=[[]])
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    got = []
    while True:
        try:
            got.extend(b.dequeue().tolist())
        except errors.OutOfRangeError:
            break
    coord.request_stop()
    coord.join(threads)
    assert sorted(got) == [0, 2, 10, 12, 20, 22]


def test_vector_keep_input_needs_enqueue_many_and_rank_one():
    with pytest.raises(ValueError, match="cannot be a vector when `enqueue_many=False`"):
        train.maybe_batch(lambda: [np.int32(1)], [True, False], 2, dtypes=[np.int32], shapes=[[]])
    with pytest.raises(ValueError, match="must be 0 or 1 dimensions"):
        train.maybe_batch(lambda: [np.int32(1)], [[True, False]], 2, enqueue_many=True, dtypes=[np.int32],
                          shapes=[[]])


def test_string_input_producer_takes_only_strings_in_a_vector():
    with pytest.raises(TypeError, match="Expected string"):
        train.string_input_producer([1, 2], num_epochs=1, shuffle=False)
    with pytest.raises(ValueError, match="not compatible"):
        train.string_input_producer([["a", "b"], ["c", "d"]], num_epochs=1, shuffle=False)


def _shuffled_order(seed):
    values = iter(range(20))

    def producer():
        v = next(values, None)
        if v is None:
            raise errors.OutOfRangeError(None, None, "done")
        return np.int32(v)

    b = train.shuffle_batch(producer, 4, capacity=32, min_after_dequeue=1, seed=seed, dtypes=np.int32, shapes=[],
                            allow_smaller_final_batch=True)
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    while b.queue.size() < 20:  # all in before the first dequeue: the order depends on the seed alone
        time.sleep(0.001)
    coord.request_stop()
    coord.join(threads)
    order = []
    while True:
        try:
            order.extend(b.dequeue().tolist())
        except errors.OutOfRangeError:
            return order


@pytest.mark.timeout(60)
def test_shuffle_batch_seed_is_reduced_modulo_int32_max_as_in_tensorflow():
    assert sorted(_shuffled_order(7)) == list(range(20))
    assert _shuffled_order(2**31 - 1 + 7) == _shuffled_order(7)
    assert _shuffled_order(-5) == _shuffled_order(2**31 - 1 - 5)
