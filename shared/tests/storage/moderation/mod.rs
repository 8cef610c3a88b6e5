//! Moderation: moderators, the log, lookups and idempotent moderation writes;
//! bans and reports in their own files.

use crate::idempotency::claim;
use crate::{
    Dyn, NOW, board, comment_count, comment_key, created_comment, created_post, hash, id_of, limit, member, member_id,
    post_key,
};
use shared::domain::{
    Author, Ban, BanId, BanRecord, BanScope, BanSubject, BanTarget, CommentId, LogAction, LogEntry, LogTarget, Member,
    MemberId, Report, ReportId, ReportTarget, Reported, WriterKey, new_id, now,
};
use shared::store::idempotency::{Claimed, StoredResponse};
use shared::store::{StoreError, cursor};

mod bans;
mod reports;

conformance!(
    moderators_are_appointed_once_listed_in_order_dismissed_and_each_change_is_logged_once,
    the_mod_log_pages_newest_first_without_gaps_and_refuses_a_cursor_not_issued,
    member_by_id_finds_a_member_and_find_comment_finds_a_comment_only_on_its_own_board,
    an_idempotency_completion_given_to_a_moderation_write_is_written_with_it_or_not_at_all,
);

/// A staff member's author object.
pub(crate) fn staff() -> Author {
    Author::Member {
        member_id: new_id(),
        nickname: "Moderator".into(),
    }
}

pub(crate) fn log_entry(action: LogAction, target: LogTarget) -> LogEntry {
    log_entry_at(action, target, &now())
}

pub(crate) fn log_entry_at(action: LogAction, target: LogTarget, at: &str) -> LogEntry {
    LogEntry {
        id: new_id(),
        action,
        target,
        reason: Some("because".into()),
        by: staff(),
        at: at.to_owned(),
    }
}

pub(crate) fn member_target(m: &Member) -> LogTarget {
    LogTarget::Member {
        member_id: m.id.clone(),
        nickname: m.nickname.clone(),
        scope: None,
    }
}

pub(crate) fn address(key: &str) -> BanSubject {
    BanSubject::Address(WriterKey::new(key.to_owned()))
}

pub(crate) fn member_subject() -> BanSubject {
    BanSubject::Member(new_id())
}

/// A ban of `subject` on `board` ending at `expires` (Unix seconds; `None`: permanent).
pub(crate) fn ban_of(board: &str, subject: &BanSubject, expires: Option<i64>) -> BanRecord {
    let target = match subject {
        BanSubject::Member(id) => BanTarget::Member {
            member_id: id.clone(),
            nickname: "banned".into(),
            scope: None,
        },
        BanSubject::Address(key) | BanSubject::GuestAddress(key) => BanTarget::Guest {
            tag: key.tag(),
            scope: BanScope::Address,
        },
        BanSubject::Range(key) | BanSubject::GuestRange(key) => BanTarget::Guest {
            tag: key.tag(),
            scope: BanScope::Range,
        },
    };
    BanRecord {
        ban: Ban {
            id: new_id(),
            board: board.to_owned(),
            target,
            reason: "spam".into(),
            created_at: now(),
            expires_at: expires.map(|e| format!("at {e}")),
            by: staff(),
        },
        subject: subject.clone(),
        also: None,
        expires,
    }
}

pub(crate) fn ban_entry(record: &BanRecord) -> LogEntry {
    log_entry(LogAction::Ban, record.ban.target.clone().into())
}

pub(crate) fn ban_id(record: &BanRecord) -> BanId {
    BanId::parse(&record.ban.id).unwrap()
}

pub(crate) async fn banned(store: &Dyn, record: &BanRecord) {
    store.ban(record, &ban_entry(record), None).await.unwrap();
}

pub(crate) fn post_target(post_id: &str) -> ReportTarget {
    ReportTarget::Post {
        post_id: post_id.to_owned(),
    }
}

pub(crate) fn comment_target(post_id: &str, comment_id: &str) -> ReportTarget {
    ReportTarget::Comment {
        post_id: post_id.to_owned(),
        comment_id: comment_id.to_owned(),
    }
}

pub(crate) fn report_of(board: &str, target: ReportTarget, reason: &str) -> Report {
    Report {
        id: new_id(),
        board: board.to_owned(),
        target,
        reason: reason.to_owned(),
        created_at: now(),
        reporters: None,
    }
}

/// A report as the staff list shows it.
pub(crate) fn counted(report: &Report, reporters: u64) -> Report {
    Report {
        reporters: Some(reporters),
        ..report.clone()
    }
}

