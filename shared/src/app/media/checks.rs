//! The server's image checker (docs/API.md, Images; Third audit): a queue
//! that holds one place per upload id, one check at a time off the
//! request path, and the sweep of images attached nowhere. On Lambda S3's
//! events start the `media` function's check instead.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use super::super::App;
use crate::domain::MediaId;
use crate::domain::media::{MediaRecord, file_key, thumbnail_key, upload_key};
#[cfg(feature = "imaging")]
use crate::domain::media::{MediaStatus, MediaType};
use crate::error::ApiError;
#[cfg(feature = "imaging")]
use crate::store::StoreError;

/// Uploads waiting for the server's checker. At this many the uploader of
/// one more is answered `503` with [`CHECKER_BUSY_RETRY_SECONDS`]: memory
/// never grows, and no upload is left pending unheard of.
const WAITING_CHECKS: usize = 1_000;

/// What a full queue tells the uploader to wait before sending again.
pub const CHECKER_BUSY_RETRY_SECONDS: u64 = 30;

/// Uploads the sweep deletes per round.
const SWEEP_BATCH: usize = 100;

/// How often the server sweeps when nothing wakes it sooner.
#[cfg(feature = "imaging")]
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(300);

/// The uploads waiting for their check: each id at most once, so re-sending
/// one pending upload never takes a second place.
#[derive(Debug)]
pub struct CheckQueue {
    sender: mpsc::Sender<MediaId>,
    waiting: Mutex<HashSet<MediaId>>,
}

/// The checker's end of the queue.
#[derive(Debug)]
pub struct MediaChecks {
    receiver: mpsc::Receiver<MediaId>,
    queue: Arc<CheckQueue>,
}

impl MediaChecks {
    /// The next upload to check; from then a new upload of it queues again.
    pub async fn next(&mut self) -> Option<MediaId> {
        let id = self.receiver.recv().await?;
        self.queue.waiting().remove(&id);
        Some(id)
    }
}

/// A place in the queue held for an upload whose body is still arriving:
/// [`ReservedCheck::queue`] once the file is whole; dropped, the place and
/// the id are free again.
#[derive(Debug)]
pub struct ReservedCheck {
    permit: Option<mpsc::OwnedPermit<MediaId>>,
    id: MediaId,
    queue: Arc<CheckQueue>,
}

impl ReservedCheck {
    pub fn queue(mut self) {
        if let Some(permit) = self.permit.take() {
            permit.send(self.id.clone());
        }
    }
}

impl Drop for ReservedCheck {
    fn drop(&mut self) {
        if self.permit.is_some() {
            self.queue.waiting().remove(&self.id);
        }
    }
}

