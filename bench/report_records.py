#!/usr/bin/env python3
"""Turns the records benchmarks' JSON into a table and one ratio line per target.

    python bench/report_records.py --cxx build-bench/bench-results/records_benchmark.json \
        [--python build-bench/bench-results/py_records_bench.json] [--markdown]

Every figure is the median over the repetitions (min-max in brackets);
--cxx / --python may be given several times to pool several runs. The output
ends with the ratio lines, in the form
    ratio <benchmark> vs <peer>: <x>
where x is sluice's throughput (records/s; the files and records are the
same on both sides) over the peer's, above 1: sluice is faster. Targets
(the issue's):
  - read/100KiB/sluice vs read/100KiB/plain_fread: >= 0.7
  - read/1KiB/sluice vs read/1KiB/plain_fread: >= 0.9
  - read/<size>/sluice vs read/<size>/memcpy: the bandwidth limit, no target
  - read/<size>/sluice vs TensorFlow's fastest TFRecordDataset variant: >= 3
  - parse/<kind>/<single|batch64>/sluice_views vs .../protobuf: >= 3
  - parse/<kind>/<single|batch64>/sluice_views vs TensorFlow's fastest
    variant for that mode (eager or tf.data): >= 2
Only the standard library is used.
"""

import argparse
import json
import statistics
import sys
from collections import defaultdict

SIZES = ["100KiB", "1KiB"]
READ_IMPLS = ["sluice", "plain_fread", "plain_pread", "memcpy"]
TF_READ = ["tf_iter", "tf_batch256", "tf_reduce"]
KINDS = ["image", "imagenet"]
MODES = ["single", "batch64"]
PARSE_IMPLS = ["sluice_views", "sluice_copy", "protobuf"]
TF_PARSE = ["tf_eager", "tf_data"]


