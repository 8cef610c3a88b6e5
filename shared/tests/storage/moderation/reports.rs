//! Reports: one per target, removals, and the deletes that resolve them, also
//! while racing.

use crate::moderation::{
    comment_target, counted, log_entry, log_of, open_reports, post_target, report_id, report_of, reported,
};
use crate::{
    Dyn, board, comment_count, comment_key, created_comment, created_post, limit, member_id, post_id, post_key, purged,
    views,
};
use futures::future::join_all;
use shared::domain::{LogAction, LogTarget, Report, ReportTarget, Reported, new_id};
use shared::store::StoreError;

conformance!(
    one_report_per_target_counts_each_reporter_once_and_a_resolved_one_makes_way_for_the_next,
    reports_of_a_missing_or_removed_target_are_not_found,
    removing_a_post_deletes_it_like_a_delete_resolves_its_reports_and_is_logged_once,
    removing_a_comment_keeps_its_replies_uncounts_it_and_resolves_its_report,
    deleting_a_post_resolves_its_open_reports_and_its_comments_but_no_others,
    deleting_a_comment_resolves_its_open_report_and_no_other,
    a_comment_deleted_while_it_is_being_reported_leaves_no_open_report_of_it,
    a_post_deleted_while_it_and_its_comments_are_being_reported_leaves_no_open_report_of_them,
    twenty_reporters_reporting_one_post_at_once_open_one_report_that_counts_each_once,
);

/// Reports of `targets` by 10 reporters each, all at once, with `delete`
/// started among them; each report answers a report or 404. What `delete`
/// answered.
async fn reports_racing<F>(store: &Dyn, targets: &[ReportTarget], delete: F) -> bool
where
    F: std::future::Future<Output = Result<bool, StoreError>> + Send + 'static,
{
    let mut reports = Vec::new();
    for (i, target) in targets.iter().enumerate() {
        for reporter in 0..10 {
            let (store, r) = (store.clone(), report_of("free", target.clone(), "spam"));
            reports.push(tokio::spawn(async move {
                store
                    .report(&board("free"), &r, &format!("member:{i}-{reporter}"), None)
                    .await
            }));
        }
    }
    let deleted = tokio::spawn(delete);
    for outcome in join_all(reports).await {
        match outcome.unwrap() {
            Ok(_) | Err(StoreError::NotFound) => {}
            Err(e) => panic!("a report racing the delete failed: {e:?}"),
        }
    }
    deleted.await.unwrap().unwrap()
}

