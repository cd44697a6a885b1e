"""sluice.queue: TensorFlow's queue behaviour (cases from TF's fifo/padding_fifo/
priority/random_shuffle queue tests), run eagerly, through bind_queue.cc."""

import _thread
import signal
import threading
import time

import numpy as np
import pytest

import sluice
from sluice import errors
from sluice.queue import FIFOQueue, PaddingFIFOQueue, PriorityQueue, RandomShuffleQueue

from conftest import Background, wait_until


# ---- construction -------------------------------------------------------------------

def test_fifo_properties():
    q = FIFOQueue(10, [sluice.int32, "string"], shapes=[(2,), ()], name="Q")
    assert q.dtypes == [sluice.int32, sluice.string]
    assert q.shapes == [(2,), ()]
    assert q.names is None and q.name == "Q"
    assert q.size() == 0 and not q.is_closed()
    q2 = FIFOQueue(10, np.float32)
    assert q2.dtypes == [sluice.float32] and q2.shapes == [None] and q2.name == "fifo_queue"


def test_single_shape_for_single_component():
    assert FIFOQueue(5, sluice.float32, shapes=(3, 2)).shapes == [(3, 2)]
    assert FIFOQueue(5, sluice.float32, shapes=()).shapes == [()]
    assert FIFOQueue(5, sluice.float32, shapes=[[3]]).shapes == [(3,)]


def test_constructor_argument_errors():
    with pytest.raises(ValueError, match="All shapes must be fully defined"):
        FIFOQueue(10, sluice.float32, shapes=[(None, 3)])
    with pytest.raises(ValueError, match="Queue shapes must have the same length as dtypes"):
        FIFOQueue(10, [sluice.float32, sluice.int32], shapes=[(), (), ()])
    with pytest.raises(ValueError, match="same length"):
        FIFOQueue(10, [sluice.float32, sluice.int32], names=["a"])
    with pytest.raises(TypeError):
        FIFOQueue(10, "not_a_dtype")
    with pytest.raises(TypeError, match="Shapes must be"):
        FIFOQueue(10, sluice.float32, shapes="abc")
    with pytest.raises(errors.InvalidArgumentError, match="Empty component types"):
        FIFOQueue(10, [])


def test_padding_fifo_constructor_errors():
    with pytest.raises(ValueError, match="a list of shapes must be provided"):
        PaddingFIFOQueue(10, sluice.int32, shapes=None)
    with pytest.raises(ValueError, match="a list of shapes must be provided"):
        PaddingFIFOQueue(10, sluice.int32, shapes=(None,))
    with pytest.raises(ValueError, match="a list of shapes must be provided"):
        PaddingFIFOQueue(10, sluice.int32, shapes=[None])  # None: unknown rank
    with pytest.raises(ValueError, match="Shapes must be provided for all components"):
        PaddingFIFOQueue(10, [sluice.int32, sluice.int32], shapes=[(None,)])


def test_random_shuffle_min_after_dequeue_errors():
    with pytest.raises(errors.InvalidArgumentError, match="min_after_dequeue -1 must be >= 0"):
        RandomShuffleQueue(10, -1, sluice.int32)
    with pytest.raises(errors.InvalidArgumentError, match="min_after_dequeue 10 must be < capacity 10"):
        RandomShuffleQueue(10, 10, sluice.int32)
    RandomShuffleQueue(-1, 1000, sluice.int32)  # unbounded: any minimum


# ---- enqueue / dequeue -----------------------------------------------------------------

def test_enqueue_dequeue_in_order():
    q = FIFOQueue(10, sluice.float32)
    for v in (10.0, 20.0, 30.0):
        q.enqueue((v,))
    assert q.size() == 3
    out = [q.dequeue() for _ in range(3)]
    assert [float(x) for x in out] == [10.0, 20.0, 30.0]
    assert all(isinstance(x, np.ndarray) and x.shape == () and x.dtype == np.float32 for x in out)


def test_bare_value_for_one_component_list_for_several():
    q = FIFOQueue(10, [sluice.int32, sluice.float32])
    q.enqueue((1, 2.5))
    a, b = q.dequeue()
    assert int(a) == 1 and float(b) == 2.5
    q1 = FIFOQueue(10, sluice.int32, shapes=(3,))
    q1.enqueue(np.array([1, 2, 3]))
    q1.enqueue(([4, 5, 6],))  # a tuple of components
    np.testing.assert_array_equal(q1.dequeue(), [1, 2, 3])
    np.testing.assert_array_equal(q1.dequeue(), [4, 5, 6])


def test_enqueue_many_and_dequeue_many():
    q = FIFOQueue(10, [sluice.int32, sluice.string], shapes=[(2,), ()])
    q.enqueue_many(([[1, 2], [3, 4], [5, 6], [7, 8]], [b"a", b"b", "c", b"d"]))
    assert q.size() == 4
    ints, strs = q.dequeue_many(3)
    np.testing.assert_array_equal(ints, [[1, 2], [3, 4], [5, 6]])
    assert strs.tolist() == [b"a", b"b", b"c"]
    ints, s = q.dequeue()
    np.testing.assert_array_equal(ints, [7, 8])
    assert s == b"d"


