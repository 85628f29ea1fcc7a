"""A second development corpus for retrieval work: four domains neither other corpus covers
(greenhouse irrigation, airline crew scheduling, university course registration, a
newsroom's publishing stack), written as people write notes, with the kinds of questions
people ask of them.

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

PROJECTS = ("Farm", "Air", "Campus", "Newsroom")

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
)

REPLACED = (
    ("farm.water_old", "farm.water_new"),
    ("air.rest_old", "air.rest_new"),
    ("uni.open_old", "uni.open_new"),
    ("news.paywall_old", "news.paywall_new"),
)
RETRACT_REASONS = {"news.paywall_old": "vendor paywall removed"}

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

QUERIES = tuple(Q)
KINDS = ("exact", "morphological", "synonym", "paraphrase", "multi_hop", "cross_project", "temporal")

# filler notes (per project) as in the first corpus, in these domains' words
FILLER_SUBJECTS = ("the morning rota", "the label printer", "the staging server", "the dashboard",
                   "the onboarding checklist", "the backup job", "the meeting notes", "the vendor contract")
FILLER_PREDICATES = ("was reviewed", "needs an owner", "was updated", "is due for renewal", "was discussed",
                     "has open questions", "was moved to next quarter")
FILLER_QUALIFIERS = ("at the weekly sync", "after the holiday", "per the manager", "", "by the end of the month")
FILLER_PER_PROJECT = 40