async fn one_report_per_target_counts_each_reporter_once_and_a_resolved_one_makes_way_for_the_next(store: Dyn) {
    let free = board("free");
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let c = created_comment(&store, "free", &pid, None).await;

    let first = report_of("free", post_target(&pid), "spam");
    let shown = first.clone().for_reporter();
    assert_eq!(
        store.report(&free, &first, "member:A", None).await.unwrap(),
        Reported::Opened(shown.clone())
    );
    for reporter in ["member:A", "address:K", "member:B", "address:K"] {
        let later = report_of("free", post_target(&pid), "another reason");
        assert_eq!(
            store.report(&free, &later, reporter, None).await.unwrap(),
            Reported::Joined(shown.clone()),
            "{reporter}: the same report, the first reason"
        );
    }
    let on_comment = report_of("free", comment_target(&pid, &c.id), "rude");
    assert_eq!(
        store.report(&free, &on_comment, "member:A", None).await.unwrap(),
        Reported::Opened(on_comment.clone()),
        "a comment is a target of its own"
    );
    assert_eq!(
        open_reports(&store, "free").await,
        vec![counted(&on_comment, 1), counted(&first, 3)],
        "newest first, distinct reporters counted once each"
    );
    assert!(open_reports(&store, "qna").await.is_empty());

    // Resolved: it leaves the list, once.
    assert!(
        !store
            .resolve_report(&board("qna"), &report_id(&first), None)
            .await
            .unwrap(),
        "not on that board"
    );
    assert!(store.resolve_report(&free, &report_id(&first), None).await.unwrap());
    assert!(!store.resolve_report(&free, &report_id(&first), None).await.unwrap());
    assert_eq!(open_reports(&store, "free").await, vec![counted(&on_comment, 1)]);

    // The next report opens a new one, where an earlier reporter counts again.
    let next = report_of("free", post_target(&pid), "spam again");
    assert_eq!(
        store.report(&free, &next, "member:A", None).await.unwrap(),
        Reported::Opened(next.clone())
    );
    assert_eq!(
        store
            .report(&free, &report_of("free", post_target(&pid), "x"), "member:B", None)
            .await
            .unwrap(),
        Reported::Joined(next.clone())
    );
    assert_eq!(
        open_reports(&store, "free").await,
        vec![counted(&next, 2), counted(&on_comment, 1)]
    );

    // Paged newest first; a cursor not issued is refused.
    let page = store.list_reports(&free, limit(1), None).await.unwrap();
    assert_eq!(page.reports, vec![counted(&next, 2)]);
    let rest = store
        .list_reports(&free, limit(1), page.next_cursor.as_deref())
        .await
        .unwrap();
    assert_eq!((rest.reports, rest.next_cursor), (vec![counted(&on_comment, 1)], None));
    assert_eq!(
        store.list_reports(&free, limit(1), Some("garbage!")).await,
        Err(StoreError::InvalidCursor)
    );
}

async fn reports_of_a_missing_or_removed_target_are_not_found(store: Dyn) {
    let free = board("free");
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let c = created_comment(&store, "free", &pid, None).await;
    let other = created_post(&store, "free").await;
    let report = |target: ReportTarget| report_of("free", target, "spam");
    for (what, board_slug, target) in [
        ("a post of another board", "qna", post_target(&pid)),
        ("a comment of another board", "qna", comment_target(&pid, &c.id)),
        ("no such post", "free", post_target(&new_id())),
        ("no such comment", "free", comment_target(&pid, &new_id())),
        (
            "a comment under another post",
            "free",
            comment_target(&other.summary.id, &c.id),
        ),
        ("a post id as a comment", "free", comment_target(&pid, &pid)),
    ] {
        assert_eq!(
            store
                .report(&board(board_slug), &report(target), "member:A", None)
                .await,
            Err(StoreError::NotFound),
            "{what}"
        );
    }
    // Deleted by their authors.
    let ck = comment_key("free", &pid, &c.id);
    assert!(store.delete_comment(&ck).await.unwrap());
    assert_eq!(
        store
            .report(&free, &report(comment_target(&pid, &c.id)), "member:A", None)
            .await,
        Err(StoreError::NotFound)
    );
    let kept = created_comment(&store, "free", &pid, None).await;
    assert!(store.delete_post(&post_key("free", &pid), false).await.unwrap());
    for target in [post_target(&pid), comment_target(&pid, &kept.id)] {
        assert_eq!(
            store.report(&free, &report(target), "member:A", None).await,
            Err(StoreError::NotFound)
        );
    }
    assert!(open_reports(&store, "free").await.is_empty(), "nothing was opened");
}

