"""Tests of sluice.io's queue-fed readers (tf.compat.v1.ReaderBase and its
subclasses) reading file names from a sluice.queue.FIFOQueue."""

import _thread
import gzip
import signal
import threading
import time

import numpy as np
import pytest

import sluice
from sluice import errors
from sluice import io as sio


def filename_queue(*names, close=True, capacity=32):
    q = sluice.queue.FIFOQueue(capacity, [sluice.string])
    if names:
        q.enqueue_many([[str(n) for n in names]])
    if close:
        q.close()
    return q


def write_records(path, records, compression=None):
    with sio.TFRecordWriter(str(path), compression) as w:
        for r in records:
            w.write(r)
    return str(path)


def key(path, n):
    return ("%s:%d" % (path, n)).encode()


def drain(reader, q):
    out = []
    while True:
        try:
            out.append(reader.read(q))
        except errors.OutOfRangeError:
            return out


@pytest.fixture
def two_files(tmp_path):
    a = write_records(tmp_path / "a", [b"a0", b"a1", b"a2"])
    empty = write_records(tmp_path / "empty", [])
    b = write_records(tmp_path / "b", [b"b0"])
    return a, empty, b


# ---- TFRecordReader ------------------------------------------------------------------

class TestTFRecordReader:
    def test_keys_are_file_and_offset_and_empty_files_are_skipped(self, two_files):
        a, empty, b = two_files
        reader = sio.TFRecordReader()
        got = drain(reader, filename_queue(a, empty, b))
        assert got == [(key(a, 0), b"a0"), (key(a, 18), b"a1"), (key(a, 36), b"a2"), (key(b, 0), b"b0")]
        assert reader.num_records_produced() == 4
        assert reader.num_work_units_completed() == 3

    def test_read_up_to_stops_at_the_end_of_a_file(self, two_files):
        a, empty, b = two_files
        reader = sio.TFRecordReader()
        q = filename_queue(a, empty, b)
        keys, values = reader.read_up_to(q, 2)
        assert isinstance(keys, np.ndarray) and keys.dtype == object and keys.shape == (2,)
        assert keys.tolist() == [key(a, 0), key(a, 18)] and values.tolist() == [b"a0", b"a1"]
        keys, values = reader.read_up_to(q, 10)
        assert values.tolist() == [b"a2"]
        keys, values = reader.read_up_to(q, 10)
        assert keys.tolist() == [key(b, 0)] and values.tolist() == [b"b0"]
        with pytest.raises(errors.OutOfRangeError):
            reader.read_up_to(q, 10)

    def test_read_up_to_zero_returns_empty_arrays(self, two_files):
        keys, values = sio.TFRecordReader().read_up_to(filename_queue(two_files[0]), 0)
        assert keys.shape == values.shape == (0,)

    def test_negative_read_up_to_is_invalid_argument(self, two_files):
        with pytest.raises(errors.InvalidArgumentError):
            sio.TFRecordReader().read_up_to(filename_queue(two_files[0]), -1)

    @pytest.mark.parametrize("compression", ["ZLIB", "GZIP"])
    def test_compressed_files_with_options(self, tmp_path, compression):
        path = write_records(tmp_path / "c", [b"x", b"yy"], compression)
        reader = sio.TFRecordReader(options=sio.TFRecordOptions(compression))
        assert drain(reader, filename_queue(path)) == [(key(path, 0), b"x"), (key(path, 17), b"yy")]

    def test_corrupt_record_is_data_loss_and_the_reader_stays_on_it(self, tmp_path):
        path = write_records(tmp_path / "c", [b"good", b"bad!", b"more"])
        data = bytearray(open(path, "rb").read())
        data[20 + 12 + 1] ^= 1
        open(path, "wb").write(bytes(data))
        reader = sio.TFRecordReader()
        q = filename_queue(path)
        assert reader.read(q) == (key(path, 0), b"good")
        for _ in range(2):
            with pytest.raises(errors.DataLossError, match="record 1") as info:
                reader.read(q)
            assert info.value.experimental_payloads["offset"] == b"20"

    def test_ignore_errors_skips_and_counts(self, tmp_path):
        path = write_records(tmp_path / "c", [b"good", b"bad!", b"more"])
        data = bytearray(open(path, "rb").read())
        data[20 + 12 + 1] ^= 1
        open(path, "wb").write(bytes(data))
        reader = sio.TFRecordReader(ignore_errors=True)
        assert [v for _, v in drain(reader, filename_queue(path))] == [b"good", b"more"]
        assert (reader.corruptions_skipped, reader.records_skipped, reader.bytes_skipped) == (1, 1, 20)

    def test_serialize_state_is_unimplemented(self, two_files):
        reader = sio.TFRecordReader()
        assert not reader.supports_serialize
        with pytest.raises(errors.UnimplementedError):
            reader.serialize_state()
        with pytest.raises(errors.UnimplementedError):
            reader.restore_state(b"")

    def test_invalid_compression_is_value_error(self):
        with pytest.raises(ValueError):
            sio.TFRecordReader(options="BZIP2")


