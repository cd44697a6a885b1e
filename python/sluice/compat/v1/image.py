"""``tf.compat.v1.image`` of sluice.compat.v1: TF 1's image ops as graph ops over sluice.image.

Each op runs the eager sluice.image function (C++) on the run's value.
Static shapes and dtypes are TF 1's (decode_jpeg: ``[?, ?, channels]``;
resize_images: float32 ``[new_height, new_width, channels]``, except
NEAREST_NEIGHBOR and an unchanged size, which keep the dtype).
"""

import numpy as np

from sluice import dtypes as _dtypes
from sluice import image as _image
from sluice.compat.v1 import _graph
from sluice.compat.v1 import _math_ops
from sluice.compat.v1 import _native_steps
from sluice.compat.v1._graph import as_shape, make_op
from sluice._image_ops import ResizeMethodV1 as ResizeMethod  # noqa: F401 - TF 1's codes

_in = _math_ops._in


def _op(op_type, fn, image, dtype=None, shape=None, name=None, args=()):
    x = _in(image)
    dtype = _dtypes.as_dtype(dtype) if dtype is not None else _math_ops._dtype_of(x)
    shape = _math_ops._shape_of(x) if shape is None else as_shape(shape)
    np_type = dtype.as_numpy_dtype

    def compute(v, *rest):
        out = np.asarray(fn(v, *rest))
        return out if out.dtype == np_type else out.astype(np_type)
    return make_op(op_type, (x,) + tuple(args), compute, [(dtype, shape)], name=name)


def _with_last(shape, rows, cols):
    """`shape` (rank 3 or 4) with its height and width replaced."""
    shape = as_shape(shape)
    if shape.rank is None:
        return None
    dims = list(shape)
    dims[-3], dims[-2] = rows, cols
    return dims


# ---- decoding ---------------------------------------------------------------------------

def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None):
    def fn(v):
        return _image.decode_jpeg(v, channels=channels, ratio=ratio, fancy_upscaling=fancy_upscaling,
                                  try_recover_truncated=try_recover_truncated,
                                  acceptable_fraction=acceptable_fraction, dct_method=dct_method)
    op = _op("DecodeJpeg", fn, _in(contents, _dtypes.string), _dtypes.uint8, [None, None, channels or None], name)
    if not isinstance(op, _graph.Tensor):
        return op  # run at once (in an eager scope: a tf.data map function)
    op.op.attrs["native"] = ("decode_jpeg", dict(channels=channels, ratio=ratio, fancy_upscaling=fancy_upscaling,
                                                 dct_method=dct_method, try_recover_truncated=try_recover_truncated,
                                                 acceptable_fraction=acceptable_fraction))
    return op


def decode_png(contents, channels=0, dtype=_dtypes.uint8, name=None):
    return _op("DecodePng", lambda v: _image.decode_png(v, channels=channels, dtype=dtype),
               _in(contents, _dtypes.string), dtype, [None, None, channels or None], name)


def decode_image(contents, channels=None, dtype=_dtypes.uint8, name=None, expand_animations=True):
    return _op("DecodeImage", lambda v: _image.decode_image(v, channels=channels, dtype=dtype,
                                                             expand_animations=expand_animations),
               _in(contents, _dtypes.string), dtype, None, name)


def decode_and_crop_jpeg(contents, crop_window, channels=0, ratio=1, fancy_upscaling=True,
                         try_recover_truncated=False, acceptable_fraction=1, dct_method="", name=None):
    return _op("DecodeAndCropJpeg", lambda v, w: _image.decode_and_crop_jpeg(v, w, channels=channels, ratio=ratio),
               _in(contents, _dtypes.string), _dtypes.uint8, [None, None, channels or None], name,
               args=(_in(crop_window, _dtypes.int32),))


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,  # noqa: A002
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300, xmp_metadata="",
                name=None):
    return _op("EncodeJpeg", lambda v: _image.encode_jpeg(v, quality=quality), image, _dtypes.string, [], name)


def encode_png(image, compression=-1, name=None):
    return _op("EncodePng", lambda v: _image.encode_png(v, compression=compression), image, _dtypes.string, [], name)


