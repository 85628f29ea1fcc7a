"""Everyday words and phrases read as the technical words engineering notes use.

memory-search's bridge over the commonest vocabulary gap: a question asked in plain words
about a note written in the trade's words ("why did the consumers fall behind" -> a note
about lag and a backlog).  Loaded only by memory-search (packs never read it), so a
pack build pays nothing for it.

Design decisions
  * **One direction.**  Unlike :mod:`mindos.memory.synonyms` (words that mean the same
    thing, either way round), a key here is how a person might say something and its
    members are how a note might: "slow" -> latency, but "latency" does not widen to every
    everyday word for slowness.
  * **General vocabulary.**  Operations and software words from common usage (failing,
    waiting, running out, losing and duplicating data, money, access, releases, schedules)
    and a kind of system -> well-known products of that kind ("database" -> postgres,
    mysql, ...).  Written from general knowledge, not from any evaluation corpus.
  * **Phrases.**  A key of several words matches them in sequence in the query, stopwords
    included ("run out", "pile up", "keep restart"), each query word through its base forms
    (IRREGULAR and the suffix stemmer), so "fell behind" and "keeps restarting" find their
    keys; a phrase's words are then read as the phrase, not one by one.
  * **Weights.**  A member a query reaches through a word counts W_EVERYDAY of that word's
    group, through a phrase W_EVERYDAY_PHRASE (:mod:`mindos.memory.retrieval`), both below
    a shipped synonym's: the literal word, when a row has it, still wins.
  * **Syntax.**  One entry a line, ``key: member, member, ...``; keys are lowercase base
    forms, a member ending in "*" is a prefix, a member of several words a phrase; lines
    starting with "#" are headings.  One string rather than a tuple of tuples: loading it
    costs a copy, and a search finds the few lines its words start
    (:func:`mindos.memory.retrieval.everyday_readings`) instead of building an index of
    every entry on each call.
"""