pub(crate) fn report_id(report: &Report) -> ReportId {
    ReportId::parse(&report.id).unwrap()
}

pub(crate) async fn open_reports(store: &Dyn, board_slug: &str) -> Vec<Report> {
    let page = store.list_reports(&board(board_slug), limit(100), None).await.unwrap();
    assert_eq!(page.next_cursor, None);
    page.reports
}

pub(crate) async fn log_of(store: &Dyn, board_slug: &str) -> Vec<LogEntry> {
    let page = store.modlog(&board(board_slug), limit(100), None).await.unwrap();
    assert_eq!(page.next_cursor, None);
    page.entries
}

/// Opens a report of `target` by each of `reporters`; the report opened.
pub(crate) async fn reported(store: &Dyn, target: ReportTarget, reporters: &[&str]) -> Report {
    let free = board("free");
    let mut opened = None;
    for reporter in reporters {
        match store
            .report(&free, &report_of("free", target.clone(), "spam"), reporter, None)
            .await
            .unwrap()
        {
            Reported::Opened(r) => opened = Some(r),
            Reported::Joined(r) => assert_eq!(Some(&r), opened.as_ref()),
        }
    }
    opened.expect("the first reporter opens it")
}

async fn moderators_are_appointed_once_listed_in_order_dismissed_and_each_change_is_logged_once(store: Dyn) {
    let free = board("free");
    // Created first, appointed second: the list is in appointment order, not by id.
    let (early, late) = (member("early"), member("late"));
    for m in [&early, &late] {
        store.create_member(m, &hash("h"), None).await.unwrap();
    }
    assert!(!store.is_moderator(&free, &id_of(&late)).await.unwrap());
    assert!(store.moderators(&free).await.unwrap().is_empty());

    let first = log_entry_at(
        LogAction::AddModerator,
        member_target(&late),
        "2030-01-01T00:00:01.000Z",
    );
    assert!(store.add_moderator(&free, &late, &first).await.unwrap());
    let again = log_entry_at(
        LogAction::AddModerator,
        member_target(&late),
        "2030-01-01T00:00:02.000Z",
    );
    assert!(!store.add_moderator(&free, &late, &again).await.unwrap(), "already one");
    let second = log_entry_at(
        LogAction::AddModerator,
        member_target(&early),
        "2030-01-01T00:00:03.000Z",
    );
    assert!(store.add_moderator(&free, &early, &second).await.unwrap());
    assert_eq!(
        store.moderators(&free).await.unwrap(),
        vec![late.clone(), early.clone()]
    );
    assert!(store.is_moderator(&free, &id_of(&late)).await.unwrap());
    assert!(store.is_moderator(&free, &id_of(&early)).await.unwrap());
    assert!(
        !store.is_moderator(&board("qna"), &id_of(&early)).await.unwrap(),
        "of that board only"
    );
    assert!(store.moderators(&board("qna")).await.unwrap().is_empty());

    let dismissal = log_entry(LogAction::RemoveModerator, member_target(&late));
    assert!(store.remove_moderator(&free, &id_of(&late), &dismissal).await.unwrap());
    let twice = log_entry(LogAction::RemoveModerator, member_target(&late));
    assert!(
        !store.remove_moderator(&free, &id_of(&late), &twice).await.unwrap(),
        "not one any more"
    );
    assert!(!store.is_moderator(&free, &id_of(&late)).await.unwrap());
    assert_eq!(store.moderators(&free).await.unwrap(), vec![early.clone()]);
    assert_eq!(
        log_of(&store, "free").await,
        vec![dismissal, second, first],
        "each change once, newest first; nothing for the changes that were none"
    );
    assert!(log_of(&store, "qna").await.is_empty());
}

async fn the_mod_log_pages_newest_first_without_gaps_and_refuses_a_cursor_not_issued(store: Dyn) {
    let free = board("free");
    let m = member("logged");
    store.create_member(&m, &hash("h"), None).await.unwrap();
    let mut written = Vec::new();
    for i in 0..13 {
        let (action, changed) = if i % 2 == 0 {
            let entry = log_entry(LogAction::AddModerator, member_target(&m));
            (entry.clone(), store.add_moderator(&free, &m, &entry).await.unwrap())
        } else {
            let entry = log_entry(LogAction::RemoveModerator, member_target(&m));
            (
                entry.clone(),
                store.remove_moderator(&free, &id_of(&m), &entry).await.unwrap(),
            )
        };
        assert!(changed);
        written.push(action);
    }
    written.reverse();
    for page_size in [4, 13] {
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = store.modlog(&free, limit(page_size), cursor.as_deref()).await.unwrap();
            assert!(page.entries.len() <= page_size);
            seen.extend(page.entries);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        assert_eq!(seen, written, "pages of {page_size}");
    }
    assert!(log_of(&store, "qna").await.is_empty());
    for garbage in ["garbage!".to_owned(), cursor::encode("not-a-ulid")] {
        assert_eq!(
            store.modlog(&free, limit(4), Some(&garbage)).await,
            Err(StoreError::InvalidCursor)
        );
    }
}

