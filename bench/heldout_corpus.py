"""The held-out retrieval corpus: written under different rules from the first one, and frozen.

How it was written.  One person wrote every row and query in one sitting, without opening the
engine (``mindos/memory``, ``mindos/context``), its synonym table, or the rows and queries of
``bench/retrieval_corpus.py`` -- only that module's data format and the bench harness were
read.  The domains are deliberately not web SaaS: a hospital's staff and theatre scheduling
(Wards), a parcel-delivery fleet (Fleet), a game studio (Studio), a bank's overnight batch
(Batch), a genomics lab's data pipeline (Lab), a municipal water utility (Utility), an
e-commerce fulfilment centre (Warehouse) and a mobile operator's radio-network operations
(RAN), plus fleet-wide rows (project '').  The phrasing is what engineers actually write:
abbreviations and house jargon, incident write-ups, terse memos, change notes that say what
changed, when and why.

What it is for.  It is a held-out test set: it measures whether retrieval generalises beyond
the corpus it was tuned on.  It is never used to write synonyms, expansions, weights or any
other tuning; a change made because of a miss here spoils it.  Its content is pinned by a
digest in ``tests/bench/test_heldout_corpus.py``: editing it fails that test unless the
digest is changed on purpose (and then the figures before and after are no longer comparable).

Data format (the same as ``bench/retrieval_corpus.py``).  Rows are ``(key, surface, project,
text)`` with surfaces note, memory, fact and handoff; a fact's text is ``"subject predicate
object"`` (three tokens) and a project fact is linked to a task of its project; project ''
means fleet-wide (memories and facts only).  ``REPLACED`` lists ``(old_key, new_key)``: the
old row is loaded first and then replaced the way its surface replaces rows (supersede-note,
memory-forget --superseded-by, fact-retract with the reason in ``RETRACT_REASONS`` and a new
assertion, a new handoff on the same task).  Each project's rows are written in its own time
order and the projects are interleaved, so every project spans the whole simulated 90 days
(``STEP_MINUTES`` between rows).

Queries are ``(kind, text, project, expected_keys, outdated_key)``: the rows a careful person
would want in the top 5 when asking from that project (None = no project), and for temporal
queries the outdated row that must lose to its replacement (the replacement comes first in
``expected_keys``).  Kinds:

  exact          the query reuses the row's own words;
  morphological  the same words in other inflections (rerouted / rerouting, throttles / throttled);
  cross-project  the answer sits in another project, several projects, or the fleet-wide rows;
  synonym        another name for the same thing, abbreviations included (OR, ETA, k8s, pg);
  multi-hop      two rows together answer it (the owner of X, then what that owner runs);
  paraphrase     a real vocabulary gap: the query shares few or no words with its answer;
  temporal       which value is current or what changed; the replaced row is the outdated
                 key, and where a note records the change, that note is expected too.
"""

KINDS = ("exact", "morphological", "cross-project", "synonym", "multi-hop", "paraphrase", "temporal")

PROJECTS = ("Wards", "Fleet", "Studio", "Batch", "Lab", "Utility", "Warehouse", "RAN")

# Each project's rows in its own time order: (key, surface, text).

_WARDS = (
    ("wd.roster_db", "fact", "svc-rostering stores-in postgres-13"),
    ("wd.adt_feed", "note", "ADT feed from the EHR arrives as HL7 v2 through Mirth channel MIR-ADT-01. We act on A01/A03 only; A08 updates are dropped on purpose."),
    ("wd.theatre_slots", "memory", "Theatre sessions are booked in 30-min slots; any list longer than 8h needs sign-off from the theatre coordinator."),
    ("wd.bedboard_owner", "fact", "svc-bedboard owned-by team-patientflow"),
    ("wd.roster_publish", "note", "Nightly roster publish runs 01:30 local and pushes the next 14 days of shifts to the staff app. If it fails nurses see yesterday's rota, so page on-call."),
    ("wd.bank_offer", "memory", "Bank shifts are offered to the internal staff bank for 72h before agencies get them."),
    ("wd.ward_codes", "note", "Ward codes: AMU acute medical unit, SAU surgical assessment unit, ITU intensive care. Bedboard keys everything on ward code, never ward name."),
    ("wd.theatre_v2", "handoff", "Theatre booking v2 API is live behind flag theatre_v2; cancellations still go through the v1 endpoint, migrate those next sprint."),
    ("wd.inc_dup_appts", "note", "INC-0412 write-up: duplicate outpatient appointments were created when the clinic UI retried a POST after a 504 from the gateway. No idempotency key on POST /appointments. Fix: client request id, server dedupes for 10 min."),
    ("wd.dst", "memory", "Rota times are stored as Europe/London wall clock plus offset; on DST nights the night shift is 13h or 11h and payroll handles it."),
    ("wd.nhs_number", "note", "NHS numbers must never reach the logs. The log scrubber masks any 10-digit run in svc-theatre-booking and svc-bedboard."),
    ("wd.bed_target_old", "memory", "Bedboard target: the ward view reflects an ADT admit within 60 s."),
    ("wd.bed_queue", "fact", "svc-bedboard consumes rabbitmq-3"),
    ("wd.escalation", "note", "Escalation for scheduling outages: ward manager, then site ops, then on-call eng via PagerDuty service hosp-sched. Tell the clinical safety officer about anything over 30 min."),
    ("wd.fhir_quota_old", "memory", "EHR FHIR API quota is 50 req/s per client id; the appointment sync backs off exponentially on 429."),
    ("wd.leave", "note", "Annual leave requests close six weeks before a rota is published; late requests go to the matron for manual approval."),
    ("wd.roster_db_new", "fact", "svc-rostering stores-in postgres-16"),
    ("wd.roster_db_change", "note", "Rostering database went from pg13 to pg16 on the weekend of 3 Feb. Why: 13 was end of life and we wanted logical replication into the reporting replica. The rollback snapshot was not needed."),
    ("wd.bed_target_new", "memory", "Bedboard target tightened after the ED flow review: an ADT admit must show on the ward view within 15 s."),
    ("wd.theatre_v2_done", "handoff", "Cancellations moved to theatre v2 and the v1 endpoint now answers 410; flag theatre_v2 removed. Left: the reporting extract still reads the v1 tables."),
    ("wd.juniors", "note", "Junior doctors rotate in on the first Wednesday of August and February; load their grades a week early or the rota engine gives them no on-call slots."),
    ("wd.safe_staffing", "memory", "Safe staffing is a hard constraint in the solver: at least one registered nurse per 8 patients on days, 1:10 at night."),
    ("wd.solver", "fact", "svc-rostering solves-with ortools-cpsat"),
    ("wd.solver_slow", "note", "Rota solve for the six big wards took 47 min on Monday instead of the usual 8. The new max-3-consecutive-nights constraint blew up the search; a symmetry-breaking hint brought it back to 9 min."),
    ("wd.wristbands", "note", "Zebra wristband printers jam on the new template when the patient name exceeds 40 chars; svc-bedboard truncates names now."),
    ("wd.pitr", "memory", "Rostering DB has point-in-time recovery: WAL archived to the on-prem object store, kept 35 days."),
    ("wd.locum_old", "note", "Locum doctor bookings come from the agency portal and are typed into the rota by hand."),
    ("wd.pager", "fact", "hosp-sched paged-via pagerduty"),
    ("wd.locum_new", "note", "Locum bookings now arrive from the agency portal as a nightly CSV drop and load automatically; only same-day locums are typed in by hand."),
    ("wd.cqc_audit", "note", "The CQC audit asked us to prove that rota changes are traceable, so every manual override in the rota UI now writes an audit row with who and why."),
    ("wd.utilisation", "memory", "Theatre utilisation is measured knife-to-skin until closure, not patient-in-room; ops reports use the other definition, do not mix the two."),
    ("wd.freeze", "note", "Change freeze on all scheduling services from 20 Dec to 3 Jan every year for winter pressures."),
    ("wd.offline", "memory", "The staff app keeps the rota offline for 7 days so nurses can check shifts on wards without wifi."),
    ("wd.fhir", "fact", "svc-theatre-booking integrates-with ehr-fhir-r4"),
    ("wd.bedboard_owner_new", "fact", "svc-bedboard owned-by team-clinical-platform"),
    ("wd.bedboard_reorg", "note", "Reorg on 1 March: Bedboard moved from Patient Flow to Clinical Platform. Patient Flow keeps only the ED tracker. Pages for bedboard now go to the Clinical Platform rotation."),
    ("wd.inc_phantom_beds", "note", "INC-0533: bedboard showed 12 phantom free beds in AMU for about two hours. After a Mirth restart A03 discharges arrived before their A01 admits and the consumer did not reorder by event time. It now buffers 30 s and sorts on MSH-7."),
    ("wd.solver_tuning", "handoff", "Solver tuning done for the consecutive-nights constraint; benchmark against last quarter's rotas lives in solver-bench/. Next: warm-start from the previous week."),
    ("wd.fhir_quota_new", "memory", "The EHR vendor raised our FHIR quota to 120 req/s per client id from April; the sync still backs off on 429."),
    ("wd.bed_cache", "fact", "svc-bedboard caches-in redis-7"),
    ("wd.fill_report", "note", "Monthly fill-rate report (bank vs agency vs unfilled shifts) goes to the finance director; it runs against the reporting replica, never the primary."),
    ("wd.smartcards", "memory", "Clinicians sign in with smartcards through the trust SSO; the rota web UI also takes username plus OTP for staff without a card reader at home."),
    ("wd.clinic_slow", "note", "Outpatient clinic lists took 8-10 s to open on Monday mornings: the clinic list query seq-scanned appointments on clinic_date. Added a composite index on (clinic_id, clinic_date)."),
    ("wd.sms_vendor_old", "fact", "svc-reminders sends-via textlocal"),
    ("wd.reminder_retries", "memory", "Appointment reminder texts retry 3 times, 10 min apart; anything still undelivered goes to the letters queue."),
    ("wd.solver_warmstart", "handoff", "Warm-start from the previous rota is implemented and big wards solve in about 4 min. Flag rota_warmstart is on in staging only; needs matron sign-off before prod."),
    ("wd.ed_clock", "note", "ED breach clock starts at arrival, not at triage; the 4-hour flag turns amber at 3h30."),
    ("wd.sms_vendor_new", "fact", "svc-reminders sends-via govuk-notify"),
    ("wd.sms_change", "note", "17 March: appointment reminders switched from Textlocal to GOV.UK Notify. The trust mandated it and it is cheaper; comms re-approved the templates."),
    ("wd.cutover", "note", "Theatre v2 cutover runbook: drain the v1 queue, freeze bookings 22:00-23:00, run the reconciliation script and compare counts per session."),
    ("wd.mrn_merge", "memory", "ED registers unknown patients under temporary MRNs; the merge arrives later as an A40 and bedboard must re-key the bed history."),
    ("wd.theatre_platform", "fact", "svc-theatre-booking runs-on openshift-4"),
    ("wd.ws_fanout", "memory", "Bedboard websocket fan-out copes with about 2k concurrent ward screens; beyond that we shard by hospital site."),
    ("wd.uat", "note", "UAT holds a scrubbed copy of last month's rota; refreshing it takes all of Sunday, book it in #sched-env first."),
    ("wd.bank_offer_new", "memory", "Internal staff bank now gets 48h (down from 72h) before shifts go to agencies, to cut unfilled nights."),
    ("wd.bank_change", "note", "Bank offer window cut from 72h to 48h on 2 March after the January unfilled-nights figures; agency spend went up slightly, nights filled went up a lot."),
    ("wd.discharge_lounge", "note", "Discharge lounge is modelled as a virtual ward DL1 so beds free up as soon as the patient leaves the ward, before transport arrives."),
    ("wd.roster_api", "fact", "svc-rostering exposes grpc-api"),
    ("wd.sickness", "memory", "Short-notice sickness is logged through the staff app before 07:00; the rota gap is pushed to the bank office queue automatically."),
    ("wd.inc_rota_blank", "note", "INC-0571: the staff app showed an empty rota for 40 min at 02:00. Roster publish hit a lock held by the fill-rate report running on the primary by mistake. Report moved back to the replica, publish got a lock timeout and a retry."),
)

_WARDS_REPLACED = (
    ("wd.roster_db", "wd.roster_db_new"),
    ("wd.bed_target_old", "wd.bed_target_new"),
    ("wd.theatre_v2", "wd.theatre_v2_done"),
    ("wd.locum_old", "wd.locum_new"),
    ("wd.bedboard_owner", "wd.bedboard_owner_new"),
    ("wd.fhir_quota_old", "wd.fhir_quota_new"),
    ("wd.solver_tuning", "wd.solver_warmstart"),
    ("wd.sms_vendor_old", "wd.sms_vendor_new"),
    ("wd.bank_offer", "wd.bank_offer_new"),
)

