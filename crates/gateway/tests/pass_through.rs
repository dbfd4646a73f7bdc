//! Forwarded calls pass their bytes through (crates/gateway/src/passthrough.rs): a backend's
//! answer reaches the caller byte for byte, a request reaches the backend as the caller sent
//! it (a keyed call without a key excepted: it gets one), and the gateway's own checks still
//! refuse a bad argument with INVALID_ARGUMENT and its field violation before the backend sees
//! anything.

mod common;

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::{Buf, BufMut, Bytes};
use chess_proto::v1::*;
use common::{Gateway, channel, violation};
use http::uri::PathAndQuery;
use prost::Message;
use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::body::Body;
use tonic::codec::{BufferSettings, Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::server::{NamedService, UnaryService};
use tonic::transport::Server;
use tonic::{Code, Request, Response, Status};

/// Messages as bytes, both ways.
#[derive(Clone, Copy, Default)]
struct Raw;

impl Codec for Raw {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = Raw;
    type Decoder = Raw;

    fn encoder(&mut self) -> Raw {
        Raw
    }

    fn decoder(&mut self) -> Raw {
        Raw
    }
}

impl Encoder for Raw {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put(item);
        Ok(())
    }

    fn buffer_settings(&self) -> BufferSettings {
        BufferSettings::default()
    }
}

impl Decoder for Raw {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }

    fn buffer_settings(&self) -> BufferSettings {
        BufferSettings::default()
    }
}

/// What reached a backend: (path, request bytes).
type Seen = Arc<Mutex<Vec<(String, Bytes)>>>;

trait Named: Clone + Send + Sync + 'static {
    const NAME: &'static str;
}

#[derive(Clone)]
struct Rules;
impl Named for Rules {
    const NAME: &'static str = "chess.v1.RulesService";
}

#[derive(Clone)]
struct Games;
impl Named for Games {
    const NAME: &'static str = "chess.v1.GameService";
}

/// A backend that answers every call of its service with the same bytes and records what it
/// was sent.
#[derive(Clone)]
struct Canned<N> {
    answer: Bytes,
    seen: Seen,
    _name: N,
}

impl<N: Named> NamedService for Canned<N> {
    const NAME: &'static str = N::NAME;
}

impl<N: Named> tower::Service<http::Request<Body>> for Canned<N> {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<http::Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let answer = Answer {
            path: request.uri().path().to_owned(),
            answer: self.answer.clone(),
            seen: self.seen.clone(),
        };
        Box::pin(async move { Ok(tonic::server::Grpc::new(Raw).unary(answer, request).await) })
    }
}

struct Answer {
    path: String,
    answer: Bytes,
    seen: Seen,
}

impl UnaryService<Bytes> for Answer {
    type Response = Bytes;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Bytes>, Status>> + Send>>;

    fn call(&mut self, request: Request<Bytes>) -> Self::Future {
        self.seen
            .lock()
            .unwrap()
            .push((self.path.clone(), request.into_inner()));
        let answer = self.answer.clone();
        Box::pin(async move { Ok(Response::new(answer)) })
    }
}

/// Starts a canned rules and game backend on 127.0.0.1:0.
async fn start_canned(answer: Bytes) -> (SocketAddr, Seen) {
    let seen = Seen::default();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let rules = Canned {
        answer: answer.clone(),
        seen: seen.clone(),
        _name: Rules,
    };
    let games = Canned {
        answer,
        seen: seen.clone(),
        _name: Games,
    };
    tokio::spawn(
        Server::builder()
            .add_service(rules)
            .add_service(games)
            .serve_with_incoming(TcpListenerStream::new(listener)),
    );
    (addr, seen)
}

/// One call through the gateway with `request` as the message's bytes.
async fn call(gateway: &Gateway, path: &'static str, request: Bytes) -> Result<Bytes, Status> {
    let mut client = tonic::client::Grpc::new(gateway.channel().await);
    client.ready().await.unwrap();
    client
        .unary(Request::new(request), PathAndQuery::from_static(path), Raw)
        .await
        .map(Response::into_inner)
}

