"""A second development corpus for retrieval work: eight domains neither other corpus covers
(greenhouse irrigation, airline crew scheduling, university course registration, a
newsroom's publishing stack; then a payments back office, clinic appointment booking, live
bus tracking and a multiplayer game backend, added after memory-search's everyday vocabulary
was written, with more paraphrase and multi-hop questions), written as people write notes,
with the kinds of questions people ask of them.

It exists so a retrieval method can be checked on text it was not shaped on before anyone
looks at the frozen held-out corpus (bench/heldout_corpus.py, which is never used for
tuning).  Like bench/retrieval_corpus.py it is a development set: it may be extended, and a
method that helps only here is suspect.  No synonym, weight or rule may be written from it
either; it measures general methods (stemming, IDF weighting, learned associations,
pseudo-relevance feedback).

Rows are ``(key, surface, project, text)``; ``REPLACED`` is ``(old, new)``; queries are
``(kind, text, project, expected_keys, outdated_key)`` as in bench/retrieval_corpus.py.
Temporal queries expect the current row and the row that records the change; multi-hop
queries expect two rows joined by a shared entity.

Run:  python3 bench/retrieval_eval.py --corpus dev
"""

PROJECTS = ("Farm", "Air", "Campus", "Newsroom", "Ledger", "Clinic", "Transit", "Arcade")

