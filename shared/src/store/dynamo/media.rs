//! [`Media`] on DynamoDB (docs/storage.md, Images): an item per upload
//! (`MEDIA#<id>` / `MEDIA`); while it is attached nowhere, a marker in one
//! partition ordered by when it falls due (`MEDIA_UNATTACHED` /
//! `<due_at>#<id>`) that the sweep reads earliest first; while attached, a
//! child in its post's partition (`POST#<post>` / `MEDIA#<id>`, naming the
//! post or comment in `text`), by which a delete finds a post's images and
//! its comments'. The id is kept as `media_id` and its owner as
//! `granted_to`: an `id` or `owner` attribute would name the `ById` or
//! `ByOwner` index. An attach leaves the marker behind (its key needs the
//! due time the write does not know); the sweep drops such stale markers.
//! One partition takes every marker: ~1,000 writes a second at most, far
//! above what the grant limits let a board reach. A member's grant also
//! puts a pointer under `UPLOADS#<owner>` / `<id>`, gone by TTL after the
//! grant's 24 hours, by which deleting the account finds what it left
//! unattached.

use std::collections::HashMap;

use async_trait::async_trait;
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder as QueryBuilder;
use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};

use super::DynamoStore;
use super::attributes::{Item, key, n, s, text};
use super::items::post_pk;
use super::transact::TxFailure;
use crate::domain::media::{
    AttachedMedia, MediaOutcome, MediaOwner, MediaRecord, MediaStatus, MediaType, NewMedia, ReadyMedia,
};
use crate::domain::{BoardSlug, MediaId, TextRef};
use crate::store::dynamo::metered::Metered;
use crate::store::{Media, StoreError, StoreResult};

const MEDIA_SK: &str = "MEDIA";
const UNATTACHED_PK: &str = "MEDIA_UNATTACHED";

fn media_key(id: &str) -> Item {
    key(format!("MEDIA#{id}"), MEDIA_SK.to_owned())
}

/// The partition of an owner's upload pointers.
fn uploads_pk(owner: &MediaOwner) -> String {
    format!("UPLOADS#{}", owner.key())
}

/// How long an upload pointer is kept: past the 24 hours after which the
/// sweep deletes an upload attached nowhere anyway.
const POINTER_SECONDS: u64 = 25 * 3600;

fn marker_key(due_at: &str, id: &str) -> Item {
    key(UNATTACHED_PK.to_owned(), format!("{due_at}#{id}"))
}

fn marker(due_at: &str, id: &str) -> Item {
    let mut item = marker_key(due_at, id);
    item.insert("media_id".to_owned(), s(id));
    item
}

/// An attached image's child in its post's partition.
const CHILD_PREFIX: &str = "MEDIA#";

fn child_key(post: &str, id: &str) -> Item {
    key(post_pk(post), format!("{CHILD_PREFIX}{id}"))
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
        due_at: text(item, "due_at").map(str::to_owned),
    })
}

impl DynamoStore {
    /// Transaction items attaching `media` to `text` (a post, or a comment
    /// of `post`): each image's update, conditioned as [`Media`] says (ready,
    /// granted on `board` to `owner`, attached nowhere, not due at `now`),
    /// and its child in the post's partition. Two items per image.
    pub(super) fn attach_items(
        &self,
        media: &[AttachedMedia],
        text: &str,
        post: &str,
        board: &str,
        owner: &MediaOwner,
        now: &str,
    ) -> StoreResult<Vec<TransactWriteItem>> {
        let mut items = Vec::with_capacity(media.len() * 2);
        for image in media {
            items.push(self.update(
                media_key(&image.id),
                "SET attached_to = :text, attached_post = :post REMOVE due_at",
                Some(
                    "#status = :ready AND board = :board AND granted_to = :owner \
                     AND attribute_not_exists(attached_to) AND due_at > :now",
                ),
                &[("#status", "status")],
                &[
                    (":text", s(text)),
                    (":post", s(post)),
                    (":ready", s("ready")),
                    (":board", s(board)),
                    (":owner", s(owner.key())),
                    (":now", s(crate::domain::media::attachable_until(now))),
                ],
            )?);
            let mut child = child_key(post, &image.id);
            child.insert("text".to_owned(), s(text));
            items.push(self.overwrite(child)?);
        }
        Ok(items)
    }

