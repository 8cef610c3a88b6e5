//! The router's state without a socket: a fresh SQLite store, cheap peppered
//! tiers, one member with a bearer token and one seeded post on `free`. Shared
//! by the tests that call the router directly (API Gateway events, fuzzing).

use std::sync::Arc;

use shared::domain::{Author, Member, Post, PostSummary, now};
use shared::hashing::{Hashing, HashingConfig};
use shared::http::auth::JwtKeys;
use shared::http::{AppState, HttpConfig};
use shared::store::sqlite::SqliteStore;

pub const POST_ID: &str = "01JD3Z8Q6W4G7T2N5B8K1M0XYZ";

pub struct Harness {
    pub state: AppState,
    /// A bearer token of [`member`].
    pub token: String,
    _dir: tempfile::TempDir,
}

pub fn member() -> Member {
    Member {
        id: "01JD3Z8Q6W4G7T2N5B8K1M0AAA".into(),
        username: "fixture_author".into(),
        nickname: "Author".into(),
        created_at: now(),
    }
}

/// The state with post [`POST_ID`] written by `author` (with `guest_hash` for a guest).
pub async fn harness(author: Author, guest_hash: Option<&str>) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(&dir.path().join("db.sqlite3")).unwrap());
    let hashing = Hashing::new(
        HashingConfig::from_lookup(|name| match name {
            "PEPPER" => Some("fixture-pepper-0123456789abcdefghijklmn".into()),
            "MEMBER_TIER" | "GUEST_TIER" => Some("bcrypt:4".into()),
            _ => None,
        })
        .unwrap(),
    )
    .unwrap();
    let jwt = JwtKeys::new(&"fixture-jwt-secret-0123456789abcdefghij".to_owned().into()).unwrap();
    let token = jwt.issue(&member(), shared::http::throttle::unix_now() as u64).unwrap();
    let state = AppState::new(store, hashing, jwt, HttpConfig::default());
    let post = Post {
        summary: PostSummary {
            id: POST_ID.into(),
            board: "free".into(),
            title: "Seeded".into(),
            author,
            created_at: now(),
            view_count: 0,
            like_count: 0,
            comment_count: 0,
        },
        body: "seeded body".into(),
        updated_at: now(),
    };
    state.store.create_post(&post, guest_hash).await.unwrap();
    Harness {
        state,
        token,
        _dir: dir,
    }
}
