//! **(v4)** Images (docs/API.md, Images): upload grants, the check of an
//! upload off the request path, attaching images to what is written, and
//! the sweep of images attached nowhere. The grant is the only part on a
//! request path that costs anything: one ban read, the quotas, one write.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde::Serialize;
use sha2::Sha256;

use super::pow::AnonymousWrite;
use super::{App, ClientAddress, SignedIn, throttle};
use crate::domain::media::{
    AttachedMedia, GRANT_MINUTES, MediaList, MediaOwner, MediaRecord, MediaStatus, MediaType, NewMedia, UploadSize,
    file_key, thumbnail_key, upload_key, url_of,
};
use crate::domain::{BoardSlug, MediaId, TextRef, timestamp};
use crate::error::ApiError;
#[cfg(feature = "imaging")]
use crate::store::StoreError;
use crate::store::files::MediaFiles;

/// Label of the key that signs the server's upload URLs (derived from the
/// tag key, as the proof-of-work key is).
pub const UPLOAD_KEY_LABEL: &[u8] = b"community-boards media upload key v1";

/// Uploads the sweep deletes per round.
const SWEEP_BATCH: usize = 100;

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

/// The keys of every file an upload may have left.
fn files_of(record: &MediaRecord) -> Vec<String> {
    let mut keys = vec![upload_key(&record.id)];
    if let Some(ready) = &record.ready {
        keys.push(file_key(&record.id, ready.content_type));
        keys.push(thumbnail_key(&record.id, ready.thumbnail));
    }
    keys
}

/// The server's upload authorization: `<end, Unix seconds>.<HMAC>`.
fn upload_mac(key: &[u8; 32], id: &MediaId, expires: i64) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(format!("{}:{expires}", id.as_str()).as_bytes());
    mac
}

fn upload_token(key: &[u8; 32], id: &MediaId, expires: i64) -> String {
    let tag = upload_mac(key, id, expires).finalize().into_bytes();
    format!("{expires}.{}", URL_SAFE_NO_PAD.encode(tag))
}

/// Whether `token` authorizes an upload of `id` at `now`: its end not
/// passed and its HMAC right (compared in constant time by `hmac`).
fn upload_token_holds(key: &[u8; 32], id: &MediaId, token: &str, now: i64) -> bool {
    let Some((expires, tag)) = token.split_once('.') else {
        return false;
    };
    let (Ok(expires), Ok(tag)) = (expires.parse::<i64>(), URL_SAFE_NO_PAD.decode(tag)) else {
        return false;
    };
    now <= expires && upload_mac(key, id, expires).verify_slice(&tag).is_ok()
}

/// `400` naming `media`.
fn unavailable() -> ApiError {
    crate::store::StoreError::MediaUnavailable.into()
}