_FLEET = (
    ("fl.telematics", "fact", "svc-telematics ingests-from samsara"),
    ("fl.route_engine", "fact", "svc-routing solves-with vroom"),
    ("fl.eta_cache_old", "memory", "Customer ETA is cached for 300 s per stop in the tracking page."),
    ("fl.depot_codes", "note", "Depot codes: LHR2 is the Heathrow cross-dock, MAN1 Trafford Park, BHX3 Birmingham hub. Drivers' handhelds show the code, not the town."),
    ("fl.tacho", "memory", "Tachograph downloads are due every 28 days per driver card and every 90 days per vehicle unit; compliance chases from day 21."),
    ("fl.handheld", "note", "Driver handhelds are Zebra TC52s on Android 11, enrolled in the MDM; the POD app auto-updates only on depot wifi."),
    ("fl.pod", "note", "Proof of delivery is a photo plus GPS fix; if the GPS accuracy is worse than 50 m the app asks for a signature instead."),
    ("fl.routing_owner", "fact", "svc-routing owned-by team-linehaul"),
    ("fl.inc_eta_stale", "note", "INC-2231: tracking page ETAs were up to 40 min wrong in the afternoon peak. The cached ETA kept the morning traffic model; the cache key did not include the model version. Key now includes it."),
    ("fl.geofence", "memory", "Arrival is recorded when the van enters a 150 m geofence around the stop, not when the driver taps Arrived."),
    ("fl.fuel_cards", "note", "Fuel card transactions come in as a daily file from the card provider at 06:00; anything over 120 litres in one fill is flagged for fraud review."),
    ("fl.reroute_v1", "handoff", "Dynamic rerouting prototype done: when a van runs 30 min late, the remaining stops are re-solved and pushed to the handheld. Only tested in MAN1."),
    ("fl.eta_cache_new", "memory", "Customer ETA cache TTL is 90 s per stop, keyed by traffic model version."),
    ("fl.eta_change", "note", "ETA cache TTL cut from 300 s to 90 s on 12 Jan after INC-2231; the extra load on svc-routing was about 6%, acceptable."),
    ("fl.ev_charging", "note", "EV vans charge overnight at depot; the charge scheduler staggers starts from 22:00 so the site supply never exceeds 400 kVA."),
    ("fl.ev_range", "memory", "Plan eVito routes at 110 miles max in winter, 140 in summer; the router reads the seasonal cap from config, not the van."),
    ("fl.telematics_db", "fact", "svc-telematics stores-in timescaledb"),
    ("fl.kafka", "fact", "svc-telematics publishes-to kafka-fleet"),
    ("fl.lag_incident", "note", "Telematics consumers fell 25 min behind on Friday: lag spiked on the positions topic because the enrichment step called the reverse-geocoding API synchronously for every ping and that API slowed to 800 ms. Now geocoded in batches with a local cache."),
    ("fl.driver_hours", "memory", "Drivers may not drive more than 9h a day (10h twice a week) and need a 45 min break after 4.5h; the router must respect both."),
    ("fl.returns", "note", "Failed deliveries return to depot the same day; second attempt is booked automatically for the next working day unless the customer picks a slot."),
    ("fl.reroute_v2", "handoff", "Dynamic rerouting rolled out to all depots after the MAN1 pilot: late threshold lowered to 20 min, drivers get a banner before the list reshuffles. Open: BHX3 complains about too many reshuffles."),
    ("fl.maps_old", "fact", "svc-routing geocodes-with google-maps"),
    ("fl.congestion", "note", "ULEZ and Birmingham CAZ: diesel vans older than Euro 6 must not be routed into the zones; the router gets the zone polygons from the zones service weekly."),
    ("fl.parcel_limits", "memory", "Single-driver parcels max 25 kg and 120 cm longest side; anything bigger is a two-person job and goes to the 2-man fleet."),
    ("fl.maps_new", "fact", "svc-routing geocodes-with here-maps"),
    ("fl.maps_change", "note", "Geocoding moved from Google Maps to HERE on 9 Feb: HERE's truck attributes (height, weight limits) are better for the 7.5t fleet and the contract was 40% cheaper."),
    ("fl.linehaul", "note", "Linehaul trunks leave the hubs at 21:00, 23:00 and 01:30; a trailer that misses the 01:30 means next-day parcels become day-after for that postcode area."),
    ("fl.oncall", "fact", "fleet-ops paged-via opsgenie"),
    ("fl.mot", "memory", "Vehicle MOT and service dates live in the fleet register; a van due within 7 days is removed from tomorrow's plan automatically."),
    ("fl.inc_double_book", "note", "INC-2307: 14 vans were planned on routes while in the workshop. The workshop system's status webhook failed silently for 2 days (expired TLS cert on our side). Added an alert when no webhook arrives for 6h."),
    ("fl.plan_cutoff_old", "note", "Route plan is frozen at 18:00 the day before; later orders go on the next day's plan."),
    ("fl.plan_cutoff_new", "note", "Route plan now freezes at 19:30 the evening before (was 18:00) so late-afternoon orders still make next-day; the solver was sped up enough to allow it."),
    ("fl.solver_time", "memory", "A full next-day plan for all depots solves in about 11 min on the c6i.4xlarge; anything over 25 min pages fleet-ops."),
    ("fl.driver_app_crash", "note", "POD app crashed on scan for some drivers after the Android 11 security patch; the camera permission was revoked by the MDM policy. MDM profile fixed, no app change."),
    ("fl.co2", "memory", "CO2 per parcel is reported monthly from fuel litres plus kWh charged, divided by delivered parcels; failed attempts count against it."),
    ("fl.telematics_owner", "fact", "svc-telematics owned-by team-fleet-data"),
    ("fl.ping_rate", "memory", "Vans send a position ping every 15 s when moving and every 5 min when parked."),
    ("fl.ping_rate_new", "memory", "Position pings are every 10 s when moving (was 15 s) since the rerouting rollout needed fresher positions; parked stays at 5 min."),
    ("fl.customer_sms", "note", "Customers get a 1-hour window text at 07:30 on the day; if the route reshuffles the window is re-sent only when it moves by more than 30 min."),
    ("fl.safe_place", "memory", "Safe place deliveries need the customer's consent recorded on the order; drivers cannot choose a safe place themselves."),
    ("fl.routing_deploy", "note", "svc-routing deploys are blocked 15:00-20:00 because that is when the next-day plan is built; deploy before lunch or after the freeze."),
    ("fl.inc_plan_late", "note", "INC-2398: next-day plan finished at 23:40 instead of 19:45. The order import job retried a malformed retailer file 50 times before giving up and held the planning lock meanwhile. Import now quarantines bad files after 3 tries."),
    ("fl.handheld_new", "note", "Handheld refresh: TC52s are being replaced by TC53s over Q2, same MDM profile; batteries on the old units no longer last a full shift."),
    ("fl.weight_bridge", "note", "Hub weighbridges post gross weights to svc-linehaul; a trailer over 24t gross is held at the gate until re-balanced."),
    ("fl.routing_owner_new", "fact", "svc-routing owned-by team-planning"),
    ("fl.routing_reorg", "note", "From 1 April routing belongs to the new Planning team; Linehaul keeps trunks and weighbridges. Pager rotation for svc-routing moved the same day."),
    ("fl.claims", "memory", "Damage claims need the POD photo and the depot scan history; claims team pulls both from the parcel timeline API."),
    ("fl.reroute_v3", "handoff", "Reshuffle damping added for BHX3: stops already within 2 km are never moved and a driver gets at most 2 reshuffles per shift. Monitoring the complaint tickets for a week."),
    ("fl.winter", "note", "Winter ops: gritting alerts from the Met Office feed mark rural postcodes as slow; the router adds 20% to drive times there."),
    ("fl.timescale_retention", "memory", "Raw telematics positions are kept 90 days in timescaledb, then downsampled to 1-min averages kept 2 years."),
)

_FLEET_REPLACED = (
    ("fl.eta_cache_old", "fl.eta_cache_new"),
    ("fl.reroute_v1", "fl.reroute_v2"),
    ("fl.reroute_v2", "fl.reroute_v3"),
    ("fl.maps_old", "fl.maps_new"),
    ("fl.plan_cutoff_old", "fl.plan_cutoff_new"),
    ("fl.ping_rate", "fl.ping_rate_new"),
    ("fl.routing_owner", "fl.routing_owner_new"),
)

_STUDIO = (
    ("gs.engine", "fact", "project-tidewater builds-with unreal-5.3"),
    ("gs.build_farm", "note", "Build farm: 14 Windows agents on Horde, incremental editor builds ~12 min, full cook for PS5 ~2h10. Nightly full cook kicks off at 23:00."),
    ("gs.p4", "memory", "Source control is Perforce; art assets live in //tidewater/content, code in //tidewater/main. Never submit .uasset files from the code stream."),
    ("gs.cert_xbox", "note", "Xbox cert fail on XR-015: the game kept writing save data while the user signed out. Suspend handler now flushes and stops all save writes on sign-out."),
    ("gs.frame_budget", "memory", "Frame budget on base PS5 is 16.6 ms at 60 fps performance mode; GPU gets 12 ms, the rest is game thread headroom."),
    ("gs.crash_owner", "fact", "crash-pipeline owned-by team-live-ops"),
    ("gs.shader_hitch", "note", "Traversal hitches in the harbour level came from PSO compiles on first sight of the water material. Bundled the PSO cache from the QA playthroughs; hitch gone on PS5, still some on PC DX12."),
    ("gs.crash_tool", "fact", "crash-pipeline reports-to sentry"),
    ("gs.playtest", "note", "External playtest #4 (Feb): 40 players, median session 52 min. Top complaints: the grapple tutorial, inventory weight limits, motion blur default."),
    ("gs.localisation", "memory", "Loc strings are frozen 6 weeks before gold; after that only fixes via the loc bug template, and FIGS plus JP/KO get priority."),
    ("gs.mem_budget_old", "memory", "Texture streaming pool on Xbox Series S is 1.6 GB."),
    ("gs.handoff_netcode", "handoff", "Co-op netcode: replicated the grapple state and rollback for the boat; desync still happens when the host alt-tabs. Repro steps in TW-4412."),
    ("gs.cook_fail", "note", "Nightly cook failed 3 nights in a row with 'Ran out of memory' on agent BF-07. That agent had 32 GB while the others have 64; pulled it out of the cook pool."),
    ("gs.store_build", "note", "Steam depots: main branch uploads to the 'internal' beta branch automatically; promoting to default is manual and needs producer approval in #release."),
    ("gs.mem_budget_new", "memory", "Texture streaming pool on Series S is now 1.35 GB (down from 1.6 GB) to make room for the new audio banks."),
    ("gs.mem_change", "note", "Series S streaming pool cut to 1.35 GB on 20 Feb: audio banks grew by 220 MB after the VO delivery and Series S was hitting OOM on the harbour level. Expect a bit more texture pop-in; art signed off."),
    ("gs.anticheat", "fact", "project-tidewater protects-with easy-anticheat"),
    ("gs.telemetry", "note", "Gameplay telemetry events go through the studio's event gateway to BigQuery; keep events under 2 KB and never log player names or gamertags."),
    ("gs.save_format", "memory", "Save files are versioned; every version bump needs an upgrader from the previous two versions, no further back."),
    ("gs.netcode_v2", "handoff", "Host alt-tab desync fixed: the host now keeps ticking the simulation at a fixed 30 Hz when unfocused. Boat rollback verified in 4-player sessions. Next: late join."),
    ("gs.inc_day1", "note", "Post-mortem closed beta day 1: the matchmaking service fell over at 9k CCU because the party service opened a new DB connection per request. Pooled connections, added a load test at 20k CCU to the release checklist."),
    ("gs.mm_db", "fact", "svc-matchmaking stores-in dynamodb"),
    ("gs.ratings", "note", "Age ratings: PEGI 16 and ESRB M submitted on 11 March; the gore toggle must default to off in DE builds."),
    ("gs.controls", "memory", "Every action must be rebindable on PC and pad, and hold-to-press actions need a toggle alternative (accessibility requirement from the publisher)."),
    ("gs.engine_new", "fact", "project-tidewater builds-with unreal-5.4"),
    ("gs.engine_change", "note", "Engine upgrade 5.3 to 5.4 landed 4 March after two weeks in a branch. Reason: the 5.4 shader compilation and animation retargeting fixes. Known fallout: two custom Niagara modules had to be rewritten."),
    ("gs.qa_smoke", "note", "QA smoke pass on every nightly: boot, main menu, load each biome, save/load, quit. If smoke fails the build is not pushed to the playtest branch."),
    ("gs.lfs", "memory", "Cinematics masters are stored on the NAS, not Perforce; only the encoded bink files go into the depot."),
    ("gs.crash_tool_new", "fact", "crash-pipeline reports-to backtrace"),
    ("gs.crash_change", "note", "Crash reporting switched from Sentry to Backtrace in March: Backtrace handles console minidumps and symbol upload for PS5/Xbox out of the box; Sentry needed a custom uploader."),
    ("gs.perf_capture", "note", "Perf captures for the harbour level: RenderDoc on PC, Razor on PS5, PIX on Xbox. Store captures under //tidewater/perf with the changelist number in the name."),
    ("gs.late_join", "handoff", "Late join works for co-op up to 4 players; the joiner streams the host's world state in about 6 s. Remaining: quest flags for players joining mid-cutscene."),
    ("gs.achievements", "memory", "Trophy/achievement list is locked once submitted to Sony; renaming one after submission means a resubmission and two weeks."),
    ("gs.hitch_budget", "memory", "Any hitch over 100 ms in a capture is a bug, tagged perf-hitch, triaged weekly by the perf strike team."),
    ("gs.crunch_policy", "note", "No mandatory overtime: optional weekend work must be logged and compensated with time in lieu within the month (studio policy since 2024)."),
    ("gs.cert_ps5", "note", "PS5 TRC failure on activity cards: the game reported an activity as complete before the end cutscene. Moved the activity end call after the cutscene finishes."),
    ("gs.mm_owner", "fact", "svc-matchmaking owned-by team-online"),
    ("gs.voice_chat", "memory", "Voice chat uses the platform party system on consoles and Vivox on PC; cross-play voice goes through Vivox only."),
    ("gs.inc_patch", "note", "Patch 1.0.3 rollback: a data-only patch changed the loot table IDs and old saves lost their inventory references. Rolled back within 3h. New rule: loot table IDs are append-only."),
    ("gs.branching", "note", "Branching: //tidewater/main is the dev line, //tidewater/release-1.x is cut at gold. Fixes land on main first and are copied down, never merged up."),
    ("gs.gold_date_old", "memory", "Gold master date is 29 May."),
    ("gs.gold_date_new", "memory", "Gold master date moved to 19 June after the publisher asked for the extra co-op polish."),
    ("gs.gold_change", "note", "Publisher call on 15 April: gold slips three weeks from 29 May to 19 June; launch date unchanged because the disc manufacturing slot was moved too. Loc freeze moves with it."),
    ("gs.dlss", "memory", "PC upscalers: DLSS, FSR and XeSS are all exposed; the default depends on the detected GPU vendor."),
    ("gs.audio", "fact", "project-tidewater mixes-with wwise"),
    ("gs.asset_naming", "note", "Asset naming: T_ for textures, M_ for materials, MI_ for instances, SM_ for static meshes, SK_ for skeletal. The content validator rejects anything else on submit."),
    ("gs.bug_triage", "note", "Bug triage Tue/Thu 10:00; A-class (crash, progression blocker, cert) must have an owner within 24h."),
    ("gs.server_region", "memory", "Dedicated servers for PvP run in eu-west, us-east and ap-northeast; co-op is peer hosted with relay fallback."),
)

