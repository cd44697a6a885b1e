"""TF 1 input programs run under tensorflow.compat.v1 and sluice.compat.v1 with only `tf` changed.

Each program is TF code text using a module-level ``tf`` (the tutorials' and
TF 1 documentation's input pipelines); it leaves ``result`` (what it
fetched), ``ended`` (True once OutOfRangeError ended the loop) and
``threads`` (what start_queue_runners returned, joined). The test runs it
under sluice.compat.v1, and under TensorFlow where it is installed, and
compares the results (sorted where the order is not deterministic).
"""

import os
import threading

import numpy as np
import pytest

import sluice as sl
import sluice.compat.v1 as sltf

# ---- data, written once per module ----------------------------------------------------------------


def _example(i):
    return sl.train.Example(features=sl.train.Features(feature={
        "label": sl.train.Feature(int64_list=sl.train.Int64List(value=[i])),
        "x": sl.train.Feature(float_list=sl.train.FloatList(value=[i * 0.5, i + 1.0])),
        "tags": sl.train.Feature(int64_list=sl.train.Int64List(value=list(range(i % 3)))),
        "name": sl.train.Feature(bytes_list=sl.train.BytesList(value=[b"n%d" % i])),
    })).SerializeToString()


def _image_example(i, rng):
    img = (rng.random((8 + i % 3, 10, 3)) * 255).astype(np.uint8)
    return sl.train.Example(features=sl.train.Features(feature={
        "image": sl.train.Feature(bytes_list=sl.train.BytesList(value=[sl.image.encode_png(img)])),
        "label": sl.train.Feature(int64_list=sl.train.Int64List(value=[i])),
    })).SerializeToString()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("compat_v1")
    for f in range(2):
        with sl.io.TFRecordWriter(str(d / ("data-%d.tfrecord" % f))) as w:
            for i in range(f * 10, f * 10 + 10):
                w.write(_example(i))
    rng = np.random.default_rng(0)
    with sl.io.TFRecordWriter(str(d / "images.tfrecord")) as w:
        for i in range(6):
            w.write(_image_example(i, rng))
    for f in range(2):
        with open(d / ("data-%d.csv" % f), "w") as out:
            for i in range(7):
                out.write("%d,%d.5,%d\n" % (f * 100 + i, i, i % 2))
    with open(d / "fixed.bin", "wb") as out:
        for i in range(5):
            out.write(bytes([i % 10]) + bytes((i * 7 + j) % 256 for j in range(3 * 2 * 2)))
    with open(d / "lines.txt", "w") as out:
        for i in range(9):
            out.write("ab" * (i % 4 + 1) + "\n")
    return d


# ---- the programs ---------------------------------------------------------------------------------

PROGRAMS = {}


def program(name, ordered=True):
    """Registers a program; `ordered`: True, False (compare as multisets) or "shapes" (random values)."""
    def register(source):
        PROGRAMS[name] = (source, ordered)
        return source
    return register


program("queues_and_threads")("""
# TF 1 guide, "Threading and Queues": a queue incremented by a graph of ops.
q = tf.FIFOQueue(3, "float")
init = q.enqueue_many(([0., 0., 0.],))
x = q.dequeue()
y = x + 1
q_inc = q.enqueue([y])
with tf.Session() as sess:
    init.run()
    for _ in range(5):
        q_inc.run()
    result = [sess.run(q.dequeue()) for _ in range(3)]
    result.append(sess.run(q.size()))
    sess.run(q.close())
    try:
        sess.run(x)
    except tf.errors.OutOfRangeError:
        ended = True
""")

program("queue_runner_and_coordinator")("""
# A QueueRunner with [enqueue_op] * 1 over limit_epochs, and the Coordinator's loop.
data = tf.constant([1, 2, 3, 4, 5])
queue = tf.FIFOQueue(4, tf.int32, shapes=[[]])
enqueue_op = queue.enqueue_many([tf.train.limit_epochs(data, num_epochs=2)])
qr = tf.train.QueueRunner(queue, [enqueue_op] * 1)
tf.train.add_queue_runner(qr)
value = queue.dequeue() * 10
result = []
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while not coord.should_stop():
            result.append(sess.run(value))
    except tf.errors.OutOfRangeError:
        ended = True
    finally:
        coord.request_stop()
    coord.join(threads)
""")

