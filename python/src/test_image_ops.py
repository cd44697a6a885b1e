"""sluice.image transforms against tf.image (TensorFlow 2.21 in the venv).

Tolerances (absolute): resize 2e-3 on 0..255 inputs and 1e-5 on [0, 1]
inputs (float32 rounding in another summation order); geometric ops,
nearest resize and convert_image_dtype exact; colour ops 1e-5 on floats and
+-1 on uint8; per_image_standardization 1e-5.
"""

import numpy as np
import pytest

from sluice import errors
from sluice import image as simg

tf = pytest.importorskip("tensorflow")

RNG = np.random.default_rng(0)


def _u8(*shape):
    return RNG.integers(0, 256, size=shape, dtype=np.uint8)


def _f32(*shape):
    return RNG.random(shape, dtype=np.float32)


METHODS = ["bilinear", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic"]
SHAPES = [((13, 17, 3), (7, 9)), ((8, 6, 1), (19, 23)), ((2, 11, 10, 3), (11, 5)), ((21, 9, 3), (8, 30))]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("in_shape,size", SHAPES)
def test_resize_matches_tf(method, antialias, in_shape, size):
    for image, atol in ((_u8(*in_shape), 2e-3), (_f32(*in_shape), 1e-5)):
        got = simg.resize(image, size, method=method, antialias=antialias)
        want = tf.image.resize(image, size, method=method, antialias=antialias).numpy()
        assert got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=0, atol=atol)


@pytest.mark.parametrize("in_shape,size", SHAPES)
def test_resize_nearest_is_exact_and_keeps_dtype(in_shape, size):
    image = _u8(*in_shape)
    got = simg.resize(image, size, method=simg.ResizeMethod.NEAREST_NEIGHBOR)
    want = tf.image.resize(image, size, method="nearest").numpy()
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, want)


def test_resize_other_dtypes_and_aspect_ratio():
    image = RNG.integers(-1000, 1000, size=(9, 14, 2)).astype(np.int32)
    np.testing.assert_allclose(simg.resize(image, (5, 6)), tf.image.resize(image, (5, 6)).numpy(), atol=1e-2)
    got = simg.resize(_u8(30, 20, 3), (10, 10), preserve_aspect_ratio=True)
    assert got.shape == tf.image.resize(_u8(30, 20, 3), (10, 10), preserve_aspect_ratio=True).shape


@pytest.mark.parametrize("shape,target", [((10, 20, 3), (16, 16)), ((3, 7, 5, 1), (9, 4))])
def test_resize_with_pad_matches_tf(shape, target):
    image = _u8(*shape)
    got = simg.resize_with_pad(image, *target)
    want = tf.image.resize_with_pad(image, *target).numpy()
    np.testing.assert_allclose(got, want, atol=2e-3)


def test_resize_errors():
    with pytest.raises(errors.InvalidArgumentError, match="resize"):
        simg.resize(_u8(4, 4), (2, 2))
    with pytest.raises(errors.InvalidArgumentError, match="must be positive"):
        simg.resize(_u8(4, 4, 1), (0, 2))
    with pytest.raises(ValueError):
        simg.resize(_u8(4, 4, 1), (2, 2), method="cubic")


@pytest.mark.parametrize("shape", [(5, 7, 3), (2, 4, 6, 1)])
def test_geometry_matches_tf_exactly(shape):
    image = _u8(*shape)
    np.testing.assert_array_equal(simg.flip_left_right(image), tf.image.flip_left_right(image).numpy())
    np.testing.assert_array_equal(simg.flip_up_down(image), tf.image.flip_up_down(image).numpy())
    np.testing.assert_array_equal(simg.transpose(image), tf.image.transpose(image).numpy())
    for k in range(-1, 5):
        np.testing.assert_array_equal(simg.rot90(image, k), tf.image.rot90(image, k).numpy())
    np.testing.assert_array_equal(simg.crop_to_bounding_box(image, 1, 2, 3, 4),
                                  tf.image.crop_to_bounding_box(image, 1, 2, 3, 4).numpy())
    np.testing.assert_array_equal(simg.pad_to_bounding_box(image, 1, 2, 9, 11),
                                  tf.image.pad_to_bounding_box(image, 1, 2, 9, 11).numpy())
    for fraction in (0.3, 0.5, 0.77, 1.0):
        np.testing.assert_array_equal(simg.central_crop(image, fraction),
                                      tf.image.central_crop(image, fraction).numpy())


