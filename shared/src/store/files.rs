//! The files of uploaded images (docs/API.md, Images): the
//! upload as sent under `uploads/<id>` (private), the checked image and its
//! thumbnail under `files/<id>.<ext>` and `files/<id>-thumb.<ext>` (served).
//! One port, [`MediaFiles`], and two adapters: `DiskFiles` beside the
//! server's SQLite file, `S3Files` in the bucket the upload grants name.
//! Both refuse a key [`valid_key`] refuses before touching anything, so no
//! key can reach outside those two folders.

#[cfg(any(feature = "sqlite", feature = "s3-files"))]
use crate::store::StoreError;
use crate::store::StoreResult;

/// How served files may be cached: a name never changes its content.
pub const SERVED_CACHE_CONTROL: &str = "public, max-age=31536000, immutable";

/// The longest key: `files/` and a ULID with `-thumb.jpg` is 42.
pub const MAX_KEY_LEN: usize = 100;

/// Where uploaded images are stored, whole files by key.
#[async_trait::async_trait]
pub trait MediaFiles: Send + Sync {
    /// Stores `bytes` under `key` as `content_type`, whole or not at all (a reader never sees half a file).
    async fn put(&self, key: &str, bytes: Vec<u8>, content_type: &str) -> StoreResult<()>;
    /// The file under `key`: `Ok(None)` when there is none; `Err(StoreError::TooLarge)`
    /// naming the key when it holds more than `limit` bytes (no more than
    /// `limit + 1` bytes are read to find out: bounded memory).
    async fn get(&self, key: &str, limit: u64) -> StoreResult<Option<Vec<u8>>>;
    /// Stores what `body` yields under `key`, whole or not at all, and at
    /// most `limit` bytes of it: one byte more and nothing is kept
    /// (`Err(StoreError::TooLarge)`). Memory stays one buffer whatever the
    /// size (the server's upload URL streams its body here); how many bytes.
    async fn put_stream(
        &self,
        key: &str,
        body: &mut (dyn tokio::io::AsyncRead + Send + Unpin),
        limit: u64,
        content_type: &str,
    ) -> StoreResult<u64>;
    /// Deletes the files under `keys`; a key with no file is no error (idempotent). Any number of keys
    /// (S3: DeleteObjects in batches of 1,000). Nothing is deleted when one key is invalid.
    async fn delete(&self, keys: &[String]) -> StoreResult<()>;
}

