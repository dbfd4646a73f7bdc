//! Forwarded calls without the decode and re-encode of what the gateway only passes on.
//!
//! A unary call the gateway forwards as it came (every rules query, the game calls but
//! WatchGame, the unary analysis calls) is served here before the generated servers see it:
//! the request is decoded once, for the gateway's own checks (`--max-moves`, `--max-pgn-bytes`,
//! `--max-batch`) and the idempotency key of a call that changes a game, and then the bytes it
//! came in as go to the backend; the backend's answer goes back to the caller byte for byte,
//! never decoded. Only a keyed call that arrives without a key is encoded again, with the key
//! the gateway gives it.
//!
//! Everything else about the call is the generated server's and client's: the same tonic
//! server (compression, size limits, framing errors) and client (deadline, metadata, the
//! replicas' retry and ejection), the same admission ([`Gateway::admit`]), the same errors. A
//! request that is not valid protobuf gets the same `INVALID_ARGUMENT` as from
//! [`chess_proto::ChessCodec`]; a request that breaks a limit the same field violation.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use chess_proto::ensure_request_id;
use chess_proto::v1::{
    AnalyzeRequest, BestMoveRequest, ClaimDrawRequest, ConvertMovesRequest, CreateGameRequest,
    DescribePositionRequest, EvaluatePositionsRequest, GetGameRequest, LegalMovesRequest,
    MakeMoveRequest, ParsePgnRequest, PositionStatusRequest, ResignRequest, RespondToDrawRequest,
    ReviewGameRequest, TakeBackRequest, TouchPieceRequest, ValidateFenRequest, WinnabilityRequest,
    WritePgnRequest,
};
use chess_service_kit::GZIP_MIN_BYTES;
use prost::Message;
use tonic::body::Body;
use tonic::codec::CompressionEncoding::Gzip;
use tonic::server::{NamedService, UnaryService};
use tonic::{Request, Response, Status};

use crate::make_move::make_move_forwarded;
use crate::replicas::Retry;
use crate::services::Gateway;
use crate::upstream::{Compression, client};

mod client;
mod codec;

pub(crate) use client::{MAKE_MOVE, Method, RawClient};
pub(crate) use codec::Checked;
use codec::ServerCodec;

// ---------------------------------------------------------------------------------------------
// The server

/// Which backend a forwarded method goes to.
#[derive(Clone, Copy, Debug)]
enum Pool {
    Rules,
    Search,
}

/// How one method is forwarded.
struct Route<T> {
    method: Method,
    pool: Pool,
    retry: Retry,
    /// The gateway's checks of the request; `true` when it changed the request (a keyed call
    /// given its idempotency key), which then goes encoded again.
    prepare: fn(&Gateway, &mut T) -> Result<bool, Status>,
}

/// A request's checks: none.
fn unchecked<T>(_: &Gateway, _: &mut T) -> Result<bool, Status> {
    Ok(false)
}

/// The idempotency key of a call that changes a game: the caller's, or one given here.
fn keyed(request_id: &mut String) -> bool {
    let given = request_id.is_empty();
    ensure_request_id(request_id);
    given
}

/// Server settings of the forwarded methods, as the generated servers have them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settings {
    /// Largest request message (`max_decoding_message_size`).
    pub max_message: usize,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type Handler = fn(Arc<Gateway>, Settings, http::Request<Body>) -> BoxFuture<http::Response<Body>>;

/// A service of the gateway with its forwarded methods served here and the rest (streams, the
/// gateway's own calls) by `S`, the generated server.
#[derive(Clone)]
pub(crate) struct Forwarding<S> {
    gateway: Arc<Gateway>,
    settings: Settings,
    routes: fn(&str) -> Option<Handler>,
    rest: S,
}

impl<S: NamedService> NamedService for Forwarding<S> {
    const NAME: &'static str = S::NAME;
}

