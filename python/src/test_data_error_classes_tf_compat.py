"""The error classes of test_data_error_classes.py's cases are TensorFlow 2's. Skipped without TF."""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

import sluice as sl  # noqa: E402
from sluice import data as sd  # noqa: E402


def _gen(*values):
    def gen():
        yield from values
    return gen


# name -> build(namespace, dtypes): the call that raises (iteration included).
CASES = {
    "slices_unequal_lengths": lambda d, t: d.Dataset.from_tensor_slices(([1, 2], [1, 2, 3])),
    "concatenate_other_dtype": lambda d, t: d.Dataset.range(3).concatenate(d.Dataset.from_tensor_slices(["a"])),
    "concatenate_other_structure": lambda d, t: d.Dataset.range(3).concatenate(
        d.Dataset.from_tensor_slices(([1], [2]))),
    "generator_other_dtype": lambda d, t: list(d.Dataset.from_generator(_gen("x"), output_types=t.int64)),
    "generator_other_structure": lambda d, t: list(d.Dataset.from_generator(_gen(1),
                                                                            output_types=(t.int64, t.int64))),
    "generator_other_shape": lambda d, t: list(d.Dataset.from_generator(_gen([1, 2]), output_types=t.int64,
                                                                        output_shapes=[3])),
    "filter_not_bool": lambda d, t: d.Dataset.range(3).filter(lambda x: x),
    "filter_not_scalar": lambda d, t: d.Dataset.range(3).filter(
        lambda x: tf.fill([2], True) if d is tf.data else np.array([True, True])),
}


def _error_class(fn):
    with pytest.raises(Exception) as info:  # noqa: PT011 - the class is what is compared
        fn()
    return type(info.value).__name__


@pytest.mark.parametrize("name", sorted(CASES))
def test_error_class_is_tensorflows(name):
    build = CASES[name]
    assert _error_class(lambda: build(sd, sl)) == _error_class(lambda: build(tf.data, tf))


def test_gzip_read_as_plain_has_tensorflows_class_and_hint(tmp_path):
    path = str(tmp_path / "g.tfrecord")
    with tf.io.TFRecordWriter(path, "GZIP") as w:
        w.write(b"hello")
    with pytest.raises(tf.errors.DataLossError, match=r"\(Is this even a TFRecord file\?\)"):
        list(tf.data.TFRecordDataset(path))
    with pytest.raises(sl.errors.DataLossError, match=r"\(Is this even a TFRecord file\?\)"):
        list(sd.TFRecordDataset(path))