# Everyday word or phrase (base forms) -> the technical words a note uses for it.
EVERYDAY = """
# falling behind, slowness, waiting
fall behind: lag*, backlog*, delay*, behind
behind: lag*, backlog*
catch up: lag*, backlog*, drain*, replay*
pile up: backlog*, queue*, lag*, buffer*, accumulat*
back up: backlog*, queue*, congest*
slow: latency, lag*, timeout*, p95, p99, bottleneck*, throughput, delay*
slow down: latency, degrad*, throttl*, bottleneck*
slower: latency, degrad*, regress*
sluggish: latency, degrad*
fast: latency, throughput, quick*
faster: latency, throughput, optimi*, speedup
speed: latency, throughput, performance
speed up: optimi*, cach*, latency, speedup, parallel*
take forever: latency, timeout*, slow
take long: latency, duration, timeout*, slow
wait: timeout*, latency, queue*, pending, block*, delay*
late: delay*, lag*, overdue, behind
delay: latency, lag*
hang: hung, deadlock*, stall*, unresponsive, timeout*, freez*, frozen
freeze: hung, deadlock*, stall*, unresponsive, frozen, code freeze, moratorium, blackout
stuck: hung, deadlock*, stall*, block*, pending, wedged
busy: load, traffic, peak*, spike*, surge*, contention, saturat*, concurren*
rush: peak*, spike*, surge*, burst*, traffic
crowd: traffic, load, concurren*, surge*
overload: saturat*, load, capacity, throttl*, spike*, surge*
overwhelm: saturat*, load, capacity, throttl*, spike*, surge*
flood: spike*, surge*, burst*, storm
jump: spike*, surge*, increase*
quiet: idle, off-peak, low traffic
# breaking, failing, crashing
break: fail*, error*, regression*, broken, outage*, bug*, incident*
broken: fail*, error*, regression*, bug*, outage*
stop work: fail*, outage*, error*, down, regression*
not work: fail*, error*, broken, bug*
go down: outage*, downtime, unavailable, offline, down
down: outage*, downtime, unavailable, offline
go wrong: fail*, error*, incident*, bug*
wrong: incorrect, mismatch*, bug*, invalid, inconsisten*, corrupt*
mix up: mismatch*, inconsisten*, collision*, swap*
crash: panic*, segfault*, oom, exit*, abort*, restart*, fail*
keep restart: crashloop*, crash loop, restart*, oom, backoff, flapping
keep crash: crashloop*, crash loop, restart*, oom, panic*
restart: crashloop*, reboot*, respawn*
flaky: intermittent*, flak*, sporadic*, nondetermin*, race condition, retry*
now and then: intermittent*, sporadic*, occasional*, flak*
sometimes: intermittent*, sporadic*, occasional*, flak*
randomly: intermittent*, sporadic*, race condition, nondetermin*
glitch: bug*, intermittent*, error*
problem: issue*, incident*, error*, fail*, bug*
trouble: issue*, incident*, error*, fail*
mistake: error*, bug*, incorrect, typo*
cause: root cause, because, due, trigger*
blame: root cause, postmortem*, because
fix: resolv*, mitigat*, remediat*, workaround*
solve: resolv*, fix*, mitigat*, workaround*
work around: workaround*, mitigat*, fallback*, manual*
get worse: degrad*, regress*, increas*
get better: improv*, recover*, optimi*
come back: recover*, restor*, resum*, back online
recover: restor*, failover, resum*
# running out, limits, capacity
run out: exhaust*, quota*, oom, limit*, capacity, depleted, full, starv*
run low: exhaust*, quota*, threshold*, capacity, low
out of space: disk full, disk, storage, capacity, quota*, volume*
out of memory: oom, memory, heap, ram
space: disk*, storage, capacity, volume*, quota*
full: capacity, exhaust*, quota*, saturat*
too many: limit*, quota*, exceed*, throttl*, rate limit, cap
too much: limit*, quota*, exceed*, excess*
too big: size, oversiz*, limit*, large, exceed*
limit: quota*, cap, caps, capped, threshold*, maximum, max, ceiling
max: maximum, limit*, cap, ceiling, quota*
most: maximum, limit*, cap, ceiling
least: minimum, floor, at least
allowed: permit*, limit*, quota*, authori*, allowlist*, whitelist*
handle more: scal*, capacity, throughput, autoscal*
grow: scal*, capacity, growth
more machines: scale out, autoscal*, horizontal*, replica*, nodes
bigger machine: scale up, vertical*, instance type
how many: count, number, limit*, capacity, size
per second: rps, qps, throughput, rate
heavy: load, large, expensive
# cost and money
cost: spend*, bill*, budget*, pric*, expens*, invoice*
expensive: cost*, spend*, bill*, pric*
cheap: cost*, pric*, budget*, spot
money: payment*, billing, revenue, charge*, invoice*, cost*
pay: payment*, billing, charge*, invoice*, checkout
charge twice: duplicate*, idempoten*, double charg*, dedup*
bill: invoice*, billing, charge*
refund: chargeback*, revers*, credit*
price: pricing, tariff*, rate*, cost*
# data: losing, duplicating, copying, keeping, deleting
twice: duplicate*, dedup*, idempoten*, double, at-least-once, replay*
double: duplicate*, dedup*, idempoten*
same thing twice: duplicate*, dedup*, idempoten*
lose: loss, lost, drop*, missing, discard*, evict*
lost: loss, drop*, missing, discard*
missing: drop*, lost, loss, gap*, absent
disappear: drop*, lost, missing, evict*, delet*, purg*, expir*
vanish: drop*, lost, missing, evict*, expir*
throw away: discard*, drop*, purg*, evict*, delet*
delete: purg*, remov*, drop*, eras*, prun*, retention
clean up: purg*, prun*, garbage, vacuum*, retention, cleanup, compact*
tidy: purg*, prun*, cleanup, compact*
keep: retain*, retention, persist*, stor*, archiv*
how long keep: retention, retain*, ttl, expir*, archiv*
forget: evict*, expir*, ttl, purg*
remember: cach*, persist*, stor*, memoi*
save: persist*, stor*, writ*, checkpoint*, snapshot*
store: persist*, bucket*, database, s3, disk
where keep: stor*, bucket*, database, s3, volume*
copy: replica*, replicat*, backup*, mirror*, snapshot*, clone*
spare: replica*, standby, failover, redundan*, reserve*, backup*
backup: reserve*, standby, spare, failover, replica*
switch over: failover, cutover, switchover, promot*
out of sync: drift*, replication lag, inconsisten*, stale, diverg*
in sync: replicat*, consisten*, sync*
old: stale, legacy, deprecat*, outdated, previous, former
out of date: stale, outdated, expired, old
fresh: stale, ttl, cache*, latest
new: latest, upgrade*, migrat*
split: shard*, partition*, separat*
combine: merg*, consolidat*, aggregat*, batch*
group together: batch*, aggregat*, bundl*
all at once: batch*, bulk, burst*, simultaneous*
one by one: sequential*, serial*
in order: order*, sequen*, fifo
out of order: reorder*, sequen*, ordering
records: rows, entries, logs, history, archive*
numbers: metric*, figures, count*, stats, statistic*
add up: reconcil*, discrepan*, mismatch*, total*
check: validat*, verif*, audit*, inspect*, monitor*, health check
watch: monitor*, observ*, alert*, dashboard*
measure: metric*, monitor*, instrument*, benchmark*
warn: alert*, alarm*, notif*, threshold*, pager*, paging
warning: alert*, alarm*, notif*, threshold*
wake: pager*, paging, paged, on-call, oncall, alert*, escalat*
notice: alert*, detect*, monitor*
tell: notif*, alert*, email*, messag*
# security, access, privacy
hack: breach*, compromis*, intrusion*, attack*, exploit*, vulnerab*
leak: expos*, breach*, secret*, credential*, disclos*
safe: secur*, encrypt*, protect*
lock out: locked, lockout, denied, forbidden, 403, 401
let in: access, authori*, allowlist*, permission*
who can: access, permission*, role*, rbac, authori*
block: denied, deny, forbidden, firewall*, blocklist*, reject*
can't reach: unreachable, connection refused, timeout*, dns, network
reach: connect*, network, reachab*
password: credential*, secret*, passphrase*
key: secret*, credential*, token*
log out: session*, token*, expir*, logout
hidden: mask*, redact*, private, embargo*, concealed
private: pii, personal data, gdpr, confidential, redact*
personal: pii, gdpr, privacy
privacy: pii, gdpr, consent, anonymi*
scramble: encrypt*, hash*, obfuscat*
rule: policy, policies, compliance, regulat*, requirement*
law: regulat*, compliance, legal, gdpr
approve: approval*, review*, sign-off, signoff
sign off: approval*, review*, approv*
# people, ownership, contact
in charge: owner*, own*, responsib*, maintain*, on-call, oncall
responsible: owner*, own*, maintain*
who run: owner*, own*, operat*, maintain*
look after: owner*, own*, maintain*, operat*
ask: contact*, owner*, channel*, support
customer: user*, client*, tenant*, account*, subscriber*
people: user*, staff, employee*, member*
staff: employee*, personnel, crew*, team*
complain: ticket*, support, escalat*, feedback
help: support, ticket*, helpdesk, runbook*
sign up: regist*, enrol*, onboard*, signup*
join: onboard*, regist*, enrol*
leave: churn*, offboard*, cancel*, unsubscrib*
cancel: churn*, unsubscrib*, terminat*, revok*
quit: churn*, cancel*, resign*
# changes, releases, moving things
change: migrat*, switch*, replac*, updat*, modif*
move: migrat*, relocat*, transfer*, cutover
switch: migrat*, replac*, cutover, toggl*
swap: replac*, migrat*, switch*
replace: migrat*, supersed*, swap*, deprecat*
get rid of: remov*, deprecat*, decommission*, retir*, drop*
drop: remov*, deprecat*, decommission*, discard*
turn off: disabl*, decommission*, feature flag, kill switch, shut*, switched off
switch off: disabl*, decommission*, feature flag, shut*, turned off
turn on: enabl*, feature flag, activat*, switched on
shut down: decommission*, disabl*, sunset*, retir*, shutdown
undo: rollback*, revert*, roll back, rolled back
go back: rollback*, revert*, downgrad*
try again: retry*, retri*, backoff, redeliver*
retry: backoff, redeliver*, retri*
give up: timeout*, abandon*, dead letter, dlq, max retries, retry*
try out: canary, pilot*, experiment*, beta, staging, trial*
test: staging, canary, qa
small group first: canary, pilot*, phased, staged, percentage
gradual: canary, phased, staged, incremental*, percent*, rollout*
little by little: canary, phased, staged, incremental*, rollout*
launch: releas*, deploy*, go-live, rollout*, ship*
go live: launch*, releas*, cutover, deploy*
come out: releas*, publish*, launch*
put out: releas*, publish*, deploy*
send out: publish*, dispatch*, deliver*, notif*, broadcast*
publish: releas*, dispatch*, broadcast*
upgrade: bump*, version*, migrat*
update: upgrad*, bump*, patch*, refresh*
plan: roadmap*, schedul*, design*
decide: decision*, chose, chosen, adr
why change: because, after, reason*, root cause
# connecting systems, data flow
talk to: call*, integrat*, api, client*, connect*, request*
connect: integrat*, wir*, hook*, link*
send: publish*, emit*, push*, dispatch*, deliver*, export*
receive: consum*, ingest*, subscrib*, webhook*, inbound
pull: fetch*, import*, sync*, ingest*, poll*
push: publish*, send*, export*, notif*
come from: source*, upstream, origin*, ingest*, feed*
go to: destination*, downstream, sink*, export*, rout*
feed: pipeline*, ingest*, stream*, import*
reader: consumer*, subscriber*, worker*
worker: consumer*, job*, process*, daemon*
arrive: deliver*, receiv*, ingest*, land*
not arrive: undeliver*, bounc*, drop*, lost, missing
bounce: undeliver*, reject*, hard bounce
email: smtp, mail*, newsletter*, notif*, sendgrid, mailgun, ses, postmark, mailchimp
text: sms, messag*
phone: mobile, app, ios, android, sms
website: web, site, frontend, homepage, page*
page: pages, render*, webpage*
screen: ui, page*, view*, display*, dashboard*
look up: lookup*, search*, query, queri*, index*
find: search*, lookup*, index*, query, queri*
list: index*, catalog*, registry, inventory
address: url*, endpoint*, hostname*, dns, ip
machine: host*, server*, node*, instance*, vm
server: host*, node*, instance*, vm
computer: host*, server*, machine*, workstation*
box: host*, server*, machine*, node*
container: pod*, docker, image*
program: service*, binary, application, app, script*
tool: cli, script*, utility, service*
job: cron*, batch*, task*, worker*, pipeline*
file: upload*, blob*, attachment*, document*, object*
picture: image*, photo*, thumbnail*
photo: image*, thumbnail*, picture*
video: stream*, transcod*, media
# time, schedules, frequency
why: because, due to, caus*, root cause, after, so
who: owner*, own*, on-call, oncall, maintain*, team*
where: stor*, host*, locat*, region*, kept
how often: every, interval*, frequen*, schedul*, cron, daily, hourly, weekly, nightly
how soon: within, sla, deadline*, minutes, hours
how fast: within, latency, sla, minutes
how long: duration, retention, ttl, days, hours, minutes, timeout*
when: schedul*, cron, deadline*, date, time
every day: daily, nightly, cron
every night: nightly, overnight, cron
every week: weekly, cron
every hour: hourly, cron
night: nightly, overnight, evening, midnight
overnight: nightly, night
dawn: sunrise, morning, early
morning: sunrise, am, early, dawn
evening: night, pm, dusk, sunset
weekend: saturday, sunday
end of month: month-end, monthly, close
start: begin*, launch*, open*, kickoff
open: start*, begin*, launch*
close: end*, cutoff, deadline*, shut*
deadline: cutoff, due, sla, expir*
due: deadline*, cutoff, expir*
promise: sla, slo, guarantee*, commitment*, target*
uptime: availability, sla, slo, nines
always on: availability, high availability, redundan*, failover
ahead: advance, in advance, before, early
in advance: ahead, before, early, prior
earlier: advance*, moved, before
later: postpon*, delay*, defer*
pause: suspend*, halt*, throttl*, stop*, hold
stop: halt*, disabl*, kill*, terminat*, abort*, suspend*
skip: bypass*, omit*, ignor*
ignore: skip*, bypass*, suppress*, mute*
by hand: manual*, manually
automatic: auto*, cron, scheduled, without
on its own: automat*, auto*, without
without asking: automat*, without approv*, auto*
# more ways of saying it: load and capacity, concurrency, data quality, alerts
go over: exceed*, overrun*, breach*, overage*
use up: exhaust*, consum*, quota*, deplet*
fill up: full, capacity, saturat*, exhaust*
blow up: spike*, surge*, crash*, explod*
shoot up: spike*, surge*, increas*, jump*
drop off: decreas*, declin*, dip*, fell
hold up: block*, delay*, bottleneck*, stall*
choke: bottleneck*, throttl*, saturat*, congest*
spread out: distribut*, balanc*, shard*, jitter
at the same time: concurren*, parallel*, simultaneous*, race condition
clash: conflict*, collision*, race condition, overlap*
overwrite: conflict*, race condition, clobber*, last write
step on each other: race condition, conflict*, lock*, contention
double book: conflict*, overbook*, duplicate*, race condition
more and more: leak*, growth, grow*, unbounded, increas*
never finish: hang*, hung, timeout*, infinite loop, deadlock*
endless: infinite loop, unbounded, retry storm
first time slow: cold start, warm*, cache miss*
bad data: corrupt*, invalid, malformed, validat*
garbage: corrupt*, malformed, invalid, garbled
weird character: encoding, utf-8, unicode, mojibake, escap*
off by an hour: timezone*, time zone, dst, daylight saving, utc
rounding: precision, decimal*, float*
unusual: anomal*, outlier*, suspicious
noisy: alert fatigue, flapping, false positive*, noise
false alarm: false positive*, flapping, noisy
nobody notice: unnoticed, silent*, no alert*, monitor*
silently: silent*, swallow*, unnoticed, no error
spam: abuse, rate limit, captcha, bot*
bot: scraper*, crawler*, abuse, captcha, automated
fake: fraud*, spoof*, bogus, abuse
fraud: chargeback*, risk, fraudulent, suspicious
scam: fraud*, phishing
forget password: password reset, reset*, account recovery
renew: rotat*, expir*, renewal*
translate: locali*, i18n, translation*
language: locale*, i18n, translation*, locali*
spreadsheet: csv, excel, xlsx
chart: dashboard*, graph*, metric*
upload: ingest*, import*, attachment*
download: export*, egress
import: ingest*, etl, load*
export: dump*, extract*, etl
rename: alias*, migrat*
kill: terminat*, sigkill, oom
power cut: outage*, ups, generator*, blackout
too hot: overheat*, thermal, throttl*, cooling
temperature: thermal, overheat*, hvac, sensor*
battery: power, charg*, drain*
device: iot, firmware, edge, hardware
update device: firmware, ota
buffer: bitrate, rebuffer*, cdn, stall*
choppy: lag*, frame*, fps, tick rate, jitter, stutter*
stutter: lag*, frame*, fps, jitter
blurry: resolution, compress*, bitrate
# everyday nouns -> the words systems use for them
stock: inventory, sku*
sold out: inventory, out of stock, oversell*, stock*
oversold: oversell*, inventory, race condition
shipping: fulfil*, deliver*, logistics, carrier*, shipment*
parcel: shipment*, deliver*, tracking, package*
package: shipment*, deliver*, parcel*
truck: fleet, vehicle*, carrier*
warehouse: fulfil*, inventory, depot*
doctor: clinician*, physician*, provider*
medicine: medication*, prescription*, drug*
student: enrol*, learner*
teacher: instructor*, faculty, lecturer*
class: course*, section*, module*
exam: assessment*, test*
salary: payroll, compensation
tax: vat, gst, withholding
transfer money: payout*, wire*, ach, sepa, transfer*
buy: purchas*, checkout, order*, payment*
sell: sale*, order*, checkout, listing*
# a kind of system -> well-known products of that kind ("which database does X use" ->
# a row naming the product)
database: postgres*, mysql*, mariadb, sqlserver*, mssql, oracle, mongo*, cockroach*, dynamo*, cassandra, sqlite*, aurora, influx*, timescale*, clickhouse, rds, spanner, firestore, couchdb, neo4j, redshift, bigquery, snowflake
data warehouse: redshift, bigquery, snowflake, clickhouse, synapse
queue: kafka, rabbitmq, sqs, pubsub, nats, pulsar, kinesis, activemq, celery
message broker: kafka, rabbitmq, nats, pulsar, activemq, mqtt
stream: kafka, kinesis, pulsar, flink, pubsub
streaming: kafka, kinesis, pulsar, flink, pubsub
cache: redis, memcache*, varnish
search engine: elasticsearch, opensearch, solr, algolia, meilisearch
pager: pagerduty, opsgenie, victorops
on call: pagerduty, opsgenie, victorops, rota
sms: twilio, vonage, nexmo, sns, messagebird
cdn: cloudflare, fastly, akamai, cloudfront
monitoring: prometheus, grafana, datadog, newrelic, nagios, zabbix
metrics: prometheus, grafana, datadog, statsd
logs: splunk, elk, loki, kibana, logstash
error tracking: sentry, rollbar, bugsnag
object store: s3, gcs, minio, blob storage
storage: s3, gcs, minio, ebs, nfs
ci: jenkins, github actions, gitlab, circleci, buildkite, travis
orchestrator: kubernetes, nomad, ecs, swarm
payment provider: stripe, adyen, braintree, paypal, worldpay
feature flag: launchdarkly, unleash, flagsmith
secret store: vault, kms, secrets manager
load balancer: nginx, haproxy, envoy, elb, alb, traefik
web server: nginx, apache, caddy
identity provider: okta, auth0, keycloak, azure ad, saml, oidc
single sign on: sso, okta, saml, oidc
crm: salesforce, hubspot, dynamics
analytics: segment, amplitude, mixpanel, google analytics
cloud: aws, gcp, azure
region: us-east*, us-west*, eu-west*, eu-central*, ap-southeast*, ap-northeast*, zone
infrastructure as code: terraform, pulumi, cloudformation, ansible
"""

