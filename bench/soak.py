"""Soak: the image pipeline for many minutes, RSS and throughput sampled every second.

Runs examples/image_pipeline.py's pipeline (TFRecord -> parse -> fused random
resized crop -> shuffle_batch_join, C++ threads) with no epoch limit for
--minutes, sampling each second the process's RSS, its thread and open-file
counts and the images delivered in that second. Writes the samples as CSV and
an SVG plot, and ends with the checks of a leak or a decay, as ratios of the
last minute to the first (after --warmup seconds):

    ratio soak rss last/first minute: <x>          (flat memory: ~1.0)
    ratio soak images/s last/first minute: <x>     (no decay: ~1.0)

    python bench/soak.py [--minutes 30] [--threads 2] [--out docs/perf/soak]
"""

import argparse
import collections
import csv
import os
import statistics
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import image_pipeline as pipeline  # noqa: E402 - the example's data and pipeline

from sluice import train  # noqa: E402


def _status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _open_files():
    return len(os.listdir("/proc/self/fd"))


def _svg(samples, path):
    """Two stacked polylines (RSS MiB, images/s) over time, as a small SVG."""
    width, height, pad = 800, 200, 40
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
             'font-size="11">' % (width, 2 * height + 20)]
    t_max = max(s["t"] for s in samples) or 1
    for row, (key, label) in enumerate([("rss_mib", "RSS (MiB)"), ("images_per_s", "images/s")]):
        top = row * (height + 20)
        values = [s[key] for s in samples]
        v_max = max(values) * 1.1 or 1
        points = " ".join("%.1f,%.1f" % (pad + (width - 2 * pad) * s["t"] / t_max,
                                         top + height - pad / 2 - (height - pad) * s[key] / v_max)
                          for s in samples)
        parts.append('<text x="%d" y="%d">%s (max %.0f) over %.0f min</text>' % (pad, top + 14, label, max(values),
                                                                               t_max / 60))
        parts.append('<polyline fill="none" stroke="%s" stroke-width="1" points="%s"/>'
                     % ("#1f77b4" if row == 0 else "#d62728", points))
        parts.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>'
                     % (pad, top + height - pad / 2, width - pad, top + height - pad / 2))
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--minutes", type=float, default=30)
    p.add_argument("--warmup", type=float, default=30, help="seconds left out of the first minute's figures")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--images", type=int, default=512)
    p.add_argument("--out", default=os.path.join(HERE, "..", "docs", "perf", "soak"))
    args = p.parse_args()
    pipe_args = argparse.Namespace(images=args.images, files=4, epochs=None, threads=args.threads, batch=32,
                                   size=224, width=500, height=375)

    samples = []
    with tempfile.TemporaryDirectory(prefix="sluice_soak_") as folder:
        files = pipeline.generate(folder, pipe_args)
        with train.Graph().as_default():
            batches = pipeline.build(files, pipe_args)
            coord = train.Coordinator()
            threads = train.start_queue_runners(coord=coord)
            delivered = [0]
            problems = collections.Counter()
            seen = collections.Counter()

            def consume():
                while not coord.should_stop():
                    batch = batches.dequeue(timeout=60)
                    pipeline.check(batch, pipe_args, seen, problems)
                    delivered[0] += pipe_args.batch

            consumer = threading.Thread(target=consume, daemon=True)
            start = time.monotonic()
            consumer.start()
            last = 0
            end = start + 60 * args.minutes
            while time.monotonic() < end and consumer.is_alive():
                time.sleep(1.0 - (time.monotonic() - start) % 1.0)
                now, count = time.monotonic() - start, delivered[0]
                samples.append({"t": round(now, 2), "rss_mib": _status("VmRSS") / 1024.0,
                                "threads": threading.active_count(), "os_threads": _status("Threads"),
                                "open_files": _open_files(), "images_per_s": count - last})
                last = count
            coord.request_stop()
            consumer.join(60)
            coord.join(threads, stop_grace_period_secs=30)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out + ".csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(samples[0]))
        writer.writeheader()
        writer.writerows(samples)
    _svg(samples, args.out + ".svg")

    first = [s for s in samples if args.warmup <= s["t"] < args.warmup + 60]
    last_minute = [s for s in samples if s["t"] >= samples[-1]["t"] - 60]
    rss = statistics.median(s["rss_mib"] for s in last_minute) / statistics.median(s["rss_mib"] for s in first)
    rate = (statistics.mean(s["images_per_s"] for s in last_minute)
            / statistics.mean(s["images_per_s"] for s in first))
    print("soak: %.1f min, %d images, %d samples; RSS %.1f -> %.1f MiB (max %.1f); OS threads %d -> %d; "
          "open files %d -> %d; checks: %s" % (
              samples[-1]["t"] / 60, delivered[0], len(samples), first[0]["rss_mib"], samples[-1]["rss_mib"],
              max(s["rss_mib"] for s in samples), first[0]["os_threads"], samples[-1]["os_threads"],
              first[0]["open_files"], samples[-1]["open_files"], dict(problems) or "OK"))
    print("wrote %s.csv and %s.svg" % (args.out, args.out))
    print("ratio soak rss last/first minute: %.3f" % rss)
    print("ratio soak images/s last/first minute: %.3f" % rate)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
