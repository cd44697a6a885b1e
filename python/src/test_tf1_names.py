"""TF 1's top-level names on sluice (tf.compat.v1.FIFOQueue & co.), and the two
ops that are new with them, cast and string_to_number, against TensorFlow 2.21.
"""

import math

import numpy as np
import pytest

import sluice
from sluice import errors

# name -> the layer module that defines it
LAYER_OF = {
    "FIFOQueue": sluice.queue, "RandomShuffleQueue": sluice.queue, "PaddingFIFOQueue": sluice.queue,
    "PriorityQueue": sluice.queue, "QueueBase": sluice.queue,
    "TFRecordReader": sluice.io, "TextLineReader": sluice.io, "FixedLengthRecordReader": sluice.io,
    "WholeFileReader": sluice.io, "IdentityReader": sluice.io, "ReaderBase": sluice.io,
    "parse_single_example": sluice.io, "parse_example": sluice.io, "parse_single_sequence_example": sluice.io,
    "FixedLenFeature": sluice.io, "VarLenFeature": sluice.io, "SparseFeature": sluice.io,
    "FixedLenSequenceFeature": sluice.io, "decode_raw": sluice.io, "decode_csv": sluice.io,
}
PYTHON_IO = ["tf_record_iterator", "TFRecordWriter", "TFRecordOptions", "TFRecordCompressionType"]


@pytest.mark.parametrize("name", sorted(LAYER_OF))
def test_top_level_name_is_the_layer_modules_object(name):
    assert getattr(sluice, name) is getattr(LAYER_OF[name], name)


def test_new_top_level_names_import():
    from sluice import cast, python_io, string_to_number  # noqa: F401
    from sluice.image import resize_images  # noqa: F401
    assert callable(cast) and callable(string_to_number)


@pytest.mark.parametrize("name", PYTHON_IO)
def test_python_io_is_sluice_io(name):
    from sluice import python_io
    assert getattr(python_io, name) is getattr(sluice.io, name)
    assert name in python_io.__all__