impl CheckQueue {
    /// A queue of `capacity` places and its checker's end.
    pub fn new(capacity: usize) -> (Arc<Self>, MediaChecks) {
        let (sender, receiver) = mpsc::channel(capacity);
        let queue = Arc::new(CheckQueue {
            sender,
            waiting: Mutex::new(HashSet::new()),
        });
        let checks = MediaChecks {
            receiver,
            queue: Arc::clone(&queue),
        };
        (queue, checks)
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, HashSet<MediaId>> {
        self.waiting.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A place for `id`: `None` when it is already waiting (its check reads
    /// whatever file is there when it runs); `503` when the queue is full.
    pub fn reserve(self: &Arc<Self>, id: &MediaId) -> Result<Option<ReservedCheck>, ApiError> {
        let mut waiting = self.waiting();
        if waiting.contains(id) {
            return Ok(None);
        }
        let permit = self.sender.clone().try_reserve_owned().map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => ApiError::Unavailable {
                message: "the image checker is busy; send the file again later".into(),
                retry_after: CHECKER_BUSY_RETRY_SECONDS,
            },
            mpsc::error::TrySendError::Closed(_) => ApiError::Internal("the image checker has stopped".into()),
        })?;
        waiting.insert(id.clone());
        Ok(Some(ReservedCheck {
            permit: Some(permit),
            id: id.clone(),
            queue: Arc::clone(self),
        }))
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

impl App {
    /// Hands uploads to this process's checker (the server), which
    /// [`App::check_media_in_background`] runs on `checks`.
    pub fn with_media_checker(mut self) -> (Self, MediaChecks) {
        let (queue, checks) = CheckQueue::new(WAITING_CHECKS);
        self.media_checker = Some(queue);
        (self, checks)
    }

    /// A place in this process's check queue for the upload `id`, taken
    /// before its body is read (`None`: no checker here, or `id` waits already).
    pub(super) fn reserve_check(&self, id: &MediaId) -> Result<Option<ReservedCheck>, ApiError> {
        match &self.media_checker {
            Some(queue) => queue.reserve(id),
            None => Ok(None),
        }
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
            Err(StoreError::TooLarge { .. }) => {
                let outcome = MediaOutcome::Rejected("the file is larger than granted".into());
                self.store.finish_media(id, &outcome).await?;
                files.delete(&[upload]).await?;
                return Ok(Some(MediaStatus::Rejected));
            }
            Err(e) => return Err(e.into()),
        };
        // No stored file or thumbnail is larger than an upload may be.
        let limits = imaging::Limits {
            max_file_bytes: kit.max_bytes,
            ..imaging::Limits::default()
        };
        let declared = imaging::Declared::from_content_type(record.declared.as_str())
            .ok_or_else(|| ApiError::Internal("a declared type imaging does not know".into()))?;
        let processed = tokio::task::spawn_blocking(move || imaging::process(&bytes, declared, &limits))
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

    /// Images fell due: the server's sweep runs now rather than at its hour.
    pub(in crate::app) fn sweep_soon(&self) {
        self.sweep_wake.notify_one();
    }

    /// The server's image checker and sweep: one check at a time, so the
    /// memory a check takes (imaging's README, Measured) is never taken
    /// twice; a sweep every five minutes and whenever a delete releases images.
    #[cfg(feature = "imaging")]
    pub async fn check_media_in_background(self, mut checks: MediaChecks) {
        let mut every = tokio::time::interval(SWEEP_EVERY);
        loop {
            tokio::select! {
                id = checks.next() => {
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
    fn one_upload_holds_one_place_however_often_it_is_sent() {
        let (queue, _checks) = CheckQueue::new(2);
        let id = MediaId::generate();
        let first = queue.reserve(&id).unwrap().expect("a place");
        first.queue();
        for _ in 0..10 {
            assert!(queue.reserve(&id).unwrap().is_none(), "already waiting");
        }
        let other = queue.reserve(&MediaId::generate()).unwrap();
        assert!(other.is_some(), "the second place is still free for another upload");
    }

    #[test]
    fn a_full_queue_answers_busy_with_a_retry_and_drops_nothing() {
        let (queue, mut checks) = CheckQueue::new(1);
        let waiting = MediaId::generate();
        queue.reserve(&waiting).unwrap().unwrap().queue();
        let refused = queue.reserve(&MediaId::generate()).unwrap_err();
        assert_eq!(refused.status(), http::StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(refused.retry_after(), Some(CHECKER_BUSY_RETRY_SECONDS));
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        assert_eq!(
            runtime.block_on(checks.next()),
            Some(waiting.clone()),
            "the queued one is still there"
        );
        let again = queue.reserve(&waiting).unwrap();
        assert!(again.is_some(), "taken by the checker, an upload may queue again");
    }

    #[test]
    fn a_place_given_back_frees_the_id_and_the_slot() {
        let (queue, _checks) = CheckQueue::new(1);
        let id = MediaId::generate();
        drop(queue.reserve(&id).unwrap().unwrap());
        assert!(
            queue.reserve(&id).unwrap().is_some(),
            "the upload failed: its id and place are free"
        );
    }
}