program("reading_tfrecords")("""
# "Reading data": file names -> TFRecordReader -> parse_single_example -> batch, num_epochs=1.
files = [DATA + "/data-0.tfrecord", DATA + "/data-1.tfrecord"]
filename_queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
reader = tf.TFRecordReader()
_, serialized = reader.read(filename_queue)
features = tf.parse_single_example(serialized, features={
    "label": tf.FixedLenFeature([], tf.int64),
    "x": tf.FixedLenFeature([2], tf.float32),
    "name": tf.FixedLenFeature([], tf.string)})
label = tf.cast(features["label"], tf.int32)
x = features["x"] * 2.0
labels, xs, names = tf.train.batch([label, x, features["name"]], batch_size=4, allow_smaller_final_batch=True)
result = []
with tf.Session() as sess:
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while not coord.should_stop():
            result.append(sess.run([labels, xs, names]))
    except tf.errors.OutOfRangeError:
        ended = True
    finally:
        coord.request_stop()
    coord.join(threads)
""")

program("reading_csv")("""
# "Reading data": TextLineReader -> decode_csv -> tf.stack, one file after the other.
filename_queue = tf.train.string_input_producer([DATA + "/data-0.csv", DATA + "/data-1.csv"], shuffle=False,
                                                num_epochs=1)
reader = tf.TextLineReader()
key, value = reader.read(filename_queue)
col1, col2, col3 = tf.decode_csv(value, record_defaults=[[1], [1.0], [0]])
features = tf.stack([tf.cast(col1, tf.float32), col2])
result = []
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(coord=coord)
    try:
        while True:
            example, label = sess.run([features, col3])
            result.append((example, label))
    except tf.errors.OutOfRangeError:
        ended = True
    coord.request_stop()
    coord.join(threads)
""")

program("fixed_length_records")("""
# CIFAR-10's reader: FixedLengthRecordReader -> decode_raw -> label byte + CHW image -> HWC float.
label_bytes, height, width, depth = 1, 2, 2, 3
record_bytes = label_bytes + height * width * depth
filename_queue = tf.train.string_input_producer([DATA + "/fixed.bin"], num_epochs=1, shuffle=False)
reader = tf.FixedLengthRecordReader(record_bytes=record_bytes)
key, value = reader.read(filename_queue)
record = tf.decode_raw(value, tf.uint8)
label = tf.cast(record[0:label_bytes], tf.int32)
label.set_shape([1])
depth_major = tf.reshape(record[label_bytes:record_bytes], [depth, height, width])
image = tf.cast(tf.transpose(depth_major, [1, 2, 0]), tf.float32)
images, labels = tf.train.batch([image, label], batch_size=2, num_threads=1, capacity=10,
                                allow_smaller_final_batch=True)
result = []
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while not coord.should_stop():
            result.append(sess.run([images, labels]))
    except tf.errors.OutOfRangeError:
        ended = True
    finally:
        coord.request_stop()
    coord.join(threads)
""")

program("preloaded_constant")("""
# "Preloaded data" with constants: slice_input_producer -> batch.
images = np.arange(24, dtype=np.float32).reshape(6, 4)
labels = np.arange(6, dtype=np.int64)
image, label = tf.train.slice_input_producer([tf.constant(images), tf.constant(labels)], num_epochs=2,
                                             shuffle=False)
images_b, labels_b = tf.train.batch([image, label], batch_size=4, allow_smaller_final_batch=True)
result = []
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while not coord.should_stop():
            result.append(sess.run([images_b, labels_b]))
    except tf.errors.OutOfRangeError:
        ended = True
    finally:
        coord.request_stop()
    coord.join(threads)
""")

