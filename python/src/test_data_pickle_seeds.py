"""Pickled datasets keep the seeds they drew when made without one, so every copy (each spawned
DataLoader worker's) makes the original's orders and the workers' shards partition one permutation."""

import pickle

import numpy as np
import pytest

from sluice import data as sd
from sluice import io as sio

try:
    import torch
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False


def _write(path, records):
    with sio.TFRecordWriter(str(path)) as w:
        for r in records:
            w.write(r)
    return str(path)


@pytest.fixture
def record_dir(tmp_path):
    """Four TFRecord files of 10 records each (b"f<i>-<j>")."""
    for i in range(4):
        _write(tmp_path / ("f%d.tfr" % i), [b"f%d-%d" % (i, j) for j in range(10)])
    return tmp_path


def _epochs(ds, n=2):
    """`n` passes over `ds` (each a new iterator: the second shows a reshuffled order)."""
    return [[np.asarray(x).tolist() for x in ds] for _ in range(n)]


def _same_after_pickle(ds):
    """A copy's first two epochs are the original's (a copy starts at the first epoch)."""
    again = pickle.loads(pickle.dumps(ds))
    expected = _epochs(ds)
    assert _epochs(again) == expected
    # An unpickled copy keeps the seeds too.
    assert _epochs(pickle.loads(pickle.dumps(again))) == expected


def _image(n):
    return sd.Dataset.from_tensors(np.arange(8 * 8 * 3, dtype=np.float32).reshape(8, 8, 3) / 192).repeat(n)


def test_unseeded_shuffle_without_reshuffle_keeps_its_order():
    ds = sd.Dataset.range(10).shuffle(10, reshuffle_each_iteration=False)
    assert [int(x) for x in ds] == [int(x) for x in pickle.loads(pickle.dumps(ds))]


def test_unseeded_reshuffling_shuffle_keeps_every_epochs_order():
    _same_after_pickle(sd.Dataset.range(20).shuffle(20))


def test_unseeded_list_files_keeps_its_orders(tmp_path):
    for i in range(10):
        (tmp_path / ("f%d.txt" % i)).write_bytes(b"")
    _same_after_pickle(sd.Dataset.list_files(str(tmp_path / "*.txt")))


@pytest.mark.parametrize("rerandomize", [False, True])
def test_unseeded_sample_from_datasets_keeps_its_draws(rerandomize):
    _same_after_pickle(sd.Dataset.sample_from_datasets([sd.Dataset.range(20), sd.Dataset.range(100, 120)],
                                                       rerandomize_each_iteration=rerandomize))


def test_unseeded_sample_from_datasets_weighted_by_a_dataset_keeps_its_draws():
    weights = sd.Dataset.from_tensors(np.array([0.5, 0.5], dtype=np.float32)).repeat()
    _same_after_pickle(sd.Dataset.sample_from_datasets([sd.Dataset.range(20), sd.Dataset.range(100, 120)], weights))


def test_unseeded_sample_from_datasets_repeats_its_draws_each_epoch_as_tf():
    ds = sd.Dataset.sample_from_datasets([sd.Dataset.range(20), sd.Dataset.range(100, 120)])
    first, second = _epochs(ds)
    assert first == second


def test_unseeded_shuffle_globally_keeps_its_orders(record_dir):
    files = sorted(str(p) for p in record_dir.glob("*.tfr"))
    _same_after_pickle(sd.Dataset.from_record_files(files).shuffle_globally())


@pytest.mark.parametrize("make_op", [
    lambda: sd.ops.random_crop([4, 4, 3]),
    lambda: sd.ops.random_flip_left_right(),
    lambda: sd.ops.random_flip_up_down(),
    lambda: sd.ops.random_brightness(0.5),
    lambda: sd.ops.random_contrast(0.2, 1.8),
], ids=["random_crop", "random_flip_left_right", "random_flip_up_down", "random_brightness", "random_contrast"])
def test_unseeded_random_native_ops_keep_their_seed(make_op):
    _same_after_pickle(_image(24).map(make_op()))
    fn = make_op()  # the op itself pickles with its seed too
    assert _epochs(_image(24).map(pickle.loads(pickle.dumps(fn)))) == _epochs(_image(24).map(fn))


def test_seeds_drawn_inside_a_public_call_are_kept(tmp_path):
    # make_csv_dataset shuffles its file names and records with shuffles of its own.
    for i in range(6):
        (tmp_path / ("f%d.csv" % i)).write_text("a,b\n" + "".join("%d,%d\n" % (i, j) for j in range(5)))
    ds = sd.experimental.make_csv_dataset(str(tmp_path / "*.csv"), batch_size=4, num_epochs=1)
    again = pickle.loads(pickle.dumps(ds))

    def rows(d):
        return [(b["a"].tolist(), b["b"].tolist()) for b in d]
    assert rows(again) == rows(ds)


def test_interleave_over_unseeded_list_files_keeps_its_order(record_dir):
    ds = sd.Dataset.list_files(str(record_dir / "*.tfr")).interleave(sd.TFRecordDataset, cycle_length=2).batch(5)
    _same_after_pickle(ds)


def test_copies_pickled_separately_agree():
    ds = sd.Dataset.range(30).shuffle(30)
    a, b = pickle.loads(pickle.dumps(ds)), pickle.loads(pickle.dumps(ds))
    assert _epochs(a) == _epochs(b)


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed")
@pytest.mark.timeout(120)
def test_spawned_dataloader_workers_read_every_record_of_unseeded_list_files_once(record_dir):
    import sluice.torch as st
    ds = sd.Dataset.list_files(str(record_dir / "*.tfr")).interleave(sd.TFRecordDataset).batch(5)
    loader = torch.utils.data.DataLoader(st.IterableDataset(ds), batch_size=None, num_workers=2,
                                         multiprocessing_context="spawn")
    got = [bytes(r) for batch in loader for r in batch]
    assert sorted(got) == sorted(b"f%d-%d" % (i, j) for i in range(4) for j in range(10))
