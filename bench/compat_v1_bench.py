"""The graph-mode image pipeline of sluice.compat.v1 against the eager one (bench/run.sh compat).

Both read the same generated TFRecords of JPEGs (--images of --size x --size,
written once into --data-dir), parse the record, decode the JPEG and batch
(--batch, two runner threads), for --epochs epochs:

  eager      sl.train.batch(read_producer(reader, queue).map_parse_example(...)
             .map_decode_jpeg("image"), shapes=...)
  compat_v1  the TF 1 program: string_input_producer -> TFRecordReader.read ->
             parse_single_example -> image.decode_jpeg -> set_shape ->
             train.batch, with sess.run(batch) in the loop
  op_by_op   the same TF 1 program with a tf.identity on the image, which
             keeps the batch off the native chain: its ops run in Python

Then CIFAR-10's distorted_inputs (cifar10_input.py): --cifar-records
generated fixed-length records (1 label byte + 32x32x3) -> decode_raw ->
strided_slice -> reshape -> transpose -> cast -> random_crop 24x24 ->
random_flip_left_right -> random_brightness -> random_contrast ->
per_image_standardization -> shuffle_batch (--batch, two runner threads), for
--epochs epochs:

  cifar_native    the TF 1 program in sluice.compat.v1: lowered to one fused
                  C++ map on the runner threads
  cifar_op_by_op  the same with a tf.identity on the image: ops in Python
  cifar_tf1       the same program in TensorFlow's tensorflow.compat.v1
                  (skipped when TensorFlow is not installed)

After one warm-up round, repetitions interleave the peers; the figure is
the median images/s. The lines "ratio compat_v1 cifar10 pipeline vs tf1: x"
and "... vs op_by_op: x" come before the last line, "ratio compat_v1 image
pipeline vs eager: x" (x = compat_v1's images/s over eager's; the target is
>= 0.9).

    python bench/compat_v1_bench.py [--data-dir D] [--images 512] [--reps 5]
"""

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

import sluice as sl
import sluice.compat.v1 as tf