program("preloaded_variable")("""
# "Preloaded data" with a variable initialised from a placeholder (fed once).
data = np.arange(10, dtype=np.float32) * 1.5
initializer = tf.placeholder(dtype=tf.float32, shape=data.shape)
input_data = tf.Variable(initializer, trainable=False, collections=[])
value = tf.train.slice_input_producer([input_data], num_epochs=1, shuffle=False)[0]
batch = tf.train.batch([value], batch_size=3)
result = []
with tf.Session() as sess:
    sess.run(input_data.initializer, feed_dict={initializer: data})
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while True:
            result.append(sess.run(batch))
    except tf.errors.OutOfRangeError:
        ended = True
    coord.request_stop()
    coord.join(threads)
""")

program("batch_join_multiple_readers", ordered=False)("""
# "Reading data": one reader per thread, batch_join (the order across readers is not deterministic).
filename_queue = tf.train.string_input_producer([DATA + "/data-0.tfrecord", DATA + "/data-1.tfrecord"],
                                                num_epochs=1, shuffle=False)
example_list = []
for _ in range(2):
    _, serialized = tf.TFRecordReader().read(filename_queue)
    f = tf.parse_single_example(serialized, {"label": tf.FixedLenFeature([], tf.int64)})
    example_list.append([f["label"]])
label_batch = tf.train.batch_join(example_list, batch_size=5)
result = []
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while True:
            result.extend(sess.run(label_batch).tolist())
    except tf.errors.OutOfRangeError:
        ended = True
    coord.request_stop()
    coord.join(threads)
""")

program("shuffle_batch", ordered=False)("""
# shuffle_batch over a TFRecord pipeline: every example once per epoch, in some order.
filename_queue = tf.train.string_input_producer([DATA + "/data-0.tfrecord", DATA + "/data-1.tfrecord"],
                                                num_epochs=2, shuffle=True, seed=3)
_, serialized = tf.TFRecordReader().read(filename_queue)
f = tf.parse_single_example(serialized, {"label": tf.FixedLenFeature([], tf.int64),
                                         "x": tf.FixedLenFeature([2], tf.float32)})
labels, xs = tf.train.shuffle_batch([f["label"], f["x"]], batch_size=8, capacity=30, min_after_dequeue=10,
                                    num_threads=2, seed=7, allow_smaller_final_batch=True)
result = []
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while True:
            l, x = sess.run([labels, xs])
            result.extend(zip(l.tolist(), x.tolist()))
    except tf.errors.OutOfRangeError:
        ended = True
    coord.request_stop()
    coord.join(threads)
""")

program("dynamic_pad")("""
# Variable-length rows padded per batch: decode_raw of text lines, batch(dynamic_pad=True).
filename_queue = tf.train.string_input_producer([DATA + "/lines.txt"], num_epochs=1, shuffle=False)
_, line = tf.TextLineReader().read(filename_queue)
codes = tf.decode_raw(line, tf.uint8)
length = tf.shape(codes)[0]
padded, lengths = tf.train.batch([codes, length], batch_size=4, dynamic_pad=True, allow_smaller_final_batch=True)
result = []
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while True:
            result.append(sess.run([padded, lengths]))
    except tf.errors.OutOfRangeError:
        ended = True
    coord.request_stop()
    coord.join(threads)
""")

program("sparse_batching")("""
# A VarLenFeature is a SparseTensor; batch gives one batched SparseTensor.
filename_queue = tf.train.string_input_producer([DATA + "/data-0.tfrecord"], num_epochs=1, shuffle=False)
_, serialized = tf.TFRecordReader().read(filename_queue)
f = tf.parse_single_example(serialized, {"label": tf.FixedLenFeature([], tf.int64),
                                         "tags": tf.VarLenFeature(tf.int64)})
labels, tags = tf.train.batch([f["label"], f["tags"]], batch_size=3)
result = []
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while True:
            l, t = sess.run([labels, tags])
            result.append((l, t.indices, t.values, t.dense_shape))
    except tf.errors.OutOfRangeError:
        ended = True
    coord.request_stop()
    coord.join(threads)
""")

