//! Uploaded images (docs/API.md, Images): what a grant asks for,
//! the states an upload goes through, and the lists of images a post or a
//! comment attaches. The checking itself (decoding, re-encoding,
//! thumbnails) is the `imaging` crate's, linked only where uploads are
//! processed; this module is what every function may know of them.

use serde::{Deserialize, Serialize};

use super::{BoardSlug, MediaId, MemberId, WriterKey};
use crate::error::ApiError;

/// `MEDIA_MAX_BYTES`' default: 20 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 20 * 1024 * 1024;
/// Images one post may attach.
pub const MAX_POST_MEDIA: usize = 20;
/// Images one comment may attach.
pub const MAX_COMMENT_MEDIA: usize = 1;
/// An upload never attached is deleted, with its file, after this long.
pub const UNATTACHED_HOURS: i64 = 24;
/// An image is attached only while it has this long left before it is due:
/// the sweep deletes what is due by its own clock, which may run ahead of
/// the writer's by up to this much.
pub const ATTACH_MARGIN_SECONDS: i64 = 60;

/// The least `due_at` an image attached at `now` (RFC 3339) may have.
pub fn attachable_until(now: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(now).map_or_else(
        |_| now.to_owned(),
        |at| {
            crate::domain::timestamp(at.with_timezone(&chrono::Utc) + chrono::Duration::seconds(ATTACH_MARGIN_SECONDS))
        },
    )
}

/// How long a grant's upload URL may be used.
pub const GRANT_MINUTES: i64 = 15;

/// The type a client declares for an upload: one of the four the board takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum MediaType {
    #[serde(rename = "image/jpeg")]
    Jpeg,
    #[serde(rename = "image/png")]
    Png,
    #[serde(rename = "image/gif")]
    Gif,
    #[serde(rename = "image/webp")]
    Webp,
}

impl MediaType {
    const ALL: [MediaType; 4] = [MediaType::Jpeg, MediaType::Png, MediaType::Gif, MediaType::Webp];

    /// The `content_type` field: exactly one of the four (case and
    /// parameters are not accepted: a grant signs the exact type).
    pub fn parse(content_type: &str) -> Result<Self, ApiError> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == content_type)
            .ok_or_else(|| ApiError::invalid("content_type", "must be image/jpeg, image/png, image/gif or image/webp"))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            MediaType::Jpeg => "image/jpeg",
            MediaType::Png => "image/png",
            MediaType::Gif => "image/gif",
            MediaType::Webp => "image/webp",
        }
    }

    /// The file name extension the served file carries.
    pub fn extension(self) -> &'static str {
        match self {
            MediaType::Jpeg => "jpg",
            MediaType::Png => "png",
            MediaType::Gif => "gif",
            MediaType::Webp => "webp",
        }
    }
}

/// The `bytes` field of a grant: the upload's size, at least 1 and at most
/// `MEDIA_MAX_BYTES`. The upload URL accepts no more than this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UploadSize(u64);

impl UploadSize {
    pub fn parse(bytes: i64, max: u64) -> Result<Self, ApiError> {
        match u64::try_from(bytes) {
            Ok(n) if (1..=max).contains(&n) => Ok(UploadSize(n)),
            _ => Err(ApiError::invalid("bytes", format!("must be between 1 and {max}"))),
        }
    }

    pub fn get(self) -> u64 {
        self.0
    }
}

/// Where an upload is: waiting for its file or its check, ready to attach,
/// or refused (with a reason).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum MediaStatus {
    Pending,
    Ready,
    Rejected,
}

/// The `media` field of a post or a comment: distinct image ids, at most
/// `max` (20 for a post, 1 for a comment).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MediaList(Vec<MediaId>);

impl MediaList {
    pub fn parse(ids: Vec<String>, max: usize) -> Result<Self, ApiError> {
        if ids.len() > max {
            return Err(ApiError::invalid("media", format!("holds at most {max} images")));
        }
        let mut parsed: Vec<MediaId> = Vec::with_capacity(ids.len());
        for id in ids {
            let id = MediaId::parse(&id).map_err(|_| ApiError::invalid("media", "holds an id that is no image"))?;
            if parsed.contains(&id) {
                return Err(ApiError::invalid("media", "names an image twice"));
            }
            parsed.push(id);
        }
        Ok(MediaList(parsed))
    }

    pub fn ids(&self) -> &[MediaId] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Who may attach an upload: the member who asked for it, or the guest
/// writing from the same address (its address key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MediaOwner {
    Member(MemberId),
    Guest(WriterKey),
}

impl MediaOwner {
    /// Who writes with `author` from `writer`: the member, or for a guest
    /// the address key the text is written from.
    pub fn writing(author: &crate::domain::Author, writer: &crate::domain::Writer) -> Self {
        match author {
            crate::domain::Author::Member { member_id, .. } => {
                MediaOwner::Member(MemberId::from_stored(member_id.clone()))
            }
            _ => MediaOwner::Guest(writer.key.clone()),
        }
    }

