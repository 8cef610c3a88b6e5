//! [`BoardDirectory`] on SQLite (docs/API.md, Boards): a row of
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

#[cfg(test)]
mod tests {
    use rusqlite::Connection;
    use rusqlite_migration::Migrations;

    use super::super::migrations::MIGRATIONS;
    use super::*;

    /// A file as version 3 left it (every migration before boards v4),
    /// with posts on two boards written out of id order.
    fn pre_v4_file(path: &std::path::Path) {
        let mut conn = Connection::open(path).unwrap();
        // The five migrations before boards v4 (the sixth), whatever comes
        // after it (counting from the end broke when notifications came).
        let before_v4 = 5;
        assert!(MIGRATIONS.len() > before_v4);
        Migrations::from_slice(&MIGRATIONS[..before_v4])
            .to_latest(&mut conn)
            .unwrap();
        for (id, board) in [("01C", "free"), ("01A", "free"), ("01B", "qna"), ("01D", "free")] {
            conn.execute(
                "INSERT INTO posts (id, board, title, body, author_kind, author_nickname, created_at, updated_at)
                 VALUES (?1, ?2, 't', 'b', 'guest', 'g', 'then', 'then')",
                params![id, board],
            )
            .unwrap();
        }
    }

    fn numbers(path: &std::path::Path) -> Vec<(String, i64)> {
        let conn = Connection::open(path).unwrap();
        let mut stmt = conn.prepare("SELECT id, number FROM posts ORDER BY id").unwrap();
        stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    #[tokio::test]
    async fn pre_v4_posts_are_numbered_once_per_board_in_creation_order_and_new_ones_after_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("boards.sqlite3");
        pre_v4_file(&path);
        let store = SqliteStore::open(&path).unwrap();
        let numbered = numbers(&path);
        let expected = [("01A", 1), ("01B", 1), ("01C", 2), ("01D", 3)].map(|(id, n)| (id.to_owned(), n));
        assert_eq!(numbered, expected);
        let free = BoardSlug::from_stored("free".into());
        assert_eq!(store.post_counts(std::slice::from_ref(&free)).await.unwrap(), [3]);
        assert_eq!(store.allocate_post_number(&free).await.unwrap(), 4);
        drop(store);
        // Opening again numbers nothing again, and the counter goes on.
        let store = SqliteStore::open(&path).unwrap();
        assert_eq!(numbers(&path), expected);
        assert_eq!(store.allocate_post_number(&free).await.unwrap(), 4, "4 was never used");
    }

    #[tokio::test]
    async fn a_deleted_posts_number_is_never_given_again_after_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("boards.sqlite3");
        pre_v4_file(&path);
        drop(SqliteStore::open(&path).unwrap());
        // The newest post goes; the stored counter keeps its number.
        let conn = Connection::open(&path).unwrap();
        conn.execute("DELETE FROM posts WHERE id = '01D'", []).unwrap();
        drop(conn);
        let store = SqliteStore::open(&path).unwrap();
        let free = BoardSlug::from_stored("free".into());
        assert_eq!(store.allocate_post_number(&free).await.unwrap(), 4);
        assert_eq!(store.post_counts(&[free]).await.unwrap(), [2]);
    }
}
