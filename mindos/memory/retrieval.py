"""Retrieval quality beyond plain tokens, standard library only.

A query is turned into *groups*, one per meaningful query word.  A group matches a row
through any of its *terms*:

  * the word itself (weight 1.0);
  * its stems as FTS5 prefix terms (weight 0.9): a light suffix stripper ("deployed",
    "deploying", "deployments" -> ``deploy*``; "retries" -> ``retri*`` and ``retry``), so
    morphological variants and partial words match without a second index;
  * the members of its synonym groups (weight 0.8; :data:`SYNONYM_GROUPS`), each
    with its own stems, phrases as exact word sequences.

memory-search (:mod:`mindos.memory.memory_search`) takes its candidates from each FTS5 index
without BM25: a probe counts each group's matches (capped), the rarest groups whose matches
add up to SEARCH_POSTINGS are kept (a word most rows carry narrows nothing), and the index
yields, newest first and filtered as it is read, the rows matching all of them, then each
one's own rows, rarest first, until the candidate count is reached (when even the rarest
group is common because its own word is, that word alone is read: a prefix term merges
every posting it covers before yielding a row, a word's posting list is walked only as far
as the reading goes).  Those are scored in Python on one scale shared by every surface, over
every group of the query: the IDF-weighted share of the query's groups a row matches (each
group at its best weight), times a mild recency factor.
The score never reads BM25, so a row's score does not move when unrelated rows join an
index, and no statement pays for BM25's per-row statistics (at 50k notes they were most of a
search's cost).  Pack sections, related notes among them, match through the same groups,
probes and rarity bound (:func:`bounded`); facts' ranked search takes CANDIDATES rows in
BM25 order.

Every term is quoted before MATCH: user text can never become an FTS5 operator.
"""

import math

from mindos.core import clock
from mindos.store import fts

CANDIDATES = 60  # a ranked fact search's BM25 pool; the substring twin's rows per surface
DF_CAP = 151  # document frequencies are counted up to this many rows per index (SEARCH_POSTINGS + 1)
SEARCH_POSTINGS = 150  # memory-search reads candidates of the rarest groups within this many matches
RECENCY_HALF_LIFE_HOURS = 24 * 90  # a quarter: recency breaks near-ties, it never beats relevance
RECENCY_WEIGHT = 0.1
W_EXACT, W_STEM, W_SYNONYM = 1.0, 0.9, 0.8
W_EVERYDAY = 0.6  # an everyday word's technical reading (everyday.EVERYDAY): memory-search only
W_EVERYDAY_PHRASE = 0.7  # an everyday phrase's ("fall behind", "run out"): less ambiguous than a word
MIN_STEM = 3
MAX_GROUPS = 12
STOPWORDS = frozenset("""
a an the of to in on at by for from with without and or but not no is are was were be been being it its this
that these those there here what which who whom whose when where why how do does did done doing we our us you
your i me my they them their he she his her can could should would will shall may might must have has had
about into over under than then so such any all some each every much many more most other own same only just
also very too up down out off again once if else while after before during between both either neither via
per vs get got make made use using used need needs needed want wants know tell show find anything something
currently current now still ever
didn doesn isn wasn weren aren hasn haven hadn couldn shouldn wouldn won don t ll ve s re d m
""".split())
_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ions", "ion", "edly", "ies", "ied", "ed", "es",
             "s")


def words(text):
    """Lowercase word tokens of ``text`` (FTS5 unicode61's view of it)."""
    if text and text.isascii():  # lowering ASCII first tokenizes the same, in one pass
        return fts.tokens(text.lower())
    return [token.lower() for token in fts.tokens(text)]


def stems(word):
    """Prefix stems of ``word`` (may be empty): what ``word*`` variants share."""
    if len(word) <= MIN_STEM or word.isdigit():
        return set()
    # a root of 3 letters only when no shorter suffix leaves a longer one: payments ->
    # payment*, not pay* (payload, payroll); runs -> run*
    found = _stripped(word, MIN_STEM + 1) or _stripped(word, MIN_STEM)
    if word.endswith("e") and len(word) - 1 > MIN_STEM:
        # cache -> cach* also finds caching; never a 3-letter root (time -> tim* would match
        # timeout, timer and timestamp; the word's own prefix already finds times, timed)
        found.add(word[:-1])
    if word.endswith("y") and len(word) - 1 >= MIN_STEM and word[-2] not in "aeiouy":
        found.add(word[:-1] + "i")  # retry -> retri* finds retries (a vowel keeps its y: gateways)
    found.discard(word)
    return found


