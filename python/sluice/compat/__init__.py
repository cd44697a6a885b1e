"""Compatibility layers: ``sluice.compat.v1`` runs TensorFlow 1 input programs with the import changed."""
