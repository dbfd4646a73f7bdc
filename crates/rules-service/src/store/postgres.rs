//! The shared store: PostgreSQL, for any number of rules-service replicas.
//!
//! - Schema: `chess_games` (one row per game: its event count and, while a clock runs, when
//!   the side to move's flag falls) and `chess_events` (one row per event, primary key
//!   `(game, seq)`, the event as JSON so that new event kinds need no schema change).
//! - An append is one statement: it bumps the game's event count only where it still equals
//!   the caller's `seq` and inserts the event in the same transaction, so of two replicas
//!   racing for one event number exactly one wins; the primary key on `(game, seq)` forbids
//!   a second event at one number whatever happens. The statement also sends a notification
//!   (`NOTIFY chess_game_events`), delivered only once the transaction has committed.
//! - Migrations are versioned and applied at start in one transaction under an advisory lock,
//!   so replicas starting together apply each migration exactly once.
//! - Connections come from a bounded pool; every statement has a timeout, and every call a
//!   client-side one (the database timeout and 500 ms): a database whose host vanished fails
//!   calls with UNAVAILABLE instead of hanging them, and a connection whose data stays
//!   unacknowledged that long is dropped by the kernel (`tcp_user_timeout`). A failure to reach
//!   the database is [`StoreError::Backend`] (the service answers UNAVAILABLE: retryable);
//!   a write whose connection broke after it was sent is [`StoreError::Unconfirmed`] (it
//!   may have committed: the service says the outcome is unknown).

use std::str::FromStr;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use futures::StreamExt;
use tokio::runtime::Handle;
use tokio::sync::mpsc;
use tokio_postgres::error::SqlState;
use tokio_postgres::{AsyncMessage, NoTls};

use super::{Change, GameStore, StoreError};
use crate::GameId;
use crate::event::Event;

/// The channel every append notifies, with payload `<game id>:<event count>`.
const CHANNEL: &str = "chess_game_events";
/// Key of the advisory lock held while migrating (any fixed number unique to this schema).
const MIGRATION_LOCK: i64 = 0x63_68_65_73_73_5f_76_31; // "chess_v1"
/// Polling interval while the notification connection is down.
const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// Versioned schema migrations, applied in order; never edit one that has shipped, add one.
const MIGRATIONS: &[(i32, &str, &str)] = &[(
    1,
    "games and their event logs",
    "CREATE TABLE chess_games (
         id uuid PRIMARY KEY,
         events integer NOT NULL CHECK (events > 0),
         flag_deadline_ms bigint,
         created_at timestamptz NOT NULL DEFAULT now(),
         updated_at timestamptz NOT NULL DEFAULT now()
     );
     CREATE INDEX chess_games_flag_deadline ON chess_games (flag_deadline_ms)
         WHERE flag_deadline_ms IS NOT NULL;
     CREATE TABLE chess_events (
         game uuid NOT NULL REFERENCES chess_games (id),
         seq integer NOT NULL CHECK (seq >= 0),
         body jsonb NOT NULL,
         PRIMARY KEY (game, seq)
     );",
)];

/// How to reach the database.
#[derive(Clone, Debug)]
pub struct PostgresOptions {
    /// `postgres://user:password@host:port/database` (or a key=value connection string).
    pub url: String,
    /// Most connections held at once.
    pub pool_size: usize,
    /// Longest a statement may run (and a call may wait for a connection).
    pub statement_timeout: Duration,
    /// How long start-up keeps retrying while the database is not reachable yet.
    pub start_wait: Duration,
}

impl PostgresOptions {
    pub fn new(url: impl Into<String>) -> PostgresOptions {
        PostgresOptions {
            url: url.into(),
            pool_size: 16,
            statement_timeout: Duration::from_secs(5),
            start_wait: Duration::from_secs(30),
        }
    }
}

/// The URL with any password replaced by `***`, for messages and logs.
pub fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return if url.contains("password") {
            "(connection string)".into()
        } else {
            url.into()
        };
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    match (authority.rfind('@'), authority.find(':')) {
        (Some(at), Some(colon)) if colon < at => format!(
            "{}{}:***{}",
            &url[..scheme_end + 3],
            &authority[..colon],
            &rest[at..]
        ),
        _ => url.into(),
    }
}

