"""sluice against TensorFlow 2's tf.data on the API a tf.data user reaches for: global seeds,
reduce, get_single_element, counter, Optional, assert_cardinality. Skipped without TF."""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

import sluice  # noqa: E402
from sluice import data as sd  # noqa: E402


@pytest.fixture(autouse=True)
def no_global_seeds():
    yield
    sluice.random.set_seed(None)
    tf.random.set_seed(None)


def ints(ds):
    return [int(x) for x in ds]


# ---- global seeds

def test_global_seed_gives_tfs_orders_for_unseeded_and_seeded_shuffles():
    tf.random.set_seed(1)
    sluice.random.set_seed(1)
    for seed in (None, None, 5):
        t = tf.data.Dataset.range(20).shuffle(20, seed=seed)
        s = sd.Dataset.range(20).shuffle(20, seed=seed)
        assert ints(s) == ints(t)
        assert ints(s) == ints(t)  # the next epoch's reshuffle too


def test_tf1_graph_seed_gives_tfs_order():
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(3)
        nxt = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.range(20).shuffle(20)).get_next()
        with tf.compat.v1.Session() as sess:
            expected = [int(sess.run(nxt)) for _ in range(20)]
    graph = sluice.train.Graph()
    with graph.as_default():
        sluice.train.set_random_seed(3)
        assert ints(sd.Dataset.range(20).shuffle(20)) == expected


# ---- reduce, get_single_element, counter, Optional, assert_cardinality

def test_reduce_gives_tfs_state():
    def fold(s, e):
        return (s[0] + e[0] * e[1], s[1] * 2.0)
    init = (np.int64(1), np.float32(0.5))
    t = tf.data.Dataset.from_tensor_slices((np.array([1, 2, 3], np.int64), np.array([4, 5, 6], np.int64)))
    tv = t.reduce(init, fold)
    s = sd.Dataset.from_tensor_slices((np.array([1, 2, 3], np.int64), np.array([4, 5, 6], np.int64)))
    sv = s.reduce(init, fold)
    assert (int(sv[0]), float(sv[1])) == (int(tv[0]), float(tv[1]))
    assert [v.dtype for v in sv] == [v.dtype.as_numpy_dtype for v in tv]


@pytest.mark.parametrize("n", [0, 1, 2])
def test_get_single_element_agrees_with_tf(n):
    try:
        expected = int(tf.data.Dataset.range(n).get_single_element())
    except tf.errors.InvalidArgumentError as e:
        with pytest.raises(sluice.errors.InvalidArgumentError) as got:
            sd.Dataset.range(n).get_single_element()
        assert got.value.message in e.message
    else:
        assert int(sd.Dataset.range(n).get_single_element()) == expected


def test_counter_agrees_with_tf():
    t = tf.data.Dataset.counter(start=-4, step=3, dtype=tf.int32)
    s = sd.Dataset.counter(start=-4, step=3, dtype=sluice.int32)
    assert ints(s.take(6)) == ints(t.take(6))
    assert int(s.cardinality()) == int(t.cardinality())
    assert s.element_spec.dtype.name == t.element_spec.dtype.name


def test_random_has_tfs_spec_cardinality_and_range():
    t, s = tf.data.Dataset.random(seed=1), sd.Dataset.random(seed=1)
    assert int(s.cardinality()) == int(t.cardinality())
    assert s.element_spec.dtype.name == t.element_spec.dtype.name
    assert max(ints(t.take(500))) < 2**32 and max(ints(s.take(500))) < 2**32


def test_get_next_as_optional_agrees_with_tf():
    t, s = iter(tf.data.Dataset.range(1)), iter(sd.Dataset.range(1))
    for _ in range(2):
        to, so = t.get_next_as_optional(), s.get_next_as_optional()
        assert bool(so.has_value()) == bool(to.has_value())
    with pytest.raises(tf.errors.InvalidArgumentError) as te:
        to.get_value()
    with pytest.raises(sluice.errors.InvalidArgumentError) as se:
        so.get_value()
    assert se.value.message in te.value.message


@pytest.mark.parametrize("n, expected", [(3, 5), (10, 5), (5, 5), (1, -1)])
def test_assert_cardinality_errors_agree_with_tf(n, expected):
    t = tf.data.Dataset.range(n).apply(tf.data.experimental.assert_cardinality(expected))
    s = sd.Dataset.range(n).apply(sd.experimental.assert_cardinality(expected))
    assert int(s.cardinality()) == int(t.cardinality())
    try:
        expected_values = ints(t)
    except tf.errors.FailedPreconditionError as e:
        with pytest.raises(sluice.errors.FailedPreconditionError) as got:
            ints(s)
        assert got.value.message in e.message
    else:
        assert ints(s) == expected_values
