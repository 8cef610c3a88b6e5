//! The storage conformance suite: every test runs against both adapters, the
//! embedded SQLite file and DynamoDB Local (started by `scripts/test-all`; the
//! DynamoDB tests fail, never skip, without `DYNAMODB_ENDPOINT`). Each test
//! gets its own SQLite file or DynamoDB table, so they run in parallel.

use std::collections::HashSet;
use std::sync::Arc;

use futures::future::join_all;
use shared::domain::{
    Author, Ban, BanId, BanRecord, BanScope, BanSubject, BanTarget, BoardSlug, Boards, COMMENTS_PAGE, Comment,
    CommentId, CommentKey, Guard, LogAction, LogEntry, LogTarget, Member, MemberId, Owned, PageLimit, PasswordHash,
    PendingDeletion, Post, PostBody, PostId, PostKey, PostSummary, PostVersion, Report, ReportId, ReportTarget,
    Reported, Title, Username, Window, Writer, WriterKey, new_id, now,
};
use shared::store::dynamo::{CapacityMeter, DynamoStore, Layout, RequestCounter, SdkTuning, client_config};
use shared::store::idempotency::{Claim, Claimed, LEASE_SECONDS, RECORD_SECONDS, StoredResponse};
use shared::store::sqlite::SqliteStore;
use shared::store::{AttemptKey, Edited, PendingPurge, PostEdit, Store, StoreError, cursor};

type Dyn = Arc<dyn Store>;

struct Fixture {
    store: Dyn,
    _dir: Option<tempfile::TempDir>,
}

fn sqlite() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("boards.sqlite3")).unwrap();
    Fixture {
        store: Arc::new(store),
        _dir: Some(dir),
    }
}

fn endpoint() -> String {
    std::env::var("DYNAMODB_ENDPOINT")
        .expect("DYNAMODB_ENDPOINT is not set: run the suite with `bash scripts/test-all`, which starts DynamoDB Local")
}

async fn dynamodb() -> Fixture {
    let table = format!("test-{}", new_id().to_lowercase());
    let store = DynamoStore::connect(&table, Some(&endpoint()), None, &SdkTuning::defaults(true))
        .await
        .unwrap();
    Fixture {
        store: Arc::new(store),
        _dir: None,
    }
}

macro_rules! conformance {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    super::$name(super::sqlite().store).await
                }
            )*
        }
        mod dynamodb {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    super::$name(super::dynamodb().await.store).await
                }
            )*
        }
    };
}

conformance!(
    a_bans_second_subject_is_found_with_it_lifted_with_it_and_replaced_with_it,
    members_are_unique_by_username,
    a_password_hash_is_replaced_only_while_unchanged,
    a_post_reads_back_with_its_comments_oldest_first,
    posts_of_another_board_are_not_found,
    listing_is_newest_first_and_pages_neither_skip_nor_repeat,
    a_cursor_that_was_not_issued_is_refused,
    updating_a_post_changes_title_body_and_updated_at,
    an_edit_with_a_version_changes_only_that_version,
    racing_edits_of_one_version_leave_exactly_one_winner,
    deleting_a_post_removes_its_comments_and_likes,
    guest_password_hashes_appear_only_in_guards,
    replies_must_name_a_top_level_comment_of_the_same_post,
    deleting_a_comment_uncounts_it_once,
    liking_and_unliking_are_idempotent,
    views_are_counted_one_by_one,
    failures_are_counted_per_key_and_window,
    fifty_members_liking_one_post_at_once_are_all_counted,
    one_member_liking_twenty_times_at_once_counts_once,
    two_hundred_concurrent_views_count_exactly_two_hundred,
    concurrent_comments_are_all_counted,
    a_post_deleted_while_its_first_views_race_accepts_nothing_afterwards,
    pagination_under_concurrent_inserts_never_repeats_a_post,
    a_post_with_many_comments_pages_them_oldest_first,
    exactly_a_page_of_comments_leaves_no_cursor,
    comments_of_a_missing_or_foreign_post_are_not_listed,
    a_comments_cursor_outlives_the_comment_it_names,
    an_idempotency_key_is_claimed_once_and_replays_what_its_create_wrote,
    a_create_whose_claim_was_released_or_taken_over_writes_nothing,
    expired_records_and_dead_leases_free_their_key,
    one_of_many_concurrent_claims_on_a_key_wins,
    moderators_are_appointed_once_listed_in_order_dismissed_and_each_change_is_logged_once,
    a_ban_of_a_member_or_an_address_is_found_until_it_ends_and_an_unban_or_a_new_ban_replaces_it_at_once,
    active_bans_are_paged_newest_first_without_gaps_skipping_ended_ones,
    one_report_per_target_counts_each_reporter_once_and_a_resolved_one_makes_way_for_the_next,
    reports_of_a_missing_or_removed_target_are_not_found,
    removing_a_post_deletes_it_like_a_delete_resolves_its_reports_and_is_logged_once,
    removing_a_comment_keeps_its_replies_uncounts_it_and_resolves_its_report,
    the_mod_log_pages_newest_first_without_gaps_and_refuses_a_cursor_not_issued,
    member_by_id_finds_a_member_and_find_comment_finds_a_comment_only_on_its_own_board,
    an_idempotency_completion_given_to_a_moderation_write_is_written_with_it_or_not_at_all,
    twenty_reporters_reporting_one_post_at_once_open_one_report_that_counts_each_once,
    concurrent_bans_of_one_writer_leave_exactly_one_active_ban,
    deleting_a_post_resolves_its_open_reports_and_its_comments_but_no_others,
    deleting_a_comment_resolves_its_open_report_and_no_other,
    a_comment_deleted_while_it_is_being_reported_leaves_no_open_report_of_it,
    a_post_deleted_while_it_and_its_comments_are_being_reported_leaves_no_open_report_of_them,
    a_session_epoch_starts_at_zero_and_advances_with_ended_sessions_and_a_changed_password,
    a_closed_account_is_unreadable_keeps_its_username_taken_is_recorded_and_loses_its_appointments,
    a_members_posts_and_comments_page_newest_first_across_boards_without_gaps_or_repeats,
    owned_finds_a_members_posts_comments_and_likes_until_they_are_deleted_unliked_or_disowned,
    disowned_posts_and_comments_show_a_deleted_member_and_keep_their_counts,
);

fn member(username: &str) -> Member {
    Member {
        id: new_id(),
        username: username.to_owned(),
        nickname: format!("{username} nick"),
        created_at: now(),
    }
}

/// The writer key every test post and comment is stored with.
fn writer() -> Writer {
    Writer {
        key: WriterKey::new("testwriterkeyabcdefghijklmnopqrstuvwxyz234567abcdef".into()),
        range: WriterKey::new("testrangekeyabcdefghijklmnopqrstuvwxyz234567abcdefg".into()),
    }
}

fn board(slug: &str) -> BoardSlug {
    Boards::default().resolve(slug).unwrap()
}

fn pending_purge(board: &str, post: &str) -> PendingPurge {
    PendingPurge {
        board: board.into(),
        post: post.into(),
    }
}

/// (v3) Step 2 of every post delete so far, as the purge function or the
/// server's background task runs it (SQLite: nothing is pending).
async fn purged(store: &Dyn) {
    for pending in store.pending_purges(1_000).await.unwrap() {
        store.purge(&pending).await.unwrap();
    }
}

fn post_key(board_slug: &str, id: &str) -> PostKey {
    PostKey {
        board: board(board_slug),
        post: PostId::parse(id).unwrap(),
    }
}

fn comment_key(board_slug: &str, post_id: &str, comment_id: &str) -> CommentKey {
    CommentKey {
        post: post_key(board_slug, post_id),
        comment: CommentId::parse(comment_id).unwrap(),
    }
}

fn post_id(id: &str) -> PostId {
    PostId::parse(id).unwrap()
}

/// A fresh member id (a ULID).
fn member_id() -> MemberId {
    MemberId::parse(&new_id()).unwrap()
}

fn username(name: &str) -> Username {
    Username::parse(name.to_owned()).unwrap()
}

fn hash(h: &str) -> PasswordHash {
    PasswordHash::new(h.to_owned())
}

fn limit(n: usize) -> PageLimit {
    PageLimit::parse(Some(&n.to_string()), 20).unwrap()
}

fn attempt(key: &str) -> AttemptKey {
    AttemptKey(key.to_owned())
}

fn edit(title: &str, body: &str, updated_at: &str) -> PostEdit {
    PostEdit {
        title: Title::parse(title.to_owned()).unwrap(),
        body: PostBody::parse(body.to_owned()).unwrap(),
        updated_at: updated_at.to_owned(),
        if_version: None,
    }
}

fn guest_hash(guard: &Guard) -> Option<&str> {
    guard.guest_password_hash.as_ref().map(PasswordHash::as_str)
}

fn member_author() -> Author {
    Author::Member {
        member_id: new_id(),
        nickname: "Kim".into(),
    }
}

fn post(board: &str, title: &str, author: Author) -> Post {
    let at = now();
    Post {
        summary: PostSummary {
            id: new_id(),
            board: board.to_owned(),
            title: title.to_owned(),
            author,
            created_at: at.clone(),
            view_count: 0,
            like_count: 0,
            comment_count: 0,
        },
        body: format!("body of {title}"),
        updated_at: at,
    }
}

async fn created_post(store: &Dyn, board: &str) -> Post {
    let p = post(board, "hello", member_author());
    store.create_post(&p, &writer(), None, None).await.unwrap();
    p
}

fn comment(post_id: &str, parent_id: Option<&str>, body: &str) -> Comment {
    Comment {
        id: new_id(),
        post_id: post_id.to_owned(),
        parent_id: parent_id.map(str::to_owned),
        body: body.to_owned(),
        author: Author::Guest {
            nickname: "Lee".into(),
            tag: Some(writer().key.tag()),
        },
        created_at: now(),
    }
}

/// Adds `n` top-level comments to the post, ten at a time; returns them
/// oldest first (ids from one process increase strictly).
async fn add_comments(store: &Dyn, board_slug: &str, post_id: &str, n: usize) -> Vec<Comment> {
    let comments: Vec<Comment> = (0..n)
        .map(|i| comment(post_id, None, &format!("comment {i:03}")))
        .collect();
    for chunk in comments.chunks(10) {
        let writes = chunk.iter().map(|c| {
            let (store, c, b) = (store.clone(), c.clone(), board(board_slug));
            tokio::spawn(async move { store.create_comment(&b, &c, &writer(), None, None).await })
        });
        for result in join_all(writes).await {
            result.unwrap().unwrap();
        }
    }
    comments
}

fn ids(comments: &[Comment]) -> Vec<&str> {
    comments.iter().map(|c| c.id.as_str()).collect()
}

/// Counts a view; the view count the answer shows.
async fn views(store: &Dyn, key: &PostKey) -> Option<u64> {
    store
        .view_post(key)
        .await
        .unwrap()
        .map(|detail| detail.post.summary.view_count)
}

async fn comment_count(store: &Dyn, board: &str, post_id: &str) -> u64 {
    store
        .post_detail(&post_key(board, post_id))
        .await
        .unwrap()
        .unwrap()
        .post
        .summary
        .comment_count
}

async fn members_are_unique_by_username(store: Dyn) {
    let kim = member("kim");
    store.create_member(&kim, &hash("hash-1"), None).await.unwrap();
    assert_eq!(
        store.create_member(&member("kim"), &hash("hash-2"), None).await,
        Err(StoreError::UsernameTaken)
    );
    let found = store.member_credentials(&username("kim")).await.unwrap().unwrap();
    assert_eq!(found.member, kim);
    assert_eq!(found.password_hash.as_str(), "hash-1");
    assert_eq!(store.member_credentials(&username("nobody")).await.unwrap(), None);
}

async fn a_password_hash_is_replaced_only_while_unchanged(store: Dyn) {
    let lee = username("lee");
    store.create_member(&member("lee"), &hash("old"), None).await.unwrap();
    assert!(
        !store
            .replace_password_hash(&lee, &hash("not-the-stored-one"), &hash("new"))
            .await
            .unwrap()
    );
    assert!(
        store
            .replace_password_hash(&lee, &hash("old"), &hash("new"))
            .await
            .unwrap()
    );
    assert!(
        !store
            .replace_password_hash(&lee, &hash("old"), &hash("newer"))
            .await
            .unwrap(),
        "a second upgrade lost the race"
    );
    assert_eq!(
        store
            .member_credentials(&lee)
            .await
            .unwrap()
            .unwrap()
            .password_hash
            .as_str(),
        "new"
    );
    assert!(
        !store
            .replace_password_hash(&username("ghost"), &hash("old"), &hash("new"))
            .await
            .unwrap()
    );
}

