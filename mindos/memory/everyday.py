"""Everyday words and phrases read as the technical words engineering notes use.

memory-search's bridge over the commonest vocabulary gap: a question asked in plain words
about a note written in the trade's words ("why did the consumers fall behind" -> a note
about lag and a backlog).  Loaded only by memory-search (packs never read it), so a
pack build pays nothing for it.

Design decisions
  * **One direction.**  Unlike :data:`mindos.memory.retrieval.SYNONYM_GROUPS` (words that mean the same
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
abandon: abandon*, drop-off, churn*
abroad: international, cross-border, geo*, region*
accessible: accessibility, a11y, aria, wcag, screen reader*
accidentally: accidental*, human error, fat finger*
accountant: accounting, finance, ledger*, bookkeep*
accurate: accuracy, precision, error rate
add extra info: enrich*, decorat*, augment*, lookup*
add machine: scale out, autoscal*, node*, capacity
add on: plugin*, extension*, addon*, integration*
add up: reconcil*, discrepan*, mismatch*, total*
address: url*, endpoint*, hostname*, dns, ip
admin: root, superuser, privileg*, elevated
ads: advertis*, ad network*, campaign*, attribution
advert: advertis*, campaign*, ad network*
affect: impact*, blast radius, affected
after hour: off-peak, after-hours, overnight, maintenance window
agree: decision*, consensus, sign-off, approv*, adr
ahead: advance, in advance, before, early
ai: llm, model*, ml, gpt, openai, anthropic, machine learning
alert: notif*, push*
all at once: batch*, bulk, burst*, simultaneous*
allow: permit*, allowlist*, authori*, whitelist*
allowed: permit*, limit*, quota*, authori*, allowlist*, whitelist*
always on: availability, high availability, redundan*, failover
amazon: aws, kinesis, sqs, s3, ec2, dynamodb, lambda
america: amer, us-east*, us-west*, na, north america, latam
analytics: segment, amplitude, mixpanel, google analytics
android: fcm, play store, google play, apk
announce: announc*, changelog, release note*, status page
annoying: friction, ux, usability, nag*
answer from our doc: rag, retrieval, embedding*, vector*, grounding
anyone can see: public, exposed, acl, unauthenticated
app store: app store review, testflight, play console, submission*, review*
appointment: booking*, slot*, schedul*, calendar*
approve: approval*, review*, sign-off, signoff
arrive late: late-arriving, late arriving, watermark*, lag*, delay*
arrive: deliver*, receiv*, ingest*, land*
asia: apac, ap-southeast*, ap-northeast*, ap-south*, asia-pacific
ask: contact*, owner*, channel*, support
assembly line: production line, plc, mes, oee
at night: off-peak, overnight, nightly
at random: intermittent*, sporadic*, nondetermin*, flak*, race condition
at the same time: concurren*, parallel*, simultaneous*, race condition
attack: ddos, brute force, exploit*, intrusion*
auditor: audit*, soc 2, soc2, iso 27001, compliance, evidence
automated test: ci, unit test*, integration test*, e2e
automatic: auto*, cron, scheduled, without
back out: revert*, rollback*
back up: backlog*, queue*, congest*
backup plan: fallback*, failover, contingency, disaster recovery
backup: reserve*, standby, spare, failover, replica*
bad data: corrupt*, invalid, malformed, validat*
bad message: poison*, dlq, dead letter, malformed
balance the book: reconcil*, ledger*, accounting
balance: balanc*, rebalanc*, distribut*, load balanc*, ledger*, balance*, reconcil*
balloon: grow*, leak*, bloat*, spike*
band aid: workaround*, hotfix*, stopgap, temporary
bank account: iban, ach, sepa, payout*, account number*
bank transfer: ach, sepa, wire*, iban, bank transfer*
bank: ach, sepa, wire*, psp, payout*, iban
banned: prohibit*, forbidden, blocklist*, denylist*, must not
barcode: scan*, sku*, qr, ean, upc
basket: cart*, checkout
battery: power, charg*, drain*
begin: start*, launch*, init*
behind schedule: delay*, slip*, overdue, late, at risk
behind: lag*, backlog*
belgium: europe-west1
bias: fairness, bias*, skew*
big file: multipart, chunk*, large object*, size limit, upload limit
big sale: black friday, cyber monday, promotion*, peak*, flash sale*
big table: partition*, shard*, archiv*, bloat*
bigger machine: scale up, vertical*, instance type
bill go up: cost*, spend*, overage*, increas*
bill: invoice*, billing, charge*
blame: root cause, postmortem*, because
blank page: blank, white screen, render*, hydration, js error*
blank: null*, empty, missing, default*
blip: transient, intermittent*, glitch*, brief outage, hiccup*
block: denied, deny, forbidden, firewall*, blocklist*, reject*
blow up: spike*, surge*, crash*, explod*
blur: mask*, redact*, pixelat*
blurry: resolution, compress*, bitrate
booking: reservation*, appointment*, slot*
boot: startup, init*, cold start, reboot*
boss: manager*, approv*, escalat*
bot: scraper*, crawler*, abuse, captcha, automated
bottleneck: throughput, contention, saturat*, latency
bounce back: bounc*, undeliver*, hard bounce
bounce: undeliver*, reject*, hard bounce
box: host*, server*, machine*, node*
break in: breach*, intrusion*, compromis*, unauthori*
break up: split*, shard*, partition*, decompos*
break: fail*, error*, regression*, broken, outage*, bug*, incident*, deprecat*, incompatib*, breaking change*
breaking news: alert*, push*, urgent
bring back: restor*, recover*, rollback*, undelet*
bring down: cascad*, outage*, single point of failure, spof
broken link: 404, dead link*, redirect*
broken message: poison*, malformed, dlq, dead letter, invalid
broken: fail*, error*, regression*, bug*, outage*, malformed, invalid, corrupt*
browse: pagina*, page*, scroll*, catalog*
browser warning: cert*, tls, ssl, https, mixed content, hsts
budget: spend*, cost*, forecast*, cap
buffer: bitrate, rebuffer*, cdn, stall*
bug report: issue*, ticket*, bug*, defect*, triag*
build break: ci, pipeline*, build fail*, red build, broken build
bump up: increas*, rais*, bump*
bunch: batch*, bulk, group*
bus late: eta, delay*, gps, avl
busiest day: peak*, black friday, record traffic
busiest time: peak*, busiest, traffic
business day: working day*, business day*, t+1, settlement*
business hour: working hours, support hours, office hours, sla
busy season: peak*, freeze, black friday, holiday*
busy: load, traffic, peak*, spike*, surge*, contention, saturat*, concurren*
button: ui, click*, cta, tap*
buy: purchas*, checkout, order*, payment*
buzz: push*, notif*, vibrat*
by hand: manual*, manually
by mistake: accidental*, human error, fat finger*, typo*
cable: network, fiber, link*, physical
cache: redis, memcache*, varnish
calendar: schedul*, ical, booking*
california: us-west-1
callback: webhook*, hook*, notification*
camera: video, image*, rtsp, stream*
can t connect: connection refused, unreachable, timeout*, network, firewall*, dns, tls
can t log in: auth*, login*, sso, session*, lockout, locked, credential*, 401, mfa
can t reach: unreachable, connection refused, timeout*, dns, network
can t read: pars*, decod*, deserializ*, corrupt*, encoding, unreadable
can t reproduce: repro, reproduc*, intermittent*
can t see: observab*, logging, trac*, blind spot*, visibility
can t sign in: auth*, login*, sso, session*, lockout, locked, credential*, 401, mfa
can t tell apart: collision*, ambiguous, duplicate*, uniqueness
can t watch: playback, geo-block*, drm, licens*
canada: ca-central-1
cancel: churn*, unsubscrib*, terminat*, revok*
candidate: applicant*, ats, recruit*
cannot connect: connection refused, unreachable, timeout*, network, firewall*, dns, tls
cannot find: search*, index*, missing, 404, not found, zero result*
cannot log in: auth*, login*, sso, session*, lockout, locked, credential*, 401, mfa
cannot reach: unreachable, connection refused, timeout*, dns, network
caption: subtitle*, vtt, srt, accessibility, transcri*
car: vehicle*, telematics, fleet
card company: card network*, visa, mastercard, scheme*, issuer*
card decline: declin*, payment fail*, insufficient funds, dunning, retry*
card number: pan, pci, tokeniz*, masked
card reader: pos, terminal*, emv, nfc
card: credit card, card*, payment*, stripe, pci
cash register: pos, point of sale, terminal*
catch up: lag*, backlog*, drain*, replay*
catch: detect*, alert*, monitor*, validat*, lint*
cause: root cause, because, due, trigger*
cdn: cloudflare, fastly, akamai, cloudfront
certificate run out: cert*, tls, expir*, renew*, letsencrypt, acme
change plan: plan change*, proration, subscription*, tier*, upgrad*, downgrad*
change: migrat*, switch*, replac*, updat*, modif*
charge twice: duplicate*, idempoten*, double charg*, dedup*
charge wrong amount: proration, billing error*, rounding, currency, overcharg*
charge: billing, payment*, invoice*, capture*, subscription*, fee*
chart: dashboard*, graph*, metric*
chat: slack, teams, chatops, channel*, messag*
chatbot: llm, bot*, assistant*, gpt, model*
chatty: noisy, verbose, log volume, alert fatigue
cheap storage: cold storage, glacier, archive tier, coldline, infrequent access
cheap: cost*, pric*, budget*, spot
cheat: plagiarism, proctor*, academic integrity, cheat*
check my work: review*, reviewer*, verif*
check who: kyc, identity, verif*, background check*
check: validat*, verif*, audit*, inspect*, monitor*, health check
checklist: runbook*, playbook*, procedure*
choke: bottleneck*, throttl*, saturat*, congest*
choose: decision*, select*, chose*, adr
chop off: truncat*
choppy: lag*, frame*, fps, tick rate, jitter, stutter*
ci: jenkins, github actions, gitlab, circleci, buildkite, travis
city: region*, geo*, locale*, locat*
clash: conflict*, collision*, race condition, overlap*
class list: roster*, enrol*, enrollment
class: course*, section*, module*
clean code: refactor*, cleanup, tech debt, lint*
clean up: purg*, prun*, garbage, vacuum*, retention, cleanup, compact*
clean: sanitiz*, scrub*, validat*, cleans*
clear out: purg*, cleanup, evict*, prun*
clear: purg*, invalidat*, flush*, evict*, wipe*
click through: e2e, end-to-end, selenium, playwright, cypress, ui test*
client: customer*, tenant*, account*
climb: increas*, grow*, spike*, rising
clock change: dst, daylight saving, timezone*, utc
clock go back: dst, daylight saving
clock go forward: dst, daylight saving
clock wrong: clock skew, drift*, ntp, time sync*
clock: ntp, clock skew, timestamp*, time sync*, dst
clog: backlog*, congest*, block*, saturat*
close enough: tolerance, threshold*, approximat*
close the book: month-end, close, ledger*, reconcil*
close to user: edge, cdn, region*, latency
close: end*, cutoff, deadline*, shut*
cloud: aws, gcp, azure
clunky: usability, ux, friction, legacy
code change: commit*, pull request*, pr, diff*, patch*
code on phone: otp, totp, mfa, 2fa, sms
cold snap: freez*, temperature, peak demand
cold: temperature, refrigerat*, cold chain, freez*
collapse: crash*, outage*, cascad*, meltdown
color blind: contrast, accessibility, wcag
colour blind: contrast, accessibility, wcag
combine: merg*, consolidat*, aggregat*, batch*
come and go: intermittent*, sporadic*, flapping, transient
come back: recover*, restor*, resum*, back online
come from: source*, upstream, origin*, ingest*, feed*
come out: releas*, publish*, launch*
compare: diff*, comparison, a/b, benchmark*
complain: ticket*, support, escalat*, feedback
complicated: complexity, refactor*, simplif*, tech debt
compress: gzip, brotli, compress*, zstd
computer: host*, server*, machine*, workstation*
confusing: ux, usability, unclear, documentation, copy
connect: integrat*, wir*, hook*, link*
contactless: nfc, emv, tap to pay
container: pod*, docker, image*
contract: agreement*, msa, sla, terms, renewal*
contractor: vendor*, external, freelanc*
cookie banner: consent, cmp, gdpr, cookie*
cool down: cooldown, backoff, throttl*
copy of production: staging, snapshot*, clone*, anonymi*
copy of the data: replica*, replicat*, snapshot*, backup*
copy over: replicat*, sync*, migrat*, export*, import*
copy: replica*, replicat*, backup*, mirror*, snapshot*, clone*
correction: erratum, errata, correction*, retraction*
cost: spend*, bill*, budget*, pric*, expens*, invoice*
count wrong: miscount*, discrepan*, double count*
country: geo*, region*, locale*, geoip, geo-block*, jurisdiction*
cover for: on-call, backup, swap*, rota, override*
crash: panic*, segfault*, oom, exit*, abort*, restart*, fail*
crawl: latency, slow*, degrad*, throughput
creep up: leak*, grow*, drift*, gradual*, increas*
crew: roster*, duty, rest rule*, ftl, pairing*
crm: salesforce, hubspot, dynamics
crop: yield*, harvest*, planting
crowd: traffic, load, concurren*, surge*
customer support: support, helpdesk, zendesk, ticket*, intercom
customer: user*, client*, tenant*, account*, subscriber*
cut cost: cost*, rightsiz*, reserved, savings plan, spot, budget*
cut in half: reduc*, half, 50%
cut off: truncat*, timeout*, disconnect*, cutoff
cut out: disconnect*, drop*, outage*, dropout*
dark mode: theme*, dark theme, color scheme
data centre: datacenter, data center, region*, dc
data late: late-arriving, watermark*, lag*, delay*, sla
data warehouse: redshift, bigquery, snowflake, clickhouse, synapse
database person: dba, database admin*
database: postgres*, mysql*, mariadb, sqlserver*, mssql, oracle, mongo*, cockroach*, dynamo*, cassandra, sqlite*, aurora, influx*, timescale*, clickhouse, rds, spanner, firestore, couchdb, neo4j, redshift, bigquery, snowflake
date format: locale*, iso 8601, date format*, i18n
dawn: sunrise, morning, early
dead: down, outage*, crash*, unresponsive, dead letter, dlq
deadline: cutoff, due, sla, expir*
deal with: handl*, mitigat*, process*, runbook*
decide which: routing, rule*, criteria, algorithm*, priorit*
decide: decision*, chose, chosen, adr
decline: declin*, reject*, denied, payment fail*
deep into the list: pagination, offset*, deep page*
delay: latency, lag*
delayed flight: delay*, irops, disruption*
delete a customer: erasure, gdpr, deletion request*, anonymi*
delete by mistake: restor*, backup*, soft delete, undelete, accidental*
delete my data: erasure, right to be forgotten, gdpr, deletion request*, dsar
delete: purg*, remov*, drop*, eras*, prun*, retention
delivery driver: courier*, route*, fleet, dispatch*, rider*
demo: showcase, review*, staging, preview
deny: denied, forbidden, blocklist*, reject*, denylist*
depend on: dependenc*, upstream, requir*, coupl*
designer: design*, ux, ui, figma
device: iot, firmware, edge, hardware
dial down: reduc*, throttl*, lower*, decreas*
die: crash*, oom*, kill*, terminat*, exit*, dead letter, dlq
dip: decreas*, drop*, declin*
disagree: inconsisten*, mismatch*, diverg*, conflict*, split brain
disappear: drop*, lost, missing, evict*, delet*, purg*, expir*
disaster: disaster recovery, dr, failover, backup*, bcp
disconnect: disconnect*, drop*, reconnect*, websocket*, connection reset, timeout*
discount: coupon*, promo*, voucher*
dispute: chargeback*, disput*
doctor: clinician*, physician*, provider*
doesn t match: mismatch*, discrepan*, inconsisten*, drift*, reconcil*
dollar: currency, usd, fx, exchange rate*
domain: dns, record*, cname, registrar, nameserver*
domino: cascad*, cascading failure*, blast radius, bulkhead*
don t match: mismatch*, discrepan*, inconsisten*, drift*, reconcil*
double book: conflict*, overbook*, duplicate*, race condition
double check: verif*, validat*, review*, reconcil*, confirm*
double count: duplicate*, dedup*, double count*
double: duplicate*, dedup*, idempoten*
down: outage*, downtime, unavailable, offline
download: export*, egress
drag: latency, slow*, degrad*
drop off: decreas*, declin*, dip*, fell
drop: remov*, deprecat*, decommission*, discard*, lost, loss, packet loss, shed*, reject*
due: deadline*, cutoff, expir*
each other s data: isolation, multi-tenan*, cross-tenant
earlier: advance*, moved, before
early access: beta, preview, feature flag*, waitlist*
early warning: alert*, threshold*, canary, monitor*, anomal*
earn: revenue, income, payout*, earnings
eat: consum*, memory, leak*, exhaust*, cpu
electricity use: consumption, kwh, load, demand
electricity: power, kwh, energy, grid, utility
email check: spf, dkim, dmarc
email look wrong: template*, html, render*
email: smtp, mail*, newsletter*, notif*, sendgrid, mailgun, ses, postmark, mailchimp, spf, dkim, dmarc
emergency: incident*, sev1, hotfix*, outage*, break glass
empty field: null*, blank, missing, required
empty: purg*, flush*, drain*, truncat*
end of month: month-end, monthly, close
end of year: year-end, annual, q4, fiscal
end up in spam: deliverability, spf, dkim, dmarc, reputation
endless: infinite loop, unbounded, retry storm
error message: error*, exception*, stack trace*, stacktrace*
error tracking: sentry, rollbar, bugsnag
estimate: estimat*, story point*, sizing, eta
euro: currency, fx, eur, exchange rate*, conversion
europe: emea, eu-west*, eu-central*, eu-north*
european: eu, emea, psd2, gdpr
evening: night, pm, dusk, sunset
every day: daily, nightly, cron
every few minute: interval*, poll*, cron, periodic*
every five minute: cron, interval*, poll*
every hour: hourly, cron
every minute: 60 s, 60s, per minute, interval*, cron
every night: nightly, overnight, cron
every so often: intermittent*, sporadic*, occasional*, periodic*
every week: weekly, cron
everyone at once: thundering herd, stampede, burst*, concurren*, spike*
everyone: 100%, all users, global, fleet-wide
exam: assessment*, test*
exchange rate: fx, currency, conversion
expensive: cost*, spend*, bill*, pric*
expert: sme, owner*, maintainer*
export: dump*, extract*, etl
extra check: 3ds, 3-d secure, sca, mfa, step-up, challenge*
extra detail: enrich*, metadata, lookup*
extra step: 3ds, 3-d secure, sca, mfa, step-up, challenge*
factory: plant, production, mes, scada, plc
failed login: lockout, brute force, login attempt*, rate limit*
fake email: phishing, spoof*, dmarc, spf, dkim
fake: fraud*, spoof*, bogus, abuse, mock*, stub*
fall back: fallback*, failover, degrad*
fall behind: lag*, backlog*, delay*, behind
fall over: crash*, outage*, oom, overload*, fail*, down
fall through the crack: drop*, lost, missing, unprocess*, orphan*
false alarm: false positive*, flapping, noisy
fan out: fanout, fan-out, broadcast*, pubsub
far away: latency, region*, cdn, edge, geo*
fast: latency, throughput, quick*
faster: latency, throughput, optimi*, speedup
faulty: defect*, fault*, malfunction*, reject*
feature flag: launchdarkly, unleash, flagsmith
feature request: roadmap*, backlog*, enhancement*, rfc
feed: pipeline*, ingest*, stream*, import*
fewer people buy: conversion*, funnel, checkout abandon*, drop-off
fewer server: scale in, scale down, downsiz*, rightsiz*
figure out: investigat*, debug*, diagnos*, root cause
file drop: sftp, s3, bucket*, upload*
file too big: upload limit, max body size, 413, multipart, size limit
file: upload*, blob*, attachment*, document*, object*
fill in detail: enrich*, backfill*, hydrat*, lookup*
fill in: backfill*, gap*, missing, enrich*
fill the gap: backfill*, gap*, missing
fill up: full, capacity, saturat*, exhaust*
finance: accounting, ledger*, erp, netsuite, quickbooks, invoic*
find a game: matchmak*, lobby, queue*
find similar: embedding*, vector*, similarity, knn, ann
find: search*, lookup*, index*, query, queri*
fingerprint: biometric*, touch id, face id, checksum*, hash*
finish: complet*, done, finaliz*, finish*
fire drill: drill*, game day, chaos, disaster recovery
firewall: security group*, acl, ingress, egress, allowlist*
first time slow: cold start, warm*, cache miss*
fix a mistake: correction*, erratum, amend*, revert*
fix: resolv*, mitigat*, remediat*, workaround*
flaky: intermittent*, flak*, sporadic*, nondetermin*, race condition, retry*
flight delay: delay*, irops, disruption*
flip flop: flapping, flap*, oscillat*
flood: spike*, surge*, burst*, storm
follow a request: trac*, span*, opentelemetry, correlation id*, request id*
follow: trac*, track*, monitor*
font: typograph*, webfont*, font*
footprint: memory, size, disk, bundle size
for everyone: global, all users, outage*, fleet-wide
foreign money: currency, fx, exchange rate*, conversion
forget me: erasure, right to be forgotten, gdpr, deletion request*, dsar
forget password: password reset, reset*, account recovery
forget to: missed, manual*, omission, checklist*, automat*
forget: evict*, expir*, ttl, purg*
form: form*, input*, validat*, field*
frankfurt: eu-central-1
fraud: chargeback*, risk, fraudulent, suspicious
free trial: trial*, freemium
free: free tier, trial*, freemium, no charge
freeze: hung, deadlock*, stall*, unresponsive, frozen, code freeze, moratorium, blackout
fresh: stale, ttl, cache*, latest
fridge: refrigerat*, cold chain, temperature, chiller*, reefer*
from home: remote, vpn, zero trust
from time to time: intermittent*, sporadic*, occasional*
full: capacity, exhaust*, quota*, saturat*
garbage: corrupt*, malformed, invalid, garbled
garble: corrupt*, encoding, malformed, mojibake
genuine: verif*, authentic*, signature*
get back: restor*, recover*, undelet*
get better: improv*, recover*, optimi*
get kill: oomkill*, oom, evict*, sigkill, terminat*
get out the door: releas*, ship*, deploy*, launch*
get page: pager*, paging, paged, on-call, oncall, alert*, pagerduty, escalat*
get paid: payout*, settlement*, payroll, invoice*
get ready: prepar*, prewarm*, pre-scal*, capacity plan*, load test*, readiness
get rid of: remov*, deprecat*, decommission*, retir*, drop*
get worse over time: drift*, degrad*, decay*, retrain*
get worse: degrad*, regress*, increas*
give access: grant*, provision*, permission*, role*
give everyone: full rollout, rollout*, 100%, general availability, ga
give up on checkout: cart abandon*, checkout abandon*, drop-off, funnel
give up: timeout*, abandon*, dead letter, dlq, max retries, retry*, times out, timed out, time out
glitch: bug*, intermittent*, error*
go around in circle: loop*, redirect loop, infinite loop, cycle*
go away: sunset*, deprecat*, end of life, eol, retir*, remov*
go back: rollback*, revert*, downgrad*
go dark: outage*, offline, down, blackout, unreachable
go down: outage*, downtime, unavailable, offline, down
go live: launch*, releas*, cutover, deploy*
go missing: lost, missing, drop*, gap*, orphan*
go off: alert*, alarm*, trigger*, fired
go offline: outage*, offline, down, unavailable
go out: releas*, deploy*, dispatch*, send*
go over: exceed*, overrun*, breach*, overage*
go quiet: heartbeat*, silent*, offline, last seen, no data
go to: destination*, downstream, sink*, export*, rout*
go up: increas*, rise, rising, spike*, grow*, higher
go wrong: fail*, error*, incident*, bug*
goal: target*, objective*, okr*, slo
good enough: threshold*, acceptance criteria, slo, target*
good for: valid*, expir*, ttl, lifetime
google: gcp, bigquery, pubsub, gke, firebase, gcs
gps: location*, coordinates, geofenc*
grade: gradebook, assessment*, mark*, score*
gradual: canary, phased, staged, incremental*, percent*, rollout*
graph: dashboard*, grafana, metric*, chart*
graphics card: gpu, a100, h100, cuda, nvidia
green light: approv*, sign-off, go/no-go, go-ahead
green: pass*, success*, green build
group together: batch*, aggregat*, bundl*
grow: scal*, capacity, growth
guess password: brute force, credential stuffing, lockout, rate limit*
guess: predict*, model*, inference, classif*, forecast*, estimat*
guest: anonymous, guest checkout, unauthenticated, visitor*
hack: breach*, compromis*, intrusion*, attack*, exploit*, vulnerab*
half done: partial*, incomplete, interrupt*, resum*
half written: partial*, truncat*, torn write, corrupt*
halve: reduc*, half, 50%
hammer: load, spike*, flood*, ddos, brute force, hot key
hand out access: grant*, provision*, permission*, role*
hand over: handoff*, handover*, transition*, onboard*
handbook: wiki, docs, policy, guide*
handle more: scal*, capacity, throughput, autoscal*
hang on to: retain*, retention
hang: hung, deadlock*, stall*, unresponsive, timeout*, freez*, frozen
hard to use: usability, ux, friction
heal: self-heal*, auto-recover*, restart*, recover*
health data: phi, hipaa, ehr
heat wave: heatwave, heat, peak demand, temperature
heatwave: heat, peak demand, temperature
heavy page: bundle size, payload, js, asset*
heavy: load, large, expensive
help desk: zendesk, freshdesk, servicenow, ticket*, helpdesk
help: support, ticket*, helpdesk, runbook*
hiccup: transient, blip*, intermittent*, glitch*
hidden: mask*, redact*, private, embargo*, concealed
hide: mask*, redact*, hidden, conceal*
high score: leaderboard*, ranking*, rank*, score*
hijack: takeover, hijack*, compromis*, session fixation
hiring: recruit*, ats, greenhouse, candidate*, interview*
hit and miss: intermittent*, flak*, sporadic*, nondetermin*
hog: consum*, saturat*, cpu, memory, contention, noisy neighbor*
hold back: pin*, defer*, delay*, throttl*
hold up: block*, delay*, bottleneck*, stall*
hole: vulnerab*, cve*, exploit*, gap*
holiday: freeze, blackout, moratorium, pto, leave, vacation
home address: postal, geocod*, address*, postcode*, zip
home screen: widget*, launcher, icon*
homework: assignment*, submission*, coursework
hook up: integrat*, connect*, wir*
hosting provider: aws, gcp, azure, heroku, vercel, netlify, digitalocean, hetzner
hosting: host*, aws, gcp, azure, heroku, vercel, netlify
hot spell: heatwave, heat, peak demand, temperature
hot: hot spot*, hotspot*, hot key*, hot partition*, overheat*, thermal
hotel room: inventory, reservation*, pms, allotment*
how accurate: accuracy, precision, error rate, tolerance
how bad: severity, sev*, impact, blast radius
how big: size, capacity, volume, gb, tb
how come: because, due to, root cause, caus*
how far back: retention, history, archiv*, lookback, backfill*
how fast: within, latency, sla, minutes
how fresh: stale, ttl, lag*, freshness, latency
how long keep: retention, retain*, ttl, expir*, archiv*
how long to recover: rto, recovery time, restor*
how long will it take: estimat*, eta, timeline*
how long: duration, retention, ttl, days, hours, minutes, timeout*
how many: count, number, limit*, capacity, size
how much can it take: load test*, capacity, stress test*, benchmark*, throughput
how much data: rpo, backup*, retention, volume, size
how often: every, interval*, frequen*, schedul*, cron, daily, hourly, weekly, nightly
how soon: within, sla, deadline*, minutes, hours
huge: large, oversiz*, bloat*, size, volume
human check: human in the loop, review*, moderation, label*
human error: manual*, typo*, fat finger*, mistake*
human resource: hris, payroll, people ops, workday, bamboohr
humid: humidity, rh, dew point
hurry: urgent, priorit*, expedit*, fast-track*
idea: proposal*, rfc, design doc*, adr
identity provider: okta, auth0, keycloak, azure ad, saml, oidc
identity: kyc, verif*, id check*, onfido, jumio, identity verification
idle: underutil*, overprovision*, rightsiz*, unused, utilization, low cpu
ignore: skip*, bypass*, suppress*, mute*
image quality: compress*, resolution, jpeg, webp, avif
impersonate: spoof*, phishing, impersonat*
import: ingest*, etl, load*
in advance: ahead, before, early, prior
in charge: owner*, own*, responsib*, maintain*, on-call, oncall
in line: queue*, backlog*, pending
in order: order*, sequen*, fifo
in sync: replicat*, consisten*, sync*
income: revenue, earnings, mrr, arr
incoming: inbound, webhook*, ingest*, receiv*
infrastructure as code: terraform, pulumi, cloudformation, ansible
instead of: replac*, over, rather than, migrat*, alternative*
instruction: runbook*, playbook*, docs, guide*, readme, how-to
internet: network, connectivity, egress, ingress, isp
iowa: us-central1
ipad: ios, apns, apple, tablet*
iphone: ios, apns, apple, app store, testflight
ireland: eu-west-1
jam: deadlock*, congest*, backlog*, block*, stall*
job: cron*, batch*, task*, worker*, pipeline*
join: onboard*, regist*, enrol*
jump around: layout shift, cls, reflow
jump: spike*, surge*, increase*
junk: spam*, deliverability, spf, dkim, dmarc
keep a copy: cach*, replica*, snapshot*, backup*
keep crash: crashloop*, crash loop, restart*, oom, panic*
keep disconnect: reconnect*, disconnect*, flapping, websocket*, keepalive, idle timeout
keep fail: retry*, flapping, repeated*, crashloop*, backoff
keep from: prevent*, guard*, protect*
keep get: repeat*, recurr*, retri*, retry*, again
keep go: graceful degrad*, fallback*, resilien*
keep grow: leak*, unbounded, growth, bloat*
keep happen: recurr*, repeat*, flapping, regression*
keep nearby: cach*, edge, cdn, local*
keep people informed: status page, comms, update*, notif*
keep restart: crashloop*, crash loop, restart*, oom, backoff, flapping
keep track: track*, monitor*, log*, inventory, record*
keep: retain*, retention, persist*, stor*, archiv*
key: secret*, credential*, token*
kick off: evict*, preempt*, disconnect*, logout, trigger*, start*, launch*
kick out: session*, logout, logged out, expir*, token*, revok*, evict*
kill: terminat*, sigkill, oom
knob: config*, tunable*, parameter*, setting*, flag*
knock on effect: cascad*, downstream, blast radius
know your customer: kyc
kubernetes: eks, gke, aks, openshift, k3s
label: annotat*, label*, tag*
laggy: lag*, latency, jitter, delay*
language: locale*, i18n, translation*, locali*
laptop: device*, endpoint*, mdm, workstation*
last day: cutoff, deadline*, final day
late payment: dunning, overdue, arrears, past due
late: delay*, lag*, overdue, behind, late fee*, penalt*
later: postpon*, delay*, defer*
launch day: go-live, launch*, releas*
launch: releas*, deploy*, go-live, rollout*, ship*
law: regulat*, compliance, legal, gdpr
lawyer: legal, counsel, compliance
leak: expos*, breach*, secret*, credential*, disclos*
leap: leap year, leap second, february 29, feb 29
learn from: postmortem*, retro*, lesson*
learn: train*, model*, fit*
least: minimum, floor, at least
leave company: offboard*, deprovision*, revok*
leave the company: offboard*, deprovision*, revok*, last day, leaver*
leave the team: offboard*, handoff*, handover*, deprovision*
leave: churn*, offboard*, cancel*, unsubscrib*
lesson: postmortem*, retro*, learning*, takeaway*
let in: access, authori*, allowlist*, permission*
library: dependenc*, package*, librar*, sdk*, module*
lightweight: footprint, minimal, small
limit how many: rate limit*, throttl*, quota*, concurrency
limit: quota*, cap, caps, capped, threshold*, maximum, max, ceiling
link preview: open graph, og tags, unfurl*, thumbnail*
list: index*, catalog*, registry, inventory
little by little: canary, phased, staged, incremental*, rollout*
live connection: websocket*, persistent connection*, long-poll*, sse, keepalive
live: realtime, stream*, production, prod
load balancer: nginx, haproxy, envoy, elb, alb, traefik
load forever: timeout*, hung, spinner*, latency
load time: page load, lcp, fcp, tti, bundle*, latency
loading circle: buffer*, rebuffer*, spinner*, stall*
location: geo*, gps, coordinates, geolocation
lock down: restrict*, harden*, least privilege, firewall*, allowlist*
lock out: locked, lockout, denied, forbidden, 403, 401
lock the version: pin*, lockfile*
lock up: deadlock*, hung, lock*, contention, freez*
lock version: pin*, lockfile*, version*
log out: session*, token*, expir*, logout, cookie*, idle, max-age, refresh token*
logs: splunk, elk, loki, kibana, logstash
london: eu-west-2
look after: owner*, own*, maintain*, operat*
look back: postmortem*, retro*, retrospective*, review*, rca
look broken: css, layout, render*, style*, regression*
look into: investigat*, triag*, debug*, root cause
look over: review*, audit*, inspect*
look the same: duplicate*, dedup*, collision*
look up: lookup*, search*, query, queri*, index*
look wrong: css, layout, render*, style*, regression*
lookup table: index*, cache*, dictionary, mapping*
loop: infinite loop, retry storm, cycle*, redirect loop
lopsided: skew*, imbalanc*, hot spot*
lose data: rpo, backup*, data loss, recovery, point-in-time
lose track: orphan*, untracked, drift*, inventory
lose: loss, lost, drop*, missing, discard*, evict*
lost contact: heartbeat*, disconnect*, offline, unreachable, last seen
lost laptop: mdm, full disk encryption, remote wipe, device*
lost phone: mdm, remote wipe, device*
lost: loss, drop*, missing, discard*
loud: noisy, volume, verbose
machine break: downtime, maintenance, mtbf, breakdown*
machine down: downtime, maintenance, breakdown*
machine: host*, server*, node*, instance*, vm, cluster*, ec2, vm*
main copy: primary, master, leader, writer, source of truth
main database: primary, master, writer, leader
main one: primary, master, leader
maintenance: maintenance window, scheduled downtime, upkeep
make it happen again: reproduc*, repro, replay*
make lookup faster: index*, cache*
make money: revenue, monetiz*, pricing
make sure: ensure*, check*, validat*, guarantee*, assert*, verif*
make thing up: hallucinat*, grounding, fabricat*
map: geocod*, maps, mapbox, coordinates, gis, geospatial
marketing: campaign*, crm, attribution, utm
mass email: bulk, campaign*, newsletter*, blast*
master key: root key, kms, hsm, encryption key*
match: mismatch*, reconcil*, discrepan*
max out: saturat*, exhaust*, limit*, cap*, 100%, pegged
max: maximum, limit*, cap, ceiling, quota*
measure: metric*, monitor*, instrument*, benchmark*
medical scan: imaging, pacs, dicom, radiology
medical: phi, hipaa, clinical, ehr, emr
medicine: medication*, prescription*, drug*
meeting: standup*, sync*, review*, retro*, sprint*
member: user*, subscriber*, account*, membership*
mend: fix*, resolv*, patch*, hotfix*
merge button: ci, required check*, branch protection
mess up: corrupt*, broken, inconsisten*, bug*, incorrect
mess: tech debt, technical debt, cleanup, refactor*
message broker: kafka, rabbitmq, nats, pulsar, activemq, mqtt
messy: tech debt, technical debt, refactor*, cleanup, complexity
meter reading: ami, smart meter*, reading*, usage
meter: smart meter*, ami, reading*, meter*
metrics: prometheus, grafana, datadog, statsd
microsoft: azure, aks, entra, office 365, o365
minor: sev3, low priority, cosmetic
missing field: null*, schema*, required field*, validat*
missing: drop*, lost, loss, gap*, absent
mistake: error*, bug*, incorrect, typo*
mix up: mismatch*, inconsisten*, collision*, swap*
money back: refund*, chargeback*, revers*
money go missing: reconcil*, discrepan*, ledger*
money: payment*, billing, revenue, charge*, invoice*, cost*
monitoring: prometheus, grafana, datadog, newrelic, nagios, zabbix
monthly income: mrr, revenue
more and more: leak*, growth, grow*, unbounded, increas*
more machines: scale out, autoscal*, horizontal*, replica*, nodes
more server: scale out, autoscal*, horizontal*, replica*, nodes
morning report: daily report*, dashboard*, etl, batch*
morning: sunrise, am, early, dawn
most important: priorit*, critical, p0, p1
most: maximum, limit*, cap, ceiling
mostly idle: underutil*, overprovision*, rightsiz*, unused, utilization
move over: migrat*, cutover, switchover
move to the new: migrat*, cutover, switchover
move up a version: bump*, upgrad*
move: migrat*, relocat*, transfer*, cutover
mumbai: ap-south-1
my data: dsar, subject access, export*, gdpr, pii
name lookup: dns, resolv*
narrow down: bisect*, isolat*, reproduc*
netherlands: europe-west4
never arrive: undeliver*, lost, missing, drop*
never finish: hang*, hung, timeout*, infinite loop, deadlock*
never show up: missing, lost, drop*, undeliver*
new customer: onboard*, signup*, kyc, new user*, registr*
new hire: onboard*, provision*, new starter*
new person: onboard*, provision*
new system: migrat*, v2, replacement, rewrite
new version: releas*, upgrad*, bump*, version*, tag*
new year: year rollover, year-end, date*, january
new: latest, upgrade*, migrat*
newer: upgrad*, bump*, latest
news feed: feed*, timeline, fan-out, fanout
next month: upcoming, roadmap*, planned, scheduled
next page: pagina*, cursor*, offset*
night: nightly, overnight, evening, midnight
no change: freeze, moratorium, change freeze, code freeze, blackout
no downtime: zero downtime, online migration, expand and contract, blue-green, rolling
no internet: offline, connectivity, no network
no log: logging, log*, observab*, missing log*
no longer support: end of life, eol, deprecat*, unsupported, sunset*
no response: timeout*, unresponsive, hung, 504, gateway timeout
no signal: offline, connectivity, no network, reconnect*, cellular
nobody can use: outage*, unavailable, down, downtime
nobody notice: unnoticed, silent*, no alert*, monitor*
noisy neighbor: contention, noisy neighbour*, shared, multi-tenan*
noisy neighbour: contention, noisy neighbor*, shared, multi-tenan*
noisy: alert fatigue, flapping, false positive*, noise
nosedive: drop*, declin*, plummet*
not allowed: forbidden, denied, prohibit*, must not, blocked, policy
not arrive: undeliver*, bounc*, drop*, lost, missing
not match: mismatch*, discrepan*, inconsisten*, drift*, reconcil*
not respond: unresponsive, hung, timeout*, health check*, liveness
not secure: https, tls, cert*, ssl, insecure
not show up: missing, zero result*, index*, stale, not found, lag*, invisible
not start: crashloop*, startup, boot*, init*
not update: stale, cache*, invalidat*, ttl, lag*, sync*
not work: fail*, error*, broken, bug*
notice: alert*, detect*, monitor*
notification: push notification*, apns, fcm, notif*
now and then: intermittent*, sporadic*, occasional*, flak*
number off: discrepan*, mismatch*, data quality, reconcil*
numbers off: discrepan*, mismatch*, data quality, reconcil*
numbers: metric*, figures, count*, stats, statistic*
nurse: clinician*, staff, rn
object store: s3, gcs, minio, blob storage
off by an hour: timezone*, time zone, dst, daylight saving, utc
off hour: off-peak, after-hours, maintenance window, overnight
office hour: business hours, working hours, support hours
offline mode: offline, cache*, sync*, connectivity
offline: outage*, down, unavailable, unreachable, disconnect*
ohio: us-east-2
old copy: stale, cache*, snapshot*, backup*
old data: archiv*, retention, cold storage, stale, legacy
old phone: min sdk, os version*, backward compat*, legacy, deprecat*
old record: archiv*, retention, history, legacy
old system: legacy, deprecat*, previous, v1
old version: pin*, downgrad*, legacy, outdated, previous, deprecat*
old: stale, legacy, deprecat*, outdated, previous, former
older version: pin*, downgrad*, legacy, outdated, previous
on call: pagerduty, opsgenie, victorops, rota, on-call, oncall, rotation, pager*, escalat*
on hold: pause*, suspend*, hold*, defer*, pending
on its own: automat*, auto*, without
one by one: sequential*, serial*
one time code: otp, totp, mfa, 2fa
online shop: ecommerce, storefront, shopify, woocommerce
only one person know: bus factor, knowledge silo*, sme, documentation, single point of failure
open in the app: deep link*, universal link*, app link*
open port: exposed, ingress, firewall*, security group*
open to the internet: public*, exposed, ingress, firewall*, security group*
open: start*, begin*, launch*, access*, view*
opponent: matchmak*, pairing*, match*
opt in: consent, opt-in, preference*
opt out: consent, opt-out, preference*, unsubscrib*
orchestrator: kubernetes, nomad, ecs, swarm
order of result: rank*, relevan*, sort*, scor*
oregon: us-west-2
other currency: fx, exchange rate*, conversion, multi-currency
other customer: tenant isolation, cross-tenant, multi-tenan*, rls, row-level security
other service: upstream, downstream, dependenc*, integration*
other team: upstream, downstream, owner*, team*, dependenc*
out of date: stale, outdated, expired, old
out of memory: oom, memory, heap, ram
out of order: reorder*, sequen*, ordering
out of room: disk full, capacity, storage, quota*, space
out of space: disk full, disk, storage, capacity, quota*, volume*
out of sync: drift*, replication lag, inconsisten*, stale, diverg*
outside code: dependenc*, third-party, vendor*, librar*
outside world: egress, ingress, public, internet, nat
overbooked: overbook*, inventory, oversell*
overload: saturat*, load, capacity, throttl*, spike*, surge*
overnight job: batch*, nightly, etl, cron
overnight: nightly, night
oversold: oversell*, inventory, race condition
overspend: over budget, overage*, cost overrun*, spend*
overwhelm: saturat*, load, capacity, throttl*, spike*, surge*
overwrite: conflict*, race condition, clobber*, last write
owe: invoice*, balance*, outstanding, overdue, arrears
owner label: tag*, untagged, ownership
package: shipment*, deliver*, parcel*, dependenc*, librar*, requirement*, module*, sdk*
padlock: tls, https, cert*, ssl
page big: bundle size, payload, asset*
page not found: 404, not found, broken link*, dead link*
page someone: pager*, paging, on-call, oncall, alert*, escalat*
page speed: lighthouse, core web vital*, lcp, page load
page: pages, render*, webpage*, pagina*
pager: pagerduty, opsgenie, victorops
paperwork: compliance, documentation, evidence, audit*
parcel: shipment*, deliver*, tracking, package*
paris: eu-west-3
part of a month: proration, prorat*
part of: partial*, subset, degraded
pass and fail: flak*, intermittent*, nondetermin*
password manager: 1password, lastpass, bitwarden, vault
password: credential*, secret*, passphrase*
patient file: phi, ehr, emr, medical record*
patient record: phi, ehr, emr, medical record*, hl7, fhir
patient: phi, ehr, emr, clinical, hl7, fhir
pause: suspend*, halt*, throttl*, stop*, hold
pay day: payroll, payout*, salary
pay for: cost*, spend*, bill*, invoice*, fee*, charge*
pay run: payroll, payout*
pay twice: duplicate*, idempoten*, double charg*, dedup*
pay: payment*, billing, charge*, invoice*, checkout
paycheck: payroll, salary, wage*
payment company: psp, processor, stripe, adyen, braintree, paypal, acquirer
payment provider: stripe, adyen, braintree, paypal, worldpay
paywall: subscription*, metering, metered, premium
pdf: document*, render*, export*, report*
peak: peak*, spike*, busiest, traffic
peg: saturat*, 100%, cpu, pegged
people: user*, staff, employee*, member*
per second: rps, qps, throughput, rate
permanent fix: root cause, long-term, follow-up*
personal: pii, gdpr, privacy
phone alert: push notification*, apns, fcm, notif*
phone call: voip, sip, twilio, telephony, ivr
phone go off: pager*, paging, alert*, on-call
phone number: msisdn, e164, e.164, phone*
phone: mobile, app, ios, android, sms
photo: image*, thumbnail*, picture*
pick up where: handoff*, resum*, context, notes
pick: chose, chosen, select*, decision*, adr
picture: image*, photo*, thumbnail*
pile up: backlog*, queue*, lag*, buffer*, accumulat*
ping: push*, notif*, heartbeat*, health check*, icmp
pipe: pipeline*, stream*, queue*
plan b: fallback*, failover, contingency, disaster recovery
plan route: route*, optimi*, dispatch*, solver*
plan: roadmap*, schedul*, design*
planned outage: maintenance window, scheduled downtime, maintenance
plastic: resin, polymer, material*
plug in: integrat*, plugin*, connect*
point in time: pitr, snapshot*, backup*
point to: dns, cname, alias*, record*, rout*
pop up: popup*, modal*, dialog*, notification*
postcode: zip, postal, geocod*
power bill: tariff*, kwh, energy cost*, utility bill*
power cut: outage*, ups, generator*, blackout
power cycle: restart*, reboot*
power grid: utility, feeder*, substation*, grid
power line: feeder*, grid, transmission, distribution line*
practice: dry run, rehearsal*, drill*, game day, staging
predict: predict*, model*, inference, forecast*
prepare: prepar*, capacity plan*, load test*, readiness, runbook*
pretend: mock*, stub*, simulat*, fake*
prevent: guard*, guardrail*, check*, validat*, lint*
price plan: tier*, pricing, subscription*
price: pricing, tariff*, rate*, cost*
print: pdf, export*, printer*, spooler
printer: print*, spooler, cups, label*
privacy: pii, gdpr, consent, anonymi*
private: pii, personal data, gdpr, confidential, redact*
problem: issue*, incident*, error*, fail*, bug*
program: service*, binary, application, app, script*
promise: sla, slo, guarantee*, commitment*, target*
proof: evidence, audit*, verif*, attest*
propagate: dns, ttl, propagat*
proposal: rfc, design doc*, adr
pros and con: tradeoff*, trade-off*, alternative*, decision*
prove: verif*, signature*, authentic*, attest*
public holiday: bank holiday, holiday calendar*, non-business day*
public: exposed, open bucket, acl
publish: releas*, dispatch*, broadcast*
pull: fetch*, import*, sync*, ingest*, poll*
push back: backpressure, throttl*, reject*, 429, postpon*, delay*, reschedul*
push out: deploy*, releas*, rollout*, publish*
push: publish*, send*, export*, notif*
put back: rollback*, revert*, restor*
put on hold: pause*, suspend*, freeze, defer*
put out: releas*, publish*, deploy*
quality check: qa, qc, inspection*, defect*
quarter: q1, q2, q3, q4, quarterly
queue: kafka, rabbitmq, sqs, pubsub, nats, pulsar, kinesis, activemq, celery
quick fix: hotfix*, workaround*, patch*, stopgap
quiet down: log level, verbosity, sampl*, mute*, silenc*, suppress*
quiet period: freeze, blackout, moratorium
quiet time: off-peak, maintenance window, overnight
quiet: idle, off-peak, low traffic
quit: churn*, cancel*, resign*
random: intermittent*, sporadic*, nondetermin*, flak*, race condition
randomly: intermittent*, sporadic*, race condition, nondetermin*
ransom: ransomware, backup*, encrypt*, restor*
rather than: replac*, instead, alternative*
rating: review*, nps, feedback, star*
reach: connect*, network, reachab*
read copy: replica*, read replica*, follower*
reader: consumer*, subscriber*, worker*
real data: production, prod, live data, pii
real time: stream*, realtime, live, latency, websocket*
really come from: verif*, signature*, authentic*, hmac, spoof*
receipt email: transactional, receipt*, confirmation*
receipt: invoice*, receipt*
receive: consum*, ingest*, subscrib*, webhook*, inbound
recommend: recommend*, ranking, personali*
records: rows, entries, logs, history, archive*
recover: restor*, failover, resum*
recycle bin: soft delete, restor*, retention
red tape: approval*, process, bureaucracy, compliance
red: fail*, failing, broken, red build
redo: rerun*, replay*, backfill*, reprocess*, rebuild*
refresh: invalidat*, purg*, reload*, cache*, ttl, refresh*, refresh token*
refund: chargeback*, revers*, credit*
region: us-east*, us-west*, eu-west*, eu-central*, ap-southeast*, ap-northeast*, zone
reliability: slo, sla, availability, error budget, uptime
reliable: slo, availability, uptime, redundan*
rely on: dependenc*, upstream, requir*
remember: cach*, persist*, stor*, memoi*
reminder: notif*, schedul*, cron, nudge*
remote work: vpn, remote access, zero trust
rename: alias*, migrat*
renew: rotat*, expir*, renewal*
repair: fix*, resolv*, patch*, restor*, repair*
repeat: repeat*, recurr*, duplicate*, retry*
replace: migrat*, supersed*, swap*, deprecat*
reply: inbound, repl*, respond*
report a bug: issue*, bug*, ticket*, triag*
report: dashboard*, analytics, reporting, bi
reprocess: replay*, redrive*, backfill*, rerun*
reset password: password reset, reset*, account recovery
responsible: owner*, own*, maintain*
restart: crashloop*, reboot*, respawn*
retry: backoff, redeliver*, retri*
return to sender: bounc*, undeliver*
rewrite: refactor*, rewrit*, v2, migrat*
right to left: rtl, bidi, i18n, arabic, hebrew
rise: increas*, spike*, grow*, rising
robot: bot*, automat*, ai, agent*
rounding: precision, decimal*, float*
rule of thumb: guideline*, convention*, heuristic*
rule: policy, policies, compliance, regulat*, requirement*
run again: rerun*, retry*, replay*, backfill*, reprocess*
run dry: exhaust*, deplet*, starv*
run low: exhaust*, quota*, threshold*, capacity, low
run out: exhaust*, quota*, oom, limit*, capacity, depleted, full, starv*
rush hour: peak*, traffic, busy hour*
rush: peak*, spike*, surge*, burst*, traffic
safe: secur*, encrypt*, protect*
safety net: fallback*, circuit breaker*, graceful degrad*, retry*
salary: payroll, compensation
sale: discount*, promo*, black friday, campaign*
sales tool: crm, salesforce, hubspot
same thing twice: duplicate*, dedup*, idempoten*
same thing: duplicate*, dedup*, similar*
sao paulo: sa-east-1
save money: cost*, rightsiz*, reserved, savings plan, spot, discount*
save: persist*, stor*, writ*, checkpoint*, snapshot*
say the same thing: duplicate*, dedup*, similar*, near-duplicate*
say yes: approv*, sign-off, accept*
scale back: scale down, scale in, downsiz*, rightsiz*
scam: fraud*, phishing
score: leaderboard*, rank*, rating*
scramble: encrypt*, hash*, obfuscat*
screen reader: accessibility, a11y, aria, wcag
screen: ui, page*, view*, display*, dashboard*
scroll: pagina*, infinite scroll, cursor*, lazy load*
search box: search*, autocomplete, typeahead, query
search engine: elasticsearch, opensearch, solr, algolia, meilisearch
search fast: index*, cache*
search result: relevan*, rank*, index*, reindex*, query
search: index*, reindex*, elasticsearch, opensearch, relevan*, query
seat: seat map*, inventory, allocation*
second factor: mfa, 2fa, two-factor
second pair of eye: review*, reviewer*, four eyes, peer review
second step: mfa, 2fa, totp, otp, two-factor
secret store: vault, kms, secrets manager
secure connection: tls, https, ssl, cert*
security hole: vulnerab*, cve*, exploit*
see inside: observab*, trac*, metric*, dashboard*
see other: isolation, cross-tenant, leak*, authori*
sell: sale*, order*, checkout, listing*
send out: publish*, dispatch*, deliver*, notif*, broadcast*
send over: export*, transfer*, upload*, sftp
send: publish*, emit*, push*, dispatch*, deliver*, export*
seoul: ap-northeast-2
separate: split*, isolat*, decoupl*, partition*
serious: sev*, critical, severity, major
server room: data center, datacenter, rack*, colo*
server: host*, node*, instance*, vm
set off: trigger*, fire*, alert*
set up: config*, provision*, install*, bootstrap*
settings: config*, configuration, flag*, env*
setup: config*, provision*, install*, bootstrap*
share a machine: multi-tenan*, shared, colocat*, contention
share link: public link*, presigned, signed url*, acl, permission*
share the load: load balanc*, distribut*, shard*, horizontal*
shared password: shared credential*, secret*, vault, rotat*
shift: rota, rotation, on-call, handoff*, handover*
shipping: fulfil*, deliver*, logistics, carrier*, shipment*
shoot up: spike*, surge*, increas*, jump*
shop: merchant*, seller*, storefront, ecommerce, shopify
shopping cart: cart*, checkout, basket
shopping day: black friday, cyber monday, sale*, peak*
shortcut: workaround*, hack*, tech debt
show first: rank*, relevan*, boost*, sort*, order*, priorit*
show old: stale, cache*, outdated, invalidat*
show up: appear*, visib*, index*, missing, zero result*
shrink: reduc*, downsiz*, compact*, scale down
shut down: decommission*, disabl*, sunset*, retir*, shutdown
sign in: auth*, login*, sso, session*
sign off: approval*, review*, approv*
sign out: logout, session*, token*
sign up: regist*, enrol*, onboard*, signup*
sign ups drop: conversion*, funnel, signup*, declin*
sign: signature*, signing, sign*
signal: connectivity, network, cellular, reception
silence: mute*, suppress*, silenc*, snooze*, maintenance window
silently: silent*, swallow*, unnoticed, no error
similar: embedding*, vector*, similarity, nearest neighbo*, dedup*
singapore: ap-southeast-1
single sign on: sso, okta, saml, oidc
sink: drop*, declin*, decreas*
sit there: hung, stall*, timeout*, pending, block*
site not found: dns, nxdomain, 404, resolv*
skip: bypass*, omit*, ignor*
skyrocket: spike*, surge*, increas*
slip: delay*, slip*, postpon*
slow down: latency, degrad*, throttl*, bottleneck*
slow them down: throttl*, rate limit*, backpressure, backoff
slow to open: cold start, startup, launch time, boot*
slow: latency, lag*, timeout*, p95, p99, bottleneck*, throughput, delay*, timed out, times out
slower: latency, degrad*, regress*
sluggish: latency, degrad*
small fix: patch*, hotfix*, minor
small group first: canary, pilot*, phased, staged, percentage
smart: model*, ml, ai, machine learning, heuristic*
sms: twilio, vonage, nexmo, sns, messagebird
sneak peek: preview, beta
social media: twitter, facebook, instagram, linkedin, tiktok, social
soil: moisture, sensor*, substrate
solar panel: pv, photovoltaic, inverter*, solar
sold out: inventory, out of stock, oversell*, stock*
solve: resolv*, fix*, mitigat*, workaround*
some country: geo-block*, geoip, geo*, region*, sanction*
some user: subset, partial*, cohort*, segment*, percentage, region*
someone else code: dependenc*, third-party, vendor*, librar*, upstream
someone else log in: account takeover, ato, credential stuffing, compromis*
sometimes: intermittent*, sporadic*, occasional*, flak*
soon: upcoming, planned, roadmap*, scheduled
sort out: resolv*, fix*, triag*
sound: audio, volume, codec*
space: disk*, storage, capacity, volume*, quota*
spam folder: deliverability, spf, dkim, dmarc, reputation, spam*
spam: abuse, rate limit, captcha, bot*
spare part: inventory, spares, parts, maintenance
spare: replica*, standby, failover, redundan*, reserve*, backup*
speed up search: index*, cache*
speed up: optimi*, cach*, latency, speedup, parallel*
speed: latency, throughput, performance
spelling: fuzzy, spell*, typo*, misspell*
spend: cost*, budget*, bill*, spend*
spill: overflow*, leak*, spillover
spin: spinner*, loading, hung, timeout*
spinner: loading, hung, timeout*, latency
split: shard*, partition*, separat*
spot: detect*, alert*, anomal*, monitor*
spread out: distribut*, balanc*, shard*, jitter
spread: distribut*, balanc*, shard*
spreadsheet: csv, excel, xlsx
staff pay: payroll, salary, wage*, compensation
staff: employee*, personnel, crew*, team*
start up: startup, boot*, init*, cold start
start: begin*, launch*, open*, kickoff
startup time: cold start, boot*, init*, launch time
status page: statuspage, incident comms, status
stay on: pin*, hold back, lock*, freeze
steal: exfiltrat*, breach*, theft, leak*, compromis*
step by step: runbook*, playbook*, checklist*, procedure*
step on each other: race condition, conflict*, lock*, contention
stick to: pin*, lock*, keep
stick with: pin*, keep, lock*
stock: inventory, sku*
stockholm: eu-north-1
stolen laptop: mdm, full disk encryption, remote wipe, device*
stop call: circuit breaker*, backoff, kill switch
stop follow: replicat*, replica*, broken replication
stop from: prevent*, block*, guard*, restrict*
stop get email: unsubscrib*, suppression*, opt out, opt-out
stop respond: unresponsive, hung, timeout*, health check*, liveness
stop work: fail*, outage*, error*, down, regression*, sunset*, deprecat*, end of life, eol, retir*
stop: halt*, disabl*, kill*, terminat*, abort*, suspend*
stopgap: workaround*, hotfix*, temporary
storage: s3, gcs, minio, ebs, nfs
store: persist*, bucket*, database, s3, disk
story: article*, cms, post*, publish*
strange login: anomal*, impossible travel, account takeover, alert*
stream: kafka, kinesis, pulsar, flink, pubsub
streaming: kafka, kinesis, pulsar, flink, pubsub
stress: load test*, stress test*, pressure
stuck message: dlq, dead letter, poison*, redeliver*, retry*
stuck on: pin*, pinned, hold back, lock*, legacy
stuck: hung, deadlock*, stall*, block*, pending, wedged
student: enrol*, learner*
stutter: lag*, frame*, fps, jitter
subtitle: caption*, vtt, srt, accessibility
sudden: spike*, surge*, burst*, abrupt*
suddenly: spike*, surge*, burst*, abrupt*, regression*
suggest: autocomplete, typeahead, suggest*, recommend*
supplier: vendor*, third-party, provider*, external, partner*
survey: feedback, nps, questionnaire*
suspicious login: anomal*, impossible travel, geo*, mfa, alert*, account takeover
swap shift: rota, override*, on-call swap, swap*
swap: replac*, migrat*, switch*
sweep: cleanup, purg*, garbage collect*, janitor*, reaper*
switch off: disabl*, decommission*, feature flag, shut*, turned off
switch over: failover, cutover, switchover, promot*
switch: migrat*, replac*, cutover, toggl*, feature flag*, kill switch
sydney: ap-southeast-2
tablet: ipad, android, kiosk*, mobile
take a while: latency, duration, slow*
take age: latency, duration, slow*, timeout*
take away access: revok*, deprovision*, offboard*, remov*
take care of: handl*, own*, maintain*, responsib*
take down everything: cascad*, single point of failure, spof, blast radius
take forever: latency, timeout*, slow
take long: latency, duration, timeout*, slow
take money: charge*, capture*, debit*, payment*
take over account: account takeover, ato, credential stuffing
take over: handoff*, own*, handover*, transfer*
talk to: call*, integrat*, api, client*, connect*, request*
tamper: integrity, signature*, checksum*, hmac, tamper*
tap a link: deep link*, universal link*, app link*
tax: vat, gst, withholding
teach: train*, fine-tun*, label*
teacher: instructor*, faculty, lecturer*
tell apart: collision*, ambiguous, duplicate*, uniqueness, distinguish*
tell customer: status page, notif*, comms, announc*
tell: notif*, alert*, email*, messag*
temperature: thermal, overheat*, hvac, sensor*
test data: fixture*, seed*, synthetic, sample data
test result: lab result*, lis, hl7, result*
test: staging, canary, qa
text: sms, messag*
their end: upstream, vendor*, provider*, third-party, external
their side: upstream, vendor*, provider*, third-party, external
third party: vendor*, external, upstream, provider*, partner*
through the system: end-to-end, distributed, trac*, pipeline*
throw away: discard*, drop*, purg*, evict*, delet*
thundering herd: stampede, cache stampede, burst*, retry storm
ticket sale: box office, ticketing, inventory, seat*
tidy: purg*, prun*, cleanup, compact*
time difference: timezone*, utc, offset*
time out: timeout*, deadline*, 504, gateway timeout
timetable: schedul*, gtfs, roster*, calendar*
tiny: small, minimal, footprint
to do list: backlog*, ticket*, task*, todo*
todo: backlog*, ticket*, task*, todo*
tokyo: ap-northeast-1
too big: size, oversiz*, limit*, large, exceed*
too hot: overheat*, thermal, throttl*, cooling
too many log: verbose, log level, log volume, sampl*
too many request: 429, rate limit*, throttl*, quota*
too many: limit*, quota*, exceed*, throttl*, rate limit, cap
too much access: least privilege, overprivileg*, permission*, scope*
too much data: volume, retention, partition*, archiv*, scal*
too much: limit*, quota*, exceed*, excess*
too old: stale, expired, ttl, outdated, legacy, eol
too warm: temperature, threshold*, excursion*, overheat*
tool: cli, script*, utility, service*
top result: rank*, relevan*, boost*, scor*
track down: debug*, investigat*, root cause, bisect*
track who: audit*, log*
tracking: analytics, telemetry, pixel*, cookie*, consent
trade off: tradeoff*, trade-off*, compromise*
transfer money: payout*, wire*, ach, sepa, transfer*
translate: locali*, i18n, translation*
trash: soft delete, deleted_at, retention, purg*
trick email: phishing, spoof*, dmarc, spf
trim: prun*, truncat*, reduc*
triple: increas*, 3x, tripl*
trouble: issue*, incident*, error*, fail*
truck: fleet, vehicle*, carrier*
trust: trusted, verif*, allowlist*, reputation, trust*
try again: retry*, retri*, backoff, redeliver*
try on a copy: staging, sandbox, dry run, preview
try out: canary, pilot*, experiment*, beta, staging, trial*
turn down: throttl*, reduc*, scale down, decreas*
turn into: convert*, conversion, transform*
turn it off and on: restart*, reboot*, power cycle*
turn off: disabl*, decommission*, feature flag, kill switch, shut*, switched off
turn on: enabl*, feature flag, activat*, switched on
turn up: scale up, increas*, rais*
tv: smart tv, tvos, roku, android tv, chromecast
twice: duplicate*, dedup*, idempoten*, double, at-least-once, replay*
typo: fuzzy, spell*, typo*, misspell*
undelete: soft delete, restor*, recycle bin, trash
undelivered: bounc*, undeliverable, hard bounce, soft bounce
undo change: revert*, rollback*
undo: rollback*, revert*, roll back, rolled back
uneven: skew*, imbalanc*, hot spot*, hotspot*, rebalanc*
unreadable: corrupt*, encoding, garbled, decod*, pars*
unreliable: flak*, intermittent*, unstable, flapping, reliabil*
unsafe: insecure, vulnerab*, risk*, unsanitiz*
unstable: flapping, flak*, crash*, instabil*
unsubscribe: opt out, opt-out, unsubscrib*, suppression*, preference*
untested: coverage, test gap*, no tests
unusual: anomal*, outlier*, suspicious
update app: force upgrade, min version, app store, forced update
update device: firmware, ota
update note: release note*, changelog
update: upgrad*, bump*, patch*, refresh*
upgrade: bump*, version*, migrat*
upload fail: 413, multipart, timeout*, size limit
upload: ingest*, import*, attachment*
uptime: availability, sla, slo, nines
urgent: priorit*, sev1, sev*, p0, p1, critical, hotfix*, escalat*
use up: exhaust*, consum*, quota*, deplet*
user story: ticket*, backlog*, requirement*, jira
vanish: drop*, lost, missing, evict*, expir*
vendor: third-party, provider*, external, partner*, supplier*
video call: webrtc, zoom, meet, turn server, stun
video: stream*, transcod*, media
virginia: us-east-1, us-east*
virus: malware, antivirus, av scan*, clamav
visible: visib*, public, exposed, leak*
visitor: user*, session*, anonymous, traffic, pageview*
voice: audio, voip, sip, speech, transcri*
vote: decision*, consensus, approv*
voucher: coupon*, promo*, discount*, gift card*
wait for: block*, depend*, await*, pending
wait forever: timeout*, hung, deadlock*, block*, stall*
wait in line: queue*, backlog*, pending
wait on each other: deadlock*, contention, lock*, circular
wait: timeout*, latency, queue*, pending, block*, delay*
waiting list: queue*, backlog*, waitlist*
waiting on: block*, blocker*, depend*, pending
waiting room: queue*, triage*, check-in, wait time*
wake up: pager*, paging, paged, on-call, oncall, alert*
wake: pager*, paging, paged, on-call, oncall, alert*, escalat*
warehouse: fulfil*, inventory, depot*
warm up: warm*, prewarm*, cold start, cache warm*
warm: temperature, thermal, overheat*, heat*
warn: alert*, alarm*, notif*, threshold*, pager*, paging
warning: alert*, alarm*, notif*, threshold*
waste: idle, unused, overprovision*, rightsiz*, cost*
watch: monitor*, observ*, alert*, dashboard*, playback, stream*, view*
watering: irrigation, valve*, drip, sprinkler*
weak spot: single point of failure, spof, bottleneck*
weakness: vulnerab*, cve*, exploit*, flaw*
wear and tear: maintenance, wear*, lifespan, predictive maintenance
wear out: degrad*, endurance, wear*, lifespan
weather: forecast*, noaa, meteo*
web address: dns, domain*, url*, hostname*
web server: nginx, apache, caddy
website: web, site, frontend, homepage, page*
weekend: saturday, sunday
weird character: encoding, utf-8, unicode, mojibake, escap*
welcome email: onboarding email*, transactional, template*
what cause: root cause, because, due to, trigger*
what change: changelog, diff*, release note*, commit*, migrat*
what go wrong: postmortem*, root cause, rca, incident*, fail*
what new: release note*, changelog, announc*
what version: version*, pin*, release*, tag*
where keep: stor*, bucket*, database, s3, volume*
where time go: profil*, trac*, flame graph*, span*, breakdown
where: stor*, host*, locat*, region*, kept
which version: version*, pin*, release*, tag*
white screen: blank, render*, hydration, js error*, crash*
who approve: approv*, reviewer*, codeowner*, owner*, sign-off
who can see: access, permission*, visib*, acl, rbac
who can: access, permission*, role*, rbac, authori*
who change: audit*, history, blame, changelog
who is allowed: permission*, access, authori*, role*
who look at: access log*, audit*, access*
who open: access log*, audit*, access*
who pay: billing, cost allocation, chargeback*, showback, tag*
who run: owner*, own*, operat*, maintain*
who to call: escalat*, on-call, contact*, owner*, pager*
who touch: audit*, blame, history, chang*, modif*
who wrote: author*, blame, owner*, codeowner*, commit*
who: owner*, own*, on-call, oncall, maintain*, team*
why change: because, after, reason*, root cause
why: because, due to, caus*, root cause, after, so
wifi: network, connectivity, wireless
wipe: purg*, delet*, eras*, truncat*, reset*
without a label: untagged, unlabel*, missing tag*
without asking: automat*, without approv*, auto*
without downtime: zero downtime, online migration, expand and contract, blue-green, rolling
without take down: zero downtime, rolling, blue-green, online
won t start: crashloop*, startup, boot*, init*, imagepull*, fail* to start
work around: workaround*, mitigat*, fallback*, manual*
worker: consumer*, job*, process*, daemon*
worst case: disaster recovery, failover, rto, rpo
write down: document*, docs, runbook*, wiki, adr
write up: postmortem*, report*, rca, incident report, document*
wrong amount: proration, rounding, overcharg*, undercharg*, discrepan*
wrong answer: accuracy, hallucinat*, precision, error rate, misclassif*
wrong customer: cross-tenant, misrout*, leak*, isolation
wrong number: mismatch*, discrepan*, inconsisten*, stale, incorrect
wrong password: lockout, failed login*, login attempt*, brute force, invalid credential*
wrong person: misrout*, misdeliver*, authori*, leak*
wrong place: misrout*, rout*, misdeliver*, wrong destination
wrong thing first: rank*, relevan*, boost*, sort*, order*
wrong: incorrect, mismatch*, bug*, invalid, inconsisten*, corrupt*
x ray: imaging, pacs, dicom, radiology
yearly: annual*, anniversary
yesterday: daily, previous day, d-1, t-1
zip code: postcode*, postal, geocod*
zip file: archive*, compress*, zip, tar*
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
 mislaid:mislay overslept:oversleep got:get gotten:get made:make died:die dying:die ate:eat eaten:eat
 sat:sit bent:bend crept:creep fled:flee shot:shoot rode:ride ridden:ride swam:swim lit:light dove:dive
"""
