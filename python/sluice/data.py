"""tf.data in sluice: ``sluice.data`` runs ``tf.data`` code with ``tf.data`` replaced by it.

A :class:`Dataset` is an immutable description of a sequence of elements,
built from sources (``Dataset.range``, ``from_tensors``,
``from_tensor_slices``, :class:`TFRecordDataset`, :class:`TextLineDataset`,
:class:`FixedLengthRecordDataset`) and transformations (``map``, ``filter``,
``batch``, ``padded_batch``, ``unbatch``, ``shuffle``, ``prefetch``,
``repeat``, ``take``, ``skip``, ``shard``, ``zip``, ``concatenate``,
``enumerate``, ``interleave``, ``flat_map``, ``cache``, ``window``, ``scan``,
``take_while``, ``unique``, ``ignore_errors``, ``rebatch``,
``group_by_window``, ``bucket_by_sequence_length``), with TensorFlow's
names, arguments, defaults, element orders and cardinalities. The engine is
C++ (``sluice::data``): parallel map, prefetch and parallel interleave run on
C++ threads; ``for x in dataset`` yields numpy arrays (tuples and dicts as the
element's structure) that view the C++ tensors without copying. An array whose
buffer the element alone owns (a fresh batch, a map's output) is writable and
yours; one whose buffer the pipeline still holds (a ``from_tensors`` constant,
a ``cache``, a ``repeat`` of a constant, a slice of a batch) is read-only, so
an in-place write raises instead of changing later elements (``.copy()`` it).

Map functions, and what they cost:

* **Native functions** (``sluice.data.ops``): ``parse_example``,
  ``decode_jpeg`` and ``random_resized_crop`` run in C++ worker threads
  without the GIL, so ``num_parallel_calls`` really runs them in parallel::

      ds = (sluice.data.TFRecordDataset(files)
            .map(sluice.data.ops.parse_example(features), num_parallel_calls=sluice.data.AUTOTUNE)
            .map(sluice.data.ops.random_resized_crop(component="image/encoded", seed=1))
            .batch(64).prefetch(sluice.data.AUTOTUNE))

* **Python functions** work too, with tf.data's calling convention (a tuple
  element is passed as positional arguments, a dict as one dict), but each
  call takes the GIL: they run one at a time whatever ``num_parallel_calls``
  says, and every element is converted to numpy and back (a few microseconds
  per element, plus the function itself). Like tf.data tracing, ``map``
  calls the function once when the dataset is built, on an element read by
  a probe pass that takes nothing from the real passes, to learn the
  output's structure, dtypes and ranks; ``element_spec`` reports its
  dimensions unknown (None) unless they follow from the input's static
  shape (elementwise numpy arithmetic), or as ``output_signature=`` says.

Randomness: ``shuffle(seed=...)`` and ``random_resized_crop(seed=...)`` give
the same output in every run; the crop of an element depends only on (seed,
epoch, element index), whatever ``num_parallel_calls``. A seeded shuffle
gives TensorFlow's order (TF's algorithm and Philox stream).
"""

import builtins
import os

import numpy as np

from sluice import _core
from sluice import _crop_options
from sluice import dtypes as _dtypes
from sluice import errors  # noqa: F401  (the exceptions iteration raises)
from sluice import _data_sources
from sluice import _data_native_ops
from sluice import random as _random
from sluice import _data_probe
from sluice.queue import _to_component
from sluice.sparse_tensor import SparseTensor

__all__ = ["Dataset", "DatasetV2", "TFRecordDataset", "TextLineDataset", "FixedLengthRecordDataset", "AUTOTUNE",
           "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "TensorSpec", "Iterator", "experimental", "ops",
           "make_one_shot_iterator"]

_d = _core.data

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


# ---- Structure: how flat C++ components nest into tuples, dicts, SparseTensors ----

class _Leaf:
    """One tensor component."""
    __slots__ = ()

    def __repr__(self):
        return "T"


class _Sparse:
    """A SparseTensor: three components (indices, values, dense_shape)."""
    __slots__ = ()

    def __repr__(self):
        return "S"


_LEAF = _Leaf()
_SPARSE = _Sparse()


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _structure_of(value):
    """The structure of a nested value (dict keys sorted, as tf.nest does)."""
    if isinstance(value, SparseTensor):
        return _SPARSE
    if isinstance(value, dict):
        return {k: _structure_of(value[k]) for k in sorted(value)}
    if _is_namedtuple(value):
        return type(value)(*(_structure_of(v) for v in value))
    if isinstance(value, tuple):
        return tuple(_structure_of(v) for v in value)
    return _LEAF


def _flatten(structure, value):
    """The leaves of `value` (which has `structure`), in order."""
    out = []
    _flatten_into(structure, value, out)
    return out


def _flatten_into(structure, value, out):
    if structure is _LEAF:
        out.append(value)
    elif structure is _SPARSE:
        out.extend((value.indices, value.values, value.dense_shape))
    elif isinstance(structure, dict):
        if not isinstance(value, dict) or sorted(value) != list(structure):
            raise ValueError("The two structures don't have the same nested structure: %r and %r" %
                             (structure, value))
        for k in structure:
            _flatten_into(structure[k], value[k], out)
    else:
        if not isinstance(value, tuple) or len(value) != len(structure):
            raise ValueError("The two structures don't have the same nested structure: %r and %r" %
                             (structure, value))
        for s, v in zip(structure, value):
            _flatten_into(s, v, out)


def _count(structure):
    if structure is _LEAF:
        return 1
    if structure is _SPARSE:
        return 3
    values = structure.values() if isinstance(structure, dict) else structure
    return sum(_count(s) for s in values)


def _packer(structure):
    """A function from the flat component list to the nested value (fast for the usual shapes)."""
    if structure is _LEAF:
        return lambda flat: flat[0]
    if isinstance(structure, dict) and all(s is _LEAF for s in structure.values()):
        keys = list(structure)
        return lambda flat: dict(zip(keys, flat))
    if type(structure) is tuple and all(s is _LEAF for s in structure):
        return tuple

    def pack(flat):
        it = iter(flat)
        return _pack_from(structure, it)
    return pack


def _pack_from(structure, it):
    if structure is _LEAF:
        return next(it)
    if structure is _SPARSE:
        return SparseTensor(next(it), next(it), next(it))
    if isinstance(structure, dict):
        return {k: _pack_from(s, it) for k, s in structure.items()}
    values = [_pack_from(s, it) for s in structure]
    return type(structure)(*values) if _is_namedtuple(structure) else tuple(values)


def _map_structure(fn, structure, *rest):
    """fn(leaf structure, its components...) over `structure`'s leaves, nested back."""
    flat_rest = [list(r) for r in rest]
    pos = [0]

    def go(s):
        if s is _LEAF or s is _SPARSE:
            n = _count(s)
            args = [r[pos[0]:pos[0] + n] for r in flat_rest]
            pos[0] += n
            return fn(s, *args)
        if isinstance(s, dict):
            return {k: go(v) for k, v in s.items()}
        values = [go(v) for v in s]
        return type(s)(*values) if _is_namedtuple(s) else tuple(values)
    return go(structure)


# ---- Values -> typed components -------------------------------------------------------

