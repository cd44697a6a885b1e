"""SparseTensor of sluice.compat.v1: three tensors (indices, values, dense_shape) that travel together."""

import numpy as np

from sluice import _core
from sluice import dtypes as _dtypes
from sluice import _sparse_batch
from sluice.compat.v1 import _graph
from sluice.compat.v1 import _math_ops
from sluice.compat.v1._graph import make_op
from sluice.sparse_tensor import SparseTensor as _Eager


class SparseTensor:
    """``tf.SparseTensor`` of graph tensors; ``sess.run`` gives a SparseTensorValue."""

    def __init__(self, indices, values, dense_shape):
        self.indices = _math_ops.convert_to_tensor(indices, _dtypes.int64)
        self.values = _math_ops.convert_to_tensor(values)
        self.dense_shape = _math_ops.convert_to_tensor(dense_shape, _dtypes.int64)

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def graph(self):
        return self.values.graph

    @property
    def op(self):
        return self.values.op

    def get_shape(self):
        rank = self.indices.shape[1] if self.indices.shape.rank == 2 else None
        return _graph.TensorShape(None if rank is None else [None] * rank)

    shape = property(get_shape)

    # flatten_args / Session protocol
    def _as_compat_tensors(self, walk):
        return _Template(walk(self.indices), walk(self.values), walk(self.dense_shape))

    def _fetch_parts(self):
        return (self.indices, self.values, self.dense_shape)

    def _feed(self, feeds, value):
        feeds[self.indices] = np.asarray(value[0], dtype=np.int64)
        feeds[self.values] = np.asarray(value[1])
        feeds[self.dense_shape] = np.asarray(value[2], dtype=np.int64)

    def _map_values(self, fn):
        return SparseTensor(self.indices, fn(self.values), self.dense_shape)

    def eval(self, feed_dict=None, session=None):
        from sluice.compat.v1 import _session  # noqa: PLC0415
        return _session.default_session_for(session).run(self, feed_dict=feed_dict)

    def __repr__(self):
        return "SparseTensor(indices=%r, values=%r, dense_shape=%r)" % (self.indices, self.values, self.dense_shape)


class _Template:
    def __init__(self, indices, values, dense_shape):
        self.parts = (indices, values, dense_shape)

    def _rebuild_from(self, fill):
        return _Eager(*(fill(p) for p in self.parts))


def from_eager_outputs(outputs):
    """A SparseTensor of three op outputs (indices, values, dense_shape)."""
    st = SparseTensor.__new__(SparseTensor)
    st.indices, st.values, st.dense_shape = outputs
    return st


def sparse_specs(dtype, rank):
    """The (dtype, shape) of a SparseTensor's three parts, for an op's outputs."""
    return [(_dtypes.int64, [None, rank]), (_dtypes.as_dtype(dtype), [None]), (_dtypes.int64, [rank])]


def eager_parts(value):
    return (value.indices, value.values, value.dense_shape)


def pack(st, many=False):
    """A string tensor: `st` packed for a queue (one string, or with `many` one per row)."""
    dtype = st.dtype

    def fn(v):
        if many:
            return _sparse_batch._pack_rows(v.indices, v.values, v.dense_shape, dtype)
        return _sparse_batch._pack_one(v.indices, v.values, v.dense_shape, dtype)
    return make_op("SerializeSparse", (st,), fn, [(_dtypes.string, [None] if many else [])])


def unpack_batch(strings, dtype, rank):
    """The batch SparseTensor of a dequeued vector of packed strings (TF's batch of SparseTensors)."""
    dtype = _dtypes.as_dtype(dtype)

    def fn(v):
        return tuple(_core.unpack_sparse_batch(np.asarray(v, dtype=object), dtype.as_datatype_enum))
    outs = make_op("DeserializeManySparse", (strings,), fn, sparse_specs(dtype, None if rank is None else rank + 1))
    return from_eager_outputs(outs)


def sparse_tensor_to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    dtype = sp_input.dtype
    default = default_value if default_value is not None else (b"" if dtype == _dtypes.string else 0)

    def fn(v):
        out = np.full(tuple(int(d) for d in v.dense_shape), default, dtype=dtype.as_numpy_dtype)
        for i, x in zip(v.indices, v.values):
            out[tuple(i)] = x
        return out
    return make_op("SparseToDense", (sp_input,), fn, [(dtype, None)], name=name)


def is_sparse(x):
    return isinstance(x, SparseTensor)