# Common English irregular verb forms -> their base forms, ``form:base`` separated by
# whitespace (morphological normalisation the suffix stemmer cannot do: "ran" -> "run",
# "broke" -> "break").
IRREGULAR = """
 ran:run broke:break broken:break fell:fall fallen:fall went:go gone:go kept:keep took:take
 taken:take began:begin begun:begin grew:grow grown:grow sent:send lost:lose paid:pay built:build
 caught:catch chose:choose chosen:choose drove:drive driven:drive wrote:write written:write
 spent:spend threw:throw thrown:throw froze:freeze frozen:freeze hid:hide hidden:hide hung:hang
 stuck:stick woke:wake woken:wake left:leave came:come gave:give given:give found:find held:hold
 led:lead meant:mean met:meet put:put read:read said:say saw:see seen:see sold:sell shut:shut
 slid:slide sped:speed spun:spin stole:steal stolen:steal stood:stand swept:sweep swung:swing
 taught:teach thought:think told:tell understood:understand won:win bought:buy brought:bring
 dealt:deal drew:draw drawn:draw fed:feed felt:feel fought:fight forgot:forget forgotten:forget
 knew:know known:know lent:lend risen:rise rang:ring rung:ring sank:sink shook:shake shrank:shrink
 slept:sleep split:split spoke:speak spoken:speak struck:strike swore:swear tore:tear torn:tear
 wore:wear worn:wear blew:blow blown:blow bitten:bite dug:dig flew:fly flown:fly overran:overrun
 rebuilt:rebuild rewrote:rewrite rewritten:rewrite undid:undo upheld:uphold withdrew:withdraw
 mislaid:mislay overslept:oversleep
"""
