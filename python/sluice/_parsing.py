"""Parsing of tf.train.Example / SequenceExample records, and the CSV, raw and
compressed-bytes decoders (re-exported by :mod:`sluice.io`).

The names, arguments and defaults are TensorFlow's (``tf.io``). The work runs
in sluice's C++ parser, which decodes the protocol-buffer wire format straight
into the outputs (no protobuf library is involved) and releases the GIL for
large batches. Results are numpy arrays (string outputs: object arrays of
bytes, or bytes for a string scalar), :class:`sluice.SparseTensor` for
``VarLenFeature`` / ``SparseFeature`` and :class:`sluice.RaggedTensor` for
``RaggedFeature``.

Errors in the data raise :class:`sluice.errors.InvalidArgumentError` with
TensorFlow's message, naming the record (``Index: 3``, or its name from
``example_names``) and the feature key. Invalid feature configurations raise
ValueError/TypeError, as TensorFlow's Python layer does, or
InvalidArgumentError for what TensorFlow checks in its kernel.

A feature dtype may be given as a sluice DType (``sluice.int64``), a numpy
dtype or type, a name (``"float32"``, ``"string"``) or a TensorFlow DType
(anything with a ``.name``; TensorFlow itself is never imported). Thread-safe:
the functions keep no state.
"""

import builtins
import collections

import numpy as np

from sluice import _core
from sluice import dtypes as _dtypes
from sluice.sparse_tensor import RaggedTensor, SparseTensor

__all__ = [
    "FixedLenFeature", "VarLenFeature", "FixedLenSequenceFeature", "SparseFeature", "RaggedFeature",
    "parse_single_example", "parse_example", "parse_single_sequence_example", "parse_sequence_example",
    "decode_csv", "decode_raw", "decode_compressed", "string_split",
]


# ---- feature configurations (TensorFlow's namedtuples) ----------------------

