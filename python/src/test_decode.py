"""decode_csv, decode_raw and decode_compressed against TensorFlow's tf.io ops
(skipped without TensorFlow), plus checks that need no TensorFlow."""

import gzip
import os
import zlib

import numpy as np
import pytest

import sluice
from sluice import errors
from sluice import io

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


@pytest.fixture(scope="module")
def tf():
    return pytest.importorskip("tensorflow")


def _same(sluice_out, tf_out):
    tf_out = tf_out.numpy()
    if isinstance(tf_out, np.ndarray) and tf_out.dtype == object:
        assert sluice_out.dtype == object
        assert sluice_out.tolist() == tf_out.tolist()
    elif isinstance(tf_out, bytes):
        assert sluice_out == tf_out
    else:
        assert sluice_out.dtype == tf_out.dtype
        np.testing.assert_array_equal(sluice_out, tf_out)


def _tf_defaults(tf, defaults):
    out = []
    for d in defaults:
        if isinstance(d, np.ndarray):
            out.append(tf.constant(d))
        else:
            out.append(d)
    return out


# ---- decode_csv ---------------------------------------------------------------------------------

CSV_CASES = [
    (["1,2.5,hello", "4,,\"quoted, with comma\"", "7,8e3,\"say \"\"hi\"\"\""],
     [[0], [0.0], [""]], {}),
    (["a;b", "NA;c", ";"], [["x"], ["y"]], {"field_delim": ";", "na_value": "NA"}),
    (["1,2,3,4", "5,6,7,8"], [[0], np.array([0], np.int64)], {"select_cols": [1, 3]}),
    (["\"a\"\"b\",x"], [[""], [""]], {}),
    (["\"unquoted\" quotes,x"], [[""], [""]], {"use_quote_delim": False}),
    ([" 12 , -3 "], [np.int64(0), [np.int64(0)]], {}),
    (["1.5,inf,-nan"], [[np.float64(0)], [0.0], np.float32(0)], {}),
    (["1,3000000000"], [[1], [2**40]], {}),
    ([["1,a", "2,b"], ["3,c", "4,d"]], [[0], [""]], {}),
    (["+5,+0, +7", "+05,-0,+9223372036854775807"], [[0], [0], np.array([0], np.int64)], {}),
    (["0x1p3,0x1.8p1,-0x10", " +0x.8p1 ,0X1P-3,0x1p-150"], [[0.0], [np.float64(0)], [0.0]], {}),
]


@pytest.mark.parametrize("records, defaults, kwargs", CSV_CASES)
def test_decode_csv_matches_tensorflow(tf, records, defaults, kwargs):
    ours = io.decode_csv(records, defaults, **kwargs)
    theirs = tf.io.decode_csv(records, _tf_defaults(tf, defaults), **kwargs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        b = b.numpy()
        if b.dtype == object:
            assert a.tolist() == b.tolist()
        else:
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)


BAD_CSV = [
    (["1,2,3"], [[0], [0]], {}, "Expect 2 fields but have 3 in record 0"),
    (["1,"], [[0], np.zeros(0, np.int32)], {}, "Field 1 is required but missing in record 0"),
    (["x1"], [[0]], {}, "not a valid int32: x1"),
    (["+-5"], [[0]], {}, "not a valid int32: +-5"),
    (["++5"], [np.array([0], np.int64)], {}, "not a valid int64: ++5"),
    (["+"], [[0]], {}, "not a valid int32: +"),
    (["0x1p"], [[0.0]], {}, "not a valid float: 0x1p"),
    (["a\"b,c"], [[""], [""]], {}, "Unquoted fields cannot have quotes"),
    (["\"ab\"c,d"], [[""], [""]], {}, "Quote inside a string has to be escaped by another quote"),
    (["1,2"], [[0], [0]], {"select_cols": [1, 0]}, "select_cols is not strictly increasing"),
    (["1,2"], [[0]], {"field_delim": ";;"}, "field_delim should be only 1 char"),
]


@pytest.mark.parametrize("records, defaults, kwargs, fragment", BAD_CSV)
def test_decode_csv_errors_match_tensorflow(tf, records, defaults, kwargs, fragment):
    with pytest.raises(errors.InvalidArgumentError) as ours:
        io.decode_csv(records, defaults, **kwargs)
    assert fragment in str(ours.value)
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)) as theirs:
        tf.io.decode_csv(records, _tf_defaults(tf, defaults), **kwargs)
    if isinstance(theirs.value, tf.errors.OpError):
        assert fragment in theirs.value.message


def test_decode_csv_scalar_record_and_dtype_defaults():
    a, b = io.decode_csv(b"3,x", [np.int64, sluice.string])
    assert a.shape == () and a == 3 and a.dtype == np.int64
    assert b == b"x"
    with pytest.raises(errors.InvalidArgumentError, match="Field 1 is required"):
        io.decode_csv(["3,"], [np.int64, sluice.string])
    c, d = io.decode_csv([",", "y,z"], ["string", "int64"])  # a str is a default value, not a dtype name
    assert c.tolist() == [b"string", b"y"] and d.tolist() == [b"int64", b"z"]
    with pytest.raises(ValueError, match="only be 1 default"):
        io.decode_csv(["1"], [[1, 2]])
    with pytest.raises(TypeError):
        io.decode_csv(["1"], [[True]])