def test_dequeue_up_to_returns_short_batch_after_close():
    q = FIFOQueue(10, sluice.int64, shapes=())
    q.enqueue_many([np.arange(5)])
    np.testing.assert_array_equal(q.dequeue_up_to(2), [0, 1])
    q.close()
    np.testing.assert_array_equal(q.dequeue_up_to(10), [2, 3, 4])
    with pytest.raises(errors.OutOfRangeError, match="is closed and has insufficient elements"):
        q.dequeue_up_to(10)


def test_dequeue_many_needs_shapes_and_non_negative_n():
    q = FIFOQueue(10, sluice.int32)
    q.enqueue(1)
    with pytest.raises(errors.InvalidArgumentError, match="require the components to have specified shapes"):
        q.dequeue_many(1)
    with pytest.raises(errors.InvalidArgumentError, match="require the components to have specified shapes"):
        q.dequeue_many(0)
    q2 = FIFOQueue(10, sluice.int32, shapes=())
    with pytest.raises(errors.InvalidArgumentError, match="requested -1 < 0 elements"):
        q2.dequeue_many(-1)


def test_dequeue_many_zero_on_closed_empty_queue():
    q = FIFOQueue(10, [sluice.float32, sluice.string], shapes=[(2, 3), ()])
    q.close()
    a, s = q.dequeue_many(0)
    assert a.shape == (0, 2, 3) and a.dtype == np.float32
    assert s.shape == (0,)


def test_empty_enqueue_many_succeeds_even_when_closed():
    q = FIFOQueue(10, sluice.float32, shapes=(2,))
    q.close()
    q.enqueue_many(np.zeros((0, 2), np.float32))
    assert q.size() == 0


def test_unbounded_capacity():
    q = FIFOQueue(-1, sluice.int32, shapes=())
    q.enqueue_many([np.arange(1000)])
    assert q.size() == 1000


def test_scalar_shapes_and_multiple_dtypes_roundtrip():
    dtypes = [sluice.float16, sluice.float32, sluice.float64, sluice.int8, sluice.int16, sluice.int32,
              sluice.int64, sluice.uint8, sluice.uint16, sluice.uint32, sluice.uint64, sluice.bool,
              sluice.complex64, sluice.complex128, sluice.string]
    q = FIFOQueue(10, dtypes, shapes=[(2,)] * len(dtypes))
    values = [np.array([1, 2], d.as_numpy_dtype) for d in dtypes[:-4]]
    values += [np.array([True, False]), np.array([1 + 2j, 3 - 4j], np.complex64),
               np.array([5j, -1], np.complex128), [b"x", "y\u00e9"]]
    q.enqueue(values)
    q.enqueue_many([np.stack([v, v]) if not isinstance(v, list) else [v, v] for v in values])
    for out in (q.dequeue(), [x[1] for x in q.dequeue_many(2)]):
        for v, o, d in zip(values, out, dtypes):
            if d is sluice.string:
                assert o.tolist() == [b"x", "y\u00e9".encode()]
            else:
                assert o.dtype == np.dtype(d.as_numpy_dtype)
                np.testing.assert_array_equal(o, v)


def test_bool_and_string_scalars():
    q = FIFOQueue(10, [sluice.bool, sluice.string], shapes=[(), ()])
    q.enqueue((True, "text"))
    q.enqueue((np.bool_(False), b"\x00bytes"))
    b, s = q.dequeue()
    assert b.dtype == np.bool_ and bool(b) is True and s == b"text"
    b, s = q.dequeue()
    assert bool(b) is False and s == b"\x00bytes" and type(s) is bytes


def test_strings_of_unknown_shape():
    q = FIFOQueue(10, sluice.string)
    q.enqueue(np.array([["ab", "c"], ["", "def"]]))
    q.enqueue(np.array([b"x", b"yy"]))
    out = q.dequeue()
    assert out.shape == (2, 2) and out.tolist() == [[b"ab", b"c"], [b"", b"def"]]
    assert q.dequeue().tolist() == [b"x", b"yy"]


# ---- value errors (TF's graph-building errors, raised at the call) -------------------

def test_enqueue_type_errors():
    q = FIFOQueue(10, [sluice.int32])
    with pytest.raises(TypeError):
        q.enqueue(1.5)
    with pytest.raises(TypeError):
        q.enqueue("a string")
    with pytest.raises(TypeError, match="out of range"):
        q.enqueue(2**40)
    qs = FIFOQueue(10, sluice.string)
    with pytest.raises(TypeError):
        qs.enqueue(1)
    with pytest.raises(TypeError):
        qs.enqueue(([b"a", 2],))
    qf = FIFOQueue(10, sluice.float32)
    with pytest.raises(TypeError):
        qf.enqueue(1 + 2j)
    qf.enqueue(3)  # an int is a fine float
    assert float(qf.dequeue()) == 3.0


def test_numpy_values_are_cast_as_tensorflow_casts_them():
    # TF's make_tensor_proto casts numpy values with astype (checked against
    # TF 2.21's eager tf.queue): no kind check, C conversions.
    q = FIFOQueue(10, sluice.int32)
    q.enqueue(np.array(1.5))
    q.enqueue(np.float64(2.0))
    q.enqueue(np.array(True))
    assert [int(q.dequeue()) for _ in range(3)] == [1, 2, 1]
    q8 = FIFOQueue(10, sluice.int8, shapes=[(2,)])
    q8.enqueue(np.array([300, -1]))
    assert q8.dequeue().tolist() == [44, -1]
    qf = FIFOQueue(10, sluice.float32)
    qf.enqueue(np.complex64(1 + 2j))  # the imaginary part is dropped
    assert float(qf.dequeue()) == 1.0


