"""``tf.compat.v1.data`` of sluice.compat.v1: sluice.data Datasets, and TF 1's iterators as graph ops.

A :class:`Dataset` wraps a ``sluice.data.Dataset``: its transformations are
sluice's, and the functions given to them run with sluice.compat.v1's ops
computing at once on each element (TF traces them; the values agree).
``make_one_shot_iterator`` / ``make_initializable_iterator`` give an
:class:`Iterator` whose ``get_next()`` is a tensor (structure) that takes
the next element at each run; each Session iterates on its own, and the
end is OutOfRangeError, as in TF 1.
"""

import functools

from sluice import data as _sl_data
from sluice import dtypes as _dtypes
from sluice import errors
from sluice.compat.v1 import _graph
from sluice.compat.v1 import _sparse
from sluice.compat.v1._graph import as_shape, make_ctx_op
from sluice.compat.v1._session import Resource

AUTOTUNE = _sl_data.AUTOTUNE


def _concrete(x):
    """Constants of the graph (tf.constant, lists of them) as values; other tensors are not allowed."""
    if isinstance(x, _graph.Tensor):
        if x.op.type != "Const":
            raise TypeError("sluice.compat.v1.data: a Dataset built from the tensor %s (%s): only constants and "
                            "Python/numpy values can make a Dataset here; feed values with "
                            "make_initializable_iterator on a Dataset of the values instead" % (x.name, x.op.type))
        return x.op._compute(None)[0]
    if isinstance(x, dict):
        return {k: _concrete(v) for k, v in x.items()}
    if isinstance(x, tuple) and not _graph._is_namedtuple(x):
        return tuple(_concrete(v) for v in x)
    if isinstance(x, list):
        return [_concrete(v) for v in x]
    return x


def _eager_fn(fn):
    """`fn` running compat ops on values (as TF's traced function computes them per element)."""
    if not callable(fn) or isinstance(fn, _sl_data._NativeFn):
        return fn

    @functools.wraps(fn)
    def call(*args, **kwargs):
        with _graph.eager_scope():
            out = fn(*args, **kwargs)
        return _unwrap(out)
    return call


def _unwrap(x):
    if isinstance(x, Dataset):
        return x._ds
    if isinstance(x, _graph.Tensor):
        return _concrete(x)
    if isinstance(x, tuple) and not _graph._is_namedtuple(x):
        return tuple(_unwrap(v) for v in x)
    if isinstance(x, dict):
        return {k: _unwrap(v) for k, v in x.items()}
    return x


def _wrap(x):
    return Dataset(x) if isinstance(x, _sl_data.DatasetV2) else x


class Dataset:
    """``tf.compat.v1.data.Dataset``: a sluice.data Dataset with TF 1's iterator methods."""

    def __init__(self, ds):
        self._ds = ds

    def __getattr__(self, attr):
        target = getattr(self._ds, attr)
        if not callable(target):
            return target

        @functools.wraps(target)
        def method(*args, **kwargs):
            args = [_eager_fn(a) if callable(a) and not isinstance(a, Dataset) else _unwrap(a) for a in args]
            kwargs = {k: _eager_fn(v) if callable(v) and not isinstance(v, Dataset) else _unwrap(v)
                      for k, v in kwargs.items()}
            return _wrap(target(*args, **kwargs))
        return method

    def __iter__(self):
        return iter(self._ds)

    @staticmethod
    def from_tensor_slices(tensors):
        return Dataset(_sl_data.Dataset.from_tensor_slices(_concrete(tensors)))

    @staticmethod
    def from_tensors(tensors):
        return Dataset(_sl_data.Dataset.from_tensors(_concrete(tensors)))

    @staticmethod
    def range(*args, **kwargs):
        return Dataset(_sl_data.Dataset.range(*args, **kwargs))

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None):
        return Dataset(_sl_data.Dataset.from_generator(generator, output_types, output_shapes, args,
                                                       output_signature))

    @staticmethod
    def zip(datasets):
        return Dataset(_sl_data.Dataset.zip(_unwrap(datasets)))

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None):
        return Dataset(_sl_data.Dataset.list_files(_concrete(file_pattern), shuffle, seed))

    def make_one_shot_iterator(self):
        return Iterator(self._ds, initializable=False)

    def make_initializable_iterator(self, shared_name=None):
        return Iterator(self._ds, initializable=True)

    @property
    def output_types(self):
        return _map_spec(lambda s: s.dtype, self._ds.element_spec)

    @property
    def output_shapes(self):
        return _map_spec(lambda s: as_shape(s.shape), self._ds.element_spec)


