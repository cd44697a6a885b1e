"""Image transforms with tf.image's names, computed in C++ (sluice._core).

Inputs are numpy arrays (or anything numpy.asarray accepts): an image is
[height, width, channels] (HWC) or a batch [batch, height, width, channels].
Results are numpy arrays of TensorFlow's output dtype (tf.image.resize:
float32 except for "nearest"). Random ops take an integer ``seed``: the same
seed gives the same result (TF's random stream is not reproduced); with
``seed=None`` a fresh seed is drawn from the OS.

Tolerances against TensorFlow 2.21 (checked in python/src/test_image_ops.py
and test_image_resize_v1.py): geometric ops and convert_image_dtype are
exact; resize is within 2e-4 on 0..255 inputs (float32 rounding in a
different summation order); TF 1's resize ops (resize_images,
resize_bilinear, ...) within 1e-4 (nearest exact); colour ops within 1e-5 on
[0, 1] floats and +-1 on integer images.
"""

import enum
import os

import numpy as np

from sluice import _core
from sluice import _crop_options
from sluice import dtypes as _dtypes
from sluice import errors as _errors

__all__ = [
    "ResizeMethod",
    "ResizeMethodV1",
    "resize",
    "resize_images",
    "resize_bilinear",
    "resize_nearest_neighbor",
    "resize_bicubic",
    "resize_area",
    "resize_with_pad",
    "resize_flip_normalize",
    "decode_random_resized_crop",
    "sample_random_resized_crop",
    "crop_to_bounding_box",
    "pad_to_bounding_box",
    "central_crop",
    "random_crop",
    "flip_left_right",
    "flip_up_down",
    "random_flip_left_right",
    "random_flip_up_down",
    "rot90",
    "transpose",
    "convert_image_dtype",
    "per_image_standardization",
    "normalize",
    "sample_distorted_bounding_box",
    "adjust_brightness",
    "adjust_contrast",
    "adjust_saturation",
    "adjust_hue",
    "adjust_gamma",
    "random_brightness",
    "random_contrast",
    "random_saturation",
    "random_hue",
    "rgb_to_grayscale",
    "grayscale_to_rgb",
    "rgb_to_hsv",
    "hsv_to_rgb",
]


class ResizeMethod(str, enum.Enum):
    """tf.image.ResizeMethod; the values are TF's strings."""

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


class ResizeMethodV1(enum.IntEnum):
    """tf.compat.v1.image.ResizeMethod: TF 1's integer method codes.

    resize_images also takes the matching ResizeMethod members and their
    strings ("bilinear", "nearest", "bicubic", "area"), as TF 1 does.
    """

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


def _array(x):
    a = np.ascontiguousarray(x)
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("="))
    return a


def _arg(image):
    """(array, dtype enum) for _core, raising TypeError for non-numeric input."""
    a = _array(image)
    if a.dtype == object or a.dtype.kind in "USV":
        raise TypeError(f"image must be a numeric array, got dtype {a.dtype}")
    if a.dtype == np.bool_:
        return a, _dtypes.bool.as_datatype_enum
    return a, _dtypes.as_dtype(a.dtype).as_datatype_enum


def _method(method):
    return method.value if isinstance(method, ResizeMethod) else str(method)


def _seed(seed):
    if seed is None:
        return int.from_bytes(os.urandom(8), "little")
    return int(seed) & 0xFFFFFFFFFFFFFFFF


def _size(size):
    size = [int(s) for s in size]
    if len(size) != 2:
        raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
    return size


def _check_image_rank(a, op):
    if a.ndim not in (3, 4):
        raise ValueError(f"'image' (shape {a.shape}) must have either 3 or 4 dimensions ({op}).")


