// Replaced by the ops layer.
