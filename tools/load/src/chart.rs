//! An SVG chart of latency percentiles before and after, per endpoint.

use std::path::Path;

use plotters::prelude::*;
use serde_json::Value;

/// Draws P50/P95/P99 of each endpoint of two report JSON files (log scale).
pub(crate) fn percentiles(before: &Path, after: &Path, out: &Path, title: &str) -> anyhow::Result<()> {
    let read = |p: &Path| -> anyhow::Result<Value> { Ok(serde_json::from_str(&std::fs::read_to_string(p)?)?) };
    let (b, a) = (read(before)?, read(after)?);
    let rows = |v: &Value| -> Vec<(String, [f64; 3])> {
        v["rows"]
            .as_array()
            .map(|rows| {
                rows.iter()
                    .map(|r| {
                        let f = |k: &str| r[k].as_f64().unwrap_or(0.0).max(0.1);
                        (
                            r["endpoint"].as_str().unwrap_or("?").to_owned(),
                            [f("p50_ms"), f("p95_ms"), f("p99_ms")],
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let (before_rows, after_rows) = (rows(&b), rows(&a));
    let endpoints: Vec<String> = before_rows.iter().map(|(e, _)| e.clone()).collect();
    let max = before_rows
        .iter()
        .chain(&after_rows)
        .flat_map(|(_, p)| p.iter().copied())
        .fold(1.0, f64::max)
        * 2.0;

    let root = SVGBackend::new(out, (1000, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let n = endpoints.len() as u32;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(16)
        .x_label_area_size(60)
        .y_label_area_size(60)
        .build_cartesian_2d(0u32..n * 7, (0.1f64..max).log_scale())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(2)
        .x_label_formatter(&|_| String::new())
        .y_desc("latency ms (log scale)")
        .draw()?;
    let colors = [RGBColor(240, 160, 160), RGBColor(200, 60, 60), RGBColor(120, 0, 0)];
    let after_colors = [RGBColor(160, 200, 240), RGBColor(60, 110, 200), RGBColor(0, 40, 120)];
    for (i, endpoint) in endpoints.iter().enumerate() {
        let x0 = i as u32 * 7;
        let get = |rows: &[(String, [f64; 3])]| rows.iter().find(|(e, _)| e == endpoint).map(|(_, p)| *p);
        for (offset, (values, palette)) in [(get(&before_rows), colors), (get(&after_rows), after_colors)]
            .into_iter()
            .enumerate()
        {
            let Some(values) = values else { continue };
            for (k, v) in values.iter().enumerate() {
                let x = x0 + offset as u32 * 3 + k as u32;
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x, 0.1), (x + 1, *v)],
                    palette[k].filled(),
                )))?;
            }
        }
        chart.draw_series(std::iter::once(Text::new(
            endpoint.clone(),
            (x0, 0.1),
            ("sans-serif", 11).into_font().transform(FontTransform::Rotate90),
        )))?;
    }
    for (label, color) in [
        ("before P50/P95/P99 (light to dark red)", colors[1]),
        ("after P50/P95/P99 (light to dark blue)", after_colors[1]),
    ] {
        chart
            .draw_series(std::iter::empty::<Circle<(u32, f64), i32>>())?
            .label(label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::metrics::Recorder;

    #[test]
    fn a_chart_is_drawn_from_two_reports() {
        let dir = std::env::temp_dir().join(format!("load-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, ms) in [("before", 100), ("after", 40)] {
            let recorder = Recorder::default();
            recorder.record("guest post", Duration::from_millis(ms), Some(201), true);
            let report = recorder.report("mixed", Duration::from_secs(1));
            std::fs::write(
                dir.join(format!("{name}.json")),
                serde_json::to_string(&report).unwrap(),
            )
            .unwrap();
        }
        let out = dir.join("chart.svg");
        super::percentiles(&dir.join("before.json"), &dir.join("after.json"), &out, "test").unwrap();
        let svg = std::fs::read_to_string(&out).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("guest post"));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
