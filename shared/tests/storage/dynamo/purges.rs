//! What a delete and its purge leave in the table.

use std::sync::Arc;

use crate::dynamo::{counted_dynamo_store_on, items_naming, plain_client};
use crate::moderation::{comment_target, log_entry, open_reports, post_target, report_id, report_of, reported};
use crate::{
    Dyn, board, comment, comment_key, created_comment, created_post, endpoint, hash, limit, member_id, pending_purge,
    post_key, purged, views, writer,
};
use shared::domain::{LogAction, LogTarget, new_id};
use shared::store::StoreError;
use shared::store::dynamo::{DynamoStore, Layout, SdkTuning, client_config};

/// DynamoDB only: a post delete's first step (all the request does)
/// leaves nothing of the post readable (nor its history); a retried delete answers 404 and
/// loads no child; the purge, run for the post or for every pending one,
/// leaves nothing behind, and run again does nothing.
#[tokio::test]
async fn a_deleted_post_is_unreadable_at_once_and_its_purge_leaves_nothing_behind() {
    let table = format!("test-{}", new_id().to_lowercase());
    let client = aws_sdk_dynamodb::Client::from_conf(
        client_config(Some(&endpoint()), None, &SdkTuning::defaults(true))
            .await
            .unwrap()
            .build(),
    );
    let concrete = DynamoStore::with_client(client.clone(), &table, true).await.unwrap();
    let store: Dyn = Arc::new(concrete.clone());
    let left_of = |post: String| {
        let client = client.clone();
        let table = table.clone();
        async move {
            let out = client
                .scan()
                .table_name(&table)
                .filter_expression("contains(PK, :post) OR SK = :post")
                .expression_attribute_values(":post", aws_sdk_dynamodb::types::AttributeValue::S(post))
                .send()
                .await
                .unwrap();
            out.items().len()
        }
    };
    let mut posts = Vec::new();
    for _ in 0..2 {
        let p = created_post(&store, "free").await;
        let key = post_key("free", &p.summary.id);
        let c = comment(&p.summary.id, None, "guarded");
        store
            .create_comment(&board("free"), &c, &writer(), Some(&hash("$2b$08$secret")), false, None)
            .await
            .unwrap();
        store
            .create_comment(
                &board("free"),
                &comment(&p.summary.id, None, "b"),
                &writer(),
                None,
                false,
                None,
            )
            .await
            .unwrap();
        store
            .vote(&key, &member_id(), shared::domain::VoteChange::Like, None)
            .await
            .unwrap()
            .unwrap();
        views(&store, &key).await.unwrap();
        // Two edits: two revision items in the post's partition.
        for n in 0..2 {
            store
                .update_post(
                    &key,
                    &crate::edit(&format!("edit {n}"), "b", "2030-01-01T00:00:00.000Z"),
                )
                .await
                .unwrap();
        }
        posts.push((p, key, c));
    }

    for (i, (p, key, c)) in posts.iter().enumerate() {
        // Step 1 only, as if the process died right after it.
        assert!(concrete.mark_post_deleted("free", &p.summary.id).await.unwrap());
        assert!(left_of(p.summary.id.clone()).await > 0, "children are still there");
        assert_eq!(store.post_detail(key).await.unwrap(), None);
        assert_eq!(views(&store, key).await, None);
        assert_eq!(store.list_comments(key, limit(20), None).await.unwrap(), None);
        assert_eq!(crate::all_revisions(&store, key).await, None);
        let c_key = comment_key("free", &p.summary.id, &c.id);
        assert_eq!(
            store.comment_guard(&c_key).await.unwrap(),
            None,
            "no guard, no hash to check"
        );
        assert!(!store.delete_comment(&c_key).await.unwrap());
        assert_eq!(
            store
                .vote(key, &member_id(), shared::domain::VoteChange::Like, None)
                .await
                .unwrap(),
            None
        );
        assert_eq!(
            store
                .create_comment(
                    &board("free"),
                    &comment(&p.summary.id, None, "late"),
                    &writer(),
                    None,
                    false,
                    None
                )
                .await,
            Err(StoreError::NotFound)
        );
        let listed = store.list_posts(&board("free"), limit(20), None).await.unwrap();
        assert!(listed.posts.iter().all(|s| s.id != p.summary.id));

        // A retried delete answers 404 and leaves step 2 to the purge,
        // which finds the marker (in the first round while another post's
        // purge is pending too).
        assert!(!store.delete_post(key, false).await.unwrap());
        assert!(left_of(p.summary.id.clone()).await > 0, "the request loads no child");
        let pending = store.pending_purges(10).await.unwrap();
        assert!(pending.contains(&pending_purge("free", &p.summary.id)), "{pending:?}");
        if i == 0 {
            // Run for this post alone.
            store.purge(&pending_purge("free", &p.summary.id)).await.unwrap();
        } else {
            // Run for every pending one, as the server's background task does.
            purged(&store).await;
        }
        assert_eq!(left_of(p.summary.id.clone()).await, 0, "nothing of the post is left");
        assert!(!concrete.purge_pending(&p.summary.id).await.unwrap());
        // Redelivered: nothing to do, nothing fails.
        store.purge(&pending_purge("free", &p.summary.id)).await.unwrap();
    }
}

