"""sluice.data (bind_data.cc): structures, numpy without copies, Python and native
map functions, errors at their element, iterator shutdown. TensorFlow
cross-checks are in test_data_tf_compat.py."""

import gc
import threading

import numpy as np
import pytest

import sluice
from sluice import data as sd
from sluice import io as sio


def items(ds):
    return [x for x in ds]


def test_range_yields_int64_scalars():
    got = items(sd.Dataset.range(3))
    assert [int(x) for x in got] == [0, 1, 2]
    assert got[0].dtype == np.int64 and got[0].shape == ()


def test_tuple_and_dict_elements_keep_their_structure():
    ds = sd.Dataset.from_tensor_slices(({"a": np.arange(3), "b": [b"x", b"y", b"z"]}, np.ones((3, 2), np.float32)))
    first = next(iter(ds))
    assert isinstance(first, tuple) and set(first[0]) == {"a", "b"}
    assert first[0]["b"] == b"x"
    assert first[1].shape == (2,) and first[1].dtype == np.float32
    spec = ds.element_spec
    assert spec[0]["a"].dtype == sluice.int64 and spec[1].shape == [2]


def test_batches_are_numpy_views_without_copies():
    ds = sd.Dataset.from_tensors(np.arange(1 << 16, dtype=np.float32))
    a = next(iter(ds))
    b = next(iter(ds))
    # Both views share the dataset's one tensor: no copy per element.
    assert np.shares_memory(a, b)


def test_python_map_tuple_arguments_and_parallel_order():
    ds = sd.Dataset.from_tensor_slices((np.arange(50), np.arange(50) * 10))
    ds = ds.map(lambda x, y: {"s": x + y}, num_parallel_calls=4)
    assert [int(e["s"]) for e in ds] == [11 * i for i in range(50)]


def test_python_map_exception_is_raised_at_its_element():
    def fn(x):
        if x == 2:
            raise ValueError("boom at 2")
        return x
    it = iter(sd.Dataset.range(5).map(fn, num_parallel_calls=2))
    assert [int(next(it)), int(next(it))] == [0, 1]
    with pytest.raises(sluice.errors.UnknownError, match="boom at 2"):
        next(it)
    assert int(next(it)) == 3


def test_opError_from_python_map_keeps_its_class():
    def fn(x):
        raise sluice.errors.DataLossError(None, None, "lost")
    with pytest.raises(sluice.errors.DataLossError, match="lost"):
        items(sd.Dataset.range(1, 3).map(lambda x: x).map(fn))


def test_filter_needs_a_bool():
    assert [int(x) for x in sd.Dataset.range(6).filter(lambda x: x % 2 == 0)] == [0, 2, 4]
    # TF traces the predicate: a non-bool is a ValueError when filter is called (sluice tries the first element).
    with pytest.raises(ValueError, match="predicate"):
        sd.Dataset.range(3).filter(lambda x: 1)
    # A later element's non-bool is an InvalidArgumentError at that element (TF's class for a py_func's ValueError).
    it = iter(sd.Dataset.range(3).filter(lambda x: True if x < 2 else 1))
    assert [int(next(it)), int(next(it))] == [0, 1]
    with pytest.raises(sluice.errors.InvalidArgumentError, match="predicate"):
        next(it)


