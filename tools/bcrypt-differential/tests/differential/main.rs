//! The batch engine against the `bcrypt` crate, bit for bit (docs/DESIGN.md,
//! Batch hashing): the published vectors, then thousands of random inputs of
//! every length from 0 to 72 bytes (and past 72, where both truncate), every
//! byte value with NULs among them, random salts, costs 4 to 6, each alone
//! and in batches of every size up to past the backend's lanes.

use std::str::FromStr as _;

mod vectors;

use hashing::batch::{self, BcryptInput};

use vectors::VECTORS;

/// SplitMix64: deterministic inputs, so a failure reruns the same.
struct Inputs(u64);

impl Inputs {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn password(&mut self) -> Vec<u8> {
        // One in eight past bcrypt's 72 bytes; otherwise 0 to 72.
        let len = if self.below(8) == 0 {
            73 + self.below(40)
        } else {
            self.below(73)
        };
        let mut bytes: Vec<u8> = (0..len).map(|_| self.next() as u8).collect();
        // NUL ends bcrypt's key: put one in one password in four.
        if !bytes.is_empty() && self.below(4) == 0 {
            let at = self.below(bytes.len() as u64) as usize;
            bytes[at] = 0;
        }
        bytes
    }

    fn salt(&mut self) -> [u8; 16] {
        let mut salt = [0u8; 16];
        for byte in &mut salt {
            *byte = self.next() as u8;
        }
        salt
    }
}

/// The `bcrypt` crate's `$2b$` string for these inputs.
fn reference(password: &[u8], cost: u32, salt: [u8; 16]) -> String {
    bcrypt::hash_with_salt(password, cost, salt)
        .expect("the reference hashes")
        .format_for_version(bcrypt::Version::TwoB)
}

#[test]
fn the_batch_engine_reproduces_every_published_vector_alone_and_in_batches() {
    let mut by_cost: std::collections::BTreeMap<u32, Vec<(BcryptInput, String)>> = Default::default();
    for vector in VECTORS {
        let parts = bcrypt::HashParts::from_str(vector.hash).expect("a published vector parses");
        let expected = format!("$2b${}", &vector.hash[4..]);
        let salt = parts.get_salt_raw();
        assert_eq!(
            reference(vector.password, parts.get_cost(), salt),
            expected,
            "the reference crate itself"
        );
        let input = BcryptInput::with_salt(parts.get_cost(), salt, vector.password.to_vec());
        let alone = batch::digest_one(&input).unwrap();
        assert_eq!(batch::hash_string(&alone), expected, "alone: {}", vector.hash);
        assert!(batch::matches(&alone, &parts_digest(vector.hash)));
        by_cost.entry(parts.get_cost()).or_default().push((input, expected));
    }
    for (cost, group) in &by_cost {
        if *cost > 10 {
            continue; // alone above; a batch of cost 12 adds seconds and nothing new
        }
        let inputs: Vec<&BcryptInput> = group.iter().map(|(input, _)| input).collect();
        let outputs = batch::digest_many(&inputs).unwrap();
        for ((_, expected), output) in group.iter().zip(&outputs) {
            assert_eq!(
                &batch::hash_string(output),
                expected,
                "in a batch of {} at cost {cost}",
                group.len()
            );
        }
    }
}

fn parts_digest(hash: &str) -> batch::Digest {
    let (_, digest) = BcryptInput::to_check(hash, &secrecy::SecretString::from("")).expect("parses");
    digest
}

#[test]
fn thousands_of_random_inputs_hash_as_the_bcrypt_crate_does_alone_and_in_batches_of_every_size() {
    const INPUTS: usize = 2_048;
    let mut rng = Inputs(0x5EED_B0A2_D5A1_7000);
    let cases: Vec<(Vec<u8>, u32, [u8; 16])> = (0..INPUTS)
        .map(|_| {
            // Mostly cost 4, so thousands fit in seconds: the cost only
            // repeats the same loop.
            let cost = match rng.below(20) {
                0..=11 => 4,
                12..=16 => 5,
                _ => 6,
            };
            (rng.password(), cost, rng.salt())
        })
        .collect();
    let seen: std::collections::BTreeSet<u8> = cases.iter().flat_map(|(pw, _, _)| pw.iter().copied()).collect();
    assert_eq!(seen.len(), 256, "every byte value is in some password");
    let expected: Vec<String> = cases
        .iter()
        .map(|(pw, cost, salt)| reference(pw, *cost, *salt))
        .collect();
    let (mut alone_checks, mut batch_checks) = (0, 0);
    let mut sizes = std::collections::BTreeSet::new();
    for cost in 4..=6 {
        let group: Vec<usize> = (0..INPUTS).filter(|&i| cases[i].1 == cost).collect();
        let inputs: Vec<BcryptInput> = group
            .iter()
            .map(|&i| BcryptInput::with_salt(cost, cases[i].2, cases[i].0.clone()))
            .collect();
        for (input, &i) in inputs.iter().zip(&group) {
            assert_eq!(
                batch::hash_string(&batch::digest_one(input).unwrap()),
                expected[i],
                "alone: {:?} cost {cost}",
                cases[i].0
            );
            alone_checks += 1;
        }
        // Batches of 1, 2, 3, ... up to 17 (past 16 lanes, the widest
        // backend), over and over through the group.
        let mut at = 0;
        let mut size = 1;
        while at < inputs.len() {
            let end = (at + size).min(inputs.len());
            let chunk: Vec<&BcryptInput> = inputs[at..end].iter().collect();
            let outputs = batch::digest_many(&chunk).unwrap();
            for (output, &i) in outputs.iter().zip(&group[at..end]) {
                assert_eq!(
                    batch::hash_string(output),
                    expected[i],
                    "batch of {}: {:?} cost {cost}",
                    chunk.len(),
                    cases[i].0
                );
                batch_checks += 1;
            }
            sizes.insert(chunk.len());
            at = end;
            size = size % 17 + 1;
        }
    }
    assert_eq!(alone_checks, INPUTS);
    assert_eq!(batch_checks, INPUTS);
    assert!(sizes.len() >= 17, "every batch size ran: {sizes:?}");
    println!(
        "bcrypt differential: {INPUTS} random inputs, {alone_checks} alone + {batch_checks} in batches of 1-17, \
         identical to the bcrypt crate (backend {})",
        bcrypt_backend()
    );
}

fn bcrypt_backend() -> &'static str {
    batch::backend_name()
}