/// DynamoDB only: after an author's comment delete a table scan finds no
/// item naming the comment, and of its report only the reporters (until the
/// post's purge, as a resolved report's); after the post's delete, no item
/// naming the post or any report of it or its comments: no pointer, no
/// reporter, no open report in `REPORTS#<board>`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_authors_deletes_leave_no_item_of_the_comment_the_post_or_their_reports() {
    let table = format!("test-{}", new_id().to_lowercase());
    let (dynamo, _) = counted_dynamo_store_on(Layout::default(), &table).await;
    let store: Dyn = Arc::new(dynamo);
    let client = plain_client().await;
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let gone = created_comment(&store, "free", &pid, None).await;
    let kept = created_comment(&store, "free", &pid, None).await;
    let on_gone = reported(&store, comment_target(&pid, &gone.id), &["member:A", "member:B"]).await;
    let on_kept = reported(&store, comment_target(&pid, &kept.id), &["member:A"]).await;
    // A resolved report's reporters stay in the post's partition until the purge.
    let resolved = reported(&store, post_target(&pid), &["member:A", "address:K"]).await;
    assert!(
        store
            .resolve_report(&board("free"), &report_id(&resolved), None)
            .await
            .unwrap()
    );
    let on_post = reported(&store, post_target(&pid), &["member:A"]).await;
    assert!(!items_naming(&client, &table, &on_gone.id).await.is_empty());

    assert!(
        store
            .delete_comment(&comment_key("free", &pid, &gone.id))
            .await
            .unwrap()
    );
    let left = items_naming(&client, &table, &gone.id).await;
    assert!(left.is_empty(), "nothing names the comment: {left:?}");
    // Its report's pointer and its item in REPORTS#free are gone; its
    // reporters stay until their TTL or the post's purge, as a resolved
    // report's (they name the report, so no later report counts them).
    let left = items_naming(&client, &table, &on_gone.id).await;
    let sk = |item: &std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>| {
        item["SK"].as_s().unwrap().clone()
    };
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left.iter().all(|item| sk(item).starts_with("REPORTER#")), "{left:?}");
    assert_eq!(open_reports(&store, "free").await.len(), 2);

    assert!(store.delete_post(&post_key("free", &pid), false).await.unwrap());
    purged(&store).await;
    assert!(open_reports(&store, "free").await.is_empty());
    for text in [&pid, &kept.id, &on_gone.id, &on_kept.id, &on_post.id, &resolved.id] {
        let left = items_naming(&client, &table, text).await;
        assert!(left.is_empty(), "nothing names {text}: {left:?}");
    }
}

/// DynamoDB only: a reported post's delete after step 1 leaves its reports
/// open but unjoinable until its purge, which resolves them on the board the
/// marker names (whatever board a retried delete or the caller named), and
/// nothing of the post or its reports is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_deleted_reported_posts_purge_resolves_its_reports_on_the_board_its_marker_names() {
    let table = format!("test-{}", new_id().to_lowercase());
    let (concrete, _) = counted_dynamo_store_on(Layout::default(), &table).await;
    let store: Dyn = Arc::new(concrete.clone());
    let client = plain_client().await;
    let free = board("free");
    for resumed_by in [
        "its purge after a retried delete",
        "its purge after a retried delete naming another board",
        "its purge named with another board",
        "the purge of every pending post",
    ] {
        let p = created_post(&store, "free").await;
        let pid = p.summary.id.clone();
        let c = created_comment(&store, "free", &pid, None).await;
        let on_post = reported(&store, post_target(&pid), &["member:A", "member:B"]).await;
        let on_comment = reported(&store, comment_target(&pid, &c.id), &["member:A"]).await;

        // Step 1 only.
        assert!(concrete.mark_post_deleted("free", &pid).await.unwrap());
        for target in [post_target(&pid), comment_target(&pid, &c.id)] {
            assert_eq!(
                store
                    .report(&free, &report_of("free", target, "late"), "member:C", None)
                    .await,
                Err(StoreError::NotFound),
                "nothing of a deleted post is reported, not even while its purge is pending"
            );
        }
        assert!(concrete.purge_pending(&pid).await.unwrap());

        match resumed_by {
            "its purge after a retried delete" => {
                assert!(!store.delete_post(&post_key("free", &pid), false).await.unwrap());
                store.purge(&pending_purge("free", &pid)).await.unwrap();
            }
            "its purge after a retried delete naming another board" => {
                assert!(!store.delete_post(&post_key("qna", &pid), false).await.unwrap());
                store.purge(&pending_purge("free", &pid)).await.unwrap();
            }
            // The purge takes the board its marker names, not the caller's.
            "its purge named with another board" => store.purge(&pending_purge("qna", &pid)).await.unwrap(),
            _ => {
                // With another post removed meanwhile, whose purge is pending too.
                let other = created_post(&store, "free").await;
                let entry = log_entry(
                    LogAction::RemovePost,
                    LogTarget::Post {
                        post_id: other.summary.id.clone(),
                        title: other.summary.title.clone(),
                    },
                );
                assert!(
                    store
                        .remove_post(&post_key("free", &other.summary.id), &entry, None)
                        .await
                        .unwrap()
                );
                purged(&store).await;
            }
        }
        assert!(!concrete.purge_pending(&pid).await.unwrap(), "{resumed_by}");
        assert!(open_reports(&store, "free").await.is_empty(), "{resumed_by}");
        for text in [&pid, &c.id, &on_post.id, &on_comment.id] {
            let left = items_naming(&client, &table, text).await;
            assert!(left.is_empty(), "{resumed_by}: nothing names {text}: {left:?}");
        }
    }
}