async fn a_post_reads_back_with_its_comments_oldest_first(store: Dyn) {
    let p = created_post(&store, "free").await;
    let first = comment(&p.summary.id, None, "first");
    store
        .create_comment(&board("free"), &first, &writer(), Some(&hash("guest-hash")), None)
        .await
        .unwrap();
    let reply = comment(&p.summary.id, Some(&first.id), "reply");
    store
        .create_comment(&board("free"), &reply, &writer(), None, None)
        .await
        .unwrap();
    let third = comment(&p.summary.id, None, "third");
    store
        .create_comment(&board("free"), &third, &writer(), None, None)
        .await
        .unwrap();

    let detail = store
        .post_detail(&post_key("free", &p.summary.id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(detail.post.summary.comment_count, 3);
    assert_eq!(detail.post.body, p.body);
    assert_eq!(detail.post.summary.title, p.summary.title);
    assert_eq!(detail.post.summary.author, p.summary.author);
    assert_eq!(detail.comments, vec![first, reply, third]);
    assert_eq!(detail.comments_next_cursor, None, "all comments fit the first page");
    assert_eq!(store.post_detail(&post_key("free", &new_id())).await.unwrap(), None);
}

async fn posts_of_another_board_are_not_found(store: Dyn) {
    let p = created_post(&store, "free").await;
    let id = &p.summary.id;
    let qna = post_key("qna", id);
    assert_eq!(store.post_detail(&qna).await.unwrap(), None);
    assert_eq!(views(&store, &qna).await, None);
    assert_eq!(store.post_guard(&qna).await.unwrap(), None);
    assert_eq!(
        store.update_post(&qna, &edit("t", "b", &now())).await.unwrap(),
        Edited::NoSuchPost
    );
    assert_eq!(store.like(&qna, &member_id()).await.unwrap(), None);
    assert_eq!(
        store
            .create_comment(&board("qna"), &comment(id, None, "x"), &writer(), None, None)
            .await,
        Err(StoreError::NotFound)
    );
    assert!(!store.delete_post(&qna).await.unwrap());
    // Nothing above touched the post.
    let detail = store.post_detail(&post_key("free", id)).await.unwrap().unwrap();
    assert_eq!(
        (
            detail.post.summary.view_count,
            detail.post.summary.like_count,
            detail.post.summary.comment_count
        ),
        (0, 0, 0)
    );
    assert_eq!(detail.post.summary.title, "hello");
}

async fn listing_is_newest_first_and_pages_neither_skip_nor_repeat(store: Dyn) {
    let mut ids = Vec::new();
    for i in 0..23 {
        let p = post("qna", &format!("post {i}"), member_author());
        store.create_post(&p, &writer(), None, None).await.unwrap();
        ids.push(p.summary.id);
    }
    store
        .create_post(&post("free", "elsewhere", member_author()), &writer(), None, None)
        .await
        .unwrap();
    ids.reverse(); // newest first

    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = store
            .list_posts(&board("qna"), limit(7), cursor.as_deref())
            .await
            .unwrap();
        assert!(page.posts.len() <= 7);
        seen.extend(page.posts.iter().map(|p| p.id.clone()));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, ids);
    let exact = store.list_posts(&board("qna"), limit(23), None).await.unwrap();
    assert_eq!(exact.posts.len(), 23);
    assert_eq!(exact.next_cursor, None, "no cursor when nothing follows");
    assert!(
        store
            .list_posts(&board("notice"), limit(20), None)
            .await
            .unwrap()
            .posts
            .is_empty()
    );
}

async fn a_cursor_that_was_not_issued_is_refused(store: Dyn) {
    assert_eq!(
        store.list_posts(&board("free"), limit(20), Some("garbage!")).await,
        Err(StoreError::InvalidCursor)
    );
}

async fn updating_a_post_changes_title_body_and_updated_at(store: Dyn) {
    let p = created_post(&store, "free").await;
    let later = "2030-01-01T00:00:00.000Z";
    assert_eq!(
        store
            .update_post(&post_key("free", &p.summary.id), &edit("new title", "new body", later))
            .await
            .unwrap(),
        Edited::Done
    );
    let updated = store
        .post_detail(&post_key("free", &p.summary.id))
        .await
        .unwrap()
        .unwrap()
        .post;
    assert_eq!(updated.summary.title, "new title");
    assert_eq!(updated.body, "new body");
    assert_eq!(updated.updated_at, later);
    assert_eq!(updated.summary.created_at, p.summary.created_at);
    assert_eq!(
        store
            .update_post(&post_key("free", &new_id()), &edit("t", "b", later))
            .await
            .unwrap(),
        Edited::NoSuchPost
    );
}

/// docs/API.md, Conventions (v3): an edit with `If-Match` changes the post
/// only at one of the versions it names, atomically with the check.
async fn an_edit_with_a_version_changes_only_that_version(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    let current = PostVersion::of(&p.summary.title, &p.body);
    let stale = PostVersion::of("another", "text");
    let at = |versions: Vec<PostVersion>, title: &str| PostEdit {
        if_version: Some(versions),
        ..edit(title, "b", &now())
    };
    assert_eq!(
        store.update_post(&key, &at(vec![stale.clone()], "no")).await.unwrap(),
        Edited::OtherVersion
    );
    assert_eq!(
        store.update_post(&key, &at(vec![], "no")).await.unwrap(),
        Edited::OtherVersion
    );
    let detail = store.post_detail(&key).await.unwrap().unwrap();
    assert_eq!(detail.post.summary.title, p.summary.title, "unchanged");
    assert_eq!(
        store
            .update_post(&key, &at(vec![stale.clone(), current.clone()], "yes"))
            .await
            .unwrap(),
        Edited::Done
    );
    // The old version is gone with the edit; the new one is the text's.
    assert_eq!(
        store.update_post(&key, &at(vec![current], "again")).await.unwrap(),
        Edited::OtherVersion
    );
    assert_eq!(
        store
            .update_post(&key, &at(vec![PostVersion::of("yes", "b")], "again"))
            .await
            .unwrap(),
        Edited::Done
    );
    let gone = post_key("free", &new_id());
    assert_eq!(
        store.update_post(&gone, &at(vec![stale], "x")).await.unwrap(),
        Edited::NoSuchPost
    );
}

/// docs/API.md, Conventions (v3): many edits racing with the same `If-Match`:
/// exactly one wins, the others are told another version is there.
async fn racing_edits_of_one_version_leave_exactly_one_winner(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    let version = PostVersion::of(&p.summary.title, &p.body);
    let edits = (0..8).map(|i| {
        let (store, key, version) = (store.clone(), key.clone(), version.clone());
        tokio::spawn(async move {
            let e = PostEdit {
                if_version: Some(vec![version]),
                ..edit(&format!("edit {i}"), "b", &now())
            };
            store.update_post(&key, &e).await.unwrap()
        })
    });
    let outcomes: Vec<Edited> = join_all(edits).await.into_iter().map(Result::unwrap).collect();
    assert_eq!(
        outcomes.iter().filter(|o| **o == Edited::Done).count(),
        1,
        "{outcomes:?}"
    );
    assert!(
        outcomes
            .iter()
            .all(|o| matches!(o, Edited::Done | Edited::OtherVersion))
    );
}

/// DynamoDB only: a post item from before v3 has no stored version; an edit
/// naming the version of its text still applies, once, and a stale one not.
#[tokio::test]
async fn a_post_from_before_v3_is_edited_by_the_version_of_its_text() {
    let table = format!("test-{}", new_id().to_lowercase());
    let client = aws_sdk_dynamodb::Client::from_conf(
        client_config(Some(&endpoint()), None, &SdkTuning::defaults(true))
            .await
            .unwrap()
            .build(),
    );
    let store: Dyn = Arc::new(DynamoStore::with_client(client.clone(), &table, true).await.unwrap());
    let p = created_post(&store, "free").await;
    client
        .update_item()
        .table_name(&table)
        .key(
            "PK",
            aws_sdk_dynamodb::types::AttributeValue::S(format!("POST#{}", p.summary.id)),
        )
        .key("SK", aws_sdk_dynamodb::types::AttributeValue::S("POST".into()))
        .update_expression("REMOVE #v")
        .expression_attribute_names("#v", "version")
        .send()
        .await
        .unwrap();
    let key = post_key("free", &p.summary.id);
    let at = |v: PostVersion| PostEdit {
        if_version: Some(vec![v]),
        ..edit("edited", "b", &now())
    };
    let stale = PostVersion::of("another", "text");
    assert_eq!(store.update_post(&key, &at(stale)).await.unwrap(), Edited::OtherVersion);
    let current = PostVersion::of(&p.summary.title, &p.body);
    assert_eq!(
        store.update_post(&key, &at(current.clone())).await.unwrap(),
        Edited::Done
    );
    assert_eq!(
        store.update_post(&key, &at(current)).await.unwrap(),
        Edited::OtherVersion
    );
    let edited = store.post_detail(&key).await.unwrap().unwrap();
    assert_eq!(edited.post.summary.title, "edited");
}

async fn deleting_a_post_removes_its_comments_and_likes(store: Dyn) {
    let p = created_post(&store, "free").await;
    let id = &p.summary.id;
    let key = post_key("free", id);
    let m1 = member_id();
    let c = comment(id, None, "bye");
    store
        .create_comment(&board("free"), &c, &writer(), Some(&hash("h")), None)
        .await
        .unwrap();
    store.like(&key, &m1).await.unwrap();
    let survivor = created_post(&store, "free").await;
    store.like(&post_key("free", &survivor.summary.id), &m1).await.unwrap();

    assert!(store.delete_post(&key).await.unwrap());
    assert!(!store.delete_post(&key).await.unwrap(), "already gone");
    purged(&store).await;
    assert_eq!(store.post_detail(&key).await.unwrap(), None);
    assert_eq!(
        store.comment_guard(&comment_key("free", id, &c.id)).await.unwrap(),
        None
    );
    assert!(!store.has_liked(&post_id(id), &m1).await.unwrap());
    assert!(
        store.has_liked(&post_id(&survivor.summary.id), &m1).await.unwrap(),
        "other posts keep their likes"
    );
    let listed: Vec<_> = store.list_posts(&board("free"), limit(20), None).await.unwrap().posts;
    assert_eq!(
        listed.iter().map(|p| &p.id).collect::<Vec<_>>(),
        vec![&survivor.summary.id]
    );
}

async fn guest_password_hashes_appear_only_in_guards(store: Dyn) {
    let guest = Author::Guest {
        nickname: "visitor".into(),
        tag: Some(writer().key.tag()),
    };
    let p = post("free", "guest post", guest.clone());
    store
        .create_post(&p, &writer(), Some(&hash("$2b$08$post-secret-hash")), None)
        .await
        .unwrap();
    let c = comment(&p.summary.id, None, "guest comment");
    store
        .create_comment(
            &board("free"),
            &c,
            &writer(),
            Some(&hash("$2b$08$comment-secret-hash")),
            None,
        )
        .await
        .unwrap();
    let (free, qna) = (post_key("free", &p.summary.id), post_key("qna", &p.summary.id));
    let (free_c, qna_c) = (
        comment_key("free", &p.summary.id, &c.id),
        comment_key("qna", &p.summary.id, &c.id),
    );

    let guard = store.post_guard(&free).await.unwrap().unwrap();
    assert_eq!(guard.author, guest);
    assert_eq!(guest_hash(&guard), Some("$2b$08$post-secret-hash"));
    let guard = store.comment_guard(&free_c).await.unwrap().unwrap();
    assert_eq!(guest_hash(&guard), Some("$2b$08$comment-secret-hash"));
    assert_eq!(store.comment_guard(&qna_c).await.unwrap(), None);

    let shown = serde_json::to_string(&store.post_detail(&free).await.unwrap()).unwrap()
        + &serde_json::to_string(&store.list_posts(&board("free"), limit(20), None).await.unwrap()).unwrap()
        + &format!("{:?}", store.update_post(&free, &edit("t", "b", &now())).await.unwrap())
        + &serde_json::to_string(&store.list_comments(&free, limit(20), None).await.unwrap()).unwrap();
    assert!(
        !shown.contains("secret-hash"),
        "a hash reached a response type: {shown}"
    );

    assert!(
        store
            .replace_post_guest_hash(&free, &hash("$2b$08$post-secret-hash"), &hash("new-post-hash"))
            .await
            .unwrap()
    );
    assert!(
        !store
            .replace_post_guest_hash(&free, &hash("$2b$08$post-secret-hash"), &hash("x"))
            .await
            .unwrap()
    );
    assert!(
        !store
            .replace_post_guest_hash(&qna, &hash("new-post-hash"), &hash("x"))
            .await
            .unwrap()
    );
    let guard = store.post_guard(&free).await.unwrap().unwrap();
    assert_eq!(guest_hash(&guard), Some("new-post-hash"));
    assert!(
        store
            .replace_comment_guest_hash(&free_c, &hash("$2b$08$comment-secret-hash"), &hash("new-comment-hash"))
            .await
            .unwrap()
    );
    assert!(
        !store
            .replace_comment_guest_hash(&qna_c, &hash("new-comment-hash"), &hash("x"))
            .await
            .unwrap()
    );
    let guard = store.comment_guard(&free_c).await.unwrap().unwrap();
    assert_eq!(guest_hash(&guard), Some("new-comment-hash"));
}

async fn replies_must_name_a_top_level_comment_of_the_same_post(store: Dyn) {
    let p = created_post(&store, "free").await;
    let other = created_post(&store, "free").await;
    let top = comment(&p.summary.id, None, "top");
    store
        .create_comment(&board("free"), &top, &writer(), None, None)
        .await
        .unwrap();
    let reply = comment(&p.summary.id, Some(&top.id), "reply");
    store
        .create_comment(&board("free"), &reply, &writer(), None, None)
        .await
        .unwrap();
    let elsewhere = comment(&other.summary.id, None, "elsewhere");
    store
        .create_comment(&board("free"), &elsewhere, &writer(), None, None)
        .await
        .unwrap();

    for parent in [elsewhere.id.as_str(), reply.id.as_str(), "01ARZ3NDEKTSV4RRFFQ69G5FAV"] {
        let bad = comment(&p.summary.id, Some(parent), "bad");
        assert_eq!(
            store.create_comment(&board("free"), &bad, &writer(), None, None).await,
            Err(StoreError::InvalidParent),
            "{parent}"
        );
    }
    assert_eq!(
        comment_count(&store, "free", &p.summary.id).await,
        2,
        "refused replies are not counted"
    );
}

async fn deleting_a_comment_uncounts_it_once(store: Dyn) {
    let p = created_post(&store, "free").await;
    let (a, b) = (comment(&p.summary.id, None, "a"), comment(&p.summary.id, None, "b"));
    store
        .create_comment(&board("free"), &a, &writer(), None, None)
        .await
        .unwrap();
    store
        .create_comment(&board("free"), &b, &writer(), None, None)
        .await
        .unwrap();
    assert!(
        !store
            .delete_comment(&comment_key("qna", &p.summary.id, &a.id))
            .await
            .unwrap(),
        "wrong board"
    );
    let free_a = comment_key("free", &p.summary.id, &a.id);
    assert!(store.delete_comment(&free_a).await.unwrap());
    assert!(!store.delete_comment(&free_a).await.unwrap());
    let detail = store
        .post_detail(&post_key("free", &p.summary.id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(detail.post.summary.comment_count, 1);
    assert_eq!(detail.comments, vec![b]);
    assert_eq!(detail.comments_next_cursor, None);
}

async fn liking_and_unliking_are_idempotent(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    let (m1, m2) = (member_id(), member_id());
    for _ in 0..2 {
        let state = store.like(&key, &m1).await.unwrap().unwrap();
        assert!(state.liked);
        assert_eq!(state.like_count, 1);
    }
    assert_eq!(store.like(&key, &m2).await.unwrap().unwrap().like_count, 2);
    for _ in 0..2 {
        let state = store.unlike(&key, &m1).await.unwrap().unwrap();
        assert!(!state.liked);
        assert_eq!(state.like_count, 1);
    }
    assert!(!store.has_liked(&key.post, &m1).await.unwrap());
    assert!(store.has_liked(&key.post, &m2).await.unwrap());
    assert_eq!(store.like(&post_key("free", &new_id()), &m1).await.unwrap(), None);
    assert_eq!(store.unlike(&post_key("free", &new_id()), &m1).await.unwrap(), None);
}

async fn views_are_counted_one_by_one(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    for expected in 1..=3 {
        assert_eq!(views(&store, &key).await, Some(expected));
    }
    assert_eq!(
        store.post_detail(&key).await.unwrap().unwrap().post.summary.view_count,
        3
    );
    assert_eq!(views(&store, &post_key("free", &new_id())).await, None);
}

async fn failures_are_counted_per_key_and_window(store: Dyn) {
    let now = 1_800_000_123;
    let window = Window::containing(now, 300);
    let (kim, lee, nobody) = (
        attempt("login:user:kim"),
        attempt("login:user:lee"),
        attempt("login:user:nobody"),
    );
    for expected in 1..=3 {
        assert_eq!(store.record_failure(&kim, window).await.unwrap(), expected);
    }
    assert_eq!(store.failures(&kim, window).await.unwrap(), 3);
    assert_eq!(store.failures(&lee, window).await.unwrap(), 0);
    let next = Window::containing(window.end(), 300);
    assert_eq!(
        store.failures(&kim, next).await.unwrap(),
        0,
        "a new window starts at zero"
    );
    assert_eq!(store.record_failure(&kim, next).await.unwrap(), 1);
    store.forgive_failure(&kim, next).await.unwrap();
    assert_eq!(store.failures(&kim, next).await.unwrap(), 0);
    store.forgive_failure(&kim, next).await.unwrap();
    assert_eq!(store.failures(&kim, next).await.unwrap(), 0, "never below zero");
    store.forgive_failure(&nobody, next).await.unwrap();
    assert_eq!(
        store.failures(&kim, window).await.unwrap(),
        3,
        "other windows untouched"
    );
}

async fn fifty_members_liking_one_post_at_once_are_all_counted(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    let members: Vec<MemberId> = (0..50).map(|_| member_id()).collect();
    let likes = members.iter().map(|m| {
        let (store, key, m) = (store.clone(), key.clone(), m.clone());
        tokio::spawn(async move { store.like(&key, &m).await })
    });
    for result in join_all(likes).await {
        assert!(result.unwrap().unwrap().unwrap().liked);
    }
    assert_eq!(
        store.post_detail(&key).await.unwrap().unwrap().post.summary.like_count,
        50
    );
    for m in &members {
        assert!(store.has_liked(&key.post, m).await.unwrap());
    }
}

async fn one_member_liking_twenty_times_at_once_counts_once(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    let same_member = member_id();
    let likes = (0..20).map(|_| {
        let (store, key, m) = (store.clone(), key.clone(), same_member.clone());
        tokio::spawn(async move { store.like(&key, &m).await })
    });
    for result in join_all(likes).await {
        assert!(result.unwrap().unwrap().unwrap().liked);
    }
    assert_eq!(
        store.post_detail(&key).await.unwrap().unwrap().post.summary.like_count,
        1
    );
}

async fn two_hundred_concurrent_views_count_exactly_two_hundred(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    let views = (0..200).map(|_| {
        let (store, key) = (store.clone(), key.clone());
        tokio::spawn(async move { views(&store, &key).await })
    });
    let counts: Vec<u64> = join_all(views).await.into_iter().map(|r| r.unwrap().unwrap()).collect();
    // Each answer includes its own view; concurrent views may or may not
    // see each other (docs/API.md, Counting).
    assert!(counts.iter().all(|c| (1..=200).contains(c)), "{counts:?}");
    assert_eq!(
        store.post_detail(&key).await.unwrap().unwrap().post.summary.view_count,
        200
    );
}

/// Deletes racing the first views of their posts (each view may be the one
/// that creates a counter shard) never leave a post that takes writes: after
/// the race, every comment, like and view of a deleted post is refused as
/// not found, and nothing is counted for it.
async fn a_post_deleted_while_its_first_views_race_accepts_nothing_afterwards(store: Dyn) {
    let posts: Vec<String> = join_all((0..20).map(|_| created_post(&store, "free")))
        .await
        .into_iter()
        .map(|p| p.summary.id)
        .collect();
    let races = posts.iter().map(|id| {
        let (store, key) = (store.clone(), post_key("free", id));
        tokio::spawn(async move {
            let viewers = (0..4).map(|_| {
                let (store, key) = (store.clone(), key.clone());
                tokio::spawn(async move { store.view_post(&key).await })
            });
            let deleted = store.delete_post(&key);
            let (deleted, viewed) = tokio::join!(deleted, join_all(viewers));
            assert!(deleted.unwrap(), "each post is deleted once");
            for view in viewed {
                view.unwrap().unwrap(); // Some before the delete, None after: never an error
            }
        })
    });
    for race in join_all(races).await {
        race.unwrap();
    }
    let m = member_id();
    for id in &posts {
        let key = post_key("free", id);
        assert_eq!(
            store.view_post(&key).await.unwrap(),
            None,
            "a view of deleted post {id}"
        );
        assert_eq!(store.like(&key, &m).await.unwrap(), None, "a like of deleted post {id}");
        let c = comment(id, None, "too late");
        assert_eq!(
            store.create_comment(&board("free"), &c, &writer(), None, None).await,
            Err(StoreError::NotFound),
            "a comment on deleted post {id}"
        );
        assert_eq!(store.post_detail(&key).await.unwrap(), None);
    }
}

async fn concurrent_comments_are_all_counted(store: Dyn) {
    let p = created_post(&store, "free").await;
    let id = p.summary.id.clone();
    let writes = (0..30).map(|i| {
        let (store, c) = (store.clone(), comment(&id, None, &format!("comment {i}")));
        tokio::spawn(async move { store.create_comment(&board("free"), &c, &writer(), None, None).await })
    });
    for result in join_all(writes).await {
        result.unwrap().unwrap();
    }
    let detail = store.post_detail(&post_key("free", &id)).await.unwrap().unwrap();
    assert_eq!(detail.comments.len(), 30);
    assert_eq!(detail.post.summary.comment_count, 30);
    assert_eq!(detail.comments_next_cursor, None);
}

async fn pagination_under_concurrent_inserts_never_repeats_a_post(store: Dyn) {
    for i in 0..30 {
        store
            .create_post(
                &post("notice", &format!("old {i}"), member_author()),
                &writer(),
                None,
                None,
            )
            .await
            .unwrap();
    }
    let writer = {
        let store = store.clone();
        tokio::spawn(async move {
            for i in 0..30 {
                store
                    .create_post(
                        &post("notice", &format!("new {i}"), member_author()),
                        &writer(),
                        None,
                        None,
                    )
                    .await
                    .unwrap();
            }
        })
    };
    let mut seen = HashSet::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = store
            .list_posts(&board("notice"), limit(4), cursor.as_deref())
            .await
            .unwrap();
        for p in &page.posts {
            assert!(seen.insert(p.id.clone()), "post {} repeated", p.id);
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    writer.await.unwrap();
    assert!(seen.len() >= 30, "every post that existed before the walk was seen");
}

async fn a_post_with_many_comments_pages_them_oldest_first(store: Dyn) {
    let p = created_post(&store, "free").await;
    let all = add_comments(&store, "free", &p.summary.id, 120).await;
    let key = post_key("free", &p.summary.id);

    let detail = store.post_detail(&key).await.unwrap().unwrap();
    assert_eq!(detail.post.summary.comment_count, 120);
    assert_eq!(detail.comments.len(), COMMENTS_PAGE);
    assert_eq!(detail.comments, all[..COMMENTS_PAGE], "the 50 oldest, oldest first");
    let detail_cursor = detail
        .comments_next_cursor
        .clone()
        .expect("a cursor: 70 comments follow");

    let mut seen = detail.comments;
    let mut sizes = Vec::new();
    let mut cursor = detail_cursor.clone();
    loop {
        let page = store
            .list_comments(&key, limit(30), Some(&cursor))
            .await
            .unwrap()
            .expect("the post exists");
        sizes.push(page.comments.len());
        seen.extend(page.comments);
        match page.next_cursor {
            Some(next) => cursor = next,
            None => break,
        }
        assert!(sizes.len() < 10, "paging does not end: {sizes:?}");
    }
    assert_eq!(sizes, vec![30, 30, 10], "the last page has no cursor");
    let seen_ids = ids(&seen);
    assert_eq!(
        seen_ids.iter().collect::<HashSet<_>>().len(),
        seen_ids.len(),
        "no comment repeats"
    );
    assert_eq!(seen, all, "every comment once, oldest first, none skipped");

    // Without a cursor the pages start where the detail does.
    let first = store.list_comments(&key, limit(50), None).await.unwrap().unwrap();
    assert_eq!(first.comments, all[..50]);
    assert_eq!(first.next_cursor, Some(detail_cursor));
}

async fn exactly_a_page_of_comments_leaves_no_cursor(store: Dyn) {
    let p = created_post(&store, "qna").await;
    let all = add_comments(&store, "qna", &p.summary.id, COMMENTS_PAGE).await;
    let key = post_key("qna", &p.summary.id);
    let detail = store.post_detail(&key).await.unwrap().unwrap();
    assert_eq!(detail.comments, all);
    assert_eq!(detail.comments_next_cursor, None, "nothing follows the first page");

    let half = store.list_comments(&key, limit(25), None).await.unwrap().unwrap();
    assert_eq!(half.comments, all[..25]);
    let next = half.next_cursor.expect("25 follow");
    let rest = store
        .list_comments(&key, limit(25), Some(&next))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rest.comments, all[25..]);
    assert_eq!(rest.next_cursor, None);
}

async fn comments_of_a_missing_or_foreign_post_are_not_listed(store: Dyn) {
    let p = created_post(&store, "free").await;
    let all = add_comments(&store, "free", &p.summary.id, 3).await;
    let issued = cursor::encode(&all[0].id);
    for cursor in [None, Some(issued.as_str())] {
        assert_eq!(
            store
                .list_comments(&post_key("qna", &p.summary.id), limit(20), cursor)
                .await
                .unwrap(),
            None,
            "a post of another board is not found"
        );
        assert_eq!(
            store
                .list_comments(&post_key("free", &new_id()), limit(20), cursor)
                .await
                .unwrap(),
            None,
            "no such post"
        );
    }
    let free = post_key("free", &p.summary.id);
    for garbage in ["garbage!".to_owned(), cursor::encode("not-a-ulid"), String::from("!!")] {
        assert_eq!(
            store.list_comments(&free, limit(20), Some(&garbage)).await,
            Err(StoreError::InvalidCursor),
            "{garbage}"
        );
    }
    let page = store.list_comments(&free, limit(20), None).await.unwrap().unwrap();
    assert_eq!((page.comments, page.next_cursor), (all, None));
}

async fn a_comments_cursor_outlives_the_comment_it_names(store: Dyn) {
    let p = created_post(&store, "free").await;
    let all = add_comments(&store, "free", &p.summary.id, 5).await;
    let key = post_key("free", &p.summary.id);
    let first = store.list_comments(&key, limit(2), None).await.unwrap().unwrap();
    assert_eq!(first.comments, all[..2]);
    let cursor = first.next_cursor.unwrap();
    assert!(
        store
            .delete_comment(&comment_key("free", &p.summary.id, &all[1].id))
            .await
            .unwrap()
    );
    let second = store
        .list_comments(&key, limit(2), Some(&cursor))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(second.comments, all[2..4], "continues after the deleted comment");
    let third = store
        .list_comments(&key, limit(2), second.next_cursor.as_deref())
        .await
        .unwrap()
        .unwrap();
    assert_eq!((third.comments, third.next_cursor), (all[4..].to_vec(), None));
}

/// A DynamoDB store on a fresh table whose client counts its HTTP requests.
async fn counted_dynamodb() -> (Dyn, RequestCounter) {
    counted_dynamodb_with(Layout::default()).await
}

async fn counted_dynamodb_with(layout: Layout) -> (Dyn, RequestCounter) {
    let (store, counter) = counted_dynamo_store(layout).await;
    (Arc::new(store), counter)
}

/// The DynamoDB store itself (for what only it tells), on a fresh table.
async fn counted_dynamo_store(layout: Layout) -> (DynamoStore, RequestCounter) {
    counted_dynamo_store_on(layout, &format!("test-{}", new_id().to_lowercase())).await
}

async fn counted_dynamo_store_on(layout: Layout, table: &str) -> (DynamoStore, RequestCounter) {
    let counter = RequestCounter::default();
    let config = client_config(Some(&endpoint()), None, &SdkTuning::defaults(true))
        .await
        .unwrap()
        .interceptor(counter.clone())
        .build();
    let store = DynamoStore::with_client(aws_sdk_dynamodb::Client::from_conf(config), table, true)
        .await
        .unwrap()
        .with_layout(layout);
    (store, counter)
}

/// DynamoDB only: the cost in requests of reading a post and counting the
/// view, whatever the comments: the post (GetItem) and its first comments
/// (one Query with Limit 51) side by side, then the view (UpdateItem on one
/// counter shard) and the other shards (BatchGetItem) side by side.
#[tokio::test]
async fn reading_a_post_and_counting_its_view_costs_four_dynamodb_requests_whatever_the_comments() {
    let one_shard = Layout {
        counter_shards: 1,
        ..Layout::default()
    };
    let (store, counter) = counted_dynamodb_with(one_shard).await;
    let p = created_post(&store, "free").await;
    let id = p.summary.id.clone();
    let key = post_key("free", &id);
    // A shard's first write creates it, in a transaction that checks the
    // post exists (v3: was a board GetItem and an unconditional update).
    let before = counter.count();
    assert_eq!(views(&store, &key).await, Some(1));
    let first = counter.count() - before;
    assert_eq!(
        first, 6,
        "post + comments, the view, the other shards, then the shard-creating transaction, the view"
    );

    for comments in [0usize, 5, 420] {
        let have = comment_count(&store, "free", &id).await as usize;
        let bodies: Vec<usize> = (have..comments).collect();
        for chunk in bodies.chunks(10) {
            let writes = chunk.iter().map(|i| {
                // 2,000-character bodies: 420 of them make about 0.85 MB.
                let (store, c) = (
                    store.clone(),
                    comment(&id, None, &format!("{i:04}{}", "x".repeat(1996))),
                );
                tokio::spawn(async move { store.create_comment(&board("free"), &c, &writer(), None, None).await })
            });
            for result in join_all(writes).await {
                result.unwrap().unwrap();
            }
        }
        let before = counter.count();
        let detail = store.view_post(&key).await.unwrap().unwrap();
        let requests = counter.count() - before;
        assert_eq!(detail.comments.len(), comments.min(COMMENTS_PAGE));
        assert_eq!(detail.comments_next_cursor.is_some(), comments > COMMENTS_PAGE);
        assert_eq!(detail.post.summary.comment_count, comments as u64);
        assert_eq!(requests, 4, "{requests} requests for a post with {comments} comments");
    }
}

/// DynamoDB only: a post read, and a comments page, cost the same number of
/// requests for 10 comments as for 300.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_post_detail_costs_the_same_dynamodb_requests_for_10_and_300_comments() {
    let (store, counter) = counted_dynamodb().await;
    let mut detail_costs = Vec::new();
    let mut page_costs = Vec::new();
    for comments in [10usize, 300] {
        let p = created_post(&store, "free").await;
        add_comments(&store, "free", &p.summary.id, comments).await;
        let key = post_key("free", &p.summary.id);

        let before = counter.count();
        let detail = store.post_detail(&key).await.unwrap().unwrap();
        detail_costs.push(counter.count() - before);
        assert_eq!(detail.post.summary.comment_count, comments as u64);
        assert_eq!(detail.comments.len(), comments.min(COMMENTS_PAGE));

        let before = counter.count();
        let page = store.list_comments(&key, limit(100), None).await.unwrap().unwrap();
        page_costs.push(counter.count() - before);
        assert_eq!(page.comments.len(), comments.min(100));
    }
    println!(
        "DynamoDB requests for a post detail: {} with 10 comments, {} with 300; \
         for a comments page of 100: {} and {}",
        detail_costs[0], detail_costs[1], page_costs[0], page_costs[1]
    );
    assert_eq!(detail_costs[0], detail_costs[1], "post detail cost grows with comments");
    assert_eq!(page_costs[0], page_costs[1], "comments page cost grows with comments");
}

/// An index's name, keys (attribute, key type) and projection type.
type IndexShape = (String, Vec<(String, String)>, String);

/// DynamoDB only: the table made for tests has the keys and indexes of infra/table.json.
#[tokio::test]
async fn tables_are_created_from_the_shared_schema() {
    let table = format!("test-{}", new_id().to_lowercase());
    let client = aws_sdk_dynamodb::Client::from_conf(
        client_config(Some(&endpoint()), None, &SdkTuning::defaults(true))
            .await
            .unwrap()
            .build(),
    );
    DynamoStore::with_client(client.clone(), &table, true).await.unwrap();
    let described = client
        .describe_table()
        .table_name(&table)
        .send()
        .await
        .unwrap()
        .table
        .unwrap();
    let def = shared::store::dynamo::schema::TableDefinition::load();
    let keys: Vec<(String, String)> = described
        .key_schema()
        .iter()
        .map(|k| (k.attribute_name().to_owned(), k.key_type().as_str().to_owned()))
        .collect();
    let expected: Vec<(String, String)> = def
        .key_schema
        .iter()
        .map(|k| (k.attribute_name.clone(), k.key_type.clone()))
        .collect();
    assert_eq!(keys, expected);
    // Every index (v3: GSI1 and ById) with its keys and projection.
    let mut indexes: Vec<IndexShape> = described
        .global_secondary_indexes()
        .iter()
        .map(|i| {
            (
                i.index_name().unwrap_or_default().to_owned(),
                i.key_schema()
                    .iter()
                    .map(|k| (k.attribute_name().to_owned(), k.key_type().as_str().to_owned()))
                    .collect(),
                i.projection()
                    .and_then(|p| p.projection_type())
                    .map(|p| p.as_str().to_owned())
                    .unwrap_or_default(),
            )
        })
        .collect();
    indexes.sort();
    let mut declared: Vec<IndexShape> = def
        .global_secondary_indexes
        .iter()
        .map(|i| {
            (
                i.index_name.clone(),
                i.key_schema
                    .iter()
                    .map(|k| (k.attribute_name.clone(), k.key_type.clone()))
                    .collect(),
                i.projection.projection_type.clone(),
            )
        })
        .collect();
    declared.sort();
    assert_eq!(indexes, declared);
    assert!(
        indexes.iter().any(|(name, keys, projection)| name == "ById"
            && keys == &[("id".to_owned(), "HASH".to_owned())]
            && projection == "KEYS_ONLY"),
        "{indexes:?}"
    );
    // (v3) `ByOwner`: a member's posts, comments and likes.
    assert!(
        indexes.iter().any(|(name, keys, projection)| name == "ByOwner"
            && keys
                == &[
                    ("owner".to_owned(), "HASH".to_owned()),
                    ("owner_sk".to_owned(), "RANGE".to_owned())
                ]
            && projection == "INCLUDE"),
        "{indexes:?}"
    );
    let by_owner = described
        .global_secondary_indexes()
        .iter()
        .find(|i| i.index_name() == Some("ByOwner"))
        .unwrap();
    let mut projected: Vec<String> = by_owner
        .projection()
        .map(|p| p.non_key_attributes().to_vec())
        .unwrap_or_default();
    projected.sort();
    let mut declared: Vec<String> = def
        .global_secondary_indexes
        .iter()
        .find(|i| i.index_name == "ByOwner")
        .unwrap()
        .projection
        .non_key_attributes
        .clone();
    declared.sort();
    assert_eq!(projected, declared);
    let ttl = client.describe_time_to_live().table_name(&table).send().await.unwrap();
    assert_eq!(
        ttl.time_to_live_description().and_then(|d| d.attribute_name()),
        Some(def.time_to_live_specification.attribute_name.as_str())
    );
}

/// DynamoDB only: a table written with the v1 layout (counts on the post
/// item, likes in one partition) reads right under v2 before the backfill,
/// and the backfill moves everything once, however often it runs, keeping a
/// like given again across the upgrade counted once.
#[tokio::test]
async fn the_backfill_moves_a_v1_table_to_counter_shards_once() {
    use aws_sdk_dynamodb::types::AttributeValue;
    let table = format!("test-{}", new_id().to_lowercase());
    let client = aws_sdk_dynamodb::Client::from_conf(
        client_config(Some(&endpoint()), None, &SdkTuning::defaults(true))
            .await
            .unwrap()
            .build(),
    );
    let store = DynamoStore::with_client(client.clone(), &table, true).await.unwrap();
    let (post, comment) = (new_id(), new_id());
    let (m1, m2, author) = (member_id(), member_id(), member_id());
    let text = |v: &str| AttributeValue::S(v.to_owned());
    let number = |v: u64| AttributeValue::N(v.to_string());
    let v1_items = [
        vec![
            ("PK", text(&format!("POST#{post}"))),
            ("SK", text("POST")),
            ("GSI1PK", text("BOARD#free")),
            ("GSI1SK", text(&post)),
            ("id", text(&post)),
            ("board", text("free")),
            ("title", text("from v1")),
            ("author_kind", text("member")),
            ("author_nickname", text("kim")),
            ("author_member_id", text(author.as_str())),
            ("created_at", text(&now())),
            ("updated_at", text(&now())),
            ("body", text("body")),
            ("view_count", number(5)),
            ("like_count", number(2)),
            ("comment_count", number(1)),
        ],
        vec![
            ("PK", text(&format!("POST#{post}"))),
            ("SK", text(&format!("COMMENT#{comment}"))),
            ("id", text(&comment)),
            ("post_id", text(&post)),
            ("board", text("free")),
            ("body", text("a v1 comment")),
            ("author_kind", text("guest")),
            ("author_nickname", text("g")),
            ("created_at", text(&now())),
        ],
        vec![
            ("PK", text(&format!("LIKES#{post}"))),
            ("SK", text(&format!("MEMBER#{}", m1.as_str()))),
        ],
        vec![
            ("PK", text(&format!("LIKES#{post}"))),
            ("SK", text(&format!("MEMBER#{}", m2.as_str()))),
        ],
    ];
    for item in v1_items {
        let item = item.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        client
            .put_item()
            .table_name(&table)
            .set_item(Some(item))
            .send()
            .await
            .unwrap();
    }
    let store: Dyn = Arc::new(store);
    let key = post_key("free", &post);
    let counts = |d: &shared::domain::PostDetail| {
        let s = &d.post.summary;
        (s.view_count, s.like_count, s.comment_count)
    };
    let listed = |page: shared::domain::Page| {
        let s = &page.posts[0];
        (s.view_count, s.like_count, s.comment_count)
    };

    // v2 reads the v1 counts before the backfill.
    assert_eq!(counts(&store.post_detail(&key).await.unwrap().unwrap()), (5, 2, 1));
    assert_eq!(
        listed(store.list_posts(&board("free"), limit(20), None).await.unwrap()),
        (5, 2, 1)
    );
    // m1's v1 like is not found where v2 looks, so m1 can like again.
    assert!(!store.has_liked(&key.post, &m1).await.unwrap());
    store.like(&key, &m1).await.unwrap().unwrap();
    assert_eq!(counts(&store.post_detail(&key).await.unwrap().unwrap()), (5, 3, 1));

    let concrete = DynamoStore::with_client(client.clone(), &table, false).await.unwrap();
    let done = concrete.backfill().await.unwrap();
    assert_eq!(
        (done.likes_moved, done.duplicate_likes, done.posts_folded),
        (1, 1, 1),
        "{done:?}"
    );
    assert_eq!(counts(&store.post_detail(&key).await.unwrap().unwrap()), (5, 2, 1));
    assert_eq!(
        listed(store.list_posts(&board("free"), limit(20), None).await.unwrap()),
        (5, 2, 1)
    );
    assert!(store.has_liked(&key.post, &m1).await.unwrap());
    assert!(store.has_liked(&key.post, &m2).await.unwrap());
    let raw = client
        .get_item()
        .table_name(&table)
        .key("PK", text(&format!("POST#{post}")))
        .key("SK", text("POST"))
        .send()
        .await
        .unwrap()
        .item
        .unwrap();
    assert!(
        !raw.contains_key("view_count") && !raw.contains_key("like_count"),
        "{raw:?}"
    );

    // Again: nothing left to move.
    let again = concrete.backfill().await.unwrap();
    assert_eq!(
        (again.likes_moved, again.duplicate_likes, again.posts_folded),
        (0, 0, 0)
    );
    assert_eq!(store.unlike(&key, &m2).await.unwrap().unwrap().like_count, 1);
    assert_eq!(views(&store, &key).await, Some(6));
    assert!(store.delete_post(&key).await.unwrap());
    purged(&store).await;
    assert_eq!(store.post_detail(&key).await.unwrap(), None);
    // Nothing of the post is left: not its comments, likes or shards.
    let left = client
        .scan()
        .table_name(&table)
        .filter_expression("contains(PK, :post) OR SK = :post")
        .expression_attribute_values(":post", text(&post))
        .send()
        .await
        .unwrap();
    assert_eq!(left.items().len(), 0, "{:?}", left.items());
}

/// DynamoDB only: with `READ_CACHE_TTL_MS` on, a repeated view is one
/// request (its shard's update), a process reads its own writes at once,
/// and another process's writes show once the TTL has passed.
#[tokio::test]
async fn the_read_cache_serves_repeated_views_with_one_write_and_forgets_its_own_writes() {
    let ttl = std::time::Duration::from_millis(500);
    let cached = Layout {
        counter_shards: 1,
        read_cache_ttl: ttl,
    };
    let counter = RequestCounter::default();
    let config = client_config(Some(&endpoint()), None, &SdkTuning::defaults(true))
        .await
        .unwrap()
        .interceptor(counter.clone())
        .build();
    let table = format!("test-{}", new_id().to_lowercase());
    let client = aws_sdk_dynamodb::Client::from_conf(config);
    let this: Dyn = Arc::new(
        DynamoStore::with_client(client.clone(), &table, true)
            .await
            .unwrap()
            .with_layout(cached),
    );
    // Every process of a deployment has the same shard count (one setting).
    let uncached = Layout {
        counter_shards: 1,
        ..Layout::default()
    };
    let other: Dyn = Arc::new(
        DynamoStore::with_client(client, &table, false)
            .await
            .unwrap()
            .with_layout(uncached),
    );
    let p = created_post(&this, "free").await;
    let key = post_key("free", &p.summary.id);
    assert_eq!(views(&this, &key).await, Some(1));

    let before = counter.count();
    assert_eq!(views(&this, &key).await, Some(2));
    assert_eq!(counter.count() - before, 1, "a cached view is its shard's update only");

    // Its own comment shows at once.
    this.create_comment(
        &board("free"),
        &comment(&p.summary.id, None, "mine"),
        &writer(),
        None,
        None,
    )
    .await
    .unwrap();
    let detail = this.view_post(&key).await.unwrap().unwrap();
    assert_eq!((detail.comments.len(), detail.post.summary.comment_count), (1, 1));
    assert_eq!(detail.post.summary.view_count, 3);

    // Another process's comment and views show within the TTL.
    other
        .create_comment(
            &board("free"),
            &comment(&p.summary.id, None, "theirs"),
            &writer(),
            None,
            None,
        )
        .await
        .unwrap();
    assert_eq!(views(&other, &key).await, Some(4));
    let stale = this.view_post(&key).await.unwrap().unwrap();
    assert_eq!(stale.comments.len(), 1, "served from the cache");
    assert_eq!(
        stale.post.summary.view_count, 5,
        "the shard's own count is always fresh"
    );
    tokio::time::sleep(ttl + std::time::Duration::from_millis(100)).await;
    let fresh = this.view_post(&key).await.unwrap().unwrap();
    assert_eq!((fresh.comments.len(), fresh.post.summary.comment_count), (2, 2));
    assert_eq!(fresh.post.summary.view_count, 6);

    // A post deleted elsewhere is gone at the next view, cache or not.
    assert!(other.delete_post(&key).await.unwrap());
    assert_eq!(views(&this, &key).await, None);
}

fn claim(key: &str, fingerprint: &str, now: i64) -> Claim {
    Claim {
        key: key.to_owned(),
        fingerprint: fingerprint.to_owned(),
        token: new_id(),
        now,
    }
}

const NOW: i64 = 1_900_000_000;

async fn an_idempotency_key_is_claimed_once_and_replays_what_its_create_wrote(store: Dyn) {
    let p = created_post(&store, "free").await;
    let first = claim("key-1", "request-a", NOW);
    assert_eq!(store.claim(&first).await.unwrap(), Claimed::Fresh);
    // While the first request runs, the same request waits and another is refused.
    assert_eq!(
        store.claim(&claim("key-1", "request-a", NOW + 1)).await.unwrap(),
        Claimed::InProgress
    );
    assert_eq!(
        store.claim(&claim("key-1", "request-b", NOW + 1)).await.unwrap(),
        Claimed::Reused
    );
    let c = comment(&p.summary.id, None, "once");
    let done = first.complete(201, "{\"id\":\"c\"}".into());
    store
        .create_comment(&board("free"), &c, &writer(), None, Some(&done))
        .await
        .unwrap();
    let replayed = store.claim(&claim("key-1", "request-a", NOW + 2)).await.unwrap();
    assert_eq!(replayed, Claimed::Replay(done.response.clone()));
    assert_eq!(
        store.claim(&claim("key-1", "request-b", NOW + 2)).await.unwrap(),
        Claimed::Reused
    );
    // A release after completion changes nothing.
    store.release("key-1", &first.token).await.unwrap();
    assert_eq!(
        store.claim(&claim("key-1", "request-a", NOW + 3)).await.unwrap(),
        Claimed::Replay(done.response.clone())
    );
    // Signup and posts complete their records the same way.
    let for_member = claim("key-2", "signup", NOW);
    assert_eq!(store.claim(&for_member).await.unwrap(), Claimed::Fresh);
    let done = for_member.complete(201, "{}".into());
    store
        .create_member(&member("idem"), &hash("h"), Some(&done))
        .await
        .unwrap();
    assert_eq!(
        store.claim(&claim("key-2", "signup", NOW + 1)).await.unwrap(),
        Claimed::Replay(done.response)
    );
    let for_post = claim("key-3", "post", NOW);
    assert_eq!(store.claim(&for_post).await.unwrap(), Claimed::Fresh);
    let done = for_post.complete(201, "{}".into());
    store
        .create_post(&post("free", "t", member_author()), &writer(), None, Some(&done))
        .await
        .unwrap();
    assert_eq!(
        store.claim(&claim("key-3", "post", NOW + 1)).await.unwrap(),
        Claimed::Replay(done.response)
    );
}

async fn a_create_whose_claim_was_released_or_taken_over_writes_nothing(store: Dyn) {
    let p = created_post(&store, "free").await;
    let key = post_key("free", &p.summary.id);
    // Released (its request answered an error): a late create cannot apply.
    let released = claim("key-r", "a", NOW);
    assert_eq!(store.claim(&released).await.unwrap(), Claimed::Fresh);
    store.release("key-r", &released.token).await.unwrap();
    let late = comment(&p.summary.id, None, "late");
    assert_eq!(
        store
            .create_comment(
                &board("free"),
                &late,
                &writer(),
                None,
                Some(&released.complete(201, "{}".into()))
            )
            .await,
        Err(StoreError::ClaimLost)
    );
    // Taken over after its lease ended: the old request cannot apply either.
    let old = claim("key-t", "a", NOW);
    assert_eq!(store.claim(&old).await.unwrap(), Claimed::Fresh);
    let new = claim("key-t", "a", NOW + LEASE_SECONDS);
    assert_eq!(store.claim(&new).await.unwrap(), Claimed::Fresh);
    let m = member("late");
    assert_eq!(
        store
            .create_member(&m, &hash("h"), Some(&old.complete(201, "{}".into())))
            .await,
        Err(StoreError::ClaimLost)
    );
    assert_eq!(store.member_credentials(&username("late")).await.unwrap(), None);
    let lost_post = post("free", "late post", member_author());
    assert_eq!(
        store
            .create_post(&lost_post, &writer(), None, Some(&old.complete(201, "{}".into())))
            .await,
        Err(StoreError::ClaimLost)
    );
    let detail = store.post_detail(&key).await.unwrap().unwrap();
    assert!(detail.comments.is_empty());
    assert_eq!(detail.post.summary.comment_count, 0, "nothing was counted");
    let page = store.list_posts(&board("free"), limit(20), None).await.unwrap();
    assert_eq!(page.posts.len(), 1, "the lost post was not written");
}

async fn expired_records_and_dead_leases_free_their_key(store: Dyn) {
    let answered = claim("key-e", "a", NOW);
    store.claim(&answered).await.unwrap();
    let m = member("expiring");
    store
        .create_member(&m, &hash("h"), Some(&answered.complete(201, "{}".into())))
        .await
        .unwrap();
    // 24 hours later the key is free, for any request.
    assert_eq!(
        store
            .claim(&claim("key-e", "b", NOW + RECORD_SECONDS - 1))
            .await
            .unwrap(),
        Claimed::Reused
    );
    assert_eq!(
        store.claim(&claim("key-e", "b", NOW + RECORD_SECONDS)).await.unwrap(),
        Claimed::Fresh
    );
    // A request that died holding a key frees it when its lease ends.
    let dead = claim("key-d", "a", NOW);
    store.claim(&dead).await.unwrap();
    assert_eq!(
        store
            .claim(&claim("key-d", "a", NOW + LEASE_SECONDS - 1))
            .await
            .unwrap(),
        Claimed::InProgress
    );
    assert_eq!(
        store.claim(&claim("key-d", "a", NOW + LEASE_SECONDS)).await.unwrap(),
        Claimed::Fresh
    );
    // v3: and for any other request too: a claim that was never answered
    // cannot squat a key for 24 hours.
    store.claim(&claim("key-s", "squatter", NOW)).await.unwrap();
    assert_eq!(
        store.claim(&claim("key-s", "owner", NOW + 1)).await.unwrap(),
        Claimed::Reused,
        "while the squatter's lease runs"
    );
    assert_eq!(
        store
            .claim(&claim("key-s", "owner", NOW + LEASE_SECONDS))
            .await
            .unwrap(),
        Claimed::Fresh
    );
}

async fn one_of_many_concurrent_claims_on_a_key_wins(store: Dyn) {
    let claims = (0..20).map(|_| {
        let store = store.clone();
        tokio::spawn(async move { store.claim(&claim("key-c", "a", NOW)).await })
    });
    let results: Vec<Claimed> = join_all(claims)
        .await
        .into_iter()
        .map(|r| r.unwrap().unwrap())
        .collect();
    let fresh = results.iter().filter(|c| **c == Claimed::Fresh).count();
    assert_eq!(fresh, 1, "{results:?}");
    assert!(
        results
            .iter()
            .all(|c| matches!(c, Claimed::Fresh | Claimed::InProgress))
    );
}

/// DynamoDB only: a post delete's first step (all the request does, v3)
/// leaves nothing of the post readable; a retried delete answers 404 and
/// loads no child; the purge, run for the post or for every pending one,
/// leaves nothing behind, and run again does nothing.
#[tokio::test]
async fn a_deleted_post_is_unreadable_at_once_and_its_purge_leaves_nothing_behind() {
    let table = format!("test-{}", new_id().to_lowercase());
    let client = aws_sdk_dynamodb::Client::from_conf(
        client_config(Some(&endpoint()), None, &SdkTuning::defaults(true))
            .await
            .unwrap()
            .build(),
    );
    let concrete = DynamoStore::with_client(client.clone(), &table, true).await.unwrap();
    let store: Dyn = Arc::new(concrete.clone());
    let left_of = |post: String| {
        let client = client.clone();
        let table = table.clone();
        async move {
            let out = client
                .scan()
                .table_name(&table)
                .filter_expression("contains(PK, :post) OR SK = :post")
                .expression_attribute_values(":post", aws_sdk_dynamodb::types::AttributeValue::S(post))
                .send()
                .await
                .unwrap();
            out.items().len()
        }
    };
    let mut posts = Vec::new();
    for _ in 0..2 {
        let p = created_post(&store, "free").await;
        let key = post_key("free", &p.summary.id);
        let c = comment(&p.summary.id, None, "guarded");
        store
            .create_comment(&board("free"), &c, &writer(), Some(&hash("$2b$08$secret")), None)
            .await
            .unwrap();
        store
            .create_comment(
                &board("free"),
                &comment(&p.summary.id, None, "b"),
                &writer(),
                None,
                None,
            )
            .await
            .unwrap();
        store.like(&key, &member_id()).await.unwrap().unwrap();
        views(&store, &key).await.unwrap();
        posts.push((p, key, c));
    }

    for (i, (p, key, c)) in posts.iter().enumerate() {
        // Step 1 only, as if the process died right after it.
        assert!(concrete.mark_post_deleted("free", &p.summary.id).await.unwrap());
        assert!(left_of(p.summary.id.clone()).await > 0, "children are still there");
        assert_eq!(store.post_detail(key).await.unwrap(), None);
        assert_eq!(views(&store, key).await, None);
        assert_eq!(store.list_comments(key, limit(20), None).await.unwrap(), None);
        let c_key = comment_key("free", &p.summary.id, &c.id);
        assert_eq!(
            store.comment_guard(&c_key).await.unwrap(),
            None,
            "no guard, no hash to check"
        );
        assert!(!store.delete_comment(&c_key).await.unwrap());
        assert_eq!(store.like(key, &member_id()).await.unwrap(), None);
        assert_eq!(
            store
                .create_comment(
                    &board("free"),
                    &comment(&p.summary.id, None, "late"),
                    &writer(),
                    None,
                    None
                )
                .await,
            Err(StoreError::NotFound)
        );
        let listed = store.list_posts(&board("free"), limit(20), None).await.unwrap();
        assert!(listed.posts.iter().all(|s| s.id != p.summary.id));

        // A retried delete answers 404 and leaves step 2 to the purge,
        // which finds the marker (in the first round while another post's
        // purge is pending too).
        assert!(!store.delete_post(key).await.unwrap());
        assert!(left_of(p.summary.id.clone()).await > 0, "the request loads no child");
        let pending = store.pending_purges(10).await.unwrap();
        assert!(pending.contains(&pending_purge("free", &p.summary.id)), "{pending:?}");
        if i == 0 {
            // Run for this post alone.
            store.purge(&pending_purge("free", &p.summary.id)).await.unwrap();
        } else {
            // Run for every pending one, as the server's background task does.
            purged(&store).await;
        }
        assert_eq!(left_of(p.summary.id.clone()).await, 0, "nothing of the post is left");
        assert!(!concrete.purge_pending(&p.summary.id).await.unwrap());
        // Redelivered: nothing to do, nothing fails.
        store.purge(&pending_purge("free", &p.summary.id)).await.unwrap();
    }
}

/// DynamoDB only (docs/DESIGN.md, "At internet scale", v3): the read cache
/// keeps the hot posts while a crawler reads 1,000 cold posts once each.
/// 16 hot posts are viewed in turn, a cold one after every hot view, through
/// the store with `READ_CACHE_TTL_MS` of 60 s (long enough that only
/// eviction, not expiry, can lose an entry). Prints the hit rates and the
/// read units a hot view cost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hot_posts_stay_in_the_read_cache_under_a_scan_of_a_thousand_cold_posts() {
    let meter = shared::store::dynamo::CapacityMeter::default();
    let (dynamo, _) = counted_dynamo_store(Layout {
        read_cache_ttl: std::time::Duration::from_secs(60),
        ..Layout::default()
    })
    .await;
    let dynamo = Arc::new(dynamo.metered(meter.clone()));
    let store: Dyn = dynamo.clone();
    let mut keys = Vec::new();
    for chunk in (0..1_016).collect::<Vec<_>>().chunks(50) {
        let writes = chunk.iter().map(|_| created_post(&store, "free"));
        keys.extend(
            join_all(writes)
                .await
                .into_iter()
                .map(|p| post_key("free", &p.summary.id)),
        );
    }
    let (hot, cold) = keys.split_at(16);
    let before = dynamo.read_cache_stats()[0];
    meter.take();
    let (mut hot_reads, mut hot_units) = (0u64, 0.0f64);
    for (i, cold_key) in cold.iter().enumerate() {
        store.view_post(&hot[i % hot.len()]).await.unwrap().unwrap();
        hot_units += meter.take().table.read;
        hot_reads += 1;
        store.view_post(cold_key).await.unwrap().unwrap();
        meter.take();
    }
    let after = dynamo.read_cache_stats()[0];
    let (hits, misses) = (after.hits - before.hits, after.misses - before.misses);
    // Every cold read misses (each is read once): the misses beyond them are hot ones.
    let hot_misses = misses.saturating_sub(cold.len() as u64);
    let hot_rate = 1.0 - hot_misses as f64 / hot_reads as f64;
    println!(
        "read cache on DynamoDB Local: 16 hot posts + 1,000 cold read once, alternating: \
         {hits} hits, {misses} misses; hot hit rate {:.1}% ({hot_misses} hot misses of {hot_reads}), \
         {:.3} RCU per hot read",
        hot_rate * 1e2,
        hot_units / hot_reads as f64
    );
    assert!(hot_rate > 0.95, "the hot posts stayed cached: {hot_rate}");
}

// (v3) Moderation: moderators, bans, reports, removals and the log.

/// A staff member's author object.
fn staff() -> Author {
    Author::Member {
        member_id: new_id(),
        nickname: "Moderator".into(),
    }
}

fn log_entry(action: LogAction, target: LogTarget) -> LogEntry {
    log_entry_at(action, target, &now())
}

fn log_entry_at(action: LogAction, target: LogTarget, at: &str) -> LogEntry {
    LogEntry {
        id: new_id(),
        action,
        target,
        reason: Some("because".into()),
        by: staff(),
        at: at.to_owned(),
    }
}

fn member_target(m: &Member) -> LogTarget {
    LogTarget::Member {
        member_id: m.id.clone(),
        nickname: m.nickname.clone(),
        scope: None,
    }
}

fn id_of(m: &Member) -> MemberId {
    MemberId::parse(&m.id).unwrap()
}

fn address(key: &str) -> BanSubject {
    BanSubject::Address(WriterKey::new(key.to_owned()))
}

fn member_subject() -> BanSubject {
    BanSubject::Member(new_id())
}

/// A ban of `subject` on `board` ending at `expires` (Unix seconds; `None`: permanent).
fn ban_of(board: &str, subject: &BanSubject, expires: Option<i64>) -> BanRecord {
    let target = match subject {
        BanSubject::Member(id) => BanTarget::Member {
            member_id: id.clone(),
            nickname: "banned".into(),
            scope: None,
        },
        BanSubject::Address(key) | BanSubject::GuestAddress(key) => BanTarget::Guest {
            tag: key.tag(),
            scope: BanScope::Address,
        },
        BanSubject::Range(key) | BanSubject::GuestRange(key) => BanTarget::Guest {
            tag: key.tag(),
            scope: BanScope::Range,
        },
    };
    BanRecord {
        ban: Ban {
            id: new_id(),
            board: board.to_owned(),
            target,
            reason: "spam".into(),
            created_at: now(),
            expires_at: expires.map(|e| format!("at {e}")),
            by: staff(),
        },
        subject: subject.clone(),
        also: None,
        expires,
    }
}

fn ban_entry(record: &BanRecord) -> LogEntry {
    log_entry(LogAction::Ban, record.ban.target.clone().into())
}

fn ban_id(record: &BanRecord) -> BanId {
    BanId::parse(&record.ban.id).unwrap()
}

async fn banned(store: &Dyn, record: &BanRecord) {
    store.ban(record, &ban_entry(record), None).await.unwrap();
}

fn post_target(post_id: &str) -> ReportTarget {
    ReportTarget::Post {
        post_id: post_id.to_owned(),
    }
}

fn comment_target(post_id: &str, comment_id: &str) -> ReportTarget {
    ReportTarget::Comment {
        post_id: post_id.to_owned(),
        comment_id: comment_id.to_owned(),
    }
}

fn report_of(board: &str, target: ReportTarget, reason: &str) -> Report {
    Report {
        id: new_id(),
        board: board.to_owned(),
        target,
        reason: reason.to_owned(),
        created_at: now(),
        reporters: None,
    }
}

/// A report as the staff list shows it.
fn counted(report: &Report, reporters: u64) -> Report {
    Report {
        reporters: Some(reporters),
        ..report.clone()
    }
}

fn report_id(report: &Report) -> ReportId {
    ReportId::parse(&report.id).unwrap()
}

async fn open_reports(store: &Dyn, board_slug: &str) -> Vec<Report> {
    let page = store.list_reports(&board(board_slug), limit(100), None).await.unwrap();
    assert_eq!(page.next_cursor, None);
    page.reports
}

async fn log_of(store: &Dyn, board_slug: &str) -> Vec<LogEntry> {
    let page = store.modlog(&board(board_slug), limit(100), None).await.unwrap();
    assert_eq!(page.next_cursor, None);
    page.entries
}

async fn created_comment(store: &Dyn, board_slug: &str, post_id: &str, parent: Option<&str>) -> Comment {
    let c = comment(post_id, parent, "a comment");
    store
        .create_comment(&board(board_slug), &c, &writer(), None, None)
        .await
        .unwrap();
    c
}

async fn moderators_are_appointed_once_listed_in_order_dismissed_and_each_change_is_logged_once(store: Dyn) {
    let free = board("free");
    // Created first, appointed second: the list is in appointment order, not by id.
    let (early, late) = (member("early"), member("late"));
    for m in [&early, &late] {
        store.create_member(m, &hash("h"), None).await.unwrap();
    }
    assert!(!store.is_moderator(&free, &id_of(&late)).await.unwrap());
    assert!(store.moderators(&free).await.unwrap().is_empty());

    let first = log_entry_at(
        LogAction::AddModerator,
        member_target(&late),
        "2030-01-01T00:00:01.000Z",
    );
    assert!(store.add_moderator(&free, &late, &first).await.unwrap());
    let again = log_entry_at(
        LogAction::AddModerator,
        member_target(&late),
        "2030-01-01T00:00:02.000Z",
    );
    assert!(!store.add_moderator(&free, &late, &again).await.unwrap(), "already one");
    let second = log_entry_at(
        LogAction::AddModerator,
        member_target(&early),
        "2030-01-01T00:00:03.000Z",
    );
    assert!(store.add_moderator(&free, &early, &second).await.unwrap());
    assert_eq!(
        store.moderators(&free).await.unwrap(),
        vec![late.clone(), early.clone()]
    );
    assert!(store.is_moderator(&free, &id_of(&late)).await.unwrap());
    assert!(store.is_moderator(&free, &id_of(&early)).await.unwrap());
    assert!(
        !store.is_moderator(&board("qna"), &id_of(&early)).await.unwrap(),
        "of that board only"
    );
    assert!(store.moderators(&board("qna")).await.unwrap().is_empty());

    let dismissal = log_entry(LogAction::RemoveModerator, member_target(&late));
    assert!(store.remove_moderator(&free, &id_of(&late), &dismissal).await.unwrap());
    let twice = log_entry(LogAction::RemoveModerator, member_target(&late));
    assert!(
        !store.remove_moderator(&free, &id_of(&late), &twice).await.unwrap(),
        "not one any more"
    );
    assert!(!store.is_moderator(&free, &id_of(&late)).await.unwrap());
    assert_eq!(store.moderators(&free).await.unwrap(), vec![early.clone()]);
    assert_eq!(
        log_of(&store, "free").await,
        vec![dismissal, second, first],
        "each change once, newest first; nothing for the changes that were none"
    );
    assert!(log_of(&store, "qna").await.is_empty());
}

async fn a_ban_of_a_member_or_an_address_is_found_until_it_ends_and_an_unban_or_a_new_ban_replaces_it_at_once(
    store: Dyn,
) {
    let free = board("free");
    let (kim, guest, other) = (
        member_subject(),
        address("bannedaddresskey"),
        address("otheraddresskey"),
    );
    assert_eq!(
        store
            .active_ban(&free, &[kim.clone(), guest.clone()], NOW)
            .await
            .unwrap(),
        None
    );
    assert_eq!(store.active_ban(&free, &[], NOW).await.unwrap(), None);

    let timed = ban_of("free", &kim, Some(NOW + 100));
    banned(&store, &timed).await;
    let found = |subjects: Vec<BanSubject>, at: i64| {
        let store = store.clone();
        async move { store.active_ban(&board("free"), &subjects, at).await.unwrap() }
    };
    assert_eq!(found(vec![kim.clone()], NOW).await, Some(timed.clone()));
    assert_eq!(
        found(vec![other.clone(), kim.clone()], NOW + 99).await,
        Some(timed.clone()),
        "among several subjects"
    );
    assert_eq!(
        found(vec![kim.clone(), other.clone()], NOW + 100).await,
        None,
        "it ended"
    );
    assert_eq!(
        store
            .active_ban(&board("qna"), std::slice::from_ref(&kim), NOW)
            .await
            .unwrap(),
        None,
        "another board"
    );

    let permanent = ban_of("free", &guest, None);
    banned(&store, &permanent).await;
    assert_eq!(
        found(vec![kim.clone(), guest.clone()], NOW).await,
        Some(timed.clone()),
        "the first active one in the subjects' order"
    );
    assert_eq!(
        found(vec![guest.clone(), kim.clone()], NOW).await,
        Some(permanent.clone())
    );
    assert_eq!(
        found(vec![kim.clone(), guest.clone()], NOW + 1_000_000).await,
        Some(permanent.clone()),
        "the member's ended, the address's never ends"
    );
    assert_eq!(
        store.ban_by_id(&free, &ban_id(&permanent)).await.unwrap(),
        Some(permanent.clone())
    );
    assert_eq!(store.ban_by_id(&board("qna"), &ban_id(&permanent)).await.unwrap(), None);
    assert_eq!(
        store.ban_by_id(&free, &BanId::parse(&new_id()).unwrap()).await.unwrap(),
        None
    );

    // An unban ends it at once.
    let lifted = log_entry(LogAction::Unban, permanent.ban.target.clone().into());
    assert!(store.unban(&permanent, &lifted).await.unwrap());
    assert_eq!(found(vec![guest.clone()], NOW).await, None);
    assert_eq!(store.ban_by_id(&free, &ban_id(&permanent)).await.unwrap(), None);
    let again = log_entry(LogAction::Unban, permanent.ban.target.clone().into());
    assert!(!store.unban(&permanent, &again).await.unwrap(), "lifted already");

    // A new ban of the same subject replaces the earlier one.
    let lee = member_subject();
    let earlier = ban_of("free", &lee, None);
    banned(&store, &earlier).await;
    let later = ban_of("free", &lee, Some(NOW + 50));
    banned(&store, &later).await;
    assert_eq!(found(vec![lee.clone()], NOW).await, Some(later.clone()));
    assert_eq!(
        found(vec![lee.clone()], NOW + 50).await,
        None,
        "the permanent one is gone"
    );
    assert_eq!(store.ban_by_id(&free, &ban_id(&earlier)).await.unwrap(), None);
    let listed = store.list_bans(&free, limit(10), None, NOW).await.unwrap();
    assert_eq!(listed.bans, vec![later.ban.clone(), timed.ban.clone()]);
    assert_eq!(listed.next_cursor, None);
    // The replaced ban cannot be lifted; its replacement can.
    let entry = log_entry(LogAction::Unban, earlier.ban.target.clone().into());
    assert!(!store.unban(&earlier, &entry).await.unwrap());
    assert_eq!(found(vec![lee.clone()], NOW).await, Some(later.clone()));
    let entry = log_entry(LogAction::Unban, later.ban.target.clone().into());
    assert!(store.unban(&later, &entry).await.unwrap());
    assert_eq!(found(vec![lee], NOW).await, None);

    let actions: Vec<LogAction> = log_of(&store, "free").await.iter().map(|e| e.action).collect();
    use LogAction::{Ban as B, Unban as U};
    assert_eq!(actions, vec![U, B, B, U, B, B], "newest first, one per change");
}

async fn active_bans_are_paged_newest_first_without_gaps_skipping_ended_ones(store: Dyn) {
    let free = board("free");
    let mut active = Vec::new();
    for i in 0..23 {
        // The oldest is ended, so the last active ban is followed only by ended ones.
        let expires = match i % 3 {
            0 => Some(NOW - 10),
            1 => None,
            _ => Some(NOW + 1_000),
        };
        let subject = if i % 2 == 0 {
            member_subject()
        } else {
            address(&format!("address{i}"))
        };
        let record = ban_of("free", &subject, expires);
        banned(&store, &record).await;
        if record.active_at(NOW) {
            active.push(record.ban);
        }
    }
    banned(&store, &ban_of("qna", &member_subject(), None)).await;
    active.reverse(); // newest first
    assert_eq!(active.len(), 15);

    for page_size in [4, 5, 20] {
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = store
                .list_bans(&free, limit(page_size), cursor.as_deref(), NOW)
                .await
                .unwrap();
            assert!(page.bans.len() <= page_size);
            seen.extend(page.bans);
            match page.next_cursor {
                Some(next) => {
                    assert_eq!(seen.len() % page_size, 0, "only a full page has a cursor");
                    cursor = Some(next);
                }
                None => break,
            }
        }
        assert_eq!(seen, active, "pages of {page_size}");
    }
    // Later the timed ones have ended too.
    let later = store.list_bans(&free, limit(100), None, NOW + 1_000).await.unwrap();
    assert_eq!(later.bans.len(), 8);
    assert!(later.bans.iter().all(|b| b.expires_at.is_none()));
    assert_eq!(
        store.list_bans(&free, limit(5), Some("garbage!"), NOW).await,
        Err(StoreError::InvalidCursor)
    );
    assert_eq!(
        store
            .list_bans(&free, limit(5), Some(&cursor::encode("not-a-ulid")), NOW)
            .await,
        Err(StoreError::InvalidCursor)
    );
}

