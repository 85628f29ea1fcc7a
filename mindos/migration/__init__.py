"""Migration and onboarding: bring an old home, machine or installation into this one,
verifiably, and undo it.

One concept per module: ``inventory`` (migrate-inventory: read-only discovery under a root,
sealed), ``importer`` (migrate-import: an Autopilot database merged into this home),
``steps`` (the plan's later steps: memory-import, hermes-register, archive-copy),
``rollback`` (migrate-rollback: undo exactly what one import added), ``onboard`` (one
command from a sealed inventory to a verified home, as a class of stages), and the brain
pair ``brain_inventory`` / ``brain_import`` (the whole installation's manifest and the
import of its non-execution surfaces); shared by them: ``documents`` (the sealed documents'
``--out`` check, seal-and-write and read, written once).

Core functions here return results and never decide exit codes: each result carries its
verdict (``fail_closed``, ``ok``, ``health.ok``) and the command in :mod:`mindos.cli.migration`
turns it into one.  The package sits above ``recovery`` (it uses its sealed artifacts,
row checks and doctor) and below ``autonomy``.
"""
