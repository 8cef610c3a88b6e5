//! What each deployment needs, and what it refuses, from its environment.

use std::path::Path;
use std::time::Duration;

use super::*;
use crate::store::dynamo::{Layout, SdkTuning};
use crate::store::sqlite;

fn lambda(functions: &[Function]) -> Deployment {
    Deployment::Lambda {
        functions: functions.to_vec(),
    }
}

fn server_env<'a>(dir: &'a Path, pairs: &'a [(&'a str, &'a str)]) -> Env<'a> {
    Env::new(move |name| match name {
        "DATA_DIR" => Some(dir.display().to_string()),
        _ => pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned()),
    })
}

#[test]
fn lambda_requires_the_secrets_its_function_uses_and_a_table() {
    let err = Config::from(lambda(&[Function::Login]), &Env::from_pairs(&[])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "JWT_SECRET is required on Lambda: set JWT_SECRET_ARN (a Secrets Manager secret) or JWT_SECRET"
    );
    let jwt = "j".repeat(32);
    let only_jwt = [("JWT_SECRET", jwt.as_str())];
    let err = Config::from(lambda(&[Function::Login]), &Env::from_pairs(&only_jwt)).unwrap_err();
    assert!(err.to_string().starts_with("PEPPER is required"), "{err}");
    let secret = "x".repeat(40);
    let both = [("JWT_SECRET", secret.as_str()), ("PEPPER", secret.as_str())];
    let err = Config::from(lambda(&[Function::Login]), &Env::from_pairs(&both)).unwrap_err();
    assert_eq!(err.to_string(), "TABLE_NAME is required on Lambda");
}

#[test]
fn a_function_gets_only_the_secrets_it_uses() {
    let secret = "x".repeat(40);
    // read verifies bearer tokens (my_vote, hidden dislikes) and signs
    // proof-of-work challenges with a key derived from the tag key: the JWT
    // secret and the tag key, no pepper.
    let table_jwt = [("TABLE_NAME", "boards"), ("JWT_SECRET", secret.as_str())];
    let err = Config::from(lambda(&[Function::Read]), &Env::from_pairs(&table_jwt)).unwrap_err();
    assert!(err.to_string().starts_with("TAG_KEY is required"), "{err}");
    let with_jwt = [
        ("TABLE_NAME", "boards"),
        ("JWT_SECRET", secret.as_str()),
        ("TAG_KEY", secret.as_str()),
    ];
    let read = Config::from(lambda(&[Function::Read]), &Env::from_pairs(&with_jwt)).unwrap();
    assert!(read.hashing.is_none() && read.jwt_secret.is_some() && read.tag_key.is_some());
    assert!(read.pow_key.is_none(), "derived from the tag key unless POW_KEY is set");
    let like = Config::from(lambda(&[Function::Like]), &Env::from_pairs(&with_jwt)).unwrap();
    assert!(like.hashing.is_none() && like.jwt_secret.is_some() && like.tag_key.is_some());
    let moderation = Config::from(lambda(&[Function::Moderation]), &Env::from_pairs(&with_jwt)).unwrap();
    assert!(moderation.hashing.is_none() && moderation.jwt_secret.is_some() && moderation.tag_key.is_some());
    let with_pepper = [
        ("TABLE_NAME", "boards"),
        ("PEPPER", secret.as_str()),
        ("TAG_KEY", secret.as_str()),
    ];
    let guest = Config::from(lambda(&[Function::GuestComment]), &Env::from_pairs(&with_pepper)).unwrap();
    assert!(guest.hashing.is_some() && guest.jwt_secret.is_none());
    let signup = Config::from(lambda(&[Function::Signup]), &Env::from_pairs(&with_pepper)).unwrap();
    assert!(
        signup.tag_key.is_some() && signup.jwt_secret.is_none(),
        "signup checks proofs of work, under a key derived from the tag key"
    );
    let mut short_pow_key = with_pepper.to_vec();
    short_pow_key.push(("POW_KEY", "short"));
    let err = Config::from(lambda(&[Function::Signup]), &Env::from_pairs(&short_pow_key)).unwrap_err();
    assert_eq!(err.to_string(), "POW_KEY must be at least 32 bytes (it is 5)");
}

