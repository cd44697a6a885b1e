"""The synthetic images and checks shared by examples/image_pipeline.py and data_image_pipeline.py.

Image i is coloured by its class (i % CLASSES): its red channel sits at
red_of_class(label) +-4, green and blue are textured, so a crop of any box
still shows the class. generate() writes them as JPEGs in TFRecord files of
tf.train.Examples {image, label, id}; check_rows() checks a batch's ids,
labels and colours (the C++ examples share examples/common/synthetic_images.h).
"""

import os

import numpy as np

from sluice import image as simage
from sluice import io as sio

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
CLASSES = 10


def red_of_class(label):
    return 16 + 20 * label


def make_image(i, height, width, rng):
    """Image `i`: red at its class's level (+-4), textured green and blue."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    phase = (i % 97) * 0.37
    img = np.empty((height, width, 3), np.uint8)
    img[..., 0] = red_of_class(i % CLASSES) + rng.integers(-4, 5, (height, width))
    g = 128 + 90 * np.sin(x * 0.031 + phase) * np.cos(y * 0.023 - phase) + rng.integers(-12, 13, (height, width))
    b = 128 + 90 * np.sin((x + y) * 0.017 + 2 * phase) + rng.integers(-12, 13, (height, width))
    img[..., 1] = np.clip(g, 0, 255)
    img[..., 2] = np.clip(b, 0, 255)
    return img


def generate(folder, args):
    """args.images images of args.height x args.width in args.files TFRecord files under `folder`."""
    rng = np.random.default_rng(0)
    files = [os.path.join(folder, "train-%05d-of-%05d.tfrecord" % (f, args.files)) for f in range(args.files)]
    writers = [sio.TFRecordWriter(f) for f in files]
    for i in range(args.images):
        jpeg = simage.encode_jpeg(make_image(i, args.height, args.width, rng), quality=90)
        writers[i % args.files].write(sio.serialize_example({"image": jpeg, "label": i % CLASSES, "id": i}))
    for w in writers:
        w.close()
    return files


def check_rows(images, labels, ids, args, seen, problems):
    """Counts each id in `seen` and each wrong label or colour in `problems` (CHW crops)."""
    # The mean of every 4th pixel of every 4th row: enough to see the colour, and cheap.
    red = (images[:, 0, ::4, ::4].mean(axis=(1, 2)) * STD[0] + MEAN[0]) * 255.0
    for i, label, level in zip(ids.tolist(), labels.tolist(), red.tolist()):
        if not 0 <= i < args.images or label != i % CLASSES:
            problems["wrong labels"] += 1
            continue
        seen[i] += 1
        if abs(level - red_of_class(label)) > 8:
            problems["wrong colours"] += 1