/// A refused upload on the server's upload URL.
fn upload_refused(why: &str) -> ApiError {
    ApiError::Forbidden(format!("this upload is not granted: {why}"))
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
        if member.is_none() {
            self.require_pow(AnonymousWrite {
                client,
                board: Some(board),
                proof: pow,
            })
            .await?;
        }
        let keys = throttle::upload_keys(&self.limits, &client.0, member.map(|m| m.id.as_str()));
        let reservation = throttle::reserve(&*self.store, &keys, throttle::Refusal::RateLimited).await?;
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
                let token = upload_token(key, &media.id, expires.timestamp());
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
                let key = upload_key(&media.id);
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

    /// The server's upload URL: the file of grant `id`, sent before the
    /// grant ends, of the declared type and at most the granted size;
    /// stored, then checked in the background (`checks` hears of it).
    pub async fn receive_upload(
        &self,
        id: &MediaId,
        token: &str,
        content_type: Option<&str>,
        bytes: Vec<u8>,
    ) -> Result<(), ApiError> {
        let kit = self.media_kit()?;
        #[cfg_attr(not(feature = "s3"), allow(irrefutable_let_patterns))]
        let Uploads::Server { key } = &kit.uploads else {
            return Err(ApiError::not_found("media"));
        };
        if !upload_token_holds(key, id, token, throttle::unix_now()) {
            return Err(upload_refused("the grant is wrong or over"));
        }
        let record = self
            .store
            .media(id)
            .await?
            .ok_or_else(|| ApiError::not_found("media"))?;
        if record.status != MediaStatus::Pending {
            return Err(upload_refused("its file was checked already"));
        }
        if content_type != Some(record.declared.as_str()) {
            return Err(upload_refused("Content-Type is not the declared type"));
        }
        if bytes.is_empty() || bytes.len() as u64 > record.bytes {
            return Err(upload_refused("the file is empty or larger than granted"));
        }
        self.media_files()?
            .put(&upload_key(id), bytes, record.declared.as_str())
            .await?;
        self.media_event(id.clone());
        Ok(())
    }

    /// Checks the upload of `id`, if it is pending and its file is there:
    /// decoded within the limits, re-encoded without metadata, with its
    /// thumbnail; ready or rejected, once. The upload as sent is deleted
    /// after. Idempotent (S3 may deliver an event twice).
    #[cfg(feature = "imaging")]
    pub async fn check_upload(&self, id: &MediaId) -> Result<Option<MediaStatus>, ApiError> {
        use crate::domain::media::{MediaOutcome, ReadyMedia};
        let kit = self.media_kit()?;
        let files = self.media_files()?;
        let Some(record) = self.store.media(id).await? else {
            return Ok(None);
        };
        if record.status != MediaStatus::Pending {
            return Ok(Some(record.status));
        }
        let upload = upload_key(id);
        // S3's policy held it to the granted size; this bounds a file put there otherwise.
        let bytes = match files.get(&upload, record.bytes.min(kit.max_bytes)).await {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(Some(MediaStatus::Pending)),
            Err(StoreError::TooLarge(_)) => {
                let outcome = MediaOutcome::Rejected("the file is larger than granted".into());
                self.store.finish_media(id, &outcome).await?;
                files.delete(&[upload]).await?;
                return Ok(Some(MediaStatus::Rejected));
            }
            Err(e) => return Err(e.into()),
        };
        let declared = imaging::Declared::from_content_type(record.declared.as_str())
            .ok_or_else(|| ApiError::Internal("a declared type imaging does not know".into()))?;
        let processed =
            tokio::task::spawn_blocking(move || imaging::process(&bytes, declared, &imaging::Limits::default()))
                .await
                .map_err(|e| ApiError::Internal(format!("the image check stopped: {e}")))?;
        let outcome = match processed {
            Ok(image) => {
                let served = MediaType::parse(image.content_type)
                    .map_err(|_| ApiError::Internal("imaging made a type the board does not serve".into()))?;
                let thumbnail = MediaType::parse(image.thumbnail_content_type)
                    .map_err(|_| ApiError::Internal("imaging made a thumbnail type the board does not serve".into()))?;
                let ready = ReadyMedia {
                    content_type: served,
                    width: image.width,
                    height: image.height,
                    bytes: image.file.len() as u64,
                    thumbnail,
                };
                // Files first: a ready record always has its files.
                files.put(&file_key(id, served), image.file, served.as_str()).await?;
                files
                    .put(&thumbnail_key(id, thumbnail), image.thumbnail, thumbnail.as_str())
                    .await?;
                MediaOutcome::Ready(ready)
            }
            Err(rejected) => MediaOutcome::Rejected(rejected.reason()),
        };
        self.store.finish_media(id, &outcome).await?;
        files.delete(&[upload]).await?;
        Ok(Some(match outcome {
            MediaOutcome::Ready(_) => MediaStatus::Ready,
            MediaOutcome::Rejected(_) => MediaStatus::Rejected,
        }))
    }

    /// Deletes the uploads attached nowhere that are due (never attached
    /// 24 hours after their grant; dropped by an edit; their post or
    /// comment deleted), files first; how many.
    pub async fn sweep_media(&self) -> Result<usize, ApiError> {
        let files = self.media_files()?;
        let mut swept = 0;
        loop {
            // Attaches keep a margin from `due_at` (domain::media::attachable_until).
            let now = crate::domain::now();
            let due = self.store.due_media(&now, SWEEP_BATCH).await?;
            if due.is_empty() {
                return Ok(swept);
            }
            let keys: Vec<String> = due.iter().flat_map(files_of).collect();
            files.delete(&keys).await?;
            let ids: Vec<MediaId> = due.iter().map(|r| r.id.clone()).collect();
            self.store.delete_media(&ids).await?;
            swept += due.len();
            if due.len() < SWEEP_BATCH {
                return Ok(swept);
            }
        }
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

/// Uploads waiting for the server's checker: beyond this an upload waits
/// pending until the sweep deletes it (logged), rather than memory growing.
const WAITING_CHECKS: usize = 1_000;

/// How often the server sweeps when nothing wakes it sooner.
#[cfg(feature = "imaging")]
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(300);

/// The server's side of the checker channel.
pub type MediaChecks = tokio::sync::mpsc::Receiver<MediaId>;

impl App {
    /// Hands uploads to this process's checker (the server), which
    /// [`App::check_media_in_background`] runs on `checks`.
    pub fn with_media_checker(mut self) -> (Self, MediaChecks) {
        let (sender, checks) = tokio::sync::mpsc::channel(WAITING_CHECKS);
        self.media_checker = Some(sender);
        (self, checks)
    }

    /// An upload arrived: the checker hears of it, if this process runs one
    /// (on Lambda S3's event starts the `media` function instead).
    fn media_event(&self, id: MediaId) {
        if let Some(checker) = &self.media_checker
            && let Err(e) = checker.try_send(id)
        {
            tracing::warn!(error = %e, "an upload was not queued for its check: the checker is behind");
        }
    }

    /// Images fell due: the server's sweep runs now rather than at its hour.
    pub(super) fn sweep_soon(&self) {
        self.sweep_wake.notify_one();
    }

    /// The server's image checker and sweep: one check at a time, so the
    /// memory a check takes (about 160 MiB at 48 megapixels: imaging's
    /// README) is never taken twice; a sweep every five minutes and
    /// whenever a delete releases images.
    #[cfg(feature = "imaging")]
    pub async fn check_media_in_background(self, mut checks: MediaChecks) {
        let mut every = tokio::time::interval(SWEEP_EVERY);
        loop {
            tokio::select! {
                id = checks.recv() => {
                    let Some(id) = id else { return };
                    if let Err(e) = self.check_upload(&id).await {
                        tracing::warn!(error = %e, media = id.as_str(), "an image check failed; the sweep deletes the upload when due");
                    }
                }
                () = self.sweep_wake.notified() => self.sweep_logged().await,
                _ = every.tick() => self.sweep_logged().await,
            }
        }
    }

    #[cfg(feature = "imaging")]
    async fn sweep_logged(&self) {
        match self.sweep_media().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(swept = n, "images attached nowhere deleted"),
            Err(e) => tracing::warn!(error = %e, "the image sweep failed; it runs again"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upload_token_holds_for_its_id_until_it_ends() {
        let key = [7u8; 32];
        let id = MediaId::generate();
        let token = upload_token(&key, &id, 1_000);
        assert!(upload_token_holds(&key, &id, &token, 1_000));
        assert!(!upload_token_holds(&key, &id, &token, 1_001), "over");
        assert!(
            !upload_token_holds(&key, &MediaId::generate(), &token, 10),
            "another id"
        );
        assert!(!upload_token_holds(&[8u8; 32], &id, &token, 10), "another key");
        let later = token.replacen("1000", "9999", 1);
        assert!(!upload_token_holds(&key, &id, &later, 10), "a moved end");
        assert!(!upload_token_holds(&key, &id, "garbage", 10));
    }
}
