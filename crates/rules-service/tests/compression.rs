//! The real `chess-rules-service` gzips an answer only when it is large: a small query's answer
//! goes uncompressed even to a caller that accepts gzip (the gateway does), a parsed PGN of
//! many games goes compressed. Read off the wire: the gRPC message prefix's compressed flag.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use bytes::{BufMut, Bytes, BytesMut};
use chess_proto::v1::{ParsePgnRequest, ParsePgnResponse, ValidateFenRequest};
use prost::Message;

/// The service process, stopped when the test ends (passed or not).
struct Service(Child);

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start() -> (Service, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_chess-rules-service"))
        .args(["--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"])
        .args(["--store", "memory"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start chess-rules-service");
    let stdout = child.stdout.take().unwrap();
    let service = Service(child);
    let mut lines = BufReader::new(stdout).lines();
    let addr = loop {
        let line = lines.next().expect("a LISTENING line").unwrap();
        if let Some(rest) = line.strip_prefix("LISTENING ") {
            let grpc = rest.split(' ').find_map(|w| w.strip_prefix("grpc="));
            break grpc.unwrap().to_owned();
        }
    };
    (service, addr)
}

/// One unary call over a bare HTTP/2 connection, accepting gzip when `accept_gzip`, checked to
/// succeed (grpc-status 0): the answer's compressed flag and its message bytes as sent.
async fn call(addr: &str, method: &str, request: impl Message, accept_gzip: bool) -> (u8, Bytes) {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (client, connection) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(connection);
    let mut client = client.ready().await.unwrap();
    let mut head = http::Request::post(format!("http://{addr}/chess.v1.RulesService/{method}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers");
    if accept_gzip {
        head = head.header("grpc-accept-encoding", "gzip");
    }
    let (answer, mut send) = client.send_request(head.body(()).unwrap(), false).unwrap();
    let message = request.encode_to_vec();
    let mut frame = BytesMut::new();
    frame.put_u8(0);
    frame.put_u32(u32::try_from(message.len()).unwrap());
    frame.put_slice(&message);
    send.send_data(frame.freeze(), true).unwrap();
    let answer = answer.await.unwrap();
    assert_eq!(answer.status(), 200);
    let mut body = answer.into_body();
    let mut data = BytesMut::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.unwrap();
        let _ = body.flow_control().release_capacity(chunk.len());
        data.extend_from_slice(&chunk);
    }
    let trailers = body.trailers().await.unwrap().unwrap_or_default();
    assert_eq!(
        trailers.get("grpc-status").map(|v| v.to_str().unwrap()),
        Some("0"),
        "{trailers:?}"
    );
    assert!(data.len() >= 5, "no message in the answer");
    let length = u32::from_be_bytes([data[1], data[2], data[3], data[4]]) as usize;
    assert_eq!(data.len(), 5 + length);
    (data[0], data.freeze().slice(5..))
}

#[test]
fn only_large_answers_are_gzipped() {
    let (_service, addr) = start();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let fen = ValidateFenRequest {
            fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".into(),
        };
        for accept_gzip in [true, false] {
            let (compressed, _) = call(&addr, "ValidateFen", fen.clone(), accept_gzip).await;
            assert_eq!(compressed, 0, "a small answer is sent plain");
        }

        let pgn: String = (0..40)
            .map(|i| format!("[Event \"game {i}\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 1-0\n\n"))
            .collect();
        let request = ParsePgnRequest { pgn };
        let (compressed, gzipped) = call(&addr, "ParsePgn", request.clone(), true).await;
        assert_eq!(
            compressed, 1,
            "a large answer is gzipped for a caller accepting gzip"
        );
        let (compressed, plain) = call(&addr, "ParsePgn", request, false).await;
        assert_eq!(compressed, 0, "and sent plain to one that does not");
        let answer = ParsePgnResponse::decode(plain).unwrap();
        assert_eq!(answer.valid_games, 40);
        assert!(answer.encoded_len() >= chess_service_kit::GZIP_MIN_BYTES);
        assert!(
            gzipped.len() < answer.encoded_len() / 2,
            "{} bytes gzipped",
            gzipped.len()
        );
    });
}
