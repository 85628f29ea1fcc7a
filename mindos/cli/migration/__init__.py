"""CLI modules of the migration dimension (inventories, imports, rollback, onboarding, the brain)."""