/// Whether `key` names a media file: `uploads/` or `files/` and one file
/// name of `[A-Za-z0-9._-]`, at most [`MAX_KEY_LEN`] characters. No `..`, no
/// second `/`, and no leading `.` (hidden: `DiskFiles`' temporary files),
/// so a key never names a folder or anything outside the two.
pub fn valid_key(key: &str) -> bool {
    let Some(name) = key.strip_prefix("uploads/").or_else(|| key.strip_prefix("files/")) else {
        return false;
    };
    key.len() <= MAX_KEY_LEN
        && !name.is_empty()
        && !name.starts_with('.')
        && !name.contains("..")
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Refuses an invalid key: a bug of the caller's, never a user's input (ids are ULIDs).
#[cfg(any(feature = "sqlite", feature = "s3-files"))]
fn checked(key: &str) -> StoreResult<&str> {
    if valid_key(key) {
        Ok(key)
    } else {
        Err(StoreError::Internal(format!("not a media file key: {key:?}")))
    }
}

#[cfg(any(feature = "sqlite", feature = "s3-files"))]
fn too_large(key: &str, limit: u64) -> StoreError {
    StoreError::TooLarge {
        key: key.to_owned(),
        limit,
    }
}

#[cfg(feature = "sqlite")]
pub use disk::DiskFiles;

#[cfg(feature = "sqlite")]
mod disk {
    use std::io::{ErrorKind, Read as _, Write as _};
    use std::path::{Path, PathBuf};

    use super::{MediaFiles, checked, too_large, valid_key};
    use crate::store::{StoreError, StoreResult};

    /// The server's media files: `root/uploads` and `root/files`, owner-only
    /// like the rest of `DATA_DIR` (docs/API.md, Hardening), served by the
    /// server itself through [`DiskFiles::path_of`].
    #[derive(Debug, Clone)]
    pub struct DiskFiles {
        root: PathBuf,
    }

    impl DiskFiles {
        /// Creates `root` and its two folders owner-only (or makes them so).
        pub fn open(root: PathBuf) -> std::io::Result<Self> {
            crate::private_files::create_dir(&root)?;
            for folder in ["uploads", "files"] {
                crate::private_files::create_dir(&root.join(folder))?;
            }
            Ok(DiskFiles { root })
        }

        /// Where the file of `key` is (or would be); `None` for an invalid key.
        pub fn path_of(&self, key: &str) -> Option<PathBuf> {
            valid_key(key).then(|| self.root.join(key))
        }

        fn checked_path(&self, key: &str) -> StoreResult<PathBuf> {
            Ok(self.root.join(checked(key)?))
        }
    }

    /// Runs blocking file work off the async threads; an I/O failure names the key.
    async fn blocking<T: Send + 'static>(
        key: String,
        work: impl FnOnce() -> std::io::Result<T> + Send + 'static,
    ) -> StoreResult<T> {
        match tokio::task::spawn_blocking(work).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(StoreError::Internal(format!("media file {key}: {e}"))),
            Err(e) => Err(StoreError::Internal(format!(
                "media file {key}: the file task failed: {e}"
            ))),
        }
    }

    #[async_trait::async_trait]
    impl MediaFiles for DiskFiles {
        /// The content type is not stored: the served names carry the
        /// type's extension (`crate::domain::media::file_key`).
        async fn put(&self, key: &str, bytes: Vec<u8>, _content_type: &str) -> StoreResult<()> {
            let path = self.checked_path(key)?;
            blocking(key.to_owned(), move || write_whole(&path, &bytes)).await
        }

        /// Into a temporary file beside the name, renamed over it once
        /// whole and synced, as [`write_whole`] does.
        async fn put_stream(
            &self,
            key: &str,
            body: &mut (dyn tokio::io::AsyncRead + Send + Unpin),
            limit: u64,
            _content_type: &str,
        ) -> StoreResult<u64> {
            let path = self.checked_path(key)?;
            let temporary = temporary_beside(&path);
            let copied = copy_at_most(body, &temporary, limit).await;
            let kept = match copied {
                Ok(Copied::Whole(bytes)) => {
                    let (from, to) = (temporary.clone(), path);
                    blocking(key.to_owned(), move || {
                        std::fs::rename(&from, &to)?;
                        sync_parent(&to)
                    })
                    .await
                    .map(|()| bytes)
                }
                Ok(Copied::OverLimit) => Err(too_large(key, limit)),
                Ok(Copied::BodyFailed(e)) => Err(StoreError::BodyIncomplete(e.to_string())),
                Err(e) => Err(StoreError::Internal(format!("media file {key}: {e}"))),
            };
            if kept.is_err() {
                let _ = tokio::fs::remove_file(&temporary).await;
            }
            kept
        }

        async fn get(&self, key: &str, limit: u64) -> StoreResult<Option<Vec<u8>>> {
            let path = self.checked_path(key)?;
            let read = blocking(key.to_owned(), move || read_at_most(&path, limit)).await?;
            match read {
                Some(bytes) if bytes.len() as u64 > limit => Err(too_large(key, limit)),
                read => Ok(read),
            }
        }

        async fn delete(&self, keys: &[String]) -> StoreResult<()> {
            let paths = keys
                .iter()
                .map(|key| self.checked_path(key))
                .collect::<StoreResult<Vec<_>>>()?;
            if paths.is_empty() {
                return Ok(());
            }
            let named = match keys {
                [key] => key.clone(),
                [first, ..] => format!("{} keys from {first}", keys.len()),
                [] => unreachable!("returned above"),
            };
            blocking(named, move || {
                for path in paths {
                    match std::fs::remove_file(&path) {
                        Err(e) if e.kind() != ErrorKind::NotFound => return Err(e),
                        _ => {}
                    }
                }
                Ok(())
            })
            .await
        }
    }

    /// Writes a temporary file beside `path` and renames it over `path`: a
    /// reader sees the old file or the new one, never half of one. Both are
    /// synced, so after a crash the name holds the whole file or none (the
    /// record that names it is written after).
    fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        let temporary = temporary_beside(path);
        let written = (|| {
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt as _;
                options.mode(0o600);
            }
            let mut file = options.open(&temporary)?;
            file.write_all(bytes)?;
            file.sync_all()?;
            std::fs::rename(&temporary, path)
        })();
        if written.is_err() {
            // The write failed part way: leave no temporary file behind.
            let _ = std::fs::remove_file(&temporary);
        }
        written?;
        sync_parent(path)
    }

    /// A hidden name beside `path` (no valid key starts with `.`).
    fn temporary_beside(path: &Path) -> PathBuf {
        let dir = path.parent().unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        dir.join(format!(".{name}.{:016x}.tmp", rand::random::<u64>()))
    }

    /// The folder's entry of a renamed file survives a crash.
    fn sync_parent(path: &Path) -> std::io::Result<()> {
        #[cfg(unix)]
        std::fs::File::open(path.parent().unwrap_or(Path::new(".")))?.sync_all()?;
        Ok(())
    }

    /// How a streamed copy ended (an `Err` beside it: the file failed).
    enum Copied {
        Whole(u64),
        OverLimit,
        BodyFailed(std::io::Error),
    }

    /// Copies `body` into a new owner-only file at `temporary`, one 64 KiB
    /// buffer at a time, stopping at the first byte past `limit`.
    async fn copy_at_most(
        body: &mut (dyn tokio::io::AsyncRead + Send + Unpin),
        temporary: &Path,
        limit: u64,
    ) -> std::io::Result<Copied> {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let mut options = tokio::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        options.mode(0o600);
        let mut file = options.open(temporary).await?;
        let mut buffer = vec![0u8; 64 * 1024];
        let mut total = 0u64;
        loop {
            let read = match body.read(&mut buffer).await {
                Ok(0) => break,
                Ok(read) => read,
                Err(e) => return Ok(Copied::BodyFailed(e)),
            };
            total += read as u64;
            if total > limit {
                return Ok(Copied::OverLimit);
            }
            file.write_all(&buffer[..read]).await?;
        }
        file.sync_all().await?;
        Ok(Copied::Whole(total))
    }

    /// The file's first `limit + 1` bytes at most (`None` when there is no
    /// file): one more than allowed tells a file that is too large.
    fn read_at_most(path: &Path, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
        let file = match std::fs::File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let size = file.metadata()?.len();
        let mut bytes = Vec::with_capacity(size.min(limit.saturating_add(1)).try_into().unwrap_or(0));
        file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
        Ok(Some(bytes))
    }
}

