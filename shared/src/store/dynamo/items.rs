//! The single-table layout: every item type with its keys. See docs/storage.md,
//! "Single-table design", for the access pattern each one serves.
//!
//! | item    | PK                      | SK                  | GSI1PK         | GSI1SK    |
//! |---------|-------------------------|---------------------|----------------|-----------|
//! | member  | `MEMBER#<username>`     | `MEMBER`            |                |           |
//! | post    | `POST#<post id>`        | `POST`              | `BOARD#<slug>` | `<post id>` |
//! | comment | `POST#<post id>`        | `COMMENT#<id>`      |                |           |
//! | counter | `COUNT#<board>#<n>`     | `<post id>`         |                |           |
//! | like    | `LIKES#<post id>#<n>`   | `MEMBER#<member id>`|                |           |
//! | attempt | `ATTEMPT#<key>`         | `WINDOW#<start>`    |                |           |
//!
//! **(v3)** Moderation. Posts, comments and members carry `id`, which the
//! keys-only index [`BY_ID_INDEX`] (`ById`) is keyed by: a member or a
//! comment known only by its id is one Query on it, then one GetItem. No
//! moderation item has an `id` attribute (they are not in `ById`).
//!
//! | item             | PK                             | SK                                  | holds |
//! |------------------|--------------------------------|-------------------------------------|-------|
//! | moderator        | `MODS#<board>`                 | `<member id>`                       | member fields, `appointed` |
//! | ban record       | `BANS#<board>`                 | `<ban id>`                          | `ban` (JSON), `subject`, `expires`, TTL `expires_at` |
//! | ban subject      | `BAN#<board>#<subject key>`    | `BAN`                               | the same: the ban check's item |
//! | log entry        | `MODLOG#<board>`               | `<entry id>`                        | `entry` (JSON) |
//! | open report      | `REPORTS#<board>`              | `<report id>`                       | `report` (JSON, no count), `reporters` (number) |
//! | report pointer   | `POST#<post id>`               | `REPORT#POST`, `REPORT#COMMENT#<id>`| `report_id`, `report` (JSON) |
//! | reporter         | `POST#<post id>`               | `REPORTER#<report id>#<reporter>`   | TTL `expires_at` (90 days) |
//!
//! A subject key is [`crate::domain::BanSubject::key`] (`member:<id>`,
//! `address:<writer key>`). Pointers and reporters sort after the post item
//! (`COMMENT#` < `POST` < `REPORT#` < `REPORTER#`): the comments Query
//! (`begins_with(SK, "COMMENT#")`) never reads them, and the post's purge
//! (every key under `POST#<post id>`) deletes them with the post. The ban
//! check of a write is one consistent read of its subjects' items (a
//! GetItem, or a BatchGetItem of 2 small items: at most 2 RCU); each
//! operation's requests and units are in docs/storage.md ("Moderation
//! operations").
//!
//! A post's counts are the sum of its counter shards: views, likes and
//! comments in small items of their own, shard n of every post of a board in
//! the partition `COUNT#<board>#<n>`. A post's shards are in n different
//! partitions (its writes spread), and a board page's shards are one Query
//! per partition (its reads are cheap). The post item and the board index
//! hold no count, so a view or a like never writes them. v1 tables
//! kept the counts on the post item: [`LegacyCounts`] still reads them until
//! the backfill (`cargo run -p shared --bin backfill`) folds them into shard 0.
//!
//! **(v3)** Accounts ([`super::accounts`]). The member item carries
//! `session_epoch` (N, absent = 0: what every valid token of the member
//! names; `ADD 1` ends every session). A deleted account's member item
//! stays as a tombstone, so its username stays taken: it keeps `PK`, `SK`,
//! `username` and `session_epoch` (advanced), gains `deleted_at`, and loses
//! `id`, `nickname`, `password_hash` and `created_at` (so `ById` no longer
//! finds it). A member's posts, comments and likes carry `owner` (the
//! member id) and `owner_sk`, the keys of the index [`BY_OWNER_INDEX`]
//! (`ByOwner`, INCLUDE of the summary fields, `board`, `post_id` and
//! `parent_id`, never `body`); guests' items and disowned ones carry
//! neither.
//!
//! | item              | PK                 | SK             | owner / owner_sk                  | holds |
//! |-------------------|--------------------|----------------|-----------------------------------|-------|
//! | member            | `MEMBER#<username>`| `MEMBER`       | -                                 | + `session_epoch`; a tombstone: `username`, `session_epoch`, `deleted_at` |
//! | member's post     | `POST#<post id>`   | `POST`         | `<member id>` / `POST#<post id>`  | as any post |
//! | member's comment  | `POST#<post id>`   | `COMMENT#<id>` | `<member id>` / `COMMENT#<id>`    | as any comment |
//! | like              | `LIKES#<post id>#<n>` | `MEMBER#<member id>` | `<member id>` / `LIKE#<post id>` | `board` (so a like is withdrawn by its post's key) |
//! | pending deletion  | `ACCOUNT_PURGE`    | `<member id>`  | -                                 | `member_id`, `delete_content`, `started` |
//!
//! `COMMENT#` < `LIKE#` < `POST#`: a member's comments, likes and posts are
//! three runs of one index partition, each in id order (ULIDs: a Query
//! descending reads it newest first).

