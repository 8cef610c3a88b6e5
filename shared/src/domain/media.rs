//! **(v4)** Uploaded images (docs/API.md, Images): what a grant asks for,
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
/// How long a grant's upload URL may be used.
pub const GRANT_MINUTES: i64 = 15;

/// The type a client declares for an upload: one of the four the board takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
        }
    }
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