def _stripped(word, shortest):
    """The roots left by the first of _SUFFIXES ``word`` ends with that leaves at least
    ``shortest`` letters (with the spellings it implies), or an empty set."""
    found = set()
    if not word.endswith(_SUFFIXES):  # most words: one test instead of one per suffix
        return found
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= shortest:
            root = word[: -len(suffix)]
            if suffix in ("ion", "ions") and len(root) < 4:
                continue
            if suffix in ("ies", "ied"):  # retries -> retry, retri*
                found.update((root + "y", root + "i"))
                break
            found.add(root)
            if len(root) > 3 and root[-1] == root[-2] and root[-1] not in "aeiouls":  # stopped -> stop
                found.add(root[:-1])
            if suffix in ("es", "ed", "ing", "ings") and not root.endswith("e"):
                found.add(root + "e")  # cached -> cache*, rotating -> rotate*
            break
    return found


# The shipped table of software-engineering synonyms and abbreviations (kept here, where it
# is read: a module of its own cost every call that builds groups one more module load).
#
# Each group lists words (or multi-word phrases) that mean the same thing in an engineering
# note, so a query for one finds rows written with another: ``db`` finds "database",
# ``k8s`` finds "kubernetes", ``login`` finds "auth".  Groups are deliberately small and
# conservative: a word that is ambiguous across everyday usage (``min``, ``issue``,
# ``sync``) is left out rather than risk dragging unrelated rows into the top results.
# Members are lowercase; a phrase matches as an exact word sequence.  A word may sit in more
# than one group (its expansions are the union).
SYNONYM_GROUPS = (
    ("db", "database", "databases", "datastore"),
    ("pg", "postgres", "postgresql", "psql"),
    ("k8s", "kubernetes", "kube"),
    ("auth", "authentication", "authn", "login", "logins", "signin", "sign in", "log in"),
    ("authz", "authorization", "permission", "permissions", "rbac", "acl"),
    ("config", "configuration", "configs", "settings", "cfg"),
    ("env", "environment", "environments"),
    ("env var", "environment variable", "envvar"),
    ("repo", "repository", "repositories"),
    ("deps", "dependency", "dependencies", "dep"),
    ("ci", "continuous integration", "pipeline", "pipelines"),
    ("cd", "continuous delivery", "continuous deployment"),
    ("deploy", "deployment", "deploys", "rollout", "release", "ship"),
    ("prod", "production"),
    ("dev", "development"),
    ("perf", "performance"),
    ("latency", "slow", "slowness", "sluggish", "response time"),
    ("mem", "memory", "ram"),
    ("oom", "out of memory"),
    ("msg", "message", "messages"),
    ("req", "request", "requests"),
    ("resp", "response", "responses"),
    ("err", "error", "errors", "failure", "failures", "exception"),
    ("ms", "millisecond", "milliseconds"),
    ("sec", "second", "seconds"),
    ("cert", "certificate", "certificates", "tls", "ssl"),
    ("tz", "timezone", "time zone"),
    ("ttl", "expiry", "expire", "expires", "expiration", "lifetime", "time to live"),
    ("cache", "caching", "cached", "memoize"),
    ("mq", "queue", "message queue", "broker"),
    ("pr", "pull request", "merge request", "mr"),
    ("docs", "documentation", "doc", "readme"),
    ("infra", "infrastructure"),
    ("ops", "operations"),
    ("gc", "garbage collection", "garbage collector"),
    ("async", "asynchronous"),
    ("ui", "user interface", "frontend", "front end"),
    ("api", "endpoint", "endpoints"),
    ("lb", "load balancer", "load balancing"),
    ("vm", "virtual machine"),
    ("cli", "command line"),
    ("bug", "defect", "regression"),
    ("fix", "patch", "hotfix"),
    ("rollback", "revert", "roll back"),
    ("timeout", "timed out", "time out", "timeouts"),
    ("secret", "secrets", "credential", "credentials"),
    ("cron", "schedule", "scheduled", "scheduler"),
    ("log", "logs", "logging"),
    ("outage", "incident", "downtime"),
    ("owner", "owns", "maintainer", "maintains", "maintained"),
    ("rate limit", "throttle", "throttling", "ratelimit"),
    ("s3", "object storage", "bucket"),
    ("dns", "domain name"),
    ("tests", "test suite", "testing", "spec", "specs"),
    ("backup", "backups", "snapshot", "snapshots"),
    ("uses", "runs on", "depends on", "backed by"),
    # common abbreviations of operations, security and business vocabulary
    ("dlq", "dead letter queue", "dead letter", "dead-letter"),
    ("cdn", "content delivery network"),
    ("sso", "single sign on", "single sign-on"),
    ("mfa", "2fa", "two factor", "multi factor", "two-factor", "multi-factor"),
    ("ha", "high availability"),
    ("dr", "disaster recovery"),
    ("qa", "quality assurance"),
    ("e2e", "end to end", "end-to-end"),
    ("pii", "personal data", "personally identifiable"),
    ("rca", "root cause", "postmortem", "post mortem"),
    ("sla", "service level agreement"),
    ("slo", "service level objective"),
    ("etl", "extract transform load"),
    ("ml", "machine learning"),
    ("os", "operating system"),
    ("cpu", "processor"),
    ("eta", "estimated arrival"),
    ("eod", "end of day"),
    ("fx", "foreign exchange", "exchange rate", "exchange rates"),
    ("kyc", "know your customer", "identity verification"),
    ("pos", "point of sale"),
    ("otp", "one time password", "one-time password"),
    ("dst", "daylight saving", "daylight savings"),
    ("az", "availability zone"),
    ("dc", "data center", "datacenter", "data centre"),
    ("poc", "proof of concept"),
    ("adr", "architecture decision record"),
    ("ddos", "denial of service"),
    ("waf", "web application firewall"),
    ("crm", "customer relationship management"),
    ("hr", "human resources"),
    ("iot", "internet of things"),
    ("cms", "content management system"),
    ("ack", "acknowledge", "acknowledged", "acknowledgement"),
)