def test_python_bool_is_an_int_and_an_empty_list_fits_any_dtype():
    q = FIFOQueue(10, sluice.int32, shapes=[()])
    q.enqueue(True)
    assert int(q.dequeue()) == 1
    q.enqueue_many([[]])  # TF: nothing enqueued, no error
    assert q.size() == 0
    qv = FIFOQueue(10, sluice.int64, shapes=[(0,)])
    qv.enqueue([[]])
    assert qv.dequeue().shape == (0,)


def test_none_is_a_value_error_as_in_tensorflow():
    for dtype in (sluice.int32, sluice.string):
        q = FIFOQueue(10, dtype)
        with pytest.raises(ValueError, match=r"Attempt to convert a value \(None\)"):
            q.enqueue(None)
        assert q.size() == 0


def test_sizes_beyond_int32_are_invalid_argument():
    with pytest.raises(errors.InvalidArgumentError, match="out of range for an int32"):
        FIFOQueue(2**40, sluice.int32)
    q = FIFOQueue(10, sluice.int32, shapes=[()])
    with pytest.raises(errors.InvalidArgumentError, match="out of range for an int32"):
        q.dequeue_many(2**31)
    with pytest.raises(errors.InvalidArgumentError, match="out of range for an int32"):
        q.dequeue_up_to(2**31)


def test_enqueue_shape_errors():
    q = FIFOQueue(10, sluice.float32, shapes=(3, 3))
    with pytest.raises(ValueError, match=r"Shapes \(3, 4\) and \(3, 3\) are incompatible"):
        q.enqueue(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="must have rank at least 1"):
        q.enqueue_many(np.float32(1))
    with pytest.raises(ValueError, match=r"Shapes \(3, 4\) and \(3, 3\) are incompatible"):
        q.enqueue_many(np.zeros((2, 3, 4)))
    q2 = FIFOQueue(10, [sluice.float32, sluice.int32])
    with pytest.raises(ValueError, match="Dimensions 2 and 3 are not compatible"):
        q2.enqueue_many((np.zeros(2), np.zeros(3, np.int32)))
    with pytest.raises(ValueError):
        FIFOQueue(10, sluice.float32).enqueue(([[1, 2], [3]],))  # ragged


def test_wrong_number_of_components():
    q = FIFOQueue(10, [sluice.int32, sluice.int32])
    with pytest.raises(errors.InvalidArgumentError, match="Wrong number of components in tuple. Expected 2, got 1"):
        q.enqueue((1,))
    with pytest.raises(errors.InvalidArgumentError, match="Expected 2, got 3"):
        q.enqueue((1, 2, 3))


# ---- named queues ---------------------------------------------------------------------

def test_named_queue_returns_dicts():
    q = FIFOQueue(10, [sluice.int32, sluice.string], shapes=[(), ()], names=["i", "s"])
    assert q.names == ["i", "s"]
    q.enqueue({"i": 1, "s": b"one"})
    q.enqueue_many({"s": ["two", "three"], "i": [2, 3]})
    e = q.dequeue()
    assert set(e) == {"i", "s"} and int(e["i"]) == 1 and e["s"] == b"one"
    b = q.dequeue_many(2)
    np.testing.assert_array_equal(b["i"], [2, 3])
    assert b["s"].tolist() == [b"two", b"three"]
    q.enqueue({"i": 4, "s": "four"})
    q.close()
    assert set(q.dequeue_up_to(5)) == {"i", "s"}


def test_named_queue_errors():
    q = FIFOQueue(10, [sluice.int32, sluice.string], names=["i", "s"])
    with pytest.raises(ValueError, match="enqueue a dictionary"):
        q.enqueue((1, b"x"))
    with pytest.raises(ValueError, match="match names of Queue"):
        q.enqueue({"i": 1, "x": b"x"})
    with pytest.raises(ValueError, match="match names of Queue"):
        q.enqueue_many({"i": [1]})
    unnamed = FIFOQueue(10, [sluice.int32])
    with pytest.raises(ValueError, match="must have names"):
        unnamed.enqueue({"i": 1})


# ---- blocking, closing, timeouts ------------------------------------------------------------

def test_dequeue_blocks_until_enqueue():
    q = FIFOQueue(10, sluice.float32)
    with pytest.raises(errors.DeadlineExceededError, match="Timed out waiting for notification"):
        q.dequeue(timeout=0.02)
    consumer = Background(q.dequeue)
    q.enqueue(7.0)
    assert float(consumer.result()) == 7.0


def test_enqueue_blocks_while_full():
    q = FIFOQueue(1, sluice.int32, shapes=())
    q.enqueue(1)
    with pytest.raises(errors.DeadlineExceededError):
        q.enqueue(2, timeout=0.02)
    producer = Background(q.enqueue, 3)
    assert int(q.dequeue()) == 1
    producer.result()
    assert int(q.dequeue()) == 3


