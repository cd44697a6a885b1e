"""tf.data API a tf.data user reaches for, with TF's names, arguments and errors:
``Dataset.reduce``, ``get_single_element``, ``counter``, ``random``, ``Iterator.get_next_as_optional``
(``Optional``), ``experimental.assert_cardinality``; and the names sluice does not implement
(``ragged_batch``, ``save``, ``load``, ``snapshot``), which raise NotImplementedError saying what to
write instead.

* ``Dataset.random`` gives int64 scalars in [0, 2^32), as TF's, but not TF's values for a seed: the
  same seed gives the same sequence in every run of sluice (with ``sluice.random.set_seed`` too).
* ``reduce`` runs `reduce_func` (Python) once per element under the GIL; the state keeps the
  structure and dtypes of `initial_state` (a change is TypeError, as TF's retracing check).
"""

import numpy as np

from sluice import _core
from sluice import _data_pickle
from sluice import dtypes as _dtypes
from sluice import errors
from sluice import data as _data

_d = _core.data


# ---- Optional ----------------------------------------------------------------------------

class Optional:
    """A value that may be missing (``tf.experimental.Optional``): ``has_value()``, ``get_value()``."""

    def __init__(self, value, element_spec, has_value):
        # Internal: use from_value / empty, or Iterator.get_next_as_optional.
        self._value = value
        self._element_spec = element_spec
        self._has_value = has_value

    @staticmethod
    def from_value(value):
        """An Optional holding `value` (its element_spec that of the value as a dataset element)."""
        return Optional(value, _data.Dataset.from_tensors(value).element_spec, True)

    @staticmethod
    def empty(element_spec):
        """An Optional with no value, of `element_spec`."""
        return Optional(None, element_spec, False)

    def has_value(self, name=None):
        return self._has_value

    def get_value(self, name=None):
        """The value; InvalidArgumentError if there is none (TF's OptionalGetValue)."""
        if not self._has_value:
            raise errors.InvalidArgumentError(None, None, "The given optional does not have a value.")
        return self._value

    @property
    def element_spec(self):
        return self._element_spec

    def __repr__(self):
        return "<sluice.data.experimental.Optional has_value=%s>" % self._has_value


def get_next_as_optional(self):
    """The next element as an :class:`Optional`, empty at the end of the sequence (errors still raise)."""
    flat = self._read(self._it)
    if flat is None:
        return Optional.empty(self.element_spec)
    return Optional(self._pack(flat), self.element_spec, True)


# ---- reduce, get_single_element ---------------------------------------------------------

def _state_component(value, dtype):
    """A state component as the functions see it (numpy; bytes for a string scalar)."""
    c = _data._to_component(value, dtype)
    return c if isinstance(c, bytes) or dtype == _dtypes.string else np.asarray(c)


def _as_state(value, structure, dtypes):
    """`value` checked against (structure, dtypes) and converted; TF's errors for a mismatch."""
    if isinstance(value, list):
        value = tuple(value)
    new_structure = _data._structure_of(value)
    if _data._count(new_structure) != _data._count(structure):
        raise errors.InvalidArgumentError(
            None, None, "The number of components of the initial state and the reduce function output does not "
            "match. (initial_state=%d, output=%d)." % (_data._count(structure), _data._count(new_structure)))
    leaves = _data._flatten(structure, value)
    new_dtypes = [_data._infer_dtype(v) for v in leaves]
    if new_dtypes != dtypes:
        raise TypeError("The element types for the new state must match the initial state. Expected %s; got %s." % (
            _names(dtypes), _names(new_dtypes)))
    return [_state_component(v, dt) for v, dt in zip(leaves, dtypes)]


def _names(dtypes):
    return "(%s)" % ", ".join("tf.%s" % dt.name for dt in dtypes) + ("," if len(dtypes) == 1 else "")


def reduce(self, initial_state, reduce_func, name=None):
    """``reduce_func(state, element)`` over the elements, from `initial_state`: the final state (numpy values).

    `reduce_func` (Python) gets the element whole (a tuple element as one argument, as TF) and
    returns the new state, of the structure and dtypes of `initial_state`.
    """
    if isinstance(initial_state, list):
        initial_state = tuple(initial_state)
    structure = _data._structure_of(initial_state)
    leaves = _data._flatten(structure, initial_state)
    dtypes = [_data._infer_dtype(v) for v in leaves]
    pack = _data._packer(structure)
    state = pack([_state_component(v, dt) for v, dt in zip(leaves, dtypes)])
    for element in self:
        state = pack(_as_state(reduce_func(state, element), structure, dtypes))
    return state


