//! Issue 22, item 12: a request whose gRPC framing is malformed (a compression flag other than
//! 0 or 1, a gzip body that does not inflate, grpc-web-text that is not base64) is the
//! caller's mistake: INVALID_ARGUMENT, at the gateway and at each backend, never INTERNAL.

use std::net::SocketAddr;
use std::time::Duration;

use base64::Engine;
use bytes::Bytes;
use chess_integration_tests::Stack;
use tokio::net::TcpStream;

use chess_integration_tests::runtime;

/// What came back for a raw request: the headers, the body, the trailers.
struct Answer {
    headers: http::HeaderMap,
    body: Vec<u8>,
    trailers: Option<http::HeaderMap>,
}

impl Answer {
    /// The grpc-status and grpc-message, wherever they came: in the headers (trailers only),
    /// in the trailers, or (gRPC-Web) in the trailer frame at the end of the body.
    fn status(&self) -> (String, String) {
        let pick = |h: &http::HeaderMap| {
            h.get("grpc-status").map(|code| {
                let message = h
                    .get("grpc-message")
                    .map(|m| String::from_utf8_lossy(m.as_bytes()).into_owned())
                    .unwrap_or_default();
                (
                    String::from_utf8_lossy(code.as_bytes()).into_owned(),
                    message,
                )
            })
        };
        if let Some(found) = pick(&self.headers) {
            return found;
        }
        if let Some(found) = self.trailers.as_ref().and_then(pick) {
            return found;
        }
        let body = if self.headers.get("content-type").is_some_and(|t| {
            t.to_str()
                .unwrap_or_default()
                .starts_with("application/grpc-web-text")
        }) {
            base64::engine::general_purpose::STANDARD
                .decode(&self.body)
                .unwrap_or_default()
        } else {
            self.body.clone()
        };
        // gRPC-Web frames: flag byte, length, payload; 0x80 marks the trailers.
        let mut rest = &body[..];
        while rest.len() >= 5 {
            let len = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
            let payload = &rest[5..(5 + len).min(rest.len())];
            if rest[0] & 0x80 != 0 {
                let text = String::from_utf8_lossy(payload);
                let field = |name: &str| {
                    text.lines()
                        .find_map(|l| l.strip_prefix(name))
                        .map(|v| v.trim().to_owned())
                        .unwrap_or_default()
                };
                return (field("grpc-status:"), field("grpc-message:"));
            }
            rest = &rest[(5 + len).min(rest.len())..];
        }
        panic!(
            "no grpc-status: headers {:?}, body {:?}, trailers {:?}",
            self.headers, self.body, self.trailers
        );
    }
}

/// One request over HTTP/2 with prior knowledge, its body sent as given.
async fn raw_call(addr: SocketAddr, path: &str, headers: Headers<'_>, body: &[u8]) -> Answer {
    let tcp = TcpStream::connect(addr).await.expect("connect");
    let (client, conn) = h2::client::handshake(tcp).await.expect("handshake");
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let mut client = client.ready().await.expect("ready");
    let mut request = http::Request::post(format!("http://{addr}{path}")).header("te", "trailers");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let (response, mut send) = client
        .send_request(request.body(()).expect("request"), false)
        .expect("send");
    send.send_data(Bytes::copy_from_slice(body), true)
        .expect("body");
    let response = tokio::time::timeout(Duration::from_secs(10), response)
        .await
        .expect("answer in time")
        .expect("answer");
    let (parts, mut stream) = response.into_parts();
    let mut body = Vec::new();
    while let Some(chunk) = stream.data().await {
        let chunk = chunk.expect("body");
        let _ = stream.flow_control().release_capacity(chunk.len());
        body.extend_from_slice(&chunk);
    }
    let trailers = stream.trailers().await.expect("trailers");
    Answer {
        headers: parts.headers,
        body,
        trailers,
    }
}

const GRPC: (&str, &str) = ("content-type", "application/grpc");

/// Request headers, as (name, value).
type Headers<'a> = &'a [(&'a str, &'a str)];

/// Each broken frame at each service (and grpc-web-text at the gateway) gets grpc-status 3
/// and a message that says the request was malformed.
#[test]
fn malformed_grpc_framing_is_invalid_argument() {
    let stack = Stack::start();
    runtime().block_on(async {
        let targets = [
            (
                "gateway",
                stack.gateway.grpc,
                "/chess.v1.RulesService/ValidateFen",
            ),
            (
                "rules",
                stack.rules.grpc,
                "/chess.v1.RulesService/ValidateFen",
            ),
            (
                "search",
                stack.search.grpc,
                "/chess.v1.AnalysisService/BestMove",
            ),
            (
                "gateway",
                stack.gateway.grpc,
                "/chess.v1.AnalysisService/BestMove",
            ),
        ];
        // A gzip header, then bytes that are not deflate data.
        let bad_gzip = [
            1, 0, 0, 0, 14, 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff, 0xff, 0xff, 0xff,
        ];
        let cases: [(&str, Headers<'_>, &[u8]); 3] = [
            ("compression flag 7", &[GRPC], &[7, 0, 0, 0, 2, 0x0a, 0]),
            (
                "corrupt gzip",
                &[GRPC, ("grpc-encoding", "gzip")],
                &bad_gzip,
            ),
            ("a message cut short", &[GRPC], &[0, 0, 0, 0, 9, 0x0a, 0]),
        ];
        let mut wrong = Vec::new();
        for (service, addr, path) in targets {
            for (what, headers, body) in cases {
                let (code, message) = raw_call(addr, path, headers, body).await.status();
                if code != "3" || !message.starts_with("malformed") {
                    wrong.push(format!("{service} {path}, {what}: {code} {message}"));
                }
            }
        }
        // grpc-web-text whose body is not base64, at the gateway.
        let web_text = [
            ("content-type", "application/grpc-web-text"),
            ("x-grpc-web", "1"),
        ];
        let answer = raw_call(
            stack.gateway.grpc,
            "/chess.v1.RulesService/ValidateFen",
            &web_text,
            b"!!!!not-base64**",
        )
        .await;
        let (code, message) = answer.status();
        if code != "3" || !message.starts_with("malformed") {
            wrong.push(format!(
                "gateway, grpc-web-text not base64: {code} {message}"
            ));
        }
        assert!(
            wrong.is_empty(),
            "not INVALID_ARGUMENT:\n{}",
            wrong.join("\n")
        );
    });
}