_STUDIO_REPLACED = (
    ("gs.engine", "gs.engine_new"),
    ("gs.mem_budget_old", "gs.mem_budget_new"),
    ("gs.handoff_netcode", "gs.netcode_v2"),
    ("gs.netcode_v2", "gs.late_join"),
    ("gs.crash_tool", "gs.crash_tool_new"),
    ("gs.gold_date_old", "gs.gold_date_new"),
)

_BATCH = (
    ("bk.eod_window", "note", "End-of-day batch window is 22:00 to 05:30; the core ledger is read-only for online channels from 23:15 while interest accrual runs."),
    ("bk.scheduler", "fact", "eod-batch scheduled-by control-m"),
    ("bk.interest", "note", "Interest accrual job ACCR010 computes daily interest on every savings account; it must finish before GL posting (GLP020) starts or GL is off by a day."),
    ("bk.recon", "memory", "Nostro reconciliation matches SWIFT MT950 statements against the ledger; breaks over 10k EUR go to the ops queue before 08:00."),
    ("bk.mainframe", "fact", "core-ledger runs-on zos-2.5"),
    ("bk.cobol", "memory", "ACCR010 and GLP020 are COBOL; the Java wrappers only stage files. Changes to the COBOL need the mainframe CAB on Thursdays."),
    ("bk.abend", "note", "Incident 2026-0117: ACCR010 abended S0C7 at 01:12 on a packed-decimal field. A new product code had a blank rate in the rates table. Restarted from checkpoint after the rate was fixed; GL posting ran 90 min late."),
    ("bk.sepa_cutoff_old", "memory", "SEPA credit transfer files must reach the CSM by 15:30 CET for same-day settlement."),
    ("bk.files", "note", "Inbound payment files land on the MFT server under /in/sepa and /in/bacs; a file arriving after the cut-off is parked in /in/late and picked up the next cycle."),
    ("bk.owner", "fact", "eod-batch owned-by team-core-ops"),
    ("bk.statement_gen", "note", "Customer statements are generated monthly on the first business day, rendered as PDF by the doc composer and pushed to the app archive; paper statements go to the print vendor the same night."),
    ("bk.rerun", "memory", "Never rerun GLP020 without first reversing the previous posting run; a double posting has to be undone by hand by finance."),
    ("bk.aml", "note", "AML transaction screening runs as job AMLS030 after posting; alerts go to the case tool by 06:00. Anything over 50 alerts above baseline pages compliance on-call."),
    ("bk.sepa_cutoff_new", "memory", "SEPA credit transfer files must reach the CSM by 16:00 CET for same-day settlement (the CSM extended the window)."),
    ("bk.sepa_change", "note", "From 2 Feb the CSM accepts same-day SCT files until 16:00 CET instead of 15:30. We moved the outbound SEPA job SEPO040 to 15:40 to include more afternoon payments."),
    ("bk.db2", "fact", "core-ledger stores-in db2-zos"),
    ("bk.checkpoint", "memory", "Long batch jobs checkpoint every 50k records; restart with the RESTART=CHKPT parm, not from the top."),
    ("bk.runbook_old", "handoff", "Migrated the FX revaluation job from the old scheduler to Control-M; dependencies on GLP020 set, but the calendar for bank holidays is not loaded yet."),
    ("bk.holidays", "note", "Bank holiday calendars: TARGET2 days drive the EUR jobs, the UK calendar drives BACS and Faster Payments. Control-M has both as named calendars TGT2 and UKBH."),
    ("bk.runbook_new", "handoff", "FX revaluation on Control-M is complete: TGT2 calendar loaded, ran clean for a full week in parallel with the old scheduler; old job disabled."),
    ("bk.late_batch", "note", "Why the batch overran last Tuesday: the month-end volumes were 2.3x normal and the statement extract ran before accrual instead of after, competing for the same DB2 tablespace. Dependency fixed so they no longer overlap."),
    ("bk.dr", "memory", "DR for the mainframe is a GDPS active/standby pair; the batch can restart on the DR site from the last checkpoint within 2h RTO."),
    ("bk.fps", "note", "Faster Payments are real time and don't wait for EOD; the FPS gateway posts to a suspense account and the batch sweeps suspense to the customer ledger at 23:30."),
    ("bk.mft", "fact", "payment-files transferred-by connect-direct"),
    ("bk.fee_job", "note", "Overdraft fees job FEES050 runs on the 25th; it must skip accounts flagged vulnerable-customer (FCA consumer duty)."),
    ("bk.sanctions_old", "fact", "aml-screening screens-with fircosoft"),
    ("bk.job_naming", "memory", "Job names are 4 letters plus 3 digits: the letters are the area (ACCR accrual, GLP general ledger posting, SEPO SEPA outbound), the digits the order within the area."),
    ("bk.sanctions_new", "fact", "aml-screening screens-with napier"),
    ("bk.sanctions_change", "note", "Sanctions screening engine replaced FircoSoft with Napier in March: lower false-positive rate on transliterated names and the Firco licence renewal was due. Tuning thresholds carried over, compliance signed off the parallel run."),
    ("bk.month_end", "note", "Month-end close: accruals, FX revaluation, then GL close at 06:00 on the 1st; finance cannot start reporting until GLC060 completes."),
    ("bk.inc_dup_post", "note", "Incident 2026-0302: 1,840 card transactions posted twice. Operator restarted CARD070 from the top instead of from checkpoint after a tape mount timeout. Reversal run the same morning; operator runbook now has the restart parm in bold."),
    ("bk.sla_gl_old", "memory", "GL must be posted by 05:00 for the treasury desk."),
    ("bk.sla_gl_new", "memory", "GL posting deadline is 04:30 since treasury moved their liquidity report earlier."),
    ("bk.sla_gl_change", "note", "GL posting deadline moved from 05:00 to 04:30 on 1 March at treasury's request (their intraday liquidity report now runs at 05:00). To fit, AMLS030 now runs in parallel with GLP020 instead of after it."),
    ("bk.control_m_owner", "fact", "control-m owned-by team-scheduling"),
    ("bk.cutoff_alerts", "memory", "If an inbound BACS file hasn't arrived by 21:30, the MFT monitor opens a P2 with the payments team; don't wait for the batch to fail."),
    ("bk.iso20022", "note", "ISO 20022 migration: CHAPS moved to MX messages (pacs.008) in June; the batch still stores MT fields internally and maps at the edge. Truncated remittance info is the usual break."),
    ("bk.sox", "memory", "Production job changes need a ticket with a tester different from the developer (SOX segregation of duties); emergency changes get a retrospective review within 2 business days."),
    ("bk.tape", "note", "Tape backups of the ledger go offsite on Wednesdays; restore test is quarterly, the last one took 5h for the full ledger."),
    ("bk.fx_rates", "note", "FX rates for revaluation are the 16:00 London fix from the market data service; if the fix is missing the job uses the previous day and raises a warning."),
    ("bk.recon_owner", "fact", "nostro-recon owned-by team-treasury-ops"),
    ("bk.dormant", "memory", "Accounts with no customer-initiated activity for 15 years go to the dormant assets scheme; the flagging job runs quarterly."),
    ("bk.cpu_cap", "note", "MSU capping: the batch LPAR is soft-capped during the day; the cap lifts at 22:00 for EOD. A job started before 22:00 crawls."),
    ("bk.inc_sepa_reject", "note", "Incident 2026-0409: the CSM rejected the whole afternoon SCT file because one creditor IBAN had a trailing space. Validation now trims and checks IBANs at capture; the file was resent at 15:52 and made the window."),
)

_BATCH_REPLACED = (
    ("bk.sepa_cutoff_old", "bk.sepa_cutoff_new"),
    ("bk.runbook_old", "bk.runbook_new"),
    ("bk.sanctions_old", "bk.sanctions_new"),
    ("bk.sla_gl_old", "bk.sla_gl_new"),
)

_LAB = (
    ("lb.sequencer", "note", "NovaSeq X runs drop BCLs on the instrument share; the watcher starts bcl-convert when CopyComplete.txt appears, not before."),
    ("lb.workflow", "fact", "variant-pipeline orchestrated-by nextflow"),
    ("lb.ref_genome_old", "fact", "variant-pipeline aligns-to grch37"),
    ("lb.cluster", "memory", "The HPC cluster is SLURM; pipeline jobs go to the 'genomics' partition, max 48h walltime, 512 GB nodes only on 'bigmem'."),
    ("lb.storage", "note", "Raw FASTQs are kept 30 days on scratch, then moved to the tape archive; CRAMs and VCFs stay on the project filesystem for 5 years per the grant conditions."),
    ("lb.qc", "memory", "Sample QC gate: at least 30x mean coverage and under 3% contamination (VerifyBamID FREEMIX); failing samples are flagged, not dropped."),
    ("lb.lims", "fact", "sample-tracking stored-in labware-lims"),
    ("lb.consent", "note", "Consent withdrawals: the sample is removed from all future joint-calling and the raw data deleted within 30 days; already published aggregate results stay."),
    ("lb.gpu_old", "memory", "GPU alignment with Parabricks runs on the 4 A100 nodes; fall back to bwa-mem2 on CPU when the queue is longer than 6h."),
    ("lb.inc_sample_swap", "note", "Sample swap found in batch B-0219: two tubes were swapped at plating. Caught because genotype concordance with the SNP array was 0.52 for both. Re-labelled in the LIMS, downstream VCFs regenerated."),
    ("lb.ref_genome_new", "fact", "variant-pipeline aligns-to grch38"),
    ("lb.ref_change", "note", "Pipeline switched reference from GRCh37 to GRCh38 (with alt-aware alignment) on 26 Jan, for every new batch. Older batches are lifted over only on request. Reason: the collaborators' panels and gnomAD v4 are GRCh38 only."),
    ("lb.joint_calling", "note", "Joint calling with GLnexus runs monthly over all samples that passed QC; it takes about 3 days on bigmem and blocks other bigmem jobs, so announce it in #hpc."),
    ("lb.pipeline_owner", "fact", "variant-pipeline owned-by team-bioinformatics-core"),
    ("lb.nf_tower", "memory", "Pipeline runs are launched from Seqera Platform (Tower) so every run has a trace and the exact params; no ad-hoc runs from laptops."),
    ("lb.handoff_sv", "handoff", "Structural variant calling added with Manta and merged with the SNV VCF; tested on the GIAB HG002 truth set, recall 0.81. Not yet in the default profile."),
    ("lb.inc_scratch_full", "note", "Runs failed overnight with 'No space left on device': scratch hit 100% because the 30-day cleanup cron was disabled during the storage migration and nobody re-enabled it. Re-enabled and added a 85% alert."),
    ("lb.containers", "memory", "Every pipeline step runs in a pinned Singularity image pulled from the lab's registry; tags are immutable, bump the version to change a tool."),
    ("lb.gpu_new", "memory", "Parabricks now runs on the 8 H100 nodes (the A100s went to the imaging group); CPU fallback threshold is still a 6h queue."),
    ("lb.data_sharing", "note", "Data sharing with the consortium goes through the EGA; submissions need the data access committee's approval ID on the manifest."),
    ("lb.phi", "memory", "Participant names and dates of birth never leave the LIMS; the pipeline only ever sees the pseudonymised sample ID."),
    ("lb.lag", "note", "Why turnaround slipped to 9 days in February: the demultiplexing step sat in the SLURM queue behind the joint-calling job for 3 days. Demux now has a reserved node."),
    ("lb.sv_default", "handoff", "SV calling is in the default profile from pipeline v3.2; recall on HG002 up to 0.86 after adding the Delly merge. Docs updated in the pipeline README."),
    ("lb.versioning", "memory", "Pipeline releases are semver; a change to any output column is a major version and needs a note to all downstream users."),
    ("lb.annotation", "fact", "variant-pipeline annotates-with vep-110"),
    ("lb.turnaround", "memory", "Turnaround target for clinical research samples is 14 days from receipt to VCF."),
    ("lb.rna", "note", "RNA-seq samples use the nf-core/rnaseq pipeline with STAR and Salmon; counts are delivered as a matrix per batch with the MultiQC report."),
    ("lb.tape_restore", "note", "Restoring FASTQs from tape takes 2-5 days depending on the library queue; ask before re-running anything older than 30 days."),
    ("lb.annotation_new", "fact", "variant-pipeline annotates-with vep-112"),
    ("lb.annotation_change", "note", "VEP bumped from 110 to 112 on 10 March to get the updated ClinVar and MANE transcripts; the consequence column changed for about 0.3% of variants, flagged in the release notes."),
    ("lb.cost", "memory", "Compute is charged back per core-hour to the grant; joint calling costs roughly 4k GBP each time."),
    ("lb.inc_nf_resume", "note", "Nextflow -resume stopped working for the big batch: the work dir was on scratch and the cleanup cron removed the cache. Work dirs for runs over 200 samples now go to the project filesystem."),
    ("lb.qc_new", "memory", "Sample QC gate raised: at least 35x mean coverage and under 2% contamination (FREEMIX), for the new clinical-grade protocol; failing samples are still flagged, not dropped."),
    ("lb.qc_change", "note", "QC thresholds tightened on 1 April (30x to 35x coverage, 3% to 2% contamination) when the study moved to the clinical-grade protocol; about 4% more samples get flagged for top-up sequencing."),
    ("lb.freezer", "note", "The -80 freezer alarms go to the facilities pager, not ours; the LIMS only records box positions."),
    ("lb.ontology", "memory", "Phenotypes are coded in HPO terms; free text from clinicians is mapped by the curation team, never by the pipeline."),
    ("lb.sra", "note", "Public reads are pulled with prefetch plus fasterq-dump into scratch; respect the NCBI rate limit, max 3 concurrent downloads."),
    ("lb.review", "memory", "Every pipeline change needs a PR review from someone in the core team and a green run on the GIAB test batch before merge."),
    ("lb.lims_owner", "fact", "labware-lims owned-by team-lab-informatics"),
    ("lb.handover_hpc", "note", "HPC maintenance is the second Tuesday each month, 08:00-12:00; the scheduler drains from 20:00 the night before so long jobs won't start."),
    ("lb.inc_vcf_truncated", "note", "A delivered VCF was truncated at chromosome 12: the copy to the delivery bucket ran while the bgzip was still writing. Delivery now checks the tabix index and the md5 before sending."),
    ("lb.workflow_old_note", "note", "The old Snakemake pipeline is kept only to reproduce results published before 2025; do not use it for new batches."),
)

