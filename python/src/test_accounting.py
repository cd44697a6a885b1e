"""Accounting under random pipelines: every record arrives exactly once per epoch, or is not delivered.

Seeded generators build random tf.train pipelines (files, epochs, shuffles,
readers, batcher kinds, thread counts, capacities, final-batch rules) and
stop some of them at random moments. Whatever happens, no record arrives
more often than its epochs allow, and a pipeline run to its end delivers
every record once per epoch (less only the final partial batch a batcher
drops without allow_smaller_final_batch). The seed is in the test id; set
SLUICE_ACCOUNTING_SEEDS for more of them.
"""

import collections
import os
import random

import pytest

import sluice as sl
from sluice import errors

train = sl.train

SEEDS = int(os.environ.get("SLUICE_ACCOUNTING_SEEDS", "40"))


def _write_files(directory, rng):
    files, ids = [], []
    next_id = 0
    for f in range(rng.randint(1, 4)):
        path = os.path.join(directory, "part-%d.tfrecord" % f)
        with sl.io.TFRecordWriter(path) as w:
            for _ in range(rng.randint(0, 40)):
                w.write(b"%d" % next_id)
                ids.append(next_id)
                next_id += 1
        files.append(path)
    return files, ids


def _build(files, rng):
    """A random pipeline: (batch queue, epochs, batch_size, allow_smaller_final_batch, description)."""
    epochs = rng.randint(1, 3)
    filenames = train.string_input_producer(files, num_epochs=epochs, shuffle=rng.random() < 0.5,
                                            capacity=rng.randint(1, 8), seed=rng.randint(0, 1000))
    kind = rng.choice(["batch", "shuffle_batch", "batch_join", "shuffle_batch_join"])
    readers = rng.randint(1, 3)
    producers = [train.read_producer(sl.io.TFRecordReader(), filenames).map_select([1]) for _ in range(readers)]
    batch_size = rng.randint(1, 9)
    capacity = batch_size + rng.randint(1, 20)
    allow_smaller = rng.random() < 0.7
    common = dict(batch_size=batch_size, capacity=capacity, allow_smaller_final_batch=allow_smaller)
    if kind == "batch":
        out = train.batch(producers[0], num_threads=rng.randint(1, 3), **common)
    elif kind == "batch_join":
        out = train.batch_join(producers, **common)
    else:
        common["min_after_dequeue"] = rng.randint(0, capacity - 1)
        common["seed"] = rng.randint(0, 1000)
        if kind == "shuffle_batch":
            out = train.shuffle_batch(producers[0], num_threads=rng.randint(1, 3), **common)
        else:
            out = train.shuffle_batch_join(producers, **common)
    description = "%s epochs=%d readers=%d batch_size=%d capacity=%d allow_smaller=%s" % (
        kind, epochs, readers, batch_size, capacity, allow_smaller)
    return out, epochs, batch_size, allow_smaller, description


def _consume(batch_queue, rng, stop_after):
    """Counts of the delivered ids; stops after `stop_after` batches (None: to the end)."""
    delivered = collections.Counter()
    batches = 0
    try:
        while stop_after is None or batches < stop_after:
            batch = batch_queue.dequeue(timeout=30)
            delivered.update(int(v) for v in batch)
            batches += 1
    except errors.OutOfRangeError:
        pass
    return delivered


@pytest.mark.parametrize("seed", range(SEEDS))
def test_random_pipelines_deliver_each_record_at_most_once_per_epoch_and_all_of_them_at_the_end(seed, tmp_path):
    rng = random.Random(seed)
    files, ids = _write_files(str(tmp_path), rng)
    graph = train.Graph()
    with graph.as_default():
        batch_queue, epochs, batch_size, allow_smaller, description = _build(files, rng)
    for run in range(2):  # a second Session runs the whole pipeline again from fresh queues
        stop_after = None if rng.random() < 0.6 else rng.randint(0, 5)
        with train.Session(graph=graph) as sess:
            coord = train.Coordinator()
            threads = train.start_queue_runners(sess, coord)
            delivered = _consume(batch_queue, rng, stop_after)
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=30)
        context = "seed %d, run %d: %s, stop_after=%s" % (seed, run, description, stop_after)
        assert set(delivered) <= set(ids), context + ": records that were never written"
        over = {i: n for i, n in delivered.items() if n > epochs}
        assert not over, context + ": delivered more than once per epoch: %s" % over
        total = len(ids) * epochs
        got = sum(delivered.values())
        if stop_after is None:
            missing = total - got
            if allow_smaller:
                assert missing == 0, context + ": %d of %d records not delivered" % (missing, total)
            else:  # only the final partial batch is dropped
                assert missing == total % batch_size, context + ": %d of %d not delivered" % (missing, total)