async fn member_by_id_finds_a_member_and_find_comment_finds_a_comment_only_on_its_own_board(store: Dyn) {
    let kim = member("byid");
    store.create_member(&kim, &hash("secret-hash"), None).await.unwrap();
    assert_eq!(store.member_by_id(&id_of(&kim)).await.unwrap(), Some(kim.clone()));
    assert_eq!(store.member_by_id(&member_id()).await.unwrap(), None);

    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let c = created_comment(&store, "free", &pid, None).await;
    assert_eq!(
        store.member_by_id(&MemberId::parse(&pid).unwrap()).await.unwrap(),
        None,
        "a post's id names no member"
    );
    let cid = CommentId::parse(&c.id).unwrap();
    assert_eq!(
        store.find_comment(&board("free"), &cid).await.unwrap(),
        Some(comment_key("free", &pid, &c.id))
    );
    assert_eq!(store.find_comment(&board("qna"), &cid).await.unwrap(), None);
    assert_eq!(
        store
            .find_comment(&board("free"), &CommentId::parse(&new_id()).unwrap())
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .find_comment(&board("free"), &CommentId::parse(&pid).unwrap())
            .await
            .unwrap(),
        None,
        "a post's id names no comment"
    );
    assert!(store.delete_comment(&comment_key("free", &pid, &c.id)).await.unwrap());
    assert_eq!(store.find_comment(&board("free"), &cid).await.unwrap(), None);
    let kept = created_comment(&store, "free", &pid, None).await;
    assert!(store.delete_post(&post_key("free", &pid), false).await.unwrap());
    assert_eq!(
        store
            .find_comment(&board("free"), &CommentId::parse(&kept.id).unwrap())
            .await
            .unwrap(),
        None,
        "a deleted post's comments are gone"
    );
}

