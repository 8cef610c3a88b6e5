//! Upload grants (`shared::s3_post`) sent as a browser would, a
//! `multipart/form-data` POST, to a local S3: moto in server mode, which
//! `scripts/test-all` starts (these tests fail, never skip, without
//! `S3_ENDPOINT`). The bucket is created and the object read back with the
//! AWS SDK's S3 client.
//!
//! What moto 5.2.5 checks of a POST upload (moto/s3/responses.py,
//! `_bucket_response_post`, and moto/core/responses.py, `setup_class`): a
//! `Content-Length` header (else 411), that the bucket exists (else 404
//! NoSuchBucket), a `key` field (else 500). It stores the file part under
//! `key` (`${filename}` replaced), takes `Content-Type`, `Cache-Control`...
//! and `x-amz-meta-*` fields as the object's metadata, and answers
//! `success_action_status` (any number; else 204, or 303 with
//! `success_action_redirect`) with an empty body, where S3 answers XML.
//!
//! What it does NOT check, nowhere in its source (no `content-length-range`,
//! no `x-amz-signature` is ever read): the policy at all (its base64, its
//! `expiration`, its `bucket`, `key`, `Content-Type` and
//! `content-length-range` conditions, fields the policy does not name), nor
//! the signature, credential scope, date or session token. Its request
//! authentication (off unless `INITIAL_NO_AUTH_ACTION_COUNT` is set) reads
//! only an `Authorization` header, which a POST form has not. So here moto
//! proves the grant is a form S3's POST accepts (URL, field names and order,
//! the file last, the type stored); the policy and its signature are held to
//! AWS's documented example and to the spec by the unit tests in
//! shared/src/s3_post.rs, and enforced by S3 itself.
//! [`moto_checks_neither_the_policy_nor_the_signature`] pins that, so a moto
//! that starts checking them fails it and its assertions turn into refusals.

use std::time::{Duration, SystemTime};

use aws_sdk_s3::Client;
use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
use shared::s3_post::{PostGrant, PostUpload, presigned_post};

const REGION: &str = "us-east-1";
const MAX_BYTES: u64 = 1024;

fn endpoint() -> String {
    std::env::var("S3_ENDPOINT").expect(
        "S3_ENDPOINT is not set: run the suite with `bash scripts/test-all`, or this test after \
         `source scripts/secrets-local start`, which start a local S3 (moto)",
    )
}

/// Temporary credentials, as Lambda's are: the grant carries the session token.
fn credentials() -> Credentials {
    Credentials::new(
        "ASIALOCAL",
        "local-secret",
        Some("local-session-token".to_owned()),
        None,
        "test",
    )
}

fn client() -> Client {
    let config = aws_sdk_s3::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .endpoint_url(endpoint())
        .force_path_style(true)
        .region(Region::new(REGION))
        .credentials_provider(credentials())
        .build();
    Client::from_conf(config)
}

/// A new, empty bucket; its name.
async fn bucket(client: &Client) -> String {
    let name = format!("grants-{}", shared::domain::new_id().to_lowercase());
    client.create_bucket().bucket(&name).send().await.unwrap();
    name
}

fn grant(bucket: &str, key: &str, now: SystemTime) -> PostGrant {
    let upload = PostUpload {
        bucket,
        key,
        content_type: "image/png",
        max_bytes: MAX_BYTES,
        expires_in: Duration::from_secs(600),
    };
    presigned_post(&credentials(), REGION, Some(&endpoint()), &upload, now)
}

/// Sends `fields`, then `file` as the last part, as a browser's form does;
/// the answer's status and body.
async fn post(url: &str, fields: &[(String, String)], file: &[u8]) -> (u16, String) {
    let boundary = format!("----grant{}", shared::domain::new_id());
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").as_bytes(),
        );
    }
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"upload\"\r\n\
             Content-Type: application/octet-stream\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(file);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", format!("multipart/form-data; boundary={boundary}"))
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

