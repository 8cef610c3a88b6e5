//! The application's rules without HTTP: use cases called with typed
//! commands on a fresh SQLite store in a temp dir, built by the same wiring
//! as every deployment (docs/DESIGN.md, Layout). Authorization, throttling,
//! hashing and rehash are decided here, so they are tested here.

use shared::app::guest::{GuestEdit, GuestPost, GuestProof};
use shared::app::posts::{EditPost, WritePost};
use shared::app::sessions::LogIn;
use shared::app::signup::SignUp;
use shared::app::{App, ClientAddress, SignedIn};
use shared::domain::{Nickname, Password, PostBody, PostId, PostKey, Title, Username};
use shared::error::ApiError;
use shared::runtime::{Config, Deployment, Env};

struct TestApp {
    app: App,
    _dir: tempfile::TempDir,
}

async fn app_with(settings: &[(&str, &str)]) -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().display().to_string();
    let mut all = vec![
        ("DATA_DIR", data_dir.as_str()),
        ("PEPPER", "app-test-pepper-0123456789abcdefghijklmn"),
        ("JWT_SECRET", "app-test-jwt-secret-0123456789abcdefghij"),
        ("MEMBER_TIER", "bcrypt:4"),
        ("GUEST_TIER", "bcrypt:4"),
        ("POW", "off"),
        ("HASH_FLOOR_OVERRIDE", "1"),
    ];
    for (name, value) in settings {
        all.retain(|(n, _)| n != name);
        all.push((name, value));
    }
    let config = Config::from(Deployment::Server, &Env::from_pairs(&all)).unwrap();
    let state = shared::runtime::build(config).await.unwrap();
    TestApp {
        app: state.app.clone(),
        _dir: dir,
    }
}

async fn app() -> TestApp {
    app_with(&[]).await
}

fn client(address: &str) -> ClientAddress {
    ClientAddress(address.to_owned())
}

fn username(name: &str) -> Username {
    Username::parse(name.to_owned()).unwrap()
}

fn hashes_run(app: &App) -> u64 {
    app.hashing().unwrap().runs()
}

impl TestApp {
    async fn member(&self, name: &str) -> SignedIn {
        let member = self
            .app
            .sign_up(SignUp {
                idempotency: None,
                admin_enroll_token: None,
                username: username(name),
                password: Password::member("password-123".into()).unwrap(),
                nickname: Nickname::parse(name.to_owned()).unwrap(),
                client: client("192.0.2.1"),
                pow: None,
            })
            .await
            .unwrap()
            .into_created()
            .unwrap();
        let session = self.log_in(name, "password-123", "192.0.2.1").await.unwrap();
        assert_eq!(session.member, member);
        self.app.verify_token(&session.token).unwrap()
    }

    async fn log_in(
        &self,
        name: &str,
        password: &str,
        address: &str,
    ) -> Result<shared::app::sessions::Session, ApiError> {
        self.app
            .log_in(LogIn {
                username: username(name),
                password: Password::attempt(password.to_owned()).unwrap(),
                totp: None,
                client: client(address),
            })
            .await
    }

    async fn member_post(&self, member: &SignedIn) -> PostKey {
        let board = self.app.boards.resolve("free").unwrap();
        let post = self
            .app
            .create_member_post(
                member,
                WritePost {
                    category: None,
                    idempotency: None,
                    client: client("192.0.2.1"),
                    board: board.clone(),
                    title: Title::parse("mine".into()).unwrap(),
                    body: PostBody::parse("body".into()).unwrap(),
                    media: Default::default(),
                },
            )
            .await
            .unwrap()
            .into_created()
            .unwrap();
        PostKey {
            board,
            post: PostId::parse(&post.post.summary.id).unwrap(),
        }
    }

    async fn guest_post(&self, password: &str) -> PostKey {
        let detail = self
            .app
            .create_guest_post(GuestPost {
                category: None,
                idempotency: None,
                client: client("192.0.2.1"),
                board: self.app.boards.resolve("free").unwrap(),
                nickname: Nickname::parse("guest".into()).unwrap(),
                password: Password::guest(password.to_owned()).unwrap(),
                title: Title::parse("hello".into()).unwrap(),
                body: PostBody::parse("from a guest".into()).unwrap(),
                pow: None,
                media: Default::default(),
            })
            .await
            .unwrap()
            .into_created()
            .unwrap();
        PostKey {
            board: self.app.boards.resolve("free").unwrap(),
            post: PostId::parse(&detail.post.summary.id).unwrap(),
        }
    }

