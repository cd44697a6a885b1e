"""`sluice run SPEC`: builds the pipeline a spec describes, in its tf.data form
(sluice.data) or its tf.train form (queues, reader threads, a batcher under a
Coordinator), runs it to the end and reports progress and a summary."""

import json
import os
import random
import time

import numpy as np

from sluice import errors
from sluice import io as sio
from sluice.cli import _common as c
from sluice.cli import _spec

SPEC_HELP = """\
SPEC is a TOML file; paths in it are relative to its folder:

  form = "dataset"            # "dataset" (tf.data) or "train" (tf.train queues)
  epochs = 1

  [source]
  files = ["data/train-*"]    # paths or globs
  compression = "auto"        # auto, none, gzip, zlib
  shuffle_files = true
  seed = 0

  [parse]                     # parse_single_example; leave out for raw records
  "image/encoded" = "string"  # FixedLenFeature([], string)
  "image/class/label" = "int64"
  "tags" = { dtype = "string", varlen = true }   # VarLenFeature (dataset form)

  [image]                     # optional: decode (and crop) an encoded image
  feature = "image/encoded"
  op = "random_resized_crop"  # or "decode" (same-size images only)
  size = 224
  flip = true

  [batch]
  size = 32
  drop_remainder = false
  shuffle_buffer = 0          # shuffle() buffer / shuffle_batch's min_after_dequeue

  [threads]
  parallel = "AUTOTUNE"       # map calls at once (dataset) or reader threads (train)
  prefetch = "AUTOTUNE"       # batches buffered ahead

The total (and so an ETA) is known when every file has a fresh record index
(`sluice records index FILE...`)."""


def _compression(spec):
    wanted = spec.source["compression"]
    kinds = {c.compression_of(f, wanted) for f in spec.files}
    if len(kinds) > 1:
        raise spec.error("source", "compression", "the files mix compressions (%s); list one kind per spec"
                         % ", ".join(sorted(kinds)))
    return kinds.pop()


def _features(spec):
    from sluice import dtypes
    types = {"string": dtypes.string, "int64": dtypes.int64, "float32": dtypes.float32}
    out = {}
    for name, f in spec.parse.items():
        if f["varlen"]:
            out[name] = sio.VarLenFeature(types[f["dtype"]])
        else:
            out[name] = sio.FixedLenFeature(f["shape"], types[f["dtype"]], default_value=f["default"])
    return out


def _known_total(spec, comp):
    """Records per epoch when every file has a fresh index, else None."""
    total = 0
    for path in spec.files:
        index_path = path + ".idx"
        if not os.path.exists(index_path):
            return None
        try:
            total += len(sio.TFRecordIndex(path, sio.TFRecordOptions(c.core_compression(comp))))
        except errors.OpError:
            return None
    return total


def _threads(value):
    return (os.cpu_count() or 1) if value == _spec.AUTOTUNE else value


def _files(spec):
    files = list(spec.files)
    if spec.source["shuffle_files"]:
        random.Random(spec.source["seed"]).shuffle(files)
    return files


class _Pipeline:
    """A built pipeline: start() starts its threads, get() is the next batch
    (StopIteration at the end), stop() stops and joins what start() started."""

    def __init__(self, get, start=None, stop=None):
        self.get = get
        self.start = start or (lambda: None)
        self.stop = stop or (lambda: None)


def _dataset(spec, comp):
    from sluice import data
    ds = data.TFRecordDataset(_files(spec), compression_type=c.core_compression(comp))
    if spec.top["epochs"] > 1:
        ds = ds.repeat(spec.top["epochs"])
    npc = spec.threads["parallel"]
    if spec.parse is not None:
        ds = ds.map(data.ops.parse_example(_features(spec)), num_parallel_calls=npc)
    if spec.image is not None:
        im = spec.image
        if im["op"] == "random_resized_crop":
            fn = data.ops.random_resized_crop(size=im["size"], flip=im["flip"], seed=im["seed"],
                                              component=im["feature"], channels=im["channels"])
        else:
            fn = data.ops.decode_jpeg(component=im["feature"], channels=im["channels"])
        ds = ds.map(fn, num_parallel_calls=npc)
    if spec.batch["shuffle_buffer"]:
        ds = ds.shuffle(spec.batch["shuffle_buffer"], seed=spec.source["seed"])
    ds = ds.batch(spec.batch["size"], drop_remainder=spec.batch["drop_remainder"])
    ds = ds.prefetch(spec.threads["prefetch"])
    state = {}

    def start():
        state["it"] = iter(ds)
    pipeline = _Pipeline(lambda: next(state["it"]), start)
    pipeline.iterator = lambda: state.get("it")  # its stats() feed `sluice doctor`
    return pipeline


