"""Save and restore time of an iterator checkpoint of the image pipeline,
sluice.data against tf.data (bench/run.sh data, part 6).

The pipeline, in both: TFRecordDataset(files).repeat() -> shuffle(S, seed)
-> map(parse + random resized crop, AUTOTUNE) -> batch(64) ->
prefetch(AUTOTUNE), over bench/train_suite.sh's generated files. Each peer
runs in a process of its own: it takes --warm batches (the shuffle buffer is
full by then, the parallel stages busy), then times

  save_s       tf.train.Checkpoint(iterator=it).write(path) (sluice:
               sluice.train.Checkpoint), the file written and closed
  restore_s    a new iterator of a new pipeline, Checkpoint.read(path) and
               its first batch (TF may defer work to the first batch)

and reports the checkpoint's size on disk (bytes). --source memory reads
every record first and starts from from_tensor_slices instead (in both).
TF saves this pipeline only with external_state_policy IGNORE (its crop is
stateful). Printed (and appended to --json): one JSON line per peer and
repetition; a peer that cannot save the pipeline prints its error and no
row. bench/report_data.py --checkpoint turns the rows into the lines
"ratio checkpoint save|restore time image pipeline vs tf.data: <x>".

    python bench/checkpoint_bench.py --data-dir D [--shuffle 10000] [--reps 3] [--json out.jsonl]
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

BATCH = 64
SIZE = 224


def _records(files):
    """Every record of `files`, in order (--source memory)."""
    from sluice import io as sio  # noqa: PLC0415
    return [r for f in files for r in sio.tf_record_iterator(f)]


def sluice_pipeline(files, shuffle, source):
    import numpy as np  # noqa: PLC0415
    from sluice import data as sd  # noqa: PLC0415
    from sluice import io as sio  # noqa: PLC0415
    features = {"image": sio.FixedLenFeature([], np.bytes_), "label": sio.FixedLenFeature([], np.int64),
                "id": sio.FixedLenFeature([], np.int64)}
    records = sd.TFRecordDataset(files) if source == "files" else sd.Dataset.from_tensor_slices(_records(files))
    return (records.repeat().shuffle(shuffle, seed=1)
            .map(sd.ops.parse_example(features), num_parallel_calls=sd.AUTOTUNE)
            .map(sd.ops.random_resized_crop(SIZE, component="image", seed=1), num_parallel_calls=sd.AUTOTUNE)
            .batch(BATCH).prefetch(sd.AUTOTUNE))


def tf_pipeline(files, shuffle, source):
    import tensorflow as tf  # noqa: PLC0415
    from train_bench import tf_random_resized_crop  # noqa: PLC0415
    features = {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64),
                "id": tf.io.FixedLenFeature([], tf.int64)}

    def element(record):
        ex = tf.io.parse_single_example(record, features)
        return {"image": tf_random_resized_crop(tf, ex["image"], SIZE), "label": ex["label"], "id": ex["id"]}
    records = tf.data.TFRecordDataset(files) if source == "files" else tf.data.Dataset.from_tensor_slices(
        _records(files))
    ds = (records.repeat().shuffle(shuffle, seed=1)
          .map(element, num_parallel_calls=tf.data.AUTOTUNE)
          .batch(BATCH).prefetch(tf.data.AUTOTUNE))
    # The crop's sample_distorted_bounding_box is stateful: TF refuses to save
    # the iterator unless told to leave that state out (a restored run then
    # crops differently from an uninterrupted one; sluice's crop is exact).
    options = tf.data.Options()
    options.experimental_external_state_policy = tf.data.experimental.ExternalStatePolicy.IGNORE
    return ds.with_options(options)


def run_peer(args):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # train_bench
    files = sorted(glob.glob(os.path.join(args.data_dir, "*.tfrecord")))
    if args.peer == "tf_data":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf  # noqa: PLC0415
        make, checkpoint = (lambda: tf_pipeline(files, args.shuffle, args.source)), tf.train.Checkpoint
    else:
        from sluice import train  # noqa: PLC0415
        make, checkpoint = (lambda: sluice_pipeline(files, args.shuffle, args.source)), train.Checkpoint
    directory = tempfile.mkdtemp(prefix="ckpt_bench_")
    try:
        it = iter(make())
        for _ in range(args.warm):
            next(it)
        t0 = time.perf_counter()
        path = checkpoint(iterator=it).write(os.path.join(directory, "it"))
        save_s = time.perf_counter() - t0
        size = sum(os.path.getsize(p) for p in glob.glob(os.path.join(directory, "*")) if os.path.isfile(p))
        del it
        t0 = time.perf_counter()
        it2 = iter(make())
        checkpoint(iterator=it2).read(path)
        next(it2)
        restore_s = time.perf_counter() - t0
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    print(json.dumps({"peer": args.peer, "source": args.source, "shuffle": args.shuffle, "save_s": save_s, "restore_s": restore_s,
                      "bytes": size}), flush=True)


def run_all(args):
    for rep in range(args.reps):
        for peer in ("sluice_data", "tf_data"):
            r = subprocess.run([sys.executable, os.path.abspath(__file__), "--peer", peer, "--data-dir", args.data_dir,
                                "--shuffle", str(args.shuffle), "--warm", str(args.warm), "--source", args.source], stdout=subprocess.PIPE,
                               text=True)
            if r.returncode != 0:
                print("== checkpoint_bench %s failed (exit %d)" % (peer, r.returncode), file=sys.stderr)
                continue
            row = json.loads(r.stdout.strip().splitlines()[-1])
            row["rep"] = rep
            print(json.dumps(row), flush=True)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(row) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--shuffle", type=int, default=10000, help="shuffle buffer (records)")
    ap.add_argument("--warm", type=int, default=3, help="batches taken before the save")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--source", choices=["files", "memory"], default="files",
                    help="records from TFRecordDataset, or all read first into from_tensor_slices")
    ap.add_argument("--json", help="append the rows to this file")
    ap.add_argument("--peer", choices=["sluice_data", "tf_data"], help="one peer, in this process")
    args = ap.parse_args()
    if args.peer:
        run_peer(args)
    else:
        run_all(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