def extract_jpeg_shape(contents, output_type=_dtypes.int32, name=None):
    return _op("ExtractJpegShape", lambda v: _image.extract_jpeg_shape(v, output_type), _in(contents, _dtypes.string),
               output_type, [3], name)


# ---- resizing and cropping --------------------------------------------------------------

def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False, preserve_aspect_ratio=False,
                  name=None):
    x = _in(images)
    h, w = (int(size[0]), int(size[1])) if not isinstance(size, _graph.Tensor) else (None, None)
    shape = _math_ops._shape_of(x)
    same = shape.rank is not None and list(shape)[-3:-1] == [h, w]
    nearest = method in (ResizeMethod.NEAREST_NEIGHBOR, "nearest", "NEAREST_NEIGHBOR")
    dtype = _math_ops._dtype_of(x) if (same or nearest) else _dtypes.float32
    out_shape = None if preserve_aspect_ratio else _with_last(shape, h, w)
    op = _op("ResizeImages", lambda v: _image.resize_images(v, (h, w), method, align_corners, preserve_aspect_ratio),
             x, dtype, out_shape, name)
    return op


resize = resize_images


def _resize_v1(op_type, method):
    def fn(images, size, align_corners=False, name=None, half_pixel_centers=False):
        x = _in(images)
        h, w = int(size[0]), int(size[1])
        eager = getattr(_image, op_type)
        dtype = _math_ops._dtype_of(x) if method == "nearest" else _dtypes.float32
        return _op(op_type, lambda v: eager(v, (h, w), align_corners=align_corners,
                                            half_pixel_centers=half_pixel_centers)
                   if op_type != "resize_area" else eager(v, (h, w), align_corners=align_corners),
                   x, dtype, _with_last(_math_ops._shape_of(x), h, w), name)
    return fn


resize_bilinear = _resize_v1("resize_bilinear", "bilinear")
resize_nearest_neighbor = _resize_v1("resize_nearest_neighbor", "nearest")
resize_bicubic = _resize_v1("resize_bicubic", "bicubic")
resize_area = _resize_v1("resize_area", "area")


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    x = _in(image)
    return _op("CropToBoundingBox", lambda v: _image.crop_to_bounding_box(v, offset_height, offset_width,
                                                                         target_height, target_width),
               x, None, _with_last(_math_ops._shape_of(x), target_height, target_width))


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    x = _in(image)
    return _op("PadToBoundingBox", lambda v: _image.pad_to_bounding_box(v, offset_height, offset_width,
                                                                       target_height, target_width),
               x, None, _with_last(_math_ops._shape_of(x), target_height, target_width))