#[cfg(feature = "s3-files")]
pub use s3::S3Files;

#[cfg(feature = "s3-files")]
mod s3 {
    use aws_sdk_s3::Client;
    use aws_sdk_s3::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
    use aws_sdk_s3::primitives::ByteStream;
    use aws_sdk_s3::types::{Delete, ObjectIdentifier};

    use super::{MediaFiles, checked, too_large};
    use crate::store::{StoreError, StoreResult};

    /// S3's limit of keys per DeleteObjects request.
    const DELETE_BATCH: usize = 1_000;

    /// The media files in one S3 bucket, where the upload grants put the
    /// uploads (docs/API.md, Images).
    #[derive(Debug, Clone)]
    pub struct S3Files {
        client: Client,
        bucket: String,
    }

    impl S3Files {
        pub fn new(client: Client, bucket: String) -> Self {
            S3Files { client, bucket }
        }
    }

    /// How the store maps SDK errors (as the DynamoDB adapter does, which
    /// this one may not import: tests/layers.rs): throttling, S3's own
    /// transient codes and anything short of an answer (unreachable, timed
    /// out) are "unavailable" (503); the rest a failure. Prefixed with what
    /// was asked; the SDK's messages carry no credentials.
    fn s3_error<E, R>(action: &str, what: &str, err: SdkError<E, R>) -> StoreError
    where
        E: ProvideErrorMetadata + std::error::Error + 'static,
        R: std::fmt::Debug,
    {
        let transient = match &err {
            SdkError::ServiceError(service) => matches!(
                service.err().code(),
                Some(
                    "SlowDown"
                        | "ServiceUnavailable"
                        | "InternalError"
                        | "RequestTimeout"
                        | "ThrottlingException"
                        | "RequestLimitExceeded"
                )
            ),
            _ => true,
        };
        let message = format!("S3 {action} of {what}: {}", DisplayErrorContext(&err));
        if transient {
            StoreError::Unavailable(message)
        } else {
            StoreError::Internal(message)
        }
    }