def get_single_element(self, name=None):
    """The dataset's only element; InvalidArgumentError if it has none or more than one (TF's messages)."""
    it = iter(self)
    try:
        first = it.get_next_as_optional()
        if not first.has_value():
            raise errors.InvalidArgumentError(None, None, "Dataset was empty.")
        if it.get_next_as_optional().has_value():
            raise errors.InvalidArgumentError(None, None, "Dataset had more than one element.")
        return first.get_value()
    finally:
        it.close()


# ---- sources: counter, random -------------------------------------------------------------

def counter(start=0, step=1, dtype=_dtypes.int64, name=None):
    """start, start + step, ... for ever (``tf.data.Dataset.counter``): scalars of `dtype`; INFINITE_CARDINALITY."""
    dt = _dtypes.as_dtype(dtype)
    core = _d.counter(_data._int(start, "start"), _data._int(step, "step"), dt.as_datatype_enum)
    return _data.Dataset(core, _data._LEAF)


def random(seed=None, rerandomize_each_iteration=None, name=None):
    """Random int64 scalars in [0, 2^32) for ever (``tf.data.Dataset.random``; not TF's values for a seed).

    A seed (or ``sluice.random.set_seed``) gives the same sequence in every run; each pass (epoch)
    repeats it unless `rerandomize_each_iteration`. Checkpoints save the position.
    """
    seed, seed2 = _data_pickle.engine_seeds(_data._opt_int(seed, "seed"))
    core = _d.random(seed % 2**64, seed2 % 2**64, bool(rerandomize_each_iteration))
    return _data.Dataset(core, _data._LEAF)


def assert_cardinality(expected_cardinality):
    """``tf.data.experimental.assert_cardinality``: for ``dataset.apply``; the dataset with that cardinality,
    whose iteration raises FailedPreconditionError (TF's message) when the count differs."""
    expected = _data._int(expected_cardinality, "expected_cardinality")

    def apply(dataset):
        return _data.Dataset(_d.assert_cardinality(dataset._core, expected), dataset._structure)
    return apply


# ---- names sluice does not implement ------------------------------------------------------

_RAGGED = ("sluice.data has no ragged tensors in datasets, so Dataset.ragged_batch is not available: pad the "
           "elements instead with padded_batch(batch_size, padded_shapes=...), or map each element to a fixed "
           "shape (pad or crop) and batch(batch_size).")
_SAVE_FORMAT = ("sluice.data does not read or write TensorFlow's Dataset.save format (%s). Use cache(filename) to "
                "keep a pipeline's elements in a file between passes, or write the elements as TFRecords with "
                "sluice.python_io.TFRecordWriter (sluice.io.TFRecordWriter) and read them with TFRecordDataset.")


def ragged_batch(self, batch_size, drop_remainder=False, row_splits_dtype=_dtypes.int64, name=None):
    raise NotImplementedError(_RAGGED)


def save(self, path, compression=None, shard_func=None, checkpoint_args=None):
    raise NotImplementedError(_SAVE_FORMAT % "Dataset.save")


def load(path, element_spec=None, compression=None, reader_func=None, wait=False):
    raise NotImplementedError(_SAVE_FORMAT % "Dataset.load")


def snapshot(self, path, compression="AUTO", reader_func=None, shard_func=None, name=None):
    raise NotImplementedError(_SAVE_FORMAT % "Dataset.snapshot")


def experimental_snapshot(path, compression="AUTO", reader_func=None, shard_func=None):
    raise NotImplementedError(_SAVE_FORMAT % "tf.data.experimental.snapshot")


def install(dataset_cls, iterator_cls, experimental_cls):
    """Adds these names to sluice.data's Dataset, Iterator and experimental namespace."""
    for fn in (reduce, get_single_element, ragged_batch, save, snapshot):
        setattr(dataset_cls, fn.__name__, fn)
    for fn in (counter, random, load):
        setattr(dataset_cls, fn.__name__, staticmethod(fn))
    iterator_cls.get_next_as_optional = get_next_as_optional
    experimental_cls.Optional = Optional
    experimental_cls.get_single_element = staticmethod(lambda dataset: dataset.get_single_element())
    experimental_cls.Counter = staticmethod(counter)
    experimental_cls.RandomDataset = staticmethod(lambda seed=None, name=None: random(seed))
    experimental_cls.assert_cardinality = staticmethod(assert_cardinality)
    experimental_cls.save = staticmethod(lambda dataset, path, *args, **kwargs: dataset.save(path))
    experimental_cls.load = staticmethod(load)
    experimental_cls.snapshot = staticmethod(experimental_snapshot)
