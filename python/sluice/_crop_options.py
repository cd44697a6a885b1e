"""The fused random resized crop's options, as one ``_core.RandomResizedCropOptions``.

The options and their defaults are declared once, in C++
(image::RandomResizedCropOptions, bound by python/src/bind_crop_options.cc).
The three Python front ends (sluice.image.decode_random_resized_crop and
sample_random_resized_crop, NativeProducer.map_random_resized_crop,
sluice.data.ops.random_resized_crop) build the object here from the options
their caller gave: an option left at None keeps the struct's default.
"""

import enum

import numpy as np

from sluice import _core


def _pair(value, name):
    pair = tuple(float(v) for v in value)
    if len(pair) != 2:
        raise ValueError(f"'{name}' must be a pair (low, high), got {value!r}")
    return pair


def _floats(value):
    return [float(v) for v in np.ravel(value)]


def _name(value):
    return value.value if isinstance(value, enum.Enum) else str(value)


_CONVERT = {
    "scale": _pair, "ratio": _pair,
    "mean": lambda v, _: _floats(v), "std": lambda v, _: _floats(v),
    "flip_probability": lambda v, _: float(v),
    "data_format": lambda v, _: _name(v), "sampler": lambda v, _: _name(v), "method": lambda v, _: _name(v),
    "dct_method": lambda v, _: str(v),
    "antialias": lambda v, _: bool(v), "dct_scaling": lambda v, _: bool(v),
}
_INTS = ("height", "width", "channels", "max_attempts")


def crop_options(as_int, size=None, flip=None, **options):
    """A ``_core.RandomResizedCropOptions`` of the options given (not None); the others keep its defaults.

    `size` (an int or ``(height, width)``) and `flip` (False: never mirror;
    True: mirror with `flip_probability`, by default the struct's) are the
    Python spellings of height/width and flip_probability. `as_int(value,
    name)` is the caller's integer check (each front end keeps its own
    TypeError). TypeError for an unknown option; ValueError (from the bound
    struct) for an unknown data_format, sampler or method.
    """
    kwargs = {}
    for name, value in options.items():
        if value is None:
            continue
        if name in _INTS:
            kwargs[name] = as_int(value, name)
        elif name in _CONVERT:
            kwargs[name] = _CONVERT[name](value, name)
        else:
            raise TypeError(f"unknown random resized crop option {name!r}")
    if size is not None:
        if isinstance(size, (list, tuple)):
            kwargs["height"], kwargs["width"] = (as_int(s, "size") for s in size)
        else:
            kwargs["height"] = kwargs["width"] = as_int(size, "size")
    if flip is not None and not flip:
        kwargs["flip_probability"] = 0.0
    return _core.RandomResizedCropOptions(**kwargs)
