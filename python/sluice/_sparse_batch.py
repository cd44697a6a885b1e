"""Batching SparseTensors as TensorFlow's ``tf.train`` batchers do.

TensorFlow's ``batch``/``shuffle_batch`` (and their ``_join`` and ``maybe_``
forms) take examples holding SparseTensors (a ``VarLenFeature`` of
``parse_single_example``) and return ONE batched SparseTensor per sparse
input: each example's indices with its position in the batch prepended, the
values concatenated in batch order, and a dense_shape of
``[batch_size, max of each dimension over the batch]``. TF stores each
SparseTensor in a SparseTensorsMap and batches its handle; sluice packs each
SparseTensor into one string component (the format of
``include/sluice/pipeline/sparse_batch.h``), which a queue batches like any
string, and unpacks a batch of them into the batched SparseTensor.

The batchers (sluice/_input.py) use this module in three steps:

* :func:`pack_native` wraps a :class:`NativeProducer`'s core so that its
  SparseTensor triples (``k/indices``, ``k/values``, ``k/dense_shape`` of
  ``map_parse_example``) are packed in C++, on the runner threads, without
  the GIL;
* :func:`describe_python` and :func:`pack_python` do the same in Python for a
  Python producer whose ``dtypes`` declare sparse components with
  :class:`SparseTensorSpec` and which returns :class:`sluice.SparseTensor`
  values (or anything with ``indices``, ``values`` and ``dense_shape``);
* :func:`unpack` turns a dequeued batch back into the example's structure
  with a :class:`sluice.SparseTensor` per sparse component (decoded in C++
  without the GIL).

Thread-safety: :class:`SparseLayout` and :class:`SparseTensorSpec` are
immutable once built; every function here may be called from any thread.
"""

import struct

import numpy as np

from sluice import _core
from sluice import dtypes as _dtypes
from sluice import errors
from sluice import queue as _queue
from sluice.sparse_tensor import SparseTensor

__all__ = ["SparseTensorSpec", "SparseLayout", "pack_native", "describe_python", "pack_python", "unpack"]

# The packed format (include/sluice/pipeline/sparse_batch.h): a header of
# version, dtype, rank (u16) and a reserved u32, then dense_shape (i64[r]),
# n (i64), indices (i64[n*r]), and the values (numbers in their storage
# bytes; strings as u64 length + bytes each), all little-endian.
_VERSION = 1
_HEADER = struct.Struct("<BBHI")
_MAX_RANK = 0xFFFF
_U64 = struct.Struct("<Q")


class SparseTensorSpec:
    """Declares a sparse component of a Python producer (``tf.SparseTensorSpec``).

    Give it as the component's entry in a batcher's `dtypes` (its `shapes`
    entry is then ignored): the producer returns a :class:`sluice.SparseTensor`
    there, and the batch holds one batched SparseTensor.

    Args:
      shape: the dense shape of one example's SparseTensor (a tuple, None for
        an unknown dimension), or None when even the rank is unknown.
      dtype: the values' dtype (a sluice DType or anything ``as_dtype`` takes).
    """

    __slots__ = ("_shape", "_dtype")

    def __init__(self, shape=None, dtype=_dtypes.float32):
        self._shape = None if shape is None else tuple(None if d is None or d < 0 else int(d) for d in shape)
        self._dtype = _as_dtype(dtype)

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def rank(self):
        """The rank, or None if unknown."""
        return None if self._shape is None else len(self._shape)

    def __eq__(self, other):
        return isinstance(other, SparseTensorSpec) and (self._shape, self._dtype) == (other._shape, other._dtype)

    def __hash__(self):
        return hash((self._shape, self._dtype))

    def __repr__(self):
        return "SparseTensorSpec(shape=%s, dtype=%r)" % (self._shape, self._dtype)


def _as_dtype(dtype):
    enum = getattr(dtype, "as_datatype_enum", None)  # a TensorFlow DType too
    return _dtypes.as_dtype(enum if isinstance(enum, int) else dtype)


def _is_spec(d):
    """A SparseTensorSpec, sluice's or TensorFlow's."""
    return isinstance(d, SparseTensorSpec) or type(d).__name__ == "SparseTensorSpec"


def _as_spec(d):
    if isinstance(d, SparseTensorSpec):
        return d
    shape = getattr(d, "shape", None)
    dims = None if shape is None or getattr(shape, "rank", 0) is None else list(shape)
    return SparseTensorSpec(dims, d.dtype)


