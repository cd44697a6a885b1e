"""tf.io.read_file, tf.io.matching_files and tf.gfile programs under tensorflow.compat.v1 and sluice.compat.v1 (only
`tf` changed) give the same results; the sluice runs also run without TF."""

import os
import re

import numpy as np
import pytest

import sluice as sl
import sluice.compat.v1 as sltf

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


@pytest.fixture(scope="module")
def image_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("compat_v1_io")
    rng = np.random.default_rng(7)
    for i in range(4):
        img = rng.integers(0, 255, (5 + i, 7, 3), dtype=np.uint8)
        (d / ("img-%d.jpg" % i)).write_bytes(sl.image.encode_jpeg(img))
    with open(d / "names.txt", "w") as out:
        for i in (2, 0, 3):
            out.write(str(d / ("img-%d.jpg" % i)) + "\n")
    return d


PROGRAMS = {
    # tf.data: list_files -> read_file -> decode_jpeg (compat ops in a map function).
    "list_files_read_file_decode_jpeg": """
ds = tf.data.Dataset.list_files(DIR + "/*.jpg", shuffle=False)
ds = ds.map(lambda f: tf.image.decode_jpeg(tf.io.read_file(f), channels=3))
nxt = tf.data.make_one_shot_iterator(ds).get_next()
result = []
with tf.Session() as sess:
    try:
        while True:
            result.append(sess.run(nxt))
    except tf.errors.OutOfRangeError:
        pass
""",
    # A queue pipeline: file names from a text file -> tf.read_file -> tf.train.batch.
    "reader_read_file_batch": """
names = tf.train.string_input_producer([DIR + "/names.txt"], num_epochs=1, shuffle=False)
_, line = tf.TextLineReader().read(names)
contents = tf.read_file(line)
batch = tf.train.batch([contents], batch_size=2, allow_smaller_final_batch=True)
result = []
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while True:
            result.append([len(c) for c in sess.run(batch)])
    except tf.errors.OutOfRangeError:
        pass
    coord.request_stop()
    coord.join(threads)
""",
    # matching_files as an op, gfile as Python.
    "matching_files_and_gfile": """
pattern = tf.placeholder(tf.string, [])
files = tf.io.matching_files(pattern)
with tf.Session() as sess:
    found = [os.path.basename(f) for f in sess.run(files, {pattern: DIR + "/img-[12].jpg"})]
result = [found, [os.path.basename(p) for p in tf.gfile.Glob(DIR + "/*.txt")],
          tf.io.gfile.exists(DIR + "/names.txt"), tf.gfile.Exists(DIR + "/none"), tf.gfile.IsDirectory(DIR),
          sorted(tf.io.gfile.listdir(DIR)), len(tf.gfile.GFile(DIR + "/names.txt", "rb").read())]
""",
}


def _run(tf, name, d):
    env = {"tf": tf, "np": np, "os": os, "DIR": str(d)}
    with tf.Graph().as_default():
        exec(compile(PROGRAMS[name], "<tf program>", "exec"), env)  # noqa: S102 - the test's own program text
    return env["result"]


def _plain(x):
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, bytes):
        return x.decode()
    return x


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_runs_under_sluice_compat_v1(name, image_dir):
    assert _run(sltf, name, image_dir)


def test_decoded_images_are_the_files_images(image_dir):
    got = _run(sltf, "list_files_read_file_decode_jpeg", image_dir)
    assert len(got) == 4
    for i, img in enumerate(got):
        expected = sl.image.decode_jpeg((image_dir / ("img-%d.jpg" % i)).read_bytes(), channels=3)
        np.testing.assert_array_equal(img, expected)


def test_read_file_between_a_reader_and_a_batcher_runs_natively(image_dir):
    with sltf.Graph().as_default() as g:
        env = {"tf": sltf, "np": np, "os": os, "DIR": str(image_dir)}
        exec(compile(PROGRAMS["reader_read_file_batch"], "<tf program>", "exec"), env)  # noqa: S102
        assert not g.get_collection(sltf.GraphKeys.QUEUE_RUNNERS), "the batch fell back to Python queue runners"
    sizes = [len((image_dir / ("img-%d.jpg" % i)).read_bytes()) for i in (2, 0, 3)]
    assert env["result"] == [sizes[:2], sizes[2:]]


@pytest.fixture(scope="module")
def tf1():
    tf = pytest.importorskip("tensorflow.compat.v1")
    tf.logging.set_verbosity(tf.logging.ERROR)
    return tf


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_gives_tensorflows_result(name, image_dir, tf1):
    assert _plain(_run(sltf, name, image_dir)) == _plain(_run(tf1, name, image_dir))


def test_read_file_errors_are_tensorflows(image_dir, tf1):
    for tf in (tf1, sltf):
        with tf.Graph().as_default():
            name = tf.placeholder(tf.string, [])
            contents = tf.io.read_file(name)
            with tf.Session() as sess:
                with pytest.raises(tf.errors.NotFoundError, match=re.escape(str(image_dir / "none.jpg"))):
                    sess.run(contents, {name: str(image_dir / "none.jpg")})
                with pytest.raises(tf.errors.FailedPreconditionError):
                    sess.run(contents, {name: str(image_dir)})
