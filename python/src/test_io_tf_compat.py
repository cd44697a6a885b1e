"""TensorFlow cross-checks of sluice.io's files and readers.

Files written by TensorFlow are read by sluice and the other way round, for
every compression; the queue-fed readers' keys and values are compared with
TensorFlow's tf.compat.v1 readers run in a Graph/Session. Skipped when
TensorFlow is not installed.
"""

import os

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

import sluice  # noqa: E402
from sluice import io as sio  # noqa: E402

COMPRESSIONS = ["", "ZLIB", "GZIP"]
RECORDS = [b"", b"first", bytes(range(256)) * 5, b"\x00" * 3000, b"x" * 70000, b"last"]


def tf_write(path, records, compression):
    with tf.io.TFRecordWriter(str(path), tf.io.TFRecordOptions(compression_type=compression)) as w:
        for r in records:
            w.write(r)
    return str(path)


def sluice_write(path, records, compression):
    with sio.TFRecordWriter(str(path), compression) as w:
        for r in records:
            w.write(r)
    return str(path)


def sluice_reader_records(reader, filenames):
    q = sluice.queue.FIFOQueue(len(filenames) + 1, [sluice.string])
    q.enqueue_many([[str(f) for f in filenames]])
    q.close()
    out = []
    while True:
        try:
            out.append(reader.read(q))
        except sluice.errors.OutOfRangeError:
            return out


def tf_reader_records(make_reader, filenames, batch=None):
    """(key, value) pairs a tf.compat.v1 reader gives in a Graph/Session.

    batch: use read_up_to(batch) and flatten the batches.
    """
    graph = tf.Graph()
    with graph.as_default():
        q = tf.compat.v1.FIFOQueue(len(filenames) + 1, [tf.string])
        enqueue = q.enqueue_many([[str(f) for f in filenames]])
        close = q.close()
        reader = make_reader()
        fetch = reader.read_up_to(q, batch) if batch else reader.read(q)
        out = []
        with tf.compat.v1.Session(graph=graph) as sess:
            sess.run(enqueue)
            sess.run(close)
            while True:
                try:
                    k, v = sess.run(fetch)
                except tf.errors.OutOfRangeError:
                    return out
                if batch:
                    out.extend(zip(k.tolist(), v.tolist()))
                else:
                    out.append((k, v))


# ---- TFRecord files --------------------------------------------------------------------

@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_sluice_reads_tf_written_files(tmp_path, compression):
    path = tf_write(tmp_path / "tf.tfrecord", RECORDS, compression)
    assert list(sio.tf_record_iterator(path, compression)) == RECORDS
    reader = sio.TFRecordReader(options=sio.TFRecordOptions(compression))
    assert [v for _, v in sluice_reader_records(reader, [path])] == RECORDS
    assert list(sio.TFRecordIndex(path, compression, use_cache=False)) == RECORDS


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_tf_reads_sluice_written_files(tmp_path, compression):
    path = sluice_write(tmp_path / "s.tfrecord", RECORDS, compression)
    dataset = tf.data.TFRecordDataset(path, compression_type=compression)
    assert [t.numpy() for t in dataset] == RECORDS
    options = tf.io.TFRecordOptions(compression_type=compression)
    assert list(tf.compat.v1.io.tf_record_iterator(path, options)) == RECORDS


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_written_files_are_byte_identical_to_tf(tmp_path, compression):
    records = [b"rec%d" % i * (i + 1) for i in range(40)]
    ours = open(sluice_write(tmp_path / "s", records, compression), "rb").read()
    theirs = open(tf_write(tmp_path / "t", records, compression), "rb").read()
    assert ours == theirs


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_tfrecord_reader_keys_match_tf(tmp_path, compression):
    a = tf_write(tmp_path / "a", RECORDS, compression)
    empty = tf_write(tmp_path / "empty", [], compression)
    b = tf_write(tmp_path / "b", [b"b0", b"b1"], compression)
    files = [a, empty, b]
    options = tf.io.TFRecordOptions(compression_type=compression)
    expected = tf_reader_records(lambda: tf.compat.v1.TFRecordReader(options=options), files)
    reader = sio.TFRecordReader(options=sio.TFRecordOptions(compression))
    assert sluice_reader_records(reader, files) == expected
    assert reader.num_work_units_completed() == 3


