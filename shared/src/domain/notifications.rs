//! Notifications and blocks (docs/API.md, Notifications and blocks):
//! what a member is told of, whom they no longer hear from, and the rules
//! that decide both (mentions, kinds, who is left out).

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::{Author, Member, MemberId, PostKey, Username};
use crate::error::ApiError;

/// How many members one text may mention (more are not notified).
pub const MAX_MENTIONS: usize = 5;

/// How many members and guests one member may block.
pub const MAX_BLOCKS: usize = 500;

/// How many notifications a member keeps: the newest.
pub const MAX_NOTIFICATIONS: usize = 1_000;

/// How long a notification is kept.
pub const NOTIFICATION_DAYS: i64 = 90;

/// The characters of the text a notification shows.
pub const EXCERPT_CHARS: usize = 100;

/// Why a member is notified, strongest first: one text notifies a member
/// once, with the first kind that applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum NotificationKind {
    /// Someone replied to their comment.
    Reply,
    /// Someone wrote `@<their username>`.
    Mention,
    /// Someone commented on their post.
    Comment,
}

impl NotificationKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NotificationKind::Reply => "reply",
            NotificationKind::Mention => "mention",
            NotificationKind::Comment => "comment",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "reply" => Some(NotificationKind::Reply),
            "mention" => Some(NotificationKind::Mention),
            "comment" => Some(NotificationKind::Comment),
            _ => None,
        }
    }
}

/// A notification as `GET /members/me/notifications` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Notification {
    /// ULID, newer notifications have greater ids: `up_to` marks read
    /// every notification up to one.
    #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
    pub id: String,
    pub kind: NotificationKind,
    pub board: String,
    /// ULID
    #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
    pub post_id: String,
    /// The comment that notified, absent for a mention in a post.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9A-HJKMNP-TV-Z]{26}$"))]
    pub comment_id: Option<String>,
    /// Who wrote it (`deleted_member` once their account is gone).
    pub actor: Author,
    /// The first [`EXCERPT_CHARS`] characters of the text.
    pub excerpt: String,
    #[cfg_attr(feature = "openapi", schema(format = DateTime))]
    pub created_at: String,
    pub read: bool,
}

/// A page of notifications, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NotificationPage {
    pub notifications: Vec<Notification>,
    /// Present, null on the last page.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub next_cursor: Option<String>,
}

/// `GET /members/me/notifications/unread`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Unread {
    pub unread: u64,
}

/// The text a notification is about: a post, or a comment on one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TextRef {
    pub post: PostKey,
    /// None for the post itself.
    pub comment: Option<String>,
}

impl TextRef {
    /// The id notifications are withdrawn by: the comment's, else the post's.
    pub fn id(&self) -> &str {
        self.comment.as_deref().unwrap_or(self.post.post.as_str())
    }
}

/// A post or comment just written, as the notifier needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenText {
    pub text: TextRef,
    /// The comment it replies to.
    pub parent: Option<String>,
    pub author: Author,
    /// The post's title (for a post), searched for mentions too.
    pub title: Option<String>,
    pub body: String,
}

/// One notification to store: for whom, and what it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewNotification {
    pub recipient: MemberId,
    pub kind: NotificationKind,
    pub actor: Author,
    pub excerpt: String,
    pub created_at: String,
}

/// What happened to a text that notified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextEvent {
    Written(WrittenText),
    /// Deleted or removed: its notifications are withdrawn (a post's with
    /// those of every comment on it).
    Gone(TextRef),
    /// Its author's account was deleted, the text kept: its notifications
    /// show `deleted_member`.
    Disowned(TextRef),
}

/// The members `@username` names in `text`, in order, each once, at most
/// [`MAX_MENTIONS`]: an `@` not after a username character, then a valid
/// username (the longest run of `a-z`, `0-9`, `_`).
pub fn mentions(text: &str) -> Vec<Username> {
    let bytes = text.as_bytes();
    let is_name = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_';
    let mut found: Vec<Username> = Vec::new();
    let mut i = 0;
    while i < bytes.len() && found.len() < MAX_MENTIONS {
        if bytes[i] == b'@' && (i == 0 || !(is_name(bytes[i - 1]) || bytes[i - 1].is_ascii_alphanumeric())) {
            let start = i + 1;
            let mut end = start;
            while end < bytes.len() && is_name(bytes[end]) {
                end += 1;
            }
            if let Ok(name) = Username::parse(text[start..end].to_owned())
                && !found.contains(&name)
            {
                found.push(name);
            }
            i = end.max(i + 1);
        } else {
            i += 1;
        }
    }
    found
}