def _map_spec(fn, spec):
    if isinstance(spec, dict):
        return {k: _map_spec(fn, v) for k, v in spec.items()}
    if isinstance(spec, tuple) and not _graph._is_namedtuple(spec):
        return tuple(_map_spec(fn, v) for v in spec)
    if _graph._is_namedtuple(spec):
        return type(spec)(*(_map_spec(fn, v) for v in spec))
    return fn(spec)


def TFRecordDataset(filenames, compression_type=None, buffer_size=None, num_parallel_reads=None):  # noqa: N802
    return Dataset(_sl_data.TFRecordDataset(_concrete(filenames), compression_type, buffer_size, num_parallel_reads))


def TextLineDataset(filenames, compression_type=None, buffer_size=None, num_parallel_reads=None):  # noqa: N802
    return Dataset(_sl_data.TextLineDataset(_concrete(filenames), compression_type, buffer_size, num_parallel_reads))


def FixedLengthRecordDataset(filenames, record_bytes, header_bytes=None, footer_bytes=None,  # noqa: N802
                             buffer_size=None, compression_type=None, num_parallel_reads=None):
    return Dataset(_sl_data.FixedLengthRecordDataset(_concrete(filenames), record_bytes, header_bytes, footer_bytes,
                                                     buffer_size, compression_type, num_parallel_reads))


class Iterator:
    """TF 1's iterator: ``get_next()`` tensors take the next element at each run (per Session)."""

    def __init__(self, ds, initializable):
        self._ds = ds
        self._graph = _graph.get_default_graph()
        self._initializable = initializable
        self._res = Resource(self._graph, lambda sess: _IteratorState(ds, started=not initializable), "Iterator")
        res = self._res

        def initialize(ctx):
            ctx.session.resource(res).restart()
            return ()
        self.initializer = make_ctx_op("MakeIterator", [], initialize, [], name="MakeIterator", graph=self._graph)

    @property
    def output_types(self):
        return _map_spec(lambda s: s.dtype, self._ds.element_spec)

    @property
    def output_shapes(self):
        return _map_spec(lambda s: as_shape(s.shape), self._ds.element_spec)

    @property
    def element_spec(self):
        return self._ds.element_spec

    def get_next(self, name=None):
        spec = self._ds.element_spec
        leaves = []
        _map_spec(leaves.append, spec)
        out_specs = []
        for s in leaves:
            if hasattr(s, "indices") or type(s).__name__ == "SparseTensorSpec":
                rank = as_shape(s.shape).rank
                out_specs.extend(_sparse.sparse_specs(s.dtype, rank))
            else:
                out_specs.append((s.dtype, as_shape(s.shape)))
        res = self._res

        def compute(ctx):
            element = ctx.session.resource(res).next()
            flat = []
            _flatten_value(element, spec, flat)
            return tuple(flat)
        op = make_ctx_op("IteratorGetNext", [], compute, out_specs, name=name or "IteratorGetNext",
                         graph=self._graph)
        outputs = iter(op.outputs)

        def build(s):
            if type(s).__name__ == "SparseTensorSpec":
                return _sparse.from_eager_outputs([next(outputs), next(outputs), next(outputs)])
            return next(outputs)
        return _map_spec(build, spec)


def _flatten_value(value, spec, out):
    if isinstance(spec, dict):
        for k in spec:
            _flatten_value(value[k], spec[k], out)
    elif isinstance(spec, tuple):
        for v, s in zip(value, spec):
            _flatten_value(v, s, out)
    elif type(spec).__name__ == "SparseTensorSpec":
        out.extend((value.indices, value.values, value.dense_shape))
    else:
        out.append(value)


class _IteratorState:
    """A Session's pass over a dataset."""

    def __init__(self, ds, started):
        self._ds = ds
        self._it = iter(ds) if started else None

    def restart(self):
        if self._it is not None:
            self._it.close()
        self._it = iter(self._ds)

    def next(self):
        if self._it is None:
            raise errors.FailedPreconditionError(
                None, None, "GetNext() failed because the iterator has not been initialized. Ensure that you have "
                "run the initializer operation for this iterator before getting the next element.")
        try:
            return next(self._it)
        except StopIteration:
            raise errors.OutOfRangeError(None, None, "End of sequence") from None

    def _compat_close(self):
        if self._it is not None:
            self._it.close()


def make_one_shot_iterator(dataset):
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset, shared_name=None):
    return dataset.make_initializable_iterator(shared_name)


def get_output_types(dataset_or_iterator):
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    return dataset_or_iterator.output_shapes


experimental = _sl_data.experimental
Options = getattr(_sl_data, "Options", None)
_ = _dtypes
