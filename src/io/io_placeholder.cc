// Replaced by the io layer.
