"""`sluice doctor SPEC`: runs a pipeline spec in its tf.train (queue) form or
its tf.data (Dataset) form, samples every queue's or stage's fill and
counters while it runs, times how long the consumer waits for each batch,
names the bottleneck and what to change, and writes a self-contained HTML
report (an SVG plot of each queue's or stage's fill and rate over time) and a
Chrome trace-event JSON (Perfetto, chrome://tracing).

Stages of the queue form: the filename queue (string_input_producer) -> the
reader threads (read, parse, decode/crop) -> the batch queue -> the consumer
(this command, standing in for a training loop; --step-ms makes it slower).
Stages of the Dataset form: those the iterator's stats() reports (reader,
maps, batch, prefetch), each with its busy time, its wait for input and its
buffer's fill.
"""

import html
import json
import os
import threading
import time

from sluice import train
from sluice.cli import _common as c
from sluice.cli import _spec
from sluice.cli import run as _run

FULL = 0.95   # a queue this full counts as full (its producers block)
EMPTY = 0.0
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]
_FORMS = {"train": "tf.train queue form", "dataset": "tf.data Dataset form"}


class _Sampler:
    """Samples `read()` (default sluice.train.all_queue_stats()) every `interval` seconds on a thread."""

    def __init__(self, t0, interval, read=None):
        self.t0, self.interval = t0, interval
        self.read = read or train.all_queue_stats
        self.samples = []  # (seconds since t0, [queue stats])
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sluice-doctor-sampler", daemon=True)

    def _loop(self):
        while True:
            self.sample()
            if self._stop.wait(self.interval):
                break

    def sample(self):
        stats = self.read()
        if stats is not None:
            self.samples.append((time.monotonic() - self.t0, stats))

    def start(self):
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join()
        self.sample()


def _rates(ts, counts):
    """Per-second rates of a cumulative count sampled at times ts (0 at the first sample)."""
    return [0.0] + [(counts[i] - counts[i - 1]) / (ts[i] - ts[i - 1]) if ts[i] > ts[i - 1] else 0.0
                    for i in range(1, len(ts))]


def _series(samples):
    """{queue name: {"capacity", "t": [...], "size": [...], "full": [...], "rate": [...], "closed": [...]}}."""
    out = {}
    for t, stats in samples:
        for q in stats:
            s = out.setdefault(q["name"], {"capacity": q["capacity"], "type": q["type"], "t": [], "size": [],
                                           "full": [], "dequeued": [], "enqueued": [], "closed": []})
            s["t"].append(t)
            s["size"].append(q["size"])
            s["full"].append(q["fraction_full"])
            s["dequeued"].append(q["dequeued"])
            s["enqueued"].append(q["enqueued"])
            s["closed"].append(q["closed"])
    for s in out.values():
        s["rate"] = _rates(s["t"], s["dequeued"])
    return out


def _fraction(values, predicate):
    return sum(1 for v in values if predicate(v)) / len(values) if values else 0.0


MIN_SAMPLES = 5  # fewer samples of a queue's open life say nothing


def _open_fraction(s, predicate):
    """Share of the samples of the queue's working life (after its first enqueue, before it closed)
    for which predicate(fill) holds; 0 when there are too few such samples."""
    fills = [f for f, closed, enq in zip(s["full"], s["closed"], s["enqueued"]) if not closed and enq > 0]
    return _fraction(fills, predicate) if len(fills) >= MIN_SAMPLES else 0.0


