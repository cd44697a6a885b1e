"""A map or filter function failing on an element read from a file names the file and record."""

import pytest

import sluice as sl
from sluice import errors
from sluice import io as sio

sd = sl.data


@pytest.fixture
def files(tmp_path):
    paths = []
    for name, records in (("a.tfrecord", [b"ok", b"ok"]), ("b.tfrecord", [b"ok", b"ok", b"bad", b"ok"])):
        path = str(tmp_path / name)
        with sio.TFRecordWriter(path) as w:
            for r in records:
                w.write(r)
        paths.append(path)
    return paths


def _fail_on_bad(x):
    if x == b"bad":
        raise ValueError("cannot use this record")
    return x


@pytest.mark.parametrize("num_parallel_calls", [None, 2])
def test_a_python_map_error_names_the_file_and_record(files, num_parallel_calls):
    ds = sd.TFRecordDataset(files).map(_fail_on_bad, num_parallel_calls=num_parallel_calls)
    with pytest.raises(errors.OpError) as info:
        list(ds)
    message = str(info.value)
    assert "cannot use this record" in message
    assert 'file "%s", record 2' % files[1] in message


def test_a_native_parse_error_names_the_file_and_record(files):
    features = {"x": sio.FixedLenFeature([], sl.int64)}
    ds = sd.TFRecordDataset(files[1]).map(sd.ops.parse_example(features))
    with pytest.raises(errors.InvalidArgumentError, match='record 0\\)'):
        next(iter(ds))


def test_a_filter_error_names_the_file_and_record(files):
    def keep(x):
        if x == b"bad":
            raise ValueError("no predicate")
        return True

    with pytest.raises(errors.OpError, match='file ".*b.tfrecord", record 2'):
        list(sd.TFRecordDataset(files).filter(keep))


def test_an_element_not_read_from_a_file_names_no_file():
    with pytest.raises(errors.OpError) as info:
        list(sd.Dataset.from_tensor_slices([b"ok", b"bad"]).map(_fail_on_bad))
    assert "(file \"" not in str(info.value)
