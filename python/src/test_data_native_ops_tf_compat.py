"""sluice.data.ops element ops against TensorFlow 2's ops on the same inputs:
deterministic ops exactly or to float tolerance, random ops by the set of
values TF's op can give. Skipped without TF."""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

import sluice  # noqa: E402
from sluice import data as sd  # noqa: E402

ops = sd.ops
RS = np.random.RandomState(3)
IMAGE = RS.randint(0, 256, (6, 5, 3), dtype=np.uint8)


def one(value, *fns):
    ds = sd.Dataset.from_tensors(value)
    for f in fns:
        ds = ds.map(f)
    return [x for x in ds][0]


def test_decode_raw_matches_tf_both_endians():
    raw = RS.randint(0, 256, 24, dtype=np.uint8).tobytes()
    for dtype in (tf.uint8, tf.int16, tf.float32, tf.int64):
        for little in (True, False):
            want = tf.io.decode_raw(raw, dtype, little_endian=little).numpy()
            got = one(raw, ops.decode_raw(sluice.as_dtype(dtype.name), little_endian=little))
            np.testing.assert_array_equal(got, want)


def test_cast_reshape_transpose_one_hot_match_tf():
    x = (RS.rand(2, 3, 4) * 600 - 300).astype(np.float32)
    for dtype in (tf.int32, tf.uint8, tf.int64, tf.float64, tf.bool):
        if dtype == tf.uint8:
            continue  # out-of-range float -> uint8 is undefined in TF
        np.testing.assert_array_equal(one(x, ops.cast(sluice.as_dtype(dtype.name))), tf.cast(x, dtype).numpy())
    np.testing.assert_array_equal(one(x, ops.reshape([4, -1])), tf.reshape(x, [4, -1]).numpy())
    np.testing.assert_array_equal(one(x, ops.transpose([2, 0, 1])), tf.transpose(x, [2, 0, 1]).numpy())
    idx = np.array([[0, 3], [-1, 2]], np.int64)
    np.testing.assert_array_equal(one(idx, ops.one_hot(3)), tf.one_hot(idx, 3).numpy())


@pytest.mark.parametrize("args", [
    dict(begin=[1, 0, 0], end=[2, 3, 4]),
    dict(begin=[0, -1, 0], end=[2, 0, 4], strides=[1, -1, 2]),
    dict(begin=[1, 0, 0], end=[0, 0, 0], strides=[1, 1, 1], begin_mask=6, end_mask=6, shrink_axis_mask=1),
    dict(begin=[-5, 1, 1], end=[100, 2, -1], strides=[2, 1, 1]),
])
def test_strided_slice_matches_tf(args):
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    np.testing.assert_array_equal(one(x, ops.strided_slice(**args)), tf.strided_slice(x, **args).numpy())
    np.testing.assert_array_equal(one(x, ops.slice([1, 1, 0], [1, -1, 2])), tf.slice(x, [1, 1, 0], [1, -1, 2]).numpy())


def test_image_ops_match_tf_to_float_tolerance():
    f = IMAGE.astype(np.float32)
    np.testing.assert_allclose(one(IMAGE, ops.per_image_standardization()),
                               tf.image.per_image_standardization(IMAGE).numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(one(IMAGE, ops.resize([4, 7])), tf.image.resize(IMAGE, [4, 7]).numpy(), atol=2e-4)
    want = (f / 255 - 0.5) / 0.25
    np.testing.assert_allclose(one(IMAGE, ops.normalize(0.5, 0.25)), want, rtol=1e-5, atol=1e-5)


def test_random_ops_give_values_tf_can_give():
    f = IMAGE.astype(np.float32)
    for seed in range(4):
        flip = one(IMAGE, ops.random_flip_left_right(seed=seed))
        assert any(np.array_equal(flip, w) for w in (IMAGE, tf.image.flip_left_right(IMAGE).numpy()))
        flip = one(IMAGE, ops.random_flip_up_down(seed=seed))
        assert any(np.array_equal(flip, w) for w in (IMAGE, tf.image.flip_up_down(IMAGE).numpy()))
        crop = one(IMAGE, ops.random_crop([3, 2, 3], seed=seed))
        windows = [IMAGE[y:y + 3, x:x + 2] for y in range(4) for x in range(4)]
        assert any(np.array_equal(crop, w) for w in windows)
        bright = one(f, ops.random_brightness(10, seed=seed))
        delta = float(bright[0, 0, 0] - f[0, 0, 0])
        assert -10 <= delta < 10
        np.testing.assert_allclose(bright, tf.image.adjust_brightness(f, delta).numpy(), atol=1e-3)
        contrast = one(f, ops.random_contrast(0.5, 1.5, seed=seed))
        mean = f.mean(axis=(0, 1))
        factor = float((contrast[0, 0, 0] - mean[0]) / (f[0, 0, 0] - mean[0]))
        assert 0.5 - 1e-4 <= factor < 1.5 + 1e-4
        np.testing.assert_allclose(contrast, tf.image.adjust_contrast(f, factor).numpy(), rtol=1e-3, atol=1e-2)
