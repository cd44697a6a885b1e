"""Peers of the train suite (bench/run.sh train): the same image training
input pipeline as examples/image_pipeline.cc, over the same files, in

  tf         TensorFlow's own queue pipeline (tf.compat.v1 graph mode):
             string_input_producer(num_epochs) -> one TFRecordReader per
             thread -> parse_single_example -> extract_jpeg_shape ->
             sample_distorted_bounding_box(area (0.08, 1), ratio (3/4, 4/3))
             -> decode_and_crop_jpeg -> resize (bilinear) to 224x224 ->
             random_flip_left_right -> (x / 255 - mean) / std -> CHW ->
             shuffle_batch_join(batch 32), QueueRunners under a
             Coordinator; the session's intra/inter-op pools sized to the
             thread count.
  torch      PyTorch's DataLoader over the ImageFolder tree of the same
             JPEGs (jpeg/<label>/<id>.jpg), num_workers = threads,
             persistent_workers (when there are workers), batch 32, shuffle. torchvision is not
             installed, so its transforms are written out here as torchvision
             implements them on PIL images: RandomResizedCrop(224) (get_params'
             sampling; PIL crop + bilinear resize, which filters like
             antialias), RandomHorizontalFlip, ToTensor, Normalize (ImageNet).
             The first epoch warms the workers up and is not timed.
  sluice_py  sluice's Python API (examples/image_pipeline.py's pipeline): the
             same C++ stages as the C++ example, driven from Python.

Each prints one JSON line {"peer", "threads", "images", "seconds",
"images_per_s"}; --json appends them to a file. Timing covers start of the
runners (TF, sluice) or of the first timed epoch (torch) to the last batch.
"""

import argparse
import glob
import json
import math
import os
import random
import sys
import time

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def tf_random_resized_crop(tf, encoded, size):
    """The TF peers' augmentation of one JPEG string: a float32 [3, size, size] crop (also
    bench/py_data_image_bench.py's tf.data peer)."""
    shape = tf.image.extract_jpeg_shape(encoded)
    begin, box_size, _ = tf.image.sample_distorted_bounding_box(
        shape, tf.zeros([0, 0, 4]), min_object_covered=0.0, aspect_ratio_range=(3 / 4, 4 / 3),
        area_range=(0.08, 1.0), max_attempts=10, use_image_if_no_bounding_boxes=True)
    window = tf.stack([begin[0], begin[1], box_size[0], box_size[1]])
    img = tf.image.decode_and_crop_jpeg(encoded, window, channels=3)
    img = tf.compat.v1.image.resize_bilinear(img[None], [size, size])[0]
    img = tf.image.random_flip_left_right(img)
    img = (img / 255.0 - tf.constant(MEAN)) / tf.constant(STD)
    img = tf.transpose(img, [2, 0, 1])
    img.set_shape([3, size, size])
    return img


def tf_queue(files, threads, epochs, batch, size):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf  # noqa: PLC0415
    v1 = tf.compat.v1
    v1.disable_eager_execution()
    graph = tf.Graph()
    with graph.as_default():
        filenames = v1.train.string_input_producer(files, num_epochs=epochs, shuffle=True, seed=7)
        features = {"image": v1.FixedLenFeature([], tf.string), "label": v1.FixedLenFeature([], tf.int64),
                    "id": v1.FixedLenFeature([], tf.int64)}
        examples = []
        for _ in range(threads):
            _, value = v1.TFRecordReader().read(filenames)
            ex = v1.parse_single_example(value, features)
            examples.append([tf_random_resized_crop(tf, ex["image"], size), ex["label"], ex["id"]])
        images, _, _ = v1.train.shuffle_batch_join(examples, batch_size=batch, capacity=4 * batch + 64,
                                                   min_after_dequeue=2 * batch, seed=3)
        init = [v1.global_variables_initializer(), v1.local_variables_initializer()]
    config = v1.ConfigProto(intra_op_parallelism_threads=threads, inter_op_parallelism_threads=threads)
    with v1.Session(graph=graph, config=config) as sess:
        sess.run(init)
        coord = v1.train.Coordinator()
        start = time.perf_counter()
        qr_threads = v1.train.start_queue_runners(sess=sess, coord=coord)
        n = 0
        try:
            while not coord.should_stop():
                n += sess.run(images).shape[0]
        except tf.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
        seconds = time.perf_counter() - start
        coord.join(qr_threads)
    return n, seconds


# ---- torchvision's transforms, written out (torchvision is not installed) ----

