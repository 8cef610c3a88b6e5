//! [`Media`] on DynamoDB (docs/storage.md, Images): an item per upload
//! (`MEDIA#<id>` / `MEDIA`) and, while it is attached nowhere, a marker in
//! one partition ordered by grant time (`MEDIA_UNATTACHED` /
//! `<created_at>#<id>`) that the sweep reads oldest first. The id is kept
//! as `media_id` and its owner as `granted_to`: an `id` or `owner`
//! attribute would name the `ById` or `ByOwner` index.
//! One partition takes every grant's marker: ~1,000 grants a second at most,
//! far above what the grant limits let a board reach.

use std::collections::HashMap;

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnConsumedCapacity};

use super::DynamoStore;
use super::attributes::{Item, key, n, s, text};
use super::transact::{TxFailure, sdk_error};
use crate::domain::media::{MediaOutcome, MediaOwner, MediaRecord, MediaStatus, MediaType, NewMedia, ReadyMedia};
use crate::domain::{BoardSlug, MediaId};
use crate::store::{Media, StoreError, StoreResult};

const MEDIA_SK: &str = "MEDIA";
const UNATTACHED_PK: &str = "MEDIA_UNATTACHED";

fn media_key(id: &str) -> Item {
    key(format!("MEDIA#{id}"), MEDIA_SK.to_owned())
}

fn marker_key(created_at: &str, id: &str) -> Item {
    key(UNATTACHED_PK.to_owned(), format!("{created_at}#{id}"))
}

fn media_type(stored: Option<&str>) -> StoreResult<MediaType> {
    let stored = stored.unwrap_or_default();
    MediaType::parse(stored).map_err(|_| StoreError::Internal(format!("a stored media type: {stored}")))
}

fn number(item: &Item, name: &str) -> Option<u64> {
    item.get(name).and_then(|v| v.as_n().ok()).and_then(|v| v.parse().ok())
}

fn record_of(item: &Item) -> StoreResult<MediaRecord> {
    let bad = |what: &str| StoreError::Internal(format!("a stored upload has no valid {what}"));
    let status = match text(item, "status") {
        Some("pending") => MediaStatus::Pending,
        Some("ready") => MediaStatus::Ready,
        Some("rejected") => MediaStatus::Rejected,
        _ => return Err(bad("status")),
    };
    let ready = match status {
        MediaStatus::Ready => Some(ReadyMedia {
            content_type: media_type(text(item, "content_type"))?,
            width: number(item, "width")
                .and_then(|w| u32::try_from(w).ok())
                .ok_or_else(|| bad("width"))?,
            height: number(item, "height")
                .and_then(|h| u32::try_from(h).ok())
                .ok_or_else(|| bad("height"))?,
            bytes: number(item, "stored_bytes").ok_or_else(|| bad("stored size"))?,
            thumbnail: media_type(text(item, "thumbnail_type"))?,
        }),
        _ => None,
    };
    Ok(MediaRecord {
        id: MediaId::from_stored(text(item, "media_id").ok_or_else(|| bad("id"))?.to_owned()),
        board: BoardSlug::from_stored(text(item, "board").ok_or_else(|| bad("board"))?.to_owned()),
        owner: text(item, "granted_to")
            .and_then(MediaOwner::from_key)
            .ok_or_else(|| bad("owner"))?,
        declared: media_type(text(item, "declared"))?,
        bytes: number(item, "bytes").ok_or_else(|| bad("size"))?,
        created_at: text(item, "created_at").ok_or_else(|| bad("creation time"))?.to_owned(),
        status,
        ready,
        reason: text(item, "reason").map(str::to_owned),
        attached_to: text(item, "attached_to").map(str::to_owned),
    })
}

