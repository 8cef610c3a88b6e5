//! What the ports take and answer that belongs to storage rather than to
//! the domain: an edit, what it found, a vote's outcome, a pending purge.

use crate::domain::{Category, PostBody, PostVersion, Tally, Title};

/// What a guest vote did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuestVoted {
    Counted(Tally),
    /// This address key voted on the post before: nothing changed.
    AlreadyVoted,
    NoSuchPost,
}

/// A post's new title, body and category.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostEdit {
    pub title: Title,
    pub body: PostBody,
    /// `None` keeps the post's category; `Some(None)` clears it.
    pub category: Option<Option<Category>>,
    pub updated_at: String,
    /// `If-Match`: edit only a post at one of these versions.
    pub if_version: Option<Vec<PostVersion>>,
    /// `None` keeps the post's images; else its images from now on.
    pub media: Option<MediaEdit>,
    /// The board's edit lock: refuse ([`Edited::Answered`]) when the post
    /// has a comment by anyone other than its author, decided in the
    /// edit's own write.
    pub unless_answered: bool,
}

/// An edit's images: those the post keeps stay attached, those it
/// drops are due for the sweep at once, new ones are attached as a
/// create's are (granted to `owner`, the one editing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaEdit {
    pub media: Vec<crate::domain::media::AttachedMedia>,
    pub owner: crate::domain::media::MediaOwner,
}

/// What an edit found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Edited {
    Done,
    NoSuchPost,
    /// The post is at another version than the edit's `if_version`: unchanged.
    OtherVersion,
    /// The edit was `unless_answered` and someone else has commented: unchanged.
    Answered,
}

/// How long a process may trust what it read of a member's session
/// epoch (docs/API.md, Accounts: at most 10 seconds on Lambda).
pub const SESSION_TTL: std::time::Duration = std::time::Duration::from_secs(10);

/// What a failure counter counts, e.g. `login:user:kim` (built by the throttle).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AttemptKey(pub String);

impl AttemptKey {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A deleted post whose children (comments, likes, reports, counter
/// shards) are still stored, and the board it was on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingPurge {
    pub board: String,
    pub post: String,
}
