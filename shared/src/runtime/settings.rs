//! The one configuration of a process, read from the environment here
//! (docs/configuration.md): each deployment asks for what its functions
//! need. On Lambda a function without password hashing needs no pepper and
//! one that neither issues nor checks tokens needs no JWT secret; the server
//! serves everything and generates missing secrets once under `DATA_DIR`.
//! Every error names its setting. Each layer owns its settings type and
//! prints it; [`Config`]'s `Display` joins them into the redacted line
//! logged at start (secrets show only whether they are set).

use std::fmt;
use std::path::PathBuf;

use secrecy::SecretString;

use super::Env;
use crate::app::AppSettings;
use crate::function::{Function, Needs};
#[cfg(feature = "hashing")]
use crate::hashing::{self, HashingConfig};
use crate::http::HttpSettings;
use crate::store::StoreSettings;

/// A configuration that cannot run; the message names the setting.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{0}")]
    Invalid(String),
    #[cfg(feature = "hashing")]
    #[error(transparent)]
    Hashing(#[from] hashing::ConfigError),
}

impl ConfigError {
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        ConfigError::Invalid(message.into())
    }
}

#[cfg(feature = "dynamo")]
impl From<crate::aws::AwsError> for ConfigError {
    fn from(e: crate::aws::AwsError) -> Self {
        ConfigError::Invalid(e.to_string())
    }
}

/// The `PEPPER` value that means "no pepper", deliberately: passwords are then
/// limited to bcrypt's 72 bytes and tiers must be bcrypt cost 10 or more.
pub const UNPEPPERED: &str = "none";

/// Where the process runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deployment {
    /// Lambda functions serving `functions` (one, except in tests).
    Lambda { functions: Vec<Function> },
    /// The single-process server: every function, secrets kept under `DATA_DIR`.
    Server,
}

impl Deployment {
    pub fn functions(&self) -> Vec<Function> {
        match self {
            Deployment::Lambda { functions } => functions.clone(),
            Deployment::Server => Function::ALL.to_vec(),
        }
    }
}

#[derive(Debug)]
pub struct Config {
    pub deployment: Deployment,
    pub store: StoreSettings,
    /// Present when a served function hashes passwords.
    #[cfg(feature = "hashing")]
    pub hashing: Option<HashingConfig>,
    /// Present when a served function issues or checks bearer tokens.
    pub jwt_secret: Option<SecretString>,
    /// (v3) Present when a served function writes on boards or checks bans.
    pub tag_key: Option<TagKeySource>,
    pub app: AppSettings,
    pub http: HttpSettings,
    /// Server mode: where the SQLite file and generated secrets live.
    pub data_dir: Option<PathBuf>,
}

impl Config {
    pub fn from_env(deployment: Deployment) -> Result<Self, ConfigError> {
        Self::from(deployment, &Env::process())
    }

    pub fn from(deployment: Deployment, env: &Env<'_>) -> Result<Self, ConfigError> {
        let needs = Needs::of(&deployment.functions());
        let data_dir = match deployment {
            Deployment::Server => Some(PathBuf::from(
                env.get("DATA_DIR").unwrap_or_else(|| "./data".to_owned()),
            )),
            Deployment::Lambda { .. } => None,
        };
        let secret = |name: &str| -> Result<String, ConfigError> {
            match (env.get(name), &data_dir) {
                (Some(value), _) => Ok(value),
                (None, Some(dir)) => super::local_secrets::local_secret(dir, &name.to_ascii_lowercase()),
                (None, None) => Err(ConfigError::invalid(format!(
                    "{name} is required on Lambda: set {name}_ARN (a Secrets Manager secret) or {name}"
                ))),
            }
        };
        let http = match deployment {
            Deployment::Server => super::http::http_settings(env)?,
            Deployment::Lambda { .. } => HttpSettings::default(),
        };
        let jwt_secret = needs
            .tokens
            .then(|| secret("JWT_SECRET"))
            .transpose()?
            .map(SecretString::from);
        #[cfg(feature = "hashing")]
        let hashing = if needs.hashing {
            let pepper = Some(secret("PEPPER")?).filter(|p| p != UNPEPPERED);
            Some(super::hashing::for_deployment(env, &deployment, pepper)?)
        } else {
            None
        };
        #[cfg(not(feature = "hashing"))]
        if needs.hashing {
            return Err(ConfigError::invalid(
                "this build has no password hashing (feature `hashing`)",
            ));
        }
        #[cfg(not(feature = "tokens"))]
        if needs.tokens {
            return Err(ConfigError::invalid(
                "this build has no bearer tokens (feature `tokens`)",
            ));
        }
        let tag_key = if needs.tags {
            Some(match env.get("TAG_KEY") {
                Some(key) => TagKeySource::Configured {
                    current: SecretString::from(key),
                    previous: env.get("TAG_KEY_PREVIOUS").map(SecretString::from),
                },
                // The server keeps a pepper (or, with PEPPER=none, a key of its own).
                None if data_dir.is_some() => match secret("PEPPER")? {
                    // (v4) With the keys of the peppers it replaced: a
                    // rotation lifts no ban (docs/API.md, Hardening).
                    pepper if pepper != UNPEPPERED => TagKeySource::Derived {
                        current: SecretString::from(pepper),
                        previous: env
                            .list("PEPPER_PREVIOUS")
                            .unwrap_or_default()
                            .into_iter()
                            .map(SecretString::from)
                            .collect(),
                    },
                    _ => TagKeySource::Derived {
                        current: SecretString::from(secret("TAG_KEY")?),
                        previous: Vec::new(),
                    },
                },
                None => {
                    return Err(ConfigError::invalid(
                        "TAG_KEY is required on Lambda: set TAG_KEY_ARN (a Secrets Manager secret) or TAG_KEY",
                    ));
                }
            })
        } else {
            None
        };
        let store = super::store::store_settings(env, data_dir.as_deref())?;
        if data_dir.is_none() && !store.is_dynamo() {
            return Err(ConfigError::invalid("TABLE_NAME is required on Lambda"));
        }
        Ok(Config {
            deployment,
            store,
            #[cfg(feature = "hashing")]
            hashing,
            jwt_secret,
            tag_key,
            app: super::app::app_settings(env)?,
            http,
            data_dir,
        })
    }
}

