//! The tiered-hashing crate's contract, through its public API.

use hashing::batch::BatchPlan;
use hashing::timing::TimingSink;
use hashing::{
    Algorithm, Batching, DEFAULT_QUEUE, EngineError, HashError, Hashing, HashingConfig, Overrides, PasswordEngine,
    Pepper, PepperRing, Policy, StoredHash, Tier,
};
use proptest::prelude::*;
use secrecy::SecretString;

const PEPPER: &str = "test-pepper-0123456789-abcdefghijklmnop";
const OLD_PEPPER: &str = "old-pepper-0123456789-abcdefghijklmnopq";

fn pepper(secret: &str) -> Pepper {
    Pepper::parse("PEPPER", SecretString::from(secret)).unwrap()
}

fn ring() -> PepperRing {
    PepperRing::new(Some(pepper(PEPPER)), vec![pepper(OLD_PEPPER)])
}

fn secret(s: &str) -> SecretString {
    SecretString::from(s)
}

fn policy(spec: &str, peppered: bool) -> Policy {
    Policy {
        algorithm: spec.parse().unwrap(),
        peppered,
    }
}

fn engine(member: Policy, guest: Policy) -> PasswordEngine {
    PasswordEngine::new(member, guest, ring()).unwrap()
}

/// Cheap policies for property tests: weak, so they must be peppered.
fn cheap_engine() -> PasswordEngine {
    engine(policy("bcrypt:4", true), policy("argon2id:64:1:1", true))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn a_hash_verifies_its_password_and_no_other(password in ".{1,300}", other in ".{1,300}") {
        prop_assume!(password != other);
        let engine = cheap_engine();
        for tier in Tier::ALL {
            let stored = engine.hash(tier, &secret(&password)).unwrap();
            prop_assert!(engine.verify(tier, &secret(&password), &stored).unwrap().matched);
            prop_assert!(!engine.verify(tier, &secret(&other), &stored).unwrap().matched);
        }
    }

    #[test]
    fn peppered_passwords_that_differ_only_after_byte_72_are_told_apart(
        prefix in "[a-zA-Z0-9]{72}", a in ".{1,50}", b in ".{1,50}"
    ) {
        prop_assume!(a != b);
        let engine = cheap_engine();
        let (first, second) = (prefix.clone() + &a, prefix + &b);
        let stored = engine.hash(Tier::Member, &secret(&first)).unwrap();
        prop_assert!(engine.verify(Tier::Member, &secret(&first), &stored).unwrap().matched);
        prop_assert!(!engine.verify(Tier::Member, &secret(&second), &stored).unwrap().matched);
    }
}

#[test]
fn every_algorithm_verifies_with_and_without_the_pepper() {
    // Unpeppered tiers must be at least as strong as bcrypt 10: these are the real floors.
    for (spec, peppered) in [
        ("bcrypt:10", false),
        ("argon2id:7168:5:1", false),
        ("bcrypt:5", true),
        ("argon2id:256:2:1", true),
    ] {
        let engine = engine(policy(spec, peppered), policy(spec, peppered));
        let stored = engine.hash(Tier::Guest, &secret("correct horse")).unwrap();
        let parsed = StoredHash::parse(&stored).unwrap();
        assert_eq!(parsed.algorithm, spec.parse::<Algorithm>().unwrap(), "{spec}");
        assert_eq!(parsed.pepper_id.is_some(), peppered, "{spec}");
        let ok = engine.verify(Tier::Guest, &secret("correct horse"), &stored).unwrap();
        assert!(ok.matched && !ok.needs_rehash, "{spec}");
        assert!(
            !engine
                .verify(Tier::Guest, &secret("correct horsf"), &stored)
                .unwrap()
                .matched,
            "{spec}"
        );
    }
}

#[test]
fn the_cost_is_read_from_the_stored_hash_not_from_the_tier() {
    let old = engine(policy("bcrypt:5", true), policy("bcrypt:4", true));
    let stored = old.hash(Tier::Member, &secret("hunter22")).unwrap();
    assert_eq!(
        StoredHash::parse(&stored).unwrap().algorithm,
        Algorithm::Bcrypt { cost: 5 }
    );
    assert!(stored.contains("$2b$05$"));

    // The tier moved to another cost and even another algorithm: the old hash still verifies.
    let now = engine(policy("argon2id:19456:2:1", true), policy("bcrypt:4", true));
    let verdict = now.verify(Tier::Member, &secret("hunter22"), &stored).unwrap();
    assert!(verdict.matched);
    assert!(verdict.needs_rehash);
}

