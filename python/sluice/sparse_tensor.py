"""``sluice.SparseTensor`` and ``sluice.RaggedTensor``: the composite results
of Example parsing and string splitting, laid out as TensorFlow lays them out.

Both are plain holders of numpy arrays (no copies are made of the arrays
given). They mirror the basic read-only surface of ``tf.SparseTensor`` and
``tf.RaggedTensor``, so that parsed batches can be inspected, padded into
dense arrays, or handed to TensorFlow:
``tf.SparseTensor(st.indices, st.values, st.dense_shape)`` and
``tf.RaggedTensor.from_nested_row_splits(rt.flat_values, rt.nested_row_splits)``.
Neither defines ``==`` (as in TensorFlow, compare the components).
Thread-safety: immutable once built; share freely between threads.
"""

import numpy as np

from sluice import dtypes as _dtypes
from sluice import errors

__all__ = ["SparseTensor", "RaggedTensor"]


def _zero_of(values):
    """0 of `values`' dtype, or b"" for a string (object) array."""
    return b"" if values.dtype == object else values.dtype.type(0)


def _as_values(values):
    values = np.asarray(values)
    if values.dtype.kind in "SU":
        values = np.array([v.encode() if isinstance(v, str) else bytes(v) for v in values.ravel()],
                          dtype=object).reshape(values.shape)
    return values


class SparseTensor:
    """A sparse tensor: ``values[i]`` sits at ``indices[i]`` of a dense tensor of
    shape ``dense_shape`` (``tf.sparse.SparseTensor``).

    Args:
      indices: int64 array [n, rank].
      values: array [n] (numbers, or an object array of bytes for strings).
      dense_shape: int64 array [rank].

    Raises:
      ValueError: if the component shapes disagree.
    """

    __slots__ = ("_indices", "_values", "_dense_shape")

    def __init__(self, indices, values, dense_shape):
        self._indices = np.asarray(indices, dtype=np.int64)
        self._values = _as_values(values)
        self._dense_shape = np.asarray(dense_shape, dtype=np.int64)
        if self._indices.ndim != 2:
            raise ValueError("indices must be a matrix [n, rank], got shape %s" % (self._indices.shape,))
        if self._values.ndim != 1 or self._values.shape[0] != self._indices.shape[0]:
            raise ValueError("values must be a vector of %d elements (one per index), got shape %s"
                             % (self._indices.shape[0], self._values.shape))
        if self._dense_shape.ndim != 1 or self._dense_shape.shape[0] != self._indices.shape[1]:
            raise ValueError("dense_shape must be a vector of rank %d, got shape %s"
                             % (self._indices.shape[1], self._dense_shape.shape))

    @property
    def indices(self):
        """int64 array [n, rank]: the position of each value."""
        return self._indices

    @property
    def values(self):
        """array [n]: the non-default values."""
        return self._values

    @property
    def dense_shape(self):
        """int64 array [rank]: the shape of the dense tensor."""
        return self._dense_shape

    @property
    def shape(self):
        """The dense shape as a tuple of ints."""
        return tuple(int(d) for d in self._dense_shape)

    @property
    def dtype(self):
        """The sluice DType of the values."""
        return _dtypes.as_dtype(self._values.dtype)

    def to_dense(self, default_value=None, validate_indices=True):
        """The dense numpy array (``tf.sparse.to_dense``).

        Args:
          default_value: the value where no index points (0, or b"" for
            strings, when None).
          validate_indices: check that indices are in range, sorted in
            row-major order and unique, as TensorFlow does.

        Returns:
          A numpy array of shape ``dense_shape``.

        Raises:
          sluice.errors.InvalidArgumentError: an index out of range, or (with
            validate_indices) out of order or repeated.
        """
        shape = self.shape
        fill = _zero_of(self._values) if default_value is None else default_value
        if self._values.dtype == object and isinstance(fill, str):
            fill = fill.encode()
        dense = np.full(shape, fill, dtype=self._values.dtype)
        if self._indices.shape[0] == 0:
            return dense
        bounds = np.asarray(shape, dtype=np.int64)
        bad = np.nonzero(np.any((self._indices < 0) | (self._indices >= bounds), axis=1))[0]
        if bad.size:
            i = int(bad[0])
            raise errors.InvalidArgumentError(None, None, "indices[%d] = %s is out of bounds: need 0 <= index < %s"
                                              % (i, list(self._indices[i]), list(shape)))
        if validate_indices and len(shape) > 0:
            flat = np.ravel_multi_index(tuple(self._indices.T), shape) if all(shape) else np.zeros(0)
            steps = np.diff(flat)
            if steps.size and np.any(steps <= 0):
                i = int(np.nonzero(steps <= 0)[0][0]) + 1
                what = "is repeated" if steps[i - 1] == 0 else "is out of order"
                raise errors.InvalidArgumentError(None, None, "indices[%d] = %s %s. Many sparse ops require sorted "
                                                  "indices. Use `tf.sparse.reorder` to create a correctly "
                                                  "ordered copy." % (i, list(self._indices[i]), what))
        dense[tuple(self._indices.T)] = self._values
        return dense

    def __repr__(self):
        return "SparseTensor(indices=%r, values=%r, dense_shape=%r)" % (
            self._indices.tolist(), self._values.tolist(), self._dense_shape.tolist())


