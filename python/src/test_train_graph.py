"""Graphs and Sessions: many TF 1 pipelines in one process, each run from fresh state.

A TF 1 program trains for some steps, stops, then evaluates to the end of its
input; a test suite builds a pipeline per test. These check that each
pipeline gets exactly its own records, that a stop or an error touches only
its own run, and that a new Session starts a graph's pipelines afresh.
"""

import logging
import threading
import time

import numpy as np
import pytest

import sluice as sl
from sluice import _graph
from sluice import errors

train = sl.train


def _pipeline(values, num_epochs=None, batch_size=4, shuffle=False, name=None):
    """slice_input_producer -> batch: batches of `values` (int64)."""
    rows = train.slice_input_producer([np.asarray(values, np.int64)], num_epochs=num_epochs, shuffle=shuffle)
    return train.batch(rows, batch_size=batch_size, allow_smaller_final_batch=True, name=name)


def _drain(batch_queue, sess=None):
    got = []
    try:
        while True:
            got.extend((sess.run(batch_queue) if sess else batch_queue.dequeue()).tolist())
    except errors.OutOfRangeError:
        pass
    return got


def _train_then_eval_in_one_graph():
    graph = train.Graph()
    with graph.as_default():
        train_batch = _pipeline(np.arange(1000, 2000), shuffle=True)
        eval_batch = _pipeline(np.arange(20), num_epochs=1)
    with train.Session(graph=graph) as sess:
        coord = train.Coordinator()
        threads = train.start_queue_runners(sess, coord)
        for _ in range(3):
            assert all(1000 <= v < 2000 for v in sess.run(train_batch).tolist())
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
    with train.Session(graph=graph) as sess:
        coord = train.Coordinator()
        threads = train.start_queue_runners(sess, coord)
        got = _drain(eval_batch, sess)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
    return got


def test_train_stopped_after_3_steps_then_eval_in_a_new_session_gets_every_example_once():
    for _ in range(50):
        assert sorted(_train_then_eval_in_one_graph()) == list(range(20))


def test_train_and_eval_in_their_own_graphs_do_not_touch_each_other():
    for _ in range(50):
        with train.Graph().as_default():
            train_batch = _pipeline(np.arange(1000, 2000), shuffle=True)
            coord = train.Coordinator()
            threads = train.start_queue_runners(coord=coord)
            for _ in range(3):
                train_batch.dequeue()
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
        with train.Graph().as_default():
            eval_batch = _pipeline(np.arange(20), num_epochs=1)
            coord = train.Coordinator()
            threads = train.start_queue_runners(coord=coord)
            got = _drain(eval_batch)
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
        assert sorted(got) == list(range(20))


@pytest.mark.parametrize("stop_early", [False, True])
def test_twenty_pipelines_one_after_another_each_get_exactly_their_own_records(stop_early):
    with train.Graph().as_default():  # as a test suite's default graph: nothing is reset between them
        for k in range(20):
            values = np.arange(100 * k, 100 * k + 10)
            batch_queue = _pipeline(values, num_epochs=1, batch_size=2)
            coord = train.Coordinator()
            threads = train.start_queue_runners(coord=coord)
            if stop_early:
                got = [v for _ in range(3) for v in batch_queue.dequeue().tolist()]
                assert got == values[:6].tolist()
            else:
                assert _drain(batch_queue) == values.tolist()
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)


def test_an_error_in_one_running_pipeline_leaves_the_other_untouched():
    def failing():
        failing.calls += 1
        if failing.calls > 5:
            raise ValueError("pipeline A broke")
        return np.int64(failing.calls)
    failing.calls = 0

    with train.Graph().as_default():
        batch_a = train.batch(failing, batch_size=1, dtypes=sl.int64, shapes=[])
        coord_a = train.Coordinator()
        threads_a = train.start_queue_runners(coord=coord_a)
    with train.Graph().as_default():
        batch_b = _pipeline(np.arange(200), num_epochs=1, batch_size=10)
        coord_b = train.Coordinator()
        threads_b = train.start_queue_runners(coord=coord_b)
    assert coord_a.wait_for_stop(10)
    with pytest.raises(ValueError, match="pipeline A broke"):
        coord_a.join(threads_a, stop_grace_period_secs=10)
    assert not coord_b.should_stop()
    assert _drain(batch_b) == list(range(200))
    coord_b.request_stop()
    coord_b.join(threads_b, stop_grace_period_secs=10)
    del batch_a