/// A field this build of the contract does not know (number 1000, varint 7): decoding and
/// encoding again would drop it.
fn unknown_field() -> Vec<u8> {
    let mut bytes = Vec::new();
    prost::encoding::encode_key(1000, prost::encoding::WireType::Varint, &mut bytes);
    prost::encoding::encode_varint(7, &mut bytes);
    bytes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarded_answer_and_request_arrive_byte_identical() {
    // An answer no encoder of ours would write: the fields out of order and an unknown one.
    let mut answer = LegalMovesResponse {
        fen: String::new(),
        moves: vec![Move {
            uci: "e2e4".into(),
            san: "e4".into(),
            coordinate: "e2-e4".into(),
        }],
    }
    .encode_to_vec();
    answer.extend(unknown_field());
    answer.extend(
        LegalMovesResponse {
            fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".into(),
            ..LegalMovesResponse::default()
        }
        .encode_to_vec(),
    );
    let answer = Bytes::from(answer);
    let canonical = LegalMovesResponse::decode(answer.clone())
        .unwrap()
        .encode_to_vec();
    assert_ne!(
        canonical, answer,
        "the answer must differ from its re-encoding"
    );

    let (backend, seen) = start_canned(answer.clone()).await;
    let gateway = Gateway::start(backend, &[]).await;

    let mut request = LegalMovesRequest {
        fen: String::new(),
        moves: vec!["e4".into()],
    }
    .encode_to_vec();
    request.extend(unknown_field());
    let request = Bytes::from(request);
    let got = call(
        &gateway,
        "/chess.v1.RulesService/LegalMoves",
        request.clone(),
    )
    .await
    .unwrap();
    assert_eq!(got, answer, "the answer arrives as the backend wrote it");
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        &[("/chess.v1.RulesService/LegalMoves".to_owned(), request)],
        "the request reaches the backend as the caller wrote it"
    );

    // A game call: the same, for a call with its idempotency key ...
    seen.lock().unwrap().clear();
    let mut keyed = MakeMoveRequest {
        game_id: "g1".into(),
        r#move: "e4".into(),
        expected_ply: Some(0),
        request_id: "key-1".into(),
        ..MakeMoveRequest::default()
    }
    .encode_to_vec();
    keyed.extend(unknown_field());
    let keyed = Bytes::from(keyed);
    let got = call(&gateway, "/chess.v1.GameService/MakeMove", keyed.clone())
        .await
        .unwrap();
    assert_eq!(got, answer);
    assert_eq!(seen.lock().unwrap()[0].1, keyed);

    // ... while one without a key reaches the backend with the key the gateway gave it.
    seen.lock().unwrap().clear();
    let unkeyed = CreateGameRequest {
        white: "Ann".into(),
        ..CreateGameRequest::default()
    };
    let got = call(
        &gateway,
        "/chess.v1.GameService/CreateGame",
        Bytes::from(unkeyed.encode_to_vec()),
    )
    .await
    .unwrap();
    assert_eq!(got, answer);
    let sent = CreateGameRequest::decode(seen.lock().unwrap()[0].1.clone()).unwrap();
    assert_eq!(sent.white, "Ann");
    assert!(!sent.request_id.is_empty(), "a key was given: {sent:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_argument_is_refused_before_the_backend_sees_it() {
    let (backend, seen) = start_canned(Bytes::new()).await;
    let gateway = Gateway::start(backend, &["--max-moves", "2"]).await;

    // Over the gateway's limit: INVALID_ARGUMENT naming the field.
    let request = LegalMovesRequest {
        fen: String::new(),
        moves: vec!["e4".into(), "e5".into(), "Nf3".into()],
    };
    let status = call(
        &gateway,
        "/chess.v1.RulesService/LegalMoves",
        Bytes::from(request.encode_to_vec()),
    )
    .await
    .unwrap_err();
    let (field, description) = violation(&status);
    assert_eq!(field, "moves");
    assert!(description.contains("limit of 2 moves"), "{description}");

    // Not protobuf at all: INVALID_ARGUMENT saying so.
    let status = call(
        &gateway,
        "/chess.v1.RulesService/PositionStatus",
        Bytes::from_static(b"\x0a\xff"),
    )
    .await
    .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(
        status
            .message()
            .starts_with("the message is not valid protobuf for this call: "),
        "{status:?}"
    );
    assert!(seen.lock().unwrap().is_empty(), "the backend saw nothing");

    // Within the limit the call goes through, and the typed clients see the same.
    let mut rules =
        chess_proto::v1::rules_service_client::RulesServiceClient::new(channel(gateway.addr).await);
    let answer = rules
        .legal_moves(LegalMovesRequest {
            fen: String::new(),
            moves: vec!["e4".into()],
        })
        .await
        .unwrap();
    assert_eq!(answer.get_ref(), &LegalMovesResponse::default());
    assert_eq!(seen.lock().unwrap().len(), 1);
}
