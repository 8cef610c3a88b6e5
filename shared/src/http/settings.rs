//! Settings from the environment, the same names for every deployment
//! (DESIGN.md, Configuration). On Lambda the secrets are required; in server
//! mode a missing JWT secret or pepper is generated once under `DATA_DIR`.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use secrecy::SecretString;

use super::HttpConfig;
use super::fields::board_list;
use super::throttle::{Limit, ThrottlePolicy};
use crate::hashing::HashingConfig;
use crate::store::StoreConfig;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deployment {
    Lambda,
    Server { data_dir: PathBuf },
}

/// The `PEPPER` value that means "no pepper".
pub const UNPEPPERED: &str = "none";

#[derive(Debug)]
pub struct Settings {
    pub hashing: HashingConfig,
    pub jwt_secret: SecretString,
    pub http: HttpConfig,
    pub store: StoreConfig,
}

impl Settings {
    pub fn from_env(deployment: &Deployment) -> anyhow::Result<Self> {
        Self::from_lookup(deployment, |name| std::env::var(name).ok().filter(|v| !v.is_empty()))
    }

    pub fn from_lookup(deployment: &Deployment, lookup: impl Fn(&str) -> Option<String>) -> anyhow::Result<Self> {
        let secret = |name: &str| -> anyhow::Result<String> {
            match (lookup(name), deployment) {
                (Some(value), _) => Ok(value),
                (None, Deployment::Lambda) => {
                    anyhow::bail!("{name} is required on Lambda (from Secrets Manager or SSM)")
                }
                (None, Deployment::Server { data_dir }) => local_secret(data_dir, &name.to_ascii_lowercase()),
            }
        };
        let jwt_secret = SecretString::from(secret("JWT_SECRET")?);
        // `PEPPER=none` runs without a pepper, deliberately: passwords are then
        // limited to bcrypt's 72 bytes and tiers must be bcrypt cost 10 or more.
        let pepper = Some(secret("PEPPER")?).filter(|p| p != UNPEPPERED);
        let hashing = HashingConfig::from_lookup(|name| match name {
            "PEPPER" => pepper.clone(),
            _ => lookup(name),
        })?;

        let defaults = ThrottlePolicy::default();
        let limit = |name: &str, default: Limit| -> anyhow::Result<Limit> {
            lookup(name).map_or(Ok(default), |v| Limit::parse(name, &v).map_err(anyhow::Error::msg))
        };
        let http = HttpConfig {
            boards: match lookup("BOARDS") {
                Some(list) => board_list(&list).map_err(anyhow::Error::msg)?,
                None => HttpConfig::default().boards,
            },
            throttle: ThrottlePolicy {
                login_per_username: limit("THROTTLE_LOGIN_USERNAME", defaults.login_per_username)?,
                login_per_ip: limit("THROTTLE_LOGIN_IP", defaults.login_per_ip)?,
                guest_per_target_and_ip: limit("THROTTLE_GUEST", defaults.guest_per_target_and_ip)?,
            },
            trust_proxy: matches!(deployment, Deployment::Server { .. })
                && matches!(lookup("TRUST_PROXY").as_deref(), Some("1" | "true" | "on" | "yes")),
        };
        let store = match deployment {
            Deployment::Server { data_dir } => StoreConfig::from_lookup(|name| match name {
                "DATA_DIR" => Some(data_dir.display().to_string()),
                _ => lookup(name),
            })
            .map_err(anyhow::Error::msg)?,
            Deployment::Lambda => {
                let store = StoreConfig::from_lookup(&lookup).map_err(anyhow::Error::msg)?;
                anyhow::ensure!(
                    matches!(store, StoreConfig::Dynamo { .. }),
                    "TABLE_NAME is required on Lambda"
                );
                store
            }
        };
        Ok(Settings {
            hashing,
            jwt_secret,
            http,
            store,
        })
    }
}

/// Server mode only: a secret generated once and kept in `DATA_DIR/<name>`
/// (mode 600), so a first run needs no set-up.
fn local_secret(data_dir: &Path, name: &str) -> anyhow::Result<String> {
    let path = data_dir.join(name);
    if let Ok(secret) = std::fs::read_to_string(&path) {
        return Ok(secret.trim().to_owned());
    }
    std::fs::create_dir_all(data_dir).with_context(|| format!("creating {}", data_dir.display()))?;
    let secret: String = rand::random::<[u8; 32]>().iter().map(|b| format!("{b:02x}")).collect();
    write_private(&path, &secret).with_context(|| format!("writing {}", path.display()))?;
    tracing::warn!(
        path = %path.display(),
        "{} was not set: generated one (keep this file; what was made with it needs it)",
        name.to_ascii_uppercase()
    );
    Ok(secret)
}

