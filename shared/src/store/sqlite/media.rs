//! [`Media`] on SQLite: the `media` table (migrations.rs, migration 10).

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};

use super::{SqliteStore, sql_error};
use crate::domain::media::{
    AttachedMedia, MediaOutcome, MediaOwner, MediaRecord, MediaStatus, MediaType, NewMedia, ReadyMedia,
};
use crate::domain::{BoardSlug, MediaId, TextRef};
use crate::store::{Media, StoreError, StoreResult};

const COLUMNS: &str = "id, board, owner, declared, bytes, created_at, status, content_type, width, height,
    stored_bytes, thumbnail_type, reason, attached_to, due_at";

fn media_type(stored: &str) -> StoreResult<MediaType> {
    MediaType::parse(stored).map_err(|_| StoreError::Internal(format!("a stored media type: {stored}")))
}

fn record(row: &Row<'_>) -> rusqlite::Result<[Option<String>; 15]> {
    let mut columns: [Option<String>; 15] = Default::default();
    for (at, column) in columns.iter_mut().enumerate() {
        *column = match row.get_ref(at)? {
            rusqlite::types::ValueRef::Null => None,
            rusqlite::types::ValueRef::Integer(n) => Some(n.to_string()),
            value => Some(value.as_str()?.to_owned()),
        };
    }
    Ok(columns)
}

fn parse_record(columns: [Option<String>; 15]) -> StoreResult<MediaRecord> {
    let [
        id,
        board,
        owner,
        declared,
        bytes,
        created_at,
        status,
        content_type,
        width,
        height,
        stored_bytes,
        thumbnail_type,
        reason,
        attached_to,
        due_at,
    ] = columns;
    let bad = |what: &str| StoreError::Internal(format!("a stored media row has no valid {what}"));
    let number = |n: Option<String>, what: &str| n.and_then(|n| n.parse::<u64>().ok()).ok_or_else(|| bad(what));
    let status = match status.as_deref() {
        Some("pending") => MediaStatus::Pending,
        Some("ready") => MediaStatus::Ready,
        Some("rejected") => MediaStatus::Rejected,
        _ => return Err(bad("status")),
    };
    let ready = match status {
        MediaStatus::Ready => Some(ReadyMedia {
            content_type: media_type(&content_type.ok_or_else(|| bad("content type"))?)?,
            width: u32::try_from(number(width, "width")?).map_err(|_| bad("width"))?,
            height: u32::try_from(number(height, "height")?).map_err(|_| bad("height"))?,
            bytes: number(stored_bytes, "stored size")?,
            thumbnail: media_type(&thumbnail_type.ok_or_else(|| bad("thumbnail type"))?)?,
        }),
        _ => None,
    };
    Ok(MediaRecord {
        id: MediaId::from_stored(id.ok_or_else(|| bad("id"))?),
        board: BoardSlug::from_stored(board.ok_or_else(|| bad("board"))?),
        owner: owner
            .as_deref()
            .and_then(MediaOwner::from_key)
            .ok_or_else(|| bad("owner"))?,
        declared: media_type(&declared.ok_or_else(|| bad("declared type"))?)?,
        bytes: number(bytes, "size")?,
        created_at: created_at.ok_or_else(|| bad("creation time"))?,
        status,
        ready,
        reason,
        attached_to,
        due_at,
    })
}

/// Attaches `media` to `text` (a post, or a comment of `post`) inside the
/// writer's transaction: each must be ready, granted on `board` to
/// `owner`, attached nowhere and not due within the margin after `now`.
/// [`StoreError::MediaUnavailable`] otherwise (the caller's transaction
/// then rolls back, so nothing is written).
pub(super) fn attach(
    tx: &Transaction<'_>,
    media: &[AttachedMedia],
    text: &str,
    post: &str,
    board: &str,
    owner: &MediaOwner,
    now: &str,
) -> StoreResult<()> {
    let owner = owner.key();
    let until = crate::domain::media::attachable_until(now);
    for image in media {
        let attached = tx
            .execute(
                "UPDATE media SET attached_to = ?2, attached_post = ?3, due_at = NULL
                 WHERE id = ?1 AND status = 'ready' AND board = ?4 AND owner = ?5 AND attached_to IS NULL
                   AND due_at > ?6",
                params![image.id, text, post, board, owner, until],
            )
            .map_err(sql_error)?;
        if attached != 1 {
            return Err(StoreError::MediaUnavailable);
        }
    }
    Ok(())
}

/// Detaches these images from `text`, due at `at` (an edit dropped them).
pub(super) fn detach(tx: &Transaction<'_>, ids: &[&str], text: &str, at: &str) -> StoreResult<()> {
    for id in ids {
        tx.execute(
            "UPDATE media SET attached_to = NULL, attached_post = NULL, due_at = ?3
             WHERE id = ?1 AND attached_to = ?2",
            params![id, text, at],
        )
        .map_err(sql_error)?;
    }
    Ok(())
}

/// The images of a post (with its comments'), or of one comment, due at
/// `at`: inside a delete's transaction, and again on its text event.
pub(super) fn release(tx: &Connection, post: &str, comment: Option<&str>, at: &str) -> StoreResult<u64> {
    let released = match comment {
        None => tx.execute(
            "UPDATE media SET attached_to = NULL, attached_post = NULL, due_at = ?2 WHERE attached_post = ?1",
            params![post, at],
        ),
        Some(comment) => tx.execute(
            "UPDATE media SET attached_to = NULL, attached_post = NULL, due_at = ?3
             WHERE attached_post = ?1 AND attached_to = ?2",
            params![post, comment, at],
        ),
    }
    .map_err(sql_error)?;
    Ok(released as u64)
}

