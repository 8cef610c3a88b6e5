//! The `MediaFiles` port (docs/API.md, Images): one conformance suite
//! run against both adapters, `DiskFiles` in a temporary directory and
//! `S3Files` against moto's S3, which `scripts/test-all` starts (the S3
//! tests fail, never skip, without `S3_ENDPOINT`); then what each adapter
//! promises beyond the port.

use std::sync::Arc;

use aws_sdk_s3::Client;
use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
use shared::store::StoreError;
use shared::store::files::{DiskFiles, MAX_KEY_LEN, MediaFiles, S3Files, valid_key};

/// A key no test has used: `<folder>/<ULID><suffix>`.
fn new_key(folder: &str, suffix: &str) -> String {
    format!("{folder}/{}{suffix}", shared::domain::new_id())
}

const INVALID_KEYS: &[&str] = &[
    "../x",
    "files/a/b",
    "other/x",
    "",
    "files/",
    "uploads/",
    "files/..",
    "files/.",
    "files/a..b",
    "/files/x",
    "files/x y",
    "files\\x",
];

/// The adapter-independent promises of `MediaFiles`.
mod suite {
    use super::*;

    pub(super) async fn put_then_get_returns_the_bytes(files: &dyn MediaFiles) {
        let key = new_key("files", ".jpg");
        let bytes = b"\xff\xd8\xff a jpeg".to_vec();
        files.put(&key, bytes.clone(), "image/jpeg").await.unwrap();
        assert_eq!(files.get(&key, 1024).await.unwrap(), Some(bytes.clone()));
        // A limit of exactly the file's size takes it.
        assert_eq!(files.get(&key, bytes.len() as u64).await.unwrap(), Some(bytes));
        // So does an empty file under a limit of 0.
        let empty = new_key("uploads", "");
        files.put(&empty, Vec::new(), "application/octet-stream").await.unwrap();
        assert_eq!(files.get(&empty, 0).await.unwrap(), Some(Vec::new()));
    }

    pub(super) async fn get_of_an_absent_key_is_none(files: &dyn MediaFiles) {
        assert_eq!(files.get(&new_key("uploads", ""), 1024).await.unwrap(), None);
        assert_eq!(files.get(&new_key("files", "-thumb.jpg"), 1024).await.unwrap(), None);
    }

    pub(super) async fn a_file_larger_than_the_limit_is_refused_by_get(files: &dyn MediaFiles) {
        let key = new_key("uploads", "");
        files.put(&key, vec![7; 100], "image/png").await.unwrap();
        let refused = files.get(&key, 99).await.unwrap_err();
        assert!(matches!(refused, StoreError::TooLarge { .. }), "{refused:?}");
        assert!(refused.to_string().contains(&key), "the error names the key: {refused}");
        assert!(files.get(&key, 0).await.is_err());
        assert_eq!(files.get(&key, 100).await.unwrap(), Some(vec![7; 100]));
    }

    pub(super) async fn put_over_an_existing_key_replaces_it_whole(files: &dyn MediaFiles) {
        let key = new_key("files", ".jpg");
        files.put(&key, vec![1; 5000], "image/jpeg").await.unwrap();
        files.put(&key, vec![2; 10], "image/jpeg").await.unwrap();
        assert_eq!(files.get(&key, 10_000).await.unwrap(), Some(vec![2; 10]));
        files.put(&key, vec![3; 3000], "image/jpeg").await.unwrap();
        assert_eq!(files.get(&key, 10_000).await.unwrap(), Some(vec![3; 3000]));
    }

    pub(super) async fn delete_of_present_and_absent_keys_succeeds_and_the_files_are_gone(files: &dyn MediaFiles) {
        let upload = new_key("uploads", "");
        let file = new_key("files", ".jpg");
        let thumbnail = new_key("files", "-thumb.jpg");
        let kept = new_key("files", ".png");
        for key in [&upload, &file, &kept] {
            files.put(key, b"image".to_vec(), "image/jpeg").await.unwrap();
        }
        let keys = vec![upload.clone(), file.clone(), thumbnail.clone()];
        files.delete(&keys).await.unwrap();
        for key in &keys {
            assert_eq!(files.get(key, 1024).await.unwrap(), None, "{key} is gone");
        }
        assert_eq!(files.get(&kept, 1024).await.unwrap(), Some(b"image".to_vec()));
        // Idempotent: again, and with no keys at all.
        files.delete(&keys).await.unwrap();
        files.delete(&[]).await.unwrap();
    }