async fn one_report_per_target_counts_each_reporter_once_and_a_resolved_one_makes_way_for_the_next(store: Dyn) {
    let free = board("free");
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let c = created_comment(&store, "free", &pid, None).await;

    let first = report_of("free", post_target(&pid), "spam");
    let shown = first.clone().for_reporter();
    assert_eq!(
        store.report(&free, &first, "member:A", None).await.unwrap(),
        Reported::Opened(shown.clone())
    );
    for reporter in ["member:A", "address:K", "member:B", "address:K"] {
        let later = report_of("free", post_target(&pid), "another reason");
        assert_eq!(
            store.report(&free, &later, reporter, None).await.unwrap(),
            Reported::Joined(shown.clone()),
            "{reporter}: the same report, the first reason"
        );
    }
    let on_comment = report_of("free", comment_target(&pid, &c.id), "rude");
    assert_eq!(
        store.report(&free, &on_comment, "member:A", None).await.unwrap(),
        Reported::Opened(on_comment.clone()),
        "a comment is a target of its own"
    );
    assert_eq!(
        open_reports(&store, "free").await,
        vec![counted(&on_comment, 1), counted(&first, 3)],
        "newest first, distinct reporters counted once each"
    );
    assert!(open_reports(&store, "qna").await.is_empty());

    // Resolved: it leaves the list, once.
    assert!(
        !store
            .resolve_report(&board("qna"), &report_id(&first), None)
            .await
            .unwrap(),
        "not on that board"
    );
    assert!(store.resolve_report(&free, &report_id(&first), None).await.unwrap());
    assert!(!store.resolve_report(&free, &report_id(&first), None).await.unwrap());
    assert_eq!(open_reports(&store, "free").await, vec![counted(&on_comment, 1)]);

    // The next report opens a new one, where an earlier reporter counts again.
    let next = report_of("free", post_target(&pid), "spam again");
    assert_eq!(
        store.report(&free, &next, "member:A", None).await.unwrap(),
        Reported::Opened(next.clone())
    );
    assert_eq!(
        store
            .report(&free, &report_of("free", post_target(&pid), "x"), "member:B", None)
            .await
            .unwrap(),
        Reported::Joined(next.clone())
    );
    assert_eq!(
        open_reports(&store, "free").await,
        vec![counted(&next, 2), counted(&on_comment, 1)]
    );

    // Paged newest first; a cursor not issued is refused.
    let page = store.list_reports(&free, limit(1), None).await.unwrap();
    assert_eq!(page.reports, vec![counted(&next, 2)]);
    let rest = store
        .list_reports(&free, limit(1), page.next_cursor.as_deref())
        .await
        .unwrap();
    assert_eq!((rest.reports, rest.next_cursor), (vec![counted(&on_comment, 1)], None));
    assert_eq!(
        store.list_reports(&free, limit(1), Some("garbage!")).await,
        Err(StoreError::InvalidCursor)
    );
}

