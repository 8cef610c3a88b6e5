//! [`Attempts`] on SQLite: the `attempts` table, one row per key and
//! window, swept of old windows as failures are recorded.

use async_trait::async_trait;
use rusqlite::{OptionalExtension, params};

use super::rows::count;
use super::{SqliteStore, sql_error};
use crate::domain::Window;
use crate::store::{AttemptKey, Attempts, StoreResult};

#[async_trait]
impl Attempts for SqliteStore {
    async fn record_failure(&self, key: &AttemptKey, window: Window) -> StoreResult<u64> {
        let key = key.as_str().to_owned();
        self.with_unseen(move |conn| {
            // Old windows are useless once over; sweep them as we go.
            conn.execute("DELETE FROM attempts WHERE expires_at < ?1", [window.start])
                .map_err(sql_error)?;
            conn.query_row(
                "INSERT INTO attempts (key, window_start, count, expires_at) VALUES (?1, ?2, 1, ?3)
                 ON CONFLICT (key, window_start) DO UPDATE SET count = count + 1
                 RETURNING count",
                params![key, window.start, window.end()],
                |row| count(row, 0),
            )
            .map_err(sql_error)
        })
        .await
    }

    async fn forgive_failure(&self, key: &AttemptKey, window: Window) -> StoreResult<()> {
        let key = key.as_str().to_owned();
        self.with_unseen(move |conn| {
            conn.execute(
                "UPDATE attempts SET count = count - 1 WHERE key = ?1 AND window_start = ?2 AND count > 0",
                params![key, window.start],
            )
            .map_err(sql_error)?;
            Ok(())
        })
        .await
    }

    async fn reset_failures(&self, key: &AttemptKey, window: Window) -> StoreResult<()> {
        let key = key.as_str().to_owned();
        self.with_unseen(move |conn| {
            conn.execute(
                "DELETE FROM attempts WHERE key = ?1 AND window_start = ?2",
                params![key, window.start],
            )
            .map_err(sql_error)?;
            Ok(())
        })
        .await
    }

    async fn failures(&self, key: &AttemptKey, window: Window) -> StoreResult<u64> {
        let key = key.as_str().to_owned();
        self.read(move |conn| {
            conn.query_row(
                "SELECT count FROM attempts WHERE key = ?1 AND window_start = ?2",
                params![key, window.start],
                |row| count(row, 0),
            )
            .optional()
            .map(Option::unwrap_or_default)
            .map_err(sql_error)
        })
        .await
    }
}