use serde::{Deserialize, Serialize};

use crate::domain::{Author, Comment, Post, PostSummary, ReportTarget, Writer};

pub(super) const BOARD_INDEX: &str = "GSI1";
pub(super) const POST_SK: &str = "POST";

/// The condition that a post item exists on board `:board`.
pub(super) const POST_ON_BOARD: &str = "attribute_exists(PK) AND board = :board";
pub(super) const MEMBER_SK: &str = "MEMBER";
/// Every comment's SK starts with it, and sorts before [`POST_SK`]: a Query
/// `begins_with(SK, COMMENT_SK_PREFIX)` reads a post's comments oldest first
/// (ids are ULIDs), never the post item.
pub(super) const COMMENT_SK_PREFIX: &str = "COMMENT#";

pub(super) fn member_pk(username: &str) -> String {
    format!("MEMBER#{username}")
}

pub(super) fn post_pk(post_id: &str) -> String {
    format!("POST#{post_id}")
}

pub(super) fn comment_sk(comment_id: &str) -> String {
    format!("{COMMENT_SK_PREFIX}{comment_id}")
}

pub(super) fn board_pk(board: &str) -> String {
    format!("BOARD#{board}")
}

/// Partitions a post's like items are spread over (by a hash of the member):
/// a like is a transaction (2 write units per item), so one partition would
/// cap a post at 500 likes/s; eight lift it to 4,000. Fixed, not configured:
/// "has this member liked" must find the item where it was written.
pub(super) const LIKE_PARTITIONS: u64 = 8;

/// Shard `shard` of every post of `board`; a post's shard item has the post id as SK.
pub(super) fn counter_pk(board: &str, shard: u32) -> String {
    format!("COUNT#{board}#{shard}")
}

/// The v1 like partition of a post (before like items were spread).
pub(super) fn legacy_likes_pk(post_id: &str) -> String {
    format!("LIKES#{post_id}")
}

pub(super) fn likes_pk(post_id: &str, member_id: &str) -> String {
    format!("LIKES#{post_id}#{}", stable_hash(member_id) % LIKE_PARTITIONS)
}

/// Every like partition of a post.
pub(super) fn all_likes_pks(post_id: &str) -> impl Iterator<Item = String> + '_ {
    (0..LIKE_PARTITIONS).map(move |n| format!("LIKES#{post_id}#{n}"))
}

/// The counter shard a member's likes (or a comment's count) go to, so that
/// an unlike takes back from the shard its like added to.
pub(super) fn shard_of(id: &str, shards: u32) -> u32 {
    (stable_hash(id) % u64::from(shards.max(1))) as u32
}

/// FNV-1a: stable across builds and machines, which item keys need
/// (std's `DefaultHasher` promises neither).
fn stable_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

pub(super) fn like_sk(member_id: &str) -> String {
    format!("MEMBER#{member_id}")
}

pub(super) fn attempt_pk(key: &str) -> String {
    format!("ATTEMPT#{key}")
}

pub(super) fn window_sk(start: i64) -> String {
    format!("WINDOW#{start}")
}