def test_queue_usable_after_timeout_and_partial_enqueue_many_stays():
    q = FIFOQueue(2, sluice.int32, shapes=())
    with pytest.raises(errors.DeadlineExceededError):
        q.enqueue_many([[1, 2, 3, 4]], timeout=0.02)
    assert q.size() == 2  # the admitted slices stay
    np.testing.assert_array_equal(q.dequeue_many(2), [1, 2])
    q.enqueue(5)
    assert int(q.dequeue()) == 5


def test_timed_out_dequeue_many_puts_held_elements_back():
    q = FIFOQueue(10, sluice.int32, shapes=())
    q.enqueue_many([[1, 2]])
    with pytest.raises(errors.DeadlineExceededError):
        q.dequeue_many(3, timeout=0.02)
    assert q.size() == 2  # sluice restores them (TF drops them)
    np.testing.assert_array_equal(q.dequeue_many(2), [1, 2])


def test_negative_timeout_is_value_error():
    with pytest.raises(ValueError, match="timeout"):
        FIFOQueue(1, sluice.int32).dequeue(timeout=-1)


def test_dequeue_many_larger_than_capacity_collects_across_enqueues():
    q = FIFOQueue(2, sluice.int32, shapes=())
    consumer = Background(q.dequeue_many, 4)
    for i in range(4):
        q.enqueue(i)
    np.testing.assert_array_equal(consumer.result(), [0, 1, 2, 3])


def test_enqueue_to_closed_queue_is_cancelled():
    q = FIFOQueue(10, sluice.float32)
    q.close()
    assert q.is_closed()
    with pytest.raises(errors.CancelledError, match="FIFOQueue 'fifo_queue' is closed."):
        q.enqueue(1.0)
    with pytest.raises(errors.CancelledError, match="is closed"):
        q.enqueue_many([[1.0]])


def test_double_close():
    q = FIFOQueue(10, sluice.float32)
    q.close()
    with pytest.raises(errors.CancelledError, match="is already closed"):
        q.close()
    q.close(cancel_pending_enqueues=True)  # never fails


def test_close_wakes_blocked_dequeues_and_elements_remain():
    q = FIFOQueue(10, sluice.float32, shapes=())
    q.enqueue_many([[10.0, 20.0]])
    blocked = Background(q.dequeue_many, 3)
    wait_until(lambda: q.size() == 0, what="dequeue_many to hold the elements")
    q.close()
    with pytest.raises(errors.OutOfRangeError,
                       match=r"is closed and has insufficient elements \(requested 1, current size 0\)"):
        blocked.result()
    assert q.size() == 2  # put back, in order
    assert float(q.dequeue()) == 10.0 and float(q.dequeue()) == 20.0
    with pytest.raises(errors.OutOfRangeError):
        q.dequeue()


def test_blocked_dequeue_gets_out_of_range_on_close():
    q = FIFOQueue(10, sluice.float32)
    consumers = [Background(q.dequeue) for _ in range(3)]
    q.close()
    for c in consumers:
        with pytest.raises(errors.OutOfRangeError):
            c.result()


def test_close_waits_behind_pending_enqueues():
    q = FIFOQueue(2, sluice.int32, shapes=())
    producer = Background(q.enqueue_many, [[1, 2, 3, 4]])
    wait_until(lambda: q.size() == 2, what="enqueue_many to admit two")
    closer = Background(q.close)
    with pytest.raises(errors.DeadlineExceededError):
        q.close(timeout=0.01)  # queued behind the pending enqueue too; gives up
    assert not q.is_closed()
    out = [int(q.dequeue()) for _ in range(4)]
    assert out == [1, 2, 3, 4]
    producer.result()
    closer.result()
    assert q.is_closed()
    with pytest.raises(errors.OutOfRangeError):
        q.dequeue()


def test_close_with_cancel_fails_pending_enqueues():
    q = FIFOQueue(2, sluice.int32, shapes=())
    producer = Background(q.enqueue_many, [[1, 2, 3, 4]])
    wait_until(lambda: q.size() == 2, what="enqueue_many to admit two")
    q.close(cancel_pending_enqueues=True)
    with pytest.raises(errors.CancelledError, match="Enqueue operation was cancelled"):
        producer.result()
    np.testing.assert_array_equal(q.dequeue_up_to(4), [1, 2])  # admitted slices stay
    with pytest.raises(errors.OutOfRangeError):
        q.dequeue()


def test_parallel_producers_and_consumers_keep_every_element_and_per_producer_order():
    q = FIFOQueue(8, [sluice.int32, sluice.int32], shapes=[(), ()])
    n = 300

    def produce(p):
        for i in range(0, n, 3):
            q.enqueue_many(([p] * 3, [i, i + 1, i + 2]))

    def consume():
        got = []
        try:
            while True:
                p, i = q.dequeue_up_to(5)
                got.extend(zip(p.tolist(), i.tolist()))
        except errors.OutOfRangeError:
            return got

    producers = [Background(produce, p) for p in range(3)]
    consumers = [Background(consume) for _ in range(2)]
    for p in producers:
        p.result()
    q.close()
    seen = [c.result() for c in consumers]
    allpairs = sorted(x for s in seen for x in s)
    assert allpairs == sorted((p, i) for p in range(3) for i in range(n))
    for s in seen:  # each consumer sees each producer's elements in order
        for p in range(3):
            idx = [i for pp, i in s if pp == p]
            assert idx == sorted(idx)


