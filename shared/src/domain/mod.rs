//! The board's records as the store keeps them and the API shows them
//! (docs/API.md, Bodies), and the typed values requests are parsed into
//! ([`fields`]). Password hashes live only in [`Guard`] and
//! [`MemberCredentials`].

pub mod account;
pub mod board;
pub mod fields;
pub mod media;
pub mod moderation;
pub mod notifications;
pub mod search;
mod version;

pub use account::{DELETED_MEMBER_NICKNAME, Me, Owned, PendingDeletion, Roles, SessionState, StoredTotp, TotpStart};
pub use board::{Board, BoardList, BoardSettings, DislikePolicy, Tally, Vote, VoteChange, VoteState};
pub use fields::{
    BanDuration, BanId, BoardDescription, BoardName, BoardSlug, Boards, Category, CommentBody, CommentId, CommentKey,
    MEMBER_PASSWORD_MIN, MediaId, MemberId, Nickname, PageLimit, Password, PasswordHash, PostBody, PostId, PostKey,
    Reason, ReportId, Title, Username, new_id,
};
pub use moderation::{
    Ban, BanPage, BanRecord, BanScope, BanSubject, BanTarget, BlockedWords, LogAction, LogEntry, LogPage, LogTarget,
    Moderators, Report, ReportPage, ReportTarget, Reported, Writer, WriterKey,
};
pub use notifications::{
    BlockEntry, BlockList, BlockSet, Blocked, BlockedGuest, BlockedMember, Blocking, GuestTag, NewNotification,
    Notification, NotificationKind, NotificationPage, TextEvent, TextRef, Unread, WrittenText,
};
pub use version::PostVersion;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

/// Times are kept and shown as RFC 3339 UTC with milliseconds.
pub fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

