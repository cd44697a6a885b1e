"""A small PyTorch training loop fed by sluice.data (see docs/data-torch-jax.md).

    sluice.data.Dataset.from_tensor_slices((features, labels))
      -> .shuffle(N, seed) -> .batch(B) -> .repeat(E) -> .prefetch(2)
      -> sluice.torch.IterableDataset -> torch DataLoader(batch_size=None)   (no workers, no copies)
      -> a 2-layer MLP trained with SGD on a generated, linearly separable problem

Checks that the loss fell and the model learnt the rule (accuracy > 0.9 on
the data); prints OK and exits 0, non-zero on a failed check, 77 (ctest's
"skipped") without PyTorch or sluice.

    python examples/torch_train.py [--samples N] [--batch N] [--epochs N]
"""

import argparse
import sys

import numpy as np

try:
    import torch
except ImportError:
    print("skipped: PyTorch is not installed")
    sys.exit(77)
try:
    import sluice
    import sluice.torch
except ImportError as e:
    print("skipped: cannot import sluice (%s)" % e)
    sys.exit(77)


def make_data(samples):
    """Features ~ N(0, 1) in 8 dims; label 1 where a fixed weighted sum is positive."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(samples, 8)).astype(np.float32)
    y = (x @ np.linspace(-1.0, 1.0, 8, dtype=np.float32) > 0).astype(np.int64)
    return x, y


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--samples", type=int, default=512)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--epochs", type=int, default=5)
    args = p.parse_args()

    x, y = make_data(args.samples)
    dataset = (sluice.data.Dataset.from_tensor_slices((x, y))
               .shuffle(args.samples, seed=1)
               .batch(args.batch)
               .repeat(args.epochs)
               .prefetch(2))
    # batch_size=None: sluice batches; no workers: sluice's threads do the work.
    loader = torch.utils.data.DataLoader(sluice.torch.IterableDataset(dataset), batch_size=None)

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
    loss_fn = torch.nn.CrossEntropyLoss()
    losses = []
    for features, labels in loader:  # torch tensors over sluice's buffers
        optimizer.zero_grad()
        loss = loss_fn(model(features), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())

    with torch.no_grad():
        accuracy = (model(torch.from_numpy(x)).argmax(dim=1).numpy() == y).mean()
    steps_per_epoch = -(-args.samples // args.batch)
    first, last = np.mean(losses[:steps_per_epoch]), np.mean(losses[-steps_per_epoch:])
    print("steps: %d, loss %.3f -> %.3f, accuracy %.3f" % (len(losses), first, last, accuracy))
    if len(losses) == steps_per_epoch * args.epochs and last < first and accuracy > 0.9:
        print("OK")
        return 0
    print("check FAILED")
    return 1


if __name__ == "__main__":
    sys.exit(main())