_LAB_REPLACED = (
    ("lb.ref_genome_old", "lb.ref_genome_new"),
    ("lb.gpu_old", "lb.gpu_new"),
    ("lb.handoff_sv", "lb.sv_default"),
    ("lb.annotation", "lb.annotation_new"),
    ("lb.qc", "lb.qc_new"),
)

_UTILITY = (
    ("ut.scada", "fact", "water-scada runs-on geo-scada"),
    ("ut.telemetry", "note", "Outstations report over the private LTE network every 15 min, or immediately on alarm; a pumping station silent for 45 min raises a comms-fail alarm."),
    ("ut.reservoir", "memory", "Service reservoir levels must stay above 40% overnight; below 30% the control room starts the standby pumps manually."),
    ("ut.chlorine", "note", "Free chlorine at the works outlet is dosed to 0.5 mg/l; below 0.2 mg/l anywhere in the network is a reportable event to the DWI within 24h."),
    ("ut.historian", "fact", "water-scada archives-to osisoft-pi"),
    ("ut.billing_reads", "memory", "Customer meters are read quarterly by walk-by; smart meters send daily reads to the MDM and billing takes the last read of the month."),
    ("ut.leak", "note", "Leakage: night flow analysis between 02:00 and 04:00 per district metered area (DMA); a DMA whose minimum night flow rises 20% week on week goes on the leak detection crew's list."),
    ("ut.scada_owner", "fact", "water-scada owned-by team-ot-control"),
    ("ut.burst_inc", "note", "Burst main on Ferry Road (trunk main TM-14), 6 Feb: pressure drop alarm at 03:40 was acknowledged but not escalated because the alarm text said 'low pressure' like the nuisance alarms. Three streets lost supply for 7h. Alarm now 'TRUNK MAIN PRESSURE LOSS', priority 1."),
    ("ut.ot_network", "memory", "The OT network is segregated from corporate IT; remote access only through the jump host with MFA, sessions recorded. No vendor connects directly."),
    ("ut.pump_schedule_old", "note", "Pumps at Hillside booster run on a fixed schedule: 23:00-06:00 off-peak tariff only."),
    ("ut.gis", "fact", "asset-register mapped-in esri-arcgis"),
    ("ut.work_orders", "note", "Work orders for field crews come from the asset system into the mobile app; a job without a GIS asset ID is rejected at dispatch."),
    ("ut.pump_schedule_new", "note", "Hillside booster pumps are now optimised by the pump scheduler against tariff and reservoir level, not a fixed 23:00-06:00 window; the fixed window stays as the fallback if the optimiser is down."),
    ("ut.pump_change", "note", "Pump optimiser went live at Hillside on 23 Feb after a 4-week trial: energy cost down 11%, reservoir never went below 45%. Other boosters follow in Q2."),
    ("ut.boil_notice", "memory", "A boil water notice is decided by the water quality manager with the health authority; engineering never issues one on its own."),
    ("ut.flow_meters", "note", "DMA inlet flow meters are electromagnetic; a meter stuck at exactly zero flow for 2h is treated as failed, not as no demand."),
    ("ut.smart_meter_old", "fact", "meter-data collected-by sensus"),
    ("ut.outage_comms", "memory", "Planned interruptions need 48h written notice to affected customers; priority services register customers get a phone call too."),
    ("ut.handoff_alarm", "handoff", "Alarm rationalisation phase 1 done: 1,120 alarms reviewed, 310 demoted to events, 45 merged. Phase 2 (pumping stations) not started; list in ALM-review.xlsx."),
    ("ut.inc_scada_slow", "note", "The control room HMI froze for 20 s at a time on Monday morning: the historian backfill after the weekend outstation outage flooded the SCADA server's IO. Backfill is now rate limited to 500 points/s."),
    ("ut.smart_meter_new", "fact", "meter-data collected-by itron"),
    ("ut.smart_meter_change", "note", "Smart meter head-end migrated from Sensus to Itron in March because the new AMI contract covers the whole region; 38k meters re-registered, daily read completeness back to 98.6% after two weeks."),
    ("ut.drought", "memory", "Drought plan trigger 1 is reservoir group storage below the drought curve for 2 weeks; it starts the publicity campaign, not restrictions."),
    ("ut.sampling", "note", "Regulatory sampling: the LIMS generates the random tap sample schedule each January; samplers get it in the field app, and missing a sample needs a documented reason."),
    ("ut.telemetry_radio", "memory", "Older outstations still use licensed UHF radio; they poll every 30 min and cannot report alarms immediately."),
    ("ut.asset_owner", "fact", "asset-register owned-by team-asset-info"),
    ("ut.handoff_alarm2", "handoff", "Alarm rationalisation phase 2 (pumping stations) done: 420 more alarms demoted or merged, priorities documented in the alarm philosophy doc v3. Operators report about 40% fewer alarms per shift."),
    ("ut.inc_dosing", "note", "Dosing incident at Millbrook works: the chlorine analyser drifted low for 3 days, so the loop overdosed to 1.1 mg/l. No customer complaint, reported to DWI. Analyser now cross-checked against a grab sample daily."),
    ("ut.patching", "memory", "OT servers are patched quarterly in a planned window with the control room's agreement; emergency patches only for actively exploited CVEs."),
    ("ut.pressure", "note", "Pressure management: PRVs in the hilly DMAs drop to 25 m head at night to cut leakage; minimum service pressure is 10 m at the property boundary."),
    ("ut.customer_contact", "note", "Discoloured water calls spike after fire hydrant use; the contact centre script asks about nearby firefighting before raising a quality job."),
    ("ut.weather", "fact", "demand-forecast fed-by met-office"),
    ("ut.forecast", "memory", "Demand forecast for the next day is built at 16:00 from weather and same-day-last-week; the pump optimiser plans against it."),
    ("ut.cyber_drill", "note", "Cyber drill in April: simulated ransomware on the corporate side; the OT side kept running in island mode for 6 hours with manual reservoir control. Gap found: the jump host's backups were on the corporate NAS."),
    ("ut.reservoir_new", "memory", "Service reservoir overnight minimum raised to 50% (was 40%) after the drought review; below 35% the control room starts standby pumps."),
    ("ut.valve_ops", "memory", "Valve operations on trunk mains need a second person and a written plan; closing a 600 mm valve too fast causes a surge."),
    ("ut.lead_pipes", "note", "Lead communication pipes: phosphate is dosed at all works serving pre-1970 areas; removal programme prioritises schools and nurseries."),
)

_UTILITY_REPLACED = (
    ("ut.pump_schedule_old", "ut.pump_schedule_new"),
    ("ut.smart_meter_old", "ut.smart_meter_new"),
    ("ut.handoff_alarm", "ut.handoff_alarm2"),
    ("ut.reservoir", "ut.reservoir_new"),
)

_WAREHOUSE = (
    ("wh.wms", "fact", "fc-north managed-by manhattan-wms"),
    ("wh.wave", "note", "Wave planning releases picks every 20 min from 06:00; the last wave for next-day carrier collection is released at 17:40."),
    ("wh.slotting", "memory", "Fast movers (A-class SKUs) are slotted in the golden zone, waist height in aisles 1-8, re-slotted every Sunday night from the last 4 weeks of velocity."),
    ("wh.conveyor", "note", "Conveyor sorter SRT-2 jams when polybags over 2 kg go down the tilt-tray; anything heavier is diverted to lane 14 for manual sort."),
    ("wh.carriers", "fact", "fc-north ships-with dpd"),
    ("wh.cycle_count", "memory", "Cycle counts run daily on 2% of locations; a variance over 5 units or 200 GBP triggers a recount by a different counter."),
    ("wh.scanner", "note", "RF scanners are Honeywell CK65s; the pick app times out after 90 s idle and the picker has to rescan the tote."),
    ("wh.returns", "note", "Returns are graded A (resell), B (refurb) or C (liquidate) at the returns bench; grade A goes back to pickable stock within 48h."),
    ("wh.peak", "memory", "Peak (Black Friday to Christmas) doubles the headcount to about 600 per shift; temps get a 2h induction and pick only single-item orders the first week."),
    ("wh.inc_short_picks", "note", "INC-W-118: 400 orders shipped short on Tuesday. The replenishment job did not run for zone C because the task queue was paused for a stock take and never resumed. Pause now expires after 4h."),
    ("wh.autostore_old", "memory", "AutoStore grid has 38 robots and 9 ports; port utilisation above 85% means pick rates drop."),
    ("wh.label", "note", "Shipping labels print at the pack station from the carrier API; if the API is down the station falls back to the pre-printed consignment ranges, logged for manual upload."),
    ("wh.wms_owner", "fact", "manhattan-wms owned-by team-fulfilment-systems"),
    ("wh.pick_rate", "memory", "Target pick rate is 120 units/hour for manual pick and 450 units/hour per AutoStore port."),
    ("wh.handoff_replen", "handoff", "Replenishment rules moved to min/max per location with a demand-based top-up for A-class; the job runs every 30 min. Zone C still on the old rules."),
    ("wh.cold_chain", "note", "Chilled SKUs (2-8 C) live in the cold room, picked last in the wave and packed with gel packs; max 45 min from pick to trailer."),
    ("wh.autostore_new", "memory", "AutoStore grid expanded to 52 robots and 12 ports in March; port utilisation above 85% still means pick rates drop."),
    ("wh.autostore_change", "note", "AutoStore expansion finished 14 March: 14 robots and 3 ports added over two night shifts, grid ran at 60% throughput during the commissioning weekend. Done ahead of the spring sale volumes."),
    ("wh.carriers_new", "fact", "fc-north ships-with evri"),
    ("wh.carriers_change", "note", "Standard parcels moved from DPD to Evri on 2 March (new contract, about 18% cheaper per parcel); DPD stays for next-day and over-15 kg. Collection is now 18:30, 30 min later."),
    ("wh.inc_sorter", "note", "Sorter down 2h on Friday: the PLC of SRT-2 lost its program after a power dip because the backup battery was flat. Replaced, added battery checks to the monthly PM list."),
    ("wh.replen_done", "handoff", "Zone C moved to the new min/max replenishment too; all zones on the 30-min job. Old replenishment tables dropped."),
    ("wh.dock", "note", "Inbound dock appointments are booked by suppliers in the dock scheduler; a truck more than 2h late loses its slot and waits for the next free door."),
    ("wh.asn", "memory", "Suppliers must send an ASN before the truck arrives; receipts without an ASN go to the problem cage and take about 3x longer."),
    ("wh.robots_owner", "fact", "autostore-grid owned-by team-automation"),
    ("wh.ship_sla_old", "memory", "Orders placed before 20:00 ship the same night."),
    ("wh.ship_sla_new", "memory", "Orders placed before 22:00 ship the same night since the late trunk was added."),
    ("wh.ship_sla_change", "note", "Same-night cutoff moved from 20:00 to 22:00 on 6 April when the carrier added a 23:30 trunk from the hub; the last wave now releases at 22:10."),
    ("wh.packaging", "note", "Box sizing: the cartonisation engine picks from 7 box sizes; void fill over 40% is logged so we can review the box set each quarter."),
    ("wh.hazmat", "memory", "Lithium batteries ship ground only and the packer must apply the UN3481 label; the WMS blocks air services for those SKUs."),
    ("wh.inc_oversell", "note", "Why the website sold stock we didn't have on Sunday: the inventory sync to the storefront failed after the WMS certificate renewal, so available-to-promise stayed frozen at Saturday's numbers for 14 hours. Sync now alerts after 30 min without a successful push."),
    ("wh.lpn", "memory", "Every pallet gets an LPN at receiving; LPNs are never reused even after the pallet is broken down."),
    ("wh.wms_upgrade", "note", "WMS upgrade to the 2025 release is planned for the quiet week after Easter; full dress rehearsal on the UAT copy with the last peak day's order file."),
    ("wh.safety", "note", "Pedestrian and forklift routes are separated by barriers; any near miss is logged in the safety app the same shift."),
    ("wh.kpi", "memory", "Dock-to-stock target is 24h for pallets and 48h for mixed cartons."),
    ("wh.label_printer", "fact", "pack-stations print-with zebra-zt411"),
)

_WAREHOUSE_REPLACED = (
    ("wh.autostore_old", "wh.autostore_new"),
    ("wh.carriers", "wh.carriers_new"),
    ("wh.handoff_replen", "wh.replen_done"),
    ("wh.ship_sla_old", "wh.ship_sla_new"),
)

