"""A second development corpus for retrieval work: four domains neither other corpus covers
(a clinical lab, warehouse robotics, a game studio's build farm, a newsroom's publishing
stack), written as people write notes, with the kinds of questions people ask of them.

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

PROJECTS = ("Lab", "Robots", "Studio", "Newsroom")

ROWS = (
    # Lab: a clinical laboratory information system
    ("lab.analyzer", "note", "Lab", "The chemistry analyzer uploads results over HL7 to the LIS every two minutes"),
    ("lab.owner", "fact", "Lab", "lis-gateway owned-by team-diagnostics"),
    ("lab.team_db", "fact", "Lab", "team-diagnostics operates oracle-19"),
    ("lab.critical", "memory", "Lab", "Critical potassium values must be phoned to the ward within 30 minutes"),
    ("lab.barcode", "note", "Lab", "Specimen tubes are labelled with Code 128 barcodes printed at draw time"),
    ("lab.qc_old", "note", "Lab", "Quality control samples run once per shift on every analyzer"),
    ("lab.qc_new", "note", "Lab", "Quality control samples run every four hours on every analyzer"),
    ("lab.qc_why", "note", "Lab", "QC frequency raised after the audit found drift between shifts went unnoticed"),
    ("lab.backlog", "note", "Lab", "Result backlog grew because the HL7 listener thread pool was exhausted during the morning rush"),
    ("lab.retention", "memory", "", "Patient results are retained for ten years under the records policy"),
    ("lab.handoff", "handoff", "Lab", "Moved the reference range tables into the LIS configuration; pediatric ranges still pending"),
    ("lab.courier", "memory", "Lab", "Outpatient specimens arrive by courier at 11:00 and 16:00"),
    ("lab.middleware", "fact", "Lab", "lis-gateway uses mirth-connect"),
    ("lab.downtime", "note", "Lab", "During LIS downtime technicians record results on paper worksheets and enter them later"),
    ("lab.autoverify", "note", "Lab", "Autoverification releases normal results without a technologist review"),
    # Robots: warehouse picking robots
    ("rob.fleet", "note", "Robots", "Forty picking robots share one charging bay on the mezzanine"),
    ("rob.owner", "fact", "Robots", "fleet-manager owned-by team-automation"),
    ("rob.team_queue", "fact", "Robots", "team-automation operates rabbitmq-cluster"),
    ("rob.battery_old", "memory", "Robots", "Robots return to charge at 20 percent battery"),
    ("rob.battery_new", "memory", "Robots", "Robots return to charge at 35 percent battery"),
    ("rob.battery_why", "note", "Robots", "Charge threshold moved up because robots stalled in the far aisles before reaching the bay"),
    ("rob.collision", "note", "Robots", "Lidar blind spot near dock door 4 caused two near collisions with forklifts"),
    ("rob.slotting", "note", "Robots", "Fast movers are slotted in the aisles nearest the packing stations"),
    ("rob.map", "handoff", "Robots", "Rebuilt the floor map after the racking change; aisle 12 now one-way"),
    ("rob.wms", "fact", "Robots", "fleet-manager reads manhattan-wms"),
    ("rob.latency", "note", "Robots", "Pick confirmations lag because the WMS acknowledgement call times out under peak load"),
    ("rob.firmware", "memory", "Robots", "Firmware updates roll out to five robots first, then the rest overnight"),
    ("rob.safety", "memory", "", "Any person entering a robot zone must wear a tracking tag"),
    ("rob.estop", "note", "Robots", "Emergency stop buttons halt every robot in the zone within 200 milliseconds"),
    # Studio: a game studio's build farm
    ("stu.farm", "note", "Studio", "The build farm compiles console builds on twelve Windows agents"),
    ("stu.owner", "fact", "Studio", "build-farm owned-by team-engine"),
    ("stu.team_store", "fact", "Studio", "team-engine operates perforce-server"),
    ("stu.shader", "note", "Studio", "Shader compilation dominates build time; the shader cache is shared over SMB"),
    ("stu.nightly_old", "note", "Studio", "Nightly builds start at 22:00"),
    ("stu.nightly_new", "note", "Studio", "Nightly builds start at 01:00"),
    ("stu.nightly_why", "note", "Studio", "Moved the nightly start later so late check-ins from the Montreal office make it in"),
    ("stu.crash", "note", "Studio", "Crash dumps from playtests are symbolicated by the crash-reporter service"),
    ("stu.cert", "memory", "Studio", "Console certification submissions need two weeks of lead time"),
    ("stu.assets", "handoff", "Studio", "Split texture import into its own job; the asset bake no longer blocks code builds"),
    ("stu.flaky", "note", "Studio", "Builds failed intermittently because agents ran out of disk from stale intermediate files"),
    ("stu.engine", "fact", "Studio", "build-farm uses unreal-5"),
    ("stu.branch", "memory", "Studio", "Feature work lands on dev-main and is promoted to release weekly"),
    ("stu.fleetwide", "memory", "", "Every build artifact is signed before it leaves the network"),
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
    ("lab.qc_old", "lab.qc_new"),
    ("rob.battery_old", "rob.battery_new"),
    ("stu.nightly_old", "stu.nightly_new"),
    ("news.paywall_old", "news.paywall_new"),
)
RETRACT_REASONS = {"news.paywall_old": "vendor paywall removed"}

Q = []


def _q(kind, project, text, expected, outdated=None):
    Q.append((kind, text, project, tuple(expected.split()), outdated))


# exact
_q("exact", "Lab", "Code 128 barcodes specimen tubes", "lab.barcode")
_q("exact", "Lab", "autoverification normal results", "lab.autoverify")
_q("exact", "Robots", "lidar blind spot dock door", "rob.collision")
_q("exact", "Robots", "emergency stop buttons", "rob.estop")
_q("exact", "Studio", "shader cache shared over SMB", "stu.shader")
_q("exact", "Studio", "console certification lead time", "stu.cert")
_q("exact", "Newsroom", "photos resized WebP", "news.images")
_q("exact", "Newsroom", "archive search OpenSearch index", "news.search")
# morphological
_q("morphological", "Lab", "analyzers uploading result", "lab.analyzer")
_q("morphological", "Robots", "slotting fast mover aisle", "rob.slotting")
_q("morphological", "Studio", "symbolicating crash dump", "stu.crash")
_q("morphological", "Newsroom", "correction appended to articles", "news.corrections")
# synonym / abbreviation
_q("synonym", "Lab", "lab information system downtime paper", "lab.downtime")
_q("synonym", "Robots", "warehouse management system acknowledgement", "rob.latency")
_q("synonym", "Studio", "CI agents out of disk space", "stu.flaky")
_q("synonym", "Newsroom", "content management system edge rendering", "news.cms")
# paraphrase: the row says it with other words
_q("paraphrase", "Lab", "why were results slow to arrive in the morning", "lab.backlog")
_q("paraphrase", "Lab", "when must a dangerous potassium result be called in", "lab.critical")
_q("paraphrase", "Robots", "why are pick confirmations delayed at busy times", "rob.latency")
_q("paraphrase", "Robots", "where do the robots recharge", "rob.fleet")
_q("paraphrase", "Studio", "why did builds break now and then", "stu.flaky")
_q("paraphrase", "Studio", "what makes builds take so long", "stu.shader")
_q("paraphrase", "Newsroom", "why were comments turned off on election night", "news.spike")
_q("paraphrase", "Newsroom", "how are late corrections handled", "news.corrections")
# multi-hop: two rows joined by a shared entity
_q("multi_hop", "Lab", "what database does the team owning lis-gateway run", "lab.owner lab.team_db")
_q("multi_hop", "Robots", "which message queue does the fleet-manager team operate", "rob.owner rob.team_queue")
_q("multi_hop", "Studio", "version control server of the build-farm owners", "stu.owner stu.team_store")
_q("multi_hop", "Newsroom", "database run by the team that owns publishing-api", "news.owner news.team_db")
# cross-project / fleet-wide rows asked from a project
_q("cross_project", "Lab", "how long are patient results kept", "lab.retention")
_q("cross_project", "Robots", "tracking tag robot zone", "rob.safety")
_q("cross_project", "Studio", "are build artifacts signed", "stu.fleetwide")
_q("cross_project", "Newsroom", "headline capitalisation rule", "news.style")
# temporal: the current row and the row recording the change; the replaced row must lose
_q("temporal", "Lab", "how often do quality control samples run", "lab.qc_new lab.qc_why", "lab.qc_old")
_q("temporal", "Robots", "battery level robots return to charge", "rob.battery_new rob.battery_why", "rob.battery_old")
_q("temporal", "Studio", "when do nightly builds start", "stu.nightly_new stu.nightly_why", "stu.nightly_old")
_q("temporal", "Newsroom", "which paywall does publishing-api use", "news.paywall_new news.paywall_why", "news.paywall_old")

QUERIES = tuple(Q)
KINDS = ("exact", "morphological", "synonym", "paraphrase", "multi_hop", "cross_project", "temporal")

# filler notes (per project) as in the first corpus, in these domains' words
FILLER_SUBJECTS = ("the night shift rota", "the label printer", "the staging server", "the dashboard",
                   "the onboarding checklist", "the backup job", "the meeting notes", "the vendor contract")
FILLER_PREDICATES = ("was reviewed", "needs an owner", "was updated", "is due for renewal", "was discussed",
                     "has open questions", "was moved to next quarter")
FILLER_QUALIFIERS = ("at the weekly sync", "after the holiday", "per the manager", "", "by the end of the month")
FILLER_PER_PROJECT = 40
