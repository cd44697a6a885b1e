"""The image training input pipeline of examples/image_pipeline.cc, from Python.

    TFRecord files of tf.train.Examples {image: JPEG bytes, label, id}
      -> train.string_input_producer(files, num_epochs=E, shuffle=True)
      -> T TFRecordReaders (train.read_producer, one per runner thread)
      -> .map_parse_example(...) -> .map_random_resized_crop(224, flip=True, ImageNet mean/std)
      -> train.shuffle_batch_join (T C++ threads)
      -> a training loop under a train.Coordinator, which ends at the last epoch

Every stage after the reader runs in C++ on the batcher's threads without the
GIL; Python only sees finished batches. The data is generated (numpy pixels,
coloured by class, encoded with sluice.image.encode_jpeg) into a temporary
folder. The run checks that every image id arrived exactly E times with its
label, that the batches have the declared shapes, and that each crop still
has its class's colour; it prints images/s and exits non-zero on a failed
check (77, ctest's "skipped", when the installed sluice lacks the native
image stages).

    python examples/image_pipeline.py [--images N] [--files N] [--epochs N]
        [--threads N] [--batch N] [--size N] [--width N] [--height N] [--quiet]
"""

import argparse
import collections
import sys
import tempfile
import time

import numpy as np

try:
    from sluice import errors
    from sluice import io as sio
    from sluice import train
    from synthetic_images import MEAN, STD, check_rows, generate
except ImportError as e:  # sluice is not built/installed for this Python
    print("skipped: cannot import sluice (%s)" % e)
    sys.exit(77)

if not hasattr(train.NativeProducer, "map_random_resized_crop"):
    print("skipped: this sluice has no native image stages")
    sys.exit(77)


def build(files, args):
    filenames = train.string_input_producer(files, num_epochs=args.epochs, shuffle=True, seed=7)
    features = {"image": sio.FixedLenFeature([], np.bytes_), "label": sio.FixedLenFeature([], np.int64),
                "id": sio.FixedLenFeature([], np.int64)}
    chains = [train.read_producer(sio.TFRecordReader(), filenames)
              .map_parse_example(features)
              .map_random_resized_crop(args.size, flip=True, mean=MEAN, std=STD, data_format="CHW", seed=t + 1)
              for t in range(args.threads)]
    return train.shuffle_batch_join(chains, batch_size=args.batch, capacity=4 * args.batch + 64,
                                    min_after_dequeue=2 * args.batch, seed=3)


def check(batch, args, seen, problems):
    images, labels, ids = batch["image"], batch["label"], batch["id"]
    if images.shape != (args.batch, 3, args.size, args.size) or labels.shape != (args.batch,):
        problems["bad shapes"] += 1
        return
    check_rows(images, labels, ids, args, seen, problems)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for flag, default in [("images", 512), ("files", 4), ("epochs", 2), ("threads", 2), ("batch", 32),
                          ("size", 224), ("width", 500), ("height", 375)]:
        p.add_argument("--" + flag, type=int, default=default)
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args()

    with tempfile.TemporaryDirectory(prefix="sluice_image_pipeline_") as folder:
        files = generate(folder, args)
        train.clear_queue_runners()
        batches = build(files, args)
        coord = train.Coordinator()
        start = time.perf_counter()
        threads = train.start_queue_runners(coord=coord)
        seen = collections.Counter()
        problems = collections.Counter()
        n = 0
        try:
            while not coord.should_stop():  # the training loop
                batch = batches.dequeue()   # OutOfRangeError after the last epoch
                check(batch, args, seen, problems)
                n += args.batch
        except errors.OutOfRangeError:
            coord.request_stop()  # a clean stop: the input is exhausted
        coord.join(threads, stop_grace_period_secs=30)
        seconds = time.perf_counter() - start

    expected = args.images * args.epochs // args.batch * args.batch
    print("images/s: %.1f (%d images of %dx%d, %d epochs, %d threads, %.3f s)"
          % (n / seconds, n, args.size, args.size, args.epochs, args.threads, seconds))
    dropped = args.images * args.epochs - expected
    over = sum(max(0, c - args.epochs) for c in seen.values())
    missing = sum(max(0, args.epochs - seen[i]) for i in range(args.images))
    if n == expected and missing == dropped and over == 0 and not problems:
        print("check: %d images (every id %d times but the %d of the dropped final partial batch), labels, "
              "shapes and colours: OK" % (n, args.epochs, dropped))
        return 0
    print("check FAILED: %d images (want %d), %d missing, %d extra, %s" % (n, expected, missing, over,
                                                                        dict(problems)))
    return 1


if __name__ == "__main__":
    sys.exit(main())