# ---- decode_raw ----------------------------------------------------------------------------------

RAW = [b"\x01\x02\x03\x04\x05\x06\x07\x08", b"\xff\xfe\xfd\xfc\x00\x00\x80\x3f"]


@pytest.mark.parametrize("out_type", ["uint8", "int16", "uint16", "int32", "float32", "int64", "float64",
                                      "float16", "complex64"])
@pytest.mark.parametrize("little_endian", [True, False])
def test_decode_raw_matches_tensorflow(tf, out_type, little_endian):
    ours = io.decode_raw(RAW, out_type, little_endian=little_endian)
    theirs = tf.io.decode_raw(RAW, getattr(tf, out_type), little_endian=little_endian).numpy()
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(ours.view(np.uint8), theirs.view(np.uint8))


@pytest.mark.parametrize("fixed_length", [2, 4, 8, 12])
def test_decode_raw_fixed_length_matches_tensorflow(tf, fixed_length):
    data = [b"\x01\x02\x03", b"\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d"]
    ours = io.decode_raw(data, "uint16", fixed_length=fixed_length)
    theirs = tf.io.decode_raw(data, tf.uint16, fixed_length=fixed_length).numpy()
    np.testing.assert_array_equal(ours, theirs)


def test_decode_raw_errors():
    with pytest.raises(errors.InvalidArgumentError, match="not a multiple of 4"):
        io.decode_raw([b"12345"], "float32")
    with pytest.raises(errors.InvalidArgumentError, match="same size"):
        io.decode_raw([b"1234", b"12345678"], "int32")
    with pytest.raises(TypeError):
        io.decode_raw([b"1234"], "string")


def test_decode_raw_scalar_input():
    out = io.decode_raw(b"\x01\x00\x02\x00", "int16")
    np.testing.assert_array_equal(out, [1, 2])


# ---- decode_compressed -----------------------------------------------------------------------------

PLAIN = [b"", b"hello " * 100, bytes(range(256))]


@pytest.mark.parametrize("kind, compress", [
    ("", lambda b: b),
    ("ZLIB", zlib.compress),
    ("GZIP", gzip.compress),
])
def test_decode_compressed_matches_tensorflow(tf, kind, compress):
    data = np.array([compress(p) for p in PLAIN], dtype=object)
    ours = io.decode_compressed(data, compression_type=kind)
    theirs = tf.io.decode_compressed(data, compression_type=kind).numpy()
    assert ours.tolist() == theirs.tolist() == PLAIN


@pytest.mark.parametrize("kind, data", [
    ("GZIP", b""),
    ("ZLIB", b""),
    ("ZLIB", zlib.compress(b"abc") + b"\n"),
    ("ZLIB", zlib.compress(b"abc") + zlib.compress(b"def")),
    ("GZIP", gzip.compress(b"abc") + b"\n"),
    ("GZIP", gzip.compress(b"abc") + gzip.compress(b"def")),
])
def test_decode_compressed_empty_and_trailing_bytes_match_tensorflow(tf, kind, data):
    ours = io.decode_compressed([data], kind)
    theirs = tf.io.decode_compressed([data], kind).numpy()
    assert ours.tolist() == theirs.tolist()


def test_decode_compressed_garbage_after_gzip_is_data_loss_as_in_tensorflow(tf):
    data = [gzip.compress(b"abc") + b"garbage"]
    with pytest.raises(errors.DataLossError, match="trailing data"):
        io.decode_compressed(data, "GZIP")
    with pytest.raises(tf.errors.DataLossError):
        tf.io.decode_compressed(data, "GZIP")


def test_decode_compressed_scalar_and_errors():
    assert io.decode_compressed(zlib.compress(b"abc"), "ZLIB") == b"abc"
    with pytest.raises(errors.DataLossError):
        io.decode_compressed([zlib.compress(b"abc")[:-3]], "ZLIB")
    with pytest.raises(errors.InvalidArgumentError, match="Only ZLIB, GZIP or NONE"):
        io.decode_compressed([b"x"], "LZ4")


def test_decode_compressed_truncated_data_is_data_loss():
    # Stricter than TensorFlow, which returns what it could inflate.
    with pytest.raises(errors.DataLossError, match="Element 0"):
        io.decode_compressed([gzip.compress(b"payload")[:-5]], "GZIP")


def test_decode_compressed_corrupt_data_error_class_matches_tensorflow(tf):
    corrupt = [b"not zlib data"]
    with pytest.raises(errors.OpError) as ours:
        io.decode_compressed(corrupt, "ZLIB")
    with pytest.raises(tf.errors.OpError) as theirs:
        tf.io.decode_compressed(corrupt, "ZLIB")
    assert type(ours.value).__name__ == type(theirs.value).__name__
