//! The one configuration of every deployment, read from the environment in
//! this module only (docs/DESIGN.md, Configuration). Each deployment asks for
//! what its functions need: on Lambda a function without password hashing
//! needs no pepper and one that neither issues nor checks tokens needs no JWT
//! secret; the server serves everything and generates missing secrets once
//! under `DATA_DIR`. Every error names its setting. `Display` is the redacted
//! summary printed at start: secrets show only whether they are set.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use secrecy::SecretString;

use crate::app::throttle::{Limit, Limits};
use crate::domain::Boards;
use crate::function::{Function, Needs};
#[cfg(feature = "hashing")]
use crate::hashing::timing::TimingSink;
#[cfg(feature = "hashing")]
use crate::hashing::{self, HashingConfig, Pepper, PepperRing, Policy, Tier};
use crate::store::StoreConfig;
#[cfg(feature = "dynamo")]
use crate::store::dynamo::{Layout, SdkTuning};
#[cfg(feature = "sqlite")]
use crate::store::sqlite;

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

/// How a deployment's CPU meets its hashes (docs/DESIGN.md, Deployments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compute {
    /// Classic Lambda: one request per execution environment, whose CPU
    /// share follows its memory. One hash at a time; the latency tiers.
    PerRequest,
    /// Lambda Managed Instances: `concurrency` requests share the
    /// environment's vCPUs (`AWS_LAMBDA_MAX_CONCURRENCY` > 1). The gate
    /// runs one hash per vCPU; the fixed-capacity tiers.
    SharedEnvironment { concurrency: usize },
    /// The VM server: every request shares the machine. The gate leaves one
    /// core to everything else; the fixed-capacity tiers.
    Machine,
}

impl Compute {
    /// `AWS_LAMBDA_MAX_CONCURRENCY`, which Lambda sets only on managed instances.
    pub fn of(deployment: &Deployment, env: &Env<'_>) -> Result<Self, ConfigError> {
        Ok(match deployment {
            Deployment::Server => Compute::Machine,
            Deployment::Lambda { .. } => {
                match env.number::<usize>("AWS_LAMBDA_MAX_CONCURRENCY", 1, "a positive whole number")? {
                    Some(concurrency) if concurrency > 1 => Compute::SharedEnvironment { concurrency },
                    _ => Compute::PerRequest,
                }
            }
        })
    }

    /// Whether the CPU is fixed while requests come and go: the tiers must
    /// then fit the expected hash rate (the tier file's `fixed_capacity`).
    pub fn is_fixed(&self) -> bool {
        !matches!(self, Compute::PerRequest)
    }

    /// Hashes run at once when `HASH_WORKERS` does not say: one on classic
    /// Lambda, one per visible vCPU on a managed instance (hashes run at
    /// idle priority, so requests still take a vCPU first), the cores less
    /// one on the server.
    pub fn default_workers(&self) -> usize {
        let vcpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        match self {
            Compute::PerRequest => 1,
            Compute::SharedEnvironment { .. } => vcpus,
            Compute::Machine => vcpus.saturating_sub(1).max(1),
        }
    }
}

/// Server mode only: where it listens and who may call it from a browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    pub data_dir: PathBuf,
    /// A host name or address (`localhost`, `0.0.0.0`, `::`).
    pub bind: String,
    pub port: u16,
    pub cors_origins: Vec<String>,
    /// Proxies whose `X-Forwarded-For` is believed (docs/API.md, Client address).
    pub trusted_proxies: Vec<ipnet::IpNet>,
    pub connections: ConnectionLimits,
}

/// What one connection may take of the server (README, Security and
/// reliability): a client that sends nothing, or its headers a byte at a
/// time, or keeps an idle connection open, is cut off; so is a request that
/// runs too long; and connections beyond the cap wait in the listen backlog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// From the moment the server waits for a request (on a new or a
    /// kept-alive connection) until its headers are in: also the idle
    /// keep-alive timeout (hyper runs one timer for both).
    pub header_timeout: Duration,
    /// From the headers to the last byte of the answer (the body included).
    pub request_timeout: Duration,
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(10),
            max_connections: 1_024,
        }
    }
}