    /// Transaction items releasing image `id` from `text` of `post`: due at
    /// `at`, with its marker, and its child gone. Three items.
    pub(super) fn release_items(
        &self,
        id: &str,
        text: &str,
        post: &str,
        at: &str,
    ) -> StoreResult<Vec<TransactWriteItem>> {
        Ok(vec![
            self.update(
                media_key(id),
                "SET due_at = :at REMOVE attached_to, attached_post",
                Some("attached_to = :text"),
                &[],
                &[(":at", s(at)), (":text", s(text))],
            )?,
            self.overwrite(marker(at, id))?,
            self.delete(child_key(post, id), None)?,
        ])
    }

    /// Releases the images attached to `post` and its comments (or, with
    /// `comment`, to that comment): one Query of the post's children, then
    /// one transaction per image. A child whose image was released already
    /// is only deleted. How many were released.
    pub(super) async fn release_children(&self, post: &str, comment: Option<&str>, at: &str) -> StoreResult<u64> {
        let shape = |q: QueryBuilder| {
            q.key_condition_expression("PK = :pk AND begins_with(SK, :media)")
                .expression_attribute_values(":media", s(CHILD_PREFIX))
        };
        let mut children: Vec<(String, String)> = Vec::new();
        for child in self.query_all(&post_pk(post), None, &shape).await? {
            let (Some(sk), Some(of)) = (text(&child, "SK"), text(&child, "text")) else {
                continue;
            };
            if comment.is_none_or(|c| c == of) {
                children.push((sk.trim_start_matches(CHILD_PREFIX).to_owned(), of.to_owned()));
            }
        }
        self.release_each(post, children, at).await
    }

    /// Releases each `(image id, text)` child of `post` (one transaction
    /// per image); a child whose image was released already is only
    /// deleted. How many were released.
    pub(super) async fn release_each(&self, post: &str, children: Vec<(String, String)>, at: &str) -> StoreResult<u64> {
        let mut released = 0;
        for (id, of) in children {
            match self.transact(self.release_items(&id, &of, post, at)?).await {
                Ok(()) => released += 1,
                Err(TxFailure::Conditions(_)) => self.delete_all(vec![child_key(post, &id)]).await?,
                Err(TxFailure::Store(e)) => return Err(e),
            }
        }
        Ok(released)
    }
}