    async fn edit_as_guest(&self, key: &PostKey, password: &str, address: &str) -> Result<String, ApiError> {
        self.app
            .update_guest_post(GuestEdit {
                category: None,
                key: key.clone(),
                password: Password::guest(password.to_owned()).unwrap(),
                title: Title::parse("edited".into()).unwrap(),
                body: PostBody::parse("edited body".into()).unwrap(),
                client: client(address),
                if_match: None,
                media: None,
            })
            .await
            .map(|detail| detail.post.summary.title)
    }
}

#[tokio::test]
async fn a_member_signs_up_and_logs_in_and_a_wrong_password_is_invalid_credentials() {
    let t = app().await;
    let kim = t.member("kim").await;
    assert_eq!(kim.nickname, "kim");
    assert_eq!(
        t.log_in("kim", "password-124", "192.0.2.1").await.unwrap_err(),
        ApiError::InvalidCredentials { field: None }
    );
    assert_eq!(
        t.log_in("nobody", "password-123", "192.0.2.1").await.unwrap_err(),
        ApiError::InvalidCredentials { field: None },
        "an unknown username fails the same way"
    );
}

#[tokio::test]
async fn an_unknown_username_costs_a_verify_like_a_known_one() {
    let t = app().await;
    t.member("kim").await;
    let before = hashes_run(&t.app);
    let _ = t.log_in("kim", "wrong-password", "192.0.2.1").await;
    let known = hashes_run(&t.app) - before;
    let _ = t.log_in("nobody", "wrong-password", "192.0.2.1").await;
    let unknown = hashes_run(&t.app) - before - known;
    assert_eq!((known, unknown), (1, 1));
}

#[tokio::test]
async fn the_sixth_wrong_login_for_a_username_is_refused_before_any_hash() {
    let t = app().await;
    t.member("kim").await;
    for _ in 0..5 {
        assert_eq!(
            t.log_in("kim", "wrong-password", "192.0.2.1").await.unwrap_err(),
            ApiError::InvalidCredentials { field: None }
        );
    }
    let before = hashes_run(&t.app);
    let refused = t.log_in("kim", "password-123", "192.0.2.1").await.unwrap_err();
    assert!(matches!(refused, ApiError::TooManyAttempts { retry_after } if retry_after >= 1));
    assert_eq!(hashes_run(&t.app), before, "no hash ran");
}

#[tokio::test]
async fn a_login_under_a_stronger_member_policy_rehashes_the_stored_password() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().display().to_string();
    let old = app_with(&[("DATA_DIR", data_dir.as_str())]).await;
    old.member("kim").await;
    let stored = |app: &App| {
        let store = app.store().clone();
        async move {
            let c = store.member_credentials(&username("kim")).await.unwrap().unwrap();
            c.password_hash.as_str().to_owned()
        }
    };
    assert!(stored(&old.app).await.contains("$2b$04$"));
    let new = app_with(&[("DATA_DIR", data_dir.as_str()), ("MEMBER_TIER", "bcrypt:5")]).await;
    new.log_in("kim", "password-123", "192.0.2.1").await.unwrap();
    assert!(
        stored(&new.app).await.contains("$2b$05$"),
        "moved to the current policy"
    );
    new.log_in("kim", "password-123", "192.0.2.1").await.unwrap();
}

#[tokio::test]
async fn a_member_changes_only_what_they_wrote() {
    let t = app().await;
    let kim = t.member("kim").await;
    let lee = t.member("lee").await;
    let key = t.member_post(&kim).await;
    let edit = || EditPost {
        category: None,
        client: client("192.0.2.1"),
        key: key.clone(),
        title: Title::parse("changed".into()).unwrap(),
        body: PostBody::parse("changed".into()).unwrap(),
        if_match: None,
        media: Default::default(),
    };
    assert!(matches!(
        t.app.update_member_post(&lee, edit()).await,
        Err(ApiError::Forbidden(_))
    ));
    assert!(matches!(
        t.app.delete_member_post(&lee, &client("192.0.2.1"), &key).await,
        Err(ApiError::Forbidden(_))
    ));
    let changed = t.app.update_member_post(&kim, edit()).await.unwrap();
    assert_eq!(changed.post.summary.title, "changed");
    t.app
        .delete_member_post(&kim, &client("192.0.2.1"), &key)
        .await
        .unwrap();
    assert_eq!(t.app.read_post(&key).await.unwrap_err(), ApiError::not_found("post"));
}