class SparseLayout:
    """Which components of a packed example are SparseTensors, and the example's structure.

    Attributes:
      kind: "single", "list" or "dict" (the example's structure).
      keys: for "dict", the keys of the components in order (a packed
        SparseTensor's key is its feature's, ``k`` for ``k/indices``...).
      sparse: {component index: SparseTensorSpec} of the packed components.
      dtypes: the packed example's component dtypes (string for the sparse
        ones): what the batcher's queue holds.
      shapes: their shapes (``()`` for the sparse ones; the others as
        declared).
      source: for each packed component, the unpacked component it comes
        from (a SparseTensor's: its first part).
    """

    __slots__ = ("kind", "keys", "sparse", "dtypes", "shapes", "source")

    def __init__(self, kind, keys, sparse, dtypes, shapes, source=None):
        self.kind = kind
        self.keys = None if keys is None else list(keys)
        self.sparse = dict(sparse)
        self.dtypes = list(dtypes)
        self.shapes = list(shapes)
        self.source = list(range(len(self.dtypes))) if source is None else list(source)

    def packed_shapes(self, shapes):
        """The packed components' shapes from the unpacked ones' (one per unpacked component).

        ``()`` for a sparse component (one string per example); the others'
        shapes are taken from `shapes` (e.g. a batcher's per-example shapes,
        with enqueue_many already less the batch dimension).
        """
        shapes = list(shapes)
        return [() if i in self.sparse else shapes[c] for i, c in enumerate(self.source)]

    @property
    def size(self):
        return len(self.dtypes)

    def __eq__(self, other):
        """Same structure, sparse components and signature (the _join forms' producers must agree)."""
        return isinstance(other, SparseLayout) and all(getattr(self, f) == getattr(other, f) for f in self.__slots__)

    def __hash__(self):
        return hash((self.kind, len(self.dtypes)))

    def __repr__(self):
        return "<SparseLayout %s keys=%s sparse=%s>" % (self.kind, self.keys, self.sparse)


# ---- native producers ------------------------------------------------------------------

_PARTS = ("/indices", "/values", "/dense_shape")


def _sparse_triples(names):
    """[(base name, (indices, values, dense_shape) component indices)] from component names."""
    position = {n: i for i, n in enumerate(names)}
    triples = []
    for i, name in enumerate(names):
        if not name.endswith(_PARTS[0]) or len(name) == len(_PARTS[0]):
            continue
        base = name[:-len(_PARTS[0])]
        others = [position.get(base + p) for p in _PARTS[1:]]
        if None not in others:
            triples.append((base, (i, others[0], others[1])))
    return triples


def pack_native(producer, structure=None, enqueue_many=False):
    """A native producer's core with each SparseTensor packed into one string component.

    The SparseTensors are found by component name: ``k/indices``,
    ``k/values`` and ``k/dense_shape`` (``map_parse_example``'s sparse
    features) become one component ``k`` at the position of ``k/indices``'s
    first part, packed in C++ on the runner threads.

    Args:
      producer: a :class:`sluice.train.NativeProducer` (or its ``core``, a
        ``_core.Producer``, with `structure`).
      structure: the example's structure (``kind``, ``keys``); None: the
        producer's own.
      enqueue_many: the producer yields batches; each SparseTensor's
        dimension 0 is the batch and is packed one string per row.

    Returns:
      ``(core, layout)``: a ``_core.Producer`` to give the batcher in place
      of the producer's core, and a :class:`SparseLayout`; or
      ``(the producer's core, None)`` when nothing is sparse.

    Raises:
      ValueError: a packed key would collide with another component's, or
        the parts' dtypes or shapes cannot be a SparseTensor's.
    """
    core = getattr(producer, "core", producer)
    if structure is None:
        structure = producer._structure
    names = list(core.names)
    triples = _sparse_triples(names)
    if not triples:
        return core, None
    try:
        packed = _core.pack_sparse_producer(core, [t for _, t in triples], bool(enqueue_many))
    except errors.InvalidArgumentError as e:  # a graph-time error in TF
        raise ValueError(e.message) from None
    dtypes, shapes = list(core.dtypes), list(core.shapes)
    first = {min(t): (base, t) for base, t in triples}
    dropped = {c for _, t in triples for c in t} - set(first)
    keys = list(structure.keys) if structure.kind == "dict" else None
    out_keys, sparse, source = [], {}, []
    for c in range(len(names)):
        if c in dropped:
            continue
        source.append(c)
        if c in first:
            base, (_, values, dense_shape) = first[c]
            rank = shapes[dense_shape][0] if shapes[dense_shape] else None
            if rank is not None and rank >= 0 and enqueue_many:
                rank -= 1  # an example's rank, less the batch dimension
            sparse[len(out_keys)] = SparseTensorSpec(None if rank is None or rank < 0 else [None] * rank,
                                                     _dtypes.as_dtype(dtypes[values]))
            out_keys.append(base)
        else:
            out_keys.append(keys[c] if keys is not None else names[c])
    if keys is not None and len(set(out_keys)) != len(out_keys):
        raise ValueError("packing SparseTensors would give two components the same key: %s" % out_keys)
    layout = SparseLayout(structure.kind, out_keys if keys is not None else None, sparse,
                          [_dtypes.as_dtype(d) for d in packed.dtypes],
                          [None if s is None else tuple(None if d < 0 else d for d in s) for s in packed.shapes],
                          source)
    return packed, layout


