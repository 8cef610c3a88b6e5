//! What `synchronous=FULL` costs a create on SQLite (docs/storage.md,
//! Durability): the same post creates through the store, FULL and NORMAL
//! taking turns in rounds on one disk, printed side by side with their
//! ratio. `cargo bench -p shared --bench sqlite_durability`; in the test
//! run (`cargo test --all-targets`) it makes a few creates of each only.

use std::time::Instant;

use shared::domain::{Author, Post, PostSummary, new_id, now};
use shared::store::Posts;
use shared::store::sqlite::{DEFAULT_BUSY_TIMEOUT, SqliteStore, Synchronous};

fn post() -> Post {
    Post {
        summary: PostSummary {
            id: new_id(),
            board: "free".into(),
            title: "durability".into(),
            author: Author::Guest {
                nickname: "g".into(),
                tag: None,
            },
            created_at: now(),
            view_count: 0,
            like_count: 0,
            comment_count: 0,
            number: unique_number(),
            category: None,
            dislike_count: Some(0),
            best: false,
            media_count: 0,
        },
        body: "b".repeat(200),
        updated_at: now(),
        revision_count: 0,
        media: Vec::new(),
    }
}

/// Creates per second over `count` creates, one after another.
async fn creates_per_second(store: &SqliteStore, count: u32) -> f64 {
    let started = Instant::now();
    for _ in 0..count {
        store
            .create_post(
                &post(),
                &shared::domain::Writer {
                    key: shared::domain::WriterKey::new("benchwriter".into()),
                    range: shared::domain::WriterKey::new("benchrange".into()),
                },
                None,
                None,
            )
            .await
            .unwrap();
    }
    f64::from(count) / started.elapsed().as_secs_f64()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let measuring = std::env::args().any(|a| a == "--bench");
    let (rounds, per_round) = if measuring { (7, 300) } else { (1, 5) };
    let dir = tempfile::tempdir_in(std::env::var("BENCH_DIR").unwrap_or_else(|_| ".".into())).unwrap();
    let open = |s: Synchronous| {
        SqliteStore::open_with(
            &dir.path().join(format!("{}.sqlite3", s.as_str())),
            DEFAULT_BUSY_TIMEOUT,
            s,
        )
        .unwrap()
    };
    let (full, normal) = (open(Synchronous::Full), open(Synchronous::Normal));
    let (mut full_rates, mut normal_rates) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        normal_rates.push(creates_per_second(&normal, per_round).await);
        full_rates.push(creates_per_second(&full, per_round).await);
    }
    if measuring {
        let (full, normal) = (median(full_rates), median(normal_rates));
        println!("| synchronous | creates/s (median of {rounds} rounds of {per_round}) | ms per create |");
        println!("|---|---:|---:|");
        println!("| NORMAL | {normal:.0} | {:.2} |", 1e3 / normal);
        println!("| FULL | {full:.0} | {:.2} |", 1e3 / full);
        println!("FULL / NORMAL throughput: {:.2}", full / normal);
    }
}

/// A post number no other post of this process has: posts made here
/// without the use cases (which take one from the board's counter) need
/// one, since numbers are unique per board.
fn unique_number() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1_000_000);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}
