//! (v3) The `purge` function's handler against DynamoDB Local
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

use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_lambda_events::event::dynamodb::Event;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::{AttributeValue, Select};
use serde_json::{Value, json};
use shared::app::{App, AppSettings};
use shared::domain::{
    Author, BoardSlug, Boards, Comment, MemberId, Post, PostKey, PostSummary, WriterKey, new_id, now,
};
use shared::store::dynamo::{DynamoStore, SdkTuning, client_config};
use shared::store::{Comments as _, Posts, Store};
use shared::stream::{purge_of, purge_records};

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

fn writer() -> WriterKey {
    WriterKey::new("testwriterkeyabcdefghijklmnopqrstuvwxyz234567abcdef".into())
}

/// A post on `free` with `comments` comments and a like of each of `likes` members.
async fn post_with(store: &DynamoStore, comments: usize, likes: usize) -> PostKey {
    let at = now();
    let author = Author::Guest {
        nickname: "Lee".into(),
        tag: Some(writer().tag()),
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
        },
        body: "body".into(),
        updated_at: at,
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
        })
        .collect();
    for chunk in all.chunks(25) {
        futures::future::join_all(
            chunk
                .iter()
                .map(|c| async move { store.create_comment(&free(), c, &writer(), None, None).await.unwrap() }),
        )
        .await;
    }
    let key = PostKey {
        board: free(),
        post: shared::domain::PostId::parse(&id).unwrap(),
    };
    for i in 0..likes {
        use shared::store::Likes as _;
        let member = MemberId::from_stored(format!("member{i}"));
        store.like(&key, &member).await.unwrap().unwrap();
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
        assert!(store.delete_post(key).await.unwrap());
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
    assert!(store.delete_post(&key).await.unwrap());
    let before = left_in(&client, &table, &key).await;
    assert_eq!(before, 2_000, "step 1 took the post item, its children are there");
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
        assert!(store.delete_post(key).await.unwrap());
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
