"""Decode and parse errors of native stages name the file and record they came from.

When a stage (map_parse_example, map_decode_jpeg, map_random_resized_crop)
fails on a record that a reader producer upstream read, its
InvalidArgumentError says which: " (record <key> of <reader>)" ends the
message (TF's key, "<file>:<offset>" for a TFRecordReader) and the payloads
``file`` and ``key`` hold the file name and that key, as reader errors
carry theirs.
"""

import numpy as np
import pytest

from sluice import dtypes
from sluice import errors
from sluice import image as simage
from sluice import io as sio
from sluice import queue as sq
from sluice import train

_GOOD = simage.encode_jpeg(np.zeros((8, 8, 3), dtype=np.uint8))
_BAD = b"\xff\xd8\xff not a jpeg"
_FEATURES = {"image": sio.FixedLenFeature([], dtypes.string), "label": sio.FixedLenFeature([], dtypes.int64)}


def _reader_over(tmp_path, records):
    path = str(tmp_path / "images.tfrecord")
    offsets = []
    with sio.TFRecordWriter(path) as w:
        for r in records:
            offsets.append(w.offset)
            w.write(r)
    fq = sq.FIFOQueue(1, [dtypes.string])
    fq.enqueue(path)
    fq.close()
    return train.read_producer(sio.TFRecordReader(), fq), path, offsets


def _check_context(e, path, offset):
    key = "%s:%d" % (path, offset)
    assert e.message.endswith(" (record %s of TFRecordReader 'TFRecordReader')" % key), e.message
    assert e.experimental_payloads["file"] == path.encode()
    assert e.experimental_payloads["key"] == key.encode()


def test_decode_jpeg_error_names_the_record_of_the_reader(tmp_path):
    read, path, offsets = _reader_over(tmp_path, [_GOOD, _BAD])
    decoded = read.map_decode_jpeg(component=1)
    assert decoded()[1].shape == (8, 8, 3)
    with pytest.raises(errors.InvalidArgumentError) as info:
        decoded()
    _check_context(info.value, path, offsets[1])


@pytest.mark.parametrize("stage", ["map_decode_jpeg", "map_random_resized_crop"])
def test_image_error_after_parse_names_the_record_of_the_reader(tmp_path, stage):
    records = [sio.serialize_example({"image": img, "label": i}) for i, img in enumerate([_GOOD, _BAD])]
    read, path, offsets = _reader_over(tmp_path, records)
    parsed = read.map_parse_example(_FEATURES)
    images = getattr(parsed, stage)(component="image")
    images()
    with pytest.raises(errors.InvalidArgumentError) as info:
        images()
    _check_context(info.value, path, offsets[1])


def test_parse_error_names_the_record_of_the_reader(tmp_path):
    read, path, offsets = _reader_over(tmp_path, [sio.serialize_example({"image": _GOOD, "label": 1}), b"\x0a\xff"])
    parsed = read.map_parse_example(_FEATURES)
    parsed()
    with pytest.raises(errors.InvalidArgumentError) as info:
        parsed()
    _check_context(info.value, path, offsets[1])


@pytest.mark.timeout(60)
def test_pipeline_error_at_coord_join_names_the_record(tmp_path):
    read, path, offsets = _reader_over(tmp_path, [_GOOD, _BAD, _GOOD])
    b = train.batch(read.map_decode_jpeg(component=1).map_select([0]), batch_size=1)
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    with pytest.raises(errors.InvalidArgumentError) as info:
        coord.join(threads, stop_grace_period_secs=10)
    _check_context(info.value, path, offsets[1])
    del b


def test_without_a_reader_the_error_is_the_decoders_own():
    with pytest.raises(errors.InvalidArgumentError) as info:
        train.limit_epochs(_BAD).map_decode_jpeg(component=0)()
    assert "(record" not in info.value.message
    assert "file" not in info.value.experimental_payloads
