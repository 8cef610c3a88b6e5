//! Lambda Managed Instances through the Lambda path: one `guest-comment`
//! process with `AWS_LAMBDA_MAX_CONCURRENCY=8` takes concurrent invocations
//! from a local Runtime API (tests/support), against DynamoDB Local. All are
//! answered; the hashes that run at once, read from the function's own EMF
//! records, never exceed the gate (one per vCPU); `GET /health` is not held
//! up behind the hashes. Figures are printed for 1, 4 and 8 invocations at once.

use std::time::{Duration, Instant};

use serde_json::Value;
use shared::domain::new_id;

use test_support::lambda::{Function, Seeded, guest_comment, health, table_with_a_post};

/// `clients` loops, each invoking `make()` `per_client` times one after another.
async fn closed_loop(
    function: &Function,
    clients: usize,
    per_client: usize,
    make: impl Fn() -> Value + Sync,
) -> Vec<(u64, Duration)> {
    let each = (0..clients).map(|_| async {
        let mut answered = Vec::new();
        for _ in 0..per_client {
            let started = Instant::now();
            let answer = function.invoke(make()).await;
            answered.push((answer["statusCode"].as_u64().unwrap_or(0), started.elapsed()));
        }
        answered
    });
    futures::future::join_all(each).await.into_iter().flatten().collect()
}

fn percentile(latencies: &mut [Duration], p: f64) -> Duration {
    latencies.sort();
    latencies[((latencies.len() as f64 * p).ceil() as usize).clamp(1, latencies.len()) - 1]
}

/// The EMF records the function wrote: `running` of each hash.
fn running_counts(log: &std::path::Path) -> Vec<u64> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|record| record.get("_aws").is_some())
        .map(|record| record["running"].as_u64().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_invocations_of_one_environment_are_all_answered_and_share_one_hashing_gate() {
    let files = tempfile::tempdir().unwrap();
    let Seeded {
        dynamodb,
        table,
        post_id,
        ..
    } = table_with_a_post(files.path(), "lmi").await;
    let log = files.path().join("function.log");
    let endpoint = dynamodb.endpoint();
    let function = Function::start(
        env!("CARGO_BIN_EXE_guest-comment"),
        "guest-comment",
        &[
            ("AWS_LAMBDA_MAX_CONCURRENCY", "8"),
            ("TABLE_NAME", &table),
            ("DYNAMODB_ENDPOINT", &endpoint),
            ("PEPPER", "lmi-pepper-0123456789abcdefghijklmnopqr"),
            ("TAG_KEY", "function-test-tag-key-0123456789abcdefghij"),
            // The guest tier as deployed (bcrypt 8, peppered): about 15 ms a hash.
            ("GUEST_TIER", "bcrypt:8"),
            ("POW", "off"),
            ("LIMIT_CREATES_ADDRESS", "off"),
            ("RUST_LOG", "warn"),
        ],
        &log,
    )
    .await;
    let warm = function.invoke(guest_comment(&post_id, "warm-up", "warm-up")).await;
    assert_eq!(warm["statusCode"], 201, "{warm}");
    let vcpus = std::thread::available_parallelism().unwrap().get() as u64;

    let comment = || guest_comment(&post_id, "at once", &new_id());
    println!("| invocations at once | answered | 201 | max hashes at once (gate {vcpus}) | P50 ms | P99 ms |");
    println!("|---:|---:|---:|---:|---:|---:|");
    let mut seen_before = running_counts(&log).len();
    for clients in [1, 4, 8] {
        let answers = closed_loop(&function, clients, 48 / clients, comment).await;
        assert!(answers.iter().all(|(status, _)| *status == 201), "{answers:?}");
        let running = running_counts(&log);
        let this_round = &running[seen_before..];
        seen_before = running.len();
        let most = *this_round.iter().max().unwrap();
        assert!(most <= vcpus, "{most} hashes ran at once, the gate allows {vcpus}");
        if clients == 8 && vcpus > 1 {
            assert!(
                most > 1,
                "eight invocations at once never hashed side by side: sequential?"
            );
        }
        let mut latencies: Vec<Duration> = answers.iter().map(|(_, d)| *d).collect();
        println!(
            "| {clients} | {} | {} | {most} | {:.1} | {:.1} |",
            answers.len(),
            answers.iter().filter(|(status, _)| *status == 201).count(),
            percentile(&mut latencies, 0.5).as_secs_f64() * 1e3,
            percentile(&mut latencies, 0.99).as_secs_f64() * 1e3
        );
    }

    // Health checks alone, then beside six invocations that hash.
    let mut alone: Vec<Duration> = closed_loop(&function, 1, 40, health)
        .await
        .iter()
        .map(|a| a.1)
        .collect();
    let (hashing, mut beside) = tokio::join!(closed_loop(&function, 6, 8, comment), async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        closed_loop(&function, 1, 40, health)
            .await
            .iter()
            .map(|a| a.1)
            .collect::<Vec<_>>()
    });
    assert!(hashing.iter().all(|(status, _)| *status == 201));
    let mut hash_latencies: Vec<Duration> = hashing.iter().map(|a| a.1).collect();
    let hash_p50 = percentile(&mut hash_latencies, 0.5);
    let (alone_p99, beside_p99) = (percentile(&mut alone, 0.99), percentile(&mut beside, 0.99));
    println!(
        "GET /health P99: alone {:.1} ms, beside 6 hashing invocations {:.1} ms (their P50 {:.1} ms)",
        alone_p99.as_secs_f64() * 1e3,
        beside_p99.as_secs_f64() * 1e3,
        hash_p50.as_secs_f64() * 1e3
    );
    assert!(beside_p99 < hash_p50, "health checks waited behind the hashes");
}
