"""sluice's image codecs (bind_image_codec.cc, sluice/_image_codec.py) against
TensorFlow 2 on the test images of tests/data (tests/data/SOURCES.md §3).

Every comparison with TensorFlow is exact: sluice makes the same libjpeg /
libpng calls with the same settings, so the pixels are the same. Errors must
be the same class (InvalidArgumentError). The TF tests are skipped when
TensorFlow is not installed.
"""

import glob
import os

import numpy as np
import pytest

import sluice
from sluice import errors

TESTDATA = os.environ.get(
    "SLUICE_TESTDATA",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data"))
IMAGES = os.path.join(TESTDATA, "images")
JPEGS = sorted(glob.glob(os.path.join(IMAGES, "jpeg", "**", "*.jpg"), recursive=True))
PNGS = sorted(glob.glob(os.path.join(IMAGES, "**", "*.png"), recursive=True))


def test_test_images_are_found():
    # tests/data is part of the repository: missing images fail here rather
    # than leaving the parametrized tests below with nothing to run.
    assert JPEGS and PNGS, "no test images under %s" % IMAGES


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _rel(path):
    return os.path.relpath(path, IMAGES)


@pytest.fixture(scope="module")
def tf():
    tf = pytest.importorskip("tensorflow")
    return tf


def _same(tf, sluice_fn, tf_fn, what):
    """sluice_fn() equals tf_fn() exactly, or both raise InvalidArgument."""
    try:
        want = tf_fn().numpy()
    except tf.errors.InvalidArgumentError:
        with pytest.raises(errors.InvalidArgumentError):
            sluice_fn()
        return "error"
    got = sluice_fn()
    assert got.dtype == want.dtype, what
    assert got.shape == want.shape, what
    np.testing.assert_array_equal(got, want, err_msg=what)
    return "ok"


# ---- without TensorFlow -----------------------------------------------------

def test_exported_from_image_and_io():
    for name in sluice._image_codec.__all__:
        assert getattr(sluice.image, name) is getattr(sluice.io, name)


def test_decode_jpeg_shapes_and_dtype():
    img = sluice.image.decode_jpeg(_read(os.path.join(IMAGES, "jpeg/pillow/hopper.jpg")))
    assert img.dtype == np.uint8 and img.shape == (128, 128, 3)
    gray = sluice.io.decode_jpeg(_read(os.path.join(IMAGES, "jpeg/pillow/hopper_gray.jpg")), channels=3)
    assert gray.shape == (128, 128, 3)
    np.testing.assert_array_equal(gray[..., 0], gray[..., 2])


def test_contents_may_be_bytes_like():
    data = _read(os.path.join(IMAGES, "png/pngsuite/basn2c08.png"))
    want = sluice.io.decode_png(data)
    for wrapped in (bytearray(data), memoryview(data), np.bytes_(data), np.array(data, dtype=object)):
        np.testing.assert_array_equal(sluice.io.decode_png(wrapped), want)
    with pytest.raises(TypeError):
        sluice.io.decode_png("a str is not bytes")


def test_corrupt_inputs_raise_invalid_argument_naming_the_problem():
    cases = {
        "jpeg/jpeg-decoder/crashtest/missing-sos.jpg": "missing SOS marker",
        "jpeg/jpeg-decoder/crashtest/missing-sof.jpg": "JPEG header",
        "jpeg/pillow/truncated_jpeg.jpg": "Premature end of JPEG data",
        "png/libpng_crashers/badcrc.png": "CRC",
        "png/libpng_crashers/badadler.png": "PNG data",
        "png/pillow/truncated_image.png": "truncated",
    }
    for rel, words in cases.items():
        with pytest.raises(errors.InvalidArgumentError, match=words):
            sluice.io.decode_image(_read(os.path.join(IMAGES, rel)))
    with pytest.raises(errors.InvalidArgumentError, match="Input is empty"):
        sluice.io.decode_jpeg(b"")
    with pytest.raises(errors.InvalidArgumentError, match="Unknown image file format"):
        sluice.io.decode_image(b"GIF89a\x01\x00\x01\x00\x00\x00\x00;")
    with pytest.raises(errors.InvalidArgumentError, match="crop_size must have four elements"):
        sluice.image.decode_and_crop_jpeg(_read(JPEGS[0]), [0, 0, 5])


def test_png_round_trip_is_exact():
    rng = np.random.default_rng(0)
    for dtype in (np.uint8, np.uint16):
        for c in (1, 2, 3, 4):
            img = rng.integers(0, np.iinfo(dtype).max, size=(7, 9, c), dtype=dtype)
            back = sluice.io.decode_png(sluice.io.encode_png(img), dtype=dtype)
            np.testing.assert_array_equal(back, img)


def test_decoded_array_owns_its_memory():
    img = sluice.io.decode_png(_read(os.path.join(IMAGES, "png/pngsuite/basn0g08.png")))
    img[0, 0, 0] = 7  # the only reference: writable
    assert img[0, 0, 0] == 7


# ---- against TensorFlow -------------------------------------------------------

@pytest.mark.parametrize("path", JPEGS, ids=_rel)
def test_decode_jpeg_equals_tf_for_every_option(tf, path):
    data = _read(path)
    outcomes = set()
    for channels in (0, 1, 3):
        for ratio in (1, 2, 4, 8):
            for dct in ("", "INTEGER_FAST", "INTEGER_ACCURATE"):
                for fancy in (True, False):
                    what = "%s channels=%d ratio=%d dct=%r fancy=%s" % (_rel(path), channels, ratio, dct, fancy)
                    outcomes.add(_same(
                        tf,
                        lambda: sluice.io.decode_jpeg(data, channels=channels, ratio=ratio, dct_method=dct,
                                                      fancy_upscaling=fancy),
                        lambda: tf.io.decode_jpeg(data, channels=channels, ratio=ratio, dct_method=dct,
                                                  fancy_upscaling=fancy),
                        what))
        _same(tf, lambda: sluice.io.decode_image(data, channels=channels),
              lambda: tf.io.decode_image(data, channels=channels), "decode_image " + _rel(path))
    assert outcomes, path


@pytest.mark.parametrize("path", PNGS, ids=_rel)
def test_decode_png_equals_tf(tf, path):
    data = _read(path)
    for channels in (0, 1, 3, 4):
        for dtype in ("uint8", "uint16"):
            what = "%s channels=%d %s" % (_rel(path), channels, dtype)
            _same(tf, lambda: sluice.io.decode_png(data, channels=channels, dtype=dtype),
                  lambda: tf.io.decode_png(data, channels=channels, dtype=getattr(tf, dtype)), what)
            _same(tf, lambda: sluice.io.decode_image(data, channels=channels, dtype=dtype),
                  lambda: tf.io.decode_image(data, channels=channels, dtype=getattr(tf, dtype)),
                  "decode_image " + what)


@pytest.mark.parametrize("rel", ["png/pngsuite/basn2c16.png", "png/pngsuite/basn4a08.png",
                                 "png/pillow/hopper.png", "jpeg/pillow/hopper.jpg",
                                 "jpeg/pillow/pil_sample_cmyk.jpg"])
@pytest.mark.parametrize("dtype", ["uint16", "float32", "float64"])
def test_decode_image_dtypes_equal_tf(tf, rel, dtype):
    data = _read(os.path.join(IMAGES, rel))
    _same(tf, lambda: sluice.io.decode_image(data, dtype=dtype),
          lambda: tf.io.decode_image(data, dtype=getattr(tf, dtype)), "%s %s" % (rel, dtype))


def test_decoders_accept_the_other_format_as_tf(tf):
    png = _read(os.path.join(IMAGES, "png/pillow/p_trns_single.png"))
    jpeg = _read(os.path.join(IMAGES, "jpeg/pillow/hopper.jpg"))
    _same(tf, lambda: sluice.io.decode_jpeg(png), lambda: tf.io.decode_jpeg(png), "png as jpeg")
    _same(tf, lambda: sluice.io.decode_png(jpeg, dtype="uint16"),
          lambda: tf.io.decode_png(jpeg, dtype=tf.uint16), "jpeg as png")
    _same(tf, lambda: sluice.image.decode_and_crop_jpeg(png, [0, 0, 4, 4]),
          lambda: tf.image.decode_and_crop_jpeg(png, [0, 0, 4, 4]), "crop of a png")


@pytest.mark.parametrize("path", [p for p in JPEGS if "crashtest" not in p and "truncated" not in p], ids=_rel)
def test_decode_and_crop_jpeg_equals_tf(tf, path):
    data = _read(path)
    rng = np.random.default_rng(len(data))
    for ratio in (1, 2, 4, 8):
        for channels in (0, 1, 3):
            for fancy in (True, False):
                try:
                    h, w = tf.io.decode_jpeg(data, ratio=ratio, channels=channels).shape[:2]
                except tf.errors.InvalidArgumentError:
                    continue  # CMYK to gray
                windows = [[0, 0, h, w], [h - 1, w - 1, 1, 1]]
                for _ in range(6):
                    y, x = int(rng.integers(0, h)), int(rng.integers(0, w))
                    windows.append([y, x, int(rng.integers(1, h - y + 1)), int(rng.integers(1, w - x + 1))])
                windows += [[0, 0, h + 1, w], [0, 1, h, w], [-1, 0, 1, 1], [0, 0, 0, 1]]  # invalid
                for win in windows:
                    what = "%s ratio=%d channels=%d fancy=%s window=%s" % (_rel(path), ratio, channels, fancy, win)
                    _same(tf,
                          lambda: sluice.image.decode_and_crop_jpeg(data, win, channels=channels, ratio=ratio,
                                                                    fancy_upscaling=fancy),
                          lambda: tf.image.decode_and_crop_jpeg(data, win, channels=channels, ratio=ratio,
                                                                fancy_upscaling=fancy),
                          what)


@pytest.mark.parametrize("rel", ["jpeg/pillow/hopper.jpg", "jpeg/jpeg-decoder/restarts.jpg",
                                 "jpeg/pillow/truncated_jpeg.jpg"])
def test_truncated_jpeg_equals_tf(tf, rel):
    """Exact for acceptable_fraction (rows kept, the rest zero, or an error).

    With try_recover_truncated, libjpeg itself invents the missing data, and
    TF's bundled libjpeg-turbo 2.1.4 does that differently from the 2.1.5
    sluice links in the MCU row where the data ends (and, for a progressive
    file, wherever a scan is incomplete). There the test asks for the same
    shape, and for baseline files the same pixels outside that one band.
    """
    full = _read(os.path.join(IMAGES, rel))
    progressive = "truncated_jpeg" in rel
    cuts = sorted({0, 2, 100, 300, len(full) // 3, len(full) // 2, len(full) - 200, len(full) - 2, len(full)})
    for cut in cuts:
        data = full[:cut]
        for fraction in (1.0, 0.5, 0.0):
            what = "%s cut=%d fraction=%s" % (rel, cut, fraction)
            _same(tf, lambda: sluice.io.decode_jpeg(data, acceptable_fraction=fraction),
                  lambda: tf.io.decode_jpeg(data, acceptable_fraction=fraction), what)
            try:
                want = tf.io.decode_jpeg(data, try_recover_truncated=True, acceptable_fraction=fraction).numpy()
            except tf.errors.InvalidArgumentError:
                with pytest.raises(errors.InvalidArgumentError):
                    sluice.io.decode_jpeg(data, try_recover_truncated=True, acceptable_fraction=fraction)
                continue
            got = sluice.io.decode_jpeg(data, try_recover_truncated=True, acceptable_fraction=fraction)
            assert got.shape == want.shape, what
            rows = np.nonzero((got != want).any(axis=(1, 2)))[0]
            if len(rows) and not progressive:
                assert rows.max() - rows.min() < 24, what + " rows %s" % rows


def test_extract_jpeg_shape_and_is_jpeg_equal_tf(tf):
    for path in JPEGS + PNGS:
        data = _read(path)
        assert sluice.io.is_jpeg(data) == bool(tf.io.is_jpeg(data)), path
        if "crashtest" in path or path.endswith(".png"):
            with pytest.raises(errors.InvalidArgumentError):
                sluice.io.extract_jpeg_shape(data)
            continue
        for out in ("int32", "int64"):
            got = sluice.io.extract_jpeg_shape(data, output_type=out)
            want = tf.io.extract_jpeg_shape(data, output_type=getattr(tf, out)).numpy()
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want, err_msg=path)


def test_encode_jpeg_output_decodes_in_tf(tf):
    rng = np.random.default_rng(1)
    y, x = np.mgrid[0:40, 0:56]
    rgb = np.stack([x * 4, y * 5, (x + y) * 2], axis=-1).astype(np.uint8)
    images = [rgb, rgb[..., :1], rng.integers(0, 255, (9, 13, 3), dtype=np.uint8)]
    for img in images:
        for kwargs in ({}, {"quality": 50}, {"progressive": True}, {"optimize_size": True},
                       {"chroma_downsampling": False}, {"density_unit": "cm", "x_density": 72, "y_density": 96},
                       {"xmp_metadata": "<x/>"}):
            ours = sluice.io.encode_jpeg(img, **kwargs)
            theirs = tf.io.encode_jpeg(img, **kwargs).numpy()
            decoded = tf.io.decode_jpeg(ours).numpy()
            assert decoded.shape == img.shape
            # Same encoder settings and library: TF decodes both to the same pixels.
            np.testing.assert_array_equal(decoded, tf.io.decode_jpeg(theirs).numpy(), err_msg=str(kwargs))
            np.testing.assert_array_equal(sluice.io.decode_jpeg(ours), decoded)


def test_encode_png_output_decodes_in_tf(tf):
    rng = np.random.default_rng(2)
    for dtype in (np.uint8, np.uint16):
        for c in (1, 2, 3, 4):
            img = rng.integers(0, np.iinfo(dtype).max, size=(6, 11, c), dtype=dtype)
            for compression in (-1, 0, 9):
                back = tf.io.decode_png(sluice.io.encode_png(img, compression=compression),
                                        dtype=tf.as_dtype(dtype)).numpy()
                np.testing.assert_array_equal(back, img)


def test_bad_arguments_raise_like_tf(tf):
    data = _read(os.path.join(IMAGES, "jpeg/pillow/hopper.jpg"))
    for kwargs in ({"channels": 2}, {"channels": 4}, {"ratio": 3}, {"dct_method": "FOO"}):
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.io.decode_jpeg(data, **kwargs)
        with pytest.raises(errors.InvalidArgumentError):
            sluice.io.decode_jpeg(data, **kwargs)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.io.encode_jpeg(np.zeros((2, 2, 2), np.uint8))
    for img in (np.zeros((2, 2, 2), np.uint8), np.zeros((2, 2, 3), np.float32)):
        with pytest.raises(errors.InvalidArgumentError):
            sluice.io.encode_jpeg(img)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.io.encode_png(np.zeros((2, 2, 5), np.uint8))
    with pytest.raises(errors.InvalidArgumentError):
        sluice.io.encode_png(np.zeros((2, 2, 5), np.uint8))