program("parse_after_batch")("""
# Batch serialized records first, then parse_example on the batch (the fast TF 1 idiom).
filename_queue = tf.train.string_input_producer([DATA + "/data-1.tfrecord"], num_epochs=1, shuffle=False)
_, serialized = tf.TFRecordReader().read(filename_queue)
batch = tf.train.batch([serialized], batch_size=4, allow_smaller_final_batch=True)
parsed = tf.parse_example(batch, {"label": tf.FixedLenFeature([], tf.int64), "tags": tf.VarLenFeature(tf.int64),
                                  "x": tf.FixedLenFeature([2], tf.float32)})
result = []
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while True:
            p = sess.run(parsed)
            result.append((p["label"], p["x"], p["tags"].indices, p["tags"].values, p["tags"].dense_shape))
    except tf.errors.OutOfRangeError:
        ended = True
    coord.request_stop()
    coord.join(threads)
""")

program("one_shot_iterator")("""
# tf.data in TF 1: make_one_shot_iterator().get_next() in a loop until OutOfRangeError.
dataset = tf.data.Dataset.from_tensor_slices((np.arange(10, dtype=np.int64), np.arange(10) * 0.5))
dataset = dataset.map(lambda a, b: (a * 2, tf.cast(b, tf.float32) + 1.0)).batch(4)
iterator = dataset.make_one_shot_iterator()
next_element = iterator.get_next()
result = []
with tf.Session() as sess:
    try:
        while True:
            result.append(sess.run(next_element))
    except tf.errors.OutOfRangeError:
        ended = True
""")

program("initializable_iterator_tfrecord")("""
# An initializable iterator over TFRecordDataset + parse_single_example, run for two epochs.
dataset = tf.data.TFRecordDataset([DATA + "/data-0.tfrecord"])
dataset = dataset.map(lambda s: tf.parse_single_example(s, {"label": tf.FixedLenFeature([], tf.int64)})["label"])
iterator = tf.data.make_initializable_iterator(dataset.batch(6))
labels = iterator.get_next()
result = []
with tf.Session() as sess:
    for epoch in range(2):
        sess.run(iterator.initializer)
        try:
            while True:
                result.append(sess.run(labels))
        except tf.errors.OutOfRangeError:
            ended = True
""")

program("initializable_iterator_fed_placeholders")("""
# "Importing Data": placeholders fed at the initializer, the dataset re-initialised with other data.
features_placeholder = tf.placeholder(tf.float32, [None, 2])
labels_placeholder = tf.placeholder(tf.int64, [None])
dataset = tf.data.Dataset.from_tensor_slices((features_placeholder, labels_placeholder))
dataset = dataset.map(lambda x, y: (x * 2.0, y + 1)).batch(3)
iterator = dataset.make_initializable_iterator()
next_features, next_labels = iterator.get_next()
result = [next_features.shape.as_list(), next_labels.dtype.name]
with tf.Session() as sess:
    for n in (5, 2):
        sess.run(iterator.initializer, feed_dict={features_placeholder: np.ones((n, 2), np.float32) * n,
                                                  labels_placeholder: np.arange(n)})
        try:
            while True:
                result.append(sess.run([next_features, next_labels]))
        except tf.errors.OutOfRangeError:
            ended = True
""")

program("cifar10_distorted_inputs", ordered="shapes")("""
# cifar10_input.distorted_inputs: fixed-length records, strided_slice, random crop/flip/brightness/contrast,
# standardisation, set_shape, shuffle_batch with many threads, and a reshape of the labels.
label_bytes, height, width, depth = 1, 2, 2, 3
record_bytes = label_bytes + height * width * depth
filename_queue = tf.train.string_input_producer([DATA + "/fixed.bin"] * 2, num_epochs=4)
reader = tf.FixedLengthRecordReader(record_bytes=record_bytes)
key, value = reader.read(filename_queue)
record = tf.decode_raw(value, tf.uint8)
label = tf.cast(tf.strided_slice(record, [0], [label_bytes]), tf.int32)
depth_major = tf.reshape(tf.strided_slice(record, [label_bytes], [record_bytes]), [depth, height, width])
image = tf.cast(tf.transpose(depth_major, [1, 2, 0]), tf.float32)
distorted = tf.random_crop(image, [1, 2, 3])
distorted = tf.image.random_flip_left_right(distorted)
distorted = tf.image.random_brightness(distorted, max_delta=63)
distorted = tf.image.random_contrast(distorted, lower=0.2, upper=1.8)
float_image = tf.image.per_image_standardization(distorted)
float_image.set_shape([1, 2, 3])
label.set_shape([1])
images, label_batch = tf.train.shuffle_batch([float_image, label], batch_size=4, num_threads=4, capacity=30,
                                             min_after_dequeue=10)
labels = tf.reshape(label_batch, [4])
result = []
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while True:
            result.append(sess.run([images, labels]))
    except tf.errors.OutOfRangeError:
        ended = True
    coord.request_stop()
    coord.join(threads)
""")

