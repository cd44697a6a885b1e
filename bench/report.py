#!/usr/bin/env python3
"""Turns the queue benchmarks' JSON into a table and one ratio line per target.

    python bench/report.py --cxx build-bench/bench-results/queue_benchmark.json \
        [--python build-bench/bench-results/py_queue_bench.json] [--markdown]

Every figure is the median items/s over the repetitions (min-max in brackets);
--cxx / --python may be given several times to pool the repetitions of
several runs.
The output ends with the ratio lines, one per target, in the form
    ratio <benchmark> vs <peer>: <x>
where x is sluice's throughput over the peer's (above 1: sluice is faster):
  - queue/<payload>/<mode>/<PxC>/FIFOQueue vs the best peer of that
    configuration in the same run (target: >= 1);
  - dequeue_many(64) against a single dequeue, per element (target: >= 10,
    i.e. under a tenth of the cost), read two ways:
    queue/<payload>/many64/<PxC>/FIFOQueue vs queue/<payload>/single/<PxC>/FIFOQueue
    (throughput under threads, enqueue_many + dequeue_many against enqueue +
    dequeue), and deqcost/<payload>/many64/prefill_single_unread/FIFOQueue vs
    deqcost/<payload>/single/prefill_single_unread/FIFOQueue (one thread,
    elements enqueued one by one, the call plus dropping its result: the
    dequeue's own cost; the table also shows the cost with the consumer
    reading a word of each row, which at 4 KiB is bounded by memory latency);
  - python/<op>/<threads>/sluice vs queue.Queue (target: >= 2) and vs tf.queue
    (target: >= 10).
Only the standard library is used.
"""

import argparse
import json
import statistics
import sys
from collections import defaultdict

PEERS = ["mutex_deque", "tbb_bounded", "moodycamel_bounded"]
SLUICE = ["FIFOQueue", "FIFOQueue_newtensor", "FIFOQueue_shared"]


