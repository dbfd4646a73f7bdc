//! The report: what the client saw next to what the servers counted. This file is its model
//! (serialised as the JSON report that `compare` reads); `build` makes it from the recorder and
//! the metrics reads, `text` and `csv` render it for people and spreadsheets.

mod build;
mod csv;
mod text;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::stats::Latency;

pub use build::{Inputs, ServerReads, build, server_result};
pub use csv::{csv, timeline_csv};
pub use text::{si, summary};

/// Bumped when a field changes meaning.
const FORMAT: u32 = 1;

#[derive(Debug, Serialize)]
pub struct Report {
    pub tool: &'static str,
    pub format: u32,
    pub version: &'static str,
    pub label: String,
    pub started_unix_ms: u64,
    pub command: Vec<String>,
    pub machine: Machine,
    pub config: Config,
    pub result: RunResult,
    pub methods: Vec<MethodResult>,
    pub stages: Vec<StageResult>,
    pub timeline: Vec<SecondResult>,
    pub server: Vec<ServerResult>,
    pub warmup: WarmupResult,
}

#[derive(Debug, Serialize)]
pub struct Machine {
    pub cpus: usize,
    pub os: &'static str,
    pub arch: &'static str,
}

#[derive(Debug, Serialize)]
pub struct Config {
    pub target: String,
    pub scenario: &'static str,
    /// The mix's weights (only for the mix scenario).
    pub mix: BTreeMap<&'static str, u32>,
    /// `closed` (clients) or `open` (rate).
    pub model: &'static str,
    /// Clients or requests per second, as given: `4`, `1,2,4,8`, `10..100`.
    pub level: String,
    pub step_s: Option<f64>,
    pub duration_s: f64,
    pub requests: Option<u64>,
    pub warmup_s: f64,
    pub connections: u32,
    pub max_in_flight: Option<u32>,
    pub timeout_s: f64,
    pub depth: u32,
    pub nodes: u64,
    pub movetime_ms: u64,
    pub multipv: u32,
    pub batch: u32,
    pub game_plies: u32,
    pub elo: u32,
    pub positions: String,
    pub position_count: usize,
    pub seed: u64,
    pub metrics: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct Engine {
    /// Nodes the answers reported (each search's total once).
    pub nodes: u64,
    pub nodes_per_s: f64,
    /// Positions analysed or evaluated by the successful calls.
    pub positions: u64,
    pub positions_per_s: f64,
}

#[derive(Debug, Serialize)]
pub struct RunResult {
    /// From the start of the measured run to the end of its last call.
    pub wall_s: f64,
    /// `duration` or `requests`: which bound ended the run.
    pub stopped_by: &'static str,
    pub requests: u64,
    pub ok: u64,
    pub errors: u64,
    /// Errors as a percentage of requests.
    pub error_rate: f64,
    /// Requests completed per second.
    pub rate: f64,
    pub ok_rate: f64,
    /// Successful calls; from the intended send time in the open model.
    pub latency_ms: Latency,
    /// Successful calls from the moment they were sent (the open model's late sends excluded).
    pub service_time_ms: Latency,
    pub error_latency_ms: Latency,
    pub codes: BTreeMap<String, u64>,
    /// The first message of each error code.
    pub error_samples: BTreeMap<String, String>,
    /// Open model: sends more than 2 ms behind schedule (the generator, the machine or
    /// --max-in-flight could not keep up), and how far behind the sends were.
    pub late_sends: u64,
    pub send_lag_ms: Latency,
    /// Calls still running when the drain gave up (0 unless a server ignores deadlines).
    pub unfinished: u64,
    pub engine: Engine,
    /// Calls refused with RESOURCE_EXHAUSTED, by what refused them, and what to do about it.
    pub refused: Vec<Refusal>,
}

/// Calls one limit refused with RESOURCE_EXHAUSTED.
#[derive(Debug, Serialize)]
pub struct Refusal {
    /// `gateway-rate-limit`, `search-busy` or `other`.
    pub by: &'static str,
    pub count: u64,
    /// Why, and how to lift the limit, in plain words.
    pub explanation: String,
}

#[derive(Debug, Serialize)]
pub struct MethodResult {
    pub method: String,
    pub requests: u64,
    pub ok: u64,
    pub errors: u64,
    pub rate: f64,
    pub codes: BTreeMap<String, u64>,
    pub latency_ms: Latency,
    pub engine: Engine,
    /// Calls of this method the servers counted in the same window, by service.
    pub server_counts: BTreeMap<String, u64>,
}

#[derive(Debug, Serialize)]
pub struct StageResult {
    pub index: usize,
    pub level: f64,
    pub start_s: f64,
    pub end_s: f64,
    pub requests: u64,
    pub ok: u64,
    pub errors: u64,
    pub rate: f64,
    pub ok_rate: f64,
    pub latency_ms: Latency,
    pub engine: Engine,
}

#[derive(Debug, Serialize)]
pub struct SecondResult {
    pub second: u64,
    pub level: f64,
    pub ok: u64,
    pub errors: u64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub nodes: u64,
    pub positions: u64,
    /// The search service's queue depth and running searches, read during that second.
    pub queue_depth: Option<f64>,
    pub active_searches: Option<f64>,
}

#[derive(Debug, Serialize)]
pub struct ServerCall {
    pub method: String,
    pub code: String,
    pub count: u64,
}

#[derive(Debug, Serialize)]
pub struct ServerHandling {
    pub method: String,
    pub count: u64,
    pub mean_ms: f64,
}

#[derive(Debug, Serialize)]
pub struct GaugeSummary {
    pub series: String,
    pub min: f64,
    pub mean: f64,
    pub max: f64,
    pub samples: usize,
}

#[derive(Debug, Serialize)]
pub struct SearchSide {
    pub nodes: u64,
    pub nodes_per_s: f64,
    pub searches: u64,
    pub searches_per_s: f64,
    pub rejected: u64,
    pub cancelled: u64,
    pub static_evaluations: u64,
}

#[derive(Debug, Serialize)]
pub struct ServerResult {
    pub url: String,
    /// The `service` label of its metrics (`gateway`, `search`, `rules`).
    pub service: String,
    /// Why a read failed, if one did.
    pub error: Option<String>,
    /// Calls finished between the reads before and after the measured run.
    pub calls: Vec<ServerCall>,
    pub handling: Vec<ServerHandling>,
    /// Every other counter that moved, `name{labels}` -> increase.
    pub counters: BTreeMap<String, f64>,
    /// Gauges read once a second during the run.
    pub gauges: Vec<GaugeSummary>,
    pub search: Option<SearchSide>,
}

#[derive(Debug, Default, Serialize)]
pub struct WarmupResult {
    pub seconds: f64,
    pub requests: u64,
    pub errors: u64,
}
