"""Toy encoders for the semantic layer's plug-in point (MINDOS_EMBEDDER=embedders:<name>)."""


def letters(texts):
    """A 3-number vector per text: its length, its count of 'a', and 1."""
    return [[float(len(text)), float(text.count("a")), 1.0] for text in texts]


def short(texts):
    """One vector too few."""
    return [[1.0, 2.0] for _ in texts[1:]]


def ragged(texts):
    """Vectors of unequal lengths."""
    return [[1.0] * (1 + n % 2) for n, _ in enumerate(texts)]


def nan(texts):
    """A non-finite number."""
    return [[float("nan"), 1.0] for _ in texts]


def boom(texts):
    raise RuntimeError("the model is not loaded")


NOT_CALLABLE = 42