/// (v3) The keys-only index on `id` (posts, comments and members).
pub(super) const BY_ID_INDEX: &str = "ById";
/// (v3) The index of a member's posts, comments and likes, by `owner` (the
/// member id) and `owner_sk` ([`OWNED_POST_PREFIX`] and the others).
pub(super) const BY_OWNER_INDEX: &str = "ByOwner";
/// (v3) `owner_sk` of a member's post: `POST#<post id>`.
pub(super) const OWNED_POST_PREFIX: &str = "POST#";
/// (v3) `owner_sk` of a member's comment: `COMMENT#<comment id>`.
pub(super) const OWNED_COMMENT_PREFIX: &str = "COMMENT#";
/// (v3) `owner_sk` of a member's like: `LIKE#<post id>`.
pub(super) const OWNED_LIKE_PREFIX: &str = "LIKE#";
/// (v3) The partition of pending account deletions (SK: the member id).
pub(super) const ACCOUNT_PURGE_PK: &str = "ACCOUNT_PURGE";
/// (v3) The author kind of what a deleted account left.
pub(super) const DELETED_MEMBER_KIND: &str = "deleted_member";

/// (v3) The member id an author's item is indexed under, if a member's.
pub(super) fn owner_of(author: &Author) -> Option<String> {
    match author {
        Author::Member { member_id, .. } => Some(member_id.clone()),
        Author::Guest { .. } | Author::DeletedMember { .. } => None,
    }
}

pub(super) fn owned_post_sk(post_id: &str) -> String {
    format!("{OWNED_POST_PREFIX}{post_id}")
}

pub(super) fn owned_comment_sk(comment_id: &str) -> String {
    format!("{OWNED_COMMENT_PREFIX}{comment_id}")
}

pub(super) fn owned_like_sk(post_id: &str) -> String {
    format!("{OWNED_LIKE_PREFIX}{post_id}")
}
/// (v3) The SK of a ban subject item.
pub(super) const BAN_SK: &str = "BAN";
/// (v3) Every report pointer's SK starts with it (never a reporter's:
/// those start [`REPORTER_SK_PREFIX`]).
pub(super) const REPORT_SK_PREFIX: &str = "REPORT#";
/// (v3) Every reporter's SK starts with it.
pub(super) const REPORTER_SK_PREFIX: &str = "REPORTER#";

/// (v3) A board's moderators.
pub(super) fn mods_pk(board: &str) -> String {
    format!("MODS#{board}")
}

/// (v3) A board's ban records, by ban id.
pub(super) fn bans_pk(board: &str) -> String {
    format!("BANS#{board}")
}

/// (v3) The ban of one subject (`BanSubject::key`) on a board.
pub(super) fn ban_subject_pk(board: &str, subject: &str) -> String {
    format!("BAN#{board}#{subject}")
}

/// (v3) A board's moderation log, by entry id.
pub(super) fn modlog_pk(board: &str) -> String {
    format!("MODLOG#{board}")
}

/// (v3) A board's open reports, by report id.
pub(super) fn reports_pk(board: &str) -> String {
    format!("REPORTS#{board}")
}

/// (v3) The SK of a target's report pointer, in its post's partition.
pub(super) fn report_pointer_sk(target: &ReportTarget) -> String {
    match target {
        ReportTarget::Post { .. } => format!("{REPORT_SK_PREFIX}POST"),
        ReportTarget::Comment { comment_id, .. } => comment_pointer_sk(comment_id),
    }
}

pub(super) fn comment_pointer_sk(comment_id: &str) -> String {
    format!("{REPORT_SK_PREFIX}COMMENT#{comment_id}")
}

/// (v3) A reporter counted on a report, in the reported post's partition.
pub(super) fn reporter_sk(report_id: &str, reporter: &str) -> String {
    format!("{REPORTER_SK_PREFIX}{report_id}#{reporter}")
}

/// A live member. A deleted account's item (a tombstone: `deleted_at`, no
/// `id`) is not one: read it through [`super::accounts::live_member`].
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct MemberItem {
    #[serde(rename = "PK")]
    pub pk: String,
    #[serde(rename = "SK")]
    pub sk: String,
    pub id: String,
    pub username: String,
    pub nickname: String,
    pub password_hash: String,
    pub created_at: String,
    /// (v3) Absent on items from before v3: 0.
    #[serde(default)]
    pub session_epoch: u64,
}