/// (v3) Where the tag key comes from (docs/DESIGN.md, Moderation).
#[derive(Debug)]
pub enum TagKeySource {
    /// `TAG_KEY` (and, after a rotation, `TAG_KEY_PREVIOUS`).
    Configured {
        current: SecretString,
        previous: Option<SecretString>,
    },
    /// The server without `TAG_KEY`: derived from this secret (the pepper)
    /// and (v4) from the ones it replaced (`PEPPER_PREVIOUS`).
    Derived {
        current: SecretString,
        previous: Vec<SecretString>,
    },
}

/// The redacted summary printed at start: no secret value, only whether it is set.
impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let functions: Vec<&str> = self.deployment.functions().iter().map(|f| f.name()).collect();
        write!(f, "functions={} {}", functions.join(","), self.store)?;
        #[cfg(feature = "hashing")]
        if let Some(hashing) = &self.hashing {
            write!(f, " {hashing}")?;
        }
        if self.jwt_secret.is_some() {
            write!(f, " jwt_secret=set")?;
        }
        match &self.tag_key {
            Some(TagKeySource::Configured { previous, .. }) => {
                write!(f, " tag_key=set")?;
                if previous.is_some() {
                    write!(f, " tag_key_previous=set")?;
                }
            }
            Some(TagKeySource::Derived { previous, .. }) => {
                write!(f, " tag_key=derived")?;
                if !previous.is_empty() {
                    write!(f, " tag_key_previous=derived")?;
                }
            }
            None => {}
        }
        write!(f, " {}", self.app)?;
        if let Some(dir) = &self.data_dir {
            write!(f, " data_dir={} {}", dir.display(), self.http)?;
        }
        Ok(())
    }
}

#[cfg(all(test, feature = "hashing", feature = "sqlite", feature = "dynamo"))]
mod tests {
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
        let table = [("TABLE_NAME", "boards")];
        let read = Config::from(lambda(&[Function::Read]), &Env::from_pairs(&table)).unwrap();
        assert!(read.hashing.is_none() && read.jwt_secret.is_none());
        let secret = "x".repeat(40);
        assert!(read.tag_key.is_none());
        let with_jwt = [
            ("TABLE_NAME", "boards"),
            ("JWT_SECRET", secret.as_str()),
            ("TAG_KEY", secret.as_str()),
        ];
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
        assert!(signup.tag_key.is_none(), "signup writes on no board");
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
        let file = TierFile::parse(EMBEDDED).unwrap();
        let fixed = &file.fixed_capacity.as_ref().unwrap().tiers;
        assert_ne!(
            fixed["member"].spec, file.tiers["member"].spec,
            "the test needs two choices"
        );
        let secret = "s".repeat(40);
        let config = |concurrency: Option<&str>| {
            let mut pairs = vec![
                ("TABLE_NAME", "t"),
                ("PEPPER", secret.as_str()),
                ("TAG_KEY", secret.as_str()),
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
}
