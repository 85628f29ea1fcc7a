"""CLI modules of the memory dimension."""