async fn reports_of_a_missing_or_removed_target_are_not_found(store: Dyn) {
    let free = board("free");
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let c = created_comment(&store, "free", &pid, None).await;
    let other = created_post(&store, "free").await;
    let report = |target: ReportTarget| report_of("free", target, "spam");
    for (what, board_slug, target) in [
        ("a post of another board", "qna", post_target(&pid)),
        ("a comment of another board", "qna", comment_target(&pid, &c.id)),
        ("no such post", "free", post_target(&new_id())),
        ("no such comment", "free", comment_target(&pid, &new_id())),
        (
            "a comment under another post",
            "free",
            comment_target(&other.summary.id, &c.id),
        ),
        ("a post id as a comment", "free", comment_target(&pid, &pid)),
    ] {
        assert_eq!(
            store
                .report(&board(board_slug), &report(target), "member:A", None)
                .await,
            Err(StoreError::NotFound),
            "{what}"
        );
    }
    // Deleted by their authors.
    let ck = comment_key("free", &pid, &c.id);
    assert!(store.delete_comment(&ck).await.unwrap());
    assert_eq!(
        store
            .report(&free, &report(comment_target(&pid, &c.id)), "member:A", None)
            .await,
        Err(StoreError::NotFound)
    );
    let kept = created_comment(&store, "free", &pid, None).await;
    assert!(store.delete_post(&post_key("free", &pid)).await.unwrap());
    for target in [post_target(&pid), comment_target(&pid, &kept.id)] {
        assert_eq!(
            store.report(&free, &report(target), "member:A", None).await,
            Err(StoreError::NotFound)
        );
    }
    assert!(open_reports(&store, "free").await.is_empty(), "nothing was opened");
}