async fn removing_a_post_deletes_it_like_a_delete_resolves_its_reports_and_is_logged_once(store: Dyn) {
    let free = board("free");
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let key = post_key("free", &pid);
    let top = created_comment(&store, "free", &pid, None).await;
    let reply = created_comment(&store, "free", &pid, Some(&top.id)).await;
    let fan = member_id();
    store
        .vote(&key, &fan, shared::domain::VoteChange::Like, None)
        .await
        .unwrap()
        .unwrap();
    for target in [
        post_target(&pid),
        comment_target(&pid, &top.id),
        comment_target(&pid, &reply.id),
    ] {
        store
            .report(&free, &report_of("free", target, "spam"), "member:A", None)
            .await
            .unwrap();
    }
    let survivor = created_post(&store, "free").await;
    let kept = report_of("free", post_target(&survivor.summary.id), "spam");
    store.report(&free, &kept, "member:A", None).await.unwrap();
    assert_eq!(open_reports(&store, "free").await.len(), 4);

    let target = LogTarget::Post {
        post_id: pid.clone(),
        title: p.summary.title.clone(),
    };
    let removal = log_entry(LogAction::RemovePost, target.clone());
    assert!(
        !store
            .remove_post(
                &post_key("qna", &pid),
                &log_entry(LogAction::RemovePost, target.clone()),
                None
            )
            .await
            .unwrap(),
        "not on that board"
    );
    assert!(store.remove_post(&key, &removal, None).await.unwrap());
    purged(&store).await;
    assert_eq!(store.post_detail(&key).await.unwrap(), None);
    assert_eq!(views(&store, &key).await, None);
    assert_eq!(store.list_comments(&key, limit(20), None).await.unwrap(), None);
    for c in [&top, &reply] {
        assert_eq!(
            store.comment_guard(&comment_key("free", &pid, &c.id)).await.unwrap(),
            None
        );
    }
    assert!(!store.has_liked(&post_id(&pid), &fan).await.unwrap());
    let listed = store.list_posts(&free, limit(20), None).await.unwrap().posts;
    assert_eq!(
        listed.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        vec![survivor.summary.id.as_str()]
    );
    assert_eq!(
        open_reports(&store, "free").await,
        vec![counted(&kept, 1)],
        "its reports and its comments' are resolved, others' stay"
    );
    assert!(
        !store
            .remove_post(&key, &log_entry(LogAction::RemovePost, target), None)
            .await
            .unwrap(),
        "a second removal finds nothing"
    );
    assert!(!store.delete_post(&key, false).await.unwrap());
    assert_eq!(log_of(&store, "free").await, vec![removal], "logged once");
}

async fn removing_a_comment_keeps_its_replies_uncounts_it_and_resolves_its_report(store: Dyn) {
    let free = board("free");
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let top = created_comment(&store, "free", &pid, None).await;
    let reply = created_comment(&store, "free", &pid, Some(&top.id)).await;
    let last = created_comment(&store, "free", &pid, None).await;
    let on_top = report_of("free", comment_target(&pid, &top.id), "rude");
    let on_post = report_of("free", post_target(&pid), "spam");
    for r in [&on_top, &on_post] {
        store.report(&free, r, "member:A", None).await.unwrap();
    }
    let target = LogTarget::Comment {
        post_id: pid.clone(),
        comment_id: top.id.clone(),
    };
    let removal = log_entry(LogAction::RemoveComment, target.clone());
    let top_key = comment_key("free", &pid, &top.id);
    assert!(
        !store
            .remove_comment(
                &comment_key("qna", &pid, &top.id),
                &log_entry(LogAction::RemoveComment, target.clone()),
                None
            )
            .await
            .unwrap(),
        "not on that board"
    );
    assert!(store.remove_comment(&top_key, &removal, None).await.unwrap());
    let detail = store.post_detail(&post_key("free", &pid)).await.unwrap().unwrap();
    assert_eq!(detail.comments, vec![reply.clone(), last], "its reply stays");
    assert_eq!(detail.post.summary.comment_count, 2);
    assert_eq!(store.comment_guard(&top_key).await.unwrap(), None);
    assert_eq!(open_reports(&store, "free").await, vec![counted(&on_post, 1)]);
    assert!(
        !store
            .remove_comment(&top_key, &log_entry(LogAction::RemoveComment, target), None)
            .await
            .unwrap(),
        "a second removal finds nothing"
    );
    assert_eq!(comment_count(&store, "free", &pid).await, 2, "uncounted once");
    assert_eq!(log_of(&store, "free").await, vec![removal]);
    // A removed comment cannot be reported; its reply can, and a removal
    // of a comment without a report resolves nothing else.
    assert_eq!(
        store
            .report(
                &free,
                &report_of("free", comment_target(&pid, &top.id), "x"),
                "member:B",
                None
            )
            .await,
        Err(StoreError::NotFound)
    );
    let on_reply = report_of("free", comment_target(&pid, &reply.id), "rude too");
    store.report(&free, &on_reply, "member:B", None).await.unwrap();
    let unreported = created_comment(&store, "free", &pid, None).await;
    let target = LogTarget::Comment {
        post_id: pid.clone(),
        comment_id: unreported.id.clone(),
    };
    assert!(
        store
            .remove_comment(
                &comment_key("free", &pid, &unreported.id),
                &log_entry(LogAction::RemoveComment, target),
                None
            )
            .await
            .unwrap()
    );
    assert_eq!(
        open_reports(&store, "free").await,
        vec![counted(&on_reply, 1), counted(&on_post, 1)]
    );
}