#[test]
fn needs_rehash_flips_when_the_tier_changes_and_clears_after_rehashing() {
    let before = engine(policy("bcrypt:4", true), policy("bcrypt:4", true));
    let stored = before.hash(Tier::Member, &secret("password1")).unwrap();
    assert!(
        !before
            .verify(Tier::Member, &secret("password1"), &stored)
            .unwrap()
            .needs_rehash
    );

    let after = engine(policy("bcrypt:6", true), policy("bcrypt:4", true));
    assert!(
        after
            .verify(Tier::Member, &secret("password1"), &stored)
            .unwrap()
            .needs_rehash
    );
    // The guest tier did not change, so the same hash is current there.
    assert!(
        !after
            .verify(Tier::Guest, &secret("password1"), &stored)
            .unwrap()
            .needs_rehash
    );

    let rehashed = after.hash(Tier::Member, &secret("password1")).unwrap();
    let verdict = after.verify(Tier::Member, &secret("password1"), &rehashed).unwrap();
    assert!(verdict.matched && !verdict.needs_rehash);
}

#[test]
fn a_rotated_pepper_keeps_old_hashes_verifying_and_asks_for_a_rehash() {
    let old = PasswordEngine::new(
        policy("bcrypt:4", true),
        policy("bcrypt:4", true),
        PepperRing::new(Some(pepper(OLD_PEPPER)), vec![]),
    )
    .unwrap();
    let stored = old.hash(Tier::Member, &secret("rotate me")).unwrap();

    let rotated = cheap_engine(); // current PEPPER, OLD_PEPPER as previous
    let verdict = rotated.verify(Tier::Member, &secret("rotate me"), &stored).unwrap();
    assert!(verdict.matched && verdict.needs_rehash);
    assert!(
        !rotated
            .verify(Tier::Member, &secret("rotate mf"), &stored)
            .unwrap()
            .matched
    );

    let retired = PasswordEngine::new(
        policy("bcrypt:4", true),
        policy("bcrypt:4", true),
        PepperRing::new(Some(pepper(PEPPER)), vec![]),
    )
    .unwrap();
    assert!(matches!(
        retired.verify(Tier::Member, &secret("rotate me"), &stored),
        Err(EngineError::UnknownPepper(_))
    ));
}

#[test]
fn an_unpeppered_hash_asks_for_a_rehash_once_a_pepper_is_configured() {
    let plain = PasswordEngine::new(
        policy("bcrypt:10", false),
        policy("bcrypt:10", false),
        PepperRing::default(),
    )
    .unwrap();
    let stored = plain.hash(Tier::Member, &secret("no pepper yet")).unwrap();
    assert!(stored.starts_with("$2b$10$"));
    let peppered = engine(policy("bcrypt:10", true), policy("bcrypt:4", true));
    let verdict = peppered
        .verify(Tier::Member, &secret("no pepper yet"), &stored)
        .unwrap();
    assert!(verdict.matched && verdict.needs_rehash);
}

#[test]
fn without_a_pepper_72_bytes_are_all_significant_and_73_are_refused() {
    let plain = PasswordEngine::new(
        policy("bcrypt:10", false),
        policy("bcrypt:10", false),
        PepperRing::default(),
    )
    .unwrap();
    let a = format!("{}a", "x".repeat(71));
    let b = format!("{}b", "x".repeat(71));
    let stored = plain.hash(Tier::Member, &secret(&a)).unwrap();
    assert!(plain.verify(Tier::Member, &secret(&a), &stored).unwrap().matched);
    assert!(!plain.verify(Tier::Member, &secret(&b), &stored).unwrap().matched);

    let too_long = "y".repeat(73);
    assert_eq!(
        plain.hash(Tier::Member, &secret(&too_long)),
        Err(EngineError::PasswordTooLong { max_bytes: 72, len: 73 })
    );
    assert_eq!(
        plain.verify(Tier::Member, &secret(&too_long), &stored),
        Err(EngineError::PasswordTooLong { max_bytes: 72, len: 73 })
    );
    // Multi-byte characters count in bytes: 25 x 3 bytes = 75.
    assert!(matches!(
        plain.hash(Tier::Member, &secret(&"한".repeat(25))),
        Err(EngineError::PasswordTooLong { len: 75, .. })
    ));
}

