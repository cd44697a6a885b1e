"""The probe of a Python function against TensorFlow 2's tracing: the same elements (nothing lost
to it) and the same element_spec where TF's is not static by shape inference. Skipped without TF."""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

import sluice as sl  # noqa: E402
from sluice import data as sd  # noqa: E402


def plain(x):
    if isinstance(x, tuple):
        return tuple(plain(v) for v in x)
    return np.asarray(x).tolist()


def shared_generator(d, n=10):
    src = iter(range(n))
    spec = tf.TensorSpec([], tf.int64) if d is tf.data else sd.TensorSpec([], sl.int64)
    return d.Dataset.from_generator(lambda: src, output_signature=spec)


def spec_of(spec):
    if isinstance(spec, tuple):
        return tuple(spec_of(s) for s in spec)
    return (spec.shape.as_list(), spec.dtype.name)


PIPELINES = {
    "batch_then_map": lambda d: shared_generator(d).batch(4).map(lambda x: x),
    "shuffle_then_map": lambda d: shared_generator(d).shuffle(4, seed=1).map(lambda x: x),
    "flat_map": lambda d: shared_generator(d).flat_map(lambda x: d.Dataset.from_tensors(x)),
    "interleave": lambda d: shared_generator(d).interleave(lambda x: d.Dataset.from_tensors(x), cycle_length=2,
                                                          num_parallel_calls=2),
    "scan": lambda d: shared_generator(d).scan(np.int64(0), lambda s, x: (s + x, x)),
    "padded_batch_of_map": lambda d: d.Dataset.range(3).map(
        lambda x: tf.fill([x], x) if d is tf.data else np.full([x], x)).padded_batch(2),
    "bucket_by_sequence_length": lambda d: d.Dataset.range(1, 5).map(
        lambda x: tf.range(x) if d is tf.data else np.arange(x)).bucket_by_sequence_length(
            (lambda x: tf.shape(x)[0]) if d is tf.data else len, [3], [2, 2]),
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_a_pipeline_built_with_a_python_function_gives_tensorflows_elements(name):
    expected = [plain(x) for x in PIPELINES[name](tf.data).as_numpy_iterator()]
    got = [plain(x) for x in PIPELINES[name](sd)]
    assert got == expected


SPECS = {
    "arange": lambda d: d.Dataset.range(1, 5).map(lambda x: tf.range(x) if d is tf.data else np.arange(x)),
    "padded_batch": lambda d: d.Dataset.range(3).map(
        lambda x: tf.fill([x], x) if d is tf.data else np.full([x], x)).padded_batch(2),
    "batch_drop_remainder": lambda d: d.Dataset.range(1, 8).map(
        lambda x: tf.range(x)[:1] if d is tf.data else np.arange(x)[:1]).batch(3, drop_remainder=True),
    "elementwise": lambda d: d.Dataset.from_tensor_slices((np.ones((4, 3), np.float32), np.arange(4))).map(
        lambda x, y: (x * 2.0 - 1, y + 1)),
}


@pytest.mark.parametrize("name", sorted(SPECS))
def test_the_element_spec_of_a_python_function_is_tensorflows(name):
    assert spec_of(SPECS[name](sd).element_spec) == spec_of(SPECS[name](tf.data).element_spec)