# ---- random resized crop ------------------------------------------------------

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def decode_random_resized_crop(contents, size, scale=None, ratio=None, flip=True, mean=None, std=None,
                               data_format=None, seed=None, *, flip_probability=None, max_attempts=None,
                               sampler=None, method=None, antialias=None, channels=None, dct_scaling=None):
    """sluice extra: JPEG/PNG bytes -> random resized crop -> flip -> normalise, fused.

    torchvision's RandomResizedCrop(size, scale, ratio) + RandomHorizontalFlip
    + ToTensor + Normalize(mean, std), from the encoded image: the box is drawn
    from the header's size and only the box is decoded (a PNG is decoded
    whole). Returns float32 [channels, h, w] ("CHW") or [h, w, channels].

    ``size``: an int (square) or (height, width). ``flip``: False never
    mirrors; True mirrors with ``flip_probability``. ``sampler``:
    "torchvision" (RandomResizedCrop.get_params, the default) or "tensorflow"
    (sample_distorted_bounding_box's algorithm). ``antialias=True`` filters as
    PIL's resize does. ``dct_scaling``: decode at 1/2..1/8 when the box is
    that much larger than ``size`` (faster, pixels differ slightly).
    An option left at None keeps the default of
    ``_core.RandomResizedCropOptions`` (the C++ struct's: scale (0.08, 1.0),
    ratio (3/4, 4/3), flip_probability 0.5, ImageNet's mean and std
    (IMAGENET_MEAN, IMAGENET_STD), "CHW", 10 attempts, "torchvision",
    "bilinear", no antialias, 3 channels, no DCT scaling).
    ``seed``: the same seed gives the same output; None draws one.
    Equals normalize(flip_left_right(resize(decode_and_crop_jpeg(contents,
    box), size) / 255), mean, std) to float32 rounding, with the box and flip
    of sample_random_resized_crop(image_size, ..., seed).
    Raises InvalidArgumentError for corrupt input or bad arguments.
    """
    if isinstance(size, (int, np.integer)):
        size = (int(size), int(size))
    h, w = _size(size)
    options = _crop_options.crop_options(
        _lenient_int, height=h, width=w, scale=scale, ratio=ratio, flip=flip, flip_probability=flip_probability,
        mean=mean, std=std, data_format=data_format, max_attempts=max_attempts, sampler=sampler, method=method,
        antialias=antialias, channels=channels, dct_scaling=dct_scaling)
    data = contents if isinstance(contents, bytes) else bytes(contents)
    return _core.image_decode_random_resized_crop(data, options, _seed(seed))


def sample_random_resized_crop(image_size, scale=None, ratio=None, seed=None, *, flip_probability=None,
                               max_attempts=None, sampler=None):
    """The box and flip decode_random_resized_crop uses for this image size and seed.

    ``image_size``: (height, width, ...). Returns (y, x, height, width, flip).
    Options left at None keep decode_random_resized_crop's defaults.
    """
    dims = [int(v) for v in np.ravel(image_size)]
    if len(dims) < 2:
        raise ValueError("image_size must hold at least height and width")
    options = _crop_options.crop_options(_lenient_int, scale=scale, ratio=ratio, flip_probability=flip_probability,
                                         max_attempts=max_attempts, sampler=sampler)
    return tuple(_core.image_sample_random_resized_crop(dims[0], dims[1], options, _seed(seed)))


def _lenient_int(value, _name):
    return int(value)


# ---- resize -------------------------------------------------------------------


def resize(images, size, method=ResizeMethod.BILINEAR, preserve_aspect_ratio=False, antialias=False):
    """tf.image.resize: float32 output (the input dtype for "nearest")."""
    a, d = _arg(images)
    h, w = _size(size)
    return _core.image_resize(a, d, h, w, _method(method), bool(preserve_aspect_ratio), bool(antialias))


def resize_with_pad(image, target_height, target_width, method=ResizeMethod.BILINEAR, antialias=False):
    """tf.image.resize_with_pad: resize keeping the aspect ratio, then zero-pad."""
    a, d = _arg(image)
    return _core.image_resize_with_pad(a, d, int(target_height), int(target_width), _method(method), bool(antialias))


def resize_flip_normalize(image, size, mean=(), std=(), *, method=ResizeMethod.BILINEAR, antialias=False,
                          crop=None, flip=False, data_format="CHW"):
    """sluice extra: uint8 HWC -> crop -> resize -> optional flip -> normalise, in one pass.

    Equals normalize(flip_left_right(resize(crop_to_bounding_box(image, *crop), size)), mean, std,
    data_format) to float32 rounding. ``crop``: (y, x, height, width) or None.
    """
    a, d = _arg(image)
    h, w = _size(size)
    window = None if crop is None else tuple(int(v) for v in crop)
    return _core.image_resize_flip_normalize(a, d, h, w, _method(method), bool(antialias), window, bool(flip),
                                             [float(v) for v in np.ravel(mean)],
                                             [float(v) for v in np.ravel(std)], str(data_format))


