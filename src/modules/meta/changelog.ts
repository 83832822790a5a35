/** The dated changelog, newest first; served as JSON and as RSS 2.0. */
export interface ChangelogEntry {
  id: string;
  date: string;
  title: string;
  kind: 'ADDED' | 'CHANGED' | 'DEPRECATED' | 'REMOVED';
  description: string;
}

export const CHANGELOG: ChangelogEntry[] = [
  {
    id: '2026-12-01-idle-checkpoints',
    date: '2026-12-01',
    title: 'An idle service on SQLite spends less CPU on WAL checkpoints',
    kind: 'CHANGED',
    description:
      'Nothing changes for API clients. A service on SQLite that sits idle now uses about half the CPU it used before. The WAL checkpoint worker skips a database whose log it has found wholly copied, until a commit changes the log file. A round that finds nothing new does not wake the request thread. Before, every round (40 a second by default) checkpointed all three databases whether or not anything had been written. Measured with the paper feed stopped: 15 to 17 ms of CPU a second, against 23 to 30. Under load, a log with new frames is checkpointed in every round, as before.',
  },
  {
    id: '2026-12-01-bench-server-flags',
    date: '2026-12-01',
    title: "Benchmarks start the service with npm start's Node flags",
    kind: 'CHANGED',
    description:
      'Nothing changes for API clients. For contributors: the benchmarks that start the service (`bench:orders`, `bench:orders-ab`, `bench:ws`, `bench:webhooks`, `bench:exports`, `bench:cluster`) now take its Node flags from the `start` script in package.json, so they always measure the service as `npm start` runs it. The README ("Benchmarks") also records one measured idea that was left out. `--no-memory-reducer` stops V8 from shrinking the young generation after the service has been idle. It removed the extra scavenges after an idle spell, but not the paced p99 tail, and it lowered saturation throughput in every alternated pair.',
  },
  {
    id: '2026-12-01-docs-exports-known-case',
    date: '2026-12-01',
    title:
      'PostgreSQL data exports: the known case after a clock advance is fixed; bench:engine compares two builds',
    kind: 'CHANGED',
    description:
      'Data exports on PostgreSQL have no known case left that does not finish. The entry "Data exports now run on PostgreSQL" named one: an export in the live world created after the sandbox clock was moved forward 7 days stayed `RUNNING`. The export was not at fault. Moving the clock made the crypto walk catch up with thousands of blocking round trips, which held every request. The change "PostgreSQL: clock advances and engine commits in one round trip" (2026-11-30) fixed that, and the README no longer lists it. For contributors: `BENCH_BASELINE=<another built checkout> npm run bench:engine` now compares this engine with that checkout\'s. Rounds alternate A B A B, each in a process of its own, and the results go to `bench/results/engine-ab.json`.',
  },
  {
    id: '2026-12-01-fewer-writes',
    date: '2026-12-01',
    title: 'Fewer writes per order in a group commit',
    kind: 'CHANGED',
    description:
      "Fewer SQL writes per order on the group-commit path (SQLite and PostgreSQL). A batch (the orders of one event-loop turn, committed together) now leaves out every write that a later write of the same batch supersedes: an account's balance and a position are written once per batch instead of once per fill, a market's last trade once per batch with the batch's volume summed, an order that is accepted and then filled, expired or cancelled in the same batch is inserted with its final state instead of inserted and then updated, and a resting order filled several times in one batch gets one update. Trades and ledger rows are all still written, and the rows at COMMIT are exactly those of the old path: a property test feeds the same random command streams to two databases, one in batches and one event at a time, and compares every table. A market order's self-trade check also reads the per-price quantities a position with many resting orders already keeps, instead of walking every one of its orders. bench:orders-ab measured this build against the previous one at 0.983 of its CPU per order (median of 4 rounds).",
  },
  {
    id: '2026-11-30-faster-e2e',
    date: '2026-11-30',
    title: 'Tests: the heaviest e2e suites do the same checks with less work',
    kind: 'CHANGED',
    description:
      "The e2e suites do the same checks with less work: the data-export cases seed only the rows each rule needs (50,000 trades for the worker-thread cases; the 200,000- and 500,000-row tables only for the one case each that needs them), the schema fuzz sends each distinct generated body once per operation (same seeds and draws; about a third were repeats), three case files share one app among cases that only add records of their own, the CI-world example's case runs at a 60 s feed interval, and the slow-endpoint webhook check allows for the event-loop delay the receiver records arrivals late by. Issue 24 (npm test under 20 minutes).",
  },
  {
    id: '2026-11-30-faster-start',
    date: '2026-11-30',
    title: 'Faster start: fewer libraries on SQLite, one engine restore per world in cluster mode',
    kind: 'CHANGED',
    description:
      "Faster start: a start on SQLite no longer loads the PostgreSQL and Redis client libraries (`pg`, `ioredis`; about 0.2 s of CPU), and in cluster mode each world's engine is read from the database once at start (when the writer term begins, after the fencing epoch is incremented) instead of twice (about 65 ms a world).",
  },
  {
    id: '2026-11-30-lock-session-timeout',
    date: '2026-11-30',
    title: 'Cluster mode: no spurious step-down after a busy main thread',
    kind: 'CHANGED',
    description:
      'Cluster mode (issue 24): the PostgreSQL session that holds an instance\'s writer locks and leases times a statement out only when PostgreSQL\'s answer is still missing after the event loop has read its sockets. Before, a main thread held past the 3-second timeout (a long synchronous commit on a busy machine) made the session look lost although PostgreSQL had answered in time, and the instance stepped down from every world it wrote: their requests were answered 503 `WRITER_UNAVAILABLE` ("no writer is elected") until the next election round. Statements on that session are now sent one at a time, each timed from when it is sent.',
  },
  {
    id: '2026-11-30-world-work-lock',
    date: '2026-11-30',
    title: 'Cluster mode: boot recovery leaves the worlds a live instance is creating or deleting',
    kind: 'CHANGED',
    description:
      "Cluster mode (issue 24): an instance that starts while another is creating or deleting an ephemeral world no longer removes that world in its boot recovery (the create failed or answered a world that was gone): each create and delete holds the world's work lock (a PostgreSQL advisory lock) on its instance's lock session, and recovery and the sweep remove a `CREATING`/`DELETING` world only when that lock is free; the lease's holder looks for such worlds every 30 s.",
  },
  {
    id: '2026-11-30-durability-tests-postgres',
    date: '2026-11-30',
    title: 'Tests: durability, crash and shutdown cases on PostgreSQL + Redis too',
    kind: 'CHANGED',
    description:
      "Tests (issue 24): kill -9 durability of orders, an Idempotency-Key across a crash, kill -9 mid data export, the 100,000-order CSV export under a 96 MB heap cap and graceful shutdown (SIGTERM, SIGINT) are now checked on PostgreSQL + Redis too (`npm test`'s `e2e-pg` pass); `test/support/sqlite-pass-only.js` keeps only the four case files about the embedded SQLite default. The shutdown file starts four service processes instead of six and the orders export one instead of two, in both passes. No change to the service. The e2e-pg harness migrates once per Jest run (every template and wall-clock boot copies one migrated database); every PostgreSQL a unit spec or cluster file starts is a copy of one initdb; the cluster project's ephemeral-world clock cases share the Redis-outage file's instances; `bench:orders-ab` takes `BENCH_IDEMPOTENCY=1` (every order with an Idempotency-Key of its own).",
  },
  {
    id: '2026-11-30-restart-no-migration-run',
    date: '2026-11-30',
    title: "A restart on a fully migrated database skips TypeORM's migration run",
    kind: 'CHANGED',
    description:
      'A restart on a database migrated whole no longer hands TypeORM its migration run (its own table lookup and read of every applied migration, per schema); a migration the database lacks still runs.',
  },
  {
    id: '2026-11-30-world-spare-schema',
    date: '2026-11-30',
    title: 'Ephemeral worlds on PostgreSQL: a spare schema kept ready',
    kind: 'CHANGED',
    description:
      "Ephemeral worlds on PostgreSQL: a spare clone of the worlds' template (`world_spare_*`) is kept ready and renamed to the new world, so `POST /sandbox/worlds` no longer waits for a clone of every table (300-500 ms on a busy machine); with none ready it clones as before.",
  },
  {
    id: '2026-11-30-idempotency-writer-fence',
    date: '2026-11-30',
    title: 'Cluster mode: one effect per Idempotency-Key, fenced on the engine writer',
    kind: 'CHANGED',
    description:
      "Fixed (cluster mode): an `Idempotency-Key` request could take effect twice when its instance was cut off from PostgreSQL for over a second while still reaching Redis: a peer took the instance for stopped and released its key, the client's retry ran, and the instance's original command, already on its way to the world's engine writer, ran too (two orders under one key). The writer now refuses a second effect under a key whose request already changed its engine within the key's 24 hours: the second command changes nothing and answers `409 IDEMPOTENT_REQUEST_APPLIED` naming the first's orders or ledger entries. The check is in memory (loaded from `idempotency_effects` when a writer term begins; about 2 µs of CPU per keyed command, no database round trip for a command that runs).",
  },
  {
    id: '2026-11-30-order-path-sync-credential',
    date: '2026-11-30',
    title: 'Order path: a cached API key is authenticated without a promise',
    kind: 'CHANGED',
    description:
      'Order path (issue 23): a request with a cached API key that needs no signature is authenticated without a promise or microtask hop, and without parsing its `last_used_at` (key state, routing, scope and the once-a-minute `last_used_at` write unchanged); the graceful drain no longer allocates a set entry and a closure per request. CPU per `POST /orders` against the previous build in `bench:orders-ab`: medians 0.69x to 1.00x over five runs (load 5-14), so a modest gain.',
  },
  {
    id: '2026-11-30-reset-one-transaction',
    date: '2026-11-30',
    title: 'A sandbox reset is one transaction; 2 round trips on PostgreSQL',
    kind: 'CHANGED',
    description:
      "- `POST /sandbox/reset` is one transaction: the account reset and the user's comments, watchlists, scenarios and data exports of that world are deleted together, and a failure leaves nothing reset (500). On PostgreSQL a paper reset costs 2 round trips instead of 10.\n- Deferred SQL statements report their row counts and rows after their round trip (`runDeferred(...).changes`, `queryDeferred(...).rows`); `npm run bench:reset` prints round trips and CPU.",
  },
  {
    id: '2026-11-30-world-template-stamp',
    date: '2026-11-30',
    title: 'Worlds on PostgreSQL reuse a current template schema',
    kind: 'CHANGED',
    description:
      "Tests and worlds on PostgreSQL: the worlds' template schema is stamped when built (engine migrations, seed files, seeding instant) and used as it is when current, instead of migrated and seeded again by each process's first world; the e2e harness's seeded databases carry one (about 1.5 s less per PostgreSQL test boot that creates a world). The export queue-order case stops waiting once the last queued job has started.",
  },
  {
    id: '2026-11-30-cluster-clocks',
    date: '2026-11-30',
    title: 'Cluster mode: world clocks on every instance; the service clock after a Redis outage',
    kind: 'CHANGED',
    description:
      "- Cluster mode: an ephemeral world's clock moved through one instance (`POST /sandbox/clock` with the world key) is read by every instance: the writer's forwarded answer carries the world's offset, a `world-clock.advanced` signal reaches the others at once, and an instance that missed it reads the world's registry row again within 5 s. Before, an instance that had used the world kept its old world clock (limit windows, idempotency expiry, key checks) until the world unloaded.\n- Cluster mode: a move of the service clock made while Redis was down reaches the other instances within 5 s of Redis's return (each instance writes its offset back to `sandbox:clock-offset` on reconnecting and re-reads the key every 5 s), instead of at their next restart.\n- README: the \"export after a 7-day clock move stays `RUNNING` on PostgreSQL\" limit is gone; it was the crypto walk's catch-up holding the event loop (one PostgreSQL round trip per price and candle), fixed by the deferred crypto catch-up writes.",
  },
  {
    id: '2026-11-30-tests-both-engines',
    date: '2026-11-30',
    title: 'npm test runs the e2e suites on SQLite and on PostgreSQL + Redis',
    kind: 'CHANGED',
    description:
      "Tests: `npm test` runs the end-to-end suites twice again, once on SQLite and once on PostgreSQL + Redis (`DEFAULT_PASSES = 'all'` in `jest.config.js`), beside the unit specs and the cluster suite. The e2e case files that start the service only as processes on SQLite files (`node dist/main.js` for configuration errors, listen failures, the `DATA_DIR` lock, kill -9 and restart cases, SIGTERM; `npm run services`; the start script's build) run once, in the SQLite pass: they are listed with the reason in `test/support/sqlite-pass-only.js`. Their processes never saw the pass switch, so the PostgreSQL pass had run them unchanged, on SQLite, a second time. While such a file's tests and hooks run, in either pass, a boot on the pass database throws and names the file (the guard already caught two files that boot on it in some cases: they stay in both passes). The schema fuzz sends 100 bodies of each kind per operation on PostgreSQL, from other seeds than SQLite's 200. `data-exports-jobs` creates its concurrent jobs together and clears every case's exports after it (a slow CI run had finished a job before the list that checked it was still running, and the case after it then met the export limit).",
  },
  {
    id: '2026-11-30-cluster-first-round',
    date: '2026-11-30',
    title: "Cluster mode: a new world's first requests wait for its first election round",
    kind: 'CHANGED',
    description:
      "Cluster mode (PostgreSQL + Redis): the first requests of a new ephemeral world no longer answer `503 WRITER_UNAVAILABLE` when something else had loaded the world first. A WebSocket subscription with the world's key loads its engine, and an instance that is not yet the world's writer then stands for it; an HTTP request of that world arriving before the election round had settled was forwarded at once to a writer nobody was yet (`no writer is elected`), even on a lone instance. Every request of a world now waits for this instance's first election round with it (and the term it won) before it is served here or forwarded, as a world's very first request already did; after that round requests are forwarded at once as before. Seen as an intermittent 503 of `GET /crypto/prices` in the `worlds-crypto` e2e case on PostgreSQL; a new case (a world reached by a WebSocket subscription, then at once by `GET /crypto/prices` and `GET /wallet`) fails without the change.",
  },
  {
    id: '2026-11-30-cod-grace-change-export-estimate',
    date: '2026-11-30',
    title:
      'Cancel-on-disconnect grace changes count from the change; export estimates sample in the worker',
    kind: 'CHANGED',
    description:
      "Cancel-on-disconnect: a grace changed while a key is armed counts from the change itself; with PostgreSQL + Redis the cancel could come later than `cancels_at` said (by as long as the instance took to re-read the setting), and other instances now show the new `cancels_at`. Data exports: `POST /data/exports/estimate` reads its size sample in the count's worker thread for a large table; on PostgreSQL an unanalysed table's sample had blocked the request thread (a scan and sort of the whole range, about 0.3 s per 220,000 rows).",
  },
  {
    id: '2026-11-30-cheaper-boots',
    date: '2026-11-30',
    title: 'Cheaper app boots in the e2e harness; PgSyncConnection connects without blocking',
    kind: 'CHANGED',
    description:
      "Tests: an app boot in the e2e harness is cheaper. One Ajv and its compiled body schemas per process, the OpenAPI document parsed and hashed once per process (frozen); on PostgreSQL a boot's database is copied from its template one boot ahead and a closed boot's database is dropped in the background. PostgreSQL: `PgSyncConnection` connects without blocking the event loop; its first statement waits for the connection (or fails with PostgreSQL's error).",
  },
  {
    id: '2026-11-30-postgres-fewer-round-trips',
    date: '2026-11-30',
    title: 'Fewer blocking round trips per request on PostgreSQL',
    kind: 'CHANGED',
    description:
      "PostgreSQL: orders never filled read no trades (`GET`, `DELETE`, `PATCH /orders/{id}`, `GET /orders`); the paper feed's reference prices go with their COMMIT. Sampler points, watchlist writes and a world's crypto restart are deferred to their COMMIT; the sandbox reset's comments cleaner is set-based. World creation clones the template with pg_catalog instead of information_schema (about twice as fast). API key creation is 2 round trips instead of 4. The crypto settlement, RFQ expiry and world expiry polls skip a look when they found nothing due at the same clock instant. Tests on PostgreSQL: `openDatabaseOf` reuses idle connections per database and schema instead of connecting for every read.",
  },
  {
    id: '2026-11-30-realtime-channel-feeds',
    date: '2026-11-30',
    title: 'Realtime fan-out numbers messages per channel feed',
    kind: 'CHANGED',
    description:
      "Realtime fan-out: one sequence counter per channel feed (public per world, private per world and user) instead of a per-connection map read and written per message; a private-channel message visits that channel's subscribers only. About half the per-subscriber fan-out CPU (453 \u2192 201 µs per update in a bench:ws profile); frames, seq rules, coalescing and its default are unchanged. Benchmarks: `bench/support/ws-profile-attribution.ts` splits a bench:ws server profile (`BENCH_PROF`) into fan-out writes, per-subscriber work, HTTP order path, SQLite commit and the rest; `bench:ws-fanout` prints the CPU per write call.",
  },
  {
    id: '2026-11-30-pipelined-group-commit-postgres',
    date: '2026-11-30',
    title: 'Pipelined group commit on PostgreSQL',
    kind: 'CHANGED',
    description:
      "On PostgreSQL, the order hot path's group commit is pipelined: a batch's transaction (with its Idempotency-Key effects, webhook spool rows and the cluster fence) is sent as one request without blocking the event loop, the next batch forms while it is in flight, and at most one commit is in flight per world. Answers still wait for their own COMMIT; a failed commit refuses the batch formed on top of it too and rebuilds the engine from the database. Measured side by side on PostgreSQL (load average 9-10): 600 \u2192 820 orders/s, 668 \u2192 434 µs of server CPU per order. `BENCH_PG=1 npm run bench:orders-ab` compares two builds on PostgreSQL (one database each).",
  },
  {
    id: '2026-11-30-exports-on-postgres-index-walk',
    date: '2026-11-30',
    title:
      'Data exports on PostgreSQL walk the row_seq index; export jobs and realtime resyncs in cluster mode',
    kind: 'CHANGED',
    description:
      "Data exports on PostgreSQL read each page by walking the `row_seq` index (the export worker's session sets `enable_sort=off`): on a table without planner statistics yet (a bulk load, a busy world), each page had re-read every later row, and jobs of 20,000 or 200,000 rows stalled. Cluster mode: an ephemeral world's export job cut short by a restart is re-queued when the instance becomes the world's writer, also when the world was opened before (it stayed `RUNNING`). Realtime with `REDIS_URL`: the world's writer no longer sends its orderbook subscribers a second snapshot (and its ticker subscribers every ticker) when its stream reader starts reading the world; followers still refresh then.",
  },
  {
    id: '2026-11-30-graceful-shutdown-drains-first',
    date: '2026-11-30',
    title: 'Graceful shutdown drains HTTP before the timers stop and the writer resigns',
    kind: 'CHANGED',
    description:
      'Graceful shutdown drains HTTP first: requests in flight finish before the timers stop, the cluster writer terms are resigned and Redis and the databases close. In cluster mode an order in flight at a shutdown was answered 503 `WRITER_UNAVAILABLE` (the instance stepped down as writer before its commit); it is now committed and answered 201. The idempotency orphan sweep (PostgreSQL) stops with the other timers, and a sweep in progress is waited for, instead of running on after shutdown.',
  },
  {
    id: '2026-11-30-idempotency-claim-sessions',
    date: '2026-11-30',
    title:
      'Idempotency-Key on PostgreSQL: a dropped claim session no longer lets a retry run the request twice',
    kind: 'CHANGED',
    description:
      'Fixed: on PostgreSQL (several instances), an `Idempotency-Key` request could run twice when the claim session of the instance running it dropped while it ran (a connection reset or `pg_terminate_backend`): a peer took the instance for stopped, released its key, and the retry ran the request again. An instance now holds its claim on two sessions (`svc-idempotency:<instance>`, `svc-idempotency-instance:<instance>`, one more connection per instance), takes a dropped one back at once, and is settled by a peer only when both are free a second apart.',
  },
  {
    id: '2026-11-30-follower-views',
    date: '2026-11-30',
    title:
      "Cluster mode: followers apply the writer's batches instead of rebuilding from the database",
    kind: 'CHANGED',
    description:
      "Cluster mode: an instance that does not write a world keeps its realtime view of it current by applying the writer's batches (with the figures the writer now adds to each) instead of rebuilding the whole engine from PostgreSQL up to every 200 ms; snapshots after a resync are no longer stale, and followers' orderbook snapshots now include the house's quotes. The shared event bus hands on a refresh when an instance starts following a world, so its first snapshots are not built from state older than the stream it reads. Measured (`npm run bench:cluster`, two shared cores, load average 29-43): realtime delivery across instances p99 12.5 s before, 28 ms after (50 orders/s through A, 1,400 deliveries each, none missing); a follower's CPU profile spent 33% of its busy time in engine reloads before, 0.6-1.2% after (its one rebuild when it starts following).",
  },
  {
    id: '2026-11-30-frozen-redis-clock-exports',
    date: '2026-11-30',
    title:
      'Cluster mode: a frozen Redis never holds a request; the sandbox clock moves on every instance; exports follow the writer',
    kind: 'CHANGED',
    description:
      'Cluster mode: a frozen Redis (connections open, no answers) no longer holds a forwarded request. It gets `503 WRITER_UNAVAILABLE` with `Retry-After` within 4 s. A command that reaches Redis after its absolute deadline is neither queued nor run. `GET /health/ready` reports a Redis that does not answer `PING` within 500 ms as `"redis": "unavailable"`. Each instance\'s first reads no longer log "reading writer answers failed" while the reader connection is still opening. Cluster mode: `POST /sandbox/clock` (service clock) now moves the clock of every instance, not just the one that served it. A writer deposed while alive stops its export jobs, and the new writer runs them.',
  },
  {
    id: '2026-11-30-pga-listen-after-election',
    date: '2026-11-30',
    title:
      'Cluster mode: an instance listens after its first writer round; Redis limits hold under a burst',
    kind: 'CHANGED',
    description:
      "Cluster mode: an instance starts listening after its first writer election round, with the worlds it won restored and their boot catch-ups done (crypto markets due during downtime settle before the first request; no 503 `WRITER_UNAVAILABLE` right after a lone instance's restart). Redis limits: an answer that arrived while the instance was busy is no longer taken for a Redis timeout, so a burst can no longer pass the per-IP and batch ceilings by failing open.",
  },
  {
    id: '2026-11-30-pgb-postgres-round-trips',
    date: '2026-11-30',
    title:
      'PostgreSQL: clock advances and engine commits in one round trip; new worlds in cluster mode without 503s',
    kind: 'CHANGED',
    description:
      "On PostgreSQL, advancing a sandbox world's clock (or the service clock) by a year takes 0.2-0.65 s instead of 0.6-2.7 s. The crypto catch-up writes one row per price and per candle bucket in a single round trip, and engine commits defer their writes in the same way. While the service waited on about 12,000 blocking statements, idle keep-alive connections could be reset and expired keys' WebSockets were closed late. Cluster mode: a burst of new sandbox worlds on one instance no longer answers `503 WRITER_UNAVAILABLE`. The first request for a world waits for an election round that includes it.",
  },
  {
    id: '2026-11-30-orderpath-wal-checkpoint',
    date: '2026-11-30',
    title:
      "POST /orders: no WAL checkpoint of a wholly copied log on the request thread; bench:orders shows the service's stalls",
    kind: 'CHANGED',
    description:
      "Fixed: POST /orders latency spikes from the WAL checkpointer. The request thread ran a checkpoint of its own each time the worker reported a long log, even one already wholly copied. That checkpoint copied the few frames committed since and waited for two fsyncs: Each cost 4 to 32 ms of blocked event loop; one bench run of about 2.5 minutes at 400 to 1,400 orders/s had 40 of them. bench:orders prints the service's event-loop delay and GC pauses per round (`serviceLoop` in bench/results/orders.json). `BENCH_STALLS` splits each stall into time on a CPU, waiting for a CPU and GC. `BENCH_SERVICE_ONLY=1 BENCH_PACED_RATE=<n>` adds paced rounds against the service alone.",
  },
  {
    id: '2026-11-30-wsfan-coalescing',
    date: '2026-11-30',
    title: 'WebSocket fan-out: coalescing holds a full window from the end of the last write',
    kind: 'CHANGED',
    description:
      "WebSocket fan-out: with `WS_COALESCE_MS` set, the coalescing window counts from the end of the previous socket write and holds a batch for the full window from its first event (still at most `WS_COALESCE_MS` of added delay; an event after a quiet spell still leaves at once). Before, a fan-out to 1,000 subscribers that took longer than the window to write turned coalescing off (each later event was written alone, 1,000 system calls per update). The fan-out holds a batch's later messages without re-checking the socket per message, and builds each distinct frame once. `npm run bench:ws-fanout`: the fan-out alone, CPU µs and write calls per update, optionally A/B against another checkout's build in the same run.",
  },
  {
    id: '2026-11-30-redis-limit-windows-service-clock',
    date: '2026-11-30',
    title: 'Limits on Redis: windows end by the service clock',
    kind: 'CHANGED',
    description:
      "Limits on Redis (`REDIS_URL`): a limit counter now ends with its window on the service's clock, as in the in-process store, instead of when Redis's own time said its window was over; an instance whose clock ran behind Redis's used to see its windows end early and let more requests through than the per-minute, per-route, batch and IP limits allow (found by the orders limit suites on PostgreSQL + Redis, where 189 batch legs passed a 120 limit). Redis drops a counter a minute after its window. Tests: in the e2e suites' PostgreSQL + Redis pass, the secrets-leak check searches every stored row, readiness and error-log cases expect the engine in use, and a spawned server process can be asked to run on the pass's PostgreSQL and Redis.",
  },
  {
    id: '2026-11-30-cluster-failover-fixed',
    date: '2026-11-30',
    title: 'Cluster failover is dependable again',
    kind: 'CHANGED',
    description:
      "**Cluster failover is dependable again (issue 24).** The cluster suite's kill -9 case had failed since the day's merges: its four clients streamed every order on one API key, past `POST /orders`' limit of 60 a minute per key (every attempt counts, 503s included), so once the faster order path let that stream reach its 61st order within a clock minute, every order after it \u2014 including all those after the kill \u2014 was `429 RATE_LIMITED` until the minute ended. The service's failover itself was not at fault: the writer's lock is released by PostgreSQL at once on a kill -9, and a survivor's term began 0.13 to 2.3 s after it in every run. The suite now streams from twelve keys, each within the limit, checks that it stays within it, and has a new case: revoking a key on one instance closes its WebSockets on all three (4401 `API_KEY_REVOKED`) and the key is then refused everywhere. Measured from the kill to the first order acknowledged after it, in thirteen runs on this 2-core machine shared with five other engineers' test suites: 0.3 to 2.8 s in eleven runs (load average 19 to 38), 4.4 and 4.5 s in two runs at 32 and 34 (the bound is 5 s; the time after the takeover is CPU: restoring the engine and re-quoting the house); every acknowledged order was found afterwards and every order in the gap was answered 503 `WRITER_UNAVAILABLE` with `Retry-After: 1`. `CLUSTER_LOGS_DIR` keeps the instances' logs of a cluster suite run.",
  },
  {
    id: '2026-11-30-cluster-redis-outage',
    date: '2026-11-30',
    title:
      'Cluster mode: Redis stopping and returning; health probes answer for their own instance',
    kind: 'CHANGED',
    description:
      '**Cluster mode: Redis stopping and returning.** With three instances on one PostgreSQL and one Redis, stopping Redis keeps every instance serving: platform routes (sessions, API keys, webhook endpoints) answer everywhere with limits failing open; the world\'s writer keeps serving its world; the other instances answer world-bound requests at once with `503 WRITER_UNAVAILABLE` and `Retry-After: 1` (a request already handed to the writer waits at most its 3 s deadline plus 1 s). The health probes now answer for the instance they reach: `GET /health` and `GET /health/ready` were forwarded to the paper world\'s writer, so every other instance failed its probes while Redis was down (and during a failover\'s gap); they answer `200` there now, readiness with `"redis": "unavailable"`. When Redis is back, even empty, forwarding works again within 10 s (measured about 1 s, 3 s on a heavily loaded machine) and WebSocket clients of the other instances are resynced (a fresh orderbook snapshot holding the outage\'s orders, a skipped `seq` on `orders`, `fills`, `positions`, `wallet` and `trades`), then hear live events. A new cluster case (`test/cluster/redis-outage.cluster-spec.ts`, `npm run test:cluster -- test/cluster/redis-outage.cluster-spec.ts`) checks all of it. No new setting.',
  },
  {
    id: '2026-11-30-postgres-500s-fixed',
    date: '2026-11-30',
    title:
      'PostgreSQL: large starting balances, Idempotency-Key in worlds and concurrent cancel-on-disconnect no longer answer 500',
    kind: 'CHANGED',
    description:
      "Three answers of 500 that only PostgreSQL showed are fixed (found by running the e2e suites with `TEST_DATABASE=postgres`). `POST /sandbox/worlds` with a `starting_balance_cents` above 2,147,483,647 (the documented maximum is 1,000,000,000,000) was refused by a 4-byte column. Inside an ephemeral world, every request with an `Idempotency-Key` failed, because the record's owner (`<world>:<user id>`, 53 characters) did not fit a 40-character column. Platform migration 1763769600037 makes `worlds.starting_balance_cents` a `bigint` and widens `idempotency_records.owner_id` to 60 characters on PostgreSQL; SQLite is unchanged. Two `POST /orders/cancel-on-disconnect` calls for one key at the same moment could both try to insert the key's setting, and the second failed. Enabling is now one insert-or-update statement. On SQLite neither case failed. In the e2e harness, `TEST_DATABASE=postgres` now also runs the restart cases that start `node dist/main.js` (webhooks spool kill -9, RFQ kill -9) on the run's PostgreSQL and Redis.",
  },
  {
    id: '2026-11-30-bench-cluster',
    date: '2026-11-30',
    title: 'npm run bench:cluster: 1 and 3 cluster instances beside SQLite',
    kind: 'ADDED',
    description:
      "**`npm run bench:cluster`.** One run measures `POST /api/v1/orders` through 1 and through 3 instances on one PostgreSQL and one Redis (cluster mode, load spread round-robin, non-writers forwarding to the paper world's writer) beside the SQLite single process, with `bench:orders`' load generator: orders/s and p99 at saturation (33 connections), server CPU per order, and p99 at an evenly paced rate of half the 1-instance saturation rate. Then realtime delivery across instances (subscribers on B and C on `orderbook:<market>` and the private `orders` channel while orders go through A, latency from the order's write and from its acknowledgement). For every phase it gives the CPU-seconds and share of wall time of each instance, PostgreSQL (postmaster and all its backends), redis-server and the load generator, and how long each process waited for a CPU. It starts and stops its own PostgreSQL and Redis (`npm run services`), prints a table and writes `bench/results/cluster-<date>.json`. It exits non-zero if a request gets any answer other than 2xx or `503 WRITER_UNAVAILABLE` (counted and printed), or if a delivery does not arrive within 20 s. Measured on the shared 2-core machine at load average 20 to 26, where orders/s are what the service got rather than what it can do, over two runs: SQLite 188 and 113 orders/s at 0.94 and 1.26 ms of server CPU per order; one cluster instance 184 and 81 at 1.74 and 3.46 ms (instance, PostgreSQL and Redis); three instances 168 and 41 at 2.98 and 6.06 ms, so more instances did not add order throughput. Cross-instance delivery p99 was 23 s and 18 s. In the first run 684 of 1,400 deliveries per channel did not arrive within 20 s and the bench failed. Followers fall behind a sustained order stream: on each remote batch (at most every 200 ms) a follower rebuilds the world's whole engine from PostgreSQL on its main thread, which took 40% of a follower's wall time in a CPU profile. See the README's cluster benchmark section.",
  },
  {
    id: '2026-11-30-test-passes-projects',
    date: '2026-11-30',
    title: 'Test passes as Jest projects; lint beside the build and Jest',
    kind: 'CHANGED',
    description:
      "The test command can run every pass of issue 24 in one Jest run: beside the unit specs (`unit`) and the e2e suites on SQLite (`e2e`), the same suite files on PostgreSQL + Redis (`e2e-pg`: the harness's engine is chosen per project by a setup file that sets `TEST_DATABASE` in each of its test files' environment, so the two workers interleave both engines; one PostgreSQL cluster and redis-server per run, started by that project's global setup only when one of its files runs; its seeded template databases are now built once per run and shared by every suite file, not migrated and seeded again by each, about 8 CPU-seconds less per suite file) and the cluster suite (`cluster`, with its 3-minute timeout). One line of `jest.config.js` (`DEFAULT_PASSES`: `'sqlite'`, `'sqlite+cluster'` or `'all'`) chooses what `npm test` runs, `TEST_PASSES` overrides it for one run, and `npm run test:pg` / `npm run test:cluster` select their project. `DEFAULT_PASSES` is `'sqlite+cluster'`: `npm test` runs the unit specs, the SQLite pass and the cluster suite, not yet the PostgreSQL pass, which does not pass (most of its suite files still fail). On a fresh machine the files run longest first across all projects: an `e2e-pg` suite weighs its SQLite seconds times 1.5, the cluster suite its measured seconds (`test/cluster/case-seconds.json`). The lint (ESLint, Prettier) now runs at `nice 10` beside the compile-and-build step and Jest instead of before Jest, taking the cycles they leave; `npm test` still fails when it fails.",
  },
  {
    id: '2026-11-30-cluster-mode',
    date: '2026-11-30',
    title: 'Cluster mode: several instances on one database',
    kind: 'ADDED',
    description:
      "**Several instances on one database.** With both `DATABASE_URL` and `REDIS_URL` set, any number of instances serve the same worlds from one PostgreSQL database and one Redis behind any load balancer: each world has one engine writer, elected with a PostgreSQL advisory lock and fenced in every commit, which runs its commands and timers; a request of a world that reaches another instance is checked there (limits, credential, scopes, Idempotency-Key) and answered by the writer, as if served locally. When a writer dies another instance takes over within seconds (0.9 to 3.0 s measured), losing no acknowledged order; requests in the gap are answered `503 WRITER_UNAVAILABLE` with `Retry-After: 1`. Cancel-on-disconnect runs on the writer whichever instance the socket was on. `npm run test:cluster` runs three instances and checks it (seven cases, the kill -9 failover included, all passing; Redis stopping and returning in a file of its own). The kill -9 case had failed for a while after this day's other merges because of the test, not the service (see the entry on cluster failover).",
  },
  {
    id: '2026-11-30-concurrency-several-instances',
    date: '2026-11-30',
    title: 'Idempotency, MFA and caps hold across several instances',
    kind: 'CHANGED',
    description:
      "Several instances on one database: the rules that used to hold only because one process served the database now hold in the database itself. Identical requests under one Idempotency-Key, on any instances at once, run exactly once; a duplicate that loses the race by a moment now gets the winner's stored answer (Idempotent-Replayed: true) instead of 409 IDEMPOTENCY_KEY_IN_USE when the winner has answered already. An instance that starts no longer releases the keys its running peers hold (which could run a request twice); the keys of an instance that stopped are settled by the next instance to start and, on PostgreSQL, by every running instance within a minute (409 IDEMPOTENT_REQUEST_APPLIED if the request changed an engine, else released). MFA step-up takes a code's time step with one conditional write (a code steps up once, even sent in parallel to several instances), and each attempt takes one of the 5 attempts of its credential's budget before its code is checked: a parallel burst of guesses has at most 5 checked, the rest answer 429 MFA_LOCKED at once. Of two parallel re-enrolments with one step-up, one answers 201 and the other 403 MFA_STEP_UP_REQUIRED. MAX_API_KEYS_PER_USER, MAX_WORLDS_PER_USER and the 10 verification emails a day are counted and written under a lock of the user's row, so parallel creations never exceed them. A verification token used twice at once verifies once (the other 422 VERIFICATION_TOKEN_INVALID); parallel acceptances of the developer terms both answer 200 (one could answer 500).",
  },
  {
    id: '2026-11-30-postgres-exports',
    date: '2026-11-30',
    title: 'Data exports on PostgreSQL; one-round-trip reset commit',
    kind: 'ADDED',
    description:
      "Data exports now run on PostgreSQL, new in this release: one known case does not finish yet (an export in the live world created after the sandbox clock was moved forward 7 days stays RUNNING). They keep the same jobs, limits, formats and sha256 as on SQLite. A job's worker thread reads its rows through a `pg` client of its own, in keyset pages on `row_seq`, a bigint identity column. Engine migration 1763769600031 adds `row_seq` to each exported table on PostgreSQL and numbers the rows already there; SQLite keeps reading the rowid, and ephemeral worlds cloned on PostgreSQL get their own sequences. A sandbox reset on PostgreSQL now sends its engine commit (the orders, positions and ledger deletes, the balance and the RESET row, with BEGIN and COMMIT) as one round trip instead of seven. This uses writes deferred to the transaction's next round trip (`runDeferred` in the SQL port). `bench:reset` takes `--orders` and `--runs` and times each part of a reset.",
  },
  {
    id: '2026-11-30-redis-key-prefix',
    date: '2026-11-30',
    title: 'Redis key prefix, and the e2e suites on PostgreSQL + Redis',
    kind: 'ADDED',
    description:
      "**Redis key prefix; the end-to-end suites on PostgreSQL + Redis.** Every Redis key and channel now starts with a per-deployment prefix (`REDIS_KEY_PREFIX`; default `svc:<hash>:` of the database the instances share, so several deployments can use one Redis without seeing each other's limit windows, event streams, cancel-on-disconnect counts or signals). `npm run test:pg` is now the PostgreSQL + Redis pass: one throwaway cluster and `redis-server` per run, every test app on its own database with `REDIS_URL` set. Tests that reached into SQLite files (triggers planted to make a commit fail, `sqlite_master`, world files) now use engine-neutral helpers (`failWrites`, `indexesOf`, `queryPlan`, `openDatabaseOf`, `worldDatabaseExists`, `copyDatabaseOf`), with unchanged assertions.",
  },
  {
    id: '2026-11-30-lean-order-route',
    date: '2026-11-30',
    title: 'Leaner POST /orders, and npm run bench:orders-ab',
    kind: 'CHANGED',
    description:
      "**Leaner POST /orders (issue 23).** The order route's handler reads its credential and body from the request instead of `@Cred()`/`@Body()` parameters, so no global ValidationPipe promise chain runs per order on a body Fastify's JSON Schema has already validated (the order body was never a class-validator DTO; answers and error bodies are unchanged). Its 201 answer is written by a serializer compiled from a JSON Schema of the order (fast-json-stringify) instead of a generic JSON.stringify. Fastify's per-request logger becomes a pino child only if something logs through it; a sandbox scenario's match facts are read only for a user holding scenarios; the JSON body checks (nesting depth, value count) skip their JS walks when the body is too short to break them. `npm run bench:orders-ab` compares two builds of the service in one run (this checkout against `BENCH_BASELINE=<another built checkout>`, rounds alternating), printing the candidate's server CPU per order as a share of the baseline's.",
  },
  {
    id: '2026-11-30-engine-position-pretenure',
    date: '2026-11-30',
    title: 'Engine: positions allocated straight in the old generation',
    kind: 'CHANGED',
    description:
      "Engine: an account's position in a market is now allocated where V8 can place it straight in the old generation (an object-literal allocation site, which V8 pretenures once it sees its objects survive), instead of being copied twice by the young-generation collector. An engine with thousands of accounts creates positions at close to order rate, and that copying was about two thirds of what each scavenge had to move. Measured on the engine bench's seeded 1M-operation workload against the previous build, back to back on the same (heavily loaded) machine: half the collector pause time and a third less data copied per run, and 116.6k \u2192 125.8k operations per CPU second (1.42x \u2192 1.76x nodejs-order-book per CPU second in the same runs). No behaviour, event, snapshot or API changed.",
  },
  {
    id: '2026-11-30-mfa-postgresql',
    date: '2026-11-30',
    title: 'MFA step-up safe under concurrency on PostgreSQL',
    kind: 'CHANGED',
    description:
      "MFA on PostgreSQL: a user's enrolment and step-ups now run one at a time in the instance. On PostgreSQL (`DATABASE_URL`) the same TOTP code sent several times at once could step up more than once, and a burst of wrong codes could slip past the five-attempt lock, because parallel requests read the last used time step and the wrong-code count before any of them wrote it (on SQLite, synchronous I/O kept each request's reads and writes together). `test/e2e/access-mfa.e2e-spec.ts` now passes on both engines.",
  },
  {
    id: '2026-11-30-orders-pipeline',
    date: '2026-11-30',
    title: 'Leaner POST /orders pipeline',
    kind: 'CHANGED',
    description:
      "**Leaner POST /orders pipeline.** The request pipeline's onRequest and preHandler stages now finish at once when none of them has to wait (no Idempotency-Key, no sandbox scenario fired, per-IP ceiling off), chaining through a promise only when one does, and a request's place in its connection's order is kept on the request rather than in a per-request WeakMap entry; every stage still runs, in the same order, with the same headers and errors, and the OpenAPI document is unchanged byte for byte. `npm run bench:orders` now warms each server up for 8 s (`BENCH_WARMUP_SECONDS`) before the measured rounds, since 3 s left the service still compiling its hot code in round 1, and it prints the share of each server's CPU that ran on its main thread (the rest is garbage-collector and compiler helpers and worker threads such as the WAL checkpointer).",
  },
  {
    id: '2026-11-30-postgresql',
    date: '2026-11-30',
    title: 'PostgreSQL behind DATABASE_URL',
    kind: 'ADDED',
    description:
      "PostgreSQL behind `DATABASE_URL` (issue 24, first part). The service's raw SQL now goes through one synchronous port (`src/common/sql`: `SqlConnection`, `SqlStatement`, `SqlTransaction`), the part of better-sqlite3's `Database` it uses, which a better-sqlite3 connection satisfies as it is, so the SQLite path is unchanged. `PgSyncConnection` implements the port on PostgreSQL: `pg` clients in a worker thread, the caller blocking in `Atomics.wait` for each answer, SQLite SQL carried over by `toPostgres`, results read as SQLite's (64-bit counts as numbers, refused past 2^53; booleans as 1/0), unique violations recognised, nested transactions as savepoints, and an async batch call beside the synchronous ones for the coming pipelined group commit. With `DATABASE_URL=postgres://\u2026/db` (validated at start, never echoed) the platform, live and paper databases are schemas of that database, each ephemeral world a schema cloned in one transaction from a template schema and dropped with the world; the SQLite WAL checkpointer is not started there. One instance runs per database: a second started on the same database is refused (exit 78, naming `DATABASE_URL`), and data exports do not run on PostgreSQL yet. `TEST_DATABASE=postgres` boots the e2e harness on a throwaway cluster (a fresh database per app boot), `npm run test:pg` runs the e2e suites that way, a conformance spec runs the same cases on both engines, and `npm run bench:sql-port` / `npm run bench:reset -- --postgres` measure a statement's round trip and a sandbox reset on PostgreSQL.",
  },
  {
    id: '2026-11-30-event-stream',
    date: '2026-11-30',
    title: 'Realtime across instances: the committed-event stream on Redis',
    kind: 'ADDED',
    description:
      'Realtime across instances: with `REDIS_URL`, committed engine events travel between API instances on one Redis stream per world (`events:{<world>}`, about the last 10,000 batches), so a WebSocket client sees the orders, fills and book changes of its world whichever instance committed them \u2014 each batch once and in order, with no added latency on the instance that committed it. A reader that may have missed batches (the stream trimmed past it, Redis restarted, a publisher that could not reach Redis, its own reconnect) resyncs instead of pretending continuity: orderbook subscribers get a fresh snapshot, ticker subscribers every ticker, and the trades and private engine channels skip one `seq` (documented: messages lost, resubscribe). With Redis away orders are still served and delivered on the committing instance, with at most one warning every 30 s; when it returns the other instances resync. Webhooks and MARKET_RESOLVED notifications stay produced once, by the committing instance.',
  },
  {
    id: '2026-11-30-cross-instance-invalidation',
    date: '2026-11-30',
    title:
      'Several instances: revoked keys, webhook endpoints and cancel-on-disconnect shared through Redis',
    kind: 'ADDED',
    description:
      "Several instances on one Redis (`REDIS_URL`) now keep each other's in-process state current: revoking or rotating an API key on any instance drops it from every instance's key cache (so, once instances share one database, its old secret is refused everywhere at once; today each instance checks keys against its own database) and closes its WebSocket connections everywhere with the same 4401 `API_KEY_REVOKED` / `API_KEY_ROTATED` close as on one machine; tier approvals and webhook endpoint changes (create, update, secret rotation, disable, reactivate, suspension, world deletion) drop the cached key and endpoint list on every instance; and, should a signal be missed while Redis is away, cached keys and endpoints are read again at least every 5 s and open realtime sessions' keys are rechecked every 5 s. Cancel-on-disconnect counts a key's realtime connections over every instance: `GET /api/v1/orders/cancel-on-disconnect` reports the total, the key is armed once (by the instance whose close left no connection anywhere, or that swept an instance stopped for 5 s) and disarmed by a connection returning to any instance; while Redis is away each instance falls back to its own count. Without `REDIS_URL` nothing changes.",
  },
  {
    id: '2026-11-30-cluster-building-blocks',
    date: '2026-11-30',
    title: 'Cluster building blocks (writer election, fencing, forwarding), not yet wired',
    kind: 'ADDED',
    description:
      'Cluster building blocks, not yet wired (issue 24): `src/modules/cluster` holds the parts several API instances on one PostgreSQL database will need, built and tested against real PostgreSQL and Redis but not used by the service yet, which still runs one instance per database (a second is refused at start) and neither forwards commands nor fails over. The parts: writer election per world with a PostgreSQL session advisory lock on a dedicated connection (a standby retries every 500 ms); a fencing epoch per world (new platform table `cluster_writers`, created by the migrations and empty for now) that every commit of a writer checks first in its transaction, so a deposed writer cannot commit after its successor took over; and command forwarding to the writer over Redis Streams, answering `503 WRITER_UNAVAILABLE` with `Retry-After: 1` when no writer is present, none answers in time or Redis is down, and never running a command after its caller was answered 503. Measured takeover after kill -9 of the writer process: 45\u2013503 ms, median 340 ms over 10 runs. The design is in docs/cluster.md.',
  },
  {
    id: '2026-11-30-portable-sql',
    date: '2026-11-30',
    title: 'Portable SQL for SQLite and PostgreSQL, and a statement check',
    kind: 'CHANGED',
    description:
      "Portable SQL: every plain SQL statement the service runs is now written in the subset SQLite and PostgreSQL 15 both accept, and `toPostgres` carries it over mechanically (`?` and `@name` to `$n`, `INSERT OR IGNORE` to `ON CONFLICT DO NOTHING`, `json_each` to `json_array_elements_text`). Optional filters cast their parameter (`CAST(@x AS TEXT) IS NULL`), boolean columns are compared with `TRUE`/`FALSE`, `IS ?` became `IS NOT DISTINCT FROM ?`, camelCase result aliases are quoted (PostgreSQL would have folded them to lower case), the crypto candle upsert uses `CASE` instead of SQLite's two-argument `MAX`/`MIN`, and comment and leaderboard authors are read with one JSON-array statement instead of an `IN` list of varying length. Behaviour on SQLite is unchanged. A new check PREPAREs every listed statement on a throwaway PostgreSQL and compares each query's column names with SQLite's; the e2e harness fails on any statement missing from that list, and `npm run sql:statements` regenerates it.",
  },
  {
    id: '2026-11-30-crypto-walk-failed-store',
    date: '2026-11-30',
    title: 'Crypto walks: steps of a failed price store are kept, not lost',
    kind: 'CHANGED',
    description:
      "Crypto indices in ephemeral worlds: a `POST /sandbox/clock` advance whose price store failed (a full disk, a locked database) used to lose the walk steps it crossed, so the world's prices went out of step with its clock. Now a failed store puts the walk back as it was (price, step count and the seeded generator) and the steps are owed: the next advance or crypto read takes them, on the very path the same seed gives. The on-clock walks of the live and paper engines likewise keep the boundaries of a failed catch-up for the next one.",
  },
  {
    id: '2026-11-29-e2e-suites',
    date: '2026-11-29',
    title: 'Tests: end-to-end case files run as 27 suites',
    kind: 'CHANGED',
    description:
      "Tests: the end-to-end case files (`test/e2e/*.e2e-spec.ts`, unchanged) now run as 27 suite files (`test/e2e/suites/*.e2e-suite.ts`) that import them, each case file under its own describe block, so Jest links and evaluates the app's module graph (Nest, TypeORM, Fastify, class-validator, rxjs and the service's ~400 modules, about 2.4 s of CPU) once per suite instead of once per case file. Jest refuses to start when a case file is imported by no suite or by two; a longest-first test sequencer orders the suites by the measured seconds of their case files (`test/e2e/suites/case-seconds.json`) when Jest has no timing cache, as on a fresh CI machine. `npm run test:file -- <case file>` runs one case file alone.",
  },
  {
    id: '2026-11-29-test-prefix',
    date: '2026-11-29',
    title: 'Test command: five checks side by side, better-sqlite3 built beside the lint',
    kind: 'CHANGED',
    description:
      "Test command, before Jest: `npm test` now runs ESLint, Prettier, `tsc -b`, the web app's build and a better-sqlite3 binding check side by side (`scripts/ensure-sqlite-binding.js` builds the binding only when it does not load); `.ci/run` installs with `npm ci --ignore-scripts`, so SQLite's single-core compile (about 160 CPU-seconds) runs beside the lint and the compile instead of alone before them, and installs chromium, postgresql and redis-server with one `apt-get update`, `--no-install-recommends` for all of them (about 160 fewer packages for Chromium's recommends, never used headless), beside npm's download. The unused dev dependency `@nestjs/testing` is removed. No check was dropped or weakened: every lint rule, the type-aware ESLint rules, Prettier, both typechecks, the build and every test still run.",
  },
  {
    id: '2026-11-29-e2e-shared-browser',
    date: '2026-11-29',
    title: 'Tests: one Chromium per browser test file, fewer boots, waits on events',
    kind: 'CHANGED',
    description:
      "Faster, steadier e2e case files (issue 21's time budget), every rule asserted as before: the browser tests share one Chromium per Jest test file (`sharedBrowser` in test/support/browser.ts, closed after the file's last test; each test still opens its own context and checks for console errors and requests to other hosts); realtime-key-lifecycle boots one service instead of four, audit-platform shares its identically configured services (five in-process boots fewer), data-exports-crash seeds its 200,000 trades beside the running service (three child-process boots instead of four); cancel-on-disconnect waits for the cancellations and for the sweep's own \"failed, retrying\" log line instead of fixed sleeps, and the realtime heartbeat, forgotten-channel and shutdown-answer checks wait for the event itself rather than for a fixed slice of wall time that a loaded machine can miss.",
  },
  {
    id: '2026-11-29-e2e-client-raw-http',
    date: '2026-11-29',
    title: 'Tests: a lean HTTP client for request-heavy e2e files; steadier shutdown tests',
    kind: 'CHANGED',
    description:
      "Tests only, no change to the service: the e2e client that sends thousands of requests (schema fuzz, rate limits) writes and reads HTTP/1.1 on its kept-alive sockets itself instead of going through node:http's client, which cut the schema-fuzz file's CPU by 4 to 16 per cent in two measurements on a loaded machine, with the same 200 valid and 200 invalid bodies per write operation; and the shutdown and request-timeout tests check from the log which way the server closed, with time limits set against the configured deadlines, so a loaded CI machine no longer fails them on a slow exit.",
  },
  {
    id: '2026-11-29-mends-exports-openapi',
    date: '2026-11-29',
    title:
      'ORDERS export cancel_reason, world export files in boot recovery, shared OpenAPI headers',
    kind: 'CHANGED',
    description:
      "The ORDERS data export carries `cancel_reason` (after `status`), as the orders CSV export does; POST /sandbox/reset's description says what a world key clears. Boot recovery also removes the export files of a world that has no registry row (found by its orphan file or key). The OpenAPI document states each shared response header once under `components.headers` and refers to it with `$ref` (2.7 MB to 1.7 MB; the header names on each response are unchanged).",
  },
  {
    id: '2026-11-29-ws-coalesce',
    date: '2026-11-29',
    title: 'WebSocket fan-out: opt-in coalesced writes (WS_COALESCE_MS); bench:ws --runs',
    kind: 'ADDED',
    description:
      "WebSocket fan-out writes can be coalesced (`WS_COALESCE_MS`, 0 to 5 ms, default 0: off): engine-event messages (ticker, orderbook, trades, orders, fills, positions, wallet) are then written at most once per `WS_COALESCE_MS`, so under a steady stream a connection's messages leave together in one socket write, each still its own WebSocket message with its own `seq`, and `ts`/`time` still the commit time. A message waits at most `WS_COALESCE_MS`; one after a quiet spell leaves at once; order on a connection is kept (waiting messages go before any later answer, snapshot, error or close). `npm run bench:ws -- --runs 10` measures ten 8-second windows on one server and reports each run's p99 and how many met p99 \u2264 10 ms.",
  },
  {
    id: '2026-11-29-bench-orders-cpu',
    date: '2026-11-29',
    title: "bench:orders shows where each server's time goes at saturation",
    kind: 'CHANGED',
    description:
      '`npm run bench:orders` now shows where each server\'s time goes at saturation: its CPU in cores, the shares of the wall time its event loop ran on a CPU and waited for one (from `/proc/<pid>/schedstat`), its CPU with no load at all, and the service-to-reference ratio per server CPU second beside the orders/s ratio (all in `bench/results/orders.json`). They settle the finding that the service "idled at saturation" on the shared machine: its event loop was busy (utilisation 0.94-1.00) but waited on the run queue 71-79% of the time, as the reference\'s did; no timer, limiter, lock or fsync in the service holds requests. API behaviour is unchanged.',
  },
  {
    id: '2026-11-29-engine-lazy-id-index',
    date: '2026-11-29',
    title: 'Engine: final orders indexed by id only after a lookup misses',
    kind: 'CHANGED',
    description:
      "Engine hot path (issue 23, partial): orders that end without ever resting (IOC takers, filled takers and makers) are no longer hashed into the engine's order-id table at retirement once any lookup has missed; a lookup that misses first indexes only the retention ring's entries retired since the previous miss, so most final orders leave the ring without ever being indexed (on the bench:engine workload, 111k instead of 276k id-table inserts per 400k operations). The position index stores each slot's account and market keys side by side in one typed array (a hit touches two cache lines instead of three). Behaviour is unchanged: `getOrder`, `ORDER_NOT_OPEN` within the 10,000-order retention window and the duplicate-id checks answer as before. The effect on bench:engine is within the noise of a loaded machine, and the 5x target over nodejs-order-book is not met (about 1.0x wall, 1.2\u20131.4x per CPU second); the issue's closing note lists what the profile shows is left.",
  },
  {
    id: '2026-11-29-trading-stores',
    date: '2026-11-29',
    title: 'Trading stores and the sandbox-only note written in one place',
    kind: 'CHANGED',
    description:
      "Internal restructuring, no API change: the trading repository is split into typed stores (orders and trades, ledger, positions, markets, idempotency effects, quote holds, webhook spool), services read the engine through narrow runtime methods instead of reaching into it, and the sandbox-only note of each sandbox control's OpenAPI description is now written from the operation's rule in one place (the webhook workbench's operations now also name 403 SANDBOX_DISABLED).",
  },
  {
    id: '2026-11-29-worlds-rfq',
    date: '2026-11-29',
    title: 'RFQ inside ephemeral worlds; every group serves worlds',
    kind: 'ADDED',
    description:
      "Ephemeral worlds now serve RFQ with a world key, exactly as in the shared paper world but with that world's records only: RFQs and quotes are stored in the world's file and are 404 from the paper world and other worlds (and the other way round), the world's house responder quotes every RFQ from the world's own reference price with its collateral held in the world's engine, an accepted quote trades in the world's engine (order, trade, position and wallet of the world only), and RFQs and quotes expire on the world's clock: `POST /sandbox/clock` with the world key ends those it makes due before answering, and nothing in the paper world or another world. The `rfq` realtime messages, the `rfq.quote_received`, `rfq.quote_accepted` and `rfq.expired` webhooks and the RFQ notifications of a world reach that world's sockets, endpoints and inbox only, the realtime messages and webhook events carrying `world_id`. `POST /sandbox/reset` with a world key cancels that world's RFQs and quotes (`cleared.rfqs`, `cleared.rfq_quotes`); deleting or expiring a world removes them with its file; an OPEN RFQ survives an idle unload and a restart. With RFQ, data exports and crypto, every group now serves ephemeral worlds, so no operation answers 422 `WORLD_OPERATION_UNSUPPORTED` any more (the code is gone); the demo app shows the RFQ panel inside a world.",
  },
  {
    id: '2026-11-29-worlds-crypto',
    date: '2026-11-29',
    title: 'Crypto inside ephemeral worlds; crash recovery of half worlds',
    kind: 'ADDED',
    description:
      "Ephemeral worlds now serve crypto. A world has its own `BTC-USD`, `ETH-USD` and `SOL-USD` indices, seeded from the world's `seed` and kept in its file. Its walk steps only when the world's clock is advanced (one step per multiple of `CRYPTO_TICK_INTERVAL_MS` its offset crosses, at most 1000 per advance), never with the passing of time, so the same seed and the same requests give the same prices. `GET /crypto/prices` and `GET /crypto/prices/{symbol}/history` with a world key read the world's indices. `POST /sandbox/crypto/{symbol}/price` with a world key sets that world's index only; it was refused inside a world, because it used to set the shared paper index. `crypto:<symbol>` messages of a world carry `world_id` and reach that world's sockets only. The world's crypto markets resolve from its index as its clock passes their close time. `POST /sandbox/reset` with a world key starts the world's indices again from their seeded prices (`cleared.crypto_candles`, always 0 in the shared paper world, whose indices it leaves alone). Boot recovery of half worlds is complete: besides worlds left `CREATING` or `DELETING`, a boot now removes `READY` worlds whose file is missing or cut short (key revoked, not recreated empty), deletes world files and partial copies that have no registry row, and revokes world keys whose world has no row. A create now copies the template to a `.part` file and renames it into place, so a crash mid-copy never leaves a partial world file.",
  },
  {
    id: '2026-11-29-worlds-exports',
    date: '2026-11-29',
    title: 'Data exports inside ephemeral worlds',
    kind: 'ADDED',
    description:
      "Data exports work inside ephemeral worlds: with a world key, `/data/datasets`, `/data/exports` and the estimate read the world's own file (its markets, trades, index points, and the caller's orders, fills and ledger there), the jobs and their files belong to the world (`DATA_DIR/exports/worlds/<wld_id>/`, `404 NOT_FOUND` from the paper world and from other worlds), READY exports expire 7 days later on the world's clock, `POST /sandbox/reset` with the world key deletes them, and deleting or expiring the world stops its running exports and removes their files; an export keeps running when its world is unloaded for idleness, and one a restart cut short is re-queued when its world is next opened. At most 2 exports per user run at once over all worlds together. The `ORDERS` dataset gains a `self_trade_prevention` column after `post_only` (CSV and JSONL), and the `GET /data/datasets` operation's description lists every dataset's columns.",
  },
  {
    id: '2026-11-29-request-pipeline-stages',
    date: '2026-11-29',
    title: 'Request pipeline: one file per stage, per-route stage plans',
    kind: 'CHANGED',
    description:
      "The request pipeline now lives in `src/common/http/pipeline/`, one file per stage (connection order, request context and headers, JSON body, deprecation and sunset, per-IP limit, method checks, credential, key state, signature, environment routing, scope, per-key and per-route limits, operation inputs, idempotency, sandbox scenarios, request log), assembled in order by `pipeline.ts`; answers, status codes, headers and the order of refusals are unchanged. Each route's stages are decided once when it is registered, from its `@Endpoint` metadata, so a request runs only the stages that apply to its route (no deprecation, path-shadow, batch-leg, idempotency or scenario work where none can apply), and the per-request line is built only when LOG_LEVEL lets it be written. API-key lookups hash the key with Node's one-shot SHA-256, and the order command is built without copying objects. `npm run bench:orders` takes `BENCH_SERVICE_ONLY=1` to load the service alone (with `BENCH_PROF=<dir>`, a CPU profile of the order path).",
  },
  {
    id: '2026-11-29-engine-order-id-table',
    date: '2026-11-29',
    title: 'Engine: orders by id in a typed-array table; bench:engine per CPU second',
    kind: 'CHANGED',
    description:
      "Engine: orders are found by id through an open-addressing table over typed arrays instead of a string-keyed map (same ids, same answers; the matching engine does 1.3x to 1.5x the work of nodejs-order-book per CPU second on the benchmark's order flow, up from 1.2x, and its p99 fell from about 0.9 to about 0.65 of nodejs-order-book's). `npm run bench:engine` now reads every command's events as the service does, reports ops per CPU second beside wall-clock ops/s (and their ratio to the peer), and takes `--only product|peer` to profile one engine.",
  },
  {
    id: '2026-11-29-faster-test-boots',
    date: '2026-11-29',
    title: 'A faster test command: lint beside the compile, shared boots',
    kind: 'CHANGED',
    description:
      "The test command is faster, with every test kept: the lint runs beside the compile instead of before it; end-to-end boots in every test file reuse the OpenAPI document built once per run (the served document is unchanged byte for byte) and Jest resolves the sources' `.js` imports through a cached resolver; configuration values that are refused are checked in-process (one real `node dist/main.js` per exit path still checks exit 78 and the one-line message), and the suites that start the service as a process (boot, listen failures, graceful shutdown) run their cases side by side.",
  },
  {
    id: '2026-11-29-limits-tests-faster',
    date: '2026-11-29',
    title: 'Faster limits tests',
    kind: 'CHANGED',
    description:
      "Tests only, no behaviour change: the limits suites boot the app once per configuration instead of once per test (limits 13 boots to 4, limits-tiers 8 to 1), start each test on a fresh minute of the test clock, and send the requests that only fill a rate-limit window concurrently through a lean keep-alive client (also in the lifecycle and Explorer per-IP tests), while the request at each limit's boundary is still sent alone and asserted exactly (status, code, X-RateLimit-*, Retry-After, body); the slow-limit-store handshake test waits for the store to be asked instead of fixed sleeps that a loaded machine could miss.",
  },
  {
    id: '2026-11-29-explorer-by-tag',
    date: '2026-11-29',
    title: 'API Explorer: one tag at a time',
    kind: 'CHANGED',
    description:
      'The API Explorer (`/explorer`) shows one tag\'s operations at a time, picked in an "Operations of" selector above the document (`/explorer#/<Tag>` opens on one; a test key authorized under one tag stays authorized under the next): swagger-ui 5.33 stopped rendering operations part-way through once the document passed about a hundred paths, which the documented world clock route (`POST /sandbox/clock`) crossed. In the demo app, a quote the feed announces no longer wipes the confirmation of the RFQ you just requested.',
  },
  {
    id: '2026-11-29-scrypt-cost-faster-tests',
    date: '2026-11-29',
    title: 'PASSWORD_SCRYPT_COST and a faster test command',
    kind: 'CHANGED',
    description:
      'New setting `PASSWORD_SCRYPT_COST`: the scrypt cost N of new password hashes (a power of two from 1024 to 1048576, default 32768 as before; below 32768 is refused with `APP_ENV=production`). Stored hashes keep the N they were made with, so existing accounts log in unchanged, hashes above the old fixed 64 MiB scrypt memory limit now verify, and a login for an unknown email costs what the configured N costs. The test command is faster: its apps hash at N=1024 (except the production ones and the test of the default), TypeScript compiles the service once for both the build and the test typecheck (`tsc -b tsconfig.test.json`), and tests that asserted wall-clock windows a loaded machine can miss (the 10,000-order reset, the house RFQ quote, webhook deliveries beside a slow endpoint) assert the same rules without them.',
  },
  {
    id: '2026-11-29-ci-example',
    date: '2026-11-29',
    title: 'CI example, world switcher, bench:worlds',
    kind: 'ADDED',
    description:
      "**Testing your integration in CI; world switcher in the demo app; `bench:worlds`.** A runnable example, `examples/ci-world.test.mjs` (plain Node 20: `node:test`, `node:assert`, `fetch`, no dependencies; `SVC_BASE_URL` and `SVC_TEST_KEY`), creates a seeded ephemeral world, trades against the house on its seeded path, injects a `REJECT` (`INSUFFICIENT_FUNDS`) and a `RATE_LIMIT` scenario and sees both marked `Svc-Scenario`, forces webhook failures with `simulate-failures` and drives the retries to the dead letter by advancing the world's clock, replays it to a local receiver, and deletes the world (its key then 401 `API_KEY_REVOKED`); the README section \"Testing your integration in CI\" shows how to run it against `npm start` and in GitHub Actions, and the test suite runs it on every build. Fixed on the way: webhook endpoints created with a world key were never delivered to (the delivery worker only polled the live and paper endpoints); a world's deliveries are now attempted, and due, retried and dead-lettered on the world's own clock. The demo app (`/app/worlds`) lists your worlds, creates one (name, seed, lifetime), switches the tab's REST calls and realtime feed to it with the header naming the active world, switches back to the shared paper world, and deletes one. `npm run bench:worlds` measures world create/delete latency, the memory of a loaded idle world and order throughput in a world against the shared paper world (figures in the README).",
  },
  {
    id: '2026-11-29-worlds-groups',
    date: '2026-11-29',
    title: 'More groups inside ephemeral worlds',
    kind: 'ADDED',
    description:
      "Ephemeral worlds now serve watchlists, comments, notifications, market creation (`POST /markets`, `PATCH /markets/{id}`, `POST /markets/{id}/resolve`), sports events (reads and `POST /sandbox/sports/events/{id}/final`), rank (leaderboard and history) and indices with a world key, exactly as in the shared paper world but with that world's records only: nothing of a world is visible from the paper world or another world, slugs and watchlist names are unique per world, event status, market close times and rank and index samples follow the world's own clock, and `POST /sandbox/reset` with a world key clears that world's watchlists, comments, notifications and scenarios. Deleting or expiring a world removes all of it, including its notifications kept in the platform database. A world key's sports final now ends the world's event (it used to end the shared paper event), and `POST /sandbox/crypto/{symbol}/price` is refused inside a world (it used to set the shared paper index). RFQ, data exports and crypto still answer 422 `WORLD_OPERATION_UNSUPPORTED` inside a world.",
  },
  {
    id: '2026-11-29-world-clocks',
    date: '2026-11-29',
    title: 'World clocks and world_id',
    kind: 'ADDED',
    description:
      "Ephemeral worlds keep their own time: POST /sandbox/clock called with a world's key moves that world's clock only, whatever SANDBOX_CLOCK_CONTROL says (outside a world it is still 404 unless the control is on; the route is now listed in the OpenAPI document, so other methods on it answer 405), at most ten years ahead (else 400 naming advance_seconds). A world's per-key and per-route limit windows, quotas, idempotency expiry, key expiry and signature window, and its markets' close follow the world's clock, so advancing world A resets A's windows while the paper world and other worlds stay limited; MFA step-ups and locks stay the user's, on the service clock. Webhook events and engine-channel realtime messages of a world carry world_id, now documented as an optional field in the OpenAPI webhook schemas and the AsyncAPI messages. Fixed: webhook deliveries of an ephemeral world's endpoints were never attempted (they stayed PENDING), and a world loaded for the first time while any realtime socket was open overflowed the stack.",
  },
  {
    id: '2026-11-29-schema-last-rules',
    date: '2026-11-29',
    title: 'Request schemas: the last rules',
    kind: 'CHANGED',
    description:
      'Request schemas now say what the server enforces for the last operations that disagreed, checked by a test that sends 200 schema-valid and 200 schema-invalid bodies generated from the served `/openapi.json` to every write operation (all but `POST /sandbox/scenarios` and the world clock). Webhook `url` has a `pattern` (absolute http(s) URL with a host, a port 1..65535, no credentials, fragment, spaces or control characters; https only in production), and a well-formed host name that does not resolve is now `422 WEBHOOK_HOST_UNRESOLVED` (was 400). `rotate_signing_secret: true` on a key without `signing_required` is now `409 API_KEY_HAS_NO_SIGNING_SECRET` (was 400). The sandbox crypto price pattern excludes zero. Watchlist and data-export `market_ids` items state the market id pattern; an export\'s `market_ids` is stated (with `if`/`then`) to be only for datasets with markets, its `start`/`end` as an RFC 3339 date or date-time, and a well-formed market id this world does not have is now `404 NOT_FOUND` with `details.market_id` (was 400). RFQ quote `bid` and `ask` are stated as 1..99 (what the server takes) with "a bid, an ask or both" as `if`/`then`.',
  },
  {
    id: '2026-11-29-export-pacing',
    date: '2026-11-29',
    title: 'Data exports give way to requests',
    kind: 'CHANGED',
    description:
      "Data exports give way to the requests served beside them: the count a create or estimate of a large export needs now runs in a worker thread instead of on the request thread; the export worker writes its file about 1 MB at a time on its own (lowered-priority) thread instead of the shared libuv pool, flushes it to disk every 8 MB instead of in one long fsync at the end, and paces itself (after each 20 ms of work it rests half as long), so an export takes about 1.5 times as long as flat out. The README now states which rows an export holds and as of when: the rows up to its snapshot bound at creation, each exactly once, read in short batches (no long read transaction pinning the write-ahead log), with rows that can change (MARKETS, ORDERS, the current crypto candle) exported as they are when their batch is read. `bench:exports` now alternates orders-alone and during-export phases (A B A B ..., `BENCH_ROUNDS`, default 3), takes the ratio from the phases' median p99s, and reports per phase the WAL restarts, the server's per-thread CPU time and, with `BENCH_STALLS`, its event-loop stalls.",
  },
  {
    id: '2026-11-29-order-path-bench',
    date: '2026-11-29',
    title: 'Order path benchmark beside a reference server',
    kind: 'CHANGED',
    description:
      "`npm run bench:orders` now measures POST /api/v1/orders side by side with a lean reference server (Fastify + better-sqlite3, one durable insert per order) in the same run, alternating reference and service over at least two rounds with the same load generator and request stream, and reports the orders/s ratio, the server CPU per order of each and the p99 of each at half the reference's saturation rate, evenly paced (bench/results/orders.json). Inside, placing an order is one use case (`orders/use-cases/place-order`), engine results become API errors in one module for orders, RFQ, wallet and sandbox controls, and the orders, wallet, positions and sandbox-controls services read through the engine runtime instead of its repository and engine; the API's behaviour is unchanged.",
  },
  {
    id: '2026-11-29-engine-composition',
    date: '2026-11-29',
    title: 'Engine v2: composition and a leaner hot path',
    kind: 'CHANGED',
    description:
      "**Engine v2: composition and a leaner hot path (issue 23).** The matching engine's five-level inheritance chain (`EngineCore \u2192 EngineQueries \u2192 EngineAdmin \u2192 EngineRestore \u2192 EngineRfq \u2192 MatchingEngine`) is replaced by composition: `MatchingEngine` is a fa\u00e7ade with the same public API over small collaborators, each in its own file under 400 lines (`Matcher`, the one place where an incoming order meets resting makers and self-trade prevention decides; `OrderEntry`; `OrderCancels`; `EngineAdmin`; `EngineRestore`; `EngineRfq`; `EngineQueries`), sharing the markets, an `EngineLedger`, an `OrderRegistry` and the quote `HoldBook`. On the hot path, open and retained final orders share one id map (an order that rested is set once and deleted once, instead of moving between two maps when it ends), and positions are found through an open-addressing table keyed by numeric account and market indexes instead of a per-market map keyed by account id. No API, event or rule changed; every engine unit and property test passes unchanged. `npm run bench:engine` on a heavily loaded shared machine: see the README for the figures; the 5x target against `nodejs-order-book` is not reached yet.",
  },
  {
    id: '2026-11-29-batch-legs-schemas',
    date: '2026-11-29',
    title:
      "Batch legs answer their own 400; one wording for validation messages; request schemas state the server's rules",
    kind: 'CHANGED',
    description:
      'POST /orders/batch answers an invalid leg in its own result (400 VALIDATION_FAILED, fields named as POST /orders names them) while the valid legs run; only an invalid envelope (orders missing, not an array, empty, over 20 legs, another top-level field) refuses the whole batch, and the OpenAPI text says so. Validation messages have one form: every details.fields[].message reads "<field> must ..." (e.g. "colour must not be sent (not a known field)", "price must be present", "limit must be given at most once"), and a single-field answer\'s message is "Invalid request: " and that text. The OpenAPI request schemas now state what the server enforces: minItems/uniqueItems on webhook events, the patterns of 6-digit codes, ids and email addresses (now one regular expression on the server too: plain ASCII, a dot-atom local part, a top-level domain of letters), bounds and enums read from the validators, and the order body\'s conditional rules (LIMIT needs price; MARKET takes no price and is IOC or FOK; post_only needs LIMIT GTC) as if/then. An empty query value (?limit=) is 400 VALIDATION_FAILED naming it, stated as minLength 1. Date-time inputs accept every RFC 3339 date-time, lower-case t and z and leap seconds included; February 30 and hour 24 are refused.',
  },
  {
    id: '2026-11-29-ephemeral-worlds',
    date: '2026-11-29',
    title:
      'Ephemeral worlds: private, reproducible paper worlds with their own key, clock and file',
    kind: 'ADDED',
    description:
      "Ephemeral worlds: `POST /sandbox/worlds` creates a private paper world in milliseconds (its own books, house, price feed seeded by `seed`, accounts, clock and records, in its own file) and answers a key that reaches only that world; `GET /sandbox/worlds`, `GET /sandbox/worlds/{id}` and `DELETE /sandbox/worlds/{id}` (the key stops at once with 401 `API_KEY_REVOKED`). Worlds expire after `ttl_seconds` (60..86400, default 3600), at most 20 live worlds per user (422 `WORLD_LIMIT_REACHED`), are unloaded from memory when idle and loaded again on demand. Inside a world `POST /sandbox/clock` moves that world's clock and feed only, so the same seed and requests replay the same prices and fills; webhook events and realtime messages of a world carry `world_id`; the groups that live in the shared paper world answer 422 `WORLD_OPERATION_UNSUPPORTED` there.",
  },
  {
    id: '2026-11-29-self-trade-prevention',
    date: '2026-11-29',
    title:
      'Self-trade prevention: self_trade_prevention on orders (CANCEL_TAKER, CANCEL_MAKER, CANCEL_BOTH)',
    kind: 'ADDED',
    description:
      "Self-trade prevention: an order no longer trades with a resting order of its own account. The new order field `self_trade_prevention` (on `POST /orders`, each `POST /orders/batch` leg and `POST /orders/quote`) picks what happens when it would: `CANCEL_TAKER` (the default) cancels the incoming order's rest, `CANCEL_MAKER` cancels the resting order and keeps matching, `CANCEL_BOTH` cancels both; fills made before stand and ended orders carry the new `cancel_reason` `SELF_TRADE_PREVENTION`. Orders show the mode in REST, the CSV export, the realtime `order.accepted` message and the `order.created` webhook. Behaviour change: quotes and MARKET-order funds checks no longer count your own resting orders, and an order that used to fill against your own order is now cancelled at that point (orders placed earlier take `CANCEL_TAKER`).",
  },
  {
    id: '2026-11-29-exports-worker-threads',
    date: '2026-11-29',
    title: 'Data exports run in worker threads, off the thread that serves requests',
    kind: 'CHANGED',
    description:
      "Historical data exports now run off the main thread: each running export job reads, formats, hashes and writes its rows in its own worker thread on a read-only connection to its world's engine database (WAL lets it read beside the writer), and reports progress and its result by message; the thread serving requests keeps the job's lifecycle (QUEUED/RUNNING/READY/FAILED, 2 running and 10 kept per user, notices, webhook, expiry). Orders placed during a big export no longer queue behind its batches. `DELETE /data/exports/{id}`, a sandbox reset and shutdown terminate a running job's worker at once; a worker that fails or crashes leaves its job FAILED with the error and no file; a job cut short by a shutdown or crash is still re-queued at the next boot. `EXPORT_BATCH_ROWS` is now the rows per batch of the worker. No API change.",
  },
  {
    id: '2026-11-29-engine-bench-side-by-side',
    date: '2026-11-29',
    title:
      'Engine: the order book behind one interface, a handle-based book, and bench:engine beside nodejs-order-book',
    kind: 'CHANGED',
    description:
      "**Engine v2, first steps (issue 23).** `npm run bench:engine` now runs this engine and the npm package `nodejs-order-book` 10.1.1 side by side in one process on the anchor's seeded workload (100 markets, 60% limit / 25% cancel / 10% IOC / 5% reduce, about 4,100 resting orders, 1M measured operations after 100k warm-up), alternating the engines over rounds, and prints both engines' ops/s and p50/p99 and their ratio (written to `bench/results/engine.json`). The engine's order book sits behind an `OrderBook` interface with one contract suite that both implementations pass, invariants checked after every step; the engine now uses a book whose resting orders are integer handles into typed-array storage, with intrusive FIFO price levels; orders that trade or expire on arrival no longer enter the engine's id map. No API, event or persistence change: every engine, property and restore test passes unchanged.",
  },
  {
    id: '2026-11-29-demo-app-rfq-panel',
    date: '2026-11-29',
    title: "The demo app's Request for quote panel; a bad configuration stops the boot in a second",
    kind: 'ADDED',
    description:
      "The demo web app (`/app`) has a Request for quote panel on each market page: ask for a price on a quantity, see the quotes arrive live on the private `rfq` channel with their expiry counting down (replaced, expired and cancelled quotes marked as such), accept one side of one (with an `Idempotency-Key` per click) or cancel the RFQ, with the resulting position and wallet shown in the existing panels and refusals in the API's words; it fits a 375 px phone screen. A bad configuration value now stops the service before its modules load, so the `Invalid configuration` message and exit 78 arrive in about a second. The test command is faster: end-to-end boots copy migrated and seeded databases made once per run instead of migrating and seeding each time.",
  },
  {
    id: '2026-11-29-signature-replay-redis',
    date: '2026-11-29',
    title:
      'Signed requests are single-use (401 SIGNATURE_REPLAYED); REDIS_URL shares limits across instances',
    kind: 'CHANGED',
    description:
      "Signed requests are now single-use: a signature already accepted within the 300-second skew window is refused with `401 SIGNATURE_REPLAYED` (HTTP and the realtime auth message alike; listed under every operation's 401 in the OpenAPI document), so retries must be signed afresh with a new timestamp. A new optional `REDIS_URL` moves the limit windows, quotas and the signature replay cache to Redis, so several API instances share them: a batch is charged all or nothing in one Lua script, requests keep being served (fail-open) while Redis is away, and readiness reports `checks.redis`. `npm run services` starts a throwaway local PostgreSQL cluster and redis-server and prints `DATABASE_URL` and `REDIS_URL`.",
  },
  {
    id: '2026-11-29-api-explorer',
    date: '2026-11-29',
    title: 'The API Explorer at /explorer (test keys only), and clearer first errors',
    kind: 'ADDED',
    description:
      "The API Explorer: GET /explorer (staging only: 404 with APP_ENV=production) renders the served OpenAPI document with swagger-ui served by the service itself (no CDN), sends its try-it calls to the origin serving it (or the staging server listed), takes test keys only (a live key is refused in the page and never sent) and marks every request with Svc-Client: api-explorer; such a request carrying a live key is now refused on every route with 403 LIVE_KEY_EXPLORER, before the key is used. /explorer and /app count in the per-IP category app-shell (300 a minute). A request whose Origin equals its own scheme and Host is not cross-origin: the service's own pages send credentialed requests, while any other origin is still refused with CORS_ORIGIN_REJECTED. What an integrator meets first: 422 MARKET_NOT_OPEN names the market's status in its message and in details.status; an order that ends EXPIRED says why in cancel_reason (FOK_UNFILLABLE for a FOK that could not fill whole, IOC_REMAINDER for what an IOC or MARKET order could not fill at once), over REST, the CSV export, the realtime orders channel and the order.expired webhook (orders that expired earlier keep null); a 415 tells to send application/json in its message, in details.accepted_media_types and in an Accept header; realtime positions messages carry the fields of GET /positions/cursor (side, quantity, average_price, cost_basis_cents, unrealized_pnl_cents, mark_price) beside the ones they had; the public OpenAPI text no longer names an internal file; npm start rebuilds only when the sources changed since the last successful build, so a start on a current dist/ takes seconds.",
  },
  {
    id: '2026-11-29-demo-web-app',
    date: '2026-11-29',
    title: 'A demo web app at /app',
    kind: 'ADDED',
    description:
      "A demo web app is served at /app: sign in with email and password (the session mints one test key for the browser tab, kept in sessionStorage and reused while valid; never a live key), markets with prices moving live over the WebSocket, a market page with the live order book, recent trades and a price chart, an order ticket (LIMIT and MARKET, YES and NO, BUY and SELL), open orders you can amend and cancel, positions, wallet and transactions, the sandbox controls (reset, fund, move the price, resolve), watchlists and comments (rendered as text). It reconnects the WebSocket after a drop and re-fetches what it shows, shows API errors in their message, and fits a phone screen. It is built by npm run build into dist/app (Vite), served from the service under a Content-Security-Policy of 'self' only; /app paths that are not files serve the page (deep links), a missing asset is 404, and without a build /app is 404 while the API runs on. CORS: a request whose Origin is the origin it was sent to (scheme and Host) is same-origin and served as a first party's; other origins are refused as before with 403 CORS_ORIGIN_REJECTED.",
  },
  {
    id: '2026-11-29-webhook-workbench',
    date: '2026-11-29',
    title: 'Webhook workbench: simulated failures, sample events, the attempt log',
    kind: 'ADDED',
    description:
      "Webhook workbench, for test endpoints. `POST /webhooks/{id}/simulate-failures {count (1..1000), mode: HTTP_500|TIMEOUT|CONNECTION_REFUSED}` makes the endpoint's next `count` attempts fail without a request being sent. Retries, dead letters, health, automatic suspension and replay then behave as they would with a real failing receiver. A second call replaces the pending count and mode. `GET` shows what is pending, `DELETE` clears it, and a restart keeps it. A live key gets 403 LIVE_KEY_SANDBOX_ENDPOINT. `POST /webhooks/{id}/test` takes an optional `{type}` and sends a realistic sample of any event type (webhook.test by default); samples other than webhook.test go to test endpoints only. The OpenAPI document now describes every event body under `webhooks`. `GET /webhooks/{id}/deliveries/{delivery_id}` returns the delivery with its `attempt_log`. Each attempt shows the request as sent (headers including the signature, never a secret, and the body), the response status, the first 4 KiB of the response body, the duration, an outcome (SUCCEEDED, HTTP_ERROR, TIMEOUT, CONNECTION_REFUSED, CONNECTION_ERROR, BLOCKED), whether it was simulated, and the error. Webhook endpoints now carry `previous_secret_expires_at`, the end of the rotation grace window (null when none is running). The delivery worker now reads up to 4 KiB of each answer, within the same timeout, for the log.",
  },
  {
    id: '2026-11-29-sandbox-scenarios',
    date: '2026-11-29',
    title:
      'Sandbox scenarios: force rejections, partial fills, delays, 429s, 503s and dropped sockets',
    kind: 'ADDED',
    description:
      "Sandbox scenario injection: `POST /sandbox/scenarios` (with `GET`, `GET /{id}` and `DELETE /{id}`, tag Sandbox, test keys only) makes the next `times` (1..1000) paper-world requests of an operation, optionally only those about a market or whose `client_order_id` starts with a prefix, answer as a failing exchange would: REJECT with any error code the operation documents, PARTIAL_FILL (the order fills that much against the book and the rest is cancelled with the new `cancel_reason` `SCENARIO`), DELAY, RATE_LIMIT (429 with Retry-After), UNAVAILABLE (503 with Retry-After) or DISCONNECT (the key's WebSocket connections close with 1012). Shaped answers carry `Svc-Scenario`; the live world is never shaped; scenarios survive restarts and a sandbox reset clears them. Every operation in the OpenAPI document now lists its error codes in `x-error-codes`. An answer 429 is no longer stored under an Idempotency-Key, so a retry after Retry-After runs again.",
  },
  {
    id: '2026-11-29-rfq',
    date: '2026-11-29',
    title: 'Request for quote: binding two-way quotes that trade atomically off the book',
    kind: 'ADDED',
    description:
      'Request for quote (RFQ): `POST /rfq` asks approved responders for a two-way price on a quantity without revealing direction; responders (scope `rfq:respond` and an approved account, else 403 `RFQ_RESPONDER_NOT_APPROVED`) list OPEN RFQs with `GET /rfq/open` (no requester identity) and answer with binding quotes `POST /rfq/{id}/quotes {bid?, ask?, expires_in_seconds?}` whose larger side\'s collateral is reserved until the quote ends (a new quote replaces the previous one; `DELETE /rfq/quotes/{id}` withdraws it); the requester accepts one with `POST /rfq/quotes/{id}/accept {action, side}` (Idempotency-Key honoured), which trades the whole quantity atomically off the book: both parties get a FILLED order of `type: "RFQ"` with `rfq_id`, one trade of `source: "RFQ"` prints on `trades:<market_id>`, the resting book is untouched. `GET /rfq`, `GET /rfq/{id}`, `DELETE /rfq/{id}`, `GET /rfq/{id}/quotes`; at most 100 OPEN RFQs per user (422 `RFQ_LIMIT_REACHED`); new codes `RFQ_LIMIT_REACHED`, `SELF_QUOTE`, `QUOTE_SIDE_NOT_OFFERED` (422), `QUOTE_NOT_OPEN`, `RFQ_NOT_OPEN` (409). RFQs and quotes expire on the service clock; in the paper world a house responder quotes every RFQ within a second around the reference (`RFQ_HOUSE_SPREAD_CENTS`, default 4). New private realtime channel `rfq`, webhooks `rfq.quote_received`, `rfq.quote_accepted`, `rfq.expired`, notifications `RFQ_QUOTE_RECEIVED`, `RFQ_QUOTE_ACCEPTED`; a sandbox reset cancels your paper RFQs and quotes. Request for quote, engine side: accepting a quote is one atomic engine command that fills an order for each party (`type: "RFQ"`, with `rfq_id`) and books one trade between them off the book, with the same netting and money conservation as a book trade and in the same transaction as the RFQ\'s own rows; an OPEN quote\'s collateral is reserved (counted in `reserved_cents`) and survives a restart. Additive fields: `rfq_id` on orders (null on book orders) and `source` (`BOOK` or `RFQ`) on `GET /markets/{id}/trades` and the `trades:<market_id>` channel.',
  },
  {
    id: '2026-11-29-data-exports',
    date: '2026-11-29',
    title: 'Historical data exports, with an export-row quota in GET /usage',
    kind: 'ADDED',
    description:
      'Historical data exports (scope `data:read`): `GET /data/datasets` lists TRADES, MARKETS, INDEX_POINTS and CRYPTO_PRICES (public data of the key\'s world) and ORDERS, FILLS and LEDGER (your own); `POST /data/exports {dataset, start, end, market_ids?, format: CSV|JSONL}` queues a job (202) that streams the rows existing at creation to a file under DATA_DIR/exports in constant memory, at most 2 running per user, 10 kept per user and world (the 11th replaces the oldest finished one, or is 422 EXPORT_LIMIT_REACHED when none has finished), READY with record_count, size_bytes and sha256, then EXPIRED with its file deleted 7 days later on the service clock; `POST /data/exports/estimate` counts without writing; `GET /data/exports` and `/data/exports/{id}`; `GET /data/exports/{id}/download` serves the file with gzip on request, one byte Range (206, 416 RANGE_NOT_SATISFIABLE) and the sha256 as ETag (409 EXPORT_NOT_READY, 410 EXPORT_EXPIRED); `DELETE /data/exports/{id}` stops a running job and removes its file. Over EXPORT_MAX_ROWS is 422 EXPORT_TOO_LARGE; a crash mid-export re-queues the job at the next boot and never leaves a short READY file. A finished export notifies EXPORT_READY and sends the new webhook event `data_export.ready`. With metering on, exported rows (counted at creation) are charged to a monthly export-row quota per tier (FREE 1,000,000, PRO 50,000,000, ENTERPRISE 1,000,000,000), shown by `GET /usage` as `exports: {rows_month, rows_month_limit}`, past it 429 QUOTA_EXCEEDED (details.period "month"). A sandbox reset deletes your paper exports (`cleared.exports`). New settings EXPORT_BATCH_ROWS and EXPORT_SWEEP_MS.',
  },
  {
    id: '2026-11-29-creating-markets-and-csv-safety',
    date: '2026-11-29',
    title: 'Creating markets; formula-safe CSV exports',
    kind: 'ADDED',
    description:
      "Creating markets. New: POST /markets, PATCH /markets/{id} and POST /markets/{id}/resolve (scope markets:write), in the world of the credential. In the live world only accounts with the new CREATOR role may create (403 CREATOR_ROLE_REQUIRED); the seeded trader holds it, and CREATOR_EMAILS grants it like ADMIN_EMAILS. In the paper world any verified user may create, with at most 20 open markets each (422 MARKET_LIMIT_REACHED); the house quotes a new paper market at once at reference_price (default 50) and the feed moves it like a seeded one. Slugs are [a-z0-9-]{3,80} and unique per world (409 SLUG_TAKEN). A close_time in the past, or an index or strike off a CRYPTO market, is 422 MARKET_RULE_VIOLATED, and an unknown event_id is 404. A failed create leaves nothing in the engine or the database. The creator may rename a market, move its close_time, halt and reopen it (PATCH; anyone else gets 403 NOT_MARKET_CREATOR), and resolve it through the same engine path as the sandbox resolve, in either world. Markets record creator_id. CSV: every CSV the service writes, GET /orders/export included, prefixes a text cell that begins with =, +, -, @, a tab or a carriage return with ' (OWASP CSV injection); numbers stay numbers.",
  },
  {
    id: '2026-11-29-sports-and-crypto',
    date: '2026-11-29',
    title: 'Sports events and crypto reference prices, with markets that resolve from them',
    kind: 'ADDED',
    description:
      'Sports events: GET /sports (sports and leagues with event and market counts), GET /sports/events (keyset cursor; sport, league and status filters, the status following the service clock: SCHEDULED before start_time, LIVE from it, FINAL once scored) and GET /sports/events/{id}, readable without a key like GET /markets (a key needs sports:read; each world has its own events). Markets gain event_id. The seeds add 14 events in 4 sports, timed relative to the first start (past, live and upcoming), each with its own "Will <home> beat <away>?" market. New sandbox control POST /sandbox/sports/events/{id}/final {home_score, away_score} ends a paper event and resolves its linked paper markets by their rule (HOME_WINS, AWAY_WINS, OVER_<n>) through the same path as POST /sandbox/markets/{id}/resolve, paying holders; new error codes SPORTS_EVENT_FINAL (409) and SPORTS_EVENT_NOT_STARTED (422). Crypto reference indices and self-resolving crypto markets. Each engine walks BTC-USD, ETH-USD and SOL-USD: a seeded geometric walk in integer cents on the service clock, one step per CRYPTO_TICK_INTERVAL_MS (default 1000, 0 stops it). The paper walk is seeded from SANDBOX_FEED_SEED and the live walk from a fixed seed. New: GET /crypto/prices (crypto:read; a {data} list of {symbol, price, as_of}, prices as USD strings with 2 decimals); GET /crypto/prices/{symbol}/history (1m/1h/1d candles {time, open, high, low, close}, oldest first, cursor-paged, from/to windows of at most 366 days; candles kept 7 days, 90 days and 5 years); POST /sandbox/crypto/{symbol}/price (test keys: sets the paper index); and the realtime channel crypto:<symbol>. Markets gain index and strike, null except on crypto markets. The seeded BTC and ETH markets name theirs and resolve by themselves at close_time from their world\'s index, YES when strictly above the strike. They resolve through the same engine path as the sandbox resolve, exactly once, and at boot when the service was down at close_time.',
  },
  {
    id: '2026-11-29-users-comments-watchlists-notifications',
    date: '2026-11-29',
    title:
      'Profiles, comments, watchlists, world-scoped notifications with a realtime channel, and the public leaderboard',
    kind: 'ADDED',
    description:
      "Worlds: comments, watchlists and notifications belong to the world of the credential that made them (a test key or env:paper key: paper; a live key or a session: live; no credential: live), carry environment, and are never visible from the other world; POST /sandbox/reset also deletes your paper comments (one that other users replied to stays as a tombstone, so their replies stay), reports, watchlists and notifications and names how many in its new cleared field. Users: GET /api/v1/users/me (users:read), PATCH /api/v1/users/me (users:write; all or nothing; a test key is 403 TEST_KEY_LIVE_ENDPOINT; a taken username is 409 USERNAME_TAKEN) and the public GET /api/v1/users/{id_or_username} (never the email; a PRIVATE profile is 404 like an unknown user). Every account has a username ([a-z0-9_]{3,30}, unique, not starting with usr_ as account ids do), generated at sign-up and for every existing account at the upgrade as user_ and 8 random hex digits (nothing of the email); GET /auth/me names it. Comments: GET /api/v1/markets/{id}/comments (newest first; ?parent_id= a thread's replies, oldest first), GET /api/v1/comments/{id} (no key needed: live world), POST /api/v1/markets/{id}/comments (threads one level deep: 422 COMMENT_THREAD_TOO_DEEP; 10 a minute per user and world over all of the user's credentials of that world, every attempt counting; a market resolved more than 30 days ago refuses them), PATCH (the author, within 15 minutes: 403 NOT_COMMENT_AUTHOR, 409 COMMENT_EDIT_WINDOW_CLOSED, 409 COMMENT_DELETED), DELETE (soft: body null, replies stay) and POST /api/v1/comments/{id}/report (202; 409 ALREADY_REPORTED; 422 CANNOT_REPORT_OWN_COMMENT; five distinct reporters hide a comment from everyone but its author); a reply notifies the parent's author (COMMENT_REPLY). Watchlists: GET/POST /api/v1/watchlists, GET/PATCH/DELETE /api/v1/watchlists/{id}, POST /api/v1/watchlists/{id}/markets and DELETE /api/v1/watchlists/{id}/markets/{market_id}: markets in the order kept, priced by your world's engine; names unique per user and world ignoring case (409 WATCHLIST_NAME_TAKEN); 20 lists of 200 markets (422 WATCHLIST_LIMIT_REACHED with details.limit). Notifications: listed, read, counted (GET /api/v1/notifications/unread-count) and marked read in bulk (POST /api/v1/notifications/read-all {before?}, inclusive) in your world only; each new one also arrives on the private realtime channel notifications (notifications:read; in the AsyncAPI document); a holder of a market that resolves gets MARKET_RESOLVED. Notification cursors now name their world; a cursor issued before this change keeps working and pages the live world (where every earlier notification is). Rank: GET /api/v1/rank/leaderboard?period=DAY|WEEK|MONTH|ALL (no key needed: live world; a key needs markets:read and reads its world) ranks PUBLIC profiles by realized P&L over the period (competition ranking among them, ties by user id). Text fields (names, bios, comment bodies) are returned exactly as stored, count their lengths in Unicode code points and refuse control characters, bidirectional overrides and the byte order mark (one-line fields also the line and paragraph separators).",
  },
  {
    id: '2026-11-22-indices-and-rank-history',
    date: '2026-11-22',
    title: 'Market indices and rank history; their deprecated predecessors work',
    kind: 'ADDED',
    description:
      "GET /api/v1/indices: one index per market category plus all, the mean mark price (mid of best bid and ask, else last trade) of its OPEN or HALTED markets in YES cents, from the engine of the credential (public like GET /markets; a key needs markets:read). GET /api/v1/indices/{slug}/history: cursor list of points recorded at every multiple of INDEX_SAMPLE_INTERVAL_MS (default a minute) on the service clock, kept INDEX_HISTORY_DAYS (30). GET /api/v1/rank/history/cursor (wallet:read): your rank among the engine's participants by realized P&L (competition ranking), recorded at every multiple of RANK_SAMPLE_INTERVAL_MS (default daily, 00:00 UTC), kept RANK_HISTORY_DAYS (365). The deprecated GET /api/v1/data-exports/indices, /data-exports/indices/{slug}/history and /rank/history, announced with no sunset, now answer as their successors do, with the deprecation headers (they answered 404 NOT_FOUND before: the areas were not built). Boundaries passed while nothing sampled are not back-filled.",
  },
  {
    id: '2026-11-22-websocket-message-budget',
    date: '2026-11-22',
    title: 'A message budget per WebSocket connection; 404s name the missing id',
    kind: 'CHANGED',
    description:
      'Each realtime connection has a message budget: WS_MESSAGE_BURST units at once (default 2 x WS_MAX_SUBSCRIPTIONS + 50, so 250: auth, every channel subscribed and all of them resubscribed fit) and WS_MESSAGE_RATE a second after that (default 20). A message or protocol-level ping costs one unit on arrival; a subscribe pays a unit per channel it names, the rest when it is handled, and one the budget cannot cover then is answered RATE_LIMITED (details units and retry_after_ms) and subscribes nothing; messages waiting behind a pending auth may hold at most 1 MiB (else RATE_LIMITED and close 4429). A message past the budget is not handled (a refused protocol ping gets no pong): the first of a run is answered {"type":"error","code":"RATE_LIMITED"} with details retry_after_ms, limit_per_second and burst, later ones get nothing until a message is handled again. Refusals are forgiven at the same rate; a client that keeps sending far past its budget (more than a burst of refusals unforgiven) gets a last RATE_LIMITED error and close 4429 (the code of CONNECTION_LIMIT: the error before the close tells them apart). Before, messages on an open connection had no limit. A 404 for a resource names the id it did not find in details: key_id, endpoint_id, delivery_id, notification_id, tier_request_id (as market_id and order_id did).',
  },
  {
    id: '2026-11-22-contract-conformance-and-integrator-fixes',
    date: '2026-11-22',
    title:
      'The OpenAPI document matches every answer; resets forget their idempotency answers; realtime scopes',
    kind: 'CHANGED',
    description:
      "The OpenAPI document now describes every answer the service gives, checked by a test that validates real answers against it: public operations document 403 CORS_ORIGIN_REJECTED, every operation the answers given before routing (400 BAD_REQUEST for malformed HTTP, 417 EXPECTATION_FAILED, 431 HEADERS_TOO_LARGE), the legacy /openapi.json its 429; X-Request-Id and Svc-API-Version are marked required, as are Retry-After on 429 and the deprecation headers; the optional bodies of POST /orders/cancel-on-disconnect and POST /webhooks/{id}/rotate-secret are no longer marked required. POST /sandbox/reset forgets the stored Idempotency-Key answers of the paper requests whose orders and funding it deleted, so a suite that resets between runs can reuse its keys; webhooks get one account.reset event per reset. Realtime: a connection the server closes (a slow consumer, 4008) stops keeping its key's orders alive at once; at a restart, cancel-on-disconnect arms only keys with the websocket scope (a key that cannot connect never had a connection to lose). POST /api-keys/{id}/rotate takes an optional {rotate_signing_secret: true} that also replaces a signing-required key's signing secret (returned once; the old one stops at once); without it the signing secret stays, as before. A key name must show a visible character. A webhook attempt cut short by a crash or shutdown is counted in attempts at the next start (and one that was the last allowed dead-letters its delivery). Realtime messages carry time, the commit time in ISO-8601 (ts stays). The public POSTs (register, login, verify-email, sandbox clock) refuse unknown query parameters; on the admin operations, an unverified session is told EMAIL_NOT_VERIFIED only when verifying would make it an admin (ADMIN_EMAILS), else INSUFFICIENT_SCOPE. The document names 409 DUPLICATE_CLIENT_ORDER_ID and every 401's WWW-Authenticate. A user may hold at most MAX_API_KEYS_PER_USER (default 100) active API keys: one more is 422 API_KEY_LIMIT_REACHED (revoked and expired keys do not count), and a session's tier is read from the active keys only (thousands of keys made every session request slow, for everyone). A WebSocket handshake (GET /api/v1/ws) counts against the per-IP general ceiling like any request; past it the handshake is answered 429 RATE_LIMITED before any upgrade, and during a shutdown 503. Shutdown logs its steps.",
  },
  {
    id: '2026-11-22-exports-bodies-and-operations',
    date: '2026-11-22',
    title: 'Export filters, bodies read as sent, one service per DATA_DIR, a prompt shutdown',
    kind: 'CHANGED',
    description:
      "GET /orders/export takes status, market_id, created_from and created_to (an export over EXPORT_MAX_ROWS can be narrowed), holds the orders you had when it began, and no longer holds other requests while it streams; HEAD reads no rows. HTTP: a request without a body has none whatever its Content-Type (fetch's text/plain with body '' was 415, application/json on a DELETE was 400 MALFORMED_JSON); a body that is not UTF-8 is 400 MALFORMED_JSON; another charset, another +json media type or any Content-Encoding is 415 (Accept-Encoding: identity); a transfer coding other than chunked is 400; requests pipelined before a malformed one (or an upgrade, or CONNECT) are answered first, in order, and those behind an answer that closes the connection are not run (they could never be answered); a transfer coding that does not end with chunked is 400; answers carry Cache-Control: no-store (the OpenAPI document no-cache with its ETag), 401s WWW-Authenticate, socket-level answers Date; a HEAD 304 has no Content-Length; QUERY is 404/405 like any method no route takes. Idempotency-Key: 401 and 403 answers are not kept, so the same retry runs after the step-up or terms acceptance a 403 asked for. Realtime: a rotated key's connections close with API_KEY_ROTATED (was API_KEY_REVOKED). Keys: a rotation, revocation or tier decision that lost a race to another is 409 and changes nothing (a stale save could restore a revoked key); a tier decision reaches its requester as a notification (TIER_REQUEST_APPROVED or TIER_REQUEST_DENIED) and an email; rotating a test key while the sandbox is off is 403 SANDBOX_DISABLED. Operations: a second service on one DATA_DIR, an unwritable DATA_DIR, databases without their encryption key, a bad TRUSTED_PROXIES, HOST or SMTP_URL, and a port in use stop the boot with exit 78 and one line naming the cause; an operator-given SECRETS_ENCRYPTION_KEY no longer erases the generated one; shutdown answers 503 from its first moment and waits SHUTDOWN_DRAIN_MS, not a slow webhook receiver; npm start passes SIGTERM on. Production seeds no demo accounts (their password is public): ADMIN_EMAILS names the admins. API key names, webhook descriptions and tier-request reasons refuse control characters and bidirectional overrides (400 VALIDATION_FAILED; a name must also show something; line breaks are fine in a description or reason).",
  },
  {
    id: '2026-11-22-verification-resend-and-http',
    date: '2026-11-22',
    title: 'A new verification email on request; stricter HTTP handling',
    kind: 'ADDED',
    description:
      "POST /auth/verify-email/resend (the account's own session token; 3 a minute, and 10 verification emails in any 24 hours: 429 QUOTA_EXCEEDED beyond) sends a new verification token (48 hours) and voids the earlier unused ones, so an account whose token expired or whose email was lost can still be verified; 409 EMAIL_ALREADY_VERIFIED once it is. HTTP: a request whose headers and body have not all arrived within REQUEST_TIMEOUT_MS (30 s) is 408 REQUEST_TIMEOUT (a stalled body used to hold its connection for ever), never a second answer to a request answered already; more than one Host header, a Host that is not a host name, or an HTTP version other than 1.0 and 1.1 is 400 BAD_REQUEST; a fixed path asked with a method only its parametric sibling takes (GET /orders/batch, PATCH /orders/export) is 405 with that path's Allow header instead of a lookup of order 'batch'; /api/v1/ws without a WebSocket upgrade is 400 BAD_REQUEST (was 404) and other methods there 405, an HTTP/1.0 handshake is 400, and the 101 answer carries X-Request-Id and Svc-API-Version. A JSON body with a __proto__ key (or a constructor holding prototype) is 400 VALIDATION_FAILED naming it (was MALFORMED_JSON). API_TERMS_VERSION must name a real date. Cursors belong to the list that issued them, in its environment (cursors issued before this change are refused once: start the listing again): one from another list, or from another market's trades, is 400 VALIDATION_FAILED (\"a cursor of another list\") instead of a page starting somewhere else. A query value of the wrong type is told its type only (limit=abc: \"limit must be an integer number\"), not the range rules after it. An operation that takes no body refuses a non-empty one (400 VALIDATION_FAILED naming its fields; {} is no body). An unknown or bad API key on a session-only operation is 401 UNAUTHENTICATED, as CONTRACT.md says (was 403 SESSION_REQUIRED). A database a newer version migrated stops the boot (exit 78). The OpenAPI document names ORDER_NOT_OPEN, WEBHOOK_NOT_SUSPENDED and DELIVERY_NOT_DEAD_LETTERED where they occur and marks request bodies closed (additionalProperties: false).",
  },
  {
    id: '2026-11-22-limits-and-shapes',
    date: '2026-11-22',
    title:
      'One pending tier request per key, one trade object, batches limited before authentication',
    kind: 'CHANGED',
    description:
      "Tier requests: one request per key waits for review at a time; another is 409 TIER_REQUEST_PENDING (details.request_id, details.tier) and asking for the key's current tier is 409 TIER_UNCHANGED (older duplicate PENDING requests were DENIED, decided when the next one came in). Realtime: a trades:<market_id> message carries the object GET /markets/{id}/trades returns (adds no_price; taker_side is YES or NO, was BUY_YES or SELL_YES). An order or amend refused for INSUFFICIENT_FUNDS says by how much: details.required_cents and details.available_cents, beside market_id (and order_id on an amend). POST /orders/batch meets the per-IP orders ceiling before authentication, so a full bucket refuses a batch whatever its credential; legs that do not fit use none of the key's minute, route budget or quota. Webhooks: an endpoint starts at most what WEBHOOK_MAX_IN_FLIGHT has left. Idempotency-Key takes spaces inside; two Idempotency-Key header lines are 400. While the limit store is down, a route-limit refusal reports the key's real remaining minute. The OpenAPI document names every 422 code of placing and amending an order, the Idempotency-Key pattern and the X-Quota-* headers.",
  },
  {
    id: '2026-11-22-contract-fixes',
    date: '2026-11-22',
    title:
      'Verified email for writes by session, strict query parameters, a wallet stream that tracks reservations',
    kind: 'CHANGED',
    description:
      "A session of a user whose email is not verified holds no write scope: a write is 403 EMAIL_NOT_VERIFIED until the email is verified (keys already followed this rule); cancel-on-disconnect refuses any session with API_KEY_REQUIRED first. On every operation that takes a credential, a query parameter its OpenAPI entry does not list is 400 VALIDATION_FAILED (GET /orders/export?status=OPEN used to be answered unfiltered), and a parameter given twice is named as such; public operations (health, the documents, the changelog) take cache-busters as they are. The realtime wallet channel names paper money added FUNDING, as the ledger does (it said DEPOSIT), and sends a RESERVATION message (delta_cents 0) when only the reserved amount moves (an order rested, was amended or cancelled); reserved_cents and available_cents are those after the batch, on its last wallet message for the account (null on earlier ones), so they match GET /wallet. Requests to an operation past its sunset count against their per-IP category. HEAD is answered as GET is when no route matches (404, not a 405 naming HEAD). A market closes at its close_time: it reads CLOSED, orders and amends are 422 MARKET_NOT_OPEN, the house withdraws its quotes, resting orders can still be cancelled and a sandbox resolve still settles it. A forged cursor is 400; an expired key's tier request cannot be approved. With SANDBOX_CLOCK_CONTROL on, the clock's offset survives restarts (DATA_DIR/clock.json, at most ten years), so ledger and order pages keep their order; a deposit, withdrawal or funding always answers with the ledger row it wrote.",
  },
  {
    id: '2026-11-22-hardening',
    date: '2026-11-22',
    title: 'Crash-safe webhook events and idempotency, checks before validation, stricter inputs',
    kind: 'CHANGED',
    description:
      "An Idempotency-Key never runs a request twice across a crash: a retry of a request that placed orders or moved money but whose answer was lost (a crash, or a 5xx after the change) is 409 IDEMPOTENT_REQUEST_APPLIED naming its orders and ledger references; replayed error bodies carry the retry's request_id (the first one is in Idempotent-Original-Request-Id). Webhook events of an acknowledged order survive a crash: they are stored with the order and moved to the outbox after the commit (retried if that fails), each recorded once. A request is authenticated and charged against its limits before its body is validated: an anonymous malformed order is 401 (was 400), and invalid requests count against the route limits. POST and DELETE /orders/cancel-on-disconnect share one budget of 60 a minute. POST /orders/quote opens no account (a new caller is priced flat). Bodies holding more than 2,000 JSON values are 413; validation errors list at most 20 fields (details.fields_omitted counts the rest); a string or key with an unpaired surrogate escape is 400 VALIDATION_FAILED. Registering the same email concurrently is 409 EMAIL_TAKEN for all but one. Wrong MFA codes lock step-up for the kind of credential that sent them (the user's API keys, or the user's sessions), not the whole user: a leaked read-only key can no longer lock the owner's sessions out of step-up. Webhook deliveries answered 101 Switching Protocols fail and are retried (they stayed in flight for ever); NAT64 spellings of cloud metadata addresses are refused. Webhook URLs with control characters or leading or trailing spaces, an @ before the host, no host after //, or port 0 are refused. The OpenAPI document now states the headers every operation answers with (X-Request-Id, Svc-API-Version, X-RateLimit-*, Retry-After on 429, Idempotent-Replayed and the Idempotency-Key parameter on mutations, the deprecation headers), 409/422 for Idempotency-Key conflicts, 413/415 where a body is taken, the CSV and RSS media types, and that cancel-on-disconnect and the sandbox controls take an API key only. Realtime: client messages over 64 KiB close the connection with 1009; a client flooding pings it never reads is closed 4008 like any slow consumer; refused handshakes, requests without Host, odd Expect headers (417 EXPECTATION_FAILED) and CONNECT (405) are answered in the JSON error body.",
  },
  {
    id: '2026-11-22-trading-rules-tightened',
    date: '2026-11-22',
    title: 'Order caps for session tokens, CSV column name, realtime reset and close codes',
    kind: 'CHANGED',
    description:
      'Orders placed with a session token are held to MAX_OPEN_ORDERS_PER_KEY and to client_order_id uniqueness, counted per user; the open-order cap refuses only orders that can rest (MARKET, IOC and FOK still trade at the cap); POST /orders/quote honours ORDER_MAX_QUANTITY. The CSV export column fill_cost_cents is now filled_cost_cents, as in the order JSON. Realtime: a sandbox reset sends one orders message {"event":"account.reset"} and a flat position per market (the wallet gets one RESET message instead of two); an auth message with both api_key and token is refused (4401); an unexpected server error while authenticating closes 1011; a connection authenticated with a session token closes 4401 when the token expires; the per-IP connection limit honours X-Forwarded-For from TRUSTED_PROXIES. Security and limits: replacing an enrolled MFA authenticator needs a fresh step-up with the current one (403 MFA_STEP_UP_REQUIRED) and never lifts a lock; optional fields sent as null are refused with 400 VALIDATION_FAILED; HEAD shares the GET route limit; POST /orders/batch bodies the schema refuses count against the per-IP ceiling; route-limit and quota 429s carry every limit header. Webhooks: the first entry of WEBHOOK_RETRY_SCHEDULE delays the first attempt; cloud metadata addresses are refused even where private targets are allowed; slow endpoints no longer hold up others (WEBHOOK_MAX_IN_FLIGHT).',
  },
  {
    id: '2026-11-22-trading-and-realtime',
    date: '2026-11-22',
    title: 'Orders, wallet, positions, sandbox controls, the realtime feed and developer webhooks',
    kind: 'ADDED',
    description:
      'Orders on the live and paper engines (place, batch, quote, amend, cancel, cancel-all, cancel-batch, list, CSV export, cancel-on-disconnect); wallet, ledger and positions with cursor pagination (the offset lists /wallet/positions, /wallet/transactions and /notifications are deprecated in favour of the cursor variants); paper-world controls (reset, fund, price, resolve); the WebSocket feed at /api/v1/ws (described by /api/v1/asyncapi.json); developer webhooks with signed deliveries, replay, health and automatic suspension.',
  },
  {
    id: '2026-11-22-developer-platform',
    date: '2026-11-22',
    title: 'Accounts, API keys with scopes and tiers, request signing, limits and quotas',
    kind: 'ADDED',
    description:
      'Accounts and sessions, API keys (live and test) with scopes, rate tiers and optional HMAC request signing, MFA step-up, developer terms, Idempotency-Key on mutations, per-IP, per-key and per-route limits and metered quotas (GET /api/v1/usage).',
  },
  {
    id: '2026-11-22-sandbox-foundation',
    date: '2026-11-22',
    title: 'Sandbox exchange: public markets, OpenAPI 3.1 contract, changelog',
    kind: 'ADDED',
    description:
      'GET /api/v1/markets and /api/v1/markets/{id} (no key needed), health and readiness, the OpenAPI 3.1 contract at /api/v1/openapi/v1.json with ETag caching, and this changelog.',
  },
  {
    id: '2026-08-08-legacy-openapi-sunset',
    date: '2026-08-08',
    title: 'Legacy /openapi.json reached its sunset',
    kind: 'REMOVED',
    description:
      'GET /openapi.json now answers 410 SUNSET with a Link to /api/v1/openapi.json, its successor.',
  },
  {
    id: '2026-05-08-admin-operations-removed',
    date: '2026-05-08',
    title: 'Admin-gated operations removed from the public contract (approved breaking change)',
    kind: 'REMOVED',
    description:
      '25 admin-gated operations (disputes admin, moderation admin, rewards admin, geo lookup and stats, parlays and intelligence demo seeding) were never part of the developer surface and were removed; they answer 404. No migration is needed.',
  },
  {
    id: '2026-05-08-legacy-openapi-deprecated',
    date: '2026-05-08',
    title: 'Legacy /openapi.json deprecated; sunset 2026-08-08',
    kind: 'DEPRECATED',
    description:
      'GET /openapi.json redirects (308) to /api/v1/openapi.json with Deprecation, Sunset and Link headers until 2026-08-08.',
  },
  {
    id: '2026-05-08-offset-lists-deprecated',
    date: '2026-05-08',
    title: 'Offset list operations deprecated in favour of cursor variants',
    kind: 'DEPRECATED',
    description:
      'GET /api/v1/notifications, /rank/history, /wallet/positions, /wallet/transactions, /data-exports/indices and /data-exports/indices/{slug}/history are deprecated with no sunset scheduled; their successors are keyset (cursor) variants.',
  },
  {
    id: '2026-05-08-webhook-schema',
    date: '2026-05-08',
    title: 'Webhook event schema version 2026-05-08',
    kind: 'CHANGED',
    description: 'Webhook event envelopes carry schema_version "2026-05-08".',
  },
];

function xml(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** RSS 2.0 feed of the changelog. */
export function changelogRss(baseUrl: string): string {
  const link = `${baseUrl}/api/v1/changelog`;
  const items = CHANGELOG.map(
    (e) => `    <item>
      <title>${xml(e.title)}</title>
      <link>${xml(`${link}#${e.id}`)}</link>
      <guid isPermaLink="false">${xml(e.id)}</guid>
      <pubDate>${new Date(`${e.date}T00:00:00.000Z`).toUTCString()}</pubDate>
      <category>${e.kind}</category>
      <description>${xml(e.description)}</description>
    </item>`,
  ).join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0">
  <channel>
    <title>Sandbox exchange API changelog</title>
    <link>${xml(link)}</link>
    <description>Dated changes to the exchange API (v1)</description>
    <language>en</language>
    <lastBuildDate>${new Date(`${CHANGELOG[0].date}T00:00:00.000Z`).toUTCString()}</lastBuildDate>
${items}
  </channel>
</rss>
`;
}
