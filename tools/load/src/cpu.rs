//! CPU time the load tool and the server used over a phase, from
//! `/proc/<pid>/stat`: on a machine they share, what the generator takes
//! is what the server cannot have.

use std::time::Instant;

/// Clock ticks per second of `/proc/<pid>/stat` (USER_HZ: 100 on Linux).
const TICKS_PER_SECOND: f64 = 100.0;

/// User plus system CPU seconds of `pid` so far.
fn seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&stat)
}

/// Fields 14 and 15 (utime, stime), counted after the command name,
/// which may hold spaces and parentheses itself.
fn parse_stat(stat: &str) -> Option<f64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // after_name starts at field 3 (state).
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) as f64 / TICKS_PER_SECOND)
}

/// CPU time the calling thread has run, from `/proc/thread-self/schedstat`
/// (the scheduler's own count in nanoseconds): what one solve on a blocking
/// thread cost, however the cores were shared. The kernel brings a running
/// thread's count up to date only at a tick (4 ms here) or a switch, so a
/// yield first makes it current: without it a 1 ms solve mostly read as 0.
pub(crate) fn this_thread() -> Option<std::time::Duration> {
    std::thread::yield_now();
    let schedstat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos: u64 = schedstat.split_whitespace().next()?.parse().ok()?;
    Some(std::time::Duration::from_nanos(nanos))
}

#[derive(Clone, Copy)]
pub(crate) struct Sample {
    at: Instant,
    load: Option<f64>,
    server: Option<f64>,
}

pub(crate) fn sample(server: Option<u32>) -> Sample {
    Sample {
        at: Instant::now(),
        load: seconds(std::process::id()),
        server: server.and_then(seconds),
    }
}

/// CPU seconds the load tool and the server used between two samples.
pub(crate) fn seconds_used(from: Sample, to: Sample) -> (Option<f64>, Option<f64>) {
    let used = |a: Option<f64>, b: Option<f64>| Some(b? - a?);
    (used(from.load, to.load), used(from.server, to.server))
}

/// Cores the load tool and the server kept busy between two samples (1.0: one core).
pub(crate) fn cores(from: Sample, to: Sample) -> (Option<f64>, Option<f64>) {
    let wall = to.at.duration_since(from.at).as_secs_f64();
    let busy = |a: Option<f64>, b: Option<f64>| {
        let used = b? - a?;
        (wall > 0.0).then(|| (used / wall * 100.0).round() / 100.0)
    };
    (busy(from.load, to.load), busy(from.server, to.server))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_is_read_after_a_command_name_with_spaces() {
        let stat = "4242 (tokio (rt) 1) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 100 1000 200";
        assert_eq!(parse_stat(stat), Some(3.0));
    }

    #[test]
    fn this_process_has_a_cpu_time() {
        assert!(seconds(std::process::id()).is_some());
    }

    #[test]
    fn a_thread_that_works_counts_cpu_time() {
        let before = this_thread().expect("schedstat");
        let mut hash = 0u64;
        for i in 0..10_000_000u64 {
            hash = std::hint::black_box(hash.rotate_left(5) ^ i);
        }
        assert!(this_thread().expect("schedstat") > before, "{hash}");
    }
}
