//! `load guest-flood`: the flood on a fresh server per proof-of-work mode.

use std::sync::Arc;
use std::time::Instant;

use crate::metrics::Recorder;
use crate::scenarios::{Api, FloodRun};
use crate::*;

/// `load guest-flood`: the flood on a fresh server per mode, side by side.
pub(crate) async fn guest_flood(
    opts: &Opts,
    addresses: usize,
    pow_maxnumber: Option<u64>,
    warmup_seconds: u64,
    modes: &[PowMode],
) -> anyhow::Result<()> {
    let load_average = || {
        std::fs::read_to_string("/proc/loadavg")
            .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    let mut summary = format!(
        "`load guest-flood`: {} flooders from {addresses} addresses, {} s measured after {warmup_seconds} s unmeasured, \
         one SQLite server per mode ({}), POW_MAXNUMBER {}, load average before: {}\n\n",
        opts.users,
        opts.seconds,
        opts.server.display(),
        pow_maxnumber.map_or("the server's default".to_owned(), |n| n.to_string()),
        load_average()
    );
    let mut runs = Vec::new();
    let mut reports = Vec::new();
    for mode in modes {
        let label = format!("POW={}", mode.name());
        let server = server::Spawned::start(
            &opts.server,
            server::Settings {
                tiers: None,
                trust_proxy: true,
                hash_queue: opts.hash_queue.or(Some(256)),
                gate_weights: opts.gate_weights.as_deref(),
                table: None,
                pow: Some(server::Pow {
                    mode: mode.name(),
                    maxnumber: pow_maxnumber,
                }),
            },
        )
        .await?;
        eprintln!("{label}: {} on {}", opts.server.display(), server.base_url());
        if warmup_seconds > 0 {
            let warmup = Api::new(&server.base_url(), Arc::new(Recorder::default()));
            scenarios::guest_flood(warmup, opts.users, addresses, warmup_seconds).await;
        }
        let recorder = Arc::new(Recorder::default());
        let api = Api::new(&server.base_url(), recorder.clone());
        eprintln!("{label}: flooding for {} s", opts.seconds);
        let hashes_before = server.hashes_run();
        let before = cpu::sample(Some(server.pid()));
        let started = Instant::now();
        let totals = scenarios::guest_flood(api, opts.users, addresses, opts.seconds).await;
        let wall = started.elapsed();
        let (load_cpu_seconds, server_cpu_seconds) = cpu::seconds_used(before, cpu::sample(Some(server.pid())));
        let mut report = recorder.report(&label, wall);
        report.hashes_run = Some(server.hashes_run() - hashes_before);
        report.peak_rss_kib = server.peak_rss_kib();
        reports.push(report);
        runs.push(FloodRun {
            label,
            seconds: wall.as_secs_f64(),
            totals,
            server_cpu_seconds,
            load_cpu_seconds,
        });
    }
    summary += &scenarios::flood_markdown(&runs);
    summary += &format!("\nLoad average after: {}\n\n", load_average());
    for report in &reports {
        summary += &format!("{}\n", report.markdown());
    }
    println!("{summary}");
    write_files(&opts.out, "guest-flood", &runs, &summary)
}
