//! Criterion benchmark of the hashing crate per tier, with the tiers from the
//! committed tier file (peppered, as deployed): one hash and one verify each.
//! `cargo bench -p hashing --bench hashing`

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use hashing::tier_file::{EMBEDDED, TierChoices};
use hashing::{PasswordEngine, Pepper, PepperRing, Policy, Tier};
use secrecy::SecretString;

fn engine() -> PasswordEngine {
    let choices = TierChoices::parse(EMBEDDED).expect("the embedded tier file parses");
    let policy = |tier: Tier| Policy {
        algorithm: choices
            .tier(tier.as_str(), false)
            .expect("the embedded tier file configures both tiers")
            .spec
            .parse()
            .expect("a valid tier spec"),
        peppered: true,
    };
    let pepper = Pepper::parse("PEPPER", SecretString::from("benchmark-pepper-not-a-secret-0123456789"))
        .expect("a long enough pepper");
    PasswordEngine::new(
        policy(Tier::Member),
        policy(Tier::Guest),
        PepperRing::new(Some(pepper), Vec::new()),
    )
    .expect("valid tiers")
}

fn per_tier(c: &mut Criterion) {
    let engine = engine();
    let password = SecretString::from("correct horse battery staple");
    for tier in Tier::ALL {
        let policy = engine.policy(tier);
        let mut group = c.benchmark_group(format!("{tier} ({})", policy.algorithm));
        // Member hashes take a few hundred ms: few samples, long enough window.
        group.sample_size(10).measurement_time(Duration::from_secs(8));
        let stored = engine.hash(tier, &password).expect("hash");
        group.bench_function("hash", |b| b.iter(|| engine.hash(tier, black_box(&password)).unwrap()));
        group.bench_function("verify", |b| {
            b.iter(|| engine.verify(tier, black_box(&password), black_box(&stored)).unwrap())
        });
        group.finish();
    }
}

criterion_group!(benches, per_tier);
criterion_main!(benches);
