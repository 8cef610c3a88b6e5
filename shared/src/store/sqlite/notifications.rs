//! [`Notifications`] on SQLite (migrations.rs, migration
//! 9). A notification is read when its id is at most the member's mark in
//! `notification_marks`, so the unread count is a count over the member's
//! index range and marking is one row: both exact on the one writer.
//! `notified_texts` remembers every text that notified, withdrawn ones
//! too, so a late or repeated add of a withdrawn text changes nothing.

use async_trait::async_trait;
use rusqlite::{OptionalExtension, params};

use super::{SqliteStore, sql_error};
use crate::domain::notifications::MAX_NOTIFICATIONS;
use crate::domain::{
    Author, MemberId, NewNotification, Notification, NotificationKind, NotificationPage, PageLimit, TextRef, new_id,
};
use crate::store::{Notifications, StoreError, StoreResult, cursor, from_json, to_json};

/// Notifications deleted per statement when expiring.
const EXPIRE_BATCH: usize = 500;

/// The smallest ULID of the millisecond `at` (RFC 3339): ids below it are older.
fn ulid_floor(at: &str) -> StoreResult<String> {
    let at = chrono::DateTime::parse_from_rfc3339(at).map_err(|e| StoreError::Internal(format!("a time: {e}")))?;
    let ms = u64::try_from(at.timestamp_millis()).unwrap_or(0);
    Ok(ulid::Ulid::from_parts(ms, 0).to_string())
}

#[async_trait]
impl Notifications for SqliteStore {
    async fn add_notifications(&self, text: &TextRef, notifications: &[NewNotification]) -> StoreResult<bool> {
        let rows = notifications
            .iter()
            .map(|n| {
                Ok((
                    n.recipient.as_str().to_owned(),
                    n.kind,
                    to_json(&n.actor)?,
                    n.excerpt.clone(),
                    n.created_at.clone(),
                ))
            })
            .collect::<StoreResult<Vec<_>>>()?;
        let (text_id, post, board, comment) = (
            text.id().to_owned(),
            text.post.post.as_str().to_owned(),
            text.post.board.as_str().to_owned(),
            text.comment.clone(),
        );
        let now = crate::domain::now();
        self.with_unseen(move |conn| {
            let tx = conn.transaction().map_err(sql_error)?;
            let seen = tx
                .query_row(
                    "SELECT 1 FROM notified_texts WHERE text_id = ?1 OR (text_id = ?2 AND withdrawn = 1)",
                    params![text_id, post],
                    |_| Ok(()),
                )
                .optional()
                .map_err(sql_error)?;
            if seen.is_some() {
                return Ok(false);
            }
            tx.execute(
                "INSERT INTO notified_texts (text_id, post_id, withdrawn, created_at) VALUES (?1, ?2, 0, ?3)",
                params![text_id, post, now],
            )
            .map_err(sql_error)?;
            for (recipient, kind, actor, excerpt, created_at) in &rows {
                // Later than the member's mark, whatever the clock says: a new
                // notification is unread.
                let mark: Option<String> = tx
                    .query_row(
                        "SELECT read_upto FROM notification_marks WHERE member_id = ?1",
                        params![recipient],
                        |row| row.get(0),
                    )
                    .optional()
                    .map_err(sql_error)?;
                let mut id = new_id();
                if let Some(mark) = mark.filter(|mark| *mark >= id) {
                    let after = ulid::Ulid::from_string(&mark).map_err(|e| StoreError::Internal(e.to_string()))?;
                    id = after.increment().unwrap_or(after).to_string();
                }
                tx.execute(
                    "INSERT INTO notifications (id, member_id, text_id, post_id, board, comment_id, kind, actor, excerpt, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                    params![id, recipient, text_id, post, board, comment, kind.as_str(), actor, excerpt, created_at],
                )
                .map_err(sql_error)?;
                tx.execute(
                    "DELETE FROM notifications WHERE member_id = ?1 AND id <
                        (SELECT id FROM notifications WHERE member_id = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)",
                    params![recipient, MAX_NOTIFICATIONS as i64 - 1],
                )
                .map_err(sql_error)?;
            }
            tx.commit().map_err(sql_error)?;
            Ok(true)
        })
        .await
    }

    async fn withdraw_notifications(&self, text: &TextRef) -> StoreResult<()> {
        let (text_id, post, whole_post) = (
            text.id().to_owned(),
            text.post.post.as_str().to_owned(),
            text.comment.is_none(),
        );
        let now = crate::domain::now();
        self.with_unseen(move |conn| {
            let tx = conn.transaction().map_err(sql_error)?;
            if whole_post {
                tx.execute("DELETE FROM notifications WHERE post_id = ?1", params![post])
                    .map_err(sql_error)?;
                tx.execute(
                    "UPDATE notified_texts SET withdrawn = 1 WHERE post_id = ?1",
                    params![post],
                )
                .map_err(sql_error)?;
            } else {
                tx.execute("DELETE FROM notifications WHERE text_id = ?1", params![text_id])
                    .map_err(sql_error)?;
            }
            tx.execute(
                "INSERT INTO notified_texts (text_id, post_id, withdrawn, created_at) VALUES (?1, ?2, 1, ?3)
                 ON CONFLICT (text_id) DO UPDATE SET withdrawn = 1",
                params![text_id, post, now],
            )
            .map_err(sql_error)?;
            tx.commit().map_err(sql_error)
        })
        .await
    }