# ---- Ctrl-C -------------------------------------------------------------------------------------

def _interrupt_main_later(method):
    if method == "interrupt_main":
        fire = _thread.interrupt_main
    else:
        def fire():
            signal.raise_signal(signal.SIGINT)
    timer = threading.Timer(0.05, fire)
    timer.start()
    return timer


@pytest.mark.parametrize("method", ["interrupt_main", "raise_signal"])
@pytest.mark.parametrize("op", ["dequeue", "dequeue_many", "enqueue", "close"])
def test_ctrl_c_interrupts_a_blocked_call(method, op):
    assert threading.current_thread() is threading.main_thread()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    q = FIFOQueue(1, sluice.int32, shapes=())
    blocked_producer = None
    if op == "enqueue":
        q.enqueue(1)
    elif op == "close":
        # Admits 1 and waits to admit 2: a pending enqueue the close must wait behind.
        blocked_producer = Background(q.enqueue_many, [[1, 2]])
        wait_until(lambda: q.size() == 1, what="enqueue_many to admit one")
    call = {"dequeue": lambda: q.dequeue(timeout=20), "dequeue_many": lambda: q.dequeue_many(2, timeout=20),
            "enqueue": lambda: q.enqueue(3, timeout=20), "close": lambda: q.close(timeout=20)}[op]
    timer = _interrupt_main_later(method)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        call()
    assert time.monotonic() - start < 5
    timer.join()
    # The queue is still consistent and usable.
    if op == "close":
        q.close(cancel_pending_enqueues=True)
        with pytest.raises(errors.CancelledError):
            blocked_producer.result()
    else:
        assert q.size() == (1 if op == "enqueue" else 0)


# ---- zero copy -------------------------------------------------------------------------------

def test_dequeued_batch_is_a_view_of_the_engine_buffer():
    q = FIFOQueue(10, sluice.float32, shapes=(4,))
    q.enqueue_many(np.arange(12, dtype=np.float32).reshape(3, 4))
    batch = q.dequeue_many(3)
    assert isinstance(batch.base, sluice._core._TensorRef)
    assert not batch.flags.owndata
    assert batch.__array_interface__["data"][0] == batch.base.data_ptr
    assert np.shares_memory(batch, np.asarray(batch.base))
    assert batch.flags.writeable  # nobody else holds this buffer
    np.testing.assert_array_equal(batch, np.arange(12).reshape(3, 4))


def test_small_elements_enqueued_one_by_one_come_out_writable():
    # Singles of up to 1 KiB are coalesced into a staging batch in C++, so
    # what comes out shares that batch; small results are copied out so that
    # Python still owns writable arrays, and the values are right.
    q = FIFOQueue(100, [sluice.float32, sluice.int64], shapes=[(4,), ()])
    for i in range(10):
        q.enqueue((np.full(4, i, np.float32), np.int64(i)))
    one, label = q.dequeue()
    assert one.flags.writeable and label.flags.writeable
    np.testing.assert_array_equal(one, np.zeros(4))
    batch, labels = q.dequeue_many(5)
    assert batch.flags.writeable and labels.flags.writeable
    batch += 1  # in place: does not touch what is still queued
    np.testing.assert_array_equal(labels, np.arange(1, 6))
    np.testing.assert_array_equal(batch[:, 0], np.arange(2, 7))
    q.close()
    rest, _ = q.dequeue_up_to(10)
    np.testing.assert_array_equal(rest[:, 0], np.arange(6, 10))
    # 4 KiB elements (the largest coalesced): a whole 64-row staging batch
    # comes out writable too.
    big = FIFOQueue(100, sluice.float32, shapes=[(1024,)])
    for i in range(70):
        big.enqueue(np.full(1024, i, np.float32))
    batch = big.dequeue_many(64)
    assert batch.flags.writeable
    batch[:] = -1
    np.testing.assert_array_equal(big.dequeue_many(6)[:, 0], np.arange(64, 70))


def test_slices_still_sharing_a_buffer_are_read_only():
    q = FIFOQueue(10, sluice.float32, shapes=(4,))
    q.enqueue_many(np.zeros((3, 4), np.float32))
    first = q.dequeue()  # its buffer is shared with the two slices still queued
    assert isinstance(first.base, sluice._core._TensorRef)
    if not first.flags.writeable:
        with pytest.raises(ValueError):
            first[0] = 1
    rest = q.dequeue_many(2)
    np.testing.assert_array_equal(rest, np.zeros((2, 4)))


def test_enqueue_copies_in():
    q = FIFOQueue(10, sluice.int32, shapes=(3,))
    a = np.array([1, 2, 3], np.int32)
    q.enqueue(a)
    a[:] = 0  # the queued element does not change
    np.testing.assert_array_equal(q.dequeue(), [1, 2, 3])


# ---- shared queues ---------------------------------------------------------------------------------