# ---- the filename queue -----------------------------------------------------------------

class TestFilenameQueue:
    def test_closed_drained_queue_is_out_of_range_again_and_again(self):
        reader = sio.IdentityReader()
        q = filename_queue()
        for _ in range(2):
            with pytest.raises(errors.OutOfRangeError, match="closed"):
                reader.read(q)

    def test_blocked_read_wakes_with_out_of_range_when_the_queue_closes(self, background):
        reader = sio.TextLineReader()
        q = filename_queue(close=False)
        call = background(reader.read, q)
        call.thread.join(0.05)
        assert not call.done()  # blocked on the empty, open queue
        q.close()
        assert isinstance(call.exception(), errors.OutOfRangeError)

    def test_blocked_read_wakes_when_a_file_arrives(self, tmp_path, background):
        path = tmp_path / "t.txt"
        path.write_bytes(b"hello\n")
        reader = sio.TextLineReader()
        q = filename_queue(close=False)
        call = background(reader.read, q)
        q.enqueue(str(path))
        assert call.result() == (key(path, 1), b"hello")

    def test_timeout_is_deadline_exceeded(self):
        with pytest.raises(errors.DeadlineExceededError):
            sio.IdentityReader().read(filename_queue(close=False), timeout=0.01)

    @pytest.mark.parametrize("op", ["read", "read_up_to"])
    def test_ctrl_c_interrupts_a_blocked_read(self, op):
        assert threading.current_thread() is threading.main_thread()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        reader = sio.IdentityReader()
        q = filename_queue(close=False)
        timer = threading.Timer(0.05, _thread.interrupt_main)
        timer.start()
        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            if op == "read":
                reader.read(q, timeout=20)
            else:
                reader.read_up_to(q, 3, timeout=20)
        assert time.monotonic() - start < 5
        timer.join()
        q.enqueue("after")  # the reader still works
        assert reader.read(q) == (b"after", b"after")

    def test_missing_file_is_not_found_and_the_reader_moves_on(self, tmp_path, two_files):
        a = two_files[0]
        missing = str(tmp_path / "missing")
        reader = sio.TFRecordReader()
        q = filename_queue(missing, a)
        with pytest.raises(errors.NotFoundError, match="missing"):
            reader.read(q)
        assert reader.read(q) == (key(a, 0), b"a0")

    def test_queue_of_ints_is_invalid_argument(self):
        q = sluice.queue.FIFOQueue(4, [sluice.int32])
        q.enqueue(1)
        with pytest.raises(errors.InvalidArgumentError, match="string"):
            sio.IdentityReader().read(q)

    def test_a_non_queue_is_type_error(self):
        with pytest.raises(TypeError, match="queue"):
            sio.IdentityReader().read(["a"])

    def test_queue_ref_is_accepted(self):
        q = filename_queue("unit")
        assert sio.IdentityReader().read(q.queue_ref) == (b"unit", b"unit")

    def test_two_threads_two_readers_read_every_record_once(self, tmp_path):
        paths = [write_records(tmp_path / ("f%d" % i), [b"%d-%d" % (i, j) for j in range(200)])
                 for i in range(8)]
        q = filename_queue(*paths)
        results = [[], []]

        def work(k):
            reader = sio.TFRecordReader()
            while True:
                try:
                    keys, values = reader.read_up_to(q, 7)
                except errors.OutOfRangeError:
                    return
                results[k].extend(zip(keys.tolist(), values.tolist()))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        got = results[0] + results[1]
        expected = {b"%d-%d" % (i, j) for i in range(8) for j in range(200)}
        assert len(got) == len(expected) and {v for _, v in got} == expected
        assert len({k for k, _ in got}) == len(got)


# ---- counters, reset, state -------------------------------------------------------------

class TestStateAndCounters:
    def test_reset_zeroes_counters_and_drops_the_current_file(self, two_files):
        a, _, b = two_files
        reader = sio.TFRecordReader()
        q = filename_queue(a, b)
        reader.read(q)
        reader.reset()
        assert (reader.num_records_produced(), reader.num_work_units_completed()) == (0, 0)
        assert reader.read(q) == (key(b, 0), b"b0")

    def test_identity_reader_state_round_trips(self):
        reader = sio.IdentityReader(name="ident")
        assert reader.supports_serialize and reader.name == "ident"
        q = filename_queue("u0", "u1", "u2")
        assert reader.read(q) == (b"u0", b"u0")
        reader.read(q)
        state = reader.serialize_state()
        assert isinstance(state, bytes)
        reader.read(q)
        assert reader.num_records_produced() == 3
        reader.restore_state(state)
        assert (reader.num_records_produced(), reader.num_work_units_completed()) == (2, 2)

    def test_garbage_state_is_invalid_argument_and_resets(self):
        reader = sio.WholeFileReader()
        reader.read(filename_queue(__file__))
        with pytest.raises(errors.InvalidArgumentError, match="Could not parse state"):
            reader.restore_state(b"\x01garbage")
        assert reader.num_records_produced() == 0

    def test_state_moves_between_readers(self):
        first = sio.IdentityReader()
        first.read(filename_queue("x"))
        second = sio.IdentityReader()
        second.restore_state(first.serialize_state())
        assert second.num_records_produced() == 1

    def test_default_name_is_the_type_name(self):
        assert sio.TextLineReader().name == "TextLineReader"
        assert "TextLineReader" in repr(sio.TextLineReader())


