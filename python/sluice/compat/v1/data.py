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

import numpy as np

from sluice import data as _sl_data
from sluice import errors
from sluice.compat.v1 import _graph
from sluice.compat.v1 import _namespaces
from sluice.compat.v1 import _sparse
from sluice.compat.v1._graph import as_shape, make_ctx_op
from sluice.compat.v1._session import Resource

AUTOTUNE = _sl_data.AUTOTUNE


def _concrete(x):
    """Constants of the graph (tf.constant, lists of them) as values."""
    if isinstance(x, _graph.Tensor):
        if x.op.type != "Const":
            raise TypeError("sluice.compat.v1.data: %s (%s) is not a constant" % (x.name, x.op.type))
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
        return _unwrap(out, ())
    return call


def _unwrap(x, values):
    """An argument with compat Datasets built (from `values`, the graph tensors' values) and constants as values."""
    if isinstance(x, Dataset):
        return x._build(values)
    if isinstance(x, _graph.Tensor):
        return _concrete(x)
    if isinstance(x, tuple) and not _graph._is_namedtuple(x):
        return tuple(_unwrap(v, values) for v in x)
    if isinstance(x, list):
        return [_unwrap(v, values) for v in x]
    if isinstance(x, dict):
        return {k: _unwrap(v, values) for k, v in x.items()}
    return x


def _inputs_of(args):
    """The graph tensors the Datasets inside `args` need (deduplicated, in order)."""
    seen, out = set(), []

    def walk(x):
        if isinstance(x, Dataset):
            for t in x._tensors:
                if id(t) not in seen:
                    seen.add(id(t))
                    out.append(t)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
    walk(args)
    return out


class Dataset:
    """``tf.compat.v1.data.Dataset``: a sluice.data Dataset with TF 1's iterator methods.

    A Dataset made from graph tensors that are not constants (placeholders,
    fed at the initializable iterator's ``initializer``) is built when its
    iterator is initialised, from the values of those tensors in that run.
    """

    def __init__(self, build, tensors=()):
        self._tensors = list(tensors)
        self._build_from = build  # function of {id(tensor): value} -> sluice.data Dataset
        self._spec_ds = None

    @classmethod
    def _of(cls, ds):
        return cls(lambda values: ds)

    def _build(self, values):
        return self._build_from(values)

    @property
    def _ds(self):
        """This dataset as sluice builds it (from placeholder-shaped stand-ins if it needs fed tensors)."""
        if self._spec_ds is None:
            self._spec_ds = self._build({id(t): _stand_in(t) for t in self._tensors})
        return self._spec_ds

    def __getattr__(self, attr):
        if attr.startswith("_"):
            raise AttributeError(attr)
        target = getattr(self._ds, attr)
        if not callable(target):
            return target

        @functools.wraps(target)
        def method(*args, **kwargs):
            args = [_eager_fn(a) if callable(a) and not isinstance(a, Dataset) else a for a in args]
            kwargs = {k: _eager_fn(v) if callable(v) and not isinstance(v, Dataset) else v for k, v in kwargs.items()}
            tensors = _inputs_of((self, args, kwargs))
            stand = {id(t): _stand_in(t) for t in tensors}
            base = self._build(stand) if tensors else self._ds
            result = getattr(base, attr)(*_unwrap(args, stand), **_unwrap(kwargs, stand))
            if not isinstance(result, _sl_data.DatasetV2):
                return result
            if not tensors:
                return Dataset._of(result)

            def build(values):
                return getattr(self._build(values), attr)(*_unwrap(args, values), **_unwrap(kwargs, values))
            out = Dataset(build, tensors)
            out._spec_ds = result
            return out
        return method

    def __iter__(self):
        if self._tensors:
            raise TypeError("this Dataset needs fed tensors: iterate it with make_initializable_iterator")
        return iter(self._ds)

    @staticmethod
    def _from_structure(make, tensors):
        graph_tensors, rebuild = _graph.flatten_args(tensors)
        fed = [t for t in graph_tensors if t.op.type != "Const"]
        if not fed:
            return Dataset._of(make(_concrete(tensors)))

        def build(values):
            return make(rebuild([values[id(t)] if id(t) in values else _concrete(t) for t in graph_tensors]))
        return Dataset(build, fed)

    @staticmethod
    def from_tensor_slices(tensors):
        return Dataset._from_structure(_sl_data.Dataset.from_tensor_slices, tensors)

    @staticmethod
    def from_tensors(tensors):
        return Dataset._from_structure(_sl_data.Dataset.from_tensors, tensors)

    @staticmethod
    def range(*args, **kwargs):
        return Dataset._of(_sl_data.Dataset.range(*args, **kwargs))

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None):
        return Dataset._of(_sl_data.Dataset.from_generator(generator, output_types, output_shapes, args,
                                                           output_signature))

    @staticmethod
    def zip(datasets):
        tensors = _inputs_of(datasets)
        return Dataset(lambda values: _sl_data.Dataset.zip(_unwrap(datasets, values)), tensors)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None):
        return Dataset._of(_sl_data.Dataset.list_files(_concrete(file_pattern), shuffle, seed))

    def make_one_shot_iterator(self):
        return Iterator._of(self, initializable=False)

    def make_initializable_iterator(self, shared_name=None):
        return Iterator._of(self, initializable=True)

    def _static_shapes(self):
        """The element's static shapes; for a fed dataset, the dimensions that follow the fed sizes are None."""
        shapes = []
        _map_spec(lambda s: shapes.append(as_shape(s.shape)), self._ds.element_spec)
        if not self._tensors:
            return shapes
        other = []
        _map_spec(lambda s: other.append(as_shape(s.shape)),
                  self._build({id(t): _stand_in(t, 2) for t in self._tensors}).element_spec)
        return [a if a.rank is None or a.rank != b.rank else as_shape([x if x == y else None for x, y in zip(a, b)])
                for a, b in zip(shapes, other)]

    @property
    def output_types(self):
        return _map_spec(lambda s: s.dtype, self._ds.element_spec)

    @property
    def output_shapes(self):
        shapes = iter(self._static_shapes())
        return _map_spec(lambda s: next(shapes), self._ds.element_spec)


