//! The `notify` function's handler against DynamoDB Local
//! (docs/DESIGN.md, Notifications): fed the records the table's own stream
//! holds, it notifies whom a post or comment concerns, once however often
//! a record is delivered, withdraws the notifications of what was deleted,
//! shows `deleted_member` for what a deleted account left, and names the
//! record that failed. The template's filter (`notify_filters`) is held to
//! the same records: it passes exactly those the handler reads.
//!
//! As in tests/purge.rs, the events are built from DynamoDB Local's stream
//! read over its HTTP API (`GetRecords`): each record there is, field for
//! field, what Lambda delivers in `Records`, which adds only `eventSourceARN`.
//!
//! The last test prints what a notification costs the function (requests,
//! read and write units) and the delay from a comment's write to its
//! notification when the stream is polled every 100 ms.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_lambda_events::event::dynamodb::Event;
use aws_sdk_dynamodb::Client;
use serde_json::{Value, json};
use shared::app::{App, AppSettings};
use shared::domain::{
    Author, BoardSlug, Boards, Comment, Member, MemberId, NotificationKind, PageLimit, PasswordHash, Post, PostId,
    PostKey, PostSummary, TextEvent, TextRef, Username, Writer, WriterKey, WrittenText, new_id, now,
};
use shared::store::dynamo::{CapacityMeter, DynamoStore, RequestCounter, SdkTuning, client_config};
use shared::store::{Accounts as _, Comments as _, Members as _, Notifications as _, Posts as _, Store};
use shared::stream::notify::{event_of, notify_filters, notify_records};

fn endpoint() -> String {
    std::env::var("DYNAMODB_ENDPOINT")
        .expect("DYNAMODB_ENDPOINT is not set: run the suite with `bash scripts/test-all`, which starts DynamoDB Local")
}

/// A fresh table with its stream (as `infra/table.json` says), a store on
/// it that counts its requests and meters its units, and the application.
struct Table {
    app: App,
    store: Arc<DynamoStore>,
    client: Client,
    name: String,
    requests: RequestCounter,
    meter: CapacityMeter,
}