impl<S> tower::Service<http::Request<Body>> for Forwarding<S>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<http::Response<Body>, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.rest.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        match (self.routes)(request.uri().path()) {
            Some(handler) => {
                let answer = handler(self.gateway.clone(), self.settings, request);
                Box::pin(async move { Ok(answer.await) })
            }
            None => Box::pin(self.rest.call(request)),
        }
    }
}

/// Serves one forwarded call: tonic's unary server with [`ServerCodec`], the gateway's
/// settings, and [`forward`] as the handler.
fn serve<T: Message + Default + Send + 'static>(
    route: &'static Route<T>,
    gateway: Arc<Gateway>,
    settings: Settings,
    request: http::Request<Body>,
) -> BoxFuture<http::Response<Body>> {
    Box::pin(async move {
        let mut grpc = tonic::server::Grpc::new(ServerCodec::<T>::default())
            .accept_compressed(Gzip)
            .send_compressed(Gzip)
            .max_decoding_message_size(settings.max_message);
        grpc.unary(Forward { gateway, route }, request).await
    })
}

struct Forward<T: 'static> {
    gateway: Arc<Gateway>,
    route: &'static Route<T>,
}

impl<T: Message + Default + Send + 'static> UnaryService<Checked<T>> for Forward<T> {
    type Response = Bytes;
    type Future = BoxFuture<Result<Response<Bytes>, Status>>;

    fn call(&mut self, request: Request<Checked<T>>) -> Self::Future {
        Box::pin(forward(self.gateway.clone(), self.route, request))
    }
}

/// One forwarded call: admitted, checked, sent on as it came (or encoded again with the key it
/// was given), the answer passed back as it came; small answers uncompressed.
async fn forward<T: Message + Default + Send + 'static>(
    gateway: Arc<Gateway>,
    route: &'static Route<T>,
    request: Request<Checked<T>>,
) -> Result<Response<Bytes>, Status> {
    let (call, Checked { mut message, bytes }) = gateway.admit(route.method.name, request, true)?;
    let bytes = if (route.prepare)(&gateway, &mut message)? {
        Bytes::from(message.encode_to_vec())
    } else {
        bytes
    };
    let gzip = gateway.backend_gzip();
    let gzip = Compression {
        accept: gzip,
        send: gzip && bytes.len() >= GZIP_MIN_BYTES,
    };
    let pool = match route.pool {
        Pool::Rules => gateway.rules(),
        Pool::Search => gateway.search(),
    };
    let method = &route.method;
    let (_, response) = pool
        .call(
            &call,
            bytes,
            route.retry,
            |b| client!(RawClient, b, gzip),
            |mut c, r| async move { c.unary(method, r).await },
        )
        .await?;
    Ok(small_uncompressed(response))
}

/// [`chess_service_kit::gzip_if_large`] for an encoded answer.
pub(crate) fn small_uncompressed(mut response: Response<Bytes>) -> Response<Bytes> {
    if response.get_ref().len() < GZIP_MIN_BYTES {
        response.disable_compression();
    }
    response
}

/// MakeMove, forwarded as it came, with its own settling of a retried move
/// ([`make_move_forwarded`]).
fn serve_make_move(
    gateway: Arc<Gateway>,
    settings: Settings,
    request: http::Request<Body>,
) -> BoxFuture<http::Response<Body>> {
    struct MakeMove(Arc<Gateway>);
    impl UnaryService<Checked<MakeMoveRequest>> for MakeMove {
        type Response = Bytes;
        type Future = BoxFuture<Result<Response<Bytes>, Status>>;

        fn call(&mut self, request: Request<Checked<MakeMoveRequest>>) -> Self::Future {
            let gateway = self.0.clone();
            Box::pin(async move {
                let (call, Checked { mut message, bytes }) =
                    gateway.admit("MakeMove", request, true)?;
                let bytes = if keyed(&mut message.request_id) {
                    Bytes::from(message.encode_to_vec())
                } else {
                    bytes
                };
                make_move_forwarded(
                    gateway.rules(),
                    gateway.backend_gzip(),
                    &call,
                    message,
                    bytes,
                )
                .await
                .map(small_uncompressed)
            })
        }
    }
    Box::pin(async move {
        let mut grpc = tonic::server::Grpc::new(ServerCodec::<MakeMoveRequest>::default())
            .accept_compressed(Gzip)
            .send_compressed(Gzip)
            .max_decoding_message_size(settings.max_message);
        grpc.unary(MakeMove(gateway), request).await
    })
}