async fn an_idempotency_completion_given_to_a_moderation_write_is_written_with_it_or_not_at_all(store: Dyn) {
    let free = board("free");
    let replayed = |key: &'static str, fingerprint: &'static str| {
        let store = store.clone();
        async move { store.claim(&claim(key, fingerprint, NOW + 1)).await.unwrap() }
    };
    let fresh = |key: &'static str, fingerprint: &'static str| {
        let store = store.clone();
        async move {
            let c = claim(key, fingerprint, NOW);
            assert_eq!(store.claim(&c).await.unwrap(), Claimed::Fresh);
            c
        }
    };
    let released = |key: &'static str| {
        let store = store.clone();
        async move {
            let c = claim(key, "lost", NOW);
            assert_eq!(store.claim(&c).await.unwrap(), Claimed::Fresh);
            store.release(key, &c.token).await.unwrap();
            c
        }
    };

    // A ban.
    let subject = member_subject();
    let record = ban_of("free", &subject, None);
    let c = fresh("k-ban", "ban").await;
    let done = c.complete(201, serde_json::to_string(&record.ban).unwrap());
    store.ban(&record, &ban_entry(&record), Some(&done)).await.unwrap();
    assert_eq!(replayed("k-ban", "ban").await, Claimed::Replay(done.response));
    let lost = ban_of("free", &member_subject(), None);
    let c = released("k-ban-lost").await;
    assert_eq!(
        store
            .ban(&lost, &ban_entry(&lost), Some(&c.complete(201, "{}".into())))
            .await,
        Err(StoreError::ClaimLost)
    );
    assert_eq!(
        store
            .active_ban(&free, std::slice::from_ref(&lost.subject), NOW)
            .await
            .unwrap(),
        None
    );
    assert_eq!(store.ban_by_id(&free, &ban_id(&lost)).await.unwrap(), None);

    // Reports: opened (201), joined (200), joined by a reporter counted already (200).
    let p = created_post(&store, "free").await;
    let pid = p.summary.id.clone();
    let first = report_of("free", post_target(&pid), "spam");
    let shown = serde_json::to_string(&first.clone().for_reporter()).unwrap();
    let c = fresh("k-report", "report").await;
    assert_eq!(
        store.report(&free, &first, "member:A", Some(&c)).await.unwrap(),
        Reported::Opened(first.clone())
    );
    let expected = |status: u16| {
        Claimed::Replay(StoredResponse {
            status,
            body: shown.clone(),
        })
    };
    assert_eq!(replayed("k-report", "report").await, expected(201));
    for (key, reporter) in [("k-join", "member:B"), ("k-join-again", "member:B")] {
        let c = fresh(key, "join").await;
        let later = report_of("free", post_target(&pid), "more");
        assert_eq!(
            store.report(&free, &later, reporter, Some(&c)).await.unwrap(),
            Reported::Joined(first.clone())
        );
        assert_eq!(replayed(key, "join").await, expected(200), "{key}");
    }
    let c = released("k-report-lost").await;
    assert_eq!(
        store
            .report(&free, &report_of("free", post_target(&pid), "x"), "member:C", Some(&c))
            .await,
        Err(StoreError::ClaimLost)
    );
    let c = released("k-report-lost-2").await;
    let other = created_post(&store, "free").await;
    assert_eq!(
        store
            .report(
                &free,
                &report_of("free", post_target(&other.summary.id), "x"),
                "member:C",
                Some(&c)
            )
            .await,
        Err(StoreError::ClaimLost)
    );
    assert_eq!(
        open_reports(&store, "free").await,
        vec![counted(&first, 2)],
        "the lost reports wrote nothing"
    );

    // A resolve.
    let c = released("k-resolve-lost").await;
    assert_eq!(
        store
            .resolve_report(&free, &report_id(&first), Some(&c.complete(204, String::new())))
            .await,
        Err(StoreError::ClaimLost)
    );
    assert_eq!(open_reports(&store, "free").await.len(), 1, "still open");
    let c = fresh("k-resolve", "resolve").await;
    let done = c.complete(204, String::new());
    assert!(
        store
            .resolve_report(&free, &report_id(&first), Some(&done))
            .await
            .unwrap()
    );
    assert_eq!(replayed("k-resolve", "resolve").await, Claimed::Replay(done.response));

    // Removals of a comment and of a post.
    let comment_of = created_comment(&store, "free", &pid, None).await;
    let ck = comment_key("free", &pid, &comment_of.id);
    let target = LogTarget::Comment {
        post_id: pid.clone(),
        comment_id: comment_of.id.clone(),
    };
    let c = released("k-comment-lost").await;
    assert_eq!(
        store
            .remove_comment(
                &ck,
                &log_entry(LogAction::RemoveComment, target.clone()),
                Some(&c.complete(204, String::new()))
            )
            .await,
        Err(StoreError::ClaimLost)
    );
    assert!(store.comment_guard(&ck).await.unwrap().is_some(), "still there");
    let c = fresh("k-comment", "remove").await;
    let done = c.complete(204, String::new());
    assert!(
        store
            .remove_comment(&ck, &log_entry(LogAction::RemoveComment, target), Some(&done))
            .await
            .unwrap()
    );
    assert_eq!(replayed("k-comment", "remove").await, Claimed::Replay(done.response));
    assert_eq!(comment_count(&store, "free", &pid).await, 0);

    let key = post_key("free", &pid);
    let target = LogTarget::Post {
        post_id: pid.clone(),
        title: p.summary.title.clone(),
    };
    let c = released("k-post-lost").await;
    assert_eq!(
        store
            .remove_post(
                &key,
                &log_entry(LogAction::RemovePost, target.clone()),
                Some(&c.complete(204, String::new()))
            )
            .await,
        Err(StoreError::ClaimLost)
    );
    assert!(store.post_detail(&key).await.unwrap().is_some(), "still there");
    let c = fresh("k-post", "remove").await;
    let done = c.complete(204, String::new());
    assert!(
        store
            .remove_post(&key, &log_entry(LogAction::RemovePost, target), Some(&done))
            .await
            .unwrap()
    );
    assert_eq!(replayed("k-post", "remove").await, Claimed::Replay(done.response));
    assert_eq!(store.post_detail(&key).await.unwrap(), None);
    let actions: Vec<LogAction> = log_of(&store, "free").await.iter().map(|e| e.action).collect();
    assert_eq!(
        actions,
        vec![LogAction::RemovePost, LogAction::RemoveComment, LogAction::Ban],
        "only what was written is logged"
    );
}
