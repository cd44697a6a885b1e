"""TF 1's "Reading data" CSV pipeline, ported to sluice.

TensorFlow 1 (programmers_guide/reading_data):

    filename_queue = tf.train.string_input_producer(["file0.csv", "file1.csv"], num_epochs=2)
    reader = tf.TextLineReader()
    key, value = reader.read(filename_queue)
    col1, col2, col3, col4, col5 = tf.decode_csv(value, record_defaults=[[1], [1], [1], [1], [1]])
    features = tf.stack([col1, col2, col3, col4])
    example_batch, label_batch = tf.train.shuffle_batch([features, col5], batch_size=8, capacity=200,
                                                         min_after_dequeue=100)

In sluice the per-example part (read -> decode_csv -> stack) is a function the
batcher's runner threads call; its dtypes come from its first example.
Writes its own CSV files; prints "OK" after checking every row came twice.
"""
import collections
import os
import sys
import tempfile

import numpy as np

import sluice as sl


def main(directory):
    files = []
    for f in range(2):
        path = os.path.join(directory, "file%d.csv" % f)
        with open(path, "w") as out:
            for i in range(50):
                row = 100 * f + i
                out.write("%d,%d,%d,%d,%d\n" % (row, row + 1, row + 2, row + 3, row % 7))
        files.append(path)

    filename_queue = sl.train.string_input_producer(files, num_epochs=2)
    reader = sl.TextLineReader()

    def example():  # TF's read -> decode_csv -> stack, once per call
        _, value = reader.read(filename_queue)
        col1, col2, col3, col4, col5 = sl.decode_csv(value, record_defaults=[[1], [1], [1], [1], [1]])
        return [np.stack([col1, col2, col3, col4]), col5]

    # shapes= gives the structure now, so the result unpacks before anything runs (dtypes
    # come from the first example); without it, unpack what each sess.run returns.
    example_batch, label_batch = sl.train.shuffle_batch(example, batch_size=8, capacity=200, min_after_dequeue=100,
                                                        shapes=[[4], []], allow_smaller_final_batch=True)

    seen = collections.Counter()
    with sl.train.Session() as sess:
        coord = sl.train.Coordinator()
        threads = sl.train.start_queue_runners(sess=sess, coord=coord)
        try:
            while not coord.should_stop():
                features, labels = sess.run([example_batch, label_batch])
                assert features.shape[1:] == (4,) and (labels == features[:, 0] % 7).all()
                seen.update(features[:, 0].tolist())
        except sl.errors.OutOfRangeError:
            print("Done reading -- epoch limit reached")
        finally:
            coord.request_stop()
        coord.join(threads)
    expected = {100 * f + i: 2 for f in range(2) for i in range(50)}
    assert seen == expected, "rows missing or duplicated"
    print("OK: %d rows, each read twice" % len(seen))


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d:
        main(sys.argv[1] if len(sys.argv) > 1 else d)