def test_shared_name_gives_the_same_queue():
    q1 = FIFOQueue(10, sluice.int32, shapes=(), shared_name="test_shared_q")
    q2 = FIFOQueue(10, sluice.int32, shapes=(), shared_name="test_shared_q")
    q1.enqueue(5)
    assert q2.size() == 1 and int(q2.dequeue()) == 5
    with pytest.raises(errors.InvalidArgumentError, match="capacity"):
        FIFOQueue(20, sluice.int32, shapes=(), shared_name="test_shared_q")


# ---- RandomShuffleQueue -----------------------------------------------------------------------------

def _drain(q):
    q.close()
    out = []
    try:
        while True:
            out.append(int(q.dequeue()))
    except errors.OutOfRangeError:
        return out


def test_random_shuffle_is_a_permutation_and_seeded_runs_repeat():
    runs = []
    for seed in (42, 42, 7):
        q = RandomShuffleQueue(100, 0, sluice.int32, shapes=(), seed=seed)
        q.enqueue_many([np.arange(100)])
        runs.append(_drain(q))
    assert sorted(runs[0]) == list(range(100))
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]
    assert runs[0] != list(range(100))


def test_random_shuffle_unseeded_differs():
    orders = []
    for _ in range(2):
        q = RandomShuffleQueue(100, 0, sluice.int32, shapes=())
        q.enqueue_many([np.arange(100)])
        orders.append(_drain(q))
    assert orders[0] != orders[1]


def test_random_shuffle_min_after_dequeue_holds_until_close():
    q = RandomShuffleQueue(10, 3, sluice.int32, shapes=(), seed=1)
    q.enqueue_many([np.arange(4)])
    first = int(q.dequeue())  # 4 > 3: allowed
    with pytest.raises(errors.DeadlineExceededError):
        q.dequeue(timeout=0.02)
    q.close()  # the minimum no longer applies
    rest = q.dequeue_up_to(10).tolist()
    assert sorted(rest + [first]) == [0, 1, 2, 3]
    with pytest.raises(errors.OutOfRangeError):
        q.dequeue()


def test_random_shuffle_dequeue_many_needs_shapes():
    q = RandomShuffleQueue(10, 0, sluice.int32)
    with pytest.raises(errors.InvalidArgumentError, match="RandomShuffleQueue's DequeueMany and DequeueUpTo"):
        q.dequeue_many(1)


# ---- PaddingFIFOQueue ----------------------------------------------------------------------------------

def test_padding_fifo_pads_dequeue_many():
    q = PaddingFIFOQueue(10, [sluice.int32, sluice.string], shapes=[(None,), (None, 2)])
    assert q.shapes == [(None,), (None, 2)]
    q.enqueue(([1], [[b"a", b"b"]]))
    q.enqueue(([1, 2, 3], np.zeros((0, 2), dtype=object)))
    q.enqueue(([4, 5], [[b"c", b"d"], [b"e", b"f"]]))
    ints, strs = q.dequeue()
    np.testing.assert_array_equal(ints, [1])  # unpadded
    ints, strs = q.dequeue_many(2)
    np.testing.assert_array_equal(ints, [[1, 2, 3], [4, 5, 0]])
    assert strs.shape == (2, 2, 2)
    assert strs.tolist() == [[[b"", b""], [b"", b""]], [[b"c", b"d"], [b"e", b"f"]]]


def test_padding_fifo_shape_check():
    q = PaddingFIFOQueue(10, sluice.int32, shapes=[(None, 3)])
    with pytest.raises(ValueError, match="incompatible"):
        q.enqueue(np.zeros((3, 4), np.int32))
    q.enqueue(np.zeros((5, 3), np.int32))
    assert q.dequeue().shape == (5, 3)


# ---- PriorityQueue --------------------------------------------------------------------------------------

def test_priority_queue_smallest_first():
    q = PriorityQueue(10, [sluice.string], shapes=[()])
    assert q.dtypes == [sluice.int64, sluice.string]
    assert q.shapes == [(), ()]
    for p, v in [(3, b"c"), (-1, b"neg"), (2, b"b"), (10, b"j")]:
        q.enqueue((p, v))
    p, v = q.dequeue()
    assert int(p) == -1 and v == b"neg"
    ps, vs = q.dequeue_many(3)
    assert ps.tolist() == [2, 3, 10] and vs.tolist() == [b"b", b"c", b"j"]


def test_priority_queue_enqueue_many_and_names():
    q = PriorityQueue(10, [sluice.int32], shapes=[(2,)], names=["prio", "x"])
    q.enqueue_many({"prio": [5, 1], "x": [[5, 5], [1, 1]]})
    e = q.dequeue()
    assert int(e["prio"]) == 1 and e["x"].tolist() == [1, 1]


def test_priority_must_be_an_integer():
    q = PriorityQueue(10, [sluice.string], shapes=[()])
    with pytest.raises(TypeError):
        q.enqueue((1.5, b"x"))
    with pytest.raises(ValueError, match="incompatible"):
        q.enqueue(([1, 2], b"x"))
    q2 = PriorityQueue(10, [sluice.string])
    with pytest.raises(errors.InvalidArgumentError):
        q2.enqueue(([1, 2], b"x"))