#[test]
fn the_dummy_verify_never_matches_and_is_a_current_member_tier_hash() {
    let engine = engine(policy("bcrypt:6", true), policy("bcrypt:4", true));
    assert_eq!(engine.verify_dummy(&secret("anything at all")), Ok(()));
    // Its cost is the member tier's, so it takes as long as a real member verify.
    let plain = PasswordEngine::new(
        policy("bcrypt:10", false),
        policy("bcrypt:10", false),
        PepperRing::default(),
    )
    .unwrap();
    assert_eq!(plain.verify_dummy(&secret("")), Ok(()));
}

#[test]
fn malformed_stored_hashes_are_errors_not_matches() {
    let engine = cheap_engine();
    for bad in ["", "plaintext", "$2b$10$short", "$hs384$abcd", "$argon2id$v=19$m=zz"] {
        assert!(
            matches!(
                engine.verify(Tier::Member, &secret("pw"), bad),
                Err(EngineError::MalformedHash(_))
            ),
            "{bad}"
        );
    }
}

/// A service's settings: both tiers peppered (or neither), one worker, the
/// default queue, every hash alone.
fn config(member: &str, guest: &str, peppered: bool) -> HashingConfig {
    let peppers = if peppered {
        PepperRing::new(Some(pepper(PEPPER)), Vec::new())
    } else {
        PepperRing::default()
    };
    HashingConfig {
        member: policy(member, peppered),
        guest: policy(guest, peppered),
        peppers,
        workers: 1,
        queue: DEFAULT_QUEUE,
        weights: [1, 1],
        batching: Batching::Off,
        overrides: Overrides::default(),
        timing: TimingSink::Log,
    }
}

/// [`config`] with tiers under the floors allowed, as tests run them.
fn cheap_config(member: &str, guest: &str) -> HashingConfig {
    let mut config = config(member, guest, true);
    config.overrides.below_floor = true;
    config
}

#[test]
fn a_weak_tier_without_a_pepper_fails_at_start_with_a_clear_error() {
    let err = Hashing::new(config("bcrypt:10", "bcrypt:8", false)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the guest tier (bcrypt:8) is weaker than bcrypt cost 10, so it must be peppered: set PEPPER, or raise GUEST_TIER"
    );
    assert!(
        Hashing::new(config("bcrypt:10", "bcrypt:10", false)).is_ok(),
        "strong tiers may run unpeppered"
    );
}

