//! What each use case costs on DynamoDB, measured on DynamoDB Local: the
//! requests (request counter, an SDK interceptor), and the read and write
//! units on the table and on each index (the store's capacity meter, from
//! `ReturnConsumedCapacity: INDEXES`), for a small post and for the largest
//! post the API takes. The limits' counters (docs/API.md, Throttling and
//! quotas) are part of every login, guest check, create and signup. Printed
//! as tables; the assertions pin what the design promises.

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
use shared::store::dynamo::{CapacityMeter, Consumed, DynamoStore, RequestCounter, SdkTuning, client_config};

async fn counted_app() -> (App, RequestCounter) {
    let (app, counter, _) = metered_app().await;
    (app, counter)
}

async fn metered_app() -> (App, RequestCounter, CapacityMeter) {
    let endpoint = std::env::var("DYNAMODB_ENDPOINT")
        .expect("DYNAMODB_ENDPOINT is not set: run the suite with `bash tools/test-all`, which starts DynamoDB Local");
    let counter = RequestCounter::default();
    let config = client_config(Some(&endpoint), &SdkTuning::defaults(true))
        .await
        .interceptor(counter.clone())
        .build();
    let table = format!("costs-{}", new_id().to_lowercase());
    let meter = CapacityMeter::default();
    let store = DynamoStore::with_client(aws_sdk_dynamodb::Client::from_conf(config), &table, true)
        .await
        .unwrap()
        .metered(meter.clone());
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
    (app, counter, meter)
}

fn client() -> ClientAddress {
    ClientAddress("192.0.2.1".into())
}

fn proof(p: &str) -> GuestProof {
    GuestProof {
        password: password(p),
        client: client(),
    }
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

/// `table R/W, GSI1 R/W` of what was consumed.
fn units(c: &Consumed) -> String {
    let gsi = c.indexes.get("GSI1").copied().unwrap_or_default();
    format!("{} / {} | {} / {}", c.table.read, c.table.write, gsi.read, gsi.write)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumed_capacity_per_operation_for_a_small_and_a_maximum_size_post() {
    let mut table = Vec::new();
    for (size, title, text) in [
        ("small", "t".to_owned(), "b".to_owned()),
        ("max", "제".repeat(200), "한".repeat(20_000)),
    ] {
        let (app, _, meter) = metered_app().await;
        let mut row = |what: &str, consumed: Consumed| table.push((what.to_owned(), size, consumed));
        let signup = |name: &str| SignUp {
            username: Username::parse(name.into()).unwrap(),
            password: Password::member("password-123".into()).unwrap(),
            nickname: Nickname::parse("n".into()).unwrap(),
            client: client(),
        };
        meter.take();
        app.sign_up(signup("kim")).await.unwrap();
        row("signup (quota, username check, put)", meter.take());
        app.sign_up(signup("lee")).await.unwrap();
        meter.take();
        let login = LogIn {
            username: Username::parse("kim".into()).unwrap(),
            password: Password::attempt("password-123".into()).unwrap(),
            client: client(),
        };
        let token = app.log_in(login).await.unwrap().token;
        row("login, right password (3 limits, get, 3 give-backs)", meter.take());
        let kim = app.verify_token(&token).unwrap();
        let board = Boards::default().resolve("free").unwrap();
        let detail = app
            .create_member_post(
                &kim,
                WritePost {
                    client: client(),
                    board: board.clone(),
                    title: Title::parse(title.clone()).unwrap(),
                    body: PostBody::parse(text.clone()).unwrap(),
                },
            )
            .await
            .unwrap();
        row("member post", meter.take());
        let key = PostKey {
            board: board.clone(),
            post: PostId::parse(&detail.post.summary.id).unwrap(),
        };
        app.read_post(&key).await.unwrap();
        row("read a post (view, post, comments)", meter.take());
        let listing = shared::app::posts::ListPosts {
            board: board.clone(),
            limit: shared::domain::PageLimit::parse(None, 20).unwrap(),
            cursor: None,
        };
        app.list_posts(listing).await.unwrap();
        row("list a board page", meter.take());
        app.set_like(&kim, &key, true).await.unwrap();
        row("like", meter.take());
        app.set_like(&kim, &key, false).await.unwrap();
        row("unlike", meter.take());
        let comment = app
            .create_guest_comment(GuestComment {
                client: client(),
                key: key.clone(),
                nickname: Nickname::parse("g".into()).unwrap(),
                password: password("1234"),
                parent: None,
                body: shared::domain::CommentBody::parse("c".repeat(2_000)).unwrap(),
            })
            .await
            .unwrap();
        row("guest comment (2,000 chars)", meter.take());
        let comment_key = CommentKey {
            post: key.clone(),
            comment: CommentId::parse(&comment.id).unwrap(),
        };
        assert!(app.delete_guest_comment(&comment_key, proof("0000")).await.is_err());
        row("guest check, wrong password (guard, 2 limits)", meter.take());
        app.delete_guest_comment(&comment_key, proof("1234")).await.unwrap();
        row("guest comment delete, right password", meter.take());
    }
    println!("| operation | post | table RCU / WCU | GSI1 RCU / WCU |\n|---|---|---|---|");
    for (what, size, consumed) in &table {
        println!("| {what} | {size} | {} |", units(consumed));
    }
    let of = |what: &str, size: &str| {
        table
            .iter()
            .find(|(w, s, _)| w == what && *s == size)
            .map(|(_, _, c)| c.clone())
            .unwrap()
    };
    // What v1's layout costs, pinned so that moving the counters shows up:
    // a view writes the whole post item and its board-index entry.
    let read_max = of("read a post (view, post, comments)", "max");
    let read_small = of("read a post (view, post, comments)", "small");
    assert!(
        read_max.table.write > read_small.table.write,
        "{read_max:?} vs {read_small:?}"
    );
}