/// `grant`'s fields with `name` set to `value`.
fn with(grant: &PostGrant, name: &str, value: &str) -> Vec<(String, String)> {
    grant
        .fields
        .iter()
        .map(|(field, old)| {
            (
                field.clone(),
                if field == name { value.to_owned() } else { old.clone() },
            )
        })
        .collect()
}

/// Bytes that are not all one value, so a truncation or reordering shows.
fn file(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 % 251) as u8).collect()
}

#[tokio::test]
async fn a_granted_upload_is_stored_under_its_key_with_the_declared_type_and_its_bytes() {
    let client = client();
    let bucket = bucket(&client).await;
    let key = format!("uploads/{}", shared::domain::new_id());
    let grant = grant(&bucket, &key, SystemTime::now());
    assert_eq!(grant.url, format!("{}/{bucket}", endpoint()));
    let bytes = file(MAX_BYTES as usize);

    let (status, body) = post(&grant.url, &grant.fields, &bytes).await;
    assert_eq!(status, 201, "{body}");

    let object = client.get_object().bucket(&bucket).key(&key).send().await.unwrap();
    assert_eq!(object.content_type(), Some("image/png"));
    assert_eq!(object.content_length(), Some(MAX_BYTES as i64));
    assert_eq!(
        object.body.collect().await.unwrap().into_bytes().as_ref(),
        bytes.as_slice()
    );
    // Nothing else landed in the bucket (no `${filename}` key, no form field as an object).
    let listed = client.list_objects_v2().bucket(&bucket).send().await.unwrap();
    let keys: Vec<&str> = listed.contents().iter().filter_map(|object| object.key()).collect();
    assert_eq!(keys, [key.as_str()]);
}

#[tokio::test]
async fn a_grant_for_a_bucket_that_does_not_exist_is_refused() {
    let grant = grant(
        &format!("missing-{}", shared::domain::new_id().to_lowercase()),
        "uploads/x",
        SystemTime::now(),
    );
    let (status, body) = post(&grant.url, &grant.fields, &file(10)).await;
    assert_eq!(status, 404, "{body}");
}

/// Every one of these S3 refuses (`EntityTooLarge`, `EntityTooSmall`,
/// `AccessDenied` for a field that breaks its condition, a bad signature or
/// an expired policy); moto stores them all (see the header). The unit tests
/// of shared::s3_post hold the policy that makes S3 refuse them.
#[tokio::test]
async fn moto_checks_neither_the_policy_nor_the_signature() {
    let client = client();
    let bucket = bucket(&client).await;
    let now = SystemTime::now();
    let grant = grant(&bucket, "uploads/granted", now);
    let expired = self::grant(&bucket, "uploads/expired", now - Duration::from_secs(3600));

    let accepted = [
        (
            "a file over the maximum",
            grant.fields.clone(),
            file(MAX_BYTES as usize + 1),
        ),
        ("an empty file", with(&grant, "key", "uploads/empty"), Vec::new()),
        (
            "another Content-Type",
            with(&grant, "Content-Type", "text/html"),
            file(10),
        ),
        ("another key", with(&grant, "key", "uploads/elsewhere"), file(10)),
        (
            "a changed signature",
            with(&grant, "x-amz-signature", &"0".repeat(64)),
            file(10),
        ),
        ("an expired grant", expired.fields.clone(), file(10)),
    ];
    for (what, fields, bytes) in accepted {
        let (status, body) = post(&grant.url, &fields, &bytes).await;
        assert_eq!(
            status, 201,
            "moto now refuses {what} ({body}): assert the refusal instead"
        );
        // Stored as sent: under the key and with the type of the form, whatever the policy said.
        let field = |name: &str| {
            fields
                .iter()
                .find(|(field, _)| field == name)
                .map(|(_, value)| value.as_str())
        };
        let stored = client
            .head_object()
            .bucket(&bucket)
            .key(field("key").unwrap())
            .send()
            .await
            .unwrap();
        assert_eq!(stored.content_type(), field("Content-Type"), "{what}");
        assert_eq!(stored.content_length(), Some(bytes.len() as i64), "{what}");
    }
}
