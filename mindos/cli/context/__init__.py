"""CLI modules of the context dimension."""
