#!/usr/bin/env python3
"""Per-element throughput of queues driven from Python.

    python bench/py_queue_bench.py [--json OUT] [--repetitions 3] [--min-time 0.4]

Compares, with the same payload, capacity and threads:
  sluice       sluice.queue.FIFOQueue (TensorFlow's API; blocking calls release
               the GIL)
  queue.Queue  Python's queue.Queue(maxsize=capacity)
  tf.queue     tf.queue.FIFOQueue in eager mode (skipped when TensorFlow is
               not installed)

Element: one uint8 numpy array of shape [64], made once and enqueued again and
again. queue.Queue stores a reference to it; sluice and TensorFlow copy its 64
bytes into a tensor of their own on enqueue and hand back their own array /
EagerTensor on dequeue (not converted further).

Modes (name python/<op>/<threads>/<impl>):
  op single:  enqueue / dequeue one element per call.
  op many64:  enqueue_many of a [64, 64] array and dequeue_many(64);
              queue.Queue has no bulk calls: 64 put / get per batch.
  threads 1x1:    one producer thread, the consumer in the main thread.
  threads serial: one thread fills the queue to capacity, then drains it,
                  repeatedly: the cost of the calls alone, no thread hand-off.
Each measurement runs a fixed number of elements, scaled so that it takes at
least --min-time seconds; the median of --repetitions is reported.

--calls prints instead the cost of single uncontended calls (sluice's Python
API, the raw binding under it, queue.Queue): where the time goes.
"""

import argparse
import json
import queue as pyqueue
import statistics
import sys
import threading
import time

import numpy as np

CAPACITY = 1024
BATCH = 64
PAYLOAD = 64


# --------------------------------------------------------------- adapters ---

class PyQueueAdapter:
    name = "queue.Queue"

    def __init__(self):
        self.q = pyqueue.Queue(maxsize=CAPACITY)

    def put(self, x):
        self.q.put(x)

    def get(self):
        return self.q.get()

    def put_many(self, batch_rows):
        put = self.q.put
        for row in batch_rows:
            put(row)

    def get_many(self, n):
        get = self.q.get
        return [get() for _ in range(n)]

    def close(self):
        pass


def _sluice_uint8(sl):
    for cand in ("uint8",):
        dt = getattr(sl, cand, None)
        if dt is not None:
            return dt
        dtypes = getattr(sl, "dtypes", None)
        if dtypes is not None and getattr(dtypes, cand, None) is not None:
            return getattr(dtypes, cand)
    return np.uint8


class SluiceAdapter:
    name = "sluice"

    def __init__(self):
        import sluice as sl
        self.q = sl.queue.FIFOQueue(CAPACITY, [_sluice_uint8(sl)], shapes=[[PAYLOAD]])
        self.put = self.q.enqueue
        self.get = self.q.dequeue
        self.put_many = self.q.enqueue_many
        self.get_many = self.q.dequeue_many

    def close(self):
        self.q.close(cancel_pending_enqueues=True)


class TFAdapter:
    name = "tf.queue"

    def __init__(self):
        import tensorflow as tf
        self.q = tf.queue.FIFOQueue(CAPACITY, [tf.uint8], shapes=[[PAYLOAD]])
        self.put = self.q.enqueue
        self.get = self.q.dequeue
        self.put_many = self.q.enqueue_many
        self.get_many = self.q.dequeue_many

    def close(self):
        self.q.close(cancel_pending_enqueues=True)


# ------------------------------------------------------------------ modes ---

