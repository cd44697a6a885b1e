"""Dataset.from_record_files against TensorFlow 2's tf.data.TFRecordDataset on the same files:
the same elements (in file order without a shuffle; the same multiset, once each, with
shuffle_globally). Skipped without TF."""

import collections
import os

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

from sluice import data as sd  # noqa: E402


@pytest.fixture
def files(tmp_path):
    paths = []
    for i, n in enumerate([17, 0, 40, 3]):
        path = str(tmp_path / ("f%d.tfrecord" % i))
        with tf.io.TFRecordWriter(path) as w:  # written by TensorFlow
            for j in range(n):
                w.write(b"r%d-%d" % (i, j) * (j % 5))
        paths.append(path)
    return paths


def tf_records(files):
    return [r.numpy() for r in tf.data.TFRecordDataset(files)]


def test_unshuffled_records_are_tfrecord_datasets(files):
    assert [bytes(r) for r in sd.Dataset.from_record_files(files)] == tf_records(files)


@pytest.mark.parametrize("use_mmap", [True, False])
def test_global_shuffle_is_a_permutation_of_tfrecord_datasets(files, use_mmap):
    ds = sd.Dataset.from_record_files(files, use_mmap=use_mmap).shuffle_globally(seed=5)
    expected = collections.Counter(tf_records(files))
    for _ in range(2):
        got = [bytes(r) for r in ds]
        assert len(got) == sum(expected.values())
        assert collections.Counter(got) == expected