def _stand_in(t, unknown=1):
    """A value shaped as tensor `t` (unknown dimensions `unknown`) to build a fed Dataset's structure."""
    dims = t.shape.dims
    shape = [] if dims is None else [unknown if d is None else d for d in dims]
    return np.zeros(shape, dtype=t.dtype.as_numpy_dtype)


def _map_spec(fn, spec):
    if isinstance(spec, dict):
        return {k: _map_spec(fn, v) for k, v in spec.items()}
    if isinstance(spec, tuple) and not _graph._is_namedtuple(spec):
        return tuple(_map_spec(fn, v) for v in spec)
    if _graph._is_namedtuple(spec):
        return type(spec)(*(_map_spec(fn, v) for v in spec))
    return fn(spec)


def TFRecordDataset(filenames, compression_type=None, buffer_size=None, num_parallel_reads=None):  # noqa: N802
    return Dataset._of(_sl_data.TFRecordDataset(_concrete(filenames), compression_type, buffer_size, num_parallel_reads))


def TextLineDataset(filenames, compression_type=None, buffer_size=None, num_parallel_reads=None):  # noqa: N802
    return Dataset._of(_sl_data.TextLineDataset(_concrete(filenames), compression_type, buffer_size, num_parallel_reads))


def FixedLengthRecordDataset(filenames, record_bytes, header_bytes=None, footer_bytes=None,  # noqa: N802
                             buffer_size=None, compression_type=None, num_parallel_reads=None):
    return Dataset._of(_sl_data.FixedLengthRecordDataset(_concrete(filenames), record_bytes, header_bytes, footer_bytes,
                                                     buffer_size, compression_type, num_parallel_reads))


class Iterator:
    """TF 1's iterator: ``get_next()`` tensors take the next element at each run (per Session).

    Made by ``make_one_shot_iterator`` (started in each Session),
    ``make_initializable_iterator`` (``initializer`` starts it, with the fed
    values of the placeholders the Dataset was built from) or
    ``Iterator.from_structure`` (``make_initializer(dataset)`` starts it on
    any dataset of that structure).
    """

    def __init__(self, spec, static_shapes, dataset=None, one_shot=False):
        self._spec = spec
        self._shapes = list(static_shapes)
        self._graph = _graph.get_default_graph()
        self._res = Resource(self._graph, lambda sess: _IteratorState(dataset._build({}) if one_shot else None),
                             "Iterator")
        if dataset is not None:
            self.initializer = self.make_initializer(dataset)

    @classmethod
    def _of(cls, dataset, initializable):
        tensors = dataset._tensors
        if tensors and not initializable:
            raise ValueError("Cannot capture a placeholder (%s) by value: use make_initializable_iterator and feed "
                             "it when running the initializer" % tensors[0].name)
        return cls(dataset._ds.element_spec, dataset._static_shapes(), dataset, one_shot=not initializable)

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None, output_classes=None):
        """An iterator of elements of `output_types` (and `output_shapes`), started by ``make_initializer``."""
        if output_shapes is None:
            output_shapes = _map_spec(lambda t: None, output_types)
        specs = _zip_structures(output_types, output_shapes)
        shapes = []
        _map_spec(lambda s: shapes.append(as_shape(s.shape)), specs)
        return Iterator(specs, shapes)

    def make_initializer(self, dataset, name=None):
        """An op that starts this iterator (in the running Session) on `dataset`."""
        res, tensors = self._res, dataset._tensors

        def initialize(ctx, *values):
            ctx.session.resource(res).restart(dataset._build({id(t): v for t, v in zip(tensors, values)}))
            return ()
        return make_ctx_op("MakeIterator", tensors, initialize, [], name=name or "MakeIterator", graph=self._graph)

    @property
    def output_types(self):
        return _map_spec(lambda s: s.dtype, self._spec)

    @property
    def output_shapes(self):
        shapes = iter(self._shapes)
        return _map_spec(lambda s: next(shapes), self._spec)

    @property
    def element_spec(self):
        return self._spec

    def get_next(self, name=None):
        spec = self._spec
        leaves = []
        _map_spec(leaves.append, spec)
        out_specs = []
        for s, shape in zip(leaves, self._shapes):
            if type(s).__name__ == "SparseTensorSpec":
                out_specs.extend(_sparse.sparse_specs(s.dtype, as_shape(s.shape).rank))
            else:
                out_specs.append((s.dtype, shape))
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


def _zip_structures(types, shapes):
    if isinstance(types, dict):
        return {k: _zip_structures(types[k], shapes[k]) for k in types}
    if isinstance(types, (tuple, list)):
        return tuple(_zip_structures(t, s) for t, s in zip(types, shapes))
    return _sl_data.TensorSpec(None if shapes is None else as_shape(shapes).dims, types)


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
    """A Session's pass over a dataset (None: not initialised)."""

    def __init__(self, ds):
        self._it = iter(ds) if ds is not None else None

    def restart(self, ds):
        if self._it is not None:
            self._it.close()
        self._it = iter(ds)

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


# tf.data.experimental: sluice.data.experimental's names; another is NotProvidedError naming what to write instead.
experimental = _namespaces.namespace("data.experimental", delegate=_sl_data.experimental)
Options = getattr(_sl_data, "Options", None)


__getattr__ = _graph.module_getattr("data", "sl.data")