ROWS = (
    # Farm: greenhouse irrigation and climate control
    ("farm.sensors", "note", "Farm", "Soil moisture probes report to the irrigation controller over LoRa every ten minutes"),
    ("farm.owner", "fact", "Farm", "irrigation-controller owned-by team-agronomy"),
    ("farm.team_db", "fact", "Farm", "team-agronomy operates influxdb-2"),
    ("farm.frost", "memory", "Farm", "Frost alarms must wake the grower on call within 15 minutes"),
    ("farm.labels", "note", "Farm", "Seed trays carry QR stickers printed when they are sown"),
    ("farm.water_old", "note", "Farm", "Tomato beds are watered once per morning by drip lines"),
    ("farm.water_new", "note", "Farm", "Tomato beds are watered every three hours by drip lines"),
    ("farm.water_why", "note", "Farm", "Watering frequency raised after leaf curl showed the single morning cycle left roots dry by evening"),
    ("farm.backlog", "note", "Farm", "Sensor readings queued up because the MQTT broker ran out of file handles at sunrise"),
    ("farm.retention", "memory", "", "Harvest yield records are kept for seven seasons for the certification body"),
    ("farm.handoff", "handoff", "Farm", "Moved the vent schedule into the climate computer; shade screens still on manual"),
    ("farm.delivery", "memory", "Farm", "Fertiliser deliveries arrive on Mondays and Thursdays"),
    ("farm.bridge", "fact", "Farm", "irrigation-controller uses node-red"),
    ("farm.outage", "note", "Farm", "When the controller is offline growers open the valves by hand and log it on a clipboard"),
    ("farm.autodose", "note", "Farm", "Autodosing adjusts nutrient strength without a grower approving each change"),
    # Air: airline crew scheduling
    ("air.roster", "note", "Air", "Crew rosters are published 28 days ahead in the crew portal"),
    ("air.owner", "fact", "Air", "roster-engine owned-by team-crewops"),
    ("air.team_queue", "fact", "Air", "team-crewops operates kafka-cluster"),
    ("air.rest_old", "memory", "Air", "Pilots get a minimum rest of 10 hours between duties"),
    ("air.rest_new", "memory", "Air", "Pilots get a minimum rest of 12 hours between duties"),
    ("air.rest_why", "note", "Air", "Rest minimum lengthened after the fatigue study flagged back-to-back early starts"),
    ("air.swap", "note", "Air", "Duty swaps between crew members need both captains to approve in the portal"),
    ("air.standby", "note", "Air", "Reserve crew are kept at the hub airport in proportion to the morning bank of flights"),
    ("air.map", "handoff", "Air", "Rebuilt the pairing rules after the winter schedule change; night stops now capped"),
    ("air.hr", "fact", "Air", "roster-engine reads workday-hr"),
    ("air.delay", "note", "Air", "Roster publication lags because the legality checker times out on long-haul pairings"),
    ("air.release", "memory", "Air", "Optimizer releases go to one base first, then to every base a week later"),
    ("air.badge", "memory", "", "Everyone airside must display an airport identity badge"),
    ("air.fatigue", "note", "Air", "A fatigue report removes the crew member from duty immediately, no questions asked"),
    # Campus: university course registration
    ("uni.portal", "note", "Campus", "Course registration runs in the student portal on six app servers"),
    ("uni.owner", "fact", "Campus", "registration-portal owned-by team-registrar"),
    ("uni.team_store", "fact", "Campus", "team-registrar operates sqlserver-2019"),
    ("uni.waitlist", "note", "Campus", "Waitlist promotion dominates load on the first morning; promotions are batched every minute"),
    ("uni.open_old", "note", "Campus", "Registration opens at 08:00 for every year group"),
    ("uni.open_new", "note", "Campus", "Registration opens at 07:00 for every year group"),
    ("uni.open_why", "note", "Campus", "Opening moved earlier so students on exchange in Asia are not registering at midnight"),
    ("uni.grades", "note", "Campus", "Final grades are pulled from the learning platform by the grade-sync job"),
    ("uni.deadline", "memory", "Campus", "Add and drop closes two weeks after teaching starts"),
    ("uni.handoff", "handoff", "Campus", "Split prerequisite checks into their own service; timetable clashes no longer block enrolment"),
    ("uni.flaky", "note", "Campus", "Enrolments failed intermittently because the session store evicted carts under memory pressure"),
    ("uni.sis", "fact", "Campus", "registration-portal uses banner-sis"),
    ("uni.terms", "memory", "Campus", "Timetables are drafted in spring and frozen in June"),
    ("uni.fleetwide", "memory", "", "Every student record export is encrypted at rest"),
    # Newsroom: publishing stack
    ("news.cms", "note", "Newsroom", "Articles are written in the headless CMS and rendered by the edge workers"),
    ("news.owner", "fact", "Newsroom", "publishing-api owned-by team-platform"),
    ("news.team_db", "fact", "Newsroom", "team-platform operates postgres-16"),
    ("news.embargo", "memory", "Newsroom", "Embargoed stories stay hidden until their release timestamp passes"),
    ("news.paywall_old", "fact", "Newsroom", "publishing-api uses piano-paywall"),
    ("news.paywall_new", "fact", "Newsroom", "publishing-api uses inhouse-paywall"),
    ("news.paywall_why", "note", "Newsroom", "Dropped the vendor paywall after its script slowed article pages on mobile"),
    ("news.images", "note", "Newsroom", "Photos are resized on upload into five widths and served as WebP"),
    ("news.breaking", "note", "Newsroom", "Breaking news banners are pushed to apps and the homepage at once"),
    ("news.corrections", "memory", "Newsroom", "Corrections are appended to the article with a dated note, never silently edited"),
    ("news.spike", "note", "Newsroom", "Traffic surges on election night overwhelmed the comment service, so comments were switched off"),
    ("news.handoff", "handoff", "Newsroom", "Wired the newsletter signup to the CRM; double opt-in confirmed working"),
    ("news.search", "note", "Newsroom", "Archive search is served by an OpenSearch index rebuilt weekly"),
    ("news.style", "memory", "", "Headlines use sentence case across every publication"),
    # Ledger: a payments back office (added after the everyday vocabulary was written)
    ("led.settle", "note", "Ledger", "Card settlements are imported from the acquirer file at 02:00 and matched against captured payments"),
    ("led.recon_gap", "note", "Ledger", "Reconciliation reported a discrepancy because refunds issued after cutoff landed in the next settlement file"),
    ("led.owner", "fact", "Ledger", "payout-service owned-by team-treasury"),
    ("led.team_oncall", "fact", "Ledger", "team-treasury paged-through opsgenie"),
    ("led.dupes", "note", "Ledger", "Webhook redelivery created duplicate payouts until an idempotency key was stored per transfer"),
    ("led.fx_old", "memory", "Ledger", "Currency conversion rates are refreshed once a day from the central bank feed"),
    ("led.fx_new", "memory", "Ledger", "Currency conversion rates are refreshed every fifteen minutes from the market data vendor"),
    ("led.fx_why", "note", "Ledger", "Moved FX rates to the vendor feed after weekend swings left quotes stale for two days"),
    ("led.kyc", "note", "Ledger", "New merchants stay in review until identity documents pass the KYC check"),
    ("led.limits", "memory", "Ledger", "A single payout above 50k EUR needs a second approver from finance"),
    ("led.handoff", "handoff", "Ledger", "Moved chargeback evidence uploads to the object store; dispute emails still go out by hand"),
    ("led.audit", "memory", "", "Ledger entries are append-only; corrections are posted as reversing entries"),
    ("led.db", "fact", "Ledger", "payout-service stores-in cockroachdb"),
    # Clinic: outpatient appointment booking
    ("cli.booking", "note", "Clinic", "Appointments are booked through the patient app and mirrored to the scheduling system over HL7"),
    ("cli.noshow", "note", "Clinic", "SMS reminders go out 24 hours before each appointment to cut no-shows"),
    ("cli.owner", "fact", "Clinic", "reminder-service owned-by team-patient-comms"),
    ("cli.team_vendor", "fact", "Clinic", "team-patient-comms contracts twilio"),
    ("cli.dropouts", "note", "Clinic", "Reminder texts were silently dropped when the sender number hit the carrier's daily cap"),
    ("cli.slots_old", "note", "Clinic", "Follow-up slots are 20 minutes long"),
    ("cli.slots_new", "note", "Clinic", "Follow-up slots are 15 minutes long"),
    ("cli.slots_why", "note", "Clinic", "Shortened follow-up slots because most follow-ups finished early and the waiting list kept growing"),
    ("cli.crash", "note", "Clinic", "The check-in kiosk went into a reboot loop after the kiosk OS update filled its small disk with logs"),
    ("cli.consent", "memory", "Clinic", "Recording a consultation requires the patient's written consent on file"),
    ("cli.handoff", "handoff", "Clinic", "Added interpreter requests to the booking form; clinics still confirm them by phone"),
    ("cli.records", "memory", "", "Patient records are retained for eight years after the last visit"),
    # Transit: live bus tracking
    ("tra.gps", "note", "Transit", "Buses send GPS pings every 10 seconds to the vehicle-location gateway over cellular"),
    ("tra.owner", "fact", "Transit", "arrival-predictor owned-by team-realtime"),
    ("tra.team_stream", "fact", "Transit", "team-realtime operates kinesis-streams"),
    ("tra.ghost", "note", "Transit", "Phantom buses appeared on the map when depots powered down trackers without sending an end-of-trip event"),
    ("tra.stale", "note", "Transit", "Arrival boards showed stale predictions because the predictor's cache TTL was longer than the ping interval"),
    ("tra.feed_old", "fact", "Transit", "open-data-feed publishes-as gtfs-rt-v1"),
    ("tra.feed_new", "fact", "Transit", "open-data-feed publishes-as gtfs-rt-v2"),
    ("tra.feed_why", "note", "Transit", "Switched the public feed to GTFS-RT v2 because third-party journey planners dropped support for v1"),
    ("tra.winter", "memory", "Transit", "Snow diversions are entered by the control room and expire at the end of the service day"),
    ("tra.handoff", "handoff", "Transit", "Ported the stop-announcement audio to the new onboard units; depot B still on old units"),
    ("tra.budget", "memory", "Transit", "Cellular data for trackers is capped at 2 GB per vehicle per month"),
    # Arcade: multiplayer game backend
    ("arc.match", "note", "Arcade", "Matchmaking pairs players by skill rating within a region before widening the search"),
    ("arc.owner", "fact", "Arcade", "matchmaker owned-by team-liveops"),
    ("arc.team_region", "fact", "Arcade", "team-liveops hosts-in eu-west-1"),
    ("arc.lagspike", "note", "Arcade", "Tick rate dropped on crowded maps because physics for every projectile ran on the main game loop"),
    ("arc.cheat", "note", "Arcade", "Speed hackers were caught by server-side movement validation; client reports alone were ignored"),
    ("arc.queue_old", "memory", "Arcade", "Ranked queue widens the skill window after 60 seconds"),
    ("arc.queue_new", "memory", "Arcade", "Ranked queue widens the skill window after 30 seconds"),
    ("arc.queue_why", "note", "Arcade", "Halved the widening delay after late-night players waited minutes for a ranked match"),
    ("arc.store", "note", "Arcade", "In-game purchases are granted only after the platform store confirms the receipt"),
    ("arc.handoff", "handoff", "Arcade", "Shipped the season pass rewards table; cosmetic previews still render blank on consoles"),
    ("arc.ban", "memory", "", "Bans are appealed through the support portal, never on public channels"),
)