program("mnist_fully_connected_reader", ordered=False)("""
# mnist/fully_connected_reader.py's inputs(): decode_raw, set_shape, scale to [-0.5, 0.5], shuffle_batch,
# and the training loop over a group of ops.
filename_queue = tf.train.string_input_producer([DATA + "/data-0.tfrecord"], num_epochs=2)
_, serialized = tf.TFRecordReader().read(filename_queue)
features = tf.parse_single_example(serialized, features={"name": tf.FixedLenFeature([], tf.string),
                                                         "label": tf.FixedLenFeature([], tf.int64)})
image = tf.decode_raw(features["name"], tf.uint8)
image.set_shape([2])
image = tf.cast(image, tf.float32) * (1. / 255) - 0.5
label = tf.cast(features["label"], tf.int32)
images, sparse_labels = tf.train.shuffle_batch([image, label], batch_size=4, num_threads=2, capacity=20,
                                               min_after_dequeue=5)
train_op = tf.group(tf.reduce_mean(images), tf.no_op())
init_op = tf.group(tf.global_variables_initializer(), tf.local_variables_initializer())
result = []
with tf.Session() as sess:
    sess.run(init_op)
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        step = 0
        while not coord.should_stop():
            _, im, l = sess.run([train_op, images, sparse_labels])
            result.extend(zip(l.tolist(), np.round(im, 4).tolist()))
            step += 1
    except tf.errors.OutOfRangeError:
        ended = True
    finally:
        coord.request_stop()
    coord.join(threads)
""")

program("reinitializable_iterator")("""
# "Importing Data": one iterator from_structure, switched between a training and a validation dataset.
training_dataset = tf.data.Dataset.range(6).map(lambda x: x * 2)
validation_dataset = tf.data.Dataset.range(3)
iterator = tf.data.Iterator.from_structure(training_dataset.output_types, training_dataset.output_shapes)
next_element = iterator.get_next()
training_init_op = iterator.make_initializer(training_dataset)
validation_init_op = iterator.make_initializer(validation_dataset)
result = [next_element.dtype.name]
with tf.Session() as sess:
    for _ in range(2):
        sess.run(training_init_op)
        for _ in range(6):
            result.append(sess.run(next_element))
        sess.run(validation_init_op)
        for _ in range(3):
            result.append(sess.run(next_element))
    try:
        sess.run(next_element)
    except tf.errors.OutOfRangeError:
        ended = True
""")

program("maybe_batch_keep_input")("""
# maybe_batch: only the examples whose keep_input is true (even labels), and a vector keep_input with
# enqueue_many.
data = tf.constant(np.arange(10, dtype=np.int64))
i = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
label = tf.gather(data, i)
kept = tf.train.maybe_batch([label], tf.equal(label % 2, 0), batch_size=2, allow_smaller_final_batch=True)
rows = tf.constant(np.arange(6, dtype=np.int32).reshape(3, 2))
many = tf.train.maybe_batch([tf.train.limit_epochs(rows, 1)], tf.constant([True, False, True]), batch_size=1,
                            enqueue_many=True)
result = []
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while True:
            result.append(sess.run(kept))
    except tf.errors.OutOfRangeError:
        ended = True
    result.append(sess.run(many))
    result.append(sess.run(many))
    coord.request_stop()
    coord.join(threads)
""")

