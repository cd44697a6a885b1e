"""sluice.data against TensorFlow 2's tf.data on the same inputs: each
transformation's order, remainders and cardinality. Skipped without TF."""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

from sluice import data as sd  # noqa: E402
from sluice import io as sio  # noqa: E402


def plain(x):
    """A nested value as plain Python (lists, dicts, bytes, numbers)."""
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, tuple):
        return tuple(plain(v) for v in x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    return x


def run_both(build):
    """build(namespace) with tf.data and with sluice.data: (tf values, sluice values, cardinalities)."""
    t = build(tf.data)
    s = build(sd)
    tv = [plain(x) for x in t.as_numpy_iterator()]
    sv = [plain(x) for x in s]
    return tv, sv, int(t.cardinality()), int(s.cardinality())


def check(build):
    tv, sv, tc, sc = run_both(build)
    assert sv == tv
    assert sc == tc


PIPELINES = {
    "range": lambda d: d.Dataset.range(2, 17, 4),
    "range_negative_step": lambda d: d.Dataset.range(10, 0, -3),
    "batch_remainder": lambda d: d.Dataset.range(10).batch(4),
    "batch_drop_remainder": lambda d: d.Dataset.range(10).batch(4, drop_remainder=True),
    "padded_batch": lambda d: d.Dataset.range(1, 6).map(lambda x: tf.fill([x], x) if d is tf.data else
                                                      np.full([x], x)).padded_batch(2),
    "padded_batch_shapes_values": lambda d: d.Dataset.range(1, 5).map(
        lambda x: tf.fill([x], x) if d is tf.data else np.full([x], x)).padded_batch(
            3, padded_shapes=[6], padding_values=np.int64(-1), drop_remainder=True),
    "unbatch": lambda d: d.Dataset.range(7).batch(3).unbatch(),
    "repeat_take": lambda d: d.Dataset.range(3).repeat(3).take(7),
    "repeat_forever_take": lambda d: d.Dataset.range(3).repeat().take(5),
    "skip": lambda d: d.Dataset.range(6).skip(4),
    "skip_all": lambda d: d.Dataset.range(6).skip(-1),
    "shard": lambda d: d.Dataset.range(11).shard(3, 2),
    "zip_shortest": lambda d: d.Dataset.zip((d.Dataset.range(4), d.Dataset.range(10, 13))),
    "zip_dict": lambda d: d.Dataset.zip({"b": d.Dataset.range(3), "a": d.Dataset.range(5, 9)}),
    "concatenate": lambda d: d.Dataset.range(3).concatenate(d.Dataset.range(7, 9)),
    "enumerate": lambda d: d.Dataset.range(5, 8).enumerate(start=3),
    "from_tensor_slices_dict": lambda d: d.Dataset.from_tensor_slices(
        {"x": np.arange(6).reshape(3, 2), "y": np.array([b"a", b"b", b"c"])}).batch(2),
    "from_tensors": lambda d: d.Dataset.from_tensors((np.arange(3), np.float32(2.5))).repeat(2),
    "map": lambda d: d.Dataset.range(5).map(lambda x: x * 3),
    "map_parallel": lambda d: d.Dataset.range(40).map(lambda x: x + 1, num_parallel_calls=4),
    "filter": lambda d: d.Dataset.range(10).filter(lambda x: x % 3 == 1),
    "interleave": lambda d: d.Dataset.range(1, 6).interleave(
        lambda x: d.Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4),
    "interleave_parallel": lambda d: d.Dataset.range(1, 8).interleave(
        lambda x: d.Dataset.range(x * 10, x * 10 + x), cycle_length=3, block_length=2, num_parallel_calls=3),
    "flat_map": lambda d: d.Dataset.range(4).flat_map(lambda x: d.Dataset.range(x)),
    "cache_repeat": lambda d: d.Dataset.range(4).cache().repeat(2),
    "prefetch": lambda d: d.Dataset.range(9).batch(2).prefetch(d.AUTOTUNE if d is sd else tf.data.AUTOTUNE),
    "shuffle_cardinality_only": lambda d: d.Dataset.range(12).shuffle(4, seed=1).take(0),
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_same_elements_and_cardinality_as_tf(name):
    check(PIPELINES[name])


@pytest.mark.parametrize("build", [
    lambda d: d.Dataset.range(30).shuffle(7, seed=3),
    lambda d: d.Dataset.range(10).shuffle(10, seed=12345).repeat(3),
    lambda d: d.Dataset.range(8).shuffle(3, seed=1, reshuffle_each_iteration=False).repeat(2),
    lambda d: d.Dataset.from_tensor_slices((np.arange(20), np.arange(20) * 2)).map(
        lambda x, y: (x, y), num_parallel_calls=2).shuffle(5, seed=7).batch(3),
    # A Python map after the shuffle reads one element to learn its output
    # (a probe pass); that must not use up one of the shuffle's epochs.
    lambda d: d.Dataset.range(10).shuffle(10, seed=1).map(lambda x: x + 1).repeat(2),
    lambda d: d.Dataset.range(10).shuffle(10, seed=1).map(lambda x: x * 2).filter(lambda x: x > 4),
], ids=["plain", "repeat_reshuffles", "no_reshuffle", "tuples_batched", "python_map_after", "map_filter_after"])
def test_seeded_shuffle_gives_tfs_order(build):
    check(build)


def test_each_iterator_of_a_seeded_shuffle_reshuffles_as_in_tf():
    t = tf.data.Dataset.range(12).shuffle(12, seed=4)
    s = sd.Dataset.range(12).shuffle(12, seed=4)
    tv = [[int(x) for x in t.as_numpy_iterator()] for _ in range(3)]
    sv = [[int(x) for x in s] for _ in range(3)]
    assert sv == tv


def test_filter_of_infinite_dataset_cardinality():
    tv, sv, tc, sc = run_both(lambda d: d.Dataset.range(3).repeat().filter(lambda x: x > 0).take(4))
    assert sv == tv and sc == tc


def write_files(tmp_path, n_files, n_records):
    paths = []
    for f in range(n_files):
        p = str(tmp_path / ("f%d.tfrecord" % f))
        with sio.TFRecordWriter(p) as w:
            for r in range(n_records + f):
                w.write(b"f%d-r%d" % (f, r))
        paths.append(p)
    return paths


@pytest.mark.parametrize("num_parallel_reads", [None, 1, 2, 3])
def test_tfrecord_dataset_order_matches_tf(tmp_path, num_parallel_reads):
    paths = write_files(tmp_path, 3, 4)
    check(lambda d: d.TFRecordDataset(paths, num_parallel_reads=num_parallel_reads))


def test_text_line_dataset_matches_tf(tmp_path):
    p = tmp_path / "t.txt"
    p.write_bytes(b"a\nbb\r\n\nlast")
    check(lambda d: d.TextLineDataset([str(p), str(p)]))


def test_fixed_length_record_dataset_matches_tf(tmp_path):
    p = tmp_path / "f.bin"
    p.write_bytes(b"HDR" + bytes(range(25)) + b"FT")
    check(lambda d: d.FixedLengthRecordDataset([str(p)], 5, header_bytes=3, footer_bytes=2))


def test_fixed_length_partial_record_is_invalid_argument_as_in_tf(tmp_path):
    import sluice
    p = tmp_path / "f.bin"
    p.write_bytes(b"HDR" + bytes(range(23)) + b"FT")
    with pytest.raises(tf.errors.InvalidArgumentError, match="not an exact multiple"):
        list(tf.data.FixedLengthRecordDataset([str(p)], 5, header_bytes=3, footer_bytes=2))
    with pytest.raises(sluice.errors.InvalidArgumentError, match="not an exact multiple"):
        list(sd.FixedLengthRecordDataset([str(p)], 5, header_bytes=3, footer_bytes=2))


def test_parse_example_matches_tf(tmp_path):
    paths = []
    p = str(tmp_path / "e.tfrecord")
    with sio.TFRecordWriter(p) as w:
        for i in range(7):
            ex = tf.train.Example(features=tf.train.Features(feature={
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=[i, i / 2])),
                "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
            }))
            w.write(ex.SerializeToString())
    paths.append(p)
    tf_features = {"x": tf.io.FixedLenFeature([2], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64)}
    s_features = {"x": sio.FixedLenFeature([2], "float32"), "y": sio.FixedLenFeature([], "int64")}
    t = tf.data.TFRecordDataset(paths).map(lambda r: tf.io.parse_single_example(r, tf_features)).batch(3)
    s = sd.TFRecordDataset(paths).map(sd.ops.parse_example(s_features), num_parallel_calls=2).batch(3)
    assert [plain(x) for x in s] == [plain(x) for x in t.as_numpy_iterator()]
    assert s.element_spec["x"].shape.as_list() == t.element_spec["x"].shape.as_list()