def diagnose(series, consumer, threads, cpus):
    """(stages, verdict, advice): per-stage figures and the bottleneck, in words."""
    names = list(series)
    filenames = next((series[n] for n in names if "input_producer" in n), None)
    batches = series[names[-1]] if names else None
    elapsed = consumer["seconds"] or 1e-9
    stages = []
    if filenames is not None:
        stages.append({"stage": "filename queue", "queue": next(n for n in names if series[n] is filenames),
                       "throughput": "%.1f files/s" % (filenames["dequeued"][-1] / elapsed),
                       "mean_fill": sum(filenames["full"]) / len(filenames["full"]),
                       "empty_while_open": _open_fraction(filenames, lambda f: f <= EMPTY)})
    blocked = _open_fraction(batches, lambda f: f >= FULL) if batches else 0.0
    starved = stages[0]["empty_while_open"] if stages else 0.0
    stages.append({"stage": "reader threads (read, parse, decode)", "threads": threads,
                   "throughput": "%.1f records/s" % (consumer["records"] / elapsed),
                   "waiting_on_input": starved, "blocked_on_output": blocked})
    if batches is not None:
        stages.append({"stage": "batch queue", "queue": names[-1], "capacity": batches["capacity"],
                       "mean_fill": sum(batches["full"]) / len(batches["full"]),
                       "empty_while_open": _open_fraction(batches, lambda f: f <= EMPTY)})
    # The first batch waits for the pipeline to start: counted apart.
    steady = max(elapsed - consumer["first_batch_seconds"], 1e-9)
    waiting = consumer["wait_seconds"] / steady
    stages.append({"stage": "consumer (training loop)",
                   "throughput": "%.1f batches/s" % (consumer["batches"] / elapsed), "waiting_on_input": waiting,
                   "first_batch_after": "%.3f s" % consumer["first_batch_seconds"]})
    if blocked >= 0.5:
        verdict = "consumer-bound: the input keeps the batch queue full"
        advice = "nothing to change in the input; the training step is the bottleneck (you could even lower " \
                 "[threads] parallel from %d)" % threads
    elif waiting >= 0.5:
        if starved >= 0.5:
            verdict = "input-bound: the filename queue runs dry"
            advice = "the reader threads finish files faster than the filename queue is refilled: list more files " \
                     "or larger ones"
        elif threads < cpus:
            verdict = "input-bound: the reader threads (read, parse, decode) cannot keep up"
            advice = "raise [threads] parallel from %d to %d (this machine has %d cores)" % (threads, cpus, cpus)
        else:
            verdict = "input-bound: the reader threads use every core"
            advice = "decoding is the cost: a smaller [image] size, or fewer/lighter images; more threads " \
                     "than cores (%d) will not help" % cpus
    else:
        verdict = "balanced: the consumer waits %.0f%% of the time, the readers are blocked %.0f%%" % (
            100 * waiting, 100 * blocked)
        advice = "a deeper batch queue ([threads] prefetch) smooths the bumps"
    return stages, verdict, advice


def _stage_series(samples):
    """The Dataset form's stages as _series gives queues: {"<i> <name>": {"capacity" (the largest
    buffer seen), "type", "t", "size" (buffer fill), "full", "rate" (elements/s), "elements",
    "busy_ns", "wait_ns", "parallelism"}}, in the stats' order (sources first, the consumer's Root out)."""
    out = {}
    for t, stats in samples:
        for i, st in enumerate(stats):
            if st["name"] == "Root":
                continue
            s = out.setdefault("%d %s" % (i, st["name"]), {"capacity": 0, "type": "dataset stage", "t": [],
                                                           "size": [], "full": [], "elements": [], "busy_ns": [],
                                                           "wait_ns": [], "parallelism": []})
            s["capacity"] = max(s["capacity"], st["buffer_size"])
            s["t"].append(t)
            s["size"].append(st["buffer_fill"])
            s["full"].append(st["buffer_fill"] / st["buffer_size"] if st["buffer_size"] else 0.0)
            s["elements"].append(st["elements"])
            s["busy_ns"].append(st["busy_ns"])
            s["wait_ns"].append(st["wait_ns"])
            s["parallelism"].append(st["parallelism"])
    for s in out.values():
        s["rate"] = _rates(s["t"], s["elements"])
    return out


