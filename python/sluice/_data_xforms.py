"""sluice.data's window, scan, take_while, unique, ignore_errors, rebatch,
group_by_window and bucket_by_sequence_length (the DatasetV2 methods of the
``# -- windows, scans, grouping`` block of data.py call these).

A window dataset's elements are nested datasets, as in tf.data: its structure
is a :class:`_WindowStructure` of the input's, iterating it (or flat_map /
interleave over it) opens each window's component datasets in C++ without
copying the tensors. Other transformations of a window dataset's elements
(map, filter, batch) are not implemented.
"""

import builtins

import numpy as np

from sluice import _core
from sluice import dtypes as _dtypes
from sluice import errors
from sluice import data as _data
from sluice import _data_probe
from sluice.queue import _to_component

_d = _core.data


class _WindowStructure:
    """The structure of a window dataset: each component of `inner` is a dataset."""

    __slots__ = ("inner",)

    def __init__(self, inner):
        self.inner = inner

    def __iter__(self):
        raise NotImplementedError("sluice.data: the elements of a window dataset are datasets; only iteration, "
                                  "flat_map and interleave of them are implemented")

    def __repr__(self):
        return "Window(%r)" % (self.inner,)


class DatasetSpec:
    """The type of a nested dataset (``tf.data.DatasetSpec``): its element_spec."""

    __slots__ = ("_element_spec",)

    def __init__(self, element_spec):
        self._element_spec = element_spec

    element_spec = property(lambda self: self._element_spec)

    def __eq__(self, other):
        return isinstance(other, DatasetSpec) and self._element_spec == other._element_spec

    def __hash__(self):
        return hash(repr(self._element_spec))

    def __repr__(self):
        return "DatasetSpec(%r, TensorShape([]))" % (self._element_spec,)


def is_window(structure):
    return isinstance(structure, _WindowStructure)


def _call(fn, structure, args):
    """fn called with a packed element: a tuple as positional arguments (tf.data's convention)."""
    return fn(*args) if type(structure) is tuple else fn(args)


# -- window

def window(ds, size, shift, stride, drop_remainder):
    _data._reject_sparse(ds._structure, "window")
    core = _d.window(ds._core, _data._int(size, "size"), _data._opt_int(shift, "shift"),
                     _data._int(stride, "stride"), bool(drop_remainder))
    return _data.Dataset(core, _WindowStructure(ds._structure))


def window_element_spec(ds):
    inner = ds._structure.inner
    dtype_enums, shapes, _ = ds._core.element_spec()
    return _data._map_structure(
        lambda s, e, sh: DatasetSpec(_data.TensorSpec(sh[0], _dtypes.as_dtype(e[0]) if e[0] else _dtypes.float32)),
        inner, dtype_enums, shapes)


def _window_packer(inner):
    """Dataset handles of one window -> the nested datasets (the input's structure)."""
    pack = _data._packer(inner)
    return lambda handles: pack([_data.Dataset(h, _data._LEAF) for h in handles])


def window_reader(dataset):
    """(read(core iterator), pack) for an Iterator over a window dataset."""
    core = dataset._core
    return (lambda it: _d.next_window(it, core)), _window_packer(dataset._structure.inner)


def interleave_windows(ds, map_func, cycle, block, npc, det):
    """interleave / flat_map over a window dataset: map_func gets each window's nested datasets."""
    inner = ds._structure.inner
    pack = _window_packer(inner)

    def open_dataset(handles):
        out = _call(map_func, inner, pack(handles))
        if not isinstance(out, _data.DatasetV2):
            raise TypeError("The `map_func` argument must return a `Dataset` object. Got %s." % type(out).__name__)
        return out._core

    it = ds._core.make_probe_iterator()
    try:
        first = _d.next_window(it, ds._core)
    finally:
        it.close()
    if first is None:
        out_structure, enums, shapes = _data._LEAF, [0], [None]
    else:
        probe = _call(map_func, inner, pack(first))
        if not isinstance(probe, _data.DatasetV2):
            raise TypeError("The `map_func` argument must return a `Dataset` object. Got %s." % type(probe).__name__)
        out_structure = probe._structure
        enums, shapes, _ = probe._core.element_spec()
        shapes = _data_probe.relaxed_shapes(shapes)  # the datasets of other windows may differ
    core = _d.interleave_window_py(ds._core, open_dataset, enums, shapes, cycle, block, npc, det)
    return _data.Dataset(core, out_structure)


# -- scan

def _typed_flat(structure, value):
    """(values, dtypes) of `value`'s leaves, dtypes inferred as tf.convert_to_tensor does."""
    pairs = [_data._typed(v) for v in _data._flatten(structure, value)]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _pair(result):
    if isinstance(result, list):
        result = tuple(result)
    if not isinstance(result, tuple) or len(result) != 2:
        raise TypeError("Invalid `scan_func`. `scan_func` should return a pair consisting of new state and the "
                        "output value but its return type is %s." % type(result).__name__)
    return result


