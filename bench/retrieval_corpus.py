"""The retrieval-quality corpus: realistic notes, memories, facts and handoffs across six
projects (plus fleet-wide rows), and 122 labelled queries of six kinds.

Rows are ``(key, surface, project, text)``; a fact's text is ``"subject predicate object"``
and a project fact is linked (--task) to a task of its project.  ``project`` '' means
fleet-wide (memories and facts only).  ``REPLACED`` lists ``(old_key, new_key)``: the old
row is loaded first and then replaced the way each surface replaces rows (supersede-note,
memory-forget --superseded-by, fact-retract + a new assertion, a superseding handoff).

Queries are ``(kind, text, project, expected_keys, outdated_key)``: the rows a careful
person would expect in the top 5 when asking from that project (None = no project), and for
temporal queries the outdated row that must lose to its replacement.
"""

PROJECTS = ("Auth", "Billing", "Search", "Mobile", "Infra", "Data")

ROWS = (
    # Auth
    ("auth.session_ttl", "memory", "Auth", "Auth sessions expire after 30 days of inactivity"),
    ("auth.jwt_rotation", "note", "Auth", "JWT signing keys are rotated every 90 days by the key-rotation cron job"),
    ("auth.mfa", "note", "Auth", "Multi-factor authentication is mandatory for admin accounts"),
    ("auth.db", "fact", "Auth", "service-auth uses postgres-15"),
    ("auth.ratelimit", "memory", "Auth", "Login endpoint is throttled to 10 attempts per minute per IP"),
    ("auth.oauth", "handoff", "Auth", "Integrated OAuth provider for Google sign in; callback URL configured"),
    ("auth.password_hash", "note", "Auth", "Passwords are hashed with argon2id, memory cost 64 MB"),
    ("auth.owner", "fact", "Auth", "service-auth owned-by team-identity"),
    ("auth.cookie", "memory", "Auth", "Session cookies are httponly and secure with SameSite=Lax"),
    ("auth.outage", "note", "Auth", "Outage on March 3 was caused by an expired TLS certificate on the auth gateway"),
    ("auth.redis_old", "memory", "Auth", "Auth token cache runs on redis 6"),
    ("auth.redis_new", "memory", "Auth", "Auth token cache runs on redis 7 cluster"),
    ("auth.lockout_old", "note", "Auth", "Accounts lock after 5 failed logins"),
    ("auth.lockout_new", "note", "Auth", "Accounts lock after 10 failed logins for 15 minutes"),
    # Billing
    ("bill.invoice_cron", "note", "Billing", "Invoices are generated nightly at 02:00 UTC by the billing scheduler"),
    ("bill.psp_old", "fact", "Billing", "service-billing uses braintree-api"),
    ("bill.stripe", "fact", "Billing", "service-billing uses stripe-api"),
    ("bill.currency", "memory", "Billing", "All amounts are stored in minor units (cents) as integers"),
    ("bill.refunds", "handoff", "Billing", "Refund workflow migrated to async queue; idempotency keys verified"),
    ("bill.tax", "note", "Billing", "VAT is calculated by the tax-engine service for EU customers"),
    ("bill.db", "fact", "Billing", "service-billing uses mysql-8"),
    ("bill.retry", "memory", "Billing", "Failed card payments are retried three times over seven days"),
    ("bill.export", "note", "Billing", "Monthly revenue export to the data warehouse runs on the first day of the month"),
    ("bill.ratelimit", "memory", "Billing", "Stripe webhooks are throttled at 100 requests per second"),
    ("bill.session", "memory", "Billing", "Billing portal sessions expire after 15 minutes"),
    ("bill.plan_old", "note", "Billing", "Pro plan costs 20 dollars per month"),
    ("bill.plan_new", "note", "Billing", "Pro plan costs 25 dollars per month since June"),
    # Search
    ("search.index", "note", "Search", "Search index is rebuilt incrementally every 5 minutes from the change stream"),
    ("search.engine", "fact", "Search", "service-search uses elasticsearch-8"),
    ("search.synonyms", "memory", "Search", "Product search applies a synonym list maintained by the merchandising team"),
    ("search.latency", "note", "Search", "p99 query latency target is 150 ms for the search API"),
    ("search.sharding", "handoff", "Search", "Resharded the product index to 12 shards; reindex verified against row counts"),
    ("search.typo", "memory", "Search", "Fuzzy matching tolerates one typo for words longer than four letters"),
    ("search.cache", "note", "Search", "Popular query results are cached for 60 seconds in the edge cache"),
    ("search.owner", "fact", "Search", "service-search owned-by team-discovery"),
    ("search.ranker_old", "memory", "Search", "Ranking uses BM25 with default parameters"),
    ("search.ranker_new", "memory", "Search", "Ranking uses BM25 plus a learned reranker since v3"),
    ("search.k_old", "note", "Search", "Index refresh interval is 30 seconds"),
    ("search.k_new", "note", "Search", "Index refresh interval is 5 seconds"),
    # Mobile
    ("mob.release", "note", "Mobile", "iOS app releases go through TestFlight beta for one week"),
    ("mob.crash", "handoff", "Mobile", "Fixed crash on Android 14 when camera permission is denied"),
    ("mob.push", "memory", "Mobile", "Push notifications are sent through Firebase Cloud Messaging"),
    ("mob.minversion", "fact", "Mobile", "app-ios requires ios-16"),
    ("mob.offline", "note", "Mobile", "Offline mode stores the last 50 orders in SQLite on the device"),
    ("mob.analytics", "memory", "Mobile", "Analytics events are batched and uploaded every 30 seconds"),
    ("mob.deeplink", "note", "Mobile", "Deep links use universal links on iOS and app links on Android"),
    ("mob.session", "memory", "Mobile", "Mobile login sessions last 90 days with refresh tokens"),
    ("mob.sdk_old", "fact", "Mobile", "app-android targets sdk-33"),
    ("mob.sdk_new", "fact", "Mobile", "app-android targets sdk-34"),
    ("mob.flag_old", "memory", "Mobile", "Dark mode is behind a feature flag"),
    ("mob.flag_new", "memory", "Mobile", "Dark mode is enabled for all users"),
    # Infra
    ("infra.k8s", "note", "Infra", "Production runs on Kubernetes 1.29 across three availability zones"),
    ("infra.ci", "memory", "Infra", "CI pipeline runs on GitHub Actions with self-hosted runners"),
    ("infra.backup", "note", "Infra", "Database backups are taken every 6 hours and kept for 30 days"),
    ("infra.dns", "fact", "Infra", "api-gateway resolves-via route53"),
    ("infra.deploy", "handoff", "Infra", "Rolled out canary deployment strategy with 5 percent traffic shift"),
    ("infra.monitor", "memory", "Infra", "Alerts page the on-call engineer through PagerDuty after 5 minutes"),
    ("infra.cert", "note", "Infra", "TLS certificates are renewed automatically by cert-manager 30 days before expiry"),
    ("infra.lb", "fact", "Infra", "api-gateway uses nginx-ingress"),
    ("infra.cost", "note", "Infra", "Spot instances are used for batch workers to cut compute cost"),
    ("infra.pg_old", "fact", "Infra", "cluster-main runs postgres-13"),
    ("infra.pg_new", "fact", "Infra", "cluster-main runs postgres-16"),
    ("infra.region_old", "memory", "Infra", "Primary region is us-east-1"),
    ("infra.region_new", "memory", "Infra", "Primary region is eu-west-1 after the migration"),
    # Data
    ("data.etl", "note", "Data", "Nightly ETL loads orders into the warehouse with dbt models"),
    ("data.warehouse", "fact", "Data", "pipeline-orders writes-to snowflake"),
    ("data.retention", "memory", "Data", "Raw event data is retained for 13 months then deleted"),
    ("data.schema", "handoff", "Data", "Migrated the events table to a partitioned schema by day"),
    ("data.airflow", "note", "Data", "Airflow schedules the ingestion jobs every hour"),
    ("data.pii", "memory", "Data", "Personal data columns are masked in the analytics replica"),
    ("data.quality", "note", "Data", "Data quality checks fail the pipeline when null rate exceeds 2 percent"),
    ("data.backfill", "note", "Data", "Backfilling a month of events takes about four hours"),
    ("data.spark_old", "note", "Data", "Batch jobs run on Spark 2.4"),
    ("data.spark_new", "note", "Data", "Batch jobs run on Spark 3.5"),
    ("data.sla_old", "memory", "Data", "Dashboard data is refreshed every 24 hours"),
    ("data.sla_new", "memory", "Data", "Dashboard data is refreshed every hour"),
    # fleet-wide
    ("fleet.codereview", "memory", "", "Every pull request needs one approving review before merge"),
    ("fleet.oncall", "memory", "", "On-call rotation changes every Monday at 10:00 UTC"),
    ("fleet.python", "fact", "", "toolchain uses python-3.11"),
)