    pub(super) async fn invalid_keys_are_refused_by_put_get_and_delete(files: &dyn MediaFiles) {
        for &key in INVALID_KEYS {
            let put = files.put(key, b"x".to_vec(), "image/jpeg").await;
            assert!(put.is_err(), "put of {key:?} is refused");
            assert!(files.get(key, 1024).await.is_err(), "get of {key:?} is refused");
            assert!(
                files.delete(&[key.to_owned()]).await.is_err(),
                "delete of {key:?} is refused"
            );
        }
        // One invalid key refuses the whole delete: the valid one stays.
        let kept = new_key("files", ".jpg");
        files.put(&kept, b"image".to_vec(), "image/jpeg").await.unwrap();
        assert!(files.delete(&[kept.clone(), "../x".to_owned()]).await.is_err());
        assert_eq!(files.get(&kept, 1024).await.unwrap(), Some(b"image".to_vec()));
    }
}

/// A `DiskFiles` in a temporary directory, removed when dropped.
struct Disk {
    files: DiskFiles,
    dir: tempfile::TempDir,
}

fn disk() -> Disk {
    let dir = tempfile::tempdir().unwrap();
    let files = DiskFiles::open(dir.path().join("media")).unwrap();
    Disk { files, dir }
}

fn endpoint() -> String {
    std::env::var("S3_ENDPOINT").expect(
        "S3_ENDPOINT is not set: run the suite with `bash scripts/test-all`, or this test after \
         `source scripts/secrets-local start`, which start a local S3 (moto)",
    )
}

fn s3_client() -> Client {
    let config = aws_sdk_s3::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .endpoint_url(endpoint())
        .force_path_style(true)
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("AKIALOCAL", "local-secret", None, None, "test"))
        .build();
    Client::from_conf(config)
}

/// An `S3Files` on a new bucket of its own in moto.
struct S3 {
    files: S3Files,
    client: Client,
    bucket: String,
}

async fn s3() -> S3 {
    let client = s3_client();
    let bucket = format!("media-{}", shared::domain::new_id().to_lowercase());
    client.create_bucket().bucket(&bucket).send().await.unwrap();
    S3 {
        files: S3Files::new(client.clone(), bucket.clone()),
        client,
        bucket,
    }
}

/// Each case of `suite` as a test of each adapter: `on_disk::<case>`, `on_s3::<case>`.
macro_rules! conformance {
    ($($case:ident),* $(,)?) => {
        mod on_disk {
            $(
                #[tokio::test]
                async fn $case() {
                    let disk = super::disk();
                    super::suite::$case(&disk.files).await;
                }
            )*
        }

        mod on_s3 {
            $(
                #[tokio::test]
                async fn $case() {
                    let s3 = super::s3().await;
                    super::suite::$case(&s3.files).await;
                }
            )*
        }
    };
}

conformance!(
    put_then_get_returns_the_bytes,
    get_of_an_absent_key_is_none,
    a_file_larger_than_the_limit_is_refused_by_get,
    put_over_an_existing_key_replaces_it_whole,
    delete_of_present_and_absent_keys_succeeds_and_the_files_are_gone,
    invalid_keys_are_refused_by_put_get_and_delete,
);

#[test]
fn valid_keys_are_an_upload_or_a_file_and_one_plain_name() {
    for key in [
        "uploads/01JZ0000000000000000000000",
        "files/01JZ0000000000000000000000.jpg",
        "files/01JZ0000000000000000000000-thumb.jpg",
        "files/a_b.c-d",
    ] {
        assert!(valid_key(key), "{key}");
    }
    for &key in INVALID_KEYS {
        assert!(!valid_key(key), "{key:?}");
    }
    let longest = format!("files/{}", "a".repeat(MAX_KEY_LEN - "files/".len()));
    assert!(valid_key(&longest));
    assert!(!valid_key(&format!("{longest}a")));
}

