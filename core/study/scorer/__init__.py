"""Learned scorers (SPEC §7): scikit-learn regression from a response's text to a score in [-1, 1],
trained on consensus labels; training, metrics against the human ceiling, and a fast predictor."""