async fn removing_a_post_deletes_it_like_a_delete_resolves_its_reports_and_is_logged_once(store: Dyn) {
    let free = board("free");
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let key = post_key("free", &pid);
    let top = created_comment(&store, "free", &pid, None).await;
    let reply = created_comment(&store, "free", &pid, Some(&top.id)).await;
    let fan = member_id();
    store.like(&key, &fan).await.unwrap().unwrap();
    for target in [
        post_target(&pid),
        comment_target(&pid, &top.id),
        comment_target(&pid, &reply.id),
    ] {
        store
            .report(&free, &report_of("free", target, "spam"), "member:A", None)
            .await
            .unwrap();
    }
    let survivor = created_post(&store, "free").await;
    let kept = report_of("free", post_target(&survivor.summary.id), "spam");
    store.report(&free, &kept, "member:A", None).await.unwrap();
    assert_eq!(open_reports(&store, "free").await.len(), 4);

    let target = LogTarget::Post {
        post_id: pid.clone(),
        title: p.summary.title.clone(),
    };
    let removal = log_entry(LogAction::RemovePost, target.clone());
    assert!(
        !store
            .remove_post(
                &post_key("qna", &pid),
                &log_entry(LogAction::RemovePost, target.clone()),
                None
            )
            .await
            .unwrap(),
        "not on that board"
    );
    assert!(store.remove_post(&key, &removal, None).await.unwrap());
    purged(&store).await;
    assert_eq!(store.post_detail(&key).await.unwrap(), None);
    assert_eq!(views(&store, &key).await, None);
    assert_eq!(store.list_comments(&key, limit(20), None).await.unwrap(), None);
    for c in [&top, &reply] {
        assert_eq!(
            store.comment_guard(&comment_key("free", &pid, &c.id)).await.unwrap(),
            None
        );
    }
    assert!(!store.has_liked(&post_id(&pid), &fan).await.unwrap());
    let listed = store.list_posts(&free, limit(20), None).await.unwrap().posts;
    assert_eq!(
        listed.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        vec![survivor.summary.id.as_str()]
    );
    assert_eq!(
        open_reports(&store, "free").await,
        vec![counted(&kept, 1)],
        "its reports and its comments' are resolved, others' stay"
    );
    assert!(
        !store
            .remove_post(&key, &log_entry(LogAction::RemovePost, target), None)
            .await
            .unwrap(),
        "a second removal finds nothing"
    );
    assert!(!store.delete_post(&key).await.unwrap());
    assert_eq!(log_of(&store, "free").await, vec![removal], "logged once");
}

async fn removing_a_comment_keeps_its_replies_uncounts_it_and_resolves_its_report(store: Dyn) {
    let free = board("free");
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let top = created_comment(&store, "free", &pid, None).await;
    let reply = created_comment(&store, "free", &pid, Some(&top.id)).await;
    let last = created_comment(&store, "free", &pid, None).await;
    let on_top = report_of("free", comment_target(&pid, &top.id), "rude");
    let on_post = report_of("free", post_target(&pid), "spam");
    for r in [&on_top, &on_post] {
        store.report(&free, r, "member:A", None).await.unwrap();
    }
    let target = LogTarget::Comment {
        post_id: pid.clone(),
        comment_id: top.id.clone(),
    };
    let removal = log_entry(LogAction::RemoveComment, target.clone());
    let top_key = comment_key("free", &pid, &top.id);
    assert!(
        !store
            .remove_comment(
                &comment_key("qna", &pid, &top.id),
                &log_entry(LogAction::RemoveComment, target.clone()),
                None
            )
            .await
            .unwrap(),
        "not on that board"
    );
    assert!(store.remove_comment(&top_key, &removal, None).await.unwrap());
    let detail = store.post_detail(&post_key("free", &pid)).await.unwrap().unwrap();
    assert_eq!(detail.comments, vec![reply.clone(), last], "its reply stays");
    assert_eq!(detail.post.summary.comment_count, 2);
    assert_eq!(store.comment_guard(&top_key).await.unwrap(), None);
    assert_eq!(open_reports(&store, "free").await, vec![counted(&on_post, 1)]);
    assert!(
        !store
            .remove_comment(&top_key, &log_entry(LogAction::RemoveComment, target), None)
            .await
            .unwrap(),
        "a second removal finds nothing"
    );
    assert_eq!(comment_count(&store, "free", &pid).await, 2, "uncounted once");
    assert_eq!(log_of(&store, "free").await, vec![removal]);
    // A removed comment cannot be reported; its reply can, and a removal
    // of a comment without a report resolves nothing else.
    assert_eq!(
        store
            .report(
                &free,
                &report_of("free", comment_target(&pid, &top.id), "x"),
                "member:B",
                None
            )
            .await,
        Err(StoreError::NotFound)
    );
    let on_reply = report_of("free", comment_target(&pid, &reply.id), "rude too");
    store.report(&free, &on_reply, "member:B", None).await.unwrap();
    let unreported = created_comment(&store, "free", &pid, None).await;
    let target = LogTarget::Comment {
        post_id: pid.clone(),
        comment_id: unreported.id.clone(),
    };
    assert!(
        store
            .remove_comment(
                &comment_key("free", &pid, &unreported.id),
                &log_entry(LogAction::RemoveComment, target),
                None
            )
            .await
            .unwrap()
    );
    assert_eq!(
        open_reports(&store, "free").await,
        vec![counted(&on_reply, 1), counted(&on_post, 1)]
    );
}

async fn the_mod_log_pages_newest_first_without_gaps_and_refuses_a_cursor_not_issued(store: Dyn) {
    let free = board("free");
    let m = member("logged");
    store.create_member(&m, &hash("h"), None).await.unwrap();
    let mut written = Vec::new();
    for i in 0..13 {
        let (action, changed) = if i % 2 == 0 {
            let entry = log_entry(LogAction::AddModerator, member_target(&m));
            (entry.clone(), store.add_moderator(&free, &m, &entry).await.unwrap())
        } else {
            let entry = log_entry(LogAction::RemoveModerator, member_target(&m));
            (
                entry.clone(),
                store.remove_moderator(&free, &id_of(&m), &entry).await.unwrap(),
            )
        };
        assert!(changed);
        written.push(action);
    }
    written.reverse();
    for page_size in [4, 13] {
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = store.modlog(&free, limit(page_size), cursor.as_deref()).await.unwrap();
            assert!(page.entries.len() <= page_size);
            seen.extend(page.entries);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        assert_eq!(seen, written, "pages of {page_size}");
    }
    assert!(log_of(&store, "qna").await.is_empty());
    for garbage in ["garbage!".to_owned(), cursor::encode("not-a-ulid")] {
        assert_eq!(
            store.modlog(&free, limit(4), Some(&garbage)).await,
            Err(StoreError::InvalidCursor)
        );
    }
}

async fn member_by_id_finds_a_member_and_find_comment_finds_a_comment_only_on_its_own_board(store: Dyn) {
    let kim = member("byid");
    store.create_member(&kim, &hash("secret-hash"), None).await.unwrap();
    assert_eq!(store.member_by_id(&id_of(&kim)).await.unwrap(), Some(kim.clone()));
    assert_eq!(store.member_by_id(&member_id()).await.unwrap(), None);

    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let c = created_comment(&store, "free", &pid, None).await;
    assert_eq!(
        store.member_by_id(&MemberId::parse(&pid).unwrap()).await.unwrap(),
        None,
        "a post's id names no member"
    );
    let cid = CommentId::parse(&c.id).unwrap();
    assert_eq!(
        store.find_comment(&board("free"), &cid).await.unwrap(),
        Some(comment_key("free", &pid, &c.id))
    );
    assert_eq!(store.find_comment(&board("qna"), &cid).await.unwrap(), None);
    assert_eq!(
        store
            .find_comment(&board("free"), &CommentId::parse(&new_id()).unwrap())
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .find_comment(&board("free"), &CommentId::parse(&pid).unwrap())
            .await
            .unwrap(),
        None,
        "a post's id names no comment"
    );
    assert!(store.delete_comment(&comment_key("free", &pid, &c.id)).await.unwrap());
    assert_eq!(store.find_comment(&board("free"), &cid).await.unwrap(), None);
    let kept = created_comment(&store, "free", &pid, None).await;
    assert!(store.delete_post(&post_key("free", &pid)).await.unwrap());
    assert_eq!(
        store
            .find_comment(&board("free"), &CommentId::parse(&kept.id).unwrap())
            .await
            .unwrap(),
        None,
        "a deleted post's comments are gone"
    );
}

async fn an_idempotency_completion_given_to_a_moderation_write_is_written_with_it_or_not_at_all(store: Dyn) {
    let free = board("free");
    let replayed = |key: &'static str, fingerprint: &'static str| {
        let store = store.clone();
        async move { store.claim(&claim(key, fingerprint, NOW + 1)).await.unwrap() }
    };
    let fresh = |key: &'static str, fingerprint: &'static str| {
        let store = store.clone();
        async move {
            let c = claim(key, fingerprint, NOW);
            assert_eq!(store.claim(&c).await.unwrap(), Claimed::Fresh);
            c
        }
    };
    let released = |key: &'static str| {
        let store = store.clone();
        async move {
            let c = claim(key, "lost", NOW);
            assert_eq!(store.claim(&c).await.unwrap(), Claimed::Fresh);
            store.release(key, &c.token).await.unwrap();
            c
        }
    };

    // A ban.
    let subject = member_subject();
    let record = ban_of("free", &subject, None);
    let c = fresh("k-ban", "ban").await;
    let done = c.complete(201, serde_json::to_string(&record.ban).unwrap());
    store.ban(&record, &ban_entry(&record), Some(&done)).await.unwrap();
    assert_eq!(replayed("k-ban", "ban").await, Claimed::Replay(done.response));
    let lost = ban_of("free", &member_subject(), None);
    let c = released("k-ban-lost").await;
    assert_eq!(
        store
            .ban(&lost, &ban_entry(&lost), Some(&c.complete(201, "{}".into())))
            .await,
        Err(StoreError::ClaimLost)
    );
    assert_eq!(
        store
            .active_ban(&free, std::slice::from_ref(&lost.subject), NOW)
            .await
            .unwrap(),
        None
    );
    assert_eq!(store.ban_by_id(&free, &ban_id(&lost)).await.unwrap(), None);

    // Reports: opened (201), joined (200), joined by a reporter counted already (200).
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let first = report_of("free", post_target(&pid), "spam");
    let shown = serde_json::to_string(&first.clone().for_reporter()).unwrap();
    let c = fresh("k-report", "report").await;
    assert_eq!(
        store.report(&free, &first, "member:A", Some(&c)).await.unwrap(),
        Reported::Opened(first.clone())
    );
    let expected = |status: u16| {
        Claimed::Replay(StoredResponse {
            status,
            body: shown.clone(),
        })
    };
    assert_eq!(replayed("k-report", "report").await, expected(201));
    for (key, reporter) in [("k-join", "member:B"), ("k-join-again", "member:B")] {
        let c = fresh(key, "join").await;
        let later = report_of("free", post_target(&pid), "more");
        assert_eq!(
            store.report(&free, &later, reporter, Some(&c)).await.unwrap(),
            Reported::Joined(first.clone())
        );
        assert_eq!(replayed(key, "join").await, expected(200), "{key}");
    }
    let c = released("k-report-lost").await;
    assert_eq!(
        store
            .report(&free, &report_of("free", post_target(&pid), "x"), "member:C", Some(&c))
            .await,
        Err(StoreError::ClaimLost)
    );
    let c = released("k-report-lost-2").await;
    let other = created_post(&store, "free").await;
    assert_eq!(
        store
            .report(
                &free,
                &report_of("free", post_target(&other.summary.id), "x"),
                "member:C",
                Some(&c)
            )
            .await,
        Err(StoreError::ClaimLost)
    );
    assert_eq!(
        open_reports(&store, "free").await,
        vec![counted(&first, 2)],
        "the lost reports wrote nothing"
    );

    // A resolve.
    let c = released("k-resolve-lost").await;
    assert_eq!(
        store
            .resolve_report(&free, &report_id(&first), Some(&c.complete(204, String::new())))
            .await,
        Err(StoreError::ClaimLost)
    );
    assert_eq!(open_reports(&store, "free").await.len(), 1, "still open");
    let c = fresh("k-resolve", "resolve").await;
    let done = c.complete(204, String::new());
    assert!(
        store
            .resolve_report(&free, &report_id(&first), Some(&done))
            .await
            .unwrap()
    );
    assert_eq!(replayed("k-resolve", "resolve").await, Claimed::Replay(done.response));

    // Removals of a comment and of a post.
    let comment_of = created_comment(&store, "free", &pid, None).await;
    let ck = comment_key("free", &pid, &comment_of.id);
    let target = LogTarget::Comment {
        post_id: pid.clone(),
        comment_id: comment_of.id.clone(),
    };
    let c = released("k-comment-lost").await;
    assert_eq!(
        store
            .remove_comment(
                &ck,
                &log_entry(LogAction::RemoveComment, target.clone()),
                Some(&c.complete(204, String::new()))
            )
            .await,
        Err(StoreError::ClaimLost)
    );
    assert!(store.comment_guard(&ck).await.unwrap().is_some(), "still there");
    let c = fresh("k-comment", "remove").await;
    let done = c.complete(204, String::new());
    assert!(
        store
            .remove_comment(&ck, &log_entry(LogAction::RemoveComment, target), Some(&done))
            .await
            .unwrap()
    );
    assert_eq!(replayed("k-comment", "remove").await, Claimed::Replay(done.response));
    assert_eq!(comment_count(&store, "free", &pid).await, 0);

    let key = post_key("free", &pid);
    let target = LogTarget::Post {
        post_id: pid.clone(),
        title: p.summary.title.clone(),
    };
    let c = released("k-post-lost").await;
    assert_eq!(
        store
            .remove_post(
                &key,
                &log_entry(LogAction::RemovePost, target.clone()),
                Some(&c.complete(204, String::new()))
            )
            .await,
        Err(StoreError::ClaimLost)
    );
    assert!(store.post_detail(&key).await.unwrap().is_some(), "still there");
    let c = fresh("k-post", "remove").await;
    let done = c.complete(204, String::new());
    assert!(
        store
            .remove_post(&key, &log_entry(LogAction::RemovePost, target), Some(&done))
            .await
            .unwrap()
    );
    assert_eq!(replayed("k-post", "remove").await, Claimed::Replay(done.response));
    assert_eq!(store.post_detail(&key).await.unwrap(), None);
    let actions: Vec<LogAction> = log_of(&store, "free").await.iter().map(|e| e.action).collect();
    assert_eq!(
        actions,
        vec![LogAction::RemovePost, LogAction::RemoveComment, LogAction::Ban],
        "only what was written is logged"
    );
}

/// A DynamoDB store on a fresh table that counts its requests and meters its units.
async fn metered_dynamo_store(layout: Layout) -> (Arc<DynamoStore>, RequestCounter, CapacityMeter) {
    let (store, counter) = counted_dynamo_store(layout).await;
    let meter = CapacityMeter::default();
    (Arc::new(store.metered(meter.clone())), counter, meter)
}

/// DynamoDB only: the ban check of a member's write (the member and the
/// address key) is one request, a consistent BatchGetItem of two small
/// items: at most 2 read units, banned or not.
#[tokio::test]
async fn the_ban_check_of_a_member_write_is_one_request_of_at_most_two_read_units() {
    let (dynamo, counter, meter) = metered_dynamo_store(Layout::default()).await;
    let store: Dyn = dynamo.clone();
    let free = board("free");
    let (kim, from) = (
        member_subject(),
        address("memberaddresskeyabcdefghijklmnopqrstuvwxyz234567abcd"),
    );
    let subjects = [kim.clone(), from.clone()];
    let mut measured = Vec::new();
    for banned_now in [None, Some(&kim), Some(&from)] {
        if let Some(subject) = banned_now {
            banned(&store, &ban_of("free", subject, Some(NOW + 60))).await;
        }
        meter.take();
        let before = counter.count();
        let found = store.active_ban(&free, &subjects, NOW).await.unwrap();
        let requests = counter.count() - before;
        let units = meter.take();
        assert_eq!(found.is_some(), banned_now.is_some());
        println!(
            "ban check of a member write (2 subjects), {}: {requests} request, {} RCU, {} WCU",
            match banned_now {
                None => "neither banned",
                Some(s) if *s == kim => "the member banned",
                Some(_) => "both banned",
            },
            units.table.read,
            units.table.write
        );
        assert_eq!(requests, 1);
        assert!(units.table.read <= 2.0, "{units:?}");
        assert_eq!(units.table.write, 0.0);
        measured.push(units.table.read);
    }
    // A guest's write: one subject, one GetItem.
    meter.take();
    let before = counter.count();
    store.active_ban(&free, &[from], NOW).await.unwrap().unwrap();
    assert_eq!(counter.count() - before, 1);
    let units = meter.take();
    println!(
        "ban check of a guest write (1 subject): 1 request, {} RCU",
        units.table.read
    );
    assert!(units.table.read <= 1.0, "{units:?}");
}

/// DynamoDB only: a removal of a post with more open reports than its
/// step-1 transaction has room for (64 counter shards leave 33 places)
/// resolves them all, and nothing of the post is left in the table.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn removing_a_post_with_more_reports_than_one_transaction_holds_resolves_them_all() {
    let table = format!("test-{}", new_id().to_lowercase());
    let (dynamo, _) = counted_dynamo_store_on(
        Layout {
            counter_shards: 64,
            ..Layout::default()
        },
        &table,
    )
    .await;
    let store: Dyn = Arc::new(dynamo);
    let free = board("free");
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let comments = add_comments(&store, "free", &pid, 40).await;
    for chunk in comments.chunks(10) {
        let reports = chunk.iter().map(|c| {
            let (store, free, r) = (
                store.clone(),
                free.clone(),
                report_of("free", comment_target(&pid, &c.id), "spam"),
            );
            tokio::spawn(async move { store.report(&free, &r, "member:A", None).await })
        });
        for result in join_all(reports).await {
            assert!(matches!(result.unwrap().unwrap(), Reported::Opened(_)));
        }
    }
    store
        .report(&free, &report_of("free", post_target(&pid), "spam"), "member:B", None)
        .await
        .unwrap();
    assert_eq!(open_reports(&store, "free").await.len(), 41);
    let entry = log_entry(
        LogAction::RemovePost,
        LogTarget::Post {
            post_id: pid.clone(),
            title: p.summary.title.clone(),
        },
    );
    assert!(store.remove_post(&post_key("free", &pid), &entry, None).await.unwrap());
    purged(&store).await;
    assert!(open_reports(&store, "free").await.is_empty());
    assert_eq!(log_of(&store, "free").await, vec![entry]);
    let client = aws_sdk_dynamodb::Client::from_conf(
        client_config(Some(&endpoint()), None, &SdkTuning::defaults(true))
            .await
            .unwrap()
            .build(),
    );
    let left = client
        .scan()
        .table_name(&table)
        .filter_expression("contains(PK, :post) OR SK = :post")
        .expression_attribute_values(":post", aws_sdk_dynamodb::types::AttributeValue::S(pid.clone()))
        .send()
        .await
        .unwrap();
    assert_eq!(left.items().len(), 0, "nothing of the post is left: {:?}", left.items());
}