REPLACED = (
    ("led.fx_old", "led.fx_new"),
    ("cli.slots_old", "cli.slots_new"),
    ("tra.feed_old", "tra.feed_new"),
    ("arc.queue_old", "arc.queue_new"),
    ("farm.water_old", "farm.water_new"),
    ("air.rest_old", "air.rest_new"),
    ("uni.open_old", "uni.open_new"),
    ("news.paywall_old", "news.paywall_new"),
)
RETRACT_REASONS = {"news.paywall_old": "vendor paywall removed", "tra.feed_old": "v1 retired"}

Q = []


def _q(kind, project, text, expected, outdated=None):
    Q.append((kind, text, project, tuple(expected.split()), outdated))


# exact
_q("exact", "Farm", "QR stickers seed trays", "farm.labels")
_q("exact", "Farm", "autodosing nutrient strength", "farm.autodose")
_q("exact", "Air", "duty swaps both captains approve", "air.swap")
_q("exact", "Air", "fatigue report removes crew member", "air.fatigue")
_q("exact", "Campus", "grade-sync job learning platform", "uni.grades")
_q("exact", "Campus", "add and drop closes", "uni.deadline")
_q("exact", "Newsroom", "photos resized WebP", "news.images")
_q("exact", "Newsroom", "archive search OpenSearch index", "news.search")
# morphological
_q("morphological", "Farm", "soil moisture probe reporting", "farm.sensors")
_q("morphological", "Air", "roster published in advance", "air.roster")
_q("morphological", "Campus", "enrolment failing intermittently", "uni.flaky")
_q("morphological", "Newsroom", "correction appended to articles", "news.corrections")
# synonym / abbreviation
_q("synonym", "Farm", "irrigation controller down manual valves", "farm.outage")
_q("synonym", "Air", "legality check timeout long haul", "air.delay")
_q("synonym", "Campus", "session cache evicting under RAM pressure", "uni.flaky")
_q("synonym", "Newsroom", "content management system edge rendering", "news.cms")
# paraphrase: the row says it with other words
_q("paraphrase", "Farm", "why did sensor data pile up at dawn", "farm.backlog")
_q("paraphrase", "Farm", "how fast must someone respond to a frost warning", "farm.frost")
_q("paraphrase", "Air", "why is the roster late to come out", "air.delay")
_q("paraphrase", "Air", "where are backup crews stationed", "air.standby")
_q("paraphrase", "Campus", "why did signing up for classes break now and then", "uni.flaky")
_q("paraphrase", "Campus", "what makes the first morning of registration so busy", "uni.waitlist")
_q("paraphrase", "Newsroom", "why were comments turned off on election night", "news.spike")
_q("paraphrase", "Newsroom", "how are late corrections handled", "news.corrections")
# multi-hop: two rows joined by a shared entity
_q("multi_hop", "Farm", "what database does the team owning irrigation-controller run", "farm.owner farm.team_db")
_q("multi_hop", "Air", "which message queue does the roster-engine team operate", "air.owner air.team_queue")
_q("multi_hop", "Campus", "database server of the registration-portal owners", "uni.owner uni.team_store")
_q("multi_hop", "Newsroom", "database run by the team that owns publishing-api", "news.owner news.team_db")
# cross-project / fleet-wide rows asked from a project
_q("cross_project", "Farm", "how long are yield records kept", "farm.retention")
_q("cross_project", "Air", "identity badge airside", "air.badge")
_q("cross_project", "Campus", "are student record exports encrypted", "uni.fleetwide")
_q("cross_project", "Newsroom", "headline capitalisation rule", "news.style")
# temporal: the current row and the row recording the change; the replaced row must lose
_q("temporal", "Farm", "how often are the tomato beds watered", "farm.water_new farm.water_why", "farm.water_old")
_q("temporal", "Air", "minimum rest for pilots between duties", "air.rest_new air.rest_why", "air.rest_old")
_q("temporal", "Campus", "what time does registration open", "uni.open_new uni.open_why", "uni.open_old")
_q("temporal", "Newsroom", "which paywall does publishing-api use", "news.paywall_new news.paywall_why", "news.paywall_old")

