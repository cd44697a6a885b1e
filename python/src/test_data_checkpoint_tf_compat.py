"""Iterator checkpoints against TensorFlow 2's: the same pipeline saved after
k elements continues the same way in both (sluice's seeded shuffle gives
TF's order). Skipped without TF."""

import os

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

from sluice import data as sd  # noqa: E402
from sluice import train  # noqa: E402


def shuffle_map(d):
    ds = d.Dataset.range(40).shuffle(10, seed=5).map(lambda x: x * 2, num_parallel_calls=2, deterministic=True)
    return ds.prefetch(2).repeat(2)


def interleave_shuffle(d):
    ds = d.Dataset.range(8).interleave(lambda x: d.Dataset.range(x * 100, x * 100 + 10), cycle_length=3,
                                       block_length=2, num_parallel_calls=3, deterministic=True)
    return ds.shuffle(8, seed=2).prefetch(2)


def take(it, k):
    return [int(next(it)) for _ in range(k)]


@pytest.mark.parametrize("build,k", [(shuffle_map, 0), (shuffle_map, 7), (shuffle_map, 40), (shuffle_map, 63),
                                     (interleave_shuffle, 5), (interleave_shuffle, 33)])
def test_save_after_k_elements_continues_as_tf_does(tmp_path, build, k):
    tf_it = iter(build(tf.data))
    tf_first = take(tf_it, k)
    tf_path = tf.train.Checkpoint(iterator=tf_it).write(str(tmp_path / "tf"))
    tf_restored = iter(build(tf.data))
    tf.train.Checkpoint(iterator=tf_restored).read(tf_path).assert_consumed()
    tf_rest = [int(x) for x in tf_restored]

    it = iter(build(sd))
    first = take(it, k)
    path = train.Checkpoint(iterator=it).write(str(tmp_path / "sluice"))
    restored = iter(build(sd))
    train.Checkpoint(iterator=restored).read(path).assert_consumed()
    rest = [int(x) for x in restored]

    assert first == tf_first
    assert rest == tf_rest
    assert len(first + rest) == len([x for x in build(sd)])
