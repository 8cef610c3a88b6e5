//! Uploaded images (docs/API.md, Images; docs/storage.md): a
//! grant is recorded pending, its check ends it once; attaching happens in
//! the post's or comment's own write under the rules (ready, the writer's,
//! on the board, attached nowhere, not about to be swept), or nothing is
//! written; edits keep, add and drop; deletes release; what is due is found
//! earliest first and deleted.

use shared::domain::media::{
    AttachedMedia, MediaOutcome, MediaOwner, MediaRecord, MediaStatus, MediaType, NewMedia, ReadyMedia,
};
use shared::domain::{Author, MediaId, TextRef, WriterKey, new_id, now};
use shared::store::{MediaEdit, StoreError};

use crate::{Dyn, board, comment, comment_key, edit, member_id, post, post_key, purged, writer};

conformance!(
    a_grant_is_pending_until_its_check_ends_it_once,
    a_grant_id_is_recorded_once,
    images_attach_in_the_write_under_the_rules_or_nothing_is_written,
    an_edit_keeps_adds_and_drops_images,
    deletes_release_images_and_what_is_due_is_found_earliest_first_and_deleted,
);

const READY: ReadyMedia = ReadyMedia {
    content_type: MediaType::Jpeg,
    width: 640,
    height: 480,
    bytes: 55_555,
    thumbnail: MediaType::Jpeg,
};

fn grant_due(owner: MediaOwner, created_at: &str, due_at: &str) -> NewMedia {
    NewMedia {
        id: MediaId::parse(&new_id()).unwrap(),
        board: board("free"),
        owner,
        declared: MediaType::Jpeg,
        bytes: 123_456,
        created_at: created_at.to_owned(),
        due_at: due_at.to_owned(),
    }
}

fn grant(owner: MediaOwner, created_at: &str) -> NewMedia {
    grant_due(owner, created_at, "2026-12-02T00:00:00.000Z")
}

fn guest() -> MediaOwner {
    MediaOwner::Guest(WriterKey::new(
        "guestwriterkeyabcdefghijklmnopqrstuvwxyz234567abcd".into(),
    ))
}

/// A ready image granted now to `owner` on `free`, due in a day.
async fn ready(store: &Dyn, owner: MediaOwner) -> AttachedMedia {
    let media = NewMedia::granted_now(
        MediaId::parse(&new_id()).unwrap(),
        board("free"),
        owner,
        MediaType::Jpeg,
        1_000,
    );
    assert!(store.create_media(&media).await.unwrap());
    assert!(
        store
            .finish_media(&media.id, &MediaOutcome::Ready(READY))
            .await
            .unwrap()
    );
    AttachedMedia::of(&media.id, &READY)
}

fn id_of(image: &AttachedMedia) -> MediaId {
    MediaId::parse(&image.id).unwrap()
}

async fn record(store: &Dyn, image: &AttachedMedia) -> MediaRecord {
    store.media(&id_of(image)).await.unwrap().unwrap()
}

fn author_of(member: &shared::domain::MemberId) -> Author {
    Author::Member {
        member_id: member.as_str().to_owned(),
        nickname: "Kim".into(),
    }
}