/// DynamoDB only (docs/storage.md, Single-table design, v3): the requests
/// and units of every moderation operation, small items, default layout.
/// Prints the table docs/storage.md shows; pins the request counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_moderation_operation_costs_a_fixed_number_of_dynamodb_requests() {
    let (dynamo, counter, meter) = metered_dynamo_store(Layout::default()).await;
    let store: Dyn = dynamo.clone();
    let free = board("free");
    let mut rows: Vec<(&str, u64, f64, f64, f64)> = Vec::new();
    macro_rules! measure {
        ($what:expr, $requests:expr, $work:expr) => {{
            meter.take();
            let before = counter.count();
            let out = $work;
            let requests = counter.count() - before;
            let units = meter.take();
            let index: f64 = units.indexes.values().map(|u| u.read).sum::<f64>() + 0.0;
            rows.push(($what, requests, units.table.read, units.table.write, index));
            assert_eq!(requests, $requests, "{}", $what);
            out
        }};
    }
    let m = member("costly");
    store.create_member(&m, &hash("h"), None).await.unwrap();
    measure!("member_by_id (ById Query, GetItem)", 2, {
        assert!(store.member_by_id(&id_of(&m)).await.unwrap().is_some())
    });
    measure!("is_moderator, uncached (GetItem, eventually consistent)", 1, {
        store.is_moderator(&free, &member_id()).await.unwrap()
    });
    let asked = member_id();
    store.is_moderator(&free, &asked).await.unwrap();
    measure!("is_moderator, cached (10 s)", 0, {
        store.is_moderator(&free, &asked).await.unwrap()
    });
    measure!("add_moderator (transaction: moderator, entry)", 1, {
        assert!(
            store
                .add_moderator(&free, &m, &log_entry(LogAction::AddModerator, member_target(&m)))
                .await
                .unwrap()
        )
    });
    measure!("moderators (Query)", 1, store.moderators(&free).await.unwrap());
    measure!("remove_moderator (transaction: delete, entry)", 1, {
        assert!(
            store
                .remove_moderator(
                    &free,
                    &id_of(&m),
                    &log_entry(LogAction::RemoveModerator, member_target(&m))
                )
                .await
                .unwrap()
        )
    });
    let subject = member_subject();
    let first = ban_of("free", &subject, Some(NOW + 600));
    measure!("ban, new subject (GetItem, transaction: subject, record, entry)", 2, {
        banned(&store, &first).await
    });
    let second = ban_of("free", &subject, None);
    measure!(
        "ban replacing one (GetItem, transaction: subject, old record deleted, record, entry)",
        2,
        banned(&store, &second).await
    );
    let from = address("costaddress");
    measure!("active_ban, 1 subject (GetItem)", 1, {
        store
            .active_ban(&free, std::slice::from_ref(&subject), NOW)
            .await
            .unwrap()
            .unwrap()
    });
    measure!("active_ban, 2 subjects (BatchGetItem)", 1, {
        store
            .active_ban(&free, &[subject.clone(), from.clone()], NOW)
            .await
            .unwrap()
            .unwrap()
    });
    measure!("ban_by_id (GetItem)", 1, {
        store.ban_by_id(&free, &ban_id(&second)).await.unwrap().unwrap()
    });
    measure!("list_bans, one page (Query)", 1, {
        store.list_bans(&free, limit(20), None, NOW).await.unwrap()
    });
    measure!("unban (transaction: record, subject, entry)", 1, {
        let entry = log_entry(LogAction::Unban, second.ban.target.clone().into());
        assert!(store.unban(&second, &entry).await.unwrap())
    });
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let c = created_comment(&store, "free", &pid, None).await;
    measure!("find_comment (ById Query; comment and purge marker GetItems)", 3, {
        store
            .find_comment(&free, &CommentId::parse(&c.id).unwrap())
            .await
            .unwrap()
            .unwrap()
    });
    let on_post = report_of("free", post_target(&pid), "spam");
    measure!(
        "report, opening (pointer GetItem, transaction: check, pointer, report, reporter)",
        2,
        store.report(&free, &on_post, "member:A", None).await.unwrap()
    );
    measure!(
        "report, joining (pointer GetItem, transaction: check, reporter, count)",
        2,
        store
            .report(&free, &report_of("free", post_target(&pid), "x"), "member:B", None)
            .await
            .unwrap()
    );
    measure!(
        "report, joining again (pointer GetItem, transaction refused)",
        2,
        store
            .report(&free, &report_of("free", post_target(&pid), "x"), "member:B", None)
            .await
            .unwrap()
    );
    let on_comment = report_of("free", comment_target(&pid, &c.id), "rude");
    measure!(
        "report of a comment, opening (pointer GetItem, transaction: 2 checks, pointer, report, reporter)",
        2,
        store.report(&free, &on_comment, "member:A", None).await.unwrap()
    );
    measure!("list_reports, one page (Query)", 1, {
        store.list_reports(&free, limit(20), None).await.unwrap()
    });
    measure!("resolve_report (GetItem, transaction: report, pointer)", 2, {
        assert!(store.resolve_report(&free, &report_id(&on_post), None).await.unwrap())
    });
    store
        .report(&free, &report_of("free", post_target(&pid), "again"), "member:A", None)
        .await
        .unwrap();
    let target = LogTarget::Comment {
        post_id: pid.clone(),
        comment_id: c.id.clone(),
    };
    measure!(
        "remove_comment, reported (pointer GetItem, transaction: comment, shard, entry, pointer, report)",
        2,
        assert!(
            store
                .remove_comment(
                    &comment_key("free", &pid, &c.id),
                    &log_entry(LogAction::RemoveComment, target),
                    None
                )
                .await
                .unwrap()
        )
    );
    created_comment(&store, "free", &pid, None).await;
    let target = LogTarget::Post {
        post_id: pid.clone(),
        title: p.summary.title.clone(),
    };
    measure!(
        "remove_post, 1 report, 1 comment (pointers Query, step 1 transaction)",
        2,
        assert!(
            store
                .remove_post(&post_key("free", &pid), &log_entry(LogAction::RemovePost, target), None)
                .await
                .unwrap()
        )
    );
    measure!(
        "its purge, off the request (marker GetItem, 10 Queries, the reports' BatchWriteItem, BatchWriteItem)",
        13,
        store.purge(&pending_purge("free", &pid)).await.unwrap()
    );
    measure!(
        "modlog, one page (Query)",
        1,
        store.modlog(&free, limit(20), None).await.unwrap()
    );

    println!("| operation | requests | table RCU | table WCU | index RCU |\n|---|---:|---:|---:|---:|");
    for (what, requests, read, write, index) in &rows {
        println!("| {what} | {requests} | {read} | {write} | {index} |");
    }
}

/// DynamoDB only (docs/storage.md, v3 moderation): what an author's deletes
/// cost, reported or not, now that they resolve the target's open reports:
/// a comment's delete reads its pointer first (one more GetItem), a post's
/// purge deletes the reports its pointers and reporters name (one more
/// BatchWriteItem, only when there are any). Prints the rows; pins the
/// request counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authors_delete_costs_one_more_request_to_resolve_the_reports_of_what_it_deletes() {
    let (dynamo, counter, meter) = metered_dynamo_store(Layout::default()).await;
    let store: Dyn = dynamo.clone();
    let free = board("free");
    let mut rows: Vec<(&str, u64, u64, f64, f64)> = Vec::new();
    macro_rules! measure {
        ($what:expr, $requests:expr, $work:expr) => {{
            meter.take();
            let before = counter.count();
            let out = $work;
            let requests = counter.count() - before;
            let units = meter.take();
            rows.push(($what, $requests, requests, units.table.read, units.table.write));
            out
        }};
    }
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let plain = created_comment(&store, "free", &pid, None).await;
    let reported = created_comment(&store, "free", &pid, None).await;
    for reporter in ["member:A", "member:B"] {
        store
            .report(
                &free,
                &report_of("free", comment_target(&pid, &reported.id), "rude"),
                reporter,
                None,
            )
            .await
            .unwrap();
    }
    measure!(
        "delete_comment, unreported (pointer GetItem; transaction: comment, shard, no-pointer check)",
        2,
        {
            assert!(
                store
                    .delete_comment(&comment_key("free", &pid, &plain.id))
                    .await
                    .unwrap()
            )
        }
    );
    measure!(
        "delete_comment, reported (pointer GetItem; transaction: comment, shard, pointer, report)",
        2,
        {
            assert!(
                store
                    .delete_comment(&comment_key("free", &pid, &reported.id))
                    .await
                    .unwrap()
            )
        }
    );
    let unreported = created_post(&store, "free").await;
    created_comment(&store, "free", &unreported.summary.id, None).await;
    measure!("delete_post, 1 comment, unreported (step 1 transaction)", 1, {
        assert!(
            store
                .delete_post(&post_key("free", &unreported.summary.id))
                .await
                .unwrap()
        )
    });
    measure!(
        "its purge, off the request (marker GetItem, 10 Queries, BatchWriteItem)",
        12,
        store
            .purge(&pending_purge("free", &unreported.summary.id))
            .await
            .unwrap()
    );
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let c = created_comment(&store, "free", &pid, None).await;
    for (target, reporter) in [
        (post_target(&pid), "member:A"),
        (post_target(&pid), "member:B"),
        (comment_target(&pid, &c.id), "member:A"),
    ] {
        store
            .report(&free, &report_of("free", target, "spam"), reporter, None)
            .await
            .unwrap();
    }
    measure!(
        "delete_post, 1 comment, it and its comment reported: 2 reports, 3 reporters (step 1 transaction)",
        1,
        { assert!(store.delete_post(&post_key("free", &pid)).await.unwrap()) }
    );
    measure!(
        "its purge (the same and the reports' BatchWriteItem)",
        13,
        store.purge(&pending_purge("free", &pid)).await.unwrap()
    );
    println!("| operation | requests | table RCU (Local) | table WCU (Local) |\n|---|---:|---:|---:|");
    for (what, _, requests, read, write) in &rows {
        println!("| {what} | {requests} | {read} | {write} |");
    }
    for (what, expected, requests, _, _) in &rows {
        assert_eq!(requests, expected, "{what}");
    }
    assert!(open_reports(&store, "free").await.is_empty());
}

/// Opens a report of `target` by each of `reporters`; the report opened.
async fn reported(store: &Dyn, target: ReportTarget, reporters: &[&str]) -> Report {
    let free = board("free");
    let mut opened = None;
    for reporter in reporters {
        match store
            .report(&free, &report_of("free", target.clone(), "spam"), reporter, None)
            .await
            .unwrap()
        {
            Reported::Opened(r) => opened = Some(r),
            Reported::Joined(r) => assert_eq!(Some(&r), opened.as_ref()),
        }
    }
    opened.expect("the first reporter opens it")
}

async fn deleting_a_post_resolves_its_open_reports_and_its_comments_but_no_others(store: Dyn) {
    let free = board("free");
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let key = post_key("free", &pid);
    let top = created_comment(&store, "free", &pid, None).await;
    let reply = created_comment(&store, "free", &pid, Some(&top.id)).await;
    reported(&store, post_target(&pid), &["member:A", "address:K"]).await;
    reported(&store, comment_target(&pid, &top.id), &["member:A"]).await;
    reported(&store, comment_target(&pid, &reply.id), &["member:B", "member:C"]).await;
    let other = created_post(&store, "free").await;
    let other_comment = created_comment(&store, "free", &other.summary.id, None).await;
    let kept_post = reported(&store, post_target(&other.summary.id), &["member:A"]).await;
    let kept_comment = reported(
        &store,
        comment_target(&other.summary.id, &other_comment.id),
        &["member:A"],
    )
    .await;
    assert_eq!(open_reports(&store, "free").await.len(), 5);

    assert!(
        !store.delete_post(&post_key("qna", &pid)).await.unwrap(),
        "not on that board"
    );
    assert_eq!(
        open_reports(&store, "free").await.len(),
        5,
        "a refused delete resolves nothing"
    );
    assert!(store.delete_post(&key).await.unwrap());
    purged(&store).await;
    assert_eq!(
        open_reports(&store, "free").await,
        vec![counted(&kept_comment, 1), counted(&kept_post, 1)],
        "its reports and its comments' are resolved, others' stay"
    );
    for target in [post_target(&pid), comment_target(&pid, &top.id)] {
        assert_eq!(
            store
                .report(&free, &report_of("free", target, "late"), "member:D", None)
                .await,
            Err(StoreError::NotFound)
        );
    }
    assert!(!store.delete_post(&key).await.unwrap(), "already gone");
    assert!(
        log_of(&store, "free").await.is_empty(),
        "an author's delete is not logged"
    );
}

async fn deleting_a_comment_resolves_its_open_report_and_no_other(store: Dyn) {
    let free = board("free");
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let top = created_comment(&store, "free", &pid, None).await;
    let reply = created_comment(&store, "free", &pid, Some(&top.id)).await;
    let plain = created_comment(&store, "free", &pid, None).await;
    reported(&store, comment_target(&pid, &top.id), &["member:A", "address:K"]).await;
    let on_reply = reported(&store, comment_target(&pid, &reply.id), &["member:B"]).await;
    let on_post = reported(&store, post_target(&pid), &["member:A"]).await;
    let top_key = comment_key("free", &pid, &top.id);

    assert!(
        !store.delete_comment(&comment_key("qna", &pid, &top.id)).await.unwrap(),
        "not on that board"
    );
    assert_eq!(
        open_reports(&store, "free").await.len(),
        3,
        "a refused delete resolves nothing"
    );
    assert!(store.delete_comment(&top_key).await.unwrap());
    assert_eq!(
        open_reports(&store, "free").await,
        vec![counted(&on_post, 1), counted(&on_reply, 1)],
        "its report is resolved; its reply's and its post's stay"
    );
    assert!(!store.delete_comment(&top_key).await.unwrap(), "already gone");
    assert_eq!(comment_count(&store, "free", &pid).await, 2, "uncounted once");
    assert_eq!(
        store
            .report(
                &free,
                &report_of("free", comment_target(&pid, &top.id), "late"),
                "member:C",
                None
            )
            .await,
        Err(StoreError::NotFound)
    );
    // A comment without a report resolves nothing when deleted; the reply's
    // goes with the reply.
    assert!(
        store
            .delete_comment(&comment_key("free", &pid, &plain.id))
            .await
            .unwrap()
    );
    assert_eq!(open_reports(&store, "free").await.len(), 2);
    assert!(
        store
            .delete_comment(&comment_key("free", &pid, &reply.id))
            .await
            .unwrap()
    );
    assert_eq!(open_reports(&store, "free").await, vec![counted(&on_post, 1)]);
    assert!(
        log_of(&store, "free").await.is_empty(),
        "an author's delete is not logged"
    );
}

/// Reports of `targets` by 10 reporters each, all at once, with `delete`
/// started among them; each report answers a report or 404. What `delete`
/// answered.
async fn reports_racing<F>(store: &Dyn, targets: &[ReportTarget], delete: F) -> bool
where
    F: std::future::Future<Output = Result<bool, StoreError>> + Send + 'static,
{
    let mut reports = Vec::new();
    for (i, target) in targets.iter().enumerate() {
        for reporter in 0..10 {
            let (store, r) = (store.clone(), report_of("free", target.clone(), "spam"));
            reports.push(tokio::spawn(async move {
                store
                    .report(&board("free"), &r, &format!("member:{i}-{reporter}"), None)
                    .await
            }));
        }
    }
    let deleted = tokio::spawn(delete);
    for outcome in join_all(reports).await {
        match outcome.unwrap() {
            Ok(_) | Err(StoreError::NotFound) => {}
            Err(e) => panic!("a report racing the delete failed: {e:?}"),
        }
    }
    deleted.await.unwrap().unwrap()
}

async fn a_comment_deleted_while_it_is_being_reported_leaves_no_open_report_of_it(store: Dyn) {
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    for _ in 0..3 {
        let c = created_comment(&store, "free", &pid, None).await;
        let (racing, key) = (store.clone(), comment_key("free", &pid, &c.id));
        let deleted = reports_racing(&store, &[comment_target(&pid, &c.id)], async move {
            racing.delete_comment(&key).await
        })
        .await;
        assert!(deleted);
        let left = open_reports(&store, "free").await;
        assert!(
            left.iter().all(|r| r.target != comment_target(&pid, &c.id)),
            "no report of the deleted comment: {left:?}"
        );
    }
}

async fn a_post_deleted_while_it_and_its_comments_are_being_reported_leaves_no_open_report_of_them(store: Dyn) {
    for _ in 0..3 {
        let p = created_post(&store, "free").await;
        let pid = p.summary.id.clone();
        let a = created_comment(&store, "free", &pid, None).await;
        let b = created_comment(&store, "free", &pid, Some(&a.id)).await;
        let targets = [
            post_target(&pid),
            comment_target(&pid, &a.id),
            comment_target(&pid, &b.id),
        ];
        let (racing, key) = (store.clone(), post_key("free", &pid));
        let deleted = reports_racing(&store, &targets, async move { racing.delete_post(&key).await }).await;
        assert!(deleted);
        // (v3) Reports opened before step 1 are resolved by the purge.
        purged(&store).await;
        assert_eq!(
            open_reports(&store, "free").await,
            vec![],
            "no report of the post or its comments"
        );
    }
}

/// Items of `table` that name `text` in their key, their `report_id` or
/// their `report` (JSON): every page of a Scan.
async fn items_naming(
    client: &aws_sdk_dynamodb::Client,
    table: &str,
    text: &str,
) -> Vec<std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>> {
    let mut found = Vec::new();
    let mut start = None;
    loop {
        let out = client
            .scan()
            .table_name(table)
            .filter_expression("contains(PK, :t) OR contains(SK, :t) OR #rid = :t OR contains(#report, :t)")
            .expression_attribute_names("#rid", "report_id")
            .expression_attribute_names("#report", "report")
            .expression_attribute_values(":t", aws_sdk_dynamodb::types::AttributeValue::S(text.to_owned()))
            .set_exclusive_start_key(start)
            .send()
            .await
            .unwrap();
        found.extend(out.items.unwrap_or_default());
        start = out.last_evaluated_key;
        if start.is_none() {
            return found;
        }
    }
}

/// A client of DynamoDB Local without the store (for a table scan).
async fn plain_client() -> aws_sdk_dynamodb::Client {
    aws_sdk_dynamodb::Client::from_conf(
        client_config(Some(&endpoint()), None, &SdkTuning::defaults(true))
            .await
            .unwrap()
            .build(),
    )
}

/// DynamoDB only: after an author's comment delete a table scan finds no
/// item naming the comment, and of its report only the reporters (until the
/// post's purge, as a resolved report's); after the post's delete, no item
/// naming the post or any report of it or its comments: no pointer, no
/// reporter, no open report in `REPORTS#<board>`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_authors_deletes_leave_no_item_of_the_comment_the_post_or_their_reports() {
    let table = format!("test-{}", new_id().to_lowercase());
    let (dynamo, _) = counted_dynamo_store_on(Layout::default(), &table).await;
    let store: Dyn = Arc::new(dynamo);
    let client = plain_client().await;
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let gone = created_comment(&store, "free", &pid, None).await;
    let kept = created_comment(&store, "free", &pid, None).await;
    let on_gone = reported(&store, comment_target(&pid, &gone.id), &["member:A", "member:B"]).await;
    let on_kept = reported(&store, comment_target(&pid, &kept.id), &["member:A"]).await;
    // A resolved report's reporters stay in the post's partition until the purge.
    let resolved = reported(&store, post_target(&pid), &["member:A", "address:K"]).await;
    assert!(
        store
            .resolve_report(&board("free"), &report_id(&resolved), None)
            .await
            .unwrap()
    );
    let on_post = reported(&store, post_target(&pid), &["member:A"]).await;
    assert!(!items_naming(&client, &table, &on_gone.id).await.is_empty());

    assert!(
        store
            .delete_comment(&comment_key("free", &pid, &gone.id))
            .await
            .unwrap()
    );
    let left = items_naming(&client, &table, &gone.id).await;
    assert!(left.is_empty(), "nothing names the comment: {left:?}");
    // Its report's pointer and its item in REPORTS#free are gone; its
    // reporters stay until their TTL or the post's purge, as a resolved
    // report's (they name the report, so no later report counts them).
    let left = items_naming(&client, &table, &on_gone.id).await;
    let sk = |item: &std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>| {
        item["SK"].as_s().unwrap().clone()
    };
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left.iter().all(|item| sk(item).starts_with("REPORTER#")), "{left:?}");
    assert_eq!(open_reports(&store, "free").await.len(), 2);

    assert!(store.delete_post(&post_key("free", &pid)).await.unwrap());
    purged(&store).await;
    assert!(open_reports(&store, "free").await.is_empty());
    for text in [&pid, &kept.id, &on_gone.id, &on_kept.id, &on_post.id, &resolved.id] {
        let left = items_naming(&client, &table, text).await;
        assert!(left.is_empty(), "nothing names {text}: {left:?}");
    }
}

/// DynamoDB only: a reported post's delete after step 1 leaves its reports
/// open but unjoinable until its purge, which resolves them on the board the
/// marker names (whatever board a retried delete or the caller named), and
/// nothing of the post or its reports is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_deleted_reported_posts_purge_resolves_its_reports_on_the_board_its_marker_names() {
    let table = format!("test-{}", new_id().to_lowercase());
    let (concrete, _) = counted_dynamo_store_on(Layout::default(), &table).await;
    let store: Dyn = Arc::new(concrete.clone());
    let client = plain_client().await;
    let free = board("free");
    for resumed_by in [
        "its purge after a retried delete",
        "its purge after a retried delete naming another board",
        "its purge named with another board",
        "the purge of every pending post",
    ] {
        let p = created_post(&store, "free").await;
        let pid = p.summary.id.clone();
        let c = created_comment(&store, "free", &pid, None).await;
        let on_post = reported(&store, post_target(&pid), &["member:A", "member:B"]).await;
        let on_comment = reported(&store, comment_target(&pid, &c.id), &["member:A"]).await;

        // Step 1 only.
        assert!(concrete.mark_post_deleted("free", &pid).await.unwrap());
        for target in [post_target(&pid), comment_target(&pid, &c.id)] {
            assert_eq!(
                store
                    .report(&free, &report_of("free", target, "late"), "member:C", None)
                    .await,
                Err(StoreError::NotFound),
                "nothing of a deleted post is reported, not even while its purge is pending"
            );
        }
        assert!(concrete.purge_pending(&pid).await.unwrap());

        match resumed_by {
            "its purge after a retried delete" => {
                assert!(!store.delete_post(&post_key("free", &pid)).await.unwrap());
                store.purge(&pending_purge("free", &pid)).await.unwrap();
            }
            "its purge after a retried delete naming another board" => {
                assert!(!store.delete_post(&post_key("qna", &pid)).await.unwrap());
                store.purge(&pending_purge("free", &pid)).await.unwrap();
            }
            // The purge takes the board its marker names, not the caller's.
            "its purge named with another board" => store.purge(&pending_purge("qna", &pid)).await.unwrap(),
            _ => {
                // With another post removed meanwhile, whose purge is pending too.
                let other = created_post(&store, "free").await;
                let entry = log_entry(
                    LogAction::RemovePost,
                    LogTarget::Post {
                        post_id: other.summary.id.clone(),
                        title: other.summary.title.clone(),
                    },
                );
                assert!(
                    store
                        .remove_post(&post_key("free", &other.summary.id), &entry, None)
                        .await
                        .unwrap()
                );
                purged(&store).await;
            }
        }
        assert!(!concrete.purge_pending(&pid).await.unwrap(), "{resumed_by}");
        assert!(open_reports(&store, "free").await.is_empty(), "{resumed_by}");
        for text in [&pid, &c.id, &on_post.id, &on_comment.id] {
            let left = items_naming(&client, &table, text).await;
            assert!(left.is_empty(), "{resumed_by}: nothing names {text}: {left:?}");
        }
    }
}

