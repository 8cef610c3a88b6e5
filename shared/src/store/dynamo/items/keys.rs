//! The keys of every item type: partition and sort keys, the index names
//! and the prefixes that keep one partition's kinds of item apart.

use crate::domain::{Author, ReportTarget};
use crate::store::dynamo::attributes::{Item, key};

pub(in crate::store::dynamo) const BOARD_INDEX: &str = "GSI1";
/// The SK of a post item (its PK: [`post_pk`]).
pub const POST_SK: &str = "POST";

/// The condition that a post item exists on board `:board`.
pub(in crate::store::dynamo) const POST_ON_BOARD: &str = "attribute_exists(PK) AND board = :board";
pub(in crate::store::dynamo) const MEMBER_SK: &str = "MEMBER";
/// Every comment's SK starts with it, and sorts before [`POST_SK`]: a Query
/// `begins_with(SK, COMMENT_SK_PREFIX)` reads a post's comments oldest first
/// (ids are ULIDs), never the post item.
pub const COMMENT_SK_PREFIX: &str = "COMMENT#";

/// Every post partition's PK starts with it: the post item, its comments
/// and the rest of what the post's purge takes ([`post_pk`]).
pub const POST_PK_PREFIX: &str = "POST#";

pub(in crate::store::dynamo) fn member_pk(username: &str) -> String {
    format!("MEMBER#{username}")
}

pub(in crate::store::dynamo) fn post_pk(post_id: &str) -> String {
    format!("{POST_PK_PREFIX}{post_id}")
}

pub(in crate::store::dynamo) fn comment_sk(comment_id: &str) -> String {
    format!("{COMMENT_SK_PREFIX}{comment_id}")
}

pub(in crate::store::dynamo) fn board_pk(board: &str) -> String {
    format!("BOARD#{board}")
}

/// Partitions a post's like items are spread over (by a hash of the member):
/// a like is a transaction (2 write units per item), so one partition would
/// cap a post at 500 likes/s; eight lift it to 4,000. Fixed, not configured:
/// "has this member liked" must find the item where it was written.
pub(in crate::store::dynamo) const LIKE_PARTITIONS: u64 = 8;

/// Shard `shard` of every post of `board`; a post's shard item has the post id as SK.
pub(in crate::store::dynamo) fn counter_pk(board: &str, shard: u32) -> String {
    format!("COUNT#{board}#{shard}")
}

/// Shard `shard` of post `post_id` of `board`.
pub(in crate::store::dynamo) fn shard_key(board: &str, post_id: &str, shard: u32) -> Item {
    key(counter_pk(board, shard), post_id.to_owned())
}

/// The v1 like partition of a post (before like items were spread).
pub(in crate::store::dynamo) fn legacy_likes_pk(post_id: &str) -> String {
    format!("LIKES#{post_id}")
}

pub(in crate::store::dynamo) fn likes_pk(post_id: &str, member_id: &str) -> String {
    format!("LIKES#{post_id}#{}", stable_hash(member_id) % LIKE_PARTITIONS)
}

/// Every like partition of a post.
pub(in crate::store::dynamo) fn all_likes_pks(post_id: &str) -> impl Iterator<Item = String> + '_ {
    (0..LIKE_PARTITIONS).map(move |n| format!("LIKES#{post_id}#{n}"))
}

/// The counter shard a member's likes (or a comment's count) go to, so that
/// an unlike takes back from the shard its like added to.
pub(in crate::store::dynamo) fn shard_of(id: &str, shards: u32) -> u32 {
    (stable_hash(id) % u64::from(shards.max(1))) as u32
}

/// FNV-1a: stable across builds and machines, which item keys need
/// (std's `DefaultHasher` promises neither).
fn stable_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

pub(in crate::store::dynamo) fn like_sk(member_id: &str) -> String {
    format!("MEMBER#{member_id}")
}

/// A guest's vote: in the post's like partitions, by the voter's
/// address key (never a member's `MEMBER#`).
pub(in crate::store::dynamo) fn guest_vote_sk(voter: &str) -> String {
    format!("GUEST#{voter}")
}

/// The `vote` attribute of a dislike's item (a like's has none:
/// like items from before v4 are likes).
pub(in crate::store::dynamo) const DISLIKE: &str = "dislike";
pub(in crate::store::dynamo) const LIKE: &str = "like";

/// A post's best gate: in the post's partition, so its purge takes it.
pub(in crate::store::dynamo) const GATE_SK: &str = "GATE";

/// Every revision's SK starts with it: in the post's partition
/// (so the purge takes them), after all else there (`REPORTER#` <
/// `REVISION#`), never read by the comments Query or a report's.
pub(in crate::store::dynamo) const REVISION_SK_PREFIX: &str = "REVISION#";

/// The SK of the version that the post's `edit`-th edit replaced:
/// zero-padded, so the partition sorts revisions oldest first.
pub(in crate::store::dynamo) fn revision_sk(edit: u64) -> String {
    format!("{REVISION_SK_PREFIX}{edit:010}")
}

/// Every board's settings: one partition, one item per board (SK: the slug).
pub(in crate::store::dynamo) const BOARDS_PK: &str = "BOARDS";

/// A board's post number counter (SK [`NUMBERS_SK`]).
pub(in crate::store::dynamo) fn numbers_pk(board: &str) -> String {
    format!("NUMBERS#{board}")
}
pub(in crate::store::dynamo) const NUMBERS_SK: &str = "NEXT";

