"""CLI modules of the recovery dimension (doctor, snapshots, archives, checkpoints, work orders, homes)."""
