//! What each use case costs on DynamoDB, in requests, measured with the
//! request counter (an SDK interceptor) on DynamoDB Local: the limits'
//! counters (docs/API.md, Throttling and quotas) are part of every login,
//! guest check, create and signup. Printed as a table; the assertions pin the
//! counts that the design promises (README, Security and reliability).

use std::sync::Arc;

use shared::app::accounts::SignUp;
use shared::app::guest::{GuestComment, GuestProof};
use shared::app::posts::WritePost;
use shared::app::sessions::LogIn;
use shared::app::throttle::Limits;
use shared::app::{App, Boards, ClientAddress};
use shared::config::Env;
use shared::domain::{CommentId, CommentKey, Nickname, Password, PostBody, PostId, PostKey, Title, Username, new_id};
use shared::hashing::Hashing;
use shared::store::dynamo::{DynamoStore, RequestCounter, SdkTuning, client_config};

async fn counted_app() -> (App, RequestCounter) {
    let endpoint = std::env::var("DYNAMODB_ENDPOINT")
        .expect("DYNAMODB_ENDPOINT is not set: run the suite with `bash tools/test-all`, which starts DynamoDB Local");
    let counter = RequestCounter::default();
    let config = client_config(Some(&endpoint), &SdkTuning::defaults(true))
        .await
        .interceptor(counter.clone())
        .build();
    let table = format!("costs-{}", new_id().to_lowercase());
    let store = DynamoStore::with_client(aws_sdk_dynamodb::Client::from_conf(config), &table, true)
        .await
        .unwrap();
    let settings = [
        ("PEPPER", "costs-test-pepper-0123456789abcdefghijklmn"),
        ("MEMBER_TIER", "bcrypt:4"),
        ("GUEST_TIER", "bcrypt:4"),
        ("HASH_FLOOR_OVERRIDE", "1"),
    ];
    let hashing = Hashing::new(shared::config::hashing_from(&Env::from_pairs(&settings)).unwrap()).unwrap();
    let tokens =
        shared::app::tokens::JwtKeys::new(&"costs-jwt-secret-0123456789abcdefghijklm".to_owned().into()).unwrap();
    let app = App::new(Arc::new(store), Boards::default(), Limits::default())
        .with_hashing(hashing)
        .with_tokens(tokens);
    (app, counter)
}

fn client() -> ClientAddress {
    ClientAddress("192.0.2.1".into())
}

fn password(p: &str) -> Password {
    Password::guest(p.to_owned()).unwrap()
}

/// Requests `work` made.
async fn requests<T>(counter: &RequestCounter, work: impl std::future::Future<Output = T>) -> (u64, T) {
    let before = counter.count();
    let out = work.await;
    (counter.count() - before, out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_use_case_costs_a_fixed_number_of_dynamodb_requests_with_the_limits_on() {
    let (app, counter) = counted_app().await;
    let mut rows = Vec::new();

    let (signup, member) = requests(
        &counter,
        app.sign_up(SignUp {
            username: Username::parse("kim".into()).unwrap(),
            password: Password::member("password-123".into()).unwrap(),
            nickname: Nickname::parse("Kim".into()).unwrap(),
            client: client(),
        }),
    )
    .await;
    member.unwrap();
    rows.push(("signup (quota ADD, username GetItem, conditional Put)", signup, 3));

    let login = |p: &str| LogIn {
        username: Username::parse("kim".into()).unwrap(),
        password: Password::attempt(p.to_owned()).unwrap(),
        client: client(),
    };
    let (ok, session) = requests(&counter, app.log_in(login("password-123"))).await;
    let session = session.unwrap();
    rows.push(("login, right password (3 limit ADDs, GetItem, 3 give-backs)", ok, 7));
    let (wrong, refused) = requests(&counter, app.log_in(login("password-124"))).await;
    assert!(refused.is_err());
    rows.push(("login, wrong password (3 limit ADDs, GetItem)", wrong, 4));

    let signed_in = app.verify_token(&session.token).unwrap();
    let board = Boards::default().resolve("free").unwrap();
    let (post_cost, detail) = requests(
        &counter,
        app.create_member_post(
            &signed_in,
            WritePost {
                client: client(),
                board: board.clone(),
                title: Title::parse("t".into()).unwrap(),
                body: PostBody::parse("b".into()).unwrap(),
            },
        ),
    )
    .await;
    let key = PostKey {
        board,
        post: PostId::parse(&detail.unwrap().post.summary.id).unwrap(),
    };
    rows.push(("member post (2 quota ADDs, Put)", post_cost, 3));

    let (comment_cost, comment) = requests(
        &counter,
        app.create_guest_comment(GuestComment {
            client: client(),
            key: key.clone(),
            nickname: Nickname::parse("g".into()).unwrap(),
            password: password("1234"),
            parent: None,
            body: shared::domain::CommentBody::parse("hi".into()).unwrap(),
        }),
    )
    .await;
    let comment = comment.unwrap();
    rows.push(("guest comment (post GetItem, quota ADD, transaction)", comment_cost, 3));
    let comment_key = CommentKey {
        post: key.clone(),
        comment: CommentId::parse(&comment.id).unwrap(),
    };
    let proof = |p: &str| GuestProof {
        password: password(p),
        client: client(),
    };
    let (wrong_guest, refused) = requests(&counter, app.delete_guest_comment(&comment_key, proof("0000"))).await;
    assert!(refused.is_err());
    rows.push((
        "guest delete, wrong password (guard GetItem, 2 limit ADDs)",
        wrong_guest,
        3,
    ));
    let (right_guest, deleted) = requests(&counter, app.delete_guest_comment(&comment_key, proof("1234"))).await;
    deleted.unwrap();
    rows.push((
        "guest delete, right password (guard, 2 ADDs, 2 give-backs, transaction)",
        right_guest,
        6,
    ));
    let (read, _) = requests(&counter, app.read_post(&key)).await;
    rows.push(("read a post (view UpdateItem, GetItem, comments Query)", read, 3));

    println!("| use case | DynamoDB requests |\n|---|---:|");
    for (what, measured, _) in &rows {
        println!("| {what} | {measured} |");
    }
    for (what, measured, expected) in rows {
        assert_eq!(measured, expected, "{what}");
    }
}
