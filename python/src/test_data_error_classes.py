"""Errors raised where TF raises Python errors at construction, and where its py_func turns a Python error into
InvalidArgumentError at the element (test_data_error_classes_tf_compat.py compares them with TensorFlow)."""

import numpy as np
import pytest

import sluice as sl
from sluice import data as sd
from sluice import errors


def test_from_tensor_slices_of_unequal_lengths_is_a_value_error():
    with pytest.raises(ValueError, match="Dimensions 2 and 3 are not compatible"):
        sd.Dataset.from_tensor_slices(([1, 2], [1, 2, 3]))


def test_concatenate_of_other_dtypes_is_a_type_error():
    with pytest.raises(TypeError, match="Incompatible dataset elements"):
        sd.Dataset.range(3).concatenate(sd.Dataset.from_tensor_slices(["a"]))
    with pytest.raises(TypeError, match="Incompatible dataset elements"):
        sd.Dataset.range(3).concatenate(sd.Dataset.from_tensor_slices(np.array([1], np.int32)))


def _gen(*values):
    def gen():
        yield from values
    return gen


def test_from_generator_value_of_another_dtype_is_invalid_argument_at_the_element():
    it = iter(sd.Dataset.from_generator(_gen(1, "x"), output_types=sl.int64))
    assert int(next(it)) == 1
    with pytest.raises(errors.InvalidArgumentError, match="could not be converted to the expected type. The "
                                                          "expected type was int64, but the yielded element was 'x'"):
        next(it)
    ds = sd.Dataset.from_generator(_gen("x"), output_signature=sd.TensorSpec([], sl.int64))
    with pytest.raises(errors.InvalidArgumentError, match="could not be converted"):
        list(ds)


def test_from_generator_value_of_another_structure_is_invalid_argument_at_the_element():
    ds = sd.Dataset.from_generator(_gen(1), output_types=(sl.int64, sl.int64))
    with pytest.raises(errors.InvalidArgumentError, match="did not match the expected structure"):
        list(ds)


def test_filter_predicate_returning_a_non_bool():
    with pytest.raises(ValueError, match="must return a `tf.bool` scalar tensor"):
        sd.Dataset.range(3).filter(lambda x: x)
    with pytest.raises(ValueError, match=r"bool\[2\]"):
        sd.Dataset.range(3).filter(lambda x: np.array([True, True]))


def test_filter_predicate_error_is_left_to_its_element():
    def keep(x):
        if x == 0:
            raise KeyError("only at iteration")
        return True
    ds = sd.Dataset.range(2).filter(keep)  # the probe's error is not raised here
    with pytest.raises(errors.UnknownError, match="only at iteration"):
        list(ds)


def test_gzip_tfrecord_read_as_plain_asks_if_it_is_a_tfrecord_file(tmp_path):
    path = str(tmp_path / "g.tfrecord")
    with sl.io.TFRecordWriter(path, "GZIP") as w:
        w.write(b"hello")
    with pytest.raises(errors.DataLossError) as info:
        list(sd.TFRecordDataset(path))
    message = str(info.value)
    assert "(Is this even a TFRecord file?)" in message and 'compression_type "GZIP"' in message
    assert "corrupted record at 0" in message and path in message and "length checksum mismatch" in message
    assert [bytes(r) for r in sd.TFRecordDataset(path, compression_type="GZIP")] == [b"hello"]
