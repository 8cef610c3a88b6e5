//! The opaque page cursor: the id of the last post on the page, base64url.
//! Both adapters continue strictly after it, so nothing repeats across pages.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::StoreError;
#[cfg(any(feature = "sqlite", feature = "dynamo"))]
use crate::domain::{Page, PostSummary};

pub fn encode(last_post_id: &str) -> String {
    URL_SAFE_NO_PAD.encode(last_post_id)
}

/// The post id a cursor continues after.
pub fn decode(cursor: &str) -> Result<String, StoreError> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| StoreError::InvalidCursor)?;
    let id = String::from_utf8(bytes).map_err(|_| StoreError::InvalidCursor)?;
    if ulid::Ulid::from_string(&id).is_err() {
        return Err(StoreError::InvalidCursor);
    }
    Ok(id)
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