def _train(spec, comp):
    from sluice import train
    train.clear_queue_runners()
    filenames = train.string_input_producer(_files(spec), num_epochs=spec.top["epochs"],
                                            shuffle=spec.source["shuffle_files"], seed=spec.source["seed"])
    chains = []
    for t in range(_threads(spec.threads["parallel"])):
        chain = train.read_producer(sio.TFRecordReader(options=sio.TFRecordOptions(c.core_compression(comp))),
                                    filenames)
        if spec.parse is not None:
            chain = chain.map_parse_example(_features(spec))
        if spec.image is not None:
            im = spec.image
            if im["op"] == "random_resized_crop":
                chain = chain.map_random_resized_crop(im["size"], flip=im["flip"], seed=im["seed"] + t,
                                                      component=im["feature"], channels=im["channels"])
            else:
                chain = chain.map_decode_jpeg(component=im["feature"], channels=im["channels"])
        chains.append(chain)
    size = spec.batch["size"]
    ahead = 4 if spec.threads["prefetch"] == _spec.AUTOTUNE else spec.threads["prefetch"]
    smaller = not spec.batch["drop_remainder"]
    if spec.batch["shuffle_buffer"]:
        batches = train.shuffle_batch_join(chains, size, capacity=spec.batch["shuffle_buffer"] + ahead * size,
                                           min_after_dequeue=spec.batch["shuffle_buffer"], seed=spec.source["seed"],
                                           allow_smaller_final_batch=smaller)
    else:
        batches = train.batch_join(chains, size, capacity=ahead * size, allow_smaller_final_batch=smaller)
    coord = train.Coordinator()
    state = {"threads": []}

    def start():
        state["threads"] = train.start_queue_runners(coord=coord)

    def get():
        if coord.should_stop():
            raise StopIteration
        try:
            return batches.dequeue()
        except errors.OutOfRangeError:
            raise StopIteration from None

    def stop():
        coord.request_stop()
        coord.join(state["threads"], stop_grace_period_secs=30)
    return _Pipeline(get, start, stop)


def build(spec, comp, form=None):
    """The spec's pipeline in `form` ("dataset" or "train"; None: the spec's own), not yet started."""
    try:
        return (_dataset if (form or spec.top["form"]) == "dataset" else _train)(spec, comp)
    except errors.OpError as e:
        raise c.DataError("building the pipeline: %s" % e.message) from None


def _leaves(batch):
    if isinstance(batch, dict):
        for v in batch.values():
            yield from _leaves(v)
    elif isinstance(batch, (list, tuple)):
        for v in batch:
            yield from _leaves(v)
    else:
        yield batch


def _measure(batch):
    """(rows, bytes) of a batch: its first dimension and the bytes of its arrays."""
    rows, nbytes = None, 0
    for leaf in _leaves(batch):
        if hasattr(leaf, "values") and hasattr(leaf, "indices"):  # a SparseTensor
            leaf = leaf.values
        arr = np.asarray(leaf)
        if rows is None and arr.ndim:
            rows = arr.shape[0]
        if arr.dtype == object:
            nbytes += sum(len(x) for x in arr.ravel() if isinstance(x, (bytes, str)))
        else:
            nbytes += arr.nbytes
    return rows or 0, nbytes


def cmd_run(args):
    from sluice.cli import _progress  # rich, imported only by the commands that draw progress
    spec = _spec.Spec(args.spec)
    comp = _compression(spec)
    per_epoch = _known_total(spec, comp)
    total = per_epoch * spec.top["epochs"] if per_epoch is not None else None
    if total is not None and args.max_batches is not None:
        total = min(total, args.max_batches * spec.batch["size"])
    batches = 0
    start = time.monotonic()
    pipeline = build(spec, comp)
    bar = _progress.Bar(total=total, unit="records", quiet=args.quiet, interval=args.interval,
                        extra=lambda: "%d batches" % batches)
    error = None
    try:
        pipeline.start()
        with bar:
            while args.max_batches is None or batches < args.max_batches:
                try:
                    batch = pipeline.get()
                except StopIteration:
                    break
                rows, nbytes = _measure(batch)
                batches += 1
                bar.advance(rows, bar.bytes + nbytes)
    except errors.OpError as e:
        error = e.message
    finally:
        pipeline.stop()
    seconds = time.monotonic() - start
    summary = {"spec": spec.path, "form": spec.top["form"], "files": len(spec.files), "records": bar.count,
               "batches": batches, "bytes": bar.bytes, "seconds": round(seconds, 3),
               "records_per_s": round(bar.count / seconds, 1) if seconds > 0 else None,
               "mb_per_s": round(bar.bytes / 1e6 / seconds, 2) if seconds > 0 else None, "error": error}
    if args.json:
        print(json.dumps(summary))
    else:
        print("%s (%s form): %d records in %d batches from %d file%s in %.2f s: %.1f records/s, %.1f MB/s%s" % (
            spec.path, spec.top["form"], bar.count, batches, len(spec.files), "" if len(spec.files) == 1 else "s",
            seconds, summary["records_per_s"] or 0, summary["mb_per_s"] or 0, "" if error is None else
            "; stopped by an error"))
    if error is not None:
        c.eprint("sluice run: %s" % error)
        return c.EXIT_DATA
    return c.EXIT_OK
