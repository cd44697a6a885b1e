"""The ImageNet-style training input pipeline with sluice.data (tf.data's API), from Python.

    TFRecord files of tf.train.Examples {image: JPEG bytes, label, id}
      -> sluice.data.TFRecordDataset(files, num_parallel_reads=F)
      -> .shuffle(4 * B, seed) -> .repeat(E)
      -> .map(sluice.data.ops.parse_example(features), num_parallel_calls=T)
      -> .map(sluice.data.ops.random_resized_crop(S, flip, ImageNet mean/std, CHW), num_parallel_calls=T)
      -> .batch(B) -> .prefetch(2)
      -> a training loop: `for batch in dataset`

The native map functions run on C++ threads without the GIL; Python only
sees finished batches (numpy arrays over sluice's buffers). The data is
generated (numpy pixels coloured by class, encoded with
sluice.image.encode_jpeg) in a temporary folder. The run checks that every
image id arrived exactly E times with its label, that the batches have the
declared shapes, and that each crop still has its class's colour; it prints
images/s and exits non-zero on a failed check (77, ctest's "skipped", when
sluice cannot be imported).

    python examples/data_image_pipeline.py [--images N] [--files N] [--epochs N]
        [--threads N] [--batch N] [--size N] [--width N] [--height N] [--quiet]
"""

import argparse
import collections
import os
import sys
import tempfile
import time

import numpy as np

try:
    import sluice
    from sluice import data as sd
    from sluice import image as simage
    from sluice import io as sio
except ImportError as e:  # sluice is not built/installed for this Python
    print("skipped: cannot import sluice (%s)" % e)
    sys.exit(77)

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
    rng = np.random.default_rng(0)
    files = [os.path.join(folder, "train-%05d-of-%05d.tfrecord" % (f, args.files)) for f in range(args.files)]
    writers = [sio.TFRecordWriter(f) for f in files]
    for i in range(args.images):
        jpeg = simage.encode_jpeg(make_image(i, args.height, args.width, rng), quality=90)
        writers[i % args.files].write(sio.serialize_example({"image": jpeg, "label": i % CLASSES, "id": i}))
    for w in writers:
        w.close()
    return files


def build(files, args):
    features = {"image": sio.FixedLenFeature([], sluice.string), "label": sio.FixedLenFeature([], sluice.int64),
                "id": sio.FixedLenFeature([], sluice.int64)}
    return (sd.TFRecordDataset(files, num_parallel_reads=args.files)
            .shuffle(4 * args.batch, seed=7)
            .repeat(args.epochs)
            .map(sd.ops.parse_example(features), num_parallel_calls=args.threads)
            .map(sd.ops.random_resized_crop(size=args.size, component="image", flip=True, mean=MEAN, std=STD,
                                            data_format="CHW", seed=1),
                 num_parallel_calls=args.threads)
            .batch(args.batch)
            .prefetch(2))


def check(batch, args, seen, problems):
    images, labels, ids = batch["image"], batch["label"], batch["id"]
    n = len(ids)
    if not 1 <= n <= args.batch or images.shape != (n, 3, args.size, args.size) or labels.shape != (n,):
        problems["bad shapes"] += 1
        return 0
    red = (images[:, 0, ::4, ::4].mean(axis=(1, 2)) * STD[0] + MEAN[0]) * 255.0
    for i, label, level in zip(ids.tolist(), labels.tolist(), red.tolist()):
        if not 0 <= i < args.images or label != i % CLASSES:
            problems["wrong labels"] += 1
            continue
        seen[i] += 1
        if abs(level - red_of_class(label)) > 8:
            problems["wrong colours"] += 1
    return n


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for flag, default in [("images", 256), ("files", 4), ("epochs", 2), ("threads", 2), ("batch", 32),
                          ("size", 224), ("width", 500), ("height", 375)]:
        p.add_argument("--" + flag, type=int, default=default)
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args()

    with tempfile.TemporaryDirectory(prefix="sluice_data_image_pipeline_") as folder:
        dataset = build(generate(folder, args), args)
        if not args.quiet:
            print("element_spec:", dataset.element_spec)
        seen = collections.Counter()
        problems = collections.Counter()
        n = 0
        start = time.perf_counter()
        for batch in dataset:  # the training loop
            n += check(batch, args, seen, problems)
        seconds = time.perf_counter() - start

    print("images/s: %.1f (%d images of %dx%d, %d epochs, %d threads, %.3f s)"
          % (n / seconds, n, args.size, args.size, args.epochs, args.threads, seconds))
    wrong_counts = sum(seen[i] != args.epochs for i in range(args.images))
    if n == args.images * args.epochs and wrong_counts == 0 and not problems:
        print("check: %d images (every id %d times), labels, shapes and colours: OK" % (n, args.epochs))
        return 0
    print("check FAILED: %d images (want %d), %d ids not seen %d times, %s"
          % (n, args.images * args.epochs, wrong_counts, args.epochs, dict(problems)))
    return 1


if __name__ == "__main__":
    sys.exit(main())