def load_cxx(paths):
    """{key (first 5 name parts joined by '/') : [items_per_second, ...]}, ...
    over every repetition in every file."""
    runs = defaultdict(list)
    cpu = defaultdict(list)
    switches = defaultdict(list)
    errors = {}
    ctx = {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        ctx = data.get("context", {})
        _load_cxx_benchmarks(data, runs, cpu, switches, errors)
    return runs, cpu, switches, errors, ctx


def _load_cxx_benchmarks(data, runs, cpu, switches, errors):
    for b in data.get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration":
            continue
        key = "/".join(b["run_name"].split("/")[:5]) if "run_name" in b else "/".join(b["name"].split("/")[:5])
        if b.get("error_occurred"):
            errors[key] = b.get("error_message", "error")
            continue
        if "items_per_second" in b:
            runs[key].append(float(b["items_per_second"]))
        if "cpu_ns_per_item" in b:
            cpu[key].append(float(b["cpu_ns_per_item"]))
        if "switches_per_item" in b:
            switches[key].append(float(b["switches_per_item"]))


def load_python(paths):
    runs = defaultdict(list)
    skipped = {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        for r in data.get("results", []):
            runs[r["name"]].extend(r["runs"])
        skipped.update(data.get("skipped", {}))
    return runs, skipped


def med(xs):
    return statistics.median(xs) if xs else None


def fmt_rate(xs, markdown=False):
    if not xs:
        return "-"
    m = med(xs)
    if len(xs) == 1:
        return f"{m / 1e6:.3f}"
    return f"{m / 1e6:.3f} [{min(xs) / 1e6:.2f}-{max(xs) / 1e6:.2f}]"


def table(header, rows, markdown):
    out = []
    if markdown:
        out.append("| " + " | ".join(header) + " |")
        out.append("|" + "|".join("---" for _ in header) + "|")
        for r in rows:
            out.append("| " + " | ".join(r) + " |")
    else:
        widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
        line = lambda r: "  ".join(str(x).ljust(w) for x, w in zip(r, widths))  # noqa: E731
        out.append(line(header))
        out.append("  ".join("-" * w for w in widths))
        out.extend(line(r) for r in rows)
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cxx", required=True, action="append", help="may be repeated: repetitions are pooled")
    ap.add_argument("--python", action="append", help="may be repeated: repetitions are pooled")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    md = args.markdown

    runs, cpu, switches, errors, ctx = load_cxx(args.cxx)
    ratios = []  # (benchmark, peer, x or None, target, why)

    # --- C++ throughput: one row per configuration ---
    configs = []
    for key in runs.keys() | errors.keys():
        parts = key.split("/")
        if parts[0] == "queue":
            cfg = tuple(parts[1:4])
            if cfg not in configs:
                configs.append(cfg)
    order_payload = {"64B": 0, "4KiB": 1}
    order_mode = {"single": 0, "many64": 1}
    configs.sort(key=lambda c: (order_payload.get(c[0], 9), order_mode.get(c[1], 9), c[2]))
    header = ["payload", "mode", "PxC"] + SLUICE + PEERS + ["best peer", "FIFOQueue / best"]
    rows = []
    for payload, mode, threads in configs:
        base = f"queue/{payload}/{mode}/{threads}"
        row = [payload, mode, threads]
        for impl in SLUICE + PEERS:
            k = f"{base}/{impl}"
            row.append(f"ERROR: {errors[k]}" if k in errors else fmt_rate(runs.get(k), md))
        peer_meds = {p: med(runs.get(f"{base}/{p}")) for p in PEERS if runs.get(f"{base}/{p}")}
        ours = med(runs.get(f"{base}/FIFOQueue"))
        if peer_meds:
            best = max(peer_meds, key=peer_meds.get)
            row.append(best)
            x = ours / peer_meds[best] if ours else None
            row.append(f"{x:.2f}" if x else "-")
            ratios.append((f"{base}/FIFOQueue", f"{base}/{best}", x, 1.0, None if ours else "no FIFOQueue figure"))
        else:
            row += ["-", "-"]
        rows.append(row)
    print("C++ throughput, million elements/s (median [min-max] of the repetitions), capacity 1024"
          + (f"; malloc: {ctx['malloc']}" if ctx.get("malloc") else "") + ":")
    print(table(header, rows, md))
    print()

    crows = []
    for payload, mode, threads in configs:
        base = f"queue/{payload}/{mode}/{threads}"
        row = [payload, mode, threads]
        for impl in SLUICE + PEERS:
            xs = cpu.get(f"{base}/{impl}")
            sw = switches.get(f"{base}/{impl}")
            row.append((f"{med(xs):.0f}" if xs else "-") + (f" / {med(sw):.3f}" if sw else ""))
        crows.append(row)
    if any(any(c != "-" for c in r[3:]) for r in crows):
        print("C++ CPU time per element in ns / context switches per element (all threads; median; "
              "spinning counts as CPU):")
        print(table(["payload", "mode", "PxC"] + SLUICE + PEERS, crows, md))
        print()

    # --- dequeue_many(64) against single dequeue, under threads ---
    mrows = []
    for payload in ("64B", "4KiB"):
        for threads in ("1x1", "2x2", "4x4"):
            single = runs.get(f"queue/{payload}/single/{threads}/FIFOQueue")
            many = runs.get(f"queue/{payload}/many64/{threads}/FIFOQueue")
            if not single and not many:
                continue
            x = med(many) / med(single) if single and many else None
            ns = lambda xs: f"{1e9 / med(xs):.1f}" if xs else "-"  # noqa: E731
            mrows.append([payload, threads, ns(single), ns(many), f"{x:.2f}" if x else "-"])
            ratios.append((f"queue/{payload}/many64/{threads}/FIFOQueue", f"queue/{payload}/single/{threads}/FIFOQueue",
                           x, 10.0, None if x else "missing figure"))
    if mrows:
        print("FIFOQueue under threads: wall ns per element (1 / throughput), single vs many64 "
              "(enqueue_many + dequeue_many of 64):")
        print(table(["payload", "PxC", "single ns/elem", "many64 ns/elem", "single / many64 cost"], mrows, md))
        print()

    # --- C++ dequeue cost, one thread ---
    drows = []
    for payload in ("64B", "4KiB"):
        for prefill in ("prefill_single_unread", "prefill_single", "prefill_single_kept",
                        "prefill_many_unread", "prefill_many", "prefill_many_kept"):
            for impl in ("FIFOQueue", "mutex_deque"):
                single = runs.get(f"deqcost/{payload}/single/{prefill}/{impl}")
                many = runs.get(f"deqcost/{payload}/many64/{prefill}/{impl}")
                if not single and not many:
                    continue
                ns = lambda xs: f"{1e9 / med(xs):.1f}" if xs else "-"  # noqa: E731
                x = med(many) / med(single) if single and many else None
                drows.append([payload, prefill, impl, ns(single), ns(many), f"{x:.2f}" if x else "-"])
                if impl == "FIFOQueue" and prefill == "prefill_single_unread":
                    ratios.append((f"deqcost/{payload}/many64/{prefill}/FIFOQueue",
                                   f"deqcost/{payload}/single/{prefill}/FIFOQueue", x, 10.0,
                                   None if x else "missing figure"))
    if drows:
        print("Dequeue cost, one thread, queue prefilled with 1024 elements; ns per element (median); "
              "_unread: the call plus dropping what it returned; no suffix: also reading a word of each row; "
              "_kept: the call and the read, dropped after the timed region:")
        print(table(["payload", "prefill", "impl", "Dequeue ns/elem", "DequeueMany(64) ns/elem",
                     "single / many cost"], drows, md))
        print()

    # --- Python ---
    if args.python:
        try:
            pruns, skipped = load_python(args.python)
        except (OSError, ValueError) as e:
            pruns, skipped = {}, {"all": f"no results ({e})"}
        prows = []
        for threads in ("1x1", "serial"):
            for op in ("single", "many64"):
                base = f"python/{op}/{threads}"
                s = pruns.get(f"{base}/sluice")
                row = [op, threads]
                for impl in ("sluice", "queue.Queue", "tf.queue"):
                    row.append(fmt_rate(pruns.get(f"{base}/{impl}"), md) if pruns.get(f"{base}/{impl}")
                               else "skipped")
                for peer, target in (("queue.Queue", 2.0), ("tf.queue", 10.0)):
                    p = pruns.get(f"{base}/{peer}")
                    x = med(s) / med(p) if s and p else None
                    row.append(f"{x:.2f}" if x else "-")
                    why = None
                    if not s:
                        why = "skipped (sluice " + skipped.get("sluice", "not measured") + ")"
                    elif not p:
                        why = f"skipped ({peer} " + skipped.get(peer, "not measured") + ")"
                    ratios.append((f"{base}/sluice", peer, x, target, why))
                prows.append(row)
        print("Python, million elements/s (median [min-max]), capacity 1024, 64-byte uint8 element:")
        print(table(["op", "threads", "sluice", "queue.Queue", "tf.queue", "sluice / queue.Queue",
                     "sluice / tf.queue"], prows, md))
        for name, why in skipped.items():
            print(f"skipped {name}: {why}")
        print()
    else:
        print("Python: skipped")
        print()

    # --- targets, then the ratio lines (last) ---
    met = sum(1 for _, _, x, t, _ in ratios if x is not None and x >= t)
    print(f"targets: {met} of {len(ratios)} met (queue vs best peer: x >= 1; many64 vs single: x >= 10; "
          f"python vs queue.Queue: x >= 2; python vs tf.queue: x >= 10)")
    for bench, peer, x, target, why in ratios:
        if x is None:
            print(f"ratio {bench} vs {peer}: {why or 'n/a'}")
        else:
            print(f"ratio {bench} vs {peer}: {x:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