def write_data(data_dir, images, size):
    path = os.path.join(data_dir, "compat_v1_bench_%d_%d.tfrecord" % (images, size))
    if os.path.exists(path):
        return path
    rng = np.random.default_rng(0)
    base = (rng.random((size // 8, size // 8, 3)) * 255).astype(np.uint8)
    with sl.io.TFRecordWriter(path + ".tmp") as w:
        for i in range(images):
            img = np.kron(np.roll(base, i, axis=0), np.ones((8, 8, 1), np.uint8))
            w.write(sl.train.Example(features=sl.train.Features(feature={
                "image": sl.train.Feature(bytes_list=sl.train.BytesList(value=[sl.image.encode_jpeg(img)])),
                "label": sl.train.Feature(int64_list=sl.train.Int64List(value=[i]))})).SerializeToString())
    os.replace(path + ".tmp", path)
    return path


FEATURES = {"image": sl.FixedLenFeature([], sl.string), "label": sl.FixedLenFeature([], sl.int64)}


def run_eager(path, args):
    with sl.train.Graph().as_default():
        fq = sl.train.string_input_producer([path], num_epochs=args.epochs, shuffle=False)
        producer = sl.train.read_producer(sl.TFRecordReader(), fq).map_parse_example(FEATURES).map_decode_jpeg(
            "image", channels=3)
        batch = sl.train.batch(producer, args.batch, num_threads=2, capacity=4 * args.batch,
                               shapes={"image": [args.size, args.size, 3], "label": []},
                               allow_smaller_final_batch=True)
        coord = sl.train.Coordinator()
        threads = sl.train.start_queue_runners(coord=coord)
        n = 0
        try:
            while True:
                n += len(batch.dequeue()["label"])
        except sl.errors.OutOfRangeError:
            pass
        coord.request_stop()
        coord.join(threads)
    return n


def run_compat(path, args, op_by_op=False):
    with tf.Graph().as_default():
        fq = tf.train.string_input_producer([path], num_epochs=args.epochs, shuffle=False)
        _, value = tf.TFRecordReader().read(fq)
        f = tf.parse_single_example(value, {"image": tf.FixedLenFeature([], tf.string),
                                            "label": tf.FixedLenFeature([], tf.int64)})
        image = tf.image.decode_jpeg(f["image"], channels=3)
        image.set_shape([args.size, args.size, 3])
        if op_by_op:
            image = tf.identity(image)
        images, labels = tf.train.batch([image, f["label"]], args.batch, num_threads=2, capacity=4 * args.batch,
                                        allow_smaller_final_batch=True)
        n = 0
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            try:
                while True:
                    n += len(sess.run([images, labels])[1])
            except tf.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads)
    return n


CIFAR_RECORD = 1 + 32 * 32 * 3


def write_cifar(data_dir, records):
    path = os.path.join(data_dir, "compat_v1_bench_cifar_%d.bin" % records)
    if not os.path.exists(path):
        rng = np.random.default_rng(0)
        data = rng.integers(0, 256, (records, CIFAR_RECORD), dtype=np.uint8)
        data[:, 0] %= 10
        with open(path + ".tmp", "wb") as f:
            f.write(data.tobytes())
        os.replace(path + ".tmp", path)
    return path


def run_cifar(tf1, path, args, op_by_op=False):
    """distorted_inputs in `tf1` (sluice.compat.v1 or tensorflow.compat.v1): the number of images."""
    with tf1.Graph().as_default():
        fq = tf1.train.string_input_producer([path], num_epochs=args.epochs)
        _, value = tf1.FixedLengthRecordReader(record_bytes=CIFAR_RECORD).read(fq)
        record = tf1.decode_raw(value, tf1.uint8)
        label = tf1.cast(tf1.strided_slice(record, [0], [1]), tf1.int32)
        depth_major = tf1.reshape(tf1.strided_slice(record, [1], [CIFAR_RECORD]), [3, 32, 32])
        image = tf1.cast(tf1.transpose(depth_major, [1, 2, 0]), tf1.float32)
        image = tf1.random_crop(image, [24, 24, 3])
        image = tf1.image.random_flip_left_right(image)
        image = tf1.image.random_brightness(image, max_delta=63)
        image = tf1.image.random_contrast(image, lower=0.2, upper=1.8)
        image = tf1.image.per_image_standardization(image)
        if op_by_op:
            image = tf1.identity(image)
        image.set_shape([24, 24, 3])
        label.set_shape([1])
        images, labels = tf1.train.shuffle_batch([image, label], args.batch, num_threads=2,
                                                 capacity=4 * args.batch, min_after_dequeue=2 * args.batch,
                                                 allow_smaller_final_batch=True)
        n = 0
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            coord = tf1.train.Coordinator()
            threads = tf1.train.start_queue_runners(sess=sess, coord=coord)
            try:
                while True:
                    n += len(sess.run([images, labels])[1])
            except tf1.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads)
    return n


def tensorflow_v1():
    """tensorflow.compat.v1, or None when TensorFlow is not installed."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        import tensorflow.compat.v1 as tf1  # noqa: PLC0415 - optional, and slow to import
    except ImportError:
        return None
    tf1.logging.set_verbosity(tf1.logging.ERROR)  # the queue API's deprecation warnings
    return tf1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=tempfile.gettempdir())
    parser.add_argument("--images", type=int, default=512)
    parser.add_argument("--size", type=int, default=128)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--cifar-records", type=int, default=2048)
    args = parser.parse_args()
    path = write_data(args.data_dir, args.images, args.size)
    cifar = write_cifar(args.data_dir, args.cifar_records)
    tf1 = tensorflow_v1()
    peers = {"eager": lambda: run_eager(path, args), "compat_v1": lambda: run_compat(path, args),
             "op_by_op": lambda: run_compat(path, args, op_by_op=True),
             "cifar_native": lambda: run_cifar(tf, cifar, args),
             "cifar_op_by_op": lambda: run_cifar(tf, cifar, args, op_by_op=True)}
    if tf1 is not None:
        peers["cifar_tf1"] = lambda: run_cifar(tf1, cifar, args)
    expected = {name: (args.cifar_records if name.startswith("cifar") else args.images) * args.epochs
                for name in peers}
    for run in peers.values():  # warm-up: page cache, first imports, thread pools
        run()
    rates = {name: [] for name in peers}
    for _ in range(args.reps):
        for name, run in peers.items():
            start = time.perf_counter()
            n = run()
            rates[name].append(n / (time.perf_counter() - start))
            assert n == expected[name], (name, n)
    for name, r in rates.items():
        print("%-14s %9.0f images/s (median of %d; %s)" % (name, statistics.median(r), len(r),
                                                          " ".join("%.0f" % x for x in r)))
    cifar = statistics.median(rates["cifar_native"])
    print("ratio compat_v1 cifar10 pipeline vs op_by_op: %.2f" % (cifar / statistics.median(rates["cifar_op_by_op"])))
    if "cifar_tf1" in rates:
        print("ratio compat_v1 cifar10 pipeline vs tf1: %.2f" % (cifar / statistics.median(rates["cifar_tf1"])))
    print("ratio compat_v1 op_by_op vs eager: %.2f" % (statistics.median(rates["op_by_op"]) /
                                                        statistics.median(rates["eager"])))
    print("ratio compat_v1 image pipeline vs eager: %.2f" % (statistics.median(rates["compat_v1"]) /
                                                              statistics.median(rates["eager"])))


if __name__ == "__main__":
    main()
