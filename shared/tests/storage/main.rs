//! The storage conformance suite: every test runs against both adapters, the
//! embedded SQLite file and DynamoDB Local (started by `scripts/test-all`; the
//! DynamoDB tests fail, never skip, without `DYNAMODB_ENDPOINT`). Each test
//! gets its own SQLite file or DynamoDB table, so they run in parallel.
//!
//! One file per port (and `dynamo/` for what only the DynamoDB adapter has);
//! the helpers every file uses are here.

use std::sync::Arc;

use futures::future::join_all;
use shared::domain::{
    Author, BoardSlug, Boards, Comment, CommentId, CommentKey, Guard, Member, MemberId, PageLimit, PasswordHash, Post,
    PostBody, PostId, PostKey, PostSummary, Title, Username, Writer, WriterKey, new_id, now,
};
use shared::store::dynamo::{DynamoStore, SdkTuning};
use shared::store::sqlite::SqliteStore;
use shared::store::{AttemptKey, PendingPurge, PostEdit, Store};

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

/// Runs each named `async fn(Dyn)` of the calling module as two tests,
/// `sqlite::name` and `dynamodb::name`, each on a store of its own.
macro_rules! conformance {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    super::$name(crate::sqlite().store).await
                }
            )*
        }
        mod dynamodb {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    super::$name(crate::dynamodb().await.store).await
                }
            )*
        }
    };
}

mod accounts;
mod attempts;
mod boards;
mod challenges;
mod comments;
mod dynamo;
mod idempotency;
mod locks;
mod media;
mod members;
mod moderation;
mod notifications;
mod posts;
mod revisions;
mod second_factors;
mod views;
mod votes;

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

/// Step 2 of every post delete so far, as the purge function or the
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
        category: None,
        title: Title::parse(title.to_owned()).unwrap(),
        body: PostBody::parse(body.to_owned()).unwrap(),
        updated_at: updated_at.to_owned(),
        if_version: None,
        media: None,
        unless_answered: false,
    }
}

/// Every kept revision of the post, newest first; `None` when there is no such post.
async fn all_revisions(store: &Dyn, key: &PostKey) -> Option<Vec<shared::domain::Revision>> {
    let limit = PageLimit::parse(None, shared::domain::MAX_REVISIONS as usize).unwrap();
    store
        .revisions(key, limit, None)
        .await
        .unwrap()
        .map(|page| page.revisions)
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
            number: test_support::unique_number(),
            category: None,
            dislike_count: Some(0),
            best: false,
            media_count: 0,
        },
        body: format!("body of {title}"),
        updated_at: at,
        revision_count: 0,
        media: Vec::new(),
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
        media: Vec::new(),
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
            tokio::spawn(async move { store.create_comment(&b, &c, &writer(), None, false, None).await })
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

const NOW: i64 = 1_900_000_000;

fn id_of(m: &Member) -> MemberId {
    MemberId::parse(&m.id).unwrap()
}

async fn created_comment(store: &Dyn, board_slug: &str, post_id: &str, parent: Option<&str>) -> Comment {
    let c = comment(post_id, parent, "a comment");
    store
        .create_comment(&board(board_slug), &c, &writer(), None, false, None)
        .await
        .unwrap();
    c
}

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
        .create_comment(&board(board_slug), &c, &writer(), None, false, None)
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
