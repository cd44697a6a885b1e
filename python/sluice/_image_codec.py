"""Image decoders and encoders with TensorFlow's names (re-exported by
:mod:`sluice.image` and :mod:`sluice.io`, as TF has them in both).

The work runs in sluice's C++ codecs on libjpeg-turbo and libpng, without the
GIL, and gives TensorFlow 2's pixels: the same library calls with the same
settings. Decoded images are numpy arrays ``[height, width, channels]``
viewing the decoder's output (no copy).

``contents`` is ``bytes`` (also accepted: bytearray, memoryview, a numpy
bytes scalar, or anything with ``.numpy()`` giving one, such as a TF eager
string tensor). As in TF 2, the decoders look at the bytes: ``decode_jpeg``
decodes a PNG and ``decode_png`` a JPEG. GIF, BMP and WebP are not decoded.

Corrupt, truncated or unrecognised data raises
:class:`sluice.errors.InvalidArgumentError` saying what is wrong, as do bad
arguments (with TF's messages). Thread-safe: no state is kept but the
process-wide decode limit (:func:`set_decode_limit`).
"""

import operator

import numpy as np

from sluice import _core
from sluice import dtypes as _dtypes
from sluice import errors as _errors

__all__ = [
    "decode_jpeg", "decode_and_crop_jpeg", "decode_png", "decode_image", "extract_jpeg_shape",
    "encode_jpeg", "encode_png", "is_jpeg", "set_decode_limit", "get_decode_limit",
]


def set_decode_limit(max_bytes):
    """Sets the process-wide decode limit, in bytes of decoded output (sluice only; not in TF).

    Every decoder refuses, from the file's header and before allocating the
    image, an image whose width x height x channels x bytes per value of the
    result's dtype (uint8 1 ... float64 8) is over the limit, with
    InvalidArgumentError naming the size and the limit. The size is the whole
    image's (also for decode_and_crop_jpeg). The default is 1 GiB, or the
    environment variable ``SLUICE_MAX_DECODE_BYTES`` (read once, at the first
    decode). Applies to decodes started from now on, on every thread.

    Raises:
      InvalidArgumentError: max_bytes <= 0.
    """
    _core.set_decode_limit(operator.index(max_bytes))


def get_decode_limit():
    """The process-wide decode limit in bytes (see :func:`set_decode_limit`).

    Raises:
      InvalidArgumentError: ``SLUICE_MAX_DECODE_BYTES`` is set but not a
        positive integer, and set_decode_limit has not replaced it.
    """
    return _core.get_decode_limit()


def _contents(contents):
    if isinstance(contents, bytes):
        return contents
    if hasattr(contents, "numpy"):
        contents = contents.numpy()
    if isinstance(contents, np.ndarray) and contents.ndim == 0:
        contents = contents.item()
    if isinstance(contents, (bytearray, memoryview, np.bytes_)):
        return bytes(contents)
    if isinstance(contents, bytes):
        return contents
    raise TypeError("contents must be bytes, got %s" % type(contents).__name__)


def _enum(dtype):
    return _dtypes.as_dtype(dtype).as_datatype_enum


def _image(image):
    if hasattr(image, "numpy"):
        image = image.numpy()
    return np.asarray(image)


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None):
    """tf.io.decode_jpeg: a uint8 array [height, width, channels].

    Args:
      contents: the JPEG file's bytes.
      channels: 0 (the file's: 1 for grayscale, else 3; CMYK becomes RGB),
        1 (grayscale) or 3 (RGB).
      ratio: 1, 2, 4 or 8: downscale while decoding (libjpeg DCT scaling).
      fancy_upscaling: smooth chroma upsampling (slower, better).
      try_recover_truncated: decode a truncated file as far as it goes.
      acceptable_fraction: without try_recover_truncated, the fraction of
        rows a truncated file must still give (the rest are zero).
      dct_method: "" or "INTEGER_FAST" (TF's default), or
        "INTEGER_ACCURATE".
      name: ignored (TF's op name).

    Raises:
      InvalidArgumentError: bad arguments, or data that is not a decodable
        JPEG (or PNG).
    """
    del name
    return _core.decode_jpeg(_contents(contents), int(channels), int(ratio), bool(fancy_upscaling),
                             bool(try_recover_truncated), float(acceptable_fraction), str(dct_method))


