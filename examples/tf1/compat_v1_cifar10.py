"""TF 1's cifar10_input.py pipeline, unchanged but for the import: ``import sluice.compat.v1 as tf``.

The graph below is TensorFlow 1's code (distorted_inputs with one reader per
preprocessing thread, as shuffle_batch_join gives them), run by sluice's
engine without TensorFlow. Compare examples/tf1/cifar10_fixed_length.py, the
same pipeline in eager sluice.

Writes 5 files of 200 records; prints "OK" after checking one epoch: every
record once, with its label, as a standardized 24x24x3 float crop.
"""
import collections
import os
import sys
import tempfile

import numpy as np

import sluice.compat.v1 as tf  # was: import tensorflow.compat.v1 as tf

RECORD_BYTES = 1 + 32 * 32 * 3


def write_data(directory, files, per_file):
    filenames = []
    for f in range(files):
        path = os.path.join(directory, "data_batch_%d.bin" % (f + 1))
        with open(path, "wb") as out:
            for i in range(per_file):
                record = np.random.default_rng(f * per_file + i).integers(0, 256, RECORD_BYTES, dtype=np.uint8)
                record[0] = (f * per_file + i) % 10
                out.write(record.tobytes())
        filenames.append(path)
    return filenames


def read_cifar10(filename_queue):
    reader = tf.FixedLengthRecordReader(record_bytes=RECORD_BYTES)
    key, value = reader.read(filename_queue)
    record_bytes = tf.decode_raw(value, tf.uint8)
    label = tf.cast(tf.strided_slice(record_bytes, [0], [1]), tf.int32)
    depth_major = tf.reshape(tf.strided_slice(record_bytes, [1], [RECORD_BYTES]), [3, 32, 32])
    uint8image = tf.transpose(depth_major, [1, 2, 0])
    return key, label, uint8image


def distorted_inputs(filenames, batch_size, num_preprocess_threads=2):
    filename_queue = tf.train.string_input_producer(filenames, num_epochs=1)
    examples = []
    for _ in range(num_preprocess_threads):
        key, label, uint8image = read_cifar10(filename_queue)
        reshaped_image = tf.cast(uint8image, tf.float32)
        distorted_image = tf.random_crop(reshaped_image, [24, 24, 3])
        distorted_image = tf.image.random_flip_left_right(distorted_image)
        distorted_image = tf.image.random_brightness(distorted_image, max_delta=63)
        distorted_image = tf.image.random_contrast(distorted_image, lower=0.2, upper=1.8)
        float_image = tf.image.per_image_standardization(distorted_image)
        float_image.set_shape([24, 24, 3])
        label.set_shape([1])
        examples.append([float_image, label, key])
    return tf.train.shuffle_batch_join(examples, batch_size=batch_size, capacity=400 + 3 * batch_size,
                                       min_after_dequeue=400, allow_smaller_final_batch=True)


def main(directory, files=5, per_file=200, batch_size=50):
    filenames = write_data(directory, files, per_file)
    images, label_batch, keys = distorted_inputs(filenames, batch_size)
    seen = collections.Counter()
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        try:
            while not coord.should_stop():
                x, y, k = sess.run([images, label_batch, keys])
                assert x.shape[1:] == (24, 24, 3) and x.dtype == np.float32
                assert np.allclose(x.reshape(len(x), -1).mean(axis=1), 0, atol=1e-3)
                for key, label in zip(k.tolist(), y[:, 0].tolist()):
                    path, index = key.decode().rsplit(":", 1)
                    record = filenames.index(path) * per_file + int(index)
                    assert label == record % 10
                    seen[record] += 1
        except tf.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
        coord.join(threads)
    assert seen == {i: 1 for i in range(files * per_file)}, "records missing or duplicated"
    print("OK: %d records, one epoch" % len(seen))


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d:
        main(sys.argv[1] if len(sys.argv) > 1 else d)
