//! The `media` binary as Lambda runs it (a local Runtime API,
//! `test_support::lambda`), on DynamoDB Local and moto's S3 (real S3 wire
//! protocol; `bash scripts/test-all` starts both): an upload grant through
//! API Gateway's event, the file sent as a browser's form POST to the
//! presigned URL, the bucket's "Object Created" event through EventBridge,
//! the check (EXIF and GPS gone, a thumbnail), and after the post's delete
//! the schedule's sweep deleting the objects. AWS itself is what cannot run
//! here: moto checks no POST policy (shared/tests/s3_post.rs).

use std::sync::Arc;

use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
use serde_json::{Value, json};
use shared::domain::media::{AttachedMedia, MediaStatus};
use shared::domain::{Author, MediaId, Member, PasswordHash, Post, PostKey, TextRef, Writer, WriterKey, new_id, now};
use shared::store::dynamo::{DynamoStore, SdkTuning, client_config};
use shared::store::{Media as _, Members as _, Posts as _, Store};
use test_support::images;
use test_support::lambda::{Function, event};

const JWT_SECRET: &str = "media-test-jwt-secret-0123456789abcdefghij";
const TAG_KEY: &str = "media-test-tag-key-0123456789abcdefghijklmn";

fn env_var(name: &str, starts: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run the suite with `bash scripts/test-all`, which starts {starts}")
    })
}

fn s3() -> aws_sdk_s3::Client {
    let config = aws_sdk_s3::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .endpoint_url(env_var("S3_ENDPOINT", "moto"))
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("local", "local", None, None, "test"))
        .force_path_style(true)
        .build();
    aws_sdk_s3::Client::from_conf(config)
}

async fn object(s3: &aws_sdk_s3::Client, bucket: &str, key: &str) -> Option<(Option<String>, Vec<u8>)> {
    let got = s3.get_object().bucket(bucket).key(key).send().await.ok()?;
    let content_type = got.content_type().map(str::to_owned);
    Some((content_type, got.body.collect().await.unwrap().into_bytes().to_vec()))
}

