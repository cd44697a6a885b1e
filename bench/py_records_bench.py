#!/usr/bin/env python3
"""TensorFlow peers of bench/records_benchmark.cc, over the same files.

    python bench/py_records_bench.py --records-dir build-recbench/records-data \
        [--repetitions 3] [--min-time 0.5] [--json out.json]

The files are the ones records_benchmark writes (run it with --generate_only
first; bench/run.sh records does). Measured, each as records/s and payload
bytes/s (median of the repetitions, every repetition kept in the JSON):

  read/<size>/tf_iter         for x in TFRecordDataset(f).take(2048): eager,
                              one Python step per record (the first 2048
                              records only: a whole 1 KiB file takes
                              minutes this way)
  read/<size>/tf_batch256     TFRecordDataset(f).batch(256), iterated eagerly
  read/<size>/tf_reduce       TFRecordDataset(f).reduce(...) inside a
                              tf.function: the whole file read in C++, no
                              Python per record (TF's fastest path)
  parse/<kind>/single/tf_eager      tf.io.parse_single_example per record,
                                    eager (the first 256 records)
  parse/<kind>/single/tf_data       Dataset.from_tensor_slices(records)
                                    .map(parse_single_example), consumed by
                                    reduce in a tf.function
  parse/<kind>/batch64/tf_eager     tf.io.parse_example on batches of 64
                                    (eager, one call per batch)
  parse/<kind>/batch64/tf_data      from_tensor_slices(records).batch(64)
                                    .map(parse_example), consumed by reduce

The specs are those of records_benchmark.cc (ImageSpec, ImageNetSpec).
Output: JSON {"results": [{"name", "runs" (records per wall-clock second),
"cpu_runs" (records per CPU second of the process, TF's threads included),
"bytes_runs"}], "skipped": {...}}.
"""

import argparse
import json
import os
import statistics
import sys
import time

READ_FILES = [("100KiB", "read_100KiB.tfrecord"), ("1KiB", "read_1KiB.tfrecord")]
PARSE_FILES = [("image", "image.tfrecord"), ("imagenet", "imagenet.tfrecord")]
BATCH = 64
ITER_RECORDS = 2048  # tf_iter reads this many records per pass
EAGER_SINGLE_RECORDS = 256  # parse_single_example calls per pass


def image_spec(tf):
    return {
        "image": tf.io.FixedLenFeature([], tf.string),
        "label": tf.io.FixedLenFeature([], tf.int64),
        "box": tf.io.FixedLenFeature([4], tf.float32),
    }


def imagenet_spec(tf):
    spec = {}
    for k in ("image/encoded", "image/format", "image/filename", "image/colorspace", "image/class/synset",
              "image/class/text"):
        spec[k] = tf.io.FixedLenFeature([], tf.string, default_value="")
    for k in ("image/class/label", "image/height", "image/width", "image/channels"):
        spec[k] = tf.io.FixedLenFeature([], tf.int64, default_value=-1)
    for k in ("image/object/bbox/xmin", "image/object/bbox/ymin", "image/object/bbox/xmax",
              "image/object/bbox/ymax"):
        spec[k] = tf.io.VarLenFeature(tf.float32)
    spec["image/object/bbox/label"] = tf.io.VarLenFeature(tf.int64)
    return spec


def timed(fn, min_time):
    """Calls fn() (which returns the records it handled) until min_time has
    passed; returns (records per wall-clock second, records per CPU second of
    the whole process, TensorFlow's threads included)."""
    fn()  # warm-up: tracing, page cache
    n = 0
    start = time.perf_counter()
    cpu_start = time.process_time()
    while True:
        n += fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            cpu = time.process_time() - cpu_start
            return n / elapsed, (n / cpu if cpu > 0 else 0.0)


def read_cases(tf, path):
    def it():
        n = 0
        for _ in tf.data.TFRecordDataset(path).take(ITER_RECORDS):
            n += 1
        return n

    def batched():
        n = 0
        for b in tf.data.TFRecordDataset(path).batch(256):
            n += int(b.shape[0])
        return n

    @tf.function
    def reduce_all():
        return tf.data.TFRecordDataset(path).reduce(tf.constant(0, tf.int64), lambda acc, _: acc + 1)

    return {"tf_iter": it, "tf_batch256": batched, "tf_reduce": lambda: int(reduce_all())}


