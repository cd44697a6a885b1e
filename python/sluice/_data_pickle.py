"""Pickling sluice.data datasets: rebuilt from their recipe in the other process.

A dataset holds C++ objects that cannot cross a process boundary, so each
dataset made by a public constructor or transformation keeps its recipe
(the function, the input datasets and the arguments) and pickles as that
recipe; unpickling calls the function again. Pickling is what
``multiprocessing`` and torch DataLoader workers under the ``spawn`` or
``forkserver`` start method do with a dataset.

The recipe of the outermost public call wins (``flat_map`` made by
``interleave`` pickles as ``flat_map``), except ``apply``, which pickles as
the calls its function made. A recipe whose arguments cannot be pickled (a
lambda, a nested function, a queue) raises ``pickle.PicklingError`` naming
the stage and the argument. Iterators are never picklable.

Seeds drawn at construction travel with the recipe: a transformation given no
seed (``shuffle``, ``list_files``, ``sample_from_datasets``,
``shuffle_globally``, the random ``sluice.data.ops``) draws one through
``draw_seed`` when it is made, each public call records the seeds drawn
while it ran, and the rebuild hands the same seeds out again in the same
order. Every unpickled copy (each DataLoader worker's) then makes the same
orders as the original, so the workers' shards partition one permutation.
"""

import contextlib
import functools
import inspect
import pickle
import random
import threading

import numpy as np

_SIMPLE = (type(None), bool, int, float, complex, str, bytes, np.ndarray, np.generic)

_ADVICE = ("A pickled sluice.data dataset is rebuilt from its recipe in the other process, so the functions "
           "it was made with must be module-level functions (not lambdas, nested functions or bound methods "
           "of unpicklable objects) and its arguments picklable. Otherwise build the dataset in each process "
           "(torch: in the IterableDataset's __iter__ or the DataLoader's worker_init_fn).")


def _data():
    from sluice import data
    return data


def _rebuild(owner, name, args, kwargs):
    """Unpickling: the call that made the dataset (or native map function), made again."""
    fn = owner if name is None else getattr(owner, name)
    return fn(*args, **kwargs)


def _rebuild_with_seeds(owner, name, args, kwargs, seeds):
    """Unpickling: ``_rebuild``, its seed draws answered with the seeds the original drew."""
    stack = _replays()
    stack.append(list(seeds))
    try:
        return _rebuild(owner, name, args, kwargs)
    finally:
        stack.pop()


# ---- seeds drawn at construction ------------------------------------------------------
# Per thread: the seeds each public call now running has drawn (innermost last), and
# the seeds a rebuild hands out again (innermost last).
_local = threading.local()


def _tapes():
    if not hasattr(_local, "tapes"):
        _local.tapes = []
    return _local.tapes


def _replays():
    if not hasattr(_local, "replays"):
        _local.replays = []
    return _local.replays


def _fresh_seed():
    """A random nonzero 63-bit seed from the OS."""
    return random.SystemRandom().getrandbits(63) or 1


def draw_seed(fresh=_fresh_seed):
    """A seed for a dataset being made without one: ``fresh()``, or while a pickled dataset is
    rebuilt, the value its original drew at this point. Recorded by the public call running."""
    replays = _replays()
    value = replays[-1].pop(0) if replays and replays[-1] else fresh()
    tapes = _tapes()
    if tapes:
        tapes[-1].append(value)
    return value


def engine_seeds(op_seed):
    """The (seed, seed2) pair of a dataset op given `op_seed`: TF's derivation when set, else a pair
    drawn now (``draw_seed``) rather than left (0, 0) for the engine to draw, so a pickled copy
    keeps it."""
    data = _data()
    if op_seed is not None:
        return data._get_seed(op_seed)

    def fresh():
        pair = data._get_seed(None)  # a global (or graph) seed gives TF's derived pair
        return pair if pair != (0, 0) else (_fresh_seed(), _fresh_seed())
    return draw_seed(fresh)


@contextlib.contextmanager
def _taping():
    """Records the seeds drawn inside (nested calls' included) in the list it yields."""
    tapes = _tapes()
    drawn = []
    tapes.append(drawn)
    try:
        yield drawn
    finally:
        tapes.pop()
        if tapes:
            tapes[-1].extend(drawn)


def _inputs(args, kwargs):
    data = _data()
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, data.DatasetV2):
            yield a
        elif isinstance(a, (tuple, list)):
            yield from (x for x in a if isinstance(x, data.DatasetV2))
        elif isinstance(a, dict):
            yield from (x for x in a.values() if isinstance(x, data.DatasetV2))


