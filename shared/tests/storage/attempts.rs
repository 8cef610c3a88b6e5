//! Attempts: failures counted per key and window.

use crate::{Dyn, attempt};
use shared::domain::Window;

conformance!(
    failures_are_counted_per_key_and_window,
    a_reset_ends_a_run_of_failures_in_its_window_only,
);

async fn failures_are_counted_per_key_and_window(store: Dyn) {
    let now = 1_800_000_123;
    let window = Window::containing(now, 300);
    let (kim, lee, nobody) = (
        attempt("login:user:kim"),
        attempt("login:user:lee"),
        attempt("login:user:nobody"),
    );
    for expected in 1..=3 {
        assert_eq!(store.record_failure(&kim, window).await.unwrap(), expected);
    }
    assert_eq!(store.failures(&kim, window).await.unwrap(), 3);
    assert_eq!(store.failures(&lee, window).await.unwrap(), 0);
    let next = Window::containing(window.end(), 300);
    assert_eq!(
        store.failures(&kim, next).await.unwrap(),
        0,
        "a new window starts at zero"
    );
    assert_eq!(store.record_failure(&kim, next).await.unwrap(), 1);
    store.forgive_failure(&kim, next).await.unwrap();
    assert_eq!(store.failures(&kim, next).await.unwrap(), 0);
    store.forgive_failure(&kim, next).await.unwrap();
    assert_eq!(store.failures(&kim, next).await.unwrap(), 0, "never below zero");
    store.forgive_failure(&nobody, next).await.unwrap();
    assert_eq!(
        store.failures(&kim, window).await.unwrap(),
        3,
        "other windows untouched"
    );
}

async fn a_reset_ends_a_run_of_failures_in_its_window_only(store: Dyn) {
    let window = Window::containing(1_800_000_123, 3600);
    let earlier = Window::containing(window.start - 1, 3600);
    let (yoon, lee) = (attempt("totp:yoon"), attempt("totp:lee"));
    for _ in 0..4 {
        store.record_failure(&yoon, window).await.unwrap();
        store.record_failure(&yoon, earlier).await.unwrap();
    }
    store.record_failure(&lee, window).await.unwrap();
    store.reset_failures(&yoon, window).await.unwrap();
    assert_eq!(store.failures(&yoon, window).await.unwrap(), 0);
    assert_eq!(
        store.record_failure(&yoon, window).await.unwrap(),
        1,
        "counting starts again"
    );
    assert_eq!(
        store.failures(&yoon, earlier).await.unwrap(),
        4,
        "other windows untouched"
    );
    assert_eq!(store.failures(&lee, window).await.unwrap(), 1, "other keys untouched");
    store.reset_failures(&attempt("totp:nobody"), window).await.unwrap();
}
