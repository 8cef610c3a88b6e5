//! Upload grants on AWS (docs/API.md, Images): a presigned S3 POST for
//! one key the server chose, with the declared `Content-Type` and a size
//! range, that the client sends its file to directly.
//!
//! The AWS SDK for Rust presigns GET and PUT but not POST, so the policy
//! document and the form fields are written here, by hand, following
//! "Browser-Based Uploads Using POST (AWS Signature Version 4)" and "POST
//! Policy" in the S3 API reference; the signature itself comes from
//! aws-sigv4: its signing key (date, region, `s3`, `aws4_request`) and its
//! HMAC-SHA256 over the base64 policy, the policy being the string to sign.
//!
//! What S3 checks at the POST, from the policy: the request arrives before
//! `expiration`; the bucket is the URL's; the `key`, `Content-Type` and
//! `success_action_status` fields are exactly the granted ones; the file
//! holds between 1 and `max_bytes` bytes (`content-length-range`); the
//! `x-amz-*` fields are those signed; and every other form field (but
//! `policy`, `x-amz-signature`, `file`) is named by a condition, else it
//! refuses the upload (`403 AccessDenied`, `400 EntityTooLarge`...).
//! Temporary credentials (Lambda's) also put the session token in the
//! policy and the form.

use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, Utc};

/// The only algorithm S3 takes for a POST policy (SigV4).
const ALGORITHM: &str = "AWS4-HMAC-SHA256";
/// The status S3 answers a stored upload with (its XML body names the
/// bucket, key and ETag); the default, 204, has no body.
const SUCCESS_STATUS: &str = "201";

/// Where the upload goes and what it may be.
#[derive(Debug, Clone, Copy)]
pub struct PostUpload<'a> {
    pub bucket: &'a str,
    /// The object's key, exact (no `${filename}`, no prefix).
    pub key: &'a str,
    /// The declared type (`image/jpeg`...), exact: stored as the object's `Content-Type`.
    pub content_type: &'a str,
    /// The largest file accepted, in bytes; the smallest is 1.
    pub max_bytes: u64,
    /// How long the grant is good for, from `now`.
    pub expires_in: Duration,
}

/// A presigned POST: the client sends `multipart/form-data` to `url` with
/// `fields`, in this order, and then the file as the last part, `file`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostGrant {
    pub url: String,
    pub fields: Vec<(String, String)>,
    /// When S3 stops taking it (the policy's `expiration`).
    pub expires_at: SystemTime,
}

impl PostGrant {
    /// The value of the field `name` (case-insensitive, as S3 reads them).
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(field, _)| field.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// The grant for `upload`, signed with `credentials` for `region` at `now`.
///
/// `endpoint`: `None` on AWS, where the URL is the bucket's virtual-hosted
/// one, `https://<bucket>.s3.<region>.amazonaws.com` (a bucket whose name
/// holds a dot does not match S3's certificate there: name buckets without
/// dots); `Some("http://127.0.0.1:5000")` (moto, an S3-compatible store)
/// posts path-style, to `<endpoint>/<bucket>`.
pub fn presigned_post(
    credentials: &Credentials,
    region: &str,
    endpoint: Option<&str>,
    upload: &PostUpload<'_>,
    now: SystemTime,
) -> PostGrant {
    let at: DateTime<Utc> = now.into();
    let amz_date = at.format("%Y%m%dT%H%M%SZ").to_string();
    let credential = format!(
        "{}/{}/{region}/s3/aws4_request",
        credentials.access_key_id(),
        at.format("%Y%m%d")
    );
    let expires_at = now + upload.expires_in;
    let signed = SignedFields {
        credential: &credential,
        amz_date: &amz_date,
        security_token: credentials.session_token(),
    };
    let policy = STANDARD.encode(policy_document(upload, &signed, expires_at).to_string());
    let signature = signature(credentials.secret_access_key(), now, region, &policy);

    let mut fields = vec![
        ("key", upload.key),
        ("Content-Type", upload.content_type),
        ("success_action_status", SUCCESS_STATUS),
        ("x-amz-algorithm", ALGORITHM),
        ("x-amz-credential", &credential),
        ("x-amz-date", &amz_date),
    ];
    if let Some(token) = signed.security_token {
        fields.push(("x-amz-security-token", token));
    }
    fields.push(("policy", &policy));
    fields.push(("x-amz-signature", &signature));
    PostGrant {
        url: bucket_url(endpoint, region, upload.bucket),
        fields: fields
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect(),
        expires_at,
    }
}

/// The `x-amz-*` values the policy names and the form repeats.
struct SignedFields<'a> {
    credential: &'a str,
    amz_date: &'a str,
    security_token: Option<&'a str>,
}

