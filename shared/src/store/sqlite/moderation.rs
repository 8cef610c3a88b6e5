//! [`Moderation`] on SQLite: moderators, bans, open reports with their
//! reporters, and the log, each change and its log entry in one
//! transaction. Bans, reports and entries are kept as their JSON (they are
//! read whole, never queried by field).

use async_trait::async_trait;
use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};

use super::cascade::{delete_comment_row, delete_post_row};
use super::idempotency::complete;
use super::members::member_from;
use super::{SqliteStore, sql_error};
use crate::domain::{
    Ban, BanId, BanPage, BanRecord, BanSubject, BoardSlug, CommentKey, LogEntry, LogPage, Member, MemberId, PageLimit,
    PostKey, Report, ReportId, ReportPage, Reported,
};
use crate::store::{Claim, Completion, Moderation, StoreError, StoreResult, cursor, from_json, to_json};

fn ban_from(ban: &str, subject: &str, also: Option<&str>, expires: Option<i64>) -> StoreResult<BanRecord> {
    Ok(BanRecord {
        ban: from_json::<Ban>(ban)?,
        subject: crate::store::ban_subject(subject)?,
        also: also.map(crate::store::ban_subject).transpose()?,
        expires,
    })
}

/// A ban row as [`ban_from`] reads it: `ban, subject, also_subject, expires`.
type BanRow = (String, String, Option<String>, Option<i64>);

fn ban_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<BanRow> {
    Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
}

pub(super) fn log(tx: &Transaction<'_>, board: &str, entry: &LogEntry) -> StoreResult<()> {
    tx.execute(
        "INSERT INTO modlog (id, board, entry) VALUES (?1, ?2, ?3)",
        params![entry.id, board, to_json(entry)?],
    )
    .map_err(sql_error)?;
    Ok(())
}

/// Up to `limit + 1` rows of `(id, text)` newest first, strictly older than `after`.
fn newest_first(
    conn: &rusqlite::Connection,
    sql: &str,
    board: &str,
    after: Option<&str>,
    limit: usize,
    now: Option<i64>,
) -> StoreResult<Vec<(String, String)>> {
    let fetch = i64::try_from(limit + 1).unwrap_or(i64::MAX);
    let mut stmt = conn.prepare_cached(sql).map_err(sql_error)?;
    let rows = stmt
        .query_map(params![board, after, fetch, now], |row| Ok((row.get(0)?, row.get(1)?)))
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(sql_error)?;
    Ok(rows)
}

/// Trims a `limit + 1` fetch and gives the cursor when more follow.
fn paged<T>(mut items: Vec<(String, T)>, limit: usize) -> (Vec<T>, Option<String>) {
    let more = items.len() > limit;
    items.truncate(limit);
    let next = more.then(|| items.last().map(|(id, _)| cursor::encode(id))).flatten();
    (items.into_iter().map(|(_, item)| item).collect(), next)
}

fn immediate(conn: &mut rusqlite::Connection) -> StoreResult<Transaction<'_>> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sql_error)
}

#[async_trait]
impl Moderation for SqliteStore {
    async fn is_moderator(&self, board: &BoardSlug, member: &MemberId) -> StoreResult<bool> {
        let (board, member) = (board.as_str().to_owned(), member.as_str().to_owned());
        self.read(move |conn| {
            conn.query_row(
                "SELECT EXISTS (SELECT 1 FROM moderators WHERE board = ?1 AND member_id = ?2)",
                params![board, member],
                |row| row.get(0),
            )
            .map_err(sql_error)
        })
        .await
    }

