//! The server's own upload URL (docs/API.md, Images; Third audit):
//! `PUT /media/uploads/{id}?grant=<end>.<HMAC>`. Everything about the grant
//! (its MAC and end, the upload still pending, the declared type, a
//! declared length within the granted size) and a place in the check queue
//! are settled before any byte of the body is read; the body then streams
//! to disk and stops at the granted size.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use super::Uploads;
use super::checks::ReservedCheck;
use crate::app::{App, throttle};
use crate::domain::MediaId;
use crate::domain::media::{MediaStatus, MediaType, upload_key};
use crate::error::ApiError;

/// The server's upload authorization: `<end, Unix seconds>.<HMAC>`.
fn upload_mac(key: &[u8; 32], id: &MediaId, expires: i64) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(format!("{}:{expires}", id.as_str()).as_bytes());
    mac
}

pub(super) fn upload_token(key: &[u8; 32], id: &MediaId, expires: i64) -> String {
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

/// A refused upload on the server's upload URL.
fn upload_refused(why: &str) -> ApiError {
    ApiError::Forbidden(format!("this upload is not granted: {why}"))
}

/// An upload its grant allows, opened before its body is read.
#[derive(Debug)]
pub struct OpenUpload {
    id: MediaId,
    /// The granted size: not one byte more is kept.
    limit: u64,
    declared: MediaType,
    check: Option<ReservedCheck>,
}

impl App {
    /// Settles whether a `PUT` of the upload `id` may send its body: the
    /// grant's `token` right and not over, the upload pending, the
    /// declared `content_type`, a declared `content_length` within the
    /// granted size (else `413`), and a place in the check queue (else `503`).
    pub async fn open_upload(
        &self,
        id: &MediaId,
        token: &str,
        content_type: Option<&str>,
        content_length: Option<u64>,
    ) -> Result<OpenUpload, ApiError> {
        let kit = self.media_kit()?;
        #[cfg_attr(not(feature = "s3"), expect(irrefutable_let_patterns))]
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
        match content_length {
            Some(0) => return Err(upload_refused("the file is empty")),
            Some(length) if length > record.bytes => {
                return Err(ApiError::PayloadTooLarge {
                    max_bytes: record.bytes,
                });
            }
            _ => {}
        }
        let check = self.reserve_check(id)?;
        Ok(OpenUpload {
            id: id.clone(),
            limit: record.bytes,
            declared: record.declared,
            check,
        })
    }

    /// Streams the body of an opened upload to its file, at most the
    /// granted size (one byte more: `413`, nothing kept), then queues its
    /// check (unless it waits already: one place per upload).
    pub async fn receive_upload(
        &self,
        upload: OpenUpload,
        body: &mut (dyn tokio::io::AsyncRead + Send + Unpin),
    ) -> Result<(), ApiError> {
        let files = self.media_files()?;
        let key = upload_key(&upload.id);
        let written = files
            .put_stream(&key, body, upload.limit, upload.declared.as_str())
            .await?;
        if written == 0 {
            files.delete(&[key]).await?;
            return Err(upload_refused("the file is empty"));
        }
        if let Some(check) = upload.check {
            check.queue();
        }
        Ok(())
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
