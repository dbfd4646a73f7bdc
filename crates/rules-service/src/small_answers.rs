//! The two services as served, their small answers marked the one way every service marks them
//! ([`chess_service_kit::small_answers!`]): a rules query's answer and a game's state go
//! uncompressed even to a caller that accepts gzip (the gateway does), parsed or written PGN
//! and long games compressed. The calls themselves are [`RulesApi`]'s and [`GamesApi`]'s.

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
use tonic::{Request, Response, Status};

use crate::games::GamesApi;
use crate::rules_api::RulesApi;

/// A service whose unary answers are compressed only when large.
pub(crate) struct SmallAnswers<T>(pub T);

chess_service_kit::small_answers! {
    SmallAnswers: RulesService for RulesApi {
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

chess_service_kit::small_answers! {
    SmallAnswers: GameService for GamesApi {
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