    /// As stored: `member:<id>` or `guest:<address key>`.
    pub fn key(&self) -> String {
        match self {
            MediaOwner::Member(id) => format!("member:{id}"),
            MediaOwner::Guest(key) => format!("guest:{}", key.as_str()),
        }
    }

    pub fn from_key(key: &str) -> Option<Self> {
        match key.split_once(':')? {
            ("member", id) => Some(MediaOwner::Member(MemberId::from_stored(id.to_owned()))),
            ("guest", writer) => Some(MediaOwner::Guest(WriterKey::new(writer.to_owned()))),
            _ => None,
        }
    }
}

/// A grant, as recorded when it is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMedia {
    pub id: MediaId,
    pub board: BoardSlug,
    pub owner: MediaOwner,
    pub declared: MediaType,
    /// What the grant lets the client send, at most.
    pub bytes: u64,
    pub created_at: String,
    /// When the sweep deletes it if it is attached nowhere by then.
    pub due_at: String,
}

impl NewMedia {
    /// A grant given now: due [`UNATTACHED_HOURS`] later.
    pub fn granted_now(id: MediaId, board: BoardSlug, owner: MediaOwner, declared: MediaType, bytes: u64) -> Self {
        let at = chrono::Utc::now();
        NewMedia {
            id,
            board,
            owner,
            declared,
            bytes,
            created_at: crate::domain::timestamp(at),
            due_at: crate::domain::timestamp(at + chrono::Duration::hours(UNATTACHED_HOURS)),
        }
    }
}

/// What the check of a ready upload found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadyMedia {
    /// The type served: the decoded one (a lossy WebP is served as JPEG).
    pub content_type: MediaType,
    pub width: u32,
    pub height: u32,
    /// The served file's size.
    pub bytes: u64,
    pub thumbnail: MediaType,
}

/// How a check ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MediaOutcome {
    Ready(ReadyMedia),
    Rejected(String),
}

/// An upload as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaRecord {
    pub id: MediaId,
    pub board: BoardSlug,
    pub owner: MediaOwner,
    pub declared: MediaType,
    pub bytes: u64,
    pub created_at: String,
    pub status: MediaStatus,
    /// With [`MediaStatus::Ready`].
    pub ready: Option<ReadyMedia>,
    /// With [`MediaStatus::Rejected`].
    pub reason: Option<String>,
    /// The post or comment it is attached to.
    pub attached_to: Option<String>,
    /// While attached nowhere: when the sweep deletes it.
    pub due_at: Option<String>,
}

impl MediaRecord {
    /// The record of a grant just given: pending, attached nowhere.
    pub fn granted(new: &NewMedia) -> Self {
        MediaRecord {
            id: new.id.clone(),
            board: new.board.clone(),
            owner: new.owner.clone(),
            declared: new.declared,
            bytes: new.bytes,
            created_at: new.created_at.clone(),
            status: MediaStatus::Pending,
            ready: None,
            reason: None,
            attached_to: None,
            due_at: Some(new.due_at.clone()),
        }
    }
}

/// An image as a post or a comment shows it (docs/API.md, Images):
/// `url` and `thumbnail_url` hold the files' stored names ([`file_key`]),
/// which become URLs under the deployment's media origin
/// ([`set_base_url`]) only when the image is serialized, so a changed
/// origin never leaves old posts pointing at the old one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AttachedMedia {
    /// ULID
    #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
    pub id: String,
    #[serde(serialize_with = "as_url")]
    pub url: String,
    #[serde(serialize_with = "as_url")]
    pub thumbnail_url: String,
    pub width: u32,
    pub height: u32,
    /// The type the file is served as: the decoded one.
    pub content_type: MediaType,
}

impl AttachedMedia {
    /// The thumbnail's type, from its stored name's extension.
    pub fn thumbnail_type(&self) -> MediaType {
        let extension = self.thumbnail_url.rsplit('.').next().unwrap_or_default();
        MediaType::ALL
            .into_iter()
            .find(|t| t.extension() == extension)
            .unwrap_or(MediaType::Jpeg)
    }

    pub fn of(id: &MediaId, ready: &ReadyMedia) -> Self {
        AttachedMedia {
            id: id.as_str().to_owned(),
            url: file_key(id, ready.content_type),
            thumbnail_url: thumbnail_key(id, ready.thumbnail),
            width: ready.width,
            height: ready.height,
            content_type: ready.content_type,
        }
    }
}

/// How posts and comments store their images: the attachment without the
/// names (they follow from id and types).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct StoredMedia {
    id: String,
    #[serde(rename = "t")]
    content_type: MediaType,
    #[serde(rename = "w")]
    width: u32,
    #[serde(rename = "h")]
    height: u32,
    /// The thumbnail's type.
    #[serde(rename = "th")]
    thumbnail: MediaType,
}

