//! What moderation costs, and removals larger than one transaction.

use std::sync::Arc;

use crate::dynamo::{counted_dynamo_store_on, metered_dynamo_store};
use crate::moderation::{
    address, ban_id, ban_of, banned, comment_target, log_entry, log_of, member_subject, member_target, open_reports,
    post_target, report_id, report_of,
};
use crate::{
    Dyn, NOW, add_comments, board, comment_key, created_comment, created_post, endpoint, hash, id_of, limit, member,
    member_id, pending_purge, post_key, purged,
};
use futures::future::join_all;
use shared::domain::{CommentId, LogAction, LogTarget, Reported, new_id};
use shared::store::dynamo::{Layout, SdkTuning, client_config};

/// DynamoDB only: the ban check of a member's write (the member and the
/// address key) is one request, a consistent BatchGetItem of two small
/// items: at most 2 read units, banned or not.
#[tokio::test]
async fn the_ban_check_of_a_member_write_is_one_request_of_at_most_two_read_units() {
    let (dynamo, counter, meter) = metered_dynamo_store(Layout::default()).await;
    let store: Dyn = dynamo.clone();
    let free = board("free");
    let (kim, from) = (
        member_subject(),
        address("memberaddresskeyabcdefghijklmnopqrstuvwxyz234567abcd"),
    );
    let subjects = [kim.clone(), from.clone()];
    let mut measured = Vec::new();
    for banned_now in [None, Some(&kim), Some(&from)] {
        if let Some(subject) = banned_now {
            banned(&store, &ban_of("free", subject, Some(NOW + 60))).await;
        }
        meter.take();
        let before = counter.count();
        let found = store.active_ban(&free, &subjects, NOW).await.unwrap();
        let requests = counter.count() - before;
        let units = meter.take();
        assert_eq!(found.is_some(), banned_now.is_some());
        println!(
            "ban check of a member write (2 subjects), {}: {requests} request, {} RCU, {} WCU",
            match banned_now {
                None => "neither banned",
                Some(s) if *s == kim => "the member banned",
                Some(_) => "both banned",
            },
            units.table.read,
            units.table.write
        );
        assert_eq!(requests, 1);
        assert!(units.table.read <= 2.0, "{units:?}");
        assert_eq!(units.table.write, 0.0);
        measured.push(units.table.read);
    }
    // A guest's write: one subject, one GetItem.
    meter.take();
    let before = counter.count();
    store.active_ban(&free, &[from], NOW).await.unwrap().unwrap();
    assert_eq!(counter.count() - before, 1);
    let units = meter.take();
    println!(
        "ban check of a guest write (1 subject): 1 request, {} RCU",
        units.table.read
    );
    assert!(units.table.read <= 1.0, "{units:?}");
}

/// DynamoDB only: a removal of a post with more open reports than its
/// step-1 transaction has room for (64 counter shards leave 33 places)
/// resolves them all, and nothing of the post is left in the table.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn removing_a_post_with_more_reports_than_one_transaction_holds_resolves_them_all() {
    let table = format!("test-{}", new_id().to_lowercase());
    let (dynamo, _) = counted_dynamo_store_on(
        Layout {
            counter_shards: 64,
            ..Layout::default()
        },
        &table,
    )
    .await;
    let store: Dyn = Arc::new(dynamo);
    let free = board("free");
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let comments = add_comments(&store, "free", &pid, 40).await;
    for chunk in comments.chunks(10) {
        let reports = chunk.iter().map(|c| {
            let (store, free, r) = (
                store.clone(),
                free.clone(),
                report_of("free", comment_target(&pid, &c.id), "spam"),
            );
            tokio::spawn(async move { store.report(&free, &r, "member:A", None).await })
        });
        for result in join_all(reports).await {
            assert!(matches!(result.unwrap().unwrap(), Reported::Opened(_)));
        }
    }
    store
        .report(&free, &report_of("free", post_target(&pid), "spam"), "member:B", None)
        .await
        .unwrap();
    assert_eq!(open_reports(&store, "free").await.len(), 41);
    let entry = log_entry(
        LogAction::RemovePost,
        LogTarget::Post {
            post_id: pid.clone(),
            title: p.summary.title.clone(),
        },
    );
    assert!(store.remove_post(&post_key("free", &pid), &entry, None).await.unwrap());
    purged(&store).await;
    assert!(open_reports(&store, "free").await.is_empty());
    assert_eq!(log_of(&store, "free").await, vec![entry]);
    let client = aws_sdk_dynamodb::Client::from_conf(
        client_config(Some(&endpoint()), None, &SdkTuning::defaults(true))
            .await
            .unwrap()
            .build(),
    );
    let left = client
        .scan()
        .table_name(&table)
        .filter_expression("contains(PK, :post) OR SK = :post")
        .expression_attribute_values(":post", aws_sdk_dynamodb::types::AttributeValue::S(pid.clone()))
        .send()
        .await
        .unwrap();
    assert_eq!(left.items().len(), 0, "nothing of the post is left: {:?}", left.items());
}

