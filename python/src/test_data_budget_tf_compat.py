"""sluice.data's error policy 'skip' against TensorFlow 2's ignore_errors on the same
damaged files: the same elements survive. Skipped without TF."""

import os

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

from sluice import data as sd  # noqa: E402
from sluice import io as sio  # noqa: E402


def write(path, records):
    with sio.TFRecordWriter(path) as w:
        for r in records:
            w.write(r)
    return path


@pytest.fixture
def damaged(tmp_path):
    """Three files: one with a corrupt record 1, one cut inside its last record, one whole."""
    corrupt = write(str(tmp_path / "corrupt.tfrecord"), [b"c%d" % i for i in range(4)])
    raw = bytearray(open(corrupt, "rb").read())
    raw[(2 + 16) + 12] ^= 0xFF
    open(corrupt, "wb").write(bytes(raw))
    cut = write(str(tmp_path / "cut.tfrecord"), [b"t%d" % i for i in range(3)])
    os.truncate(cut, os.path.getsize(cut) - 5)
    whole = write(str(tmp_path / "whole.tfrecord"), [b"w0", b"w1"])
    return [corrupt, cut, whole]


def tf_ignore_errors(files):
    return [x.numpy() for x in tf.data.TFRecordDataset(files).ignore_errors()]


def test_skip_policy_keeps_the_elements_tf_ignore_errors_keeps(damaged):
    expected = tf_ignore_errors(damaged)
    assert expected == [b"c0", b"t0", b"t1", b"w0", b"w1"]
    it = iter(sd.TFRecordDataset(damaged, error_policy="skip"))
    assert list(it) == expected
    assert it.skipped_errors == 2


def test_ignore_errors_keeps_tf_meaning_and_gains_the_count(damaged):
    it = iter(sd.TFRecordDataset(damaged).ignore_errors())
    assert list(it) == tf_ignore_errors(damaged)
    assert it.skipped_errors == 2
    assert sum(k["count"] for k in it.error_report()) == 2


def test_options_error_policy_skip_matches_tf_ignore_errors(damaged):
    options = sd.Options()
    options.error_policy = "skip"
    assert list(sd.TFRecordDataset(damaged).with_options(options)) == tf_ignore_errors(damaged)
