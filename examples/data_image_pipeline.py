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
import sys
import tempfile
import time

try:
    import sluice
    from sluice import data as sd
    from sluice import io as sio
    from synthetic_images import MEAN, STD, check_rows, generate
except ImportError as e:  # sluice is not built/installed for this Python
    print("skipped: cannot import sluice (%s)" % e)
    sys.exit(77)


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
    check_rows(images, labels, ids, args, seen, problems)
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