_RAN = (
    ("rn.oss", "fact", "ran-oss managed-by ericsson-enm"),
    ("rn.kpi", "note", "Cell availability KPI excludes planned outages booked in the change calendar; an unplanned site down more than 15 min counts against the region."),
    ("rn.sites", "memory", "Site IDs are region letter plus 4 digits (N0412, S1180); the sector is a suffix A/B/C, so N0412B is the second sector."),
    ("rn.alarm_flood", "note", "Alarm flood on Tuesday 03:00: 2,400 'link down' alarms from the southern microwave ring after one hub router reloaded. Correlation rule added so child sites under a down hub are suppressed."),
    ("rn.noc_tool", "fact", "noc-alarms correlated-by netcool"),
    ("rn.parameters", "memory", "Parameter changes on more than 50 cells at once need a CAB ticket and must be pushed between 00:00 and 05:00."),
    ("rn.handoff_5g", "handoff", "5G SA trial cluster in the city centre: 12 gNBs on n78 integrated with the standalone core; VoNR not enabled yet, data only."),
    ("rn.drive_test", "note", "Drive test after the N0412 swap: RSRP median -92 dBm, handovers to the neighbour cells clean, one missing neighbour relation added to N0415C."),
    ("rn.son", "memory", "SON ANR adds neighbour relations automatically but never deletes them; stale relations are cleaned up quarterly by script."),
    ("rn.power_saving_old", "note", "Capacity layer cells (L2600) are switched off 01:00-05:00 on weekdays for energy saving."),
    ("rn.inc_dropped_calls", "note", "Dropped calls spike in the east region on Friday evening: a parameter push set the handover margin to 0 dB on 180 cells instead of 3 dB (unit mismatch in the script, tenths of dB). Rolled back at 21:40; script now validates ranges."),
    ("rn.oss_owner", "fact", "ran-oss owned-by team-radio-engineering"),
    ("rn.backhaul", "memory", "Most rural sites are on microwave backhaul with a single path; a hub failure takes out everything downstream, so they alarm as a group."),
    ("rn.power_saving_new", "note", "Capacity layer cells (L2600 and now N78) switch off 00:30-05:30 every night, weekends included, driven by the traffic prediction instead of a fixed weekday schedule."),
    ("rn.power_change", "note", "Energy saving widened on 16 Feb: N78 added, window 00:30-05:30 including weekends, traffic-prediction driven. Saves about 9% of RAN energy; no KPI drop seen in the two-week trial cluster."),
    ("rn.handoff_5g_v2", "handoff", "VoNR enabled on the 5G SA trial cluster after the core patch; call setup time about 1.2 s, fallback to VoLTE verified. Next: extend the cluster to the stadium sites."),
    ("rn.spectrum", "memory", "Licence conditions: n78 power limits near the airport exclusion zone; the planning tool enforces a max EIRP per sector there."),
    ("rn.core_vendor_old", "fact", "packet-core supplied-by nokia"),
    ("rn.event", "note", "Stadium events: temporary capacity with a cell on wheels (COW) on the north car park; book the microwave link two weeks ahead."),
    ("rn.trouble_tickets", "memory", "Field ticket priorities: P1 is a site down with no coverage overlap, P2 a site down with overlap or a degraded hub, P3 everything else."),
    ("rn.inc_core", "note", "Why data sessions failed nationwide for 25 min on 3 March: a certificate on the packet core's diameter interface expired and the PCRF rejected policy requests. Certificates on core interfaces are now in the expiry tracker."),
    ("rn.core_vendor_new", "fact", "packet-core supplied-by ericsson"),
    ("rn.core_change", "note", "Packet core moved from Nokia to Ericsson in the March swap (dual vendor ended); the last Nokia PGW was decommissioned on 28 March after traffic drained."),
    ("rn.pm_counters", "note", "PM counters are collected every 15 min from ENM into the performance database; a ROP missing for more than 3 periods raises a data-gap ticket."),
    ("rn.pm_db", "fact", "pm-counters stored-in clickhouse"),
    ("rn.interference", "memory", "External interference on band 20 near the coast is usually old TV amplifiers; the regulator's field team locates them, we only report."),
    ("rn.upgrade", "note", "Software upgrade of the baseband fleet is done region by region, 200 sites a night; rollback if the cell availability in the region drops more than 0.5% next morning."),
    ("rn.handoff_5g_v3", "handoff", "5G SA extended to the 6 stadium sites; event mode profile ready. Open: uplink interference from the COW on match days."),
    ("rn.battery", "memory", "Site batteries are sized for 4h; grid outages longer than that need a generator dispatched before the 3h mark."),
    ("rn.noc_tool_new", "fact", "noc-alarms correlated-by servicenow-aiops"),
    ("rn.noc_change", "note", "NOC alarm correlation moved off Netcool to ServiceNow AIOps on 30 March: Netcool support ends this year and AIOps groups alarms by topology. The microwave hub suppression rule was rebuilt there."),
    ("rn.oncall", "fact", "noc-oncall paged-via xmatters"),
    ("rn.tilt", "memory", "Remote electrical tilt changes are logged with the reason; a tilt change over 4 degrees needs a drive test within a week."),
)

_RAN_REPLACED = (
    ("rn.power_saving_old", "rn.power_saving_new"),
    ("rn.handoff_5g", "rn.handoff_5g_v2"),
    ("rn.handoff_5g_v2", "rn.handoff_5g_v3"),
    ("rn.core_vendor_old", "rn.core_vendor_new"),
    ("rn.noc_tool", "rn.noc_tool_new"),
)

# Fleet-wide rows (project ''): memories and facts only.
_FLEETWIDE = (
    ("fw.change_freeze", "memory", "Company-wide change freeze for the financial year end: no production changes from 28 March to 2 April except P1 fixes."),
    ("fw.sso", "fact", "corp-sso provided-by okta"),
    ("fw.pager_policy", "memory", "On-call: acknowledge a page within 15 min, escalate to the secondary after 30; every P1 gets a post-incident review within 5 working days."),
    ("fw.secrets", "fact", "corp-secrets stored-in hashicorp-vault"),
    ("fw.logging", "fact", "corp-logs shipped-to splunk"),
    ("fw.cert_expiry", "memory", "All TLS certificates must be in the expiry tracker; it warns the owning team at 30, 14 and 3 days."),
    ("fw.backup_policy", "memory", "Backups: production databases keep 35 days of point-in-time recovery and a monthly copy for a year; restores are tested quarterly."),
    ("fw.incident_sev", "memory", "Severity scale: SEV1 customer-facing outage or safety risk, SEV2 degraded service, SEV3 internal only. SEV1 opens a bridge immediately."),
    ("fw.ci", "fact", "corp-ci built-by jenkins"),
    ("fw.mfa", "memory", "MFA is mandatory for every remote login; hardware keys for admins of production systems."),
    ("fw.dst_policy", "memory", "Store timestamps in UTC with the offset; only convert to local time at the edge, for people."),
    ("fw.sso_new", "fact", "corp-sso provided-by entra-id"),
    ("fw.vuln", "memory", "Critical CVEs on internet-facing systems are patched within 7 days, internal within 30; exceptions go to the security board."),
    ("fw.ci_new", "fact", "corp-ci built-by github-actions"),
    ("fw.pager_tool", "fact", "corp-paging routed-by pagerduty"),
    ("fw.data_retention", "memory", "Personal data is kept only as long as its retention schedule says; logs with personal data are kept 90 days at most."),
    ("fw.access_review", "memory", "Access to production is reviewed every quarter by the system owner; unused access older than 90 days is revoked."),
    ("fw.logging_new", "fact", "corp-logs shipped-to elastic"),
    ("fw.backup_policy_new", "memory", "Backups: production databases keep 35 days of point-in-time recovery, a monthly copy for 7 years for the regulated systems (was one year), and restores are tested quarterly."),
    ("fw.cloud", "fact", "corp-cloud hosted-on aws"),
    ("fw.postmortem", "memory", "Post-incident reviews are blameless; the write-up lists the timeline, the contributing factors and owned actions with dates."),
    ("fw.ntp", "memory", "Every server syncs time from the internal NTP pool; clock skew over 500 ms raises a ticket."),
    ("fw.on_call_pay", "memory", "On-call allowance is paid per week on rota, plus time off in lieu for any call-out over 2 hours at night."),
)

_FLEETWIDE_REPLACED = (
    ("fw.sso", "fw.sso_new"),
    ("fw.ci", "fw.ci_new"),
    ("fw.logging", "fw.logging_new"),
    ("fw.backup_policy", "fw.backup_policy_new"),
)

# Later rows of each project (the second half of the 90 days).
_STUDIO += (
    ("gs.patch_cadence_old", "note", "Live patches ship every second Tuesday; hotfixes any day with producer sign-off."),
    ("gs.photo_mode", "memory", "Photo mode hides the HUD and pauses the simulation but not audio; the camera is clamped to 8 m from the player."),
    ("gs.inc_servers", "note", "Launch weekend: PvP queues stalled for 35 min on Saturday because the fleet autoscaler's max was still set to the beta value of 200 servers. Raised to 1,500, and the max is now part of the launch checklist."),
    ("gs.patch_cadence_new", "note", "Live patches now ship every Wednesday (weekly) after launch, platform cert permitting; hotfixes still any day with producer sign-off."),
    ("gs.patch_change", "note", "Patch cadence moved from fortnightly Tuesdays to weekly Wednesdays after launch: Sony and Microsoft cert turnaround is faster midweek and community feedback wanted quicker fixes."),
    ("gs.dedicated", "fact", "pvp-servers hosted-on gamelift"),
    ("gs.economy", "memory", "Premium currency prices are set per region by the publisher; the game never shows a conversion to real money."),
    ("gs.bug_db", "fact", "project-tidewater tracks-in jira"),
    ("gs.cinematics", "note", "Cinematics are locked to 30 fps on every platform; the engine switches to the cinematic frame pacing profile at cutscene start."),
    ("gs.accessibility", "note", "Accessibility pass: subtitles default on with speaker names, colour-blind filters for the three common types, and aim assist strength sliders per input device."),
    ("gs.shader_hitch_pc", "note", "PC DX12 shader stutter fixed by precompiling PSOs at first launch with a progress screen (about 3 min on a 6-core CPU); players can skip it."),
    ("gs.inc_cert_rejection", "note", "Xbox cert resubmission failed on the quick resume case: network session not restored after resume. Session reconnect on resume added; resubmitted 2 days later and passed."),
    ("gs.team_owner", "fact", "crash-pipeline owned-by team-engine-tools"),
    ("gs.live_ops", "memory", "Live events are data-driven through the content service; no client patch needed unless new assets are involved."),
)
_STUDIO_REPLACED += (
    ("gs.patch_cadence_old", "gs.patch_cadence_new"),
    ("gs.crash_owner", "gs.team_owner"),
)

_BATCH += (
    ("bk.reports_old", "note", "Regulatory returns (COREP/FINREP) are built from the GL close by the reporting team's SAS jobs on day 3."),
    ("bk.capacity", "memory", "DB2 batch tablespaces are reorganised on Sundays; never schedule month-end on a reorg Sunday."),
    ("bk.mq", "fact", "fps-gateway queues-via ibm-mq"),
    ("bk.reports_new", "note", "Regulatory returns (COREP/FINREP) now come from the new reporting platform on day 2, fed by the GL close extract; the SAS jobs are kept read-only for audit until year end."),
    ("bk.card_settlement", "note", "Card scheme settlement files (Visa Base II, Mastercard IPM) arrive at 04:00 and 05:15; CARD070 posts them and the interchange goes to the fee ledger."),
    ("bk.inc_mq", "note", "Faster Payments inbound stalled 18 min at 12:05: the MQ channel to the gateway went into retry after a network blip and the channel retry interval was 10 min. Shortened to 30 s and alerting on channel state."),
    ("bk.zos_new", "fact", "core-ledger runs-on zos-3.1"),
    ("bk.zos_change", "note", "z/OS upgraded from 2.5 to 3.1 on the batch LPAR on the Easter weekend; 2.5 support ends in September. Batch elapsed time unchanged; two REXX utilities needed a fix."),
    ("bk.ops_handoff", "handoff", "Night operator handover: ACCR010 fine, GLP020 finished 04:12, AMLS030 had 12 alerts over baseline (payroll day), CARD070 waiting for the IPM file which is 20 min late."),
    ("bk.ops_handoff2", "handoff", "Night operator handover (next night): IPM file from last night arrived 05:41, CARD070 posted by 06:05, no breaks in nostro recon. GL close prep for month-end starts tomorrow."),
    ("bk.stand_in", "memory", "If the core ledger is down during the day the card authorisation system runs in stand-in mode with the overnight balance file; stand-in limits are 250 GBP per card per day."),
    ("bk.sla_dashboard", "note", "The batch SLA dashboard shows each critical path job against its latest allowed end time; amber at 80% of the slack used, red when it breaches."),
    ("bk.archive", "memory", "Transaction history older than 7 years is archived off DB2 to the compliance vault; queries on it take a day."),
    ("bk.vendor", "fact", "statement-composer supplied-by opentext"),
    ("bk.inc_statement", "note", "Statements for 6,000 business customers showed the wrong closing balance: the statement extract ran before the last FX revaluation entries. Extract now depends on FXR070, and the PDFs were regenerated before release."),
    ("bk.pen_test", "memory", "The MFT server is pen-tested yearly; Connect:Direct nodes only accept known partner certificates."),
)
_BATCH_REPLACED += (
    ("bk.reports_old", "bk.reports_new"),
    ("bk.mainframe", "bk.zos_new"),
    ("bk.ops_handoff", "bk.ops_handoff2"),
)