pub fn now() -> String {
    timestamp(Utc::now())
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Author {
    Member {
        /// ULID
        #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
        member_id: String,
        nickname: String,
    },
    Guest {
        nickname: String,
        /// The writer's tag (docs/API.md, Guest tag); absent on what
        /// was written before v3.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(pattern = "^[a-z2-7]{8}$"))]
        tag: Option<String>,
    },
    /// What a deleted account left (docs/API.md, Accounts): nickname
    /// [`DELETED_MEMBER_NICKNAME`], no member id, no tag.
    #[serde(rename = "deleted_member")]
    DeletedMember { nickname: String },
}

impl Author {
    pub fn deleted_member() -> Self {
        Author::DeletedMember {
            nickname: DELETED_MEMBER_NICKNAME.to_owned(),
        }
    }

    /// A guest author with the tag of the key they wrote from.
    pub fn guest(nickname: String, writer: &WriterKey) -> Self {
        Author::Guest {
            nickname,
            tag: Some(writer.tag()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Member {
    /// ULID
    #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
    pub id: String,
    pub username: String,
    pub nickname: String,
    #[cfg_attr(feature = "openapi", schema(format = DateTime))]
    pub created_at: String,
}

/// A member with the password hash, for login only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberCredentials {
    pub member: Member,
    pub password_hash: PasswordHash,
    /// What every token issued now carries (docs/API.md, Accounts).
    pub session_epoch: u64,
    /// Their TOTP, confirmed or waiting for its first code.
    pub totp: Option<StoredTotp>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PostSummary {
    /// ULID
    #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
    pub id: String,
    pub board: String,
    pub title: String,
    pub author: Author,
    #[cfg_attr(feature = "openapi", schema(format = DateTime))]
    pub created_at: String,
    pub view_count: u64,
    pub like_count: u64,
    pub comment_count: u64,
    /// 1, 2, 3... per board in creation order, never reused.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true, minimum = 1))]
    pub number: u64,
    /// Present, null or one of the board's categories (as it was
    /// when the post was written or recategorized).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub category: Option<String>,
    /// Absent where the board has dislikes off, or hidden and the
    /// caller is not its staff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub dislike_count: Option<u64>,
    /// A best post (gaenyeomgeul, the board's front page).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub best: bool,
    /// How many images the post shows (a list's image mark).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub media_count: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Post {
    #[serde(flatten)]
    pub summary: PostSummary,
    pub body: String,
    #[cfg_attr(feature = "openapi", schema(format = DateTime))]
    pub updated_at: String,
    /// How many earlier versions `GET .../revisions` answers: one
    /// per edit, at most [`MAX_REVISIONS`].
    #[serde(default)]
    pub revision_count: u32,
    /// Its images, in the order given (docs/API.md, Images).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub media: Vec<media::AttachedMedia>,
}

/// The versions of a post kept for its history (docs/API.md, Edit
/// history and edit locks): the oldest goes when an edit would keep more.
pub const MAX_REVISIONS: u32 = 50;

/// `GET .../revisions`: a page, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Revisions {
    pub revisions: Vec<Revision>,
    /// Pass as `cursor` for the next page; null on the last.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub next_cursor: Option<String>,
}

/// A version of a post that an edit replaced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Revision {
    /// Which edit replaced it (1: the original version): the `{revision}`
    /// of its delete.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub number: u64,
    pub title: String,
    pub body: String,
    /// When this version was written: the post's creation for the first,
    /// else the edit that made it.
    #[cfg_attr(feature = "openapi", schema(format = DateTime))]
    pub edited_at: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Comment {
    /// ULID
    #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
    pub id: String,
    /// ULID
    #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
    pub post_id: String,
    /// Present, null for a top-level comment.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub parent_id: Option<String>,
    pub body: String,
    pub author: Author,
    #[cfg_attr(feature = "openapi", schema(format = DateTime))]
    pub created_at: String,
    /// Its image, if any (at most one).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub media: Vec<media::AttachedMedia>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PostDetail {
    #[serde(flatten)]
    pub post: Post,
    /// The first page of comments, oldest first: at most
    /// [`COMMENTS_PAGE`], whatever the post's comment count.
    pub comments: Vec<Comment>,
    /// Present, null when the post has no more comments than these.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub comments_next_cursor: Option<String>,
    /// With a bearer token only: the member's vote, or null.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "my_vote")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Vote>, nullable))]
    pub my_vote: Option<Option<Vote>>,
}

/// `my_vote`: absent (`None`), null (`Some(None)`) or the vote.
mod my_vote {
    use super::Vote;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<S: Serializer>(value: &Option<Option<Vote>>, s: S) -> Result<S::Ok, S::Error> {
        value.flatten().serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<Vote>>, D::Error> {
        Option::<Vote>::deserialize(d).map(Some)
    }
}

/// Comments a post detail carries, and a comments page's default size
/// (docs/API.md, Bodies).
pub const COMMENTS_PAGE: usize = 50;

/// A page of a post's comments, oldest first (docs/API.md, Bodies).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CommentPage {
    pub comments: Vec<Comment>,
    /// Present, null on the last page.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub next_cursor: Option<String>,
}

impl PostDetail {
    /// A post just written: no comments yet.
    pub fn new(post: Post) -> Self {
        PostDetail {
            post,
            comments: Vec::new(),
            comments_next_cursor: None,
            my_vote: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Page {
    /// Newest first.
    pub posts: Vec<PostSummary>,
    /// Present, null on the last page.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub next_cursor: Option<String>,
}

/// Who may change a post or comment: its author and, for guests, the hash of
/// the guest password. Used for checks only, never shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    pub author: Author,
    pub guest_password_hash: Option<PasswordHash>,
    /// The writer's address key; none on what was written before v3
    /// and on what a deleted account left.
    pub writer: Option<WriterKey>,
    /// The key of the range around it; none before v4.
    pub writer_range: Option<WriterKey>,
}

impl Guard {
    /// Whether a comment by `member` (none: a guest), written from
    /// `writer`, answers the post this guards: it is by anyone but the
    /// post's author (another member, or any guest, on a member's post; a
    /// member, or a guest of another address key, on a guest's post). What
    /// `lock_after_comments` locks on (docs/API.md, Edit history and edit
    /// locks).
    pub fn answered_by(&self, member: Option<&str>, writer: &WriterKey) -> bool {
        match (&self.author, member) {
            (Author::Member { member_id, .. }, Some(member)) => member_id != member,
            (Author::Member { .. }, None) | (_, Some(_)) => true,
            (_, None) => self.writer.as_ref() != Some(writer),
        }
    }
}

/// A fixed window for counting failures: `[start, start + length)` in Unix seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub start: i64,
    pub length_secs: i64,
}

impl Window {
    /// The window of `length_secs` that contains the Unix time `now`.
    pub fn containing(now: i64, length_secs: i64) -> Self {
        Window {
            start: now - now.rem_euclid(length_secs),
            length_secs,
        }
    }

    pub fn end(&self) -> i64 {
        self.start + self.length_secs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_fixed_and_aligned() {
        let w = Window::containing(1_000_299, 300);
        assert_eq!((w.start, w.end()), (1_000_200, 1_000_500));
        assert_eq!(Window::containing(1_000_200, 300), w);
        assert_ne!(Window::containing(1_000_500, 300), w);
    }

    #[test]
    fn authors_serialize_as_the_api_says() {
        let member = Author::Member {
            member_id: "m1".into(),
            nickname: "Kim".into(),
        };
        assert_eq!(
            serde_json::to_value(&member).unwrap(),
            serde_json::json!({"kind": "member", "member_id": "m1", "nickname": "Kim"})
        );
        let guest = Author::Guest {
            nickname: "Lee".into(),
            tag: None,
        };
        assert_eq!(
            serde_json::to_value(&guest).unwrap(),
            serde_json::json!({"kind": "guest", "nickname": "Lee"})
        );
        let tagged = Author::guest("Lee".into(), &WriterKey::new("abcdefgh2345".into()));
        assert_eq!(
            serde_json::to_value(&tagged).unwrap(),
            serde_json::json!({"kind": "guest", "nickname": "Lee", "tag": "abcdefgh"})
        );
    }
}
