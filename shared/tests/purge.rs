//! The `purge` function's handler against DynamoDB Local
//! (docs/storage.md, Deleting a post): fed the records the table's own
//! stream holds, it deletes every deleted post's children and markers, does
//! nothing more when they are delivered again, finishes a purge that was cut
//! off midway, and names the record that failed.
//!
//! The events are built from DynamoDB Local's stream, read over its HTTP API
//! (`GetRecords`): each record there is, field for field, what Lambda
//! delivers in `Records`, which adds only `eventSourceARN`. AWS's own event
//! source mapping (its filter, retries and dead-letter queue) cannot run
//! here; its settings are checked in the template (tools/sam-template).
//!
//! Its schedule: an EventBridge scheduled event (the committed
//! fixture) finishes an account deletion whose step 2 was left pending, and
//! the pending purges, within the invocation's time (docs/DESIGN.md,
//! Accounts).

use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_lambda_events::event::dynamodb::Event;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::{AttributeValue, Select};
use serde_json::{Value, json};
use shared::app::{App, AppSettings};
use shared::domain::{
    Author, BoardSlug, Boards, Comment, MemberId, Post, PostKey, PostSummary, Writer, WriterKey, new_id, now,
};
use shared::store::dynamo::{DynamoStore, SdkTuning, client_config};
use shared::store::{Accounts as _, Comments as _, Posts, Purges as _, Store};
use shared::stream::{handle, purge_of, purge_records, resume_scheduled};

fn endpoint() -> String {
    std::env::var("DYNAMODB_ENDPOINT")
        .expect("DYNAMODB_ENDPOINT is not set: run the suite with `bash scripts/test-all`, which starts DynamoDB Local")
}

async fn client() -> Client {
    Client::from_conf(
        client_config(Some(&endpoint()), None, &SdkTuning::defaults(true))
            .await
            .unwrap()
            .build(),
    )
}

