"""sluice.io on the TFRecord test files of tests/data/tfrecord.

The expected counts and contents are those tests/data/SOURCES.md states
(§1). Records are decoded with a small protobuf wire parser written here, so
these checks depend on nothing but sluice.io; with TensorFlow installed, each
file is also compared with TensorFlow's reading of it.

The test data is found at $SLUICE_TESTDATA_DIR, else at tests/data in this
repository.
"""

import collections
import gzip
import os
import pathlib
import struct
import zlib

import pytest

import sluice
from sluice import errors
from sluice import io as sio

_REPO = pathlib.Path(__file__).resolve().parents[2]
TESTDATA = pathlib.Path(os.environ.get("SLUICE_TESTDATA_DIR", _REPO / "tests" / "data"))
TFRECORD = TESTDATA / "tfrecord"

# Every TFRecord file of §1: (path under tfrecord/, compression, record count, payload size or None).
FILES = [
    ("beam_base64/python_foo.tfrecord", "", 1, 3),
    ("beam_base64/python_foo_bar.tfrecord", "", 2, 3),
    ("beam_base64/python_bar_foo.tfrecord", "", 2, 3),
    ("ecosystem_hadoop/tf-records/part-m-00000", "", 5, None),
    ("ecosystem_hadoop/zipped-tf-records/part-m-00000.gz", "GZIP", 5, None),
    ("tfx_penguin/Split-train/data_tfrecord-00000-of-00001.gz", "GZIP", 234, 136),
    ("tfx_penguin/Split-eval/data_tfrecord-00000-of-00001.gz", "GZIP", 100, 136),
    ("tfx_tfrecord_sequence/Split-train/data_tfrecord_train.gz", "GZIP", 10500, None),
    ("tfx_tfrecord_sequence/Split-eval/data_tfrecord_eval.gz", "GZIP", 4500, None),
    ("tfx_tfjs_next_page/data.tfrecord.gz", "GZIP", 100, 69),
    ("tfx_mnist/mnist.tfrecord", "", 1000, 3187),
]


def path_of(name):
    return str(TFRECORD / name)


def records_of(name, compression=""):
    return list(sio.tf_record_iterator(path_of(name), compression))


# ---- a minimal protobuf wire parser (tf.train.Example / SequenceExample) ------------

def _varint(buf, pos):
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def parse_fields(buf):
    """{field number: [values]}: ints for varints, bytes otherwise."""
    out = collections.defaultdict(list)
    pos = 0
    while pos < len(buf):
        tag, pos = _varint(buf, pos)
        field, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = bytes(buf[pos:pos + 8]), pos + 8
        elif wire == 2:
            n, pos = _varint(buf, pos)
            value, pos = bytes(buf[pos:pos + n]), pos + n
        elif wire == 5:
            value, pos = bytes(buf[pos:pos + 4]), pos + 4
        else:
            raise ValueError("unsupported wire type %d" % wire)
        out[field].append(value)
    return out


def _int64s(items):
    values = []
    for item in items:
        if isinstance(item, int):
            values.append(item)
        else:  # packed
            pos = 0
            while pos < len(item):
                v, pos = _varint(item, pos)
                values.append(v)
    return [v - (1 << 64) if v >= 1 << 63 else v for v in values]