def test_python_io_round_trips_a_record_file(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    options = sluice.python_io.TFRecordOptions(sluice.python_io.TFRecordCompressionType.GZIP)
    with sluice.python_io.TFRecordWriter(path, options) as w:
        w.write(b"one")
        w.write(b"two")
    assert list(sluice.python_io.tf_record_iterator(path, options)) == [b"one", b"two"]


def test_reader_and_parser_behave_from_the_top_level(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_bytes(b"a\nb\n")
    q = sluice.FIFOQueue(4, [sluice.string])
    q.enqueue_many([[str(path)]])
    q.close()
    key, value = sluice.TextLineReader().read(q)
    assert value == b"a"
    parsed = sluice.decode_csv([b"1,2.5"], [[0], [0.0]])
    assert parsed[0][0] == 1 and parsed[1][0] == pytest.approx(2.5)


# ---- cast ------------------------------------------------------------------------------

CAST_CASES = [
    ([1.7, -1.7, 2.5, -0.5], "int32"),
    (np.array([1.7, -1.7, 1e10]), "int64"),
    ([0, 2, -1], "bool"),
    (np.array([0.0, 0.1, float("nan")]), "bool"),
    ([True, False], "float32"),
    (np.array([1 + 2j, 1j]), "float32"),
    (np.array([1 + 2j, 1j, 0j]), "bool"),
    (0.1, "float64"),
    (np.float64(0.1), "float64"),
    (np.array([-1, 256, 300]), "uint8"),
    (np.array([65504.0, 70000.0]), "float16"),
    (np.array([1.0078125, 3.14159]), "bfloat16"),
    ([1, 2], "complex64"),
    (np.array([2 ** 31], np.int64), "int32"),
    (16777217, "float32"),
    (np.array([0.5, 1.5, -2.7], np.float16), "int32"),
    (np.array([[3, 4]], np.uint16), "int8"),
]


@pytest.mark.parametrize("value,dtype", CAST_CASES, ids=lambda v: str(v)[:20])
def test_cast_matches_tf(value, dtype):
    tf = pytest.importorskip("tensorflow")
    want = tf.cast(value, dtype).numpy()
    got = sluice.cast(value, dtype)
    assert got.dtype == want.dtype and got.shape == np.shape(want)
    np.testing.assert_array_equal(got, want)


def test_cast_of_strings_is_unimplemented():
    with pytest.raises(errors.UnimplementedError, match="Cast string to float32"):
        sluice.cast(np.array([b"1"], dtype=object), sluice.float32)
    with pytest.raises(errors.UnimplementedError, match="to string"):
        sluice.cast([1.0], sluice.string)


def test_cast_of_sparse_tensor_casts_its_values():
    st = sluice.SparseTensor([[0, 1]], np.array([1.5], np.float32), [2, 2])
    out = sluice.cast(st, sluice.int32)
    assert isinstance(out, sluice.SparseTensor)
    assert out.values.dtype == np.int32 and out.values.tolist() == [1]
    np.testing.assert_array_equal(out.indices, st.indices)


# ---- string_to_number ---------------------------------------------------------------------

STRINGS = [
    " 12", "12 ", "\t7\n", "\v7\f", "1e3", "1E5", "1.e5", ".5", "5.", "-0", "+3", "017", "00012", "0.1", "1.5e+2",
    "0x10", "0X1f", "-0x10", "+0x10", "0x1p3", "0x1.8p1", "0x.8", "0x1P-2", "inf", "-inf", "+inf", "Inf",
    "INF", "infinity", "Infinity", "nan", "NaN", "-nan", "+nan", "nan()", "nan(abc)", "1e400", "-1e400",
    "1e-50", "1e-400", "3.4028236e38", "2147483647", "2147483648", "-2147483648", "-2147483649",
    "4294967295", "4294967296", "9223372036854775807", "9223372036854775808", "18446744073709551615",
    "18446744073709551616", "", " ", "1,000", "1_000", "12abc", "0x", "1e", "1e+", "e5", "0b101", "\u00a07",
    "\u0663", "--1", "+-1", "+-nan", "+", "-", "inff", "in", "nan(a-b)", "0x10p", "0x-1", "1 2",
]
OUT_TYPES = ["float32", "float64", "int32", "int64", "uint32", "uint64"]


@pytest.mark.parametrize("out_type", OUT_TYPES)
def test_string_to_number_matches_tf_on_edge_cases(out_type):
    tf = pytest.importorskip("tensorflow")
    for s in STRINGS:
        try:
            want = tf.strings.to_number(s, out_type=out_type).numpy()
        except tf.errors.InvalidArgumentError:
            with pytest.raises(errors.InvalidArgumentError, match="StringToNumberOp could not correctly convert"):
                sluice.string_to_number(s, out_type=out_type)
            continue
        got = sluice.string_to_number(s, out_type=out_type)
        assert got.dtype == want.dtype, s
        if math.isnan(float(want)):
            assert np.isnan(got), s
        else:
            assert got == want and np.signbit(got) == np.signbit(want), s


def test_string_to_number_defaults_to_float32_and_keeps_the_shape():
    got = sluice.string_to_number(np.array([[b"1", b"2.5"], [b"-3", b" 4 "]], dtype=object))
    assert got.dtype == np.float32 and got.shape == (2, 2)
    np.testing.assert_array_equal(got, [[1, 2.5], [-3, 4]])
    assert sluice.string_to_number(input=["7"], out_type=sluice.int64).tolist() == [7]


def test_string_to_number_rejects_bad_arguments():
    with pytest.raises(errors.InvalidArgumentError, match="out_type"):
        sluice.string_to_number("1", out_type=sluice.uint8)
    with pytest.raises(TypeError):
        sluice.string_to_number([5])
    with pytest.raises(ValueError):
        sluice.string_to_number("1", input="2")