async fn twenty_reporters_reporting_one_post_at_once_open_one_report_that_counts_each_once(store: Dyn) {
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    // Each reporter twice: 40 reports at once.
    let reports = (0..40).map(|i| {
        let (store, r) = (
            store.clone(),
            report_of("free", post_target(&pid), &format!("reason {i}")),
        );
        tokio::spawn(async move {
            store
                .report(&board("free"), &r, &format!("member:{}", i % 20), None)
                .await
        })
    });
    let outcomes: Vec<Reported> = join_all(reports)
        .await
        .into_iter()
        .map(|r| r.unwrap().unwrap())
        .collect();
    let opened: Vec<&Report> = outcomes
        .iter()
        .filter_map(|o| match o {
            Reported::Opened(r) => Some(r),
            Reported::Joined(_) => None,
        })
        .collect();
    assert_eq!(opened.len(), 1, "{outcomes:?}");
    let the_one = opened[0].clone();
    assert!(outcomes.iter().all(|o| match o {
        Reported::Opened(r) | Reported::Joined(r) => *r == the_one,
    }));
    assert_eq!(open_reports(&store, "free").await, vec![counted(&the_one, 20)]);
}

async fn concurrent_bans_of_one_writer_leave_exactly_one_active_ban(store: Dyn) {
    let subject = address("racingaddresskey");
    let records: Vec<BanRecord> = (0..10).map(|_| ban_of("free", &subject, None)).collect();
    let bans = records.iter().map(|r| {
        let (store, r) = (store.clone(), r.clone());
        tokio::spawn(async move { store.ban(&r, &ban_entry(&r), None).await })
    });
    for result in join_all(bans).await {
        result.unwrap().unwrap();
    }
    let listed = store.list_bans(&board("free"), limit(20), None, NOW).await.unwrap();
    assert_eq!(listed.bans.len(), 1, "one active ban: {listed:?}");
    let found = store
        .active_ban(&board("free"), std::slice::from_ref(&subject), NOW)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.ban, listed.bans[0], "the check finds the listed one");
    for record in &records {
        let stored = store.ban_by_id(&board("free"), &ban_id(record)).await.unwrap();
        assert_eq!(stored.is_some(), record.ban == found.ban, "the others were replaced");
    }
    assert_eq!(log_of(&store, "free").await.len(), 10, "every ban is logged");
}

// (v3) Accounts: session epochs, account deletion, a member's own listings.

/// A member's author object.
fn authored_by(m: &Member) -> Author {
    Author::Member {
        member_id: m.id.clone(),
        nickname: m.nickname.clone(),
    }
}

fn name_of(m: &Member) -> Username {
    username(&m.username)
}

/// A post by `m` on `board_slug`.
async fn post_by(store: &Dyn, board_slug: &str, m: &Member) -> Post {
    let p = post(board_slug, "mine", authored_by(m));
    store.create_post(&p, &writer(), None, None).await.unwrap();
    p
}

/// A comment by `m` on a post of `board_slug`.
async fn comment_by(store: &Dyn, board_slug: &str, post_id: &str, m: &Member) -> Comment {
    let c = Comment {
        author: authored_by(m),
        ..comment(post_id, None, "my comment")
    };
    store
        .create_comment(&board(board_slug), &c, &writer(), None, None)
        .await
        .unwrap();
    c
}

/// A guest's post on `board_slug`.
async fn guest_post(store: &Dyn, board_slug: &str) -> Post {
    let p = post(
        board_slug,
        "a guest's",
        Author::Guest {
            nickname: "g".into(),
            tag: Some(writer().key.tag()),
        },
    );
    store
        .create_post(&p, &writer(), Some(&hash("guest-hash")), None)
        .await
        .unwrap();
    p
}

async fn owned_set(store: &Dyn, m: &Member, likes: bool) -> HashSet<Owned> {
    let found = store.owned(&id_of(m), likes, 100).await.unwrap();
    let set: HashSet<Owned> = found.iter().cloned().collect();
    assert_eq!(set.len(), found.len(), "nothing twice: {found:?}");
    set
}

async fn a_session_epoch_starts_at_zero_and_advances_with_ended_sessions_and_a_changed_password(store: Dyn) {
    let kim = member("epoch");
    store.create_member(&kim, &hash("first"), None).await.unwrap();
    let (id, name) = (id_of(&kim), name_of(&kim));
    assert_eq!(store.session_epoch(&id, &name).await.unwrap(), Some(0));
    let credentials = store.member_credentials(&name).await.unwrap().unwrap();
    assert_eq!(credentials.session_epoch, 0);

    assert!(store.end_sessions(&id, &name).await.unwrap());
    assert_eq!(store.session_epoch(&id, &name).await.unwrap(), Some(1), "at once");
    assert!(store.change_password(&id, &name, &hash("second")).await.unwrap());
    assert_eq!(store.session_epoch(&id, &name).await.unwrap(), Some(2));
    let credentials = store.member_credentials(&name).await.unwrap().unwrap();
    assert_eq!(
        (credentials.password_hash.as_str(), credentials.session_epoch),
        ("second", 2)
    );
    assert_eq!(credentials.member, kim);

    // Another id under the username, or no such username: no account.
    let stranger = member_id();
    assert_eq!(store.session_epoch(&stranger, &name).await.unwrap(), None);
    assert!(!store.end_sessions(&stranger, &name).await.unwrap());
    assert!(!store.change_password(&stranger, &name, &hash("theirs")).await.unwrap());
    let nobody = username("nobody");
    assert_eq!(store.session_epoch(&id, &nobody).await.unwrap(), None);
    assert!(!store.end_sessions(&id, &nobody).await.unwrap());
    assert!(!store.change_password(&id, &nobody, &hash("x")).await.unwrap());
    let credentials = store.member_credentials(&name).await.unwrap().unwrap();
    assert_eq!(
        (credentials.password_hash.as_str(), credentials.session_epoch),
        ("second", 2),
        "nothing changed by the refused writes"
    );
}

async fn a_closed_account_is_unreadable_keeps_its_username_taken_is_recorded_and_loses_its_appointments(store: Dyn) {
    let (free, qna, notice) = (board("free"), board("qna"), board("notice"));
    let (kim, lee) = (member("closing"), member("staying"));
    for m in [&kim, &lee] {
        store.create_member(m, &hash("h"), None).await.unwrap();
    }
    let (id, name) = (id_of(&kim), name_of(&kim));
    for b in [&free, &qna] {
        let entry = log_entry(LogAction::AddModerator, member_target(&kim));
        assert!(store.add_moderator(b, &kim, &entry).await.unwrap());
    }
    let entry = log_entry(LogAction::AddModerator, member_target(&lee));
    assert!(store.add_moderator(&free, &lee, &entry).await.unwrap());
    let all = [free.clone(), qna.clone(), notice.clone()];
    assert_eq!(
        store.moderated_boards(&id, &all).await.unwrap(),
        vec![free.clone(), qna.clone()]
    );
    assert_eq!(store.moderated_boards(&id, &[]).await.unwrap(), vec![]);
    assert_eq!(store.moderated_boards(&member_id(), &all).await.unwrap(), vec![]);
    assert!(store.is_moderator(&qna, &id).await.unwrap());
    assert_eq!(store.session_epoch(&id, &name).await.unwrap(), Some(0));
    assert!(store.pending_deletions(10).await.unwrap().is_empty());

    assert!(
        !store.close_account(&member_id(), &name, true, &[]).await.unwrap(),
        "another id under the username: not this account"
    );
    assert!(
        store
            .close_account(&id, &name, true, &[free.clone(), qna.clone()])
            .await
            .unwrap()
    );
    assert_eq!(store.member_credentials(&name).await.unwrap(), None);
    assert_eq!(store.member_by_id(&id).await.unwrap(), None);
    assert_eq!(store.session_epoch(&id, &name).await.unwrap(), None, "at once");
    assert!(!store.end_sessions(&id, &name).await.unwrap());
    assert!(!store.change_password(&id, &name, &hash("new")).await.unwrap());
    assert!(
        !store
            .replace_password_hash(&name, &hash("h"), &hash("new"))
            .await
            .unwrap()
    );
    assert_eq!(
        store.create_member(&member("closing"), &hash("h2"), None).await,
        Err(StoreError::UsernameTaken),
        "the username stays taken"
    );
    assert_eq!(store.member_credentials(&name).await.unwrap(), None);
    assert_eq!(store.moderated_boards(&id, &all).await.unwrap(), vec![]);
    assert!(!store.is_moderator(&free, &id).await.unwrap());
    assert!(!store.is_moderator(&qna, &id).await.unwrap());
    assert_eq!(store.moderators(&free).await.unwrap(), vec![lee.clone()], "others stay");
    assert!(store.moderators(&qna).await.unwrap().is_empty());
    assert!(
        !store.close_account(&id, &name, true, &[]).await.unwrap(),
        "gone already"
    );

    // Another deletion, content kept: both pending, oldest first.
    let (lee_id, lee_name) = (id_of(&lee), name_of(&lee));
    assert!(
        store
            .close_account(&lee_id, &lee_name, false, std::slice::from_ref(&free))
            .await
            .unwrap()
    );
    assert!(store.moderators(&free).await.unwrap().is_empty());
    assert_eq!(
        store.pending_deletions(10).await.unwrap(),
        vec![
            PendingDeletion {
                member: id.clone(),
                delete_content: true
            },
            PendingDeletion {
                member: lee_id.clone(),
                delete_content: false
            },
        ]
    );
    assert_eq!(store.pending_deletions(1).await.unwrap().len(), 1);
    store.finish_deletion(&id).await.unwrap();
    store.finish_deletion(&id).await.unwrap();
    assert_eq!(
        store.pending_deletions(10).await.unwrap(),
        vec![PendingDeletion {
            member: lee_id,
            delete_content: false
        }]
    );
    assert_eq!(store.member_credentials(&lee_name).await.unwrap(), None);
}

async fn a_members_posts_and_comments_page_newest_first_across_boards_without_gaps_or_repeats(store: Dyn) {
    let (kim, other) = (member("lister"), member("other"));
    for m in [&kim, &other] {
        store.create_member(m, &hash("h"), None).await.unwrap();
    }
    let mut mine = Vec::new();
    for i in 0..7 {
        let slug = if i % 2 == 0 { "free" } else { "qna" };
        mine.push(post_by(&store, slug, &kim).await);
        // Others' and guests' posts in between.
        post_by(&store, slug, &other).await;
        guest_post(&store, slug).await;
    }
    // Counts show as on the board's listing.
    let counted = &mine[2];
    let counted_key = post_key("free", &counted.summary.id);
    store.like(&counted_key, &id_of(&other)).await.unwrap().unwrap();
    assert_eq!(views(&store, &counted_key).await, Some(1));

    let mut my_comments = Vec::new();
    for (i, p) in mine.iter().enumerate() {
        let slug = p.summary.board.clone();
        my_comments.push(comment_by(&store, &slug, &p.summary.id, &kim).await);
        comment_by(&store, &slug, &p.summary.id, &other).await;
        created_comment(&store, &slug, &p.summary.id, None).await;
        if i == 3 {
            // One on another member's post.
            let theirs = post_by(&store, "notice", &other).await;
            my_comments.push(comment_by(&store, "notice", &theirs.summary.id, &kim).await);
        }
    }

    let id = id_of(&kim);
    let (mut listed, mut sizes, mut cursor) = (Vec::new(), Vec::new(), None::<String>);
    loop {
        let page = store.member_posts(&id, limit(3), cursor.as_deref()).await.unwrap();
        sizes.push(page.posts.len());
        for summary in &page.posts {
            assert_eq!(summary.author, authored_by(&kim));
            if summary.id == counted.summary.id {
                assert_eq!(
                    (summary.view_count, summary.like_count, summary.comment_count),
                    (1, 1, 3),
                    "{summary:?}"
                );
            }
        }
        listed.extend(page.posts.into_iter().map(|s| (s.board, s.id)));
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
        assert!(sizes.len() < 10, "the pages end");
    }
    let newest_first: Vec<(String, String)> = mine
        .iter()
        .rev()
        .map(|p| (p.summary.board.clone(), p.summary.id.clone()))
        .collect();
    assert_eq!(sizes, vec![3, 3, 1]);
    assert_eq!(listed, newest_first, "newest first, across boards, each once");
    let all = store.member_posts(&id, limit(20), None).await.unwrap();
    assert_eq!(all.posts.len(), 7);
    assert_eq!(all.next_cursor, None);

    let (mut listed, mut sizes, mut cursor) = (Vec::new(), Vec::new(), None::<String>);
    loop {
        let page = store.member_comments(&id, limit(3), cursor.as_deref()).await.unwrap();
        sizes.push(page.comments.len());
        listed.extend(page.comments);
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
        assert!(sizes.len() < 10, "the pages end");
    }
    let newest_first: Vec<Comment> = my_comments.iter().rev().cloned().collect();
    assert_eq!(sizes, vec![3, 3, 2]);
    assert_eq!(listed, newest_first, "newest first, on every post, each once, whole");

    // Exactly a page: no cursor. Nobody's: empty.
    let exact = store.member_comments(&id, limit(8), None).await.unwrap();
    assert_eq!((exact.comments.len(), exact.next_cursor), (8, None));
    let stranger = member_id();
    assert!(
        store
            .member_posts(&stranger, limit(20), None)
            .await
            .unwrap()
            .posts
            .is_empty()
    );
    assert!(
        store
            .member_comments(&stranger, limit(20), None)
            .await
            .unwrap()
            .comments
            .is_empty()
    );
    assert_eq!(
        store
            .member_posts(&id, limit(3), Some("not a cursor"))
            .await
            .map(|_| ()),
        Err(StoreError::InvalidCursor)
    );
}

async fn owned_finds_a_members_posts_comments_and_likes_until_they_are_deleted_unliked_or_disowned(store: Dyn) {
    let (kim, other) = (member("owner"), member("someone"));
    for m in [&kim, &other] {
        store.create_member(m, &hash("h"), None).await.unwrap();
    }
    let (p1, p2, p3) = (
        post_by(&store, "free", &kim).await,
        post_by(&store, "qna", &kim).await,
        post_by(&store, "free", &kim).await,
    );
    let guest = guest_post(&store, "qna").await;
    let theirs = post_by(&store, "free", &other).await;
    let (gid, tid) = (guest.summary.id.clone(), theirs.summary.id.clone());
    let c1 = comment_by(&store, "free", &p1.summary.id, &kim).await;
    let c2 = comment_by(&store, "qna", &gid, &kim).await;
    let c3 = comment_by(&store, "free", &p3.summary.id, &kim).await;
    comment_by(&store, "free", &tid, &other).await;
    created_comment(&store, "free", &p1.summary.id, None).await;
    let id = id_of(&kim);
    for key in [post_key("qna", &gid), post_key("free", &p1.summary.id)] {
        store.like(&key, &id).await.unwrap().unwrap();
    }
    store
        .like(&post_key("free", &tid), &id_of(&other))
        .await
        .unwrap()
        .unwrap();

    let key_of = |p: &Post| post_key(&p.summary.board, &p.summary.id);
    let comment_of = |slug: &str, c: &Comment| Owned::Comment(comment_key(slug, &c.post_id, &c.id));
    let posts_and_comments: HashSet<Owned> = [
        Owned::Post(key_of(&p1)),
        Owned::Post(key_of(&p2)),
        Owned::Post(key_of(&p3)),
        comment_of("free", &c1),
        comment_of("qna", &c2),
        comment_of("free", &c3),
    ]
    .into();
    assert_eq!(owned_set(&store, &kim, false).await, posts_and_comments);
    let mut with_likes = posts_and_comments.clone();
    with_likes.insert(Owned::Like(post_key("qna", &gid)));
    with_likes.insert(Owned::Like(key_of(&p1)));
    assert_eq!(owned_set(&store, &kim, true).await, with_likes);
    let some = store.owned(&id, true, 2).await.unwrap();
    assert_eq!(some.len(), 2);
    assert!(some.iter().all(|o| with_likes.contains(o)));
    assert!(store.owned(&member_id(), true, 10).await.unwrap().is_empty());

    assert!(store.delete_post(&key_of(&p2)).await.unwrap());
    assert!(
        store
            .delete_comment(&comment_key("free", &p3.summary.id, &c3.id))
            .await
            .unwrap()
    );
    store.unlike(&key_of(&p1), &id).await.unwrap().unwrap();
    store
        .disown(&id, &[Owned::Post(key_of(&p3)), comment_of("free", &c1)])
        .await
        .unwrap();
    let left: HashSet<Owned> = [
        Owned::Post(key_of(&p1)),
        comment_of("qna", &c2),
        Owned::Like(post_key("qna", &gid)),
    ]
    .into();
    assert_eq!(owned_set(&store, &kim, true).await, left);
    // The other member's are untouched.
    assert_eq!(owned_set(&store, &other, true).await.len(), 3);
}

