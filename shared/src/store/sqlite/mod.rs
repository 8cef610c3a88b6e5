//! The embedded adapter: one SQLite file (WAL, foreign keys, migrations at
//! open). Writes run on the blocking pool over one connection behind a
//! mutex: SQLite has one writer anyway, its statements take microseconds, and
//! one connection makes every read-modify-write trivially atomic. Reads run
//! beside it on a few read-only connections ([`READERS`]): in WAL mode a
//! reader sees every commit made before it began and never waits for the
//! writer.
//!
//! This process is the file's only writer, so it knows when what it read is
//! still current: every write that may change a board page or a post detail
//! advances [`Freshness::generation`] once it is done (`app::read_cache`).
//!
//! When the file is locked or unwritable, every call fails within the busy
//! timeout (`SQLITE_BUSY_TIMEOUT_MS`, default 2 s) counted from when it asked
//! for the connection, so queued requests answer 503 instead of waiting in
//! line for one timeout each.
//!
//! One file per port; the schema's migrations and the row mappers the
//! ports share are in files of their own.

mod accounts;
mod attempts;
mod blocks;
mod boards;
mod cascade;
mod challenges;
mod comments;
mod idempotency;
mod media;
mod members;
mod migrations;
mod moderation;
mod notifications;
mod posts;
mod purges;
mod rows;
mod second_factors;
mod votes;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode};
use rusqlite_migration::Migrations;

use super::{Freshness, StoreError, StoreResult};
use crate::private_files;

#[derive(Clone)]
pub struct SqliteStore {
    conn: Arc<tokio::sync::Mutex<Connection>>,
    readers: Arc<Readers>,
    /// Advanced after every write that may change what readers see.
    generation: Arc<AtomicU64>,
    busy_timeout: Duration,
    /// The last post number given per board ([`boards`]).
    numbers: Arc<std::sync::Mutex<std::collections::HashMap<String, u64>>>,
}

/// How many read-only connections serve reads beside the writer: more
/// than the cores, so a read that waits on the disk does not hold up the
/// others, few enough that each keeps its statement cache warm.
pub const READERS: usize = 4;

/// Idle read-only connections; a permit stands for one of them.
struct Readers {
    idle: std::sync::Mutex<Vec<Connection>>,
    permits: Arc<tokio::sync::Semaphore>,
}

/// How long a call may wait for the connection and the file lock together.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(2);

/// When a commit reaches the disk (`SQLITE_SYNCHRONOUS`). In WAL mode,
/// `NORMAL` syncs only at checkpoints: a power loss can roll back creates
/// that were already acknowledged. `FULL` syncs the WAL at every commit, so an
/// answered create survives one (docs/storage.md: the cost per create).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Synchronous {
    #[default]
    Full,
    Normal,
}

