//! [`BoardDirectory`] on SQLite (docs/API.md, Boards (v4)): a row of
//! settings per board, and `board_counters`, which the `posts` triggers
//! keep (the last number given, the live post count).
//!
//! Post numbers are handed out from memory: this process is the file's
//! only writer (see [`crate::store::Freshness`]), so a counter per board
//! seeded from `board_counters` is as exact as a write would be, and costs
//! no commit. The post's own insert raises `last_number` in its
//! transaction, so a number used by a post, even one deleted since, is
//! never given again after a restart; a number taken by a create that
//! failed is a gap while the process runs, and may be given again after
//! a restart (nobody was ever shown it).

use async_trait::async_trait;
use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::moderation::log;
use super::{SqliteStore, sql_error};
use crate::domain::{BoardSettings, BoardSlug, LogEntry};
use crate::store::{BoardDirectory, StoreResult, from_json, to_json};

#[async_trait]
impl BoardDirectory for SqliteStore {
    async fn boards(&self) -> StoreResult<Vec<BoardSettings>> {
        let rows: Vec<String> = self
            .read(|conn| {
                let mut stmt = conn
                    .prepare_cached("SELECT settings FROM boards ORDER BY slug")
                    .map_err(sql_error)?;
                stmt.query_map([], |row| row.get(0))
                    .and_then(|rows| rows.collect::<Result<Vec<String>, _>>())
                    .map_err(sql_error)
            })
            .await?;
        rows.iter().map(|json| from_json(json)).collect()
    }

    async fn post_counts(&self, boards: &[BoardSlug]) -> StoreResult<Vec<u64>> {
        let boards: Vec<String> = boards.iter().map(|b| b.as_str().to_owned()).collect();
        self.read(move |conn| {
            let mut stmt = conn
                .prepare_cached("SELECT post_count FROM board_counters WHERE board = ?1")
                .map_err(sql_error)?;
            boards
                .iter()
                .map(|board| {
                    let count: Option<i64> = stmt
                        .query_row([board], |row| row.get(0))
                        .optional()
                        .map_err(sql_error)?;
                    Ok(u64::try_from(count.unwrap_or(0)).unwrap_or(0))
                })
                .collect()
        })
        .await
    }

    async fn create_board(&self, settings: &BoardSettings, entry: Option<&LogEntry>) -> StoreResult<bool> {
        let (slug, json, entry) = (settings.slug.as_str().to_owned(), to_json(settings)?, entry.cloned());
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql_error)?;
            let created = tx
                .execute(
                    "INSERT INTO boards (slug, settings) VALUES (?1, ?2) ON CONFLICT (slug) DO NOTHING",
                    params![slug, json],
                )
                .map_err(sql_error)?
                == 1;
            if created && let Some(entry) = &entry {
                log(&tx, &slug, entry)?;
            }
            tx.commit().map_err(sql_error)?;
            Ok(created)
        })
        .await
    }

    async fn update_board(&self, settings: &BoardSettings, entry: &LogEntry) -> StoreResult<bool> {
        let (slug, entry) = (settings.slug.as_str().to_owned(), entry.clone());
        let mut settings = settings.clone();
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql_error)?;
            let stored: Option<String> = tx
                .query_row("SELECT settings FROM boards WHERE slug = ?1", [&slug], |row| row.get(0))
                .optional()
                .map_err(sql_error)?;
            let Some(stored) = stored else { return Ok(false) };
            // A board keeps the time it was opened.
            settings.created_at = from_json::<BoardSettings>(&stored)?.created_at;
            tx.execute(
                "UPDATE boards SET settings = ?2 WHERE slug = ?1",
                params![slug, to_json(&settings)?],
            )
            .map_err(sql_error)?;
            log(&tx, &slug, &entry)?;
            tx.commit().map_err(sql_error)?;
            Ok(true)
        })
        .await
    }

    async fn allocate_post_number(&self, board: &BoardSlug) -> StoreResult<u64> {
        let known = self
            .numbers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(board.as_str())
            .copied();
        let stored = match known {
            Some(_) => 0,
            None => {
                let board = board.as_str().to_owned();
                self.read(move |conn| {
                    let last: Option<i64> = conn
                        .query_row(
                            "SELECT last_number FROM board_counters WHERE board = ?1",
                            [board],
                            |row| row.get(0),
                        )
                        .optional()
                        .map_err(sql_error)?;
                    Ok(u64::try_from(last.unwrap_or(0)).unwrap_or(0))
                })
                .await?
            }
        };
        let mut numbers = self.numbers.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // Two first allocations may both have read the stored number: the
        // first to get here seeds the counter, the other counts on from it.
        let last = numbers.entry(board.as_str().to_owned()).or_insert(stored);
        *last += 1;
        Ok(*last)
    }
}
