"""sluice.compat.v1 lowering chains of element ops (decode_raw, strided_slice, reshape, transpose, cast, scalar
arithmetic, random image distortions) between a reader and a batcher into one C++ map (_native_steps.py)."""

import numpy as np
import pytest

import sluice.compat.v1 as tf

LABEL, H, W, D = 1, 2, 3, 3
RECORD = LABEL + H * W * D


@pytest.fixture()
def records(tmp_path):
    rng = np.random.default_rng(0)
    data = [bytes([i]) + rng.integers(0, 256, RECORD - 1, dtype=np.uint8).tobytes() for i in range(6)]
    path = tmp_path / "r.bin"
    path.write_bytes(b"".join(data))
    return str(path), data


def _read(path, num_epochs=1):
    q = tf.train.string_input_producer([path], num_epochs=num_epochs, shuffle=False)
    _, value = tf.FixedLengthRecordReader(record_bytes=RECORD).read(q)
    return tf.decode_raw(value, tf.uint8)


def _run_all(*tensors):
    out = []
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                out.append(sess.run(list(tensors)))
        coord.request_stop()
        coord.join(threads)
    return out


def test_cifar_style_chain_runs_natively_with_tf_values(records):
    path, data = records
    with tf.Graph().as_default() as g:
        record = _read(path)
        label = tf.cast(tf.strided_slice(record, [0], [LABEL]), tf.int32)
        image = tf.reshape(tf.strided_slice(record, [LABEL], [RECORD]), [D, H, W])
        image = tf.cast(tf.transpose(image, [1, 2, 0]), tf.float32) * (1. / 255) - 0.5
        label.set_shape([1])
        images, labels = tf.train.batch([image, label], batch_size=2)
        assert not g.get_collection(tf.GraphKeys.QUEUE_RUNNERS), "the batch fell back to Python queue runners"
        got = _run_all(images, labels)
    assert len(got) == 3
    for b, (imgs, labs) in enumerate(got):
        assert labs.dtype == np.int32 and imgs.dtype == np.float32
        for j in range(2):
            raw = np.frombuffer(data[2 * b + j], np.uint8)
            assert labs[j].tolist() == [raw[0]]
            want = raw[1:].reshape(D, H, W).transpose(1, 2, 0).astype(np.float32) * np.float32(1. / 255) \
                - np.float32(0.5)
            np.testing.assert_array_equal(imgs[j], want)


def test_random_distortions_run_natively_and_repeat_with_a_graph_seed(records):
    path, _ = records

    def run():
        with tf.Graph().as_default() as g:
            tf.set_random_seed(3)
            image = tf.cast(tf.reshape(tf.strided_slice(_read(path), [LABEL], [RECORD]), [H, W, D]), tf.float32)
            image = tf.image.random_flip_left_right(tf.random_crop(image, [2, 2, 3]))
            image = tf.image.random_contrast(tf.image.random_brightness(image, 10), 0.5, 1.5)
            image = tf.image.per_image_standardization(image)
            image.set_shape([2, 2, 3])
            batch = tf.train.batch([image], batch_size=3)
            assert not g.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
            return np.concatenate([b[0] for b in _run_all(batch)])
    first, second = run(), run()
    assert first.shape == (6, 2, 2, 3)
    np.testing.assert_allclose(first.mean(axis=(1, 2, 3)), 0, atol=1e-5)
    np.testing.assert_array_equal(first, second)


def test_a_random_op_shared_by_two_batched_tensors_falls_back_to_python(records):
    path, _ = records
    with tf.Graph().as_default() as g:
        image = tf.cast(tf.reshape(tf.strided_slice(_read(path), [LABEL], [RECORD]), [H, W, D]), tf.float32)
        flipped = tf.image.random_flip_left_right(image)
        a = tf.image.per_image_standardization(flipped)
        tf.train.batch([flipped, a], batch_size=2)
        assert g.get_collection(tf.GraphKeys.QUEUE_RUNNERS)


def test_shuffle_batch_join_of_one_chain_per_reader_runs_natively(records):
    path, data = records
    with tf.Graph().as_default() as g:
        lists = []
        for _ in range(2):
            record = _read(path)
            label = tf.cast(tf.strided_slice(record, [0], [LABEL]), tf.int32)
            label.set_shape([1])
            lists.append([label])
        labels = tf.train.shuffle_batch_join(lists, batch_size=2, capacity=20, min_after_dequeue=2)
        assert not g.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
        got = sorted(v for b in _run_all(labels) for v in b[0].ravel().tolist())
    assert got == sorted([d[0] for d in data] * 2)
