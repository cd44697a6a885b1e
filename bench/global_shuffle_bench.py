"""Global shuffle over record files vs a sequential read of the same files, records per second.

    .venv/bin/python bench/global_shuffle_bench.py [--small 200000] [--large 2000] [--files 8] [--reps 5]

Writes --files TFRecord files holding --small records of ~1 KiB and --large records of ~100 KiB,
mixed at random, into a temporary folder (so they sit in the page cache), then times whole
passes of sluice.data.TFRecordDataset(files) (sequential_read) and of
Dataset.from_record_files(files).shuffle_globally(seed) (global_shuffle, a new permutation each
pass), both batched by --batch in C++ so that Python's per-element cost does not hide the
readers'. Best of --reps passes each, taken in turn, after one warm-up pass each; ends with one
"ratio global_shuffle vs sequential_read: <x>" line.
"""

import argparse
import os
import random
import tempfile
import time


def write_files(folder, n_files, n_small, n_large):
    from sluice import io as sio
    rng = random.Random(0)
    sizes = [1024] * n_small + [100 * 1024] * n_large
    rng.shuffle(sizes)
    payload = os.urandom(100 * 1024 + 64)
    paths = [os.path.join(folder, "part-%02d.tfrecord" % i) for i in range(n_files)]
    writers = [sio.TFRecordWriter(p) for p in paths]
    for i, size in enumerate(sizes):
        start = i % 64
        writers[i % n_files].write(payload[start:start + size])
    for w in writers:
        w.close()
    return paths, sum(sizes)


def time_pass(ds):
    t0 = time.perf_counter()
    n = 0
    for batch in ds:
        n += len(batch)
    return n, time.perf_counter() - t0


def best_of(pipelines, reps):
    """{name: (records, best seconds)}, passes of the pipelines taken in turn so that a busy
    machine slows them alike."""
    for ds in pipelines.values():
        time_pass(ds)  # warm-up: page cache, mappings, allocator
    runs = {name: [] for name in pipelines}
    for _ in range(reps):
        for name, ds in pipelines.items():
            runs[name].append(time_pass(ds))
    return {name: (r[0][0], min(t for _, t in r)) for name, r in runs.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", type=int, default=200000)
    ap.add_argument("--large", type=int, default=2000)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    from sluice import data as sd
    with tempfile.TemporaryDirectory() as tmp:
        files, total_bytes = write_files(tmp, args.files, args.small, args.large)
        sequential = sd.TFRecordDataset(files).batch(args.batch)
        shuffled = sd.Dataset.from_record_files(files).shuffle_globally(seed=1).batch(args.batch)
        rates = {}
        for name, (n, t) in best_of({"sequential_read": sequential, "global_shuffle": shuffled}, args.reps).items():
            rates[name] = n / t
            print("%s: %d records in %.3f s: %.0f records/s, %.0f MB/s" % (name, n, t, n / t, total_bytes / t / 1e6))
        print("ratio global_shuffle vs sequential_read: %.2f" % (rates["global_shuffle"] / rates["sequential_read"]))


if __name__ == "__main__":
    main()
