"""TF 1's fully_connected_reader.py input pipeline (MNIST in TFRecords), ported to sluice.

TensorFlow 1:

    def read_and_decode(filename_queue):
        reader = tf.TFRecordReader()
        _, serialized_example = reader.read(filename_queue)
        features = tf.parse_single_example(serialized_example, features={
            'image_raw': tf.FixedLenFeature([], tf.string),
            'label': tf.FixedLenFeature([], tf.int64)})
        image = tf.decode_raw(features['image_raw'], tf.uint8)
        image.set_shape([784])
        image = tf.cast(image, tf.float32) * (1. / 255) - 0.5
        label = tf.cast(features['label'], tf.int32)
        return image, label

    filename_queue = tf.train.string_input_producer([filename], num_epochs=num_epochs)
    image, label = read_and_decode(filename_queue)
    images, sparse_labels = tf.train.shuffle_batch([image, label], batch_size=batch_size, num_threads=2,
                                                   capacity=1000 + 3 * batch_size, min_after_dequeue=1000)

Writes 2,000 synthetic 28x28 digits; prints "OK" after checking every image
arrived once per epoch with its label.
"""
import collections
import os
import sys
import tempfile

import numpy as np

import sluice as sl

BATCH_SIZE = 100


def write_records(path, n):
    with sl.python_io.TFRecordWriter(path) as writer:
        for i in range(n):
            image = np.full(784, i % 256, np.uint8)
            image[0] = i // 256
            example = sl.train.Example(features=sl.train.Features(feature={
                "image_raw": sl.train.Feature(bytes_list=sl.train.BytesList(value=[image.tobytes()])),
                "label": sl.train.Feature(int64_list=sl.train.Int64List(value=[i % 10])),
                "index": sl.train.Feature(int64_list=sl.train.Int64List(value=[i]))}))
            writer.write(example.SerializeToString())


def read_and_decode(filename_queue):
    reader = sl.TFRecordReader()

    def example():  # called by the batcher's threads, once per example
        _, serialized_example = reader.read(filename_queue)
        features = sl.parse_single_example(serialized_example, features={
            "image_raw": sl.FixedLenFeature([], sl.string),
            "label": sl.FixedLenFeature([], sl.int64),
            "index": sl.FixedLenFeature([], sl.int64)})
        image = sl.decode_raw(features["image_raw"], sl.uint8)
        index = int(features["index"])
        assert image[0] == index // 256 and image[1] == index % 256
        image = sl.cast(image, sl.float32) * (1. / 255) - 0.5
        label = sl.cast(features["label"], sl.int32)
        return image, label, features["index"]

    return example


def main(directory, num_epochs=2, n=2000):
    path = os.path.join(directory, "train.tfrecords")
    write_records(path, n)
    filename_queue = sl.train.string_input_producer([path], num_epochs=num_epochs)
    example = read_and_decode(filename_queue)
    images, sparse_labels, indices = sl.train.shuffle_batch(
        example, batch_size=BATCH_SIZE, num_threads=2, capacity=1000 + 3 * BATCH_SIZE, min_after_dequeue=1000,
        shapes=[[784], [], []])  # TF's image.set_shape([784]); the dtypes come from the first example

    seen = collections.Counter()
    with sl.train.Session() as sess:
        coord = sl.train.Coordinator()
        threads = sl.train.start_queue_runners(sess=sess, coord=coord)
        step = 0
        try:
            while not coord.should_stop():
                x, y, i = sess.run([images, sparse_labels, indices])
                assert x.shape == (BATCH_SIZE, 784) and x.dtype == np.float32 and y.dtype == np.int32
                assert (y == i % 10).all()
                seen.update(i.tolist())
                step += 1
        except sl.errors.OutOfRangeError:
            print("Done training for %d epochs, %d steps." % (num_epochs, step))
        finally:
            coord.request_stop()
        coord.join(threads)
    assert seen == {i: num_epochs for i in range(n)}, "images missing or duplicated"
    print("OK: %d images x %d epochs" % (n, num_epochs))


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d:
        main(sys.argv[1] if len(sys.argv) > 1 else d)
