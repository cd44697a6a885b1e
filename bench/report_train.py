"""Table and ratio lines of bench/run.sh train (bench/train_suite.sh).

Input: JSON lines {"peer", "threads", "images_per_s"} (several repetitions
each); the table shows the median of each (peer, threads). The ratio lines
(x = sluice's images/s / the peer's; > 1: sluice is faster) are, with their
targets:
  train/sluice/Nt vs tf_queue/Nt          >= 2   (N = 1, 2)
  train/sluice/2t vs torch_dataloader/2w  >= 3
  train/sluice/Nt vs decode_limit/Nt      >= 0.85 (limit = 1-thread
                                                   decode_and_crop x N)
and, informative: sluice vs the fused op alone (the pipeline's overhead),
sluice with dct_scaling vs the DataLoader, sluice's Python API vs C++.
"""

import collections
import json
import statistics
import sys


def main(path):
    runs = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                runs[(r["peer"], int(r["threads"]))].append(float(r["images_per_s"]))
    med = {k: statistics.median(v) for k, v in runs.items()}
    print("%-24s %7s %12s %s" % ("pipeline", "threads", "images/s", "(repetitions)"))
    for (peer, threads), v in sorted(med.items()):
        print("%-24s %7d %12.1f (%s)" % (peer, threads, v, ", ".join("%.0f" % x for x in runs[(peer, threads)])))
    print()
    limit = med.get(("decode_and_crop_limit", 1))
    ratios = []
    for t in (1, 2):
        s = med.get(("sluice", t))
        if s is None:
            continue
        if ("tf", t) in med:
            ratios.append(("train/sluice/%dt" % t, "tf_queue/%dt" % t, s / med[("tf", t)]))
        if t == 2 and ("torch", 2) in med:
            ratios.append(("train/sluice/2t", "torch_dataloader/2w", s / med[("torch", 2)]))
        if limit:
            ratios.append(("train/sluice/%dt" % t, "decode_limit/%dt" % t, s / (limit * t)))
    op = med.get(("fused_op_limit", 1))
    if op and ("sluice", 1) in med:
        ratios.append(("train/sluice/1t", "fused_op_limit/1t", med[("sluice", 1)] / op))
    if ("sluice_dct_scaling", 2) in med and ("torch", 2) in med:
        ratios.append(("train/sluice_dct_scaling/2t", "torch_dataloader/2w", med[("sluice_dct_scaling", 2)] /
                       med[("torch", 2)]))
    if ("sluice_py", 2) in med and ("sluice", 2) in med:
        ratios.append(("train/sluice_py/2t", "train/sluice/2t", med[("sluice_py", 2)] / med[("sluice", 2)]))
    for bench, peer, x in ratios:
        print("ratio %s vs %s: %.2f" % (bench, peer, x))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