def _as_structure(structure, value):
    """`value` with lists as tuples where `structure` has tuples."""
    if isinstance(value, list) and isinstance(structure, tuple):
        return tuple(value)
    return value


def scan(ds, initial_state, scan_func):
    state_structure = _data._structure_of(initial_state)
    state_values, state_dtypes = _typed_flat(state_structure, initial_state)
    state_enums = [dt.as_datatype_enum for dt in state_dtypes]
    in_structure = ds._structure
    pack_state = _data._packer(state_structure)
    pack_in = _data._packer(in_structure)

    first = _data._first_components(ds)
    if first is None:
        out_structure, out_enums, out_shapes = _data._LEAF, [0], [None]
    else:
        new_state, out = _pair(scan_func(pack_state(state_values), pack_in(first)))
        _, new_dtypes = _typed_flat(state_structure, _as_structure(state_structure, new_state))
        if new_dtypes != state_dtypes:
            raise TypeError("Invalid `scan_func`. The element types for the new state must match the initial "
                            "state. Expected %s, got %s." % (_names(state_dtypes), _names(new_dtypes)))
        out = _as_structure(_data._structure_of(out), out)
        out_structure = _data._structure_of(out)
        out_values, out_dtypes = _typed_flat(out_structure, out)
        out_enums = [dt.as_datatype_enum for dt in out_dtypes]
        out_shapes = _data_probe.relaxed_shapes([[] if isinstance(v, bytes) else list(np.shape(v))
                                                 for v in out_values])
    out_dtypes = [_dtypes.as_dtype(e) for e in out_enums]

    def step(state_components, components):
        new_state, out = _pair(scan_func(pack_state(state_components), pack_in(components)))
        flat_state = _data._flatten(state_structure, _as_structure(state_structure, new_state))
        flat_out = [out] if out_structure is _data._LEAF else _data._flatten(
            out_structure, _as_structure(out_structure, out))
        return (([_to_component(v, dt) for v, dt in zip(flat_state, state_dtypes)], state_enums),
                ([_to_component(v, dt) for v, dt in zip(flat_out, out_dtypes)], out_enums))

    core = _d.scan_py(ds._core, state_values, state_enums, step, out_enums, out_shapes)
    return _data.Dataset(core, out_structure)


def _names(dtypes):
    names = ["<dtype: %r>" % dt.name for dt in dtypes]
    return names[0] if len(names) == 1 else "(%s)" % ", ".join(names)


# -- take_while, unique, ignore_errors, rebatch

def _predicate_result(result):
    if isinstance(result, np.ndarray) and result.shape == () and result.dtype == np.bool_:
        result = result.item()
    if not isinstance(result, (builtins.bool, np.bool_)):
        raise ValueError("Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor but its return type "
                         "is %s." % getattr(result, "dtype", type(result).__name__))
    return builtins.bool(result)


def take_while(ds, predicate):
    structure = ds._structure
    pack = _data._packer(structure)
    first = _data._first_components(ds)
    if first is not None:
        _predicate_result(_call(predicate, structure, pack(first)))  # tf.data checks when tracing

    def keep(components):
        return _predicate_result(_call(predicate, structure, pack(components)))
    return _data.Dataset(_d.take_while_py(ds._core, keep), structure)


def unique(ds):
    enums = ds._core.element_spec()[0]
    if len(enums) == 1 and enums[0] and _dtypes.as_dtype(enums[0]) not in (_dtypes.int32, _dtypes.int64,
                                                                             _dtypes.string):
        raise TypeError("`tf.data.Dataset.unique` does not support type %r -- only `tf.int32`, `tf.int64`, and "
                        "`tf.string` are supported." % _dtypes.as_dtype(enums[0]))
    return _data.Dataset(_d.unique(ds._core), ds._structure)


def ignore_errors(ds, log_warning):
    return _data.Dataset(_d.ignore_errors(ds._core, bool(log_warning)), ds._structure)


def rebatch(ds, batch_size, drop_remainder):
    sizes = np.asarray(batch_size)
    if sizes.ndim > 1:
        raise ValueError("Invalid `batch_sizes`. Expected `batch_sizes` to be a scalar or a vector. Received "
                         "`batch_sizes` of rank %d." % sizes.ndim)
    _data._reject_sparse(ds._structure, "rebatch")
    for shape in ds._core.element_spec()[1]:
        if shape is not None and len(shape) == 0:
            raise ValueError("Invalid `batch_sizes`. Expected dataset with rank of >= 1 but found a dataset with "
                             "scalar elements. Fix the issue by adding the `batch` transformation to the dataset.")
    sizes = [_data._int(s, "batch_size") for s in sizes.reshape(-1)]
    return _data.Dataset(_d.rebatch(ds._core, sizes, bool(drop_remainder)), ds._structure)


