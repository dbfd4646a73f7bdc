//! The gateway's four services as served, their small answers marked the one way every
//! service marks them ([`chess_service_kit::small_answers!`]): a rules query's answer, a
//! game's state or one position's lines go uncompressed even to a caller that accepts gzip,
//! parsed PGN, reviews and long games compressed. The calls themselves are [`Gateway`]'s.

use std::sync::Arc;

use chess_proto::v1::analysis_service_server::AnalysisService;
use chess_proto::v1::game_service_server::GameService;
use chess_proto::v1::gateway_service_server::GatewayService;
use chess_proto::v1::rules_service_server::RulesService;
use chess_proto::v1::{
    AnalyzeBatchRequest, AnalyzeRequest, AnalyzeResponse, BestMoveRequest, BestMoveResponse,
    ClaimDrawRequest, ConvertMovesRequest, ConvertMovesResponse, CreateGameRequest,
    DescribePositionRequest, DescribePositionResponse, EngineMoveRequest, EngineMoveResponse,
    EvaluatePositionsRequest, EvaluatePositionsResponse, GameState, GetGameRequest,
    LegalMovesRequest, LegalMovesResponse, MakeMoveRequest, ParsePgnRequest, ParsePgnResponse,
    PositionStatusRequest, PositionStatusResponse, ResignRequest, RespondToDrawRequest,
    ReviewGameRequest, ReviewGameResponse, ServerInfoRequest, ServerInfoResponse, TakeBackRequest,
    TouchPieceRequest, ValidateFenRequest, ValidateFenResponse, WatchGameRequest,
    WinnabilityRequest, WinnabilityResponse, WritePgnRequest, WritePgnResponse,
};
use tonic::{Request, Response, Status};

use crate::services::Gateway;

/// A service whose unary answers are compressed only when large.
pub(crate) struct SmallAnswers<T>(pub T);

chess_service_kit::small_answers! {
    SmallAnswers: RulesService for Arc<Gateway> {
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
    SmallAnswers: GameService for Arc<Gateway> {
        create_game(CreateGameRequest) -> GameState;
        get_game(GetGameRequest) -> GameState;
        make_move(MakeMoveRequest) -> GameState;
        resign(ResignRequest) -> GameState;
        respond_to_draw(RespondToDrawRequest) -> GameState;
        claim_draw(ClaimDrawRequest) -> GameState;
        touch_piece(TouchPieceRequest) -> GameState;
        take_back(TakeBackRequest) -> GameState;
    }

    type WatchGameStream = <Gateway as GameService>::WatchGameStream;

    async fn watch_game(
        &self,
        request: Request<WatchGameRequest>,
    ) -> Result<Response<Self::WatchGameStream>, Status> {
        self.0.watch_game(request).await
    }
}

chess_service_kit::small_answers! {
    SmallAnswers: AnalysisService for Arc<Gateway> {
        analyze(AnalyzeRequest) -> AnalyzeResponse;
        best_move(BestMoveRequest) -> BestMoveResponse;
        review_game(ReviewGameRequest) -> ReviewGameResponse;
        evaluate_positions(EvaluatePositionsRequest) -> EvaluatePositionsResponse;
    }

    type AnalyzeStreamStream = <Gateway as AnalysisService>::AnalyzeStreamStream;

    async fn analyze_stream(
        &self,
        request: Request<AnalyzeRequest>,
    ) -> Result<Response<Self::AnalyzeStreamStream>, Status> {
        self.0.analyze_stream(request).await
    }

    type AnalyzeBatchStream = <Gateway as AnalysisService>::AnalyzeBatchStream;

    async fn analyze_batch(
        &self,
        request: Request<AnalyzeBatchRequest>,
    ) -> Result<Response<Self::AnalyzeBatchStream>, Status> {
        self.0.analyze_batch(request).await
    }
}

chess_service_kit::small_answers! {
    SmallAnswers: GatewayService for Arc<Gateway> {
        server_info(ServerInfoRequest) -> ServerInfoResponse;
        engine_move(EngineMoveRequest) -> EngineMoveResponse;
    }
}
