//! The items of members, posts, comments and counts, as stored.

use serde::{Deserialize, Serialize};

use super::keys::*;
use crate::domain::{Author, Comment, MAX_REVISIONS, Post, PostSummary, Revision, Writer};
use crate::store::StoreResult;
use crate::store::dynamo::attributes::{Item, from_item};

/// A live member. A deleted account's item (a tombstone: `deleted_at`, no
/// `id`) is not one: read it through [`live_member`].
#[derive(Debug, Serialize, Deserialize)]
pub(in crate::store::dynamo) struct MemberItem {
    #[serde(rename = "PK")]
    pub pk: String,
    #[serde(rename = "SK")]
    pub sk: String,
    pub id: String,
    pub username: String,
    pub nickname: String,
    pub password_hash: String,
    pub created_at: String,
    /// Absent on items from before v3: 0.
    #[serde(default)]
    pub session_epoch: u64,
}

/// The member item as [`crate::store::Members`] reads it, `None` for a
/// deleted account's tombstone (`deleted_at`, no `id`).
pub(in crate::store::dynamo) fn live_member(item: Item) -> StoreResult<Option<MemberItem>> {
    if item.contains_key("deleted_at") || !item.contains_key("id") {
        return Ok(None);
    }
    from_item(item).map(Some)
}

/// Author fields as stored on posts and comments. A guest's tag is kept
/// beside them (the board index projects it; the writer key it comes from
/// is not projected).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(in crate::store::dynamo) struct AuthorFields {
    pub author_kind: String,
    pub author_nickname: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author_member_id: Option<String>,
    /// Guests only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author_tag: Option<String>,
}

impl From<&Author> for AuthorFields {
    fn from(author: &Author) -> Self {
        match author {
            Author::Member { member_id, nickname } => AuthorFields {
                author_kind: "member".into(),
                author_nickname: nickname.clone(),
                author_member_id: Some(member_id.clone()),
                author_tag: None,
            },
            Author::Guest { nickname, tag } => AuthorFields {
                author_kind: "guest".into(),
                author_nickname: nickname.clone(),
                author_member_id: None,
                author_tag: tag.clone(),
            },
            Author::DeletedMember { nickname } => AuthorFields {
                author_kind: DELETED_MEMBER_KIND.into(),
                author_nickname: nickname.clone(),
                author_member_id: None,
                author_tag: None,
            },
        }
    }
}

impl From<AuthorFields> for Author {
    fn from(f: AuthorFields) -> Self {
        match (f.author_kind.as_str(), f.author_member_id) {
            ("member", Some(member_id)) => Author::Member {
                member_id,
                nickname: f.author_nickname,
            },
            (DELETED_MEMBER_KIND, _) => Author::DeletedMember {
                nickname: f.author_nickname,
            },
            _ => Author::Guest {
                nickname: f.author_nickname,
                tag: f.author_tag,
            },
        }
    }
}

/// What the board index projects: a post summary without its counts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(in crate::store::dynamo) struct SummaryFields {
    pub id: String,
    pub board: String,
    pub title: String,
    #[serde(flatten)]
    pub author: AuthorFields,
    pub created_at: String,
    #[serde(flatten)]
    pub legacy: LegacyCounts,
    /// The post's number on its board; none before v4 until the
    /// backfill numbers it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// The board, while the post is best: [`BEST_INDEX`]'s key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_board: Option<String>,
    /// How many images the post has (absent: none); projected for
    /// the lists' image mark.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub media_count: u32,
}

fn is_zero_u32(count: &u32) -> bool {
    *count == 0
}

/// A `media` attribute as the domain reads it; one that does not parse
/// shows no images (logged) rather than failing the whole read.
fn media_of(stored: Option<&str>) -> Vec<crate::domain::media::AttachedMedia> {
    crate::domain::media::from_stored(stored).unwrap_or_else(|| {
        tracing::warn!("a stored media list does not parse");
        Vec::new()
    })
}

