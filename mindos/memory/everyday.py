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
  * **Syntax.**  One entry a line, ``key: member, member, ...``, the lines in sorted order
    (plain string order of the whole line, no headings); keys are lowercase base forms of
    letters and single spaces, written as the tokenizer splits them ("can't log in" is
    ``can t log in``); a member ending in "*" is a prefix, a member of several words a
    phrase.  One string rather than a tuple of tuples: loading it costs a copy, and a search
    bisects it for the few lines its words start (:func:`mindos.memory.retrieval._entries`),
    so a longer table costs a search no more than a shorter one.
"""

# Everyday word or phrase (base forms) -> the technical words a note uses for it.
EVERYDAY = """
add up: reconcil*, discrepan*, mismatch*, total*
address: url*, endpoint*, hostname*, dns, ip
ahead: advance, in advance, before, early
all at once: batch*, bulk, burst*, simultaneous*
allowed: permit*, limit*, quota*, authori*, allowlist*, whitelist*
always on: availability, high availability, redundan*, failover
analytics: segment, amplitude, mixpanel, google analytics
approve: approval*, review*, sign-off, signoff
arrive: deliver*, receiv*, ingest*, land*
ask: contact*, owner*, channel*, support
at the same time: concurren*, parallel*, simultaneous*, race condition
automatic: auto*, cron, scheduled, without
back up: backlog*, queue*, congest*
backup: reserve*, standby, spare, failover, replica*
bad data: corrupt*, invalid, malformed, validat*
battery: power, charg*, drain*
behind: lag*, backlog*
bigger machine: scale up, vertical*, instance type
bill: invoice*, billing, charge*
blame: root cause, postmortem*, because
block: denied, deny, forbidden, firewall*, blocklist*, reject*
blow up: spike*, surge*, crash*, explod*
blurry: resolution, compress*, bitrate
bot: scraper*, crawler*, abuse, captcha, automated
bounce: undeliver*, reject*, hard bounce
box: host*, server*, machine*, node*
break: fail*, error*, regression*, broken, outage*, bug*, incident*
broken: fail*, error*, regression*, bug*, outage*
buffer: bitrate, rebuffer*, cdn, stall*
busy: load, traffic, peak*, spike*, surge*, contention, saturat*, concurren*
buy: purchas*, checkout, order*, payment*
by hand: manual*, manually
cache: redis, memcache*, varnish
can t reach: unreachable, connection refused, timeout*, dns, network
cancel: churn*, unsubscrib*, terminat*, revok*
catch up: lag*, backlog*, drain*, replay*
cause: root cause, because, due, trigger*
cdn: cloudflare, fastly, akamai, cloudfront
change: migrat*, switch*, replac*, updat*, modif*
charge twice: duplicate*, idempoten*, double charg*, dedup*
chart: dashboard*, graph*, metric*
cheap: cost*, pric*, budget*, spot
check: validat*, verif*, audit*, inspect*, monitor*, health check
choke: bottleneck*, throttl*, saturat*, congest*
choppy: lag*, frame*, fps, tick rate, jitter, stutter*
ci: jenkins, github actions, gitlab, circleci, buildkite, travis
clash: conflict*, collision*, race condition, overlap*
class: course*, section*, module*
clean up: purg*, prun*, garbage, vacuum*, retention, cleanup, compact*
close: end*, cutoff, deadline*, shut*
cloud: aws, gcp, azure
combine: merg*, consolidat*, aggregat*, batch*
come back: recover*, restor*, resum*, back online
come from: source*, upstream, origin*, ingest*, feed*
come out: releas*, publish*, launch*
complain: ticket*, support, escalat*, feedback
computer: host*, server*, machine*, workstation*
connect: integrat*, wir*, hook*, link*
container: pod*, docker, image*
copy: replica*, replicat*, backup*, mirror*, snapshot*, clone*
cost: spend*, bill*, budget*, pric*, expens*, invoice*
crash: panic*, segfault*, oom, exit*, abort*, restart*, fail*
crm: salesforce, hubspot, dynamics
crowd: traffic, load, concurren*, surge*
customer: user*, client*, tenant*, account*, subscriber*
data warehouse: redshift, bigquery, snowflake, clickhouse, synapse
database: postgres*, mysql*, mariadb, sqlserver*, mssql, oracle, mongo*, cockroach*, dynamo*, cassandra, sqlite*, aurora, influx*, timescale*, clickhouse, rds, spanner, firestore, couchdb, neo4j, redshift, bigquery, snowflake
dawn: sunrise, morning, early
deadline: cutoff, due, sla, expir*
decide: decision*, chose, chosen, adr
delay: latency, lag*
delete: purg*, remov*, drop*, eras*, prun*, retention
device: iot, firmware, edge, hardware
disappear: drop*, lost, missing, evict*, delet*, purg*, expir*
doctor: clinician*, physician*, provider*
double book: conflict*, overbook*, duplicate*, race condition
double: duplicate*, dedup*, idempoten*
down: outage*, downtime, unavailable, offline
download: export*, egress
drop off: decreas*, declin*, dip*, fell
drop: remov*, deprecat*, decommission*, discard*
due: deadline*, cutoff, expir*
earlier: advance*, moved, before
email: smtp, mail*, newsletter*, notif*, sendgrid, mailgun, ses, postmark, mailchimp
end of month: month-end, monthly, close
endless: infinite loop, unbounded, retry storm
error tracking: sentry, rollbar, bugsnag
evening: night, pm, dusk, sunset
every day: daily, nightly, cron
every hour: hourly, cron
every night: nightly, overnight, cron
every week: weekly, cron
exam: assessment*, test*
expensive: cost*, spend*, bill*, pric*
export: dump*, extract*, etl
fake: fraud*, spoof*, bogus, abuse
fall behind: lag*, backlog*, delay*, behind
false alarm: false positive*, flapping, noisy
fast: latency, throughput, quick*
faster: latency, throughput, optimi*, speedup
feature flag: launchdarkly, unleash, flagsmith
feed: pipeline*, ingest*, stream*, import*
file: upload*, blob*, attachment*, document*, object*
fill up: full, capacity, saturat*, exhaust*
find: search*, lookup*, index*, query, queri*
first time slow: cold start, warm*, cache miss*
fix: resolv*, mitigat*, remediat*, workaround*
flaky: intermittent*, flak*, sporadic*, nondetermin*, race condition, retry*
flood: spike*, surge*, burst*, storm
forget password: password reset, reset*, account recovery
forget: evict*, expir*, ttl, purg*
fraud: chargeback*, risk, fraudulent, suspicious
freeze: hung, deadlock*, stall*, unresponsive, frozen, code freeze, moratorium, blackout
fresh: stale, ttl, cache*, latest
full: capacity, exhaust*, quota*, saturat*
garbage: corrupt*, malformed, invalid, garbled
get better: improv*, recover*, optimi*
get rid of: remov*, deprecat*, decommission*, retir*, drop*
get worse: degrad*, regress*, increas*
give up: timeout*, abandon*, dead letter, dlq, max retries, retry*
glitch: bug*, intermittent*, error*
go back: rollback*, revert*, downgrad*
go down: outage*, downtime, unavailable, offline, down
go live: launch*, releas*, cutover, deploy*
go over: exceed*, overrun*, breach*, overage*
go to: destination*, downstream, sink*, export*, rout*
go wrong: fail*, error*, incident*, bug*
gradual: canary, phased, staged, incremental*, percent*, rollout*
group together: batch*, aggregat*, bundl*
grow: scal*, capacity, growth
hack: breach*, compromis*, intrusion*, attack*, exploit*, vulnerab*
handle more: scal*, capacity, throughput, autoscal*
hang: hung, deadlock*, stall*, unresponsive, timeout*, freez*, frozen
heavy: load, large, expensive
help: support, ticket*, helpdesk, runbook*
hidden: mask*, redact*, private, embargo*, concealed
hold up: block*, delay*, bottleneck*, stall*
how fast: within, latency, sla, minutes
how long keep: retention, retain*, ttl, expir*, archiv*
how long: duration, retention, ttl, days, hours, minutes, timeout*
how many: count, number, limit*, capacity, size
how often: every, interval*, frequen*, schedul*, cron, daily, hourly, weekly, nightly
how soon: within, sla, deadline*, minutes, hours
identity provider: okta, auth0, keycloak, azure ad, saml, oidc
ignore: skip*, bypass*, suppress*, mute*
import: ingest*, etl, load*
in advance: ahead, before, early, prior
in charge: owner*, own*, responsib*, maintain*, on-call, oncall
in order: order*, sequen*, fifo
in sync: replicat*, consisten*, sync*
infrastructure as code: terraform, pulumi, cloudformation, ansible
job: cron*, batch*, task*, worker*, pipeline*
join: onboard*, regist*, enrol*
jump: spike*, surge*, increase*
keep crash: crashloop*, crash loop, restart*, oom, panic*
keep restart: crashloop*, crash loop, restart*, oom, backoff, flapping
keep: retain*, retention, persist*, stor*, archiv*
key: secret*, credential*, token*
kill: terminat*, sigkill, oom
language: locale*, i18n, translation*, locali*
late: delay*, lag*, overdue, behind
later: postpon*, delay*, defer*
launch: releas*, deploy*, go-live, rollout*, ship*
law: regulat*, compliance, legal, gdpr
leak: expos*, breach*, secret*, credential*, disclos*
least: minimum, floor, at least
leave: churn*, offboard*, cancel*, unsubscrib*
let in: access, authori*, allowlist*, permission*
limit: quota*, cap, caps, capped, threshold*, maximum, max, ceiling
list: index*, catalog*, registry, inventory
little by little: canary, phased, staged, incremental*, rollout*
load balancer: nginx, haproxy, envoy, elb, alb, traefik
lock out: locked, lockout, denied, forbidden, 403, 401
log out: session*, token*, expir*, logout
logs: splunk, elk, loki, kibana, logstash
look after: owner*, own*, maintain*, operat*
look up: lookup*, search*, query, queri*, index*
lose: loss, lost, drop*, missing, discard*, evict*
lost: loss, drop*, missing, discard*
machine: host*, server*, node*, instance*, vm
max: maximum, limit*, cap, ceiling, quota*
measure: metric*, monitor*, instrument*, benchmark*
medicine: medication*, prescription*, drug*
message broker: kafka, rabbitmq, nats, pulsar, activemq, mqtt
metrics: prometheus, grafana, datadog, statsd
missing: drop*, lost, loss, gap*, absent
mistake: error*, bug*, incorrect, typo*
mix up: mismatch*, inconsisten*, collision*, swap*
money: payment*, billing, revenue, charge*, invoice*, cost*
monitoring: prometheus, grafana, datadog, newrelic, nagios, zabbix
more and more: leak*, growth, grow*, unbounded, increas*
more machines: scale out, autoscal*, horizontal*, replica*, nodes
morning: sunrise, am, early, dawn
most: maximum, limit*, cap, ceiling
move: migrat*, relocat*, transfer*, cutover
never finish: hang*, hung, timeout*, infinite loop, deadlock*
new: latest, upgrade*, migrat*
night: nightly, overnight, evening, midnight
nobody notice: unnoticed, silent*, no alert*, monitor*
noisy: alert fatigue, flapping, false positive*, noise
not arrive: undeliver*, bounc*, drop*, lost, missing
not work: fail*, error*, broken, bug*
notice: alert*, detect*, monitor*
now and then: intermittent*, sporadic*, occasional*, flak*
numbers: metric*, figures, count*, stats, statistic*
object store: s3, gcs, minio, blob storage
off by an hour: timezone*, time zone, dst, daylight saving, utc
old: stale, legacy, deprecat*, outdated, previous, former
on call: pagerduty, opsgenie, victorops, rota
on its own: automat*, auto*, without
one by one: sequential*, serial*
open: start*, begin*, launch*
orchestrator: kubernetes, nomad, ecs, swarm
out of date: stale, outdated, expired, old
out of memory: oom, memory, heap, ram
out of order: reorder*, sequen*, ordering
out of space: disk full, disk, storage, capacity, quota*, volume*
out of sync: drift*, replication lag, inconsisten*, stale, diverg*
overload: saturat*, load, capacity, throttl*, spike*, surge*
overnight: nightly, night
oversold: oversell*, inventory, race condition
overwhelm: saturat*, load, capacity, throttl*, spike*, surge*
overwrite: conflict*, race condition, clobber*, last write
package: shipment*, deliver*, parcel*
page: pages, render*, webpage*
pager: pagerduty, opsgenie, victorops
parcel: shipment*, deliver*, tracking, package*
password: credential*, secret*, passphrase*
pause: suspend*, halt*, throttl*, stop*, hold
pay: payment*, billing, charge*, invoice*, checkout
payment provider: stripe, adyen, braintree, paypal, worldpay
people: user*, staff, employee*, member*
per second: rps, qps, throughput, rate
personal: pii, gdpr, privacy
phone: mobile, app, ios, android, sms
photo: image*, thumbnail*, picture*
picture: image*, photo*, thumbnail*
pile up: backlog*, queue*, lag*, buffer*, accumulat*
plan: roadmap*, schedul*, design*
power cut: outage*, ups, generator*, blackout
price: pricing, tariff*, rate*, cost*
privacy: pii, gdpr, consent, anonymi*
private: pii, personal data, gdpr, confidential, redact*
problem: issue*, incident*, error*, fail*, bug*
program: service*, binary, application, app, script*
promise: sla, slo, guarantee*, commitment*, target*
publish: releas*, dispatch*, broadcast*
pull: fetch*, import*, sync*, ingest*, poll*
push: publish*, send*, export*, notif*
put out: releas*, publish*, deploy*
queue: kafka, rabbitmq, sqs, pubsub, nats, pulsar, kinesis, activemq, celery
quiet: idle, off-peak, low traffic
quit: churn*, cancel*, resign*
randomly: intermittent*, sporadic*, race condition, nondetermin*
reach: connect*, network, reachab*
reader: consumer*, subscriber*, worker*
receive: consum*, ingest*, subscrib*, webhook*, inbound
records: rows, entries, logs, history, archive*
recover: restor*, failover, resum*
refund: chargeback*, revers*, credit*
region: us-east*, us-west*, eu-west*, eu-central*, ap-southeast*, ap-northeast*, zone
remember: cach*, persist*, stor*, memoi*
rename: alias*, migrat*
renew: rotat*, expir*, renewal*
replace: migrat*, supersed*, swap*, deprecat*
responsible: owner*, own*, maintain*
restart: crashloop*, reboot*, respawn*
retry: backoff, redeliver*, retri*
rounding: precision, decimal*, float*
rule: policy, policies, compliance, regulat*, requirement*
run low: exhaust*, quota*, threshold*, capacity, low
run out: exhaust*, quota*, oom, limit*, capacity, depleted, full, starv*
rush: peak*, spike*, surge*, burst*, traffic
safe: secur*, encrypt*, protect*
salary: payroll, compensation
same thing twice: duplicate*, dedup*, idempoten*
save: persist*, stor*, writ*, checkpoint*, snapshot*
scam: fraud*, phishing
scramble: encrypt*, hash*, obfuscat*
screen: ui, page*, view*, display*, dashboard*
search engine: elasticsearch, opensearch, solr, algolia, meilisearch
secret store: vault, kms, secrets manager
sell: sale*, order*, checkout, listing*
send out: publish*, dispatch*, deliver*, notif*, broadcast*
send: publish*, emit*, push*, dispatch*, deliver*, export*
server: host*, node*, instance*, vm
shipping: fulfil*, deliver*, logistics, carrier*, shipment*
shoot up: spike*, surge*, increas*, jump*
shut down: decommission*, disabl*, sunset*, retir*, shutdown
sign off: approval*, review*, approv*
sign up: regist*, enrol*, onboard*, signup*
silently: silent*, swallow*, unnoticed, no error
single sign on: sso, okta, saml, oidc
skip: bypass*, omit*, ignor*
slow down: latency, degrad*, throttl*, bottleneck*
slow: latency, lag*, timeout*, p95, p99, bottleneck*, throughput, delay*
slower: latency, degrad*, regress*
sluggish: latency, degrad*
small group first: canary, pilot*, phased, staged, percentage
sms: twilio, vonage, nexmo, sns, messagebird
sold out: inventory, out of stock, oversell*, stock*
solve: resolv*, fix*, mitigat*, workaround*
sometimes: intermittent*, sporadic*, occasional*, flak*
space: disk*, storage, capacity, volume*, quota*
spam: abuse, rate limit, captcha, bot*
spare: replica*, standby, failover, redundan*, reserve*, backup*
speed up: optimi*, cach*, latency, speedup, parallel*
speed: latency, throughput, performance
split: shard*, partition*, separat*
spread out: distribut*, balanc*, shard*, jitter
spreadsheet: csv, excel, xlsx
staff: employee*, personnel, crew*, team*
start: begin*, launch*, open*, kickoff
step on each other: race condition, conflict*, lock*, contention
stock: inventory, sku*
stop work: fail*, outage*, error*, down, regression*
stop: halt*, disabl*, kill*, terminat*, abort*, suspend*
storage: s3, gcs, minio, ebs, nfs
store: persist*, bucket*, database, s3, disk
stream: kafka, kinesis, pulsar, flink, pubsub
streaming: kafka, kinesis, pulsar, flink, pubsub
stuck: hung, deadlock*, stall*, block*, pending, wedged
student: enrol*, learner*
stutter: lag*, frame*, fps, jitter
swap: replac*, migrat*, switch*
switch off: disabl*, decommission*, feature flag, shut*, turned off
switch over: failover, cutover, switchover, promot*
switch: migrat*, replac*, cutover, toggl*
take forever: latency, timeout*, slow
take long: latency, duration, timeout*, slow
talk to: call*, integrat*, api, client*, connect*, request*
tax: vat, gst, withholding
teacher: instructor*, faculty, lecturer*
tell: notif*, alert*, email*, messag*
temperature: thermal, overheat*, hvac, sensor*
test: staging, canary, qa
text: sms, messag*
throw away: discard*, drop*, purg*, evict*, delet*
tidy: purg*, prun*, cleanup, compact*
too big: size, oversiz*, limit*, large, exceed*
too hot: overheat*, thermal, throttl*, cooling
too many: limit*, quota*, exceed*, throttl*, rate limit, cap
too much: limit*, quota*, exceed*, excess*
tool: cli, script*, utility, service*
transfer money: payout*, wire*, ach, sepa, transfer*
translate: locali*, i18n, translation*
trouble: issue*, incident*, error*, fail*
truck: fleet, vehicle*, carrier*
try again: retry*, retri*, backoff, redeliver*
try out: canary, pilot*, experiment*, beta, staging, trial*
turn off: disabl*, decommission*, feature flag, kill switch, shut*, switched off
turn on: enabl*, feature flag, activat*, switched on
twice: duplicate*, dedup*, idempoten*, double, at-least-once, replay*
undo: rollback*, revert*, roll back, rolled back
unusual: anomal*, outlier*, suspicious
update device: firmware, ota
update: upgrad*, bump*, patch*, refresh*
upgrade: bump*, version*, migrat*
upload: ingest*, import*, attachment*
uptime: availability, sla, slo, nines
use up: exhaust*, consum*, quota*, deplet*
vanish: drop*, lost, missing, evict*, expir*
video: stream*, transcod*, media
wait: timeout*, latency, queue*, pending, block*, delay*
wake: pager*, paging, paged, on-call, oncall, alert*, escalat*
warehouse: fulfil*, inventory, depot*
warn: alert*, alarm*, notif*, threshold*, pager*, paging
warning: alert*, alarm*, notif*, threshold*
watch: monitor*, observ*, alert*, dashboard*
web server: nginx, apache, caddy
website: web, site, frontend, homepage, page*
weekend: saturday, sunday
weird character: encoding, utf-8, unicode, mojibake, escap*
when: schedul*, cron, deadline*, date, time
where keep: stor*, bucket*, database, s3, volume*
where: stor*, host*, locat*, region*, kept
who can: access, permission*, role*, rbac, authori*
who run: owner*, own*, operat*, maintain*
who: owner*, own*, on-call, oncall, maintain*, team*
why change: because, after, reason*, root cause
why: because, due to, caus*, root cause, after, so
without asking: automat*, without approv*, auto*
work around: workaround*, mitigat*, fallback*, manual*
worker: consumer*, job*, process*, daemon*
wrong: incorrect, mismatch*, bug*, invalid, inconsisten*, corrupt*
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