def _infer_dtype(value):
    """TensorFlow's dtype for a Python or numpy value (convert_to_tensor's rules)."""
    if isinstance(value, (bytes, str)):
        return _dtypes.string
    if isinstance(value, builtins.bool) or isinstance(value, np.bool_):
        return _dtypes.bool
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        kind = value.dtype.kind
        if kind in "SUO":
            return _dtypes.string
        return _dtypes.as_dtype(value.dtype)
    arr = np.asarray(value)
    kind = arr.dtype.kind
    if kind in "SUO":
        return _dtypes.string
    if kind == "b":
        return _dtypes.bool
    if kind in "iu":
        info = np.iinfo(np.int32)
        if arr.size and (arr.min() < info.min or arr.max() > info.max):
            return _dtypes.int64
        return _dtypes.int32
    if kind == "f":
        return _dtypes.float32
    if kind == "c":
        return _dtypes.complex128
    return _dtypes.as_dtype(arr.dtype)


def _typed(value, dtype=None):
    """(component value as the C++ side copies it, its DType)."""
    if isinstance(value, Dataset):
        raise TypeError("a Dataset cannot be a component of an element")
    dtype = _infer_dtype(value) if dtype is None else _dtypes.as_dtype(dtype)
    return _to_component(value, dtype), dtype


def _components(value, structure):
    """The typed flat components of `value`: (values, dtype numbers)."""
    values, enums = [], []
    for leaf in _flatten(structure, value):
        v, dt = _typed(leaf)
        values.append(v)
        enums.append(dt.as_datatype_enum)
    return values, enums


# ---- Specs ---------------------------------------------------------------------------

class TensorShape:
    """A partially known shape (``tf.TensorShape``): ``as_list()``, ``rank``, ``==`` with lists."""

    __slots__ = ("_dims",)

    def __init__(self, dims):
        self._dims = None if dims is None else tuple(None if d is None or d < 0 else int(d) for d in dims)

    @property
    def rank(self):
        return None if self._dims is None else len(self._dims)

    def as_list(self):
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def is_fully_defined(self):
        return self._dims is not None and all(d is not None for d in self._dims)

    def __iter__(self):
        return iter(self._dims or ())

    def __len__(self):
        return len(self._dims)

    def __getitem__(self, i):
        return self._dims[i]

    def __eq__(self, other):
        if isinstance(other, TensorShape):
            return self._dims == other._dims
        if isinstance(other, (list, tuple)):
            return self._dims is not None and list(self._dims) == list(other)
        return NotImplemented

    def __hash__(self):
        return hash(self._dims)

    def __repr__(self):
        if self._dims is None:
            return "TensorShape(None)"
        return "TensorShape(%s)" % list(self._dims)


class TensorSpec:
    """The type of one component (``tf.TensorSpec``): shape, dtype, name."""

    __slots__ = ("_shape", "_dtype", "_name")

    def __init__(self, shape, dtype=_dtypes.float32, name=None):
        self._shape = shape if isinstance(shape, TensorShape) else TensorShape(shape)
        self._dtype = _dtypes.as_dtype(dtype)
        self._name = name

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    name = property(lambda self: self._name)

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and self._shape == other._shape and self._dtype == other._dtype and
                self._name == other._name)

    def __hash__(self):
        return hash((self._shape, self._dtype, self._name))

    def __repr__(self):
        return "TensorSpec(shape=%s, dtype=tf.%s, name=%r)" % (
            tuple(self._shape) if self._shape.rank is not None else None, self._dtype.name, self._name)


def _spec_of(structure, core_spec):
    from sluice._sparse_batch import SparseTensorSpec
    dtype_enums, shapes, _ = core_spec

    def leaf(s, enums, dims):
        if s is _SPARSE:
            shape = dims[2]
            rank = shape[0] if shape and shape[0] >= 0 else None
            return SparseTensorSpec([None] * rank if rank is not None else None,
                                    _dtypes.as_dtype(enums[1]) if enums[1] else _dtypes.float32)
        return TensorSpec(dims[0], _dtypes.as_dtype(enums[0]) if enums[0] else _dtypes.float32)
    return _map_structure(leaf, structure, dtype_enums, shapes)


class _Cardinality(int):
    """An int that, like TF's scalar tensor, also has ``numpy()``."""

    def numpy(self):
        return np.int64(self)


def _get_seed(op_seed):
    """The engine's (seed, seed2) of a data op: TF's rule (sluice.random.get_seed); (0, 0): random."""
    seed, seed2 = _random.get_seed(op_seed)
    return (0, 0) if seed is None else (seed, seed2)


def _opt_int(x, what):
    return None if x is None else _int(x, what)


def _int(x, what):
    if isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iu":
        x = x.item()
    if isinstance(x, builtins.bool) or not isinstance(x, (int, np.integer)):
        raise TypeError("%s must be an int, got %r" % (what, x))
    return int(x)


# ---- Dataset --------------------------------------------------------------------------