REPLACED = (
    ("auth.redis_old", "auth.redis_new"),
    ("auth.lockout_old", "auth.lockout_new"),
    ("bill.psp_old", "bill.stripe"),
    ("bill.plan_old", "bill.plan_new"),
    ("search.ranker_old", "search.ranker_new"),
    ("search.k_old", "search.k_new"),
    ("mob.sdk_old", "mob.sdk_new"),
    ("mob.flag_old", "mob.flag_new"),
    ("infra.pg_old", "infra.pg_new"),
    ("infra.region_old", "infra.region_new"),
    ("data.spark_old", "data.spark_new"),
    ("data.sla_old", "data.sla_new"),
)

Q = []


def _q(kind, project, text, expected, outdated=None):
    Q.append((kind, text, project, tuple(expected.split()), outdated))


# exact: the row's own words
_q("exact", "Auth", "JWT signing keys rotated", "auth.jwt_rotation")
_q("exact", "Auth", "argon2id password hashing", "auth.password_hash")
_q("exact", "Billing", "invoices generated nightly", "bill.invoice_cron")
_q("exact", "Billing", "VAT tax-engine EU customers", "bill.tax")
_q("exact", "Search", "search index rebuilt incrementally", "search.index")
_q("exact", "Search", "edge cache popular query results", "search.cache")
_q("exact", "Mobile", "TestFlight beta", "mob.release")
_q("exact", "Mobile", "Firebase Cloud Messaging push notifications", "mob.push")
_q("exact", "Infra", "GitHub Actions self-hosted runners", "infra.ci")
_q("exact", "Infra", "PagerDuty on-call alerts", "infra.monitor")
_q("exact", "Infra", "cert-manager renews TLS certificates", "infra.cert")
_q("exact", "Data", "dbt models warehouse", "data.etl")
_q("exact", "Data", "Airflow ingestion jobs", "data.airflow")
_q("exact", "Data", "null rate data quality checks", "data.quality")
_q("exact", "Auth", "multi-factor authentication admin accounts", "auth.mfa")
_q("exact", "Billing", "minor units cents integers", "bill.currency")
_q("exact", "Search", "fuzzy matching typo", "search.typo")
_q("exact", "Mobile", "universal links app links", "mob.deeplink")
_q("exact", "Infra", "spot instances batch workers", "infra.cost")
_q("exact", None, "approving review before merge", "fleet.codereview")

