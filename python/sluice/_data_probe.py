"""How sluice.data learns what a Python function returns (data.py's ``_probe``).

tf.data traces a function on symbolic tensors and consumes nothing; sluice
calls it once on a real element, read by a probe pass (the C++
``IteratorContext::probe``). The probe must cost the real passes nothing:

* Cheap: in a probe, shuffle, prefetch, cache, repeat, take and shard hand
  their input's elements straight through, parallel map and interleave run
  on the caller's thread, so a probe reads about one element per stage
  (filter and skip still apply: the function may rely on them).
* Nothing lost: sources that consume something shared are told the pass is
  a probe. ``experimental.from_queue`` yields zeros; ``from_generator`` keeps
  what a probe pulled from an iterator object its callable may hand out again
  (:class:`GeneratorReplay`) and gives it back first to the next pass that
  gets that object.
* Shapes: one call cannot tell which dimensions are static, so the spec of a
  Python function's output keeps the dtypes and ranks it saw, with every
  dimension unknown (None), except where the shape provably follows from the
  input's static shape (:class:`ShapeTraced`: the input itself, astype, and
  numpy ufuncs, i.e. elementwise arithmetic, of such arrays and Python
  numbers). ``map(..., output_signature=...)`` states it instead (and skips
  the probe).
"""

import collections
import weakref

import numpy as np

# Entries for iterator objects that take no weak reference (list or itertools
# iterators) are held strongly; a callable that returns a fresh one each call
# would leave one entry per probe, so only the newest few are kept.
_MAX_STRONG_ENTRIES = 4


class GeneratorReplay:
    """The values probe passes pulled from the iterator objects of one from_generator dataset.

    A callable like ``lambda: it`` returns the same iterator object to every
    pass, so what a probe pulls from it the real pass would miss. The probe
    keeps those values under the object's identity; a later pass that gets
    the same object yields them first, in order, then reads on. Entries are
    held through a weak reference where the object takes one (a generator),
    so an object nobody else holds, which no later call can return, drops
    its entry with it. Called with the GIL held (make() and the steps).
    """

    def __init__(self):
        self._entries = {}  # id(iterator) -> _Entry
        self._strong = collections.deque()  # ids of strongly held entries, oldest first

    def step(self, iterator, probe):
        """next() of one pass over `iterator` (StopIteration at its end)."""
        if probe:
            entry = self._entry(iterator, create=True)
            position = [0]

            def next_probe():
                values = entry.values
                if position[0] < len(values):
                    value = values[position[0]]
                else:
                    value = next(iterator)
                    values.append(value)
                position[0] += 1
                return value
            return next_probe

        entries = self._entries

        def next_real():
            # Looked up per element: a probe may run while this pass reads the same object.
            if entries:
                entry = self._entry(iterator, create=False)
                if entry is not None and entry.values:
                    return entry.values.popleft()
            return next(iterator)
        return next_real

    def _entry(self, iterator, create):
        key = id(iterator)
        entry = self._entries.get(key)
        if entry is not None and entry.target() is iterator:
            return entry
        if not create:
            return None
        entry = _Entry()
        entries = self._entries
        try:
            entry.target = weakref.ref(iterator, lambda ref, key=key: _drop(entries, key, ref))
        except TypeError:
            entry.target = lambda iterator=iterator: iterator
            self._strong.append(key)
            if len(self._strong) > _MAX_STRONG_ENTRIES:
                entries.pop(self._strong.popleft(), None)
        entries[key] = entry
        return entry


def _drop(entries, key, ref):
    entry = entries.get(key)
    if entry is not None and entry.target is ref:
        del entries[key]


class _Entry:
    __slots__ = ("target", "values")

    def __init__(self):
        self.target = None
        self.values = collections.deque()


class ShapeTraced(np.ndarray):
    """An ndarray of the probe call that knows which of its dimensions are static.

    ``static`` is a tuple of bools (one per dimension) or None (nothing
    known). Only operations whose result shape depends on their inputs'
    shapes alone set it: ufuncs called elementwise (the broadcast of their
    inputs: a dimension is static where every input covering it has it
    static; a Python number has no dimensions, any other array none known)
    and astype. Everything else (indexing, reshape, np.arange(x), functions
    that take plain arrays) makes arrays with nothing known, so the spec
    errs towards None, never towards a size other elements do not have.
    """

    def __array_finalize__(self, obj):
        self.static = None

    def astype(self, *args, **kwargs):
        out = np.ndarray.astype(self.view(np.ndarray), *args, **kwargs)
        return _traced(out, self.static)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain = [x.view(np.ndarray) if isinstance(x, ShapeTraced) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(o.view(np.ndarray) if isinstance(o, ShapeTraced) else o for o in kwargs["out"])
        result = getattr(ufunc, method)(*plain, **kwargs)
        static = _broadcast_static(inputs) if method == "__call__" and "out" not in kwargs else None
        if isinstance(result, tuple):
            return tuple(_traced(r, static) for r in result)
        return _traced(result, static)


def _traced(value, static):
    if not isinstance(value, np.ndarray) or value.dtype.kind in "OSU":
        return value
    out = value.view(ShapeTraced)
    out.static = tuple(static) if static is not None and len(static) == out.ndim else None
    return out


def _broadcast_static(inputs):
    flags = []
    for x in inputs:
        if isinstance(x, (int, float, complex, np.generic)):  # bool is an int
            flags.append(())
        elif isinstance(x, ShapeTraced) and x.static is not None:
            flags.append(x.static)
        elif isinstance(x, np.ndarray):
            flags.append((False,) * x.ndim)
        else:
            return None
    rank = max((len(f) for f in flags), default=0)
    return tuple(all(f[len(f) - rank + i] for f in flags if len(f) - rank + i >= 0) for i in range(rank))


def traced_components(components, shapes):
    """The probe element's components, numeric arrays as ShapeTraced with their spec's static dimensions."""
    out = []
    for c, shape in zip(components, shapes):
        if isinstance(c, np.ndarray) and c.ndim > 0 and shape is not None and len(shape) == c.ndim:
            c = _traced(c, [d is not None and d >= 0 for d in shape])
        out.append(c)
    return out


def traced_shape(value, observed):
    """The spec shape (-1: unknown) of an output component whose shape in the probe was `observed`."""
    static = value.static if isinstance(value, ShapeTraced) else None
    if static is None or len(static) != len(observed):
        return [-1] * len(observed)
    return [d if s else -1 for d, s in zip(observed, static)]


def relaxed_shapes(shapes):
    """`shapes` (lists of ints, None: unknown rank) with every dimension unknown (-1): one call
    fixes only the rank."""
    return [None if s is None else [-1] * len(s) for s in shapes]


def zeros_like_probe(values):
    """Zeros (empty strings) of the probe call's output components: error_policy='replace''s
    substitute for a spec whose dimensions are unknown."""
    out = []
    for v in values:
        if isinstance(v, bytes):
            out.append(b"")
        else:
            a = np.asarray(v)
            out.append(np.zeros(a.shape, a.dtype) if a.dtype.kind not in "SUO" else np.full(a.shape, b"", object))
    return out