def test_a_new_session_rebuilds_queues_readers_and_producers_from_epoch_zero(tmp_path):
    paths = []
    for f in range(2):
        path = str(tmp_path / ("f%d.tfrecord" % f))
        with sl.io.TFRecordWriter(path) as w:
            for i in range(5):
                w.write(b"%d-%d" % (f, i))
        paths.append(path)
    graph = train.Graph()
    with graph.as_default():
        files = train.string_input_producer(paths, num_epochs=1, shuffle=False)
        reader = sl.io.TFRecordReader()
        records = train.batch(train.read_producer(reader, files), batch_size=3, allow_smaller_final_batch=True)
    for _ in range(3):
        with train.Session(graph=graph) as sess:
            coord = train.Coordinator()
            threads = train.start_queue_runners(sess, coord)
            values = []
            try:
                while True:
                    _, value = sess.run(records)
                    values.extend(value.tolist())
            except errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
        assert values == [b"%d-%d" % (f, i) for f in range(2) for i in range(5)]
        assert reader.num_records_produced() == 10  # the new run's reader started at 0


def test_one_open_session_per_graph():
    graph = train.Graph()
    with train.Session(graph=graph):
        with pytest.raises(errors.FailedPreconditionError, match="already has an open"):
            train.Session(graph=graph)
    train.Session(graph=graph).close()


def test_start_queue_runners_never_restarts_a_stopped_runner_and_says_so(caplog):
    with train.Graph().as_default():
        eval_batch = _pipeline(np.arange(20), num_epochs=1)
        train_batch = _pipeline(np.arange(1000, 2000))
        coord = train.Coordinator()
        threads = train.start_queue_runners(coord=coord)
        train_batch.dequeue()
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
        with caplog.at_level(logging.WARNING, logger="sluice.train"):
            coord = train.Coordinator()
            threads = train.start_queue_runners(coord=coord)
        assert threads == []
        assert "not started again" in caplog.text and "Session" in caplog.text
        del eval_batch


# ---- no silent hang --------------------------------------------------------------------------------


@pytest.fixture
def fast_stall(monkeypatch):
    monkeypatch.setattr(_graph, "STALL_WARNING_SECS", 0.2)


def test_the_stall_warning_comes_within_five_seconds():
    assert _graph.STALL_WARNING_SECS < 5


def _blocked_then_started(call, caplog):
    """Runs `call` on a thread; asserts a warning before starting the runners; returns call's result."""
    out = {}
    thread = threading.Thread(target=lambda: out.setdefault("value", call()))
    with caplog.at_level(logging.WARNING, logger="sluice.train"):
        thread.start()
        deadline = time.monotonic() + 5
        while "never started" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.05)
    assert "never started" in caplog.text and "start_queue_runners" in caplog.text
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    thread.join(10)
    assert not thread.is_alive()
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=10)
    return out.get("value"), caplog.text


def test_batch_dequeue_before_start_queue_runners_warns_naming_the_queue(fast_stall, caplog):
    with train.Graph().as_default():
        batch_queue = _pipeline(np.arange(8), num_epochs=1, name="my_batch")
        value, text = _blocked_then_started(batch_queue.dequeue, caplog)
    assert value.tolist() == [0, 1, 2, 3]
    assert "my_batch" in text


def test_reader_read_before_start_queue_runners_warns_naming_the_queue(fast_stall, caplog, tmp_path):
    path = str(tmp_path / "r.tfrecord")
    with sl.io.TFRecordWriter(path) as w:
        w.write(b"x")
    with train.Graph().as_default():
        files = train.string_input_producer([path], num_epochs=1, name="my_files")
        reader = sl.io.TFRecordReader()
        value, text = _blocked_then_started(lambda: reader.read(files), caplog)
    assert value[1] == b"x"
    assert "my_files" in text


def test_queue_dequeue_before_start_queue_runners_warns(fast_stall, caplog):
    with train.Graph().as_default():
        q = sl.queue.FIFOQueue(4, [sl.int64], shapes=[[]], name="fed_by_a_runner")
        values = iter(range(3))

        def produce():
            v = next(values, None)
            if v is None:
                raise errors.OutOfRangeError(None, None, "done")
            q.enqueue([v])

        train.add_queue_runner(train.QueueRunner(q, [produce]))
        value, text = _blocked_then_started(q.dequeue, caplog)
    assert value == 0
    assert "fed_by_a_runner" in text


def test_a_started_pipeline_dequeues_without_a_warning(fast_stall, caplog):
    with train.Graph().as_default():
        batch_queue = _pipeline(np.arange(8), num_epochs=1)
        coord = train.Coordinator()
        threads = train.start_queue_runners(coord=coord)
        with caplog.at_level(logging.WARNING, logger="sluice.train"):
            assert _drain(batch_queue) == list(range(8))
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
    assert "never started" not in caplog.text