async fn a_grant_is_pending_until_its_check_ends_it_once(store: Dyn) {
    let (by_member, by_guest) = (
        grant(MediaOwner::Member(member_id()), "2026-12-01T00:00:00.000Z"),
        grant(guest(), "2026-12-01T00:00:01.000Z"),
    );
    for media in [&by_member, &by_guest] {
        assert!(store.create_media(media).await.unwrap());
        assert_eq!(store.media(&media.id).await.unwrap(), Some(MediaRecord::granted(media)));
    }
    let ready = ReadyMedia {
        content_type: MediaType::Webp,
        width: 1_200,
        height: 800,
        bytes: 98_765,
        thumbnail: MediaType::Png,
    };
    assert!(
        store
            .finish_media(&by_member.id, &MediaOutcome::Ready(ready))
            .await
            .unwrap()
    );
    assert!(
        !store
            .finish_media(&by_member.id, &MediaOutcome::Rejected("late".into()))
            .await
            .unwrap(),
        "a check ends a pending upload only"
    );
    let stored = store.media(&by_member.id).await.unwrap().unwrap();
    assert_eq!(
        (stored.status, stored.ready, stored.reason),
        (MediaStatus::Ready, Some(ready), None)
    );

    let reason = "the file was declared image/jpeg but is text".to_owned();
    assert!(
        store
            .finish_media(&by_guest.id, &MediaOutcome::Rejected(reason.clone()))
            .await
            .unwrap()
    );
    assert!(
        !store
            .finish_media(&by_guest.id, &MediaOutcome::Ready(ready))
            .await
            .unwrap()
    );
    let stored = store.media(&by_guest.id).await.unwrap().unwrap();
    assert_eq!(
        (stored.status, stored.ready, stored.reason),
        (MediaStatus::Rejected, None, Some(reason))
    );
    assert_eq!(stored.owner, guest());

    let unknown = MediaId::parse(&new_id()).unwrap();
    assert_eq!(store.media(&unknown).await.unwrap(), None);
    assert!(!store.finish_media(&unknown, &MediaOutcome::Ready(ready)).await.unwrap());
    let batch = store
        .media_batch(&[by_member.id.clone(), unknown, by_guest.id.clone()])
        .await
        .unwrap();
    assert_eq!(batch.len(), 2, "the unknown id is left out");
}

async fn a_grant_id_is_recorded_once(store: Dyn) {
    let first = grant(MediaOwner::Member(member_id()), "2026-12-01T00:00:00.000Z");
    assert!(store.create_media(&first).await.unwrap());
    let again = NewMedia {
        owner: guest(),
        ..first.clone()
    };
    assert!(!store.create_media(&again).await.unwrap());
    assert_eq!(store.media(&first.id).await.unwrap().unwrap().owner, first.owner);
}

