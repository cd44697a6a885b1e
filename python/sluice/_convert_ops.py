"""cast and string_to_number with TensorFlow's rules, on numpy arrays.

``cast`` is tf.cast (numpy's astype, with TF's conversions of Python values
and of complex numbers); ``string_to_number`` is tf.strings.to_number /
tf.compat.v1.string_to_number, with the grammar of TF's parser (checked
against TensorFlow 2.21 in python/src/test_tf1_names.py).
"""

import re
import warnings

import numpy as np

from sluice import dtypes as _dtypes
from sluice import errors as _errors
from sluice.sparse_tensor import SparseTensor

__all__ = ["cast", "string_to_number"]


# ---- cast ----------------------------------------------------------------------

_INT32 = np.iinfo(np.int32)


def _as_array(x):
    """x as numpy, converting Python values as tf.convert_to_tensor does (float -> float32, int -> int32)."""
    if isinstance(x, (np.ndarray, np.generic)):
        return np.asarray(x)
    a = np.asarray(x)
    if a.dtype == np.float64:
        return a.astype(np.float32)
    if a.dtype == np.int64 and (a.size == 0 or (a.min() >= _INT32.min and a.max() <= _INT32.max)):
        return a.astype(np.int32)
    return a


def _is_string(a):
    return a.dtype == object or a.dtype.kind in "SU"


def cast(x, dtype, name=None):
    """tf.cast: ``x`` (array-like or SparseTensor) converted to ``dtype``.

    Floats to integers truncate toward zero; anything to bool is ``!= 0``;
    complex numbers keep their real part when the target is not complex; bool
    becomes 0 / 1. Python floats are float32 first and Python ints int32 (as
    TF converts them), so ``cast(0.1, float64)`` is 0.10000000149011612. Out of
    range values wrap or saturate as the CPU does (TF's static_cast).
    Returns a numpy array (a SparseTensor for a SparseTensor).
    Raises UnimplementedError for a cast from or to string, as TF.
    """
    del name
    target = _dtypes.as_dtype(dtype)
    if isinstance(x, SparseTensor):
        return SparseTensor(x.indices, cast(x.values, target), x.dense_shape)
    a = _as_array(x)
    source = "string" if _is_string(a) else _dtypes.as_dtype(a.dtype).name
    if source == "string" or target.name == "string":
        raise _errors.UnimplementedError(None, None, f"Cast {source} to {target.name} is not supported")
    np_type = target.as_numpy_dtype
    if np_type is None:
        raise TypeError("cast to bfloat16 needs the ml_dtypes package")
    if a.dtype.kind == "c" and not target.is_complex:
        a = a.real  # TF drops the imaginary part, bool included
    with np.errstate(invalid="ignore", over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(a.astype(np_type))


# ---- string_to_number --------------------------------------------------------------

# TF's parser (absl's SimpleAtod / safe_strto*): ASCII whitespace around the
# number; decimal or 0x-hexadecimal floats; inf, infinity, nan and nan(chars)
# in any case; integers in decimal only, with an optional sign ('+' only for
# unsigned types).
_SPACE = " \t\n\v\f\r"
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_HEX = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?\Z")
_SPECIAL = re.compile(r"([+-]?)(?:(inf|infinity)|nan(?:\([0-9A-Za-z_]*\))?)\Z", re.IGNORECASE)
_SIGNED_INT = re.compile(r"[+-]?[0-9]+\Z")
_UNSIGNED_INT = re.compile(r"\+?[0-9]+\Z")

_OUT_TYPES = ("float32", "float64", "int32", "int64", "uint32", "uint64")


def _parse_float(s):
    """The float value of `s` (already stripped), or None when TF rejects it."""
    if _DECIMAL.match(s):
        return float(s)
    if _HEX.match(s):
        return float.fromhex(s)
    special = _SPECIAL.match(s)
    if special:
        if special.group(2) is None:
            return float("nan")
        return float("-inf") if special.group(1) == "-" else float("inf")
    return None


def _parse_int(s, np_type):
    """The integer value of `s` (already stripped), or None when TF rejects it (out of range included)."""
    info = np.iinfo(np_type)
    if not (_UNSIGNED_INT if info.min == 0 else _SIGNED_INT).match(s):
        return None
    v = int(s)
    return v if info.min <= v <= info.max else None


def _text(item):
    if isinstance(item, bytes):
        return item.decode("latin-1")  # TF reads bytes; non-ASCII never parses anyway
    if isinstance(item, str):
        return item
    raise TypeError(f"Cannot convert {item!r} to EagerTensor of dtype string")


def string_to_number(string_tensor=None, out_type=_dtypes.float32, name=None, input=None):  # noqa: A002 - TF's name
    """tf.compat.v1.string_to_number / tf.strings.to_number: parses each string.

    ``string_tensor`` (or ``input``): a str / bytes or an array-like of them.
    ``out_type``: float32 (default), float64, int32, int64, uint32 or uint64.
    Floats accept what TF's parser accepts: surrounding ASCII whitespace,
    decimals with exponents, 0x hexadecimal ("0x10", "0x1p3"), "inf",
    "infinity", "nan" in any case; values beyond the type's range become
    +-inf (or 0). Integers accept only decimal digits with a sign.
    Returns a numpy array of ``out_type`` with the input's shape.
    Raises InvalidArgumentError "StringToNumberOp could not correctly convert
    string: ..." for a string TF cannot parse ("", "1,000", "1.5" as an
    integer, an integer out of range), and for an unsupported ``out_type``.
    """
    del name
    if string_tensor is not None and input is not None:
        raise ValueError("Cannot specify both 'string_tensor' and 'input'.")
    values = input if string_tensor is None else string_tensor
    target = _dtypes.as_dtype(out_type)
    if target.name not in _OUT_TYPES:
        raise _errors.InvalidArgumentError(
            None, None, f"Value for attr 'out_type' of {target.name} is not in the list of allowed values: "
            "float, double, int32, int64, uint32, uint64")
    np_type = np.dtype(target.as_numpy_dtype)
    items = np.asarray(values, dtype=object)
    out = np.empty(items.shape, dtype=np_type)
    flat_out = out.reshape(-1)
    for i, item in enumerate(items.reshape(-1)):
        text = _text(item)
        s = text.strip(_SPACE)
        v = _parse_float(s) if np_type.kind == "f" else _parse_int(s, np_type)
        if v is None:
            raise _errors.InvalidArgumentError(
                None, None, f"StringToNumberOp could not correctly convert string: {text}")
        with np.errstate(over="ignore"):
            flat_out[i] = v
    return out