_LAB += (
    ("lb.methylation", "note", "Methylation arrays (EPIC v2) are processed with minfi; the IDATs come from the core facility's share, not the sequencer share."),
    ("lb.slurm_fairshare", "memory", "SLURM fairshare is per grant account; a group that burned its share waits behind everyone, so plan joint calling early in the month."),
    ("lb.inc_wrong_ref", "note", "Three batches in late January were aligned to GRCh37 after the switch because an old params file was copied into the Tower launch. Launch configs now pin the reference by checksum; batches re-run."),
    ("lb.long_reads", "note", "ONT long-read runs are basecalled with dorado on the GPU nodes in sup mode; pod5 files are deleted once the BAM passes QC."),
    ("lb.delivery", "fact", "results-delivery uploads-to s3-eu-west-2"),
    ("lb.tower_owner", "fact", "seqera-platform owned-by team-research-computing"),
    ("lb.budget_alert", "memory", "Cloud burst jobs have a monthly budget alert at 80%; above 100% the launch template refuses new runs."),
    ("lb.cram", "memory", "CRAMs are written against the exact reference FASTA with its md5; a CRAM without the matching reference is unreadable, so the reference is archived with the data."),
    ("lb.lims_api", "note", "The LIMS API returns samples in pages of 100 and rate limits at 5 req/s; the pipeline's sample sheet builder caches the results for an hour."),
    ("lb.nextflow_version_old", "memory", "Pipeline pinned to Nextflow 23.10."),
    ("lb.nextflow_version_new", "memory", "Pipeline pinned to Nextflow 24.04 (DSL2 strict syntax) since v3.3; 23.10 no longer starts it."),
    ("lb.imaging", "note", "The imaging group's microscopy pipeline shares the H100 nodes from April; book GPU time in the calendar, first come first served otherwise."),
    ("lb.inc_tape", "note", "Tape restore for an audit took 11 days instead of 5: the tape library was down for a robot arm repair and the queue wasn't visible to us. Archive team now posts outages in #hpc."),
    ("lb.handoff_ont", "handoff", "ONT basecalling moved to dorado 0.7 with the new sup model; accuracy on the control sample up from Q20 to Q23. Not yet rolled into the methylation calls."),
    ("lb.sample_naming", "memory", "Sample IDs are study prefix, plate and well (GEN-P017-A03); anything else in the sample sheet fails validation."),
    ("lb.workflow_change_note", "note", "Nextflow moved from 23.10 to 24.04 in pipeline v3.3 (5 March): strict DSL2 syntax and the new plugin registry. Old launch templates must be updated or Tower refuses them."),
)
_LAB_REPLACED += (
    ("lb.nextflow_version_old", "lb.nextflow_version_new"),
)

_UTILITY += (
    ("ut.smart_meter_alarms", "note", "Smart meters raise a continuous-flow flag after 24h of non-zero flow; the customer gets a possible-leak letter, and repeated flags go to the leak team."),
    ("ut.mains_renewal", "memory", "Mains renewal priority comes from burst history, material (cast iron first) and criticality; the model is refreshed every April."),
    ("ut.inc_comms_fail", "note", "Twelve outstations went silent for 3h on Sunday: the LTE APN's RADIUS server was rebooted for patching without telling the control room. OT changes now need a control room notification even when the change is on the telecoms side."),
    ("ut.scada_version", "fact", "water-scada upgraded-to geo-scada-2025"),
    ("ut.water_quality_owner", "fact", "water-quality-lims owned-by team-scientific-services"),
    ("ut.hydrants", "note", "Hydrant inspections are a 5-year cycle; defects found by the fire service are raised through the shared portal and appear as work orders overnight."),
    ("ut.storm", "note", "Storm overflows: event duration monitors on every CSO report to the environmental data platform; spills are published within an hour under the new rules."),
    ("ut.overflow_tool", "fact", "edm-monitors reported-to env-data-platform"),
    ("ut.energy", "memory", "Pumping is about 60% of the utility's electricity bill; the optimiser targets the red band tariff (16:00-19:00) first."),
    ("ut.asset_ids", "memory", "Asset IDs: PS for pumping stations, SR service reservoirs, WTW treatment works, then 4 digits (PS0231). The GIS and SCADA must agree on the ID."),
    ("ut.handoff_optimiser", "handoff", "Pump optimiser rolled to Oak Lane and Ridgeway boosters; Ridgeway's level sensor is noisy so the optimiser uses a 10-min average. Next: Beacon Hill after the sensor swap."),
    ("ut.inc_reservoir_low", "note", "Ridgeway service reservoir dropped to 28% on a hot evening: the optimiser's demand forecast used last week's cool weather. Forecast now pulls the Met Office hourly feed at 12:00 as well as 16:00."),
    ("ut.handoff_optimiser2", "handoff", "Beacon Hill on the pump optimiser after the level sensor swap; all boosters in the north zone now optimised. The fixed-window fallback was tested by stopping the optimiser service for an hour."),
    ("ut.customer_portal", "note", "Customers report supply interruptions through the web form or the phone line; both create an incident in the same queue, deduplicated by postcode and 2h window."),
    ("ut.scada_owner_change", "fact", "water-scada owned-by team-ot-engineering"),
    ("ut.scada_team_change", "note", "OT Control and OT Projects merged into OT Engineering on 1 April; SCADA ownership, the on-call rota and the vendor contracts moved to the merged team."),
    ("ut.gis_sync", "memory", "GIS edits sync to the work order system nightly at 02:00; a new asset added in the day is not dispatchable until the next morning."),
    ("ut.fluoride", "memory", "Fluoridation is only at the works named in the health authority scheme; the dosing set point is 1.0 mg/l with alarms at 0.8 and 1.2."),
    ("ut.pressure_logger", "note", "Pressure loggers in the DMAs are read over NB-IoT every hour; transient pressure spikes over 30 m are kept at 1 s resolution for the burst analysis."),
    ("ut.network_model", "fact", "hydraulic-model built-in infoworks"),
    ("ut.winter_prep", "note", "Freeze-thaw prep: from November the night flow thresholds are relaxed by 10% and an extra leak crew is on standby for the first thaw after a hard frost."),
    ("ut.valve_register", "memory", "Valve positions are in the GIS; a valve found in the wrong state in the field is corrected in the GIS the same day."),
)
_UTILITY_REPLACED += (
    ("ut.handoff_optimiser", "ut.handoff_optimiser2"),
    ("ut.scada_owner", "ut.scada_owner_change"),
)

_WAREHOUSE += (
    ("wh.putaway_old", "note", "Putaway is directed by the WMS to the nearest empty location of the right size class."),
    ("wh.inc_pick_path", "note", "Pick rates fell 15% in zone B for a week: the re-slot put the new trainers range at the far end of the aisles and the pick path doubled back on itself. Pick path sequence regenerated after every re-slot now."),
    ("wh.putaway_new", "note", "Putaway is now velocity-aware: the WMS places fast movers in the golden zone first and only falls back to the nearest empty location of the right size class when it is full."),
    ("wh.putaway_change", "note", "Changed putaway from nearest-empty to velocity-aware on 30 March; the Sunday re-slot moved 40% fewer SKUs the next week because stock landed in the right place the first time."),
    ("wh.labour", "memory", "The labour management system forecasts heads per zone per hour from the order pipeline; shift leads adjust it at 14:00 for the evening."),
    ("wh.inc_cold", "note", "Cold room at 11 C for 40 min on Thursday night: the door was wedged open during a delivery and the alarm went to a shared phone nobody had. Chilled stock quarantined and checked, the alarm now calls the shift lead."),
    ("wh.gift", "note", "Gift wrap orders go to the dedicated station 3; the WMS sends them there at wave release and they miss the last wave if they arrive after 17:00."),
    ("wh.tms", "fact", "fc-north plans-loads-in blue-yonder-tms"),
    ("wh.stock_accuracy", "memory", "Inventory record accuracy target is 99.5% by location; below 99% the cycle count rate doubles."),
    ("wh.robots_handoff", "handoff", "AutoStore port 7 recalibrated and back in service; bin presentation time back to 11 s. Port 9's light curtain still trips on shiny bags, vendor visit booked."),
    ("wh.robots_handoff2", "handoff", "AutoStore port 9 light curtain replaced by the vendor; no trips in 3 shifts. All 12 ports in service, nothing open on the grid."),
    ("wh.pallet_height", "memory", "Racking beam height limits pallets to 1.8 m including the pallet in aisles 20-40; overheight pallets are broken down at receiving."),
    ("wh.dsv", "note", "Drop-ship vendor orders never touch the building; the WMS just relays the order to the vendor portal and tracks the carrier number."),
    ("wh.inc_wave", "note", "Why the evening wave didn't release on Monday: the wave template still had the old 20:00 cutoff after the move to 22:00, so orders after 20:00 sat unreleased until the night manager released them by hand. Template fixed."),
    ("wh.wms_db", "fact", "manhattan-wms stores-in oracle-19c"),
    ("wh.returns_rate", "memory", "Fashion returns run at about 30% of units; most arrive Monday and Tuesday, so the returns bench is double staffed those days."),
    ("wh.ergonomics", "note", "Pack benches are height adjustable; totes over 15 kg must use the lift assist at the bench, enforced by the weight check at induct."),
    ("wh.wms_upgrade_done", "handoff", "WMS upgraded to the 2025 release during the Easter quiet week; two custom reports broke and were fixed on day one. No open issues."),
    ("wh.security", "memory", "High-value SKUs (over 500 GBP) are picked from the cage by named pickers only and go through the X-ray check at pack."),
)
_WAREHOUSE_REPLACED += (
    ("wh.putaway_old", "wh.putaway_new"),
    ("wh.robots_handoff", "wh.robots_handoff2"),
)

_RAN += (
    ("rn.fibre", "note", "Urban sites are moving from microwave to dark fibre backhaul; a fibre cut shows as a hub alarm just like a microwave failure, check the fibre NOC before sending a rigger."),
    ("rn.inc_handover", "note", "Handover failures from LTE to the 5G SA cells at the stadium: the N78 neighbour relations had the wrong PCI after the re-plan. Fixed the planning export; ANR wouldn't have caught it because the PCIs were valid."),
    ("rn.volte", "memory", "VoLTE is on everywhere; 2G is kept as the voice fallback in rural areas until the shutdown date."),
    ("rn.sunset_old", "memory", "3G network shutdown planned for 31 December."),
    ("rn.sunset_new", "memory", "3G network is switched off region by region; the last region goes dark on 30 June, six months earlier than first planned."),
    ("rn.sunset_change", "note", "3G switch-off brought forward from 31 December to 30 June: the spectrum is refarmed to LTE and the remaining 3G-only devices are under 1%. Customer letters went out in March."),
    ("rn.ticketing", "fact", "field-tickets managed-in servicenow"),
    ("rn.sla_vendor", "memory", "The field maintenance contractor must be on site within 4h for P1 and 8h for P2, measured from ticket dispatch."),
    ("rn.cell_naming", "note", "Cell names follow site, technology and sector: N0412_L18_B is LTE 1800 on sector B of N0412."),
    ("rn.pm_retention", "memory", "15-min PM counters are kept for 60 days, hourly aggregates for 2 years."),
    ("rn.inc_pm_gap", "note", "Why the weekly KPI report had holes for the north region: ENM's file export to the collector failed silently after a disk filled up on the mediation server. Disk alert added and the missing ROPs backfilled."),
    ("rn.energy_meters", "note", "Site energy meters report through the site controller; power-saving savings are measured against the same week last year, weather normalised."),
    ("rn.cab", "memory", "The RAN change advisory board meets Tuesdays and Thursdays; emergency changes need the duty manager's approval by phone."),
    ("rn.massive_mimo", "note", "Massive MIMO (64T64R) on the busiest city sites; beam sets are tuned per site, never copied between sites."),
    ("rn.oss_owner_new", "fact", "ran-oss owned-by team-network-automation"),
    ("rn.oss_reorg", "note", "ENM and the parameter push scripts moved from Radio Engineering to Network Automation in April so script changes get code review; radio engineers still approve the parameters."),
    ("rn.pci", "memory", "PCI plans are re-checked for collisions whenever a new site goes on air within 5 km."),
)
_RAN_REPLACED += (
    ("rn.sunset_old", "rn.sunset_new"),
    ("rn.oss_owner", "rn.oss_owner_new"),
)

_FLEET += (
    ("fl.depot_new", "note", "New depot LBA4 (Leeds) opened on 20 April; postcodes LS and WF move from MAN1 to LBA4 over two weeks."),
    ("fl.inc_gps", "note", "Vans in central Manchester showed positions jumping 300 m between tall buildings; the arrival geofence fired early. Arrival now needs 2 consecutive fixes inside the geofence."),
    ("fl.van_hire", "memory", "Peak season hire vans get telematics boxes fitted at the depot before their first route; without one they can't be planned."),
    ("fl.tyres", "note", "Tyre pressure alerts from the telematics boxes go to the depot workshop queue; a van below 80% of target pressure can't start a route."),
)

_WARDS += (
    ("wd.theatre_handoff_report", "handoff", "Reporting extract switched to the theatre v2 tables; the v1 tables are now read-only and can be dropped after the April audit."),
)
_WARDS_REPLACED += (
    ("wd.theatre_v2_done", "wd.theatre_handoff_report"),
)

_FLEETWIDE += (
    ("fw.status_page", "memory", "Customer-facing incidents are posted on the status page within 20 min of the SEV1 being declared, by the incident commander."),
    ("fw.ci_change", "memory", "CI moved from Jenkins to GitHub Actions for every team in Q1; self-hosted runners stay on-prem for the mainframe and OT builds."),
    ("fw.vuln_new", "memory", "Critical CVEs on internet-facing systems are patched within 72 hours (was 7 days), internal within 30; exceptions go to the security board."),
    ("fw.sso_change", "memory", "Single sign-on moved from Okta to Entra ID in February; app owners had to re-register SAML apps, and MFA policies now live in conditional access."),
    ("fw.laptops", "memory", "Laptops are encrypted, managed by Intune, and must be on the VPN to reach production consoles."),
    ("fw.logging_change", "memory", "Central logging moved from Splunk to Elastic on 1 March because of the Splunk licence cost; retention is unchanged at 90 days for logs with personal data."),
)
_FLEETWIDE_REPLACED += (
    ("fw.vuln", "fw.vuln_new"),
)