class DatasetV2:
    """A sequence of elements (``tf.data.Dataset``). Immutable; iterate it any number of times."""

    def __init__(self, core, structure):
        # Internal: use the sources (Dataset.range, from_tensor_slices, ...).
        self._core = core
        self._structure = structure

    # -- sources

    @staticmethod
    def range(*args, dtype=_dtypes.int64, name=None):
        """``range(stop)``, ``range(start, stop[, step])``: int64 scalars (or `dtype`)."""
        if not 1 <= len(args) <= 3:
            raise ValueError("Invalid arguments to range: %r" % (args,))
        args = [_int(a, "range argument") for a in args]
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
        dt = _dtypes.as_dtype(dtype)
        return Dataset(_d.range(start, stop, step, dt.as_datatype_enum), _LEAF)

    @staticmethod
    def from_tensors(tensors, name=None):
        """One element: `tensors` (a value, tuple or dict of values)."""
        structure = _structure_of(tensors)
        values, enums = _components(tensors, structure)
        return Dataset(_d.from_tensors(values, enums, []), structure)

    @staticmethod
    def from_tensor_slices(tensors, name=None):
        """The slices of `tensors` (a value, tuple or dict of values) along their first dimension."""
        structure = _structure_of(tensors)
        if _SPARSE in _leaves(structure):
            return _data_sources.from_tensor_slices(tensors, structure)
        values, enums = _components(tensors, structure)
        for v in values:
            if np.ndim(v) == 0:
                raise ValueError("Unbatching a tensor is only supported for rank >= 1")
        try:
            core = _d.from_tensor_slices(values, enums, [])
        except errors.InvalidArgumentError as e:
            raise ValueError(e.message) from None  # TF checks the shapes in Python, at construction
        return Dataset(core, structure)

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None,
                       name=None):
        """The elements a Python generator yields (``tf.data.Dataset.from_generator``).

        `generator()` (with `args`) is called once per iterator; each value it
        yields must match `output_signature` (nested TensorSpecs) or
        `output_types` / `output_shapes`. Runs under the GIL, one element at a
        time. A value of another shape is an InvalidArgumentError at that element.

        A probe pass (a Python function of a later ``map``, ``flat_map``,
        ``scan``... learning its output) calls `generator` too and reads an
        element or a batch: if the callable hands out the same iterator object
        again (``lambda: it``), the next pass gets what the probe read first,
        so nothing is lost; a fresh generator per call is replayable anyway.
        A generator function that reads a shared stream (a socket) would
        lose the probe's element: give such a pipeline's maps
        ``output_signature`` (no probe).
        """
        if output_signature is not None:
            if output_types is not None or output_shapes is not None:
                raise TypeError("The `output_types` and `output_shapes` arguments must not be specified "
                                "when `output_signature` is given.")
            structure = _structure_of(output_signature)
            specs = _flatten(structure, output_signature)
            dtypes = [_dtypes.as_dtype(spec.dtype) for spec in specs]
            shapes = [None if spec.shape.rank is None else list(spec.shape) for spec in specs]
        else:
            if output_types is None:
                raise TypeError("The `output_types` argument can not be None.")
            structure = _structure_of(output_types)
            dtypes = [_dtypes.as_dtype(t) for t in _flatten(structure, output_types)]
            if output_shapes is None:
                shapes = [None] * len(dtypes)
            else:
                flat = _flatten(structure, _broadcast(structure, output_shapes, is_shape=True))
                shapes = [None if sh is None else list(sh) for sh in flat]
        shapes = [None if sh is None else [-1 if d is None else int(d) for d in sh] for sh in shapes]
        enums = [dt.as_datatype_enum for dt in dtypes]
        gen_args = tuple(args) if args is not None else ()
        expected = output_signature if output_signature is not None else output_types
        # A probe (tracing a map function) must not take what a real pass then misses: see GeneratorReplay.
        replay = _data_probe.GeneratorReplay()

        def make(probe):
            source = generator(*gen_args)
            it = iter(source)
            # iter() of an iterable is a new iterator of this pass; an iterator object may be handed out again.
            read = replay.step(it, probe) if it is source else it.__next__

            def step(_):
                try:
                    value = read()
                except StopIteration:
                    return None
                if isinstance(value, list) and type(structure) is tuple:
                    value = tuple(value)
                try:
                    flat = _flatten(structure, value)
                except (TypeError, ValueError):
                    raise _generator_error("did not match the expected structure. The expected structure was %s" %
                                           (expected,), value) from None
                values = []
                for v, dt, sh in zip(flat, dtypes, shapes):
                    try:
                        c = _to_component(v, dt)
                    except (TypeError, ValueError):
                        raise _generator_error("could not be converted to the expected type. The expected type "
                                               "was %s" % dt.name, v) from None
                    got = () if isinstance(c, bytes) else np.shape(c)
                    if sh is not None and (len(got) != len(sh) or any(w >= 0 and g != w for g, w in zip(got, sh))):
                        raise errors.InvalidArgumentError(
                            None, None, "`generator` yielded an element of shape %s where an element of shape "
                            "%s was expected." % (list(got), [None if w < 0 else w for w in sh]))
                    values.append(c)
                return values, enums
            return step
        return Dataset(_d.from_generator(make, enums, shapes), structure)

    @staticmethod
    def zip(*datasets, name=None):
        """Elements of the datasets side by side (a tuple, or the nesting of `datasets`)."""
        if len(datasets) == 1 and not isinstance(datasets[0], DatasetV2):
            datasets = datasets[0]
        structure_of_ds = _structure_of_datasets(datasets)
        flat = _flatten(structure_of_ds, datasets)
        structure = _map_structure(lambda s, ds: ds[0]._structure, structure_of_ds, flat)
        return Dataset(_d.zip([ds._core for ds in flat]), structure)

    # -- properties

    @property
    def element_spec(self):
        """The nested TensorSpec (SparseTensorSpec; DatasetSpec for a window) of every element."""
        if _data_xforms.is_window(self._structure):
            return _data_xforms.window_element_spec(self)
        return _spec_of(self._structure, self._core.element_spec())

    def cardinality(self):
        """The number of elements, INFINITE_CARDINALITY (-1) or UNKNOWN_CARDINALITY (-2)."""
        return _Cardinality(self._core.cardinality())

    def __len__(self):
        n = self._core.cardinality()
        if n == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return n

    def __bool__(self):
        return True

    def __iter__(self):
        return Iterator(self)

    def as_numpy_iterator(self):
        """An iterator of numpy values (iterating the dataset itself already yields numpy)."""
        return Iterator(self)

    def __repr__(self):
        return "<%s element_spec=%r>" % (self._core.debug_name(), self.element_spec)

    # -- transformations

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None, error_policy=None,
            output_signature=None):
        """`map_func` of each element.

        `map_func`: a native function from ``sluice.data.ops`` (runs in C++
        threads without the GIL) or a Python callable (takes the GIL per call;
        a tuple element is passed as positional arguments). With
        ``num_parallel_calls`` (an int or AUTOTUNE: the number of cores),
        that many calls run at once; ``deterministic=False`` hands out
        elements as they are ready.

        ``error_policy`` (sluice's own) applies to the function's errors (an
        undecodable image, a parse error; not its input's): ``'fail'``
        (raise, tf.data's behaviour), ``'skip'`` (drop and count the element)
        or ``'replace'`` (zeros of the element_spec, or
        ``ErrorPolicy.replace_with(element)``). None: ``Options.error_policy``.
        The zeros take a dimension the spec leaves unknown from the probe
        call's output (below); Options.error_policy's take 0 for it.

        A Python function is called once when the dataset is built, on an
        element a probe pass reads (it consumes nothing the real passes
        need), to learn the output's structure, dtypes and ranks; its
        dimensions are reported unknown (None), as one call cannot tell
        which are static. ``output_signature`` (sluice's own: a TensorSpec,
        or a tuple / dict of them, as from_generator's) states the output
        instead: no probe, and each result is checked against it
        (InvalidArgumentError at the element otherwise).
        """
        npc = _opt_int(num_parallel_calls, "num_parallel_calls")
        det = None if deterministic is None else bool(deterministic)
        if isinstance(map_func, _NativeFn):
            out = map_func._apply(self, npc, det)
            out._core = _data_policy.apply(out._core, out._structure, error_policy)
            return out
        if not callable(map_func):
            raise TypeError("map_func must be callable, got %r" % (map_func,))
        in_structure = self._structure
        checked = None
        if output_signature is not None:
            out_structure, out_enums, out_shapes = _signature(output_signature)
            checked = out_shapes
        else:
            out = _probe(self, map_func)
            if out is None:  # an empty input: any structure will do
                out = _LEAF, [0], [None], None
            out_structure, out_enums, out_shapes, probe_values = out
            error_policy = _replace_like_probe(error_policy, out_structure, probe_values)
        call = _python_map(map_func, in_structure, out_structure, out_enums, checked)
        core = _d.map_py(self._core, call, out_enums, out_shapes, npc, det)
        return Dataset(_data_policy.apply(core, out_structure, error_policy), out_structure)

    def filter(self, predicate, name=None):
        """Only the elements for which `predicate` (Python, under the GIL) is true.

        A predicate that does not return a bool scalar for the first element is
        a ValueError here (TF traces it); for a later element, an
        InvalidArgumentError there."""
        pack = _packer(self._structure)
        star = type(self._structure) is tuple

        def keep(components):
            args = pack(components)
            raw = predicate(*args) if star else predicate(args)
            result = _predicate_bool(raw)
            if result is None:
                raise errors.InvalidArgumentError(None, None, _predicate_message(raw))
            return result
        _probe_predicate(self, predicate)
        return Dataset(_d.filter_py(self._core, keep), self._structure)

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        """batch_size consecutive elements stacked (the last batch smaller unless drop_remainder)."""
        if _SPARSE in _leaves(self._structure):
            return _data_sources.batch(self, batch_size, drop_remainder)
        return Dataset(_d.batch(self._core, _int(batch_size, "batch_size"), bool(drop_remainder)), self._structure)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False, name=None):
        """As batch, each component padded to `padded_shapes` (None / -1 dims: the batch's largest)."""
        structure = self._structure
        _reject_sparse(structure, "padded_batch")
        shapes = None
        if padded_shapes is not None:
            shapes = [None if s is None else [-1 if d is None else int(d) for d in s]
                      for s in _flatten(structure, _broadcast(structure, padded_shapes, is_shape=True))]
        values, enums = None, []
        if padding_values is not None:
            flat = _flatten(structure, _broadcast(structure, padding_values))
            dtype_enums = self._core.element_spec()[0]
            values = []
            for v, e in zip(flat, dtype_enums):
                cv, dt = _typed(v, _dtypes.as_dtype(e) if e else None)
                values.append(cv)
                enums.append(dt.as_datatype_enum)
        return Dataset(_d.padded_batch(self._core, _int(batch_size, "batch_size"), shapes, values, enums,
                                       bool(drop_remainder)), structure)

    def unbatch(self, name=None):
        """Each element split along its first dimension."""
        if _SPARSE in _leaves(self._structure):
            return _data_sources.unbatch(self)
        return Dataset(_d.unbatch(self._core), self._structure)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None, name=None):
        """Elements drawn at random from a buffer of `buffer_size`: TF's algorithm and random stream, so a
        seeded shuffle gives TensorFlow's order; seeds follow TF's rule with ``sluice.random.set_seed``."""
        seed, seed2 = _data_pickle.engine_seeds(_opt_int(seed, "seed"))  # drawn now when None: see _data_pickle
        reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
        return Dataset(_d.shuffle(self._core, _int(buffer_size, "buffer_size"), seed, seed2, reshuffle),
                       self._structure)

    def prefetch(self, buffer_size, name=None):
        """Up to `buffer_size` elements (AUTOTUNE: the number of cores, at least 2) made ahead on a thread."""
        return Dataset(_d.prefetch(self._core, _int(buffer_size, "buffer_size")), self._structure)

    def repeat(self, count=None, name=None):
        """The dataset `count` times (None or -1: for ever)."""
        count = -1 if count is None else _int(count, "count")
        return Dataset(_d.repeat(self._core, count), self._structure)

    def take(self, count, name=None):
        """The first `count` elements (-1: all)."""
        return Dataset(_d.take(self._core, _int(count, "count")), self._structure)

    def skip(self, count, name=None):
        """All but the first `count` elements (-1: none)."""
        return Dataset(_d.skip(self._core, _int(count, "count")), self._structure)

    def shard(self, num_shards, index, name=None):
        """Every num_shards-th element, starting at `index`."""
        return Dataset(_d.shard(self._core, _int(num_shards, "num_shards"), _int(index, "index")), self._structure)

    def concatenate(self, dataset, name=None):
        """This dataset's elements, then `dataset`'s (same structure and dtypes)."""
        if _count(self._structure) != _count(dataset._structure) or repr(self._structure) != repr(dataset._structure):
            raise TypeError("Incompatible dataset elements:\n  %r vs.\n  %r" % (self._structure, dataset._structure))
        try:
            core = _d.concatenate(self._core, dataset._core)
        except errors.InvalidArgumentError as e:
            raise TypeError(e.message) from None  # TF checks the element specs in Python, at construction
        return Dataset(core, self._structure)

    def enumerate(self, start=0, name=None):
        """(index, element) pairs, the index an int64 from `start`."""
        return Dataset(_d.enumerate(self._core, _int(start, "start")), (_LEAF, self._structure))

    def interleave(self, map_func, cycle_length=None, block_length=None, num_parallel_calls=None,
                   deterministic=None, name=None):
        """The datasets `map_func` (Python) opens from each element, `block_length` elements of
        `cycle_length` of them in turn (TF's order). With `num_parallel_calls`, each open dataset
        is read ahead on its own C++ thread (the order stays the same)."""
        cycle = AUTOTUNE if cycle_length is None else _int(cycle_length, "cycle_length")
        block = 1 if block_length is None else _int(block_length, "block_length")
        npc = _opt_int(num_parallel_calls, "num_parallel_calls")
        det = None if deterministic is None else bool(deterministic)
        if _data_xforms.is_window(self._structure):
            return _data_xforms.interleave_windows(self, map_func, cycle, block, npc, det)
        in_structure = self._structure
        pack = _packer(in_structure)
        star = type(in_structure) is tuple

        def open_dataset(components):
            args = pack(components)
            ds = map_func(*args) if star else map_func(args)
            if not isinstance(ds, DatasetV2):
                raise TypeError("The `map_func` argument must return a `Dataset` object. Got %s." % type(ds).__name__)
            return ds._core

        first = _first_components(self)
        if first is None:
            out_structure, enums, shapes = _LEAF, [0], [None]
        else:
            args = pack(first)
            inner = map_func(*args) if star else map_func(args)
            if not isinstance(inner, DatasetV2):
                raise TypeError("The `map_func` argument must return a `Dataset` object. Got %s." %
                                type(inner).__name__)
            out_structure = inner._structure
            enums, shapes, _ = inner._core.element_spec()
            shapes = _data_probe.relaxed_shapes(shapes)  # the datasets of other elements may differ
        return Dataset(_d.interleave_py(self._core, open_dataset, enums, shapes, cycle, block, npc, det),
                       out_structure)

    def flat_map(self, map_func, name=None):
        """The concatenation of the datasets `map_func` opens (interleave with cycle_length 1)."""
        return self.interleave(map_func, cycle_length=1, block_length=1)

    def cache(self, filename="", name=None):
        """Elements kept by the first complete pass and replayed after it: in memory, or with
        `filename` in that file (written under a temporary name renamed at the end; a second pass
        writing it at the same time raises AlreadyExistsError; a corrupt file DataLossError)."""
        if filename:
            return Dataset(_d.cache_file(self._core, os.fspath(filename)), self._structure)
        return Dataset(_d.cache(self._core), self._structure)

    # -- windows, scans, grouping (window, scan, take_while, unique, ignore_errors, rebatch,
    # group_by_window, bucket_by_sequence_length: sluice/_data_xforms.py)

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None):
        """Windows of `size` elements, one starting every `shift` (None: size), taking every `stride`-th
        element; the last windows are partial unless drop_remainder. Each window is the element's
        structure with every component a Dataset (tf.data's nested datasets); iterate them, or
        flat_map / interleave over them (``ds.window(3).flat_map(lambda w: w.batch(3))``)."""
        return _data_xforms.window(self, size, shift, stride, drop_remainder)

    def scan(self, initial_state, scan_func, name=None):
        """``scan_func(state, element) -> (new_state, output)`` (Python) of each element, the state
        carried along from `initial_state` (its structure and dtypes must stay the same)."""
        return _data_xforms.scan(self, initial_state, scan_func)

    def take_while(self, predicate, name=None):
        """The elements before the first for which `predicate` (Python, a bool) is false."""
        return _data_xforms.take_while(self, predicate)

    def unique(self, name=None):
        """Each distinct element once (a single int32, int64 or string component)."""
        return _data_xforms.unique(self)

    def ignore_errors(self, log_warning=False, name=None):
        """Skips the elements whose production fails (a corrupt record, a failing map function); the
        iterator's ``skipped_errors`` counts them; log_warning logs each to the "sluice" logger."""
        return _data_xforms.ignore_errors(self, log_warning)

    def rebatch(self, batch_size, drop_remainder=False, name=None):
        """The input's batches re-cut into batches of `batch_size` (an int, or a list cycled through):
        ``unbatch().batch(n)`` without unbatching element by element."""
        return _data_xforms.rebatch(self, batch_size, drop_remainder)

    def group_by_window(self, key_func, reduce_func, window_size=None, window_size_func=None, name=None):
        """Elements grouped by ``key_func(element)`` (an int64); each window of `window_size` (or
        ``window_size_func(key)``) elements of a key, and each key's rest at the end (in key order),
        becomes the elements of ``reduce_func(key, window_dataset)``."""
        return _data_xforms.group_by_window(self, key_func, reduce_func, window_size, window_size_func)

    def bucket_by_sequence_length(self, element_length_func, bucket_boundaries, bucket_batch_sizes,
                                  padded_shapes=None, padding_values=None, pad_to_bucket_boundary=False,
                                  no_padding=False, drop_remainder=False, name=None):
        """Elements batched (padded) with others of a similar length: bucket i holds lengths in
        [bucket_boundaries[i-1], bucket_boundaries[i]) and batches bucket_batch_sizes[i] of them."""
        return _data_xforms.bucket_by_sequence_length(
            self, element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes, padding_values,
            pad_to_bucket_boundary, no_padding, drop_remainder)

    # -- record-indexed files and global shuffle (from_record_files, shuffle_globally:
    # sluice/_data_global_shuffle.py, whose docstring tells the rules)

    @staticmethod
    def from_record_files(filenames, index="auto", compression_type=None, read_ahead_records=None,
                          read_ahead_bytes=None, use_mmap=True):
        """The records of TFRecord files (TFRecordDataset's elements), read at the offsets of their
        record indexes (``<file>.idx``): index ``"auto"`` loads a fresh one or scans the file and
        writes it, ``"no_save"`` never writes, ``"require"`` needs a fresh one. In file order; see
        ``shuffle_globally``. Files are memory-mapped unless use_mmap is False. Compressed files are
        refused (no random access)."""
        return _data_global_shuffle.from_record_files(filenames, index, compression_type, read_ahead_records,
                                                      read_ahead_bytes, use_mmap)

    def shuffle_globally(self, seed=None, reshuffle_each_iteration=True):
        """Every record of a ``from_record_files`` dataset once per epoch, in a uniform permutation
        keyed by (seed, epoch): the same seed gives the same orders in every run, each pass (epoch)
        another order unless reshuffle_each_iteration is False. seed None: a random one."""
        return _data_global_shuffle.shuffle_globally(self, seed, reshuffle_each_iteration)

    def apply(self, transformation_func):
        """transformation_func(self)."""
        return transformation_func(self)

    def with_options(self, options, name=None):
        """Accepted for compatibility; sluice has no dataset options yet."""
        return self

    # -- sources: list_files, sampling (sluice/_data_sources.py)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None, name=None):
        return _data_sources.list_files(file_pattern, shuffle, seed, name)

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                             rerandomize_each_iteration=None):
        return _data_sources.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset,
                                                  rerandomize_each_iteration)

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
        return _data_sources.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)

    list_files.__doc__ = _data_sources.list_files.__doc__
    sample_from_datasets.__doc__ = _data_sources.sample_from_datasets.__doc__
    choose_from_datasets.__doc__ = _data_sources.choose_from_datasets.__doc__

    # -- TF 1

    def make_one_shot_iterator(self):
        """An iterator with ``get_next()`` (tf.compat.v1's); raises OutOfRangeError at the end."""
        return Iterator(self)

    def make_initializable_iterator(self, shared_name=None):
        """An iterator whose ``initializer`` (a callable here) restarts it."""
        return Iterator(self)