/// The forwarded methods of one service: `$fn(path)` gives the handler of a forwarded path.
/// Each entry: path, request type, backend, retry, checks (`|gateway, message| -> Result<bool,
/// Status>`, true when the message was changed).
macro_rules! routes {
    ($fn:ident, $service:expr, {
        $($name:literal: $request:ty => $pool:ident, $retry:expr, $prepare:expr;)*
    } $(, $extra_path:literal => $extra:expr)*) => {
        fn $fn(path: &str) -> Option<Handler> {
            match path {
                $(
                    concat!("/", $service, "/", $name) => Some(|gateway, settings, request| {
                        static ROUTE: Route<$request> = Route {
                            method: Method {
                                service: $service,
                                name: $name,
                                path: concat!("/", $service, "/", $name),
                            },
                            pool: Pool::$pool,
                            retry: $retry,
                            prepare: $prepare,
                        };
                        serve(&ROUTE, gateway, settings, request)
                    }),
                )*
                $($extra_path => Some($extra),)*
                _ => None,
            }
        }
    };
}

routes!(rules_routes, "chess.v1.RulesService", {
    "LegalMoves": LegalMovesRequest => Rules, Retry::Safe,
        |g, m| g.check_moves("moves", m.moves.len()).map(|()| false);
    "ConvertMoves": ConvertMovesRequest => Rules, Retry::Safe,
        |g, m| g.check_moves("moves", m.moves.len()).map(|()| false);
    "ValidateFen": ValidateFenRequest => Rules, Retry::Safe, unchecked;
    "PositionStatus": PositionStatusRequest => Rules, Retry::Safe,
        |g, m| g.check_moves("moves", m.moves.len()).map(|()| false);
    "ParsePgn": ParsePgnRequest => Rules, Retry::Safe,
        |g, m| g.check_pgn(&m.pgn).map(|()| false);
    "WritePgn": WritePgnRequest => Rules, Retry::Safe,
        |g, m| g.check_moves("moves", m.moves.len()).map(|()| false);
    "DescribePosition": DescribePositionRequest => Rules, Retry::Safe,
        |g, m| g.check_moves("moves", m.moves.len()).map(|()| false);
    "Winnability": WinnabilityRequest => Rules, Retry::Safe,
        |g, m| g.check_moves("moves", m.moves.len()).map(|()| false);
});

routes!(game_routes, "chess.v1.GameService", {
    "CreateGame": CreateGameRequest => Rules, Retry::Safe, |_, m| Ok(keyed(&mut m.request_id));
    "GetGame": GetGameRequest => Rules, Retry::Safe, unchecked;
    "Resign": ResignRequest => Rules, Retry::Safe, |_, m| Ok(keyed(&mut m.request_id));
    "RespondToDraw": RespondToDrawRequest => Rules, Retry::Safe,
        |_, m| Ok(keyed(&mut m.request_id));
    "ClaimDraw": ClaimDrawRequest => Rules, Retry::Safe, |_, m| Ok(keyed(&mut m.request_id));
    "TouchPiece": TouchPieceRequest => Rules, Retry::Safe, |_, m| Ok(keyed(&mut m.request_id));
    "TakeBack": TakeBackRequest => Rules, Retry::Safe, |_, m| Ok(keyed(&mut m.request_id));
}, "/chess.v1.GameService/MakeMove" => serve_make_move);

