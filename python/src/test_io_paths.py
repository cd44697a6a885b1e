"""Every sluice function that takes a file path takes str, bytes and os.PathLike.

File names are bytes to the operating system and need not be UTF-8 (a
Latin-1 name on an old file system). The extension converts each path as
``os.fsencode`` does, so a bytes name, or its ``os.fsdecode`` (a str with
lone surrogates), reaches the same file. The defect: nanobind refused them
with "incompatible function arguments".
"""

import importlib.util
import os
import pathlib

import numpy as np
import pytest

from sluice import dtypes
from sluice import io
from sluice import queue as sq
from sluice import train

_RECORDS = [b"one", b"two", b"\xff three"]


@pytest.fixture
def odd_dir(tmp_path):
    """A directory whose name has the byte 0xff (not UTF-8), as bytes."""
    d = os.fsencode(tmp_path) + b"/dir\xff"
    os.mkdir(d)
    return d


def _write(path, **kwargs):
    with io.TFRecordWriter(path, **kwargs) as w:
        for r in _RECORDS:
            w.write(r)


def _spellings(path):
    """The same bytes path as bytes, as os.fsdecode's str and as a pathlib.Path."""
    return [path, os.fsdecode(path), pathlib.Path(os.fsdecode(path))]


@pytest.mark.parametrize("spelling", ["bytes", "str", "pathlike"])
def test_tfrecord_writer_and_iterator_take_a_non_utf8_name(odd_dir, spelling):
    path = odd_dir + b"/rec\xff.tfrecord"
    arg = dict(zip(["bytes", "str", "pathlike"], _spellings(path)))[spelling]
    _write(arg)
    assert os.path.exists(path)
    for p in _spellings(path):
        assert list(io.tf_record_iterator(p)) == _RECORDS
        it = io.TFRecordIterator(p)
        assert it.path == os.fsdecode(path)
        it.close()


def test_tfrecord_index_takes_and_gives_non_utf8_names(odd_dir):
    path = odd_dir + b"/idx\xff.tfrecord"
    _write(path, write_index=True)
    assert os.path.exists(path + b".idx")
    for p in _spellings(path):
        index = io.TFRecordIndex(p)
        assert list(index) == _RECORDS
        assert index.path == os.fsdecode(path)
        assert index.index_path == os.fsdecode(path + b".idx")
        assert not index.rebuilt  # it found the index written beside the file
    other = odd_dir + b"/other\xff.idx"
    io.TFRecordIndex(path, index_path=other).save()
    assert os.path.exists(other)
    io.TFRecordIndex(path, use_cache=False).save(pathlib.Path(os.fsdecode(odd_dir + b"/third\xff.idx")))
    assert os.path.exists(odd_dir + b"/third\xff.idx")
    assert list(io.TFRecordIndex(path, index_path=other, use_cache=True)) == _RECORDS


def test_readers_and_producers_read_non_utf8_names(odd_dir):
    path = odd_dir + b"/rd\xff.tfrecord"
    _write(path)
    files = train.match_filenames_once(odd_dir + b"/*.tfrecord")
    assert files == [path]
    assert train.match_filenames_once([pathlib.Path(os.fsdecode(odd_dir)) / "*.tfrecord"]) == [path]
    q = train.string_input_producer([os.fsdecode(path)], num_epochs=1, shuffle=False)
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    assert q.dequeue(timeout=10) == path  # the str name went back to its bytes
    coord.request_stop()
    coord.join(threads)
    fq = sq.FIFOQueue(2, [dtypes.string])
    fq.enqueue(path)
    fq.close()
    reader = io.TFRecordReader()
    assert [reader.read(fq)[1] for _ in _RECORDS] == _RECORDS


def test_a_path_of_another_type_or_with_a_nul_is_refused(tmp_path):
    with pytest.raises(TypeError, match="str, bytes or os.PathLike"):
        io.TFRecordWriter(3)
    with pytest.raises(ValueError, match="null"):
        io.TFRecordWriter(os.fsencode(tmp_path) + b"/a\x00b")
    with pytest.raises(TypeError):
        io.tf_record_iterator(np.float32(1.5))
    with pytest.raises(TypeError):
        train.match_filenames_once([1])


@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="TensorFlow is not installed")
def test_tensorflow_reads_what_sluice_wrote_under_a_non_utf8_name(odd_dir):
    import tensorflow as tf  # noqa: PLC0415 - optional
    path = odd_dir + b"/tf\xff.tfrecord"
    _write(path)
    assert list(tf.compat.v1.io.tf_record_iterator(path)) == _RECORDS
    assert [r.numpy() for r in tf.data.TFRecordDataset([path])] == _RECORDS