def _recording(owner, name, fn):
    """`fn`, whose dataset result keeps (owner, name, args, kwargs) as its recipe."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with _taping() as drawn:
            out = fn(*args, **kwargs)
        # An input returned as is keeps its own recipe (one naming itself would never end).
        if isinstance(out, _data().DatasetV2) and not any(out is d for d in _inputs(args, kwargs)):
            out.__dict__["_recipe"] = (owner, name, args, kwargs)
            out.__dict__["_drawn_seeds"] = tuple(drawn)
        return out
    return wrapper


def _recording_init(cls):
    init = cls.__init__

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        with _taping() as drawn:
            init(self, *args, **kwargs)
        if type(self) is cls:  # a subclass's own arguments are not known here
            self.__dict__["_recipe"] = (cls, None, args, kwargs)
            self.__dict__["_drawn_seeds"] = tuple(drawn)
    cls.__init__ = __init__


def record_recipes(dataset_cls, subclasses, experimental_cls):
    """Makes every public dataset-making function of sluice.data keep its recipe."""
    for cls, skip in ((dataset_cls, ("apply", "options")), (experimental_cls, ())):
        for attr, value in list(vars(cls).items()):
            if attr.startswith("_") or attr in skip or isinstance(value, (type, property)):
                continue
            if isinstance(value, staticmethod):
                setattr(cls, attr, staticmethod(_recording(cls, attr, value.__func__)))
            elif callable(value):
                setattr(cls, attr, _recording(cls, attr, value))
    for cls in subclasses:
        _recording_init(cls)


def record_native_fns(ops_cls, native_cls):
    """Makes sluice.data.ops' functions keep their recipe, and pickle by it."""
    for attr, value in list(vars(ops_cls).items()):
        if isinstance(value, staticmethod) and not attr.startswith("_"):
            setattr(ops_cls, attr, staticmethod(_recording_native(ops_cls, attr, value.__func__)))
    native_cls.__reduce__ = _reduce_native


def _recording_native(owner, name, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with _taping() as drawn:
            out = fn(*args, **kwargs)
        out._recipe = (owner, name, args, kwargs)
        out._drawn_seeds = tuple(drawn)
        return out
    return wrapper


def _reduction(obj, recipe):
    """(callable, arguments) rebuilding `obj` from `recipe` with the seeds it drew."""
    seeds = obj.__dict__.get("_drawn_seeds")
    if seeds:
        return _rebuild_with_seeds, tuple(recipe) + (seeds,)
    return _rebuild, recipe


def _reduce_native(self):
    recipe = self.__dict__.get("_recipe")
    if recipe is None:
        raise pickle.PicklingError("sluice.data: the native map function %r was not made by sluice.data.ops and "
                                   "cannot be pickled. %s" % (self, _ADVICE))
    _check_arguments("sluice.data.ops." + recipe[1], recipe)
    return _reduction(self, recipe)


def reduce_dataset(self):
    """``Dataset.__reduce__``: the dataset's recipe, or PicklingError naming the stage that has none."""
    recipe = self.__dict__.get("_recipe")
    stage = self._core.debug_name()
    if recipe is None:
        raise pickle.PicklingError(
            "sluice.data: the %s stage of this dataset cannot be pickled: it was not made by a public sluice.data "
            "constructor or transformation, so there is no recipe to rebuild it from. %s" % (stage, _ADVICE))
    owner, name, _, _ = recipe
    _check_arguments("%s (the %s stage)" % (_call_name(owner, name), stage), recipe)
    return _reduction(self, recipe)


def _call_name(owner, name):
    data = _data()
    if owner is data.DatasetV2:
        return "Dataset.%s" % name
    if owner is data._Experimental:
        return "sluice.data.experimental.%s" % name
    return owner.__name__ if name is None else "%s.%s" % (owner.__name__, name)


def _check_arguments(what, recipe):
    """Raises PicklingError naming `what` and the argument that cannot be pickled (datasets check themselves)."""
    owner, name, args, kwargs = recipe
    fn = owner if name is None else getattr(owner, name)
    try:
        named = inspect.signature(fn).bind(*args, **kwargs).arguments
    except (TypeError, ValueError):
        named = dict({"argument %d" % i: a for i, a in enumerate(args)}, **kwargs)
    for arg, value in named.items():
        for leaf in _leaves(value):
            try:
                pickle.dumps(leaf)
            except Exception as e:  # noqa: BLE001 - whatever pickle raised, said in the message
                raise pickle.PicklingError("sluice.data: cannot pickle the dataset made by %s: its argument %s=%r "
                                           "cannot be pickled (%s: %s). %s"
                                           % (what, arg, leaf, type(e).__name__, e, _ADVICE)) from e


def _leaves(value):
    """The values in `value` that pickle could fail on: not datasets (they check themselves), not arrays."""
    if isinstance(value, _SIMPLE) or isinstance(value, _data().DatasetV2):
        return
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    else:
        yield value


def reduce_iterator(self):
    raise TypeError("sluice.data iterators cannot be pickled: pickle the dataset and make a new iterator in the "
                    "other process (an iterator's position is saved with iterator.save()).")
