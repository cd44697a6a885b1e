"""TF 1's resize ops (sluice.image.resize_images, resize_bilinear, ...) against
tf.compat.v1.image (TensorFlow 2.21 in the venv).

Tolerance: 1e-4 absolute for bilinear, bicubic and area on uint8 (0..255) and
float32 inputs; nearest neighbour exactly equal.
"""

import glob
import os

import numpy as np
import pytest

from sluice import errors
from sluice import image as simg

tf = pytest.importorskip("tensorflow")
v1 = tf.compat.v1.image

RNG = np.random.default_rng(16)
ATOL = 1e-4

# (input shape, output size): downscale, upscale, odd sizes, one axis kept,
# 1-pixel inputs and outputs, and the same size.
SHAPES = [
    ((1, 13, 17, 3), (7, 9)),
    ((2, 8, 6, 1), (19, 23)),
    ((1, 11, 10, 4), (11, 5)),
    ((1, 21, 9, 3), (8, 30)),
    ((1, 1, 1, 2), (3, 4)),
    ((1, 5, 7, 3), (1, 1)),
    ((1, 1, 9, 3), (4, 1)),
    ((1, 17, 13, 2), (17, 13)),
]
# (align_corners, half_pixel_centers)
CENTRES = [(False, False), (True, False), (False, True)]
OPS = {
    "bilinear": (simg.resize_bilinear, v1.resize_bilinear),
    "nearest": (simg.resize_nearest_neighbor, v1.resize_nearest_neighbor),
    "bicubic": (simg.resize_bicubic, v1.resize_bicubic),
}


def _inputs(shape):
    return [RNG.integers(0, 256, size=shape, dtype=np.uint8), RNG.random(shape, dtype=np.float32)]


def _check(got, want, exact):
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=0, atol=ATOL)


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("align_corners,half_pixel_centers", CENTRES)
@pytest.mark.parametrize("in_shape,size", SHAPES)
def test_resize_ops_match_tf1(op, align_corners, half_pixel_centers, in_shape, size):
    ours, theirs = OPS[op]
    for image in _inputs(in_shape):
        got = ours(image, size, align_corners=align_corners, half_pixel_centers=half_pixel_centers)
        want = theirs(image, size, align_corners=align_corners, half_pixel_centers=half_pixel_centers)
        _check(got, want, exact=op == "nearest")


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("in_shape,size", SHAPES)
def test_resize_area_matches_tf1(align_corners, in_shape, size):
    for image in _inputs(in_shape):
        _check(simg.resize_area(image, size, align_corners=align_corners),
               v1.resize_area(image, size, align_corners=align_corners), exact=False)


@pytest.mark.parametrize("method", [0, 1, 2, 3])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("in_shape,size", [((13, 17, 3), (7, 9)), ((2, 8, 6, 1), (19, 23)), ((9, 4, 3), (9, 4))])
def test_resize_images_matches_tf1(method, align_corners, in_shape, size):
    for image in _inputs(in_shape):
        got = simg.resize_images(image, size, method=method, align_corners=align_corners)
        want = v1.resize_images(image, size, method=method, align_corners=align_corners)
        _check(got, want, exact=method == 1 or tuple(size) == in_shape[-3:-1])


def test_resize_images_is_not_tf2_resize():
    # The legacy pixel centres are why TF 1 code cannot swap in resize().
    image = RNG.integers(0, 256, size=(9, 13, 3), dtype=np.uint8)
    legacy = simg.resize_images(image, (21, 30))
    _check(legacy, v1.resize_images(image, (21, 30)), exact=False)
    assert np.abs(legacy - simg.resize(image, (21, 30))).max() > 1.0


@pytest.mark.parametrize("method", [simg.ResizeMethodV1.BICUBIC, simg.ResizeMethod.BICUBIC, "bicubic", 2])
def test_resize_images_takes_v1_codes_and_v2_names(method):
    image = RNG.random((10, 7, 3), dtype=np.float32)
    _check(simg.resize_images(image, (5, 12), method=method), v1.resize_images(image, (5, 12), method=2), exact=False)


