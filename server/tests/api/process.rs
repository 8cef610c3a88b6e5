//! The `server` binary run as a process of its own on SQLite with the test
//! settings (port 0), for what only a real process shows: its memory, and
//! what survives a stop or a kill.

use std::path::Path;
use std::time::Duration;

/// A running `server` process, killed when dropped.
pub(crate) struct ServerProcess {
    child: std::process::Child,
    pub(crate) host: String,
    _data: Option<tempfile::TempDir>,
}

impl ServerProcess {
    /// On a fresh data directory of its own.
    pub(crate) fn start(overrides: &[(&str, &str)]) -> Self {
        let data = tempfile::tempdir().unwrap();
        let mut server = Self::start_in(data.path(), overrides);
        server._data = Some(data);
        server
    }

    /// On `data`, which outlives the process (a restart finds it again).
    pub(crate) fn start_in(data: &Path, overrides: &[(&str, &str)]) -> Self {
        use std::io::BufRead as _;
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_server"));
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(crate::helpers::test_settings())
            .env("PORT", "0")
            .env("DATA_DIR", data)
            .envs(overrides.iter().copied())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit());
        let mut child = command.spawn().expect("the server binary starts");
        let stdout = child.stdout.take().unwrap();
        let (tell, told) = std::sync::mpsc::channel();
        // Reads the log for the bound address, then drains it (a full pipe
        // would stall the server).
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.contains("\"listening\"") {
                    let log: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
                    if let Some(address) = log["fields"]["address"].as_str() {
                        let _ = tell.send(address.to_owned());
                    }
                }
            }
        });
        let host = told
            .recv_timeout(Duration::from_secs(30))
            .expect("the server logs the address it listens on");
        Self {
            child,
            host,
            _data: None,
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.host)
    }

    /// Sends `signal` (`TERM`, `KILL`) and waits for the process to end;
    /// whether it exited successfully.
    pub(crate) fn stop_with(mut self, signal: &str) -> bool {
        let sent = std::process::Command::new("kill")
            .args([format!("-{signal}"), self.pid().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success(), "kill -{signal} {}", self.pid());
        self.child.wait().expect("the server ends").success()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
