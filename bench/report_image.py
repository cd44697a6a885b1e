"""Table and target ratios of the image suite (bench/run.sh image).

Reads the C++ benchmark's JSON (Google Benchmark, items/s = images/s) and
bench/py_image_bench.py's JSON, prints the median images/s per benchmark and
per quality, then, last, one line per target:
    ratio <benchmark> vs <peer>: <x>
x = sluice's throughput / the peer's (both medians of the same run).
Targets (the image-ops issue):
  decode vs libjpeg-turbo direct                   x >= 0.97
  fused random resized crop vs decode_and_crop     x >= 0.85 (the limit)
  ... vs libjpeg-turbo's own partial decode        reported, no target
  dct_scaling vs the plain path (112x112 output)   reported, no target
  sluice from Python vs PIL + torchvision's chain  x >= 2.5
  vs tf.image (eager, tf.data) and OpenCV          reported, no target
"""

import argparse
import json
import statistics
import sys

QUALITIES = ("q90", "q95")
TARGETS = [  # (benchmark, peer, minimum or None)
    ("image/decode/sluice", "image/decode/libjpeg_direct", 0.97),
    ("image/rrc/sluice", "image/decode_and_crop/sluice", 0.85),
    ("image/rrc/sluice", "image/decode_and_crop/libjpeg_direct", None),
    ("image/rrc112_dct/sluice", "image/rrc112/sluice", None),
    ("py/rrc/sluice", "py/rrc/pil_torchvision", 2.5),
    ("py/rrc/sluice", "py/rrc/tf_data", None),
    ("py/rrc/sluice", "py/rrc/tf_eager", None),
    ("py/rrc/sluice", "py/rrc/opencv", None),
]


def load_cxx(path):
    with open(path) as f:
        data = json.load(f)
    runs = {}
    for b in data.get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration" or "items_per_second" not in b:
            continue
        name = b.get("run_name", b["name"]).split("/repeats:")[0].split("/min_time:")[0]
        name = name.removesuffix("/manual_time")
        runs.setdefault(name, []).append(b["items_per_second"])
    return runs


def load_python(path):
    with open(path) as f:
        return json.load(f)["results"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cxx", required=True)
    parser.add_argument("--python")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()

    runs = load_cxx(args.cxx)
    if args.python:
        try:
            runs.update(load_python(args.python))
        except (OSError, ValueError, KeyError) as e:
            print(f"(python results unreadable: {e})", file=sys.stderr)
    medians = {name: statistics.median(v) for name, v in runs.items() if v}

    rows = sorted({name.rsplit("/", 1)[0] for name in medians})
    sep = " | " if args.markdown else "  "
    head = ["benchmark"] + [f"{q} images/s" for q in QUALITIES] + ["runs"]
    print(("| " + sep.join(head) + " |\n|" + "---|" * len(head)) if args.markdown else sep.join(head))
    for row in rows:
        cells = [row]
        for q in QUALITIES:
            v = medians.get(f"{row}/{q}")
            cells.append("-" if v is None else f"{v:.0f}")
        cells.append(str(max(len(runs.get(f"{row}/{q}", [])) for q in QUALITIES)))
        print(("| " + sep.join(cells) + " |") if args.markdown else sep.join(cells))
    print()

    met = total = 0
    lines = []
    for bench, peer, minimum in TARGETS:
        for q in QUALITIES:
            a, b = medians.get(f"{bench}/{q}"), medians.get(f"{peer}/{q}")
            if a is None or b is None:
                continue
            x = a / b
            if minimum is not None:
                total += 1
                met += x >= minimum
            lines.append(f"ratio {bench}/{q} vs {peer}/{q}: {x:.2f}")
    print(f"targets: {met} of {total} met (decode vs libjpeg_direct: x >= 0.97; rrc vs decode_and_crop: x >= 0.85; "
          f"python rrc vs pil_torchvision: x >= 2.5; tf and opencv: no target)")
    for line in lines:
        print(line)


if __name__ == "__main__":
    main()
