//! A DynamoDB Local process owned by one test, for outages: paused (a
//! hang), stopped, and started again on its files. Used by the server's
//! fault tests and the Lambda function's outage and concurrency tests.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A DynamoDB Local process owned by one test, keeping its tables in files
/// so that it can be stopped and started again with its data.
#[derive(Debug)]
pub struct DynamoLocal {
    child: Child,
    port: u16,
    files: PathBuf,
}

impl DynamoLocal {
    pub fn start(files: &Path, port: u16) -> Self {
        let emulator = std::env::var("DYNAMODB_LOCAL_EMULATOR").expect(
            "DYNAMODB_LOCAL_EMULATOR is not set: run the suite with `bash scripts/test-all`, which installs DynamoDB Local",
        );
        let child = Command::new("java")
            .current_dir(&emulator)
            .args([
                "-Xmx256m",
                "-Djava.library.path=DynamoDBLocal_lib",
                "-jar",
                "DynamoDBLocal.jar",
            ])
            .args(["-sharedDb", "-dbPath"])
            .arg(files)
            .args(["-port", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting java for DynamoDB Local");
        let local = DynamoLocal {
            child,
            port,
            files: files.to_owned(),
        };
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "DynamoDB Local did not start"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        local
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill {signal}");
    }

    /// Stops the process (SIGTERM, as a service manager would) and waits for it to exit.
    pub fn stop(&mut self) {
        self.signal("-TERM");
        self.child.wait().unwrap();
    }

    pub fn restart(&mut self) {
        *self = DynamoLocal::start(&self.files.clone(), self.port);
    }
}

impl Drop for DynamoLocal {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