/// DynamoDB only (docs/storage.md, Single-table design): the requests
/// and units of every moderation operation, small items, default layout.
/// Prints the table docs/storage.md shows; pins the request counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_moderation_operation_costs_a_fixed_number_of_dynamodb_requests() {
    let (dynamo, counter, meter) = metered_dynamo_store(Layout::default()).await;
    let store: Dyn = dynamo.clone();
    let free = board("free");
    let mut rows: Vec<(&str, u64, f64, f64, f64)> = Vec::new();
    macro_rules! measure {
        ($what:expr, $requests:expr, $work:expr) => {{
            meter.take();
            let before = counter.count();
            let out = $work;
            let requests = counter.count() - before;
            let units = meter.take();
            let index: f64 = units.indexes.values().map(|u| u.read).sum::<f64>() + 0.0;
            rows.push(($what, requests, units.table.read, units.table.write, index));
            assert_eq!(requests, $requests, "{}", $what);
            out
        }};
    }
    let m = member("costly");
    store.create_member(&m, &hash("h"), None).await.unwrap();
    measure!("member_by_id (ById Query, GetItem)", 2, {
        assert!(store.member_by_id(&id_of(&m)).await.unwrap().is_some())
    });
    measure!("is_moderator, uncached (GetItem, eventually consistent)", 1, {
        store.is_moderator(&free, &member_id()).await.unwrap()
    });
    let asked = member_id();
    store.is_moderator(&free, &asked).await.unwrap();
    measure!("is_moderator, cached (10 s)", 0, {
        store.is_moderator(&free, &asked).await.unwrap()
    });
    measure!("add_moderator (transaction: moderator, entry)", 1, {
        assert!(
            store
                .add_moderator(&free, &m, &log_entry(LogAction::AddModerator, member_target(&m)))
                .await
                .unwrap()
        )
    });
    measure!("moderators (Query)", 1, store.moderators(&free).await.unwrap());
    measure!("remove_moderator (transaction: delete, entry)", 1, {
        assert!(
            store
                .remove_moderator(
                    &free,
                    &id_of(&m),
                    &log_entry(LogAction::RemoveModerator, member_target(&m))
                )
                .await
                .unwrap()
        )
    });
    let subject = member_subject();
    let first = ban_of("free", &subject, Some(NOW + 600));
    measure!("ban, new subject (GetItem, transaction: subject, record, entry)", 2, {
        banned(&store, &first).await
    });
    let second = ban_of("free", &subject, None);
    measure!(
        "ban replacing one (GetItem, transaction: subject, old record deleted, record, entry)",
        2,
        banned(&store, &second).await
    );
    let from = address("costaddress");
    measure!("active_ban, 1 subject (GetItem)", 1, {
        store
            .active_ban(&free, std::slice::from_ref(&subject), NOW)
            .await
            .unwrap()
            .unwrap()
    });
    measure!("active_ban, 2 subjects (BatchGetItem)", 1, {
        store
            .active_ban(&free, &[subject.clone(), from.clone()], NOW)
            .await
            .unwrap()
            .unwrap()
    });
    measure!("ban_by_id (GetItem)", 1, {
        store.ban_by_id(&free, &ban_id(&second)).await.unwrap().unwrap()
    });
    measure!("list_bans, one page (Query)", 1, {
        store.list_bans(&free, limit(20), None, NOW).await.unwrap()
    });
    measure!("unban (transaction: record, subject, entry)", 1, {
        let entry = log_entry(LogAction::Unban, second.ban.target.clone().into());
        assert!(store.unban(&second, &entry).await.unwrap())
    });
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let c = created_comment(&store, "free", &pid, None).await;
    measure!("find_comment (ById Query; comment and purge marker GetItems)", 3, {
        store
            .find_comment(&free, &CommentId::parse(&c.id).unwrap())
            .await
            .unwrap()
            .unwrap()
    });
    let on_post = report_of("free", post_target(&pid), "spam");
    measure!(
        "report, opening (pointer GetItem, transaction: check, pointer, report, reporter)",
        2,
        store.report(&free, &on_post, "member:A", None).await.unwrap()
    );
    measure!(
        "report, joining (pointer GetItem, transaction: check, reporter, count)",
        2,
        store
            .report(&free, &report_of("free", post_target(&pid), "x"), "member:B", None)
            .await
            .unwrap()
    );
    measure!(
        "report, joining again (pointer GetItem, transaction refused)",
        2,
        store
            .report(&free, &report_of("free", post_target(&pid), "x"), "member:B", None)
            .await
            .unwrap()
    );
    let on_comment = report_of("free", comment_target(&pid, &c.id), "rude");
    measure!(
        "report of a comment, opening (pointer GetItem, transaction: 2 checks, pointer, report, reporter)",
        2,
        store.report(&free, &on_comment, "member:A", None).await.unwrap()
    );
    measure!("list_reports, one page (Query)", 1, {
        store.list_reports(&free, limit(20), None).await.unwrap()
    });
    measure!("resolve_report (GetItem, transaction: report, pointer)", 2, {
        assert!(store.resolve_report(&free, &report_id(&on_post), None).await.unwrap())
    });
    store
        .report(&free, &report_of("free", post_target(&pid), "again"), "member:A", None)
        .await
        .unwrap();
    let target = LogTarget::Comment {
        post_id: pid.clone(),
        comment_id: c.id.clone(),
    };
    measure!(
        "remove_comment, reported (pointer GetItem, transaction: comment, shard, entry, pointer, report)",
        2,
        assert!(
            store
                .remove_comment(
                    &comment_key("free", &pid, &c.id),
                    &log_entry(LogAction::RemoveComment, target),
                    None
                )
                .await
                .unwrap()
        )
    );
    created_comment(&store, "free", &pid, None).await;
    let target = LogTarget::Post {
        post_id: pid.clone(),
        title: p.summary.title.clone(),
    };
    measure!(
        "remove_post, 1 report, 1 comment (pointers Query, step 1 transaction)",
        2,
        assert!(
            store
                .remove_post(&post_key("free", &pid), &log_entry(LogAction::RemovePost, target), None)
                .await
                .unwrap()
        )
    );
    measure!(
        "its purge, off the request (marker GetItem, 10 Queries, the reports' BatchWriteItem, BatchWriteItem)",
        13,
        store.purge(&pending_purge("free", &pid)).await.unwrap()
    );
    measure!(
        "modlog, one page (Query)",
        1,
        store.modlog(&free, limit(20), None).await.unwrap()
    );

    println!("| operation | requests | table RCU | table WCU | index RCU |\n|---|---:|---:|---:|---:|");
    for (what, requests, read, write, index) in &rows {
        println!("| {what} | {requests} | {read} | {write} | {index} |");
    }
}