def load_cxx(paths):
    items, nbytes, errors, ctx = defaultdict(list), defaultdict(list), {}, {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        ctx = data.get("context", ctx)
        for b in data.get("benchmarks", []):
            if b.get("run_type", "iteration") != "iteration":
                continue
            name = b.get("run_name", b["name"]).removesuffix("/real_time")
            if b.get("error_occurred"):
                errors[name] = b.get("error_message", "error")
                continue
            if "items_per_second" in b:
                items[name].append(float(b["items_per_second"]))
            if "bytes_per_second" in b:
                nbytes[name].append(float(b["bytes_per_second"]))
    return items, nbytes, errors, ctx


def load_python(paths):
    items, nbytes, skipped, ctx = defaultdict(list), defaultdict(list), {}, {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        ctx = data.get("context", ctx)
        for r in data.get("results", []):
            items[r["name"]].extend(r["runs"])
            nbytes[r["name"]].extend(r.get("bytes_runs", []))
        skipped.update(data.get("skipped", {}))
    return items, nbytes, skipped, ctx


def med(xs):
    return statistics.median(xs) if xs else None


def fmt(xs, scale, digits=2):
    if not xs:
        return "-"
    m = med(xs) / scale
    if len(xs) == 1:
        return f"{m:.{digits}f}"
    return f"{m:.{digits}f} [{min(xs) / scale:.{digits}f}-{max(xs) / scale:.{digits}f}]"


def table(header, rows, markdown):
    if markdown:
        out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(out)
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    line = lambda r: "  ".join(str(x).ljust(w) for x, w in zip(r, widths))  # noqa: E731
    return "\n".join([line(header), "  ".join("-" * w for w in widths)] + [line(r) for r in rows])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cxx", required=True, action="append")
    ap.add_argument("--python", action="append")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    md = args.markdown

    items, nbytes, errors, _ = load_cxx(args.cxx)
    pitems, pbytes, skipped, pctx = {}, {}, {}, {}
    if args.python:
        try:
            pitems, pbytes, skipped, pctx = load_python(args.python)
        except (OSError, ValueError) as e:
            skipped = {"all": f"no results ({e})"}
    ratios = []  # (benchmark, peer, x or None, target or None, why)

    def ratio(bench, peer_name, ours, theirs, target):
        x = med(ours) / med(theirs) if ours and theirs else None
        why = None if x else ("no " + (bench if not ours else peer_name) + " figure")
        ratios.append((bench, peer_name, x, target, why))

    # --- reading ---
    rows = []
    for size in SIZES:
        row = [size]
        for impl in READ_IMPLS:
            k = f"read/{size}/{impl}"
            row.append(f"ERROR: {errors[k]}" if k in errors else fmt(nbytes.get(k), 1e9))
        for impl in TF_READ:
            row.append(fmt(pbytes.get(f"read/{size}/{impl}"), 1e9, 3))
        rows.append(row)
    print("TFRecord read, GB/s of payload (median [min-max]), file in the page cache, 64 MiB:")
    print(table(["records"] + READ_IMPLS + TF_READ, rows, md))
    print()
    for size in SIZES:
        ours = items.get(f"read/{size}/sluice")
        ratio(f"read/{size}/sluice", f"read/{size}/plain_fread", ours, items.get(f"read/{size}/plain_fread"),
              0.7 if size == "100KiB" else 0.9)
    for size in SIZES:
        ratio(f"read/{size}/sluice", f"read/{size}/memcpy", items.get(f"read/{size}/sluice"),
              items.get(f"read/{size}/memcpy"), None)
    for size in SIZES:
        tf = {impl: pitems[f"read/{size}/{impl}"] for impl in TF_READ if pitems.get(f"read/{size}/{impl}")}
        best = max(tf, key=lambda i: med(tf[i])) if tf else "tf"
        ratio(f"read/{size}/sluice", f"read/{size}/{best}", items.get(f"read/{size}/sluice"), tf.get(best), 3.0)

    # --- parsing ---
    rows = []
    for kind in KINDS:
        for mode in MODES:
            row = [kind, mode]
            for impl in PARSE_IMPLS:
                k = f"parse/{kind}/{mode}/{impl}"
                row.append(f"ERROR: {errors[k]}" if k in errors else fmt(items.get(k), 1e6, 3))
            for impl in TF_PARSE:
                row.append(fmt(pitems.get(f"parse/{kind}/{mode}/{impl}"), 1e6, 4))
            rows.append(row)
    print("Example parsing, million records/s (median [min-max]), 1024 records, batches of 64:")
    print(table(["record", "mode"] + PARSE_IMPLS + TF_PARSE, rows, md))
    rows = []
    for kind in KINDS:
        for mode in MODES:
            row = [kind, mode]
            for impl in PARSE_IMPLS:
                xs = items.get(f"parse/{kind}/{mode}/{impl}")
                row.append(f"{1e6 / med(xs):.3f}" if xs else "-")
            for impl in TF_PARSE:
                xs = pitems.get(f"parse/{kind}/{mode}/{impl}")
                row.append(f"{1e6 / med(xs):.2f}" if xs else "-")
            rows.append(row)
    print()
    print("The same as microseconds per record:")
    print(table(["record", "mode"] + PARSE_IMPLS + TF_PARSE, rows, md))
    print()
    for kind in KINDS:
        for mode in MODES:
            base = f"parse/{kind}/{mode}"
            ours = items.get(f"{base}/sluice_views")
            ratio(f"{base}/sluice_views", f"{base}/protobuf", ours, items.get(f"{base}/protobuf"), 3.0)
            tf = {impl: pitems[f"{base}/{impl}"] for impl in TF_PARSE if pitems.get(f"{base}/{impl}")}
            best = max(tf, key=lambda i: med(tf[i])) if tf else "tf"
            ratio(f"{base}/sluice_views", f"{base}/{best}", ours, tf.get(best), 2.0)

    if pctx:
        print("TensorFlow: " + ", ".join(f"{k} {v}" for k, v in pctx.items()))
    for name, why in skipped.items():
        print(f"skipped {name}: {why}")
    if not args.python:
        print("Python: skipped")
    targeted = [r for r in ratios if r[3] is not None]
    met = sum(1 for _, _, x, t, _ in targeted if x is not None and x >= t)
    print(f"targets: {met} of {len(targeted)} met (read vs plain_fread: x >= 0.7 at 100KiB, >= 0.9 at 1KiB; "
          f"read vs TF: x >= 3; parse vs protobuf: x >= 3; parse vs TF: x >= 2; memcpy: the limit, no target)")
    for bench, peer, x, target, why in ratios:
        print(f"ratio {bench} vs {peer}: " + (f"{x:.2f}" if x is not None else (why or "n/a")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
