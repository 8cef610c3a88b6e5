//! The opaque page cursor: the id (a ULID) of the last post or comment on the
//! page, base64url. Both adapters continue strictly after it, so nothing
//! repeats across pages and nothing is skipped: posts newest first (ids below
//! it), a post's comments oldest first (ids above it).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::StoreError;
#[cfg(any(feature = "sqlite", feature = "dynamo"))]
use crate::domain::{Comment, CommentPage, Page, PostSummary};

pub fn encode(last_id: &str) -> String {
    URL_SAFE_NO_PAD.encode(last_id)
}

/// The post or comment id a cursor continues after.
pub fn decode(cursor: &str) -> Result<String, StoreError> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| StoreError::InvalidCursor)?;
    let id = String::from_utf8(bytes).map_err(|_| StoreError::InvalidCursor)?;
    if ulid::Ulid::from_string(&id).is_err() {
        return Err(StoreError::InvalidCursor);
    }
    Ok(id)
}

/// A page of revisions continues below this revision number.
pub fn encode_revision(number: u64) -> String {
    encode(&format!("r{number}"))
}

/// The revision number a revisions cursor continues below.
pub fn decode_revision(cursor: &str) -> Result<u64, StoreError> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| StoreError::InvalidCursor)?;
    std::str::from_utf8(&bytes)
        .ok()
        .and_then(|text| text.strip_prefix('r'))
        .and_then(|number| number.parse().ok())
        .ok_or(StoreError::InvalidCursor)
}

#[cfg(any(feature = "sqlite", feature = "dynamo"))]
/// Trims a `limit + 1` fetch of revisions (newest first) to the page.
pub(crate) fn revisions_page(mut revisions: Vec<crate::domain::Revision>, limit: usize) -> crate::domain::Revisions {
    let more = revisions.len() > limit;
    revisions.truncate(limit);
    crate::domain::Revisions {
        next_cursor: more
            .then(|| revisions.last().map(|r| encode_revision(r.number)))
            .flatten(),
        revisions,
    }
}

#[cfg(any(feature = "sqlite", feature = "dynamo"))]
/// Trims a `limit + 1` fetch to the page and sets the cursor when more follow.
pub(crate) fn page_of(posts: &mut Vec<PostSummary>, limit: usize) -> Page {
    let more = posts.len() > limit;
    posts.truncate(limit);
    Page {
        next_cursor: more.then(|| posts.last().map(|p| encode(&p.id))).flatten(),
        posts: std::mem::take(posts),
    }
}

#[cfg(any(feature = "sqlite", feature = "dynamo"))]
/// Trims a `limit + 1` fetch of comments to the page and sets the cursor when
/// more follow. `cut_short`: the store returned fewer than asked but said
/// more may follow (DynamoDB's 1 MB response cap), so the page ends with a
/// cursor even without the extra comment.
pub(crate) fn comment_page_of(mut comments: Vec<Comment>, limit: usize, cut_short: bool) -> CommentPage {
    let more = comments.len() > limit || cut_short;
    comments.truncate(limit);
    CommentPage {
        next_cursor: more.then(|| comments.last().map(|c| encode(&c.id))).flatten(),
        comments,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_garbage_is_refused() {
        let id = crate::domain::new_id();
        assert_eq!(decode(&encode(&id)).unwrap(), id);
        assert_eq!(decode("not base64!"), Err(StoreError::InvalidCursor));
        assert_eq!(decode(&encode("not-a-ulid")), Err(StoreError::InvalidCursor));
    }
}