def _crop_or_pad(v, th, tw):
    h, w = v.shape[-3], v.shape[-2]
    ch, cw = max((h - th) // 2, 0), max((w - tw) // 2, 0)
    ph, pw = max((th - h) // 2, 0), max((tw - w) // 2, 0)
    cropped = v[..., ch:ch + min(th, h), cw:cw + min(tw, w), :]
    out = np.zeros(v.shape[:-3] + (th, tw, v.shape[-1]), dtype=v.dtype)
    out[..., ph:ph + cropped.shape[-3], pw:pw + cropped.shape[-2], :] = cropped
    return out


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """TF 1's central crop and/or zero pad to the target size."""
    x = _in(image)
    return _op("ResizeImageWithCropOrPad", lambda v: _crop_or_pad(np.asarray(v), target_height, target_width),
               x, None, _with_last(_math_ops._shape_of(x), target_height, target_width))


resize_with_crop_or_pad = resize_image_with_crop_or_pad


def central_crop(image, central_fraction):
    return _op("CentralCrop", lambda v: _image.central_crop(v, central_fraction), image, None,
               _with_last(_math_ops._shape_of(_in(image)), None, None))


def random_crop(value, size, seed=None, name=None):
    out = _op("RandomCrop", lambda v: _image.random_crop(v, size, seed), value, None, list(size), name)
    if all(isinstance(d, (int, np.integer)) for d in size):
        _native_steps.tag(out, "random_crop", size=[int(d) for d in size], seed=seed)
    return out


# ---- same shape and dtype ---------------------------------------------------------------

def _same(eager, op_type, dtype=None):
    def fn(image, *args, **kwargs):
        kwargs.pop("name", None)
        return _op(op_type, lambda v: eager(v, *args, **kwargs), image, dtype)
    fn.__name__ = eager.__name__
    return fn


flip_left_right = _same(_image.flip_left_right, "ReverseV2")
flip_up_down = _same(_image.flip_up_down, "ReverseV2")


def random_flip_left_right(image, seed=None, name=None):  # noqa: ARG001 - TF's name, not kept (as _same)
    return _native_steps.tag(_op("RandomFlipLeftRight", lambda v: _image.random_flip_left_right(v, seed), image),
                             "random_flip_left_right", seed=seed)


def random_flip_up_down(image, seed=None, name=None):  # noqa: ARG001 - TF's name, not kept (as _same)
    return _native_steps.tag(_op("RandomFlipUpDown", lambda v: _image.random_flip_up_down(v, seed), image),
                             "random_flip_up_down", seed=seed)



adjust_brightness = _same(_image.adjust_brightness, "AdjustBrightness")
adjust_contrast = _same(_image.adjust_contrast, "AdjustContrastv2")
adjust_saturation = _same(_image.adjust_saturation, "AdjustSaturation")
adjust_hue = _same(_image.adjust_hue, "AdjustHue")
adjust_gamma = _same(_image.adjust_gamma, "AdjustGamma")


def random_brightness(image, max_delta, seed=None, name=None):  # noqa: ARG001 - TF's name, not kept (as _same)
    out = _op("RandomBrightness", lambda v: _image.random_brightness(v, max_delta, seed), image)
    return _native_steps.tag(out, "random_brightness", max_delta=float(max_delta), seed=seed)


def random_contrast(image, lower, upper, seed=None, name=None):  # noqa: ARG001 - TF's name, not kept (as _same)
    out = _op("RandomContrast", lambda v: _image.random_contrast(v, lower, upper, seed), image)
    return _native_steps.tag(out, "random_contrast", lower=float(lower), upper=float(upper), seed=seed)



random_saturation = _same(_image.random_saturation, "RandomSaturation")
random_hue = _same(_image.random_hue, "RandomHue")
rgb_to_hsv = _same(_image.rgb_to_hsv, "RGBToHSV")
hsv_to_rgb = _same(_image.hsv_to_rgb, "HSVToRGB")


def per_image_standardization(image, name=None):  # noqa: ARG001 - as _same
    out = _op("PerImageStandardization", _image.per_image_standardization, image, _dtypes.float32)
    return _native_steps.tag(out, "per_image_standardization")


def rot90(image, k=1, name=None):
    return _op("Rot90", lambda v: _image.rot90(v, k), image, None, None if k % 2 else None, name)


def transpose(image, name=None):
    x = _in(image)
    s = _math_ops._shape_of(x)
    return _op("Transpose", _image.transpose, x, None, _with_last(s, s[-2], s[-3]) if s.rank else None, name)


def convert_image_dtype(image, dtype, saturate=False, name=None):
    return _op("ConvertImageDtype", lambda v: _image.convert_image_dtype(v, dtype, saturate), image, dtype, None
               if not isinstance(image, _graph.Tensor) else image.shape, name)


def rgb_to_grayscale(images, name=None):
    x = _in(images)
    s = _math_ops._shape_of(x)
    return _op("RGBToGrayscale", _image.rgb_to_grayscale, x, None, list(s)[:-1] + [1] if s.rank else None, name)


def grayscale_to_rgb(images, name=None):
    x = _in(images)
    s = _math_ops._shape_of(x)
    return _op("GrayscaleToRGB", _image.grayscale_to_rgb, x, None, list(s)[:-1] + [3] if s.rank else None, name)


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None, seed2=None, min_object_covered=0.1,
                                  aspect_ratio_range=None, area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None):
    _graph.not_provided("image.sample_distorted_bounding_box",
                        "sluice.image.sample_distorted_bounding_box eagerly, or the fused "
                        "NativeProducer.map_random_resized_crop(sampler='tensorflow')")


__getattr__ = _graph.module_getattr("image", "sl.image")