#[cfg(unix)]
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(contents.as_bytes())
}

#[cfg(not(unix))]
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    std::fs::write(path, contents)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lambda_requires_its_secrets_and_table() {
        let err = Settings::from_lookup(&Deployment::Lambda, |_| None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "JWT_SECRET is required on Lambda (from Secrets Manager or SSM)"
        );
        let err =
            Settings::from_lookup(&Deployment::Lambda, |n| (n == "JWT_SECRET").then(|| "j".repeat(32))).unwrap_err();
        assert!(err.to_string().starts_with("PEPPER is required"));
        let all = |n: &str| match n {
            "JWT_SECRET" | "PEPPER" => Some("x".repeat(40)),
            _ => None,
        };
        let err = Settings::from_lookup(&Deployment::Lambda, all).unwrap_err();
        assert_eq!(err.to_string(), "TABLE_NAME is required on Lambda");
    }

    #[test]
    fn the_server_generates_missing_secrets_once_and_keeps_them() {
        let dir = tempfile::tempdir().unwrap();
        let deployment = Deployment::Server {
            data_dir: dir.path().to_owned(),
        };
        let first = Settings::from_lookup(&deployment, |_| None).unwrap();
        let pepper = std::fs::read_to_string(dir.path().join("pepper")).unwrap();
        assert_eq!(pepper.len(), 64);
        let second = Settings::from_lookup(&deployment, |_| None).unwrap();
        use secrecy::ExposeSecret;
        assert_eq!(first.jwt_secret.expose_secret(), second.jwt_secret.expose_secret());
        assert!(first.hashing.guest.peppered);
        assert_eq!(
            first.store,
            StoreConfig::Sqlite {
                path: dir.path().join("boards.sqlite3"),
                busy_timeout: crate::store::sqlite::DEFAULT_BUSY_TIMEOUT,
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
    fn pepper_none_runs_unpeppered_only_with_strong_tiers() {
        let dir = tempfile::tempdir().unwrap();
        let deployment = Deployment::Server {
            data_dir: dir.path().to_owned(),
        };
        let weak = |n: &str| match n {
            "PEPPER" => Some(UNPEPPERED.into()),
            "GUEST_TIER" => Some("bcrypt:8".into()),
            _ => None,
        };
        // The tiers are checked where hashing starts, before the server listens.
        let settings = Settings::from_lookup(&deployment, weak).unwrap();
        let err = crate::hashing::Hashing::new(settings.hashing).unwrap_err();
        assert!(err.to_string().contains("must be peppered"), "{err}");
        let strong = |n: &str| match n {
            "PEPPER" => Some(UNPEPPERED.into()),
            "MEMBER_TIER" | "GUEST_TIER" => Some("bcrypt:10".into()),
            _ => None,
        };
        let settings = Settings::from_lookup(&deployment, strong).unwrap();
        assert!(!settings.hashing.guest.peppered && !settings.hashing.member.peppered);
        assert!(!dir.path().join("pepper").exists(), "no pepper was generated");
    }

    #[test]
    fn bad_settings_name_themselves() {
        let dir = tempfile::tempdir().unwrap();
        let deployment = Deployment::Server {
            data_dir: dir.path().to_owned(),
        };
        let err = Settings::from_lookup(&deployment, |n| (n == "BOARDS").then(|| "Free Talk".into())).unwrap_err();
        assert!(err.to_string().starts_with("BOARDS:"), "{err}");
        let err = Settings::from_lookup(&deployment, |n| (n == "THROTTLE_GUEST").then(|| "ten".into())).unwrap_err();
        assert!(err.to_string().starts_with("THROTTLE_GUEST"), "{err}");
        let ok = Settings::from_lookup(&deployment, |n| match n {
            "TRUST_PROXY" => Some("true".into()),
            "BOARDS" => Some("news,tech".into()),
            _ => None,
        })
        .unwrap();
        assert!(ok.http.trust_proxy);
        assert_eq!(ok.http.boards, ["news", "tech"]);
    }
}
