"""sluice.data's window, scan, take_while, unique, ignore_errors, rebatch,
group_by_window and bucket_by_sequence_length (bind_data_xforms.cc): nested
window datasets without copies, the skipped-error count and its warning,
bounded windows, errors at their element. TensorFlow cross-checks are in
test_data_xforms_tf_compat.py."""

import logging

import numpy as np
import pytest

import sluice
from sluice import data as sd
from sluice import io as sio


def items(ds):
    return [x for x in ds]


def ints(ds):
    return [np.asarray(x).tolist() for x in ds]


def _address(array):
    return array.__array_interface__["data"][0]


def test_window_elements_are_datasets_in_the_input_structure():
    ds = sd.Dataset.from_tensor_slices({"a": np.arange(5), "b": np.arange(5) * 10}).window(2, drop_remainder=True)
    windows = items(ds)
    assert len(windows) == 2 and ds.cardinality() == 2
    assert set(windows[1]) == {"a", "b"}
    assert isinstance(windows[1]["a"], sd.DatasetV2)
    assert ints(windows[1]["a"]) == [2, 3] and ints(windows[1]["b"]) == [20, 30]
    assert isinstance(ds.element_spec["a"], sd.DatasetSpec)


def test_window_datasets_view_the_input_tensors_without_copying():
    rows = np.arange(12, dtype=np.float32).reshape(6, 2)
    window = next(iter(sd.Dataset.from_tensors(rows).unbatch().window(3)))
    first, second = items(window)[:2]
    assert second.tolist() == [2.0, 3.0]
    # Both rows view the one buffer the input element had: adjacent rows, 8 bytes apart.
    assert _address(second) - _address(first) == 8


def test_window_survives_structure_preserving_transformations():
    ds = sd.Dataset.range(6).window(2).skip(1).repeat(2).take(3)
    assert [ints(w) for w in ds] == [[2, 3], [4, 5], [2, 3]]


def test_flat_map_over_windows_batches_each_window():
    ds = sd.Dataset.range(7).window(3, shift=2).flat_map(lambda w: w.batch(3))
    assert ints(ds) == [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6]]


def test_map_over_windows_is_not_implemented():
    with pytest.raises(NotImplementedError):
        sd.Dataset.range(4).window(2).map(lambda w: w)


def test_scan_restarts_the_state_for_every_iterator():
    ds = sd.Dataset.range(4).scan(np.int64(10), lambda s, x: (s + x, s))
    assert ints(ds) == [10, 10, 11, 13]
    assert ints(ds) == [10, 10, 11, 13]
    assert ds.cardinality() == 4


def test_scan_function_error_reaches_its_element():
    def fn(s, x):
        if x == 2:
            raise sluice.errors.DataLossError(None, None, "bad two")
        return s, x
    it = iter(sd.Dataset.range(4).scan(np.int64(0), fn))
    assert [int(next(it)), int(next(it))] == [0, 1]
    with pytest.raises(sluice.errors.DataLossError, match="bad two"):
        next(it)


def test_take_while_reads_no_further_than_the_first_rejected_element():
    seen = []

    def record(x):
        seen.append(int(x))
        return x
    ds = sd.Dataset.range(100).map(record).take_while(lambda x: x < 3)
    seen.clear()
    assert ints(ds) == [0, 1, 2]
    assert seen == [0, 1, 2, 3]


def test_unique_of_strings_keeps_first_appearances():
    assert items(sd.Dataset.from_tensor_slices([b"x", b"y", b"x", b"z", b"y"]).unique()) == [b"x", b"y", b"z"]


def _corrupt_file(tmp_path):
    path = str(tmp_path / "bad.tfrecord")
    with sio.TFRecordWriter(path) as w:
        w.write(b"good")
        w.write(b"bad record")
    raw = bytearray(open(path, "rb").read())
    raw[16 + 4 + 12 + 3] ^= 0xFF
    open(path, "wb").write(bytes(raw))
    return path


def test_ignore_errors_counts_skipped_elements_on_the_iterator(tmp_path):
    good = str(tmp_path / "good.tfrecord")
    with sio.TFRecordWriter(good) as w:
        w.write(b"next file")
    it = iter(sd.TFRecordDataset([_corrupt_file(tmp_path), good]).ignore_errors())
    assert it.skipped_errors == 0
    assert items(it) == [b"good", b"next file"]
    assert it.skipped_errors == 1


def test_ignore_errors_log_warning_names_the_error_and_its_file(tmp_path, caplog):
    path = _corrupt_file(tmp_path)
    with caplog.at_level(logging.WARNING, logger="sluice"):
        assert items(sd.TFRecordDataset(path).ignore_errors(log_warning=True)) == [b"good"]
        assert items(sd.TFRecordDataset(path).apply(sd.experimental.ignore_errors())) == [b"good"]
    warnings = [r.getMessage() for r in caplog.records if r.name == "sluice" and r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "DATA_LOSS" in warnings[0] and "bad.tfrecord" in warnings[0] and "record: 1" in warnings[0]


def test_ignore_errors_skips_python_function_failures():
    def fn(x):
        if x % 2:
            raise ValueError("odd")
        return x
    it = iter(sd.Dataset.range(6).map(fn).ignore_errors())
    assert ints(it) == [0, 2, 4]
    assert it.skipped_errors == 3


def test_rebatch_rows_are_slices_of_the_input_batch():
    rows = np.arange(8, dtype=np.int64)
    got = items(sd.Dataset.from_tensors(rows).rebatch(4))
    assert [g.tolist() for g in got] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert _address(got[1]) - _address(got[0]) == 4 * 8  # two views of one buffer


def test_group_by_window_windows_hold_at_most_window_size_elements():
    sizes = []

    def reduce(key, window):
        sizes.append(int(window.cardinality()))
        return window.batch(100)
    ds = sd.Dataset.range(20).group_by_window(lambda x: x % 2, reduce, window_size=3)
    got = ints(ds)
    assert sorted(v for batch in got for v in batch) == list(range(20))
    assert max(sizes) == 3


def test_group_by_window_key_func_must_return_int64():
    with pytest.raises(ValueError, match="Invalid `key_func`"):
        sd.Dataset.range(3).group_by_window(lambda x: np.int32(x), lambda k, w: w, window_size=1)


def test_bucket_pad_to_boundary_past_the_last_boundary_is_invalid_argument():
    sequences = sd.Dataset.from_generator(lambda: (np.full([n], n) for n in range(1, 6)),
                                          output_signature=sd.TensorSpec([None], np.int64))
    ds = sequences.bucket_by_sequence_length(lambda x: len(x), [3], [2, 2], pad_to_bucket_boundary=True)
    with pytest.raises(sluice.errors.InvalidArgumentError, match="pad_to_bucket_boundary"):
        items(ds)