# ---- TF 1's resize ops ------------------------------------------------------------

_V1_METHOD_NAMES = {0: "bilinear", 1: "nearest", 2: "bicubic", 3: "area"}


def _method_v1(method):
    """The C++ name of a TF 1 method: a ResizeMethodV1 code or a ResizeMethod string."""
    if isinstance(method, (str, ResizeMethod)):
        name = _method(method)
        if name in _V1_METHOD_NAMES.values():
            return name
    elif isinstance(method, (int, np.integer)) and int(method) in _V1_METHOD_NAMES:
        return _V1_METHOD_NAMES[int(method)]
    raise ValueError(f"Resize method is not implemented: {method}")


def _size_v1(size, error):
    """(new_height, new_width) from a 1-D integer sequence of 2; `error` (str) -> exception."""
    s = np.asarray(size)
    if s.dtype.kind not in "iu":
        raise error("'size' must be a 1-D int32 Tensor")
    if s.shape != (2,):
        raise error(f"'size' must be a 1-D Tensor of 2 elements: new_height, new_width, got shape {list(s.shape)}")
    return int(s[0]), int(s[1])


def _invalid(message):
    return _errors.InvalidArgumentError(None, None, message)


def _resize_op(images, size, method, align_corners, half_pixel_centers):
    """One of TF 1's raw resize ops: 4-D images only, as TF's kernels."""
    a, d = _arg(images)
    if a.ndim != 4:
        raise _invalid("input must be 4-dimensional[%s]" % ",".join(str(n) for n in a.shape))
    h, w = _size_v1(size, _invalid)
    if method != "nearest" and a.dtype == np.float16:
        a, d = _arg(a.astype(np.float32))  # TF reads every value as float32 anyway
    return _core.image_resize_v1(a, d, h, w, method, bool(align_corners), bool(half_pixel_centers))


def resize_images(images, size, method=ResizeMethodV1.BILINEAR, align_corners=False, preserve_aspect_ratio=False,
                  name=None):
    """tf.compat.v1.image.resize_images (also tf.compat.v1.image.resize): TF 1's resize.

    Not tf.image.resize: pixel centres follow TF 1's legacy rule (source
    coordinate i * in / out, or (in - 1) / (out - 1) with ``align_corners``),
    and bicubic is Keys' kernel with a = -0.75 clamped at the edges; the values
    differ from resize()'s by up to tens of grey levels.

    ``images``: [h, w, c] or [n, h, w, c]. ``size``: (new_height,
    new_width), integers. ``method``: a ResizeMethodV1 code (BILINEAR=0,
    NEAREST_NEIGHBOR=1, BICUBIC=2, AREA=3) or the string of one of those four
    methods ("bilinear", "nearest", "bicubic", "area"). ``preserve_aspect_ratio``:
    fit inside ``size`` keeping the aspect ratio. ``name`` is ignored.
    Returns float32, except: NEAREST_NEIGHBOR keeps the input dtype, and when
    the output size equals the input's the images come back unchanged (a copy
    in their own dtype), as in TF.
    Raises ValueError for a rank other than 3 or 4, a ``size`` that is not two
    integers, or an unknown method; InvalidArgumentError for a size <= 0 or
    an empty image.
    """
    del name
    a, d = _arg(images)
    if a.ndim not in (3, 4):
        raise ValueError("'images' must have either 3 or 4 dimensions.")
    h, w = _size_v1(size, ValueError)
    m = _method_v1(method)
    if m != "nearest" and a.dtype == np.float16:
        out = _core.image_resize_images_v1(*_arg(a.astype(np.float32)), h, w, m, bool(align_corners),
                                           bool(preserve_aspect_ratio))
        return out.astype(np.float16) if out.shape == a.shape else out  # same size: the input, as TF
    return _core.image_resize_images_v1(a, d, h, w, m, bool(align_corners), bool(preserve_aspect_ratio))


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """tf.compat.v1.image.resize_bilinear (the ResizeBilinear op): float32 output.

    ``images``: 4-D [n, h, w, c]. Default (legacy) sampling: output i reads
    source i * in / out; ``align_corners``: i * (in - 1) / (out - 1);
    ``half_pixel_centers`` (not with align_corners): (i + 0.5) * in / out - 0.5,
    tf.image.resize's rule. InvalidArgumentError for bad shapes, sizes or
    arguments, as TF's kernel.
    """
    del name
    return _resize_op(images, size, "bilinear", align_corners, half_pixel_centers)