RETRACT_REASONS = {
    "wd.roster_db": "upgraded to pg16 (pg13 end of life, logical replication to the reporting replica)",
    "wd.bedboard_owner": "reorg 1 March: bedboard moved to Clinical Platform",
    "wd.sms_vendor_old": "trust mandated GOV.UK Notify from 17 March",
    "fl.maps_old": "HERE has truck attributes and a cheaper contract",
    "fl.routing_owner": "routing moved to the Planning team on 1 April",
    "gs.engine": "upgraded to 5.4 for shader compilation and retargeting fixes",
    "gs.crash_tool": "Backtrace handles console minidumps",
    "gs.crash_owner": "crash pipeline handed to Engine Tools",
    "bk.sanctions_old": "Napier replaced FircoSoft after the parallel run",
    "bk.mainframe": "z/OS 3.1 upgrade over Easter",
    "lb.ref_genome_old": "GRCh38 for all new batches from 26 Jan",
    "lb.annotation": "VEP 112 for updated ClinVar and MANE",
    "ut.smart_meter_old": "AMI head-end moved to Itron",
    "ut.scada_owner": "OT Control merged into OT Engineering",
    "wh.carriers": "standard parcels moved to Evri on the new contract",
    "rn.core_vendor_old": "Nokia packet core decommissioned 28 March",
    "rn.noc_tool": "Netcool support ends; alarms correlated in ServiceNow AIOps",
    "rn.oss_owner": "ENM moved to Network Automation in April",
    "fw.sso": "SSO moved to Entra ID",
    "fw.ci": "CI moved to GitHub Actions",
    "fw.logging": "logging moved to Elastic for licence cost",
}

_RAN += (
    ("rn.maintenance_old", "note", "Planned RAN maintenance window is 00:00-04:00 Tuesday to Thursday."),
    ("rn.inc_tx", "note", "Site S1180 flapped all weekend: water in the microwave ODU connector. Rigger replaced the connector and taped it properly; three more sites from the same install crew are booked for inspection."),
    ("rn.maintenance_new", "note", "Planned RAN maintenance window is 00:00-05:00 Monday to Thursday; Friday to Sunday nights are closed except for emergencies."),
    ("rn.maintenance_change", "note", "Maintenance window widened to 00:00-05:00 and Monday night added (May CAB decision): the baseband upgrade programme needed more nights, and traffic before 05:00 is low enough."),
    ("rn.ai_sleep", "memory", "Cell sleep decisions are logged per cell with the predicted and actual traffic, so a coverage complaint can be checked against the sleep log."),
    ("rn.complaints", "note", "Coverage complaints come from the customer app's 'report a problem' form with GPS; more than 5 in a week in one 500 m square opens an optimisation ticket."),
    ("rn.roaming", "memory", "Inbound roamers are steered to LTE 800 in border areas; the steering list is updated monthly from the roaming team."),
)
_RAN_REPLACED += (
    ("rn.maintenance_old", "rn.maintenance_new"),
)

_FLEET += (
    ("fl.ulez_old", "note", "Vans older than Euro 6 are banned from the ULEZ and CAZ routes; the router excludes them."),
    ("fl.ulez_new", "note", "All diesel vans are now kept out of the ULEZ and Birmingham CAZ routes regardless of Euro class; those routes run on EVs only."),
    ("fl.ulez_change", "note", "EV-only in the clean air zones from 1 May: the customer contract with the council requires zero-emission deliveries there, not just compliant diesels."),
    ("fl.trailer_tracking", "memory", "Trailers carry their own trackers; a trailer parked outside a hub geofence for more than 2h raises a security alert."),
)
_FLEET_REPLACED += (
    ("fl.ulez_old", "fl.ulez_new"),
)

_WAREHOUSE += (
    ("wh.shift_old", "note", "Two shifts: early 06:00-14:30 and late 14:30-23:00; no night shift outside peak."),
    ("wh.shift_new", "note", "Three shifts since the 22:00 cutoff: early 06:00-14:30, late 14:30-23:00 and a short night 22:00-02:00 for the last waves and trailer loading."),
    ("wh.inc_dock", "note", "Dock door 6 leveller failed with a trailer on it; the trailer had to be unloaded by hand. Door out of service until the leveller part arrives, inbound appointments moved to doors 7-9."),
    ("wh.b2b", "note", "B2B wholesale orders ship as full pallets from the reserve locations; they bypass AutoStore and are picked by the reach trucks on the late shift."),
)
_WAREHOUSE_REPLACED += (
    ("wh.shift_old", "wh.shift_new"),
)

_BATCH += (
    ("bk.escalation", "note", "Batch escalation: operator, then the batch duty manager, then the application on-call for the failing job; critical path jobs page straight to the application on-call."),
    ("bk.parallel", "memory", "Only jobs with no shared DB2 tablespace may run in parallel; the Control-M resource pool TS_LEDGER enforces it for the ledger jobs."),
)

_STUDIO += (
    ("gs.matchmaking_rules", "memory", "Matchmaking widens the skill band every 15 s in the queue and never pairs a party against solo players after 90 s."),
    ("gs.inc_memory_leak", "note", "Long PS5 sessions crashed after about 5h: the UI texture atlas never released map icons. Fixed in 1.0.6; soak tests now run 8h on every release candidate."),
)

_LAB += (
    ("lb.inc_slurm", "note", "Why jobs sat pending for a day: the genomics partition's QOS had been capped at 200 cores during the storage migration and nobody lifted it. Cap removed, QOS changes now logged in #hpc."),
    ("lb.cohort", "memory", "The cohort freeze for the annual release is 1 June; samples sequenced after that go into the next release."),
)

# Interleave the projects' time lines: row j of a project with n rows sits at (j + 0.5) / n of
# the 90 days, so every project spans the whole period and keeps its own order.
_STREAMS = (("Wards", _WARDS), ("Fleet", _FLEET), ("Studio", _STUDIO), ("Batch", _BATCH), ("Lab", _LAB),
            ("Utility", _UTILITY), ("Warehouse", _WAREHOUSE), ("RAN", _RAN), ("", _FLEETWIDE))
ROWS = tuple((key, surface, project, text) for _, _, project, (key, surface, text) in sorted(
    ((j + 0.5) / len(rows), number, project, row)
    for number, (project, rows) in enumerate(_STREAMS) for j, row in enumerate(rows)))
REPLACED = (_WARDS_REPLACED + _FLEET_REPLACED + _STUDIO_REPLACED + _BATCH_REPLACED + _LAB_REPLACED
            + _UTILITY_REPLACED + _WAREHOUSE_REPLACED + _RAN_REPLACED + _FLEETWIDE_REPLACED)
DAYS = 90
STEP_MINUTES = DAYS * 24 * 60 // len(ROWS)

# Filler: routine chatter in the same domains, so a labelled row has to beat real competition
# (seeded by the loader, so every run sees the same corpus).
FILLER_SUBJECTS = ("the overnight job", "the on-call handover", "the alert threshold", "the staging copy",
                   "the vendor ticket", "the capacity forecast", "the runbook page", "the dashboard panel",
                   "the weekend rota", "the config change", "the test batch", "the monitoring probe",
                   "the access request", "the data export", "the shift report", "the retry policy")
FILLER_PREDICATES = ("was discussed at stand-up", "still needs an owner", "got a second reviewer",
                     "is waiting on the supplier", "was moved to next week", "looks fine after the change",
                     "needs a clearer description", "was checked by the duty engineer", "has a draft ready",
                     "was raised with the team lead")
FILLER_QUALIFIERS = ("", "before the quarterly review", "pending sign-off", "after the weekend", "for the audit trail",
                     "once the window opens", "as agreed on the call")
FILLER_PER_PROJECT = 40

Q = []


def _q(kind, text, project, expected, outdated=None):
    Q.append((kind, text, project, tuple(expected), outdated))


# exact: the row's own words
_q("exact", "Mirth channel MIR-ADT-01 HL7 feed", "Wards", ["wd.adt_feed"])
_q("exact", "INC-0533 phantom free beds AMU", "Wards", ["wd.inc_phantom_beds"])
_q("exact", "symmetry-breaking hint rota solve", "Wards", ["wd.solver_slow"])
_q("exact", "Zebra wristband printers 40 chars", "Wards", ["wd.wristbands"])
_q("exact", "tachograph downloads driver card 28 days", "Fleet", ["fl.tacho"])
_q("exact", "proof of delivery photo GPS fix signature", "Fleet", ["fl.pod"])
_q("exact", "Steam depots internal beta branch producer approval", "Studio", ["gs.store_build"])
_q("exact", "asset naming T_ M_ MI_ SM_ content validator", "Studio", ["gs.asset_naming"])
_q("exact", "ACCR010 abended S0C7 packed-decimal", "Batch", ["bk.abend"])
_q("exact", "Nostro reconciliation MT950 breaks", "Batch", ["bk.recon"])
_q("exact", "overdraft fees job FEES050 vulnerable customer", "Batch", ["bk.fee_job"])
_q("exact", "genotype concordance SNP array sample swap", "Lab", ["lb.inc_sample_swap"])
_q("exact", "GLnexus joint calling bigmem", "Lab", ["lb.joint_calling"])
_q("exact", "free chlorine 0.2 mg/l reportable DWI", "Utility", ["ut.chlorine"])
_q("exact", "minimum night flow district metered area", "Utility", ["ut.leak"])
_q("exact", "trunk main pressure loss alarm Ferry Road", "Utility", ["ut.burst_inc"])
_q("exact", "sorter SRT-2 polybags tilt-tray lane 14", "Warehouse", ["wh.conveyor"])
_q("exact", "cycle count variance recount", "Warehouse", ["wh.cycle_count"])
_q("exact", "lithium batteries UN3481 label", "Warehouse", ["wh.hazmat"])
_q("exact", "cell on wheels stadium north car park", "RAN", ["rn.event"])
_q("exact", "handover margin 0 dB parameter push", "RAN", ["rn.inc_dropped_calls"])
_q("exact", "PM counters ROP data-gap ticket", "RAN", ["rn.pm_counters"])

# morphological: the same words, other inflections
_q("morphological", "reshuffling stops on the drivers' lists", "Fleet", ["fl.reroute_v3", "fl.customer_sms"])
_q("morphological", "geocoding pings in batch for the enriching step", "Fleet", ["fl.lag_incident"])
_q("morphological", "rebinding actions and toggling holds", "Studio", ["gs.controls"])
_q("morphological", "precompiled PSO at launch for stuttering", "Studio", ["gs.shader_hitch_pc"])
_q("morphological", "abending jobs restarted from checkpoints", "Batch", ["bk.checkpoint", "bk.abend"])
_q("morphological", "transactions screened, compliance alerted", "Batch", ["bk.aml"])
_q("morphological", "reconciled nostro statement", "Batch", ["bk.recon"])
_q("morphological", "demultiplexed samples queueing behind joint-called batches", "Lab", ["lb.lag"])
_q("morphological", "pinning singularity images for containerised steps", "Lab", ["lb.containers"])
_q("morphological", "basecalling long reads", "Lab", ["lb.long_reads", "lb.handoff_ont"])
_q("morphological", "pumps optimised against the tariff", "Utility", ["ut.pump_schedule_new", "ut.pump_change"])
_q("morphological", "randomly scheduled tap samples", "Utility", ["ut.sampling"])
_q("morphological", "dosing phosphate for lead pipes", "Utility", ["ut.lead_pipes"])
_q("morphological", "slotting fast-moving SKUs", "Warehouse", ["wh.slotting", "wh.putaway_new"])
_q("morphological", "replenishing every zone on the thirty minute job", "Warehouse", ["wh.replen_done"])
_q("morphological", "grading returned items", "Warehouse", ["wh.returns"])
_q("morphological", "suppressing child sites alarms under a down hub", "RAN", ["rn.alarm_flood", "rn.noc_change"])
_q("morphological", "switched-off capacity cells overnight", "RAN", ["rn.power_saving_new"])
_q("morphological", "tilting antennas electrically", "RAN", ["rn.tilt"])
_q("morphological", "theatre session booking slot", "Wards", ["wd.theatre_slots"])
_q("morphological", "deduping retries of appointment posts", "Wards", ["wd.inc_dup_appts"])
_q("morphological", "truncated patient names", "Wards", ["wd.wristbands"])

# cross-project: the answer is in other projects or fleet-wide
_q("cross-project", "which services page through PagerDuty", None, ["wd.pager", "fw.pager_tool"])
_q("cross-project", "outages caused by an expired certificate", None,
   ["fl.inc_double_book", "rn.inc_core", "fw.cert_expiry"])
_q("cross-project", "change freeze dates", None, ["wd.freeze", "fw.change_freeze"])
_q("cross-project", "where do we use Zebra hardware", None, ["wd.wristbands", "fl.handheld", "wh.label_printer"])
_q("cross-project", "single sign-on provider for clinician logins", "Wards", ["fw.sso_new", "wd.smartcards"])
_q("cross-project", "backup retention policy for production databases", "Lab", ["fw.backup_policy_new"])
_q("cross-project", "MFA for remote access", "Utility", ["ut.ot_network", "fw.mfa"])
_q("cross-project", "SEV1 severity scale and bridge", "Fleet", ["fw.incident_sev"])
_q("cross-project", "which systems store data in postgres or db2", None, ["wd.roster_db_new", "bk.db2"])
_q("cross-project", "daylight saving clock change and timestamps", None, ["wd.dst", "fw.dst_policy"])
_q("cross-project", "what runs on kafka, rabbitmq or MQ", None, ["fl.kafka", "wd.bed_queue", "bk.mq"])
_q("cross-project", "blameless post-incident review timeline", "Studio", ["fw.postmortem", "fw.pager_policy"])
_q("cross-project", "self-hosted runners for OT builds", "Utility", ["fw.ci_change"])
_q("cross-project", "which CI system builds our code", "Studio", ["fw.ci_new", "fw.ci_change"])
_q("cross-project", "where are logs shipped", "Batch", ["fw.logging_new", "fw.logging_change"])
_q("cross-project", "keeping personal data out of logs", None,
   ["wd.nhs_number", "gs.telemetry", "fw.data_retention", "lb.phi"])
