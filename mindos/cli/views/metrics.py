"""The metrics command: metrics."""

from mindos.views import metrics
from mindos.cli import make_parser


def add_metrics(sub):
    p = make_parser(sub, "metrics", "autopilot.py metrics")
    p.set_defaults(handler=cmd_metrics)


def cmd_metrics(conn, args):
    from mindos.autonomy import grants, nanny  # lazy: the upper floors' counters, passed down

    return metrics.collect(conn, (grants.metrics, nanny.metrics))


COMMANDS = {
    "metrics": add_metrics,
}


# the shape of each command's output, for protocol (see mindos.cli.outputs)
OUTPUTS = {
    "metrics": "{active_leases_by_owner audit_events claims_refused_by_policy completions_blocked_by_evidence"
               " completions_without_receipt critical_path_length due_within_24h facts_closed facts_live facts_total"
               " failures_retried_total failures_terminal_total grants_active grants_refused_total"
               " handoffs_acked_total handoffs_live handoffs_total handoffs_with_recall_proof memories_live"
               " memories_retracted memories_total nanny_breakers_open nanny_ticks_total notes_consolidated_total"
               " notes_expired_live notes_pinned_live notes_superseded notes_total overdue_tasks primes_total"
               " queued_blocked_by_deps queued_deferred recalls_total receipt_files_unindexed receipts"
               " secrets_allowed_total secrets_blocked_total secrets_redacted_total session_messages_indexed"
               " sessions_indexed sessions_pruned_total sessions_resumed_total stale_leases tasks_by_status"
               " tasks_in_backoff tasks_missing_required_evidence tasks_total ...}",
}