def test_tfrecord_parse_example_native_map(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    with sio.TFRecordWriter(path) as w:
        for i in range(10):
            w.write(sluice.train.Example(features=sluice.train.Features(feature={
                "label": sluice.train.Feature(int64_list=sluice.train.Int64List(value=[i])),
                "tags": sluice.train.Feature(int64_list=sluice.train.Int64List(value=list(range(i % 3)))),
            })).SerializeToString())
    features = {"label": sio.FixedLenFeature([], sluice.int64), "tags": sio.VarLenFeature(sluice.int64)}
    ds = sd.TFRecordDataset(path).map(sd.ops.parse_example(features), num_parallel_calls=sd.AUTOTUNE)
    got = items(ds)
    assert [int(e["label"]) for e in got] == list(range(10))
    assert isinstance(got[2]["tags"], sluice.SparseTensor)
    assert list(got[2]["tags"].values) == [0, 1]
    batched = items(ds.map(lambda e: e["label"]).batch(4))
    assert [b.tolist() for b in batched] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_corrupt_record_raises_data_loss_naming_the_file(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    with sio.TFRecordWriter(path) as w:
        w.write(b"good")
        w.write(b"bad record")
    raw = bytearray(open(path, "rb").read())
    raw[16 + 4 + 12 + 3] ^= 0xFF
    open(path, "wb").write(bytes(raw))
    it = iter(sd.TFRecordDataset(path))
    assert next(it) == b"good"
    with pytest.raises(sluice.errors.DataLossError, match="r.tfrecord"):
        next(it)


def test_random_resized_crop_is_reproducible_whatever_the_parallelism():
    img = np.random.RandomState(0).randint(0, 255, (40, 60, 3), dtype=np.uint8)
    jpeg = sluice.image.encode_jpeg(img)
    ds = sd.Dataset.from_tensors(jpeg).repeat(6)

    def crops(npc):
        return np.stack(items(ds.map(sd.ops.random_resized_crop(size=8, seed=5), num_parallel_calls=npc)))
    one, four = crops(None), crops(4)
    assert one.shape == (6, 3, 8, 8) and one.dtype == np.float32
    np.testing.assert_array_equal(one, four)
    assert not np.array_equal(one[0], one[1])


def test_decode_jpeg_native_map():
    img = np.zeros((5, 7, 3), np.uint8)
    ds = sd.Dataset.from_tensors(sluice.image.encode_png(img)).map(sd.ops.decode_jpeg(channels=3))
    assert next(iter(ds)).shape == (5, 7, 3)
    assert ds.element_spec.shape.as_list() == [None, None, 3]


def test_dropping_an_iterator_mid_stream_stops_its_threads():
    before = threading.active_count()
    ds = sd.Dataset.range(10 ** 9).map(lambda x: x, num_parallel_calls=3).prefetch(4)
    it = iter(ds)
    for _ in range(5):
        next(it)
    del it
    gc.collect()
    assert threading.active_count() == before


def test_one_shot_iterator_get_next_raises_out_of_range():
    it = sd.Dataset.range(1).make_one_shot_iterator()
    assert int(it.get_next()) == 0
    with pytest.raises(sluice.errors.OutOfRangeError):
        it.get_next()


def test_initializable_iterator_restarts():
    it = sd.make_initializable_iterator(sd.Dataset.range(3))
    assert int(it.get_next()) == 0
    it.initializer()
    assert int(it.get_next()) == 0


def test_cardinality_and_len():
    assert sd.Dataset.range(10).batch(3).cardinality() == 4
    assert len(sd.Dataset.range(10).batch(3, drop_remainder=True)) == 3
    assert sd.Dataset.range(3).repeat().cardinality() == sd.INFINITE_CARDINALITY
    with pytest.raises(TypeError):
        len(sd.Dataset.range(3).repeat())


def test_image_pipeline_runs_without_python_per_element(tmp_path):
    path = str(tmp_path / "images.tfrecord")
    rng = np.random.RandomState(1)
    with sio.TFRecordWriter(path) as w:
        for i in range(10):
            jpeg = sluice.image.encode_jpeg(rng.randint(0, 255, (30 + i, 40, 3), dtype=np.uint8))
            w.write(sluice.train.Example(features=sluice.train.Features(feature={
                "image/encoded": sluice.train.Feature(bytes_list=sluice.train.BytesList(value=[jpeg])),
                "label": sluice.train.Feature(int64_list=sluice.train.Int64List(value=[i])),
            })).SerializeToString())
    features = {"image/encoded": sio.FixedLenFeature([], sluice.string),
                "label": sio.FixedLenFeature([], sluice.int64)}
    ds = (sd.TFRecordDataset([path], num_parallel_reads=sd.AUTOTUNE)
          .map(sd.ops.parse_example(features), num_parallel_calls=sd.AUTOTUNE)
          .map(sd.ops.random_resized_crop(size=16, component="image/encoded", seed=3),
               num_parallel_calls=sd.AUTOTUNE)
          .batch(4, drop_remainder=True)
          .prefetch(sd.AUTOTUNE))
    spec = ds.element_spec
    assert spec["image/encoded"].shape.as_list() == [4, 3, 16, 16]
    assert spec["label"].dtype == sluice.int64
    batches = items(ds)
    assert len(batches) == 2
    assert batches[0]["image/encoded"].shape == (4, 3, 16, 16)
    assert batches[0]["label"].tolist() == [0, 1, 2, 3]
    again = items(ds)
    # A new pass is a new epoch: other crops, the same labels.
    assert again[0]["label"].tolist() == [0, 1, 2, 3]
    assert not np.array_equal(again[0]["image/encoded"], batches[0]["image/encoded"])


def test_interpreter_exits_cleanly_with_a_live_parallel_python_map():
    import os
    import subprocess
    import sys
    script = ("import time\n"
              "from sluice import data as sd\n"
              "def slow(x):\n"
              "    time.sleep(0.001)\n"
              "    return x\n"
              "it = iter(sd.Dataset.range(10**9).map(slow, num_parallel_calls=3).prefetch(8))\n"
              "print(int(next(it)))\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(sluice.__file__)))
    for _ in range(3):
        r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=60)
        assert r.returncode == 0, r.stderr.decode()[-2000:]
        assert r.stdout.strip() == b"0"


def test_from_generator_restarts_per_iterator_and_checks_shapes():
    ds = sd.Dataset.from_generator(lambda: iter([1, 2, 3]), output_types=sluice.int32, output_shapes=())
    assert [int(x) for x in ds] == [1, 2, 3]
    assert [int(x) for x in ds] == [1, 2, 3]
    bad = sd.Dataset.from_generator(lambda: iter([[1, 2]]), output_types=sluice.int32, output_shapes=[3])
    with pytest.raises(sluice.errors.InvalidArgumentError, match="expected"):
        items(bad)