    async fn disown_notifications(&self, text: &TextRef) -> StoreResult<()> {
        let text_id = text.id().to_owned();
        let actor = to_json(&Author::deleted_member())?;
        self.with_unseen(move |conn| {
            conn.execute(
                "UPDATE notifications SET actor = ?2 WHERE text_id = ?1",
                params![text_id, actor],
            )
            .map(|_| ())
            .map_err(sql_error)
        })
        .await
    }

    async fn notifications(
        &self,
        member: &MemberId,
        limit: PageLimit,
        cursor: Option<&str>,
    ) -> StoreResult<NotificationPage> {
        let member = member.as_str().to_owned();
        let after = cursor.map(cursor::decode).transpose()?;
        let limit = limit.get();
        self.read(move |conn| {
            let mark: String = conn
                .query_row(
                    "SELECT read_upto FROM notification_marks WHERE member_id = ?1",
                    params![member],
                    |row| row.get(0),
                )
                .optional()
                .map_err(sql_error)?
                .unwrap_or_default();
            let mut statement = conn
                .prepare_cached(
                    "SELECT id, board, post_id, comment_id, kind, actor, excerpt, created_at FROM notifications
                     WHERE member_id = ?1 AND (?2 IS NULL OR id < ?2) ORDER BY id DESC LIMIT ?3",
                )
                .map_err(sql_error)?;
            let rows = statement
                .query_map(params![member, after, limit as i64 + 1], |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, String>(2)?,
                        row.get::<_, Option<String>>(3)?,
                        row.get::<_, String>(4)?,
                        row.get::<_, String>(5)?,
                        row.get::<_, String>(6)?,
                        row.get::<_, String>(7)?,
                    ))
                })
                .map_err(sql_error)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(sql_error)?;
            let mut notifications = rows
                .into_iter()
                .map(|(id, board, post_id, comment_id, kind, actor, excerpt, created_at)| {
                    Ok(Notification {
                        read: id <= mark,
                        id,
                        kind: NotificationKind::parse(&kind)
                            .ok_or_else(|| StoreError::Internal(format!("a stored notification kind: {kind}")))?,
                        board,
                        post_id,
                        comment_id,
                        actor: from_json(&actor)?,
                        excerpt,
                        created_at,
                    })
                })
                .collect::<StoreResult<Vec<_>>>()?;
            let more = notifications.len() > limit;
            notifications.truncate(limit);
            Ok(NotificationPage {
                next_cursor: more
                    .then(|| notifications.last().map(|n| cursor::encode(&n.id)))
                    .flatten(),
                notifications,
            })
        })
        .await
    }

    async fn unread_notifications(&self, member: &MemberId) -> StoreResult<u64> {
        let member = member.as_str().to_owned();
        self.read(move |conn| unread(conn, &member)).await
    }

    async fn mark_notifications_read(&self, member: &MemberId, up_to: Option<&str>) -> StoreResult<u64> {
        let member = member.as_str().to_owned();
        let up_to = up_to.map(str::to_owned);
        self.with_unseen(move |conn| {
            let tx = conn.transaction().map_err(sql_error)?;
            let newest = tx
                .query_row(
                    "SELECT MAX(id) FROM notifications WHERE member_id = ?1",
                    params![member],
                    |row| row.get::<_, Option<String>>(0),
                )
                .map_err(sql_error)?;
            // Never past the newest notification: a mark in the future would
            // make the next ones read, or leave no id above it.
            let mark = match up_to {
                Some(id) => newest.map(|newest| newest.min(id)),
                None => newest,
            };
            if let Some(mark) = mark {
                tx.execute(
                    "INSERT INTO notification_marks (member_id, read_upto) VALUES (?1, ?2)
                     ON CONFLICT (member_id) DO UPDATE SET read_upto = MAX(read_upto, excluded.read_upto)",
                    params![member, mark],
                )
                .map_err(sql_error)?;
            }
            let left = unread(&tx, &member)?;
            tx.commit().map_err(sql_error)?;
            Ok(left)
        })
        .await
    }

    async fn expire_notifications(&self, before: &str) -> StoreResult<u64> {
        let floor = ulid_floor(before)?;
        let before = before.to_owned();
        self.with_unseen(move |conn| {
            let mut expired = 0;
            loop {
                let n = conn
                    .execute(
                        "DELETE FROM notifications WHERE id IN (SELECT id FROM notifications WHERE id < ?1 LIMIT ?2)",
                        params![floor, EXPIRE_BATCH as i64],
                    )
                    .map_err(sql_error)?;
                expired += n as u64;
                if n < EXPIRE_BATCH {
                    break;
                }
            }
            conn.execute("DELETE FROM notified_texts WHERE created_at < ?1", params![before])
                .map_err(sql_error)?;
            Ok(expired)
        })
        .await
    }

    async fn forget_member(&self, member: &MemberId) -> StoreResult<()> {
        let member = member.as_str().to_owned();
        self.with_unseen(move |conn| {
            let tx = conn.transaction().map_err(sql_error)?;
            for table in ["notifications", "notification_marks", "blocks"] {
                tx.execute(&format!("DELETE FROM {table} WHERE member_id = ?1"), params![member])
                    .map_err(sql_error)?;
            }
            tx.commit().map_err(sql_error)
        })
        .await
    }
}

fn unread(conn: &rusqlite::Connection, member: &str) -> StoreResult<u64> {
    conn.query_row(
        "SELECT COUNT(*) FROM notifications WHERE member_id = ?1 AND id >
            COALESCE((SELECT read_upto FROM notification_marks WHERE member_id = ?1), '')",
        params![member],
        |row| row.get::<_, i64>(0),
    )
    .map(|n| u64::try_from(n).unwrap_or(0))
    .map_err(sql_error)
}