class RaggedTensor:
    """A ragged tensor in TensorFlow's row-splits form (``tf.RaggedTensor``).

    ``values`` holds the rows' items back to back; row i is
    ``values[row_splits[i]:row_splits[i + 1]]``. ``values`` may itself be a
    RaggedTensor (several ragged dimensions). Build one with
    :meth:`from_row_splits` or :meth:`from_nested_row_splits`.
    """

    __slots__ = ("_values", "_row_splits")

    def __init__(self, values, row_splits, validate=True):
        """Use from_row_splits (the constructor is TensorFlow's private one)."""
        self._values = values if isinstance(values, RaggedTensor) else _as_values(values)
        self._row_splits = np.asarray(row_splits)
        if validate:
            self._check()

    def _check(self):
        s = self._row_splits
        if s.dtype not in (np.int32, np.int64):
            raise ValueError("row_splits must be int32 or int64, got %s" % s.dtype)
        if s.ndim != 1 or s.shape[0] < 1:
            raise ValueError("row_splits must be a non-empty vector")
        nvals = self._values.nrows() if isinstance(self._values, RaggedTensor) else self._values.shape[0]
        if s[0] != 0 or s[-1] != nvals or np.any(np.diff(s) < 0):
            raise errors.InvalidArgumentError(
                None, None, "row_splits must start at 0, never decrease and end at the number of values "
                "(%d): %s" % (nvals, s.tolist()))

    @classmethod
    def from_row_splits(cls, values, row_splits, validate=True):
        """A RaggedTensor whose row i is ``values[row_splits[i]:row_splits[i+1]]``.

        Raises:
          sluice.errors.InvalidArgumentError: if validate and the splits are
            inconsistent with the values.
        """
        return cls(values, row_splits, validate)

    @classmethod
    def from_nested_row_splits(cls, flat_values, nested_row_splits, validate=True):
        """A RaggedTensor with one ragged dimension per splits vector, outermost first."""
        result = flat_values
        for splits in reversed(list(nested_row_splits)):
            result = cls(result, splits, validate)
        return result

    @property
    def values(self):
        """The concatenated rows (an array, or a RaggedTensor)."""
        return self._values

    @property
    def row_splits(self):
        """Where each row starts in ``values`` (plus the end): [nrows + 1]."""
        return self._row_splits

    @property
    def flat_values(self):
        """The innermost values array."""
        v = self._values
        while isinstance(v, RaggedTensor):
            v = v.values
        return v

    @property
    def nested_row_splits(self):
        """The row_splits of every ragged dimension, outermost first (a tuple)."""
        out = [self._row_splits]
        v = self._values
        while isinstance(v, RaggedTensor):
            out.append(v.row_splits)
            v = v.values
        return tuple(out)

    @property
    def ragged_rank(self):
        """The number of ragged dimensions."""
        return len(self.nested_row_splits)

    @property
    def dtype(self):
        """The sluice DType of the values."""
        return _dtypes.as_dtype(self.flat_values.dtype)

    @property
    def row_splits_dtype(self):
        return _dtypes.as_dtype(self._row_splits.dtype)

    @property
    def shape(self):
        """(nrows, None, ...): None for ragged dimensions, then the uniform ones."""
        return (self.nrows(),) + (None,) * self.ragged_rank + tuple(self.flat_values.shape[1:])

    def nrows(self):
        """The number of rows."""
        return int(self._row_splits.shape[0]) - 1

    def row_lengths(self):
        """The length of each row: [nrows]."""
        return np.diff(self._row_splits)

    def value_rowids(self):
        """The row of each item of ``values``."""
        return np.repeat(np.arange(self.nrows(), dtype=self._row_splits.dtype), self.row_lengths())

    def __len__(self):
        return self.nrows()

    def __getitem__(self, row):
        """Row `row` (an int): an array, or a RaggedTensor of the rows below it."""
        n = self.nrows()
        row = int(row)
        if row < -n or row >= n:
            raise IndexError("row %d out of range for %d rows" % (row, n))
        row %= n
        begin, end = int(self._row_splits[row]), int(self._row_splits[row + 1])
        if isinstance(self._values, RaggedTensor):
            return self._values._slice_values(begin, end)
        return self._values[begin:end]

    def _slice_values(self, lo, hi):
        """Rows [lo, hi) of this tensor as a RaggedTensor (for __getitem__)."""
        splits = self._row_splits[lo:hi + 1] - self._row_splits[lo]
        b, e = int(self._row_splits[lo]), int(self._row_splits[hi])
        if isinstance(self._values, RaggedTensor):
            return RaggedTensor(self._values._slice_values(b, e), splits, validate=False)
        return RaggedTensor(self._values[b:e], splits, validate=False)

    def __iter__(self):
        for i in range(self.nrows()):
            yield self[i]

    def to_list(self):
        """Nested Python lists (bytes for strings), as tf.RaggedTensor.to_list."""
        inner = self._values.to_list() if isinstance(self._values, RaggedTensor) else self._values.tolist()
        s = self._row_splits.tolist()
        return [inner[s[i]:s[i + 1]] for i in range(len(s) - 1)]

    def to_tensor(self, default_value=None):
        """A dense numpy array, rows padded with default_value (0 or b"")."""
        rows = self.to_list()
        flat = self.flat_values
        fill = _zero_of(flat) if default_value is None else default_value
        depth = self.ragged_rank
        inner_shape = tuple(flat.shape[1:])
        shape = [len(rows)]
        level = rows
        for _ in range(depth):  # the longest row of each ragged dimension
            lengths = [len(r) for r in level]
            shape.append(max(lengths) if lengths else 0)
            level = [x for r in level for x in r]
        dense = np.full(tuple(shape) + inner_shape, fill, dtype=flat.dtype)

        def fill_in(index, row, d):
            if d == depth + 1:
                dense[index] = row
                return
            for i, r in enumerate(row):
                fill_in(index + (i,), r, d + 1)

        fill_in((), rows, 0)
        return dense

    def __repr__(self):
        return "<sluice.RaggedTensor %r>" % (self.to_list(),)
