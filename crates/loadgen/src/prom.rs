//! The servers' side: Prometheus text read over plain HTTP (`GET /metrics`), and the
//! differences between two reads.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Time allowed to one metrics read.
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(5);
/// Largest metrics page read.
const MAX_PAGE: u64 = 16 << 20;

/// A metric's name and labels, sorted: `name{a="1",b="2"}`.
pub type SeriesKey = String;

/// One read of a metrics page.
#[derive(Clone, Debug, Default)]
pub struct Page {
    /// Every sample by series.
    pub samples: BTreeMap<SeriesKey, Sample>,
    /// `# TYPE` of each metric family.
    pub types: BTreeMap<String, String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

impl Sample {
    pub fn label(&self, name: &str) -> &str {
        self.labels.get(name).map_or("", String::as_str)
    }
}

fn key(name: &str, labels: &BTreeMap<String, String>) -> SeriesKey {
    if labels.is_empty() {
        return name.to_owned();
    }
    let inner: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
    format!("{name}{{{}}}", inner.join(","))
}

/// Reads the Prometheus text exposition format (version 0.0.4, and the OpenMetrics subset the
/// services write).
pub fn parse(text: &str) -> Result<Page, String> {
    let mut page = Page::default();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line == "# EOF" {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut parts = rest.split_whitespace();
            if let (Some(name), Some(kind)) = (parts.next(), parts.next()) {
                page.types.insert(name.to_owned(), kind.to_owned());
            }
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let sample = parse_sample(line).map_err(|e| format!("line {}: {e}: {line:?}", i + 1))?;
        page.samples
            .insert(key(&sample.name, &sample.labels), sample);
    }
    Ok(page)
}

fn parse_sample(line: &str) -> Result<Sample, String> {
    let name_end = line
        .find(|c: char| c == '{' || c.is_whitespace())
        .ok_or("no value")?;
    let name = &line[..name_end];
    let mut labels = BTreeMap::new();
    let mut rest = &line[name_end..];
    if let Some(after) = rest.strip_prefix('{') {
        let mut chars = after.char_indices().peekable();
        let end = loop {
            // Skip separators.
            while let Some((_, c)) = chars.peek() {
                if *c == ',' || c.is_whitespace() {
                    chars.next();
                } else {
                    break;
                }
            }
            let Some(&(start, c)) = chars.peek() else {
                return Err("unterminated labels".to_owned());
            };
            if c == '}' {
                break start + 1;
            }
            let mut label = String::new();
            for (_, c) in chars.by_ref() {
                if c == '=' {
                    break;
                }
                label.push(c);
            }
            if chars.next().map(|(_, c)| c) != Some('"') {
                return Err(format!("label {label} has no quoted value"));
            }
            let mut value = String::new();
            let mut closed = false;
            while let Some((_, c)) = chars.next() {
                match c {
                    '\\' => match chars.next().map(|(_, c)| c) {
                        Some('n') => value.push('\n'),
                        Some(other) => value.push(other),
                        None => break,
                    },
                    '"' => {
                        closed = true;
                        break;
                    }
                    other => value.push(other),
                }
            }
            if !closed {
                return Err(format!("label {label}'s value is not closed"));
            }
            labels.insert(label.trim().to_owned(), value);
        };
        rest = &after[end..];
    }
    let value_text = rest.split_whitespace().next().ok_or("no value")?;
    let value = match value_text {
        "+Inf" | "Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        "NaN" => f64::NAN,
        v => v.parse().map_err(|_| format!("{v:?} is not a number"))?,
    };
    Ok(Sample {
        name: name.to_owned(),
        labels,
        value,
    })
}

/// Reads `http://addr/path` with HTTP/1.0 (so the body is never chunked).
pub async fn scrape(addr: SocketAddr, host: &str, path: &str) -> Result<Page, String> {
    let read = async {
        let mut stream = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        let path = if path.is_empty() { "/metrics" } else { path };
        let request = format!("GET {path} HTTP/1.0\r\nHost: {host}\r\nAccept: text/plain\r\n\r\n");
        stream
            .write_all(request.as_bytes())
            .await
            .map_err(|e| format!("cannot send the request: {e}"))?;
        let mut body = Vec::new();
        stream
            .take(MAX_PAGE)
            .read_to_end(&mut body)
            .await
            .map_err(|e| format!("cannot read the answer: {e}"))?;
        Ok::<Vec<u8>, String>(body)
    };
    let raw = tokio::time::timeout(SCRAPE_TIMEOUT, read)
        .await
        .map_err(|_| format!("no answer within {} s", SCRAPE_TIMEOUT.as_secs()))??;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").ok_or("not an HTTP answer")?;
    let status = head.lines().next().unwrap_or_default();
    if status.split_whitespace().nth(1) != Some("200") {
        return Err(format!("answered {status:?}"));
    }
    parse(body)
}

/// The metric family of a sample name: `x_total` -> `x`, `x_bucket` -> `x`.
pub fn family(name: &str) -> &str {
    for suffix in ["_total", "_bucket", "_sum", "_count", "_created"] {
        if let Some(base) = name.strip_suffix(suffix) {
            return base;
        }
    }
    name
}

impl Page {
    /// The metric type of a sample's family (`counter`, `gauge`, `histogram`, ...).
    fn kind(&self, name: &str) -> &str {
        self.types
            .get(name)
            .or_else(|| self.types.get(family(name)))
            .map_or("untyped", String::as_str)
    }

