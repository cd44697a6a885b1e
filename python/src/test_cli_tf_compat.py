"""What the `sluice` command writes, read by TensorFlow 2.21 itself: converted
and salvaged files, make-images shards (decoded with tf.io), and the feature
spec `sluice records schema` prints, used with tf.io.parse_single_example."""

import json
import os
import types

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from sluice import image as simage  # noqa: E402

from _cli_util import data_file, run  # noqa: E402

MNIST = data_file("tfrecord", "tfx_mnist", "mnist.tfrecord")
PENGUIN_EVAL = data_file("tfrecord", "tfx_penguin", "Split-eval", "data_tfrecord-00000-of-00001.gz")


def tf_records(path, compression=""):
    return [r.numpy() for r in tf.data.TFRecordDataset(str(path), compression_type=compression)]


@pytest.mark.parametrize("compression, tf_name", [("gzip", "GZIP"), ("zlib", "ZLIB"), ("none", "")])
def test_tensorflow_reads_converted_files(tmp_path, compression, tf_name):
    out = tmp_path / "out"
    assert run("records", "convert", MNIST, out, "--compression", compression).returncode == 0
    assert tf_records(out, tf_name) == tf_records(MNIST)


def test_tensorflow_reads_a_salvaged_file(tmp_path):
    with open(MNIST, "rb") as f:
        data = bytearray(f.read(3203 * 10))
    data[3203 * 3 + 40] ^= 1
    (tmp_path / "bad").write_bytes(bytes(data))
    assert run("records", "salvage", tmp_path / "bad", tmp_path / "good").returncode == 1
    original = tf_records(MNIST)[:10]
    assert tf_records(tmp_path / "good") == original[:3] + original[4:]


def test_tensorflow_decodes_make_images_shards(tmp_path):
    os.makedirs(tmp_path / "in" / "a")
    os.makedirs(tmp_path / "in" / "b")
    for label, cls in enumerate("ab"):
        pixels = np.full((10, 14, 3), 60 + 100 * label, np.uint8)
        (tmp_path / "in" / cls / "x.jpg").write_bytes(simage.encode_jpeg(pixels))
    assert run("records", "make-images", tmp_path / "in", tmp_path / "train", "--no-shuffle").returncode == 0
    spec = {"image/encoded": tf.io.FixedLenFeature([], tf.string),
            "image/class/label": tf.io.FixedLenFeature([], tf.int64),
            "image/height": tf.io.FixedLenFeature([], tf.int64),
            "image/width": tf.io.FixedLenFeature([], tf.int64)}
    for label, record in enumerate(tf_records(tmp_path / "train-00000-of-00001")):
        ex = tf.io.parse_single_example(record, spec)
        img = tf.io.decode_image(ex["image/encoded"]).numpy()
        assert int(ex["image/class/label"]) == label
        assert img.shape == (int(ex["image/height"]), int(ex["image/width"]), 3) == (10, 14, 3)
        assert abs(float(img.mean()) - (60 + 100 * label)) < 3


def test_schema_spec_works_with_tensorflow_parse_single_example():
    r = run("records", "schema", "--json", PENGUIN_EVAL)
    assert r.returncode == 0, r.stderr
    spec_source = json.loads(r.stdout)["spec"]
    # The same source with sluice's names bound to TensorFlow's.
    shim = types.SimpleNamespace(io=tf.io, float32=tf.float32, int64=tf.int64, string=tf.string)
    scope = {}
    exec(spec_source.replace("import sluice", ""), {"sluice": shim}, scope)
    records = tf_records(PENGUIN_EVAL, "GZIP")
    parsed = tf.io.parse_single_example(records[0], scope["features"])
    assert int(parsed["species"]) == 0
    assert np.isclose(float(parsed["culmen_length_mm"]), 0.24727273)
