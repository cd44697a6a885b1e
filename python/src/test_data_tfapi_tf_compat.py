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