Dataset = DatasetV2


def _leaves(structure):
    if structure is _LEAF or structure is _SPARSE:
        return [structure]
    values = structure.values() if isinstance(structure, dict) else structure
    return [leaf for s in values for leaf in _leaves(s)]


def _reject_sparse(structure, op):
    if _SPARSE in _leaves(structure):
        raise NotImplementedError("sluice.data: %s of SparseTensor components is not implemented yet" % op)


def _structure_of_datasets(value):
    if isinstance(value, DatasetV2):
        return _LEAF
    if isinstance(value, dict):
        return {k: _structure_of_datasets(value[k]) for k in sorted(value)}
    if isinstance(value, (tuple, list)):
        return tuple(_structure_of_datasets(v) for v in value)
    raise TypeError("zip() expects datasets, got %r" % (value,))


def _broadcast(structure, value, is_shape=False):
    """`value` given for every leaf of `structure` (a single value applies to all)."""
    if structure is _LEAF:
        return value
    if isinstance(structure, dict):
        if isinstance(value, dict):
            return {k: _broadcast(s, value[k], is_shape) for k, s in structure.items()}
        return {k: _broadcast(s, value, is_shape) for k, s in structure.items()}
    if isinstance(value, tuple) and not (is_shape and all(not isinstance(v, (tuple, list)) for v in value)):
        return tuple(_broadcast(s, v, is_shape) for s, v in zip(structure, value))
    return tuple(_broadcast(s, value, is_shape) for s in structure)