#[test]
fn a_lambda_function_that_writes_on_boards_needs_a_tag_key_and_the_server_derives_one() {
    let secret = "x".repeat(40);
    let no_tag_key = [("TABLE_NAME", "boards"), ("JWT_SECRET", secret.as_str())];
    let err = Config::from(lambda(&[Function::Moderation]), &Env::from_pairs(&no_tag_key)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "TAG_KEY is required on Lambda: set TAG_KEY_ARN (a Secrets Manager secret) or TAG_KEY"
    );
    let dir = tempfile::tempdir().unwrap();
    let server = Config::from(Deployment::Server, &server_env(dir.path(), &[])).unwrap();
    assert!(matches!(server.tag_key, Some(TagKeySource::Derived { .. })));
    assert!(server.to_string().contains("tag_key=derived"));
    let short = [("TAG_KEY", "short")];
    let config = Config::from(Deployment::Server, &server_env(dir.path(), &short)).unwrap();
    assert!(matches!(config.tag_key, Some(TagKeySource::Configured { .. })));
}

#[test]
fn the_server_generates_missing_secrets_once_and_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let first = Config::from(Deployment::Server, &server_env(dir.path(), &[])).unwrap();
    let pepper = std::fs::read_to_string(dir.path().join("pepper")).unwrap();
    assert_eq!(pepper.len(), 64);
    let second = Config::from(Deployment::Server, &server_env(dir.path(), &[])).unwrap();
    use secrecy::ExposeSecret;
    assert_eq!(
        first.jwt_secret.as_ref().unwrap().expose_secret(),
        second.jwt_secret.as_ref().unwrap().expose_secret()
    );
    assert!(first.hashing.as_ref().unwrap().guest.peppered);
    assert_eq!(
        first.store,
        StoreSettings::Sqlite {
            path: dir.path().join("boards.sqlite3"),
            busy_timeout: sqlite::DEFAULT_BUSY_TIMEOUT,
            synchronous: sqlite::Synchronous::Full,
        }
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("jwt_secret"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[test]
fn the_server_takes_the_fixed_capacity_tiers_and_lambda_the_latency_tiers() {
    use crate::hashing::tier_file::{EMBEDDED, TierFile};
    let file = TierFile::parse(EMBEDDED).unwrap();
    let fixed = file
        .fixed_capacity
        .as_ref()
        .expect("the tier file has a fixed-capacity choice");
    let dir = tempfile::tempdir().unwrap();
    let server = Config::from(Deployment::Server, &server_env(dir.path(), &[])).unwrap();
    let policy = server.hashing.as_ref().unwrap().member;
    assert_eq!(policy.algorithm.to_string(), fixed.tiers["member"].spec);
    let secret = "s".repeat(40);
    let pairs = [
        ("TABLE_NAME", "t"),
        ("PEPPER", secret.as_str()),
        ("JWT_SECRET", secret.as_str()),
    ];
    let login = Config::from(lambda(&[Function::Login]), &Env::from_pairs(&pairs)).unwrap();
    assert_eq!(
        login.hashing.as_ref().unwrap().member.algorithm.to_string(),
        file.tiers["member"].spec
    );
}

#[test]
fn on_managed_instances_a_function_hashes_with_the_fixed_capacity_tiers_one_hash_per_vcpu() {
    use crate::hashing::tier_file::{EMBEDDED, TierFile};
    // The committed file may choose alike for both (the seed's baseline caps
    // both): a tier file whose two member choices differ tells them apart.
    let mut file = TierFile::parse(EMBEDDED).unwrap();
    let fixed_member = &mut file
        .fixed_capacity
        .as_mut()
        .unwrap()
        .tiers
        .get_mut("member")
        .unwrap()
        .spec;
    *fixed_member = if file.tiers["member"].spec == "bcrypt:9" {
        "bcrypt:8"
    } else {
        "bcrypt:9"
    }
    .to_owned();
    let dir = tempfile::tempdir().unwrap();
    let tiers_file = dir.path().join("tiers.json");
    std::fs::write(&tiers_file, serde_json::to_string(&file).unwrap()).unwrap();
    let tiers_file = tiers_file.to_str().unwrap();
    let fixed = &file.fixed_capacity.as_ref().unwrap().tiers;
    let secret = "s".repeat(40);
    let config = |concurrency: Option<&str>| {
        let mut pairs = vec![
            ("TABLE_NAME", "t"),
            ("PEPPER", secret.as_str()),
            ("TAG_KEY", secret.as_str()),
            ("TIERS_FILE", tiers_file),
        ];
        pairs.extend(concurrency.map(|c| ("AWS_LAMBDA_MAX_CONCURRENCY", c)));
        Config::from(lambda(&[Function::GuestComment]), &Env::from_pairs(&pairs))
    };
    let vcpus = std::thread::available_parallelism().unwrap().get();

    let managed = config(Some("16")).unwrap().hashing.unwrap();
    assert_eq!(managed.member.algorithm.to_string(), fixed["member"].spec);
    assert_eq!(managed.guest.algorithm.to_string(), fixed["guest"].spec);
    assert_eq!(managed.workers, vcpus);

    for classic in [None, Some("1")] {
        let hashing = config(classic).unwrap().hashing.unwrap();
        assert_eq!(hashing.member.algorithm.to_string(), file.tiers["member"].spec);
        assert_eq!(hashing.workers, 1, "one request, so one hash, at a time");
    }
    let err = config(Some("eight")).unwrap_err().to_string();
    assert!(
        err.contains("AWS_LAMBDA_MAX_CONCURRENCY must be a positive whole number"),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn a_data_dir_is_created_owner_only_and_a_readable_secret_file_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("data");
    Config::from(Deployment::Server, &server_env(&dir, &[])).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["jwt_secret", "pepper"],
        "written in place, no temporary file left"
    );
    assert_eq!(std::fs::read_to_string(dir.join("pepper")).unwrap().len(), 64);
    std::fs::set_permissions(dir.join("pepper"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = Config::from(Deployment::Server, &server_env(&dir, &[])).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("pepper is readable by group or others"), "{message}");
    assert!(message.contains("chmod 600"), "{message}");
}

#[test]
fn an_existing_data_dir_open_to_others_is_made_owner_only_and_a_shared_one_refused() {
    use std::os::unix::fs::PermissionsExt;
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("data");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    Config::from(Deployment::Server, &server_env(&dir, &[])).unwrap();
    assert_eq!(mode(&dir), 0o700, "made owner-only");
    // Again with its secrets already there: still checked.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o750)).unwrap();
    Config::from(Deployment::Server, &server_env(&dir, &[])).unwrap();
    assert_eq!(mode(&dir), 0o700, "checked when the secrets exist too");
    // A directory like /tmp is not taken from its other users.
    let shared = parent.path().join("tmp-like");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let err = Config::from(Deployment::Server, &server_env(&shared, &[])).unwrap_err();
    assert!(err.to_string().contains("shared directory"), "{err}");
    assert_eq!(mode(&shared), 0o1777, "left as it was");
}

#[test]
fn pepper_none_runs_unpeppered_only_with_strong_tiers() {
    let dir = tempfile::tempdir().unwrap();
    let weak = [("PEPPER", UNPEPPERED), ("GUEST_TIER", "bcrypt:8")];
    // The tiers are checked where hashing starts, before the server listens.
    let config = Config::from(Deployment::Server, &server_env(dir.path(), &weak)).unwrap();
    let err = crate::hashing::Hashing::new(config.hashing.unwrap()).unwrap_err();
    assert!(err.to_string().contains("must be peppered"), "{err}");
    let strong = [
        ("PEPPER", UNPEPPERED),
        ("MEMBER_TIER", "bcrypt:10"),
        ("GUEST_TIER", "bcrypt:10"),
    ];
    let config = Config::from(Deployment::Server, &server_env(dir.path(), &strong)).unwrap();
    let hashing = config.hashing.unwrap();
    assert!(!hashing.guest.peppered && !hashing.member.peppered);
    assert!(!dir.path().join("pepper").exists(), "no pepper was generated");
}

#[test]
fn bad_settings_name_themselves() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &str); 9] = [
        ("BOARDS", "Free Talk", "BOARDS:"),
        ("LIMIT_GUEST_TARGET", "ten", "LIMIT_GUEST_TARGET"),
        ("THROTTLE_GUEST", "10/600", "THROTTLE_GUEST is gone"),
        ("TRUST_PROXY", "1", "TRUST_PROXY is gone"),
        ("TRUSTED_PROXIES", "10.0.0.0/33", "TRUSTED_PROXIES"),
        (
            "SQLITE_BUSY_TIMEOUT_MS",
            "0",
            "SQLITE_BUSY_TIMEOUT_MS must be a positive whole number",
        ),
        ("SQLITE_SYNCHRONOUS", "OFF", "SQLITE_SYNCHRONOUS must be FULL or NORMAL"),
        (
            "HASH_WORKERS",
            "0",
            "HASH_WORKERS must be a whole number of at least 1, got `0`",
        ),
        (
            "MEMBER_TIER",
            "bcrypt:99",
            "MEMBER_TIER: bcrypt cost 99 is outside 4-31",
        ),
    ];
    for (name, value, expected) in cases {
        let pairs = [(name, value)];
        let err = Config::from(Deployment::Server, &server_env(dir.path(), &pairs)).unwrap_err();
        assert!(err.to_string().starts_with(expected), "{name}: {err}");
    }
    for bad in ["0", "-1", "soon"] {
        let pairs = [("TABLE_NAME", "boards"), ("DYNAMODB_OPERATION_TIMEOUT_MS", bad)];
        let err = Config::from(Deployment::Server, &server_env(dir.path(), &pairs)).unwrap_err();
        assert!(err.to_string().contains("DYNAMODB_OPERATION_TIMEOUT_MS"), "{err}");
    }
    let ok = [("TRUSTED_PROXIES", "10.0.0.0/8"), ("BOARDS", "news,tech")];
    let config = Config::from(Deployment::Server, &server_env(dir.path(), &ok)).unwrap();
    let printed = config.to_string();
    assert!(printed.contains("trusted_proxies=10.0.0.0/8"), "{printed}");
    assert_eq!(config.http.trusted_proxies.len(), 1);
    assert_eq!(config.app.boards.names(), ["news", "tech"]);
}

