"""sluice.data.Dataset.from_record_files and shuffle_globally: every record once per epoch,
orders keyed by (seed, epoch), index side files, corrupt records, position."""

import collections
import os

import pytest

from sluice import data as sd
from sluice import errors
from sluice import io as sio


def write(path, records):
    with sio.TFRecordWriter(str(path)) as w:
        for r in records:
            w.write(r)
    return str(path)


@pytest.fixture
def files(tmp_path):
    sizes = [30, 1, 0, 45, 24]
    return [write(tmp_path / ("f%d" % i), [b"f%d-%d" % (i, j) for j in range(n)]) for i, n in enumerate(sizes)]


def records(ds):
    return [bytes(x) for x in ds]


def test_elements_are_tfrecord_dataset_elements_in_file_order(files):
    ds = sd.Dataset.from_record_files(files)
    assert ds.cardinality() == 100
    expected = list(sd.TFRecordDataset(files))
    got = list(ds)
    assert [bytes(x) for x in got] == [bytes(x) for x in expected]
    assert type(got[0]) is type(expected[0])
    assert ds.element_spec == sd.TFRecordDataset(files).element_spec


@pytest.mark.parametrize("use_mmap", [True, False])
def test_every_record_exactly_once_per_epoch(files, use_mmap):
    ds = sd.Dataset.from_record_files(files, read_ahead_records=9, use_mmap=use_mmap).shuffle_globally(seed=4)
    everything = sorted(records(sd.Dataset.from_record_files(files)))
    orders = []
    for _ in range(3):
        order = records(ds)
        assert collections.Counter(order) == collections.Counter(everything)
        assert max(collections.Counter(order).values()) == 1
        orders.append(order)
    assert orders[0] != orders[1] != orders[2]
    assert orders[0] != everything


def test_repeat_counts_every_record_once_per_epoch(files):
    got = records(sd.Dataset.from_record_files(files).shuffle_globally(seed=1).repeat(4))
    assert len(got) == 400
    assert set(collections.Counter(got).values()) == {4}
    assert got[:100] != got[100:200]


def test_same_seed_same_orders_across_datasets(files):
    def orders(seed, reshuffle=True):
        ds = sd.Dataset.from_record_files(files).shuffle_globally(seed, reshuffle_each_iteration=reshuffle)
        return records(ds), records(ds)

    assert orders(7) == orders(7)
    assert orders(7) != orders(8)
    first, second = orders(7, reshuffle=False)
    assert first == second == orders(7)[0]
    unseeded = sd.Dataset.from_record_files(files).shuffle_globally()
    assert sorted(records(unseeded)) == sorted(orders(7)[0])


def test_position_is_seed_epoch_and_records_handed_out(files):
    ds = sd.Dataset.from_record_files(files).shuffle_globally(seed=3)
    records(ds)
    it = iter(ds)
    next(it)
    next(it)
    assert it.position == (3, 1, 2)
    assert iter(sd.Dataset.from_record_files(files)).position == (0, 0, 0)


def test_stale_index_is_rebuilt(tmp_path):
    f = write(tmp_path / "f", [b"a", b"b"])
    assert records(sd.Dataset.from_record_files(f)) == [b"a", b"b"]
    assert os.path.exists(f + ".idx")
    write(tmp_path / "f", [b"xx", b"yyy", b"z"])
    with pytest.raises(errors.FailedPreconditionError):
        sd.Dataset.from_record_files(f, index="require")
    ds = sd.Dataset.from_record_files(f)
    assert ds.cardinality() == 3
    assert records(ds) == [b"xx", b"yyy", b"z"]
    sd.Dataset.from_record_files(f, index="require")


def test_no_save_writes_no_side_file(tmp_path):
    f = write(tmp_path / "f", [b"a"])
    assert records(sd.Dataset.from_record_files(f, index="no_save")) == [b"a"]
    assert not os.path.exists(f + ".idx")


@pytest.mark.parametrize("use_mmap", [True, False])
def test_corrupt_record_is_data_loss_naming_file_record_and_offset(tmp_path, use_mmap):
    f = write(tmp_path / "f", [b"good", b"soon bad", b"fine"])
    ds = sd.Dataset.from_record_files(f, use_mmap=use_mmap)
    with open(f, "r+b") as fh:
        fh.seek(20 + 12 + 2)
        fh.write(b"X")
    it = iter(ds)
    assert bytes(next(it)) == b"good"
    with pytest.raises(errors.DataLossError) as e:
        next(it)
    # As TFRecordDataset's reader: a data checksum is reported where the data starts (20 + 12).
    assert f in str(e.value) and "record 1" in str(e.value) and "at 32" in str(e.value)
    assert bytes(next(it)) == b"fine"


def test_refusals(tmp_path, files):
    with pytest.raises(errors.InvalidArgumentError, match="GZIP"):
        sd.Dataset.from_record_files(files, compression_type="GZIP")
    with pytest.raises(errors.NotFoundError):
        sd.Dataset.from_record_files(str(tmp_path / "missing"))
    with pytest.raises(ValueError):
        sd.Dataset.from_record_files(files, index="sometimes")
    with pytest.raises(TypeError):
        sd.Dataset.from_record_files(files).take(3).shuffle_globally(1)