def _synonym_index():
    """Member -> every member of the groups it sits in (itself included), read-only."""
    index = {}
    for group in SYNONYM_GROUPS:
        members = frozenset(group)
        for member in group:
            index[member] = index[member] | members if member in index else members
    return index


_SYNONYMS = _synonym_index()


def _synonyms_of(word, previous=None, roots=None):
    """Synonym members for ``word`` (and the two-word phrase ending in it, if listed);
    ``roots``: the word's :func:`stems`, when the caller has them."""
    found = set(_SYNONYMS.get(word, ()))
    for root in stems(word) if roots is None else roots:
        found |= _SYNONYMS.get(root, set())
    if previous:
        found |= _SYNONYMS.get(f"{previous} {word}", set())
    found.discard(word)
    return found


class Group:
    """One query word: its terms, each ``(kind, text, weight)``; kind is exact, prefix or phrase.

    ``everyday``: the technical readings of everyday words and phrases this word anchors
    (:func:`everyday_readings`, members of :data:`mindos.memory.everyday.EVERYDAY`), each
    worth W_EVERYDAY, and the word's irregular forms ("ran": run, runs, running) worth W_STEM;
    memory-search passes them, packs do not."""

    def __init__(self, word, previous=None, everyday=None):
        self.word = word
        self.word_term = fts.quote(word)  # the word alone, quoted for MATCH
        terms = {("exact", word): W_EXACT}
        if len(word) > MIN_STEM and not word.isdigit():  # a partial word: kube -> kubernetes
            terms[("prefix", word)] = W_STEM
        roots = stems(word)
        for root in roots:
            terms.setdefault(("prefix", root), W_STEM)
        if everyday is not None:
            for form in irregular_forms(word):
                terms.setdefault(("exact", form), W_STEM)
            if len(word) <= MIN_STEM and word.isalpha():  # a short word's plurals: bus -> buses, job -> jobs
                terms.setdefault(("exact", word + "s"), W_STEM)
                terms.setdefault(("exact", word + "es"), W_STEM)
        for member in _synonyms_of(word, previous, roots):
            parts = member.split()
            if len(parts) > 1:
                terms.setdefault(("phrase", member), W_SYNONYM)
                continue
            terms.setdefault(("exact", member), W_SYNONYM)
            for root in stems(member):
                terms.setdefault(("prefix", root), W_SYNONYM)
        for member, weight in everyday or ():
            parts = words(member.rstrip("*"))
            if len(parts) > 1:
                found = [("phrase", " ".join(parts))]
            elif member.endswith("*"):
                found = [("prefix", parts[0])]
            else:
                found = [("exact", part) for part in parts] + [("prefix", root) for part in parts for root in stems(part)]
            for term in found:
                if terms.get(term, 0) < weight:
                    terms[term] = weight
        self.terms = terms
        self._checks = None  # built on the first weight_in: packs match through the index and never score rows
        self._expression = None
        self._match_terms = None
        self._probe = None  # what the rarity probes ask of the group (:func:`_probe_plan`), built on first use
        self._bounds = None  # its (singular, plural) bounds, worked out the first time a probe needs them

    def expression(self):
        """The group as an FTS5 OR expression of :meth:`match_terms`."""
        if self._expression is None:
            self._expression = "(" + " OR ".join(self.match_terms()) + ")"
        return self._expression

    def match_terms(self):
        """The group's terms as FTS5 MATCH terms, each quoted (``"test"*`` for a prefix).
        Terms a prefix term already covers ("certificate" under ``certificat*``) are left
        out: the match is the same and every prefix term costs a walk of the index's term
        list.  Built once per group."""
        if self._match_terms is None:
            prefixes = sorted(text for kind, text in self.terms if kind == "prefix")
            kept = []
            for (kind, text) in sorted(self.terms):
                if kind != "phrase" and any(text.startswith(p) and (kind != "prefix" or text != p) for p in prefixes):
                    continue
                quoted = fts.quote(text)
                kept.append(quoted + "*" if kind == "prefix" else quoted)
            self._match_terms = tuple(kept)
        return self._match_terms

    def weight_in(self, tokens, joined):
        """The best weight this group reaches in a row (its token list and space-joined text)."""
        checks = self._checks
        if checks is None:
            # best weight first, so the first hit is the answer; in the space-joined text a
            # prefix is " root" and a phrase " a b "
            checks = self._checks = sorted(((weight, kind == "exact", text if kind == "exact" else
                                             f" {text}" if kind == "prefix" else f" {text} ")
                                            for (kind, text), weight in self.terms.items()),
                                           key=lambda check: -check[0])
        for weight, exact, needle in checks:
            if (needle in tokens) if exact else (needle in joined):
                return weight
        return 0.0