def test_enqueue_many_of_more_rows_than_capacity_without_a_consumer_warns(fast_stall, caplog):
    with train.Graph().as_default():
        q = sl.queue.FIFOQueue(3, [sl.int64], shapes=[[]], name="small")
    done = threading.Event()
    thread = threading.Thread(target=lambda: (q.enqueue_many([np.arange(10)]), done.set()))
    with caplog.at_level(logging.WARNING, logger="sluice.train"):
        thread.start()
        deadline = time.monotonic() + 5
        while "enqueue_many of 10 rows" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.05)
    assert "enqueue_many of 10 rows into queue 'small' (capacity 3)" in caplog.text
    got = [q.dequeue() for _ in range(10)]
    thread.join(10)
    assert done.is_set() and got == list(range(10))


def test_unpacking_a_batch_dequeues_nothing_and_one_run_gives_one_batch():
    with train.Graph().as_default():
        rows = train.slice_input_producer([np.arange(12), np.arange(12) * 10], num_epochs=1, shuffle=False)
        batch_queue = train.batch(rows, batch_size=3)
        images, labels = batch_queue  # TF's habit
        assert batch_queue.queue.size() == 0
        with train.Session() as sess:
            coord = train.Coordinator()
            threads = train.start_queue_runners(sess, coord)
            seen = []
            try:
                while True:
                    x, y = sess.run([images, labels])
                    assert (y == x * 10).all()  # one batch for both
                    seen.extend(x.tolist())
            except errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    assert seen == list(range(12))


def test_a_batch_of_one_tensor_refuses_to_unpack():
    with train.Graph().as_default():
        batch_queue = train.batch(train.slice_input_producer([np.arange(4)], num_epochs=1), batch_size=2)
        with pytest.raises(TypeError, match="dequeue"):
            a, b = batch_queue


def test_queue_runner_rejects_ops_that_are_not_callable():
    q = sl.queue.FIFOQueue(4, [sl.int64], shapes=[[]])
    with pytest.raises(TypeError, match="callable"):
        train.QueueRunner(q, [q.enqueue([1])] * 4)
    assert q.size() == 1  # the call in the list ran once, here; nothing else ran


# ---- producers as TF infers them ------------------------------------------------------------------


def _run_to_end(batch_queue):
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    got = _drain_structured(batch_queue)
    coord.request_stop()
    return got, coord, threads


def _drain_structured(batch_queue):
    got = []
    try:
        while True:
            got.append(batch_queue.dequeue())
    except errors.OutOfRangeError:
        pass
    return got


def test_a_python_producer_needs_no_dtypes_or_shapes():
    with train.Graph().as_default():
        it = iter(range(10))

        def produce():
            i = next(it)  # StopIteration ends the input
            return [np.full(3, i, np.float32), i]

        batch_queue = train.batch(produce, batch_size=4, allow_smaller_final_batch=True)
        got, coord, threads = _run_to_end(batch_queue)
        coord.join(threads, stop_grace_period_secs=10)
    assert [b[1].tolist() for b in got] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert got[0][0].dtype == np.float32 and got[0][0].shape == (4, 3)
    assert got[0][1].dtype == np.int64


def test_an_example_that_differs_from_the_first_is_an_error_naming_the_component():
    with train.Graph().as_default():
        it = iter([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0, 3.0]])
        batch_queue = train.batch(lambda: {"x": np.asarray(next(it), np.float32)}, batch_size=1, shapes=None)
        got, coord, threads = _run_to_end(batch_queue)
        with pytest.raises(errors.InvalidArgumentError, match=r"component 0 \('x'\) has shape \(3,\)"):
            coord.join(threads, stop_grace_period_secs=10)
    assert len(got) == 2


def test_shapes_alone_give_the_structure_and_dtypes_come_from_the_first_example():
    with train.Graph().as_default():
        it = iter(range(4))
        batch_queue = train.batch(lambda: [np.int32(next(it)), b"s"], batch_size=2, shapes=[[], []])
        ints, strings = batch_queue  # the structure is known before the runner starts
        got, coord, threads = _run_to_end(batch_queue)
        coord.join(threads, stop_grace_period_secs=10)
    assert [b[0].tolist() for b in got] == [[0, 1], [2, 3]]
    assert got[0][0].dtype == np.int32 and got[0][1].tolist() == [b"s", b"s"]