#[test]
fn a_table_name_selects_dynamodb_with_its_tuning() {
    let dir = tempfile::tempdir().unwrap();
    let pairs = [
        ("TABLE_NAME", "boards"),
        ("DYNAMODB_ENDPOINT", "http://127.0.0.1:8000"),
        ("DYNAMODB_ATTEMPT_TIMEOUT_MS", "250"),
        ("COUNTER_SHARDS", "4"),
        ("READ_CACHE_TTL_MS", "1000"),
    ];
    let config = Config::from(Deployment::Server, &server_env(dir.path(), &pairs)).unwrap();
    let mut tuning = SdkTuning::defaults(true);
    tuning.attempt_timeout = Duration::from_millis(250);
    assert_eq!(
        config.store,
        StoreSettings::Dynamo {
            table: "boards".into(),
            endpoint: Some("http://127.0.0.1:8000".into()),
            extra_roots: None,
            tuning,
            layout: Layout {
                counter_shards: 4,
                read_cache_ttl: Duration::from_secs(1),
            },
        }
    );
    for (shards, message) in [("0", "COUNTER_SHARDS must be"), ("65", "from 1 to 64")] {
        let pairs = [("TABLE_NAME", "boards"), ("COUNTER_SHARDS", shards)];
        let err = Config::from(Deployment::Server, &server_env(dir.path(), &pairs)).unwrap_err();
        assert!(err.to_string().contains(message), "{err}");
    }
    let aws = SdkTuning::defaults(false);
    assert_eq!(aws.operation_timeout, Duration::from_secs(3));
    assert!(aws.attempt_timeout * aws.max_attempts >= aws.operation_timeout);
}