/// The PostgreSQL store. Its blocking [`GameStore`] methods must run outside the async
/// runtime's worker threads (the service calls them from `spawn_blocking`).
pub struct PostgresStore {
    pool: Pool,
    config: tokio_postgres::Config,
    handle: Handle,
    shown: String,
    /// The longest a store call may take in all, waiting for a connection included: the
    /// database timeout and a little slack for the server's own statement timeout to answer
    /// first.
    call_timeout: Duration,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("database", &self.shown)
            .finish_non_exhaustive()
    }
}

fn backend(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("PostgreSQL {what}: {e}"))
}

/// A failed statement that writes: refused by the server (rolled back, so not stored), or
/// lost with its connection after it was sent (it may have committed: unconfirmed).
fn write_failed(what: &str, e: tokio_postgres::Error) -> StoreError {
    if e.as_db_error().is_some() {
        backend(what, e)
    } else {
        StoreError::Unconfirmed(format!("PostgreSQL {what}: {e}"))
    }
}

fn uuid(id: GameId) -> uuid::Uuid {
    uuid::Uuid::from_u128(id.as_u128())
}

fn json(event: &Event) -> Result<String, StoreError> {
    serde_json::to_string(event).map_err(|e| StoreError::Corrupt(e.to_string()))
}

impl PostgresStore {
    /// Connects, waiting up to `start_wait` for the database, and applies the migrations.
    pub async fn connect(options: &PostgresOptions) -> Result<PostgresStore, StoreError> {
        let shown = redact(&options.url);
        let mut config = tokio_postgres::Config::from_str(&options.url)
            .map_err(|e| StoreError::Backend(format!("invalid database URL {shown}: {e}")))?;
        let timeout_ms = options.statement_timeout.as_millis().max(1);
        config
            .application_name("chess-rules-service")
            .connect_timeout(options.statement_timeout)
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(10))
            .keepalives_interval(Duration::from_secs(2))
            .keepalives_retries(3)
            // Data the server's host has not acknowledged for this long breaks the connection
            // (the kernel gives up on it): a vanished host is noticed within the timeout and
            // the pool makes a new connection rather than queueing behind a dead one.
            .tcp_user_timeout(options.statement_timeout)
            .options(format!(
                "-c statement_timeout={timeout_ms} -c lock_timeout={timeout_ms} \
                 -c idle_in_transaction_session_timeout={}",
                timeout_ms * 2
            ));
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(options.statement_timeout))
            .create_timeout(Some(options.statement_timeout))
            .recycle_timeout(Some(options.statement_timeout))
            .build()
            .map_err(|e| backend("pool", e))?;
        let store = PostgresStore {
            pool,
            config,
            handle: Handle::current(),
            shown,
            call_timeout: options.statement_timeout + Duration::from_millis(500),
        };
        let deadline = tokio::time::Instant::now() + options.start_wait;
        loop {
            match store.migrate().await {
                Ok(()) => return Ok(store),
                Err(StoreError::Backend(e)) if tokio::time::Instant::now() < deadline => {
                    tracing::warn!(database = %store.shown, error = %e, "database not ready; retrying");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Err(e) => {
                    return Err(match e {
                        StoreError::Backend(e) => {
                            StoreError::Backend(format!("{}: {e}", store.shown))
                        }
                        e => e,
                    });
                }
            }
        }
    }

    /// Applies the migrations this binary knows and the database lacks; refuses a database
    /// migrated by a newer binary.
    async fn migrate(&self) -> Result<(), StoreError> {
        let mut client = self.pool.get().await.map_err(|e| backend("connect", e))?;
        let txn = client
            .transaction()
            .await
            .map_err(|e| backend("migrate", e))?;
        txn.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .await
            .map_err(|e| backend("migration lock", e))?;
        txn.batch_execute(
            "CREATE TABLE IF NOT EXISTS chess_schema_migrations (
                 version integer PRIMARY KEY,
                 description text NOT NULL,
                 applied_at timestamptz NOT NULL DEFAULT now()
             )",
        )
        .await
        .map_err(|e| backend("migrate", e))?;
        let applied: Vec<i32> = txn
            .query("SELECT version FROM chess_schema_migrations", &[])
            .await
            .map_err(|e| backend("migrate", e))?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let known = MIGRATIONS.last().map_or(0, |m| m.0);
        if let Some(newer) = applied.iter().copied().filter(|v| *v > known).max() {
            return Err(StoreError::Corrupt(format!(
                "the database schema is at version {newer}, newer than this binary knows \
                 ({known}): run a newer chess-rules-service"
            )));
        }
        for (version, description, sql) in MIGRATIONS {
            if applied.contains(version) {
                continue;
            }
            txn.batch_execute(sql)
                .await
                .map_err(|e| backend(&format!("migration {version}"), e))?;
            txn.execute(
                "INSERT INTO chess_schema_migrations (version, description) VALUES ($1, $2)",
                &[version, description],
            )
            .await
            .map_err(|e| backend("migrate", e))?;
            tracing::info!(version, description, "applied a database migration");
        }
        txn.commit().await.map_err(|e| backend("migrate", e))
    }

    /// Runs a read, failing it with a backend error (UNAVAILABLE on the wire) if the database
    /// has not answered within the call timeout: an unreachable database must not hang a
    /// call for as long as the network takes to notice.
    fn block_on<T>(
        &self,
        f: impl std::future::Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        self.bounded(f, StoreError::Backend)
    }

    /// Runs a write the same way; a write that times out may have been applied (its commit
    /// may be on the way back), so it is unconfirmed, never "not stored".
    fn write_on<T>(
        &self,
        f: impl std::future::Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        self.bounded(f, StoreError::Unconfirmed)
    }

    fn bounded<T>(
        &self,
        f: impl std::future::Future<Output = Result<T, StoreError>>,
        late: fn(String) -> StoreError,
    ) -> Result<T, StoreError> {
        let limit = self.call_timeout;
        self.handle.block_on(async move {
            tokio::time::timeout(limit, f).await.unwrap_or_else(|_| {
                Err(late(format!(
                    "PostgreSQL did not answer within {} ms",
                    limit.as_millis()
                )))
            })
        })
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        self.pool.get().await.map_err(|e| backend("connection", e))
    }

    async fn events_of(&self, id: GameId) -> Result<Option<u32>, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_opt("SELECT events FROM chess_games WHERE id = $1", &[&uuid(id)])
            .await
            .map_err(|e| backend("read", e))?;
        Ok(row.map(|r| r.get::<_, i32>(0) as u32))
    }

    async fn append_async(
        &self,
        id: GameId,
        seq: u32,
        event: &Event,
        flag_deadline_ms: Option<u64>,
    ) -> Result<(), StoreError> {
        let body = json(event)?;
        let seq_i = seq as i32;
        let deadline = flag_deadline_ms.map(|d| d.min(i64::MAX as u64) as i64);
        let payload = format!("{id}:{}", seq + 1);
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(
                "WITH g AS (
                     UPDATE chess_games SET events = events + 1, flag_deadline_ms = $4,
                         updated_at = now()
                     WHERE id = $1 AND events = $2 RETURNING id
                 ), e AS (
                     INSERT INTO chess_events (game, seq, body)
                     SELECT id, $2, $3::text::jsonb FROM g RETURNING game
                 )
                 SELECT pg_notify($5, $6) FROM e",
            )
            .await
            .map_err(|e| backend("append", e))?;
        let result = client
            .query(
                &stmt,
                &[&uuid(id), &seq_i, &body, &deadline, &CHANNEL, &payload],
            )
            .await;
        drop(client);
        match result {
            Ok(rows) if rows.len() == 1 => Ok(()),
            Ok(_) => match self.events_of(id).await? {
                None => Err(StoreError::NotFound(id)),
                Some(actual) => Err(StoreError::Conflict {
                    id,
                    expected: seq,
                    actual,
                }),
            },
            Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                let actual = self.events_of(id).await?.unwrap_or(seq + 1);
                Err(StoreError::Conflict {
                    id,
                    expected: seq,
                    actual,
                })
            }
            Err(e) => Err(write_failed("append", e)),
        }
    }

    async fn load_from_async(
        &self,
        id: GameId,
        from: u32,
    ) -> Result<Option<Vec<Event>>, StoreError> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(
                "SELECT seq, body::text FROM chess_events WHERE game = $1 AND seq >= $2
                 ORDER BY seq",
            )
            .await
            .map_err(|e| backend("read", e))?;
        let rows = client
            .query(&stmt, &[&uuid(id), &(from.min(i32::MAX as u32) as i32)])
            .await
            .map_err(|e| backend("read", e))?;
        drop(client);
        if rows.is_empty() {
            return Ok(self.events_of(id).await?.map(|_| Vec::new()));
        }
        let mut out = Vec::with_capacity(rows.len());
        for (i, row) in rows.iter().enumerate() {
            let seq: i32 = row.get(0);
            if seq as i64 != from as i64 + i as i64 {
                return Err(StoreError::Corrupt(format!(
                    "game {id}: event {} is missing",
                    from as i64 + i as i64
                )));
            }
            let body: &str = row.get(1);
            out.push(
                serde_json::from_str(body)
                    .map_err(|e| StoreError::Corrupt(format!("game {id} event {seq}: {e}")))?,
            );
        }
        Ok(Some(out))
    }
}