def test_a_batch_feeds_another_batcher_with_enqueue_many():
    with train.Graph().as_default():
        inner = train.batch(train.slice_input_producer([np.arange(24)], num_epochs=1, shuffle=False), batch_size=4)
        outer = train.batch(inner, batch_size=6, enqueue_many=True)
        got, coord, threads = _run_to_end(outer)
        coord.join(threads, stop_grace_period_secs=10)
    assert [b.tolist() for b in got] == [list(range(6 * i, 6 * i + 6)) for i in range(4)]


@pytest.mark.parametrize("as_method", [False, True])
def test_a_queue_or_its_dequeue_method_is_a_typed_producer(as_method):
    with train.Graph().as_default():
        q = sl.queue.FIFOQueue(16, [sl.int64], shapes=[[]])
        q.enqueue_many([np.arange(6)])
        q.close()
        batch_queue = train.batch(q.dequeue if as_method else q, batch_size=3)
        got, coord, threads = _run_to_end(batch_queue)
        coord.join(threads, stop_grace_period_secs=10)
    assert [b.tolist() for b in got] == [[0, 1, 2], [3, 4, 5]]


def test_stop_iteration_in_a_producer_ends_its_input_cleanly():
    with train.Graph().as_default():
        it = iter(range(5))
        batch_queue = train.batch(lambda: next(it), batch_size=2, dtypes=sl.int64, shapes=[],
                                  allow_smaller_final_batch=True)
        got, coord, threads = _run_to_end(batch_queue)
        coord.join(threads, stop_grace_period_secs=10)  # no error
    assert [b.tolist() for b in got] == [[0, 1], [2, 3], [4]]


# ---- fork --------------------------------------------------------------------------------------------


def _fork_child_runs_a_fresh_pipeline(parent_batch, out):
    try:
        train.clear_queue_runners()  # returns at once: the parent's runners are not the child's
        try:
            parent_batch.dequeue(timeout=1)
            out.put("the parent's batch queue answered in the child")
            return
        except errors.FailedPreconditionError as e:
            if "fork" not in str(e):
                out.put("wrong error: %s" % e)
                return
        batch_queue = _pipeline(np.arange(10), num_epochs=1, batch_size=5)
        coord = train.Coordinator()
        threads = train.start_queue_runners(coord=coord)
        got = _drain(batch_queue)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
        out.put(got)
    except BaseException as e:  # noqa: BLE001 - reported to the parent
        out.put("child failed: %r" % e)


@pytest.mark.timeout(60)
def test_a_fork_child_builds_and_runs_its_own_pipeline_while_the_parent_runs():
    import multiprocessing
    ctx = multiprocessing.get_context("fork")
    with train.Graph().as_default():
        parent_batch = _pipeline(np.arange(1000), batch_size=2)
        coord = train.Coordinator()
        threads = train.start_queue_runners(coord=coord)
        parent_batch.dequeue()
        out = ctx.Queue()
        child = ctx.Process(target=_fork_child_runs_a_fresh_pipeline, args=(parent_batch, out))
        child.start()
        result = out.get(timeout=30)
        child.join(30)
        assert child.exitcode == 0
        assert result == list(range(10)), result
        assert parent_batch.dequeue().tolist() == [2, 3]  # the parent's run goes on
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)


def test_a_batcher_with_inferred_dtypes_runs_again_in_a_new_session():
    graph = train.Graph()
    with graph.as_default():
        state = {"next": 0}

        def produce():
            if state["next"] == 6:
                raise errors.OutOfRangeError(None, None, "done")
            state["next"] += 1
            return np.float32(state["next"])

        batch_queue = train.batch(produce, batch_size=2)
    for _ in range(2):
        state["next"] = 0  # a Python producer's own state is the caller's (as a py_func's)
        with train.Session(graph=graph) as sess:
            coord = train.Coordinator()
            threads = train.start_queue_runners(sess, coord)
            got = [sess.run(batch_queue).tolist() for _ in range(3)]
            with pytest.raises(errors.OutOfRangeError):
                sess.run(batch_queue)
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
        assert got == [[1, 2], [3, 4], [5, 6]]


def test_session_run_takes_structures_callables_and_values():
    with train.Graph().as_default():
        batch_queue = train.batch(train.slice_input_producer([np.arange(4)], num_epochs=1, shuffle=False),
                                  batch_size=2)
        with train.Session() as sess:
            coord = train.Coordinator()
            threads = train.start_queue_runners(sess, coord)
            out = sess.run({"batch": batch_queue, "const": 7, "call": lambda: "called"})
            assert out["batch"].tolist() == [0, 1] and out["const"] == 7 and out["call"] == "called"
            with pytest.raises(ValueError, match="feed_dict"):
                sess.run(batch_queue, feed_dict={"x": 1})
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
        with pytest.raises(RuntimeError, match="closed Session"):
            sess.run(batch_queue)