class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A feature with a fixed number of values, parsed to a dense array.

    Args:
      shape: the output shape (a list/tuple of ints, or an int); the record
        holds exactly prod(shape) values.
      dtype: int64, float32 or string.
      default_value: used when a record lacks the feature; prod(shape)
        values (any nesting; reshaped to `shape`). None: the feature is
        required.
    """

    __slots__ = ()

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature with any number of values, parsed to a SparseTensor.

    Args:
      dtype: int64, float32 or string.
    """

    __slots__ = ()


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A sequence of rows of a fixed shape, parsed to a dense array
    [rows] + shape ([batch, max rows] + shape for a batch, padded).

    In a SequenceExample's feature lists, each row is one Feature; in an
    Example (allow_missing must be True) the values of one Feature are cut
    into rows.

    Args:
      shape: the shape of one row.
      dtype: int64, float32 or string.
      allow_missing: whether a record may lack the feature (zero rows).
      default_value: a scalar padding value for batches of Examples.
    """

    __slots__ = ()

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class SparseFeature(collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """A SparseTensor assembled from index features and a value feature.

    Args:
      index_key: the int64 feature(s) holding the index along each dimension
        (a string, or a list of strings for several dimensions).
      value_key: the feature holding the values.
      dtype: int64, float32 or string.
      size: the dense size of each dimension (an int, or a list).
      already_sorted: if True the indices are kept in record order;
        otherwise sorted.
    """

    __slots__ = ()

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


class RaggedFeature(collections.namedtuple(
        "RaggedFeature", ["dtype", "value_key", "partitions", "row_splits_dtype", "validate"])):
    """A feature parsed to a RaggedTensor (``tf.io.RaggedFeature``).

    Args:
      dtype: int64, float32 or string.
      value_key: the feature with the flat values (default: the output name).
      partitions: ragged (or uniform) dimensions below the outer one,
        outermost first: RaggedFeature.RowSplits(key), RowLengths(key),
        RowStarts(key), RowLimits(key), ValueRowIds(key) (each naming an
        int64 feature) or UniformRowLength(length).
      row_splits_dtype: int32 (default) or int64.
      validate: accepted for TensorFlow's signature; sluice always checks the
        partitions (InvalidArgumentError when inconsistent).
    """

    __slots__ = ()

    RowSplits = collections.namedtuple("RowSplits", ["key"])
    RowLengths = collections.namedtuple("RowLengths", ["key"])
    RowStarts = collections.namedtuple("RowStarts", ["key"])
    RowLimits = collections.namedtuple("RowLimits", ["key"])
    ValueRowIds = collections.namedtuple("ValueRowIds", ["key"])
    UniformRowLength = collections.namedtuple("UniformRowLength", ["length"])

    def __new__(cls, dtype, value_key=None, partitions=(), row_splits_dtype=_dtypes.int32, validate=False):
        return super().__new__(cls, dtype, value_key, tuple(partitions), row_splits_dtype, validate)


# RaggedPartition::Kind numbers (feature_spec.h).
_PARTITION_KINDS = {
    RaggedFeature.RowSplits: 0, RaggedFeature.RowLengths: 1, RaggedFeature.RowStarts: 2,
    RaggedFeature.RowLimits: 3, RaggedFeature.ValueRowIds: 4, RaggedFeature.UniformRowLength: 5,
}
_PARSE_DTYPES = ("int64", "float32", "string")


# ---- argument conversion --------------------------------------------------------

def _as_dtype(dtype):
    """sluice DType of a DType / numpy dtype / name / TF DType (duck-typed)."""
    if isinstance(dtype, (_dtypes.DType, str, np.dtype, type, int)):
        return _dtypes.as_dtype(dtype)
    name = getattr(dtype, "name", None)
    if isinstance(name, str):
        return _dtypes.as_dtype(name)
    return _dtypes.as_dtype(dtype)


def _parse_dtype(dtype, key):
    d = _as_dtype(dtype)
    if d.name not in _PARSE_DTYPES:
        raise ValueError("Unsupported dtype %s for feature %r: features are int64, float32 or string."
                         % (d.name, key))
    return d


def _as_shape(shape, key):
    if shape is None:
        raise ValueError("Missing shape for feature %r." % (key,))
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    dims = getattr(shape, "as_list", None)  # a tf.TensorShape
    if dims is not None:
        shape = dims()
    out = []
    for d in shape:
        if d is None or not isinstance(d, (int, np.integer)) or d < 0:
            raise ValueError("Feature %r: shape %r must be fully defined with dimensions >= 0." % (key, shape))
        out.append(int(d))
    return out


def _to_bytes(v):
    if isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, (np.bytes_, bytearray, memoryview)):
        return bytes(v)
    raise TypeError("expected bytes or str, got %s" % type(v).__name__)


def _string_array(values):
    """A numpy object array of bytes (or bytes for a scalar) from str/bytes values."""
    if isinstance(values, (bytes, str, np.bytes_, np.str_)):
        return _to_bytes(values)
    arr = np.asarray(values, dtype=object)
    if arr.ndim == 0:
        return _to_bytes(arr.item())
    flat = [_to_bytes(v) for v in arr.ravel()]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(arr.shape)


def _typed_array(values, dtype, key):
    """`values` as a flat numpy array the C++ side copies (object array of bytes for strings)."""
    try:
        if dtype == _dtypes.string:
            arr = np.asarray(_string_array(values), dtype=object).reshape(-1)
        else:
            arr = np.ascontiguousarray(np.asarray(values, dtype=dtype.as_numpy_dtype).reshape(-1))
    except (TypeError, ValueError) as e:
        raise TypeError("Feature %r: default_value %r is not of dtype %s: %s" % (key, values, dtype.name, e)) \
            from None
    return arr


def _spec_entry(name, config):
    if not isinstance(name, str):
        raise TypeError("feature names must be str, got %r" % (name,))
    if isinstance(config, FixedLenFeature):
        dtype = _parse_dtype(config.dtype, name)
        shape = _as_shape(config.shape, name)
        default = config.default_value
        if default is not None:
            # Flat: the C++ parser checks the count (InvalidArgumentError, as
            # TF's reshape) and reshapes it to `shape`.
            default = _typed_array(default, dtype, name)
        return ("fixed", name, shape, dtype.as_datatype_enum, default)
    if isinstance(config, VarLenFeature):
        return ("var", name, _parse_dtype(config.dtype, name).as_datatype_enum)
    if isinstance(config, FixedLenSequenceFeature):
        dtype = _parse_dtype(config.dtype, name)
        default = config.default_value
        if default is not None:
            default = _typed_array(default, dtype, name)
            if default.size != 1:
                raise ValueError("Feature %r: default_value of a FixedLenSequenceFeature must be a scalar."
                                 % (name,))
            default = default.reshape(())
        return ("fixed_seq", name, _as_shape(config.shape, name), dtype.as_datatype_enum,
                bool(config.allow_missing), default)
    if isinstance(config, SparseFeature):
        index_key = config.index_key
        index_keys = [index_key] if isinstance(index_key, str) else list(index_key)
        size = config.size
        sizes = [int(size)] if isinstance(size, (int, np.integer)) else [int(s) for s in size]
        if len(sizes) != len(index_keys):
            raise ValueError("SparseFeature %r: %d index keys but %d sizes." % (name, len(index_keys), len(sizes)))
        return ("sparse", name, index_keys, config.value_key, _parse_dtype(config.dtype, name).as_datatype_enum,
                sizes, bool(config.already_sorted))
    if isinstance(config, RaggedFeature):
        partitions = []
        for p in config.partitions:
            kind = _PARTITION_KINDS.get(type(p))
            if kind is None:
                raise TypeError("RaggedFeature %r: unsupported partition %r." % (name, p))
            if kind == 5:
                partitions.append((kind, "", int(p.length)))
            else:
                partitions.append((kind, p.key, 0))
        splits_dtype = _as_dtype(config.row_splits_dtype)
        if splits_dtype.name not in ("int32", "int64"):
            raise ValueError("RaggedFeature %r: row_splits_dtype must be int32 or int64." % (name,))
        return ("ragged", name, _parse_dtype(config.dtype, name).as_datatype_enum, config.value_key or name,
                partitions, splits_dtype.as_datatype_enum)
    raise TypeError("Unsupported feature configuration for %r: %r" % (name, config))


def _spec(features):
    if features is None:
        return []
    if not isinstance(features, dict):
        raise TypeError("features must be a dict of feature configurations, got %s" % type(features).__name__)
    return [_spec_entry(name, config) for name, config in sorted(features.items())]


def _record(serialized):
    """One serialized record as bytes."""
    if isinstance(serialized, np.ndarray):
        if serialized.ndim != 0:
            raise ValueError("serialized must be a scalar, got shape %s" % (serialized.shape,))
        serialized = serialized.item()
    try:
        return _to_bytes(serialized)
    except TypeError:
        raise TypeError("serialized must be bytes or str, got %s" % type(serialized).__name__) from None


def _records(serialized):
    """A batch of serialized records as a tuple of bytes."""
    if isinstance(serialized, (bytes, str)):
        raise ValueError("serialized must be a vector (list) of records; use parse_single_example for one")
    arr = serialized if isinstance(serialized, np.ndarray) else None
    if arr is not None and arr.ndim != 1:
        raise ValueError("serialized must be a vector, got shape %s" % (arr.shape,))
    try:
        return tuple(_to_bytes(r) for r in serialized)
    except TypeError as e:
        raise TypeError("serialized records: %s" % e) from None


def _names(names, n):
    if names is None:
        return None
    if isinstance(names, (bytes, str)):
        names = [names]
    names = [n_.decode("utf-8", "backslashreplace") if isinstance(n_, bytes) else str(n_) for n_ in names]
    if len(names) != n:
        raise ValueError("example_names has %d entries but there are %d records" % (len(names), n))
    return names


def _wrap(outputs, features):
    """C++ results -> numpy / SparseTensor / RaggedTensor, by feature kind."""
    result = {}
    for name, value in outputs.items():
        config = features[name]
        if isinstance(config, (VarLenFeature, SparseFeature)):
            result[name] = SparseTensor(*value)
        elif isinstance(config, RaggedFeature):
            values, splits = value
            result[name] = RaggedTensor.from_nested_row_splits(values, splits, validate=False) if splits else values
        else:
            result[name] = value
    return result


# ---- Example parsing ----------------------------------------------------------------

def parse_single_example(serialized, features, example_names=None, name=None):
    """Parses one serialized tf.train.Example (``tf.io.parse_single_example``).

    Args:
      serialized: the record (bytes, or str as UTF-8; a 0-d array).
      features: dict of output name -> FixedLenFeature / VarLenFeature /
        FixedLenSequenceFeature / SparseFeature / RaggedFeature.
      example_names: the record's name, used in error messages (optional).
      name: ignored (TensorFlow's op name).

    Returns:
      dict of output name -> numpy array (FixedLen*: of the feature's shape),
      SparseTensor (VarLen: indices [n, 1]; SparseFeature: as its size) or
      RaggedTensor (RaggedFeature with partitions; a plain array without).

    Raises:
      sluice.errors.InvalidArgumentError: a malformed record, a missing
        required feature, a wrong type or number of values.
      ValueError, TypeError: invalid arguments.
    """
    del name
    record = _record(serialized)
    parser = _core.ExampleParser(_spec(features))
    if example_names is not None:
        # Parsed as a batch of one so that errors carry the name.
        names = _names(example_names if isinstance(example_names, (list, tuple, np.ndarray))
                       else [example_names], 1)
        batch = _wrap(parser.parse((record,), names), features)
        return {k: _unbatch(v) for k, v in batch.items()}
    return _wrap(parser.parse_single(record), features)


def _unbatch(value):
    """Record 0 of a batch of one: drops the leading dimension."""
    if isinstance(value, SparseTensor):
        return SparseTensor(value.indices[:, 1:], value.values, value.dense_shape[1:])
    if isinstance(value, RaggedTensor):
        return value.values  # the only row holds every value
    if isinstance(value, np.ndarray):
        return value[0]
    return value


def parse_example(serialized, features, example_names=None, name=None):
    """Parses a batch of serialized tf.train.Example records (``tf.io.parse_example``).

    Args:
      serialized: the records: a list/tuple of bytes (or str), or a 1-D
        numpy array of them.
      features: dict of output name -> feature configuration (see
        parse_single_example).
      example_names: optional names of the records, for error messages.
      name: ignored.

    Returns:
      dict of output name -> numpy array [batch] + shape (FixedLenFeature;
      FixedLenSequenceFeature padded to the longest record), SparseTensor
      (VarLenFeature: indices [n, 2], dense_shape [batch, most values];
      SparseFeature: [batch] + size) or RaggedTensor (batch as the outer
      ragged dimension). The GIL is released while large batches are parsed.

    Raises:
      sluice.errors.InvalidArgumentError: bad data, naming the record index
        (or name) and the feature key.
      ValueError, TypeError: invalid arguments.
    """
    del name
    records = _records(serialized)
    parser = _core.ExampleParser(_spec(features))
    return _wrap(parser.parse(records, _names(example_names, len(records))), features)


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None,
                                  example_name=None, name=None):
    """Parses one serialized tf.train.SequenceExample
    (``tf.io.parse_single_sequence_example``).

    Args:
      serialized: the record (bytes or str).
      context_features: dict of name -> FixedLenFeature / VarLenFeature /
        RaggedFeature, read from the context.
      sequence_features: dict of name -> FixedLenSequenceFeature /
        VarLenFeature / RaggedFeature, read from the feature lists.
      example_name: the record's name, for error messages.
      name: ignored.

    Returns:
      (context, feature_lists): two dicts of output name -> value.
      FixedLenSequenceFeature gives [rows] + shape; VarLenFeature a
      SparseTensor [rows, most values]; RaggedFeature a RaggedTensor.

    Raises:
      sluice.errors.InvalidArgumentError: bad data; ValueError/TypeError for
        invalid arguments.
    """
    del name
    if not context_features and not sequence_features:
        raise ValueError("Missing features: context_features and sequence_features are both empty.")
    record = _record(serialized)
    parser = _core.SequenceExampleParser(_spec(context_features), _spec(sequence_features))
    if example_name is not None:
        context, lists, _ = parser.parse((record,), _names([example_name], 1))
        context = {k: _unbatch(v) for k, v in _wrap(context, context_features).items()}
        lists = {k: _unbatch(v) for k, v in _wrap(lists, sequence_features).items()}
        return context, lists
    context, lists, _ = parser.parse_single(record)
    return _wrap(context, context_features), _wrap(lists, sequence_features)


def parse_sequence_example(serialized, context_features=None, sequence_features=None, example_names=None,
                           name=None):
    """Parses a batch of serialized tf.train.SequenceExample records
    (``tf.io.parse_sequence_example``).

    Args:
      serialized: a list/tuple/1-D array of records (bytes or str).
      context_features, sequence_features: as parse_single_sequence_example.
      example_names: optional record names for error messages.
      name: ignored.

    Returns:
      (context, feature_lists, lengths): dicts of output name -> value, with
      a leading batch dimension (sequences padded to the longest record);
      `lengths` maps each FixedLenSequenceFeature to its int64 row counts
      [batch].

    Raises:
      sluice.errors.InvalidArgumentError: bad data; ValueError/TypeError for
        invalid arguments.
    """
    del name
    if not context_features and not sequence_features:
        raise ValueError("Missing features: context_features and sequence_features are both empty.")
    records = _records(serialized)
    parser = _core.SequenceExampleParser(_spec(context_features), _spec(sequence_features))
    context, lists, lengths = parser.parse(records, _names(example_names, len(records)))
    return _wrap(context, context_features), _wrap(lists, sequence_features), lengths


# ---- decoders -----------------------------------------------------------------------

_CSV_DTYPES = ("int32", "int64", "float32", "float64", "string")


def _csv_default(i, default):
    """(dtype enum, default array or None) of record_defaults[i]."""
    if isinstance(default, _dtypes.DType) or (hasattr(default, "as_datatype_enum") and hasattr(default, "name")) \
            or isinstance(default, type):
        dtype, value = _as_dtype(default), None
    else:
        arr = default if isinstance(default, np.ndarray) else None
        if isinstance(default, np.generic):  # a bare numpy scalar keeps its dtype
            arr = np.asarray(default)
        if arr is None:
            items = default if isinstance(default, (list, tuple)) else [default]
            if len(items) > 1:
                raise ValueError("There should only be 1 default per field but field %d has %d" % (i, len(items)))
            if not items:
                dtype, value = _dtypes.float32, None  # TF: [] converts to an empty float32 tensor
            else:
                v = items[0]
                # TensorFlow's conversion of a list: ints become int32 (int64
                # when too large), Python floats float32, numpy floats keep
                # their type.
                if isinstance(v, (bytes, str, np.bytes_, np.str_)):
                    dtype = _dtypes.string
                elif isinstance(v, (bool, np.bool_)):
                    raise TypeError("record_defaults[%d]: bool is not a CSV column type" % i)
                elif isinstance(v, (int, np.integer)):
                    dtype = _dtypes.int32 if -2**31 <= int(v) < 2**31 else _dtypes.int64
                elif isinstance(v, np.floating):
                    dtype = _dtypes.as_dtype(v.dtype)
                elif isinstance(v, float):
                    dtype = _dtypes.float32
                else:
                    raise TypeError("record_defaults[%d]: unsupported default %r" % (i, v))
                value = v
        else:
            dtype = _dtypes.as_dtype(arr.dtype)
            if arr.size > 1:
                raise ValueError("There should only be 1 default per field but field %d has %d" % (i, arr.size))
            value = arr.reshape(-1)[0] if arr.size else None
        if value is not None:
            value = _typed_array([value], dtype, "record_defaults[%d]" % i).reshape(())
    if dtype.name not in _CSV_DTYPES:
        raise TypeError("record_defaults[%d]: unsupported dtype %s (int32, int64, float32, float64 or string)"
                        % (i, dtype.name))
    return dtype.as_datatype_enum, value


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None, na_value="",
               select_cols=None):
    """Converts CSV records to columns (``tf.io.decode_csv``).

    Args:
      records: bytes/str, or a list/array of them (any shape).
      record_defaults: one entry per output column: a default value (a
        scalar or a one-element list, converted as TensorFlow converts it:
        ints -> int32 (int64 if too large), Python floats -> float32,
        bytes/str -> string, numpy floats and bare numpy scalars and arrays
        keep their dtype), or
        an empty list (a required float32 column) or a dtype (a required
        column of that dtype).
      field_delim: the one-character separator.
      use_quote_delim: whether double quotes delimit fields (RFC 4180).
      name: ignored.
      na_value: a field equal to this is treated as missing.
      select_cols: optional strictly increasing column indices to keep.

    Returns:
      A list of numpy arrays, one per column, shaped like `records`.

    Raises:
      sluice.errors.InvalidArgumentError: a record with the wrong number of
        fields, a missing required field, an unparsable number, bad quoting
        (messages name the record and field), or bad options.
    """
    del name
    if isinstance(record_defaults, (str, bytes)) or not hasattr(record_defaults, "__len__"):
        raise TypeError("record_defaults must be a list")
    defaults = [_csv_default(i, d) for i, d in enumerate(record_defaults)]
    cols = [] if select_cols is None else [int(c) for c in select_cols]
    delim = field_delim.decode() if isinstance(field_delim, bytes) else field_delim
    na = na_value.decode() if isinstance(na_value, bytes) else na_value
    return _core.decode_csv(_string_array(records), defaults, delim, bool(use_quote_delim), na, cols)


def decode_raw(input_bytes, out_type, little_endian=True, fixed_length=None, name=None):
    """Reinterprets bytes as numbers (``tf.io.decode_raw``).

    Args:
      input_bytes: bytes, or a list/array of them (any shape).
      out_type: the number dtype (e.g. sluice.uint8, np.float32, "int16").
      little_endian: the byte order of the data.
      fixed_length: cut or zero-pad every string to this many bytes; without
        it all strings must have the same length.
      name: ignored.

    Returns:
      A numpy array of shape input.shape + [n].

    Raises:
      sluice.errors.InvalidArgumentError: lengths that do not fit out_type.
    """
    del name
    dtype = _as_dtype(out_type)
    if dtype == _dtypes.string:
        raise TypeError("decode_raw: out_type cannot be string")
    length = None if fixed_length is None else int(fixed_length)
    return _core.decode_raw(_string_array(input_bytes), dtype.as_datatype_enum, bool(little_endian), length)


def decode_compressed(bytes, compression_type="", name=None):  # noqa: A002 - TensorFlow's name; shadows builtins.bytes
    """Decompresses each string (``tf.io.decode_compressed``).

    Args:
      bytes: bytes, or a list/array of them.
      compression_type: "" (none), "ZLIB" or "GZIP".
      name: ignored.

    Returns:
      bytes for a scalar input, else an object array of bytes of the same
      shape.

    Raises:
      sluice.errors.InvalidArgumentError: an unknown compression type.
      sluice.errors.DataLossError: corrupt or truncated data, naming the
        element.
    """
    del name
    compression_type = compression_type or ""
    if isinstance(compression_type, builtins.bytes):
        compression_type = compression_type.decode()
    return _core.decode_compressed(_string_array(bytes), compression_type)


def string_split(source, sep=None, skip_empty=True, delimiter=None, result_type="SparseTensor", name=None):
    """Splits strings into tokens (``tf.compat.v1.string_split``).

    Args:
      source: a list/1-D array of bytes or str.
      sep: the delimiter characters (each one separates tokens; default " ";
        "" splits into single bytes). `delimiter` is its old name.
      skip_empty: whether to drop empty tokens.
      result_type: "SparseTensor" (default) or "RaggedTensor".
      name: ignored.

    Returns:
      A SparseTensor (indices [k, 2], values, dense_shape [n, most tokens])
      or a RaggedTensor of the tokens of each string.
    """
    del name
    if sep is not None and delimiter is not None and sep != delimiter:
        raise ValueError("Cannot specify both 'sep' and 'delimiter'")
    delim = sep if sep is not None else delimiter
    if delim is None:
        delim = " "
    if isinstance(delim, bytes):
        delim = delim.decode("utf-8")
    strings = _string_array(source)
    if not isinstance(strings, np.ndarray) or strings.ndim != 1:
        raise ValueError("source must be a vector of strings")
    if result_type not in ("SparseTensor", "RaggedTensor"):
        raise ValueError("result_type must be 'RaggedTensor' or 'SparseTensor'.")
    st = SparseTensor(*_core.string_split(strings, delim, bool(skip_empty)))
    if result_type == "SparseTensor":
        return st
    counts = np.bincount(st.indices[:, 0], minlength=strings.shape[0]) if len(st.values) else \
        np.zeros(strings.shape[0], np.int64)
    splits = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return RaggedTensor.from_row_splits(st.values, splits)
