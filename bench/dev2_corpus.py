"""A third development corpus, for paraphrase questions whose answer shares no word with them.

Five domains no other development corpus covers (hotel reservations, a container harbour
terminal, a public library's lending system, an industrial bakery, a ski resort).  Each
paraphrase question here is asked in words its answer never uses (no word, stem, synonym or
everyday reading in common), the way a person asks about a symptom while the note that
answers it names the cause: "why were two guests given the same room" against "channel
manager pushes to the OTA stalled on rate limits, leaving availability stale".  What links
them in a real home is the home's OTHER rows: the chatter in which the question's words and
the answer's words are written side by side (a front-desk report, an incident summary, a
handoff).  Those bridging rows are part of the corpus, as they would be part of a home; they
are never expected answers, and some questions have one, some two, a few none at all (the
honest misses of a method that learns from the home).

Written before any tuning against it, to measure learned associations and pseudo-relevance
feedback on the shape of question they exist for.  No synonym, weight or rule may be written
from it.  Rows are ``(key, surface, project, text)``; ``REPLACED`` is ``(old, new)``; queries
are ``(kind, text, project, expected_keys, outdated_key)`` as in bench/dev_corpus.py.

Run:  python3 bench/retrieval_eval.py --corpus dev2
"""

PROJECTS = ("Hotel", "Harbor", "Library", "Bakery", "Ski", "Theatre", "Vineyard", "Gym", "Observatory")