/// A board's live post count (SK [`POST_COUNT_SK`]).
pub(in crate::store::dynamo) fn post_count_pk(board: &str) -> String {
    format!("POSTS#{board}")
}
pub(in crate::store::dynamo) const POST_COUNT_SK: &str = "LIVE";

/// The sparse index of a post's number: `GSI1PK` (its board) and `number`.
pub(in crate::store::dynamo) const BY_NUMBER_INDEX: &str = "ByNumber";
/// The sparse index of a board's categories: `category_key` and `GSI1SK`.
pub(in crate::store::dynamo) const BY_CATEGORY_INDEX: &str = "ByCategory";
/// The sparse index of a board's best posts: `best_board` and `GSI1SK`.
pub(in crate::store::dynamo) const BEST_INDEX: &str = "Best";

/// `category_key` of a post in `category` on `board` (a slug has no `#`).
pub(in crate::store::dynamo) fn category_key(board: &str, category: &str) -> String {
    format!("{board}#{category}")
}

pub(in crate::store::dynamo) fn attempt_pk(key: &str) -> String {
    format!("ATTEMPT#{key}")
}

pub(in crate::store::dynamo) fn window_sk(start: i64) -> String {
    format!("WINDOW#{start}")
}

/// The keys-only index on `id` (posts, comments and members).
pub(in crate::store::dynamo) const BY_ID_INDEX: &str = "ById";
/// The index of a member's posts, comments and likes, by `owner` (the
/// member id) and `owner_sk` ([`OWNED_POST_PREFIX`] and the others).
pub(in crate::store::dynamo) const BY_OWNER_INDEX: &str = "ByOwner";
/// `owner_sk` of a member's post: `POST#<post id>`.
pub(in crate::store::dynamo) const OWNED_POST_PREFIX: &str = "POST#";
/// `owner_sk` of a member's comment: `COMMENT#<comment id>`.
pub(in crate::store::dynamo) const OWNED_COMMENT_PREFIX: &str = "COMMENT#";
/// `owner_sk` of a member's like: `LIKE#<post id>`.
pub(in crate::store::dynamo) const OWNED_LIKE_PREFIX: &str = "LIKE#";
/// The partition of pending account deletions (SK: the member id).
pub(in crate::store::dynamo) const ACCOUNT_PURGE_PK: &str = "ACCOUNT_PURGE";
/// The author kind of what a deleted account left.
pub const DELETED_MEMBER_KIND: &str = "deleted_member";

/// The member id an author's item is indexed under, if a member's.
pub(in crate::store::dynamo) fn owner_of(author: &Author) -> Option<String> {
    match author {
        Author::Member { member_id, .. } => Some(member_id.clone()),
        Author::Guest { .. } | Author::DeletedMember { .. } => None,
    }
}

pub(in crate::store::dynamo) fn owned_post_sk(post_id: &str) -> String {
    format!("{OWNED_POST_PREFIX}{post_id}")
}

pub(in crate::store::dynamo) fn owned_comment_sk(comment_id: &str) -> String {
    format!("{OWNED_COMMENT_PREFIX}{comment_id}")
}

pub(in crate::store::dynamo) fn owned_like_sk(post_id: &str) -> String {
    format!("{OWNED_LIKE_PREFIX}{post_id}")
}
/// The SK of a ban subject item.
pub(in crate::store::dynamo) const BAN_SK: &str = "BAN";
/// Every report pointer's SK starts with it (never a reporter's:
/// those start [`REPORTER_SK_PREFIX`]).
pub(in crate::store::dynamo) const REPORT_SK_PREFIX: &str = "REPORT#";
/// Every reporter's SK starts with it.
pub(in crate::store::dynamo) const REPORTER_SK_PREFIX: &str = "REPORTER#";

/// A board's moderators.
pub(in crate::store::dynamo) fn mods_pk(board: &str) -> String {
    format!("MODS#{board}")
}

/// A board's ban records, by ban id.
pub(in crate::store::dynamo) fn bans_pk(board: &str) -> String {
    format!("BANS#{board}")
}

/// The ban of one subject (`BanSubject::key`) on a board.
pub(in crate::store::dynamo) fn ban_subject_pk(board: &str, subject: &str) -> String {
    format!("BAN#{board}#{subject}")
}

/// A board's moderation log, by entry id.
pub(in crate::store::dynamo) fn modlog_pk(board: &str) -> String {
    format!("MODLOG#{board}")
}

/// A board's open reports, by report id.
pub(in crate::store::dynamo) fn reports_pk(board: &str) -> String {
    format!("REPORTS#{board}")
}

/// The SK of a target's report pointer, in its post's partition.
pub(in crate::store::dynamo) fn report_pointer_sk(target: &ReportTarget) -> String {
    match target {
        ReportTarget::Post { .. } => format!("{REPORT_SK_PREFIX}POST"),
        ReportTarget::Comment { comment_id, .. } => comment_pointer_sk(comment_id),
    }
}

pub(in crate::store::dynamo) fn comment_pointer_sk(comment_id: &str) -> String {
    format!("{REPORT_SK_PREFIX}COMMENT#{comment_id}")
}

/// A reporter counted on a report, in the reported post's partition.
pub(in crate::store::dynamo) fn reporter_sk(report_id: &str, reporter: &str) -> String {
    format!("{REPORTER_SK_PREFIX}{report_id}#{reporter}")
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
}
