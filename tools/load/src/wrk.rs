//! wrk on the same paths as a `reads` phase, for a yardstick of the load
//! generator's own cost: `wrk -t<cores> -c<connections> -d<seconds>s
//! --latency`, with a Lua script that picks each request's path as the
//! phase does when it has more than one.

use std::collections::BTreeMap;
use std::path::Path;

use crate::phases::Phase;

/// What a phase asks for: one path, or paths picked at random, each with a weight.
pub(crate) enum Paths<'a> {
    One(&'a str),
    Weighted(Vec<(f64, &'a [String])>),
}

/// Runs wrk for `seconds` against `base_url` and parses what it printed.
pub(crate) fn run(
    phase: &str,
    base_url: &str,
    accept_encoding: Option<&str>,
    paths: &Paths<'_>,
    connections: usize,
    seconds: u64,
    dir: &Path,
) -> anyhow::Result<Phase> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut command = std::process::Command::new("wrk");
    command
        .arg(format!("-t{threads}"))
        .arg(format!("-c{connections}"))
        .arg(format!("-d{seconds}s"))
        .arg("--latency");
    if let Some(codings) = accept_encoding {
        command.arg("-H").arg(format!("Accept-Encoding: {codings}"));
    }
    let url = match paths {
        Paths::One(path) => format!("{base_url}{path}"),
        Paths::Weighted(groups) => {
            let script = dir.join(format!("{}.lua", phase.replace(|c: char| !c.is_alphanumeric(), "-")));
            std::fs::write(&script, lua(groups))?;
            command.arg("-s").arg(script);
            format!("{base_url}/")
        }
    };
    let output = command.arg(url).output().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => anyhow::anyhow!("--wrk needs wrk on the PATH (apt-get install wrk)"),
        _ => e.into(),
    })?;
    anyhow::ensure!(
        output.status.success(),
        "wrk failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    parse(phase, &String::from_utf8_lossy(&output.stdout))
}

/// A `request` function that picks a group by weight, then a path of it.
fn lua(groups: &[(f64, &[String])]) -> String {
    let total: f64 = groups.iter().map(|(w, _)| w).sum();
    let mut script = String::from("local groups = {\n");
    let mut cumulative = 0.0;
    for (weight, paths) in groups {
        cumulative += weight / total;
        let quoted: Vec<String> = paths.iter().map(|p| format!("{p:?}")).collect();
        script += &format!("  {{ upto = {cumulative}, paths = {{ {} }} }},\n", quoted.join(", "));
    }
    script += "}\n\
        request = function()\n\
        \x20 local r = math.random()\n\
        \x20 for _, g in ipairs(groups) do\n\
        \x20   if r <= g.upto then return wrk.format(\"GET\", g.paths[math.random(#g.paths)]) end\n\
        \x20 end\n\
        \x20 local last = groups[#groups].paths\n\
        \x20 return wrk.format(\"GET\", last[math.random(#last)])\n\
        end\n";
    script
}

/// `11.95ms`, `950.00us`, `1.02s`, `2.00m` in milliseconds.
fn duration_ms(text: &str) -> Option<f64> {
    let split = text.find(|c: char| c.is_ascii_alphabetic())?;
    let (number, unit) = text.split_at(split);
    let n: f64 = number.parse().ok()?;
    Some(match unit {
        "us" => n / 1000.0,
        "ms" => n,
        "s" => n * 1000.0,
        "m" => n * 60_000.0,
        "h" => n * 3_600_000.0,
        _ => return None,
    })
}

fn parse(phase: &str, out: &str) -> anyhow::Result<Phase> {
    let words = |prefix: &str| {
        out.lines()
            .map(str::trim)
            .find(|l| l.starts_with(prefix))
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
    };
    let missing = || anyhow::anyhow!("wrk printed no figures for {phase}:\n{out}");
    let latency = words("Latency ").ok_or_else(missing)?;
    let percentile = |p: &str| words(p).and_then(|w| duration_ms(w.get(1)?)).unwrap_or(0.0);
    let requests_line = out.lines().find(|l| l.contains(" requests in ")).ok_or_else(missing)?;
    let requests: u64 = requests_line
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .ok_or_else(missing)?;
    let rps: f64 = words("Requests/sec:")
        .and_then(|w| w.get(1)?.parse().ok())
        .ok_or_else(missing)?;
    let socket_errors: u64 = words("Socket errors:").map_or(0, |w| {
        w.iter()
            .filter_map(|v| v.trim_end_matches(',').parse::<u64>().ok())
            .sum()
    });
    let non_2xx: u64 = words("Non-2xx or 3xx responses:")
        .and_then(|w| w.last()?.parse().ok())
        .unwrap_or(0);
    let round = |ms: f64| (ms * 10.0).round() / 10.0;
    Ok(Phase {
        phase: phase.to_owned(),
        requests,
        errors: socket_errors + non_2xx,
        rps: rps.round(),
        avg_ms: round(latency.get(1).and_then(|v| duration_ms(v)).unwrap_or(0.0)),
        p50_ms: round(percentile("50%")),
        p99_ms: round(percentile("99%")),
        max_ms: round(latency.get(3).and_then(|v| duration_ms(v)).unwrap_or(0.0)),
        statuses: BTreeMap::new(),
        ratio_to_health: None,
        load_cpu_cores: None,
        server_cpu_cores: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTPUT: &str = "Running 10s test @ http://127.0.0.1:8080/health
  2 threads and 500 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    11.95ms    2.01ms   1.04s    83.05%
    Req/Sec    20.93k     2.41k   27.77k    72.50%
  Latency Distribution
     50%  950.00us
     75%   12.56ms
     90%   13.89ms
     99%   19.63ms
  416594 requests in 10.02s, 51.25MB read
  Socket errors: connect 0, read 2, write 0, timeout 3
  Non-2xx or 3xx responses: 7
Requests/sec:  41573.95
Transfer/sec:      5.11MB
";

    #[test]
    fn wrk_output_gives_rate_latencies_and_errors() {
        let p = parse("/health", OUTPUT).unwrap();
        assert_eq!((p.requests, p.errors, p.rps), (416_594, 12, 41_574.0));
        assert_eq!((p.avg_ms, p.p50_ms, p.p99_ms, p.max_ms), (12.0, 1.0, 19.6, 1040.0));
    }

    #[test]
    fn output_without_figures_is_an_error() {
        assert!(parse("/health", "unable to connect to 127.0.0.1:1 Connection refused").is_err());
    }

    #[test]
    fn the_script_picks_groups_by_cumulative_weight() {
        let pages = vec!["/boards/free/posts".to_owned()];
        let posts = vec!["/boards/free/posts/a".to_owned(), "/boards/free/posts/b".to_owned()];
        let script = lua(&[(1.0, &pages), (3.0, &posts)]);
        assert!(
            script.contains("{ upto = 0.25, paths = { \"/boards/free/posts\" } }"),
            "{script}"
        );
        assert!(
            script.contains("{ upto = 1, paths = { \"/boards/free/posts/a\", \"/boards/free/posts/b\" } }"),
            "{script}"
        );
    }
}