# morphological and partial words
_q("morphological", "Auth", "rotating signing key", "auth.jwt_rotation")
_q("morphological", "Auth", "hash passwords", "auth.password_hash")
_q("morphological", "Billing", "generating invoice", "bill.invoice_cron")
_q("morphological", "Billing", "retrying failed payment", "bill.retry")
_q("morphological", "Search", "rebuilding the indexes", "search.index")
_q("morphological", "Search", "caching query result", "search.cache")
_q("morphological", "Mobile", "releasing the iOS apps", "mob.release")
_q("morphological", "Mobile", "crashes on android", "mob.crash")
_q("morphological", "Infra", "renewing certificate", "infra.cert")
_q("morphological", "Infra", "backing up databases", "infra.backup")
_q("morphological", "Infra", "deploying canaries", "infra.deploy")
_q("morphological", "Data", "loading order", "data.etl")
_q("morphological", "Data", "masking personal column", "data.pii")
_q("morphological", "Data", "backfilled events", "data.backfill")
_q("morphological", "Data", "scheduling ingestion job", "data.airflow")
_q("morphological", "Mobile", "batching analytic event uploads", "mob.analytics")
_q("morphological", "Auth", "throttling login attempt", "auth.ratelimit")
_q("morphological", "Billing", "calculating VAT", "bill.tax")
_q("morphological", "Search", "sharded index", "search.sharding")
_q("morphological", "Search", "elastic engine", "search.engine")

