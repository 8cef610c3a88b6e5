//! **(v4)** Uploaded images (docs/API.md, Images; docs/storage.md): a
//! grant is recorded pending, its check ends it once, and uploads never
//! attached are found oldest first for the sweep.

use shared::domain::media::{MediaOutcome, MediaOwner, MediaRecord, MediaStatus, MediaType, NewMedia, ReadyMedia};
use shared::domain::{MediaId, WriterKey, new_id};

use crate::{Dyn, board, member_id};

conformance!(
    a_grant_is_pending_until_its_check_ends_it_once,
    a_grant_id_is_recorded_once,
    uploads_never_attached_are_found_oldest_first_and_deleted,
);

fn grant(owner: MediaOwner, created_at: &str) -> NewMedia {
    NewMedia {
        id: MediaId::parse(&new_id()).unwrap(),
        board: board("free"),
        owner,
        declared: MediaType::Jpeg,
        bytes: 123_456,
        created_at: created_at.to_owned(),
    }
}

fn guest() -> MediaOwner {
    MediaOwner::Guest(WriterKey::new(
        "guestwriterkeyabcdefghijklmnopqrstuvwxyz234567abcd".into(),
    ))
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

async fn uploads_never_attached_are_found_oldest_first_and_deleted(store: Dyn) {
    let times = [
        "2026-12-01T00:00:03.000Z",
        "2026-12-01T00:00:01.000Z",
        "2026-12-01T00:00:02.000Z",
        "2026-12-02T00:00:00.000Z",
    ];
    let grants: Vec<NewMedia> = times.iter().map(|at| grant(guest(), at)).collect();
    for media in &grants {
        assert!(store.create_media(media).await.unwrap());
    }
    let found = store.unattached_media("2026-12-01T12:00:00.000Z", 10).await.unwrap();
    let found_at: Vec<&str> = found.iter().map(|m| m.created_at.as_str()).collect();
    assert_eq!(
        found_at,
        [
            "2026-12-01T00:00:01.000Z",
            "2026-12-01T00:00:02.000Z",
            "2026-12-01T00:00:03.000Z"
        ]
    );
    let first_two = store.unattached_media("2026-12-01T12:00:00.000Z", 2).await.unwrap();
    assert_eq!(first_two.len(), 2);
    assert_eq!(first_two[0].id, grants[1].id);

    let swept: Vec<MediaId> = found.iter().map(|m| m.id.clone()).collect();
    store.delete_media(&swept).await.unwrap();
    store.delete_media(&swept).await.unwrap();
    for id in &swept {
        assert_eq!(store.media(id).await.unwrap(), None);
    }
    assert!(
        store
            .unattached_media("2026-12-01T12:00:00.000Z", 10)
            .await
            .unwrap()
            .is_empty()
    );
    let left = store.unattached_media("2026-12-03T00:00:00.000Z", 10).await.unwrap();
    assert_eq!(left.iter().map(|m| &m.id).collect::<Vec<_>>(), [&grants[3].id]);
}
