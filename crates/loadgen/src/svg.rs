//! A hand-written SVG chart of the per-second timeline: latency percentiles (log scale),
//! throughput with errors and the open model's target rate, and the engine's nodes per second.

use std::fmt::Write as _;

use crate::report::{Report, si};

const WIDTH: f64 = 960.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 150.0;
const PANEL_GAP: f64 = 46.0;

/// One line of a panel.
struct Series {
    label: String,
    color: &'static str,
    dashed: bool,
    values: Vec<f64>,
}

fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Round numbers for a linear axis up to `max`.
fn linear_ticks(max: f64) -> (f64, Vec<f64>) {
    if max <= 0.0 {
        return (1.0, vec![0.0, 0.5, 1.0]);
    }
    let raw = max / 4.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let top = (max / step).ceil() * step;
    let ticks = (0..=((top / step).round() as usize))
        .map(|i| i as f64 * step)
        .collect();
    (top, ticks)
}

fn tick_label(v: f64) -> String {
    if v >= 1e4 {
        si(v)
    } else if v >= 10.0 || v == 0.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}

#[allow(clippy::too_many_arguments)]
fn panel(
    out: &mut String,
    top: f64,
    height: f64,
    title: &str,
    unit: &str,
    series: &[Series],
    log: bool,
    n: usize,
    boundaries: &[(f64, String)],
) {
    let plot_w = WIDTH - LEFT - RIGHT;
    let bottom = top + height;
    let x = |i: f64| LEFT + (i + 0.5) * plot_w / n.max(1) as f64;
    let all: Vec<f64> = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .filter(|v| v.is_finite())
        .collect();
    let max = all.iter().copied().fold(0.0, f64::max);
    let _ = writeln!(
        out,
        r#"<text x="{LEFT}" y="{:.1}" class="title">{}</text>"#,
        top - 8.0,
        esc(title)
    );
    let _ = writeln!(
        out,
        r##"<rect x="{LEFT}" y="{top:.1}" width="{plot_w:.1}" height="{height:.1}" fill="#fbfbfb" stroke="#999"/>"##
    );
    // The y axis: decades for a log scale, round steps for a linear one.
    let (y_of, ticks): (Box<dyn Fn(f64) -> f64>, Vec<f64>) = if log {
        let positive: Vec<f64> = all.iter().copied().filter(|v| *v > 0.0).collect();
        let lo = positive
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min)
            .max(1e-3);
        let l0 = lo.log10().floor();
        let l1 = max.log10().ceil().max(l0 + 1.0);
        let span = (l1 - l0).max(1.0);
        let mut ticks = Vec::new();
        let mut d = l0;
        while d <= l1 + 1e-9 {
            for m in [1.0, 2.0, 5.0] {
                let v = 10f64.powf(d) * m;
                if v.log10() <= l1 + 1e-9 {
                    ticks.push(v);
                }
            }
            d += 1.0;
        }
        (
            Box::new(move |v: f64| {
                let v = v.max(10f64.powf(l0));
                bottom - (v.log10() - l0) / span * height
            }),
            ticks,
        )
    } else {
        // Headroom: a series at the maximum must not sit on the frame.
        let (top_value, ticks) = linear_ticks(max * 1.05);
        (
            Box::new(move |v: f64| bottom - v / top_value * height),
            ticks,
        )
    };
    for t in &ticks {
        let y = y_of(*t);
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e2e2e2"/><text x="{:.1}" y="{:.1}" class="axis" text-anchor="end">{}</text>"##,
            LEFT + plot_w,
            LEFT - 6.0,
            y + 4.0,
            tick_label(*t)
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="14" y="{:.1}" class="axis" transform="rotate(-90 14 {:.1})" text-anchor="middle">{}</text>"#,
        top + height / 2.0,
        top + height / 2.0,
        esc(unit)
    );
    // Step boundaries.
    for (at, label) in boundaries {
        let bx = LEFT + at / n.max(1) as f64 * plot_w;
        let _ = writeln!(
            out,
            r##"<line x1="{bx:.1}" y1="{top:.1}" x2="{bx:.1}" y2="{bottom:.1}" stroke="#888" stroke-dasharray="2,3"/><text x="{:.1}" y="{:.1}" class="small">{}</text>"##,
            bx + 3.0,
            top + 12.0,
            esc(label)
        );
    }
    for (k, s) in series.iter().enumerate() {
        let points: Vec<String> = s
            .values
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite() && (!log || **v > 0.0))
            .map(|(i, v)| format!("{:.1},{:.1}", x(i as f64), y_of(*v)))
            .collect();
        let dash = if s.dashed {
            r#" stroke-dasharray="6,4""#
        } else {
            ""
        };
        if points.len() == 1 {
            let (px, py) = points[0].split_once(',').unwrap_or(("0", "0"));
            let _ = writeln!(
                out,
                r#"<circle cx="{px}" cy="{py}" r="3" fill="{}"/>"#,
                s.color
            );
        } else if !points.is_empty() {
            let _ = writeln!(
                out,
                r#"<polyline fill="none" stroke="{}" stroke-width="1.8"{dash} points="{}"/>"#,
                s.color,
                points.join(" ")
            );
        }
        let ly = top + 14.0 + 18.0 * k as f64;
        let lx = LEFT + plot_w + 12.0;
        let _ = writeln!(
            out,
            r#"<line x1="{lx:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{}" stroke-width="2"{dash}/><text x="{:.1}" y="{:.1}" class="axis">{}</text>"#,
            ly - 4.0,
            lx + 22.0,
            ly - 4.0,
            s.color,
            lx + 28.0,
            ly,
            esc(&s.label)
        );
    }
    // Seconds along the bottom.
    let every = (n / 10).max(1);
    for i in (0..=n).step_by(every) {
        let tx = LEFT + i as f64 / n.max(1) as f64 * plot_w;
        let _ = writeln!(
            out,
            r#"<text x="{tx:.1}" y="{:.1}" class="axis" text-anchor="middle">{i}</text>"#,
            bottom + 15.0
        );
    }
}

