"""A failed enqueue_many says how many of its rows the queue kept.

The rows admitted before a timeout, a cancellation or a close stay queued;
the error says how many ("... (enqueue_many enqueued N of M rows)") and
carries the count as ``e.rows_enqueued``, so a retry does not duplicate
them.
"""

import numpy as np
import pytest
from conftest import wait_until

from sluice import dtypes
from sluice import errors
from sluice import queue as sq


def test_timed_out_enqueue_many_reports_the_rows_it_enqueued():
    q = sq.FIFOQueue(4, [dtypes.int64], shapes=[[]])
    with pytest.raises(errors.DeadlineExceededError) as info:
        q.enqueue_many([np.arange(10)], timeout=0.1)
    assert info.value.rows_enqueued == 4
    assert info.value.message == "Timed out waiting for notification (enqueue_many enqueued 4 of 10 rows)"
    assert q.size() == 4


def test_retry_from_rows_enqueued_duplicates_nothing(background):
    q = sq.FIFOQueue(4, [dtypes.int64], shapes=[[]])
    rows = np.arange(10)
    with pytest.raises(errors.DeadlineExceededError) as info:
        q.enqueue_many([rows], timeout=0.1)
    retry = background(q.enqueue_many, [rows[info.value.rows_enqueued:]])
    got = [int(q.dequeue(timeout=10)) for _ in range(10)]
    retry.result()
    assert got == list(range(10))


def test_enqueue_many_cut_short_by_a_cancelling_close_reports_its_rows(background):
    q = sq.FIFOQueue(2, [dtypes.int64], shapes=[[]])
    call = background(q.enqueue_many, [np.arange(5)])
    wait_until(lambda: q.size() == 2, what="the first rows")
    q.close(cancel_pending_enqueues=True)
    e = call.exception()
    assert isinstance(e, errors.CancelledError)
    assert e.rows_enqueued == 2


def test_other_errors_have_no_rows_enqueued():
    q = sq.FIFOQueue(4, [dtypes.int64], shapes=[[]])
    with pytest.raises(errors.DeadlineExceededError) as info:
        q.dequeue(timeout=0.01)
    assert info.value.rows_enqueued is None
    q2 = sq.FIFOQueue(4, [dtypes.int64], shapes=[[]])
    q2.enqueue_many([np.arange(4)])
    with pytest.raises(errors.DeadlineExceededError) as info:
        q2.enqueue(np.int64(1), timeout=0.01)
    assert info.value.rows_enqueued is None