def groups(text, cache=None, everyday=False):
    """The query groups of ``text``: one per distinct non-stopword (at most MAX_GROUPS).

    When every word is a stopword the words themselves are used, so a query is never
    silently empty.  A group depends only on its word and the word before it, and is never
    changed once built, so ``cache`` (a dict) may share groups between many texts.

    ``everyday`` (memory-search): each group also carries the technical readings of the
    everyday words and phrases it anchors (:func:`everyday_readings`), and a stopword that
    alone anchors one ("down") becomes a group of its own."""
    cache = {} if cache is None else cache
    readings = everyday_readings(words(text)) if everyday else {}

    def group(word, previous=None, position=None):
        # the previous word matters only when the two form a listed synonym phrase
        key = (word, previous if previous and f"{previous} {word}" in _SYNONYMS else None)
        if everyday:
            key += (readings.get(position, ()),)
        if key not in cache:
            cache[key] = Group(*key)
        return cache[key]

    tokens = words(text)
    chosen, seen, previous = [], set(), None
    for position, token in enumerate(tokens):
        if (token not in STOPWORDS or position in readings) and token not in seen:
            if len(chosen) == MAX_GROUPS:
                break
            seen.add(token)
            chosen.append(group(token, previous, position))
        previous = token
    if not chosen:
        chosen = [group(token) for token in list(dict.fromkeys(tokens))[:MAX_GROUPS]]
    return chosen


_ENTRIES = {}  # first base form -> its entries of everyday.EVERYDAY, read on first use