async fn disowned_posts_and_comments_show_a_deleted_member_and_keep_their_counts(store: Dyn) {
    let (kim, other) = (member("leaving"), member("stays"));
    for m in [&kim, &other] {
        store.create_member(m, &hash("h"), None).await.unwrap();
    }
    let p = post_by(&store, "free", &kim).await;
    let pid = p.summary.id.clone();
    let key = post_key("free", &pid);
    let mine = comment_by(&store, "free", &pid, &kim).await;
    let guests = created_comment(&store, "free", &pid, None).await;
    let theirs = post_by(&store, "free", &other).await;
    let their_comment = comment_by(&store, "free", &pid, &other).await;
    store.like(&key, &id_of(&other)).await.unwrap().unwrap();
    store.like(&key, &id_of(&kim)).await.unwrap().unwrap();
    assert_eq!(views(&store, &key).await, Some(1));
    let counts = |s: &PostSummary| (s.view_count, s.like_count, s.comment_count);
    let before = store.post_detail(&key).await.unwrap().unwrap();
    assert_eq!(counts(&before.post.summary), (1, 2, 3));

    let id = id_of(&kim);
    let items = [
        Owned::Post(key.clone()),
        Owned::Comment(comment_key("free", &pid, &mine.id)),
        Owned::Like(key.clone()),
        // Another member's: left as it is.
        Owned::Post(post_key("free", &theirs.summary.id)),
        Owned::Comment(comment_key("free", &pid, &their_comment.id)),
        // Gone: skipped.
        Owned::Post(post_key("free", &new_id())),
    ];
    store.disown(&id, &items).await.unwrap();
    store.disown(&id, &items).await.unwrap();

    let after = store.post_detail(&key).await.unwrap().unwrap();
    assert_eq!(after.post.summary.author, Author::deleted_member());
    assert_eq!(counts(&after.post.summary), (1, 2, 3), "the counts stay");
    assert_eq!(
        (&after.post.body, &after.post.summary.title),
        (&p.body, &p.summary.title)
    );
    let authors: Vec<(&str, &Author)> = after.comments.iter().map(|c| (c.id.as_str(), &c.author)).collect();
    assert_eq!(
        authors,
        vec![
            (mine.id.as_str(), &Author::deleted_member()),
            (guests.id.as_str(), &guests.author),
            (their_comment.id.as_str(), &authored_by(&other)),
        ]
    );
    assert_eq!(
        after.comments[0],
        Comment {
            author: Author::deleted_member(),
            ..mine.clone()
        }
    );
    let page = store.list_comments(&key, limit(10), None).await.unwrap().unwrap();
    assert_eq!(page.comments, after.comments);
    let viewed = store.view_post(&key).await.unwrap().unwrap();
    assert_eq!(viewed.post.summary.author, Author::deleted_member());
    let listed = store.list_posts(&board("free"), limit(20), None).await.unwrap();
    let authors: Vec<(&str, &Author)> = listed.posts.iter().map(|s| (s.id.as_str(), &s.author)).collect();
    assert_eq!(
        authors,
        vec![
            (theirs.summary.id.as_str(), &authored_by(&other)),
            (pid.as_str(), &Author::deleted_member()),
        ]
    );
    assert_eq!(counts(&listed.posts[1]), (2, 2, 3));
    assert!(store.member_posts(&id, limit(20), None).await.unwrap().posts.is_empty());
    assert!(
        store
            .member_comments(&id, limit(20), None)
            .await
            .unwrap()
            .comments
            .is_empty()
    );
    assert_eq!(
        store
            .member_posts(&id_of(&other), limit(20), None)
            .await
            .unwrap()
            .posts
            .len(),
        1
    );
    assert!(
        store.has_liked(&key.post, &id).await.unwrap(),
        "likes are left as they are"
    );
    assert!(store.disown(&id, &[]).await.is_ok());
    // (v4) Nothing ties what a deleted account left to an address any more;
    // what was not disowned keeps its keys.
    let guard = store.post_guard(&key).await.unwrap().unwrap();
    assert_eq!((guard.writer, guard.writer_range), (None, None));
    let guard = store
        .comment_guard(&comment_key("free", &pid, &mine.id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((guard.writer, guard.writer_range), (None, None));
    let kept = store
        .post_guard(&post_key("free", &theirs.summary.id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (kept.writer, kept.writer_range),
        (Some(writer().key), Some(writer().range))
    );
}

/// (v4) A ban with a second subject (guest writes from where a banned
/// member's post was written) is found by either, goes with its unban, and
/// a ban of the same member that replaces it takes its second subject along.
async fn a_bans_second_subject_is_found_with_it_lifted_with_it_and_replaced_with_it(store: Dyn) {
    let free = board("free");
    let lee = member_subject();
    let (home, elsewhere) = (
        BanSubject::GuestAddress(WriterKey::new("homeaddresskey".into())),
        BanSubject::GuestRange(WriterKey::new("elsewhererangekey".into())),
    );
    let found = |subjects: Vec<BanSubject>| {
        let store = store.clone();
        async move { store.active_ban(&board("free"), &subjects, NOW).await.unwrap() }
    };
    let first = BanRecord {
        also: Some(home.clone()),
        ..ban_of("free", &lee, None)
    };
    banned(&store, &first).await;
    assert_eq!(
        found(vec![home.clone()]).await,
        Some(first.clone()),
        "by its second subject"
    );
    assert_eq!(found(vec![lee.clone()]).await, Some(first.clone()));
    assert_eq!(
        store.ban_by_id(&free, &ban_id(&first)).await.unwrap(),
        Some(first.clone())
    );
    assert_eq!(
        store
            .active_ban(&board("qna"), std::slice::from_ref(&home), NOW)
            .await
            .unwrap(),
        None,
        "another board"
    );

    // Banned again through another post: the first one's second subject goes.
    let second = BanRecord {
        also: Some(elsewhere.clone()),
        ..ban_of("free", &lee, None)
    };
    banned(&store, &second).await;
    assert_eq!(found(vec![home.clone()]).await, None, "replaced with the ban");
    assert_eq!(found(vec![elsewhere.clone()]).await, Some(second.clone()));
    assert_eq!(
        store.list_bans(&free, limit(10), None, NOW).await.unwrap().bans,
        vec![second.ban.clone()]
    );

    let entry = log_entry(LogAction::Unban, second.ban.target.clone().into());
    assert!(store.unban(&second, &entry).await.unwrap());
    assert_eq!(found(vec![elsewhere, lee]).await, None, "lifted with the ban");
}

/// DynamoDB only: a v2 table's member posts, comments and likes (written
/// before `ByOwner`: no `owner`, likes no `board`) are indexed by the
/// backfill once, however often it runs; guests' items and a disowned
/// comment are left out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_backfill_indexes_a_v2_tables_member_posts_comments_and_likes_once() {
    use aws_sdk_dynamodb::types::AttributeValue;
    let table = format!("test-{}", new_id().to_lowercase());
    let client = plain_client().await;
    let concrete = DynamoStore::with_client(client.clone(), &table, true).await.unwrap();
    let store: Dyn = Arc::new(DynamoStore::with_client(client.clone(), &table, false).await.unwrap());
    let (kim, other) = (member("backfilled"), member("liker"));
    for m in [&kim, &other] {
        store.create_member(m, &hash("h"), None).await.unwrap();
    }
    let id = id_of(&kim);
    let p = post_by(&store, "free", &kim).await;
    let g = guest_post(&store, "qna").await;
    let (pid, gid) = (p.summary.id.clone(), g.summary.id.clone());
    let c = comment_by(&store, "qna", &gid, &kim).await;
    let gone = comment_by(&store, "free", &pid, &kim).await;
    store
        .disown(&id, &[Owned::Comment(comment_key("free", &pid, &gone.id))])
        .await
        .unwrap();
    created_comment(&store, "free", &pid, None).await;
    store.like(&post_key("qna", &gid), &id).await.unwrap().unwrap();
    store
        .like(&post_key("free", &pid), &id_of(&other))
        .await
        .unwrap()
        .unwrap();

    // Back to the v2 layout: no item has `owner`, no like `board`.
    let text = |v: &str| AttributeValue::S(v.to_owned());
    let indexed = client
        .scan()
        .table_name(&table)
        .filter_expression("attribute_exists(#owner)")
        .expression_attribute_names("#owner", "owner")
        .send()
        .await
        .unwrap();
    assert_eq!(indexed.items().len(), 4, "{:?}", indexed.items());
    for item in indexed.items() {
        let pk = item["PK"].as_s().unwrap();
        let remove = if pk.starts_with("LIKES#") {
            "REMOVE #owner, owner_sk, board"
        } else {
            "REMOVE #owner, owner_sk"
        };
        client
            .update_item()
            .table_name(&table)
            .key("PK", text(pk))
            .key("SK", item["SK"].clone())
            .update_expression(remove)
            .expression_attribute_names("#owner", "owner")
            .send()
            .await
            .unwrap();
    }
    assert!(store.owned(&id, true, 100).await.unwrap().is_empty());
    assert!(store.member_posts(&id, limit(20), None).await.unwrap().posts.is_empty());

    let done = concrete.backfill().await.unwrap();
    assert_eq!(
        (done.posts_owned, done.comments_owned, done.likes_owned),
        (1, 1, 2),
        "{done:?}"
    );
    let expected: HashSet<Owned> = [
        Owned::Post(post_key("free", &pid)),
        Owned::Comment(comment_key("qna", &gid, &c.id)),
        Owned::Like(post_key("qna", &gid)),
    ]
    .into();
    assert_eq!(owned_set(&store, &kim, true).await, expected);
    assert_eq!(owned_set(&store, &other, true).await.len(), 1);
    let posts = store.member_posts(&id, limit(20), None).await.unwrap();
    assert_eq!(
        posts.posts.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        [pid.as_str()]
    );
    assert_eq!(
        store.member_comments(&id, limit(20), None).await.unwrap().comments,
        vec![c]
    );

    let again = concrete.backfill().await.unwrap();
    assert_eq!(
        (again.posts_owned, again.comments_owned, again.likes_owned),
        (0, 0, 0),
        "{again:?}"
    );
    // A like indexed by the backfill is withdrawn by its post's key, and leaves the index.
    assert_eq!(
        store
            .unlike(&post_key("qna", &gid), &id)
            .await
            .unwrap()
            .unwrap()
            .like_count,
        0
    );
    assert_eq!(owned_set(&store, &kim, true).await.len(), 2);
}

/// DynamoDB only (docs/storage.md, Accounts): the requests and units of
/// every account operation, small items, default layout (16 shards, cache
/// off). Prints the table docs/storage.md shows; pins the request counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_account_operation_costs_a_fixed_number_of_dynamodb_requests() {
    let (dynamo, counter, meter) = metered_dynamo_store(Layout::default()).await;
    let store: Dyn = dynamo.clone();
    let (free, qna, notice) = (board("free"), board("qna"), board("notice"));
    let mut rows: Vec<(&str, u64, f64, f64, String)> = Vec::new();
    macro_rules! measure {
        ($what:expr, $requests:pat, $work:expr) => {{
            meter.take();
            let before = counter.count();
            let out = $work;
            let requests = counter.count() - before;
            let units = meter.take();
            let indexes = units
                .indexes
                .iter()
                .map(|(name, u)| format!("{name} {} / {}", u.read, u.write))
                .collect::<Vec<_>>()
                .join(", ");
            rows.push(($what, requests, units.table.read, units.table.write, indexes));
            assert!(matches!(requests, $requests), "{}: {requests} requests", $what);
            out
        }};
    }
    let (kim, other) = (member("measured"), member("other"));
    for m in [&kim, &other] {
        store.create_member(m, &hash("h"), None).await.unwrap();
    }
    let (id, name) = (id_of(&kim), name_of(&kim));
    measure!("session_epoch, uncached (GetItem, consistent, 3 attributes)", 1, {
        assert_eq!(store.session_epoch(&id, &name).await.unwrap(), Some(0))
    });
    measure!("session_epoch, cached (10 s)", 0, {
        assert_eq!(store.session_epoch(&id, &name).await.unwrap(), Some(0))
    });
    measure!("end_sessions (UpdateItem)", 1, {
        assert!(store.end_sessions(&id, &name).await.unwrap())
    });
    measure!("change_password (UpdateItem)", 1, {
        assert!(store.change_password(&id, &name, &hash("h2")).await.unwrap())
    });

    // What ByOwner adds to a member's writes (guests' write nothing to it).
    let first = measure!(
        "a member's post (conditional PutItem; + ByOwner entry)",
        1,
        post_by(&store, "notice", &kim).await
    );
    let key = post_key("notice", &first.summary.id);
    // The like's shard (by member) exists; the comment's (by comment id)
    // may not: its first write creates it (2 more requests).
    store.like(&key, &id).await.unwrap().unwrap();
    store.unlike(&key, &id).await.unwrap().unwrap();
    measure!(
        "a member's comment (transaction: comment, shard; + ByOwner entry)",
        1 | 3,
        comment_by(&store, "notice", &first.summary.id, &kim).await
    );
    let liked = measure!(
        "like (transaction: like item, shard; BatchGetItem of the shards; + ByOwner entry)",
        2,
        store.like(&key, &id).await.unwrap().unwrap()
    );
    assert!(liked.liked);
    // DynamoDB Local reports its flat 4 WCU of a transaction on the index too.
    let indexes = rows.last().map(|r| r.4.clone()).unwrap_or_default();
    assert!(
        indexes.starts_with("ByOwner 0 / ") && !indexes.contains(','),
        "a like writes a ByOwner entry and no other index: {indexes}"
    );
    measure!(
        "unlike (transaction; BatchGetItem; - ByOwner entry)",
        2,
        store.unlike(&key, &id).await.unwrap().unwrap()
    );
    measure!(
        "a guest's post (PutItem; no ByOwner entry)",
        1,
        guest_post(&store, "notice").await
    );
    assert!(
        rows.last().is_some_and(|r| !r.4.contains("ByOwner")),
        "{:?}",
        rows.last()
    );

    // 20 posts on two boards, each viewed once (one shard each), and 25
    // comments, others' in between; then some likes.
    let mut mine = Vec::new();
    for i in 0..20 {
        let slug = if i % 2 == 0 { "free" } else { "qna" };
        let p = post_by(&store, slug, &kim).await;
        post_by(&store, slug, &other).await;
        views(&store, &post_key(slug, &p.summary.id)).await.unwrap();
        mine.push(p);
    }
    let mut my_comments = Vec::new();
    for i in 0..25 {
        let p = &mine[i % mine.len()];
        my_comments.push(comment_by(&store, &p.summary.board, &p.summary.id, &kim).await);
    }
    for p in mine.iter().take(5) {
        let key = post_key(&p.summary.board, &p.summary.id);
        store.like(&key, &id).await.unwrap().unwrap();
    }
    let page = measure!(
        "member_posts, a page of 20 on 2 boards (ByOwner Query; shards by key: 2 BatchGetItems per board)",
        5,
        store.member_posts(&id, limit(20), None).await.unwrap()
    );
    assert_eq!(page.posts.len(), 20);
    assert!(page.posts.iter().all(|s| s.view_count == 1));
    let comments = measure!(
        "member_comments, a page of 20 (ByOwner Query; BatchGetItem of the comments)",
        2,
        store.member_comments(&id, limit(20), None).await.unwrap()
    );
    assert_eq!(comments.comments.len(), 20);
    let batch = measure!(
        "owned, likes too, a batch of 25 (ByOwner Query, descending: posts, likes, comments)",
        1,
        store.owned(&id, true, 25).await.unwrap()
    );
    assert_eq!(batch.len(), 25);
    measure!(
        "owned, no likes, a batch of 30 (ByOwner Queries: the posts, then the comments)",
        2,
        assert_eq!(store.owned(&id, false, 30).await.unwrap().len(), 30)
    );
    let posts_and_comments: Vec<Owned> = mine
        .iter()
        .take(12)
        .map(|p| Owned::Post(post_key(&p.summary.board, &p.summary.id)))
        .chain(my_comments.iter().take(13).map(|c| {
            let slug = &mine.iter().find(|p| p.summary.id == c.post_id).unwrap().summary.board;
            Owned::Comment(comment_key(slug, &c.post_id, &c.id))
        }))
        .collect();
    measure!(
        "disown, 25: 12 posts, 13 comments (UpdateItem each, 8 at a time)",
        25,
        store.disown(&id, &posts_and_comments).await.unwrap()
    );

    let entry = log_entry(LogAction::AddModerator, member_target(&kim));
    store.add_moderator(&free, &kim, &entry).await.unwrap();
    let all = [free.clone(), qna.clone(), notice.clone()];
    let moderates = measure!(
        "moderated_boards, 3 boards, 1 appointment (BatchGetItem, consistent)",
        1,
        store.moderated_boards(&id, &all).await.unwrap()
    );
    assert_eq!(moderates, vec![free.clone()]);
    measure!(
        "close_account, 1 appointment (transaction: tombstone, record, appointment)",
        1,
        assert!(store.close_account(&id, &name, true, &moderates).await.unwrap())
    );
    measure!("pending_deletions (Query)", 1, {
        assert_eq!(store.pending_deletions(10).await.unwrap().len(), 1)
    });
    measure!(
        "finish_deletion (DeleteItem)",
        1,
        store.finish_deletion(&id).await.unwrap()
    );

    println!("| operation | requests | table RCU | table WCU | index RCU / WCU |\n|---|---:|---:|---:|---|");
    for (what, requests, read, write, indexes) in &rows {
        println!("| {what} | {requests} | {read} | {write} | {indexes} |");
    }
}

/// DynamoDB only (docs/storage.md, Accounts): why `ByOwner` projects the
/// summary fields (INCLUDE) and not only its keys. The same member's 21
/// posts and 21 comments go to two tables, one with the index as declared,
/// one with it KEYS_ONLY; a page of 20 then reads, on the first, the index
/// (and, for comments, a BatchGetItem of their bodies: the index holds
/// none); on the second the index and a BatchGetItem of every item of the
/// page. Small items and the largest the API takes. Counter shards are left
/// out: the same both ways.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_index_pages_cost_fewer_read_units_than_a_keys_only_index_and_batch_gets() {
    use aws_sdk_dynamodb::types::{
        AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, KeysAndAttributes,
        Projection, ProjectionType, ReturnConsumedCapacity, ScalarAttributeType,
    };
    let client = plain_client().await;
    let def = shared::store::dynamo::schema::TableDefinition::load();
    let keys = |elements: &[shared::store::dynamo::schema::KeyElement]| -> Vec<KeySchemaElement> {
        elements
            .iter()
            .map(|k| {
                KeySchemaElement::builder()
                    .attribute_name(&k.attribute_name)
                    .key_type(KeyType::from(k.key_type.as_str()))
                    .build()
                    .unwrap()
            })
            .collect()
    };
    let keys_only = format!("test-{}", new_id().to_lowercase());
    let mut create = client
        .create_table()
        .table_name(&keys_only)
        .set_key_schema(Some(keys(&def.key_schema)))
        .billing_mode(BillingMode::PayPerRequest);
    for a in &def.attribute_definitions {
        create = create.attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name(&a.attribute_name)
                .attribute_type(ScalarAttributeType::from(a.attribute_type.as_str()))
                .build()
                .unwrap(),
        );
    }
    for index in &def.global_secondary_indexes {
        let projection = if index.index_name == "ByOwner" {
            Projection::builder().projection_type(ProjectionType::KeysOnly).build()
        } else {
            Projection::builder()
                .projection_type(ProjectionType::from(index.projection.projection_type.as_str()))
                .set_non_key_attributes(
                    (!index.projection.non_key_attributes.is_empty())
                        .then(|| index.projection.non_key_attributes.clone()),
                )
                .build()
        };
        create = create.global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name(&index.index_name)
                .set_key_schema(Some(keys(&index.key_schema)))
                .projection(projection)
                .build()
                .unwrap(),
        );
    }
    create.send().await.unwrap();

    let (included, counter, meter) = metered_dynamo_store(Layout::default()).await;
    let included: Dyn = included;
    let plain: Dyn = Arc::new(
        DynamoStore::with_client(client.clone(), &keys_only, false)
            .await
            .unwrap(),
    );
    // What the KEYS_ONLY table's page costs: its index Query, then the items.
    let keys_only_page = |prefix: &'static str, member: String, n: usize| {
        let (client, table) = (client.clone(), keys_only.clone());
        async move {
            let out = client
                .query()
                .table_name(&table)
                .index_name("ByOwner")
                .key_condition_expression("#owner = :owner AND begins_with(owner_sk, :prefix)")
                .expression_attribute_names("#owner", "owner")
                .expression_attribute_values(":owner", aws_sdk_dynamodb::types::AttributeValue::S(member))
                .expression_attribute_values(":prefix", aws_sdk_dynamodb::types::AttributeValue::S(prefix.into()))
                .scan_index_forward(false)
                .limit(i32::try_from(n + 1).unwrap())
                .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
                .send()
                .await
                .unwrap();
            let index: f64 = out
                .consumed_capacity()
                .and_then(|c| c.global_secondary_indexes())
                .and_then(|i| i.get("ByOwner"))
                .and_then(|c| c.read_capacity_units().or(c.capacity_units()))
                .unwrap_or(0.0);
            let page: Vec<_> = out
                .items()
                .iter()
                .take(n)
                .map(|item| {
                    [("PK", item["PK"].clone()), ("SK", item["SK"].clone())]
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect()
                })
                .collect();
            let got = client
                .batch_get_item()
                .request_items(
                    &table,
                    KeysAndAttributes::builder().set_keys(Some(page)).build().unwrap(),
                )
                .return_consumed_capacity(ReturnConsumedCapacity::Total)
                .send()
                .await
                .unwrap();
            let items: f64 = got.consumed_capacity().iter().filter_map(|c| c.capacity_units()).sum();
            (index, items, got.responses().map_or(0, |r| r[&table].len()))
        }
    };
    let mut rows = Vec::new();
    for (size, title, body, comment_body) in [
        (
            "small",
            "a title".to_owned(),
            "a body".to_owned(),
            "a comment".to_owned(),
        ),
        ("largest", "제".repeat(200), "한".repeat(20_000), "말".repeat(2_000)),
    ] {
        let kim = member(&format!("projected-{size}"));
        for _ in 0..21 {
            let p = Post {
                body: body.clone(),
                ..post("free", &title, authored_by(&kim))
            };
            let c = Comment {
                author: authored_by(&kim),
                ..comment(&p.summary.id, None, &comment_body)
            };
            for store in [&included, &plain] {
                store.create_post(&p, &writer(), None, None).await.unwrap();
                store
                    .create_comment(&board("free"), &c, &writer(), None, None)
                    .await
                    .unwrap();
            }
        }
        // What one post's create writes to the index.
        meter.take();
        let p = Post {
            body: body.clone(),
            ..post("qna", &title, authored_by(&kim))
        };
        included.create_post(&p, &writer(), None, None).await.unwrap();
        let create = meter.take().indexes.get("ByOwner").map_or(0.0, |u| u.write);
        included.delete_post(&post_key("qna", &p.summary.id)).await.unwrap();

        let id = id_of(&kim);
        meter.take();
        let before = counter.count();
        let page = included.member_posts(&id, limit(20), None).await.unwrap();
        let posts = meter.take();
        let posts_requests = counter.count() - before;
        // DynamoDB Local cuts an index Query at 1 MB of the whole items
        // (18 of the largest posts), not of the index entries (21 of them
        // are 20 KB) as DynamoDB does: the page then ends early, with a
        // cursor, and the next page goes on from it.
        let shown = page.posts.len();
        assert!(shown == 20 || (size == "largest" && shown >= 16), "{size}: {shown}");
        let rest = included
            .member_posts(&id, limit(20), page.next_cursor.as_deref())
            .await
            .unwrap();
        let listed: HashSet<String> = page.posts.iter().chain(&rest.posts).map(|s| s.id.clone()).collect();
        assert_eq!(
            (listed.len(), page.posts.len() + rest.posts.len()),
            (21, 21),
            "{size}: no gaps, no repeats"
        );
        let posts_index = posts.indexes.get("ByOwner").map_or(0.0, |u| u.read);
        meter.take();
        let page = included.member_comments(&id, limit(20), None).await.unwrap();
        let comments = meter.take();
        let comments_shown = page.comments.len();
        assert!(comments_shown == 20 || size == "largest", "{size}: {comments_shown}");
        let comments_index = comments.indexes.get("ByOwner").map_or(0.0, |u| u.read);
        let (ko_posts_index, ko_posts_items, found) = keys_only_page("POST#", kim.id.clone(), shown).await;
        assert_eq!(found, shown);
        let (ko_comments_index, ko_comments_items, found) =
            keys_only_page("COMMENT#", kim.id.clone(), comments_shown).await;
        assert_eq!(found, comments_shown);
        rows.push(format!(
            "| {shown} posts, {size} | INCLUDE: index {posts_index} RCU (then the shards: {} RCU, {posts_requests} requests in all) \
             | KEYS_ONLY: index {ko_posts_index} + items {ko_posts_items} RCU | index WCU per create: {create} |",
            posts.table.read
        ));
        rows.push(format!(
            "| {comments_shown} comments, {size} | INCLUDE: index {comments_index} + bodies {} RCU \
             | KEYS_ONLY: index {ko_comments_index} + items {ko_comments_items} RCU | |",
            comments.table.read
        ));
        assert!(
            posts_index < ko_posts_index + ko_posts_items,
            "{size}: INCLUDE {posts_index}, KEYS_ONLY {ko_posts_index} + {ko_posts_items}"
        );
        assert!(
            comments_index + comments.table.read <= ko_comments_index + ko_comments_items + 1.0,
            "{size}: comments cost about the same both ways"
        );
    }
    println!("a member's page of 20, eventually consistent reads, DynamoDB Local:");
    for row in rows {
        println!("{row}");
    }
}