def diagnose_dataset(series, consumer, cpus):
    """(stages, verdict, advice) of the Dataset form: each stage's throughput, utilisation (busy
    time over elapsed time and parallelism) and share of time waiting for its input; the busiest
    stage is the bottleneck when the consumer waits."""
    elapsed = consumer["seconds"] or 1e-9
    stages = []
    for name, s in series.items():
        par = max(s["parallelism"][-1], 1)
        stages.append({"stage": name, "throughput": "%.1f elements/s" % (s["elements"][-1] / elapsed),
                       "parallelism": par, "busy": min(s["busy_ns"][-1] / 1e9 / elapsed / par, 1.0),
                       "waiting_on_input": min(s["wait_ns"][-1] / 1e9 / elapsed, 1.0),
                       "mean_fill": sum(s["full"]) / len(s["full"]) if s["full"] else 0.0})
    steady = max(elapsed - consumer["first_batch_seconds"], 1e-9)
    waiting = consumer["wait_seconds"] / steady
    stages.append({"stage": "consumer (training loop)",
                   "throughput": "%.1f batches/s" % (consumer["batches"] / elapsed), "waiting_on_input": waiting,
                   "first_batch_after": "%.3f s" % consumer["first_batch_seconds"]})
    if waiting < 0.5:
        return stages, ("consumer-bound: the consumer waits %.0f%% of the time for input" % (100 * waiting)), \
            "nothing to change in the input; the training step is the bottleneck"
    busiest = max(stages[:-1], key=lambda st: st["busy"], default=None)
    if busiest is None:
        return stages, "input-bound", "the dataset's stages report no statistics"
    name, par = busiest["stage"], busiest["parallelism"]
    verdict = "input-bound: the %s stage is the busiest (%.0f%% of %s)" % (
        name.split(" ", 1)[1], 100 * busiest["busy"], "its time" if par == 1 else "its %d calls' time" % par)
    if "Map" in name and par < cpus:
        advice = "raise [threads] parallel to %d or AUTOTUNE (this machine has %d cores)" % (cpus, cpus)
    elif "Map" in name:
        advice = "the map uses every core: a smaller [image] size, lighter images, or cache() the parsed records"
    elif "Prefetch" in name:
        advice = "raise [threads] prefetch"
    elif "Batch" in name:
        advice = "batch assembly is the cost: larger elements per copy, or fewer components"
    else:
        advice = "reading is the cost: more files read in parallel, files on a faster disk, or cache()"
    return stages, verdict, advice


# ---- reports ---------------------------------------------------------------------------

def _polyline(ts, values, t_max, v_max, width, height, colour):
    if not ts:
        return ""
    pts = " ".join("%.1f,%.1f" % (40 + (width - 50) * t / t_max, height - 20 - (height - 30) * min(v, v_max) / v_max)
                   for t, v in zip(ts, values))
    return '<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (colour, pts)


def _svg(title, ts, values, v_max, unit, colour, t_max, width=720, height=180):
    v_max = v_max or 1.0
    axes = ('<line x1="40" y1="%d" x2="%d" y2="%d" stroke="#888"/><line x1="40" y1="10" x2="40" y2="%d" '
            'stroke="#888"/>' % (height - 20, width - 10, height - 20, height - 20))
    labels = ('<text x="44" y="22" font-size="12">%s</text><text x="2" y="18" font-size="10">%.4g</text>'
              '<text x="2" y="%d" font-size="10">0</text><text x="%d" y="%d" font-size="10">%.2fs</text>'
              '<text x="44" y="%d" font-size="10">%s</text>'
              % (html.escape(title), v_max, height - 20, width - 50, height - 5, t_max, height - 5, unit))
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" class="plot">%s%s%s</svg>'
            % (width, height, axes, _polyline(ts, values, t_max, v_max, width, height, colour), labels))