# synonyms and abbreviations
_q("synonym", "Infra", "k8s version in prod", "infra.k8s")
_q("synonym", "Infra", "db backup frequency", "infra.backup")
_q("synonym", "Auth", "auth service db", "auth.db")
_q("synonym", "Infra", "continuous integration runners", "infra.ci")
_q("synonym", None, "PR review rule", "fleet.codereview")
_q("synonym", "Auth", "ttl of auth sessions", "auth.session_ttl")
_q("synonym", "Auth", "login throttle", "auth.ratelimit")
_q("synonym", "Auth", "authn for admins", "auth.mfa")
_q("synonym", "Search", "perf target for search api", "search.latency")
_q("synonym", "Search", "ms latency budget search", "search.latency")
_q("synonym", "Infra", "cert renewal automation", "infra.cert")
_q("synonym", "Infra", "lb for api gateway", "infra.lb")
_q("synonym", "Infra", "dns provider gateway", "infra.dns")
_q("synonym", "Billing", "async refunds queue", "bill.refunds")
_q("synonym", "Billing", "mq for refunds", "bill.refunds")
_q("synonym", "Data", "PII masking replica", "data.pii")
_q("synonym", "Data", "etl warehouse load", "data.etl")
_q("synonym", "Auth", "downtime cause auth gateway", "auth.outage")
_q("synonym", "Auth", "incident with expired certificate", "auth.outage")
_q("synonym", "Mobile", "iOS deploy process", "mob.release")
_q("synonym", "Infra", "prod availability zones", "infra.k8s")
_q("synonym", "Infra", "database snapshot retention", "infra.backup")

# paraphrase: the question an agent would actually ask
_q("paraphrase", "Auth", "how long do login sessions last", "auth.session_ttl")
_q("paraphrase", "Auth", "how often are signing keys changed", "auth.jwt_rotation")
_q("paraphrase", "Billing", "when do we bill customers each night", "bill.invoice_cron")
_q("paraphrase", "Billing", "how many times is a declined card charged again", "bill.retry")
_q("paraphrase", "Search", "what is the slowest acceptable search response", "search.latency")
_q("paraphrase", "Search", "how stale can the search index be", "search.index search.k_new")
_q("paraphrase", "Mobile", "how do beta testers get the iPhone app", "mob.release")
_q("paraphrase", "Mobile", "what happens when the camera is not allowed on android", "mob.crash")
_q("paraphrase", "Mobile", "where do we keep orders when there is no network", "mob.offline")
_q("paraphrase", "Infra", "who gets paged when alerts fire", "infra.monitor")
_q("paraphrase", "Infra", "how long are database snapshots kept", "infra.backup")
_q("paraphrase", "Infra", "how do we shift traffic during a rollout", "infra.deploy")
_q("paraphrase", "Data", "how long do we keep raw events", "data.retention")
_q("paraphrase", "Data", "which tool turns orders into warehouse tables", "data.etl")
_q("paraphrase", "Data", "when does the pipeline refuse bad data", "data.quality")
_q("paraphrase", "Billing", "which service computes sales tax", "bill.tax")
_q("paraphrase", "Billing", "how are money amounts stored", "bill.currency")
_q("paraphrase", "Auth", "how do we stop brute-force login guessing", "auth.ratelimit")
_q("paraphrase", "Infra", "how quickly do alerts escalate", "infra.monitor")
_q("paraphrase", None, "who reviews code before it merges", "fleet.codereview")