/// The policy: its expiration (ISO 8601 in UTC with milliseconds, as S3's
/// examples write it) and one condition per form field, all exact matches
/// but the size range.
fn policy_document(upload: &PostUpload<'_>, signed: &SignedFields<'_>, expires_at: SystemTime) -> serde_json::Value {
    let expiration = DateTime::<Utc>::from(expires_at)
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string();
    let mut conditions = vec![
        serde_json::json!({ "bucket": upload.bucket }),
        serde_json::json!(["eq", "$key", upload.key]),
        serde_json::json!(["eq", "$Content-Type", upload.content_type]),
        serde_json::json!(["content-length-range", 1, upload.max_bytes]),
        serde_json::json!({ "success_action_status": SUCCESS_STATUS }),
        serde_json::json!({ "x-amz-algorithm": ALGORITHM }),
        serde_json::json!({ "x-amz-credential": signed.credential }),
        serde_json::json!({ "x-amz-date": signed.amz_date }),
    ];
    if let Some(token) = signed.security_token {
        conditions.push(serde_json::json!({ "x-amz-security-token": token }));
    }
    serde_json::json!({ "expiration": expiration, "conditions": conditions })
}

/// SigV4 for a POST: the base64 policy is the string to sign, with the
/// signing key of `now`'s UTC date, `region` and `s3` (aws-sigv4's).
fn signature(secret_access_key: &str, now: SystemTime, region: &str, policy_base64: &str) -> String {
    let key = aws_sigv4::sign::v4::generate_signing_key(secret_access_key, now, region, "s3");
    aws_sigv4::sign::v4::calculate_signature(key, policy_base64.as_bytes())
}