/// DynamoDB only (docs/storage.md): what an author's deletes
/// cost, reported or not, now that they resolve the target's open reports:
/// a comment's delete reads its pointer first (one more GetItem), a post's
/// purge deletes the reports its pointers and reporters name (one more
/// BatchWriteItem, only when there are any). Prints the rows; pins the
/// request counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authors_delete_costs_one_more_request_to_resolve_the_reports_of_what_it_deletes() {
    let (dynamo, counter, meter) = metered_dynamo_store(Layout::default()).await;
    let store: Dyn = dynamo.clone();
    let free = board("free");
    let mut rows: Vec<(&str, u64, u64, f64, f64)> = Vec::new();
    macro_rules! measure {
        ($what:expr, $requests:expr, $work:expr) => {{
            meter.take();
            let before = counter.count();
            let out = $work;
            let requests = counter.count() - before;
            let units = meter.take();
            rows.push(($what, $requests, requests, units.table.read, units.table.write));
            out
        }};
    }
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let plain = created_comment(&store, "free", &pid, None).await;
    let reported = created_comment(&store, "free", &pid, None).await;
    for reporter in ["member:A", "member:B"] {
        store
            .report(
                &free,
                &report_of("free", comment_target(&pid, &reported.id), "rude"),
                reporter,
                None,
            )
            .await
            .unwrap();
    }
    measure!(
        "delete_comment, unreported (pointer GetItem; transaction: comment, shard, no-pointer check)",
        2,
        {
            assert!(
                store
                    .delete_comment(&comment_key("free", &pid, &plain.id))
                    .await
                    .unwrap()
            )
        }
    );
    measure!(
        "delete_comment, reported (pointer GetItem; transaction: comment, shard, pointer, report)",
        2,
        {
            assert!(
                store
                    .delete_comment(&comment_key("free", &pid, &reported.id))
                    .await
                    .unwrap()
            )
        }
    );
    let unreported = created_post(&store, "free").await;
    created_comment(&store, "free", &unreported.summary.id, None).await;
    measure!("delete_post, 1 comment, unreported (step 1 transaction)", 1, {
        assert!(
            store
                .delete_post(&post_key("free", &unreported.summary.id), false)
                .await
                .unwrap()
        )
    });
    measure!(
        "its purge, off the request (marker GetItem, 10 Queries, BatchWriteItem)",
        12,
        store
            .purge(&pending_purge("free", &unreported.summary.id))
            .await
            .unwrap()
    );
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let c = created_comment(&store, "free", &pid, None).await;
    for (target, reporter) in [
        (post_target(&pid), "member:A"),
        (post_target(&pid), "member:B"),
        (comment_target(&pid, &c.id), "member:A"),
    ] {
        store
            .report(&free, &report_of("free", target, "spam"), reporter, None)
            .await
            .unwrap();
    }
    measure!(
        "delete_post, 1 comment, it and its comment reported: 2 reports, 3 reporters (step 1 transaction)",
        1,
        { assert!(store.delete_post(&post_key("free", &pid), false).await.unwrap()) }
    );
    measure!(
        "its purge (the same and the reports' BatchWriteItem)",
        13,
        store.purge(&pending_purge("free", &pid)).await.unwrap()
    );
    println!("| operation | requests | table RCU (Local) | table WCU (Local) |\n|---|---:|---:|---:|");
    for (what, _, requests, read, write) in &rows {
        println!("| {what} | {requests} | {read} | {write} |");
    }
    for (what, expected, requests, _, _) in &rows {
        assert_eq!(requests, expected, "{what}");
    }
    assert!(open_reports(&store, "free").await.is_empty());
}
