//! The two services as served: every unary answer goes through
//! [`chess_service_kit::gzip_if_large`], so the small ones (a rules query's answer, a game's
//! state) go uncompressed even to a caller that accepts gzip (the gateway does), and parsed or
//! written PGN and long games go compressed. The calls themselves are [`RulesApi`]'s and
//! [`GamesApi`]'s, unchanged.

use chess_proto::v1::game_service_server::GameService;
use chess_proto::v1::rules_service_server::RulesService;
use chess_proto::v1::{
    ClaimDrawRequest, ConvertMovesRequest, ConvertMovesResponse, CreateGameRequest,
    DescribePositionRequest, DescribePositionResponse, GameState, GetGameRequest,
    LegalMovesRequest, LegalMovesResponse, MakeMoveRequest, ParsePgnRequest, ParsePgnResponse,
    PositionStatusRequest, PositionStatusResponse, ResignRequest, RespondToDrawRequest,
    TakeBackRequest, TouchPieceRequest, ValidateFenRequest, ValidateFenResponse, WatchGameRequest,
    WinnabilityRequest, WinnabilityResponse, WritePgnRequest, WritePgnResponse,
};
use chess_service_kit::gzip_if_large;
use tonic::{Request, Response, Status};

use crate::games::GamesApi;
use crate::rules_api::RulesApi;

/// A service whose unary answers are compressed only when large.
pub(crate) struct SmallAnswers<T>(pub T);

/// Implements `$service` for `SmallAnswers<$inner>`: each unary method delegated to the inner
/// service and its answer marked, the rest (`$extra`) written out.
macro_rules! small_answers {
    (
        $service:ident for $inner:ty {
            $($method:ident($request:ty) -> $response:ty;)*
        }
        $($extra:item)*
    ) => {
        #[tonic::async_trait]
        impl $service for SmallAnswers<$inner> {
            $(
                async fn $method(
                    &self,
                    request: Request<$request>,
                ) -> Result<Response<$response>, Status> {
                    self.0.$method(request).await.map(gzip_if_large)
                }
            )*
            $($extra)*
        }
    };
}

small_answers! {
    RulesService for RulesApi {
        legal_moves(LegalMovesRequest) -> LegalMovesResponse;
        convert_moves(ConvertMovesRequest) -> ConvertMovesResponse;
        validate_fen(ValidateFenRequest) -> ValidateFenResponse;
        position_status(PositionStatusRequest) -> PositionStatusResponse;
        parse_pgn(ParsePgnRequest) -> ParsePgnResponse;
        write_pgn(WritePgnRequest) -> WritePgnResponse;
        describe_position(DescribePositionRequest) -> DescribePositionResponse;
        winnability(WinnabilityRequest) -> WinnabilityResponse;
    }
}

small_answers! {
    GameService for GamesApi {
        create_game(CreateGameRequest) -> GameState;
        get_game(GetGameRequest) -> GameState;
        make_move(MakeMoveRequest) -> GameState;
        resign(ResignRequest) -> GameState;
        respond_to_draw(RespondToDrawRequest) -> GameState;
        claim_draw(ClaimDrawRequest) -> GameState;
        touch_piece(TouchPieceRequest) -> GameState;
        take_back(TakeBackRequest) -> GameState;
    }

    type WatchGameStream = <GamesApi as GameService>::WatchGameStream;

    async fn watch_game(
        &self,
        request: Request<WatchGameRequest>,
    ) -> Result<Response<Self::WatchGameStream>, Status> {
        self.0.watch_game(request).await
    }
}
