"""`sluice records make-images DIR OUT --shards N`: an ImageNet-style folder
(one sub-folder per class) into sharded TFRecord files of Examples with
TensorFlow's feature names (those of tensorflow/models' build_image_data.py):

  image/encoded       the file's bytes, as they are (JPEG or PNG)
  image/format        b"JPEG" or b"PNG"
  image/height, image/width, image/channels   from decoding the image
  image/colorspace    b"RGB", b"Grayscale", b"RGBA" or b"GrayscaleAlpha"
  image/class/label   the class's index in sorted folder order (+ --label-offset)
  image/class/text    the folder's name
  image/filename      the path below DIR

Every image is decoded once (by sluice.image, on --jobs threads) so that a
file that does not decode is reported and left out instead of breaking a
training run later.
"""

import concurrent.futures
import os
import random

from sluice import errors
from sluice import image as simage
from sluice import io as sio
from sluice.cli import _common as c

_EXTENSIONS = {".jpg": "JPEG", ".jpeg": "JPEG", ".png": "PNG"}
_COLORSPACES = {1: "Grayscale", 2: "GrayscaleAlpha", 3: "RGB", 4: "RGBA"}


def find_images(folder):
    """(classes, [(path, relative path, class index)]): the class sub-folders in sorted
    order and their image files (by extension, any depth), sorted within each class."""
    if not os.path.isdir(folder):
        raise c.UsageError("%r is not a folder of class sub-folders" % folder)
    classes = sorted(d for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d))
                     and not d.startswith("."))
    if not classes:
        raise c.UsageError("%r has no class sub-folders (expected DIR/<class>/<image>.jpg)" % folder)
    images = []
    for label, name in enumerate(classes):
        found = []
        for root, dirs, files in os.walk(os.path.join(folder, name)):
            dirs.sort()
            for f in files:
                if os.path.splitext(f)[1].lower() in _EXTENSIONS:
                    path = os.path.join(root, f)
                    found.append((path, os.path.relpath(path, folder), label))
        images += sorted(found)
    if not images:
        raise c.UsageError("%r holds no .jpg, .jpeg or .png files in its class sub-folders" % folder)
    return classes, images


def _example(path, relative, label, class_name, label_offset):
    """The serialized Example of one image, or raises the decoder's error."""
    with open(path, "rb") as f:
        encoded = f.read()
    fmt = "JPEG" if simage.is_jpeg(encoded) else "PNG"
    shape = simage.decode_image(encoded).shape
    height, width, channels = int(shape[0]), int(shape[1]), int(shape[2])
    return sio.serialize_example({
        "image/encoded": encoded,
        "image/format": fmt,
        "image/height": height,
        "image/width": width,
        "image/channels": channels,
        "image/colorspace": _COLORSPACES.get(channels, "RGB"),
        "image/class/label": label + label_offset,
        "image/class/text": class_name,
        "image/filename": relative,
    })


def cmd_make_images(args):
    from sluice.cli import _progress  # rich, imported only by the commands that draw progress
    if args.shards <= 0:
        raise c.UsageError("--shards must be > 0, got %d" % args.shards)
    classes, images = find_images(args.dir)
    if not args.no_shuffle:
        random.Random(args.seed).shuffle(images)  # classes mixed across shards, reproducibly
    shards = min(args.shards, len(images))
    names = ["%s-%05d-of-%05d" % (args.output, i, shards) for i in range(shards)]
    labels_path = args.output + ".labels.txt"  # not matched by the shards' glob OUT-*
    inputs = [p for p, _, _ in images]
    for name in names + [labels_path]:
        c.check_output_free(name, inputs, args.force)
    out_dir = os.path.dirname(os.path.abspath(args.output))
    os.makedirs(out_dir, exist_ok=True)

    def build(item):
        path, relative, label = item
        try:
            return _example(path, relative, label, classes[label], args.label_offset), None
        except (errors.OpError, OSError) as e:
            return None, "%s: %s" % (path, getattr(e, "message", None) or e)

    bounds = [len(images) * i // shards for i in range(shards + 1)]
    written, skipped, nbytes = 0, [], 0
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs))
    with _progress.Bar(total=len(images), unit="images", quiet=args.quiet) as bar:
        try:
            for shard in range(shards):
                with sio.TFRecordWriter(names[shard], _options(args.compression)) as w:
                    for record, error in pool.map(build, images[bounds[shard]:bounds[shard + 1]]):
                        if error is not None:
                            skipped.append(error)
                        else:
                            w.write(record)
                            written += 1
                            nbytes += len(record)
                        bar.advance(1, nbytes)
        finally:
            pool.shutdown()
    with open(labels_path, "w", encoding="utf-8") as f:
        for label, name in enumerate(classes):
            f.write("%d\t%s\n" % (label + args.label_offset, name))
    for error in skipped:
        c.eprint("skipped (does not decode): %s" % error)
    if not args.quiet:
        print("%d images of %d classes -> %d shard%s: %s ... (%s); labels: %s%s" % (
            written, len(classes), shards, "" if shards == 1 else "s", names[0], c.human_bytes(nbytes),
            labels_path, "; %d skipped" % len(skipped) if skipped else ""))
    return c.EXIT_DATA if skipped else c.EXIT_OK


def _options(name):
    return sio.TFRecordOptions(c.core_compression(name))


__all__ = ["cmd_make_images", "find_images"]
