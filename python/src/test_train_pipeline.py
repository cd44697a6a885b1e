"""The tf.train input pipeline end to end from Python, with exact accounting.

TFRecord files of serialized Examples -> string_input_producer(num_epochs)
-> readers -> parse -> shuffle_batch_join -> a consumer that counts every
record. Once the input is exhausted the end cascades down (each stage's
OutOfRange closes the next queue); the consumer then stops the Coordinator
and joins it, and no thread is left behind. Run once with native producers
(GIL-free C++ stages) and once with Python callables.
"""

import collections
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from sluice import errors
from sluice import io as sio
from sluice import queue as sq
from sluice import train

NUM_FILES = 4
RECORDS_PER_FILE = 25
EPOCHS = 3
BATCH = 8
FEATURES = {"id": sio.FixedLenFeature([], np.int64), "pair": sio.FixedLenFeature([2], np.float32)}


@pytest.fixture(autouse=True)
def _clean_registry():
    train.clear_queue_runners()
    yield
    train.clear_queue_runners()


@pytest.fixture
def record_files(tmp_path):
    files = []
    for f in range(NUM_FILES):
        path = str(tmp_path / ("part-%d.tfrecord" % f))
        with sio.TFRecordWriter(path) as w:
            for r in range(RECORDS_PER_FILE):
                i = f * RECORDS_PER_FILE + r
                w.write(sio.serialize_example({"id": i, "pair": [float(i), -float(i)]}))
        files.append(path)
    return files


def _consume(bq):
    counts = collections.Counter()
    sizes = []
    for b in bq.batches():
        assert sorted(b) == ["id", "pair"]
        np.testing.assert_array_equal(b["pair"][:, 0], b["id"].astype(np.float32))
        np.testing.assert_array_equal(b["pair"][:, 1], -b["id"].astype(np.float32))
        counts.update(b["id"].tolist())
        sizes.append(len(b["id"]))
    return counts, sizes


def _check_run(bq, coord, threads, python_threads_before):
    counts, sizes = _consume(bq)
    total = NUM_FILES * RECORDS_PER_FILE
    assert counts == {i: EPOCHS for i in range(total)}  # every record exactly EPOCHS times
    assert sum(sizes) == total * EPOCHS and all(s == BATCH for s in sizes[:-1])
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=30)
    assert not [t for t in threads if t.is_alive()]
    assert threading.active_count() == python_threads_before


def test_native_pipeline_cascade(record_files):
    before = threading.active_count()
    filenames = train.string_input_producer(record_files, num_epochs=EPOCHS, seed=11, name="files")
    readers = [sio.TFRecordReader() for _ in range(2)]
    examples = [train.read_producer(r, filenames).map_parse_example(FEATURES) for r in readers]
    assert examples[0].names == ["id", "pair"]
    bq = train.shuffle_batch_join(examples, batch_size=BATCH, capacity=40, min_after_dequeue=10, seed=3,
                                  allow_smaller_final_batch=True, name="records")
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    assert all(isinstance(t, train._core.Thread) for t in threads)
    _check_run(bq, coord, threads, before)

    stats = {s["name"]: s for s in sq.all_queue_stats()}
    files_q = stats[filenames.name]
    assert (files_q["enqueued"], files_q["dequeued"], files_q["closed"]) == (NUM_FILES * EPOCHS,) * 2 + (True,)
    batch_q = stats[bq.name]
    total = NUM_FILES * RECORDS_PER_FILE * EPOCHS
    assert (batch_q["enqueued"], batch_q["dequeued"], batch_q["size"]) == (total, total, 0)
    assert all(r.num_records_produced() > 0 for r in readers)
    assert sum(r.num_records_produced() for r in readers) == total


def test_python_callable_pipeline_cascade(record_files):
    before = threading.active_count()
    filenames = train.string_input_producer(record_files, num_epochs=EPOCHS, seed=12)

    def reading(reader):
        def example():
            _, value = reader.read(filenames)  # OutOfRangeError at the end ends this thread
            return sio.parse_single_example(value, FEATURES)
        return example

    bq = train.shuffle_batch_join([reading(sio.TFRecordReader()) for _ in range(2)], batch_size=BATCH,
                                  capacity=40, min_after_dequeue=10, allow_smaller_final_batch=True,
                                  dtypes={"id": np.int64, "pair": np.float32}, shapes={"id": [], "pair": [2]})
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    _check_run(bq, coord, threads, before)


def test_corrupt_file_stops_every_stage_and_reaches_join(record_files):
    with open(record_files[2], "r+b") as f:
        f.seek(20)
        f.write(b"\xff\xff\xff\xff")
    filenames = train.string_input_producer(record_files, num_epochs=1, shuffle=False)
    example = train.read_producer(sio.TFRecordReader(), filenames).map_parse_example(FEATURES)
    bq = train.batch(example, batch_size=BATCH, capacity=8)
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    list(bq.batches())  # ends (OutOfRange) once the error has stopped the coordinator and the queue is drained
    assert coord.should_stop()
    with pytest.raises(errors.DataLossError):
        coord.join(threads, stop_grace_period_secs=30)
    assert not [t for t in threads if t.is_alive()]


def test_reader_producer_yields_key_value_pairs(record_files):
    filenames = train.string_input_producer(record_files[:1], num_epochs=1, shuffle=False)
    pairs = train.batch(train.read_producer(sio.TFRecordReader(), filenames), batch_size=5)
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    keys, values = pairs.dequeue()
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=30)
    prefix = (record_files[0] + ":").encode()  # TF's key: "<file>:<offset>"
    assert all(k.startswith(prefix) for k in keys) and len(set(keys.tolist())) == 5
    assert [sio.parse_single_example(v, FEATURES)["id"] for v in values] == list(range(5))


def test_interpreter_exits_cleanly_with_python_producers_still_running():
    # A pipeline never stopped, whose queue never fills: its C++ runner
    # threads are inside the Python producer when the interpreter exits
    # (without sluice's atexit hook, the process aborts).
    script = "\n".join([
        "import sluice, numpy as np",
        "from sluice import train",
        "def busy():",
        "    return sum(range(2000))",
        "bq = train.batch(busy, batch_size=4, num_threads=3, capacity=10**7, dtypes=np.int64, shapes=())",
        "coord = train.Coordinator()",
        "train.start_queue_runners(coord=coord)",
        "assert bq.dequeue().tolist() == [1999000] * 4",
        "print('ok')",
    ])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(sq.__file__)) + os.pathsep + env.get("PYTHONPATH", "")
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=60)
        assert (done.returncode, done.stdout.strip()) == (0, b"ok"), done.stderr.decode()[-2000:]