/// A post's or comment's images as stored: `None` for none (no attribute).
pub fn to_stored(media: &[AttachedMedia]) -> Option<String> {
    if media.is_empty() {
        return None;
    }
    let stored: Vec<StoredMedia> = media
        .iter()
        .map(|m| StoredMedia {
            id: m.id.clone(),
            content_type: m.content_type,
            width: m.width,
            height: m.height,
            thumbnail: m.thumbnail_type(),
        })
        .collect();
    serde_json::to_string(&stored).ok()
}

/// The images [`to_stored`] wrote; `None` when they do not parse.
pub fn from_stored(stored: Option<&str>) -> Option<Vec<AttachedMedia>> {
    let Some(stored) = stored else {
        return Some(Vec::new());
    };
    let stored: Vec<StoredMedia> = serde_json::from_str(stored).ok()?;
    Some(
        stored
            .into_iter()
            .map(|m| {
                let id = MediaId::from_stored(m.id);
                AttachedMedia::of(
                    &id,
                    &ReadyMedia {
                        content_type: m.content_type,
                        width: m.width,
                        height: m.height,
                        bytes: 0,
                        thumbnail: m.thumbnail,
                    },
                )
            })
            .collect(),
    )
}

/// The media origin: `MEDIA_BASE_URL` (CloudFront on AWS), else the
/// server's own `/media`. One per process, set once at start, as the
/// deployment's other constants are.
static BASE_URL: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Sets the origin [`AttachedMedia`]'s URLs are under; the first call wins.
pub fn set_base_url(base: &str) {
    let _ = BASE_URL.set(base.trim_end_matches('/').to_owned());
}

/// The URL of a stored name: the origin, `/`, the name.
pub fn url_of(key: &str) -> String {
    let base = BASE_URL.get().map_or("/media", String::as_str);
    format!("{base}/{key}")
}

fn as_url<S: serde::Serializer>(key: &str, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&url_of(key))
}

/// The stored names of an upload's files: the upload as sent (private,
/// deleted after its check), and the checked file and its thumbnail as
/// served. The served names carry the decoded type's extension, so a URL
/// never changes its content (immutable caching).
pub fn upload_key(id: &MediaId) -> String {
    format!("uploads/{id}")
}

pub fn file_key(id: &MediaId, decoded: MediaType) -> String {
    format!("files/{id}.{}", decoded.extension())
}

pub fn thumbnail_key(id: &MediaId, thumbnail: MediaType) -> String {
    format!("files/{id}-thumb.{}", thumbnail.extension())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::new_id;

    fn field_of(error: ApiError) -> Option<String> {
        match error {
            ApiError::Validation { field, .. } => field,
            _ => None,
        }
    }

    #[test]
    fn only_the_four_image_types_are_declared_exactly() {
        for t in MediaType::ALL {
            assert_eq!(MediaType::parse(t.as_str()).unwrap(), t);
        }
        for bad in ["image/svg+xml", "text/html", "IMAGE/PNG", "image/png; charset=x", ""] {
            assert_eq!(
                field_of(MediaType::parse(bad).unwrap_err()).as_deref(),
                Some("content_type"),
                "{bad}"
            );
        }
    }

    #[test]
    fn an_upload_size_is_between_one_byte_and_the_maximum() {
        assert_eq!(UploadSize::parse(1, DEFAULT_MAX_BYTES).unwrap().get(), 1);
        assert!(UploadSize::parse(DEFAULT_MAX_BYTES as i64, DEFAULT_MAX_BYTES).is_ok());
        for bad in [0, -1, DEFAULT_MAX_BYTES as i64 + 1] {
            assert_eq!(
                field_of(UploadSize::parse(bad, DEFAULT_MAX_BYTES).unwrap_err()).as_deref(),
                Some("bytes")
            );
        }
    }

    #[test]
    fn a_media_list_is_distinct_ids_up_to_its_limit() {
        let (a, b) = (new_id(), new_id());
        let list = MediaList::parse(vec![a.clone(), b.clone()], MAX_POST_MEDIA).unwrap();
        assert_eq!(list.ids().len(), 2);
        for bad in [
            vec![a.clone(), b.clone()],
            vec![a.clone(), a.clone()],
            vec!["not-an-id".to_owned()],
        ] {
            let max = if bad.len() == 2 && bad[0] != bad[1] {
                1
            } else {
                MAX_POST_MEDIA
            };
            assert_eq!(
                field_of(MediaList::parse(bad, max).unwrap_err()).as_deref(),
                Some("media")
            );
        }
        assert!(MediaList::parse(Vec::new(), MAX_COMMENT_MEDIA).unwrap().is_empty());
    }

    #[test]
    fn served_names_carry_the_decoded_type_and_uploads_are_apart() {
        let id = MediaId::parse(&new_id()).unwrap();
        assert_eq!(file_key(&id, MediaType::Png), format!("files/{id}.png"));
        assert_eq!(thumbnail_key(&id, MediaType::Jpeg), format!("files/{id}-thumb.jpg"));
        assert!(!upload_key(&id).starts_with("files/"));
    }
}
