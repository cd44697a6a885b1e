"""Table and ratio lines of bench/run.sh data (bench/data_suite.sh), after
py_data_bench.py's own line.

Inputs: bench/py_data_image_bench.py's JSON lines (several repetitions of
each peer; the table shows medians) and bench/data_benchmark.cc's Google
Benchmark JSON. Each line is "ratio <benchmark> vs <peer>: <x>" with x > 1
better; for times and memory the benchmark's name says "(time)" or "(rss)"
and x is the peer's (or the limit's) value over sluice's. Targets:
  data_image/sluice_data vs tf_data, vs torch_dataloader/best     >= 4
  data_image/sluice_data vs sluice_queue                          0.9 .. 1.1
  (data_image_per_cpu_s/...: the same per CPU-second; informative)
  data_first_batch(time) vs limit_50ms                            >= 1
  data_first_batch(time) vs tf_data                               >= 4
  data_peak(rss) vs tf_data, vs torch_dataloader/best             >= 3
  data_identity_map_stage(time) vs limit_100ns                    >= 1
  data_parallel_map/2t vs data_parallel_map/1t                    >= 1.9
  data_batch64_py/hold(time) vs data_batch_uint8_cxx/hold         >= 0.95
  (and /drop: both sides free each batch before the next is made)
  data_budget_accounting vs no_budget (bench/budget_bench.py, its
  own line, repeated at the end by data_suite.sh)                 >= 0.98
The checkpoint part (bench/py_checkpoint_bench.py) prints its own lines:
  checkpoint size image pipeline vs limit_1MB                     >= 1
  checkpoint size image pipeline vs tf.data (TF's bytes / sluice's), and
  checkpoint save/restore image pipeline(time) vs tf.data         informative
"""

import argparse
import collections
import json
import statistics
import sys


def load_rows(path):
    rows = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                rows[r["peer"]].append(r)
    return rows


def med(rows, peer, key):
    values = [r[key] for r in rows.get(peer, []) if r.get(key) is not None]
    return statistics.median(values) if values else None


def per_cpu_s(rows, peer):
    """Median images per CPU-second of the measured runs (None without run_cpu_s)."""
    values = [r["run_images"] / r["run_cpu_s"] for r in rows.get(peer, []) if r.get("run_cpu_s")]
    return statistics.median(values) if values else None


def cxx_times(path):
    """Benchmark name -> median time per iteration in seconds: real time for the benchmarks that ask for it
    (threads), else CPU time (one thread: what other tenants of the machine take does not count)."""
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    times = collections.defaultdict(list)
    with open(path) as f:
        for b in json.load(f)["benchmarks"]:
            if b.get("run_type", "iteration") == "iteration":
                key = "real_time" if b["run_name"].endswith("/real_time") else "cpu_time"
                times[b["run_name"]].append(b[key] * scale[b["time_unit"]])
    return {k: statistics.median(v) for k, v in times.items()}