    #[async_trait::async_trait]
    impl MediaFiles for S3Files {
        /// One PutObject: S3 stores an object whole or not at all. A
        /// served file carries its long immutable caching (docs/API.md,
        /// Images), which CloudFront and browsers keep.
        async fn put(&self, key: &str, bytes: Vec<u8>, content_type: &str) -> StoreResult<()> {
            let served = key.starts_with("files/");
            self.client
                .put_object()
                .set_cache_control(served.then(|| super::SERVED_CACHE_CONTROL.to_owned()))
                .bucket(&self.bucket)
                .key(checked(key)?)
                .content_type(content_type)
                .body(ByteStream::from(bytes))
                .send()
                .await
                .map_err(|e| s3_error("PutObject", key, e))?;
            Ok(())
        }

        /// Read whole (at most `limit` bytes), then one PutObject: on AWS
        /// uploads go to S3 by presigned POST, never through this.
        async fn put_stream(
            &self,
            key: &str,
            body: &mut (dyn tokio::io::AsyncRead + Send + Unpin),
            limit: u64,
            content_type: &str,
        ) -> StoreResult<u64> {
            use tokio::io::AsyncReadExt as _;
            let mut bytes = Vec::new();
            let mut limited = body.take(limit.saturating_add(1));
            limited
                .read_to_end(&mut bytes)
                .await
                .map_err(|e| StoreError::BodyIncomplete(e.to_string()))?;
            if bytes.len() as u64 > limit {
                return Err(too_large(key, limit));
            }
            let written = bytes.len() as u64;
            self.put(key, bytes, content_type).await?;
            Ok(written)
        }

        /// Refuses by the object's `Content-Length` before reading its body,
        /// and still stops reading past `limit + 1` bytes.
        async fn get(&self, key: &str, limit: u64) -> StoreResult<Option<Vec<u8>>> {
            let answer = self
                .client
                .get_object()
                .bucket(&self.bucket)
                .key(checked(key)?)
                .send()
                .await;
            let mut object = match answer {
                Ok(object) => object,
                Err(e) if e.as_service_error().is_some_and(|e| e.is_no_such_key()) => return Ok(None),
                Err(e) => return Err(s3_error("GetObject", key, e)),
            };
            let declared = object.content_length().and_then(|n| u64::try_from(n).ok());
            if declared.is_some_and(|n| n > limit) {
                return Err(too_large(key, limit));
            }
            let capacity = declared.unwrap_or(0).min(limit).try_into().unwrap_or(0);
            let mut bytes = Vec::with_capacity(capacity);
            while let Some(chunk) = object.body.next().await {
                let chunk = chunk.map_err(|e| StoreError::Unavailable(format!("S3 GetObject of {key}: {e}")))?;
                bytes.extend_from_slice(&chunk);
                if bytes.len() as u64 > limit {
                    return Err(too_large(key, limit));
                }
            }
            Ok(Some(bytes))
        }

        /// DeleteObjects in batches of 1,000 (quiet: the answer lists only
        /// failures); a key with no object counts as deleted.
        async fn delete(&self, keys: &[String]) -> StoreResult<()> {
            for key in keys {
                checked(key)?;
            }
            for batch in keys.chunks(DELETE_BATCH) {
                let objects = batch
                    .iter()
                    .map(|key| ObjectIdentifier::builder().key(key).build())
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| StoreError::Internal(e.to_string()))?;
                let delete = Delete::builder()
                    .set_objects(Some(objects))
                    .quiet(true)
                    .build()
                    .map_err(|e| StoreError::Internal(e.to_string()))?;
                let first = &batch[0];
                let answer = self
                    .client
                    .delete_objects()
                    .bucket(&self.bucket)
                    .delete(delete)
                    .send()
                    .await
                    .map_err(|e| s3_error("DeleteObjects", &format!("{} keys from {first}", batch.len()), e))?;
                if !answer.errors().is_empty() {
                    let failed: Vec<String> = answer
                        .errors()
                        .iter()
                        .take(5)
                        .map(|e| {
                            format!(
                                "{} ({})",
                                e.key().unwrap_or("?"),
                                e.code().or(e.message()).unwrap_or("no code")
                            )
                        })
                        .collect();
                    return Err(StoreError::Internal(format!(
                        "S3 DeleteObjects left {} of {} keys: {}",
                        answer.errors().len(),
                        batch.len(),
                        failed.join(", ")
                    )));
                }
            }
            Ok(())
        }
    }
}