def _first_components(dataset):
    """The first element's flat components (list of numpy), or None for an empty dataset.

    A probe pass: a source that consumes shared input (from_queue) gives a zero element instead."""
    it = dataset._core.make_probe_iterator()
    try:
        return it.next()
    finally:
        it.close()


def _probe(dataset, map_func):
    """Calls map_func once on an element of a probe pass (tf.data traces it once): (structure, dtypes,
    shapes with every dimension unknown, the call's component values), or None for an empty dataset."""
    first = _first_components(dataset)
    if first is None:
        return None
    in_structure = dataset._structure
    args = _packer(in_structure)(_data_probe.traced_components(first, dataset._core.element_spec()[1]))
    result = map_func(*args) if type(in_structure) is tuple else map_func(args)
    if isinstance(result, list):
        result = tuple(result)
    structure = _structure_of(result)
    enums, shapes, values = [], [], []
    for leaf in _flatten(structure, result):
        v, dt = _typed(leaf)
        enums.append(dt.as_datatype_enum)
        shapes.append(_data_probe.traced_shape(leaf, list(np.shape(v)) if not isinstance(v, bytes) else []))
        values.append(v)
    return structure, enums, shapes, values


def _signature(output_signature):
    """(structure, dtype numbers, shapes) of nested TensorSpecs (map's output_signature)."""
    structure = _structure_of(output_signature)
    specs = _flatten(structure, output_signature)
    for spec in specs:
        if not isinstance(spec, TensorSpec):
            raise TypeError("output_signature must be a TensorSpec or a structure of them, got %r" % (spec,))
    enums = [_dtypes.as_dtype(spec.dtype).as_datatype_enum for spec in specs]
    shapes = [None if spec.shape.rank is None else [-1 if d is None else int(d) for d in spec.shape]
              for spec in specs]
    return structure, enums, shapes


def _predicate_bool(result):
    """`result` of a filter predicate as a bool; None if it is not a bool scalar."""
    if isinstance(result, np.ndarray):
        if result.shape != () or result.dtype != np.bool_:
            return None
        result = result.item()
    if not isinstance(result, (builtins.bool, np.bool_)):
        return None
    return builtins.bool(result)


def _predicate_message(result):
    kind = "%s%s" % (result.dtype, list(result.shape)) if isinstance(result, np.ndarray) else type(result).__name__
    return ("Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor, but its return type was "
            "%s." % kind)


def _probe_predicate(dataset, predicate):
    """ValueError (TF's, at construction) if `predicate` gives a non-bool for the first element.

    An exception of the predicate itself is left for the iteration to report."""
    try:
        first = _first_components(dataset)
        if first is None:
            return
        args = _packer(dataset._structure)(first)
        result = predicate(*args) if type(dataset._structure) is tuple else predicate(args)
    except Exception:  # noqa: BLE001 - reported when the element is reached
        return
    if _predicate_bool(result) is None:
        raise ValueError(_predicate_message(result))


