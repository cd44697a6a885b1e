"""The native image stages of NativeProducer (pipeline/producer_ops.h through bind_pipeline.cc):
map_decode_jpeg, map_random_resized_crop, map_select, sparse outputs of map_parse_example,
and an image pipeline end to end under shuffle_batch_join."""

import collections

import numpy as np
import pytest

from sluice import errors
from sluice import image as simage
from sluice import io as sio
from sluice import train


@pytest.fixture(autouse=True)
def _clean_registry():
    train.clear_queue_runners()
    yield
    train.clear_queue_runners()


def _jpeg(seed, height=48, width=64):
    rng = np.random.default_rng(seed)
    return simage.encode_jpeg(rng.integers(0, 256, (height, width, 3), dtype=np.uint8), quality=90)


def test_map_decode_jpeg_decodes_the_component():
    jpeg = _jpeg(0)
    p = train.limit_epochs(jpeg, num_epochs=2).map_decode_jpeg(0, channels=3)
    assert p.dtypes[0].name == "uint8" and p.shapes == [(None, None, 3)]
    np.testing.assert_array_equal(p(), simage.decode_jpeg(jpeg, channels=3))
    p()
    with pytest.raises(errors.OutOfRangeError):
        p()


def test_map_decode_jpeg_build_errors():
    with pytest.raises(ValueError, match="string scalar"):
        train.limit_epochs(np.int64(3)).map_decode_jpeg(0)
    with pytest.raises(ValueError, match="channels must be 0, 1 or 3"):
        train.limit_epochs(b"x").map_decode_jpeg(0, channels=4)
    with pytest.raises(ValueError, match="no component named"):
        train.limit_epochs(b"x").map_decode_jpeg("image")


def test_map_random_resized_crop_is_reproducible_per_seed_and_call():
    jpeg = _jpeg(1)

    def crops(seed):
        p = train.limit_epochs(jpeg).map_random_resized_crop((8, 12), seed=seed, component=0)
        assert p.shapes == [(3, 8, 12)] and p.dtypes[0].name == "float32"
        return [p() for _ in range(6)]

    a, b, c = crops(5), crops(5), crops(6)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert any(not np.array_equal(x, y) for x, y in zip(a, c))
    assert len({x.tobytes() for x in a}) > 1  # successive calls draw new crops
    hwc = train.limit_epochs(jpeg).map_random_resized_crop(16, data_format="HWC", component=0)
    assert hwc().shape == (16, 16, 3)


def test_map_random_resized_crop_bad_options_are_value_errors():
    with pytest.raises(ValueError):
        train.limit_epochs(b"x").map_random_resized_crop(0, component=0)
    with pytest.raises(ValueError, match="data_format"):
        train.limit_epochs(b"x").map_random_resized_crop(8, data_format="CWH", component=0)


def test_corrupt_image_is_invalid_argument_per_call():
    p = train.limit_epochs(b"\xff\xd8\xff not a jpeg").map_random_resized_crop(8, component=0)
    with pytest.raises(errors.InvalidArgumentError):
        p()


@pytest.fixture
def image_records(tmp_path):
    files = []
    for f in range(2):
        path = str(tmp_path / ("img-%d.tfrecord" % f))
        with sio.TFRecordWriter(path) as w:
            for r in range(12):
                i = f * 12 + r
                w.write(sio.serialize_example({"image": _jpeg(i), "label": i % 3, "id": i, "tags": [i, i + 1]}))
        files.append(path)
    return files


def test_parse_example_sparse_outputs_and_select(image_records):
    filenames = train.string_input_producer(image_records[:1], num_epochs=1, shuffle=False)
    features = {"id": sio.FixedLenFeature([], np.int64), "tags": sio.VarLenFeature(np.int64)}
    parsed = train.read_producer(sio.TFRecordReader(), filenames).map_parse_example(features)
    assert parsed.names == ["id", "tags/indices", "tags/values", "tags/dense_shape"]
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    try:
        first = parsed()
        assert first["id"] == 0
        np.testing.assert_array_equal(first["tags/values"], [0, 1])
        np.testing.assert_array_equal(first["tags/indices"], [[0], [1]])
        selected = parsed.map_select(["tags/values", "id"])
        second = selected()
        assert sorted(second) == ["id", "tags/values"] and second["id"] == 1
    finally:
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=30)


def test_image_pipeline_end_to_end(image_records):
    epochs, batch = 2, 6
    filenames = train.string_input_producer(image_records, num_epochs=epochs, seed=4)
    features = {"image": sio.FixedLenFeature([], np.bytes_), "label": sio.FixedLenFeature([], np.int64),
                "id": sio.FixedLenFeature([], np.int64)}
    chains = [train.read_producer(sio.TFRecordReader(), filenames).map_parse_example(features)
              .map_random_resized_crop(16, seed=t) for t in range(2)]
    bq = train.shuffle_batch_join(chains, batch_size=batch, capacity=40, min_after_dequeue=6, seed=1)
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    seen = collections.Counter()
    for b in bq.batches():
        assert b["image"].shape == (batch, 3, 16, 16) and b["image"].dtype == np.float32
        assert np.isfinite(b["image"]).all()
        np.testing.assert_array_equal(b["label"], b["id"] % 3)
        seen.update(b["id"].tolist())
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=30)
    assert seen == {i: epochs for i in range(24)}