def resize_nearest_neighbor(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """tf.compat.v1.image.resize_nearest_neighbor (ResizeNearestNeighbor): keeps the dtype.

    Source index floor(i * in / out) by default; round(i * (in - 1) / (out -
    1)) (half away from zero) with ``align_corners``; floor((i + 0.5) * in /
    out) with ``half_pixel_centers``. Exactly TF's pixels.
    """
    del name
    return _resize_op(images, size, "nearest", align_corners, half_pixel_centers)


def resize_bicubic(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """tf.compat.v1.image.resize_bicubic (ResizeBicubic): float32 output.

    Legacy (default): Keys' cubic with a = -0.75, taps past the edge repeat the
    edge pixel. ``half_pixel_centers``: a = -0.5, taps past the edge dropped
    and the rest renormalised (tf.image.resize's bicubic). Values overshoot
    the input range, as TF's.
    """
    del name
    return _resize_op(images, size, "bicubic", align_corners, half_pixel_centers)


def resize_area(images, size, align_corners=False, name=None):
    """tf.compat.v1.image.resize_area (ResizeArea): float32 box averages.

    Output i averages source [i * s, (i + 1) * s), s = in / out (or (in - 1) /
    (out - 1) with ``align_corners``), each cell weighted by its covered length.
    """
    del name
    return _resize_op(images, size, "area", align_corners, False)


# ---- geometry -----------------------------------------------------------------


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """tf.image.crop_to_bounding_box."""
    a, d = _arg(image)
    return _core.image_crop_to_bounding_box(a, d, int(offset_height), int(offset_width), int(target_height),
                                            int(target_width))


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """tf.image.pad_to_bounding_box."""
    a, d = _arg(image)
    return _core.image_pad_to_bounding_box(a, d, int(offset_height), int(offset_width), int(target_height),
                                           int(target_width))


def central_crop(image, central_fraction):
    """tf.image.central_crop (ValueError unless 0 < central_fraction <= 1)."""
    if central_fraction <= 0.0 or central_fraction > 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    a, d = _arg(image)
    return _core.image_central_crop(a, d, float(central_fraction))


def flip_left_right(image):
    """tf.image.flip_left_right."""
    return _core.image_flip_left_right(*_arg(image))


def flip_up_down(image):
    """tf.image.flip_up_down."""
    return _core.image_flip_up_down(*_arg(image))


def rot90(image, k=1):
    """tf.image.rot90: counter-clockwise by k * 90 degrees."""
    a, d = _arg(image)
    return _core.image_rot90(a, d, int(k))


def transpose(image):
    """tf.image.transpose: swaps height and width."""
    return _core.image_transpose(*_arg(image))


def random_crop(value, size, seed=None):
    """tf.image.random_crop: a ``size`` slice of ``value`` (any rank) at a random offset."""
    a, d = _arg(value)
    return _core.image_random_crop(a, d, [int(s) for s in np.ravel(size)], _seed(seed))


def random_flip_left_right(image, seed=None):
    """tf.image.random_flip_left_right (each image of a batch independently)."""
    a, d = _arg(image)
    return _core.image_random_flip_left_right(a, d, _seed(seed))


def random_flip_up_down(image, seed=None):
    """tf.image.random_flip_up_down (each image of a batch independently)."""
    a, d = _arg(image)
    return _core.image_random_flip_up_down(a, d, _seed(seed))


# ---- colour -----------------------------------------------------------------


def convert_image_dtype(image, dtype, saturate=False):
    """tf.image.convert_image_dtype."""
    a, d = _arg(image)
    return _core.image_convert_image_dtype(a, d, _dtypes.as_dtype(dtype).as_datatype_enum, bool(saturate))


def adjust_brightness(image, delta):
    """tf.image.adjust_brightness."""
    a, d = _arg(image)
    return _core.image_adjust_brightness(a, d, float(delta))


def adjust_contrast(images, contrast_factor):
    """tf.image.adjust_contrast."""
    a, d = _arg(images)
    return _core.image_adjust_contrast(a, d, float(contrast_factor))


def adjust_saturation(image, saturation_factor):
    """tf.image.adjust_saturation."""
    a, d = _arg(image)
    return _core.image_adjust_saturation(a, d, float(saturation_factor))


def adjust_hue(image, delta):
    """tf.image.adjust_hue (ValueError unless -1 <= delta <= 1)."""
    if delta < -1 or delta > 1:
        raise ValueError("delta must be in the interval [-1, 1]")
    a, d = _arg(image)
    return _core.image_adjust_hue(a, d, float(delta))


def adjust_gamma(image, gamma=1, gain=1):
    """tf.image.adjust_gamma: gain * image ** gamma."""
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number.")
    a, d = _arg(image)
    return _core.image_adjust_gamma(a, d, float(gamma), float(gain))


def random_brightness(image, max_delta, seed=None):
    """tf.image.random_brightness."""
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    a, d = _arg(image)
    return _core.image_random_brightness(a, d, float(max_delta), _seed(seed))


def _check_factor_range(lower, upper):
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")


def random_contrast(image, lower, upper, seed=None):
    """tf.image.random_contrast."""
    _check_factor_range(lower, upper)
    a, d = _arg(image)
    return _core.image_random_contrast(a, d, float(lower), float(upper), _seed(seed))


def random_saturation(image, lower, upper, seed=None):
    """tf.image.random_saturation."""
    _check_factor_range(lower, upper)
    a, d = _arg(image)
    return _core.image_random_saturation(a, d, float(lower), float(upper), _seed(seed))


def random_hue(image, max_delta, seed=None):
    """tf.image.random_hue."""
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    a, d = _arg(image)
    return _core.image_random_hue(a, d, float(max_delta), _seed(seed))


def rgb_to_grayscale(images):
    """tf.image.rgb_to_grayscale."""
    return _core.image_rgb_to_grayscale(*_arg(images))


def grayscale_to_rgb(images):
    """tf.image.grayscale_to_rgb."""
    return _core.image_grayscale_to_rgb(*_arg(images))


def rgb_to_hsv(images):
    """tf.image.rgb_to_hsv (float32 / float64)."""
    return _core.image_rgb_to_hsv(*_arg(images))


def hsv_to_rgb(images):
    """tf.image.hsv_to_rgb (float32 / float64)."""
    return _core.image_hsv_to_rgb(*_arg(images))


# ---- normalisation and boxes ------------------------------------------------------


def per_image_standardization(image):
    """tf.image.per_image_standardization: float32 output."""
    return _core.image_per_image_standardization(*_arg(image))


def normalize(image, mean, std, data_format="HWC"):
    """sluice extra: (image / 255 - mean) / std per channel, as float32.

    uint8 images are divided by 255 (uint16 by 65535), float images taken as
    they are. ``mean`` and ``std``: one value or one per channel.
    ``data_format``: "HWC" (keeps the layout) or "CHW" (channels first; a
    batch becomes NCHW).
    """
    a, d = _arg(image)
    return _core.image_normalize(a, d, [float(v) for v in np.ravel(mean)], [float(v) for v in np.ravel(std)],
                                 str(data_format))


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None, min_object_covered=0.1,
                                  aspect_ratio_range=None, area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None):
    """tf.image.sample_distorted_bounding_box: (begin, size, bboxes).

    begin and size are int32 [3] for a slice of the image; bboxes is float32
    [1, 1, 4]. TF's algorithm and defaults; sluice's random stream.
    """
    image_size = [int(v) for v in np.ravel(image_size)]
    if len(image_size) != 3:
        raise ValueError("image_size must be 1-D with 3 elements")
    boxes = np.ascontiguousarray(bounding_boxes, dtype=np.float32)
    aspect = (0.75, 1.33) if aspect_ratio_range is None else tuple(float(v) for v in aspect_ratio_range)
    area = (0.05, 1.0) if area_range is None else tuple(float(v) for v in area_range)
    return tuple(_core.image_sample_distorted_bounding_box(
        image_size[0], image_size[1], boxes, _seed(seed), float(min_object_covered), aspect, area,
        100 if max_attempts is None else int(max_attempts), bool(use_image_if_no_bounding_boxes)))
