"""Data types of sluice tensors, with TensorFlow's names and DataType numbers.

``sluice.float32``, ``sluice.string``, ... are :class:`DType` objects; any
place that takes a dtype also accepts a numpy dtype or scalar type
(``np.float32``), a name (``'float32'``) or a DataType number.
:func:`as_dtype` does that conversion. Equality follows TensorFlow:
``sluice.float32 == np.float32 == 'float32'``.

``string`` tensors hold bytes: string scalars come out as ``bytes``, other
string tensors as numpy object arrays of ``bytes``. ``bfloat16`` comes out
as an ``ml_dtypes.bfloat16`` array when ml_dtypes is installed, otherwise as
float32 (every bfloat16 value is exactly a float32).
"""

import builtins

import numpy as np

try:  # optional: a numpy dtype for bfloat16
    import ml_dtypes as _ml_dtypes

    _NP_BFLOAT16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - depends on the environment
    _ml_dtypes = None
    _NP_BFLOAT16 = None


class DType:
    """The type of the elements of a tensor (``tf.dtypes.DType``)."""

    __slots__ = ("_type_enum", "_name", "_np_type", "_storage")

    def __init__(self, type_enum, name, np_type, storage):
        self._type_enum = type_enum
        self._name = name
        self._np_type = np_type  # what as_numpy_dtype returns
        self._storage = storage  # the np.dtype the C++ side copies (None: object of bytes)

    @property
    def name(self):
        """TensorFlow's name: 'float32', 'string', ..."""
        return self._name

    @property
    def as_datatype_enum(self):
        """TensorFlow's DataType number (types.proto)."""
        return self._type_enum

    @property
    def as_numpy_dtype(self):
        """The numpy scalar type (``object`` for string; ml_dtypes' bfloat16 or None)."""
        return self._np_type

    @property
    def is_bool(self):
        return self._type_enum == 10

    @property
    def is_floating(self):
        return self._name in ("float16", "bfloat16", "float32", "float64")

    @property
    def is_complex(self):
        return self._name in ("complex64", "complex128")

    @property
    def is_integer(self):
        return self._name.startswith(("int", "uint"))

    @property
    def is_unsigned(self):
        return self._name.startswith("uint")

    @property
    def is_numpy_compatible(self):
        return self._np_type is not None

    @property
    def size(self):
        """Bytes per element (1 for string, as TensorFlow reports)."""
        if self._storage is None:
            return 1
        return self._storage.itemsize

    @property
    def min(self):
        if self.is_integer:
            return int(np.iinfo(self._storage).min)
        if self.is_floating and self._name != "bfloat16":
            return float(np.finfo(self._storage).min)
        raise TypeError("Cannot find minimum value of %s." % self)

    @property
    def max(self):
        if self.is_integer:
            return int(np.iinfo(self._storage).max)
        if self.is_floating and self._name != "bfloat16":
            return float(np.finfo(self._storage).max)
        raise TypeError("Cannot find maximum value of %s." % self)

    def is_compatible_with(self, other):
        return self == other

    def __eq__(self, other):
        if isinstance(other, DType):
            return self._type_enum == other._type_enum
        try:
            return self._type_enum == as_dtype(other)._type_enum
        except TypeError:
            return False

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return self._type_enum

    def __repr__(self):
        return "sluice." + self._name

    def __str__(self):
        return "<dtype: %r>" % self._name

    def __reduce__(self):
        return as_dtype, (self._name,)


def _d(type_enum, name, np_type, storage="same"):
    if storage == "same":
        storage = np.dtype(np_type)
    return DType(type_enum, name, np_type, storage)


float16 = _d(19, "float16", np.float16)
half = float16
float32 = _d(1, "float32", np.float32)
float64 = _d(2, "float64", np.float64)
double = float64
bfloat16 = _d(14, "bfloat16", _ml_dtypes.bfloat16 if _ml_dtypes else None, np.dtype(np.uint16))
int8 = _d(6, "int8", np.int8)
int16 = _d(5, "int16", np.int16)
int32 = _d(3, "int32", np.int32)
int64 = _d(9, "int64", np.int64)
uint8 = _d(4, "uint8", np.uint8)
uint16 = _d(17, "uint16", np.uint16)
uint32 = _d(22, "uint32", np.uint32)
uint64 = _d(23, "uint64", np.uint64)
bool = _d(10, "bool", np.bool_)  # noqa: A001 - TensorFlow's name
string = _d(7, "string", object, None)
complex64 = _d(8, "complex64", np.complex64)
complex128 = _d(18, "complex128", np.complex128)

_ALL = (float16, float32, float64, bfloat16, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
        bool, string, complex64, complex128)
_BY_ENUM = {d.as_datatype_enum: d for d in _ALL}
_BY_NAME = {d.name: d for d in _ALL}
# TensorFlow's aliases ('float' is float32 as in TF, not numpy's float64).
_BY_NAME.update({"half": float16, "float": float32, "double": float64, "bytes": string, "str": string})
_BY_NP = {d._storage: d for d in _ALL if d._storage is not None and d is not bfloat16}
_BY_PYTHON_TYPE = {float: float32, int: int64, complex: complex128, bytes: string, str: string,
                   object: string, builtins.bool: bool}


def as_dtype(type_value):
    """Converts `type_value` to a DType (``tf.dtypes.as_dtype``).

    Accepts a DType, a DataType number, a name ('float32', 'string', 'half'),
    a numpy dtype or scalar type, or a Python type (float -> float32 as in TF).
    TypeError otherwise.
    """
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str):
        try:
            return _BY_NAME[type_value]
        except KeyError:
            pass
    elif isinstance(type_value, int) and not isinstance(type_value, np.generic):
        if type_value in _BY_ENUM:
            return _BY_ENUM[type_value]
        raise TypeError("Cannot convert value %r to a sluice DType." % (type_value,))
    if isinstance(type_value, type) and type_value in _BY_PYTHON_TYPE:
        return _BY_PYTHON_TYPE[type_value]
    try:
        np_dtype = np.dtype(type_value)
    except TypeError:
        raise TypeError("Cannot convert value %r to a sluice DType." % (type_value,)) from None
    if _NP_BFLOAT16 is not None and np_dtype == _NP_BFLOAT16:
        return bfloat16
    if np_dtype.kind in "OSU":
        return string
    if np_dtype in _BY_NP:
        return _BY_NP[np_dtype]
    raise TypeError("Cannot convert value %r to a sluice DType." % (type_value,))


__all__ = ["DType", "as_dtype"] + [d.name for d in _ALL if d.name != "bool"] + ["half", "double"]