program("train_then_eval_sessions")("""
# Two Sessions on one graph: each starts from fresh queues at epoch 0 (train, then eval).
filename_queue = tf.train.string_input_producer([DATA + "/data-0.tfrecord"], num_epochs=1, shuffle=False)
_, serialized = tf.TFRecordReader().read(filename_queue)
label = tf.parse_single_example(serialized, {"label": tf.FixedLenFeature([], tf.int64)})["label"]
batch = tf.train.batch([label], batch_size=5)
result = []
for phase in range(2):
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        try:
            while True:
                result.append((phase, sess.run(batch)))
        except tf.errors.OutOfRangeError:
            ended = True
        coord.request_stop()
        coord.join(threads)
""")

program("range_input_producer_gather")("""
# range_input_producer as an index queue into constant data.
data = tf.constant(np.arange(12, dtype=np.int32).reshape(6, 2))
index_queue = tf.train.range_input_producer(6, num_epochs=1, shuffle=False)
i = index_queue.dequeue()
row = tf.gather(data, i)
rows = tf.train.batch([row, i], batch_size=3)
result = []
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while True:
            result.append(sess.run(rows))
    except tf.errors.OutOfRangeError:
        ended = True
    coord.request_stop()
    coord.join(threads)
""")

program("image_pipeline")("""
# Images from TFRecords: decode, resize (TF 1's resize_images), flip, standardise, batch.
filename_queue = tf.train.string_input_producer([DATA + "/images.tfrecord"], num_epochs=1, shuffle=False)
_, serialized = tf.TFRecordReader().read(filename_queue)
f = tf.parse_single_example(serialized, {"image": tf.FixedLenFeature([], tf.string),
                                         "label": tf.FixedLenFeature([], tf.int64)})
image = tf.image.decode_png(f["image"], channels=3)
image = tf.image.resize_images(image, [6, 6])
image = tf.image.flip_left_right(image)
image = tf.image.per_image_standardization(image)
images, labels = tf.train.batch([image, f["label"]], batch_size=4, allow_smaller_final_batch=True)
result = []
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while True:
            result.append(sess.run([images, labels]))
    except tf.errors.OutOfRangeError:
        ended = True
    coord.request_stop()
    coord.join(threads)
""")

program("seeded_filename_order")("""
# string_input_producer's shuffled order for a seed, three epochs.
q = tf.train.string_input_producer(["a", "b", "c", "d", "e"], num_epochs=3, shuffle=True, seed=42)
name = q.dequeue()
result = []
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while True:
            result.append(sess.run(name))
    except tf.errors.OutOfRangeError:
        ended = True
    coord.request_stop()
    coord.join(threads)
""")

program("counter_variable_and_timeout")("""
# A counter variable, assign_add, and RunOptions(timeout_in_ms) on an empty queue.
counter = tf.Variable(0, name="counter")
increment = counter.assign_add(1)
q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
result = []
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(3):
        result.append(sess.run(increment))
    result.append(sess.run(counter))
    try:
        sess.run(q.dequeue(), options=tf.RunOptions(timeout_in_ms=50))
    except tf.errors.DeadlineExceededError:
        result.append("deadline")
    sess.run(q.enqueue([7]))
    sess.run(q.close())
    result.append(sess.run(q.dequeue()))
    try:
        sess.run(q.dequeue())
    except tf.errors.OutOfRangeError:
        ended = True
""")

program("padding_and_priority_queues")("""
# PaddingFIFOQueue.dequeue_many pads; PriorityQueue dequeues by priority; dequeue_up_to after close.
pq = tf.PaddingFIFOQueue(10, [tf.int32], shapes=[[None]])
ops = [pq.enqueue([tf.constant(v)]) for v in ([1], [2, 3], [4, 5, 6])]
padded = pq.dequeue_many(3)
prio = tf.PriorityQueue(10, [tf.string], shapes=[[]])
pops = [prio.enqueue((tf.constant(p, tf.int64), tf.constant(s))) for p, s in ((3, "c"), (1, "a"), (2, "b"))]
pr = prio.dequeue()
fq = tf.FIFOQueue(10, [tf.int32, tf.float32], shapes=[[], [2]])
fops = fq.enqueue_many([tf.constant([1, 2, 3]), tf.constant(np.ones((3, 2), np.float32))])
upto = fq.dequeue_up_to(5)
result = []
with tf.Session() as sess:
    for op in ops:
        sess.run(op)
    result.append(sess.run(padded))
    for op in pops:
        sess.run(op)
    result.append([sess.run(pr) for _ in range(3)])
    sess.run(fops)
    sess.run(fq.close())
    result.append(sess.run(upto))
    try:
        sess.run(upto)
    except tf.errors.OutOfRangeError:
        ended = True
""")