/// The image a key of a post's partition names, if it is an attached
/// image's child (`MEDIA#<id>`).
pub(super) fn child_image(sk: &str) -> Option<&str> {
    sk.strip_prefix(CHILD_PREFIX)
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
            ("due_at".to_owned(), s(media.due_at.clone())),
            ("status".to_owned(), s("pending")),
        ]);
        let mut items = vec![
            self.put(item, "attribute_not_exists(PK)")?,
            self.overwrite(marker(&media.due_at, id))?,
        ];
        if let MediaOwner::Member(_) = &media.owner {
            let expires_at = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
                + POINTER_SECONDS;
            let mut pointer = key(uploads_pk(&media.owner), id.to_owned());
            pointer.insert(
                "expires_at".to_owned(),
                n(i64::try_from(expires_at).unwrap_or(i64::MAX)),
            );
            items.push(self.overwrite(pointer)?);
        }
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

    /// One BatchGetItem (consistent).
    async fn media_batch(&self, ids: &[MediaId]) -> StoreResult<Vec<MediaRecord>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.batch_get(ids.iter().map(|id| media_key(id.as_str())).collect(), true, None)
            .await?
            .iter()
            .map(record_of)
            .collect()
    }

    async fn release_media(&self, text: &TextRef, at: &str) -> StoreResult<u64> {
        self.release_children(text.post.post.as_str(), text.comment.as_deref(), at)
            .await
    }

    /// One Query of the owner's upload pointers, a BatchGetItem of their
    /// uploads per 100, then per upload attached nowhere one transaction: its due
    /// time moved to `at` (unless attached since) and its marker for `at`.
    async fn release_unattached(&self, owner: &MediaOwner, at: &str) -> StoreResult<u64> {
        let ids: Vec<String> = self
            .query_all(&uploads_pk(owner), None, &|q: QueryBuilder| {
                q.key_condition_expression("PK = :pk")
            })
            .await?
            .iter()
            .filter_map(|pointer| text(pointer, "SK").map(str::to_owned))
            .collect();
        if ids.is_empty() {
            return Ok(0);
        }
        let mut records: Vec<MediaRecord> = Vec::new();
        // A BatchGetItem takes at most 100 keys.
        for chunk in ids.chunks(100) {
            let items = self
                .batch_get(chunk.iter().map(|id| media_key(id)).collect(), true, None)
                .await?;
            records.extend(items.iter().map(record_of).collect::<StoreResult<Vec<_>>>()?);
        }
        let mut released = 0;
        for record in records
            .iter()
            .filter(|r| r.attached_to.is_none() && r.due_at.as_deref().is_some_and(|due| due > at))
        {
            let id = record.id.as_str();
            let items = vec![
                self.update(
                    media_key(id),
                    "SET due_at = :at",
                    Some("attribute_exists(PK) AND attribute_not_exists(attached_to)"),
                    &[],
                    &[(":at", s(at))],
                )?,
                self.overwrite(marker(at, id))?,
            ];
            match self.transact(items).await {
                Ok(()) => released += 1,
                // Attached or swept since the read: nothing to release.
                Err(TxFailure::Conditions(_)) => {}
                Err(TxFailure::Store(e)) => return Err(e),
            }
        }
        Ok(released)
    }

    /// One Query of the markers due, earliest first, and one BatchGetItem of
    /// their uploads; markers left by an attach or a release (their upload
    /// attached, gone, or due at another time) are deleted on the way.
    async fn due_media(&self, now: &str, limit: usize) -> StoreResult<Vec<MediaRecord>> {
        let touched = [UNATTACHED_PK.to_owned()];
        let out = self
            .client()
            .await
            .query()
            .table_name(&self.table)
            .key_condition_expression("PK = :pk AND SK < :after")
            .expression_attribute_values(":pk", s(UNATTACHED_PK))
            // `<due_at>#<id>`: every marker due at `now` sorts before `<now>$`.
            .expression_attribute_values(":after", s(format!("{now}$")))
            .limit(i32::try_from(limit).unwrap_or(i32::MAX).max(1))
            .consistent_read(true)
            .metered(self, &touched)
            .await?;
        let markers: Vec<(String, String)> = out
            .items
            .unwrap_or_default()
            .iter()
            .filter_map(|m| {
                let (due, _) = text(m, "SK")?.rsplit_once('#')?;
                Some((due.to_owned(), text(m, "media_id")?.to_owned()))
            })
            .collect();
        if markers.is_empty() {
            return Ok(Vec::new());
        }
        let records: Vec<MediaRecord> = self
            .batch_get(markers.iter().map(|(_, id)| media_key(id)).collect(), true, None)
            .await?
            .iter()
            .map(record_of)
            .collect::<StoreResult<_>>()?;
        let mut due = Vec::new();
        let mut stale = Vec::new();
        for (at, id) in &markers {
            match records.iter().find(|r| r.id.as_str() == id) {
                Some(r) if r.attached_to.is_none() && r.due_at.as_deref() == Some(at.as_str()) => due.push(r.clone()),
                _ => stale.push(marker_key(at, id)),
            }
        }
        self.delete_all(stale).await?;
        due.sort_by(|a, b| (&a.due_at, &a.id).cmp(&(&b.due_at, &b.id)));
        Ok(due)
    }

    /// The uploads (for their markers' keys), then those still attached
    /// nowhere deleted with their markers, in batches.
    async fn delete_media(&self, ids: &[MediaId]) -> StoreResult<()> {
        for chunk in ids.chunks(50) {
            let items = self
                .batch_get(chunk.iter().map(|id| media_key(id.as_str())).collect(), true, None)
                .await?;
            let mut keys = Vec::with_capacity(items.len() * 2);
            for item in &items {
                let record = record_of(item)?;
                if record.attached_to.is_some() {
                    continue;
                }
                if let Some(due) = &record.due_at {
                    keys.push(marker_key(due, record.id.as_str()));
                }
                keys.push(media_key(record.id.as_str()));
            }
            self.delete_all(keys).await?;
        }
        Ok(())
    }
}