# -- group_by_window, bucket_by_sequence_length

def _int64_scalar(value, what):
    """`value` as an int if it is an int64 scalar (or a Python int); ValueError (TF's) otherwise."""
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    if isinstance(value, (int, np.int64)) and not isinstance(value, builtins.bool):
        return int(value)
    spec = getattr(value, "dtype", type(value).__name__)
    raise ValueError("Invalid `%s`. `%s` must return a single `tf.int64` scalar tensor but its return type is %s."
                     % (what, what, spec))


def group_by_window(ds, key_func, reduce_func, window_size, window_size_func):
    if (window_size is not None and window_size_func) or not (window_size is not None or window_size_func):
        raise ValueError("Either the `window_size` argument or the `window_size_func` argument must be specified.")
    if window_size is not None:
        size = _data._int(window_size, "window_size")
        window_size_func = lambda key: np.int64(size)  # noqa: E731
    in_structure = ds._structure
    pack = _data._packer(in_structure)

    def key_of(components):
        return _int64_scalar(_call(key_func, in_structure, pack(components)), "key_func")

    def size_of(key):
        return _int64_scalar(window_size_func(np.int64(key)), "window_size_func")

    def reduce(key, handle):
        out = reduce_func(np.int64(key), _data.Dataset(handle, in_structure))
        if not isinstance(out, _data.DatasetV2):
            raise TypeError("Invalid `reduce_func`. `reduce_func` must return a single `tf.data.Dataset` object but "
                            "its return type is %s." % type(out).__name__)
        return out._core

    first = _data._first_components(ds)
    if first is None:
        out_structure = in_structure
        enums, shapes = ds._core.element_spec()[0], [None] * len(ds._core.element_spec()[0])
    else:  # tf.data traces the functions once: here, on a window of the first element
        key = key_of(first)
        size_of(key)
        probe = reduce_func(np.int64(key), ds.take(1))
        if not isinstance(probe, _data.DatasetV2):
            raise TypeError("Invalid `reduce_func`. `reduce_func` must return a single `tf.data.Dataset` object but "
                            "its return type is %s." % type(probe).__name__)
        out_structure = probe._structure
        enums, shapes, _ = probe._core.element_spec()
    core = _d.group_by_window_py(ds._core, key_of, reduce, size_of, enums, shapes)
    return _data.Dataset(core, out_structure)


def bucket_by_sequence_length(ds, element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes,
                              padding_values, pad_to_bucket_boundary, no_padding, drop_remainder):
    if len(bucket_batch_sizes) != len(bucket_boundaries) + 1:
        raise ValueError("`len(bucket_batch_sizes)` must equal `len(bucket_boundaries) + 1` but "
                         "`len(bucket_batch_sizes)=%d` and `len(bucket_boundaries)=%d`."
                         % (len(bucket_batch_sizes), len(bucket_boundaries)))
    boundaries = [_data._int(b, "bucket_boundaries") for b in bucket_boundaries]
    batch_sizes = [_data._int(b, "bucket_batch_sizes") for b in bucket_batch_sizes]
    buckets_min = [np.iinfo(np.int32).min] + boundaries
    buckets_max = boundaries + [np.iinfo(np.int32).max]
    structure = ds._structure

    def bucket_id(*args):
        length = int(element_length_func(*args))
        for i, (lo, hi) in enumerate(zip(buckets_min, buckets_max)):
            if lo <= length < hi:  # the first bucket that fits (TF: reduce_min of the matches)
                return np.int64(i)
        raise errors.InvalidArgumentError(None, None, "element length %d fits no bucket" % length)

    def batching_fn(bucket, grouped):
        batch_size = batch_sizes[int(bucket)]
        if no_padding:
            return grouped.batch(batch_size, drop_remainder=drop_remainder)
        filler = None
        if pad_to_bucket_boundary:
            if bucket >= len(batch_sizes) - 1:
                raise errors.InvalidArgumentError(
                    None, None, "When pad_to_bucket_boundary=True, elements must have length < "
                    "max(bucket_boundaries).")
            filler = boundaries[int(bucket)] - 1
        shapes = padded_shapes
        if shapes is None:
            specs = _data._flatten(structure, grouped.element_spec)
            flat = [[filler if d is None else d for d in spec.shape] for spec in specs]
            shapes = _data._pack_from(structure, iter(flat))
        elif filler is not None:
            flat = _data._flatten(structure, _data._broadcast(structure, shapes, is_shape=True))
            shapes = _data._pack_from(structure, iter([[filler if d is None else d for d in s] for s in flat]))
        return grouped.padded_batch(batch_size, shapes, padding_values, drop_remainder=drop_remainder)

    return group_by_window(ds, bucket_id, batching_fn, None, lambda b: np.int64(batch_sizes[int(b)]))
