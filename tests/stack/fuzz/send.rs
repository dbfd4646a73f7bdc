//! Sending a case as raw bytes, and judging the answer: a finding is any code a service
//! should not give, a call past its deadline, or metadata over gRPC's usual limit.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chess_integration_tests::raw::Raw;
use chess_integration_tests::rng::Rng;
use chess_integration_tests::status::{metadata_bytes, status_header_bytes};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::Channel;
use tonic::{Code, Request};

use super::MAX_METADATA_BYTES;
use super::hostile::{Ctx, message, mutate};
use super::schema::{RPCS, Rpc, Served};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Target {
    Gateway,
    Rules,
    Search,
}

#[derive(Debug, Default)]
pub(super) struct Tally {
    pub sent: usize,
    pub codes: BTreeMap<String, usize>,
    /// Distinct findings (RPC, target, what) with a count and one example request.
    pub findings: BTreeMap<String, (usize, String)>,
}

impl Tally {
    pub fn finding(&mut self, what: String, example: String) {
        self.findings.entry(what).or_insert((0, example)).0 += 1;
    }
}

/// The bytes the status would take as response headers (names, values and HPACK's 32 bytes
fn short(text: &str) -> String {
    let mut cut: String = text.chars().take(160).collect();
    if cut.len() < text.len() {
        cut.push_str(&format!("... ({} bytes)", text.len()));
    }
    cut
}

pub(super) struct Case {
    pub rpc: &'static Rpc,
    pub target: Target,
    body: Vec<u8>,
    mutation: &'static str,
    pub deadline: Duration,
}

impl Case {
    pub fn describe(&self) -> String {
        let shown: String = self
            .body
            .iter()
            .take(48)
            .map(|b| format!("{b:02x}"))
            .collect();
        format!(
            "{} at {:?}, {} bytes [{shown}{}], mutation {:?}, deadline {:?}",
            self.rpc.path,
            self.target,
            self.body.len(),
            if self.body.len() > 48 { "..." } else { "" },
            self.mutation,
            self.deadline
        )
    }
}

pub(super) fn make_case(rng: &mut Rng, ctx: &Ctx) -> Case {
    let rpc = rng.pick(RPCS);
    let target = match (rpc.served, rng.below(5)) {
        (Served::Rules, 0) => Target::Rules,
        (Served::Search, 0) => Target::Search,
        _ => Target::Gateway,
    };
    let mut body = Vec::new();
    message(rng, ctx, &mut body, rpc.fields, 0);
    let mutation = mutate(rng, &mut body);
    // Searches run to the deadline at worst; keep them short so the run stays short.
    let deadline = if rpc.served == Served::Rules {
        Duration::from_millis(2_000)
    } else {
        Duration::from_millis(50 + rng.below(700) as u64)
    };
    Case {
        rpc,
        target,
        body,
        mutation,
        deadline,
    }
}

/// Sends one case and returns its code, or a finding.
pub(super) async fn send(channel: Channel, case: &Case) -> Result<Code, String> {
    let mut grpc = tonic::client::Grpc::new(channel).max_decoding_message_size(64 << 20);
    grpc.ready()
        .await
        .map_err(|e| format!("channel not ready: {e}"))?;
    let mut request = Request::new(case.body.clone());
    request.set_timeout(case.deadline);
    let path = PathAndQuery::from_static(case.rpc.path);
    let started = Instant::now();
    let result = if case.rpc.streaming {
        match grpc.server_streaming(request, path, Raw).await {
            Err(status) => Err(status),
            Ok(response) => {
                let md = metadata_bytes(response.metadata());
                if md > MAX_METADATA_BYTES {
                    return Err(format!("response metadata of {md} bytes"));
                }
                let mut stream = response.into_inner();
                // Read to the end or three messages. A watch never ends by itself: its
                // deadline must end it.
                let mut last = Ok(());
                for _ in 0..3 {
                    match stream.message().await {
                        Ok(Some(_)) => {}
                        Ok(None) => break,
                        Err(status) => {
                            last = Err(status);
                            break;
                        }
                    }
                }
                last
            }
        }
    } else {
        match grpc.unary(request, path, Raw).await {
            Ok(response) => {
                let md = metadata_bytes(response.metadata());
                if md > MAX_METADATA_BYTES {
                    return Err(format!("response metadata of {md} bytes"));
                }
                Ok(())
            }
            Err(status) => Err(status),
        }
    };
    let status = match result {
        Ok(()) => return Ok(Code::Ok),
        Err(status) => status,
    };
    let bytes = status_header_bytes(&status);
    if bytes > MAX_METADATA_BYTES {
        return Err(format!(
            "{:?} with {bytes} bytes of metadata: {}",
            status.code(),
            short(status.message())
        ));
    }
    let past_deadline = started.elapsed() >= case.deadline;
    match status.code() {
        Code::InvalidArgument
        | Code::NotFound
        | Code::FailedPrecondition
        | Code::OutOfRange
        | Code::ResourceExhausted
        | Code::AlreadyExists
        | Code::Aborted
        | Code::DeadlineExceeded => Ok(status.code()),
        // The client's own deadline, reported by tonic as CANCELLED.
        Code::Cancelled if past_deadline => Ok(status.code()),
        code => Err(format!("{code:?}: {}", short(status.message()))),
    }
}