ROWS = (
    # Hotel: reservations and front desk
    ("hot.ota", "note", "Hotel", "Channel manager pushes to the OTA stalled on HTTP 429 rate limits, leaving availability stale for hours"),
    ("hot.ota_b1", "note", "Hotel", "Front desk had two guests turn up for the same room again; OTA availability must have gone stale"),
    ("hot.keys", "note", "Hotel", "Key cards are encoded at check-in by the door lock server in the back office"),
    ("hot.owner", "fact", "Hotel", "channel-manager owned-by team-distribution"),
    ("hot.team_db", "fact", "Hotel", "team-distribution operates mariadb-10"),
    ("hot.late_old", "memory", "Hotel", "Late checkout until 13:00 is free for loyalty members"),
    ("hot.late_new", "memory", "Hotel", "Late checkout until 14:00 is free for loyalty members"),
    ("hot.late_why", "note", "Hotel", "Loyalty late checkout extended an hour after housekeeping rosters moved to a later shift"),
    ("hot.folio", "note", "Hotel", "Folio charges post to the PMS at night audit; minibar items are keyed in by housekeeping"),
    ("hot.folio_b1", "note", "Hotel", "Guest disputed a bill for drinks they never had; minibar items keyed in twice by housekeeping"),
    ("hot.folio_b2", "note", "Hotel", "Another bill complaint at checkout: minibar keyed twice again, night audit did not catch it"),
    ("hot.wifi", "note", "Hotel", "Captive portal sessions expire after 24 hours and must be renewed with the room number"),
    ("hot.wifi_b1", "note", "Hotel", "Guests keep asking why the internet asks them to log in again each day; the captive portal session is 24 hours"),
    ("hot.handoff", "handoff", "Hotel", "Moved the rate plans to the new revenue tool; group blocks still edited by hand"),
    ("hot.pets", "memory", "Hotel", "Dogs are allowed on the ground floor only, with a cleaning fee"),
    # Harbor: container terminal
    ("har.berth", "note", "Harbor", "Berth windows are allocated by the terminal operating system two weeks before vessel arrival"),
    ("har.crane", "note", "Harbor", "Quay crane spreader twistlocks failed their sensor check, so cranes were held at reduced moves per hour"),
    ("har.crane_b1", "note", "Harbor", "Ship turnaround slow again this week; quay crane moves per hour far below plan"),
    ("har.crane_b2", "note", "Harbor", "Shipping line called about slow turnaround; crane productivity is the thing they watch"),
    ("har.gate", "note", "Harbor", "Truck appointment system caps gate slots at 40 per half hour"),
    ("har.gate_b1", "note", "Harbor", "Drivers queued on the access road all morning: every truck appointment slot was already taken"),
    ("har.owner", "fact", "Harbor", "terminal-os owned-by team-quayside"),
    ("har.team_mq", "fact", "Harbor", "team-quayside operates rabbitmq-3"),
    ("har.reefer_old", "note", "Harbor", "Reefer containers are checked for temperature alarms every 6 hours"),
    ("har.reefer_new", "note", "Harbor", "Reefer containers are checked for temperature alarms every 2 hours"),
    ("har.reefer_why", "note", "Harbor", "Reefer rounds made more frequent after a load of frozen fish thawed between checks"),
    ("har.customs", "note", "Harbor", "Customs holds are flagged by an EDI message and block the container from release"),
    ("har.customs_b1", "note", "Harbor", "Importer angry their box could not be picked up; it sat under a customs hold flagged by EDI"),
    ("har.handoff", "handoff", "Harbor", "Wired the vessel ETA feed into berth planning; pilot bookings still by phone"),
    ("har.safety", "memory", "", "Hi-vis vests and hard hats are required on every quay and yard"),
    # Library: lending system
    ("lib.holds", "note", "Library", "Reservation queue jobs stopped after the nightly ILS upgrade left the scheduler disabled"),
    ("lib.holds_b1", "note", "Library", "Patrons say books they put on hold never arrive; the reservation queue jobs look stuck"),
    ("lib.holds_b2", "note", "Library", "Branch staff: people waiting weeks for reserved books, reservation queue not advancing since the upgrade"),
    ("lib.fines", "memory", "Library", "Overdue charges were abolished for children's cards"),
    ("lib.ebook", "note", "Library", "E-book loans go through the OverDrive API and expire after 21 days"),
    ("lib.owner", "fact", "Library", "catalogue-api owned-by team-discovery"),
    ("lib.team_search", "fact", "Library", "team-discovery operates solr-8"),
    ("lib.sip", "note", "Library", "Checkout kiosks talk SIP2 to the ILS; the SIP2 listener drops idle sockets after five minutes"),
    ("lib.sip_b1", "note", "Library", "Self-service machine by the entrance froze mid-loan twice today; SIP2 connection drops blamed"),
    ("lib.loan_old", "memory", "Library", "Standard loan period is 14 days"),
    ("lib.loan_new", "memory", "Library", "Standard loan period is 21 days"),
    ("lib.loan_why", "note", "Library", "Loan period lengthened to match the e-book expiry so patrons get one rule"),
    ("lib.handoff", "handoff", "Library", "Migrated patron notices to email; postal notices still printed weekly"),
    ("lib.privacy", "memory", "", "Borrowing history is deleted when an item is returned, unless the patron opts in"),
    # Bakery: industrial production line
    ("bak.proof", "note", "Bakery", "Proofer humidity controller drifted after its probe was coated in flour, so dough overproofed"),
    ("bak.proof_b1", "note", "Bakery", "Loaves coming out flat and collapsed on line 2; QA suspects overproofed dough"),
    ("bak.proof_b2", "note", "Bakery", "Shift lead: flat loaves again, proofer humidity reading looked wrong"),
    ("bak.metal", "memory", "Bakery", "Every pallet passes the metal detector before dispatch, no exceptions"),
    ("bak.owner", "fact", "Bakery", "line-scheduler owned-by team-production"),
    ("bak.team_plc", "fact", "Bakery", "team-production maintains siemens-s7"),
    ("bak.allergen", "note", "Bakery", "Sesame runs are scheduled last before the weekly deep clean to limit cross-contact"),
    ("bak.oven", "note", "Bakery", "Tunnel oven burners tripped on low gas pressure when the canteen boilers started at 06:00"),
    ("bak.oven_b1", "note", "Bakery", "Half-baked bread at six in the morning again; oven burners tripped on gas pressure"),
    ("bak.batch_old", "note", "Bakery", "Sourdough starter is refreshed every 12 hours"),
    ("bak.batch_new", "note", "Bakery", "Sourdough starter is refreshed every 8 hours"),
    ("bak.batch_why", "note", "Bakery", "Starter refreshed more often after the summer heat made it too sour by morning"),
    ("bak.handoff", "handoff", "Bakery", "Recipe scaling moved into the MES; packaging weights still set at the line"),
    ("bak.labels", "note", "Bakery", "Best-before dates are printed by the inkjet coder from the MES batch record"),
    # Ski: ski resort lifts and passes
    ("ski.gates", "note", "Ski", "RFID turnstiles reject tickets when the access server's whitelist sync lags behind sales"),
    ("ski.gates_b1", "note", "Ski", "Visitors who bought a pass online were turned away at the lift; access whitelist sync behind again"),
    ("ski.wind", "note", "Ski", "Anemometers on the upper lift stop it automatically above 60 km/h gusts"),
    ("ski.wind_b1", "note", "Ski", "Top chair closed most of the afternoon; anemometer gusts over the limit on the upper lift"),
    ("ski.owner", "fact", "Ski", "pass-shop owned-by team-ecommerce"),
    ("ski.team_pay", "fact", "Ski", "team-ecommerce integrates adyen"),
    ("ski.snow", "note", "Ski", "Snow guns are scheduled from the wet-bulb forecast, only below minus 2"),
    ("ski.price_old", "fact", "Ski", "day-pass priced-by fixed-tariff"),
    ("ski.price_new", "fact", "Ski", "day-pass priced-by dynamic-pricing"),
    ("ski.price_why", "note", "Ski", "Switched day passes to dynamic pricing so weekday visits are cheaper and Saturdays less crowded"),
    ("ski.patrol", "memory", "Ski", "Ski patrol sweeps every run after the lifts close"),
    ("ski.handoff", "handoff", "Ski", "Moved locker rentals into the pass shop; helmet rentals still at the counter"),
    ("ski.radio", "memory", "", "Radio channel 3 is reserved for emergencies at every site"),
    # Second section (written after the first was measured, before any tuning on it): four
    # more domains, with harder bridges.  A lexical near-miss outranks the bridging row
    # (theatre, observatory); the bridge is a handoff or memory rather than a note (vineyard);
    # recurring chatter shares the bridge's words without answering (vineyard, gym); the
    # question's words are spread over two chatter rows (gym).
    # Theatre: box office
    ("the.stale", "note", "Theatre", "Ticketing cache served a five-minute-old inventory snapshot after the Redis failover"),
    ("the.stale_b1", "note", "Theatre", "Patrons picked seats the map showed free but they were sold already; inventory snapshot looked stale"),
    ("the.stale_near", "note", "Theatre", "Seat map design refresh: show sold seats in grey and free seats in blue"),
    ("the.scan", "note", "Theatre", "Door scanners reject barcodes when the PDF renderer shrinks them below 300 dpi"),
    ("the.scan_b1", "handoff", "Theatre", "Ushers report tickets printed by patrons refused at the entrance; barcodes from the PDF renderer too small"),
    ("the.owner", "fact", "Theatre", "box-office owned-by team-ticketing"),
    ("the.team_cache", "fact", "Theatre", "team-ticketing operates redis-7"),
    ("the.fee_old", "memory", "Theatre", "Booking fee is 2.50 per ticket"),
    ("the.fee_new", "memory", "Theatre", "Booking fee is 1.50 per ticket"),
    ("the.fee_why", "note", "Theatre", "Booking fee cut after the consumer group complaint about drip pricing"),
    ("the.subs", "note", "Theatre", "Subscription renewals are charged on 1 August through the stored card token"),
    # Vineyard: winery cellar
    ("vin.warm", "note", "Vineyard", "Harvest bins waited in the sun because the weighbridge printer jammed and trucks queued"),
    ("vin.warm_b1", "handoff", "Vineyard", "Grapes arrived warm at the press again; weighbridge queue is the cause, printer replacement ordered"),
    ("vin.stuck", "note", "Vineyard", "Stuck fermentation traced to the glycol chiller overcooling the must below 12 C"),
    ("vin.stuck_b1", "memory", "Vineyard", "When a batch stops bubbling overnight, suspect a stuck fermentation and check the glycol chiller first"),
    ("vin.tank1", "note", "Vineyard", "Tank 3 fermentation log checked, chiller setpoint fine"),
    ("vin.tank2", "note", "Vineyard", "Tank 5 fermentation log checked, chiller setpoint fine"),
    ("vin.tank3", "note", "Vineyard", "Tank 8 fermentation log checked, chiller setpoint fine"),
    ("vin.tank4", "note", "Vineyard", "Tank 9 fermentation log checked, chiller setpoint fine"),
    ("vin.owner", "fact", "Vineyard", "cellar-telemetry owned-by team-winemaking"),
    ("vin.team_db", "fact", "Vineyard", "team-winemaking operates timescaledb"),
    ("vin.sulfite", "memory", "Vineyard", "Every bottling run is sampled for free SO2 before corks go in"),
    ("vin.press_old", "note", "Vineyard", "White grapes are pressed at 1.2 bar maximum"),
    ("vin.press_new", "note", "Vineyard", "White grapes are pressed at 0.8 bar maximum"),
    ("vin.press_why", "note", "Vineyard", "Press pressure lowered after tasting panels found the hard-pressed juice bitter"),
    # Gym: fitness club
    ("gym.door", "note", "Gym", "Door controller firmware resets the access schedule to 06:00 after a power cut"),
    ("gym.door_b1", "note", "Gym", "Members locked out at 5:30 this morning, front desk let them in by hand"),
    ("gym.door_b2", "note", "Gym", "Locked out again after the storm: door controller access schedule had reset"),
    ("gym.class", "note", "Gym", "Class bookings open 48 hours ahead; the booking API throttles bursts from one account"),
    ("gym.class_b1", "note", "Gym", "Regulars say spin sessions are gone within a minute; a script hammers the booking API to grab spots"),
    ("gym.owner", "fact", "Gym", "member-app owned-by team-digital"),
    ("gym.team_auth", "fact", "Gym", "team-digital integrates auth0"),
    ("gym.freeze", "memory", "Gym", "Memberships can be paused for up to three months a year"),
    ("gym.dd", "note", "Gym", "Direct debit failures retry after three days and then suspend the account"),
    ("gym.dd_b1", "note", "Gym", "Member furious their card stopped working at the turnstile; direct debit retry had failed and the account was suspended"),
    # Observatory: telescope scheduling
    ("obs.blur", "note", "Observatory", "Dome seeing degraded because the dome fans were left off after the HVAC upgrade"),
    ("obs.blur_b1", "note", "Observatory", "Images blurry again last night; seeing numbers poor, were the dome fans running?"),
    ("obs.drift", "note", "Observatory", "Mount encoder lost its index after the cable wrap snagged, so the RA axis drifted"),
    ("obs.drift_b1", "note", "Observatory", "Stars trailing on every frame: RA axis drift again, mount encoder suspected"),
    ("obs.drift_near", "note", "Observatory", "Telescope tracking modes: sidereal for stars, lunar for the moon"),
    ("obs.queue", "note", "Observatory", "The scheduler ranks proposals by grade, then by airmass at the target's transit"),
    ("obs.owner", "fact", "Observatory", "night-scheduler owned-by team-operations"),
    ("obs.team_db", "fact", "Observatory", "team-operations operates postgres-15"),
    ("obs.cal_old", "note", "Observatory", "Flat fields are taken at dusk every night"),
    ("obs.cal_new", "note", "Observatory", "Flat fields are taken at dawn every night"),
    ("obs.cal_why", "note", "Observatory", "Flats moved to the morning so the dusk window is free for the survey's first field"),
    ("obs.dark", "memory", "", "No white light on any observing floor after sunset; red torches only"),
)