/// The first [`EXCERPT_CHARS`] characters of `text`.
pub fn excerpt(text: &str) -> String {
    text.chars().take(EXCERPT_CHARS).collect()
}

/// Whom a member blocks: a member by id, or a guest by tag.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Blocked {
    Member(MemberId),
    Guest(GuestTag),
}

impl Blocked {
    /// As the stores key it: `member:<id>` or `guest:<tag>`.
    pub fn key(&self) -> String {
        match self {
            Blocked::Member(id) => format!("member:{}", id.as_str()),
            Blocked::Guest(tag) => format!("guest:{}", tag.as_str()),
        }
    }

    pub fn from_key(key: &str) -> Option<Self> {
        match key.split_once(':')? {
            ("member", id) => MemberId::parse(id).ok().map(Blocked::Member),
            ("guest", tag) => GuestTag::parse(tag.to_owned()).ok().map(Blocked::Guest),
            _ => None,
        }
    }
}

/// A guest's tag (docs/API.md, Guest tag): 8 characters of `a-z2-7`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GuestTag(String);

impl GuestTag {
    pub fn parse(s: String) -> Result<Self, ApiError> {
        if s.len() == 8 && s.bytes().all(|b| b.is_ascii_lowercase() || (b'2'..=b'7').contains(&b)) {
            Ok(GuestTag(s))
        } else {
            Err(ApiError::invalid(
                "tag",
                "must be a guest tag: 8 characters of a-z and 2-7",
            ))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// One block as stored: whom, since when, and for a member what they were
/// called then (the block list shows it without reading every member).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockEntry {
    pub blocked: Blocked,
    pub created_at: String,
    /// For a blocked member.
    pub member: Option<Member>,
}

/// What a block did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blocking {
    Added,
    /// It was there already: nothing changed.
    Already,
    /// [`MAX_BLOCKS`] are there already: nothing changed.
    Full,
}

/// `GET /members/me/blocks`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BlockList {
    /// The members blocked, oldest block first.
    pub members: Vec<BlockedMember>,
    pub guests: Vec<BlockedGuest>,
}

/// A blocked member as the list shows them: by nickname, never by the
/// username they sign in with (which the board shows nowhere else).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BlockedMember {
    /// ULID
    pub id: String,
    /// Empty when the account is gone.
    pub nickname: String,
    /// When the block was made.
    #[cfg_attr(feature = "openapi", schema(format = DateTime))]
    pub created_at: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BlockedGuest {
    #[cfg_attr(feature = "openapi", schema(pattern = "^[a-z2-7]{8}$"))]
    pub tag: String,
    #[cfg_attr(feature = "openapi", schema(format = DateTime))]
    pub created_at: String,
}

/// Whom one member blocks, as reads filter by it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockSet {
    members: HashSet<String>,
    guests: HashSet<String>,
}

impl BlockSet {
    pub fn of(entries: &[BlockEntry]) -> Self {
        let mut set = BlockSet::default();
        for entry in entries {
            match &entry.blocked {
                Blocked::Member(id) => set.members.insert(id.as_str().to_owned()),
                Blocked::Guest(tag) => set.guests.insert(tag.as_str().to_owned()),
            };
        }
        set
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.guests.is_empty()
    }

    pub fn len(&self) -> usize {
        self.members.len() + self.guests.len()
    }

    /// Whether what `author` wrote is left out for this member.
    pub fn hides(&self, author: &Author) -> bool {
        match author {
            Author::Member { member_id, .. } => self.members.contains(member_id),
            Author::Guest { tag: Some(tag), .. } => self.guests.contains(tag),
            Author::Guest { tag: None, .. } | Author::DeletedMember { .. } => false,
        }
    }
}