/// Sends the grant's fields, then the file last, as a browser's form does.
async fn post_form(url: &str, fields: &serde_json::Map<String, Value>, file: &[u8]) -> u16 {
    let boundary = format!("----media{}", new_id());
    let mut body = Vec::new();
    for (name, value) in fields {
        let value = value.as_str().unwrap();
        body.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").as_bytes(),
        );
    }
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"photo.jpg\"\r\n\
             Content-Type: image/jpeg\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(file);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    reqwest::Client::new()
        .post(url)
        .header("content-type", format!("multipart/form-data; boundary={boundary}"))
        .body(body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

fn object_created(bucket: &str, key: &str) -> Value {
    json!({
        "version": "0", "id": new_id(), "detail-type": "Object Created", "source": "aws.s3",
        "account": "123456789012", "time": "2026-12-04T00:00:00Z", "region": "us-east-1",
        "resources": [format!("arn:aws:s3:::{bucket}")],
        "detail": {"version": "0", "bucket": {"name": bucket}, "object": {"key": key, "size": 1},
                   "request-id": "r", "requester": "123456789012", "reason": "PostObject"}
    })
}

fn scheduled() -> Value {
    json!({"version": "0", "id": new_id(), "detail-type": "Scheduled Event", "source": "aws.events",
           "account": "123456789012", "time": "2026-12-04T00:00:00Z", "region": "us-east-1",
           "resources": ["arn:aws:events:us-east-1:123456789012:rule/media-sweep"], "detail": {}})
}

fn body_of(answer: &Value) -> Value {
    serde_json::from_str(answer["body"].as_str().unwrap_or("null")).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_is_granted_checked_on_its_bucket_event_and_swept_after_its_post_goes() {
    let endpoint = env_var("DYNAMODB_ENDPOINT", "DynamoDB Local");
    let table = format!("media-{}", new_id().to_lowercase());
    let config = client_config(Some(&endpoint), None, &SdkTuning::defaults(true))
        .await
        .unwrap();
    let store = Arc::new(
        DynamoStore::with_client(aws_sdk_dynamodb::Client::from_conf(config.build()), &table, true)
            .await
            .unwrap(),
    );
    let s3 = s3();
    let bucket = format!("media-{}", new_id().to_lowercase());
    s3.create_bucket().bucket(&bucket).send().await.unwrap();
    let member = Member {
        id: new_id(),
        username: "kim".into(),
        nickname: "김".into(),
        created_at: now(),
    };
    store
        .create_member(&member, &PasswordHash::new("not a hash".into()), None)
        .await
        .unwrap();
    let keys = shared::app::tokens::JwtKeys::new(&JWT_SECRET.to_owned().into()).unwrap();
    let unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let token = keys.issue(&member, 0, unix).unwrap();

    let logs = tempfile::tempdir().unwrap();
    let s3_endpoint = env_var("S3_ENDPOINT", "moto");
    let function = Function::start(
        env!("CARGO_BIN_EXE_media"),
        "media",
        &[
            ("TABLE_NAME", table.as_str()),
            ("DYNAMODB_ENDPOINT", endpoint.as_str()),
            ("JWT_SECRET", JWT_SECRET),
            ("TAG_KEY", TAG_KEY),
            ("MEDIA_BUCKET", bucket.as_str()),
            ("MEDIA_BASE_URL", "https://media.example"),
            ("S3_ENDPOINT", s3_endpoint.as_str()),
            ("POW", "off"),
        ],
        &logs.path().join("media.log"),
    )
    .await;

    // The grant: a presigned POST to the bucket, for `uploads/<id>` only.
    let photo = images::jpeg_with_gps(64, 48);
    let grant_body = json!({"content_type": "image/jpeg", "bytes": photo.len()}).to_string();
    let grant = event(
        "POST",
        "/boards/{slug}/media",
        "/boards/free/media",
        json!({"slug": "free"}),
        json!({"authorization": format!("Bearer {token}")}),
        Some(grant_body),
    );
    let answer = function.invoke(grant).await;
    assert_eq!(answer["statusCode"], 201, "{answer}");
    let grant = body_of(&answer);
    let id = grant["id"].as_str().unwrap().to_owned();
    assert_eq!(grant["upload"]["method"], "POST");
    let fields = grant["upload"]["fields"].as_object().unwrap();
    assert_eq!(fields["key"], format!("uploads/{id}").as_str());
    assert!(
        fields.contains_key("policy") && fields.contains_key("x-amz-signature"),
        "{grant}"
    );
    let url = grant["upload"]["url"].as_str().unwrap();
    assert!(url.starts_with(&s3_endpoint), "{url}");
    assert_eq!(post_form(url, fields, &photo).await, 201);

    // S3 tells the function through EventBridge: checked, files written.
    let answer = function.invoke(object_created(&bucket, &format!("uploads/{id}"))).await;
    assert_eq!(answer["checked"][0]["status"], "ready", "{answer}");
    let state = function
        .invoke(event(
            "GET",
            "/media/{media_id}",
            &format!("/media/{id}"),
            json!({"media_id": id}),
            json!({}),
            None,
        ))
        .await;
    let state = body_of(&state);
    assert_eq!(state["status"], "ready", "{state}");
    assert_eq!(
        (state["width"].as_u64(), state["height"].as_u64()),
        (Some(48), Some(64))
    );
    let url = state["url"].as_str().unwrap();
    assert_eq!(url, format!("https://media.example/files/{id}.jpg"));
    let (content_type, bytes) = object(&s3, &bucket, &format!("files/{id}.jpg")).await.unwrap();
    assert_eq!(content_type.as_deref(), Some("image/jpeg"));
    let head = s3
        .head_object()
        .bucket(&bucket)
        .key(format!("files/{id}.jpg"))
        .send()
        .await
        .unwrap();
    assert_eq!(head.cache_control(), Some(shared::store::files::SERVED_CACHE_CONTROL));
    assert!(!images::carries_exif_or_gps(&bytes), "EXIF or GPS survived the check");
    assert!(object(&s3, &bucket, &format!("files/{id}-thumb.jpg")).await.is_some());
    assert!(
        object(&s3, &bucket, &format!("uploads/{id}")).await.is_none(),
        "the upload as sent is deleted"
    );
    // Not an image, and a decoding bomb: rejected with a reason, no files.
    for (file, content_type) in [
        (b"<html><script>alert(1)</script></html>".to_vec(), "image/png"),
        (images::png_claiming(100_000, 100_000), "image/png"),
    ] {
        let body = json!({"content_type": content_type, "bytes": file.len()}).to_string();
        let grant = event(
            "POST",
            "/boards/{slug}/media",
            "/boards/free/media",
            json!({"slug": "free"}),
            json!({"authorization": format!("Bearer {token}")}),
            Some(body),
        );
        let grant = body_of(&function.invoke(grant).await);
        let refused = grant["id"].as_str().unwrap().to_owned();
        let url = grant["upload"]["url"].as_str().unwrap();
        assert_eq!(
            post_form(url, grant["upload"]["fields"].as_object().unwrap(), &file).await,
            201
        );
        let answer = function
            .invoke(object_created(&bucket, &format!("uploads/{refused}")))
            .await;
        assert_eq!(answer["checked"][0]["status"], "rejected", "{answer}");
        let path = format!("/media/{refused}");
        let state = body_of(
            &function
                .invoke(event(
                    "GET",
                    "/media/{media_id}",
                    &path,
                    json!({"media_id": refused}),
                    json!({}),
                    None,
                ))
                .await,
        );
        assert!(state["reason"].as_str().is_some_and(|r| !r.is_empty()), "{state}");
        assert!(object(&s3, &bucket, &format!("uploads/{refused}")).await.is_none());
        assert!(object(&s3, &bucket, &format!("files/{refused}.png")).await.is_none());
    }
    // A redelivered event changes nothing.
    let again = function.invoke(object_created(&bucket, &format!("uploads/{id}"))).await;
    assert_eq!(again["checked"][0]["status"], "ready");

    // Attached to a post (as member-write would), then the post deleted.
    let media_id = MediaId::parse(&id).unwrap();
    let record = store.media(&media_id).await.unwrap().unwrap();
    assert_eq!(record.status, MediaStatus::Ready);
    let attached = AttachedMedia::of(&media_id, record.ready.as_ref().unwrap());
    let post = Post {
        summary: shared::domain::PostSummary {
            id: new_id(),
            board: "free".into(),
            title: "사진".into(),
            author: Author::Member {
                member_id: member.id.clone(),
                nickname: member.nickname.clone(),
            },
            created_at: now(),
            view_count: 0,
            like_count: 0,
            comment_count: 0,
            number: 1,
            category: None,
            dislike_count: Some(0),
            best: false,
            media_count: 1,
        },
        body: "짤".into(),
        updated_at: now(),
        revision_count: 0,
        media: vec![attached],
    };
    let writer = Writer {
        key: WriterKey::new("w".repeat(52)),
        range: WriterKey::new("r".repeat(52)),
    };
    store.create_post(&post, &writer, None, None).await.unwrap();
    let key = PostKey {
        board: shared::domain::Boards::default().resolve("free").unwrap(),
        post: shared::domain::PostId::parse(&post.summary.id).unwrap(),
    };
    // Before the delete the sweep leaves it.
    let swept = function.invoke(scheduled()).await;
    assert_eq!(swept["swept"], 0, "{swept}");
    assert!(store.delete_post(&key, false).await.unwrap());
    // The stream's functions: `purge` (children) and `notify` (the text gone).
    let store: Arc<dyn Store> = store;
    for pending in store.pending_purges(10).await.unwrap() {
        store.purge(&pending).await.unwrap();
    }
    let text = TextRef {
        post: key,
        comment: None,
    };
    store.release_media(&text, &now()).await.unwrap();
    let swept = function.invoke(scheduled()).await;
    assert_eq!(swept["swept"], 1, "{swept}");
    for key in [format!("files/{id}.jpg"), format!("files/{id}-thumb.jpg")] {
        assert!(
            object(&s3, &bucket, &key).await.is_none(),
            "{key} is still in the bucket"
        );
    }
    assert!(store.media(&media_id).await.unwrap().is_none());
}