/// Author fields as stored on posts and comments. A guest's tag is kept
/// beside them (the board index projects it; the writer key it comes from
/// is not projected).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AuthorFields {
    pub author_kind: String,
    pub author_nickname: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author_member_id: Option<String>,
    /// (v3) Guests only.
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
pub(super) struct SummaryFields {
    pub id: String,
    pub board: String,
    pub title: String,
    #[serde(flatten)]
    pub author: AuthorFields,
    pub created_at: String,
    #[serde(flatten)]
    pub legacy: LegacyCounts,
}

/// The counts a v1 post item carried (and the board index projected). v2
/// never writes them; until the backfill moves them to shard 0 they are
/// added to the shards' sum, so an upgraded table shows the right counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct LegacyCounts {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view_count: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub like_count: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment_count: Option<u64>,
}

impl LegacyCounts {
    pub(super) fn counts(&self) -> Counts {
        let n = |v: Option<u64>| v.map_or(0, |v| i64::try_from(v).unwrap_or(i64::MAX));
        Counts {
            views: n(self.view_count),
            likes: n(self.like_count),
            comments: n(self.comment_count),
        }
    }
}

/// What one counter shard holds, or a sum of shards. Signed: a shard may go
/// below zero (an unlike after the shard count changed takes from another
/// shard than its like added to); the sum never does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Counts {
    #[serde(default)]
    pub views: i64,
    #[serde(default)]
    pub likes: i64,
    #[serde(default)]
    pub comments: i64,
}

impl std::ops::Add for Counts {
    type Output = Counts;

    fn add(self, other: Counts) -> Counts {
        Counts {
            views: self.views + other.views,
            likes: self.likes + other.likes,
            comments: self.comments + other.comments,
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
    pub(super) fn summary(self, shards: Counts) -> PostSummary {
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
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct PostItem {
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
    /// (v3) [`crate::domain::PostVersion`] of title and body, for `If-Match`
    /// in the edit's condition; items from before v3 have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// (v3) The writer's address key (never shown); none before v3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_key: Option<String>,
    /// (v4) The key of its range (never shown); none before v4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_range: Option<String>,
    /// (v3) A member's post: [`BY_OWNER_INDEX`]'s keys.
    #[serde(flatten)]
    pub owner: OwnerFields,
}

/// (v3) The keys of [`BY_OWNER_INDEX`] on a member's post, comment or like;
/// none on a guest's or a disowned one.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct OwnerFields {
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
    pub(super) fn new(post: &Post, writer: &Writer, guest_password_hash: Option<&str>) -> Self {
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
            },
            body: post.body.clone(),
            updated_at: post.updated_at.clone(),
            guest_password_hash: guest_password_hash.map(str::to_owned),
            version: Some(crate::domain::PostVersion::of(&s.title, &post.body).as_str().to_owned()),
            writer_key: Some(writer.key.as_str().to_owned()),
            writer_range: Some(writer.range.as_str().to_owned()),
            owner: OwnerFields::of(owner_of(&s.author), owned_post_sk(&s.id)),
        }
    }

    pub(super) fn into_post(self, shards: Counts) -> Post {
        Post {
            summary: self.summary.summary(shards),
            body: self.body,
            updated_at: self.updated_at,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct CommentItem {
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
    /// (v3) The writer's address key (never shown); none before v3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_key: Option<String>,
    /// (v4) The key of its range (never shown); none before v4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_range: Option<String>,
    /// (v3) A member's comment: [`BY_OWNER_INDEX`]'s keys.
    #[serde(flatten)]
    pub owner: OwnerFields,
}

impl CommentItem {
    pub(super) fn new(board: &str, c: &Comment, writer: &Writer, guest_password_hash: Option<&str>) -> Self {
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
        }
    }

    pub(super) fn into_comment(self) -> Comment {
        Comment {
            id: self.id,
            post_id: self.post_id,
            parent_id: self.parent_id,
            body: self.body,
            author: self.author.into(),
            created_at: self.created_at,
        }
    }
}

/// (v3) A moderator: the member as appointed, and when.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct ModeratorItem {
    #[serde(rename = "PK")]
    pub pk: String,
    #[serde(rename = "SK")]
    pub sk: String,
    pub member_id: String,
    pub username: String,
    pub nickname: String,
    pub created_at: String,
    pub appointed: String,
}

/// (v3) A ban, both as its record (`BANS#<board>` / `<ban id>`) and as its
/// subject's item (`BAN#<board>#<subject>` / `BAN`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct BanItem {
    #[serde(rename = "PK")]
    pub pk: String,
    #[serde(rename = "SK")]
    pub sk: String,
    pub ban_id: String,
    /// `BanSubject::key`.
    pub subject: String,
    /// (v4) The ban's second subject (`BanSubject::key`), whose own item
    /// holds a copy of this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub also: Option<String>,
    /// The `Ban` as JSON.
    pub ban: String,
    /// Unix seconds; none for a permanent ban.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<i64>,
    /// The table's TTL attribute: `expires`, so DynamoDB deletes an ended
    /// ban eventually (reads compare `expires` with their clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
}

/// (v3) A moderation log entry.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct LogItem {
    #[serde(rename = "PK")]
    pub pk: String,
    #[serde(rename = "SK")]
    pub sk: String,
    /// The `LogEntry` as JSON.
    pub entry: String,
}

