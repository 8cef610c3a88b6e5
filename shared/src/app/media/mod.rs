//! Images (docs/API.md, Images): upload grants, attaching images to what
//! is written, and their state; the server's upload URL (`upload`) and the
//! check and sweep off the request path (`checks`). The grant is the only
//! part on a request path that costs anything: one ban read, the quotas,
//! one write.

use std::sync::Arc;

use serde::Serialize;

use super::pow::AnonymousWrite;
use super::{App, ClientAddress, SignedIn, throttle};
use crate::domain::media::{
    AttachedMedia, GRANT_MINUTES, MediaList, MediaOwner, MediaRecord, MediaStatus, MediaType, NewMedia, UploadSize,
    file_key, thumbnail_key, url_of,
};
use crate::domain::{BoardSlug, MediaId, TextRef, timestamp};
use crate::error::ApiError;
use crate::store::files::MediaFiles;

mod checks;
mod upload;

pub use checks::{CHECKER_BUSY_RETRY_SECONDS, CheckQueue, MediaChecks, ReservedCheck};
pub use upload::OpenUpload;

/// Label of the key that signs the server's upload URLs (derived from the
/// tag key, as the proof-of-work key is).
pub const UPLOAD_KEY_LABEL: &[u8] = b"community-boards media upload key v1";

/// `MEDIA_MAX_BYTES`, `MEDIA_BUCKET`, `MEDIA_BASE_URL`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaSettings {
    pub max_bytes: u64,
    /// Lambda: uploads go to this bucket by presigned POST.
    pub bucket: Option<String>,
    /// Where files are served from (CloudFront on AWS); unset: the server's `/media`.
    pub base_url: Option<String>,
    /// `S3_ENDPOINT`: a local S3 (moto's, in tests) in place of AWS's.
    pub s3_endpoint: Option<String>,
}

impl Default for MediaSettings {
    fn default() -> Self {
        MediaSettings {
            max_bytes: crate::domain::media::DEFAULT_MAX_BYTES,
            bucket: None,
            base_url: None,
            s3_endpoint: None,
        }
    }
}

/// How a grant lets the client send its file.
pub enum Uploads {
    /// The server's own `PUT /media/uploads/{id}`, authorized by an HMAC of
    /// the id and the grant's end.
    Server { key: [u8; 32] },
    /// A presigned S3 POST to the bucket (Lambda).
    #[cfg(feature = "s3")]
    S3(S3Uploads),
}

#[cfg(feature = "s3")]
#[derive(Debug)]
pub struct S3Uploads {
    pub bucket: String,
    pub region: String,
    /// moto's S3 in tests.
    pub endpoint: Option<String>,
    pub credentials: aws_credential_types::provider::SharedCredentialsProvider,
}

impl std::fmt::Debug for Uploads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Uploads::Server { .. } => f.write_str("Uploads::Server"),
            #[cfg(feature = "s3")]
            Uploads::S3(s3) => write!(f, "Uploads::S3({})", s3.bucket),
        }
    }
}

/// What the media routes and the check need beyond the store.
pub struct MediaKit {
    pub uploads: Uploads,
    /// Where uploads and files are (the check and the sweep; not the grant).
    pub files: Option<Arc<dyn MediaFiles>>,
    pub max_bytes: u64,
    /// The server: the folder its [`crate::store::files::DiskFiles`] keep
    /// files in, which it serves from `/media/files/...`.
    pub served_from: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for MediaKit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MediaKit")
            .field("uploads", &self.uploads)
            .field("max_bytes", &self.max_bytes)
            .finish_non_exhaustive()
    }
}

/// `201` of `POST /boards/{slug}/media`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MediaGrant {
    /// ULID
    pub id: String,
    pub upload: UploadInstructions,
    #[cfg_attr(feature = "openapi", schema(format = DateTime))]
    pub expires_at: String,
}

/// Where and how to send the file: a `PUT` of the bytes with `headers`
/// (the server), or a `multipart/form-data` `POST` of `fields` then the
/// file as the last part `file` (S3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UploadInstructions {
    /// `PUT` or `POST`.
    pub method: String,
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headers: Option<std::collections::BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fields: Option<std::collections::BTreeMap<String, String>>,
}