#[test]
fn an_aws_ca_bundle_is_read_at_start_and_a_missing_one_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("proxy-ca.pem");
    std::fs::write(&bundle, crate::aws::AWS_ROOTS_PEM).unwrap();
    let bundle = bundle.to_str().unwrap();
    let pairs = [("TABLE_NAME", "boards"), ("AWS_CA_BUNDLE", bundle)];
    let config = Config::from(Deployment::Server, &server_env(dir.path(), &pairs)).unwrap();
    let StoreSettings::Dynamo { extra_roots, .. } = &config.store else {
        panic!("not DynamoDB")
    };
    assert_eq!(extra_roots.as_deref(), Some(crate::aws::AWS_ROOTS_PEM));
    assert!(config.to_string().contains("extra_ca_bundle=true"), "{config}");

    let pairs = [("TABLE_NAME", "boards"), ("AWS_CA_BUNDLE", "/no/such/ca.pem")];
    let err = Config::from(Deployment::Server, &server_env(dir.path(), &pairs)).unwrap_err();
    assert!(
        err.to_string().contains("AWS_CA_BUNDLE: reading /no/such/ca.pem"),
        "{err}"
    );
}

#[test]
fn the_printed_summary_shows_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let pepper = "p".repeat(40);
    let jwt = "j".repeat(40);
    let pairs = [("PEPPER", pepper.as_str()), ("JWT_SECRET", jwt.as_str())];
    let config = Config::from(Deployment::Server, &server_env(dir.path(), &pairs)).unwrap();
    let printed = config.to_string();
    assert!(
        printed.contains("jwt_secret=set") && printed.contains("pepper=set "),
        "{printed}"
    );
    assert!(!printed.contains(&pepper) && !printed.contains(&jwt), "{printed}");
    assert!(
        printed.contains("store=sqlite") && printed.contains("boards=free,qna,notice"),
        "{printed}"
    );
}