async fn deleting_a_post_resolves_its_open_reports_and_its_comments_but_no_others(store: Dyn) {
    let free = board("free");
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let key = post_key("free", &pid);
    let top = created_comment(&store, "free", &pid, None).await;
    let reply = created_comment(&store, "free", &pid, Some(&top.id)).await;
    reported(&store, post_target(&pid), &["member:A", "address:K"]).await;
    reported(&store, comment_target(&pid, &top.id), &["member:A"]).await;
    reported(&store, comment_target(&pid, &reply.id), &["member:B", "member:C"]).await;
    let other = created_post(&store, "free").await;
    let other_comment = created_comment(&store, "free", &other.summary.id, None).await;
    let kept_post = reported(&store, post_target(&other.summary.id), &["member:A"]).await;
    let kept_comment = reported(
        &store,
        comment_target(&other.summary.id, &other_comment.id),
        &["member:A"],
    )
    .await;
    assert_eq!(open_reports(&store, "free").await.len(), 5);

    assert!(
        !store.delete_post(&post_key("qna", &pid), false).await.unwrap(),
        "not on that board"
    );
    assert_eq!(
        open_reports(&store, "free").await.len(),
        5,
        "a refused delete resolves nothing"
    );
    assert!(store.delete_post(&key, false).await.unwrap());
    purged(&store).await;
    assert_eq!(
        open_reports(&store, "free").await,
        vec![counted(&kept_comment, 1), counted(&kept_post, 1)],
        "its reports and its comments' are resolved, others' stay"
    );
    for target in [post_target(&pid), comment_target(&pid, &top.id)] {
        assert_eq!(
            store
                .report(&free, &report_of("free", target, "late"), "member:D", None)
                .await,
            Err(StoreError::NotFound)
        );
    }
    assert!(!store.delete_post(&key, false).await.unwrap(), "already gone");
    assert!(
        log_of(&store, "free").await.is_empty(),
        "an author's delete is not logged"
    );
}