# cross-project distractors: a near-identical row lives in another project
_q("distractor", "Auth", "sessions expire", "auth.session_ttl")
_q("distractor", "Billing", "sessions expire", "bill.session")
_q("distractor", "Mobile", "login sessions last", "mob.session")
_q("distractor", "Billing", "throttled requests per", "bill.ratelimit")
_q("distractor", "Auth", "throttled attempts per minute", "auth.ratelimit")
_q("distractor", "Auth", "service uses postgres", "auth.db")
_q("distractor", "Billing", "service uses mysql", "bill.db")
_q("distractor", "Search", "owned-by team", "search.owner")
_q("distractor", "Auth", "owned-by team", "auth.owner")
_q("distractor", "Search", "cache results seconds", "search.cache")
_q("distractor", "Data", "data retained months", "data.retention")
_q("distractor", "Infra", "backups kept days", "infra.backup")
_q("distractor", "Mobile", "events uploaded every 30 seconds", "mob.analytics")
_q("distractor", "Data", "schema migrated", "data.schema")
_q("distractor", "Infra", "migration", "infra.region_new")
_q("distractor", "Mobile", "crash fix android", "mob.crash")
_q("distractor", "Auth", "certificate expired outage", "auth.outage")
_q("distractor", "Infra", "certificate renewal", "infra.cert")
_q("distractor", "Billing", "refund idempotency", "bill.refunds")
_q("distractor", "Search", "synonym list", "search.synonyms")

# temporal: the replaced row must lose to its replacement
_q("temporal", "Auth", "auth token cache redis", "auth.redis_new", "auth.redis_old")
_q("temporal", "Auth", "redis version for tokens", "auth.redis_new", "auth.redis_old")
_q("temporal", "Auth", "account lockout failed logins", "auth.lockout_new", "auth.lockout_old")
_q("temporal", "Auth", "how many failed logins lock an account", "auth.lockout_new", "auth.lockout_old")
_q("temporal", "Billing", "pro plan price per month", "bill.plan_new", "bill.plan_old")
_q("temporal", "Billing", "pro plan costs", "bill.plan_new", "bill.plan_old")
_q("temporal", "Billing", "service-billing payment api", "bill.stripe", "bill.psp_old")
_q("temporal", "Search", "ranking uses BM25", "search.ranker_new", "search.ranker_old")
_q("temporal", "Search", "search ranking model", "search.ranker_new", "search.ranker_old")
_q("temporal", "Search", "index refresh interval", "search.k_new", "search.k_old")
_q("temporal", "Mobile", "android target sdk", "mob.sdk_new", "mob.sdk_old")
_q("temporal", "Mobile", "app-android sdk", "mob.sdk_new", "mob.sdk_old")
_q("temporal", "Mobile", "dark mode feature flag", "mob.flag_new", "mob.flag_old")
_q("temporal", "Mobile", "is dark mode enabled", "mob.flag_new", "mob.flag_old")
_q("temporal", "Infra", "cluster-main postgres version", "infra.pg_new", "infra.pg_old")
_q("temporal", "Infra", "primary region", "infra.region_new", "infra.region_old")
_q("temporal", "Infra", "which region is primary", "infra.region_new", "infra.region_old")
_q("temporal", "Data", "spark version for batch jobs", "data.spark_new", "data.spark_old")
_q("temporal", "Data", "dashboard data refresh", "data.sla_new", "data.sla_old")
_q("temporal", "Data", "how fresh is dashboard data", "data.sla_new", "data.sla_old")

QUERIES = tuple(Q)
KINDS = ("exact", "morphological", "synonym", "paraphrase", "distractor", "temporal")

# Filler: plausible engineering notes that share vocabulary with the labelled rows, so a
# query has to beat real competition (seeded, so every run sees the same corpus).
FILLER_SUBJECTS = ("the retry path", "the connection pool", "the worker queue", "the admin dashboard",
                   "the webhook handler", "the export job", "the mobile client", "the staging cluster",
                   "the config loader", "the audit log", "the feature flag service", "the rate limiter")
FILLER_PREDICATES = ("was refactored", "needs more tests", "logs too much at info level", "has a flaky test",
                     "was reviewed last sprint", "depends on the shared library", "reads settings at startup",
                     "emits metrics to the collector", "is documented in the runbook", "owns a small cache",
                     "handles timeouts with backoff", "was profiled for memory use")
FILLER_QUALIFIERS = ("after the incident review", "before the next release", "per the team decision",
                     "in the last quarter", "according to the on-call notes", "during the load test", "")
FILLER_PER_PROJECT = 40
