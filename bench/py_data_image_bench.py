"""The image pipeline through sluice.data against its peers (bench/run.sh data).

Over bench/train_suite.sh's generated files (image_pipeline --write-jpegs:
TFRecords of 500x375 JPEGs and the same JPEGs as an ImageFolder tree), each
peer in a process of its own, so that the peak RSS of one framework does not
add to another's:

  sluice_data   TFRecordDataset(files).repeat(E) -> map(parse_example) ->
                map(random_resized_crop: the fused decode + crop + resize +
                flip + normalise, float32 CHW) -> batch(64) -> prefetch, every
                num_parallel_calls and buffer AUTOTUNE
  tf_data       the same in tf.data (TensorFlow 2.21, AUTOTUNE), the element
                work being bench/train_bench.py's tf_random_resized_crop
                (decode_and_crop_jpeg + resize + flip + normalise + CHW)
  torch/<w>     bench/train_bench.py's ImageFolder DataLoader, batch 64,
                num_workers w (0, 1, 2)
  sluice_queue  bench/train_bench.py's sluice_py (the queue pipeline of
                examples/image_pipeline.py), 2 threads, batch 64
  batch64       sluice.data's from_tensors(uint8 [224, 224, 3]) -> repeat ->
                batch(64), iterated from Python: CPU time per batch, against
                bench/data_benchmark.cc's data/batch_uint8/{hold,drop}/64 (the
                same in C++, each batch kept until the next or dropped first)

Each peer prints one JSON line {"peer", "images", "seconds", "images_per_s",
"first_batch_s", "first_batch_cpu_s", "peak_rss_mb", "cpu_s", "run_images",
"run_cpu_s"}. images/s counts from before the pipeline is
built to its last batch (sluice_queue: from the start of its runners, as
bench/train_suite.sh; torch: after one warm-up epoch that starts the
workers, as there); first_batch_s from before the build to the first batch
(sluice_data and tf_data), and the CPU time the process spent in that
interval (first_batch_cpu_s: on 2 idle cores the first batch takes at least
half of it). peak_rss_mb is the largest resident set of the
peer's process and its children together, sampled by the parent every few
milliseconds, and at least the peer's own VmHWM. cpu_s is the user + system
time of the process and its reaped children (imports included): on a loaded
machine, images per CPU-second say more than images/s, and run_cpu_s is
the CPU time of the measured run alone (imports excluded; torch: with its
workers and its warm-up epoch, run_images counting that epoch too).

    python bench/py_data_image_bench.py all --data-dir D [--epochs 4] [--reps 3] --json out.jsonl
    python bench/py_data_image_bench.py sluice_data --data-dir D
"""

import argparse
import glob
import json
import os
import resource
import subprocess
import sys
import time

BATCH = 64
SIZE = 224
FEATURE_KEYS = ("image", "label", "id")


def _vm_hwm_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def sluice_data(files, epochs):
    import numpy as np  # noqa: PLC0415
    from sluice import data as sd  # noqa: PLC0415
    from sluice import io as sio  # noqa: PLC0415
    features = {"image": sio.FixedLenFeature([], np.bytes_), "label": sio.FixedLenFeature([], np.int64),
                "id": sio.FixedLenFeature([], np.int64)}
    t0, cpu0 = time.perf_counter(), _cpu_s()
    ds = (sd.TFRecordDataset(files).repeat(epochs)
          .map(sd.ops.parse_example(features), num_parallel_calls=sd.AUTOTUNE)
          .map(sd.ops.random_resized_crop(SIZE, component="image", seed=1), num_parallel_calls=sd.AUTOTUNE)
          .batch(BATCH).prefetch(sd.AUTOTUNE))
    if os.environ.get("SLUICE_MAP_AND_BATCH_FUSION") == "0":  # the map and batch as two stages (A/B runs)
        options = sd.Options()
        options.experimental_optimization.map_and_batch_fusion = False
        ds = ds.with_options(options)
    return _drain(ds, t0, cpu0)


def tf_data(files, epochs):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf  # noqa: PLC0415
    from train_bench import tf_random_resized_crop  # noqa: PLC0415
    features = {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64),
                "id": tf.io.FixedLenFeature([], tf.int64)}

    def element(record):
        ex = tf.io.parse_single_example(record, features)
        return {"image": tf_random_resized_crop(tf, ex["image"], SIZE), "label": ex["label"], "id": ex["id"]}
    t0, cpu0 = time.perf_counter(), _cpu_s()
    ds = (tf.data.TFRecordDataset(files).repeat(epochs)
          .map(element, num_parallel_calls=tf.data.AUTOTUNE)
          .batch(BATCH).prefetch(tf.data.AUTOTUNE))
    return _drain(ds.as_numpy_iterator(), t0, cpu0)


def _cpu_s():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def _drain(iterable, t0, cpu0):
    it = iter(iterable)
    first = next(it)
    first_batch_s = time.perf_counter() - t0
    first_batch_cpu_s = _cpu_s() - cpu0
    n = len(first["image"])
    del first  # a training loop would not keep its first batch (38.5 MB) to the end
    for batch in it:
        n += len(batch["image"])
    return {"images": n, "seconds": time.perf_counter() - t0, "first_batch_s": first_batch_s,
            "first_batch_cpu_s": first_batch_cpu_s, "run_images": n, "run_cpu_s": _cpu_s() - cpu0}