def test_seeds_style_program_gives_tfs_output():
    x = np.arange(40, dtype=np.float32).reshape(20, 2)
    y = np.arange(20)

    def build(d):
        return (d.Dataset.from_tensor_slices((x, y))
                .map(lambda a, b: (a * 2, b + 1), num_parallel_calls=d.AUTOTUNE if d is sd else tf.data.AUTOTUNE)
                .shuffle(8, seed=42)
                .batch(6)
                .prefetch(2))
    check(build)


def test_parallel_interleave_and_map_and_batch_give_tfs_output(tmp_path):
    paths = write_files(tmp_path, 4, 5)

    def build(d):
        files = d.Dataset.from_tensor_slices(paths)
        return (files.apply(d.experimental.parallel_interleave(lambda f: d.TFRecordDataset(f), cycle_length=2))
                .apply(d.experimental.map_and_batch(lambda r: r, batch_size=4)))
    check(build)


def test_from_generator_gives_tfs_output():
    def gen(n):
        for i in range(int(n)):
            yield (i, [float(i)] * (i % 3 + 1))

    def build(d):
        if d is tf.data:
            sig = (tf.TensorSpec(shape=(), dtype=tf.int64), tf.TensorSpec(shape=(None,), dtype=tf.float32))
        else:
            sig = (sd.TensorSpec(shape=(), dtype="int64"), sd.TensorSpec(shape=(None,), dtype="float32"))
        return d.Dataset.from_generator(gen, args=(7,), output_signature=sig).padded_batch(3)
    check(build)