#[derive(Debug)]
pub struct Config {
    pub deployment: Deployment,
    pub store: StoreConfig,
    /// Present when a served function hashes passwords.
    #[cfg(feature = "hashing")]
    pub hashing: Option<HashingConfig>,
    /// Present when a served function issues or checks bearer tokens.
    pub jwt_secret: Option<SecretString>,
    pub boards: Boards,
    pub limits: Limits,
    /// Present in server mode.
    pub server: Option<ServerConfig>,
}

/// Settings by name: the environment, or a list in tests. Empty means unset.
type Lookup<'a> = Box<dyn Fn(&str) -> Option<String> + 'a>;

pub struct Env<'a>(Lookup<'a>);

impl<'a> Env<'a> {
    pub fn new(lookup: impl Fn(&str) -> Option<String> + 'a) -> Self {
        Env(Box::new(lookup))
    }

    pub fn process() -> Env<'static> {
        Env::new(|name| std::env::var(name).ok())
    }

    pub fn from_pairs(pairs: &'a [(&'a str, &'a str)]) -> Self {
        Env::new(move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned()))
    }

    pub fn get(&self, name: &str) -> Option<String> {
        (self.0)(name).filter(|v| !v.trim().is_empty())
    }

    fn number<T: std::str::FromStr + PartialOrd>(
        &self,
        name: &str,
        min: T,
        what: &str,
    ) -> Result<Option<T>, ConfigError> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => match v.trim().parse::<T>() {
                Ok(n) if n >= min => Ok(Some(n)),
                _ => Err(ConfigError::invalid(format!("{name} must be {what}, not {v:?}"))),
            },
        }
    }

    fn millis(&self, name: &str) -> Result<Option<Duration>, ConfigError> {
        Ok(self
            .number::<u64>(name, 1, "a positive whole number")?
            .map(Duration::from_millis))
    }
}

impl Config {
    pub fn from_env(deployment: Deployment) -> Result<Self, ConfigError> {
        Self::from(deployment, &Env::process())
    }

