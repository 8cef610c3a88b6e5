//! Boards v4 over real HTTP, each on both stores (docs/API.md, Boards,
//! Categories, Votes and best posts): boards as data with their rules,
//! post numbers, categories, dislikes, guest votes and best posts. Client
//! addresses are set with `X-Forwarded-For` from a trusted 127.0.0.1.

use futures::future::join_all;
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Backend, TestApp, assert_error, body, spawn_app_with};

/// Admin `boss`; the proxy 127.0.0.1 is trusted, so tests choose addresses.
async fn boards_app(backend: Backend, extra: &[(&str, &str)]) -> TestApp {
    let mut settings = vec![("ADMIN_USERNAMES", "boss"), ("TRUSTED_PROXIES", "127.0.0.1/32")];
    settings.extend_from_slice(extra);
    spawn_app_with(backend, &settings).await
}

/// A member: (id, token).
async fn member(app: &TestApp, username: &str) -> (String, String) {
    let signup = app.signup(username, "password-123").await;
    assert_eq!(signup.status(), 201, "signup {username}");
    let id = body(signup).await["id"].as_str().unwrap().to_owned();
    let session = body(app.login(username, "password-123").await).await;
    (id, session["token"].as_str().unwrap().to_owned())
}

async fn put_board(app: &TestApp, token: &str, slug: &str, settings: Value) -> reqwest::Response {
    app.request(Method::PUT, &format!("/boards/{slug}"), Some(token), Some(settings))
        .await
}

/// A member post on `board`; its body.
async fn post_on(app: &TestApp, token: &str, board: &str, fields: Value) -> Value {
    let mut payload = json!({"title": "a title", "body": "a body"});
    payload
        .as_object_mut()
        .unwrap()
        .extend(fields.as_object().unwrap().clone());
    let response = app
        .request(
            Method::POST,
            &format!("/boards/{board}/posts"),
            Some(token),
            Some(payload),
        )
        .await;
    assert_eq!(response.status(), 201);
    body(response).await
}

/// A vote route of a member: `like` or `dislike`, `PUT` or `DELETE`.
async fn vote(app: &TestApp, token: &str, board: &str, post: &str, method: Method, which: &str) -> reqwest::Response {
    app.request(
        method,
        &format!("/boards/{board}/posts/{post}/{which}"),
        Some(token),
        None,
    )
    .await
}

async fn guest_vote(app: &TestApp, address: &str, board: &str, post: &str, which: &str) -> reqwest::Response {
    app.request_from(
        address,
        Method::POST,
        &format!("/boards/{board}/posts/{post}/votes/guest"),
        None,
        Some(json!({"vote": which})),
    )
    .await
}

async fn detail(app: &TestApp, board: &str, post: &str, token: Option<&str>) -> Value {
    let response = app
        .request(Method::GET, &format!("/boards/{board}/posts/{post}"), token, None)
        .await;
    assert_eq!(response.status(), 200);
    body(response).await
}

async fn page(app: &TestApp, path: &str, token: Option<&str>) -> Value {
    let response = app.request(Method::GET, path, token, None).await;
    assert_eq!(response.status(), 200, "{path}");
    body(response).await
}