def test_tfrecord_reader_read_up_to_matches_tf(tmp_path):
    a = tf_write(tmp_path / "a", [b"%d" % i for i in range(7)], "")
    b = tf_write(tmp_path / "b", [b"b"], "")
    expected = tf_reader_records(tf.compat.v1.TFRecordReader, [a, b], batch=3)
    q = sluice.queue.FIFOQueue(4, [sluice.string])
    q.enqueue_many([[a, b]])
    q.close()
    reader = sio.TFRecordReader()
    got = []
    while True:
        try:
            keys, values = reader.read_up_to(q, 3)
        except sluice.errors.OutOfRangeError:
            break
        got.extend(zip(keys.tolist(), values.tolist()))
    assert got == expected


def test_corrupt_file_is_data_loss_in_both(tmp_path):
    path = sluice_write(tmp_path / "c", [b"aaaa", b"bbbb"], "")
    data = bytearray(open(path, "rb").read())
    data[20 + 12 + 2] ^= 1
    open(path, "wb").write(bytes(data))
    with pytest.raises(tf.errors.DataLossError):
        list(tf.compat.v1.io.tf_record_iterator(path))
    with pytest.raises(sluice.errors.DataLossError, match="corrupted record at 32"):
        list(sio.tf_record_iterator(path))


# ---- text lines ------------------------------------------------------------------------