/// The counts a v1 post item carried (and the board index projected). v2
/// never writes them; until the backfill moves them to shard 0 they are
/// added to the shards' sum, so an upgraded table shows the right counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(in crate::store::dynamo) struct LegacyCounts {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view_count: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub like_count: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment_count: Option<u64>,
}

impl LegacyCounts {
    pub(in crate::store::dynamo) fn counts(&self) -> Counts {
        let n = |v: Option<u64>| v.map_or(0, |v| i64::try_from(v).unwrap_or(i64::MAX));
        Counts {
            views: n(self.view_count),
            likes: n(self.like_count),
            comments: n(self.comment_count),
            dislikes: 0,
        }
    }
}

/// What one counter shard holds, or a sum of shards. Signed: a shard may go
/// below zero (an unlike after the shard count changed takes from another
/// shard than its like added to); the sum never does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(in crate::store::dynamo) struct Counts {
    #[serde(default)]
    pub views: i64,
    #[serde(default)]
    pub likes: i64,
    #[serde(default)]
    pub comments: i64,
    #[serde(default)]
    pub dislikes: i64,
}

impl std::ops::Add for Counts {
    type Output = Counts;

    fn add(self, other: Counts) -> Counts {
        Counts {
            views: self.views + other.views,
            likes: self.likes + other.likes,
            comments: self.comments + other.comments,
            dislikes: self.dislikes + other.dislikes,
        }
    }
}

impl std::iter::Sum for Counts {
    fn sum<I: Iterator<Item = Counts>>(iter: I) -> Counts {
        iter.fold(Counts::default(), |a, b| a + b)
    }
}

fn shown(count: i64) -> u64 {
    u64::try_from(count).unwrap_or(0)
}