async fn fresh() -> Table {
    let name = format!("notify-{}", new_id().to_lowercase());
    let requests = RequestCounter::default();
    let config = client_config(Some(&endpoint()), None, &SdkTuning::defaults(true))
        .await
        .unwrap();
    let client = Client::from_conf(config.clone().build());
    let counted = Client::from_conf(config.interceptor(requests.clone()).build());
    let meter = CapacityMeter::default();
    let store = Arc::new(
        DynamoStore::with_client(counted, &name, true)
            .await
            .unwrap()
            .metered(meter.clone()),
    );
    let view = shared::store::dynamo::schema::TableDefinition::load()
        .stream_specification
        .stream_view_type;
    client
        .update_table()
        .table_name(&name)
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
    Table {
        app,
        store,
        client,
        name,
        requests,
        meter,
    }
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

async fn member(store: &DynamoStore, name: &str) -> (MemberId, Author) {
    let member = Member {
        id: new_id(),
        username: name.into(),
        nickname: name.into(),
        created_at: now(),
    };
    store
        .create_member(&member, &PasswordHash::new("not a hash".into()), None)
        .await
        .unwrap();
    let author = Author::Member {
        member_id: member.id.clone(),
        nickname: member.nickname.clone(),
    };
    (MemberId::from_stored(member.id), author)
}

async fn post_by(store: &DynamoStore, author: &Author, title: &str, body: &str) -> PostKey {
    let at = now();
    let post = Post {
        summary: PostSummary {
            id: new_id(),
            board: "free".into(),
            title: title.into(),
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
        body: body.into(),
        updated_at: at,
        revision_count: 0,
        media: Vec::new(),
    };
    store.create_post(&post, &writer(), None, None).await.unwrap();
    PostKey {
        board: free(),
        post: PostId::parse(&post.summary.id).unwrap(),
    }
}

async fn comment_by(store: &DynamoStore, on: &PostKey, parent: Option<&str>, author: &Author, body: &str) -> String {
    let comment = Comment {
        id: new_id(),
        post_id: on.post.as_str().to_owned(),
        parent_id: parent.map(str::to_owned),
        body: body.into(),
        author: author.clone(),
        created_at: now(),
        media: Vec::new(),
    };
    store
        .create_comment(&free(), &comment, &writer(), None, false, None)
        .await
        .unwrap();
    comment.id
}

/// One call of DynamoDB Local's Streams API.
async fn streams(call: &str, body: Value) -> Value {
    let region = std::env::var("AWS_REGION").unwrap_or_else(|_| "us-east-1".into());
    let answer = reqwest::Client::new()
        .post(endpoint())
        .header("content-type", "application/x-amz-json-1.0")
        .header("x-amz-target", format!("DynamoDBStreams_20120810.{call}"))
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

/// A reader of the table's stream from its start, as Lambda's poller:
/// each `poll` is one `GetRecords` per shard from where the last stopped.
struct StreamReader {
    arn: String,
    iterators: Vec<Value>,
}

impl StreamReader {
    async fn open(client: &Client, table: &str) -> Self {
        let described = client.describe_table().table_name(table).send().await.unwrap();
        let arn = described
            .table()
            .and_then(|t| t.latest_stream_arn())
            .expect("the table has a stream (infra/table.json)")
            .to_owned();
        let stream = streams("DescribeStream", json!({ "StreamArn": arn })).await;
        let mut iterators = Vec::new();
        for shard in stream["StreamDescription"]["Shards"].as_array().unwrap() {
            iterators.push(
                streams(
                    "GetShardIterator",
                    json!({ "StreamArn": arn, "ShardId": shard["ShardId"], "ShardIteratorType": "TRIM_HORIZON" }),
                )
                .await["ShardIterator"]
                    .clone(),
            );
        }
        StreamReader { arn, iterators }
    }

    /// The records written since the last poll, as Lambda delivers them.
    async fn poll(&mut self) -> Vec<Value> {
        let mut records = Vec::new();
        for iterator in &mut self.iterators {
            let Some(at) = iterator.as_str().map(str::to_owned) else {
                continue;
            };
            let page = streams("GetRecords", json!({ "ShardIterator": at, "Limit": 1000 })).await;
            records.extend(
                page["Records"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|mut r| {
                        r["eventSourceARN"] = json!(self.arn);
                        r
                    }),
            );
            *iterator = page["NextShardIterator"].clone();
        }
        records
    }

    /// Every record so far: polls until one comes back empty.
    async fn drain(&mut self) -> Vec<Value> {
        let mut all = Vec::new();
        loop {
            let got = self.poll().await;
            if got.is_empty() {
                return all;
            }
            all.extend(got);
        }
    }
}

fn event(records: &[Value]) -> Event {
    serde_json::from_value(json!({ "Records": records })).expect("a DynamoDB stream event")
}

/// Whether `value` matches an event filter pattern, as Lambda's filtering
/// reads the parts the notify filter uses: objects field by field, a list
/// of exact strings and `{"prefix": ...}` rules (any of them).
fn matches(pattern: &Value, value: &Value) -> bool {
    match pattern {
        Value::Object(fields) => fields
            .iter()
            .all(|(name, inner)| value.get(name).is_some_and(|v| matches(inner, v))),
        Value::Array(rules) => rules.iter().any(|rule| match (rule, value) {
            (Value::String(exact), Value::String(s)) => exact == s,
            (Value::Object(rule), Value::String(s)) => rule
                .get("prefix")
                .and_then(Value::as_str)
                .is_some_and(|p| s.starts_with(p)),
            _ => false,
        }),
        _ => false,
    }
}

/// The records the event source mapping delivers (`notify_filters`).
fn filtered(records: &[Value]) -> Vec<Value> {
    let filters = notify_filters();
    records
        .iter()
        .filter(|r| filters.iter().any(|f| matches(f, r)))
        .cloned()
        .collect()
}

async fn notifications_of(store: &DynamoStore, member: &MemberId) -> Vec<shared::domain::Notification> {
    store
        .notifications(member, PageLimit::parse(Some("100"), 20).unwrap(), None)
        .await
        .unwrap()
        .notifications
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_tells_the_handler_of_each_text_and_it_notifies_whom_it_concerns_once() {
    let t = fresh().await;
    let (kim, kim_author) = member(&t.store, "kim").await;
    let (lee, lee_author) = member(&t.store, "lee").await;
    let (mia, _) = member(&t.store, "mia").await;
    let mut reader = StreamReader::open(&t.client, &t.name).await;

    // kim posts; lee comments, mentioning mia; kim answers lee.
    let post = post_by(&t.store, &kim_author, "a question", "what do you think?").await;
    let lees = comment_by(&t.store, &post, None, &lee_author, "ask @mia, she knows").await;
    let kims = comment_by(&t.store, &post, Some(&lees), &kim_author, "thanks lee").await;

    let all = reader.drain().await;
    let delivered = filtered(&all);
    let read: Vec<TextEvent> = event(&delivered).records.iter().filter_map(event_of).collect();
    assert_eq!(read.len(), 3, "the post and two comments: {delivered:#?}");
    for record in &event(&all).records {
        let passed = delivered
            .iter()
            .any(|d| d["dynamodb"]["SequenceNumber"] == json!(record.change.sequence_number));
        assert_eq!(
            event_of(record).is_some(),
            passed,
            "the filter passes exactly the records the handler reads: {} {:?}",
            record.event_name,
            record.change.keys
        );
    }
    assert!(
        matches!(&read[1], TextEvent::Written(WrittenText { text, parent: None, author, title: None, body })
        if text.comment.as_deref() == Some(lees.as_str()) && *author == lee_author && body == "ask @mia, she knows")
    );
    assert!(
        matches!(&read[2], TextEvent::Written(WrittenText { parent: Some(p), .. }) if *p == lees),
        "a reply names its parent"
    );

    // Unfiltered (every write of the table), as a wider filter would deliver.
    let answer = notify_records(&t.app, event(&all)).await;
    assert!(answer.batch_item_failures.is_empty(), "{answer:?}");
    let kinds = |list: &[shared::domain::Notification]| list.iter().map(|n| n.kind).collect::<Vec<_>>();
    assert_eq!(
        kinds(&notifications_of(&t.store, &kim).await),
        [NotificationKind::Comment]
    );
    assert_eq!(
        kinds(&notifications_of(&t.store, &mia).await),
        [NotificationKind::Mention]
    );
    let to_lee = notifications_of(&t.store, &lee).await;
    assert_eq!(kinds(&to_lee), [NotificationKind::Reply]);
    assert_eq!(
        (
            to_lee[0].comment_id.as_deref(),
            &to_lee[0].actor,
            to_lee[0].excerpt.as_str()
        ),
        (Some(kims.as_str()), &kim_author, "thanks lee")
    );

    // Delivered again, as Lambda may: nobody is notified twice.
    let again = notify_records(&t.app, event(&delivered)).await;
    assert!(again.batch_item_failures.is_empty(), "{again:?}");
    for member in [&kim, &lee, &mia] {
        assert_eq!(notifications_of(&t.store, member).await.len(), 1);
    }

    // kim deletes the reply: lee's notification goes.
    let reply = shared::domain::CommentKey {
        post: post.clone(),
        comment: shared::domain::CommentId::from_stored(kims.clone()),
    };
    assert!(t.store.delete_comment(&reply).await.unwrap());
    // lee's account goes, the content kept: what lee wrote shows deleted_member.
    let username = Username::parse("lee".into()).unwrap();
    assert!(t.store.close_account(&lee, &username, false, &[]).await.unwrap());
    let owned = t.store.owned(&lee, false, 100).await.unwrap();
    t.store.disown(&lee, &owned).await.unwrap();

    let later = filtered(&reader.drain().await);
    let read: Vec<TextEvent> = event(&later).records.iter().filter_map(event_of).collect();
    assert_eq!(
        read,
        [
            TextEvent::Gone(TextRef {
                post: PostKey {
                    board: BoardSlug::from_stored(String::new()),
                    post: post.post.clone()
                },
                comment: Some(kims.clone())
            }),
            TextEvent::Disowned(TextRef {
                post: post.clone(),
                comment: Some(lees.clone())
            }),
        ],
        "a remove names no board (its record has keys only)"
    );
    let answer = notify_records(&t.app, event(&later)).await;
    assert!(answer.batch_item_failures.is_empty(), "{answer:?}");
    assert!(
        notifications_of(&t.store, &lee).await.is_empty(),
        "the reply's is withdrawn"
    );
    for member in [&kim, &mia] {
        let list = notifications_of(&t.store, member).await;
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].actor, Author::deleted_member(), "lee's comment is disowned");
    }

    // kim deletes the post: every notification of it and its comments goes.
    assert!(t.store.delete_post(&post, false).await.unwrap());
    let last = filtered(&reader.drain().await);
    let read: Vec<TextEvent> = event(&last).records.iter().filter_map(event_of).collect();
    assert_eq!(
        read,
        [TextEvent::Gone(TextRef {
            post: post.clone(),
            comment: None
        })],
        "the purge marker's insert, with the board"
    );
    let answer = notify_records(&t.app, event(&last)).await;
    assert!(answer.batch_item_failures.is_empty(), "{answer:?}");
    for member in [&kim, &lee, &mia] {
        assert!(notifications_of(&t.store, member).await.is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_event_that_fails_names_its_record_and_leaves_the_rest_of_the_batch_for_the_retry() {
    let t = fresh().await;
    let (_, kim_author) = member(&t.store, "kim").await;
    let (_, lee_author) = member(&t.store, "lee").await;
    let mut reader = StreamReader::open(&t.client, &t.name).await;
    let post = post_by(&t.store, &kim_author, "title", "body").await;
    comment_by(&t.store, &post, None, &lee_author, "first").await;
    comment_by(&t.store, &post, None, &lee_author, "second").await;
    let delivered = filtered(&reader.drain().await);
    assert_eq!(delivered.len(), 3);

    // The same records, handled by a function whose table is not there:
    // the post notifies nobody without a read, its first comment fails.
    let missing = DynamoStore::with_client(t.client.clone(), &format!("{}-missing", t.name), false)
        .await
        .unwrap();
    let broken = App::new(Arc::new(missing) as Arc<dyn Store>, AppSettings::default());
    let answer = notify_records(&broken, event(&delivered)).await;
    let failed: Vec<_> = answer
        .batch_item_failures
        .iter()
        .map(|f| f.item_identifier.clone())
        .collect();
    assert_eq!(
        failed,
        vec![delivered[1]["dynamodb"]["SequenceNumber"].as_str().map(str::to_owned)],
        "the first failure, by its sequence number; the retry starts there"
    );
}

/// The committed fixture (tests/fixtures/dynamodb-stream/notify.json:
/// records as DynamoDB's stream delivers them to Lambda) reads as the
/// text events it holds, and the filter passes exactly those.
#[test]
fn the_committed_stream_fixture_reads_as_its_text_events() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/dynamodb-stream/notify.json"
    );
    let raw: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let fixture: Event = serde_json::from_value(raw.clone()).unwrap();
    let read: Vec<Option<TextEvent>> = fixture.records.iter().map(event_of).collect();
    let post = PostKey {
        board: BoardSlug::from_stored("free".into()),
        post: PostId::from_stored("01KBCQ3V9T7M2XGJ5E8WZ4N6RA".into()),
    };
    let kim = Author::Member {
        member_id: "01KBCQ2A1B2C3D4E5F6G7H8J9K".into(),
        nickname: "kim".into(),
    };
    let lee = Author::Member {
        member_id: "01KBCQ2M0N1P2Q3R4S5T6V7W8X".into(),
        nickname: "lee".into(),
    };
    let comment = |id: &str| TextRef {
        post: post.clone(),
        comment: Some(id.into()),
    };
    assert_eq!(
        read,
        [
            Some(TextEvent::Written(WrittenText {
                text: TextRef {
                    post: post.clone(),
                    comment: None
                },
                parent: None,
                author: kim.clone(),
                title: Some("a question".into()),
                body: "what do you think, @lee?".into(),
            })),
            Some(TextEvent::Written(WrittenText {
                text: comment("01KBCQ4B7C8D9E0F1G2H3J4K5M"),
                parent: None,
                author: lee,
                title: None,
                body: "ask @mia".into(),
            })),
            Some(TextEvent::Written(WrittenText {
                text: comment("01KBCQ4Z9Y8X7W6V5T4S3R2Q1P"),
                parent: Some("01KBCQ4B7C8D9E0F1G2H3J4K5M".into()),
                author: kim,
                title: None,
                body: "thanks".into(),
            })),
            // A counter shard's update: no text event.
            None,
            Some(TextEvent::Gone(TextRef {
                post: PostKey {
                    board: BoardSlug::from_stored(String::new()),
                    post: post.post.clone(),
                },
                comment: Some("01KBCQ4Z9Y8X7W6V5T4S3R2Q1P".into()),
            })),
            Some(TextEvent::Disowned(comment("01KBCQ4B7C8D9E0F1G2H3J4K5M"))),
            // The post item's remove: its marker's insert says it.
            None,
            Some(TextEvent::Gone(TextRef {
                post: post.clone(),
                comment: None
            })),
        ]
    );
    let filters = notify_filters();
    for (record, event) in raw["Records"].as_array().unwrap().iter().zip(&read) {
        assert_eq!(filters.iter().any(|f| matches(f, record)), event.is_some(), "{record}");
    }
}

/// What one notified comment costs the `notify` function, and how long
/// after its write returned the notification exists, with the stream
/// polled every 100 ms (Lambda's poller reads each shard about 4 times a
/// second, and invokes at once with no batching window).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comments_notification_costs_and_its_delay_from_the_write() {
    const COMMENTS: usize = 50;
    let t = fresh().await;
    let (kim, kim_author) = member(&t.store, "kim").await;
    let (_, lee_author) = member(&t.store, "lee").await;
    let post = post_by(&t.store, &kim_author, "popular", "comment here").await;
    let mut reader = StreamReader::open(&t.client, &t.name).await;
    let _ = reader.drain().await;

    // The poller: every 100 ms, what the stream has since, through the
    // filter, to the handler; when each comment's notification exists.
    let (handled_tx, mut handled_rx) = tokio::sync::mpsc::unbounded_channel::<(String, Instant)>();
    let app = t.app.clone();
    let (requests, meter) = (t.requests.clone(), t.meter.clone());
    let poller = tokio::spawn(async move {
        let (mut invocations, mut used_requests, mut write, mut read) = (0u64, 0u64, 0.0f64, 0.0f64);
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        let mut seen = 0;
        while seen < COMMENTS {
            tick.tick().await;
            let batch = filtered(&reader.poll().await);
            if batch.is_empty() {
                continue;
            }
            let before = requests.count();
            let _ = meter.take();
            let answer = notify_records(&app, event(&batch)).await;
            let done = Instant::now();
            assert!(answer.batch_item_failures.is_empty(), "{answer:?}");
            invocations += 1;
            used_requests += requests.count() - before;
            let consumed = meter.take();
            write += consumed.table.write + consumed.indexes.values().map(|u| u.write).sum::<f64>();
            read += consumed.table.read + consumed.indexes.values().map(|u| u.read).sum::<f64>();
            for record in event(&batch).records.iter() {
                if let Some(TextEvent::Written(written)) = event_of(record)
                    && let Some(comment) = written.text.comment
                {
                    seen += 1;
                    handled_tx.send((comment, done)).unwrap();
                }
            }
        }
        (invocations, used_requests, write, read)
    });

    let mut written_at: HashMap<String, Instant> = HashMap::new();
    for i in 0..COMMENTS {
        // Writes at every phase of the poller's 100 ms.
        tokio::time::sleep(Duration::from_millis(37 * (i as u64 % 7) + 20)).await;
        let id = comment_by(&t.store, &post, None, &lee_author, &format!("comment {i}")).await;
        written_at.insert(id, Instant::now());
    }
    let (invocations, used_requests, write, read) = poller.await.unwrap();
    let mut delays = Vec::new();
    while let Ok((comment, handled)) = handled_rx.try_recv() {
        delays.push(handled.duration_since(written_at[&comment]));
    }
    assert_eq!(delays.len(), COMMENTS);
    assert_eq!(
        notifications_of(&t.store, &kim).await.len(),
        COMMENTS,
        "each comment notified the post's author"
    );
    delays.sort();
    let at = |q: f64| delays[((delays.len() - 1) as f64 * q).round() as usize];
    let per = COMMENTS as f64;
    println!(
        "notify, per comment notified ({COMMENTS} comments on one post, one recipient each, the stream polled every 100 ms):"
    );
    println!(
        "  invocations {:.2} ({invocations} batches), DynamoDB requests {:.2}, write units {:.2}, read units {:.2}",
        invocations as f64 / per,
        used_requests as f64 / per,
        write / per,
        read / per
    );
    println!(
        "  delay from the write's return to the notification: median {:?}, p99 {:?}, max {:?}",
        at(0.5),
        at(0.99),
        delays[delays.len() - 1]
    );
    assert!(invocations as usize <= COMMENTS, "one invocation per batch at most");
}