impl GameStore for PostgresStore {
    fn create(&self, id: GameId, first: &Event) -> Result<(), StoreError> {
        let body = json(first)?;
        self.write_on(async {
            let client = self.client().await?;
            let n = client
                .execute(
                    "WITH g AS (
                         INSERT INTO chess_games (id, events) VALUES ($1, 1)
                         ON CONFLICT (id) DO NOTHING RETURNING id
                     )
                     INSERT INTO chess_events (game, seq, body)
                     SELECT id, 0, $2::text::jsonb FROM g",
                    &[&uuid(id), &body],
                )
                .await
                .map_err(|e| write_failed("create", e))?;
            if n == 1 {
                Ok(())
            } else {
                Err(StoreError::Exists(id))
            }
        })
    }

    fn create_with_log(
        &self,
        id: GameId,
        events: &[Event],
        flag_deadline_ms: Option<u64>,
    ) -> Result<(), StoreError> {
        if events.is_empty() {
            return Err(StoreError::Corrupt(format!(
                "game {id}: no events to store"
            )));
        }
        let bodies = events.iter().map(json).collect::<Result<Vec<_>, _>>()?;
        let deadline = flag_deadline_ms.map(|d| d.min(i64::MAX as u64) as i64);
        self.write_on(async {
            let mut client = self.client().await?;
            let txn = client
                .transaction()
                .await
                .map_err(|e| backend("import", e))?;
            let n = txn
                .execute(
                    "INSERT INTO chess_games (id, events, flag_deadline_ms) VALUES ($1, $2, $3)
                     ON CONFLICT (id) DO NOTHING",
                    &[&uuid(id), &(bodies.len() as i32), &deadline],
                )
                .await
                .map_err(|e| backend("import", e))?;
            if n != 1 {
                return Err(StoreError::Exists(id));
            }
            let insert = txn
                .prepare(
                    "INSERT INTO chess_events (game, seq, body) VALUES ($1, $2, $3::text::jsonb)",
                )
                .await
                .map_err(|e| backend("import", e))?;
            for (seq, body) in (0i32..).zip(&bodies) {
                txn.execute(&insert, &[&uuid(id), &seq, body])
                    .await
                    .map_err(|e| backend("import", e))?;
            }
            txn.commit().await.map_err(|e| write_failed("import", e))
        })
    }

    fn append(
        &self,
        id: GameId,
        seq: u32,
        event: &Event,
        flag_deadline_ms: Option<u64>,
    ) -> Result<(), StoreError> {
        self.write_on(self.append_async(id, seq, event, flag_deadline_ms))
    }

    fn load(&self, id: GameId) -> Result<Option<Vec<Event>>, StoreError> {
        self.block_on(self.load_from_async(id, 0))
    }

    fn load_from(&self, id: GameId, from: u32) -> Result<Option<Vec<Event>>, StoreError> {
        self.block_on(self.load_from_async(id, from))
    }

    fn count(&self) -> Result<u64, StoreError> {
        self.block_on(async {
            let client = self.client().await?;
            let row = client
                .query_one("SELECT count(*) FROM chess_games", &[])
                .await
                .map_err(|e| backend("count", e))?;
            Ok(row.get::<_, i64>(0) as u64)
        })
    }

    fn list(&self, after: Option<GameId>, limit: usize) -> Result<Vec<GameId>, StoreError> {
        self.block_on(async {
            let client = self.client().await?;
            let rows = client
                .query(
                    "SELECT id FROM chess_games WHERE $1::uuid IS NULL OR id > $1
                     ORDER BY id LIMIT $2",
                    &[&after.map(uuid), &(limit.min(i64::MAX as usize) as i64)],
                )
                .await
                .map_err(|e| backend("list", e))?;
            Ok(rows
                .iter()
                .map(|r| GameId::from_u128(r.get::<_, uuid::Uuid>(0).as_u128()))
                .collect())
        })
    }

    fn shared(&self) -> bool {
        true
    }

    fn flags_due(&self, now_ms: u64, limit: usize) -> Result<Vec<GameId>, StoreError> {
        self.block_on(async {
            let client = self.client().await?;
            let stmt = client
                .prepare_cached(
                    "SELECT id FROM chess_games WHERE flag_deadline_ms <= $1
                     ORDER BY flag_deadline_ms LIMIT $2",
                )
                .await
                .map_err(|e| backend("read", e))?;
            let rows = client
                .query(
                    &stmt,
                    &[
                        &(now_ms.min(i64::MAX as u64) as i64),
                        &(limit.min(i64::MAX as usize) as i64),
                    ],
                )
                .await
                .map_err(|e| backend("read", e))?;
            Ok(rows
                .iter()
                .map(|r| GameId::from_u128(r.get::<_, uuid::Uuid>(0).as_u128()))
                .collect())
        })
    }

    fn subscribe(&self) -> Option<mpsc::Receiver<Change>> {
        let (tx, rx) = mpsc::channel(4096);
        self.handle
            .spawn(listen(self.config.clone(), self.shown.clone(), tx));
        Some(rx)
    }
}