# ---- the other readers ---------------------------------------------------------------------

class TestTextLineReader:
    def test_lines_keys_crlf_and_last_line_without_newline(self, tmp_path):
        path = tmp_path / "t.csv"
        path.write_bytes(b"header\r\none\r\n\ntwo\nthree")
        reader = sio.TextLineReader(skip_header_lines=1)
        got = drain(reader, filename_queue(path))
        assert got == [(key(path, 2), b"one"), (key(path, 3), b""), (key(path, 4), b"two"),
                       (key(path, 5), b"three")]

    def test_skip_header_lines_applies_to_every_file(self, tmp_path):
        (tmp_path / "a").write_bytes(b"h\n1\n")
        (tmp_path / "b").write_bytes(b"h\n2\n")
        values = [v for _, v in drain(sio.TextLineReader(1), filename_queue(tmp_path / "a", tmp_path / "b"))]
        assert values == [b"1", b"2"]

    def test_negative_skip_is_invalid_argument(self):
        with pytest.raises(errors.InvalidArgumentError):
            sio.TextLineReader(skip_header_lines=-1)


class TestFixedLengthRecordReader:
    def test_header_footer_and_keys(self, tmp_path):
        path = tmp_path / "f.bin"
        path.write_bytes(b"HH" + b"aaabbbccc" + b"dd" + b"FFF")  # "dd" is a partial record
        reader = sio.FixedLengthRecordReader(3, header_bytes=2, footer_bytes=3)
        got = drain(reader, filename_queue(path))
        assert got == [(key(path, 0), b"aaa"), (key(path, 1), b"bbb"), (key(path, 2), b"ccc")]

    def test_file_shorter_than_the_header_is_skipped(self, tmp_path):
        (tmp_path / "short").write_bytes(b"H")
        (tmp_path / "ok").write_bytes(b"HHHxy")
        reader = sio.FixedLengthRecordReader(2, header_bytes=3)
        got = drain(reader, filename_queue(tmp_path / "short", tmp_path / "ok"))
        assert got == [(key(tmp_path / "ok", 0), b"xy")]
        assert reader.num_work_units_completed() == 2

    def test_hop_bytes_overlaps_records(self, tmp_path):
        path = tmp_path / "f.bin"
        path.write_bytes(b"0123456")
        got = [v for _, v in drain(sio.FixedLengthRecordReader(3, hop_bytes=2), filename_queue(path))]
        assert got == [b"012", b"234", b"456"]

    def test_gzip_encoding_reads_decompressed_positions(self, tmp_path):
        path = tmp_path / "f.gz"
        path.write_bytes(gzip.compress(b"H" + b"xyzw" * 3))
        got = [v for _, v in drain(sio.FixedLengthRecordReader(4, 1, encoding="GZIP"), filename_queue(path))]
        assert got == [b"xyzw"] * 3

    @pytest.mark.parametrize("kwargs", [dict(record_bytes=-1), dict(record_bytes=2, header_bytes=-1),
                                        dict(record_bytes=0), dict(record_bytes=2, encoding="BZ2")])
    def test_bad_arguments_are_invalid_argument(self, kwargs):
        with pytest.raises(errors.InvalidArgumentError):
            sio.FixedLengthRecordReader(**kwargs)


class TestWholeFileReader:
    def test_key_is_the_file_name_and_value_its_bytes(self, tmp_path):
        (tmp_path / "a").write_bytes(b"\x00\x01payload")
        (tmp_path / "b").write_bytes(b"")
        got = drain(sio.WholeFileReader(), filename_queue(tmp_path / "a", tmp_path / "b"))
        assert got == [(str(tmp_path / "a").encode(), b"\x00\x01payload"), (str(tmp_path / "b").encode(), b"")]

    def test_missing_file_is_not_found_then_skipped(self, tmp_path):
        (tmp_path / "a").write_bytes(b"A")
        reader = sio.WholeFileReader()
        q = filename_queue(tmp_path / "missing", tmp_path / "a")
        with pytest.raises(errors.NotFoundError):
            reader.read(q)
        assert reader.read(q)[1] == b"A"