/// The chart as an SVG document.
pub fn chart(r: &Report) -> String {
    let t = &r.timeline;
    let n = t.len();
    let engine = t.iter().any(|s| s.nodes > 0);
    let heights = if engine {
        vec![240.0, 180.0, 150.0]
    } else {
        vec![240.0, 180.0]
    };
    let head = 78.0;
    let total_h = head + heights.iter().map(|h| h + PANEL_GAP).sum::<f64>() + 20.0;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{total_h:.0}" viewBox="0 0 {WIDTH} {total_h:.0}" font-family="sans-serif">"#
    );
    out.push_str(
        "<style>.title{font-size:14px;font-weight:bold}.axis{font-size:11px;fill:#333}\
         .small{font-size:10px;fill:#555}.head{font-size:16px;font-weight:bold}.sub{font-size:12px;fill:#333}</style>\n",
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let c = &r.config;
    let res = &r.result;
    let load = if c.model == "open" {
        format!("open model, {} req/s", c.level)
    } else {
        format!("closed model, {} clients", c.level)
    };
    let _ = writeln!(
        out,
        r#"<text x="{LEFT}" y="24" class="head">chess-loadgen: {} on {}, {}</text>"#,
        esc(c.scenario),
        esc(&c.target),
        esc(&load)
    );
    let _ = writeln!(
        out,
        r#"<text x="{LEFT}" y="44" class="sub">{} requests in {:.1} s ({:.1}/s), {} errors; p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms{}</text>"#,
        res.requests,
        res.wall_s,
        res.rate,
        res.errors,
        res.latency_ms.p50,
        res.latency_ms.p99,
        res.latency_ms.max,
        if res.engine.nodes > 0 {
            format!("; {} nodes/s", si(res.engine.nodes_per_s))
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        out,
        r#"<text x="{LEFT}" y="60" class="small">{}per-second buckets by completion time (the last one is partial); x axis: seconds of the measured run</text>"#,
        if r.label.is_empty() {
            String::new()
        } else {
            format!("{} - ", esc(&r.label))
        }
    );
    let boundaries: Vec<(f64, String)> = r
        .stages
        .iter()
        .map(|s| {
            let unit = if c.model == "open" {
                "req/s"
            } else {
                "clients"
            };
            (s.start_s, format!("{} {unit}", s.level))
        })
        .collect();
    let col = |f: fn(&crate::report::SecondResult) -> f64| t.iter().map(f).collect::<Vec<f64>>();
    let mut top = head + 22.0;
    panel(
        &mut out,
        top,
        heights[0],
        "Latency of successful calls (log scale)",
        "ms",
        &[
            Series {
                label: "p50".into(),
                color: "#1f77b4",
                dashed: false,
                values: col(|s| s.p50_ms),
            },
            Series {
                label: "p90".into(),
                color: "#2ca02c",
                dashed: false,
                values: col(|s| s.p90_ms),
            },
            Series {
                label: "p99".into(),
                color: "#ff7f0e",
                dashed: false,
                values: col(|s| s.p99_ms),
            },
            Series {
                label: "max".into(),
                color: "#d62728",
                dashed: true,
                values: col(|s| s.max_ms),
            },
        ],
        true,
        n,
        &boundaries,
    );
    top += heights[0] + PANEL_GAP;
    let mut throughput = vec![
        Series {
            label: "ok/s".into(),
            color: "#1f77b4",
            dashed: false,
            values: col(|s| s.ok as f64),
        },
        Series {
            label: "errors/s".into(),
            color: "#d62728",
            dashed: false,
            values: col(|s| s.errors as f64),
        },
    ];
    if c.model == "open" {
        throughput.push(Series {
            label: "target rate".into(),
            color: "#7f7f7f",
            dashed: true,
            values: col(|s| s.level),
        });
    }
    panel(
        &mut out,
        top,
        heights[1],
        "Throughput (calls completed per second)",
        "calls/s",
        &throughput,
        false,
        n,
        &boundaries,
    );
    top += heights[1] + PANEL_GAP;
    if engine {
        panel(
            &mut out,
            top,
            heights[2],
            "Engine throughput (nodes reported by the answers, per second)",
            "nodes/s",
            &[Series {
                label: "nodes/s".into(),
                color: "#9467bd",
                dashed: false,
                values: col(|s| s.nodes as f64),
            }],
            false,
            n,
            &boundaries,
        );
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_are_round() {
        let (top, ticks) = linear_ticks(87.0);
        assert_eq!(top, 100.0);
        assert_eq!(ticks, vec![0.0, 25.0, 50.0, 75.0, 100.0]);
        let (top, _) = linear_ticks(0.0);
        assert_eq!(top, 1.0);
    }

    #[test]
    fn escapes_text() {
        assert_eq!(esc("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
    }
}