def _rrc_params(width, height, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3)):
    """torchvision.transforms.RandomResizedCrop.get_params: (top, left, h, w)."""
    area = height * width
    log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
    for _ in range(10):
        target_area = area * random.uniform(scale[0], scale[1])
        aspect = math.exp(random.uniform(*log_ratio))
        w = int(round(math.sqrt(target_area * aspect)))
        h = int(round(math.sqrt(target_area / aspect)))
        if 0 < w <= width and 0 < h <= height:
            return random.randint(0, height - h), random.randint(0, width - w), h, w
    in_ratio = width / height
    if in_ratio < min(ratio):
        w, h = width, int(round(width / min(ratio)))
    elif in_ratio > max(ratio):
        h, w = height, int(round(height * max(ratio)))
    else:
        w, h = width, height
    return (height - h) // 2, (width - w) // 2, h, w


class _ImageFolderTrain:
    """ImageFolder(root, transform=Compose([RandomResizedCrop, RandomHorizontalFlip, ToTensor, Normalize]))."""

    def __init__(self, root, size):
        classes = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
        self.samples = [(p, i) for i, c in enumerate(classes) for p in sorted(glob.glob(os.path.join(root, c, "*")))]
        self.size = size

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, index):
        import numpy as np  # noqa: PLC0415
        import torch  # noqa: PLC0415
        from PIL import Image  # noqa: PLC0415
        path, label = self.samples[index]
        with open(path, "rb") as f:
            img = Image.open(f).convert("RGB")  # torchvision's pil_loader
        top, left, h, w = _rrc_params(*img.size)
        img = img.resize((self.size, self.size), Image.BILINEAR, box=(left, top, left + w, top + h))
        if random.random() < 0.5:
            img = img.transpose(Image.FLIP_LEFT_RIGHT)
        t = torch.from_numpy(np.asarray(img, dtype=np.uint8).copy()).permute(2, 0, 1).float().div_(255)  # ToTensor
        t = t.sub_(torch.tensor(MEAN).view(3, 1, 1)).div_(torch.tensor(STD).view(3, 1, 1))  # Normalize
        return t, label


def torch_dataloader(jpeg_root, threads, epochs, batch, size):
    import torch  # noqa: PLC0415
    from torch.utils.data import DataLoader  # noqa: PLC0415
    torch.set_num_threads(1)
    loader = DataLoader(_ImageFolderTrain(jpeg_root, size), batch_size=batch, shuffle=True, num_workers=threads,
                        persistent_workers=threads > 0, drop_last=True)
    for _ in loader:  # warm-up epoch: starts the workers
        pass
    n = 0
    start = time.perf_counter()
    for _ in range(epochs):
        for images, _labels in loader:
            n += images.shape[0]
    return n, time.perf_counter() - start


def sluice_py(files, threads, epochs, batch, size):
    import numpy as np  # noqa: PLC0415
    from sluice import errors  # noqa: PLC0415
    from sluice import io as sio  # noqa: PLC0415
    from sluice import train  # noqa: PLC0415
    train.clear_queue_runners()
    filenames = train.string_input_producer(files, num_epochs=epochs, shuffle=True, seed=7)
    features = {"image": sio.FixedLenFeature([], np.bytes_), "label": sio.FixedLenFeature([], np.int64),
                "id": sio.FixedLenFeature([], np.int64)}
    chains = [train.read_producer(sio.TFRecordReader(), filenames).map_parse_example(features)
              .map_random_resized_crop(size, mean=MEAN, std=STD, seed=t + 1) for t in range(threads)]
    bq = train.shuffle_batch_join(chains, batch_size=batch, capacity=4 * batch + 64, min_after_dequeue=2 * batch,
                                  seed=3)
    coord = train.Coordinator()
    start = time.perf_counter()
    qr = train.start_queue_runners(coord=coord)
    n = 0
    try:
        while not coord.should_stop():
            n += bq.dequeue()["image"].shape[0]
    except errors.OutOfRangeError:
        coord.request_stop()
    seconds = time.perf_counter() - start
    coord.join(qr, stop_grace_period_secs=30)
    return n, seconds


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("peer", choices=["tf", "torch", "sluice_py"])
    p.add_argument("--data-dir", required=True, help="image_pipeline --data-dir (with --write-jpegs for torch)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--json")
    args = p.parse_args()
    files = sorted(glob.glob(os.path.join(args.data_dir, "*.tfrecord")))
    if args.peer == "tf":
        n, seconds = tf_queue(files, args.threads, args.epochs, args.batch, args.size)
    elif args.peer == "torch":
        n, seconds = torch_dataloader(os.path.join(args.data_dir, "jpeg"), args.threads, args.epochs, args.batch,
                                      args.size)
    else:
        n, seconds = sluice_py(files, args.threads, args.epochs, args.batch, args.size)
    row = {"peer": args.peer, "threads": args.threads, "images": n, "seconds": seconds,
           "images_per_s": n / seconds}
    print(json.dumps(row))
    if args.json:
        with open(args.json, "a") as f:
            f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