#[cfg(unix)]
#[test]
fn disk_files_folders_are_owner_only() {
    use std::os::unix::fs::PermissionsExt as _;
    let disk = disk();
    for folder in ["media", "media/uploads", "media/files"] {
        let mode = std::fs::metadata(disk.dir.path().join(folder))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700, "{folder}: {:o}", mode & 0o777);
    }
}

#[cfg(unix)]
#[test]
fn disk_files_make_an_open_folder_owner_only() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("media/files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::set_permissions(&files, std::fs::Permissions::from_mode(0o755)).unwrap();
    DiskFiles::open(dir.path().join("media")).unwrap();
    assert_eq!(std::fs::metadata(&files).unwrap().permissions().mode() & 0o777, 0o700);
}

#[tokio::test]
async fn disk_files_leave_no_temporary_file_after_put() {
    let disk = disk();
    let key = new_key("files", ".jpg");
    disk.files.put(&key, vec![9; 4096], "image/jpeg").await.unwrap();
    disk.files.put(&key, vec![8; 10], "image/jpeg").await.unwrap();
    let names: Vec<String> = std::fs::read_dir(disk.dir.path().join("media/files"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, [key.trim_start_matches("files/")]);
    assert!(
        std::fs::read_dir(disk.dir.path().join("media/uploads"))
            .unwrap()
            .next()
            .is_none()
    );
}

#[tokio::test]
async fn disk_files_path_of_rejects_invalid_keys_and_finds_the_file_put() {
    let disk = disk();
    for &key in INVALID_KEYS {
        assert_eq!(disk.files.path_of(key), None, "{key:?}");
    }
    let key = new_key("files", "-thumb.jpg");
    let path = disk.files.path_of(&key).unwrap();
    assert_eq!(path, disk.dir.path().join("media").join(&key));
    assert!(!path.exists());
    disk.files.put(&key, b"thumb".to_vec(), "image/jpeg").await.unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"thumb");
}

#[tokio::test]
async fn disk_files_concurrent_puts_of_one_key_leave_one_of_them_whole() {
    // Many puts of one key at once: the file is always one of them, whole.
    let disk = Arc::new(disk());
    let key = new_key("files", ".jpg");
    let puts = (0..16u8).map(|n| {
        let (disk, key) = (Arc::clone(&disk), key.clone());
        tokio::spawn(async move { disk.files.put(&key, vec![n; 64 * 1024], "image/jpeg").await })
    });
    for put in futures::future::join_all(puts).await {
        put.unwrap().unwrap();
    }
    let bytes = disk.files.get(&key, 1 << 20).await.unwrap().unwrap();
    assert_eq!(bytes.len(), 64 * 1024);
    assert!(bytes.iter().all(|&b| b == bytes[0]));
}

#[tokio::test]
async fn s3_files_put_stores_the_content_type() {
    let s3 = s3().await;
    let key = new_key("files", ".webp");
    s3.files
        .put(&key, b"RIFF....WEBP".to_vec(), "image/webp")
        .await
        .unwrap();
    let head = s3
        .client
        .head_object()
        .bucket(&s3.bucket)
        .key(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(head.content_type(), Some("image/webp"));
    assert_eq!(head.content_length(), Some(12));
}

#[tokio::test]
async fn s3_files_delete_of_1001_keys_leaves_none() {
    use futures::StreamExt as _;
    let s3 = Arc::new(s3().await);
    let keys: Vec<String> = (0..1001).map(|_| new_key("files", ".jpg")).collect();
    let puts = futures::stream::iter(keys.clone())
        .map(|key| {
            let s3 = Arc::clone(&s3);
            async move { s3.files.put(&key, b"x".to_vec(), "image/jpeg").await }
        })
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await;
    assert!(puts.iter().all(Result::is_ok));
    assert_eq!(stored(&s3).await, 1001);
    s3.files.delete(&keys).await.unwrap();
    assert_eq!(stored(&s3).await, 0);
}

/// How many objects the bucket holds.
async fn stored(s3: &S3) -> usize {
    let mut pages = s3.client.list_objects_v2().bucket(&s3.bucket).into_paginator().send();
    let mut count = 0;
    while let Some(page) = pages.next().await {
        count += page.unwrap().contents().len();
    }
    count
}