#[tokio::test]
async fn a_guest_post_changes_only_with_its_password_and_wrong_ones_are_throttled_per_address() {
    let t = app().await;
    let key = t.guest_post("1234").await;
    assert_eq!(t.edit_as_guest(&key, "1234", "192.0.2.1").await.unwrap(), "edited");
    for _ in 0..10 {
        assert_eq!(
            t.edit_as_guest(&key, "0000", "192.0.2.9").await.unwrap_err(),
            ApiError::WrongPassword
        );
    }
    let before = hashes_run(&t.app);
    assert!(matches!(
        t.edit_as_guest(&key, "1234", "192.0.2.9").await,
        Err(ApiError::TooManyAttempts { .. })
    ));
    assert_eq!(hashes_run(&t.app), before, "refused before any hash");
    assert!(
        t.edit_as_guest(&key, "1234", "192.0.2.1").await.is_ok(),
        "another address is not refused"
    );
}

#[tokio::test]
async fn a_guest_password_cannot_change_a_members_post() {
    let t = app().await;
    let kim = t.member("kim").await;
    let key = t.member_post(&kim).await;
    let proof = GuestProof {
        password: Password::guest("1234".into()).unwrap(),
        client: client("192.0.2.1"),
    };
    assert!(matches!(
        t.app.delete_guest_post(&key, proof).await,
        Err(ApiError::Forbidden(_))
    ));
}

#[tokio::test]
async fn without_a_pepper_a_password_over_72_bytes_is_refused_before_any_hash() {
    let t = app_with(&[
        ("PEPPER", "none"),
        ("MEMBER_TIER", "bcrypt:10"),
        ("GUEST_TIER", "bcrypt:10"),
    ])
    .await;
    let refused = t
        .app
        .sign_up(SignUp {
            idempotency: None,
            admin_enroll_token: None,
            username: username("long"),
            password: Password::member("x".repeat(73)).unwrap(),
            nickname: Nickname::parse("long".into()).unwrap(),
            client: client("192.0.2.1"),
            pow: None,
        })
        .await
        .unwrap_err();
    assert_eq!(refused, ApiError::invalid("password", "must be at most 72 bytes"));
    assert_eq!(hashes_run(&t.app), 0);
}

#[tokio::test]
async fn likes_are_idempotent_and_views_count_into_the_detail() {
    let t = app().await;
    let kim = t.member("kim").await;
    let key = t.guest_post("1234").await;
    for _ in 0..2 {
        let state = t
            .app
            .member_vote(&kim, &client("192.0.2.1"), &key, shared::domain::VoteChange::Like)
            .await
            .unwrap();
        assert!(state.liked && state.like_count == 1);
    }
    let state = t
        .app
        .member_vote(&kim, &client("192.0.2.1"), &key, shared::domain::VoteChange::Unlike)
        .await
        .unwrap();
    assert!(!state.liked && state.like_count == 0);
    assert_eq!(t.app.read_post(&key).await.unwrap().post.summary.view_count, 1);
    assert_eq!(t.app.read_post(&key).await.unwrap().post.summary.view_count, 2);
}