# ---- Python producers ------------------------------------------------------------------

def describe_python(structure, dtypes, shapes):
    """The layout of a Python producer's examples, or None if `dtypes` declares nothing sparse.

    Args:
      structure: the example's structure (``kind``, ``keys``).
      dtypes: the flat component dtypes; a sparse component's entry is a
        :class:`SparseTensorSpec` (sluice's or TensorFlow's).
      shapes: the flat component shapes (a sparse component's is ignored).

    Returns:
      A :class:`SparseLayout` whose ``dtypes`` and ``shapes`` are the queue's
      (string scalars for the sparse components), or None.
    """
    dtypes, shapes = list(dtypes), list(shapes)
    sparse = {i: _as_spec(d) for i, d in enumerate(dtypes) if _is_spec(d)}
    if not sparse:
        return None
    return SparseLayout(structure.kind, structure.keys if structure.kind == "dict" else None, sparse,
                        [_dtypes.string if i in sparse else _as_dtype(d) for i, d in enumerate(dtypes)],
                        [() if i in sparse else s for i, s in enumerate(shapes)])


def pack_python(components, layout, enqueue_many=False):
    """The flat `components` of one example with each sparse one packed (for a Python producer).

    A sparse component (a :class:`sluice.SparseTensor`, or anything with
    ``indices``, ``values`` and ``dense_shape``, e.g. a ``tf.SparseTensor``
    value) becomes bytes; with `enqueue_many`, an object array of bytes, one
    per row of dimension 0 (TF's ``add_many_sparse_to_tensors_map``). The
    other components are returned as they are.

    Raises:
      sluice.errors.InvalidArgumentError: a sparse component that is not a
        SparseTensor or whose parts disagree (TF's messages), a rank other
        than its spec's, indices of a batch out of bounds or order.
      TypeError, ValueError: values that do not convert to the spec's dtype.
    """
    out = list(components)
    for i, spec in layout.sparse.items():
        parts = _sparse_parts(out[i], spec, enqueue_many)
        out[i] = _pack_rows(*parts, spec.dtype) if enqueue_many else _pack_one(*parts, spec.dtype)
    return out


def _invalid(message):
    return errors.InvalidArgumentError(None, None, message)


def _tf_shape(shape):
    return "[%s]" % ",".join(str(d) for d in shape)


def _sparse_parts(value, spec, enqueue_many):
    """(indices int64 [n, r], values in storage form [n], dense_shape int64 [r]), checked as TF does."""
    try:
        indices, values, dense_shape = value.indices, value.values, value.dense_shape
    except AttributeError:
        raise _invalid("expected a SparseTensor for a component declared %r, got %s"
                       % (spec, type(value).__name__)) from None
    indices = np.asarray(indices, dtype=np.int64)
    dense_shape = np.asarray(dense_shape, dtype=np.int64)
    values = _queue._to_component(values, spec.dtype)
    if indices.ndim != 2:
        raise _invalid("Input indices should be a matrix but received shape %s" % _tf_shape(indices.shape))
    if np.ndim(values) != 1:
        raise _invalid("Input values should be a vector but received shape %s" % _tf_shape(np.shape(values)))
    if dense_shape.ndim != 1:
        raise _invalid("Input shape should be a vector but received shape %s" % _tf_shape(dense_shape.shape))
    if indices.shape[0] != values.shape[0]:
        raise _invalid("indices and values rows (indexing dimension) must match. (indices = %d, values = %d)"
                       % (indices.shape[0], values.shape[0]))
    if indices.shape[1] != dense_shape.shape[0]:
        raise _invalid("Shape rank must be SparseTensor rank.")
    if dense_shape.shape[0] > _MAX_RANK:
        raise _invalid("a packed SparseTensor has rank at most %d, not %d" % (_MAX_RANK, dense_shape.shape[0]))
    negative = dense_shape[dense_shape < 0]
    if negative.size:
        raise _invalid("Dimension %d must be >= 0" % negative[0])
    rank = dense_shape.shape[0] - (1 if enqueue_many else 0)
    if spec.rank is not None and rank != spec.rank:
        raise _invalid("a SparseTensor of rank %d for a component declared %r" % (rank, spec))
    return indices, values, dense_shape