    /// Counters and histogram parts grow only: their increase from `before` to `self`
    /// (a series absent before counts from 0; a restarted server's counts as from 0).
    pub fn increase_since(&self, before: &Page) -> BTreeMap<SeriesKey, (Sample, f64)> {
        let mut out = BTreeMap::new();
        for (k, s) in &self.samples {
            if !matches!(self.kind(&s.name), "counter" | "histogram") {
                continue;
            }
            let old = before.samples.get(k).map_or(0.0, |b| b.value);
            let delta = if s.value >= old {
                s.value - old
            } else {
                s.value
            };
            out.insert(k.clone(), (s.clone(), delta));
        }
        out
    }

    pub fn gauges(&self) -> impl Iterator<Item = (&SeriesKey, &Sample)> {
        self.samples
            .iter()
            .filter(|(_, s)| self.kind(&s.name) == "gauge")
    }

    /// The sum of a metric's samples (over all label sets).
    pub fn sum(&self, name: &str) -> Option<f64> {
        let values: Vec<f64> = self
            .samples
            .values()
            .filter(|s| s.name == name)
            .map(|s| s.value)
            .collect();
        (!values.is_empty()).then(|| values.iter().sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "# HELP chess_grpc_server_handled gRPC calls completed, by method and status code.\n\
# TYPE chess_grpc_server_handled counter\n\
chess_grpc_server_handled_total{service=\"gateway\",method=\"/chess.v1.AnalysisService/Analyze\",code=\"Ok\"} 12\n\
chess_grpc_server_handled_total{service=\"gateway\",method=\"/chess.v1.AnalysisService/Analyze\",code=\"ResourceExhausted\"} 3\n\
# TYPE chess_search_queue_depth gauge\n\
chess_search_queue_depth{service=\"search\"} 2\n\
# TYPE chess_grpc_server_handling_seconds histogram\n\
chess_grpc_server_handling_seconds_sum{service=\"gateway\",method=\"/m\"} 0.5\n\
chess_grpc_server_handling_seconds_count{service=\"gateway\",method=\"/m\"} 5\n\
chess_grpc_server_handling_seconds_bucket{le=\"+Inf\",service=\"gateway\",method=\"/m\"} 5\n\
odd{a=\"x\\\"y\",b=\"\"} NaN\n\
# EOF\n";

    #[test]
    fn parses_the_services_pages() {
        let page = parse(PAGE).unwrap();
        assert_eq!(page.samples.len(), 7);
        let ok = page
            .samples
            .values()
            .find(|s| s.label("code") == "Ok")
            .unwrap();
        assert_eq!(ok.value, 12.0);
        assert_eq!(ok.label("method"), "/chess.v1.AnalysisService/Analyze");
        assert_eq!(page.kind("chess_grpc_server_handled_total"), "counter");
        assert_eq!(page.kind("chess_search_queue_depth"), "gauge");
        assert_eq!(
            page.kind("chess_grpc_server_handling_seconds_bucket"),
            "histogram"
        );
        let odd = page.samples.values().find(|s| s.name == "odd").unwrap();
        assert_eq!(odd.label("a"), "x\"y");
        assert!(odd.value.is_nan());
        assert_eq!(page.sum("chess_grpc_server_handled_total"), Some(15.0));
        assert_eq!(page.gauges().count(), 1);
        assert!(parse("x{a=\"1\" 2").is_err());
        assert!(parse("x abc").is_err());
    }

    #[test]
    fn increases_count_new_series_from_zero() {
        let before = parse(PAGE).unwrap();
        let after = parse(&PAGE.replace("} 12", "} 20").replace("} 5\n", "} 9\n")).unwrap();
        let inc = after.increase_since(&before);
        let ok = inc.values().find(|(s, _)| s.label("code") == "Ok").unwrap();
        assert_eq!(ok.1, 8.0);
        let only_after = parse(PAGE).unwrap().increase_since(&Page::default());
        let exhausted = only_after
            .values()
            .find(|(s, _)| s.label("code") == "ResourceExhausted")
            .unwrap();
        assert_eq!(exhausted.1, 3.0);
        // Gauges are not differences.
        assert!(
            inc.values()
                .all(|(s, _)| s.name != "chess_search_queue_depth")
        );
    }
}