def test_geometry_errors():
    with pytest.raises(errors.InvalidArgumentError, match="height must be >= target \\+ offset"):
        simg.crop_to_bounding_box(_u8(4, 4, 1), 2, 0, 3, 1)
    with pytest.raises(ValueError):
        simg.central_crop(_u8(4, 4, 1), 0.0)


def test_random_geometry_is_reproducible():
    image = _u8(12, 15, 3)
    a = simg.random_crop(image, (5, 6, 3), seed=3)
    np.testing.assert_array_equal(a, simg.random_crop(image, (5, 6, 3), seed=3))
    windows = [image[y:y + 5, x:x + 6] for y in range(8) for x in range(10)]
    assert any(np.array_equal(a, w) for w in windows)
    with pytest.raises(errors.InvalidArgumentError):
        simg.random_crop(image, (13, 6, 3), seed=1)
    batch = _u8(16, 3, 4, 1)
    f = simg.random_flip_left_right(batch, seed=9)
    np.testing.assert_array_equal(f, simg.random_flip_left_right(batch, seed=9))
    flipped = [np.array_equal(f[i], batch[i, :, ::-1]) for i in range(16)]
    same = [np.array_equal(f[i], batch[i]) for i in range(16)]
    assert all(a or b for a, b in zip(flipped, same)) and 0 < sum(flipped) < 16
    g = simg.random_flip_up_down(batch, seed=9)
    assert all(np.array_equal(g[i], batch[i]) or np.array_equal(g[i], batch[i, ::-1]) for i in range(16))


CONVERT_TYPES = [np.uint8, np.int8, np.uint16, np.int16, np.int32, np.float32, np.float64]


@pytest.mark.parametrize("src", CONVERT_TYPES)
@pytest.mark.parametrize("dst", CONVERT_TYPES)
def test_convert_image_dtype_matches_tf(src, dst):
    if np.issubdtype(src, np.integer):
        info = np.iinfo(src)
        image = RNG.integers(info.min, info.max, size=(4, 5, 3), endpoint=True).astype(src)
    else:
        image = RNG.random((4, 5, 3)).astype(src)
    for saturate in (False, True):
        got = simg.convert_image_dtype(image, dst, saturate=saturate)
        want = tf.image.convert_image_dtype(image, dst, saturate=saturate).numpy()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def _close(got, want, image):
    assert got.dtype == want.dtype and got.shape == want.shape
    if image.dtype == np.uint8:
        assert np.max(np.abs(got.astype(np.int32) - want.astype(np.int32))) <= 1
    else:
        np.testing.assert_allclose(got, want, atol=1e-5)


@pytest.mark.parametrize("image", [_u8(6, 7, 3), _f32(2, 5, 4, 3)], ids=["uint8", "float32-batch"])
def test_colour_ops_match_tf(image):
    _close(simg.adjust_brightness(image, 0.13), tf.image.adjust_brightness(image, 0.13).numpy(), image)
    _close(simg.adjust_brightness(image, -0.3), tf.image.adjust_brightness(image, -0.3).numpy(), image)
    _close(simg.adjust_contrast(image, 1.7), tf.image.adjust_contrast(image, 1.7).numpy(), image)
    _close(simg.adjust_saturation(image, 0.4), tf.image.adjust_saturation(image, 0.4).numpy(), image)
    _close(simg.adjust_saturation(image, 2.5), tf.image.adjust_saturation(image, 2.5).numpy(), image)
    for delta in (-0.7, 0.05, 0.45):
        _close(simg.adjust_hue(image, delta), tf.image.adjust_hue(image, delta).numpy(), image)
    _close(simg.adjust_gamma(image, 0.6, 1.1), tf.image.adjust_gamma(image, 0.6, 1.1).numpy(), image)
    _close(simg.rgb_to_grayscale(image), tf.image.rgb_to_grayscale(image).numpy(), image)
    gray = simg.rgb_to_grayscale(image)
    np.testing.assert_array_equal(simg.grayscale_to_rgb(gray), tf.image.grayscale_to_rgb(tf.constant(gray)).numpy())