def _pack_one(indices, values, dense_shape, dtype):
    """One packed SparseTensor (bytes)."""
    n, rank = indices.shape
    parts = [_HEADER.pack(_VERSION, dtype.as_datatype_enum, rank, 0), dense_shape.astype("<i8").tobytes(),
             struct.pack("<q", n), np.ascontiguousarray(indices, dtype="<i8").tobytes()]
    if dtype is _dtypes.string:
        for v in values:
            parts.append(_U64.pack(len(v)))
            parts.append(v)
    else:
        parts.append(np.ascontiguousarray(values, dtype=values.dtype.newbyteorder("<")).tobytes())
    return b"".join(parts)


def _check_indices_valid(indices, shape):
    """TF's SparseTensor::IndicesValid: in bounds, strictly increasing in row-major order."""
    n, rank = indices.shape
    if n == 0:
        return
    bad_bounds = np.any((indices < 0) | (indices >= shape), axis=1)
    step = indices[1:] - indices[:-1]
    moved = step != 0
    first = np.argmax(moved, axis=1)
    lead = step[np.arange(n - 1), first]
    repeated = np.concatenate([[False], ~moved.any(axis=1)])
    backwards = np.concatenate([[False], moved.any(axis=1) & (lead < 0)])
    bad = np.nonzero(bad_bounds | repeated | backwards)[0]
    if not bad.size:
        return
    i = int(bad[0])
    index = "indices[%d] = [%s]" % (i, ",".join(str(x) for x in indices[i]))
    if bad_bounds[i]:
        raise _invalid("%s is out of bounds: need 0 <= index < %s" % (index, _tf_shape(shape)))
    if backwards[i]:
        raise _invalid("%s is out of order. Many sparse ops require sorted indices. Use `tf.sparse.reorder` to "
                       "create a correctly ordered copy." % index)
    raise _invalid("%s is repeated" % index)


def _pack_rows(indices, values, dense_shape, dtype):
    """An object array of bytes: row b of a batch SparseTensor packed, for each b < dense_shape[0]."""
    if dense_shape.shape[0] < 2:
        raise _invalid("Rank of input SparseTensor should be > 1, but saw rank: %d" % dense_shape.shape[0])
    _check_indices_valid(indices, dense_shape)
    rows = int(dense_shape[0])
    bounds = np.searchsorted(indices[:, 0], np.arange(rows + 1), side="left")
    out = np.empty(rows, dtype=object)
    for b in range(rows):
        lo, hi = int(bounds[b]), int(bounds[b + 1])
        out[b] = _pack_one(indices[lo:hi, 1:], values[lo:hi], dense_shape[1:], dtype)
    return out


# ---- unpacking a batch -----------------------------------------------------------------

def unpack(components, layout):
    """A dequeued batch of packed examples in the example's structure, SparseTensors batched.

    Args:
      components: the batch's flat components (a queue's ``dequeue_many`` /
        ``dequeue_up_to`` list, or its bare array for one component); a
        sparse one is a vector of packed bytes.
      layout: the :class:`SparseLayout` of the packing.

    Returns:
      The batch as TensorFlow's batch returns it: a dict by key, a list, or
      the single component (also for a list of one component, as TF's
      dequeue_many); each sparse component a :class:`sluice.SparseTensor`
      with indices ``[n, 1 + rank]``, values ``[n]`` and dense_shape
      ``[batch, max of each dimension]``.

    Raises:
      sluice.errors.InvalidArgumentError: a corrupt packed string, or
        SparseTensors of different ranks or dtypes in one batch (TF's
        messages).
    """
    # A queue of one component dequeues a bare array, not a list.
    out = [components] if isinstance(components, np.ndarray) else list(components)
    for i, spec in layout.sparse.items():
        indices, values, dense_shape = _core.unpack_sparse_batch(out[i], spec.dtype.as_datatype_enum)
        out[i] = SparseTensor(indices, values, dense_shape)
    if layout.kind == "dict":
        return dict(zip(layout.keys, out))
    if layout.kind == "list" and len(out) != 1:
        return out
    return out[0]
