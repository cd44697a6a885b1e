"""sluice.image's decode limit: a forged header claiming a huge image is refused
before the image is allocated; normal images decode; the limit can be lowered
(set_decode_limit, or SLUICE_MAX_DECODE_BYTES read once per process)."""

import os
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np
import pytest

from sluice import dtypes
from sluice import errors
from sluice import image

GIB = 1 << 30


@pytest.fixture(autouse=True)
def _restore_limit():
    saved = image.get_decode_limit()
    yield
    image.set_decode_limit(saved)


def _pattern(height, width, channels):
    return (np.arange(height * width * channels) * 7 % 256).astype(np.uint8).reshape(height, width, channels)


def jpeg_claiming(width, height):
    """A 16x16 baseline JPEG whose frame header (SOF0) claims width x height."""
    data = bytearray(image.encode_jpeg(_pattern(16, 16, 3)))
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = struct.pack(">HH", height, width)
    return bytes(data)


def png_claiming(width, height):
    """A 1x1 RGBA PNG whose IHDR claims width x height, its CRC fixed up."""
    data = bytearray(image.encode_png(_pattern(1, 1, 4)))
    data[16:24] = struct.pack(">II", width, height)
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])))
    return bytes(data)


def _run(script, args=(), **env_extra):
    """Runs `script` in a fresh Python with this sluice and `env_extra` in its environment."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(image.__file__)) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("SLUICE_MAX_DECODE_BYTES", None)
    env.update(env_extra)
    return subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True, text=True,
                          timeout=120)


def test_default_limit_is_one_gibibyte():
    assert image.get_decode_limit() == GIB


def test_forged_jpeg_header_fails_with_size_and_limit():
    forged = jpeg_claiming(13000, 13000)
    assert len(forged) < 4096
    # 13000 x 13000 x 3 as float32 is 2 GB, over the default.
    with pytest.raises(errors.InvalidArgumentError) as e:
        image.decode_image(forged, dtype=dtypes.float32)
    assert e.value.message == (
        "JPEG image too large to decode: 13000x13000 (width x height) x 3 channels of float32 is 2028000000 "
        "bytes, over the decode limit of 1073741824 bytes; raise it with sluice.image.set_decode_limit(), the "
        "SLUICE_MAX_DECODE_BYTES environment variable or the max_decode_bytes option")


def test_forged_png_header_fails_with_size_and_limit():
    with pytest.raises(errors.InvalidArgumentError, match=r"PNG image too large to decode: 20000x20000 "
                       r"\(width x height\) x 4 channels of uint8 is 1600000000 bytes, over the decode limit "
                       r"of 1073741824 bytes"):
        image.decode_png(png_claiming(20000, 20000))


def test_normal_images_decode_and_a_lower_limit_rejects_them():
    jpeg = image.encode_jpeg(_pattern(40, 30, 3))
    png = image.encode_png(_pattern(40, 30, 4))
    assert image.decode_jpeg(jpeg).shape == (40, 30, 3)
    image.set_decode_limit(40 * 30 * 4)
    assert image.get_decode_limit() == 4800
    assert image.decode_png(png).shape == (40, 30, 4)  # exactly the limit
    assert image.decode_jpeg(jpeg).shape == (40, 30, 3)
    with pytest.raises(errors.InvalidArgumentError, match="of float32 is 14400 bytes, over the decode limit of 4800"):
        image.decode_image(jpeg, dtype=dtypes.float32)
    image.set_decode_limit(4799)
    with pytest.raises(errors.InvalidArgumentError, match="30x40 .width x height. x 4 channels of uint8 is 4800"):
        image.decode_png(png)
    image.set_decode_limit(3599)
    with pytest.raises(errors.InvalidArgumentError, match="is 3600 bytes, over the decode limit of 3599"):
        image.decode_and_crop_jpeg(jpeg, [0, 0, 8, 8])  # the whole image counts


def test_bad_limits_are_invalid_argument():
    for bad in (0, -1):
        with pytest.raises(errors.InvalidArgumentError, match="must be > 0"):
            image.set_decode_limit(bad)
    with pytest.raises(TypeError):
        image.set_decode_limit(1.5)
    assert image.get_decode_limit() == GIB


def test_environment_variable_sets_the_default():
    r = _run("import sluice.image as i; print(i.get_decode_limit())\n"
             "try:\n    i.decode_jpeg(i.encode_jpeg(__import__('numpy').zeros((40, 30, 3), 'uint8')))\n"
             "except Exception as e:\n    print(type(e).__name__, e)",
             SLUICE_MAX_DECODE_BYTES="1000")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "1000"
    assert lines[1].startswith("InvalidArgumentError") and "over the decode limit of 1000 bytes" in lines[1]


def test_invalid_environment_variable_fails_decodes_until_a_limit_is_set():
    r = _run("import numpy, sluice.image as i\n"
             "jpeg = i.encode_jpeg(numpy.zeros((8, 8, 3), 'uint8'))\n"
             "try:\n    i.decode_jpeg(jpeg)\nexcept Exception as e:\n    print(type(e).__name__, e)\n"
             "i.set_decode_limit(10**6); print(i.decode_jpeg(jpeg).shape)",
             SLUICE_MAX_DECODE_BYTES="12abc")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("InvalidArgumentError") and "SLUICE_MAX_DECODE_BYTES" in lines[0] and "'12abc'" in lines[0]
    assert lines[1] == "(8, 8, 3)"


def test_forged_header_allocates_nothing_large():
    # Recovering a truncated file writes every row: without the limit this
    # 13000 x 13000 claim fills 507 MB. In a fresh process, the peak resident
    # size must barely move.
    script = ("import resource, sys, sluice.image as i, sluice.errors as E\n"
              "data = open(sys.argv[1], 'rb').read()\n"
              "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
              "try:\n    i.decode_jpeg(data, try_recover_truncated=True)\n"
              "except E.InvalidArgumentError as e:\n    print('refused', e)\n"
              "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)")
    with tempfile.NamedTemporaryFile(suffix=".jpg") as f:
        f.write(jpeg_claiming(13000, 13000))
        f.flush()
        r = _run(script, [f.name], SLUICE_MAX_DECODE_BYTES=str(256 << 20))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("refused") and "507000000 bytes, over the decode limit of 268435456" in lines[0]
    assert int(lines[1]) < 32  # MiB