routes!(analysis_routes, "chess.v1.AnalysisService", {
    "Analyze": AnalyzeRequest => Search, Retry::Safe,
        |g, m| g.check_moves("moves", m.moves.len()).map(|()| false);
    "BestMove": BestMoveRequest => Search, Retry::Safe,
        |g, m| g.check_moves("moves", m.moves.len()).map(|()| false);
    "ReviewGame": ReviewGameRequest => Search, Retry::Safe,
        |g, m| g.check_pgn(&m.pgn).map(|()| false);
    "EvaluatePositions": EvaluatePositionsRequest => Search, Retry::Safe,
        |g, m| g.check_batch("fens", m.fens.len()).map(|()| false);
});

impl<S> Forwarding<S> {
    /// chess.v1.RulesService: every method forwarded here.
    pub fn rules(gateway: Arc<Gateway>, settings: Settings, rest: S) -> Forwarding<S> {
        Forwarding {
            gateway,
            settings,
            routes: rules_routes,
            rest,
        }
    }

    /// chess.v1.GameService: all but WatchGame forwarded here.
    pub fn games(gateway: Arc<Gateway>, settings: Settings, rest: S) -> Forwarding<S> {
        Forwarding {
            gateway,
            settings,
            routes: game_routes,
            rest,
        }
    }

    /// chess.v1.AnalysisService: the unary methods forwarded here, the streams by `rest`.
    pub fn analysis(gateway: Arc<Gateway>, settings: Settings, rest: S) -> Forwarding<S> {
        Forwarding {
            gateway,
            settings,
            routes: analysis_routes,
            rest,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::codec::not_protobuf;
    use super::*;

    const RULES: &str = "chess.v1.RulesService";
    const GAMES: &str = "chess.v1.GameService";
    const ANALYSIS: &str = "chess.v1.AnalysisService";

    #[test]
    fn every_route_is_the_method_it_names() {
        for (routes, service, names) in [
            (
                rules_routes as fn(&str) -> Option<Handler>,
                RULES,
                &[
                    "LegalMoves",
                    "ConvertMoves",
                    "ValidateFen",
                    "PositionStatus",
                    "ParsePgn",
                    "WritePgn",
                    "DescribePosition",
                    "Winnability",
                ][..],
            ),
            (
                game_routes,
                GAMES,
                &[
                    "CreateGame",
                    "GetGame",
                    "MakeMove",
                    "Resign",
                    "RespondToDraw",
                    "ClaimDraw",
                    "TouchPiece",
                    "TakeBack",
                ],
            ),
            (
                analysis_routes,
                ANALYSIS,
                &["Analyze", "BestMove", "ReviewGame", "EvaluatePositions"],
            ),
        ] {
            for name in names {
                assert!(routes(&format!("/{service}/{name}")).is_some(), "{name}");
            }
        }
        // Streams and the gateway's own calls are the generated servers'.
        assert!(game_routes("/chess.v1.GameService/WatchGame").is_none());
        assert!(analysis_routes("/chess.v1.AnalysisService/AnalyzeStream").is_none());
        assert!(analysis_routes("/chess.v1.AnalysisService/AnalyzeBatch").is_none());
        assert!(rules_routes("/chess.v1.RulesService/Nothing").is_none());
    }

    #[test]
    fn a_request_that_is_not_protobuf_is_worded_as_the_chess_codec_words_it() {
        let error = LegalMovesRequest::decode(&b"\x0a\xff"[..]).unwrap_err();
        let status = not_protobuf(error);
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
        assert!(
            status
                .message()
                .starts_with("the message is not valid protobuf for this call: "),
            "{}",
            status.message()
        );
        assert!(
            !status
                .message()
                .contains("failed to decode Protobuf message")
        );
    }

    #[test]
    fn a_key_is_given_only_to_a_call_without_one() {
        let mut none = String::new();
        assert!(keyed(&mut none));
        assert!(!none.is_empty());
        let mut some = "k-1".to_owned();
        assert!(!keyed(&mut some));
        assert_eq!(some, "k-1");
    }
}