def test_hsv_matches_tf():
    image = _f32(3, 8, 9, 3)
    image[0, 0, 0] = [0.5, 0.5, 0.5]  # grey: hue 0
    hsv = simg.rgb_to_hsv(image)
    np.testing.assert_allclose(hsv, tf.image.rgb_to_hsv(image).numpy(), atol=1e-6)
    np.testing.assert_allclose(simg.hsv_to_rgb(hsv), tf.image.hsv_to_rgb(hsv).numpy(), atol=1e-6)
    np.testing.assert_allclose(simg.hsv_to_rgb(hsv), image, atol=1e-5)
    with pytest.raises(errors.InvalidArgumentError):
        simg.rgb_to_hsv(_u8(2, 2, 3))


def test_random_colour_ops_are_reproducible_and_checked():
    image = _u8(5, 6, 3)
    for fn, args in ((simg.random_brightness, (0.2,)), (simg.random_contrast, (0.5, 1.5)),
                     (simg.random_saturation, (0.5, 1.5)), (simg.random_hue, (0.3,))):
        np.testing.assert_array_equal(fn(image, *args, seed=11), fn(image, *args, seed=11))
        assert any(not np.array_equal(fn(image, *args, seed=11), fn(image, *args, seed=s)) for s in range(12, 20))
    with pytest.raises(ValueError, match="max_delta must be <= 0.5."):
        simg.random_hue(image, 0.6)
    with pytest.raises(ValueError, match="upper must be > lower."):
        simg.random_contrast(image, 1.0, 0.5)


@pytest.mark.parametrize("image", [_u8(7, 9, 3), _f32(3, 4, 5, 1)], ids=["uint8", "float32-batch"])
def test_per_image_standardization_matches_tf(image):
    got = simg.per_image_standardization(image)
    want = tf.image.per_image_standardization(image).numpy()
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_normalize():
    image = _u8(2, 6, 5, 3)
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    want = (image.astype(np.float32) / 255 - np.float32(mean)) / np.float32(std)
    np.testing.assert_allclose(simg.normalize(image, mean, std), want, atol=1e-5)
    np.testing.assert_allclose(simg.normalize(image, mean, std, data_format="CHW"), want.transpose(0, 3, 1, 2),
                               atol=1e-5)
    with pytest.raises(errors.InvalidArgumentError, match="'mean'"):
        simg.normalize(image, [0.1, 0.2], std)


@pytest.mark.parametrize("method", ["bilinear", "bicubic", "area", "nearest"])
def test_resize_flip_normalize_equals_composition(method):
    image = _u8(40, 50, 3)
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    got = simg.resize_flip_normalize(image, (24, 20), mean, std, method=method, crop=(3, 4, 30, 41), flip=True)
    resized = tf.image.resize(image[3:33, 4:45], (24, 20), method=method).numpy().astype(np.float32)
    want = (resized[:, ::-1] / 255 - np.float32(mean)) / np.float32(std)
    np.testing.assert_allclose(got, want.transpose(2, 0, 1), atol=5e-5)


def test_sample_distorted_bounding_box():
    boxes = np.array([[[0.1, 0.2, 0.6, 0.7]]], np.float32)
    seen = set()
    for seed in range(40):
        begin, size, bbox = simg.sample_distorted_bounding_box(
            (120, 160, 3), boxes, seed=seed, min_object_covered=0.5, area_range=(0.1, 1.0))
        again = simg.sample_distorted_bounding_box(
            (120, 160, 3), boxes, seed=seed, min_object_covered=0.5, area_range=(0.1, 1.0))
        np.testing.assert_array_equal(begin, again[0])
        assert begin.dtype == np.int32 and size.dtype == np.int32 and bbox.shape == (1, 1, 4)
        y, x, h, w = begin[0], begin[1], size[0], size[1]
        assert begin[2] == 0 and size[2] == -1
        assert 0 <= y and y + h <= 120 and 0 <= x and x + w <= 160
        assert h * w >= 0.1 * 120 * 160 - 1e-3
        oy = max(0, min(72, y + h) - max(12, y))
        ox = max(0, min(112, x + w) - max(32, x))
        assert oy * ox >= 0.5 * 60 * 80
        np.testing.assert_allclose(bbox[0, 0], [y / 120, x / 160, (y + h) / 120, (x + w) / 160], atol=1e-6)
        seen.add((int(y), int(x), int(h), int(w)))
    assert len(seen) > 10
    with pytest.raises(errors.InvalidArgumentError, match="use_image_if_no_bounding_boxes"):
        simg.sample_distorted_bounding_box((10, 10, 3), np.zeros((1, 0, 4), np.float32))