def run_threaded(make, op, n):
    """One producer thread, the consumer here; returns seconds for n elements."""
    q = make()
    row = np.arange(PAYLOAD, dtype=np.uint8)
    batch = np.tile(row, (BATCH, 1))
    error = []
    started = threading.Event()

    def produce():
        try:
            started.set()
            if op == "single":
                put = q.put
                for _ in range(n):
                    put(row)
            else:
                put_many = q.put_many
                for _ in range(n // BATCH):
                    put_many(batch)
        except BaseException as e:  # report, do not hang the consumer
            error.append(e)
            q.close()

    t = threading.Thread(target=produce, daemon=True)
    t0 = time.perf_counter()
    t.start()
    started.wait()
    if op == "single":
        get = q.get
        for _ in range(n):
            get()
    else:
        get_many = q.get_many
        for _ in range(n // BATCH):
            get_many(BATCH)
    elapsed = time.perf_counter() - t0
    t.join()
    if error:
        raise error[0]
    return elapsed


def run_serial(make, op, n):
    """Fill to capacity, drain, repeat, on one thread; seconds for n elements."""
    q = make()
    row = np.arange(PAYLOAD, dtype=np.uint8)
    batch = np.tile(row, (BATCH, 1))
    rounds = max(1, n // CAPACITY)
    t0 = time.perf_counter()
    if op == "single":
        put, get = q.put, q.get
        for _ in range(rounds):
            for _ in range(CAPACITY):
                put(row)
            for _ in range(CAPACITY):
                get()
    else:
        put_many, get_many = q.put_many, q.get_many
        for _ in range(rounds):
            for _ in range(CAPACITY // BATCH):
                put_many(batch)
            for _ in range(CAPACITY // BATCH):
                get_many(BATCH)
    return time.perf_counter() - t0, rounds * CAPACITY


def measure(make, op, threads, repetitions, min_time):
    """Median elements/s over repetitions, after scaling n to min_time."""
    unit = CAPACITY  # n is a multiple of the capacity (and so of BATCH)

    def once(n):
        if threads == "serial":
            secs, done = run_serial(make, op, n)
            return secs, done
        return run_threaded(make, op, n), n

    n = unit
    while True:
        secs, done = once(n)
        if secs >= min_time / 4 or n >= (1 << 24):
            break
        n *= 4
    n = max(unit, int(done * min_time / max(secs, 1e-9)) // unit * unit)
    rates = []
    for _ in range(repetitions):
        secs, done = once(n)
        rates.append(done / secs)
    return {"items_per_second": statistics.median(rates), "runs": rates, "elements": n}


def call_costs():
    """One thread, no waiting: microseconds per call, best of 30 rounds of 1000
    calls, for sluice (the Python API and, where reachable, the raw _core
    binding under it) and queue.Queue. A diagnostic, not a target."""
    import timeit
    row = np.arange(PAYLOAD, dtype=np.uint8)
    cases = []
    pq = pyqueue.Queue(maxsize=CAPACITY)
    cases.append(("queue.Queue put / get", lambda: pq.put(row), pq.get))
    try:
        import sluice as sl
        q = sl.queue.FIFOQueue(CAPACITY, [_sluice_uint8(sl)], shapes=[[PAYLOAD]])
        cases.insert(0, ("sluice FIFOQueue enqueue / dequeue", lambda: q.enqueue(row), q.dequeue))
        raw = getattr(q, "_queue", None)
        if raw is not None:
            comps = [row]
            cases.insert(1, ("sluice._core Queue enqueue / dequeue (no Python layer)",
                             lambda: raw.enqueue(comps, None), lambda: raw.dequeue(None)))
    except Exception as e:  # not installed
        print(f"sluice skipped: {type(e).__name__}: {e}")
    n = 1000
    for name, put, get in cases:
        best_put = best_get = float("inf")
        for _ in range(30):
            best_put = min(best_put, timeit.timeit(put, number=n) / n)
            best_get = min(best_get, timeit.timeit(get, number=n) / n)
        print(f"{name:58s} {best_put * 1e6:6.2f} us / {best_get * 1e6:6.2f} us", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", help="write results here (a JSON list)")
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--min-time", type=float, default=0.4)
    ap.add_argument("--impl", action="append", help="only these (sluice, queue.Queue, tf.queue)")
    ap.add_argument("--calls", action="store_true", help="only print the cost of single calls (diagnostic)")
    args = ap.parse_args()
    if args.calls:
        call_costs()
        return 0

    impls = [("queue.Queue", PyQueueAdapter)]
    skipped = {}
    try:
        import sluice  # noqa: F401
        sluice.queue.FIFOQueue  # noqa: B018
        impls.insert(0, ("sluice", SluiceAdapter))
    except Exception as e:  # not built / installed yet
        skipped["sluice"] = f"{type(e).__name__}: {e}"
    try:
        import os
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        import tensorflow as tf  # noqa: F401
        impls.append(("tf.queue", TFAdapter))
    except Exception as e:
        skipped["tf.queue"] = f"{type(e).__name__}: {e}"
    if args.impl:
        impls = [(n, c) for n, c in impls if n in args.impl]

    results = []
    for threads in ("1x1", "serial"):
        for op in ("single", "many64"):
            for name, cls in impls:
                r = measure(cls, op, threads, args.repetitions, args.min_time)
                r.update(name=f"python/{op}/{threads}/{name}", impl=name, op=op, threads=threads)
                results.append(r)
                print(f"{r['name']:40s} {r['items_per_second'] / 1e6:10.4f} M/s   "
                      f"(runs: {', '.join(f'{x / 1e6:.4f}' for x in r['runs'])}; {r['elements']} elements)",
                      flush=True)
    for name, why in skipped.items():
        print(f"skipped {name}: {why}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": results, "skipped": skipped}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