/// (v3) An open report in its board's list.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct ReportItem {
    #[serde(rename = "PK")]
    pub pk: String,
    #[serde(rename = "SK")]
    pub sk: String,
    pub report_id: String,
    /// The `Report` as its reporter sees it (no count), JSON.
    pub report: String,
    pub reporters: u64,
}

/// (v3) A target's open report, found by the target (in its post's partition).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct ReportPointerItem {
    #[serde(rename = "PK")]
    pub pk: String,
    #[serde(rename = "SK")]
    pub sk: String,
    pub report_id: String,
    pub board: String,
    /// The report as shown to a reporter who joins it, JSON.
    pub report: String,
}

/// (v3) One distinct reporter of a report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct ReporterItem {
    #[serde(rename = "PK")]
    pub pk: String,
    #[serde(rename = "SK")]
    pub sk: String,
    pub report_id: String,
    pub reporter: String,
    pub expires_at: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_that_places_items_never_changes() {
        // Items written by one build must be found by the next.
        assert_eq!(stable_hash(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(stable_hash("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(
            likes_pk("P", "01J0000000000000000000000A"),
            likes_pk("P", "01J0000000000000000000000A")
        );
    }

    #[test]
    fn report_items_sort_after_the_post_and_never_look_like_comments() {
        let target = ReportTarget::Comment {
            post_id: "P".into(),
            comment_id: "C".into(),
        };
        let pointer = report_pointer_sk(&target);
        let reporter = reporter_sk("R", "member:M");
        assert!(comment_sk("ZZZ").as_str() < POST_SK);
        assert!(POST_SK < pointer.as_str() && POST_SK < reporter.as_str());
        for sk in [
            &pointer,
            &reporter,
            &report_pointer_sk(&ReportTarget::Post { post_id: "P".into() }),
        ] {
            assert!(!sk.starts_with(COMMENT_SK_PREFIX), "{sk}");
        }
        assert!(pointer.starts_with(REPORT_SK_PREFIX));
        assert!(
            !reporter.starts_with(REPORT_SK_PREFIX),
            "the pointers' Query skips reporters"
        );
    }

    #[test]
    fn members_spread_over_every_like_partition() {
        let used: std::collections::BTreeSet<String> =
            (0..200).map(|i| likes_pk("P", &format!("member-{i}"))).collect();
        assert_eq!(used.len() as u64, LIKE_PARTITIONS);
        assert!(all_likes_pks("P").all(|pk| used.contains(&pk)));
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
    fn only_members_items_are_indexed_by_owner_and_the_runs_sort_apart() {
        let member = Author::Member {
            member_id: "M".into(),
            nickname: "kim".into(),
        };
        let guest = Author::Guest {
            nickname: "g".into(),
            tag: None,
        };
        assert_eq!(owner_of(&member).as_deref(), Some("M"));
        assert_eq!(owner_of(&guest), None);
        assert_eq!(owner_of(&Author::deleted_member()), None);
        assert!(owned_comment_sk("ZZZ") < owned_like_sk("000") && owned_like_sk("ZZZ") < owned_post_sk("000"));
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
        };
        let summary = fields.summary(Counts {
            views: 2,
            likes: -1,
            comments: 0,
        });
        assert_eq!(
            (summary.view_count, summary.like_count, summary.comment_count),
            (7, 0, 1)
        );
    }
}