/// docs/API.md, Throttling and quotas: one hash per password check. A
/// v1 hash (named by its pepper's v1 id, made from the password as typed) is
/// checked as typed, once, and rehashed normalized; any other hash is
/// checked normalized only, so a wrong password NFKC changes costs one hash.
#[tokio::test]
async fn a_v1_hash_made_before_nfkc_verifies_as_typed_with_one_hash_and_is_rehashed_normalized() {
    let t = app().await;
    t.member("wide").await;
    let typed = "\u{ff50}\u{ff41}\u{ff53}\u{ff53}\u{ff17}\u{ff17}\u{ff17}\u{ff17}";
    let hashing = t.app.hashing().unwrap();
    let current_form = hashing
        .hash(shared::hashing::Tier::Member, secrecy::SecretString::from(typed))
        .await
        .unwrap();
    // As v1 stored it: the password as typed, the pepper named by its v1 id.
    let pepper = shared::hashing::Pepper::parse(
        "PEPPER",
        secrecy::SecretString::from("app-test-pepper-0123456789abcdefghijklmn"),
    )
    .unwrap();
    let v1_hash = current_form.replace(pepper.id(), pepper.v1_id());
    let user = username("wide");
    let stored = |t: &TestApp| {
        let store = t.app.store().clone();
        let user = user.clone();
        async move { store.member_credentials(&user).await.unwrap().unwrap().password_hash }
    };
    let current = stored(&t).await;
    let v1 = shared::domain::PasswordHash::new(v1_hash.clone());
    assert!(t.app.store().replace_password_hash(&user, &current, &v1).await.unwrap());
    // A wrong full-width password: refused, and what it cost in hashes.
    async fn wrong_full_width(t: &TestApp) -> u64 {
        let before = hashes_run(&t.app);
        let wrong = "\u{ff50}\u{ff41}\u{ff53}\u{ff53}\u{ff17}\u{ff17}\u{ff17}\u{ff18}";
        assert!(t.log_in("wide", wrong, "192.0.2.1").await.is_err());
        hashes_run(&t.app) - before
    }
    assert_eq!(wrong_full_width(&t).await, 1, "a wrong password: one hash");
    t.log_in("wide", typed, "192.0.2.1").await.unwrap();
    let after = stored(&t).await;
    assert_ne!(after.as_str(), v1_hash, "rehashed");
    // Now the normalized form is stored: the ASCII password logs in too.
    t.log_in("wide", "pass7777", "192.0.2.1").await.unwrap();
    // A current hash is checked normalized only: a full-width wrong password
    // costs one hash, and the stored hash of the ASCII form is not checked as typed.
    assert_eq!(wrong_full_width(&t).await, 1, "one hash per counted failure");
    // A hash of the typed form under the current id (no v1 hash is) is not
    // checked as typed: the full-width password no longer finds it.
    let now = stored(&t).await;
    let typed_current = shared::domain::PasswordHash::new(current_form);
    assert!(
        t.app
            .store()
            .replace_password_hash(&user, &now, &typed_current)
            .await
            .unwrap()
    );
    assert!(t.log_in("wide", typed, "192.0.2.1").await.is_err());
}

#[tokio::test]
async fn a_hash_under_a_v1_pepper_id_verifies_and_moves_to_the_slow_id() {
    let t = app().await;
    t.member("veteran").await;
    let user = username("veteran");
    let current = t
        .app
        .store()
        .member_credentials(&user)
        .await
        .unwrap()
        .unwrap()
        .password_hash;
    let pepper = shared::hashing::Pepper::parse(
        "PEPPER",
        secrecy::SecretString::from("app-test-pepper-0123456789abcdefghijklmn"),
    )
    .unwrap();
    // `$hs384$<id>$<bcrypt>`: the same hash, named by the v1 id.
    let rest = current.as_str().strip_prefix("$hs384$").unwrap();
    let (id, inner) = rest.split_at(rest.find('$').unwrap());
    assert_eq!(id, pepper.id(), "new hashes carry the slow id");
    let v1 = shared::domain::PasswordHash::new(format!("$hs384${}{inner}", pepper.v1_id()));
    assert!(t.app.store().replace_password_hash(&user, &current, &v1).await.unwrap());
    t.log_in("veteran", "password-123", "192.0.2.1").await.unwrap();
    let after = t
        .app
        .store()
        .member_credentials(&user)
        .await
        .unwrap()
        .unwrap()
        .password_hash;
    assert!(
        after.as_str().starts_with(&format!("$hs384${}$", pepper.id())),
        "rehashed under the slow id"
    );
}

#[tokio::test]
async fn a_hash_under_a_pepper_no_longer_configured_is_a_counted_invalid_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().display().to_string();
    let old = app_with(&[("DATA_DIR", data_dir.as_str())]).await;
    old.member("rotated").await;
    // The pepper was replaced without PEPPER_PREVIOUS: the hash cannot be checked.
    let new = app_with(&[
        ("DATA_DIR", data_dir.as_str()),
        ("PEPPER", "another-pepper-0123456789abcdefghijklmnop"),
    ])
    .await;
    let before = hashes_run(&new.app);
    for _ in 0..5 {
        assert_eq!(
            new.log_in("rotated", "password-123", "192.0.2.1").await.unwrap_err(),
            ApiError::InvalidCredentials { field: None }
        );
    }
    assert!(
        hashes_run(&new.app) >= before + 5,
        "the work of a wrong password each time"
    );
    assert!(matches!(
        new.log_in("rotated", "password-123", "192.0.2.1").await,
        Err(ApiError::TooManyAttempts { .. })
    ));
}