# ---- decode_random_resized_crop -------------------------------------------------

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32)


def _photo_jpeg(h=120, w=160):
    y, x = np.mgrid[0:h, 0:w]
    image = np.stack([(x * 255 // w), (y * 255 // h), ((x + y) % 64) * 4], axis=-1).astype(np.uint8)
    return tf.io.encode_jpeg(image, quality=90).numpy()


@pytest.mark.parametrize("data_format", ["CHW", "HWC"])
def test_decode_random_resized_crop_equals_tf_composition(data_format):
    contents = _photo_jpeg()
    flips = set()
    for seed in range(8):
        y, x, h, w, flip = simg.sample_random_resized_crop((120, 160), seed=seed)
        flips.add(flip)
        got = simg.decode_random_resized_crop(contents, 64, data_format=data_format, seed=seed)
        crop = tf.image.decode_and_crop_jpeg(contents, [y, x, h, w], channels=3)
        want = tf.image.resize(crop, [64, 64]) / 255.0
        if flip:
            want = tf.image.flip_left_right(want)
        want = ((want.numpy() - IMAGENET_MEAN) / IMAGENET_STD).astype(np.float32)
        if data_format == "CHW":
            want = want.transpose(2, 0, 1)
        assert got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)
    assert flips == {False, True}


def test_decode_random_resized_crop_seed_size_and_flip():
    contents = _photo_jpeg()
    a = simg.decode_random_resized_crop(contents, (32, 48), seed=5)
    assert a.shape == (3, 32, 48)
    np.testing.assert_array_equal(a, simg.decode_random_resized_crop(contents, (32, 48), seed=5))
    assert not np.array_equal(a, simg.decode_random_resized_crop(contents, (32, 48), seed=6))
    for seed in range(10):
        assert simg.sample_random_resized_crop((120, 160), seed=seed, flip_probability=0.0)[4] is False
    y, x, h, w, _ = simg.sample_random_resized_crop((120, 160), scale=(0.25, 0.25), ratio=(1.0, 1.0), seed=1)
    assert (h, w) == (69, 69)  # round(sqrt(0.25 * 120 * 160))
    assert 0 <= y <= 120 - h and 0 <= x <= 160 - w


def test_decode_random_resized_crop_png_and_errors():
    image = _u8(40, 50, 3)
    png = tf.io.encode_png(image).numpy()
    y, x, h, w, flip = simg.sample_random_resized_crop((40, 50), seed=3)
    got = simg.decode_random_resized_crop(png, 16, mean=0.5, std=0.25, data_format="HWC", seed=3, antialias=True)
    want = tf.image.resize(image[y:y + h, x:x + w], [16, 16], antialias=True) / 255.0
    if flip:
        want = tf.image.flip_left_right(want)
    np.testing.assert_allclose(got, (want.numpy() - 0.5) / 0.25, rtol=0, atol=1e-4)
    contents = _photo_jpeg()
    with pytest.raises(errors.InvalidArgumentError):
        simg.decode_random_resized_crop(contents[: len(contents) // 2], 16, seed=1)
    with pytest.raises(errors.InvalidArgumentError, match="Unknown image file format"):
        simg.decode_random_resized_crop(b"definitely not an image", 16, seed=1)
    with pytest.raises(errors.InvalidArgumentError, match="scale"):
        simg.decode_random_resized_crop(contents, 16, scale=(0.9, 0.1), seed=1)
    with pytest.raises(ValueError, match="sampler"):
        simg.decode_random_resized_crop(contents, 16, sampler="pil", seed=1)
