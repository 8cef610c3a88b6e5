//! The router's state without a socket: a fresh SQLite store, cheap peppered
//! tiers, one member with a bearer token and one seeded post on `free`. Shared
//! by the tests that call the router directly (API Gateway events, fuzzing).

use shared::domain::{Author, Member, PasswordHash, Post, PostSummary, now};
use shared::http::AppState;
use shared::runtime::{Config, Deployment, Env};

pub const POST_ID: &str = "01JD3Z8Q6W4G7T2N5B8K1M0XYZ";

#[derive(Debug)]
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
    let data_dir = dir.path().display().to_string();
    let settings = [
        ("DATA_DIR", data_dir.as_str()),
        ("PEPPER", "fixture-pepper-0123456789abcdefghijklmn"),
        ("JWT_SECRET", "fixture-jwt-secret-0123456789abcdefghij"),
        ("MEMBER_TIER", "bcrypt:4"),
        ("GUEST_TIER", "bcrypt:4"),
        ("HASH_FLOOR_OVERRIDE", "1"),
        // The router fuzz sends X-Forwarded-For as if through a proxy here.
        ("TRUSTED_PROXIES", "127.0.0.1/32"),
        // The fuzz writes as guests far past the free writes.
        ("POW", "off"),
    ];
    let config = Config::from(Deployment::Server, &Env::from_pairs(&settings)).unwrap();
    let state = shared::runtime::build(config).await.unwrap();
    let now_secs = shared::app::throttle::unix_now() as u64;
    let token = state.app.tokens().unwrap().issue(&member(), 0, now_secs).unwrap();
    // A token works while its member's session does: the member exists.
    state
        .app
        .store()
        .create_member(&member(), &PasswordHash::new("not a hash".into()), None)
        .await
        .unwrap();
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
            number: crate::unique_number(),
            category: None,
            dislike_count: Some(0),
            best: false,
            media_count: 0,
        },
        body: "seeded body".into(),
        updated_at: now(),
        revision_count: 0,
        media: Vec::new(),
    };
    let guest_hash = guest_hash.map(|h| PasswordHash::new(h.to_owned()));
    state
        .app
        .store()
        .create_post(
            &post,
            &shared::domain::Writer {
                key: shared::domain::WriterKey::new("testwriter".into()),
                range: shared::domain::WriterKey::new("testrange".into()),
            },
            guest_hash.as_ref(),
            None,
        )
        .await
        .unwrap();
    Harness {
        state,
        token,
        _dir: dir,
    }
}
