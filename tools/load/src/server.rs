//! Starting the single-process server for a run: a fresh data directory,
//! a free port, tiers chosen by the caller, logs kept to count hashes.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub(crate) struct Spawned {
    child: Child,
    port: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

/// How a run's server differs from the defaults.
pub(crate) struct Settings<'a> {
    /// (member, guest) overrides, or the tier file's when `None`.
    pub tiers: Option<(&'a str, &'a str)>,
    /// Trust the load generator's X-Forwarded-For (many client addresses).
    pub trust_proxy: bool,
    /// HASH_QUEUE, or the server's default.
    pub hash_queue: Option<usize>,
    /// The gate's weights `member:guest`, written into a copy of the tier file.
    pub gate_weights: Option<&'a str>,
    /// A DynamoDB table (created by the server on `DYNAMODB_ENDPOINT`, which
    /// it inherits) instead of SQLite in the run's data directory.
    pub table: Option<String>,
    /// `POW` and `POW_MAXNUMBER`: proof of work is off unless a run asks
    /// for it (the other scenarios' guests write far past the free writes).
    pub pow: Option<Pow>,
}

/// A run's proof of work: `POW` and, when set, `POW_MAXNUMBER`.
#[derive(Clone, Copy)]
pub(crate) struct Pow {
    pub mode: &'static str,
    pub maxnumber: Option<u64>,
}