async fn deleting_a_comment_resolves_its_open_report_and_no_other(store: Dyn) {
    let free = board("free");
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let top = created_comment(&store, "free", &pid, None).await;
    let reply = created_comment(&store, "free", &pid, Some(&top.id)).await;
    let plain = created_comment(&store, "free", &pid, None).await;
    reported(&store, comment_target(&pid, &top.id), &["member:A", "address:K"]).await;
    let on_reply = reported(&store, comment_target(&pid, &reply.id), &["member:B"]).await;
    let on_post = reported(&store, post_target(&pid), &["member:A"]).await;
    let top_key = comment_key("free", &pid, &top.id);

    assert!(
        !store.delete_comment(&comment_key("qna", &pid, &top.id)).await.unwrap(),
        "not on that board"
    );
    assert_eq!(
        open_reports(&store, "free").await.len(),
        3,
        "a refused delete resolves nothing"
    );
    assert!(store.delete_comment(&top_key).await.unwrap());
    assert_eq!(
        open_reports(&store, "free").await,
        vec![counted(&on_post, 1), counted(&on_reply, 1)],
        "its report is resolved; its reply's and its post's stay"
    );
    assert!(!store.delete_comment(&top_key).await.unwrap(), "already gone");
    assert_eq!(comment_count(&store, "free", &pid).await, 2, "uncounted once");
    assert_eq!(
        store
            .report(
                &free,
                &report_of("free", comment_target(&pid, &top.id), "late"),
                "member:C",
                None
            )
            .await,
        Err(StoreError::NotFound)
    );
    // A comment without a report resolves nothing when deleted; the reply's
    // goes with the reply.
    assert!(
        store
            .delete_comment(&comment_key("free", &pid, &plain.id))
            .await
            .unwrap()
    );
    assert_eq!(open_reports(&store, "free").await.len(), 2);
    assert!(
        store
            .delete_comment(&comment_key("free", &pid, &reply.id))
            .await
            .unwrap()
    );
    assert_eq!(open_reports(&store, "free").await, vec![counted(&on_post, 1)]);
    assert!(
        log_of(&store, "free").await.is_empty(),
        "an author's delete is not logged"
    );
}

async fn a_comment_deleted_while_it_is_being_reported_leaves_no_open_report_of_it(store: Dyn) {
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    for _ in 0..3 {
        let c = created_comment(&store, "free", &pid, None).await;
        let (racing, key) = (store.clone(), comment_key("free", &pid, &c.id));
        let deleted = reports_racing(&store, &[comment_target(&pid, &c.id)], async move {
            racing.delete_comment(&key).await
        })
        .await;
        assert!(deleted);
        let left = open_reports(&store, "free").await;
        assert!(
            left.iter().all(|r| r.target != comment_target(&pid, &c.id)),
            "no report of the deleted comment: {left:?}"
        );
    }
}

async fn a_post_deleted_while_it_and_its_comments_are_being_reported_leaves_no_open_report_of_them(store: Dyn) {
    for _ in 0..3 {
        let p = created_post(&store, "free").await;
        let pid = p.summary.id.clone();
        let a = created_comment(&store, "free", &pid, None).await;
        let b = created_comment(&store, "free", &pid, Some(&a.id)).await;
        let targets = [
            post_target(&pid),
            comment_target(&pid, &a.id),
            comment_target(&pid, &b.id),
        ];
        let (racing, key) = (store.clone(), post_key("free", &pid));
        let deleted = reports_racing(&store, &targets, async move { racing.delete_post(&key, false).await }).await;
        assert!(deleted);
        // Reports opened before step 1 are resolved by the purge.
        purged(&store).await;
        assert_eq!(
            open_reports(&store, "free").await,
            vec![],
            "no report of the post or its comments"
        );
    }
}

async fn twenty_reporters_reporting_one_post_at_once_open_one_report_that_counts_each_once(store: Dyn) {
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    // Each reporter twice: 40 reports at once.
    let reports = (0..40).map(|i| {
        let (store, r) = (
            store.clone(),
            report_of("free", post_target(&pid), &format!("reason {i}")),
        );
        tokio::spawn(async move {
            store
                .report(&board("free"), &r, &format!("member:{}", i % 20), None)
                .await
        })
    });
    let outcomes: Vec<Reported> = join_all(reports)
        .await
        .into_iter()
        .map(|r| r.unwrap().unwrap())
        .collect();
    let opened: Vec<&Report> = outcomes
        .iter()
        .filter_map(|o| match o {
            Reported::Opened(r) => Some(r),
            Reported::Joined(_) => None,
        })
        .collect();
    assert_eq!(opened.len(), 1, "{outcomes:?}");
    let the_one = opened[0].clone();
    assert!(outcomes.iter().all(|o| match o {
        Reported::Opened(r) | Reported::Joined(r) => *r == the_one,
    }));
    assert_eq!(open_reports(&store, "free").await, vec![counted(&the_one, 20)]);
}