@pytest.mark.parametrize("method", [0, 1, 2, 3])
@pytest.mark.parametrize("in_shape,size", [((30, 20, 3), (10, 10)), ((2, 7, 19, 1), (40, 40)), ((8, 8, 1), (4, 9))])
def test_resize_images_preserve_aspect_ratio_matches_tf1(method, in_shape, size):
    image = RNG.integers(0, 256, size=in_shape, dtype=np.uint8)
    got = simg.resize_images(image, size, method=method, preserve_aspect_ratio=True)
    want = v1.resize_images(image, size, method=method, preserve_aspect_ratio=True)
    _check(got, want, exact=method == 1)


def test_resize_images_output_dtypes_follow_tf1():
    image = RNG.integers(0, 1000, size=(6, 5, 2)).astype(np.int16)
    assert simg.resize_images(image, (3, 3), method=1).dtype == np.int16
    for method in (0, 2, 3):
        assert simg.resize_images(image, (3, 3), method=method).dtype == np.float32
    same = simg.resize_images(image, (6, 5), method=2)  # TF returns the input unchanged
    assert same.dtype == np.int16
    np.testing.assert_array_equal(same, image)
    same[0, 0, 0] += 1
    assert same[0, 0, 0] != image[0, 0, 0]  # a copy, not the caller's array


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.int8, np.uint16, np.int32, np.int64])
def test_resize_ops_other_dtypes_match_tf1(dtype):
    image = (RNG.random((1, 7, 9, 2)) * 100).astype(dtype)
    for ours, theirs in OPS.values():
        _check(ours(image, (4, 13)), theirs(image, (4, 13)), exact=ours is simg.resize_nearest_neighbor)
    _check(simg.resize_area(image, (4, 13)), v1.resize_area(image, (4, 13)), exact=False)
    _check(simg.resize_images(image, (7, 9)), v1.resize_images(image, (7, 9)), exact=True)


def test_resize_errors_are_tf1s():
    image = RNG.integers(0, 256, size=(1, 4, 4, 1), dtype=np.uint8)
    with pytest.raises(ValueError, match="3 or 4 dimensions"):
        simg.resize_images(image[0, :, :, 0], (2, 2))
    with pytest.raises(ValueError, match="2 elements"):
        simg.resize_images(image, (2, 2, 2))
    with pytest.raises(ValueError, match="int32"):
        simg.resize_images(image, (2.5, 2))
    with pytest.raises(ValueError, match="not implemented"):
        simg.resize_images(image, (2, 2), method=4)
    with pytest.raises(ValueError, match="not implemented"):
        simg.resize_images(image, (2, 2), method="lanczos3")
    with pytest.raises(errors.InvalidArgumentError, match="output dimensions must be positive"):
        simg.resize_images(image, (0, 2))
    with pytest.raises(errors.InvalidArgumentError, match="non-zero size"):
        simg.resize_images(np.zeros((0, 4, 1), np.uint8), (2, 2))
    with pytest.raises(errors.InvalidArgumentError, match="4-dimensional"):
        simg.resize_bilinear(image[0], (2, 2))
    with pytest.raises(errors.InvalidArgumentError, match="align_corners must be False"):
        simg.resize_bicubic(image, (2, 2), align_corners=True, half_pixel_centers=True)
    with pytest.raises(errors.InvalidArgumentError):
        simg.resize_nearest_neighbor(image.astype(bool), (2, 2))


# ---- the repository's test images (tests/data) ----------------------------------------

TESTDATA = os.environ.get(
    "SLUICE_TESTDATA",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data"))
IMAGES = sorted(glob.glob(os.path.join(TESTDATA, "images", "jpeg", "pillow", "*.jpg")))[:4] + sorted(
    glob.glob(os.path.join(TESTDATA, "images", "png", "pngsuite", "basn*.png")))[:4]


@pytest.mark.parametrize("path", IMAGES, ids=os.path.basename)
def test_resize_images_matches_tf1_on_test_images(path):
    with open(path, "rb") as f:
        image = tf.io.decode_image(f.read(), channels=3, expand_animations=False).numpy()
    h, w = image.shape[:2]
    for size in ((max(1, h // 3), max(1, w // 2 + 1)), (h * 2 + 1, w + 3)):
        for method in (0, 1, 2, 3):
            for align_corners in (False, True):
                got = simg.resize_images(image, size, method=method, align_corners=align_corners)
                want = v1.resize_images(image, size, method=method, align_corners=align_corners)
                _check(got, want, exact=method == 1)


def test_the_test_images_are_found():
    assert len(IMAGES) == 8, "tests/data/images is missing files: %s" % IMAGES
