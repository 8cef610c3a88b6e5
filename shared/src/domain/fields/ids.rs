//! Ids (ULIDs) and the keys that name a post or a comment on its board.

use super::BoardSlug;
use crate::error::ApiError;

text_type!(
    /// A post's id (a ULID, upper case).
    PostId
);
text_type!(
    /// A comment's id (a ULID, upper case).
    CommentId
);
text_type!(
    /// A member's id (a ULID, upper case).
    MemberId
);
text_type!(
    /// A ban's id (a ULID).
    BanId
);
text_type!(
    /// A report's id (a ULID).
    ReportId
);
text_type!(
    /// An uploaded image's id (a ULID).
    MediaId
);

/// Ids are ULIDs; anything else cannot name a post or comment.
fn ulid(what: &str, s: &str) -> Result<String, ApiError> {
    match ulid::Ulid::from_string(s) {
        Ok(_) if s.len() == 26 => Ok(s.to_ascii_uppercase()),
        _ => Err(ApiError::not_found(what)),
    }
}

/// A new unique, time-ordered id (a ULID, 26 characters). Ids made by one
/// process increase strictly, even within one millisecond, so "newest first"
/// is exact for them; across processes it holds to the millisecond.
pub fn new_id() -> String {
    static GENERATOR: std::sync::Mutex<ulid::Generator> = std::sync::Mutex::new(ulid::Generator::new());
    let mut generator = GENERATOR.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    // Overflow needs 2^80 ids in one millisecond; fall back to a random one.
    generator
        .generate()
        .unwrap_or_else(|_| ulid::Ulid::generate())
        .to_string()
}

macro_rules! id_type {
    ($name:ident, $what:literal) => {
        impl $name {
            /// A fresh id.
            pub fn generate() -> Self {
                $name(new_id())
            }

            /// An id read back from the store, which only holds valid ones.
            pub fn from_stored(s: String) -> Self {
                $name(s)
            }

            /// An id from a path: anything but a ULID names nothing (404).
            pub fn parse(s: &str) -> Result<Self, ApiError> {
                ulid($what, s).map($name)
            }
        }
    };
}

id_type!(PostId, "post");
id_type!(CommentId, "comment");
id_type!(MemberId, "member");
id_type!(BanId, "ban");
id_type!(ReportId, "report");
id_type!(MediaId, "media");

impl CommentId {
    /// A `parent_id` field: a malformed one cannot be a comment of this post.
    pub fn parse_parent(s: &str) -> Result<Self, ApiError> {
        Self::parse(s).map_err(|_| ApiError::invalid("parent_id", "must be a top-level comment of the same post"))
    }
}

/// A post on its board: every post read or write names both, so a post of
/// another board is simply not found.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PostKey {
    pub board: BoardSlug,
    pub post: PostId,
}

/// A comment under its post.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CommentKey {
    pub post: PostKey,
    pub comment: CommentId,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_sort_by_time() {
        let ids: Vec<String> = (0..1000).map(|_| new_id()).collect();
        assert!(ids.iter().all(|id| id.len() == 26));
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "strictly increasing, even within a millisecond"
        );
    }
}