def test_names_and_shapes_for_every_kind():
    rsq = RandomShuffleQueue(10, 2, [sluice.int32, sluice.float32], shapes=[(), (2,)], names=["a", "b"], seed=3)
    pad = PaddingFIFOQueue(10, [sluice.int32], shapes=[(None, 2)], names=["x"])
    pq = PriorityQueue(10, [sluice.int32], names=["p", "v"])
    assert rsq.names == ["a", "b"] and rsq.shapes == [(), (2,)] and rsq.name == "random_shuffle_queue"
    assert pad.names == ["x"] and pad.name == "padding_fifo_queue"
    assert pq.names == ["p", "v"] and pq.shapes == [None, None] and pq.name == "priority_queue"
    rsq.enqueue_many({"a": [1, 2, 3], "b": np.ones((3, 2))})
    assert set(rsq.dequeue()) == {"a", "b"}
    with pytest.raises(ValueError, match="same length as dtypes"):
        PriorityQueue(10, [sluice.int32], names=["v"])  # TF: the priority is named too


def test_blocked_call_in_a_thread_lets_python_run():
    q = FIFOQueue(1, sluice.int32, shapes=())
    consumer = Background(q.dequeue_many, 2)
    counted = sum(1 for _ in range(100000))  # Python work while the consumer waits
    q.enqueue(counted)
    q.enqueue(1)
    assert consumer.result().tolist() == [100000, 1]


# ---- the C++ fast paths (bind_queue.cc's QueueOps) and their fallbacks ------------------
# enqueue/dequeue take the common values in C++; every other value takes the
# Python path, with the same results and errors.

def test_fast_path_values_round_trip():
    x = np.arange(16, dtype=np.float32)
    q = FIFOQueue(10, [sluice.float32, sluice.int64, sluice.string, sluice.bool], shapes=[(16,), (), (), ()])
    q.enqueue((x, 7, "h\u00e9", True))
    q.enqueue([x, -2**63, b"b", False])
    a, i, s, b = q.dequeue()
    assert a.dtype == np.float32 and a.tolist() == x.tolist() and a.flags.writeable
    assert isinstance(a.base, sluice._core._TensorRef)
    assert i.dtype == np.int64 and i.shape == () and int(i) == 7
    assert s == "h\u00e9".encode() and b.dtype == np.bool_ and bool(b)
    assert [v.tolist() if isinstance(v, np.ndarray) else v for v in q.dequeue()] == [x.tolist(), -2**63, b"b", False]
    x[0] = 100  # the queue copied the array
    q.enqueue((x, 1, b"", True))
    assert q.dequeue()[0][0] == 100


def test_fast_path_fallbacks_give_the_same_values():
    base = np.arange(32, dtype=np.float32)
    readonly = np.frombuffer(base[:16].tobytes(), np.float32)
    assert not readonly.flags.writeable

    class Sub(np.ndarray):
        pass

    q = FIFOQueue(10, sluice.float32, shapes=[16])
    first = base[:16]
    for v, expected in ((base[::2], base[::2]), (readonly, first), (first.astype(">f4"), first),
                        (first.view(Sub), first), (first.astype(np.float64), first), (np.arange(16), first),
                        ((list(range(16)),), first), ([first], first)):
        q.enqueue(v)
        out = q.dequeue()
        assert out.dtype == np.float32 and out.flags.c_contiguous and out.flags.writeable
        assert out.tolist() == expected.tolist()


def test_fast_path_wrong_values_raise_as_before():
    q = FIFOQueue(10, sluice.int32, shapes=[2])
    with pytest.raises(TypeError, match="Cannot convert .* to a tensor of dtype int32"):
        q.enqueue(np.array([b"x", b"y"]))
    with pytest.raises(ValueError, match=r"Shapes \(3,\) and \(2,\) are incompatible"):
        q.enqueue(np.array([1, 2, 3], np.int32))
    with pytest.raises(errors.InvalidArgumentError, match="Wrong number of components in tuple. Expected 1, got 2"):
        q.enqueue((np.array([1, 2], np.int32), np.array([1, 2], np.int32)))
    with pytest.raises(ValueError, match="timeout must be a non-negative number or None"):
        q.enqueue(np.array([1, 2], np.int32), timeout=-1)
    with pytest.raises(ValueError, match="Queue must have names to enqueue a dictionary"):
        q.enqueue({"a": np.array([1, 2], np.int32)})
    scalars = FIFOQueue(10, [sluice.int8, sluice.uint8, sluice.bool, sluice.int32])
    for values in ((128, 0, True, 0), (0, -1, True, 0), (0, 0, 1, 0), (0, 0, True, 1.5), (0, 0, True, b"1")):
        with pytest.raises(TypeError, match="Cannot convert"):
            scalars.enqueue(values)
    assert q.size() == 0 and scalars.size() == 0


def test_fast_path_python_scalars_convert_as_numpy_does():
    q = FIFOQueue(10, [sluice.float32, sluice.float64, sluice.uint64, sluice.float32])
    q.enqueue((2**24 + 1, 2**53 + 1, 2**64 - 1, 0.1))
    a, b, c, d = q.dequeue()
    assert a == np.float32(2**24 + 1) and b == np.float64(2**53 + 1)
    assert c.dtype == np.uint64 and int(c) == 2**64 - 1 and d == np.float32(0.1)
    with pytest.warns(RuntimeWarning, match="overflow"):
        q.enqueue((1e300, 1e300, 0, float("nan")))
    a, b, _, d = q.dequeue()
    assert np.isinf(a) and b == 1e300 and np.isnan(d)