def write_html(path, spec_path, series, stages, verdict, advice, consumer, form="train"):
    t_max = max([s["t"][-1] for s in series.values() if s["t"]] + [consumer["seconds"], 1e-3])
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>sluice doctor: %s</title>"
             "<style>body{font-family:sans-serif;margin:20px}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}.verdict{font-size:18px;"
             "font-weight:bold}</style></head><body>" % html.escape(spec_path),
             "<h1>sluice doctor</h1><p>spec: %s (%s)</p>" % (html.escape(spec_path), _FORMS[form]),
             "<p class='verdict'>%s</p><p>what to change: %s</p>" % (html.escape(verdict), html.escape(advice)),
             "<p>%d records in %d batches in %.2f s; the consumer waited %.2f s for input after the first batch</p>"
             % (consumer["records"], consumer["batches"], consumer["seconds"], consumer["wait_seconds"]),
             "<h2>stages</h2><table><tr><th>stage</th><th>figures</th></tr>"]
    for st in stages:
        figures = ", ".join("%s: %s" % (k, ("%.0f%%" % (100 * v)) if isinstance(v, float) else v)
                            for k, v in st.items() if k != "stage")
        parts.append("<tr><td>%s</td><td>%s</td></tr>" % (html.escape(st["stage"]), html.escape(figures)))
    parts.append("</table><h2>%s over time</h2>" % ("queues" if form == "train" else "stages"))
    for i, (name, s) in enumerate(series.items()):
        colour = COLOURS[i % len(COLOURS)]
        parts.append("<h3>%s (%s, capacity %d)</h3>" % (html.escape(name), s["type"], s["capacity"]))
        parts.append(_svg("fill (elements)", s["t"], s["size"], s["capacity"], "elements", colour, t_max))
        parts.append(_svg("dequeue rate" if form == "train" else "output rate", s["t"], s["rate"],
                          max(s["rate"] + [1.0]), "elements/s", colour, t_max))
    parts.append("</body></html>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(parts))


def write_trace(path, series, waits):
    """Chrome trace events: a counter per queue (its size) and the consumer's waits as slices."""
    events = [{"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "sluice doctor"}},
              {"name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "consumer"}}]
    for name, s in series.items():
        for t, size in zip(s["t"], s["size"]):
            events.append({"name": name, "ph": "C", "pid": 1, "ts": round(t * 1e6), "args": {"size": size}})
    for start, seconds in waits:
        events.append({"name": "wait for batch", "ph": "X", "pid": 1, "tid": 1, "ts": round(start * 1e6),
                       "dur": max(1, round(seconds * 1e6))})
    with open(path, "w") as f:
        json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)


# ---- the command -----------------------------------------------------------------------

def cmd_doctor(args):
    spec = _spec.Spec(args.spec)
    comp = _run._compression(spec)
    prefix = args.out or os.path.splitext(args.spec)[0] + "-doctor"
    html_path, trace_path = prefix + ".html", prefix + ".trace.json"
    for path in (html_path, trace_path):
        c.check_not_input(path, list(spec.files) + [args.spec])
    threads = _run._threads(spec.threads["parallel"])
    form = args.form or spec.top["form"]
    t0 = time.monotonic()
    pipeline = _run.build(spec, comp, form=form)
    if form == "dataset":
        def read():
            it = pipeline.iterator()
            return None if it is None else it.stats()
        sampler = _Sampler(t0, args.sample_ms / 1000.0, read)
        pipeline.start()  # the iterator exists before the sampler reads it
        sampler.start()
    else:
        sampler = _Sampler(t0, args.sample_ms / 1000.0)
        sampler.start()
        pipeline.start()
    consumer = {"records": 0, "batches": 0, "wait_seconds": 0.0, "first_batch_seconds": 0.0}
    waits = []
    error = None
    try:
        while args.max_batches is None or consumer["batches"] < args.max_batches:
            before = time.monotonic()
            try:
                batch = pipeline.get()
            except StopIteration:
                break
            waited = time.monotonic() - before
            waits.append((before - t0, waited))
            if consumer["batches"]:
                consumer["wait_seconds"] += waited
            else:
                consumer["first_batch_seconds"] = time.monotonic() - t0
            consumer["batches"] += 1
            consumer["records"] += _run._measure(batch)[0]
            if args.step_ms:
                time.sleep(args.step_ms / 1000.0)  # a stand-in for the training step
    except Exception as e:  # noqa: BLE001 - an engine error ends the measurement, reported below
        error = getattr(e, "message", None) or str(e)
    finally:
        pipeline.stop()
        sampler.stop()
    consumer["seconds"] = time.monotonic() - t0
    if form == "dataset":
        series = _stage_series(sampler.samples)
        stages, verdict, advice = diagnose_dataset(series, consumer, os.cpu_count() or 1)
    else:
        series = _series(sampler.samples)
        stages, verdict, advice = diagnose(series, consumer, threads, os.cpu_count() or 1)
    write_html(html_path, args.spec, series, stages, verdict, advice, consumer, form)
    write_trace(trace_path, series, waits)
    if args.json:
        print(json.dumps({"form": form, "verdict": verdict, "advice": advice, "stages": stages, "consumer": consumer,
                          "html": html_path, "trace": trace_path, "error": error}))
    else:
        print("sluice doctor: %s (%s): %d records in %d batches in %.2f s"
              % (args.spec, _FORMS[form], consumer["records"], consumer["batches"], consumer["seconds"]))
        for st in stages:
            print("  %-40s %s" % (st["stage"], ", ".join(
                "%s %s" % (k.replace("_", " "), ("%.0f%%" % (100 * v)) if isinstance(v, float) else v)
                for k, v in st.items() if k != "stage")))
        print("bottleneck: %s" % verdict)
        print("what to change: %s" % advice)
        print("report: %s\ntrace (Perfetto, chrome://tracing): %s" % (html_path, trace_path))
    if error is not None:
        c.eprint("sluice doctor: %s" % error)
        return c.EXIT_DATA
    return c.EXIT_OK

