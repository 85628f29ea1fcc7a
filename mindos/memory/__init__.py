"""Semantic memory, the temporal fact graph and retrieval quality."""