    async fn moderators(&self, board: &BoardSlug) -> StoreResult<Vec<Member>> {
        let board = board.as_str().to_owned();
        self.read(move |conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT m.id, m.username, m.nickname, m.created_at FROM moderators d
                     JOIN members m ON m.id = d.member_id WHERE d.board = ?1 ORDER BY d.appointed, m.id",
                )
                .map_err(sql_error)?;
            stmt.query_map([board], member_from)
                .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
                .map_err(sql_error)
        })
        .await
    }

    async fn add_moderator(&self, board: &BoardSlug, member: &Member, entry: &LogEntry) -> StoreResult<bool> {
        let (board, member_id, entry) = (board.as_str().to_owned(), member.id.clone(), entry.clone());
        self.with(move |conn| {
            let tx = immediate(conn)?;
            let added = tx
                .execute(
                    "INSERT OR IGNORE INTO moderators (board, member_id, appointed) VALUES (?1, ?2, ?3)",
                    params![board, member_id, entry.at],
                )
                .map_err(sql_error)?;
            if added == 1 {
                log(&tx, &board, &entry)?;
            }
            tx.commit().map_err(sql_error)?;
            Ok(added == 1)
        })
        .await
    }

    async fn remove_moderator(&self, board: &BoardSlug, member: &MemberId, entry: &LogEntry) -> StoreResult<bool> {
        let (board, member_id, entry) = (board.as_str().to_owned(), member.as_str().to_owned(), entry.clone());
        self.with(move |conn| {
            let tx = immediate(conn)?;
            let removed = tx
                .execute(
                    "DELETE FROM moderators WHERE board = ?1 AND member_id = ?2",
                    params![board, member_id],
                )
                .map_err(sql_error)?;
            if removed == 1 {
                log(&tx, &board, &entry)?;
            }
            tx.commit().map_err(sql_error)?;
            Ok(removed == 1)
        })
        .await
    }

    async fn active_ban(&self, board: &BoardSlug, subjects: &[BanSubject], now: i64) -> StoreResult<Option<BanRecord>> {
        let board = board.as_str().to_owned();
        let keys: Vec<String> = subjects.iter().map(BanSubject::key).collect();
        self.read(move |conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT ban, subject, also_subject, expires FROM bans
                     WHERE board = ?1 AND (subject = ?2 OR also_subject = ?2) AND (expires IS NULL OR expires > ?3)
                     LIMIT 1",
                )
                .map_err(sql_error)?;
            for key in &keys {
                let found: Option<BanRow> = stmt
                    .query_row(params![board, key, now], ban_row)
                    .optional()
                    .map_err(sql_error)?;
                if let Some((ban, subject, also, expires)) = found {
                    return ban_from(&ban, &subject, also.as_deref(), expires).map(Some);
                }
            }
            Ok(None)
        })
        .await
    }

    async fn ban(&self, ban: &BanRecord, entry: &LogEntry, done: Option<&Completion>) -> StoreResult<()> {
        let (record, entry, done) = (ban.clone(), entry.clone(), done.cloned());
        self.with(move |conn| {
            let tx = immediate(conn)?;
            let board = record.ban.board.as_str();
            let subject = record.subject.key();
            let also = record.also.as_ref().map(BanSubject::key);
            // A new ban of the same writer replaces the earlier one.
            tx.execute(
                "DELETE FROM bans WHERE board = ?1 AND subject = ?2",
                params![board, subject],
            )
            .map_err(sql_error)?;
            tx.execute(
                "INSERT INTO bans (id, board, subject, also_subject, ban, expires) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    record.ban.id,
                    board,
                    subject,
                    also,
                    to_json(&record.ban)?,
                    record.expires
                ],
            )
            .map_err(sql_error)?;
            log(&tx, board, &entry)?;
            complete(&tx, done.as_ref())?;
            tx.commit().map_err(sql_error)
        })
        .await
    }

    async fn ban_by_id(&self, board: &BoardSlug, id: &BanId) -> StoreResult<Option<BanRecord>> {
        let (board, id) = (board.as_str().to_owned(), id.as_str().to_owned());
        self.read(move |conn| {
            let found: Option<BanRow> = conn
                .query_row(
                    "SELECT ban, subject, also_subject, expires FROM bans WHERE id = ?1 AND board = ?2",
                    params![id, board],
                    ban_row,
                )
                .optional()
                .map_err(sql_error)?;
            found
                .map(|(ban, subject, also, expires)| ban_from(&ban, &subject, also.as_deref(), expires))
                .transpose()
        })
        .await
    }

    async fn unban(&self, ban: &BanRecord, entry: &LogEntry) -> StoreResult<bool> {
        let (record, entry) = (ban.clone(), entry.clone());
        self.with(move |conn| {
            let tx = immediate(conn)?;
            let board = record.ban.board.as_str();
            let lifted = tx
                .execute(
                    "DELETE FROM bans WHERE id = ?1 AND board = ?2",
                    params![record.ban.id, board],
                )
                .map_err(sql_error)?;
            if lifted == 1 {
                log(&tx, board, &entry)?;
            }
            tx.commit().map_err(sql_error)?;
            Ok(lifted == 1)
        })
        .await
    }

    async fn list_bans(
        &self,
        board: &BoardSlug,
        limit: PageLimit,
        cursor: Option<&str>,
        now: i64,
    ) -> StoreResult<BanPage> {
        let after = cursor.map(cursor::decode).transpose()?;
        let (board, limit) = (board.as_str().to_owned(), limit.get());
        self.read(move |conn| {
            let rows = newest_first(
                conn,
                "SELECT id, ban FROM bans WHERE board = ?1 AND (?2 IS NULL OR id < ?2)
                   AND (expires IS NULL OR expires > ?4) ORDER BY id DESC LIMIT ?3",
                &board,
                after.as_deref(),
                limit,
                Some(now),
            )?;
            let rows = rows
                .into_iter()
                .map(|(id, ban)| from_json::<Ban>(&ban).map(|ban| (id, ban)))
                .collect::<StoreResult<Vec<_>>>()?;
            let (bans, next_cursor) = paged(rows, limit);
            Ok(BanPage { bans, next_cursor })
        })
        .await
    }

    async fn remove_post(&self, key: &PostKey, entry: &LogEntry, done: Option<&Completion>) -> StoreResult<bool> {
        let (board, post_id, entry, done) = (
            key.board.as_str().to_owned(),
            key.post.as_str().to_owned(),
            entry.clone(),
            done.cloned(),
        );
        self.with(move |conn| {
            let tx = immediate(conn)?;
            // As a delete: its comments, likes and open reports go with it.
            if !delete_post_row(&tx, &board, &post_id)? {
                return Ok(false);
            }
            log(&tx, &board, &entry)?;
            complete(&tx, done.as_ref())?;
            tx.commit().map_err(sql_error)?;
            Ok(true)
        })
        .await
    }

    async fn remove_comment(&self, key: &CommentKey, entry: &LogEntry, done: Option<&Completion>) -> StoreResult<bool> {
        let (board, post_id, comment_id, entry, done) = (
            key.post.board.as_str().to_owned(),
            key.post.post.as_str().to_owned(),
            key.comment.as_str().to_owned(),
            entry.clone(),
            done.cloned(),
        );
        self.with(move |conn| {
            let tx = immediate(conn)?;
            // As a delete: its open report goes with it.
            if !delete_comment_row(&tx, &board, &post_id, &comment_id)? {
                return Ok(false);
            }
            log(&tx, &board, &entry)?;
            complete(&tx, done.as_ref())?;
            tx.commit().map_err(sql_error)?;
            Ok(true)
        })
        .await
    }

    async fn report(
        &self,
        board: &BoardSlug,
        report: &Report,
        reporter: &str,
        claim: Option<&Claim>,
    ) -> StoreResult<Reported> {
        let (board, report, reporter, claim) = (
            board.as_str().to_owned(),
            report.clone(),
            reporter.to_owned(),
            claim.cloned(),
        );
        self.with(move |conn| {
            let tx = immediate(conn)?;
            // The target must be there, on this board, in this transaction.
            let there: bool = match &report.target {
                crate::domain::ReportTarget::Post { post_id } => tx.query_row(
                    "SELECT EXISTS (SELECT 1 FROM posts WHERE id = ?1 AND board = ?2)",
                    params![post_id, board],
                    |row| row.get(0),
                ),
                crate::domain::ReportTarget::Comment { post_id, comment_id } => tx.query_row(
                    "SELECT EXISTS (SELECT 1 FROM comments c JOIN posts p ON p.id = c.post_id
                     WHERE c.id = ?1 AND c.post_id = ?2 AND p.board = ?3)",
                    params![comment_id, post_id, board],
                    |row| row.get(0),
                ),
            }
            .map_err(sql_error)?;
            if !there {
                return Err(StoreError::NotFound);
            }
            let target = report.target.key();
            let open: Option<(String, String)> = tx
                .query_row(
                    "SELECT id, report FROM reports WHERE target = ?1",
                    [&target],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()
                .map_err(sql_error)?;
            let outcome = match open {
                Some((id, stored)) => {
                    let counted = tx
                        .execute(
                            "INSERT OR IGNORE INTO reporters (report_id, reporter) VALUES (?1, ?2)",
                            params![id, reporter],
                        )
                        .map_err(sql_error)?;
                    if counted == 1 {
                        tx.execute("UPDATE reports SET reporters = reporters + 1 WHERE id = ?1", [&id])
                            .map_err(sql_error)?;
                    }
                    Reported::Joined(from_json::<Report>(&stored)?)
                }
                None => {
                    let shown = report.clone().for_reporter();
                    tx.execute(
                        "INSERT INTO reports (id, board, post_id, target, report, reporters) VALUES (?1, ?2, ?3, ?4, ?5, 1)",
                        params![shown.id, board, shown.target.post_id(), target, to_json(&shown)?],
                    )
                    .map_err(sql_error)?;
                    tx.execute(
                        "INSERT INTO reporters (report_id, reporter) VALUES (?1, ?2)",
                        params![shown.id, reporter],
                    )
                    .map_err(sql_error)?;
                    Reported::Opened(shown)
                }
            };
            if let Some(claim) = &claim {
                let (status, shown) = match &outcome {
                    Reported::Opened(r) => (201, r),
                    Reported::Joined(r) => (200, r),
                };
                complete(&tx, Some(&claim.complete(status, to_json(shown)?)))?;
            }
            tx.commit().map_err(sql_error)?;
            Ok(outcome)
        })
        .await
    }

    async fn list_reports(&self, board: &BoardSlug, limit: PageLimit, cursor: Option<&str>) -> StoreResult<ReportPage> {
        let after = cursor.map(cursor::decode).transpose()?;
        let (board, limit) = (board.as_str().to_owned(), limit.get());
        self.read(move |conn| {
            let fetch = i64::try_from(limit + 1).unwrap_or(i64::MAX);
            let mut stmt = conn
                .prepare_cached(
                    "SELECT id, report, reporters FROM reports WHERE board = ?1 AND (?2 IS NULL OR id < ?2)
                     ORDER BY id DESC LIMIT ?3",
                )
                .map_err(sql_error)?;
            let rows: Vec<(String, String, i64)> = stmt
                .query_map(params![board, after, fetch], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                })
                .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
                .map_err(sql_error)?;
            let rows = rows
                .into_iter()
                .map(|(id, report, reporters)| {
                    let mut report = from_json::<Report>(&report)?;
                    report.reporters = Some(u64::try_from(reporters).unwrap_or(0));
                    Ok((id, report))
                })
                .collect::<StoreResult<Vec<_>>>()?;
            let (reports, next_cursor) = paged(rows, limit);
            Ok(ReportPage { reports, next_cursor })
        })
        .await
    }

    async fn resolve_report(&self, board: &BoardSlug, id: &ReportId, done: Option<&Completion>) -> StoreResult<bool> {
        let (board, id, done) = (board.as_str().to_owned(), id.as_str().to_owned(), done.cloned());
        self.with(move |conn| {
            let tx = immediate(conn)?;
            // Its reporters go with it (ON DELETE CASCADE).
            let resolved = tx
                .execute("DELETE FROM reports WHERE id = ?1 AND board = ?2", params![id, board])
                .map_err(sql_error)?;
            if resolved == 0 {
                return Ok(false);
            }
            complete(&tx, done.as_ref())?;
            tx.commit().map_err(sql_error)?;
            Ok(true)
        })
        .await
    }

    async fn modlog(&self, board: &BoardSlug, limit: PageLimit, cursor: Option<&str>) -> StoreResult<LogPage> {
        let after = cursor.map(cursor::decode).transpose()?;
        let (board, limit) = (board.as_str().to_owned(), limit.get());
        self.read(move |conn| {
            let rows = newest_first(
                conn,
                "SELECT id, entry FROM modlog WHERE board = ?1 AND (?2 IS NULL OR id < ?2)
                   AND ?4 IS NULL ORDER BY id DESC LIMIT ?3",
                &board,
                after.as_deref(),
                limit,
                None,
            )?;
            let rows = rows
                .into_iter()
                .map(|(id, entry)| from_json::<LogEntry>(&entry).map(|entry| (id, entry)))
                .collect::<StoreResult<Vec<_>>>()?;
            let (entries, next_cursor) = paged(rows, limit);
            Ok(LogPage { entries, next_cursor })
        })
        .await
    }
}