fn ids(page: &Value) -> Vec<String> {
    page["posts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_owned())
        .collect()
}

async fn modlog_actions(app: &TestApp, board: &str) -> Vec<String> {
    page(app, &format!("/boards/{board}/modlog"), None).await["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_owned())
        .collect()
}

async fn admins_open_boards_staff_set_their_rules_and_every_change_is_logged(backend: Backend) {
    let app = boards_app(backend, &[]).await;
    let (_, boss) = member(&app, "boss").await;
    let (kim_id, kim) = member(&app, "kim").await;
    let (_, lee) = member(&app, "lee").await;

    // BOARDS seeds the defaults: name = slug, every default rule.
    let listed = page(&app, "/boards", None).await;
    let slugs: Vec<&str> = listed["boards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["slug"].as_str().unwrap())
        .collect();
    assert_eq!(slugs, ["free", "notice", "qna"]);
    assert_eq!(
        page(&app, "/boards/free", None).await,
        json!({
            "slug": "free", "name": "free", "description": "", "categories": [], "best_likes": 10,
            "dislikes": "shown", "guest_writes": true, "lock_after_comments": false, "post_count": 0,
            "created_at": listed["boards"][0]["created_at"]
        })
    );

    // Only admins open a board.
    let settings = json!({"name": "유머", "categories": ["웃긴", "감동"], "best_likes": 3});
    assert_error(
        put_board(&app, &kim, "humor", settings.clone()).await,
        403,
        "forbidden",
        "admins",
    )
    .await;
    assert_error(app.get("/boards/humor").await, 404, "not_found", "humor").await;
    let opened = put_board(&app, &boss, "humor", settings).await;
    assert_eq!(opened.status(), 201);
    assert_eq!(opened.headers()["location"], "/boards/humor");
    let board = body(opened).await;
    assert_eq!(board["name"], "유머");
    assert_eq!(board["categories"], json!(["웃긴", "감동"]));
    assert_eq!(
        (board["best_likes"].clone(), board["dislikes"].clone()),
        (json!(3), json!("shown"))
    );
    assert_eq!(
        page(&app, "/boards/humor", None).await["name"],
        "유머",
        "applies at once"
    );
    post_on(&app, &kim, "humor", json!({"category": "웃긴"})).await;
    assert_eq!(page(&app, "/boards/humor", None).await["post_count"], 1);

    // A member who is not its staff may not change it; its moderator may.
    let change = json!({"name": "유머 게시판", "dislikes": "hidden", "best_likes": null});
    assert_error(
        put_board(&app, &kim, "humor", change.clone()).await,
        403,
        "forbidden",
        "humor",
    )
    .await;
    let appointed = app
        .request(
            Method::PUT,
            &format!("/boards/humor/moderators/{kim_id}"),
            Some(&boss),
            None,
        )
        .await;
    assert_eq!(appointed.status(), 204);
    let changed = put_board(&app, &kim, "humor", change).await;
    assert_eq!(changed.status(), 200);
    let changed = body(changed).await;
    assert_eq!(changed["name"], "유머 게시판");
    assert_eq!(changed["best_likes"], Value::Null, "null: no best posts");
    assert_eq!(changed["categories"], json!([]), "an absent field takes its default");
    assert_eq!(
        changed["created_at"], board["created_at"],
        "a board keeps when it was opened"
    );
    assert_eq!(changed["post_count"], 1);
    // A moderator of humor is nobody on free.
    assert_error(
        put_board(&app, &kim, "free", json!({"name": "x"})).await,
        403,
        "forbidden",
        "",
    )
    .await;
    assert_error(
        put_board(&app, &lee, "free", json!({"name": "x"})).await,
        403,
        "forbidden",
        "",
    )
    .await;

    assert_eq!(
        modlog_actions(&app, "humor").await,
        ["board_settings", "add_moderator", "board_settings"]
    );
    let entry = &page(&app, "/boards/humor/modlog", None).await["entries"][0];
    assert_eq!(entry["target"], json!({"kind": "board", "slug": "humor"}));
    assert_eq!(entry["by"]["member_id"], kim_id);
}

async fn every_board_rule_is_a_validation_error_naming_its_field(backend: Backend) {
    let app = boards_app(backend, &[]).await;
    let (_, boss) = member(&app, "boss").await;
    let long_name = "가".repeat(41);
    let long_description = "d".repeat(501);
    let too_many: Vec<String> = (0..21).map(|i| format!("c{i}")).collect();
    let cases = [
        ("free", json!({}), "name"),
        ("free", json!({"name": "  "}), "name"),
        ("free", json!({"name": long_name}), "name"),
        (
            "free",
            json!({"name": "n", "description": long_description}),
            "description",
        ),
        ("free", json!({"name": "n", "categories": too_many}), "categories"),
        ("free", json!({"name": "n", "categories": ["a,b"]}), "categories"),
        (
            "free",
            json!({"name": "n", "categories": ["열세글자를넘는긴말머리입니다"]}),
            "categories",
        ),
        (
            "free",
            json!({"name": "n", "categories": ["Tips", "tips"]}),
            "categories",
        ),
        ("free", json!({"name": "n", "categories": [""]}), "categories"),
        ("free", json!({"name": "n", "best_likes": 0}), "best_likes"),
        ("free", json!({"name": "n", "best_likes": 10_001}), "best_likes"),
        ("free", json!({"name": "n", "dislikes": "sometimes"}), "dislikes"),
        ("Bad_Slug", json!({"name": "n"}), "slug"),
    ];
    for (slug, settings, field) in cases {
        let refused = put_board(&app, &boss, slug, settings.clone()).await;
        assert_eq!(refused.status(), 400, "{settings}");
        let error = body(refused).await;
        assert_eq!(error["error"]["code"], "validation_failed", "{settings}");
        assert_eq!(error["error"]["field"], field, "{settings}: {error}");
    }
    let wrong_type = put_board(&app, &boss, "free", json!({"name": "n", "guest_writes": "yes"})).await;
    assert_eq!(body(wrong_type).await["error"]["field"], "guest_writes");
    // Nothing of those was written.
    assert_eq!(page(&app, "/boards/free", None).await["name"], "free");
    assert!(modlog_actions(&app, "free").await.is_empty());
    // A write on an unknown board stays 404.
    let (_, kim) = member(&app, "kim").await;
    let unknown = app
        .request(
            Method::POST,
            "/boards/nowhere/posts",
            Some(&kim),
            Some(json!({"title": "t", "body": "b"})),
        )
        .await;
    assert_error(unknown, 404, "not_found", "nowhere").await;
}

async fn posts_are_numbered_per_board_uniquely_under_racing_creates_and_found_by_number(backend: Backend) {
    let app = boards_app(
        backend,
        &[("LIMIT_CREATES_ADDRESS", "off"), ("LIMIT_CREATES_MEMBER", "off")],
    )
    .await;
    let (_, kim) = member(&app, "kim").await;
    let first = post_on(&app, &kim, "free", json!({})).await;
    assert_eq!(first["number"], 1);
    assert_eq!(
        post_on(&app, &kim, "qna", json!({})).await["number"],
        1,
        "numbers are per board"
    );
    let racing = (0..16).map(|i| {
        let (app, kim) = (&app, &kim);
        async move {
            let payload = json!({"title": format!("race {i}"), "body": "b"});
            if i % 2 == 0 {
                body(
                    app.request(Method::POST, "/boards/free/posts", Some(kim), Some(payload))
                        .await,
                )
                .await
            } else {
                let mut guest = payload;
                guest["nickname"] = json!("손님");
                guest["password"] = json!("guest-pass");
                body(app.post("/boards/free/posts/guest", guest).await).await
            }
        }
    });
    let created: Vec<Value> = join_all(racing).await;
    let mut numbers: Vec<u64> = created.iter().map(|p| p["number"].as_u64().unwrap()).collect();
    numbers.sort_unstable();
    numbers.dedup();
    assert_eq!(numbers.len(), 16, "every number once: {numbers:?}");
    assert!(
        numbers.iter().all(|n| (2..=17).contains(n)),
        "no gaps without failures: {numbers:?}"
    );

    // By number: the same detail as by id, and a view counted.
    let racer = &created[5];
    let number = racer["number"].as_u64().unwrap();
    let found = app.get(&format!("/boards/free/posts/by-number/{number}")).await;
    assert_eq!(found.status(), 200);
    let found = body(found).await;
    assert_eq!(found["id"], racer["id"]);
    assert_eq!(found["view_count"], 1);
    for missing in ["999", "0", "abc", "-1", "1.5"] {
        let response = app.get(&format!("/boards/free/posts/by-number/{missing}")).await;
        assert_eq!(response.status(), 404, "{missing}");
    }
    assert_eq!(app.get("/boards/nowhere/posts/by-number/1").await.status(), 404);

    // A deleted post's number is never given again; summaries carry numbers.
    let last = post_on(&app, &kim, "free", json!({})).await;
    let last_number = last["number"].as_u64().unwrap();
    let path = format!("/boards/free/posts/{}", last["id"].as_str().unwrap());
    assert_eq!(app.request(Method::DELETE, &path, Some(&kim), None).await.status(), 204);
    assert_eq!(
        app.get(&format!("/boards/free/posts/by-number/{last_number}"))
            .await
            .status(),
        404
    );
    assert!(post_on(&app, &kim, "free", json!({})).await["number"].as_u64().unwrap() > last_number);
    // Posts made one after another list in number order (racing creates
    // may take their numbers and their ids in different orders).
    post_on(&app, &kim, "free", json!({})).await;
    post_on(&app, &kim, "free", json!({})).await;
    let listed = page(&app, "/boards/free/posts?limit=3", None).await;
    let shown: Vec<u64> = listed["posts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["number"].as_u64().unwrap())
        .collect();
    assert!(
        shown.windows(2).all(|w| w[0] > w[1]),
        "newest first, by number too: {shown:?}"
    );
    assert_eq!(page(&app, "/boards/free", None).await["post_count"], 20);
}

async fn categories_are_checked_against_the_board_filter_its_pages_and_staff_recategorize(backend: Backend) {
    let app = boards_app(backend, &[("TRUSTED_PROXIES", "127.0.0.1/32")]).await;
    let (_, boss) = member(&app, "boss").await;
    let (_, kim) = member(&app, "kim").await;
    let opened = put_board(
        &app,
        &boss,
        "free",
        json!({"name": "자유", "categories": ["질문", "정보"]}),
    )
    .await;
    assert_eq!(opened.status(), 200, "free exists (seeded): a change");

    let refused = app
        .request(
            Method::POST,
            "/boards/free/posts",
            Some(&kim),
            Some(json!({"title": "t", "body": "b", "category": "잡담"})),
        )
        .await;
    assert_eq!(body(refused).await["error"]["field"], "category");
    let guest_refused = app
        .post(
            "/boards/free/posts/guest",
            json!({"nickname": "g", "password": "guest-pass", "title": "t", "body": "b", "category": 7}),
        )
        .await;
    assert_eq!(guest_refused.status(), 400);
    assert_eq!(body(guest_refused).await["error"]["field"], "category");
    let on_qna = app
        .request(
            Method::POST,
            "/boards/qna/posts",
            Some(&kim),
            Some(json!({"title": "t", "body": "b", "category": "질문"})),
        )
        .await;
    assert_eq!(
        body(on_qna).await["error"]["field"],
        "category",
        "qna has no categories"
    );

    let mut questions = Vec::new();
    for i in 0..5 {
        let category = if i % 2 == 0 { json!("질문") } else { json!(null) };
        let post = post_on(
            &app,
            &kim,
            "free",
            json!({"title": format!("p{i}"), "category": category}),
        )
        .await;
        assert_eq!(post["category"], category);
        if i % 2 == 0 {
            questions.push(post["id"].as_str().unwrap().to_owned());
        }
    }
    let guest = body(
        app.post(
            "/boards/free/posts/guest",
            json!({"nickname": "g", "password": "guest-pass", "title": "t", "body": "b", "category": "정보"}),
        )
        .await,
    )
    .await;
    assert_eq!(guest["category"], "정보");

    // The filter pages through its category only, newest first.
    questions.reverse();
    let first = page(&app, "/boards/free/posts?category=질문&limit=2", None).await;
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();
    let second = page(
        &app,
        &format!("/boards/free/posts?category=질문&limit=2&cursor={cursor}"),
        None,
    )
    .await;
    assert_eq!([ids(&first), ids(&second)].concat(), questions);
    assert_eq!(second["next_cursor"], Value::Null);
    assert_eq!(
        ids(&page(&app, "/boards/free/posts?category=정보", None).await),
        [guest["id"].as_str().unwrap()]
    );
    assert!(ids(&page(&app, "/boards/free/posts?category=없음", None).await).is_empty());

    // An edit: absent keeps the category, null clears it, another is checked.
    let kept = &questions[0];
    let path = format!("/boards/free/posts/{kept}");
    let edit = |fields: Value| {
        let mut payload = json!({"title": "edited", "body": "b"});
        payload
            .as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        app.request(Method::PUT, &path, Some(&kim), Some(payload))
    };
    assert_eq!(body(edit(json!({})).await).await["category"], "질문");
    assert_eq!(
        body(edit(json!({"category": "유머"})).await).await["error"]["field"],
        "category"
    );
    assert_eq!(body(edit(json!({"category": "정보"})).await).await["category"], "정보");

    // Staff recategorize, logged; the author may not.
    let recategorize = |token: String, post: String, category: Value| {
        let app = &app;
        async move {
            app.request(
                Method::PUT,
                &format!("/boards/free/posts/{post}/category"),
                Some(&token),
                Some(json!({"category": category})),
            )
            .await
        }
    };
    let target = questions[1].clone();
    assert_error(
        recategorize(kim.clone(), target.clone(), json!("정보")).await,
        403,
        "forbidden",
        "staff",
    )
    .await;
    assert_eq!(
        body(recategorize(boss.clone(), target.clone(), json!("없음")).await).await["error"]["field"],
        "category"
    );
    let moved = recategorize(boss.clone(), target.clone(), json!("정보")).await;
    assert_eq!(moved.status(), 200);
    let moved = body(moved).await;
    assert_eq!(
        (moved["id"].as_str().unwrap(), moved["category"].clone()),
        (target.as_str(), json!("정보"))
    );
    assert!(moved.get("body").is_none(), "a summary");
    assert_eq!(
        body(recategorize(boss.clone(), target.clone(), json!(null)).await).await["category"],
        Value::Null
    );
    assert_eq!(
        modlog_actions(&app, "free").await[..2],
        ["recategorize", "recategorize"]
    );

    // A category dropped from the board stays on its posts and still lists them.
    put_board(&app, &boss, "free", json!({"name": "자유", "categories": ["정보"]})).await;
    assert_eq!(detail(&app, "free", &questions[2], None).await["category"], "질문");
    assert_eq!(
        ids(&page(&app, "/boards/free/posts?category=질문", None).await),
        [questions[2].clone()]
    );
    let bad = app.get("/boards/free/posts?category=a,b").await;
    assert_eq!(body(bad).await["error"]["field"], "category");
}

async fn a_members_like_and_dislike_exclude_each_other_and_nobody_votes_on_their_own_post(backend: Backend) {
    let app = boards_app(backend, &[]).await;
    let (_, kim) = member(&app, "kim").await;
    let (_, lee) = member(&app, "lee").await;
    let post = post_on(&app, &kim, "free", json!({})).await;
    let id = post["id"].as_str().unwrap();
    assert_eq!(
        (
            post["number"].clone(),
            post["dislike_count"].clone(),
            post["best"].clone()
        ),
        (json!(1), json!(0), json!(false))
    );

    assert_error(
        vote(&app, &kim, "free", id, Method::PUT, "like").await,
        403,
        "forbidden",
        "own post",
    )
    .await;
    assert_error(
        vote(&app, &kim, "free", id, Method::PUT, "dislike").await,
        403,
        "forbidden",
        "own post",
    )
    .await;

    let state = |liked: bool, disliked: bool, likes: u64, dislikes: u64| json!({"liked": liked, "disliked": disliked, "like_count": likes, "dislike_count": dislikes});
    assert_eq!(
        body(vote(&app, &lee, "free", id, Method::PUT, "like").await).await,
        state(true, false, 1, 0)
    );
    assert_eq!(
        body(vote(&app, &lee, "free", id, Method::PUT, "dislike").await).await,
        state(false, true, 0, 1)
    );
    assert_eq!(
        body(vote(&app, &lee, "free", id, Method::PUT, "dislike").await).await,
        state(false, true, 0, 1)
    );
    // Withdrawing a like one does not have changes nothing.
    assert_eq!(
        body(vote(&app, &lee, "free", id, Method::DELETE, "like").await).await,
        state(false, true, 0, 1)
    );
    assert_eq!(detail(&app, "free", id, Some(&lee)).await["my_vote"], "dislike");
    assert_eq!(
        body(vote(&app, &lee, "free", id, Method::PUT, "like").await).await,
        state(true, false, 1, 0)
    );
    assert_eq!(detail(&app, "free", id, Some(&lee)).await["my_vote"], "like");
    assert_eq!(
        body(vote(&app, &lee, "free", id, Method::DELETE, "like").await).await,
        state(false, false, 0, 0)
    );
    assert_eq!(
        detail(&app, "free", id, Some(&lee)).await["my_vote"],
        Value::Null,
        "null with a token"
    );
    assert!(
        detail(&app, "free", id, None).await.get("my_vote").is_none(),
        "absent without one"
    );
    let anonymous = app
        .request(
            Method::GET,
            &format!("/boards/free/posts/{id}"),
            Some("not-a-token"),
            None,
        )
        .await;
    assert_eq!(anonymous.status(), 401, "a token that is sent must be valid");
    let missing = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
    assert_eq!(
        vote(&app, &lee, "free", missing, Method::PUT, "dislike").await.status(),
        404
    );
}

async fn a_guest_votes_once_per_post_from_an_address_under_its_own_quota(backend: Backend) {
    let app = boards_app(backend, &[("LIMIT_GUEST_VOTES_ADDRESS", "3/1h")]).await;
    let (_, kim) = member(&app, "kim").await;
    let (_, boss) = member(&app, "boss").await;
    let posts: Vec<String> = {
        let mut posts = Vec::new();
        for _ in 0..5 {
            posts.push(
                post_on(&app, &kim, "free", json!({})).await["id"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        }
        posts
    };
    let voted = guest_vote(&app, "198.51.100.7", "free", &posts[0], "like").await;
    assert_eq!(voted.status(), 200);
    assert_eq!(
        body(voted).await,
        json!({"liked": true, "disliked": false, "like_count": 1, "dislike_count": 0})
    );
    // Once, never withdrawn: the same address again (even the other way) is 409.
    assert_error(
        guest_vote(&app, "198.51.100.7", "free", &posts[0], "dislike").await,
        409,
        "already_voted",
        "",
    )
    .await;
    // Another address is another voter; an IPv6 /48 is one (the audit's
    // /48 voted 11 times from 11 of its /64s).
    assert_eq!(
        guest_vote(&app, "198.51.100.8", "free", &posts[0], "dislike")
            .await
            .status(),
        200
    );
    assert_eq!(
        guest_vote(&app, "2001:db8:1:2::1", "free", &posts[0], "like")
            .await
            .status(),
        200
    );
    for other_64 in ["2001:db8:1:2::9", "2001:db8:1:3::1", "2001:db8:1:ffff::1"] {
        assert_error(
            guest_vote(&app, other_64, "free", &posts[0], "like").await,
            409,
            "already_voted",
            "",
        )
        .await;
    }
    let counts = detail(&app, "free", &posts[0], None).await;
    assert_eq!(
        (counts["like_count"].clone(), counts["dislike_count"].clone()),
        (json!(2), json!(1))
    );
    // Bad votes name the field and count nothing.
    let bad = app
        .request_from(
            "198.51.100.9",
            Method::POST,
            &format!("/boards/free/posts/{}/votes/guest", posts[1]),
            None,
            Some(json!({"vote": "love"})),
        )
        .await;
    assert_eq!(body(bad).await["error"]["field"], "vote");
    // The quota counts votes that counted: 3 per hour from one address.
    for post in &posts[1..4] {
        let counted = guest_vote(&app, "203.0.113.5", "free", post, "like").await;
        assert_eq!(counted.status(), 200);
        assert!(
            counted.headers().contains_key("ratelimit"),
            "a write under a quota says how much is left"
        );
    }
    let over = guest_vote(&app, "203.0.113.5", "free", &posts[4], "like").await;
    assert_eq!(over.status(), 429);
    assert!(
        over.headers()["ratelimit-policy"]
            .to_str()
            .unwrap()
            .contains("\"guest-votes\";q=3;w=3600")
    );
    // Not on a post written from one's own address, nor from another /64
    // of one's own /48.
    for (writes_from, votes_from) in [("192.0.2.44", "192.0.2.44"), ("2001:db8:7:1::1", "2001:db8:7:2::1")] {
        let guest_post = json!({"nickname": "g", "password": "guest-pass", "title": "t", "body": "b"});
        let own = app
            .request_from(
                writes_from,
                Method::POST,
                "/boards/free/posts/guest",
                None,
                Some(guest_post),
            )
            .await;
        let own = body(own).await["id"].as_str().unwrap().to_owned();
        assert_error(
            guest_vote(&app, votes_from, "free", &own, "like").await,
            403,
            "forbidden",
            "own post",
        )
        .await;
    }
    // A board without guest writes takes no guest votes.
    put_board(&app, &boss, "free", json!({"name": "free", "guest_writes": false})).await;
    assert_error(
        guest_vote(&app, "198.51.100.77", "free", &posts[0], "like").await,
        403,
        "forbidden",
        "guests",
    )
    .await;
    let guest_post = app
        .post(
            "/boards/free/posts/guest",
            json!({"nickname": "g", "password": "guest-pass", "title": "t", "body": "b"}),
        )
        .await;
    assert_error(guest_post, 403, "forbidden", "guests").await;
}

async fn racing_votes_of_members_and_guests_leave_exact_counts(backend: Backend) {
    let app = boards_app(backend, &[("HASH_QUEUE", "512"), ("LIMIT_LOGIN_ADDRESS", "500/5m")]).await;
    let (_, writer) = member(&app, "writer").await;
    let post = post_on(&app, &writer, "free", json!({})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let tokens: Vec<String> = join_all((0..16).map(|i| {
        let app = &app;
        async move { member(app, &format!("voter_{i:02}")).await.1 }
    }))
    .await;
    // Member i: likes; every third switches to a dislike; every fifth withdraws.
    let members = tokens.iter().enumerate().map(|(i, token)| {
        let (app, post) = (&app, &post);
        async move {
            let mut last = None;
            let mut steps = vec![(Method::PUT, "like")];
            if i % 3 == 0 {
                steps.push((Method::PUT, "dislike"));
            }
            if i % 5 == 0 {
                steps.push((Method::DELETE, if i % 3 == 0 { "dislike" } else { "like" }));
            }
            for (method, which) in steps {
                let response = vote(app, token, "free", post, method, which).await;
                assert_eq!(response.status(), 200, "member {i}");
                last = Some(body(response).await);
            }
            let last = last.unwrap();
            (last["liked"].as_bool().unwrap(), last["disliked"].as_bool().unwrap())
        }
    });
    let guests = (0..16).map(|i| {
        let (app, post) = (&app, &post);
        async move {
            let which = if i % 4 == 0 { "dislike" } else { "like" };
            let response = guest_vote(app, &format!("203.0.113.{}", 10 + i), "free", post, which).await;
            assert_eq!(response.status(), 200, "guest {i}");
            which
        }
    });
    let (members, guests) = tokio::join!(join_all(members), join_all(guests));
    let likes = members.iter().filter(|(l, _)| *l).count() + guests.iter().filter(|v| **v == "like").count();
    let dislikes = members.iter().filter(|(_, d)| *d).count() + guests.iter().filter(|v| **v == "dislike").count();
    let shown = detail(&app, "free", &post, None).await;
    assert_eq!(shown["like_count"], likes);
    assert_eq!(shown["dislike_count"], dislikes);
    // The script: members' 8 likes and 4 dislikes stand, guests' 12 and 4.
    assert_eq!((likes, dislikes), (20, 8));
}

async fn hidden_dislikes_count_but_show_only_to_staff_and_off_refuses_them(backend: Backend) {
    let app = boards_app(backend, &[]).await;
    let (_, boss) = member(&app, "boss").await;
    let (_, kim) = member(&app, "kim").await;
    let (_, lee) = member(&app, "lee").await;
    put_board(
        &app,
        &boss,
        "free",
        json!({"name": "free", "dislikes": "hidden", "best_likes": 2}),
    )
    .await;
    let post = post_on(&app, &kim, "free", json!({})).await;
    assert!(post.get("dislike_count").is_none(), "hidden from its author: {post}");
    let id = post["id"].as_str().unwrap().to_owned();
    let disliked = body(vote(&app, &lee, "free", &id, Method::PUT, "dislike").await).await;
    assert_eq!(disliked, json!({"liked": false, "disliked": true, "like_count": 0}));
    for token in [None, Some(kim.as_str()), Some(lee.as_str())] {
        assert!(detail(&app, "free", &id, token).await.get("dislike_count").is_none());
        let listed = page(&app, "/boards/free/posts", token).await;
        assert!(listed["posts"][0].get("dislike_count").is_none(), "{listed}");
    }
    assert_eq!(
        detail(&app, "free", &id, Some(&boss)).await["dislike_count"],
        1,
        "staff see them"
    );
    assert_eq!(
        page(&app, "/boards/free/posts", Some(&boss)).await["posts"][0]["dislike_count"],
        1
    );
    // Hidden dislikes still count for best posts: two likes net one.
    for voter in ["voter_1", "voter_2"] {
        let (_, token) = member(&app, voter).await;
        vote(&app, &token, "free", &id, Method::PUT, "like").await;
    }
    assert_eq!(
        detail(&app, "free", &id, None).await["best"],
        false,
        "2 likes - 1 dislike < 2"
    );

    // Off: dislike votes are refused and no count is shown to anyone.
    put_board(&app, &boss, "qna", json!({"name": "qna", "dislikes": "off"})).await;
    let answer = post_on(&app, &kim, "qna", json!({})).await;
    let answer_id = answer["id"].as_str().unwrap();
    assert_error(
        vote(&app, &lee, "qna", answer_id, Method::PUT, "dislike").await,
        403,
        "forbidden",
        "dislikes",
    )
    .await;
    assert_error(
        guest_vote(&app, "198.51.100.3", "qna", answer_id, "dislike").await,
        403,
        "forbidden",
        "dislikes",
    )
    .await;
    let liked = body(vote(&app, &lee, "qna", answer_id, Method::PUT, "like").await).await;
    assert!(liked.get("dislike_count").is_none());
    assert!(
        detail(&app, "qna", answer_id, Some(&boss))
            .await
            .get("dislike_count")
            .is_none()
    );
}

async fn the_vote_that_reaches_best_likes_makes_a_post_best_and_staff_take_it_out_for_good(backend: Backend) {
    let app = boards_app(backend, &[("HASH_QUEUE", "512"), ("LIMIT_LOGIN_ADDRESS", "500/5m")]).await;
    let (_, boss) = member(&app, "boss").await;
    let (_, kim) = member(&app, "kim").await;
    put_board(
        &app,
        &boss,
        "free",
        json!({"name": "free", "best_likes": 3, "categories": ["정보"]}),
    )
    .await;
    let post = post_on(&app, &kim, "free", json!({"category": "정보"})).await;
    let other = post_on(&app, &kim, "free", json!({})).await;
    let id = post["id"].as_str().unwrap().to_owned();
    let voters: Vec<String> = join_all((0..6).map(|i| {
        let app = &app;
        async move { member(app, &format!("fan_{i}")).await.1 }
    }))
    .await;
    // A dislike first: the score must reach 3 net.
    vote(&app, &voters[0], "free", &id, Method::PUT, "dislike").await;
    for voter in &voters[1..4] {
        vote(&app, voter, "free", &id, Method::PUT, "like").await;
    }
    assert_eq!(detail(&app, "free", &id, None).await["best"], false, "3 - 1 = 2");
    assert!(ids(&page(&app, "/boards/free/posts?best=true", None).await).is_empty());
    // The crossing vote is a guest's: best in the same change.
    assert_eq!(
        guest_vote(&app, "198.51.100.20", "free", &id, "like").await.status(),
        200
    );
    assert_eq!(detail(&app, "free", &id, None).await["best"], true);
    // It stays best whatever later votes do.
    for voter in &voters[1..4] {
        vote(&app, voter, "free", &id, Method::PUT, "dislike").await;
    }
    assert_eq!(detail(&app, "free", &id, None).await["best"], true);
    assert_eq!(
        ids(&page(&app, "/boards/free/posts?best=true", None).await),
        std::slice::from_ref(&id)
    );
    assert_eq!(
        ids(&page(&app, "/boards/free/posts?best=true&category=정보", None).await),
        std::slice::from_ref(&id)
    );
    assert!(
        ids(&page(&app, "/boards/free/posts?best=false", None).await)
            .contains(&other["id"].as_str().unwrap().to_owned())
    );
    assert_eq!(
        body(app.get("/boards/free/posts?best=yes").await).await["error"]["field"],
        "best"
    );

    // Staff take it out; it never comes back, however many votes.
    let path = format!("/boards/free/best/{id}");
    assert_error(
        app.request(Method::DELETE, &path, Some(&kim), None).await,
        403,
        "forbidden",
        "staff",
    )
    .await;
    assert_eq!(
        app.request(Method::DELETE, &path, Some(&boss), None).await.status(),
        204
    );
    assert_eq!(detail(&app, "free", &id, None).await["best"], false);
    for voter in &voters {
        vote(&app, voter, "free", &id, Method::PUT, "like").await;
    }
    let shown = detail(&app, "free", &id, None).await;
    assert_eq!(
        (shown["like_count"].clone(), shown["best"].clone()),
        (json!(7), json!(false))
    );
    assert!(ids(&page(&app, "/boards/free/posts?best=true", None).await).is_empty());
    assert_eq!(modlog_actions(&app, "free").await[0], "unbest");
    // Racing votes past the threshold make one best post, once.
    let racer = post_on(&app, &kim, "free", json!({})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let racing = voters
        .iter()
        .map(|voter| vote(&app, voter, "free", &racer, Method::PUT, "like"));
    for response in join_all(racing).await {
        assert_eq!(response.status(), 200);
    }
    assert_eq!(detail(&app, "free", &racer, None).await["best"], true);
    assert_eq!(ids(&page(&app, "/boards/free/posts?best=true", None).await), [racer]);
    assert_eq!(
        app.request(
            Method::DELETE,
            "/boards/free/best/01ARZ3NDEKTSV4RRFFQ69G5FAV",
            Some(&boss),
            None
        )
        .await
        .status(),
        404
    );
}

on_both_stores!(
    admins_open_boards_staff_set_their_rules_and_every_change_is_logged,
    every_board_rule_is_a_validation_error_naming_its_field,
    posts_are_numbered_per_board_uniquely_under_racing_creates_and_found_by_number,
    categories_are_checked_against_the_board_filter_its_pages_and_staff_recategorize,
    a_members_like_and_dislike_exclude_each_other_and_nobody_votes_on_their_own_post,
    a_guest_votes_once_per_post_from_an_address_under_its_own_quota,
    racing_votes_of_members_and_guests_leave_exact_counts,
    hidden_dislikes_count_but_show_only_to_staff_and_off_refuses_them,
    the_vote_that_reaches_best_likes_makes_a_post_best_and_staff_take_it_out_for_good,
);