impl SummaryFields {
    /// The summary with `shards` (the sum of its counter shards) added to any
    /// v1 counts.
    pub(in crate::store::dynamo) fn summary(self, shards: Counts) -> PostSummary {
        let counts = self.legacy.counts() + shards;
        PostSummary {
            id: self.id,
            board: self.board,
            title: self.title,
            author: self.author.into(),
            created_at: self.created_at,
            view_count: shown(counts.views),
            like_count: shown(counts.likes),
            comment_count: shown(counts.comments),
            number: self.number.unwrap_or(0),
            category: self.category,
            dislike_count: Some(shown(counts.dislikes)),
            best: self.best_board.is_some(),
            media_count: self.media_count,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(in crate::store::dynamo) struct PostItem {
    #[serde(rename = "PK")]
    pub pk: String,
    #[serde(rename = "SK")]
    pub sk: String,
    #[serde(rename = "GSI1PK")]
    pub gsi1pk: String,
    #[serde(rename = "GSI1SK")]
    pub gsi1sk: String,
    #[serde(flatten)]
    pub summary: SummaryFields,
    pub body: String,
    pub updated_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest_password_hash: Option<String>,
    /// [`crate::domain::PostVersion`] of title and body, for `If-Match`
    /// in the edit's condition; items from before v3 have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The writer's address key (never shown); none before v3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_key: Option<String>,
    /// The key of its range (never shown); none before v4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_range: Option<String>,
    /// A member's post: [`BY_OWNER_INDEX`]'s keys.
    #[serde(flatten)]
    pub owner: OwnerFields,
    /// With a category: [`BY_CATEGORY_INDEX`]'s key ([`category_key`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category_key: Option<String>,
    /// How many edits the post has had (absent: none): each edit's
    /// condition names it as read, and its revision's SK ([`revision_sk`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub edits: u64,
    /// How many revisions it keeps; absent until its first edit or
    /// revision delete since revisions could be deleted one by one (then
    /// [`PostItem::kept_revisions`] takes its edits, at most 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revisions: Option<u64>,
    /// Its images (domain::media::to_stored); absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media: Option<String>,
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// A version of a post an edit replaced, in the post's partition
/// under [`revision_sk`] of that edit.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(in crate::store::dynamo) struct RevisionItem {
    #[serde(rename = "PK")]
    pub pk: String,
    #[serde(rename = "SK")]
    pub sk: String,
    pub title: String,
    pub body: String,
    /// The replaced version's `updated_at`.
    pub edited_at: String,
}

impl RevisionItem {
    pub(in crate::store::dynamo) fn into_revision(self) -> Revision {
        Revision {
            number: self
                .sk
                .strip_prefix(REVISION_SK_PREFIX)
                .and_then(|n| n.parse().ok())
                .unwrap_or_default(),
            title: self.title,
            body: self.body,
            edited_at: self.edited_at,
        }
    }
}

/// The keys of [`BY_OWNER_INDEX`] on a member's post, comment or like;
/// none on a guest's or a disowned one.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(in crate::store::dynamo) struct OwnerFields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_sk: Option<String>,
}

impl OwnerFields {
    /// Indexed under `owner` (when a member's) as `sk`.
    fn of(owner: Option<String>, sk: String) -> Self {
        match owner {
            Some(owner) => OwnerFields {
                owner: Some(owner),
                owner_sk: Some(sk),
            },
            None => OwnerFields::default(),
        }
    }
}

impl PostItem {
    pub(in crate::store::dynamo) fn new(post: &Post, writer: &Writer, guest_password_hash: Option<&str>) -> Self {
        let s = &post.summary;
        PostItem {
            pk: post_pk(&s.id),
            sk: POST_SK.into(),
            gsi1pk: board_pk(&s.board),
            gsi1sk: s.id.clone(),
            summary: SummaryFields {
                id: s.id.clone(),
                board: s.board.clone(),
                title: s.title.clone(),
                author: (&s.author).into(),
                created_at: s.created_at.clone(),
                legacy: LegacyCounts::default(),
                number: Some(s.number),
                category: s.category.as_ref().map(|c| c.as_str().to_owned()),
                best_board: None,
                media_count: u32::try_from(post.media.len()).unwrap_or(u32::MAX),
            },
            body: post.body.clone(),
            updated_at: post.updated_at.clone(),
            guest_password_hash: guest_password_hash.map(str::to_owned),
            version: Some(crate::domain::PostVersion::of(&s.title, &post.body).as_str().to_owned()),
            writer_key: Some(writer.key.as_str().to_owned()),
            writer_range: Some(writer.range.as_str().to_owned()),
            owner: OwnerFields::of(owner_of(&s.author), owned_post_sk(&s.id)),
            category_key: s.category.as_ref().map(|c| category_key(&s.board, c.as_str())),
            edits: 0,
            revisions: None,
            media: crate::domain::media::to_stored(&post.media),
        }
    }

    /// How many revisions the post keeps.
    pub(in crate::store::dynamo) fn kept_revisions(&self) -> u64 {
        self.revisions
            .unwrap_or_else(|| self.edits.min(u64::from(MAX_REVISIONS)))
    }

    pub(in crate::store::dynamo) fn into_post(self, shards: Counts) -> Post {
        let kept = self.kept_revisions();
        Post {
            summary: self.summary.summary(shards),
            body: self.body,
            updated_at: self.updated_at,
            revision_count: u32::try_from(kept).unwrap_or(MAX_REVISIONS),
            media: media_of(self.media.as_deref()),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(in crate::store::dynamo) struct CommentItem {
    #[serde(rename = "PK")]
    pub pk: String,
    #[serde(rename = "SK")]
    pub sk: String,
    pub id: String,
    pub post_id: String,
    /// Kept so guarded writes can check the board in their condition.
    pub board: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    pub body: String,
    #[serde(flatten)]
    pub author: AuthorFields,
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest_password_hash: Option<String>,
    /// The writer's address key (never shown); none before v3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_key: Option<String>,
    /// The key of its range (never shown); none before v4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_range: Option<String>,
    /// A member's comment: [`BY_OWNER_INDEX`]'s keys.
    #[serde(flatten)]
    pub owner: OwnerFields,
    /// Its image (domain::media::to_stored); absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media: Option<String>,
    /// Counted in its shard's `answers` (the edit lock): its delete uncounts it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub answer: bool,
}

impl CommentItem {
    pub(in crate::store::dynamo) fn new(
        board: &str,
        c: &Comment,
        writer: &Writer,
        guest_password_hash: Option<&str>,
        answer: bool,
    ) -> Self {
        CommentItem {
            pk: post_pk(&c.post_id),
            sk: comment_sk(&c.id),
            id: c.id.clone(),
            post_id: c.post_id.clone(),
            board: board.to_owned(),
            parent_id: c.parent_id.clone(),
            body: c.body.clone(),
            author: (&c.author).into(),
            created_at: c.created_at.clone(),
            guest_password_hash: guest_password_hash.map(str::to_owned),
            writer_key: Some(writer.key.as_str().to_owned()),
            writer_range: Some(writer.range.as_str().to_owned()),
            owner: OwnerFields::of(owner_of(&c.author), owned_comment_sk(&c.id)),
            media: crate::domain::media::to_stored(&c.media),
            answer,
        }
    }

    pub(in crate::store::dynamo) fn into_comment(self) -> Comment {
        Comment {
            id: self.id,
            post_id: self.post_id,
            parent_id: self.parent_id,
            body: self.body,
            author: self.author.into(),
            created_at: self.created_at,
            media: media_of(self.media.as_deref()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::dynamo::attributes::{n, s};

    #[test]
    fn a_tombstone_is_no_member() {
        let tombstone = Item::from([
            ("PK".to_owned(), s("MEMBER#kim")),
            ("SK".to_owned(), s("MEMBER")),
            ("username".to_owned(), s("kim")),
            ("deleted_at".to_owned(), s("2025-01-01T00:00:00.000Z")),
            ("session_epoch".to_owned(), n(2)),
        ]);
        assert!(live_member(tombstone).unwrap().is_none());
    }

    #[test]
    fn every_author_kind_round_trips_through_its_stored_fields() {
        let authors = [
            Author::Member {
                member_id: "01J0000000000000000000000A".into(),
                nickname: "kim".into(),
            },
            Author::Guest {
                nickname: "g".into(),
                tag: Some("abcdefgh".into()),
            },
            Author::deleted_member(),
        ];
        for author in authors {
            let fields = AuthorFields::from(&author);
            let stored = crate::store::dynamo::attributes::to_item(&fields).unwrap();
            let back: AuthorFields = crate::store::dynamo::attributes::from_item(stored).unwrap();
            assert_eq!(Author::from(back), author);
        }
        let gone = AuthorFields::from(&Author::deleted_member());
        assert_eq!(
            (gone.author_kind.as_str(), gone.author_member_id, gone.author_tag),
            ("deleted_member", None, None)
        );
    }

    #[test]
    fn a_sum_of_shards_below_zero_shows_as_zero() {
        let fields = SummaryFields {
            id: "P".into(),
            board: "free".into(),
            title: "t".into(),
            author: (&Author::Guest {
                nickname: "g".into(),
                tag: None,
            })
                .into(),
            created_at: "now".into(),
            legacy: LegacyCounts {
                view_count: Some(5),
                like_count: None,
                comment_count: Some(1),
            },
            number: Some(7),
            category: None,
            best_board: None,
            media_count: 0,
        };
        let summary = fields.summary(Counts {
            views: 2,
            likes: -1,
            comments: 0,
            dislikes: 2,
        });
        assert_eq!(
            (summary.view_count, summary.like_count, summary.comment_count),
            (7, 0, 1)
        );
        assert_eq!((summary.dislike_count, summary.number), (Some(2), 7));
    }
}