async fn images_attach_in_the_write_under_the_rules_or_nothing_is_written(store: Dyn) {
    let kim = member_id();
    let (a, b) = (
        ready(&store, MediaOwner::Member(kim.clone())).await,
        ready(&store, MediaOwner::Member(kim.clone())).await,
    );
    let mut first = post("free", "사진", author_of(&kim));
    first.media = vec![b.clone(), a.clone()];
    first.summary.media_count = 2;
    store.create_post(&first, &writer(), None, None).await.unwrap();
    let key = post_key("free", &first.summary.id);
    let detail = store.post_detail(&key).await.unwrap().unwrap();
    assert_eq!(detail.post.media, [b.clone(), a.clone()], "in the order given");
    assert_eq!(detail.post.summary.media_count, 2);
    let page = store.list_posts(&board("free"), crate::limit(20), None).await.unwrap();
    let listed = page.posts.iter().find(|p| p.id == first.summary.id).unwrap();
    assert_eq!(listed.media_count, 2);
    let attached = record(&store, &a).await;
    assert_eq!(attached.attached_to.as_deref(), Some(first.summary.id.as_str()));
    assert_eq!(attached.due_at, None, "attached: never due");

    // Each refusal writes nothing: not the post, not its other images.
    let free = ready(&store, MediaOwner::Member(kim.clone())).await;
    let lees = ready(&store, MediaOwner::Member(member_id())).await;
    let pending = NewMedia::granted_now(
        MediaId::parse(&new_id()).unwrap(),
        board("free"),
        MediaOwner::Member(kim.clone()),
        MediaType::Png,
        10,
    );
    assert!(store.create_media(&pending).await.unwrap());
    let pending = AttachedMedia::of(&pending.id, &READY);
    let soon = grant_due(MediaOwner::Member(kim.clone()), &now(), &now());
    assert!(store.create_media(&soon).await.unwrap());
    assert!(store.finish_media(&soon.id, &MediaOutcome::Ready(READY)).await.unwrap());
    let soon = AttachedMedia::of(&soon.id, &READY);
    for taken in [a.clone(), lees, pending, soon] {
        let mut second = post("free", "또", author_of(&kim));
        second.media = vec![free.clone(), taken];
        let refused = store.create_post(&second, &writer(), None, None).await;
        assert_eq!(refused, Err(StoreError::MediaUnavailable));
        let key = post_key("free", &second.summary.id);
        assert!(store.post_detail(&key).await.unwrap().is_none(), "no post written");
        assert_eq!(record(&store, &free).await.attached_to, None, "no image attached");
    }
    // Another board's post cannot take an image granted on `free`.
    let mut elsewhere = post("notice", "공지", author_of(&kim));
    elsewhere.media = vec![free.clone()];
    let refused = store.create_post(&elsewhere, &writer(), None, None).await;
    assert_eq!(refused, Err(StoreError::MediaUnavailable));

    // A guest's comment takes the image granted to its address key.
    let guests = ready(&store, MediaOwner::Guest(writer().key)).await;
    let mut reply = comment(&first.summary.id, None, "짤");
    reply.media = vec![guests.clone()];
    store
        .create_comment(&board("free"), &reply, &writer(), None, false, None)
        .await
        .unwrap();
    let shown = store
        .comment(&comment_key("free", &first.summary.id, &reply.id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(shown.media, std::slice::from_ref(&guests));
    assert_eq!(
        record(&store, &guests).await.attached_to.as_deref(),
        Some(reply.id.as_str())
    );
    let mut again = comment(&first.summary.id, None, "또 짤");
    again.media = vec![guests];
    let refused = store
        .create_comment(&board("free"), &again, &writer(), None, false, None)
        .await;
    assert_eq!(refused, Err(StoreError::MediaUnavailable));
}

async fn an_edit_keeps_adds_and_drops_images(store: Dyn) {
    let kim = member_id();
    let owner = MediaOwner::Member(kim.clone());
    let (a, b, c) = (
        ready(&store, owner.clone()).await,
        ready(&store, owner.clone()).await,
        ready(&store, owner.clone()).await,
    );
    let mut first = post("free", "사진", author_of(&kim));
    first.media = vec![a.clone(), b.clone()];
    first.summary.media_count = 2;
    store.create_post(&first, &writer(), None, None).await.unwrap();
    let key = post_key("free", &first.summary.id);
    let at = now();
    let mut change = edit("사진", "바뀜", &at);
    change.media = Some(MediaEdit {
        media: vec![c.clone(), b.clone()],
        owner: owner.clone(),
    });
    assert_eq!(
        store.update_post(&key, &change).await.unwrap(),
        shared::store::Edited::Done
    );
    let detail = store.post_detail(&key).await.unwrap().unwrap();
    assert_eq!(detail.post.media, [c.clone(), b.clone()]);
    assert_eq!(detail.post.summary.media_count, 2);
    let dropped = record(&store, &a).await;
    assert_eq!(
        (dropped.attached_to, dropped.due_at.as_deref()),
        (None, Some(at.as_str()))
    );
    assert_eq!(
        record(&store, &c).await.attached_to.as_deref(),
        Some(first.summary.id.as_str())
    );
    // An edit that names no images keeps them; one naming none drops all.
    let kept = edit("사진", "또 바뀜", &now());
    assert_eq!(
        store.update_post(&key, &kept).await.unwrap(),
        shared::store::Edited::Done
    );
    assert_eq!(store.post_detail(&key).await.unwrap().unwrap().post.media.len(), 2);
    // Adding one that is not attachable changes nothing.
    let mut refused = edit("사진", "안 됨", &now());
    refused.media = Some(MediaEdit {
        media: vec![b.clone(), a.clone()],
        owner: owner.clone(),
    });
    assert_eq!(
        store.update_post(&key, &refused).await,
        Err(StoreError::MediaUnavailable)
    );
    let unchanged = store.post_detail(&key).await.unwrap().unwrap();
    assert_eq!(
        (unchanged.post.body.as_str(), unchanged.post.media.len()),
        ("또 바뀜", 2)
    );
    assert!(record(&store, &c).await.attached_to.is_some());
    let mut none = edit("사진", "없음", &now());
    none.media = Some(MediaEdit {
        media: Vec::new(),
        owner,
    });
    store.update_post(&key, &none).await.unwrap();
    let bare = store.post_detail(&key).await.unwrap().unwrap();
    assert_eq!((bare.post.media.len(), bare.post.summary.media_count), (0, 0));
    assert_eq!(record(&store, &b).await.attached_to, None);
}

async fn deletes_release_images_and_what_is_due_is_found_earliest_first_and_deleted(store: Dyn) {
    // Grants never attached, due at their own times.
    let dues = [
        "2026-12-01T00:00:03.000Z",
        "2026-12-01T00:00:01.000Z",
        "2026-12-01T00:00:02.000Z",
        "2999-12-02T00:00:00.000Z",
    ];
    let grants: Vec<NewMedia> = dues
        .iter()
        .map(|due| grant_due(guest(), "2026-11-30T00:00:00.000Z", due))
        .collect();
    for media in &grants {
        assert!(store.create_media(media).await.unwrap());
    }
    // A post with an image and a comment with one, then deleted.
    let kim = member_id();
    let (in_post, in_comment) = (
        ready(&store, MediaOwner::Member(kim.clone())).await,
        ready(&store, MediaOwner::Guest(writer().key)).await,
    );
    let mut first = post("free", "사진", author_of(&kim));
    first.media = vec![in_post.clone()];
    store.create_post(&first, &writer(), None, None).await.unwrap();
    let mut reply = comment(&first.summary.id, None, "짤");
    reply.media = vec![in_comment.clone()];
    store
        .create_comment(&board("free"), &reply, &writer(), None, false, None)
        .await
        .unwrap();
    let comment_text = TextRef {
        post: post_key("free", &first.summary.id),
        comment: Some(reply.id.clone()),
    };
    let post_text = TextRef {
        post: post_key("free", &first.summary.id),
        comment: None,
    };
    // The comment first: only its image is released (a delete, then its
    // text event; SQLite released it in the delete already).
    assert!(
        store
            .delete_comment(&comment_key("free", &first.summary.id, &reply.id))
            .await
            .unwrap()
    );
    let released_at = now();
    store.release_media(&comment_text, &released_at).await.unwrap();
    assert_eq!(record(&store, &in_comment).await.attached_to, None);
    assert!(record(&store, &in_post).await.attached_to.is_some());
    assert!(
        store
            .delete_post(&post_key("free", &first.summary.id), false)
            .await
            .unwrap()
    );
    store.release_media(&post_text, &now()).await.unwrap();
    purged(&store).await;
    assert_eq!(store.release_media(&post_text, &now()).await.unwrap(), 0, "idempotent");
    assert_eq!(record(&store, &in_post).await.attached_to, None);

    let found = store.due_media(&now(), 10).await.unwrap();
    let found_ids: Vec<&str> = found.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(
        &found_ids[..3],
        [grants[1].id.as_str(), grants[2].id.as_str(), grants[0].id.as_str()],
        "earliest due first"
    );
    for image in [&in_post, &in_comment] {
        assert!(found_ids.contains(&image.id.as_str()), "released images are due");
    }
    assert!(!found_ids.contains(&grants[3].id.as_str()), "not due yet");
    let first_two = store.due_media(&now(), 2).await.unwrap();
    assert_eq!(first_two.len(), 2);
    assert_eq!(first_two[0].id, grants[1].id);

    let swept: Vec<MediaId> = found.iter().map(|m| m.id.clone()).collect();
    store.delete_media(&swept).await.unwrap();
    store.delete_media(&swept).await.unwrap();
    for id in &swept {
        assert_eq!(store.media(id).await.unwrap(), None);
    }
    let left = store.due_media(&now(), 10).await.unwrap();
    assert!(left.iter().all(|m| !swept.contains(&m.id)), "swept ones are gone");
    let later = store.due_media("3000-01-01T00:00:00.000Z", 100).await.unwrap();
    assert!(later.iter().any(|m| m.id == grants[3].id));
}