REPLACED = (
    ("hot.late_old", "hot.late_new"),
    ("har.reefer_old", "har.reefer_new"),
    ("lib.loan_old", "lib.loan_new"),
    ("bak.batch_old", "bak.batch_new"),
    ("ski.price_old", "ski.price_new"),
    ("the.fee_old", "the.fee_new"),
    ("vin.press_old", "vin.press_new"),
    ("obs.cal_old", "obs.cal_new"),
)
RETRACT_REASONS = {"ski.price_old": "tariff replaced"}

Q = []


def _q(kind, project, text, expected, outdated=None):
    Q.append((kind, text, project, tuple(expected.split()), outdated))


# exact
_q("exact", "Hotel", "key cards encoded door lock server", "hot.keys")
_q("exact", "Harbor", "berth windows terminal operating system", "har.berth")
_q("exact", "Bakery", "sesame runs deep clean", "bak.allergen")
# morphological
_q("morphological", "Library", "e-book loan expiring", "lib.ebook")
_q("morphological", "Ski", "snow gun scheduling wet-bulb", "ski.snow")
# synonym / abbreviation
_q("synonym", "Bakery", "manufacturing execution system recipe scaling", "bak.handoff")
_q("synonym", "Hotel", "property management system night audit charges", "hot.folio")
# paraphrase: the answer shares no word with the question; other rows of the home do
_q("paraphrase", "Hotel", "why were two guests given the same room", "hot.ota")
_q("paraphrase", "Hotel", "why did a guest get billed for drinks they never had", "hot.folio")
_q("paraphrase", "Hotel", "why does the internet make guests log in again every day", "hot.wifi")
_q("paraphrase", "Harbor", "why is ship turnaround so slow", "har.crane")
_q("paraphrase", "Harbor", "why were drivers queueing on the access road", "har.gate")
_q("paraphrase", "Harbor", "why could an importer not pick up their box", "har.customs")
_q("paraphrase", "Library", "why are books people put on hold never arriving", "lib.holds")
_q("paraphrase", "Library", "why does the self-service machine freeze mid-loan", "lib.sip")
_q("paraphrase", "Library", "do kids pay for returning books late", "lib.fines")
_q("paraphrase", "Bakery", "why are the loaves coming out flat", "bak.proof")
_q("paraphrase", "Bakery", "why is the bread half-baked early in the morning", "bak.oven")
_q("paraphrase", "Bakery", "how do we make sure nothing sharp ends up in a shipment", "bak.metal")
_q("paraphrase", "Ski", "why were people with an online pass turned away at the lift", "ski.gates")
_q("paraphrase", "Ski", "why was the top chair closed all afternoon", "ski.wind")
_q("paraphrase", "Ski", "who checks the slopes are empty at the end of the day", "ski.patrol")
# multi-hop: two rows joined by a shared entity
_q("multi_hop", "Hotel", "which database does the channel-manager team run", "hot.owner hot.team_db")
_q("multi_hop", "Harbor", "what message broker does the terminal-os team operate", "har.owner har.team_mq")
_q("multi_hop", "Library", "search engine run by the team owning catalogue-api", "lib.owner lib.team_search")
_q("multi_hop", "Ski", "which payment provider does the pass-shop team integrate", "ski.owner ski.team_pay")
# cross-project / fleet-wide rows asked from a project
_q("cross_project", "Harbor", "protective gear required on the quay", "har.safety")
_q("cross_project", "Library", "is borrowing history kept after return", "lib.privacy")
_q("cross_project", "Ski", "which radio channel is for emergencies", "ski.radio")
# temporal: the current row and the row recording the change; the replaced row must lose
_q("temporal", "Hotel", "until when is late checkout free for loyalty members", "hot.late_new hot.late_why", "hot.late_old")
_q("temporal", "Harbor", "how often are reefer containers checked", "har.reefer_new har.reefer_why", "har.reefer_old")
_q("temporal", "Library", "how long is the standard loan period", "lib.loan_new lib.loan_why", "lib.loan_old")
_q("temporal", "Bakery", "how often is the sourdough starter refreshed", "bak.batch_new bak.batch_why", "bak.batch_old")
_q("temporal", "Ski", "how is the day-pass priced", "ski.price_new ski.price_why", "ski.price_old")