#[test]
fn login_and_account_get_a_totp_key_from_the_pepper_unless_one_is_set() {
    let secret = "x".repeat(40);
    let base = [
        ("TABLE_NAME", "boards"),
        ("JWT_SECRET", secret.as_str()),
        ("PEPPER", secret.as_str()),
        ("TAG_KEY", secret.as_str()),
    ];
    for function in [Function::Login, Function::Account] {
        let config = Config::from(lambda(&[function]), &Env::from_pairs(&base)).unwrap();
        assert!(
            matches!(&config.totp_key, Some(TotpKeySource::Derived { previous, .. }) if previous.is_empty()),
            "{function:?}: derived from the pepper"
        );
        assert!(config.to_string().contains("totp_key=derived"), "{config}");
    }
    for function in [
        Function::Signup,
        Function::Moderation,
        Function::Read,
        Function::GuestPost,
    ] {
        let config = Config::from(lambda(&[function]), &Env::from_pairs(&base)).unwrap();
        assert!(config.totp_key.is_none(), "{function:?} holds no TOTP key");
    }
    let mut rotated = base.to_vec();
    let previous = "p".repeat(40);
    rotated.push(("PEPPER_PREVIOUS", previous.as_str()));
    let config = Config::from(lambda(&[Function::Login]), &Env::from_pairs(&rotated)).unwrap();
    assert_eq!(
        config.totp_key.as_ref().unwrap().keys().len(),
        2,
        "the earlier pepper's key too"
    );
    let mut own = base.to_vec();
    let key = "k".repeat(32);
    own.push(("TOTP_KEY", key.as_str()));
    let config = Config::from(lambda(&[Function::Account]), &Env::from_pairs(&own)).unwrap();
    assert!(matches!(config.totp_key, Some(TotpKeySource::Configured { .. })));
    let mut short = base.to_vec();
    short.push(("TOTP_KEY", "short"));
    let err = Config::from(lambda(&[Function::Account]), &Env::from_pairs(&short)).unwrap_err();
    assert_eq!(err.to_string(), "TOTP_KEY must be at least 32 bytes (it is 5)");
    let mut unpeppered = base.to_vec();
    unpeppered.retain(|(name, _)| *name != "PEPPER");
    unpeppered.extend([("PEPPER", "none"), ("HASH_FLOOR_OVERRIDE", "1")]);
    let err = Config::from(lambda(&[Function::Login]), &Env::from_pairs(&unpeppered)).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("TOTP_KEY is required on Lambda when PEPPER is none"),
        "{err}"
    );
}

#[test]
fn member_password_settings_are_read_and_bad_ones_refused() {
    let settings = |pairs: &[(&str, &str)]| crate::runtime::app::app_settings(&Env::from_pairs(pairs));
    let defaults = settings(&[]).unwrap().passwords;
    assert_eq!(
        (defaults.member_min, defaults.nist, defaults.staff_require_totp),
        (8, false, true)
    );
    let set = settings(&[
        ("MEMBER_PASSWORD_MIN", "12"),
        ("PASSWORD_POLICY", "nist"),
        ("STAFF_REQUIRE_TOTP", "false"),
        ("TOTP_ISSUER", "우리 게시판"),
    ])
    .unwrap()
    .passwords;
    assert_eq!((set.member_min, set.nist, set.staff_require_totp), (12, true, false));
    assert_eq!((set.member_min(false), set.member_min(true)), (15, 12));
    assert_eq!(set.totp_issuer, "우리 게시판");
    for (name, bad) in [
        ("MEMBER_PASSWORD_MIN", "7"),
        ("MEMBER_PASSWORD_MIN", "65"),
        ("PASSWORD_POLICY", "strict"),
        ("STAFF_REQUIRE_TOTP", "maybe"),
        ("TOTP_ISSUER", "a:b"),
    ] {
        let err = settings(&[(name, bad)]).unwrap_err();
        assert!(err.to_string().contains(name), "{name}={bad}: {err}");
    }
}