def _generator_error(what, value):
    """TF's error for a from_generator value that does not fit the declared output (py_func's TypeError)."""
    return errors.InvalidArgumentError(None, None, "TypeError: `generator` yielded an element that %s, but the "
                                       "yielded element was %r." % (what, value))


def _replace_like_probe(error_policy, structure, probe_values):
    """error_policy 'replace' without a substitute: zeros shaped as the probe call's output, so
    they batch with the function's usual results although the spec's dimensions are unknown."""
    policy = error_policy.policy if isinstance(error_policy, _data_policy.ErrorPolicy) else error_policy
    if isinstance(policy, bytes):
        policy = policy.decode()
    if policy != "replace" or probe_values is None or getattr(error_policy, "replacement", None) is not None:
        return error_policy
    zeros = _pack_from(structure, iter(_data_probe.zeros_like_probe(probe_values)))
    return _data_policy.ErrorPolicy.replace_with(zeros)


def _check_shapes(values, shapes):
    for c, sh in zip(values, shapes):
        got = () if isinstance(c, bytes) else np.shape(c)
        if sh is not None and (len(got) != len(sh) or any(w >= 0 and g != w for g, w in zip(got, sh))):
            raise errors.InvalidArgumentError(
                None, None, "`map_func` returned a component of shape %s where its output_signature says %s."
                % (list(got), [None if w < 0 else w for w in sh]))


def _python_map(map_func, in_structure, out_structure, out_enums, checked_shapes=None):
    """The callable the C++ map calls: components -> (values, dtype numbers); each result
    checked against `checked_shapes` where given."""
    pack = _packer(in_structure)
    star = type(in_structure) is tuple
    dtypes = [_dtypes.as_dtype(e) for e in out_enums]
    single = out_structure is _LEAF

    def convert(components):
        args = pack(components)
        result = map_func(*args) if star else map_func(args)
        if single:
            return [_to_component(result, dtypes[0])], out_enums
        if isinstance(result, list):
            result = tuple(result)
        flat = _flatten(out_structure, result)
        return [_to_component(v, dt) for v, dt in zip(flat, dtypes)], out_enums
    if checked_shapes is None:
        return convert

    def call(components):
        out = convert(components)
        _check_shapes(out[0], checked_shapes)
        return out
    return call


class Iterator:
    """One pass over a dataset (``iter(dataset)``): ``next()`` / ``get_next()``.

    Destroying it (or ``close()``) stops and joins its C++ threads."""

    def __init__(self, dataset):
        self._dataset = dataset
        self._it = dataset._core.make_iterator()
        self._read = _d.Iterator.next
        if _data_xforms.is_window(dataset._structure):
            self._read, self._pack = _data_xforms.window_reader(dataset)
        else:
            self._pack = _packer(dataset._structure)

    def __iter__(self):
        return self

    def __next__(self):
        flat = self._read(self._it)
        if flat is None:
            raise StopIteration
        return self._pack(flat)

    next = __next__

    def get_next(self, name=None):
        """The next element; OutOfRangeError at the end (TF 1's iterator)."""
        flat = self._read(self._it)
        if flat is None:
            raise errors.OutOfRangeError(None, None, "End of sequence")
        return self._pack(flat)

    @property
    def element_spec(self):
        return self._dataset.element_spec

    @property
    def initializer(self):
        """A callable that restarts the pass (TF 1's initializable iterator)."""
        def initialize():
            self._it.close()
            self._it = self._dataset._core.make_iterator()
        return initialize

    @property
    def skipped_errors(self):
        """How many elements ``ignore_errors`` and ``error_policy='skip'`` have skipped in this pass so far."""
        return _d.skipped_errors(self._it)

    def close(self):
        self._it.close()


def make_one_shot_iterator(dataset):
    """``tf.compat.v1.data.make_one_shot_iterator``."""
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset, shared_name=None):
    """``tf.compat.v1.data.make_initializable_iterator``."""
    return dataset.make_initializable_iterator(shared_name)


# ---- File datasets ---------------------------------------------------------------------

def _filenames(filenames):
    if isinstance(filenames, DatasetV2):
        return [f.decode() if isinstance(f, bytes) else str(f) for f in filenames]
    if isinstance(filenames, (str, bytes, os.PathLike)):
        filenames = [filenames]
    out = []
    for f in np.asarray(filenames, dtype=object).reshape(-1):
        f = os.fspath(f)
        out.append(f.decode() if isinstance(f, bytes) else f)
    return out


def _compression(compression_type):
    if compression_type is None:
        return ""
    return compression_type.decode() if isinstance(compression_type, bytes) else str(compression_type)


def _reader_of(kind, filenames, compression_type, buffer_size, num_parallel_reads, record_bytes=1,
               header_bytes=None, footer_bytes=None):
    """A reader over a dataset of file names: each file opened as the dataset yields it (TF's flat_map)."""
    return _d.reader_of(kind, filenames._core, _compression(compression_type),
                        0 if buffer_size is None else _int(buffer_size, "buffer_size"),
                        _opt_int(num_parallel_reads, "num_parallel_reads"), _int(record_bytes, "record_bytes"),
                        0 if header_bytes is None else _int(header_bytes, "header_bytes"),
                        0 if footer_bytes is None else _int(footer_bytes, "footer_bytes"))


class TFRecordDataset(DatasetV2):
    """The records of TFRecord files (``tf.data.TFRecordDataset``), one string scalar each.

    num_parallel_reads: None reads the files one after the other; n (or
    AUTOTUNE) reads n at once, their records interleaved one by one as TF
    does. Corrupt records raise DataLossError naming the file and record.
    error_policy (sluice's own): 'fail' (the default: raise), 'skip' (drop
    the failing record and the rest of its file, count and report it) or
    'replace' (an empty string, or ``ErrorPolicy.replace_with(value)``, then
    the next file); None: ``Options.error_policy``.
    """

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None,
                 error_policy=None):
        if isinstance(filenames, DatasetV2):
            core = _reader_of("tfrecord", filenames, compression_type, buffer_size, num_parallel_reads)
            return super().__init__(_data_policy.apply(core, _LEAF, error_policy), _LEAF)
        core = _d.tfrecord(_filenames(filenames), _compression(compression_type),
                           0 if buffer_size is None else _int(buffer_size, "buffer_size"),
                           _opt_int(num_parallel_reads, "num_parallel_reads"))
        super().__init__(_data_policy.apply(core, _LEAF, error_policy), _LEAF)


class TextLineDataset(DatasetV2):
    """The lines of text files (``tf.data.TextLineDataset``), without line endings.

    error_policy: as TFRecordDataset's."""

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None,
                 error_policy=None):
        if isinstance(filenames, DatasetV2):
            core = _reader_of("text_line", filenames, compression_type, buffer_size, num_parallel_reads)
            return super().__init__(_data_policy.apply(core, _LEAF, error_policy), _LEAF)
        core = _d.text_line(_filenames(filenames), _compression(compression_type),
                            0 if buffer_size is None else _int(buffer_size, "buffer_size"),
                            _opt_int(num_parallel_reads, "num_parallel_reads"))
        super().__init__(_data_policy.apply(core, _LEAF, error_policy), _LEAF)