_q("cross-project", "Met Office weather feed", None, ["ut.weather", "fl.winter", "ut.inc_reservoir_low"])
_q("cross-project", "changes that need a CAB", None, ["bk.cobol", "rn.parameters", "rn.cab"])
_q("cross-project", "patching windows and CVE deadlines", "Utility", ["ut.patching", "fw.vuln_new"])
_q("cross-project", "energy cost savings", None, ["rn.power_change", "ut.pump_change", "ut.energy"])
_q("cross-project", "team reorg: ownership moved in April", None,
   ["fl.routing_reorg", "ut.scada_team_change", "rn.oss_reorg"])
_q("cross-project", "laptops Intune VPN production consoles", "RAN", ["fw.laptops"])

# synonym: other names for the same thing, abbreviations included
_q("synonym", "OR list longer than 8 hours", "Wards", ["wd.theatre_slots"])
_q("synonym", "ICU ward code on the bedboard", "Wards", ["wd.ward_codes"])
_q("synonym", "kubernetes platform the theatre booking service runs on", "Wards", ["wd.theatre_platform"])
_q("synonym", "estimated time of arrival caching", "Fleet", ["fl.eta_cache_new", "fl.eta_change"])
_q("synonym", "ultra low emission zone diesel vans", "Fleet", ["fl.ulez_new", "fl.ulez_change"])
_q("synonym", "electric vehicle overnight charging depot supply", "Fleet", ["fl.ev_charging"])
_q("synonym", "POD app crashing when scanning", "Fleet", ["fl.driver_app_crash"])
_q("synonym", "which UE version are we on", "Studio", ["gs.engine_new", "gs.engine_change"])
_q("synonym", "pipeline state object cache harbour hitches", "Studio", ["gs.shader_hitch"])
_q("synonym", "PlayStation certification failure activity cards", "Studio", ["gs.cert_ps5"])
_q("synonym", "nightly batch window ledger read-only", "Batch", ["bk.eod_window"])
_q("synonym", "rerunning the general ledger posting", "Batch", ["bk.rerun"])
_q("synonym", "instant payments suspense account sweep", "Batch", ["bk.fps"])
_q("synonym", "anti-money laundering alerts above baseline", "Batch", ["bk.aml"])
_q("synonym", "hg38 reference build", "Lab", ["lb.ref_genome_new", "lb.ref_change"])
_q("synonym", "HPC job scheduler partition walltime", "Lab", ["lb.cluster"])
_q("synonym", "combined sewer overflow spills published", "Utility", ["ut.storm"])
_q("synonym", "pressure reducing valves at night", "Utility", ["ut.pressure"])
_q("synonym", "meter data management daily reads billing", "Utility", ["ut.billing_reads"])
_q("synonym", "goods-in appointment booking", "Warehouse", ["wh.dock"])
_q("synonym", "advance shipping notice missing", "Warehouse", ["wh.asn"])
_q("synonym", "network operations centre alarm grouping tool", "RAN", ["rn.noc_tool_new", "rn.noc_change"])
_q("synonym", "UMTS switch-off", "RAN", ["rn.sunset_new", "rn.sunset_change"])

# multi-hop: two rows together answer it
_q("multi-hop", "what does the Clinical Platform team's service cache in", "Wards",
   ["wd.bedboard_owner_new", "wd.bed_cache"])
_q("multi-hop", "which message broker does the clinical platform's service consume from", "Wards",
   ["wd.bedboard_owner_new", "wd.bed_queue"])
_q("multi-hop", "rota publish failed: who do I page and with what tool", "Wards", ["wd.escalation", "wd.pager"])
_q("multi-hop", "what does the Planning team's service geocode with", "Fleet", ["fl.routing_owner_new", "fl.maps_new"])
_q("multi-hop", "where does team-fleet-data's service store positions", "Fleet",
   ["fl.telematics_owner", "fl.telematics_db"])
_q("multi-hop", "how long are raw positions from samsara kept", "Fleet", ["fl.telematics", "fl.timescale_retention"])
_q("multi-hop", "where does the Engine Tools team's pipeline send crashes", "Studio",
   ["gs.team_owner", "gs.crash_tool_new"])
_q("multi-hop", "what database does team-online's service use", "Studio", ["gs.mm_owner", "gs.mm_db"])
_q("multi-hop", "matchmaking fell over in the beta: which datastore is behind it", "Studio",
   ["gs.inc_day1", "gs.mm_db"])
_q("multi-hop", "which team owns the tool that schedules the EOD batch", "Batch", ["bk.scheduler", "bk.control_m_owner"])
_q("multi-hop", "what OS version runs the system that stores in db2", "Batch", ["bk.db2", "bk.zos_new"])
_q("multi-hop", "tool that transfers payment files and where late files are parked", "Batch", ["bk.mft", "bk.files"])
_q("multi-hop", "who owns the platform pipeline runs are launched from", "Lab", ["lb.nf_tower", "lb.tower_owner"])
_q("multi-hop", "which team owns the system sample tracking is stored in", "Lab", ["lb.lims", "lb.lims_owner"])
_q("multi-hop", "VEP version of the pipeline owned by the bioinformatics core", "Lab",
   ["lb.pipeline_owner", "lb.annotation_new"])
_q("multi-hop", "who owns water-scada and what product is it", "Utility", ["ut.scada_owner_change", "ut.scada"])
_q("multi-hop", "GIS product of the asset register and the team that owns it", "Utility", ["ut.gis", "ut.asset_owner"])
_q("multi-hop", "what feeds the forecast the pump optimiser plans against", "Utility", ["ut.forecast", "ut.weather"])
_q("multi-hop", "database behind the WMS that manages fc-north", "Warehouse", ["wh.wms", "wh.wms_db"])
_q("multi-hop", "how many ports does the grid owned by team-automation have", "Warehouse",
   ["wh.robots_owner", "wh.autostore_new"])
_q("multi-hop", "who owns the OSS and which product manages it", "RAN", ["rn.oss_owner_new", "rn.oss"])
_q("multi-hop", "where are the counters collected from ENM stored", "RAN", ["rn.pm_counters", "rn.pm_db"])

# paraphrase: real vocabulary gaps
_q("paraphrase", "why was live van tracking data so delayed", "Fleet", ["fl.lag_incident"])
_q("paraphrase", "nurses could not see their shifts in the middle of the night", "Wards", ["wd.inc_rota_blank"])
_q("paraphrase", "beds looked available but were actually occupied", "Wards", ["wd.inc_phantom_beds"])
_q("paraphrase", "patients ended up with two bookings for one clinic", "Wards", ["wd.inc_dup_appts"])
_q("paraphrase", "clinic screens sluggish at the start of the week", "Wards", ["wd.clinic_slow"])
_q("paraphrase", "vehicles given deliveries while being repaired", "Fleet", ["fl.inc_double_book"])
_q("paraphrase", "why tomorrow's delivery plan came out so late", "Fleet", ["fl.inc_plan_late"])
_q("paraphrase", "players lost their gear after an update", "Studio", ["gs.inc_patch"])
_q("paraphrase", "the game freezes briefly the first time you see the sea", "Studio", ["gs.shader_hitch"])
_q("paraphrase", "online matches stuck at release", "Studio", ["gs.inc_servers"])
_q("paraphrase", "console crashes after playing for hours", "Studio", ["gs.inc_memory_leak"])
_q("paraphrase", "customers were charged twice for purchases", "Batch", ["bk.inc_dup_post"])
_q("paraphrase", "business clients got the wrong totals on their monthly documents", "Batch", ["bk.inc_statement"])
_q("paraphrase", "why the books were late after a busy end of month", "Batch", ["bk.late_batch"])
_q("paraphrase", "jobs died because the disk filled up", "Lab", ["lb.inc_scratch_full"])
_q("paraphrase", "why results took so much longer to come back", "Lab", ["lb.lag"])
_q("paraphrase", "two people's DNA got mixed up", "Lab", ["lb.inc_sample_swap"])
_q("paraphrase", "homes without water after a pipe broke overnight", "Utility", ["ut.burst_inc"])
_q("paraphrase", "too much disinfectant went into the water", "Utility", ["ut.inc_dosing"])
_q("paraphrase", "the website sold things we did not have", "Warehouse", ["wh.inc_oversell"])
_q("paraphrase", "pickers walking much further after products were moved around", "Warehouse",
   ["wh.inc_pick_path"])
_q("paraphrase", "the fridge got too warm", "Warehouse", ["wh.inc_cold"])
_q("paraphrase", "mobile internet broke across the whole country", "RAN", ["rn.inc_core"])
_q("paraphrase", "phone calls cutting out on a Friday night in the east", "RAN", ["rn.inc_dropped_calls"])

# temporal: which value is current, what changed (the replacement first, then the change note)
_q("temporal", "which postgres version does rostering use", "Wards", ["wd.roster_db_new", "wd.roster_db_change"],
   "wd.roster_db")
_q("temporal", "bedboard refresh target after an admit", "Wards", ["wd.bed_target_new"], "wd.bed_target_old")
_q("temporal", "who owns bedboard now", "Wards", ["wd.bedboard_owner_new", "wd.bedboard_reorg"],
   "wd.bedboard_owner")
_q("temporal", "which provider sends appointment reminder texts", "Wards", ["wd.sms_vendor_new", "wd.sms_change"],
   "wd.sms_vendor_old")
_q("temporal", "how long does the staff bank get before agencies", "Wards", ["wd.bank_offer_new", "wd.bank_change"],
   "wd.bank_offer")
_q("temporal", "ETA cache TTL per stop", "Fleet", ["fl.eta_cache_new", "fl.eta_change"], "fl.eta_cache_old")
_q("temporal", "what does routing geocode with and why did it change", "Fleet", ["fl.maps_new", "fl.maps_change"],
   "fl.maps_old")
_q("temporal", "when is the route plan frozen", "Fleet", ["fl.plan_cutoff_new"], "fl.plan_cutoff_old")
_q("temporal", "what changed for diesel vans in the clean air zones", "Fleet", ["fl.ulez_new", "fl.ulez_change"],
   "fl.ulez_old")
_q("temporal", "texture streaming pool size on Series S", "Studio", ["gs.mem_budget_new", "gs.mem_change"],
   "gs.mem_budget_old")
_q("temporal", "gold master date", "Studio", ["gs.gold_date_new", "gs.gold_change"], "gs.gold_date_old")
_q("temporal", "where do crash reports go now", "Studio", ["gs.crash_tool_new", "gs.crash_change"], "gs.crash_tool")
_q("temporal", "how often do live patches ship", "Studio", ["gs.patch_cadence_new", "gs.patch_change"],
   "gs.patch_cadence_old")
_q("temporal", "SEPA same-day cut-off time", "Batch", ["bk.sepa_cutoff_new", "bk.sepa_change"], "bk.sepa_cutoff_old")
_q("temporal", "which sanctions screening engine do we use", "Batch", ["bk.sanctions_new", "bk.sanctions_change"],
   "bk.sanctions_old")
_q("temporal", "GL posting deadline for treasury", "Batch", ["bk.sla_gl_new", "bk.sla_gl_change"], "bk.sla_gl_old")
_q("temporal", "which reference genome does the pipeline align to", "Lab", ["lb.ref_genome_new", "lb.ref_change"],
   "lb.ref_genome_old")
_q("temporal", "VEP version for annotation", "Lab", ["lb.annotation_new", "lb.annotation_change"], "lb.annotation")
_q("temporal", "sample QC coverage and contamination thresholds", "Lab", ["lb.qc_new", "lb.qc_change"], "lb.qc")
_q("temporal", "service reservoir overnight minimum level", "Utility", ["ut.reservoir_new"], "ut.reservoir")
_q("temporal", "smart meter head-end supplier", "Utility", ["ut.smart_meter_new", "ut.smart_meter_change"],
   "ut.smart_meter_old")
_q("temporal", "how are the Hillside booster pumps scheduled", "Utility", ["ut.pump_schedule_new", "ut.pump_change"],
   "ut.pump_schedule_old")
_q("temporal", "which carrier takes standard parcels", "Warehouse", ["wh.carriers_new", "wh.carriers_change"],
   "wh.carriers")
_q("temporal", "same-night shipping order cutoff", "Warehouse", ["wh.ship_sla_new", "wh.ship_sla_change"],
   "wh.ship_sla_old")
_q("temporal", "why did putaway change", "Warehouse", ["wh.putaway_new", "wh.putaway_change"], "wh.putaway_old")
_q("temporal", "packet core vendor", "RAN", ["rn.core_vendor_new", "rn.core_change"], "rn.core_vendor_old")
_q("temporal", "3G shutdown date", "RAN", ["rn.sunset_new", "rn.sunset_change"], "rn.sunset_old")
_q("temporal", "RAN maintenance window nights", "RAN", ["rn.maintenance_new", "rn.maintenance_change"],
   "rn.maintenance_old")
_q("temporal", "status of the 5G SA trial", "RAN", ["rn.handoff_5g_v3"], "rn.handoff_5g_v2")
_q("temporal", "which SSO provider do we use", None, ["fw.sso_new", "fw.sso_change"], "fw.sso")
_q("temporal", "critical CVE patch deadline", "Batch", ["fw.vuln_new"], "fw.vuln")

QUERIES = tuple(Q)
del Q
