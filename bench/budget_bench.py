"""The cost of the memory budget's accounting on the image pipeline:

    TFRecordDataset -> map(parse_example) -> map(random_resized_crop 224)
    -> shuffle(64) -> batch(64) -> prefetch(2)

    .venv/bin/python bench/budget_bench.py [--images 256] [--batches 24] [--reps 3] [--budget-mb 256]

The same pipeline with Options.ram_budget = --budget-mb and without a budget
(the account still counts, without a limit and without locks), in alternate
runs (best of --reps each; a load that changes over time hits both alike).
Parallelism is set by hand (the cores) so that AUTOTUNE's search does not
add noise. Prints both rates, the budgeted run's peak tracked bytes, and
"ratio data_budget_accounting vs no_budget: <x>" (images/s with the budget
over without; target >= 0.98).
"""

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from autotune_bench import write_images  # noqa: E402


def pipeline(path, budget_bytes, cores):
    from sluice import data as sd
    from sluice import io as sio
    features = {"image": sio.FixedLenFeature([], "string"), "label": sio.FixedLenFeature([], "int64")}
    ds = (sd.TFRecordDataset(path).repeat()
          .map(sd.ops.parse_example(features), num_parallel_calls=cores)
          .map(sd.ops.random_resized_crop(224, component="image", seed=1), num_parallel_calls=cores)
          .shuffle(64, seed=1).batch(64).prefetch(2))
    if budget_bytes:
        options = sd.Options()
        options.ram_budget = budget_bytes
        ds = ds.with_options(options)
    return ds


def run(ds, batches):
    """Images per second over `batches` batches after the first (warm-up), and the memory stats."""
    it = iter(ds)
    next(it)
    start = time.perf_counter()
    n = sum(len(next(it)["label"]) for _ in range(batches))
    rate = n / (time.perf_counter() - start)
    memory = it.memory_stats()
    it.close()
    return rate, memory


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=256)
    ap.add_argument("--batches", type=int, default=24)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--budget-mb", type=int, default=256)
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    budget = args.budget_mb << 20
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "images.tfrecord")
        write_images(path, args.images)
        best = {"budget": 0.0, "none": 0.0}
        peak = 0
        for _ in range(args.reps):
            for name in ("budget", "none"):
                rate, memory = run(pipeline(path, budget if name == "budget" else 0, cores), args.batches)
                best[name] = max(best[name], rate)
                if name == "budget":
                    peak = max(peak, memory["peak_bytes"])
        print("images: %d, cores: %d, %d batches of 64, best of %d" % (args.images, cores, args.batches, args.reps))
        print("ram_budget %d MB: %9.1f images/s (peak tracked %.1f MB)" % (args.budget_mb, best["budget"], peak / 2**20))
        print("no budget:        %9.1f images/s" % best["none"])
        print("ratio data_budget_accounting vs no_budget: %.3f" % (best["budget"] / best["none"]))


if __name__ == "__main__":
    main()