impl Spawned {
    pub(crate) async fn start(binary: &Path, settings: Settings<'_>) -> anyhow::Result<Self> {
        let Settings {
            tiers,
            trust_proxy,
            hash_queue,
            gate_weights,
            table,
            pow,
        } = settings;
        anyhow::ensure!(
            binary.exists(),
            "{} not found: build it with `cargo build --release -p server`",
            binary.display()
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let dir = tempfile::Builder::new().prefix("load-server-").tempdir()?;
        let log = dir.path().join("server.log");
        let log_file = std::fs::File::create(&log)?;
        let mut command = Command::new(binary);
        command
            .env("DATA_DIR", dir.path().join("data"))
            .env("PORT", port.to_string())
            .env("BIND", "127.0.0.1")
            .env("PEPPER", "load-test-pepper-0123456789abcdefghijklmnop")
            .env("JWT_SECRET", "load-test-jwt-secret-0123456789abcdefghij")
            .env("RUST_LOG", "info")
            // The limits are set here, not left to defaults, so runs stay
            // comparable across versions: the v1 login throttle (5 failures
            // per username, 50 per address, in 5 minutes) and no write quotas
            // (the load generator is every user at once).
            .env("LIMIT_LOGIN_USER_ADDRESS", "5/5m")
            .env("LIMIT_LOGIN_ADDRESS", "50/5m")
            .env("LIMIT_LOGIN_FAILURES_USER", "5/5m")
            .env("LIMIT_CREATES_ADDRESS", "off")
            .env("LIMIT_CREATES_MEMBER", "off")
            .env("LIMIT_SIGNUPS_ADDRESS", "off")
            // v3's limits on right passwords too: the load generator's
            // users log in again and again from one address (the limits'
            // own tests and `login-attack` measure them).
            .env("LIMIT_LOGINS_USER", "off")
            .env("LIMIT_PASSWORD_CHECKS_ADDRESS", "off")
            // mixed-moderated's admin, and no report quota (the load
            // generator is one address). A build from before v3 ignores both.
            .env("ADMIN_USERNAMES", crate::scenarios::ADMIN)
            // The admin name is reserved for a signup with the token.
            .env("ADMIN_ENROLL_TOKEN", crate::scenarios::ADMIN_ENROLL_TOKEN)
            .env("LIMIT_REPORTS_ADDRESS", "off")
            // mixed-votes' guests vote from 128 addresses, again on every
            // run against one server. A build from before v4 ignores it.
            .env("LIMIT_GUEST_VOTES_ADDRESS", "off")
            // v4's proof of work asks every guest past 5 writes per address
            // in 10 minutes for a solution; the scenarios but guest-flood do
            // not solve. A build from before v4 ignores both.
            .env("POW", pow.map_or("off", |p| p.mode))
            // v4's staff routes ask staff for TOTP; mixed-moderated's admin
            // has none. A build from before v4 ignores it.
            .env("STAFF_REQUIRE_TOTP", "false")
            // Up to 100 users on one address: the server's cap of 64
            // connections per address would close theirs (status 0 in the
            // reports, most of a mixed-overload run's requests).
            .env("MAX_CONNECTIONS_PER_ADDRESS", "1024")
            // With many addresses, the load generator is the trusted proxy
            // that writes X-Forwarded-For.
            .env("TRUSTED_PROXIES", if trust_proxy { "127.0.0.1/32" } else { "" })
            .stdout(Stdio::from(log_file.try_clone()?))
            // Its start-up errors go to stderr: keep them with the log.
            .stderr(Stdio::from(log_file));
        match table {
            Some(table) => {
                anyhow::ensure!(
                    std::env::var_os("DYNAMODB_ENDPOINT").is_some(),
                    "a DynamoDB run needs DYNAMODB_ENDPOINT: `source scripts/dynamodb-local start` first"
                );
                command.env("TABLE_NAME", table)
            }
            None => command.env_remove("TABLE_NAME"),
        };
        if let Some(maxnumber) = pow.and_then(|p| p.maxnumber) {
            command.env("POW_MAXNUMBER", maxnumber.to_string());
        }
        if let Some(queue) = hash_queue {
            command.env("HASH_QUEUE", queue.to_string());
        }
        if let Some(weights) = gate_weights {
            command.env("TIERS_FILE", tier_file_with_weights(dir.path(), weights)?);
        }
        if let Some((member, guest)) = tiers {
            command.env("MEMBER_TIER", member).env("GUEST_TIER", guest);
        }
        let child = command.spawn()?;
        let mut spawned = Spawned {
            child,
            port,
            log,
            _dir: dir,
        };
        let client = reqwest::Client::new();
        for _ in 0..100 {
            if client
                .get(format!("{}/health", spawned.base_url()))
                .send()
                .await
                .is_ok()
            {
                return Ok(spawned);
            }
            if let Some(status) = spawned.child.try_wait()? {
                anyhow::bail!(
                    "the server exited at start ({status}); its log ends:\n{}",
                    spawned.log_tail()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // The log goes with the run's directory when this returns: show its end.
        anyhow::bail!(
            "the server did not answer /health within 10 s; its log ends:\n{}",
            spawned.log_tail()
        )
    }

    /// The server's start-up error (its `Error:` and causes, without a
    /// backtrace), else the last lines of its log.
    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        let from = lines
            .iter()
            .rposition(|l| l.starts_with("Error:"))
            .unwrap_or(lines.len().saturating_sub(5));
        let to = lines[from..]
            .iter()
            .position(|l| l.starts_with("Stack backtrace:"))
            .map_or(lines.len(), |end| from + end);
        lines[from..to].join("\n")
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Hashes and verifies run so far, from the server's timing log lines.
    pub(crate) fn hashes_run(&self) -> u64 {
        std::fs::read_to_string(&self.log)
            .map(|log| log.lines().filter(|l| l.contains("\"password hash timing\"")).count() as u64)
            .unwrap_or(0)
    }

    /// Hashes and verifies so far that ran in a batch (`"batch":` over 1).
    pub(crate) fn hashes_batched(&self) -> u64 {
        std::fs::read_to_string(&self.log)
            .map(|log| {
                log.lines()
                    .filter(|l| l.contains("\"password hash timing\""))
                    .filter(|l| batch_of(l).is_some_and(|b| b > 1))
                    .count() as u64
            })
            .unwrap_or(0)
    }

    /// The server's `bcrypt batch plan measured` fields, once logged.
    pub(crate) fn batch_plan(&self) -> Option<String> {
        let log = std::fs::read_to_string(&self.log).ok()?;
        let line = log.lines().find(|l| l.contains("\"bcrypt batch plan measured\""))?;
        let value: serde_json::Value = serde_json::from_str(line).ok()?;
        let f = value.get("fields")?;
        Some(format!(
            "backend {}, {} lanes, batches from {} waiting (cost 6: one hash {:.2} ms, a full batch {:.2} ms)",
            f.get("backend")?.as_str()?,
            f.get("lanes")?,
            f.get("min_batch")?,
            f.get("single_ms")?.as_f64()?,
            f.get("batch_ms")?.as_f64()?
        ))
    }

    /// VmHWM: the process's peak resident set size.
    pub(crate) fn peak_rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }
}

/// A timing log line's `batch` field (absent before v3: alone).
fn batch_of(line: &str) -> Option<u64> {
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    value.get("fields").unwrap_or(&value).get("batch")?.as_u64()
}

/// The tier file the server embeds.
const TIER_FILE: &str = include_str!("../../../infra/tiers.json");

/// A copy of the embedded tier file whose `gate_weights` are `member:guest`.
fn tier_file_with_weights(dir: &Path, weights: &str) -> anyhow::Result<PathBuf> {
    let (member, guest) = weights
        .split_once(':')
        .and_then(|(m, g)| Some((m.parse::<u32>().ok()?, g.parse::<u32>().ok()?)))
        .ok_or_else(|| anyhow::anyhow!("--gate-weights takes member:guest, e.g. 2:1, not {weights:?}"))?;
    let mut file: serde_json::Value = serde_json::from_str(TIER_FILE)?;
    file["gate_weights"] = serde_json::json!({"member": member, "guest": guest});
    let path = dir.join("tiers.json");
    std::fs::write(&path, serde_json::to_string_pretty(&file)?)?;
    Ok(path)
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