#[async_trait]
impl Media for SqliteStore {
    async fn create_media(&self, media: &NewMedia) -> StoreResult<bool> {
        let media = media.clone();
        self.with_unseen(move |conn| {
            conn.execute(
                "INSERT INTO media (id, board, owner, declared, bytes, created_at, status, due_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7) ON CONFLICT (id) DO NOTHING",
                params![
                    media.id.as_str(),
                    media.board.as_str(),
                    media.owner.key(),
                    media.declared.as_str(),
                    i64::try_from(media.bytes).unwrap_or(i64::MAX),
                    media.created_at,
                    media.due_at,
                ],
            )
            .map(|n| n == 1)
            .map_err(sql_error)
        })
        .await
    }

    async fn media(&self, id: &MediaId) -> StoreResult<Option<MediaRecord>> {
        let id = id.as_str().to_owned();
        let row = self
            .read(move |conn| {
                conn.query_row(
                    &format!("SELECT {COLUMNS} FROM media WHERE id = ?1"),
                    params![id],
                    record,
                )
                .optional()
                .map_err(sql_error)
            })
            .await?;
        row.map(parse_record).transpose()
    }

    async fn finish_media(&self, id: &MediaId, outcome: &MediaOutcome) -> StoreResult<bool> {
        let id = id.as_str().to_owned();
        let outcome = outcome.clone();
        self.with_unseen(move |conn| {
            let changed = match outcome {
                MediaOutcome::Ready(ready) => conn.execute(
                    "UPDATE media SET status = 'ready', content_type = ?2, width = ?3, height = ?4,
                        stored_bytes = ?5, thumbnail_type = ?6
                     WHERE id = ?1 AND status = 'pending'",
                    params![
                        id,
                        ready.content_type.as_str(),
                        ready.width,
                        ready.height,
                        i64::try_from(ready.bytes).unwrap_or(i64::MAX),
                        ready.thumbnail.as_str()
                    ],
                ),
                MediaOutcome::Rejected(reason) => conn.execute(
                    "UPDATE media SET status = 'rejected', reason = ?2 WHERE id = ?1 AND status = 'pending'",
                    params![id, reason],
                ),
            };
            changed.map(|n| n == 1).map_err(sql_error)
        })
        .await
    }

    async fn media_batch(&self, ids: &[MediaId]) -> StoreResult<Vec<MediaRecord>> {
        let ids: Vec<String> = ids.iter().map(|id| id.as_str().to_owned()).collect();
        let rows = self
            .read(move |conn| {
                let mut statement = conn
                    .prepare_cached(&format!("SELECT {COLUMNS} FROM media WHERE id = ?1"))
                    .map_err(sql_error)?;
                let mut rows = Vec::with_capacity(ids.len());
                for id in &ids {
                    if let Some(row) = statement.query_row(params![id], record).optional().map_err(sql_error)? {
                        rows.push(row);
                    }
                }
                Ok(rows)
            })
            .await?;
        rows.into_iter().map(parse_record).collect()
    }

    async fn release_media(&self, text: &TextRef, at: &str) -> StoreResult<u64> {
        let (post, comment, at) = (text.post.post.as_str().to_owned(), text.comment.clone(), at.to_owned());
        self.with_unseen(move |conn| release(conn, &post, comment.as_deref(), &at))
            .await
    }

    async fn release_unattached(&self, owner: &MediaOwner, at: &str) -> StoreResult<u64> {
        let (owner, at) = (owner.key(), at.to_owned());
        self.with_unseen(move |conn| {
            conn.execute(
                "UPDATE media SET due_at = ?2 WHERE owner = ?1 AND attached_to IS NULL AND due_at > ?2",
                params![owner, at],
            )
            .map(|n| n as u64)
            .map_err(sql_error)
        })
        .await
    }

    async fn due_media(&self, now: &str, limit: usize) -> StoreResult<Vec<MediaRecord>> {
        let now = now.to_owned();
        let rows = self
            .read(move |conn| {
                let mut statement = conn
                    .prepare_cached(&format!(
                        "SELECT {COLUMNS} FROM media WHERE attached_to IS NULL AND due_at <= ?1
                         ORDER BY due_at LIMIT ?2"
                    ))
                    .map_err(sql_error)?;
                statement
                    .query_map(params![now, i64::try_from(limit).unwrap_or(i64::MAX)], record)
                    .map_err(sql_error)?
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(sql_error)
            })
            .await?;
        rows.into_iter().map(parse_record).collect()
    }

    async fn delete_media(&self, ids: &[MediaId]) -> StoreResult<()> {
        let ids: Vec<String> = ids.iter().map(|id| id.as_str().to_owned()).collect();
        self.with_unseen(move |conn| {
            let tx = conn.transaction().map_err(sql_error)?;
            for id in &ids {
                tx.execute("DELETE FROM media WHERE id = ?1 AND attached_to IS NULL", params![id])
                    .map_err(sql_error)?;
            }
            tx.commit().map_err(sql_error)
        })
        .await
    }
}
