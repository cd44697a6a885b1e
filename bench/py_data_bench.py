"""tf.data pipeline vs sluice.data on the same file: TFRecordDataset ->
map(parse_example) -> batch(64) -> prefetch, records per second.

    .venv/bin/python bench/py_data_bench.py [--records 50000] [--reps 3]

Writes a TFRecord file of small Examples (an int64 label, 8 floats, a short
bytes feature) into a temporary folder, then times whole passes of each
pipeline (AUTOTUNE parallelism for both), best of --reps after one warm-up
pass, and ends with one "ratio data_parse vs tf.data: <x>" line.
"""

import argparse
import os
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def write_file(path, n):
    import sluice
    from sluice import io as sio
    t = sluice.train
    with sio.TFRecordWriter(path) as w:
        for i in range(n):
            ex = t.Example(features=t.Features(feature={
                "label": t.Feature(int64_list=t.Int64List(value=[i % 1000])),
                "x": t.Feature(float_list=t.FloatList(value=[i * 0.5 + k for k in range(8)])),
                "id": t.Feature(bytes_list=t.BytesList(value=[b"id-%d" % i])),
            }))
            w.write(ex.SerializeToString())


def time_pass(ds):
    t0 = time.perf_counter()
    n = 0
    for batch in ds:
        n += len(batch["label"])
    return n, time.perf_counter() - t0


def best(ds, reps):
    time_pass(ds)  # warm-up: page cache, threads, allocator
    runs = [time_pass(ds) for _ in range(reps)]
    n = runs[0][0]
    return n, n / min(t for _, t in runs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=50000)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    import tensorflow as tf
    from sluice import data as sd
    from sluice import io as sio
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "examples.tfrecord")
        write_file(path, args.records)
        tf_features = {"label": tf.io.FixedLenFeature([], tf.int64), "x": tf.io.FixedLenFeature([8], tf.float32),
                       "id": tf.io.FixedLenFeature([], tf.string)}
        s_features = {"label": sio.FixedLenFeature([], "int64"), "x": sio.FixedLenFeature([8], "float32"),
                      "id": sio.FixedLenFeature([], "string")}
        t_ds = (tf.data.TFRecordDataset(path)
                .map(lambda r: tf.io.parse_single_example(r, tf_features), num_parallel_calls=tf.data.AUTOTUNE)
                .batch(64).prefetch(tf.data.AUTOTUNE))
        s_ds = (sd.TFRecordDataset(path)
                .map(sd.ops.parse_example(s_features), num_parallel_calls=sd.AUTOTUNE)
                .batch(64).prefetch(sd.AUTOTUNE))
        n_t, tf_rate = best(t_ds, args.reps)
        n_s, s_rate = best(s_ds, args.reps)
        assert n_t == n_s == args.records, (n_t, n_s)
        print("records: %d, cores: %d" % (args.records, os.cpu_count()))
        print("tf.data      %12.0f records/s" % tf_rate)
        print("sluice.data  %12.0f records/s" % s_rate)
        print("ratio data_parse vs tf.data: %.2f" % (s_rate / tf_rate))


if __name__ == "__main__":
    main()
