"""Checkpoint size and save/restore time of the image pipeline, sluice vs tf.data.

    .venv/bin/python bench/py_checkpoint_bench.py --bin BUILD/bench/checkpoint_benchmark --data-dir DIR
        [--records 12000] [--files 8] [--buffer 10000] [--batch 64] [--steps 40] [--reps 3] [--skip-tf]

The pipeline: TFRecordDataset(files) -> shuffle(buffer) -> map(parse_example + decode + random
resized crop to 224x224) -> batch(batch), over --records Example records of JPEGs (500x375 q90,
about 100 KB each: ImageNet-like), written once by checkpoint_benchmark --generate into
--data-dir. After --steps batches (the shuffle buffer full) each side saves its iterator, restores
it into an iterator of a newly built pipeline and takes the next batch, which must equal the
uninterrupted run's. sluice: bench/checkpoint_benchmark.cc (C++; a buffered record is saved as
its file, record number and offset and re-read on restore). tf.data: tf.train.Checkpoint(
iterator=...) of TF's own iterator (it saves every buffered element). Medians of --reps.

Ends with "ratio checkpoint size image pipeline vs tf.data: <x>" (tf.data's bytes over sluice's),
"ratio checkpoint save image pipeline(time) vs tf.data: <x>", "ratio checkpoint restore image
pipeline(time) vs tf.data: <x>" (tf.data's seconds over sluice's) and "ratio checkpoint size
image pipeline vs limit_1MB: <x>" (1 MB over sluice's bytes; the issue asks for >= 1).
"""

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time


def generate(args):
    marker = os.path.join(args.data_dir, "ckpt-generated-%d-%d" % (args.records, args.files))
    if os.path.exists(marker):
        return
    subprocess.run([args.bin, "--generate", "--data-dir", args.data_dir, "--records", str(args.records),
                    "--files", str(args.files)], check=True)
    open(marker, "w").close()


def files_of(args):
    return [os.path.join(args.data_dir, "ckpt-%d.tfrecord" % i) for i in range(args.files)]


def sluice_run(args):
    out = subprocess.run([args.bin, "--data-dir", args.data_dir, "--files", str(args.files), "--buffer",
                          str(args.buffer), "--batch", str(args.batch), "--steps", str(args.steps), "--reps",
                          str(args.reps)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def tf_pipeline(tf, args):
    spec = {
        "image": tf.io.FixedLenFeature([], tf.string),
        "label": tf.io.FixedLenFeature([], tf.int64),
        "id": tf.io.FixedLenFeature([], tf.int64),
    }

    def parse(record):
        f = tf.io.parse_single_example(record, spec)
        shape = tf.io.extract_jpeg_shape(f["image"])
        begin, size, _ = tf.image.stateless_sample_distorted_bounding_box(
            shape, tf.zeros([1, 0, 4]), seed=tf.stack([f["id"], tf.constant(1, tf.int64)]),
            area_range=(0.08, 1.0), aspect_ratio_range=(3 / 4, 4 / 3), use_image_if_no_bounding_boxes=True)
        window = tf.stack([begin[0], begin[1], size[0], size[1]])
        image = tf.io.decode_and_crop_jpeg(f["image"], window, channels=3)
        image = tf.image.resize(image, [224, 224]) / 255.0
        return f["id"], image, f["label"]

    ds = tf.data.TFRecordDataset(files_of(args))
    ds = ds.shuffle(args.buffer, seed=87654321)
    return ds.map(parse).batch(args.batch)


def tf_run(args):
    import tensorflow as tf
    saves, restores, sizes = [], [], []
    for _ in range(args.reps):
        folder = tempfile.mkdtemp(prefix="tf-ckpt-")
        try:
            it = iter(tf_pipeline(tf, args))
            for _ in range(args.steps):
                next(it)
            t0 = time.perf_counter()
            path = tf.train.Checkpoint(iterator=it).write(os.path.join(folder, "ckpt"))
            saves.append(time.perf_counter() - t0)
            sizes.append(sum(os.path.getsize(p) for p in glob.glob(path + "*")))
            expected = next(it)[0].numpy().tolist()
            del it
            restored = iter(tf_pipeline(tf, args))
            t0 = time.perf_counter()
            tf.train.Checkpoint(iterator=restored).read(path).assert_consumed()
            got = next(restored)[0].numpy().tolist()
            restores.append(time.perf_counter() - t0)
            if got != expected:
                raise SystemExit("tf.data: the restored batch differs")
            del restored
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return {"peer": "tf_data", "bytes": statistics.median(sizes), "save_s": statistics.median(saves),
            "restore_s": statistics.median(restores)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--records", type=int, default=12000)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--buffer", type=int, default=10000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--skip-tf", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.data_dir, exist_ok=True)
    generate(args)
    s = sluice_run(args)
    batched = "" if s["batched"] else " (Batch not yet savable: batched by the loop)"
    print("checkpoint image pipeline, shuffle buffer %d, after %d batches of %d: sluice %d bytes, save %.4f s, "
          "restore + next batch %.3f s%s" % (args.buffer, args.steps, args.batch, s["bytes"], s["save_s"],
                                             s["restore_s"], batched))
    if not args.skip_tf:
        t = tf_run(args)
        print("checkpoint image pipeline: tf.data %d bytes, save %.3f s, restore + next batch %.3f s"
              % (t["bytes"], t["save_s"], t["restore_s"]))
        print("ratio checkpoint size image pipeline vs tf.data: %.1f" % (t["bytes"] / s["bytes"]))
        print("ratio checkpoint save image pipeline(time) vs tf.data: %.1f" % (t["save_s"] / s["save_s"]))
        print("ratio checkpoint restore image pipeline(time) vs tf.data: %.2f" % (t["restore_s"] / s["restore_s"]))
    print("ratio checkpoint size image pipeline vs limit_1MB: %.1f" % ((1 << 20) / s["bytes"]))


if __name__ == "__main__":
    main()