TEXTS = {
    "crlf": b"h1\r\nh2\r\na,1\r\n\r\nb,2\r\n",
    "no_trailing_newline": b"h1\nh2\nx\ny",
    "mixed": b"h1\nh2\r\n\n\nlast\r\n",
    "only_header": b"h1\nh2\n",
    "empty": b"",
}


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_text_lines_match_text_line_dataset(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(TEXTS[name])
    lines = [t.numpy() for t in tf.data.TextLineDataset(str(path))]
    got = [v for _, v in sluice_reader_records(sio.TextLineReader(skip_header_lines=2), [path])]
    assert got == lines[2:]


@pytest.mark.parametrize("skip", [None, 0, 1, 3])
def test_text_line_reader_keys_match_tf(tmp_path, skip):
    files = []
    for name in sorted(TEXTS):
        (tmp_path / name).write_bytes(TEXTS[name])
        files.append(str(tmp_path / name))
    expected = tf_reader_records(lambda: tf.compat.v1.TextLineReader(skip_header_lines=skip), files)
    assert sluice_reader_records(sio.TextLineReader(skip_header_lines=skip), files) == expected


@pytest.mark.parametrize("compression", ["ZLIB", "GZIP"])
def test_compressed_text_lines_read_by_the_line_dataset(tmp_path, compression):
    # sluice's TextLineReader, as TF's, reads plain text; the dataset reads
    # compressed text: check both see the same lines of the same content.
    import gzip
    import zlib
    raw = TEXTS["crlf"]
    (tmp_path / "plain").write_bytes(raw)
    packed = gzip.compress(raw) if compression == "GZIP" else zlib.compress(raw)
    (tmp_path / "packed").write_bytes(packed)
    lines = [t.numpy() for t in tf.data.TextLineDataset(str(tmp_path / "packed"), compression_type=compression)]
    got = [v for _, v in sluice_reader_records(sio.TextLineReader(), [tmp_path / "plain"])]
    assert got == lines


# ---- fixed-length records ------------------------------------------------------------------

# (record_bytes, header_bytes, footer_bytes, file length). A body with a
# trailing partial record is left out: tf.data raises InvalidArgument for it,
# while the reader (TensorFlow's and sluice's) drops it;
# test_fixed_length_reader_keys_and_hops_match_tf checks that case.
FIXED_CASES = [
    (4, 0, 0, 40),
    (4, 3, 2, 3 + 4 * 5 + 2),
    (7, 5, 0, 5),                  # only a header
    (1, 0, 9, 20),
]


@pytest.mark.parametrize("record_bytes,header_bytes,footer_bytes,length", FIXED_CASES)
def test_fixed_length_records_match_the_dataset(tmp_path, record_bytes, header_bytes, footer_bytes, length):
    path = tmp_path / "f.bin"
    path.write_bytes(bytes(i % 251 for i in range(length)))
    dataset = tf.data.FixedLengthRecordDataset(str(path), record_bytes, header_bytes, footer_bytes)
    expected = [t.numpy() for t in dataset]
    reader = sio.FixedLengthRecordReader(record_bytes, header_bytes, footer_bytes)
    assert [v for _, v in sluice_reader_records(reader, [path])] == expected


@pytest.mark.parametrize("compression", ["ZLIB", "GZIP"])
def test_compressed_fixed_length_records_match_the_dataset(tmp_path, compression):
    import gzip
    import zlib
    raw = bytes(i % 251 for i in range(3 + 6 * 5 + 2))
    packed = gzip.compress(raw) if compression == "GZIP" else zlib.compress(raw)
    path = tmp_path / "f.bin"
    path.write_bytes(packed)
    dataset = tf.data.FixedLengthRecordDataset(str(path), 6, 3, 2, compression_type=compression)
    reader = sio.FixedLengthRecordReader(6, 3, 2, encoding=compression)
    assert [v for _, v in sluice_reader_records(reader, [path])] == [t.numpy() for t in dataset]


@pytest.mark.parametrize("hop_bytes", [None, 2, 3, 5])
def test_fixed_length_reader_keys_and_hops_match_tf(tmp_path, hop_bytes):
    # No file shorter than header_bytes: TensorFlow's reader then fails the
    # read with OutOfRange although the queue holds more files; sluice's
    # skips such a file (test_io_readers.py).
    files = []
    for i, length in enumerate([25, 3, 11]):
        (tmp_path / str(i)).write_bytes(bytes((j * 7 + i) % 256 for j in range(length)))
        files.append(str(tmp_path / str(i)))
    kwargs = dict(record_bytes=4, header_bytes=1, footer_bytes=2, hop_bytes=hop_bytes)
    expected = tf_reader_records(lambda: tf.compat.v1.FixedLengthRecordReader(**kwargs), files)
    assert sluice_reader_records(sio.FixedLengthRecordReader(**kwargs), files) == expected


# ---- whole files and identity ------------------------------------------------------------

def test_whole_file_and_identity_readers_match_tf(tmp_path):
    files = []
    for i, content in enumerate([b"abc", b"", bytes(range(256))]):
        (tmp_path / str(i)).write_bytes(content)
        files.append(str(tmp_path / str(i)))
    assert sluice_reader_records(sio.WholeFileReader(), files) == tf_reader_records(
        tf.compat.v1.WholeFileReader, files)
    assert sluice_reader_records(sio.IdentityReader(), files) == tf_reader_records(
        tf.compat.v1.IdentityReader, files)


def test_supports_serialize_matches_tf():
    with tf.Graph().as_default():
        for tf_cls, ours in [(tf.compat.v1.TFRecordReader, sio.TFRecordReader()),
                             (tf.compat.v1.TextLineReader, sio.TextLineReader()),
                             (tf.compat.v1.WholeFileReader, sio.WholeFileReader()),
                             (tf.compat.v1.IdentityReader, sio.IdentityReader())]:
            assert tf_cls().supports_serialize == ours.supports_serialize, tf_cls.__name__


def test_compression_type_strings_match_tf():
    for value in [None, "", "ZLIB", "GZIP", 0, 1, 2]:
        assert (sio.TFRecordOptions.get_compression_type_string(value)
                == tf.io.TFRecordOptions.get_compression_type_string(value))
    for bad in ["zlib", "LZ4"]:
        with pytest.raises(ValueError):
            tf.io.TFRecordOptions(bad)
        with pytest.raises(ValueError):
            sio.TFRecordOptions(bad)