def _floats(items):
    values = []
    for item in items:
        values.extend(struct.unpack("<%df" % (len(item) // 4), item))
    return values


def decode_feature(buf):
    f = parse_fields(buf)
    if 1 in f:
        return list(parse_fields(f[1][0]).get(1, []))
    if 2 in f:
        return _floats(parse_fields(f[2][0]).get(1, []))
    if 3 in f:
        return _int64s(parse_fields(f[3][0]).get(1, []))
    return []  # a Feature with no list set


def decode_features(buf):
    out = {}
    for entry in parse_fields(buf).get(1, []):
        e = parse_fields(entry)
        out[e[1][0].decode()] = decode_feature(e[2][0]) if 2 in e else []
    return out


def decode_example(record):
    f = parse_fields(record)
    return decode_features(f[1][0]) if 1 in f else {}


def decode_sequence_example(record):
    f = parse_fields(record)
    context = decode_features(f[1][0]) if 1 in f else {}
    lists = {}
    for entry in (parse_fields(f[2][0]).get(1, []) if 2 in f else []):
        e = parse_fields(entry)
        lists[e[1][0].decode()] = [decode_feature(x) for x in parse_fields(e[2][0]).get(1, [])]
    return context, lists


# ---- every file: counts, sizes, iterator == reader == index --------------------------------

@pytest.mark.parametrize("name,compression,count,size", FILES, ids=[f[0] for f in FILES])
def test_record_counts_and_sizes(name, compression, count, size):
    records = records_of(name, compression)
    assert len(records) == count
    if size is not None:
        assert {len(r) for r in records} == {size}


@pytest.mark.parametrize("name,compression,count,size", FILES, ids=[f[0] for f in FILES])
def test_reader_and_index_agree_with_the_iterator(name, compression, count, size):
    records = records_of(name, compression)
    q = sluice.queue.FIFOQueue(2, [sluice.string])
    q.enqueue(path_of(name))
    q.close()
    reader = sio.TFRecordReader(options=sio.TFRecordOptions(compression))
    got = []
    while True:
        try:
            _, values = reader.read_up_to(q, 4096)
        except errors.OutOfRangeError:
            break
        got.extend(values.tolist())
    assert got == records
    index = sio.TFRecordIndex(path_of(name), compression, use_cache=False)
    assert len(index) == count
    assert index[count // 2] == records[count // 2] and index[0] == records[0]


@pytest.mark.parametrize("name,compression,count,size", FILES, ids=[f[0] for f in FILES])
def test_same_records_as_tensorflow(name, compression, count, size):
    tf = pytest.importorskip("tensorflow")
    dataset = tf.data.TFRecordDataset(path_of(name), compression_type=compression).batch(4096)
    expected = [r for batch in dataset for r in batch.numpy().tolist()]
    assert records_of(name, compression) == expected


# ---- §1.6 Beam's files ---------------------------------------------------------------------------

def test_beam_files_hold_foo_and_bar():
    assert records_of("beam_base64/python_foo.tfrecord") == [b"foo"]
    assert records_of("beam_base64/python_foo_bar.tfrecord") == [b"foo", b"bar"]
    assert records_of("beam_base64/python_bar_foo.tfrecord") == [b"bar", b"foo"]


def test_sluice_writer_reproduces_beams_files(tmp_path):
    for name, records in [("python_foo.tfrecord", [b"foo"]), ("python_foo_bar.tfrecord", [b"foo", b"bar"]),
                          ("python_bar_foo.tfrecord", [b"bar", b"foo"])]:
        out = str(tmp_path / name)
        with sio.TFRecordWriter(out) as w:
            for r in records:
                w.write(r)
        assert open(out, "rb").read() == open(path_of("beam_base64/" + name), "rb").read()


@pytest.mark.parametrize("compression,compress", [("GZIP", gzip.compress), ("ZLIB", zlib.compress)])
def test_beam_file_readable_after_whole_file_compression(tmp_path, compression, compress):
    raw = open(path_of("beam_base64/python_foo_bar.tfrecord"), "rb").read()
    (tmp_path / "c").write_bytes(compress(raw))
    assert list(sio.tf_record_iterator(str(tmp_path / "c"), compression)) == [b"foo", b"bar"]


@pytest.mark.parametrize("byte,what", [(9, "length checksum"), (16, "data checksum")])
def test_beam_invalid_masks_are_data_loss(tmp_path, byte, what):
    data = bytearray(open(path_of("beam_base64/python_foo.tfrecord"), "rb").read())
    data[byte] = (data[byte] + 1) % 256
    (tmp_path / "bad").write_bytes(bytes(data))
    with pytest.raises(errors.DataLossError, match=what) as info:
        list(sio.tf_record_iterator(str(tmp_path / "bad")))
    assert info.value.experimental_payloads["record"] == b"0"


# ---- §1.1 Hadoop ------------------------------------------------------------------------------------

HADOOP_VALUES = [-6519408338692630574, -897291810407650440, -2627029093267243214, 8452912497529882771,
                 6197228047171027195]


@pytest.mark.parametrize("name,compression", [("ecosystem_hadoop/tf-records/part-m-00000", ""),
                                              ("ecosystem_hadoop/zipped-tf-records/part-m-00000.gz", "GZIP")])
def test_hadoop_examples_map_index_to_value(name, compression):
    records = records_of(name, compression)
    assert [len(r) for r in records] == [27, 27, 27, 26, 26]
    assert [decode_example(r)["data"] for r in records] == [[i, v] for i, v in enumerate(HADOOP_VALUES)]


def test_hadoop_gzip_and_plain_files_hold_the_same_bytes():
    plain = open(path_of("ecosystem_hadoop/tf-records/part-m-00000"), "rb").read()
    packed = open(path_of("ecosystem_hadoop/zipped-tf-records/part-m-00000.gz"), "rb").read()
    assert gzip.decompress(packed) == plain
    assert plain.startswith(bytes.fromhex("1b000000000000001a0d9e13"))


# ---- §1.2 penguins ------------------------------------------------------------------------------------

@pytest.mark.parametrize("split,counts,first", [
    ("train", (99, 46, 89), (0, 0.25454545, 0.6666667, 0.15254237, 0.29166666)),
    ("eval", (47, 22, 31), (0, 0.24727273, 0.5595238, 0.15254237, 0.25694445)),
])
def test_penguin_species_counts_and_first_record(split, counts, first):
    name = "tfx_penguin/Split-%s/data_tfrecord-00000-of-00001.gz" % split
    examples = [decode_example(r) for r in records_of(name, "GZIP")]
    species = collections.Counter(e["species"][0] for e in examples)
    assert (species[0], species[1], species[2]) == counts
    e = examples[0]
    got = (e["species"][0], e["culmen_length_mm"][0], e["culmen_depth_mm"][0], e["flipper_length_mm"][0],
           e["body_mass_g"][0])
    assert got == pytest.approx(first, rel=1e-6)


# ---- §1.3 SequenceExamples ------------------------------------------------------------------------------

@pytest.mark.parametrize("split,first_k,count", [("train", 0, 10500), ("eval", 10500, 4500)])
def test_sequence_examples_follow_the_closed_form(split, first_k, count):
    name = "tfx_tfrecord_sequence/Split-%s/data_tfrecord_%s.gz" % (split, split)
    records = records_of(name, "GZIP")
    assert len(records) == count
    for offset in list(range(0, count, 97)) + [count - 1]:
        k = first_k + offset
        context, lists = decode_sequence_example(records[offset])
        if k % 10 == 0:
            assert context["i"] == [] and context["f"] == []
        else:
            assert context["i"] == [k] and context["f"] == [float(k)]
        assert lists["s"] == [[str(k).encode()], [str(k + 1).encode()]]


def test_sequence_eval_record_zero_bytes():
    first = next(iter(sio.tf_record_iterator(path_of("tfx_tfrecord_sequence/Split-eval/data_tfrecord_eval.gz"),
                                             "GZIP")))
    assert first == bytes.fromhex("0a0e0a050a016912000a050a01661200121d0a1b0a017312160a090a070a0531303530"
                                  "300a090a070a053130353031")


# ---- §1.4 tfjs next page, §1.5 MNIST ---------------------------------------------------------------------

def test_next_page_first_records_and_counts():
    examples = [decode_example(r) for r in records_of("tfx_tfjs_next_page/data.tfrecord.gz", "GZIP")]
    got = [(e["cur_page"][0], e["label"][0], e["session_index"][0]) for e in examples[:3]]
    assert got == [(b"page2", b"page3", 1), (b"page4", b"page2", 1), (b"page2", b"page3", 0)]
    pages = collections.Counter(e["cur_page"][0] for e in examples)
    assert [pages[b"page%d" % i] for i in range(1, 5)] == [22, 24, 24, 30]
    assert {e["session_index"][0] for e in examples} <= set(range(10))


def test_mnist_labels_and_pixels():
    index = sio.TFRecordIndex(path_of("tfx_mnist/mnist.tfrecord"), use_cache=False)
    assert index.offsets.tolist() == [3203 * i for i in range(1000)]
    examples = [decode_example(r) for r in index]
    assert [e["image_class"][0] for e in examples[:10]] == [9, 3, 6, 1, 8, 2, 2, 3, 5, 7]
    counts = collections.Counter(e["image_class"][0] for e in examples)
    assert [counts[c] for c in range(10)] == [87, 137, 87, 90, 118, 79, 78, 107, 120, 97]
    pixels = examples[0]["image_floats"]
    assert len(pixels) == 784
    allowed = {struct.unpack("<f", struct.pack("<f", k / 255 - 0.5))[0] for k in range(256)}
    assert set(pixels) <= allowed