def decode_and_crop_jpeg(contents, crop_window, channels=0, ratio=1, fancy_upscaling=True,
                         try_recover_truncated=False, acceptable_fraction=1, dct_method="", name=None):
    """tf.image.decode_and_crop_jpeg: decode only ``crop_window``.

    ``crop_window`` is [y, x, height, width] in the (ratio-scaled) image; the
    other arguments are decode_jpeg's. Only the window's rows and the MCU
    columns covering it are decoded.

    Raises:
      InvalidArgumentError: a window that is empty or outside the image, a
        PNG, and decode_jpeg's errors.
    """
    del name
    window = np.asarray(_image(crop_window)).reshape(-1)
    if window.size != 4:
        raise _errors.InvalidArgumentError(None, None, "crop_size must have four elements [%d]" % window.size)
    y, x, h, w = (int(v) for v in window)
    return _core.decode_and_crop_jpeg(_contents(contents), y, x, h, w, int(channels), int(ratio),
                                      bool(fancy_upscaling), bool(try_recover_truncated),
                                      float(acceptable_fraction), str(dct_method))


def decode_png(contents, channels=0, dtype=_dtypes.uint8, name=None):
    """tf.io.decode_png: an array [height, width, channels] of uint8 or uint16.

    Args:
      contents: the PNG file's bytes (1/2/4/8/16-bit, palette, tRNS, Adam7).
      channels: 0 (the file's), 1, 3 or 4.
      dtype: uint8 (16-bit files keep their high byte) or uint16 (8-bit
        values times 257).
    """
    del name
    return _core.decode_png(_contents(contents), int(channels), _enum(dtype))


def decode_image(contents, channels=None, dtype=_dtypes.uint8, name=None, expand_animations=True):
    """tf.io.decode_image for JPEG and PNG.

    Args:
      channels: None or 0 (the file's), 1, 3 or 4 (PNG only).
      dtype: uint8, uint16, float32 or float64; floats are scaled to [0, 1]
        as tf.image.convert_image_dtype does.
      expand_animations: accepted for TF's signature (GIF is not decoded).
    """
    del name
    return _core.decode_image(_contents(contents), int(channels or 0), _enum(dtype), bool(expand_animations))


def extract_jpeg_shape(contents, output_type=_dtypes.int32, name=None):
    """tf.io.extract_jpeg_shape: [height, width, channels] from the header
    (channels: 1 gray, 3 colour, 4 CMYK), int32 or int64."""
    del name
    return _core.extract_jpeg_shape(_contents(contents), _enum(output_type))


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,  # noqa: A002
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300,
                xmp_metadata="", name=None):
    """tf.io.encode_jpeg: the JPEG bytes of a uint8 [height, width, 1 or 3]
    image, with TF's defaults (quality 95, 4:2:0, JFIF 300 dpi)."""
    del name
    pixels = _image(image)
    if pixels.dtype != np.uint8:
        raise _errors.InvalidArgumentError(None, None, "image must be uint8, got %s" % pixels.dtype)
    if isinstance(xmp_metadata, bytes):
        xmp_metadata = xmp_metadata.decode("utf-8")
    return _core.encode_jpeg(np.ascontiguousarray(pixels), str(format), int(quality), bool(progressive),
                             bool(optimize_size), bool(chroma_downsampling), str(density_unit),
                             int(x_density), int(y_density), str(xmp_metadata))


def encode_png(image, compression=-1, name=None):
    """tf.io.encode_png: the PNG bytes of a uint8 or uint16
    [height, width, 1..4] image; compression -1 (zlib's default) or 0..9."""
    del name
    pixels = _image(image)
    if pixels.dtype not in (np.uint8, np.uint16):
        raise _errors.InvalidArgumentError(None, None, "image must be uint8 or uint16, got %s" % pixels.dtype)
    dtype = _dtypes.uint8 if pixels.dtype == np.uint8 else _dtypes.uint16
    return _core.encode_png(np.ascontiguousarray(pixels), _enum(dtype), int(compression))


def is_jpeg(contents, name=None):
    """tf.io.is_jpeg: whether ``contents`` starts with a JPEG's magic bytes."""
    del name
    return _core.is_jpeg(_contents(contents))