/// `GET /media/{id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MediaView {
    /// ULID
    pub id: String,
    pub status: MediaStatus,
    /// The declared type while pending or rejected; the served one when ready.
    pub content_type: MediaType,
    /// Null until ready.
    pub width: Option<u32>,
    pub height: Option<u32>,
    /// The granted size until ready, then the served file's.
    pub bytes: u64,
    /// Null until ready.
    pub url: Option<String>,
    pub thumbnail_url: Option<String>,
    /// Why it was rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl MediaView {
    fn of(record: &MediaRecord) -> Self {
        let ready = record.ready.as_ref();
        MediaView {
            id: record.id.as_str().to_owned(),
            status: record.status,
            content_type: ready.map_or(record.declared, |r| r.content_type),
            width: ready.map(|r| r.width),
            height: ready.map(|r| r.height),
            bytes: ready.map_or(record.bytes, |r| r.bytes),
            url: ready.map(|r| url_of(&file_key(&record.id, r.content_type))),
            thumbnail_url: ready.map(|r| url_of(&thumbnail_key(&record.id, r.thumbnail))),
            reason: record.reason.clone(),
        }
    }
}

/// `400` naming `media`.
fn unavailable() -> ApiError {
    crate::store::StoreError::MediaUnavailable.into()
}

impl App {
    pub fn with_media(mut self, kit: MediaKit) -> Self {
        self.media = Some(Arc::new(kit));
        self
    }

    fn media_kit(&self) -> Result<&MediaKit, ApiError> {
        self.media
            .as_deref()
            .ok_or_else(|| ApiError::Internal("this function was built without images".into()))
    }

    fn media_files(&self) -> Result<&Arc<dyn MediaFiles>, ApiError> {
        self.media_kit()?
            .files
            .as_ref()
            .ok_or_else(|| ApiError::Internal("this function holds no media files".into()))
    }

    /// The file the server serves as `/media/files/<name>`, with the type
    /// it is served as (from its name: only checked files are named so);
    /// `None` for a name no checked file could have.
    pub fn served_file(&self, name: &str) -> Option<(std::path::PathBuf, MediaType)> {
        let root = self.media.as_deref()?.served_from.as_ref()?;
        let key = format!("files/{name}");
        if !crate::store::files::valid_key(&key) {
            return None;
        }
        let (_, extension) = name.rsplit_once('.')?;
        let served = [MediaType::Jpeg, MediaType::Png, MediaType::Gif, MediaType::Webp]
            .into_iter()
            .find(|t| t.extension() == extension)?;
        Some((root.join(key), served))
    }

    /// `MEDIA_MAX_BYTES`, for the `bytes` field's rule.
    pub fn media_max_bytes(&self) -> u64 {
        self.media
            .as_deref()
            .map_or(crate::domain::media::DEFAULT_MAX_BYTES, |kit| kit.max_bytes)
    }

    /// `POST /boards/{slug}/media`: a grant to upload one image. As every
    /// write on a board: the board's `guest_writes` for guests, the ban
    /// check, proof of work for guests, then the quotas, then one write.
    pub async fn grant_media(
        &self,
        member: Option<&SignedIn>,
        client: &ClientAddress,
        board: &BoardSlug,
        declared: MediaType,
        bytes: UploadSize,
        pow: Option<&str>,
    ) -> Result<MediaGrant, ApiError> {
        let kit = self.media_kit()?;
        let settings = self.board_settings(board.as_str()).await?;
        if member.is_none() && !settings.guest_writes {
            return Err(super::votes::guests_cannot_write());
        }
        let writer = self.require_not_banned(board, client, member).await?;
        let counted = match member {
            Some(_) => throttle::Reservation::none(),
            None => {
                self.require_pow(AnonymousWrite {
                    client,
                    board: Some(board),
                    proof: pow,
                })
                .await?
            }
        };
        let keys = throttle::upload_keys(&self.limits, &client.0, member.map(|m| m.id.as_str()));
        let reservation = throttle::reserve_after(&*self.store, &keys, throttle::Refusal::RateLimited, counted).await?;
        let owner = match member {
            Some(member) => MediaOwner::Member(member.id.clone()),
            None => MediaOwner::Guest(writer.key),
        };
        let granted = async {
            let media = NewMedia::granted_now(MediaId::generate(), board.clone(), owner, declared, bytes.get());
            if !self.store.create_media(&media).await? {
                return Err(ApiError::Internal("a fresh media id was taken".into()));
            }
            let expires = chrono::Utc::now() + chrono::Duration::minutes(GRANT_MINUTES);
            let upload = self.upload_instructions(kit, &media, expires).await?;
            Ok(MediaGrant {
                id: media.id.as_str().to_owned(),
                upload,
                expires_at: timestamp(expires),
            })
        }
        .await;
        if granted.is_err() {
            throttle::forgive(&*self.store, reservation).await;
        }
        granted
    }