def test_fast_path_dicts_for_named_queues():
    import collections
    x = np.arange(3, dtype=np.float32)
    q = FIFOQueue(10, [sluice.float32, sluice.int32], shapes=[(3,), ()], names=["a", "b"])
    q.enqueue({"b": 1, "a": x})
    q.enqueue(collections.OrderedDict(a=x, b=2))
    for b in (1, 2):
        out = q.dequeue()
        assert list(out) == ["a", "b"] and out["a"].tolist() == x.tolist() and int(out["b"]) == b
    with pytest.raises(ValueError, match="Keys in dictionary to enqueue do not match names of Queue"):
        q.enqueue({"a": x})
    with pytest.raises(ValueError, match="Keys in dictionary to enqueue do not match names of Queue"):
        q.enqueue({"a": x, "b": 1, "c": 2})
    with pytest.raises(ValueError, match="You must enqueue a dictionary in a Queue with names"):
        q.enqueue((x, 1))
    dup = FIFOQueue(10, [sluice.int32, sluice.int32], names=["a", "a"])
    with pytest.raises(ValueError, match="Keys in dictionary"):
        dup.enqueue({"a": 1})
    many = q.dequeue_many(0)
    assert list(many) == ["a", "b"] and many["a"].shape == (0, 3)


def test_fast_path_enqueue_many_fallbacks():
    q = FIFOQueue(10, [sluice.float32, sluice.int32], shapes=[(2,), ()])
    q.enqueue_many((np.ones((2, 2), np.float32), np.arange(2, dtype=np.int32)))
    q.enqueue_many((np.ones((4, 4), np.float64)[:2, ::2], [5, 6]))  # converted on the Python path
    a, b = q.dequeue_many(4)
    assert a.dtype == np.float32 and a.shape == (4, 2) and b.tolist() == [0, 1, 5, 6]
    with pytest.raises(ValueError, match="Dimensions 2 and 3 are not compatible"):
        q.enqueue_many((np.ones((2, 2), np.float32), np.arange(3, dtype=np.int32)))
    with pytest.raises(ValueError, match="must have rank at least 1"):
        q.enqueue_many((np.float32(1), np.int32(1)))
    with pytest.raises(ValueError, match=r"Shapes \(3,\) and \(2,\) are incompatible"):
        q.enqueue_many((np.ones((2, 3), np.float32), np.arange(2, dtype=np.int32)))
    assert q.size() == 0


def test_nonblocking_attempts_have_no_side_effects():
    x = np.arange(4, dtype=np.float32)
    q = FIFOQueue(1, sluice.float32, shapes=[4])
    q.enqueue(x)
    with pytest.raises(errors.DeadlineExceededError):
        q.enqueue(x + 1, timeout=0)
    assert q.size() == 1 and q.dequeue().tolist() == x.tolist()
    with pytest.raises(errors.DeadlineExceededError):
        q.dequeue(timeout=0)
    rsq = RandomShuffleQueue(10, 2, sluice.float32, shapes=[4], seed=5)
    rsq.enqueue(x)
    rsq.enqueue(x)
    with pytest.raises(errors.DeadlineExceededError):
        rsq.dequeue(timeout=0.01)  # min_after_dequeue holds both back
    assert rsq.size() == 2
    rsq.close()
    assert rsq.dequeue().tolist() == x.tolist() and rsq.size() == 1


def test_empty_and_bfloat16_results():
    q = FIFOQueue(10, sluice.float32, shapes=[0, 3])
    q.enqueue(np.ones((0, 3), np.float32))
    out = q.dequeue()
    assert out.shape == (0, 3) and out.dtype == np.float32 and out.flags.writeable
    b = FIFOQueue(10, sluice.bfloat16, shapes=[2])
    b.enqueue(np.array([1.5, -2.0], np.float32))
    out = b.dequeue()
    assert out.astype(np.float32).tolist() == [1.5, -2.0]
    assert out.dtype == (sluice.bfloat16.as_numpy_dtype if sluice._core.has_ml_dtypes else np.float32)
    with pytest.raises(TypeError):
        sluice._core._TensorRef()


def test_queue_ops_entry_points_check_their_arguments():
    q = FIFOQueue(10, sluice.float32, shapes=[])
    with pytest.raises(TypeError):
        q.enqueue(1.0, timeout="1")
    with pytest.raises(TypeError, match="Cannot convert"):
        q.enqueue("zz", timeout="1")  # the value's error first, as before
    with pytest.raises(TypeError, match="timeout must be a non-negative number or None"):
        q.dequeue(timeout=[1])
    q.enqueue(1.0, timeout=True)  # a number, as before: 1 second
    assert float(q.dequeue(timeout=np.float64(0.5))) == 1.0
    ops = sluice._core.QueueOps.__new__(sluice._core.QueueOps)
    with pytest.raises(TypeError, match="not initialised"):
        ops.dequeue(None)
    with pytest.raises(TypeError, match="takes exactly 2 arguments"):
        q._ops.enqueue(1.0)
