"""keep_input of the maybe_ batchers must be bools, as TensorFlow's is.

TF feeds keep_input to a bool-only op (cond's Switch, or a cast to a 0/1
partition index): a float or string tensor there fails ("Input 'pred'
passed float expected bool"), and a constant float is only tested for
truth (NaN is true). sluice refuses a constant keep_input that is not bools
with TypeError when the batcher is built, and stops the pipeline with
InvalidArgumentError naming keep_input when a callable returns something
else than a bool (or, with enqueue_many, a vector of bools).
"""

import numpy as np
import pytest

from sluice import dtypes
from sluice import errors
from sluice import train


def _producer():
    return lambda: np.int64(1)


@pytest.mark.parametrize("keep", [1.0, 0.0, float("nan"), "yes", b"", np.float32(1), np.int64(1), 2, None,
                                  np.array(1.5)])
def test_constant_keep_input_that_is_not_a_bool_is_a_type_error(keep):
    with pytest.raises(TypeError, match="`keep_input` must be a bool"):
        train.maybe_batch(_producer(), keep, batch_size=1, dtypes=dtypes.int64, shapes=())


@pytest.mark.parametrize("keep", [[1.0, 0.0], [0.5, 1.0], ["a", "b"], [float("nan")] * 2, [1, 2]])
def test_constant_vector_keep_input_that_is_not_bools_is_a_type_error(keep):
    with pytest.raises(TypeError, match="`keep_input` must be a bool or a vector of bools"):
        train.maybe_batch(lambda: np.arange(2), keep, batch_size=1, enqueue_many=True, dtypes=dtypes.int64,
                          shapes=())


@pytest.mark.parametrize("keep", [True, False, np.bool_(True), np.array(False), 0, 1, [True, False]])
def test_bool_keep_input_is_accepted(keep):
    many = isinstance(keep, list)
    train.maybe_batch(lambda: np.arange(2) if many else np.int64(1), keep, batch_size=1, enqueue_many=many,
                      dtypes=dtypes.int64, shapes=())


def _join_error(batch):
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    with pytest.raises(errors.InvalidArgumentError) as info:
        coord.join(threads, stop_grace_period_secs=10)
    return info.value


@pytest.mark.timeout(60)
@pytest.mark.parametrize("native", [False, True])
@pytest.mark.parametrize("result", [1.0, float("nan"), "yes", 1, None])
def test_predicate_returning_a_non_bool_stops_the_pipeline(native, result):
    producer = train.limit_epochs(np.int64(1), None) if native else _producer()
    b = train.maybe_batch(producer, lambda x: result, batch_size=1, dtypes=dtypes.int64, shapes=())
    e = _join_error(b)
    assert "keep_input must return a bool, not %s" % type(result).__name__ in e.message


@pytest.mark.timeout(60)
@pytest.mark.parametrize("native", [False, True])
def test_enqueue_many_predicate_returning_non_bools_stops_the_pipeline(native):
    producer = train.limit_epochs(np.arange(3), None) if native else (lambda: np.arange(3))
    b = train.maybe_batch(producer, lambda batch: batch * 0.5, batch_size=1, enqueue_many=True,
                          dtypes=dtypes.int64, shapes=())
    e = _join_error(b)
    assert "keep_input must return bools (one per example of the batch), not an array of dtype float64" in e.message
