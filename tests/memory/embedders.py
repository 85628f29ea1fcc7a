"""Toy encoders for the semantic layer's plug-in point (MINDOS_EMBEDDER=embedders:<name>)."""


def letters(texts):
    """A 3-number vector per text: its length, its count of 'a', and 1."""
    return [[float(len(text)), float(text.count("a")), 1.0] for text in texts]


def brokers(texts):
    """Close to the query "kafka consumers lag" only for texts naming a broker."""
    return [[1.0, 0.0] if "broker" in text or text == "kafka consumers lag" else [0.0, 1.0] for text in texts]


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
