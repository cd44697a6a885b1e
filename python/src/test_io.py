"""Tests of sluice.io's TFRecord files: TFRecordOptions, TFRecordWriter,
tf_record_iterator and TFRecordIndex (bind_io.cc, sluice/io.py)."""

import gzip
import os
import struct
import threading
import zlib

import numpy as np
import pytest

import sluice
from sluice import errors
from sluice import io as sio

COMPRESSIONS = ["", "ZLIB", "GZIP"]


def write_records(path, records, options=None, **kwargs):
    with sio.TFRecordWriter(path, options, **kwargs) as w:
        for r in records:
            w.write(r)
    return str(path)


def read_all(path, options=None, **kwargs):
    return list(sio.tf_record_iterator(str(path), options, **kwargs))


def frame_offsets(records):
    """Offset of each record in an uncompressed file holding `records`."""
    offsets, pos = [], 0
    for r in records:
        offsets.append(pos)
        pos += 16 + len(r)
    return offsets


# ---- pure-Python CRC32C (Castagnoli, reflected polynomial 0x82F63B78) ---------

def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked_crc(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


# ---- options ----------------------------------------------------------------------

class TestOptions:
    @pytest.mark.parametrize("value,expected", [
        (None, ""), ("", ""), ("ZLIB", "ZLIB"), ("GZIP", "GZIP"),
        (sio.TFRecordCompressionType.NONE, ""), (sio.TFRecordCompressionType.ZLIB, "ZLIB"),
        (sio.TFRecordCompressionType.GZIP, "GZIP"),
        (sio.TFRecordOptions("GZIP"), "GZIP"), (sio.TFRecordOptions(), ""),
    ])
    def test_compression_type_string_accepts_tf_spellings(self, value, expected):
        assert sio.TFRecordOptions.get_compression_type_string(value) == expected

    @pytest.mark.parametrize("bad", ["gzip", "BZ2", 7])
    def test_invalid_compression_type_is_value_error(self, bad):
        with pytest.raises(ValueError, match="Not a valid compression_type"):
            sio.TFRecordOptions(bad)

    def test_options_keep_the_given_values(self):
        o = sio.TFRecordOptions(sio.TFRecordCompressionType.ZLIB, compression_level=3, mem_level=8)
        assert o.compression_type == sio.TFRecordCompressionType.ZLIB
        assert (o.compression_level, o.mem_level, o.window_bits) == (3, 8, None)

    @pytest.mark.parametrize("kwargs", [dict(window_bits=20), dict(compression_level=10), dict(mem_level=0),
                                        dict(compression_strategy=9), dict(input_buffer_size=0),
                                        dict(compression_method=9)])
    def test_out_of_range_zlib_option_is_invalid_argument(self, tmp_path, kwargs):
        with pytest.raises(errors.InvalidArgumentError):
            sio.TFRecordWriter(str(tmp_path / "f"), sio.TFRecordOptions("ZLIB", **kwargs))

    def test_compression_level_changes_the_compressed_bytes(self, tmp_path):
        records = [bytes(range(256)) * 40] * 4
        fast = write_records(tmp_path / "a", records, sio.TFRecordOptions("ZLIB", compression_level=0))
        best = write_records(tmp_path / "b", records, sio.TFRecordOptions("ZLIB", compression_level=9))
        assert os.path.getsize(fast) > os.path.getsize(best)
        assert read_all(fast, "ZLIB") == read_all(best, "ZLIB") == records


# ---- writer + iterator round trips -----------------------------------------------

class TestRoundTrip:
    @pytest.mark.parametrize("compression", COMPRESSIONS)
    def test_records_round_trip(self, tmp_path, compression):
        records = [b"", b"a", b"\x00" * 7, bytes(range(256)), b"last"]
        path = write_records(tmp_path / "f", records, compression)
        assert read_all(path, compression) == records

    @pytest.mark.parametrize("compression", COMPRESSIONS)
    def test_only_empty_records_round_trip(self, tmp_path, compression):
        path = write_records(tmp_path / "f", [b""] * 3, compression)
        assert read_all(path, compression) == [b""] * 3

    @pytest.mark.parametrize("compression", COMPRESSIONS)
    def test_empty_file_has_no_records(self, tmp_path, compression):
        path = write_records(tmp_path / "f", [], compression)
        assert read_all(path, compression) == []

    @pytest.mark.parametrize("compression", COMPRESSIONS)
    def test_one_mib_records_round_trip(self, tmp_path, compression):
        rng = np.random.default_rng(1)
        records = [rng.integers(0, 256, 1 << 20, dtype=np.uint8).tobytes(), b"x" * (1 << 20)]
        path = write_records(tmp_path / "f", records, compression)
        assert read_all(path, compression) == records

    @pytest.mark.parametrize("compression", COMPRESSIONS)
    def test_many_small_records_round_trip(self, tmp_path, compression):
        records = [b"%d" % i for i in range(20000)]
        path = write_records(tmp_path / "f", records, compression)
        assert read_all(path, compression) == records

    def test_str_and_buffers_are_written_as_bytes(self, tmp_path):
        path = write_records(tmp_path / "f", ["h\u00e9", bytearray(b"ba"), memoryview(b"mv"),
                                              np.arange(3, dtype=np.uint8)])
        assert read_all(path) == ["h\u00e9".encode(), b"ba", b"mv", b"\x00\x01\x02"]

    def test_non_bytes_record_is_type_error(self, tmp_path):
        with sio.TFRecordWriter(str(tmp_path / "f")) as w:
            with pytest.raises(TypeError, match="bytes"):
                w.write(12)

    def test_uncompressed_layout_is_tfrecord_framing(self, tmp_path):
        path = write_records(tmp_path / "f", [b"foo"])
        # Apache Beam's FOO_RECORD_BASE64, written by TensorFlow's writer.
        assert open(path, "rb").read() == bytes.fromhex("0300000000000000b099490e666f6f618abefe")

    def test_zlib_file_is_zlib_compress_of_the_plain_file(self, tmp_path):
        records = [b"record %d" % i for i in range(50)]
        plain = open(write_records(tmp_path / "p", records), "rb").read()
        packed = open(write_records(tmp_path / "z", records, "ZLIB"), "rb").read()
        assert zlib.decompress(packed) == plain
        assert packed == zlib.compress(plain)

    def test_gzip_file_decompresses_to_the_plain_file(self, tmp_path):
        records = [b"record %d" % i for i in range(50)]
        plain = open(write_records(tmp_path / "p", records), "rb").read()
        packed = open(write_records(tmp_path / "g", records, "GZIP"), "rb").read()
        assert packed[:2] == b"\x1f\x8b"
        assert gzip.decompress(packed) == plain

    def test_reading_a_python_zlib_file(self, tmp_path):
        records = [b"a", b"bb", b""]
        plain = open(write_records(tmp_path / "p", records), "rb").read()
        (tmp_path / "z").write_bytes(zlib.compress(plain, 9))
        assert read_all(tmp_path / "z", sio.TFRecordCompressionType.ZLIB) == records

    def test_path_like_paths(self, tmp_path):
        path = tmp_path / "f"
        write_records(path, [b"x"])
        assert read_all(path) == [b"x"]
        assert list(sio.tf_record_iterator(os.fsencode(path))) == [b"x"]


# ---- writer behaviour --------------------------------------------------------------

class TestWriter:
    def test_write_after_close_is_failed_precondition(self, tmp_path):
        w = sio.TFRecordWriter(str(tmp_path / "f"))
        w.close()
        with pytest.raises(errors.FailedPreconditionError, match="Writer is closed"):
            w.write(b"x")
        with pytest.raises(errors.FailedPreconditionError, match="Writer is closed"):
            w.flush()

    def test_close_twice_is_a_no_op(self, tmp_path):
        w = sio.TFRecordWriter(str(tmp_path / "f"))
        w.write(b"x")
        w.close()
        w.close()
        assert read_all(tmp_path / "f") == [b"x"]

    def test_context_manager_closes_on_exception(self, tmp_path):
        with pytest.raises(RuntimeError):
            with sio.TFRecordWriter(str(tmp_path / "f"), "GZIP") as w:
                w.write(b"kept")
                raise RuntimeError("boom")
        assert read_all(tmp_path / "f", "GZIP") == [b"kept"]

    def test_flush_makes_records_readable_before_close(self, tmp_path):
        w = sio.TFRecordWriter(str(tmp_path / "f"))
        w.write(b"one")
        w.flush()
        assert read_all(tmp_path / "f") == [b"one"]
        w.close()

    def test_sync_flush_makes_compressed_records_readable(self, tmp_path):
        w = sio.TFRecordWriter(str(tmp_path / "f"), sio.TFRecordOptions("ZLIB", flush_mode=zlib.Z_SYNC_FLUSH))
        w.write(b"one")
        w.flush()
        data = (tmp_path / "f").read_bytes()
        plain = zlib.decompressobj().decompress(data)
        assert plain[12:15] == b"one"
        w.close()

    def test_counters_follow_writes(self, tmp_path):
        with sio.TFRecordWriter(str(tmp_path / "f")) as w:
            w.write(b"abc")
            w.write(b"")
            assert (w.records_written, w.offset) == (2, 19 + 16)

    def test_missing_directory_is_not_found(self, tmp_path):
        with pytest.raises(errors.NotFoundError):
            sio.TFRecordWriter(str(tmp_path / "no" / "f"))

    def test_threads_sharing_a_writer_lose_no_record(self, tmp_path):
        w = sio.TFRecordWriter(str(tmp_path / "f"))
        big = 70 << 10  # above the GIL-free threshold

        def work(t):
            for i in range(50):
                w.write(bytes([t]) * (big if i % 5 == 0 else 10) + b"%d" % i)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        w.close()
        got = read_all(tmp_path / "f")
        assert len(got) == 200
        expected = {bytes([t]) * (big if i % 5 == 0 else 10) + b"%d" % i for t in range(4) for i in range(50)}
        assert set(got) == expected


# ---- CRC independence -----------------------------------------------------------------

class TestCrc:
    def test_python_crc32c_matches_published_vectors(self):
        assert crc32c(b"123456789") == 0xE3069283
        assert crc32c(b"\x00" * 32) == 0x8A9136AA
        assert masked_crc(b"foo") == 0xFEBE8A61
        assert masked_crc(struct.pack("<Q", 3)) == 0x0E4999B0

    def test_the_engines_masked_crc32c_matches_python(self):
        from sluice import _core
        for data in (b"", b"foo", struct.pack("<Q", 3), bytes(range(256)) * 3):
            assert _core.masked_crc32c(data) == masked_crc(data)

    def test_every_crc_of_a_written_file_matches_python(self, tmp_path):
        records = [b"", b"foo", bytes(range(256)) * 3, b"\xff" * 1000]
        data = open(write_records(tmp_path / "f", records), "rb").read()
        pos = 0
        for r in records:
            (length,) = struct.unpack_from("<Q", data, pos)
            assert length == len(r)
            (len_crc,) = struct.unpack_from("<I", data, pos + 8)
            assert len_crc == masked_crc(data[pos:pos + 8])
            assert data[pos + 12:pos + 12 + length] == r
            (data_crc,) = struct.unpack_from("<I", data, pos + 12 + length)
            assert data_crc == masked_crc(r)
            pos += 16 + length
        assert pos == len(data)


# ---- corruption ------------------------------------------------------------------------

RECORDS = [b"r0" * 5, b"r1" * 6, b"r2" * 7, b"r3" * 8]
OFFSETS = frame_offsets(RECORDS)


def corrupted(tmp_path, mutate, compression=""):
    path = write_records(tmp_path / "f", RECORDS, compression)
    data = bytearray(open(path, "rb").read())
    data = mutate(data)
    with open(path, "wb") as f:
        f.write(bytes(data))
    return path


def flip(pos):
    def mutate(data):
        data[pos] ^= 0x40
        return data
    return mutate


def expect_data_loss(path, good, message_parts, record, offset, compression=""):
    it = sio.tf_record_iterator(path, compression)
    got = []
    with pytest.raises(errors.DataLossError) as info:
        for r in it:
            got.append(r)
    assert got == good
    e = info.value
    for part in message_parts:
        assert part in e.message
    payloads = e.experimental_payloads
    assert payloads["file"] == path.encode()
    if record is not None:
        assert payloads["record"] == str(record).encode()
    assert payloads["offset"] == str(offset).encode()
    return it, e


class TestCorruption:
    def test_flipped_data_byte_names_file_record_and_offset(self, tmp_path):
        path = corrupted(tmp_path, flip(OFFSETS[1] + 12 + 3))
        expect_data_loss(path, RECORDS[:1], ["corrupted record at %d" % (OFFSETS[1] + 12), path,
                                            "record 1", "data checksum"], 1, OFFSETS[1])

    def test_flipped_length_byte_is_data_loss_at_the_record(self, tmp_path):
        path = corrupted(tmp_path, flip(OFFSETS[2] + 1))
        expect_data_loss(path, RECORDS[:2], ["corrupted record at %d" % OFFSETS[2], path, "record 2"],
                         2, OFFSETS[2])

    def test_flipped_length_crc_is_data_loss(self, tmp_path):
        path = corrupted(tmp_path, flip(OFFSETS[0] + 9))
        expect_data_loss(path, [], ["corrupted record at 0", "record 0", "length checksum"], 0, 0)

    def test_flipped_data_crc_is_data_loss(self, tmp_path):
        path = corrupted(tmp_path, flip(OFFSETS[3] + 12 + len(RECORDS[3])))
        expect_data_loss(path, RECORDS[:3], ["record 3", "data checksum"], 3, OFFSETS[3])

    def test_truncation_mid_record_is_data_loss(self, tmp_path):
        path = corrupted(tmp_path, lambda d: d[:OFFSETS[3] + 14])
        expect_data_loss(path, RECORDS[:3], ["truncated record at %d" % OFFSETS[3], path], 3, OFFSETS[3])

    def test_error_repeats_on_the_next_call(self, tmp_path):
        path = corrupted(tmp_path, flip(OFFSETS[1] + 13))
        it, _ = expect_data_loss(path, RECORDS[:1], ["record 1"], 1, OFFSETS[1])
        with pytest.raises(errors.DataLossError, match="record 1"):
            next(it)

    def test_truncated_gzip_is_data_loss_naming_the_file(self, tmp_path):
        records = [bytes(range(256)) * 20 for _ in range(8)]
        path = write_records(tmp_path / "f", records, "GZIP")
        data = open(path, "rb").read()
        with open(path, "wb") as f:
            f.write(data[:len(data) // 2])
        got = []
        with pytest.raises(errors.DataLossError) as info:
            for r in sio.tf_record_iterator(path, "GZIP"):
                got.append(r)
        assert path in info.value.message
        assert info.value.experimental_payloads["file"] == path.encode()
        assert got == records[:len(got)] and len(got) < len(records)

    def test_gzip_file_read_as_plain_is_data_loss(self, tmp_path):
        path = write_records(tmp_path / "f", RECORDS, "GZIP")
        with pytest.raises(errors.DataLossError):
            read_all(path)

    def test_missing_file_is_not_found_at_the_call(self, tmp_path):
        with pytest.raises(errors.NotFoundError):
            sio.tf_record_iterator(str(tmp_path / "missing"))

    def test_ignore_errors_skips_a_bad_data_checksum_and_counts_it(self, tmp_path):
        path = corrupted(tmp_path, flip(OFFSETS[1] + 12 + 2))
        it = sio.tf_record_iterator(path, ignore_errors=True)
        assert list(it) == [RECORDS[0]] + RECORDS[2:]
        assert (it.corruptions_skipped, it.records_skipped) == (1, 1)
        assert it.bytes_skipped == 16 + len(RECORDS[1])
        assert "record 1" in it.last_skipped_error

    def test_ignore_errors_resyncs_after_a_corrupt_header(self, tmp_path):
        path = corrupted(tmp_path, flip(OFFSETS[1] + 2))
        it = sio.tf_record_iterator(path, ignore_errors=True)
        assert list(it) == [RECORDS[0]] + RECORDS[2:]
        assert it.corruptions_skipped == 1
        assert it.bytes_skipped == OFFSETS[2] - OFFSETS[1]

    def test_ignore_errors_drops_a_truncated_tail(self, tmp_path):
        path = corrupted(tmp_path, lambda d: d[:-3])
        it = sio.tf_record_iterator(path, ignore_errors=True)
        assert list(it) == RECORDS[:3]
        assert (it.corruptions_skipped, it.records_skipped) == (1, 1)

    def test_ignore_errors_on_a_clean_file_counts_nothing(self, tmp_path):
        path = write_records(tmp_path / "f", RECORDS)
        it = sio.tf_record_iterator(path, ignore_errors=True)
        assert list(it) == RECORDS
        assert (it.corruptions_skipped, it.records_skipped, it.bytes_skipped) == (0, 0, 0)
        assert it.last_skipped_error is None


# ---- iterator protocol --------------------------------------------------------------

class TestIterator:
    def test_position_follows_the_records(self, tmp_path):
        it = sio.tf_record_iterator(write_records(tmp_path / "f", RECORDS))
        assert (it.offset, it.record_index) == (0, 0)
        next(it)
        next(it)
        assert (it.offset, it.record_index) == (OFFSETS[2], 2)

    def test_close_ends_the_iteration(self, tmp_path):
        it = sio.tf_record_iterator(write_records(tmp_path / "f", RECORDS))
        assert next(it) == RECORDS[0]
        it.close()
        with pytest.raises(StopIteration):
            next(it)
        it.close()

    def test_reopen_goes_on_and_sees_appended_records(self, tmp_path):
        path = write_records(tmp_path / "f", RECORDS[:2])
        more = open(write_records(tmp_path / "g", RECORDS[2:]), "rb").read()
        it = sio.tf_record_iterator(path)
        assert list(it) == RECORDS[:2]
        with open(path, "ab") as f:
            f.write(more)
        it.reopen()
        assert list(it) == RECORDS[2:]

    def test_reopen_after_close_continues(self, tmp_path):
        it = sio.tf_record_iterator(write_records(tmp_path / "f", RECORDS))
        next(it)
        it.close()
        it.reopen()
        assert list(it) == RECORDS[1:]

    def test_iter_returns_itself(self, tmp_path):
        it = sio.tf_record_iterator(write_records(tmp_path / "f", RECORDS))
        assert iter(it) is it

    def test_threads_sharing_an_iterator_get_each_record_once(self, tmp_path):
        records = [b"%05d" % i for i in range(5000)]
        it = sio.tf_record_iterator(write_records(tmp_path / "f", records))
        got = [[], []]

        def work(k):
            for r in it:
                got[k].append(r)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(got[0] + got[1]) == records


# ---- index -------------------------------------------------------------------------------

class TestIndex:
    @pytest.mark.parametrize("compression", COMPRESSIONS)
    def test_index_gives_count_offsets_and_random_access(self, tmp_path, compression):
        path = write_records(tmp_path / "f", RECORDS, compression)
        index = sio.TFRecordIndex(path, compression)
        assert len(index) == 4
        assert index.offsets.tolist() == OFFSETS
        assert index.offsets.dtype == np.uint64
        assert index.read(2) == RECORDS[2]
        assert index[0] == RECORDS[0]
        assert index[-1] == RECORDS[3]
        assert index[3] == RECORDS[3] and index[1] == RECORDS[1]  # backwards
        assert index[1:3] == RECORDS[1:3]
        assert index[::2] == RECORDS[::2]
        assert list(index) == RECORDS
        assert index.record_length(1) == len(RECORDS[1])
        assert index.compression_type == compression

    def test_out_of_range_record_is_index_error(self, tmp_path):
        index = sio.TFRecordIndex(write_records(tmp_path / "f", RECORDS))
        with pytest.raises(IndexError, match="out of range"):
            index[4]
        with pytest.raises(IndexError):
            index.read(-5)

    def test_index_is_cached_beside_the_file_and_reused(self, tmp_path):
        path = write_records(tmp_path / "f", RECORDS)
        first = sio.TFRecordIndex(path)
        assert first.rebuilt and os.path.exists(path + ".idx")
        second = sio.TFRecordIndex(path)
        assert not second.rebuilt
        assert second.offsets.tolist() == OFFSETS

    def test_stale_index_is_rebuilt(self, tmp_path):
        path = write_records(tmp_path / "f", RECORDS)
        sio.TFRecordIndex(path)
        write_records(tmp_path / "f", RECORDS[:2])
        index = sio.TFRecordIndex(path)
        assert index.rebuilt and len(index) == 2

    def test_use_cache_false_writes_no_side_file(self, tmp_path):
        path = write_records(tmp_path / "f", RECORDS)
        index = sio.TFRecordIndex(path, use_cache=False)
        assert len(index) == 4 and not os.path.exists(path + ".idx")

    def test_custom_index_path(self, tmp_path):
        path = write_records(tmp_path / "f", RECORDS)
        sio.TFRecordIndex(path, index_path=str(tmp_path / "side"))
        assert os.path.exists(tmp_path / "side") and not os.path.exists(path + ".idx")
        assert not sio.TFRecordIndex(path, index_path=str(tmp_path / "side")).rebuilt

    def test_writer_can_write_the_index(self, tmp_path):
        path = write_records(tmp_path / "f", RECORDS, "GZIP", write_index=True)
        index = sio.TFRecordIndex(path, "GZIP")
        assert not index.rebuilt
        assert list(index) == RECORDS

    def test_shards_are_contiguous_and_cover_every_record(self, tmp_path):
        index = sio.TFRecordIndex(write_records(tmp_path / "f", [b"%d" % i for i in range(10)]))
        shards = [index.shard(s, 3) for s in range(3)]
        assert [list(r) for r in shards] == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
        with pytest.raises(ValueError):
            index.shard(3, 3)

    def test_corrupt_file_is_data_loss_unless_ignore_errors(self, tmp_path):
        path = corrupted(tmp_path, flip(OFFSETS[1] + 14))
        with pytest.raises(errors.DataLossError, match="record 1"):
            sio.TFRecordIndex(path, use_cache=False)
        index = sio.TFRecordIndex(path, use_cache=False, ignore_errors=True)
        assert list(index) == [RECORDS[0]] + RECORDS[2:]

    def test_lossy_cached_index_is_rebuilt_for_a_strict_open(self, tmp_path):
        path = corrupted(tmp_path, flip(OFFSETS[1] + 14))
        lossy = sio.TFRecordIndex(path, ignore_errors=True)
        assert lossy.rebuilt and os.path.exists(path + ".idx")
        assert list(lossy) == [RECORDS[0]] + RECORDS[2:]
        # Record 0 does not own the skipped record 1 that follows it.
        assert [lossy.record_length(i) for i in range(3)] == [len(r) for r in [RECORDS[0]] + RECORDS[2:]]
        assert not sio.TFRecordIndex(path, ignore_errors=True).rebuilt
        # A strict open does not reuse it: it rebuilds, failing as without the cache.
        with pytest.raises(errors.DataLossError, match=r"corrupted record at %d .*\(record 1\)" % (OFFSETS[1] + 12)):
            sio.TFRecordIndex(path)

    def test_clean_cached_index_serves_ignore_errors_opens(self, tmp_path):
        path = write_records(tmp_path / "f", RECORDS)
        sio.TFRecordIndex(path)
        index = sio.TFRecordIndex(path, ignore_errors=True)
        assert not index.rebuilt and list(index) == RECORDS

    def test_file_shrunk_after_indexing_is_data_loss(self, tmp_path):
        path = write_records(tmp_path / "f", RECORDS)
        index = sio.TFRecordIndex(path, use_cache=False)
        write_records(tmp_path / "f", RECORDS[:1])
        with pytest.raises(errors.DataLossError):
            index.read(3)

    def test_missing_file_is_not_found(self, tmp_path):
        with pytest.raises(errors.NotFoundError):
            sio.TFRecordIndex(str(tmp_path / "missing"))

    def test_empty_file_has_an_empty_index(self, tmp_path):
        index = sio.TFRecordIndex(write_records(tmp_path / "f", []))
        assert len(index) == 0 and list(index) == [] and index.offsets.size == 0


def test_io_exports_tf_names():
    for name in ["TFRecordOptions", "TFRecordCompressionType", "TFRecordWriter", "tf_record_iterator",
                 "TFRecordReader", "TextLineReader", "FixedLengthRecordReader", "WholeFileReader",
                 "IdentityReader", "ReaderBase", "TFRecordIndex"]:
        assert name in sio.__all__ and hasattr(sluice.io, name)
