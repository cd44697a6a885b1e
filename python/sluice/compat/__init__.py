"""Compatibility layers: ``sluice.compat.v1`` runs TensorFlow 1 input programs with the import changed."""

from sluice.compat import v1  # noqa: F401