def image_lines(rows):
    print("%-14s %10s %14s %13s %9s %12s  %s" % ("peer", "images/s", "first batch ms", "(its CPU ms)", "peak MB",
                                                  "images/cpu-s", "(images/s per repetition)"))
    for peer in sorted(rows):
        ips = med(rows, peer, "images_per_s")
        fb, fb_cpu = med(rows, peer, "first_batch_s"), med(rows, peer, "first_batch_cpu_s")
        per_cpu = per_cpu_s(rows, peer) or 0
        print("%-14s %10.1f %14s %13s %9.0f %12.1f  (%s)" % (
            peer, ips, "%.1f" % (fb * 1e3) if fb else "-", "%.1f" % (fb_cpu * 1e3) if fb_cpu else "-",
            med(rows, peer, "peak_rss_mb"), per_cpu, ", ".join("%.0f" % r["images_per_s"] for r in rows[peer])))
    print()
    out = []
    s = med(rows, "sluice_data", "images_per_s")
    torch = [(med(rows, p, "images_per_s"), p) for p in rows if p.startswith("torch/")]
    best_torch = max(torch) if torch else None
    if s and "tf_data" in rows:
        out.append(("data_image/sluice_data", "tf_data", s / med(rows, "tf_data", "images_per_s")))
    if s and best_torch:
        out.append(("data_image/sluice_data", "torch_dataloader/best(%s)" % best_torch[1], s / best_torch[0]))
    if s and "sluice_queue" in rows:
        out.append(("data_image/sluice_data", "sluice_queue", s / med(rows, "sluice_queue", "images_per_s")))
    # The same per CPU-second (informative): on a loaded machine a pipeline with more threads gets a larger
    # share of the cores, which moves the images/s ratios but not these.
    s_cpu = per_cpu_s(rows, "sluice_data")
    for peer in ["tf_data", "sluice_queue"] + ([best_torch[1]] if best_torch else []):
        if s_cpu and per_cpu_s(rows, peer):
            out.append(("data_image_per_cpu_s/sluice_data", peer, s_cpu / per_cpu_s(rows, peer)))
    fb = med(rows, "sluice_data", "first_batch_s")
    if fb:
        out.append(("data_first_batch(time)", "limit_50ms", 0.050 / fb))
        if med(rows, "tf_data", "first_batch_s"):
            out.append(("data_first_batch(time)", "tf_data", med(rows, "tf_data", "first_batch_s") / fb))
    rss = med(rows, "sluice_data", "peak_rss_mb")
    if rss and "tf_data" in rows:
        out.append(("data_peak(rss)", "tf_data", med(rows, "tf_data", "peak_rss_mb") / rss))
    if rss and best_torch:
        out.append(("data_peak(rss)", "torch_dataloader/best(%s)" % best_torch[1],
                    med(rows, best_torch[1], "peak_rss_mb") / rss))
        for _, peer in sorted(torch):  # informative: each DataLoader, the single-process one the leanest
            out.append(("data_peak(rss)", peer, med(rows, peer, "peak_rss_mb") / rss))
    return out


def cxx_lines(times, rows):
    out = []
    src, chain = times.get("data/source"), times.get("data/identity_maps/5")
    if src and chain:
        elements = 1 << 20  # bench/data_benchmark.cc's kElements
        per_stage_ns = (chain - src) / 5 / elements * 1e9
        print("identity map: %.1f ns per element per stage (source alone %.1f ns per element)" %
              (per_stage_ns, src / elements * 1e9))
        out.append(("data_identity_map_stage(time)", "limit_100ns", 100.0 / max(per_stage_ns, 1e-3)))
    p1, p2 = times.get("data/parallel_map/1/real_time"), times.get("data/parallel_map/2/real_time")
    if p1 and p2:
        out.append(("data_parallel_map/2t", "data_parallel_map/1t", p1 / p2))
    for mode in ("hold", "drop"):
        cxx_batch = times.get("data/batch_uint8/%s/64" % mode)
        py_batch = med(rows, "batch64", "batch_ms_" + mode)
        if cxx_batch and py_batch:
            cxx_ms = cxx_batch / 64 * 1e3  # bench/data_benchmark.cc's kBatches
            print("batch of 64x224x224x3 uint8 (%s): %.3f ms CPU in C++, %.3f ms from Python" % (mode, cxx_ms,
                                                                                              py_batch))
            out.append(("data_batch64_py/%s(time)" % mode, "data_batch_uint8_cxx/%s" % mode, cxx_ms / py_batch))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--image", help="bench/py_data_image_bench.py all --json")
    ap.add_argument("--cxx", help="bench/data_benchmark.cc --benchmark_out")
    args = ap.parse_args()
    rows = load_rows(args.image) if args.image else {}
    ratios = image_lines(rows) if rows else []
    if args.cxx:
        ratios += cxx_lines(cxx_times(args.cxx), rows)
    for bench, peer, x in ratios:
        print("ratio %s vs %s: %.2f" % (bench, peer, x))
    return 0


if __name__ == "__main__":
    sys.exit(main())