# second section
_q("exact", "Theatre", "subscription renewals stored card token", "the.subs")
_q("exact", "Observatory", "proposals ranked by grade airmass", "obs.queue")
_q("synonym", "Gym", "DD failures retry suspend account", "gym.dd")
_q("paraphrase", "Theatre", "why did the seat map show sold seats as free", "the.stale")
_q("paraphrase", "Theatre", "why are tickets people printed themselves refused at the entrance", "the.scan")
_q("paraphrase", "Vineyard", "why did the grapes arrive warm at the press", "vin.warm")
_q("paraphrase", "Vineyard", "why did a batch stop bubbling overnight", "vin.stuck")
_q("paraphrase", "Gym", "why were members locked out early in the morning", "gym.door")
_q("paraphrase", "Gym", "why are spin sessions gone within a minute", "gym.class")
_q("paraphrase", "Gym", "why did a member's card stop working at the turnstile", "gym.dd")
_q("paraphrase", "Gym", "can someone take a break from the gym for a while", "gym.freeze")
_q("paraphrase", "Observatory", "why were last night's images blurry", "obs.blur")
_q("paraphrase", "Observatory", "why are the stars trailing on every frame", "obs.drift")
_q("multi_hop", "Theatre", "which cache does the box-office team run", "the.owner the.team_cache")
_q("multi_hop", "Vineyard", "what database does the cellar-telemetry team operate", "vin.owner vin.team_db")
_q("multi_hop", "Gym", "which identity provider does the member-app team integrate", "gym.owner gym.team_auth")
_q("cross_project", "Observatory", "what light is allowed on the observing floor", "obs.dark")
_q("temporal", "Theatre", "how much is the booking fee per ticket", "the.fee_new the.fee_why", "the.fee_old")
_q("temporal", "Vineyard", "what pressure are white grapes pressed at", "vin.press_new vin.press_why", "vin.press_old")
_q("temporal", "Observatory", "when are flat fields taken", "obs.cal_new obs.cal_why", "obs.cal_old")

QUERIES = tuple(Q)
KINDS = ("exact", "morphological", "synonym", "paraphrase", "multi_hop", "cross_project", "temporal")

# filler notes (per project), in these domains' everyday words
FILLER_SUBJECTS = ("the shift handover", "the supplier invoice", "the training plan", "the notice board",
                   "the team lunch", "the spare parts order", "the visitor log", "the budget sheet")
FILLER_PREDICATES = ("was reviewed", "needs an owner", "was updated", "is overdue", "was discussed",
                     "has open questions", "was pushed to next month")
FILLER_QUALIFIERS = ("at the stand-up", "after the long weekend", "per the manager", "", "before the audit")
FILLER_PER_PROJECT = 40
