//! [`Media`] on SQLite: the `media` table (migrations.rs, migration 10).

use async_trait::async_trait;
use rusqlite::{OptionalExtension, Row, params};

use super::{SqliteStore, sql_error};
use crate::domain::media::{MediaOutcome, MediaOwner, MediaRecord, MediaStatus, MediaType, NewMedia, ReadyMedia};
use crate::domain::{BoardSlug, MediaId};
use crate::store::{Media, StoreError, StoreResult};

const COLUMNS: &str = "id, board, owner, declared, bytes, created_at, status, content_type, width, height,
    stored_bytes, thumbnail_type, reason, attached_to";

fn media_type(stored: &str) -> StoreResult<MediaType> {
    MediaType::parse(stored).map_err(|_| StoreError::Internal(format!("a stored media type: {stored}")))
}

fn record(row: &Row<'_>) -> rusqlite::Result<[Option<String>; 14]> {
    let mut columns: [Option<String>; 14] = Default::default();
    for (at, column) in columns.iter_mut().enumerate() {
        *column = match row.get_ref(at)? {
            rusqlite::types::ValueRef::Null => None,
            rusqlite::types::ValueRef::Integer(n) => Some(n.to_string()),
            value => Some(value.as_str()?.to_owned()),
        };
    }
    Ok(columns)
}

fn parse_record(columns: [Option<String>; 14]) -> StoreResult<MediaRecord> {
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
    })
}

#[async_trait]
impl Media for SqliteStore {
    async fn create_media(&self, media: &NewMedia) -> StoreResult<bool> {
        let media = media.clone();
        self.with_unseen(move |conn| {
            conn.execute(
                "INSERT INTO media (id, board, owner, declared, bytes, created_at, status)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending') ON CONFLICT (id) DO NOTHING",
                params![
                    media.id.as_str(),
                    media.board.as_str(),
                    media.owner.key(),
                    media.declared.as_str(),
                    i64::try_from(media.bytes).unwrap_or(i64::MAX),
                    media.created_at,
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

    async fn unattached_media(&self, before: &str, limit: usize) -> StoreResult<Vec<MediaRecord>> {
        let before = before.to_owned();
        let rows = self
            .read(move |conn| {
                let mut statement = conn
                    .prepare_cached(&format!(
                        "SELECT {COLUMNS} FROM media WHERE attached_to IS NULL AND created_at < ?1
                         ORDER BY created_at LIMIT ?2"
                    ))
                    .map_err(sql_error)?;
                statement
                    .query_map(params![before, i64::try_from(limit).unwrap_or(i64::MAX)], record)
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
                tx.execute("DELETE FROM media WHERE id = ?1", params![id])
                    .map_err(sql_error)?;
            }
            tx.commit().map_err(sql_error)
        })
        .await
    }
}