class FixedLengthRecordDataset(DatasetV2):
    """Fixed-size records of files (``tf.data.FixedLengthRecordDataset``).

    error_policy: as TFRecordDataset's."""

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None, buffer_size=None,
                 compression_type=None, num_parallel_reads=None, name=None, error_policy=None):
        if isinstance(filenames, DatasetV2):
            core = _reader_of("fixed_length", filenames, compression_type, buffer_size, num_parallel_reads,
                              record_bytes, header_bytes, footer_bytes)
            return super().__init__(_data_policy.apply(core, _LEAF, error_policy), _LEAF)
        core = _d.fixed_length(_filenames(filenames), _int(record_bytes, "record_bytes"),
                               0 if header_bytes is None else _int(header_bytes, "header_bytes"),
                               0 if footer_bytes is None else _int(footer_bytes, "footer_bytes"),
                               _compression(compression_type),
                               0 if buffer_size is None else _int(buffer_size, "buffer_size"),
                               _opt_int(num_parallel_reads, "num_parallel_reads"))
        super().__init__(_data_policy.apply(core, _LEAF, error_policy), _LEAF)


# ---- Native map functions ----------------------------------------------------------------

class _NativeFn:
    """A map function that runs in C++ without the GIL (see ``sluice.data.ops``)."""

    def __init__(self, apply, description):
        self._apply = apply
        self._description = description

    def __call__(self, *args):
        raise TypeError("%s is a sluice.data native map function: pass it to Dataset.map" % self._description)

    def __repr__(self):
        return "<sluice.data.ops.%s>" % self._description


def _component_index(structure, component):
    """The flat index of `component` (a dict key, or an index) in `structure`."""
    if structure is _LEAF:
        if component not in (None, 0):
            raise ValueError("the element is a single tensor: component must be None or 0, got %r" % (component,))
        return 0
    if isinstance(structure, dict):
        if component not in structure:
            raise ValueError("the element has no component %r (keys: %s)" % (component, list(structure)))
        index = 0
        for k, s in structure.items():
            if k == component:
                if s is not _LEAF:
                    raise ValueError("component %r is not a single tensor" % (component,))
                return index
            index += _count(s)
    if isinstance(component, int) and 0 <= component < _count(structure):
        return component
    raise ValueError("component must name a tensor of the element, got %r" % (component,))


class _Ops:
    """``sluice.data.ops``: map functions that run in C++ worker threads, without the GIL.

    Pass them to ``Dataset.map``; ``num_parallel_calls`` then runs that many
    at once on C++ threads.
    """

    @staticmethod
    def parse_example(features, component=None):
        """``tf.io.parse_single_example(record, features)`` of each string element.

        The element (or its string `component`) becomes the dict of parsed
        features (FixedLenFeature: a tensor; VarLenFeature / SparseFeature: a
        SparseTensor), as ``sluice.io.parse_single_example`` gives it.
        """
        from sluice import _parsing
        parser = _core.ExampleParser(_parsing._spec(features))

        def apply(ds, npc, det):
            index = _component_index(ds._structure, component)
            core = _d.map_parse_example(ds._core, parser, index, npc, det)
            names = core.element_spec()[2]
            structure = {}
            for n in names:
                if n.endswith("/indices"):
                    structure[n[:-len("/indices")]] = _SPARSE
                elif not (n.endswith("/values") or n.endswith("/dense_shape")):
                    structure[n] = _LEAF
            return Dataset(core, structure)
        return _NativeFn(apply, "parse_example")

    @staticmethod
    def decode_jpeg(component=None, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                    acceptable_fraction=1, dct_method=""):
        """``tf.io.decode_jpeg`` (JPEG or PNG) of the encoded image `component`: uint8 [h, w, c]."""
        def apply(ds, npc, det):
            index = _component_index(ds._structure, component)
            core = _d.map_decode_jpeg(ds._core, index, _int(channels, "channels"), _int(ratio, "ratio"),
                                      bool(fancy_upscaling), bool(try_recover_truncated), float(acceptable_fraction),
                                      dct_method or "", npc, det)
            return Dataset(core, ds._structure)
        return _NativeFn(apply, "decode_jpeg")

    @staticmethod
    def random_resized_crop(size=None, scale=None, ratio=None, flip=True, mean=None, std=None, data_format=None,
                            seed=0, component=None, sampler=None, method=None, antialias=None, channels=None,
                            max_attempts=None):
        """The fused training augmentation of encoded image `component`, in C++.

        torchvision's RandomResizedCrop(size, scale, ratio) + horizontal flip
        (if `flip`) + ToTensor + Normalize(mean, std), decoding only the crop
        box (``sluice.image.decode_random_resized_crop``): float32
        [3, h, w] ("CHW") or [h, w, 3] ("HWC"). An option left at None keeps
        the default of ``_core.RandomResizedCropOptions`` (size 224, ImageNet's
        mean and std, "CHW", ...). The crop of element i of
        epoch e depends only on (seed, e, i), whatever num_parallel_calls.
        """
        if size is not None:
            size = tuple(_int(s, "size") for s in size) if isinstance(size, (list, tuple)) else _int(size, "size")

        def apply(ds, npc, det):
            index = _component_index(ds._structure, component)
            options = _crop_options.crop_options(
                _int, size=size, scale=scale, ratio=ratio, flip=flip, mean=mean, std=std, data_format=data_format,
                sampler=sampler, method=method, antialias=antialias, channels=channels, max_attempts=max_attempts)
            core = _d.map_random_resized_crop(ds._core, index, options, _int(seed, "seed") & 0xFFFFFFFFFFFFFFFF,
                                              npc, det)
            return Dataset(core, ds._structure)
        return _NativeFn(apply, "random_resized_crop")

    # -- native element ops (sluice/_data_native_ops.py): consecutive ones fuse into one map stage
    cast = staticmethod(_data_native_ops.cast)
    chain = staticmethod(_data_native_ops.chain)
    decode_raw = staticmethod(_data_native_ops.decode_raw)
    normalize = staticmethod(_data_native_ops.normalize)
    one_hot = staticmethod(_data_native_ops.one_hot)
    per_image_standardization = staticmethod(_data_native_ops.per_image_standardization)
    random_brightness = staticmethod(_data_native_ops.random_brightness)
    random_contrast = staticmethod(_data_native_ops.random_contrast)
    random_crop = staticmethod(_data_native_ops.random_crop)
    random_flip_left_right = staticmethod(_data_native_ops.random_flip_left_right)
    random_flip_up_down = staticmethod(_data_native_ops.random_flip_up_down)
    read_file = staticmethod(_data_native_ops.read_file)
    reshape = staticmethod(_data_native_ops.reshape)
    resize = staticmethod(_data_native_ops.resize)
    slice = staticmethod(_data_native_ops.slice)
    strided_slice = staticmethod(_data_native_ops.strided_slice)
    transpose = staticmethod(_data_native_ops.transpose)


ops = _Ops()