# Ledger, Clinic, Transit, Arcade: written after the everyday vocabulary, more paraphrase and
# multi-hop questions (the kinds where a method is most likely to fit its own test set)
_q("exact", "Ledger", "acquirer settlement file import", "led.settle")
_q("synonym", "Clinic", "kiosk restart loop after OS upgrade", "cli.crash")
_q("morphological", "Transit", "diversion expiring at end of service day", "tra.winter")
_q("cross_project", "Arcade", "how do players appeal a ban", "arc.ban")
_q("cross_project", "Clinic", "how many years do we hold on to patient files", "cli.records")
_q("paraphrase", "Ledger", "why didn't the money add up at month end", "led.recon_gap")
_q("paraphrase", "Ledger", "why were some merchants paid twice", "led.dupes")
_q("paraphrase", "Ledger", "why can't a new shop get paid yet", "led.kyc")
_q("paraphrase", "Ledger", "who has to sign off on a really big payout", "led.limits")
_q("paraphrase", "Clinic", "why did patients stop getting their reminder texts", "cli.dropouts")
_q("paraphrase", "Clinic", "why does the check-in screen keep turning itself off and on", "cli.crash")
_q("paraphrase", "Clinic", "what do we do to stop people missing appointments", "cli.noshow")
_q("paraphrase", "Clinic", "can we record a visit with the doctor", "cli.consent")
_q("paraphrase", "Transit", "why did the map show buses that were not running", "tra.ghost")
_q("paraphrase", "Transit", "why were the arrival times on the signs out of date", "tra.stale")
_q("paraphrase", "Transit", "how often does a bus report where it is", "tra.gps")
_q("paraphrase", "Transit", "how much mobile data can each bus use", "tra.budget")
_q("paraphrase", "Arcade", "why does the game get choppy when lots of people are fighting", "arc.lagspike")
_q("paraphrase", "Arcade", "how did we catch people moving too fast", "arc.cheat")
_q("paraphrase", "Arcade", "when do players actually get the thing they bought", "arc.store")
_q("paraphrase", "Arcade", "how are opponents chosen", "arc.match")
_q("multi_hop", "Ledger", "which pager tool alerts the team that owns payout-service", "led.owner led.team_oncall")
_q("multi_hop", "Ledger", "what database is payout-service on and who owns it", "led.db led.owner")
_q("multi_hop", "Clinic", "which SMS vendor does the reminder-service team use", "cli.owner cli.team_vendor")
_q("multi_hop", "Transit", "what streaming platform does the arrival-predictor team run", "tra.owner tra.team_stream")
_q("multi_hop", "Arcade", "which cloud region is the matchmaker team in", "arc.owner arc.team_region")
_q("temporal", "Ledger", "how often are exchange rates updated", "led.fx_new led.fx_why", "led.fx_old")
_q("temporal", "Clinic", "how long is a follow-up appointment", "cli.slots_new cli.slots_why", "cli.slots_old")
_q("temporal", "Transit", "what format is the open-data-feed published in", "tra.feed_new tra.feed_why", "tra.feed_old")
_q("temporal", "Arcade", "when does the ranked queue widen the skill window", "arc.queue_new arc.queue_why", "arc.queue_old")

QUERIES = tuple(Q)
KINDS = ("exact", "morphological", "synonym", "paraphrase", "multi_hop", "cross_project", "temporal")

# filler notes (per project) as in the first corpus, in these domains' words
FILLER_SUBJECTS = ("the morning rota", "the label printer", "the staging server", "the dashboard",
                   "the onboarding checklist", "the backup job", "the meeting notes", "the vendor contract")
FILLER_PREDICATES = ("was reviewed", "needs an owner", "was updated", "is due for renewal", "was discussed",
                     "has open questions", "was moved to next quarter")
FILLER_QUALIFIERS = ("at the weekly sync", "after the holiday", "per the manager", "", "by the end of the month")
FILLER_PER_PROJECT = 40