def _tree_cpu_s():
    return sum(u.ru_utime + u.ru_stime for u in map(resource.getrusage, (resource.RUSAGE_SELF,
                                                                      resource.RUSAGE_CHILDREN)))


def torch_loader(data_dir, workers, epochs):
    import gc  # noqa: PLC0415

    import torch  # noqa: F401, PLC0415 (imported before the CPU clock starts)
    import train_bench  # noqa: PLC0415
    cpu0 = _tree_cpu_s()
    n, seconds = train_bench.torch_dataloader(os.path.join(data_dir, "jpeg"), workers, epochs, BATCH, SIZE)
    gc.collect()  # the loader is gone: its workers have exited and been reaped, their CPU time counted
    # The CPU time covers the warm-up epoch too (as many images as each timed one).
    return {"images": n, "seconds": seconds, "run_images": n + n // epochs, "run_cpu_s": _tree_cpu_s() - cpu0}


def sluice_queue(files, epochs):
    import train_bench  # noqa: PLC0415
    from sluice import train  # noqa: F401, PLC0415
    cpu0 = _cpu_s()
    n, seconds = train_bench.sluice_py(files, 2, epochs, BATCH, SIZE)
    return {"images": n, "seconds": seconds, "run_images": n, "run_cpu_s": _cpu_s() - cpu0}


def batch64(batches):
    """CPU time per batch (median of 9 passes; one thread), for `for b in ds` (each batch held until the
    next is made) and for a loop that drops each batch before asking for the next."""
    import numpy as np  # noqa: PLC0415
    from sluice import data as sd  # noqa: PLC0415
    ds = sd.Dataset.from_tensors(np.full((SIZE, SIZE, 3), 7, np.uint8)).repeat(BATCH * batches).batch(BATCH)

    def hold():
        n = 0
        for b in ds:
            n += 1
        assert n == batches and b.shape == (BATCH, SIZE, SIZE, 3), (n, b.shape)

    def drop():
        it, n = iter(ds), 0
        while True:
            try:
                next(it)  # the batch is dropped at once
            except StopIteration:
                break
            n += 1
        assert n == batches, n
    passes = 9
    row = {"images": 2 * passes * BATCH * batches, "batches": batches}
    seconds = 0.0
    for name, loop in (("hold", hold), ("drop", drop)):
        times = []
        for _ in range(passes):
            t0, c0 = time.perf_counter(), time.process_time()
            loop()
            times.append(time.process_time() - c0)
            seconds += time.perf_counter() - t0
        row["batch_ms_" + name] = sorted(times)[passes // 2] / batches * 1e3
    row["seconds"] = seconds
    return row


def run_peer(args):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # train_bench
    files = sorted(glob.glob(os.path.join(args.data_dir or "", "*.tfrecord")))
    if args.peer == "sluice_data":
        row = sluice_data(files, args.epochs)
    elif args.peer == "tf_data":
        row = tf_data(files, args.epochs)
    elif args.peer == "torch":
        row = torch_loader(args.data_dir, args.workers, args.epochs)
    elif args.peer == "sluice_queue":
        row = sluice_queue(files, args.epochs)
    else:
        row = batch64(args.batches)
    row["peer"] = args.peer if args.peer != "torch" else "torch/%d" % args.workers
    row["images_per_s"] = row["images"] / row["seconds"]
    row["peak_rss_mb"] = _vm_hwm_mb()
    usage = [resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    row["cpu_s"] = sum(u.ru_utime + u.ru_stime for u in usage)
    print(json.dumps(row), flush=True)


def _tree_rss_mb(pid):
    """The resident set of pid and all its descendants (MB)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open("/proc/%d/statm" % p) as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            for task in os.listdir("/proc/%d/task" % p):
                with open("/proc/%d/task/%s/children" % (p, task)) as f:
                    todo.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            pass
    return total / 2**20


def measure(argv):
    """Runs one peer in a child process; its JSON row with the sampled peak RSS of its process tree."""
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__)] + argv, stdout=subprocess.PIPE,
                            text=True)
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, _tree_rss_mb(proc.pid))
        time.sleep(0.005)
    out = proc.stdout.read()
    if proc.returncode != 0:
        print("== %s failed (exit %d)" % (" ".join(argv), proc.returncode), file=sys.stderr)
        return None
    row = json.loads(out.strip().splitlines()[-1])
    row["peak_rss_mb"] = max(peak, row["peak_rss_mb"])
    return row


def run_all(args):
    common = ["--data-dir", args.data_dir, "--epochs", str(args.epochs)]
    peers = [["sluice_data"], ["tf_data"], ["sluice_queue"], ["batch64", "--batches", str(args.batches)]]
    peers += [["torch", "--workers", str(w)] for w in args.torch_workers]
    for rep in range(args.reps):
        for p in peers:
            row = measure(p + common)
            if row is None:
                continue
            row["rep"] = rep
            print(json.dumps(row), flush=True)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(row) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("peer", choices=["all", "sluice_data", "tf_data", "torch", "sluice_queue", "batch64"])
    ap.add_argument("--data-dir")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--workers", type=int, default=0, help="torch: DataLoader num_workers")
    ap.add_argument("--torch-workers", type=int, nargs="*", default=[0, 1, 2], help="all: the DataLoaders to run")
    ap.add_argument("--batches", type=int, default=256, help="batch64: batches per pass")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", help="all: append the rows to this file")
    args = ap.parse_args()
    if args.peer == "all":
        run_all(args)
    else:
        run_peer(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