    pub fn from(deployment: Deployment, env: &Env<'_>) -> Result<Self, ConfigError> {
        let needs = Needs::of(&deployment.functions());
        let server = match deployment {
            Deployment::Server => Some(server_config(env)?),
            Deployment::Lambda { .. } => None,
        };
        let data_dir = server.as_ref().map(|s| s.data_dir.as_path());
        let secret = |name: &str| -> Result<String, ConfigError> {
            match (env.get(name), data_dir) {
                (Some(value), _) => Ok(value),
                (None, Some(dir)) => local_secret(dir, &name.to_ascii_lowercase()),
                (None, None) => Err(ConfigError::invalid(format!(
                    "{name} is required on Lambda: set {name}_ARN (a Secrets Manager secret) or {name}"
                ))),
            }
        };
        let jwt_secret = needs
            .tokens
            .then(|| secret("JWT_SECRET"))
            .transpose()?
            .map(SecretString::from);
        #[cfg(feature = "hashing")]
        let hashing = if needs.hashing {
            let pepper = Some(secret("PEPPER")?).filter(|p| p != UNPEPPERED);
            // The server's CPU is fixed: its tiers fit the expected hash rate.
            let timing = match &deployment {
                Deployment::Lambda { functions } => TimingSink::Emf {
                    function: functions.iter().map(|f| f.name()).collect::<Vec<_>>().join("+"),
                },
                Deployment::Server => TimingSink::Log,
            };
            Some(hashing_config(env, pepper, Compute::of(&deployment, env)?, timing)?)
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
        let store = store_config(env, data_dir)?;
        if server.is_none() && !store.is_dynamo() {
            return Err(ConfigError::invalid("TABLE_NAME is required on Lambda"));
        }
        Ok(Config {
            deployment,
            store,
            #[cfg(feature = "hashing")]
            hashing,
            jwt_secret,
            boards: match env.get("BOARDS") {
                Some(list) => Boards::parse_list(&list).map_err(ConfigError::Invalid)?,
                None => Boards::default(),
            },
            limits: limits(env)?,
            server,
        })
    }
}

fn server_config(env: &Env<'_>) -> Result<ServerConfig, ConfigError> {
    if env.get("TRUST_PROXY").is_some() {
        return Err(ConfigError::invalid(
            "TRUST_PROXY is gone: list the proxies in TRUSTED_PROXIES (CIDRs); the right-most untrusted X-Forwarded-For address is the client",
        ));
    }
    let bind = env
        .get("BIND")
        .map_or_else(|| "127.0.0.1".to_owned(), |v| v.trim().to_owned());
    if bind.contains([':', '/']) && bind.parse::<std::net::IpAddr>().is_err() {
        return Err(ConfigError::invalid(format!(
            "BIND must be a host name or an IP address without a port, not {bind:?}"
        )));
    }
    let mut connections = ConnectionLimits::default();
    if let Some(t) = env.millis("SERVER_HEADER_TIMEOUT_MS")? {
        connections.header_timeout = t;
    }
    if let Some(t) = env.millis("SERVER_REQUEST_TIMEOUT_MS")? {
        connections.request_timeout = t;
    }
    if let Some(n) = env.number::<usize>("SERVER_MAX_CONNECTIONS", 1, "a positive whole number")? {
        connections.max_connections = n;
    }
    Ok(ServerConfig {
        connections,
        data_dir: PathBuf::from(env.get("DATA_DIR").unwrap_or_else(|| "./data".to_owned())),
        bind,
        port: env.number::<u16>("PORT", 0, "a port number (0-65535)")?.unwrap_or(3000),
        cors_origins: env
            .get("CORS_ORIGINS")
            .map(|list| {
                list.split(',')
                    .map(|o| o.trim().to_owned())
                    .filter(|o| !o.is_empty())
                    .collect()
            })
            .unwrap_or_default(),
        trusted_proxies: match env.get("TRUSTED_PROXIES") {
            Some(list) => crate::http::client_ip::parse_trusted_proxies(&list).map_err(ConfigError::Invalid)?,
            None => Vec::new(),
        },
    })
}

/// DynamoDB when `TABLE_NAME` is set (with `DYNAMODB_ENDPOINT` for DynamoDB
/// Local), else the SQLite file under the server's `DATA_DIR`.
fn store_config(env: &Env<'_>, data_dir: Option<&Path>) -> Result<StoreConfig, ConfigError> {
    #[cfg(feature = "dynamo")]
    if let Some(table) = env.get("TABLE_NAME") {
        let endpoint = env.get("DYNAMODB_ENDPOINT");
        let mut tuning = SdkTuning::defaults(endpoint.is_some());
        if let Some(t) = env.millis("DYNAMODB_CONNECT_TIMEOUT_MS")? {
            tuning.connect_timeout = t;
        }
        if let Some(t) = env.millis("DYNAMODB_ATTEMPT_TIMEOUT_MS")? {
            tuning.attempt_timeout = t;
        }
        if let Some(t) = env.millis("DYNAMODB_OPERATION_TIMEOUT_MS")? {
            tuning.operation_timeout = t;
        }
        if let Some(n) = env.number::<u32>("DYNAMODB_MAX_ATTEMPTS", 1, "a positive whole number")? {
            tuning.max_attempts = n;
        }
        let mut layout = Layout::default();
        if let Some(shards) = env.number::<u32>("COUNTER_SHARDS", 1, "a whole number from 1 to 64")? {
            if shards > Layout::MAX_SHARDS {
                return Err(ConfigError::invalid(format!(
                    "COUNTER_SHARDS must be a whole number from 1 to {}, not {shards}",
                    Layout::MAX_SHARDS
                )));
            }
            layout.counter_shards = shards;
        }
        if let Some(ttl) = env.number::<u64>("READ_CACHE_TTL_MS", 0, "a whole number of milliseconds")? {
            layout.read_cache_ttl = Duration::from_millis(ttl);
        }
        return Ok(StoreConfig::Dynamo {
            table,
            endpoint,
            extra_roots: crate::aws::ca_bundle(env)?,
            tuning,
            layout,
        });
    }
    #[cfg(not(feature = "dynamo"))]
    if env.get("TABLE_NAME").is_some() {
        return Err(ConfigError::invalid(
            "TABLE_NAME: this build has no DynamoDB store (feature `dynamo`)",
        ));
    }
    match data_dir {
        #[cfg(feature = "sqlite")]
        Some(dir) => Ok(StoreConfig::Sqlite {
            path: dir.join("boards.sqlite3"),
            busy_timeout: env
                .millis("SQLITE_BUSY_TIMEOUT_MS")?
                .unwrap_or(sqlite::DEFAULT_BUSY_TIMEOUT),
        }),
        #[cfg(not(feature = "sqlite"))]
        Some(_) => Err(ConfigError::invalid(
            "TABLE_NAME is required: this build has no SQLite store (feature `sqlite`)",
        )),
        None => Err(ConfigError::invalid("TABLE_NAME is required on Lambda")),
    }
}

#[cfg(feature = "hashing")]
/// [`hashing_config`] with `PEPPER` as set (no generated secret): for tools,
/// benchmarks and tests that build hashing alone.
pub fn hashing_from(env: &Env<'_>) -> Result<HashingConfig, ConfigError> {
    hashing_config(
        env,
        env.get("PEPPER").filter(|p| p != UNPEPPERED),
        Compute::PerRequest,
        TimingSink::Log,
    )
}

#[cfg(feature = "hashing")]
/// Tiers from the tier file with `MEMBER_TIER`/`GUEST_TIER` winning, the
/// pepper ring (`pepper` is `PEPPER` unless it is [`UNPEPPERED`]) and the gate
/// size. The tiers' rules are checked where hashing starts.
pub fn hashing_config(
    env: &Env<'_>,
    pepper: Option<String>,
    compute: Compute,
    timing: TimingSink,
) -> Result<HashingConfig, ConfigError> {
    let fixed_capacity = compute.is_fixed();
    use hashing::tier_file::{EMBEDDED, TierChoices};
    let (path, json) = match env.get("TIERS_FILE") {
        Some(path) => {
            let json = std::fs::read_to_string(&path).map_err(|e| hashing::ConfigError::TierFile {
                path: path.clone(),
                reason: e.to_string(),
            })?;
            (path, json)
        }
        None => ("(embedded infra/tiers.json)".to_owned(), EMBEDDED.to_owned()),
    };
    let file = TierChoices::parse(&json).map_err(|e| hashing::ConfigError::TierFile {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    let current = pepper
        .map(|s| Pepper::parse("PEPPER", SecretString::from(s)))
        .transpose()
        .map_err(hashing::ConfigError::from)?;
    let previous = env
        .get("PEPPER_PREVIOUS")
        .map(|list| {
            list.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| Pepper::parse("PEPPER_PREVIOUS", SecretString::from(s)))
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()
        .map_err(hashing::ConfigError::from)?
        .unwrap_or_default();
    let peppered = current.is_some();
    let tier_policy = |tier: Tier, setting: &'static str| -> Result<Policy, ConfigError> {
        let (spec, origin) = match env.get(setting) {
            Some(spec) => (spec, setting.to_owned()),
            None => {
                let chosen =
                    file.tier(tier.as_str(), fixed_capacity)
                        .ok_or_else(|| hashing::ConfigError::MissingTier {
                            path: path.clone(),
                            tier,
                        })?;
                let section = if fixed_capacity && file.has_fixed_capacity() {
                    "fixed_capacity.tiers"
                } else {
                    "tiers"
                };
                (chosen.spec.clone(), format!("{path} {section}.{tier}.spec"))
            }
        };
        let algorithm = spec.parse().map_err(|source| hashing::ConfigError::BadTier {
            setting: origin,
            source,
        })?;
        Ok(Policy { algorithm, peppered })
    };
    let whole = |name: &'static str, min: usize| -> Result<Option<usize>, ConfigError> {
        let what = if min > 0 {
            "a whole number of at least 1"
        } else {
            "a whole number"
        };
        env.get(name)
            .map(|value| match value.trim().parse::<usize>() {
                Ok(n) if n >= min => Ok(n),
                _ => Err(ConfigError::invalid(format!("{name} must be {what}, got `{value}`"))),
            })
            .transpose()
    };
    Ok(HashingConfig {
        member: tier_policy(Tier::Member, "MEMBER_TIER")?,
        guest: tier_policy(Tier::Guest, "GUEST_TIER")?,
        peppers: PepperRing::new(current, previous),
        workers: whole("HASH_WORKERS", 1)?.unwrap_or_else(|| compute.default_workers()),
        queue: whole("HASH_QUEUE", 0)?.unwrap_or(hashing::DEFAULT_QUEUE),
        weights: file.weights(),
        overrides: hashing::Overrides {
            below_floor: flag(env, "HASH_FLOOR_OVERRIDE")?,
            downgrade: flag(env, "HASH_ALLOW_DOWNGRADE")?,
        },
        timing,
    })
}

#[cfg(feature = "hashing")]
/// `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`.
fn flag(env: &Env<'_>, name: &str) -> Result<bool, ConfigError> {
    match env.get(name).map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        None | Some("0" | "false" | "no" | "off") => Ok(false),
        Some("1" | "true" | "yes" | "on") => Ok(true),
        Some(other) => Err(ConfigError::invalid(format!("{name} must be 1 or 0, not {other:?}"))),
    }
}

/// Every limit by its name (`LIMIT_LOGIN_USER_ADDRESS=5/5m`, ... or `off`).
/// The v1 names (`THROTTLE_*`) are refused, naming their replacement, so a
/// deployment does not silently run with the defaults.
fn limits(env: &Env<'_>) -> Result<Limits, ConfigError> {
    for old in ["THROTTLE_LOGIN_USERNAME", "THROTTLE_LOGIN_IP", "THROTTLE_GUEST"] {
        if env.get(old).is_some() {
            return Err(ConfigError::invalid(format!(
                "{old} is gone: set LIMIT_LOGIN_USER_ADDRESS, LIMIT_LOGIN_ADDRESS, LIMIT_LOGIN_USER, LIMIT_GUEST_TARGET_ADDRESS or LIMIT_GUEST_TARGET (README, Configuration)"
            )));
        }
    }
    let mut limits = Limits::default();
    for (name, limit) in limits.named() {
        if let Some(value) = env.get(name) {
            *limit = Limit::parse(name, &value).map_err(ConfigError::Invalid)?;
        }
    }
    Ok(limits)
}

/// Server mode only: a secret generated once and kept in `DATA_DIR/<name>`
/// (mode 600), so a first run needs no set-up.
fn local_secret(data_dir: &Path, name: &str) -> Result<String, ConfigError> {
    let path = data_dir.join(name);
    let failed = |e: std::io::Error| ConfigError::invalid(format!("{}: {e}", path.display()));
    if let Ok(secret) = std::fs::read_to_string(&path) {
        let shared = crate::private_files::shared_bits(&path).map_err(failed)?;
        if shared != 0 {
            return Err(ConfigError::invalid(format!(
                "{} is readable by group or others (mode bits {shared:03o}): `chmod 600 {}`, and replace the secret if others may have read it",
                path.display(),
                path.display()
            )));
        }
        return Ok(secret.trim().to_owned());
    }
    crate::private_files::create_dir(data_dir)
        .map_err(|e| ConfigError::invalid(format!("DATA_DIR {}: {e}", data_dir.display())))?;
    let secret: String = rand::random::<[u8; 32]>().iter().map(|b| format!("{b:02x}")).collect();
    write_private(&path, &secret).map_err(failed)?;
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

/// An endpoint URL as printed: `user:password@` removed.
#[cfg(feature = "dynamo")]
fn without_userinfo(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('@') {
            Some((userinfo, host)) if !userinfo.contains('/') => format!("{scheme}://{host}"),
            _ => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// The redacted summary printed at start: no secret value, only whether it is set.
impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let functions: Vec<&str> = self.deployment.functions().iter().map(|f| f.name()).collect();
        write!(f, "functions={}", functions.join(","))?;
        match &self.store {
            #[cfg(feature = "dynamo")]
            StoreConfig::Dynamo {
                table,
                endpoint,
                extra_roots,
                tuning,
                layout,
            } => write!(
                f,
                " store=dynamodb table={table} endpoint={} extra_ca_bundle={} attempt_timeout_ms={} operation_timeout_ms={} max_attempts={} counter_shards={} read_cache_ttl_ms={}",
                endpoint.as_deref().map_or_else(|| "aws".to_owned(), without_userinfo),
                extra_roots.is_some(),
                tuning.attempt_timeout.as_millis(),
                tuning.operation_timeout.as_millis(),
                tuning.max_attempts,
                layout.counter_shards,
                layout.read_cache_ttl.as_millis()
            )?,
            #[cfg(feature = "sqlite")]
            StoreConfig::Sqlite { path, busy_timeout } => write!(
                f,
                " store=sqlite path={} busy_timeout_ms={}",
                path.display(),
                busy_timeout.as_millis()
            )?,
            #[cfg(not(any(feature = "sqlite", feature = "dynamo")))]
            _ => {}
        }
        #[cfg(feature = "hashing")]
        if let Some(h) = &self.hashing {
            let pepper = if h.peppers.current().is_some() { "set" } else { "none" };
            write!(
                f,
                " member_tier={} guest_tier={} pepper={pepper} hash_workers={} hash_queue={}",
                h.member.algorithm, h.guest.algorithm, h.workers, h.queue
            )?;
        }
        if self.jwt_secret.is_some() {
            write!(f, " jwt_secret=set")?;
        }
        write!(f, " boards={}", self.boards.names().join(","))?;
        let mut limits = self.limits;
        for (name, limit) in limits.named() {
            match limit {
                Some(limit) => write!(f, " {}={limit}", name.to_ascii_lowercase())?,
                None => write!(f, " {}=off", name.to_ascii_lowercase())?,
            }
        }
        if let Some(s) = &self.server {
            write!(
                f,
                " bind={}:{} data_dir={} cors_origins={} trusted_proxies={} header_timeout_ms={} request_timeout_ms={} max_connections={}",
                s.bind,
                s.port,
                s.data_dir.display(),
                s.cors_origins.join(","),
                s.trusted_proxies
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
                s.connections.header_timeout.as_millis(),
                s.connections.request_timeout.as_millis(),
                s.connections.max_connections
            )?;
        }
        Ok(())
    }
}

#[cfg(all(test, feature = "hashing", feature = "sqlite", feature = "dynamo"))]
mod tests {
    use super::*;

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
        let with_jwt = [("TABLE_NAME", "boards"), ("JWT_SECRET", secret.as_str())];
        let like = Config::from(lambda(&[Function::Like]), &Env::from_pairs(&with_jwt)).unwrap();
        assert!(like.hashing.is_none() && like.jwt_secret.is_some());
        let with_pepper = [("TABLE_NAME", "boards"), ("PEPPER", secret.as_str())];
        let guest = Config::from(lambda(&[Function::GuestComment]), &Env::from_pairs(&with_pepper)).unwrap();
        assert!(guest.hashing.is_some() && guest.jwt_secret.is_none());
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
            StoreConfig::Sqlite {
                path: dir.path().join("boards.sqlite3"),
                busy_timeout: sqlite::DEFAULT_BUSY_TIMEOUT,
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
            let mut pairs = vec![("TABLE_NAME", "t"), ("PEPPER", secret.as_str())];
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
        std::fs::set_permissions(dir.join("pepper"), std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = Config::from(Deployment::Server, &server_env(&dir, &[])).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("pepper is readable by group or others"), "{message}");
        assert!(message.contains("chmod 600"), "{message}");
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
        let cases: [(&str, &str, &str); 8] = [
            ("BOARDS", "Free Talk", "BOARDS:"),
            ("LIMIT_GUEST_TARGET", "ten", "LIMIT_GUEST_TARGET"),
            ("THROTTLE_GUEST", "10/600", "THROTTLE_GUEST is gone"),
            ("PORT", "http", "PORT must be a port number"),
            ("BIND", "localhost:80", "BIND must be a host name or an IP address"),
            (
                "SQLITE_BUSY_TIMEOUT_MS",
                "0",
                "SQLITE_BUSY_TIMEOUT_MS must be a positive whole number",
            ),
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
            let pairs = [("SERVER_MAX_CONNECTIONS", bad)];
            let err = Config::from(Deployment::Server, &server_env(dir.path(), &pairs)).unwrap_err();
            assert!(err.to_string().contains("SERVER_MAX_CONNECTIONS"), "{err}");
            let pairs = [("TABLE_NAME", "boards"), ("DYNAMODB_OPERATION_TIMEOUT_MS", bad)];
            let err = Config::from(Deployment::Server, &server_env(dir.path(), &pairs)).unwrap_err();
            assert!(err.to_string().contains("DYNAMODB_OPERATION_TIMEOUT_MS"), "{err}");
        }
        let ok = [
            ("TRUSTED_PROXIES", "10.0.0.0/8"),
            ("BOARDS", "news,tech"),
            ("CORS_ORIGINS", "https://a.example, https://b.example"),
            ("SERVER_HEADER_TIMEOUT_MS", "2500"),
            ("SERVER_MAX_CONNECTIONS", "64"),
        ];
        let config = Config::from(Deployment::Server, &server_env(dir.path(), &ok)).unwrap();
        let printed = config.to_string();
        assert!(
            printed.contains("header_timeout_ms=2500 request_timeout_ms=10000 max_connections=64"),
            "{printed}"
        );
        let server = config.server.unwrap();
        assert_eq!(server.connections.header_timeout, Duration::from_millis(2500));
        assert_eq!(server.connections.max_connections, 64);
        assert_eq!(server.trusted_proxies.len(), 1);
        assert_eq!(server.cors_origins, ["https://a.example", "https://b.example"]);
        assert_eq!(config.boards.names(), ["news", "tech"]);
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
            StoreConfig::Dynamo {
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
        let StoreConfig::Dynamo { extra_roots, .. } = &config.store else {
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
    fn an_endpoint_is_printed_without_its_credentials() {
        assert_eq!(without_userinfo("http://user:pw@db.local:8000"), "http://db.local:8000");
        assert_eq!(without_userinfo("http://127.0.0.1:8000"), "http://127.0.0.1:8000");
        assert_eq!(without_userinfo("http://host/path@x"), "http://host/path@x");
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
            printed.contains("store=sqlite") && printed.contains("bind=127.0.0.1:3000"),
            "{printed}"
        );
    }
}