/// A fresh table (created with its stream, as `infra/table.json` says) and
/// the application on it.
async fn fresh() -> (App, Arc<DynamoStore>, Client, String) {
    let table = format!("purge-{}", new_id().to_lowercase());
    let client = client().await;
    let store = Arc::new(DynamoStore::with_client(client.clone(), &table, true).await.unwrap());
    // Local tables have no stream (the suite's other writes would all be
    // kept in one); the template's, as infra/table.json says.
    let view = shared::store::dynamo::schema::TableDefinition::load()
        .stream_specification
        .stream_view_type;
    client
        .update_table()
        .table_name(&table)
        .stream_specification(
            aws_sdk_dynamodb::types::StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(aws_sdk_dynamodb::types::StreamViewType::from(view.as_str()))
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let app = App::new(store.clone() as Arc<dyn Store>, AppSettings::default());
    (app, store, client, table)
}

fn free() -> BoardSlug {
    Boards::default().resolve("free").unwrap()
}

fn writer() -> Writer {
    Writer {
        key: WriterKey::new("testwriterkeyabcdefghijklmnopqrstuvwxyz234567abcdef".into()),
        range: WriterKey::new("testrangekeyabcdefghijklmnopqrstuvwxyz234567abcdefg".into()),
    }
}

/// A post on `free` with `comments` comments and a like of each of `likes` members.
async fn post_with(store: &DynamoStore, comments: usize, likes: usize) -> PostKey {
    let at = now();
    let author = Author::Guest {
        nickname: "Lee".into(),
        tag: Some(writer().key.tag()),
    };
    let post = Post {
        summary: PostSummary {
            id: new_id(),
            board: "free".into(),
            title: "to be deleted".into(),
            author: author.clone(),
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
        body: "body".into(),
        updated_at: at,
        revision_count: 0,
        media: Vec::new(),
    };
    store.create_post(&post, &writer(), None, None).await.unwrap();
    let id = post.summary.id.clone();
    let all: Vec<Comment> = (0..comments)
        .map(|i| Comment {
            id: new_id(),
            post_id: id.clone(),
            parent_id: None,
            body: format!("comment {i}"),
            author: author.clone(),
            created_at: now(),
            media: Vec::new(),
        })
        .collect();
    for chunk in all.chunks(25) {
        futures::future::join_all(chunk.iter().map(|c| async move {
            store
                .create_comment(&free(), c, &writer(), None, false, None)
                .await
                .unwrap()
        }))
        .await;
    }
    let key = PostKey {
        board: free(),
        post: shared::domain::PostId::parse(&id).unwrap(),
    };
    for i in 0..likes {
        use shared::store::Votes as _;
        let member = MemberId::from_stored(format!("member{i}"));
        store
            .vote(&key, &member, shared::domain::VoteChange::Like, None)
            .await
            .unwrap()
            .unwrap();
    }
    key
}

/// Items in the post's own partition (the post, its comments, pointers, reporters).
async fn left_in(client: &Client, table: &str, key: &PostKey) -> i32 {
    client
        .query()
        .table_name(table)
        .key_condition_expression("PK = :pk")
        .expression_attribute_values(":pk", AttributeValue::S(format!("POST#{}", key.post.as_str())))
        .select(Select::Count)
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .count
}

/// Every item naming the post anywhere (a scan: its likes, shards, marker too).
async fn naming(client: &Client, table: &str, key: &PostKey) -> usize {
    let mut found = 0;
    let mut start = None;
    loop {
        let out = client
            .scan()
            .table_name(table)
            .filter_expression("contains(PK, :p) OR contains(SK, :p)")
            .expression_attribute_values(":p", AttributeValue::S(key.post.as_str().to_owned()))
            .set_exclusive_start_key(start)
            .send()
            .await
            .unwrap();
        found += out.items().len();
        start = out.last_evaluated_key;
        if start.is_none() {
            return found;
        }
    }
}

/// One call of DynamoDB Local's Streams API.
async fn streams(call: &str, body: Value) -> Value {
    let region = std::env::var("AWS_REGION").unwrap_or_else(|_| "us-east-1".into());
    let answer = reqwest::Client::new()
        .post(endpoint())
        .header("content-type", "application/x-amz-json-1.0")
        .header("x-amz-target", format!("DynamoDBStreams_20120810.{call}"))
        // DynamoDB Local reads the access key and region (its database) from
        // here and checks no signature.
        .header(
            "authorization",
            format!("AWS4-HMAC-SHA256 Credential=local/20260101/{region}/dynamodb/aws4_request, SignedHeaders=host, Signature=0"),
        )
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = answer.status();
    let value: Value = answer.json().await.unwrap();
    assert!(status.is_success(), "{call}: {status} {value}");
    value
}

/// Every record the table's stream holds so far, as Lambda delivers them.
async fn stream_records(client: &Client, table: &str) -> Vec<Value> {
    let described = client.describe_table().table_name(table).send().await.unwrap();
    let arn = described
        .table()
        .and_then(|t| t.latest_stream_arn())
        .expect("the table has a stream (infra/table.json)")
        .to_owned();
    let stream = streams("DescribeStream", json!({ "StreamArn": arn })).await;
    let mut records = Vec::new();
    for shard in stream["StreamDescription"]["Shards"].as_array().unwrap() {
        let mut iterator = streams(
            "GetShardIterator",
            json!({ "StreamArn": arn, "ShardId": shard["ShardId"], "ShardIteratorType": "TRIM_HORIZON" }),
        )
        .await["ShardIterator"]
            .clone();
        // An open shard's iterator never ends: read until a page comes back empty.
        while let Some(at) = iterator.as_str().map(str::to_owned) {
            let page = streams("GetRecords", json!({ "ShardIterator": at, "Limit": 1000 })).await;
            let got = page["Records"].as_array().cloned().unwrap_or_default();
            if got.is_empty() {
                break;
            }
            records.extend(got.into_iter().map(|mut r| {
                r["eventSourceARN"] = json!(arn);
                r
            }));
            iterator = page["NextShardIterator"].clone();
        }
    }
    records
}

fn event(records: &[Value]) -> Event {
    serde_json::from_value(json!({ "Records": records })).expect("a DynamoDB stream event")
}

/// The records Lambda delivers once the template's filter has chosen
/// (inserts of purge markers: tools/sam-template, `purge_filter`).
fn marker_inserts(records: &[Value]) -> Vec<Value> {
    records
        .iter()
        .filter(|r| r["eventName"] == "INSERT" && r["dynamodb"]["Keys"]["PK"]["S"] == "PURGE")
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_delivers_each_deleted_posts_marker_and_the_handler_purges_it_once() {
    let (app, store, client, table) = fresh().await;
    let (first, second, kept) = (
        post_with(&store, 60, 3).await,
        post_with(&store, 5, 1).await,
        post_with(&store, 4, 2).await,
    );
    let kept_before = naming(&client, &table, &kept).await;
    for key in [&first, &second] {
        assert!(store.delete_post(key, false).await.unwrap());
        assert!(
            left_in(&client, &table, key).await > 0,
            "the delete loads and deletes no child"
        );
    }

    let all = stream_records(&client, &table).await;
    let markers = marker_inserts(&all);
    assert_eq!(markers.len(), 2, "one marker insert per deleted post");
    let parsed: Vec<_> = event(&all).records.iter().filter_map(purge_of).collect();
    assert_eq!(
        parsed.len(),
        2,
        "of every record the stream holds, only the markers' inserts are purges"
    );
    for (pending, key) in parsed.iter().zip([&first, &second]) {
        assert_eq!(
            (pending.board.as_str(), pending.post.as_str()),
            ("free", key.post.as_str())
        );
    }

    // Unfiltered (every write of the table), as a wider filter would deliver.
    let answer = purge_records(&app, event(&all)).await;
    assert!(answer.batch_item_failures.is_empty(), "{answer:?}");
    for key in [&first, &second] {
        assert_eq!(
            naming(&client, &table, key).await,
            0,
            "nothing of a purged post is left"
        );
        assert!(!store.purge_pending(key.post.as_str()).await.unwrap());
    }
    assert_eq!(
        naming(&client, &table, &kept).await,
        kept_before,
        "another post is untouched"
    );

    // Redelivered, as Lambda may: nothing to do, nothing fails.
    let started = Instant::now();
    let again = purge_records(&app, event(&markers)).await;
    assert!(again.batch_item_failures.is_empty(), "{again:?}");
    println!("a redelivered batch of 2 purged markers: {:?}", started.elapsed());
    assert_eq!(naming(&client, &table, &kept).await, kept_before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_purge_cut_off_midway_is_finished_when_its_record_is_delivered_again() {
    let (app, store, client, table) = fresh().await;
    let key = post_with(&store, 2_000, 5).await;
    assert!(store.delete_post(&key, false).await.unwrap());
    let before = left_in(&client, &table, &key).await;
    // The children: 2,000 comments and the best gate its likes made.
    assert_eq!(before, 2_001, "step 1 took the post item, its children are there");
    let markers = marker_inserts(&stream_records(&client, &table).await);
    assert_eq!(markers.len(), 1);

    // The function dies midway (a timeout, a lost environment): some
    // children are deleted, the rest and the marker stay.
    let running = {
        let (app, markers) = (app.clone(), markers.clone());
        tokio::spawn(async move { purge_records(&app, event(&markers)).await })
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left = left_in(&client, &table, &key).await;
        if left < before {
            break;
        }
        assert!(Instant::now() < deadline, "the purge never started");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    running.abort();
    let _ = running.await;
    let cut_at = left_in(&client, &table, &key).await;
    println!("cut off with {cut_at} of {before} items of the post's partition left");
    assert!(cut_at > 0, "cut off before the end");
    assert!(
        store.purge_pending(key.post.as_str()).await.unwrap(),
        "the marker stays"
    );
    assert_eq!(
        store.post_detail(&key).await.unwrap(),
        None,
        "and the post stays unreadable"
    );

    let answer = purge_records(&app, event(&markers)).await;
    assert!(answer.batch_item_failures.is_empty(), "{answer:?}");
    assert_eq!(naming(&client, &table, &key).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_purge_that_fails_names_its_record_and_leaves_the_rest_of_the_batch_for_the_retry() {
    let (_, store, client, table) = fresh().await;
    let (first, second) = (post_with(&store, 3, 0).await, post_with(&store, 3, 0).await);
    for key in [&first, &second] {
        assert!(store.delete_post(key, false).await.unwrap());
    }
    let markers = marker_inserts(&stream_records(&client, &table).await);
    assert_eq!(markers.len(), 2);

    // The same records, handled by a function whose table is not there.
    let missing = format!("{table}-missing");
    let broken = DynamoStore::with_client(client.clone(), &missing, false).await.unwrap();
    let broken = App::new(Arc::new(broken) as Arc<dyn Store>, AppSettings::default());
    let answer = purge_records(&broken, event(&markers)).await;
    let failed: Vec<_> = answer
        .batch_item_failures
        .iter()
        .map(|f| f.item_identifier.clone())
        .collect();
    assert_eq!(
        failed,
        vec![markers[0]["dynamodb"]["SequenceNumber"].as_str().map(str::to_owned)],
        "the first failure, by its sequence number; the retry starts there"
    );
    for key in [&first, &second] {
        assert!(
            store.purge_pending(key.post.as_str()).await.unwrap(),
            "nothing was purged"
        );
    }
}

/// The committed fixture (tests/fixtures/dynamodb-stream/purge-marker.json,
/// the shape Lambda delivers) reads as one purge; answered against a table
/// without that marker it fails nothing, against a table that is not there
/// it names the record by its sequence number, in the JSON Lambda reads.
#[tokio::test]
async fn the_committed_stream_fixture_is_one_purge_and_a_failure_is_named_as_lambda_reads_it() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/dynamodb-stream/purge-marker.json"
    );
    let fixture: Event = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let purges: Vec<_> = fixture.records.iter().filter_map(purge_of).collect();
    assert_eq!(purges.len(), 1);
    assert_eq!(
        (purges[0].board.as_str(), purges[0].post.as_str()),
        ("free", "01KBCQ3V9T7M2XGJ5E8WZ4N6RA")
    );
    let (app, _, client, table) = fresh().await;
    let answer = purge_records(&app, fixture.clone()).await;
    assert_eq!(
        serde_json::to_value(&answer).unwrap(),
        json!({ "batchItemFailures": [] })
    );

    let missing = DynamoStore::with_client(client, &format!("{table}-missing"), false)
        .await
        .unwrap();
    let broken = App::new(Arc::new(missing) as Arc<dyn Store>, AppSettings::default());
    let answer = purge_records(&broken, fixture).await;
    assert_eq!(
        serde_json::to_value(&answer).unwrap(),
        json!({ "batchItemFailures": [{ "itemIdentifier": "4421584500000000017450439091" }] })
    );
}

fn eventbridge_fixture() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/eventbridge/scheduled.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A member (store-level, as signup writes it) with a post of their own
/// carrying `comments` of their comments, and `comments` more of theirs on
/// `other`'s post, which they also like.
async fn member_with_content(
    store: &DynamoStore,
    name: &str,
    other: &PostKey,
    comments: usize,
) -> shared::domain::Member {
    use shared::store::{Members as _, Votes as _};
    let member = shared::domain::Member {
        id: new_id(),
        username: name.into(),
        nickname: name.into(),
        created_at: now(),
    };
    let hash = shared::domain::PasswordHash::new("not a hash".into());
    store.create_member(&member, &hash, None).await.unwrap();
    let author = Author::Member {
        member_id: member.id.clone(),
        nickname: member.nickname.clone(),
    };
    let at = now();
    let post = Post {
        summary: PostSummary {
            id: new_id(),
            board: "free".into(),
            title: "mine".into(),
            author: author.clone(),
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
        body: "body".into(),
        updated_at: at,
        revision_count: 0,
        media: Vec::new(),
    };
    store.create_post(&post, &writer(), None, None).await.unwrap();
    for on in [post.summary.id.as_str(), other.post.as_str()] {
        for i in 0..comments {
            let comment = Comment {
                id: new_id(),
                post_id: on.to_owned(),
                parent_id: None,
                body: format!("{name} {i}"),
                author: author.clone(),
                created_at: now(),
                media: Vec::new(),
            };
            store
                .create_comment(&free(), &comment, &writer(), None, false, None)
                .await
                .unwrap();
        }
    }
    let id = MemberId::from_stored(member.id.clone());
    store
        .vote(other, &id, shared::domain::VoteChange::Like, None)
        .await
        .unwrap()
        .unwrap();
    member
}

/// Step 1 of an account deletion alone (the store's write), as a Lambda
/// environment that died or timed out after it leaves it.
async fn closed_with_step_2_pending(store: &DynamoStore, member: &shared::domain::Member) -> MemberId {
    let id = MemberId::from_stored(member.id.clone());
    let username = shared::domain::Username::parse(member.username.clone()).unwrap();
    assert!(store.close_account(&id, &username, true, &[]).await.unwrap());
    assert_eq!(store.pending_deletions(10).await.unwrap().len(), 1, "step 2 pending");
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_schedule_finishes_an_abandoned_account_deletion_and_the_pending_purges() {
    let (app, store, client, table) = fresh().await;
    let others = post_with(&store, 2, 0).await;
    let kim = member_with_content(&store, "kim", &others, 30).await;
    let kim_id = closed_with_step_2_pending(&store, &kim).await;
    // A deleted post whose stream record was lost (its marker stays).
    let deleted = post_with(&store, 3, 1).await;
    assert!(store.delete_post(&deleted, false).await.unwrap());
    assert_eq!(store.pending_purges(10).await.unwrap().len(), 1);
    assert!(
        !store.owned(&kim_id, true, 100).await.unwrap().is_empty(),
        "kim's posts, comments and like are still there"
    );

    // EventBridge's scheduled event (the committed fixture), with a
    // deadline as Lambda's context gives it.
    let started = Instant::now();
    let answer = handle(&app, eventbridge_fixture(), started + Duration::from_secs(120))
        .await
        .unwrap();
    println!("a scheduled run: {answer} in {:?}", started.elapsed());
    assert_eq!(answer["deletions"], 1, "{answer}");
    assert_eq!(answer["complete"], true, "{answer}");
    assert!(answer["purges"].as_u64().unwrap() >= 1, "{answer}");

    assert!(
        store.pending_deletions(10).await.unwrap().is_empty(),
        "no deletion pending"
    );
    assert!(store.pending_purges(10).await.unwrap().is_empty(), "no purge pending");
    assert!(
        store.owned(&kim_id, true, 100).await.unwrap().is_empty(),
        "nothing of kim's is left"
    );
    assert_eq!(naming(&client, &table, &deleted).await, 0, "the deleted post is purged");
    // The other member's post keeps its own comments, counted exactly.
    let detail = store.post_detail(&others).await.unwrap().expect("the other post stays");
    assert_eq!(detail.post.summary.comment_count, 2);
    assert_eq!(detail.post.summary.like_count, 0);
    assert_eq!(
        left_in(&client, &table, &others).await,
        4,
        "the post item, its 2 comments and the best gate kim's withdrawn like left"
    );

    // Nothing left: the next run does nothing, and fails nothing.
    let again = handle(&app, eventbridge_fixture(), Instant::now() + Duration::from_secs(120))
        .await
        .unwrap();
    assert_eq!(again, json!({ "deletions": 0, "purges": 0, "complete": true }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_run_stops_at_its_deadline_and_the_next_one_finishes() {
    let (app, store, _, _) = fresh().await;
    let others = post_with(&store, 0, 0).await;
    let lee = member_with_content(&store, "lee", &others, 5).await;
    let lee_id = closed_with_step_2_pending(&store, &lee).await;

    // An invocation with less time left than the margin does nothing.
    let answer = resume_scheduled(&app, Instant::now() + shared::stream::SCHEDULE_MARGIN / 2)
        .await
        .unwrap();
    assert_eq!(answer["complete"], false, "{answer}");
    assert_eq!(answer["deletions"], 0, "{answer}");
    assert_eq!(store.pending_deletions(10).await.unwrap().len(), 1, "still pending");

    let answer = resume_scheduled(&app, Instant::now() + Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(answer["deletions"], 1, "{answer}");
    assert!(store.pending_deletions(10).await.unwrap().is_empty());
    assert!(store.owned(&lee_id, true, 100).await.unwrap().is_empty());
}

/// The stream's batches still go where they went: the committed stream
/// fixture through the same entry as the schedule; an event that is
/// neither fails the invocation.
#[tokio::test]
async fn one_entry_tells_a_stream_batch_from_a_scheduled_event() {
    use shared::stream::{Invocation, invocation_of};
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/dynamodb-stream/purge-marker.json"
    );
    let stream: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(matches!(invocation_of(stream.clone()).unwrap(), Invocation::Stream(e) if e.records.len() == 1));
    assert!(matches!(
        invocation_of(eventbridge_fixture()).unwrap(),
        Invocation::Schedule
    ));
    let (app, _, _, _) = fresh().await;
    let answer = handle(&app, stream, Instant::now() + Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(answer, json!({ "batchItemFailures": [] }));
    assert!(handle(&app, json!({ "hello": 1 }), Instant::now()).await.is_err());
}

/// A deletion's comment and like on a post deleted moments before,
/// whose purge has not run (its stream record not yet handled): step 2
/// purges that post to take them, instead of finding them again batch after
/// batch and stopping as stuck (the scheduled test found this).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deletion_takes_its_comments_on_a_deleted_post_whose_purge_has_not_run() {
    let (app, store, client, table) = fresh().await;
    let others = post_with(&store, 1, 0).await;
    let kim = member_with_content(&store, "kim", &others, 2).await;
    assert!(store.delete_post(&others, false).await.unwrap());
    assert_eq!(store.pending_purges(10).await.unwrap().len(), 1, "its purge is pending");
    let kim_id = closed_with_step_2_pending(&store, &kim).await;

    let done = app
        .finish_deletion(&shared::domain::PendingDeletion {
            member: kim_id.clone(),
            delete_content: true,
        })
        .await
        .expect("step 2 finishes");
    println!("{done:?}");
    assert!(store.owned(&kim_id, true, 100).await.unwrap().is_empty());
    assert!(store.pending_deletions(10).await.unwrap().is_empty());
    assert!(
        store.pending_purges(10).await.unwrap().is_empty(),
        "the post was purged on the way"
    );
    assert_eq!(naming(&client, &table, &others).await, 0);
}