#[async_trait]
impl Media for DynamoStore {
    /// One transaction: the upload's item (only if new) and its marker.
    async fn create_media(&self, media: &NewMedia) -> StoreResult<bool> {
        let id = media.id.as_str();
        let mut item = media_key(id);
        item.extend([
            ("media_id".to_owned(), s(id)),
            ("board".to_owned(), s(media.board.as_str())),
            ("granted_to".to_owned(), s(media.owner.key())),
            ("declared".to_owned(), s(media.declared.as_str())),
            ("bytes".to_owned(), n(i64::try_from(media.bytes).unwrap_or(i64::MAX))),
            ("created_at".to_owned(), s(media.created_at.clone())),
            ("status".to_owned(), s("pending")),
        ]);
        let mut marker = marker_key(&media.created_at, id);
        marker.insert("media_id".to_owned(), s(id));
        let items = vec![self.put(item, "attribute_not_exists(PK)")?, self.overwrite(marker)?];
        match self.transact(items).await {
            Ok(()) => Ok(true),
            Err(TxFailure::Conditions(_)) => Ok(false),
            Err(TxFailure::Store(e)) => Err(e),
        }
    }

    /// One consistent GetItem: a check's outcome shows at once.
    async fn media(&self, id: &MediaId) -> StoreResult<Option<MediaRecord>> {
        self.get(media_key(id.as_str()))
            .await?
            .as_ref()
            .map(record_of)
            .transpose()
    }

    /// One UpdateItem conditioned on the upload being pending.
    async fn finish_media(&self, id: &MediaId, outcome: &MediaOutcome) -> StoreResult<bool> {
        let mut values: HashMap<String, AttributeValue> = HashMap::from([(":pending".to_owned(), s("pending"))]);
        let expression = match outcome {
            MediaOutcome::Ready(ready) => {
                values.extend([
                    (":ready".to_owned(), s("ready")),
                    (":type".to_owned(), s(ready.content_type.as_str())),
                    (":width".to_owned(), n(i64::from(ready.width))),
                    (":height".to_owned(), n(i64::from(ready.height))),
                    (":bytes".to_owned(), n(i64::try_from(ready.bytes).unwrap_or(i64::MAX))),
                    (":thumb".to_owned(), s(ready.thumbnail.as_str())),
                ]);
                "SET #status = :ready, content_type = :type, width = :width, height = :height, \
                 stored_bytes = :bytes, thumbnail_type = :thumb"
            }
            MediaOutcome::Rejected(reason) => {
                values.extend([
                    (":rejected".to_owned(), s("rejected")),
                    (":reason".to_owned(), s(reason.clone())),
                ]);
                "SET #status = :rejected, reason = :reason"
            }
        };
        self.update_if(
            media_key(id.as_str()),
            expression,
            "#status = :pending",
            HashMap::from([("#status".to_owned(), "status".to_owned())]),
            values,
        )
        .await
    }

    /// One Query of the markers, oldest first, and one BatchGetItem of
    /// their uploads (a marker whose upload is gone is skipped).
    async fn unattached_media(&self, before: &str, limit: usize) -> StoreResult<Vec<MediaRecord>> {
        let touched = [UNATTACHED_PK.to_owned()];
        let out = self
            .client()
            .await
            .query()
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .key_condition_expression("PK = :pk AND SK < :before")
            .expression_attribute_values(":pk", s(UNATTACHED_PK))
            .expression_attribute_values(":before", s(before))
            .limit(i32::try_from(limit).unwrap_or(i32::MAX).max(1))
            .consistent_read(true)
            .send()
            .await
            .inspect(|out| self.record(out, &touched))
            .map_err(sdk_error)?;
        let ids: Vec<String> = out
            .items
            .unwrap_or_default()
            .iter()
            .filter_map(|marker| text(marker, "media_id").map(str::to_owned))
            .collect();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut records = self
            .batch_get(ids.iter().map(|id| media_key(id)).collect(), true, None)
            .await?
            .iter()
            .map(record_of)
            .collect::<StoreResult<Vec<_>>>()?;
        records.sort_by(|a, b| (&a.created_at, &a.id).cmp(&(&b.created_at, &b.id)));
        Ok(records)
    }

    /// The uploads (for their markers' keys), then both deleted in batches.
    async fn delete_media(&self, ids: &[MediaId]) -> StoreResult<()> {
        for chunk in ids.chunks(50) {
            let items = self
                .batch_get(chunk.iter().map(|id| media_key(id.as_str())).collect(), true, None)
                .await?;
            let mut keys = Vec::with_capacity(items.len() * 2);
            for item in &items {
                let record = record_of(item)?;
                keys.push(marker_key(&record.created_at, record.id.as_str()));
                keys.push(media_key(record.id.as_str()));
            }
            self.delete_all(keys).await?;
        }
        Ok(())
    }
}
