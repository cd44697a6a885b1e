"""read_up_to_producer declares its batch dimension, so enqueue_many batchers take it.

It yields ``[keys, values]`` of 1..num_records records per call; its shapes
are ``[(None,), (None,)]``. The defect: it declared scalars, and
``batch(..., enqueue_many=True)`` refused it at build time.
"""

import pytest

from sluice import dtypes
from sluice import errors
from sluice import io
from sluice import queue as sq
from sluice import train


def _files(tmp_path, counts):
    paths = []
    for f, n in enumerate(counts):
        path = str(tmp_path / ("ex-%d.tfrecord" % f))
        with io.TFRecordWriter(path) as w:
            for i in range(n):
                w.write(b"file %d record %d" % (f, i))
        paths.append(path)
    return paths


def _filename_queue(paths):
    q = sq.FIFOQueue(len(paths), [dtypes.string])
    for p in paths:
        q.enqueue(p)
    q.close()
    return q


def test_read_up_to_producer_declares_a_batch_dimension(tmp_path):
    prod = train.read_up_to_producer(io.TFRecordReader(), _filename_queue(_files(tmp_path, [3])), 8)
    assert prod.shapes == [(None,), (None,)]
    assert prod.dtypes == [dtypes.string, dtypes.string]
    keys, values = prod()
    assert values.tolist() == [b"file 0 record %d" % i for i in range(3)]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("num_threads", [1, 3])
def test_batch_of_read_up_to_delivers_every_record_exactly_once(tmp_path, num_threads):
    counts = [20, 7, 1, 13]
    prod = train.read_up_to_producer(io.TFRecordReader(), _filename_queue(_files(tmp_path, counts)), 8)
    b = train.batch(prod, batch_size=4, num_threads=num_threads, enqueue_many=True, allow_smaller_final_batch=True)
    assert b.queue.shapes == [(), ()]
    coord = train.Coordinator()
    threads = train.start_queue_runners(coord=coord)
    got = []
    while True:
        try:
            keys, values = b.dequeue(timeout=10)
        except errors.OutOfRangeError:
            break
        assert len(keys) == len(values) <= 4
        got.extend(values.tolist())
    coord.request_stop()
    coord.join(threads)
    want = [b"file %d record %d" % (f, i) for f, n in enumerate(counts) for i in range(n)]
    assert sorted(got) == sorted(want)
    if num_threads == 1:
        assert got == want


def test_read_up_to_producer_is_refused_where_a_single_record_is_needed(tmp_path):
    prod = train.read_up_to_producer(io.TFRecordReader(), _filename_queue(_files(tmp_path, [1])), 8)
    with pytest.raises(ValueError, match="must be a string scalar"):
        prod.map_parse_example({"x": io.FixedLenFeature([], dtypes.int64)})