    async fn upload_instructions(
        &self,
        kit: &MediaKit,
        media: &NewMedia,
        expires: chrono::DateTime<chrono::Utc>,
    ) -> Result<UploadInstructions, ApiError> {
        match &kit.uploads {
            Uploads::Server { key } => {
                let token = upload::upload_token(key, &media.id, expires.timestamp());
                Ok(UploadInstructions {
                    method: "PUT".into(),
                    url: format!("/media/uploads/{}?grant={token}", media.id.as_str()),
                    headers: Some([("Content-Type".to_owned(), media.declared.as_str().to_owned())].into()),
                    fields: None,
                })
            }
            #[cfg(feature = "s3")]
            Uploads::S3(s3) => {
                use aws_credential_types::provider::ProvideCredentials as _;
                let credentials = s3
                    .credentials
                    .provide_credentials()
                    .await
                    .map_err(|e| ApiError::Internal(format!("no credentials to sign an upload grant: {e}")))?;
                let key = crate::domain::media::upload_key(&media.id);
                let now = std::time::SystemTime::now();
                let grant = crate::s3_post::presigned_post(
                    &credentials,
                    &s3.region,
                    s3.endpoint.as_deref(),
                    &crate::s3_post::PostUpload {
                        bucket: &s3.bucket,
                        key: &key,
                        content_type: media.declared.as_str(),
                        max_bytes: media.bytes,
                        expires_in: std::time::Duration::from_secs(u64::try_from(GRANT_MINUTES * 60).unwrap_or(900)),
                    },
                    now,
                );
                Ok(UploadInstructions {
                    method: "POST".into(),
                    url: grant.url,
                    headers: None,
                    fields: Some(grant.fields.into_iter().collect()),
                })
            }
        }
    }

    /// `GET /media/{id}`.
    pub async fn media_status(&self, id: &MediaId) -> Result<MediaView, ApiError> {
        let record = self
            .store
            .media(id)
            .await?
            .ok_or_else(|| ApiError::not_found("media"))?;
        Ok(MediaView::of(&record))
    }

    /// The images `list` names, as a write by `owner` on `board` attaches
    /// them: each ready, granted there to `owner`, attached nowhere (or to
    /// `own`, the post an edit keeps them on) and not due. Else `400`
    /// naming `media`. The store checks the same again in the write.
    pub(super) async fn attachable(
        &self,
        list: &MediaList,
        board: &BoardSlug,
        owner: &MediaOwner,
        own: Option<&str>,
    ) -> Result<Vec<AttachedMedia>, ApiError> {
        if list.is_empty() {
            return Ok(Vec::new());
        }
        let records = self.store.media_batch(list.ids()).await?;
        let until = crate::domain::media::attachable_until(&crate::domain::now());
        list.ids()
            .iter()
            .map(|id| {
                let record = records.iter().find(|r| &r.id == id).ok_or_else(unavailable)?;
                let ready = record.ready.as_ref().filter(|_| record.status == MediaStatus::Ready);
                let mine = &record.board == board && &record.owner == owner;
                let free = match (&record.attached_to, own) {
                    (None, _) => record.due_at.as_deref().is_some_and(|due| due > until.as_str()),
                    (Some(at), Some(own)) => at == own,
                    (Some(_), None) => false,
                };
                match ready {
                    Some(ready) if mine && free => Ok(AttachedMedia::of(id, ready)),
                    _ => Err(unavailable()),
                }
            })
            .collect()
    }

    /// [`App::attachable`] for a create under a quota: a refusal gives the
    /// create's counts back, as the screen's does.
    pub(super) async fn attachable_counted(
        &self,
        list: &MediaList,
        board: &BoardSlug,
        owner: &MediaOwner,
        reservation: throttle::Reservation,
    ) -> Result<(Vec<AttachedMedia>, throttle::Reservation), ApiError> {
        match self.attachable(list, board, owner, None).await {
            Ok(media) => Ok((media, reservation)),
            Err(refused) => {
                throttle::forgive(&*self.store, reservation).await;
                Err(refused)
            }
        }
    }

    /// A text's images are due for the sweep: what a delete's text event
    /// does (on DynamoDB the stream's; SQLite released them in the delete).
    pub(super) async fn release_media(&self, text: &TextRef) -> Result<(), ApiError> {
        self.store.release_media(text, &crate::domain::now()).await?;
        self.sweep_soon();
        Ok(())
    }
}
