"""TensorFlow cross-checks of the seeded input producers' orders.

sluice.train's input_producer, string_input_producer, range_input_producer
and slice_input_producer with shuffle=True and a seed must give, epoch after
epoch, the order TensorFlow's tf.compat.v1.train functions give for that
seed (its RandomShuffle op on one Philox stream). TensorFlow's pipelines run
in a Graph/Session with its queue runners. Skipped when TensorFlow is not
installed; src/train/input_producers_test.cc pins a few orders without it.
"""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1

from sluice import _input  # noqa: E402
from sluice import errors  # noqa: E402
from sluice import train  # noqa: E402

EPOCHS = 3


@pytest.fixture(autouse=True)
def _clean_registry():
    train.clear_queue_runners()
    yield
    train.clear_queue_runners()


def tf_queue_values(build, count, graph_seed=None):
    """The first `count` values of the queue `build()` makes in a fresh TF graph."""
    graph = tf.Graph()
    with graph.as_default():
        if graph_seed is not None:
            tf1.set_random_seed(graph_seed)
        q = build()
        values = q.dequeue_many(count)
        with tf1.Session(graph=graph) as sess:
            sess.run(tf1.local_variables_initializer())
            coord = tf1.train.Coordinator()
            threads = tf1.train.start_queue_runners(sess, coord)
            out = sess.run(values)
            coord.request_stop()
            coord.join(threads)
    return out


def sluice_queue_values(q, count):
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    try:
        return np.stack([np.asarray(q.dequeue(timeout=30)) for _ in range(count)])
    finally:
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=30)


def names(n):
    return [b"file%d" % i for i in range(n)]


@pytest.mark.parametrize("limit, seed", [(1, 3), (2, 5), (2, 11), (7, 0), (1000, 123), (50, -4), (50, 2**40)])
def test_range_input_producer_seeded_order_is_tensorflows(limit, seed):
    count = limit * EPOCHS
    want = tf_queue_values(
        lambda: tf1.train.range_input_producer(limit, num_epochs=EPOCHS, seed=seed, capacity=count), count)
    got = sluice_queue_values(train.range_input_producer(limit, num_epochs=EPOCHS, seed=seed), count)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n, seed", [(1, 9), (2, 1), (5, 42), (1000, 7)])
def test_string_input_producer_seeded_order_is_tensorflows(n, seed):
    count = n * EPOCHS
    want = tf_queue_values(
        lambda: tf1.train.string_input_producer(names(n), num_epochs=EPOCHS, seed=seed, capacity=count), count)
    got = sluice_queue_values(train.string_input_producer(names(n), num_epochs=EPOCHS, seed=seed), count)
    assert [bytes(v) for v in got] == list(want)


@pytest.mark.parametrize("shape, seed", [((2, 3), 4), ((6, 2, 2), 17), ((1000,), 99), ((1, 4), 5)])
def test_input_producer_seeded_row_order_is_tensorflows(shape, seed):
    rows = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    count = shape[0] * EPOCHS
    want = tf_queue_values(lambda: tf1.train.input_producer(rows, num_epochs=EPOCHS, seed=seed, capacity=count), count)
    got = sluice_queue_values(train.input_producer(rows, num_epochs=EPOCHS, seed=seed), count)
    np.testing.assert_array_equal(got, want)


def test_seeded_order_without_num_epochs_is_tensorflows():
    # Without limit_epochs TF's graph differs; the stream must not.
    count = 10 * 4
    want = tf_queue_values(lambda: tf1.train.range_input_producer(10, seed=8, capacity=5), count)
    got = sluice_queue_values(train.range_input_producer(10, seed=8, capacity=5), count)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n, seed", [(2, 6), (30, 12)])
def test_slice_input_producer_seeded_order_is_tensorflows(n, seed):
    labels = np.arange(n, dtype=np.int64) + 100
    features = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
    count = n * EPOCHS
    graph = tf.Graph()
    with graph.as_default():
        label, feature = tf1.train.slice_input_producer([labels, features], num_epochs=EPOCHS, seed=seed)
        with tf1.Session(graph=graph) as sess:
            sess.run(tf1.local_variables_initializer())
            coord = tf1.train.Coordinator()
            threads = tf1.train.start_queue_runners(sess, coord)
            want = [sess.run([label, feature]) for _ in range(count)]
            coord.request_stop()
            coord.join(threads)

    producer = train.slice_input_producer([labels, features], num_epochs=EPOCHS, seed=seed)
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    try:
        got = [producer() for _ in range(count)]
        with pytest.raises(errors.OutOfRangeError):
            producer()
    finally:
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=30)
    assert [int(g[0]) for g in got] == [int(w[0]) for w in want]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g[1]), w[1])


def test_unseeded_shuffle_differs_from_run_to_run():
    # One order of 30 rows repeated by chance: once in 30! runs.
    a = sluice_queue_values(train.range_input_producer(30, num_epochs=1), 30)
    train.clear_queue_runners()
    b = sluice_queue_values(train.range_input_producer(30, num_epochs=1), 30)
    assert sorted(a) == sorted(b) == list(range(30))
    assert list(a) != list(b)


def tf_get_seeds(op_seeds, graph_seed):
    """TensorFlow's random_seed.get_seed for each op seed, in one fresh graph."""
    from tensorflow.python.framework import random_seed

    with tf.Graph().as_default():
        if graph_seed is not None:
            tf1.set_random_seed(graph_seed)
        return [random_seed.get_seed(s) for s in op_seeds]


@pytest.mark.parametrize("graph_seed", [None, 0, 9, -3, 2**31 - 1, 2**45 + 1])
def test_tf_seed_pair_is_get_seed(graph_seed):
    graph = train.Graph()  # a fresh count for ops without a seed, as TF's fresh graph has
    op_seeds = [None, 0, 5, -1, 2**31 - 1, 2**31, 2**62, None, None]
    want = tf_get_seeds(op_seeds, graph_seed)
    assert [_input._tf_seed_pair(s, graph_seed, graph) for s in op_seeds] == want


def test_graph_seeded_producer_order_is_tensorflows():
    # The pair under a graph seed reaches the producer unchanged.
    count = 12 * EPOCHS
    want = tf_queue_values(
        lambda: tf1.train.range_input_producer(12, num_epochs=EPOCHS, seed=4, capacity=count), count, graph_seed=77)
    with train.Graph().as_default():
        train.set_random_seed(77)
        got = sluice_queue_values(train.range_input_producer(12, num_epochs=EPOCHS, seed=4), count)
    np.testing.assert_array_equal(got, want)
