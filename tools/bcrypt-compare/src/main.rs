//! `cargo run --release -p bcrypt-compare -- --costs 10`: times the Rust
//! bcrypt crate and libxcrypt on the same password and salt, interleaved so
//! machine noise hits both alike, checks that they agree, and prints the ratio.

mod libxcrypt;

use std::time::Instant;

use clap::Parser;

#[derive(Parser)]
struct Cli {
    /// bcrypt costs to compare.
    #[arg(long, value_delimiter = ',', default_values_t = [10])]
    costs: Vec<u32>,
    /// Pairs of runs per cost.
    #[arg(long, default_value_t = 31)]
    samples: usize,
    /// Run only one side (for profiling): `rust` or `c`.
    #[arg(long)]
    only: Option<String>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn p95(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 * 0.95).ceil() as usize).clamp(1, v.len()) - 1]
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    anyhow::ensure!(cli.samples > 0, "--samples must be at least 1");
    let password = "correct horse battery staple";
    let mut c = libxcrypt::Crypt::new();
    println!("| cost | Rust bcrypt crate median ms | P95 | libxcrypt (C) median ms | P95 | ratio Rust/C (median) |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for &cost in &cli.costs {
        let reference = bcrypt::hash_with_result(password, cost)?;
        let salt = reference.get_salt_raw();
        let setting = reference.format_for_version(bcrypt::Version::TwoB);
        anyhow::ensure!(
            c.hash(password, &setting)? == setting,
            "libxcrypt and the bcrypt crate disagree at cost {cost}"
        );
        let (mut rust_ms, mut c_ms) = (Vec::new(), Vec::new());
        for i in 0..cli.samples + 1 {
            // Alternate who goes first; sample 0 is a warm-up.
            let run_rust = || -> anyhow::Result<f64> {
                let t = Instant::now();
                std::hint::black_box(bcrypt::hash_with_salt(std::hint::black_box(password), cost, salt)?);
                Ok(t.elapsed().as_secs_f64() * 1e3)
            };
            let run_c = |c: &mut libxcrypt::Crypt| -> anyhow::Result<f64> {
                let t = Instant::now();
                std::hint::black_box(c.hash(std::hint::black_box(password), &setting)?);
                Ok(t.elapsed().as_secs_f64() * 1e3)
            };
            let (r, cc) = match cli.only.as_deref() {
                Some("rust") => (run_rust()?, f64::NAN),
                Some("c") => (f64::NAN, run_c(&mut c)?),
                _ if i % 2 == 0 => (run_rust()?, run_c(&mut c)?),
                _ => {
                    let cc = run_c(&mut c)?;
                    (run_rust()?, cc)
                }
            };
            if i > 0 {
                rust_ms.push(r);
                c_ms.push(cc);
            }
        }
        let (rm, cm) = (median(rust_ms.clone()), median(c_ms.clone()));
        println!(
            "| {cost} | {rm:.2} | {:.2} | {cm:.2} | {:.2} | {:.3} |",
            p95(rust_ms),
            p95(c_ms),
            rm / cm
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::libxcrypt::Crypt;

    #[test]
    fn libxcrypt_and_the_crate_produce_the_same_hash() {
        let mut c = Crypt::new();
        for (password, cost) in [("correct horse battery staple", 4), ("한국어 비밀번호", 5)] {
            let rust = bcrypt::hash(password, cost).unwrap();
            assert_eq!(c.hash(password, &rust).unwrap(), rust);
            assert!(c.hash("wrong", &rust).unwrap() != rust);
        }
    }

    #[test]
    fn a_bad_setting_is_an_error_not_a_crash() {
        assert!(Crypt::new().hash("pw", "$2b$99$abc").is_err());
    }
}