/// Keeps a connection LISTENing on [`CHANNEL`] and forwards each notification. After every
/// (re)connect it sends [`Change::Resync`] so that the service reads again what it may have
/// missed; while the connection is down it sends one every [`POLL_INTERVAL`] (polling).
async fn listen(config: tokio_postgres::Config, shown: String, tx: mpsc::Sender<Change>) {
    let mut connected_once = false;
    while !tx.is_closed() {
        match listen_once(&config, &tx).await {
            Ok(()) => return,
            Err(e) => {
                if connected_once {
                    tracing::warn!(database = %shown, error = %e, "lost the notification connection; polling until it is back");
                }
                connected_once = true;
            }
        }
        if tx.send(Change::Resync).await.is_err() {
            return;
        }
        tokio::time::sleep(POLL_INTERVAL).await;
    }
}

/// One notification connection's life; `Ok` only when the service has stopped listening.
async fn listen_once(
    config: &tokio_postgres::Config,
    tx: &mpsc::Sender<Change>,
) -> Result<(), String> {
    let (client, mut connection) = config.connect(NoTls).await.map_err(|e| e.to_string())?;
    let (ntx, mut nrx) = mpsc::unbounded_channel();
    let driver = tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = messages.next().await {
            match message {
                Ok(AsyncMessage::Notification(n)) => {
                    if ntx.send(n.payload().to_owned()).is_err() {
                        return Ok(());
                    }
                }
                Ok(_) => {}
                Err(e) => return Err(e.to_string()),
            }
        }
        Err("the server closed the connection".to_owned())
    });
    let result = async {
        client
            .batch_execute(&format!("LISTEN {CHANNEL}"))
            .await
            .map_err(|e| e.to_string())?;
        // Catch up with whatever happened while not listening.
        tx.send(Change::Resync).await.map_err(|_| String::new())?;
        loop {
            tokio::select! {
                payload = nrx.recv() => {
                    let Some(payload) = payload else {
                        return Err("the notification connection closed".to_owned());
                    };
                    if let Some(change) = parse_payload(&payload)
                        && tx.send(change).await.is_err()
                    {
                        return Ok(());
                    }
                }
                _ = tx.closed() => return Ok(()),
            }
        }
    }
    .await;
    drop(client);
    match result {
        Ok(()) => {
            driver.abort();
            Ok(())
        }
        Err(e) if tx.is_closed() => {
            driver.abort();
            let _ = e;
            Ok(())
        }
        Err(e) => {
            driver.abort();
            Err(match driver.await {
                Ok(Err(driver_error)) => driver_error,
                _ => e,
            })
        }
    }
}

fn parse_payload(payload: &str) -> Option<Change> {
    let (id, events) = payload.split_once(':')?;
    Some(Change::Appended {
        id: id.parse().ok()?,
        events: events.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact("postgres://chess:s3cret@db:5432/chess"),
            "postgres://chess:***@db:5432/chess"
        );
        assert_eq!(
            redact("postgres://chess@db:5432/chess"),
            "postgres://chess@db:5432/chess"
        );
        assert_eq!(
            redact("postgresql://u:p@h/d?sslmode=disable"),
            "postgresql://u:***@h/d?sslmode=disable"
        );
        assert_eq!(redact("host=db password=x user=u"), "(connection string)");
    }

    #[test]
    fn payloads_parse() {
        let id = GameId::new();
        assert_eq!(
            parse_payload(&format!("{id}:7")),
            Some(Change::Appended { id, events: 7 })
        );
        assert_eq!(parse_payload("nonsense"), None);
    }
}