def parse_cases(tf, records, spec):
    serialized = tf.constant(records)
    n = len(records)
    batches = [tf.constant(records[i:i + BATCH]) for i in range(0, n - BATCH + 1, BATCH)]
    singles = [tf.constant(r) for r in records[:EAGER_SINGLE_RECORDS]]

    def eager_single():
        for r in singles:
            tf.io.parse_single_example(r, spec)
        return len(singles)

    def eager_batch():
        for b in batches:
            tf.io.parse_example(b, spec)
        return BATCH * len(batches)

    def count(acc, _):
        return acc + 1

    @tf.function
    def data_single():
        ds = tf.data.Dataset.from_tensor_slices(serialized).map(lambda r: tf.io.parse_single_example(r, spec))
        return ds.reduce(tf.constant(0, tf.int64), count)

    @tf.function
    def data_batch():
        ds = tf.data.Dataset.from_tensor_slices(serialized).batch(BATCH, drop_remainder=True)
        ds = ds.map(lambda b: tf.io.parse_example(b, spec))
        return ds.reduce(tf.constant(0, tf.int64), count) * BATCH

    return {
        "single/tf_eager": eager_single,
        "single/tf_data": lambda: int(data_single()),
        "batch64/tf_eager": eager_batch,
        "batch64/tf_data": lambda: int(data_batch()),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records-dir", required=True)
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--min-time", type=float, default=0.5)
    ap.add_argument("--json")
    args = ap.parse_args()

    out = {"results": [], "skipped": {}}
    try:
        import tensorflow as tf
    except ImportError as e:
        out["skipped"]["tensorflow"] = f"not importable ({e})"
        tf = None
    if tf is not None:
        out["context"] = {"tensorflow": tf.__version__, "inter_op": tf.config.threading.get_inter_op_parallelism_threads(),
                          "intra_op": tf.config.threading.get_intra_op_parallelism_threads()}
        cases = []  # (name, fn, payload bytes per record)
        for label, name in READ_FILES:
            path = os.path.join(args.records_dir, name)
            if not os.path.exists(path):
                out["skipped"][f"read/{label}"] = f"{path} missing (run records_benchmark --generate_only)"
                continue
            records = sum(1 for _ in tf.data.TFRecordDataset(path).take(4))
            first = next(iter(tf.data.TFRecordDataset(path)))
            per_record = len(first.numpy()) if records else 0
            for variant, fn in read_cases(tf, path).items():
                cases.append((f"read/{label}/{variant}", fn, per_record))
        for label, name in PARSE_FILES:
            path = os.path.join(args.records_dir, name)
            if not os.path.exists(path):
                out["skipped"][f"parse/{label}"] = f"{path} missing (run records_benchmark --generate_only)"
                continue
            records = [r.numpy() for r in tf.data.TFRecordDataset(path)]
            spec = image_spec(tf) if label == "image" else imagenet_spec(tf)
            per_record = statistics.mean(len(r) for r in records)
            for variant, fn in parse_cases(tf, records, spec).items():
                cases.append((f"parse/{label}/{variant}", fn, per_record))
        runs = {name: [] for name, _, _ in cases}
        cpu_runs = {name: [] for name, _, _ in cases}
        # Repetitions interleaved, so that a burst of load hits every case.
        for rep in range(args.repetitions):
            for name, fn, _ in cases:
                wall, cpu = timed(fn, args.min_time)
                runs[name].append(wall)
                cpu_runs[name].append(cpu)
                print(f"rep {rep} {name}: {wall:.0f} records/s, {cpu:.0f} per CPU second", file=sys.stderr)
        for name, _, per_record in cases:
            out["results"].append({"name": name, "runs": runs[name], "cpu_runs": cpu_runs[name],
                                   "bytes_runs": [r * per_record for r in runs[name]]})
    text = json.dumps(out, indent=1)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text)
    for r in out["results"]:
        print(f"{r['name']}: {statistics.median(r['runs']):.0f} records/s, "
              f"{statistics.median(r['bytes_runs']) / 1e9:.3f} GB/s")
    for k, v in out["skipped"].items():
        print(f"skipped {k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