def _entries(first):
    """``[(key words, members)]``: the entries of :data:`mindos.memory.everyday.EVERYDAY` whose
    key starts with the word ``first``.  The table is one string of lines in sorted order,
    bisected rather than parsed or scanned whole: a search reads about ten lines per word,
    however long the table grows."""
    found = _ENTRIES.get(first)
    if found is None:
        from mindos.memory import everyday  # lazy: memory-search only, packs never load it

        table, found = everyday.EVERYDAY, []
        phrase, word = f"{first} ", f"{first}:"  # a key's lines sort "first ...:" then "first:"
        size = len(phrase)
        # lines starting before lo sort below ``phrase``, lines starting at or after hi do not
        lo, hi = 1, len(table)
        while lo < hi:
            start = table.rfind("\n", lo - 1, (lo + hi) // 2) + 1
            if table[start:start + size] < phrase:
                lo = table.find("\n", start) + 1
            else:
                hi = start
        while table.startswith(phrase, lo) or table.startswith(word, lo):
            stop = table.find("\n", lo)
            key, _, members = table[lo:stop].partition(": ")
            found.append((tuple(key.split()), tuple(members.split(", "))))
            lo = stop + 1
        _ENTRIES[first] = found
    return found


def _irregular_base(word):
    """The base form of an irregular verb form in :data:`mindos.memory.everyday.IRREGULAR`
    ("ran" -> "run"), or None."""
    from mindos.memory import everyday  # lazy: memory-search only

    table = everyday.IRREGULAR
    at = table.find(f" {word}:")
    if at < 0:
        return None
    start = at + len(word) + 2
    stop = start
    while stop < len(table) and not table[stop].isspace():
        stop += 1
    return table[start:stop]


_NOT_COMPARATIVE = frozenset(("latest", "later"))  # "the latest version" is not about being late


def base_forms(token):
    """The forms ``token`` may stand for in an everyday phrase: itself, its irregular base
    ("ran" -> run), its suffix-stripped roots ("keeps" -> keep, "piled" -> pile) and the
    adjective behind a comparative, superlative or adverb ("slowest", "slower", "slowly" ->
    slow).  Used only to find keys of the everyday table, never as search terms."""
    found = {token}
    base = _irregular_base(token) if len(token) > 2 else None
    if base:
        found.add(base)
    if len(token) > MIN_STEM and not token.isdigit():
        found |= _stripped(token, MIN_STEM)
        for suffix in ("est", "er", "ally", "ly"):  # slowest, faster -> slow, fast; slowly -> slow
            root = token[: -len(suffix)]
            if token.endswith(suffix) and len(root) >= MIN_STEM and token not in _NOT_COMPARATIVE:
                found.add(root)
                if root[-1] == root[-2] and root[-1] not in "aeiouls":  # biggest -> big
                    found.add(root[:-1])
                elif root[-1] == "i":  # easiest -> easy
                    found.add(root[:-1] + "y")
                elif suffix in ("est", "er"):  # latest -> late
                    found.add(root + "e")
                break
    return found


def everyday_readings(tokens):
    """``{position: members}``: for each everyday word or phrase of everyday.EVERYDAY found in
    ``tokens`` (a phrase's words in sequence, stopwords included, each through
    :func:`base_forms`), its members, attached to its first non-stopword (its first word when
    every word is a stopword).  Members are sorted, so equal queries build equal groups."""
    forms = [base_forms(token) for token in tokens]
    matches, covered = [], set()
    for start, own in enumerate(forms):
        for form in sorted(own):
            for parts, members in _entries(form):
                end = start + len(parts)
                if end > len(tokens) or any(parts[offset] not in forms[start + offset]
                                            for offset in range(1, len(parts))):
                    continue
                matches.append((start, end, members))
                if end - start > 1:
                    covered.update(range(start, end))
    found = {}
    for start, end, members in matches:
        if end - start == 1 and start in covered:  # a phrase's words read as the phrase ("keep restarting")
            continue
        anchor = next((position for position in range(start, end) if tokens[position] not in STOPWORDS), start)
        weight = W_EVERYDAY if end - start == 1 else W_EVERYDAY_PHRASE
        readings = found.setdefault(anchor, {})
        for member in members:
            readings[member] = max(weight, readings.get(member, 0))
    return {position: tuple(sorted(readings.items())) for position, readings in found.items()}


def irregular_forms(word):
    """The other forms of an irregular verb form (``ran`` -> run, runs, running); empty for
    other words."""
    base = _irregular_base(word)
    if not base:
        return ()
    if base.endswith("e"):
        ing = base[:-1] + "ing"
    elif len(base) <= 4 and len(base) >= 3 and base[-1] not in "aeiouwy" and base[-2] in "aeiou" \
            and base[-3] not in "aeiou":
        ing = base + base[-1] + "ing"
    else:
        ing = base + "ing"
    from mindos.memory import everyday  # lazy: memory-search only

    others = {pair.partition(":")[0] for pair in everyday.IRREGULAR.split() if pair.partition(":")[2] == base}
    return tuple(sorted(({base, base + "s", ing} | others) - {word}))


def match_expression(query_groups):
    """One FTS5 MATCH expression OR-combining every group (None when there is none)."""
    if not query_groups:
        return None
    return " OR ".join(group.expression() for group in query_groups)


def bounded(conn, index, query_groups, budget, cache=None, window=False):
    """``(expression, used, matched, total)``: the MATCH expression for ``index`` ORing the
    rarest groups whose matches add up to at most ``budget`` rows (None when no group
    matches anything), how many groups it ORs, how many match at all, and the sum of their
    counts (over ``budget`` only when even the rarest group is, and is then kept alone).

    Common groups ("service", "run") match most of an index and say little about relevance;
    leaving them out keeps the work proportional to the budget.  Counts come from
    :func:`counts_words_first` (each group counted up to ``budget + 1``, ties keep query
    order), and a kept group whose own word reaches that cap is read through the word
    alone (:func:`read_through`).  ``cache``: see :func:`mindos.store.fts.match_counts`.
    ``window``: the caller reads the newest ``budget`` matches of a common group kept alone
    and takes them from ``cache`` when there (see :func:`counts_words_first`)."""
    cap = budget + 1
    counts, words = counts_words_first(conn, query_groups, index, cap, cache, roots=True, window=window)
    used, total = rarest(counts, budget)
    expression = " OR ".join(read_through(query_groups[position], words[position], cap) for position in sorted(used))
    return expression or None, len(used), sum(1 for count in counts if count), total


def read_through(group, word_count, cap):
    """The MATCH term a kept ``group`` is read through: its own word when that word alone
    matches ``cap`` rows or more (the group is then common anyway, and a word's posting list
    is walked only as far as the reading goes, where the group's prefix terms would first
    merge every posting of every word they cover), else the whole group."""
    return group.word_term if word_count >= cap else group.expression()


def coverage(query_groups, idf, text):
    """The IDF-weighted share in [0, 1] of the query's groups that ``text`` matches."""
    return coverage_of(query_groups, idf)(text)


def read_text(text, memo=None):
    """``(token set, space-joined tokens with a space either side)`` of ``text``: what a group's
    :meth:`Group.weight_in` reads; ``memo`` (a dict) keeps it per text for one search."""
    found = None if memo is None else memo.get(text)
    if found is None:
        tokens = words(text)
        found = (set(tokens), " " + " ".join(tokens) + " ")
        if memo is not None:
            memo[text] = found
    return found


def coverage_of(query_groups, idf, extra=None, memo=None):
    """:func:`coverage` as a function of the text alone, for scoring many rows against one
    query: the weights are summed and the unweighted groups dropped once.  ``extra``
    ({group position: [(word, weight), ...]}: learned associates, each worth ``weight`` of the
    group, :mod:`mindos.memory.learned`) lets a group a row does not match still count through
    an associate the row has.  ``memo``: see :func:`read_text`."""
    total = sum(idf) or 1.0
    extra = extra or {}
    weighted = [(group.weight_in, weight, extra.get(position, ()))
                for position, (group, weight) in enumerate(zip(query_groups, idf)) if weight]

    def score(text):
        token_set, joined = read_text(text, memo)
        got = 0.0
        for weight_in, weight, others in weighted:
            best = weight_in(token_set, joined)
            for word, worth in others:
                if worth > best and word in token_set:
                    best = worth
            got += weight * best
        return got / total

    return score


def recency(created_at, now, half_life_hours=RECENCY_HALF_LIFE_HOURS):
    """A factor in (1 - RECENCY_WEIGHT, 1]: newer rows win near-ties.  Ages are floored to
    whole hours so scores are stable within the hour."""
    try:
        hours = max(0, clock.seconds_between(created_at, now) // 3600)
    except Exception:  # noqa: BLE001 - a malformed legacy timestamp is simply "old"
        hours = None
    return decay(hours, half_life_hours)


def decay(hours, half_life_hours=RECENCY_HALF_LIFE_HOURS):
    """:func:`recency` of a row ``hours`` whole hours old (None: unknown, scored as very old)."""
    hours = 10**6 if hours is None else max(0, hours)
    return (1 - RECENCY_WEIGHT) + RECENCY_WEIGHT * math.pow(0.5, hours / half_life_hours)


def group_counts(conn, query_groups, index, cap=DF_CAP, cache=None):
    """How many rows of ``index`` each group matches, each counted up to ``cap`` (``cache``:
    see :func:`mindos.store.fts.match_counts`)."""
    return fts.match_counts(conn, index, [group.expression() for group in query_groups], cap, cache)


def counts_words_first(conn, query_groups, index, cap, cache=None, roots=False, window=False):
    """``(counts, word_counts)``: :func:`group_counts`, found by counting the groups' own
    words first and counting whole only the groups whose word stays under ``cap``, and
    those word counts (each up to ``cap``; ``cache``: see
    :func:`mindos.store.fts.match_counts`).

    A group matches at least the rows its word does, so the counts are the same; it is
    cheaper when most words are common (a search query's usually are): a prefix term
    merges every posting of every word it covers before it yields a row, while a word's own
    posting list is walked only up to ``cap``.

    ``roots`` (:func:`bounded`): a group whose word stays under ``cap`` is first bounded
    from below by its word's singular read as a whole word ("dashboard" for "dashboards"),
    or, for a word the index holds that is not a plural, by its plural ("tests" for "test"):
    the group's prefix term matches every row that word is in, so when that word alone
    reaches ``cap`` so does the group, and its prefix term (which merges every posting of
    every word it covers, "dashboard"* about ten word probes' worth on a common root, "test"*
    about ten times that in a home that says "tests") is never merged.  The counts are the
    same; a bound that is no word costs one cheap probe.

    ``window`` (a pack's related notes): a group holding a prefix term that may turn out to
    be the one common group kept alone is counted by reading its newest ``cap`` rowids, kept
    in ``cache`` for the window read (:func:`mindos.store.fts.newest_counts`); same counts."""
    cache = {} if cache is None else cache
    words = fts.match_counts(conn, index, [group.word_term for group in query_groups], cap, cache)
    counts = list(words)
    # a group's probe plan (the same in every index) is worked out only once it is under the cap
    whole = [position for position, (group, count) in enumerate(zip(query_groups, words))
             if count < cap and not (group._probe or _probe_plan(group))[0]]
    # words known to reach the cap: a group with a prefix term covering one has reached it
    # too (its prefix term matches every row that word is in)
    common = [group.word for group, count in zip(query_groups, words) if count >= cap]
    if roots and whole:
        stemmed = {}
        for position in whole:
            group = query_groups[position]
            bounds = group._bounds or _bounds(group)
            bound = bounds[0] or (bounds[1] if words[position] else None)
            if bound:
                stemmed[position] = bound
        probes = list(stemmed.values())
        found = dict(zip(probes, fts.match_counts(conn, index, probes, cap, cache))) if probes else {}
        common += [term[1:-1] for term, count in found.items() if count >= cap]
    if common and whole:
        reached = [position for position in whole if _covers_common(query_groups[position]._probe[1], common)]
        for position in reached:
            counts[position] = cap
        whole = [position for position in whole if position not in reached]
    # A group matches at least the rows any one of its terms does, so once a term has
    # reached the cap (as a word, or as a one-term group counted first) every group holding
    # it has too, and its prefix terms need not be merged again ("test"* in both "test"
    # and "suite").
    known = {group.word_term: count for group, count in zip(query_groups, words)}
    single = [position for position in whole if len(query_groups[position]._probe[2]) == 1]
    if window:
        # a group with a prefix term that may be kept alone and common is read as its newest
        # rowids, counted: its window is those rows (:func:`mindos.store.fts.cached_newest`),
        # so the prefix is merged once, not once more for the window
        _read_newest(conn, index, query_groups, _lone(query_groups, single, whole, words, counts, cap), cap, cache)
    for position, count in zip(single, fts.match_counts(
            conn, index, [query_groups[position].expression() for position in single], cap, cache)):
        counts[position] = count
        known[query_groups[position]._probe[2][0]] = count
    several = []
    for position in whole:
        terms = query_groups[position]._probe[2]
        if len(terms) == 1:
            continue
        if any(known.get(term, 0) >= cap for term in terms):
            counts[position] = cap
        else:
            several.append(position)
    if window:
        _read_newest(conn, index, query_groups, _lone(query_groups, several, several, words, counts, cap), cap, cache)
    for position, count in zip(several, fts.match_counts(
            conn, index, [query_groups[position].expression() for position in several], cap, cache)):
        counts[position] = count
    return counts, words


def _lone(query_groups, positions, pending, words, counts, cap):
    """Those of ``positions`` holding a prefix term that may still be the one common group
    :func:`bounded` keeps alone: no group before it matches through its word, and no group
    counted already (any but ``pending``) matches fewer than ``cap`` rows (one that does
    would be kept instead)."""
    if not positions or any(0 < count < cap for position, count in enumerate(counts) if position not in pending):
        return []
    first = next((position for position, count in enumerate(words) if count), len(words))
    return [position for position in positions if position <= first
            and any(term.endswith("*") for term in query_groups[position]._probe[2])]


def _read_newest(conn, index, query_groups, positions, cap, cache):
    """Count the groups at ``positions`` by reading their newest ``cap`` rowids into ``cache``
    (:func:`mindos.store.fts.newest_counts`); the counts are then read from there."""
    if positions:
        fts.newest_counts(conn, index, [query_groups[position].expression() for position in positions], cap, cache)


def _probe_plan(group):
    """What :func:`counts_words_first` asks of ``group``, worked out once per group (a pack
    probes the same groups in up to five indexes): ``(matched by its word alone, its prefix
    texts, its MATCH terms)`` (see :meth:`Group.match_terms`)."""
    terms = group.match_terms()
    group._probe = (terms == (group.word_term,), tuple(text for kind, text in group.terms if kind == "prefix"), terms)
    return group._probe


def _covers_common(prefixes, common):
    """True when one of ``prefixes`` (a group's prefix texts) covers one of the words ``common``."""
    return bool(prefixes) and any(word.startswith(prefixes) for word in common)


def _bounds(group):
    """``(singular, plural)`` of ``group`` (:func:`singular`, :func:`plural`), worked out
    once per group."""
    group._bounds = (singular(group), plural(group))
    return group._bounds


def singular(group):
    """The MATCH term of the singular of ``group``'s word when that word reads as a plural in
    "s" whose singular the group matches as a prefix ("dashboards" -> ``"dashboard"``,
    "caches" -> ``"cache"``; never "status", "redis", "bonus" or "classes"), else None."""
    word = group.word
    if len(word) <= MIN_STEM + 1 or word[-1] != "s" or word[-2] in "siu":
        return None
    return fts.quote(word[:-1]) if ("prefix", word[:-1]) in group.terms else None


def plural(group):
    """The MATCH term of the plural in "s" of ``group``'s word when the group matches it
    through a prefix term ("test" -> ``"tests"`` under ``test*``; "write" -> ``"writes"``
    under ``writ*``), else None (a word ending in "s", a number, a word without a prefix)."""
    word = group.word
    if len(word) <= MIN_STEM or word[-1] == "s" or word.isdigit():
        return None
    other = word + "s"
    for kind, text in group.terms:
        if kind == "prefix" and other.startswith(text):
            return fts.quote(other)
    return None


def idf_weights(conn, query_groups, indexes, counts=None):
    """Per group ``ln(1 + N / (1 + df))`` over the given FTS ``indexes`` (name, content table);
    ``counts`` ({index: per-group counts}) reuses probes already made.  df is capped at
    DF_CAP per index: past that a word is common and its weight is already near its floor."""
    total = 0
    for _, table in indexes:
        total += conn.execute(f"SELECT coalesce(max(rowid), 0) FROM {table}").fetchone()[0]
    counts = counts or {index: group_counts(conn, query_groups, index) for index, _ in indexes}
    return [math.log(1 + max(total, 1) / (1 + sum(counts[index][position] for index, _ in indexes)))
            for position in range(len(query_groups))]


def rarest(counts, budget):
    """``(positions, total)``: the positions, rarest first, of the rarest groups whose
    ``counts`` add up to at most ``budget`` (the rarest alone when even it is over; none
    when nothing matches), and the sum of their counts."""
    matched = sorted((count, position) for position, count in enumerate(counts) if count)
    used, total = [], 0
    for count, position in matched:
        if total + count > budget:
            break
        used.append(position)
        total += count
    if matched and not used:
        used, total = [matched[0][1]], matched[0][0]
    return used, total
