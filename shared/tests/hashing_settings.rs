//! Password hashing's settings from the environment (runtime/hashing.rs):
//! the tier file, `MEMBER_TIER`/`GUEST_TIER` over it, and settings refused
//! naming the setting. The hashing itself is tested in the `hashing` crate.

use std::collections::HashMap;

use shared::hashing::{Algorithm, HashingConfig};

const PEPPER: &str = "test-pepper-0123456789-abcdefghijklmnop";

fn config(vars: &[(&str, &str)]) -> Result<HashingConfig, shared::runtime::ConfigError> {
    let vars: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    shared::runtime::hashing_from(&shared::runtime::Env::new(|name| vars.get(name).cloned()))
}

#[test]
fn environment_tiers_win_over_the_tier_file() {
    let cfg = config(&[
        ("PEPPER", PEPPER),
        ("MEMBER_TIER", "argon2id:19456:2:1"),
        ("GUEST_TIER", "bcrypt:6"),
    ])
    .unwrap();
    assert_eq!(
        cfg.member.algorithm,
        Algorithm::Argon2id {
            m_kib: 19456,
            t: 2,
            p: 1
        }
    );
    assert_eq!(cfg.guest.algorithm, Algorithm::Bcrypt { cost: 6 });
    assert!(cfg.member.peppered && cfg.guest.peppered);

    let dir = std::env::temp_dir().join(format!("tiers-{}.json", std::process::id()));
    let mut file: serde_json::Value = serde_json::from_str(shared::hashing::tier_file::EMBEDDED).unwrap();
    file["tiers"]["member"]["spec"] = "bcrypt:12".into();
    file["tiers"]["guest"]["spec"] = "bcrypt:7".into();
    std::fs::write(&dir, file.to_string()).unwrap();
    let path = dir.to_str().unwrap();
    let cfg = config(&[("PEPPER", PEPPER), ("TIERS_FILE", path)]).unwrap();
    assert_eq!(cfg.member.algorithm, Algorithm::Bcrypt { cost: 12 });
    assert_eq!(cfg.guest.algorithm, Algorithm::Bcrypt { cost: 7 });
    let cfg = config(&[("PEPPER", PEPPER), ("TIERS_FILE", path), ("GUEST_TIER", "bcrypt:5")]).unwrap();
    assert_eq!(cfg.guest.algorithm, Algorithm::Bcrypt { cost: 5 });
    std::fs::remove_file(dir).unwrap();
}

#[test]
fn bad_settings_are_refused_naming_the_setting() {
    let cases: [(&[(&str, &str)], &str); 6] = [
        (
            &[("MEMBER_TIER", "bcrypt:99")],
            "MEMBER_TIER: bcrypt cost 99 is outside 4-31",
        ),
        (&[("GUEST_TIER", "md5")], "GUEST_TIER: `md5` is not a tier"),
        (&[("PEPPER", "short")], "PEPPER must be at least 32 bytes (it is 5)"),
        (
            &[("PEPPER", PEPPER), ("PEPPER_PREVIOUS", "x")],
            "PEPPER_PREVIOUS must be at least 32 bytes",
        ),
        (
            &[("HASH_WORKERS", "0")],
            "HASH_WORKERS must be a whole number of at least 1, got `0`",
        ),
        (
            &[("TIERS_FILE", "/nonexistent/tiers.json")],
            "tier file /nonexistent/tiers.json:",
        ),
    ];
    for (vars, expected) in cases {
        let err = config(vars).unwrap_err().to_string();
        assert!(err.starts_with(expected), "{err:?} should start with {expected:?}");
    }
    let cfg = config(&[("PEPPER", PEPPER), ("HASH_WORKERS", "3"), ("HASH_QUEUE", "0")]).unwrap();
    assert_eq!((cfg.workers, cfg.queue), (3, 0));
}