#[tokio::test]
async fn the_async_service_hashes_on_the_gate_and_refuses_when_it_is_full() {
    let hashing = Hashing::new(cheap_config("bcrypt:4", "bcrypt:4")).unwrap();
    let stored = hashing.hash(Tier::Member, secret("via the gate")).await.unwrap();
    let verdict = hashing
        .verify(Tier::Member, secret("via the gate"), stored)
        .await
        .unwrap();
    assert!(verdict.matched);
    assert!(hashing.verify_dummy(secret("nobody")).await.is_ok());

    // A gate with no queue and its only worker busy refuses the next request.
    let mut cfg = cheap_config("bcrypt:12", "bcrypt:4");
    cfg.queue = 0;
    let hashing = Hashing::new(cfg).unwrap();
    let busy = {
        let hashing = hashing.clone();
        tokio::spawn(async move { hashing.hash(Tier::Member, secret("slow one")).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let refused = hashing.hash(Tier::Guest, secret("next")).await;
    assert!(matches!(refused, Err(HashError::Overloaded(_))), "{refused:?}");
    assert!(busy.await.unwrap().is_ok());
}

/// A stolen table without the pepper: the bcrypt inside a peppered hash is
/// of HMAC(pepper, password), so even the right password does not match it.
#[test]
fn a_stolen_peppered_hash_does_not_match_its_password_without_the_pepper() {
    let stored = cheap_engine().hash(Tier::Member, &secret("guessable")).unwrap();
    let parts: Vec<&str> = stored.splitn(4, '$').collect();
    assert_eq!(parts[1], "hs384", "{}", parts[1]);
    let bcrypt_inside = format!("${}", parts[3]);
    assert!(bcrypt_inside.starts_with("$2b$04$"));
    assert!(!bcrypt::verify("guessable", &bcrypt_inside).unwrap());
    assert!(
        cheap_engine()
            .verify(Tier::Member, &secret("guessable"), &stored)
            .unwrap()
            .matched
    );
}

#[test]
fn rehash_on_verify_never_moves_a_hash_to_a_weaker_policy_unless_told_to() {
    let stronger = engine(policy("bcrypt:6", true), policy("bcrypt:6", true));
    let stored = stronger.hash(Tier::Member, &secret("password1")).unwrap();
    let weaker = engine(policy("bcrypt:5", true), policy("bcrypt:5", true));
    let verdict = weaker.verify(Tier::Member, &secret("password1"), &stored).unwrap();
    assert!(verdict.matched && !verdict.needs_rehash, "a lower cost is no upgrade");
    let unpeppered = engine(policy("bcrypt:10", false), policy("bcrypt:10", false));
    let peppered_10 = engine(policy("bcrypt:10", true), policy("bcrypt:10", true))
        .hash(Tier::Member, &secret("password1"))
        .unwrap();
    let verdict = unpeppered
        .verify(Tier::Member, &secret("password1"), &peppered_10)
        .unwrap();
    assert!(
        verdict.matched && !verdict.needs_rehash,
        "losing the pepper is a downgrade"
    );
    let told = engine(policy("bcrypt:5", true), policy("bcrypt:5", true)).allowing_downgrade(true);
    assert!(
        told.verify(Tier::Member, &secret("password1"), &stored)
            .unwrap()
            .needs_rehash
    );
}

#[test]
fn tiers_under_the_floors_fail_at_start_unless_overridden() {
    let cases = [
        ("bcrypt:7", "under the floor (bcrypt 8 with a pepper)"),
        (
            "argon2id:4096:10:1",
            "under the floor (argon2id with at least 7168 KiB)",
        ),
        (
            "argon2id:7168:4:1",
            "under the floor (argon2id m x t of at least 7168 KiB x 5)",
        ),
    ];
    for (spec, expected) in cases {
        let err = Hashing::new(config(spec, "bcrypt:8", true)).unwrap_err().to_string();
        assert!(err.contains(expected) && err.contains("MEMBER_TIER"), "{spec}: {err}");
        assert!(
            Hashing::new(cheap_config(spec, "bcrypt:8")).is_ok(),
            "{spec} with the override"
        );
    }
    assert!(Hashing::new(config("bcrypt:8", "argon2id:7168:5:1", true)).is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_hashes_and_verifies_of_one_tier_share_batches_and_every_answer_is_right() {
    let mut cfg = cheap_config("bcrypt:6", "bcrypt:4");
    cfg.batching = Batching::Plan(BatchPlan {
        lanes: 8,
        min_batch: 2,
        backend: "test",
    });
    let hashing = Hashing::new(cfg).unwrap();
    // Stored hashes made one at a time, to check against in batches.
    let mut stored = Vec::new();
    for i in 0..12 {
        stored.push(
            hashing
                .hash(Tier::Member, secret(&format!("member {i}")))
                .await
                .unwrap(),
        );
    }
    assert_eq!(hashing.batched(), 0, "one at a time, nothing waits");
    // 36 at once on one worker: right and wrong passwords, new hashes and
    // an unknown user's dummy verify, queued together.
    let mut jobs = Vec::new();
    for (i, hash) in stored.iter().enumerate() {
        for (password, expect) in [(format!("member {i}"), true), (format!("member {i}!"), false)] {
            let (hashing, hash) = (hashing.clone(), hash.clone());
            jobs.push(tokio::spawn(async move {
                let verdict = hashing.verify(Tier::Member, secret(&password), hash).await.unwrap();
                assert_eq!(verdict.matched, expect, "{password}");
                None
            }));
        }
        let hashing = hashing.clone();
        jobs.push(tokio::spawn(async move {
            let made = hashing.hash(Tier::Member, secret(&format!("new {i}"))).await.unwrap();
            Some((i, made))
        }));
    }
    let dummy = {
        let hashing = hashing.clone();
        tokio::spawn(async move { hashing.verify_dummy(secret("nobody")).await })
    };
    let mut made = Vec::new();
    for job in jobs {
        made.extend(job.await.unwrap());
    }
    assert!(dummy.await.unwrap().is_ok());
    assert!(hashing.batched() > 0, "some hashes ran in batches");
    // Hashes made in a batch verify alone, and with the bcrypt crate inside the pepper.
    for (i, hash) in made {
        assert!(
            hashing
                .engine()
                .verify(Tier::Member, &secret(&format!("new {i}")), &hash)
                .unwrap()
                .matched
        );
    }
}