impl Synchronous {
    pub fn as_str(self) -> &'static str {
        match self {
            Synchronous::Full => "FULL",
            Synchronous::Normal => "NORMAL",
        }
    }
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens (creating when missing) the database file and brings its schema up to date.
    pub fn open(path: &Path) -> StoreResult<Self> {
        Self::open_with(path, DEFAULT_BUSY_TIMEOUT, Synchronous::default())
    }

    pub fn open_with(path: &Path, busy_timeout: Duration, synchronous: Synchronous) -> StoreResult<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            private_files::create_dir(dir)
                .map_err(|e| StoreError::Unavailable(format!("creating {}: {e}", dir.display())))?;
        }
        // Password hashes live here: owner only. SQLite gives its WAL and
        // shared-memory files the database file's permissions.
        let unreadable = |e: std::io::Error| StoreError::Unavailable(format!("{}: {e}", path.display()));
        private_files::create_file(path).map_err(unreadable)?;
        if private_files::shared_bits(path).map_err(unreadable)? != 0 {
            tracing::warn!(path = %path.display(), "the database was readable by group or others: made it owner-only");
            private_files::restrict(path).map_err(unreadable)?;
        }
        let mut conn = Connection::open(path).map_err(sql_error)?;
        conn.busy_timeout(busy_timeout).map_err(sql_error)?;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(sql_error)?;
        conn.pragma_update(None, "synchronous", synchronous.as_str())
            .map_err(sql_error)?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(sql_error)?;
        Migrations::from_slice(migrations::MIGRATIONS)
            .to_latest(&mut conn)
            .map_err(|e| StoreError::Internal(format!("migrating {}: {e}", path.display())))?;
        let readers = (0..READERS)
            .map(|_| open_reader(path, busy_timeout))
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(SqliteStore {
            conn: Arc::new(tokio::sync::Mutex::new(conn)),
            readers: Arc::new(Readers {
                idle: std::sync::Mutex::new(readers),
                permits: Arc::new(tokio::sync::Semaphore::new(READERS)),
            }),
            generation: Arc::new(AtomicU64::new(0)),
            busy_timeout,
            numbers: Arc::default(),
        })
    }

    /// A write that may change a board page or a post detail: readers'
    /// caches are told once it is done, whether it succeeded or not (a
    /// failure may come after the commit).
    async fn with<T, F>(&self, work: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> StoreResult<T> + Send + 'static,
    {
        let result = self.write(work).await;
        self.generation.fetch_add(1, Ordering::Release);
        result
    }

    /// A write that changes nothing a board page or a post detail shows
    /// (failure counters, idempotency records, rehashes, buffered views).
    async fn with_unseen<T, F>(&self, work: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> StoreResult<T> + Send + 'static,
    {
        self.write(work).await
    }

    /// A read on one of the read-only connections.
    async fn read<T, F>(&self, work: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> StoreResult<T> + Send + 'static,
    {
        let permit = tokio::time::timeout(self.busy_timeout, Arc::clone(&self.readers.permits).acquire_owned())
            .await
            .map_err(|_| self.stayed_busy())?
            .map_err(|_| StoreError::Internal("the readers were closed".into()))?;
        let mut conn = self
            .readers
            .idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop()
            .ok_or_else(|| StoreError::Internal("a reader permit without a connection".into()))?;
        let readers = Arc::clone(&self.readers);
        let done = tokio::task::spawn_blocking(move || {
            let result = work(&mut conn);
            readers
                .idle
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(conn);
            result
        })
        .await;
        match done {
            Ok(result) => {
                drop(permit);
                result
            }
            // The connection went down with the task: one reader fewer.
            Err(e) => {
                permit.forget();
                Err(StoreError::Internal(format!("sqlite read failed: {e}")))
            }
        }
    }

    fn stayed_busy(&self) -> StoreError {
        StoreError::Unavailable(format!(
            "the database stayed busy for {} ms",
            self.busy_timeout.as_millis()
        ))
    }

    async fn write<T, F>(&self, work: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> StoreResult<T> + Send + 'static,
    {
        let deadline = Instant::now() + self.busy_timeout;
        let mut conn = tokio::time::timeout(self.busy_timeout, Arc::clone(&self.conn).lock_owned())
            .await
            .map_err(|_| self.stayed_busy())?;
        tokio::task::spawn_blocking(move || {
            let left = deadline.saturating_duration_since(Instant::now());
            conn.busy_timeout(left.max(Duration::from_millis(1)))
                .map_err(sql_error)?;
            work(&mut conn)
        })
        .await
        .map_err(|e| StoreError::Internal(format!("sqlite task failed: {e}")))?
    }
}

impl Freshness for SqliteStore {
    fn generation(&self) -> Option<u64> {
        Some(self.generation.load(Ordering::Acquire))
    }
}

/// A read-only connection: `query_only` makes a write on it an error
/// instead of a second writer.
fn open_reader(path: &Path, busy_timeout: Duration) -> StoreResult<Connection> {
    let conn = Connection::open(path).map_err(sql_error)?;
    conn.busy_timeout(busy_timeout).map_err(sql_error)?;
    conn.pragma_update(None, "query_only", "ON").map_err(sql_error)?;
    conn.pragma_update(None, "foreign_keys", "ON").map_err(sql_error)?;
    Ok(conn)
}

/// Disk, lock and permission trouble is "unavailable" (503, retry later); the rest is a bug.
pub(super) fn sql_error(e: rusqlite::Error) -> StoreError {
    match e.sqlite_error_code() {
        Some(
            ErrorCode::DatabaseBusy
            | ErrorCode::DatabaseLocked
            | ErrorCode::ReadOnly
            | ErrorCode::CannotOpen
            | ErrorCode::DiskFull
            | ErrorCode::SystemIoFailure
            | ErrorCode::PermissionDenied
            | ErrorCode::OutOfMemory,
        ) => StoreError::Unavailable(e.to_string()),
        _ => StoreError::Internal(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_commit_is_synced_by_default_and_normal_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        for (synchronous, level) in [(Synchronous::default(), 2), (Synchronous::Normal, 1)] {
            let path = dir.path().join(format!("{}.sqlite3", synchronous.as_str()));
            let store = SqliteStore::open_with(&path, DEFAULT_BUSY_TIMEOUT, synchronous).unwrap();
            let found: i64 = store
                .with(|conn| {
                    conn.query_row("PRAGMA synchronous", [], |row| row.get(0))
                        .map_err(sql_error)
                })
                .await
                .unwrap();
            assert_eq!(found, level, "{synchronous:?}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_database_is_owner_only_even_when_an_older_version_made_it_readable() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new").join("boards.sqlite3");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        drop(SqliteStore::open(&path).unwrap());
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        assert_eq!(mode(&path), 0o600);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        drop(SqliteStore::open(&path).unwrap());
        assert_eq!(mode(&path), 0o600);
        let wal = path.with_extension("sqlite3-wal");
        if wal.exists() {
            assert_eq!(mode(&wal) & 0o077, 0);
        }
    }
}