class _Experimental:
    """``sluice.data.experimental``: the names older code uses."""

    AUTOTUNE = AUTOTUNE
    INFINITE_CARDINALITY = INFINITE_CARDINALITY
    UNKNOWN_CARDINALITY = UNKNOWN_CARDINALITY

    @staticmethod
    def cardinality(dataset):
        return dataset.cardinality()

    @staticmethod
    def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False, buffer_output_elements=None,
                            prefetch_input_elements=None):
        """``tf.data.experimental.parallel_interleave``: for ``dataset.apply``; an interleave whose
        `cycle_length` open datasets are read ahead in parallel (sloppy: order not required)."""
        def apply(dataset):
            return dataset.interleave(map_func, cycle_length=cycle_length, block_length=block_length,
                                      num_parallel_calls=cycle_length, deterministic=not sloppy)
        return apply

    @staticmethod
    def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False,
                      num_parallel_calls=None):
        """``tf.data.experimental.map_and_batch``: for ``dataset.apply``; map then batch."""
        if num_parallel_calls is None and num_parallel_batches is not None:
            num_parallel_calls = _int(num_parallel_batches, "num_parallel_batches") * _int(batch_size, "batch_size")

        def apply(dataset):
            return dataset.map(map_func, num_parallel_calls=num_parallel_calls).batch(
                batch_size, drop_remainder=drop_remainder)
        return apply

    # -- sources (sluice/_data_sources.py)
    CsvDataset = _data_sources.CsvDataset
    make_csv_dataset = staticmethod(_data_sources.make_csv_dataset)
    sample_from_datasets = staticmethod(_data_sources.sample_from_datasets)
    choose_from_datasets = staticmethod(_data_sources.choose_from_datasets)
    # -- frameworks: the queue bridge (sluice._data_frameworks)

    @staticmethod
    def from_queue(queue):
        """A Dataset dequeuing from a sluice queue until it is closed and empty (see sluice._data_frameworks)."""
        from sluice import _data_frameworks
        return _data_frameworks.from_queue(queue)


experimental = _Experimental()


# -- windows, scans, grouping: experimental names (sluice/_data_xforms.py)

from sluice import _data_xforms  # noqa: E402  (it imports this module)
from sluice import _data_global_shuffle  # noqa: E402  (it imports this module)

DatasetSpec = _data_xforms.DatasetSpec


def _transformation(method):
    """tf.data.experimental's form of a Dataset method: a function for ``dataset.apply``."""
    def make(*args, **kwargs):
        # Looked up when applied: the method as wrapped last (pickling records its recipe).
        return lambda dataset: getattr(DatasetV2, method.__name__)(dataset, *args, **kwargs)
    make.__name__ = method.__name__
    make.__doc__ = "``tf.data.experimental.%s``: for ``dataset.apply``; see ``Dataset.%s``." % (
        method.__name__, method.__name__)
    return staticmethod(make)


for _name in ("scan", "take_while", "unique", "ignore_errors", "group_by_window", "bucket_by_sequence_length"):
    setattr(_Experimental, _name, _transformation(getattr(DatasetV2, _name)))
del _name


# -- tf.data API completions: reduce, get_single_element, counter, random, get_next_as_optional
# (Optional), assert_cardinality, and the names sluice does not implement (ragged_batch, save, load,
# snapshot: NotImplementedError saying what to write instead): _data_tfapi.py

from sluice import _data_tfapi  # noqa: E402  (it imports this module)

_data_tfapi.install(DatasetV2, Iterator, _Experimental)


# -- options, statistics and AUTOTUNE (tf.data.Options: _data_options.py)

from sluice import _data_options  # noqa: E402
from sluice._data_options import Options, ThreadingOptions  # noqa: E402,F401

__all__ += ["Options", "ThreadingOptions"]

for _name in ("AutotuneOptions", "AutotuneAlgorithm", "AutoShardPolicy", "DistributeOptions", "ExternalStatePolicy",
              "OptimizationOptions", "ServiceOptions", "ThreadingOptions"):
    setattr(_Experimental, _name, getattr(_data_options, _name))


def _with_options(self, options, name=None):
    """A dataset with `options` (``tf.data.Options``) merged over its own (TF's rules: the later set value wins).

    The engine reads ``deterministic`` (for ops whose own argument is
    unset) and ``autotune.enabled / cpu_budget / ram_budget``; the rest are
    accepted and reported by ``options()``.
    """
    if not isinstance(options, Options):
        raise TypeError("options must be a tf.data.Options, got %r" % (options,))
    out = Dataset(_data_policy.with_budget_options(_d.with_options(self._core, **options._to_core()), options),
                  self._structure)
    merged = _data_options.merge_options(self.options(), options)
    merged._set_mutable(False)
    out._options_attr = merged
    return out


def _options(self):
    """The options of this dataset and its inputs (immutable: mutating them raises ValueError)."""
    o = self.__dict__.get("_options_attr")
    if o is None:
        o = Options()
        o._set_mutable(False)
    return o


def _input_datasets(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, DatasetV2):
            yield a
        elif isinstance(a, (tuple, list)):
            yield from (x for x in a if isinstance(x, DatasetV2))
        elif isinstance(a, dict):
            yield from (x for x in a.values() if isinstance(x, DatasetV2))


def _propagating(fn):
    """`fn`, whose new dataset gets the merged options of the datasets it was made from (TF's rule)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        out = fn(*args, **kwargs)
        if isinstance(out, DatasetV2) and "_options_attr" not in out.__dict__:
            found = [d.__dict__.get("_options_attr") for d in _input_datasets(args, kwargs) if d is not out]
            found = [o for o in found if o is not None]
            if found:
                merged = _data_options.merge_options(*found)
                merged._set_mutable(False)
                out._options_attr = merged
        return out
    return wrapper


def _propagate_options(cls):
    for attr, value in list(vars(cls).items()):
        if attr.startswith("_") or attr in ("with_options", "options"):
            continue
        if isinstance(value, staticmethod):
            setattr(cls, attr, staticmethod(_propagating(value.__func__)))
        elif callable(value) and not isinstance(value, type):
            setattr(cls, attr, _propagating(value))


DatasetV2.with_options = _with_options
DatasetV2.options = _options
_propagate_options(DatasetV2)


def _iterator_stats(self):
    """Per-stage statistics of this pass, one dict per stage, sources first and "Root" (the consumer) last.

    Keys: name, elements, bytes, busy_ns (the stage's own work, all threads;
    Root: the consumer's time between calls), cpu_ns (parallel stages),
    wait_ns (waiting for the input), buffer_size, buffer_fill, parallelism,
    autotune, and busy_ns_per_element. AUTOTUNE reads the same counters.
    """
    stats = _d.iterator_stats(self._it)
    for s in stats:
        s["busy_ns_per_element"] = s["busy_ns"] / s["elements"] if s["elements"] else 0.0
    return _data_policy.IteratorStats(stats, self)


Iterator.stats = _iterator_stats


# -- checkpoints (iterator.save / restore; sluice.train.Checkpoint: _data_checkpoint.py)

from sluice import _data_checkpoint  # noqa: E402

Iterator.save = _data_checkpoint.iterator_save
Iterator.restore = _data_checkpoint.iterator_restore
# -- pickling: a dataset crosses process boundaries as its recipe (_data_pickle.py)

from sluice import _data_pickle  # noqa: E402


def _copy_dataset(self, memo=None):
    """A dataset is immutable: a copy shares its engine dataset (no rebuild, unlike pickling)."""
    out = DatasetV2.__new__(type(self))
    out.__dict__.update(self.__dict__)
    return out


DatasetV2.__reduce__ = _data_pickle.reduce_dataset
DatasetV2.__copy__ = _copy_dataset
DatasetV2.__deepcopy__ = _copy_dataset
Iterator.__reduce__ = _data_pickle.reduce_iterator
_data_pickle.record_recipes(DatasetV2, (TFRecordDataset, TextLineDataset, FixedLengthRecordDataset), _Experimental)
_data_pickle.record_native_fns(_Ops, _NativeFn)

# -- memory budget and error policies (_data_policy.py)

from sluice import _data_policy  # noqa: E402
from sluice._data_policy import ErrorPolicy  # noqa: E402,F401

Iterator.memory_stats = _data_policy.memory_stats
Iterator.error_report = _data_policy.error_report