# ---- running and comparing --------------------------------------------------------------------------

def _run(tf, source, data_dir):
    env = {"tf": tf, "np": np, "DATA": str(data_dir)}
    with tf.Graph().as_default():
        exec(compile(source, "<tf program>", "exec"), env)  # noqa: S102 - the test's own program text
    return env


def _plain(x):
    """A fetched result as plain, comparable Python values."""
    if hasattr(x, "indices") and hasattr(x, "dense_shape"):
        return ("sparse", _plain(x.indices), _plain(x.values), _plain(x.dense_shape))
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in sorted(x.items())}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (np.ndarray, np.generic)):
        return _plain(x.tolist()) if x.dtype != object else [_plain(v) for v in x.tolist()] if x.ndim else x.item()
    if isinstance(x, float):
        return round(x, 3)
    return x


def _check_threads(env):
    for t in env.get("threads") or []:
        alive = t.is_alive() if hasattr(t, "is_alive") else not getattr(t, "joined", True)
        assert not alive, "a runner thread is still running after coord.join: %r" % (t,)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_runs_under_sluice_compat_v1(name, data_dir):
    source, _ = PROGRAMS[name]
    before = threading.active_count()
    env = _run(sltf, source, data_dir)
    assert env.get("ended") is True, "the program did not end with OutOfRangeError"
    assert env["result"], "the program fetched nothing"
    _check_threads(env)
    assert threading.active_count() <= before + 1


@pytest.fixture(scope="module")
def tf1():
    tf = pytest.importorskip("tensorflow.compat.v1")
    # Graph mode inside each program's `with tf.Graph().as_default()` (disable_eager_execution would leave the
    # process in graph mode, breaking the eager TF tests that run after these).
    tf.logging.set_verbosity(tf.logging.ERROR)
    return tf


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_gives_tensorflows_result(name, data_dir, tf1):
    source, ordered = PROGRAMS[name]
    expected_raw = _run(tf1, source, data_dir)["result"]
    got_raw = _run(sltf, source, data_dir)["result"]
    if ordered == "shapes":  # random ops: the batches' number, shapes and dtypes
        def shapes(r):
            return [[(np.shape(a), np.asarray(a).dtype.kind) for a in batch] for batch in r]
        assert shapes(got_raw) == shapes(expected_raw)
        return
    if name == "image_pipeline":  # PNG decode is exact; TF's resize and standardisation differ in the last bits
        assert len(got_raw) == len(expected_raw)
        for (got_images, got_labels), (images, labels) in zip(got_raw, expected_raw):
            np.testing.assert_allclose(got_images, images, atol=2e-3)
            assert got_labels.tolist() == labels.tolist()
        return
    expected, got = _plain(expected_raw), _plain(got_raw)
    if not ordered:
        expected, got = sorted(map(repr, expected)), sorted(map(repr, got))
    assert got == expected


def test_unprovided_op_raises_not_implemented_naming_it():
    with pytest.raises(NotImplementedError, match="tf.nn_conv_like_op"):
        sltf.nn_conv_like_op  # noqa: B018 - the attribute access is the test
    assert not hasattr(sltf, "nn_conv_like_op")
    with pytest.raises(NotImplementedError, match="get_variable"):
        sltf.get_variable("w", [2])


def test_graph_error_names_the_op_and_its_inputs():
    with sltf.Graph().as_default():
        x = sltf.placeholder(sltf.string, [])
        n = sltf.string_to_number(x, name="to_number")
        with sltf.Session() as sess:
            with pytest.raises(sl.errors.InvalidArgumentError, match="to_number.*StringToNumber.*Placeholder:0"):
                sess.run(n, feed_dict={x: "not a number"})


