"""sluice.errors, sluice.dtypes and the Tensor <-> numpy conversions (bind_core.cc)."""

import os
import pickle

import numpy as np

import pytest

import sluice
from sluice import _core
from sluice import errors

ALL_ERRORS = [
    ("CANCELLED", 1, errors.CancelledError),
    ("UNKNOWN", 2, errors.UnknownError),
    ("INVALID_ARGUMENT", 3, errors.InvalidArgumentError),
    ("DEADLINE_EXCEEDED", 4, errors.DeadlineExceededError),
    ("NOT_FOUND", 5, errors.NotFoundError),
    ("ALREADY_EXISTS", 6, errors.AlreadyExistsError),
    ("PERMISSION_DENIED", 7, errors.PermissionDeniedError),
    ("RESOURCE_EXHAUSTED", 8, errors.ResourceExhaustedError),
    ("FAILED_PRECONDITION", 9, errors.FailedPreconditionError),
    ("ABORTED", 10, errors.AbortedError),
    ("OUT_OF_RANGE", 11, errors.OutOfRangeError),
    ("UNIMPLEMENTED", 12, errors.UnimplementedError),
    ("INTERNAL", 13, errors.InternalError),
    ("UNAVAILABLE", 14, errors.UnavailableError),
    ("DATA_LOSS", 15, errors.DataLossError),
    ("UNAUTHENTICATED", 16, errors.UnauthenticatedError),
]


# ---- errors -------------------------------------------------------------------------

def test_installed_package_is_imported():
    if os.environ.get("SLUICE_DEV_STAGE"):  # scripts/dev-pytest.sh: a staged copy on purpose
        assert sluice.__file__.startswith(os.environ["SLUICE_DEV_STAGE"])
        return
    assert "site-packages" in sluice.__file__ or "dist-packages" in sluice.__file__
    assert _core.__name__ == "sluice._core"


@pytest.mark.parametrize("name,code,cls", ALL_ERRORS)
def test_error_codes_match_tensorflow_and_cpp(name, code, cls):
    assert getattr(errors, name) == code
    assert _core.code_name(code) == name
    assert errors.exception_type_from_error_code(code) is cls
    assert errors.error_code_from_exception_type(cls) == code
    assert issubclass(cls, errors.OpError)
    e = cls(None, None, "what happened")
    assert e.error_code == code and e.message == "what happened" and str(e) == "what happened"
    assert e.node_def is None and e.op is None


@pytest.mark.parametrize("name,code,cls", ALL_ERRORS)
def test_status_is_translated_to_its_exception(name, code, cls):
    with pytest.raises(cls, match="^boom 42$") as info:
        _core._raise_status(code, "boom 42", {"file": "a.tfrecord", "offset": "12"})
    assert info.value.error_code == code
    assert info.value.experimental_payloads == {"file": b"a.tfrecord", "offset": b"12"}


def test_ok_status_raises_nothing_and_unknown_code_is_unknown_error():
    _core._raise_status(0, "")
    with pytest.raises(errors.UnknownError):
        _core._raise_status(99, "from the future")


def test_non_utf8_message_is_escaped():
    with pytest.raises(errors.DataLossError, match=r"bad \\xff byte"):
        _core._raise_status(errors.DATA_LOSS, b"bad \xff byte")


def test_op_error_constructor_and_pickle():
    e = errors.OpError(None, None, "msg", errors.ABORTED)
    assert e.error_code == errors.ABORTED
    e2 = pickle.loads(pickle.dumps(e))
    assert type(e2) is errors.OpError and e2.message == "msg" and e2.error_code == errors.ABORTED
    o = pickle.loads(pickle.dumps(errors.OutOfRangeError(None, None, "end", {"k": b"v"})))
    assert type(o) is errors.OutOfRangeError and o.message == "end"
    assert o.experimental_payloads == {"k": b"v"}


# ---- dtypes ----------------------------------------------------------------------------

DTYPE_CASES = [
    (sluice.float16, np.float16, 19), (sluice.float32, np.float32, 1), (sluice.float64, np.float64, 2),
    (sluice.int8, np.int8, 6), (sluice.int16, np.int16, 5), (sluice.int32, np.int32, 3),
    (sluice.int64, np.int64, 9), (sluice.uint8, np.uint8, 4), (sluice.uint16, np.uint16, 17),
    (sluice.uint32, np.uint32, 22), (sluice.uint64, np.uint64, 23), (sluice.bool, np.bool_, 10),
    (sluice.complex64, np.complex64, 8), (sluice.complex128, np.complex128, 18),
]


@pytest.mark.parametrize("dtype,np_type,enum", DTYPE_CASES)
def test_dtype_names_numbers_and_numpy(dtype, np_type, enum):
    assert dtype.as_datatype_enum == enum
    assert dtype.as_numpy_dtype is np_type
    assert _core.dtype_name(enum) == dtype.name
    for alias in (dtype, dtype.name, np_type, np.dtype(np_type), enum):
        assert sluice.as_dtype(alias) is dtype
    assert dtype == np_type and dtype == dtype.name and dtype != "no such type"
    assert pickle.loads(pickle.dumps(dtype)) is dtype


