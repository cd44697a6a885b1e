"""sluice.data's fused map and batch against tf.data (which fuses them by
default): the same batches, remainders and errors. Skipped without TF."""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

from sluice import data as sd  # noqa: E402
from sluice import errors  # noqa: E402


def _outcomes(iterator, error_class):
    out = []
    while True:
        try:
            out.append(np.asarray(next(iterator)).tolist())
        except StopIteration:
            return out
        except error_class:
            out.append("error")


@pytest.mark.parametrize("drop_remainder", [False, True])
def test_same_batches_as_tf(drop_remainder):
    t = tf.data.Dataset.range(11).map(lambda x: x * 3, num_parallel_calls=2).batch(4, drop_remainder)
    s = sd.Dataset.range(11).map(lambda x: x * 3, num_parallel_calls=2).batch(4, drop_remainder)
    assert [b.tolist() for b in s] == [b.tolist() for b in t.as_numpy_iterator()]
    assert int(s.cardinality()) == int(t.cardinality())


def test_a_failed_element_fails_its_batch_as_in_tf():
    def tf_fn(x):
        tf.debugging.assert_none_equal(x, tf.constant(5, tf.int64))
        return x

    def sd_fn(x):
        if x == 5:
            raise ValueError("element 5")
        return x
    t = _outcomes(iter(tf.data.Dataset.range(20).map(tf_fn, num_parallel_calls=4).batch(4)),
                  tf.errors.InvalidArgumentError)
    s = _outcomes(iter(sd.Dataset.range(20).map(sd_fn, num_parallel_calls=4).batch(4)), errors.OpError)
    assert s == t == [[0, 1, 2, 3], "error", [8, 9, 10, 11], [12, 13, 14, 15], [16, 17, 18, 19]]


def test_rows_of_different_shapes_fail_with_tfs_message():
    t = tf.data.Dataset.range(4).map(lambda x: tf.fill([x % 2 + 1], x), num_parallel_calls=1).batch(4)
    s = sd.Dataset.range(4).map(lambda x: np.full([x % 2 + 1], x), num_parallel_calls=1).batch(4)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot add tensor to the batch") as te:
        list(t.as_numpy_iterator())
    with pytest.raises(errors.InvalidArgumentError, match="Cannot add tensor to the batch") as se:
        list(s)
    # One thread: the batch is allocated for row 0 on both sides.
    assert "[tensor]: [2], [batch]: [1]" in str(te.value)
    assert "[tensor]: [2], [batch]: [1]" in str(se.value)