/// Who is notified of `text`, and as what: the post's author of a comment,
/// the parent's author of a reply, the members it mentions (their ids by
/// `mentioned`), each once with the strongest kind, never its own author.
pub fn recipients(
    text: &WrittenText,
    post_author: Option<&Author>,
    parent_author: Option<&Author>,
    mentioned: &[MemberId],
) -> Vec<(MemberId, NotificationKind)> {
    let member_of = |author: Option<&Author>| match author {
        Some(Author::Member { member_id, .. }) => MemberId::parse(member_id).ok(),
        _ => None,
    };
    let mut out: Vec<(MemberId, NotificationKind)> = Vec::new();
    let mut add = |member: Option<MemberId>, kind: NotificationKind| {
        if let Some(member) = member
            && !out.iter().any(|(m, _)| *m == member)
        {
            out.push((member, kind));
        }
    };
    if text.text.comment.is_some() && text.parent.is_some() {
        add(member_of(parent_author), NotificationKind::Reply);
    }
    for member in mentioned {
        add(Some(member.clone()), NotificationKind::Mention);
    }
    if text.text.comment.is_some() {
        add(member_of(post_author), NotificationKind::Comment);
    }
    let author = member_of(Some(&text.author));
    out.retain(|(member, _)| Some(member) != author.as_ref());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        mentions(text).into_iter().map(|u| u.as_str().to_owned()).collect()
    }

    #[test]
    fn mentions_are_usernames_after_an_at_sign_each_once_at_most_five() {
        assert_eq!(names("@kim 님 @lee_1, 그리고 @kim"), ["kim", "lee_1"]);
        assert_eq!(names("mail me at a@kim.com"), Vec::<String>::new());
        assert_eq!(names("@ab @toolongtoolongtoolongtoolong_xy"), Vec::<String>::new());
        assert_eq!(names("(@park)"), ["park"]);
        assert_eq!(
            names("@aaa @bbb @ccc @ddd @eee @fff"),
            ["aaa", "bbb", "ccc", "ddd", "eee"]
        );
        assert_eq!(names("@Kim"), Vec::<String>::new());
    }

    #[test]
    fn an_excerpt_is_the_first_hundred_characters() {
        let text = "가".repeat(150);
        assert_eq!(excerpt(&text).chars().count(), 100);
        assert_eq!(excerpt("짧다"), "짧다");
    }

    fn member(id: &MemberId) -> Author {
        Author::Member {
            member_id: id.as_str().to_owned(),
            nickname: "n".into(),
        }
    }

    fn comment_by(author: Author, parent: bool) -> WrittenText {
        WrittenText {
            text: TextRef {
                post: PostKey {
                    board: crate::domain::BoardSlug::from_stored("free".into()),
                    post: crate::domain::PostId::generate(),
                },
                comment: Some(crate::domain::new_id()),
            },
            parent: parent.then(crate::domain::new_id),
            author,
            title: None,
            body: "hi".into(),
        }
    }

    #[test]
    fn a_member_is_notified_once_with_the_strongest_kind_and_never_of_their_own_text() {
        let ids: Vec<MemberId> = (0..3).map(|_| MemberId::generate()).collect();
        let (poster, parent, writer) = (&ids[0], &ids[1], &ids[2]);
        // The post's author is also mentioned and wrote the parent: a reply.
        let reply = comment_by(member(writer), true);
        let got = recipients(
            &reply,
            Some(&member(poster)),
            Some(&member(poster)),
            std::slice::from_ref(poster),
        );
        assert_eq!(got, [(poster.clone(), NotificationKind::Reply)]);
        // A mention beats a comment.
        let comment = comment_by(member(writer), false);
        let got = recipients(&comment, Some(&member(poster)), None, &[poster.clone(), parent.clone()]);
        assert_eq!(
            got,
            [
                (poster.clone(), NotificationKind::Mention),
                (parent.clone(), NotificationKind::Mention)
            ]
        );
        // Replying to oneself on one's own post, mentioning oneself: nothing.
        let own = comment_by(member(poster), true);
        assert!(
            recipients(
                &own,
                Some(&member(poster)),
                Some(&member(poster)),
                std::slice::from_ref(poster)
            )
            .is_empty()
        );
        // Guests and deleted members are never notified.
        let guest = Author::Guest {
            nickname: "g".into(),
            tag: Some("abcdefgh".into()),
        };
        let by_member = comment_by(member(writer), true);
        assert!(recipients(&by_member, Some(&guest), Some(&Author::deleted_member()), &[]).is_empty());
    }

    #[test]
    fn a_block_set_hides_blocked_members_and_guest_tags_only() {
        let id = MemberId::generate();
        let set = BlockSet::of(&[
            BlockEntry {
                blocked: Blocked::Member(id.clone()),
                created_at: String::new(),
                member: None,
            },
            BlockEntry {
                blocked: Blocked::Guest(GuestTag::parse("abcdefgh".into()).unwrap()),
                created_at: String::new(),
                member: None,
            },
        ]);
        assert!(set.hides(&member(&id)));
        assert!(set.hides(&Author::Guest {
            nickname: "x".into(),
            tag: Some("abcdefgh".into())
        }));
        assert!(!set.hides(&Author::Guest {
            nickname: "x".into(),
            tag: Some("abcdefgz".into())
        }));
        assert!(!set.hides(&Author::deleted_member()));
        for key in ["member:".to_owned() + id.as_str(), "guest:abcdefgh".to_owned()] {
            assert_eq!(Blocked::from_key(&key).unwrap().key(), key);
        }
        assert!(GuestTag::parse("abcdefg1".into()).is_err());
    }
}