fn bucket_url(endpoint: Option<&str>, region: &str, bucket: &str) -> String {
    match endpoint {
        Some(endpoint) => format!("{}/{bucket}", endpoint.trim_end_matches('/')),
        None => format!("https://{bucket}.s3.{region}.amazonaws.com"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2015-12-29T00:00:00Z, the date of AWS's POST example.
    fn example_time() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_451_347_200)
    }

    fn upload() -> PostUpload<'static> {
        PostUpload {
            bucket: "board-media",
            key: "uploads/01JZ0000000000000000000000",
            content_type: "image/png",
            max_bytes: 20 * 1024 * 1024,
            expires_in: Duration::from_secs(15 * 60),
        }
    }

    fn decoded_policy(grant: &PostGrant) -> serde_json::Value {
        let policy = STANDARD
            .decode(grant.field("policy").expect("a policy field"))
            .expect("base64");
        serde_json::from_slice(&policy).expect("JSON")
    }

    /// "Example: Browser-Based Upload using HTTP POST (Using AWS Signature
    /// Version 4)", S3 API reference: its base64 policy (the JSON with CRLF
    /// line ends), its example secret and date, and the signature it gives.
    #[test]
    fn the_signature_matches_the_aws_documented_post_example() {
        let policy = concat!(
            "eyAiZXhwaXJhdGlvbiI6ICIyMDE1LTEyLTMwVDEyOjAwOjAwLjAwMFoiLA0KICAiY29uZGl0aW9ucyI6IFsNCiAgICB7ImJ1Y2tldCI6",
            "ICJzaWd2NGV4YW1wbGVidWNrZXQifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRrZXkiLCAidXNlci91c2VyMS8iXSwNCiAgICB7ImFj",
            "bCI6ICJwdWJsaWMtcmVhZCJ9LA0KICAgIHsic3VjY2Vzc19hY3Rpb25fcmVkaXJlY3QiOiAiaHR0cDovL3NpZ3Y0ZXhhbXBsZWJ1Y2tl",
            "dC5zMy5hbWF6b25hd3MuY29tL3N1Y2Nlc3NmdWxfdXBsb2FkLmh0bWwifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRDb250ZW50LVR5",
            "cGUiLCAiaW1hZ2UvIl0sDQogICAgeyJ4LWFtei1tZXRhLXV1aWQiOiAiMTQzNjUxMjM2NTEyNzQifSwNCiAgICB7IngtYW16LXNlcnZl",
            "ci1zaWRlLWVuY3J5cHRpb24iOiAiQUVTMjU2In0sDQogICAgWyJzdGFydHMtd2l0aCIsICIkeC1hbXotbWV0YS10YWciLCAiIl0sDQoN",
            "CiAgICB7IngtYW16LWNyZWRlbnRpYWwiOiAiQUtJQUlPU0ZPRE5ON0VYQU1QTEUvMjAxNTEyMjkvdXMtZWFzdC0xL3MzL2F3czRfcmVx",
            "dWVzdCJ9LA0KICAgIHsieC1hbXotYWxnb3JpdGhtIjogIkFXUzQtSE1BQy1TSEEyNTYifSwNCiAgICB7IngtYW16LWRhdGUiOiAiMjAx",
            "NTEyMjlUMDAwMDAwWiIgfQ0KICBdDQp9",
        );
        // The example is self-consistent: its policy names that date and scope.
        let text = String::from_utf8(STANDARD.decode(policy).unwrap()).unwrap();
        assert!(text.contains("\"x-amz-date\": \"20151229T000000Z\""));
        assert!(text.contains("/20151229/us-east-1/s3/aws4_request"));
        assert_eq!(
            signature(
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                example_time(),
                "us-east-1",
                policy
            ),
            "8afdbf4008c03f22c2cd3cdb72e4afbb1f6a588f3255ac628749a66d7f09699e"
        );
    }

    #[test]
    fn the_policy_holds_exactly_the_granted_conditions() {
        let credentials = Credentials::new("AKIDEXAMPLE", "secret", None, None, "test");
        let grant = presigned_post(&credentials, "ap-northeast-2", None, &upload(), example_time());
        assert_eq!(
            decoded_policy(&grant),
            serde_json::json!({
                "expiration": "2015-12-29T00:15:00.000Z",
                "conditions": [
                    {"bucket": "board-media"},
                    ["eq", "$key", "uploads/01JZ0000000000000000000000"],
                    ["eq", "$Content-Type", "image/png"],
                    ["content-length-range", 1, 20_971_520],
                    {"success_action_status": "201"},
                    {"x-amz-algorithm": "AWS4-HMAC-SHA256"},
                    {"x-amz-credential": "AKIDEXAMPLE/20151229/ap-northeast-2/s3/aws4_request"},
                    {"x-amz-date": "20151229T000000Z"},
                ]
            })
        );
        assert_eq!(grant.expires_at, example_time() + Duration::from_secs(900));
    }

    #[test]
    fn temporary_credentials_put_their_session_token_in_the_policy_and_the_form() {
        let credentials = Credentials::new("ASIAEXAMPLE", "secret", Some("the-token".to_owned()), None, "test");
        let grant = presigned_post(&credentials, "us-east-1", None, &upload(), example_time());
        let policy = decoded_policy(&grant);
        let conditions = policy["conditions"].as_array().unwrap();
        assert_eq!(
            conditions.last(),
            Some(&serde_json::json!({"x-amz-security-token": "the-token"}))
        );
        assert_eq!(conditions.len(), 9);
        assert_eq!(grant.field("x-amz-security-token"), Some("the-token"));
    }

    #[test]
    fn the_form_repeats_every_condition_and_ends_with_the_policy_and_its_signature() {
        let credentials = Credentials::new("AKIDEXAMPLE", "secret", None, None, "test");
        let grant = presigned_post(&credentials, "ap-northeast-2", None, &upload(), example_time());
        let names: Vec<&str> = grant.fields.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(
            names,
            [
                "key",
                "Content-Type",
                "success_action_status",
                "x-amz-algorithm",
                "x-amz-credential",
                "x-amz-date",
                "policy",
                "x-amz-signature"
            ]
        );
        assert_eq!(grant.field("key"), Some("uploads/01JZ0000000000000000000000"));
        assert_eq!(grant.field("content-type"), Some("image/png"));
        assert_eq!(grant.field("x-amz-date"), Some("20151229T000000Z"));
        assert_eq!(
            grant.field("x-amz-credential"),
            Some("AKIDEXAMPLE/20151229/ap-northeast-2/s3/aws4_request")
        );
        assert_eq!(grant.field("x-amz-session-token"), None);
        // The signature is the one over the policy field as sent.
        assert_eq!(
            grant.field("x-amz-signature"),
            Some(
                signature(
                    "secret",
                    example_time(),
                    "ap-northeast-2",
                    grant.field("policy").unwrap()
                )
                .as_str()
            )
        );
    }

    /// The spec's steps by hand (HMAC-SHA256 chain from "AWS4" + secret), so
    /// the aws-sigv4 primitives are held to the document, not to themselves.
    #[test]
    fn the_signature_follows_the_sigv4_steps_for_another_date_and_region() {
        use hmac::{KeyInit as _, Mac as _};
        fn hmac(key: &[u8], data: &str) -> Vec<u8> {
            let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(key).unwrap();
            mac.update(data.as_bytes());
            mac.finalize().into_bytes().to_vec()
        }
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_599); // 2025-12-31T23:59:59Z
        let key = ["20251231", "ap-northeast-2", "s3", "aws4_request"]
            .iter()
            .fold(b"AWS4secret/key".to_vec(), |key, part| hmac(&key, part));
        let expected: String = hmac(&key, "cG9saWN5").iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(signature("secret/key", now, "ap-northeast-2", "cG9saWN5"), expected);
    }

    #[test]
    fn the_url_is_virtual_hosted_on_aws_and_path_style_on_an_endpoint() {
        assert_eq!(
            bucket_url(None, "ap-northeast-2", "board-media"),
            "https://board-media.s3.ap-northeast-2.amazonaws.com"
        );
        assert_eq!(
            bucket_url(Some("http://127.0.0.1:5000/"), "us-east-1", "board-media"),
            "http://127.0.0.1:5000/board-media"
        );
    }
}
