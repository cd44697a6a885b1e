"""save() / restore() and sluice.train.Checkpoint for the iterators with their own type:
from_record_files (global shuffle) and sluice.distribute.shard."""

import pytest

import sluice
from sluice import data as sd
from sluice import errors
from sluice import io as sio


@pytest.fixture
def records_file(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    with sio.TFRecordWriter(path) as w:
        for i in range(40):
            w.write(b"r%d" % i)
    return path


def read(it, n=None):
    return [bytes(x) for x in it] if n is None else [bytes(next(it)) for _ in range(n)]


def test_global_shuffle_iterator_restores_where_it_was_saved(records_file, tmp_path):
    ds = sd.Dataset.from_record_files([records_file]).shuffle_globally(seed=1)
    it = iter(ds)
    read(it, 11)
    state = it.save()
    rest = read(it)
    restored = iter(ds)
    restored.restore(state)
    assert read(restored) == rest
    # Through sluice.train.Checkpoint, in a file.
    it = iter(ds)
    read(it, 3)
    ckpt = sluice.train.Checkpoint(iterator=it)
    path = ckpt.write(str(tmp_path / "ckpt"))
    rest = read(it)
    again = iter(ds)
    sluice.train.Checkpoint(iterator=again).read(path)
    assert read(again) == rest


def test_global_shuffle_iterator_rejects_another_pipelines_checkpoint(records_file):
    other = iter(sd.Dataset.range(5).map(lambda x: x))
    next(other)
    it = iter(sd.Dataset.from_record_files([records_file]).shuffle_globally(seed=1))
    with pytest.raises(errors.InvalidArgumentError):
        it.restore(other.save())


@pytest.mark.parametrize("seed", [1234, None])
def test_sharded_iterator_restores_through_a_resume(records_file, tmp_path, seed):
    ds = sluice.distribute.shard([records_file], policy="RECORD", seed=seed)
    it = iter(ds)
    read(it, 7)
    ckpt = sluice.train.Checkpoint(iterator=it)
    path = ckpt.write(str(tmp_path / "ckpt"))
    assert it.save() == it.state.encode()
    rest = read(it)
    assert len(rest) == 33
    again = iter(ds)
    sluice.train.Checkpoint(iterator=again).read(path)
    assert read(again) == rest


def test_sharded_iterator_rejects_bytes_it_did_not_write(records_file):
    it = iter(sluice.distribute.shard([records_file], policy="RECORD", seed=1))
    with pytest.raises(errors.DataLossError):
        it.restore(b"not a state")