def test_each_session_owns_its_queues():
    with sltf.Graph().as_default():
        q = sltf.FIFOQueue(5, sltf.int32, shapes=[[]])
        enq = q.enqueue([1])
        with sltf.Session() as a:
            a.run(enq)
            a.run(enq)
            with sltf.Session() as b:
                assert b.run(q.size()) == 0
            assert a.run(q.size()) == 2


def test_disable_eager_execution_is_a_no_op():
    sltf.disable_eager_execution()
    sltf.disable_v2_behavior()
    assert not sltf.executing_eagerly()


if os.environ.get("SLUICE_COMPAT_STRESS"):
    @pytest.mark.parametrize("name", sorted(PROGRAMS))
    def test_program_repeatedly(name, data_dir):
        for _ in range(20):
            env = _run(sltf, PROGRAMS[name][0], data_dir)
            assert env.get("ended") is True


def test_reader_parse_decode_batch_runs_as_a_native_chain(data_dir):
    # A JPEG per record: read -> parse -> decode_jpeg -> set_shape -> batch, with a cast after the batch.
    path = str(data_dir / "jpegs.tfrecord")
    rng = np.random.default_rng(1)
    images = [(rng.random((6, 5, 3)) * 255).astype(np.uint8) for _ in range(5)]
    with sl.io.TFRecordWriter(path) as w:
        for i, img in enumerate(images):
            w.write(sl.train.Example(features=sl.train.Features(feature={
                "image": sl.train.Feature(bytes_list=sl.train.BytesList(value=[sl.image.encode_jpeg(img)])),
                "label": sl.train.Feature(int64_list=sl.train.Int64List(value=[i]))})).SerializeToString())
    tf = sltf
    with tf.Graph().as_default() as g:
        fq = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
        _, value = tf.TFRecordReader().read(fq)
        f = tf.parse_single_example(value, {"image": tf.FixedLenFeature([], tf.string),
                                            "label": tf.FixedLenFeature([], tf.int64)})
        image = tf.image.decode_jpeg(f["image"], channels=3)
        image.set_shape([6, 5, 3])
        label = tf.cast(f["label"], tf.int32)
        imgs, labels = tf.train.batch([image, label], batch_size=2, allow_smaller_final_batch=True)
        assert not g.get_collection(tf.GraphKeys.QUEUE_RUNNERS), "the batch fell back to Python queue runners"
        assert labels.dtype == tf.int32 and imgs.shape.as_list() == [None, 6, 5, 3]
        got_images, got_labels = [], []
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            with pytest.raises(tf.errors.OutOfRangeError):
                while True:
                    i, l = sess.run([imgs, labels])
                    got_images.extend(i)
                    got_labels.extend(l.tolist())
            coord.request_stop()
            coord.join(threads)
    assert got_labels == [0, 1, 2, 3, 4]
    for img, got in zip(images, got_images):
        np.testing.assert_array_equal(got, sl.image.decode_jpeg(sl.image.encode_jpeg(img), channels=3))


def _python_runners(g):
    return g.get_collection(sltf.GraphKeys.QUEUE_RUNNERS)


@pytest.mark.parametrize("name", ["batch_join_multiple_readers", "preloaded_constant", "shuffle_batch",
                                  "train_then_eval_sessions", "parse_after_batch", "cifar10_distorted_inputs",
                                  "mnist_fully_connected_reader", "reading_tfrecords"])
def test_programs_whose_batch_is_all_native_use_no_python_runner(name, data_dir):
    env = {"tf": sltf, "np": np, "DATA": str(data_dir)}
    with sltf.Graph().as_default() as g:
        exec(compile(PROGRAMS[name][0], "<tf program>", "exec"), env)  # noqa: S102 - the test's own program text
        assert [qr for qr in _python_runners(g)] == []
    assert env["ended"] is True


@pytest.mark.parametrize("name", ["sparse_batching", "dynamic_pad"])
def test_programs_with_python_ops_fall_back_to_python_runners(name, data_dir):
    env = {"tf": sltf, "np": np, "DATA": str(data_dir)}
    with sltf.Graph().as_default() as g:
        exec(compile(PROGRAMS[name][0], "<tf program>", "exec"), env)  # noqa: S102 - the test's own program text
        assert _python_runners(g)
    assert env["ended"] is True
