"""The native element ops of ``sluice.data.ops`` (C++: sluice/data/native_ops.h).

Each op is a ``_NativeFn`` carrying its steps ``(name, component, args)``.
``Dataset.map`` of one builds a single C++ map stage; a map of one right
after another with the same ``num_parallel_calls`` and ``deterministic``
extends the earlier stage instead of adding one (TF's map_fusion), so a
chain of ops runs as one fused function per element. The random ops draw
element i of epoch e's randomness from (seed, e, i) only: results do not
depend on ``num_parallel_calls`` and a checkpoint needs nothing from them.
"""

import os
import zlib

from sluice import _core
from sluice import _data_pickle
from sluice import dtypes as _dtypes
from sluice import random as _random

_d = _core.data
_MASK64 = 0xFFFFFFFFFFFFFFFF


def _seed(seed, name):
    """The engine seed of op `name` with user seed `seed` (None: a fresh one per op, as TF without a seed).

    Salted by the op's name, so ops given the same seed draw independently.
    """
    if seed is None:
        # With a global seed, TF's deterministic op seed (sluice.random); otherwise a fresh one. Recorded
        # (draw_seed), so a pickled copy keeps it.
        def fresh():
            pair = _random.get_seed(None)
            return int.from_bytes(os.urandom(8), "little") if pair[0] is None else pair[0] << 31 | pair[1]
        seed = _data_pickle.draw_seed(fresh)
    return (int(seed) + zlib.crc32(name.encode()) * 0x9E3779B97F4A7C15) & _MASK64


def _ints(values, what):
    out = []
    for v in values:
        if isinstance(v, bool) or int(v) != v:
            raise TypeError("%s must be a list of ints, got %r" % (what, values))
        out.append(int(v))
    return out


def _dtype_enum(dtype):
    return _dtypes.as_dtype(dtype).as_datatype_enum


class _Chain:
    """Builds the native map of a list of steps; see ``make``."""

    def __init__(self, steps, description):
        self.steps = steps
        self.description = description

    def apply(self, ds, npc, det):
        from sluice import data as _data  # noqa: PLC0415 - data imports this module
        resolved = [(name, _data._component_index(ds._structure, component), args)
                    for name, component, args in self.steps]
        source, npc0, det0, earlier = getattr(ds, "_native_chain", (None, None, None, None))
        if source is not None and (npc0, det0) == (npc, det):
            ds, resolved = source, earlier + resolved
        core = _d.map_native_chain(ds._core, resolved, npc, det)
        out = _data.Dataset(core, ds._structure)
        out._native_chain = (ds, npc, det, resolved)
        return out


def make(name, component, description=None, **args):
    from sluice import data as _data  # noqa: PLC0415
    chain = _Chain([(name, component, args)], description or name)
    fn = _data._NativeFn(chain.apply, chain.description)
    fn._chain = chain
    return fn


def chain(*fns):
    """One native map function applying `fns` (``sluice.data.ops`` functions) in order."""
    from sluice import data as _data  # noqa: PLC0415
    steps = []
    for f in fns:
        c = getattr(f, "_chain", None)
        if c is None:
            raise TypeError("chain takes sluice.data.ops element ops (not parse_example, decode_jpeg or "
                            "random_resized_crop, nor Python functions), got %r" % (f,))
        steps.extend(c.steps)
    if not steps:
        raise ValueError("chain needs at least one op")
    c = _Chain(steps, "chain(%s)" % ", ".join(f._description for f in fns))
    fn = _data._NativeFn(c.apply, c.description)
    fn._chain = c
    return fn


def decode_raw(out_type, little_endian=True, component=None):
    """``tf.io.decode_raw`` of string `component`: out_type [.., n]."""
    return make("decode_raw", component, out_type=_dtype_enum(out_type), little_endian=bool(little_endian))


def cast(dtype, component=None):
    """``tf.cast`` of `component` (bool, integer and float types)."""
    return make("cast", component, dtype=_dtype_enum(dtype))


def reshape(shape, component=None):
    """``tf.reshape`` of `component` (one -1 allowed)."""
    return make("reshape", component, shape=_ints(shape, "shape"))


def slice(begin, size, component=None):  # noqa: A001 - TF's name
    """``tf.slice(begin, size)`` of `component` (size -1: to the end)."""
    return make("slice", component, begin=_ints(begin, "begin"), size=_ints(size, "size"))


def strided_slice(begin, end, strides=None, begin_mask=0, end_mask=0, shrink_axis_mask=0, component=None):
    """``tf.strided_slice`` of `component` with a fixed box (no ellipsis or new-axis masks)."""
    return make("strided_slice", component, begin=_ints(begin, "begin"), end=_ints(end, "end"),
                strides=_ints(strides, "strides") if strides is not None else [], begin_mask=int(begin_mask),
                end_mask=int(end_mask), shrink_axis_mask=int(shrink_axis_mask))


def transpose(perm, component=None):
    """``tf.transpose(x, perm)`` of `component`."""
    return make("transpose", component, perm=_ints(perm, "perm"))


def random_crop(size, seed=None, component=None):
    """``tf.image.random_crop(value, size)``; the offsets of element i of epoch e come from (seed, e, i)."""
    return make("random_crop", component, size=_ints(size, "size"), seed=_seed(seed, "random_crop"))


def random_flip_left_right(seed=None, component=None):
    """``tf.image.random_flip_left_right``, seeded per element as random_crop."""
    return make("random_flip_left_right", component, seed=_seed(seed, "random_flip_left_right"))


def random_flip_up_down(seed=None, component=None):
    """``tf.image.random_flip_up_down``, seeded per element as random_crop."""
    return make("random_flip_up_down", component, seed=_seed(seed, "random_flip_up_down"))


def random_brightness(max_delta, seed=None, component=None):
    """``tf.image.random_brightness(max_delta)``, seeded per element as random_crop."""
    if not max_delta >= 0:
        raise ValueError("max_delta must be non-negative.")
    return make("random_brightness", component, max_delta=float(max_delta), seed=_seed(seed, "random_brightness"))


def random_contrast(lower, upper, seed=None, component=None):
    """``tf.image.random_contrast(lower, upper)``, seeded per element as random_crop."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return make("random_contrast", component, lower=float(lower), upper=float(upper),
                seed=_seed(seed, "random_contrast"))


def per_image_standardization(component=None):
    """``tf.image.per_image_standardization``: float32."""
    return make("per_image_standardization", component)


def resize(size, component=None):
    """``tf.image.resize(images, size)`` (bilinear): float32."""
    height, width = _ints(size, "size")
    return make("resize", component, height=height, width=width)


def normalize(mean, std, component=None):
    """(x on the [0, 1] scale - mean[c]) / std[c] (one value or one per channel): float32."""
    mean = [float(m) for m in (mean if isinstance(mean, (list, tuple)) else [mean])]
    std = [float(s) for s in (std if isinstance(std, (list, tuple)) else [std])]
    return make("normalize", component, mean=mean, std=std)


def one_hot(depth, component=None):
    """``tf.one_hot(indices, depth)``: float32 [.., depth]."""
    return make("one_hot", component, depth=_ints([depth], "depth")[0])


def read_file(component=None):
    """``tf.io.read_file`` of string scalar `component` (a file name): the file's contents, a string.

    Runs in C++ without the GIL (local files). Errors name the file:
    NotFoundError for a missing one, FailedPreconditionError for a directory.
    """
    return make("read_file", component)