def test_string_and_bfloat16_dtypes():
    assert sluice.as_dtype("string") is sluice.string
    assert sluice.as_dtype(object) is sluice.string
    assert sluice.as_dtype(np.bytes_) is sluice.string
    assert sluice.as_dtype(bytes) is sluice.string
    assert sluice.string.as_datatype_enum == 7 and _core.dtype_name(7) == "string"
    assert sluice.bfloat16.as_datatype_enum == 14 and _core.dtype_name(14) == "bfloat16"
    assert sluice.as_dtype("float") is sluice.float32  # TensorFlow's alias, not numpy's
    assert sluice.as_dtype(float) is sluice.float32
    assert sluice.as_dtype("half") is sluice.float16
    with pytest.raises(TypeError):
        sluice.as_dtype("no_such_type")
    with pytest.raises(TypeError):
        sluice.as_dtype(1000)


def test_dtype_properties():
    assert sluice.int8.min == -128 and sluice.uint16.max == 65535
    assert sluice.float32.is_floating and not sluice.float32.is_integer
    assert sluice.uint32.is_unsigned and sluice.uint32.is_integer
    assert sluice.complex64.is_complex and sluice.bool.is_bool
    assert sluice.float64.size == 8 and sluice.complex128.size == 16
    assert repr(sluice.int32) == "sluice.int32"


# ---- conversion -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,np_type,enum", DTYPE_CASES)
def test_numeric_roundtrip_through_a_tensor(dtype, np_type, enum):
    rng = np.random.default_rng(0)
    value = (rng.standard_normal((3, 4)) * 50).astype(np_type)
    out = _core._roundtrip(value, enum)
    assert out.dtype == np.dtype(np_type) and out.shape == (3, 4)
    np.testing.assert_array_equal(out, value)
    scalar = _core._roundtrip(np.asarray(value[0, 0]), enum)
    assert scalar.shape == () and scalar == value[0, 0]
    empty = _core._roundtrip(np.zeros((0, 5), np_type), enum)
    assert empty.shape == (0, 5) and empty.dtype == np.dtype(np_type)


def test_string_roundtrip():
    assert _core._roundtrip(b"scalar\x00bytes", 7) == b"scalar\x00bytes"
    arr = np.array([[b"a", b""], [b"\xff\x00", b"long" * 100]], dtype=object)
    out = _core._roundtrip(arr, 7)
    assert out.dtype == object and out.shape == (2, 2)
    assert out.tolist() == arr.tolist()
    assert all(type(x) is bytes for x in out.ravel())


def test_zero_copy_out_views_share_the_tensor_buffer():
    a, b = _core._shared_views(np.arange(12, dtype=np.float32).reshape(3, 4), 1)
    assert np.shares_memory(a, b)
    assert isinstance(a.base, _core._TensorRef) and a.base is not b.base
    assert a.__array_interface__["data"][0] == a.base.data_ptr == b.base.data_ptr
    # Two views of one buffer: neither may write into the other.
    assert not a.flags.writeable and not b.flags.writeable
    with pytest.raises(ValueError):
        a[0, 0] = 1


def test_exclusively_owned_tensor_comes_out_writable():
    out = _core._roundtrip(np.arange(6, dtype=np.int64), 9)
    assert isinstance(out.base, _core._TensorRef) and out.base.writable
    assert out.flags.writeable and not out.flags.owndata
    out += 1  # in place, into the tensor's buffer
    np.testing.assert_array_equal(out, np.arange(1, 7))


def test_array_keeps_the_tensor_alive():
    out = _core._roundtrip(np.full((1000,), 7, np.int32), 3)
    ref = out.base
    del ref
    import gc
    gc.collect()
    assert out.sum() == 7000  # the buffer still belongs to the array's base


def test_bfloat16_roundtrip_is_exact_for_representable_values():
    q = sluice.queue.FIFOQueue(5, sluice.bfloat16, shapes=(4,))
    values = np.array([1.0, -2.5, 3.140625, 65280.0], np.float32)  # exactly representable
    q.enqueue(values)
    q.enqueue(([1.00390625, 0.0, float("inf"), float("nan")],))  # 1+2^-8 rounds to even: 1.0
    out = q.dequeue()
    np.testing.assert_array_equal(np.asarray(out, np.float32), values)
    out2 = np.asarray(q.dequeue(), np.float32)
    assert out2[0] == 1.0 and out2[1] == 0.0 and np.isinf(out2[2]) and np.isnan(out2[3])
    if not _core.has_ml_dtypes:
        assert out.dtype == np.float32  # widened exactly
