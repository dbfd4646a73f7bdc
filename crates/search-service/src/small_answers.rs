//! The analysis service as served, its small answers marked the one way every service marks
//! them ([`chess_service_kit::small_answers!`]): one position's lines and a best move go
//! uncompressed even to a caller that accepts gzip (the gateway does), a reviewed game or a
//! large batch of evaluations compressed. The calls themselves are [`SearchApi`]'s.

use chess_proto::v1::analysis_service_server::AnalysisService;
use chess_proto::v1::{
    AnalyzeBatchRequest, AnalyzeRequest, AnalyzeResponse, BestMoveRequest, BestMoveResponse,
    EvaluatePositionsRequest, EvaluatePositionsResponse, ReviewGameRequest, ReviewGameResponse,
};
use tonic::{Request, Response, Status};

use crate::api::SearchApi;

/// A service whose unary answers are compressed only when large.
pub(crate) struct SmallAnswers<T>(pub T);

chess_service_kit::small_answers! {
    SmallAnswers: AnalysisService for SearchApi {
        analyze(AnalyzeRequest) -> AnalyzeResponse;
        best_move(BestMoveRequest) -> BestMoveResponse;
        review_game(ReviewGameRequest) -> ReviewGameResponse;
        evaluate_positions(EvaluatePositionsRequest) -> EvaluatePositionsResponse;
    }

    type AnalyzeStreamStream = <SearchApi as AnalysisService>::AnalyzeStreamStream;

    async fn analyze_stream(
        &self,
        request: Request<AnalyzeRequest>,
    ) -> Result<Response<Self::AnalyzeStreamStream>, Status> {
        self.0.analyze_stream(request).await
    }

    type AnalyzeBatchStream = <SearchApi as AnalysisService>::AnalyzeBatchStream;

    async fn analyze_batch(
        &self,
        request: Request<AnalyzeBatchRequest>,
    ) -> Result<Response<Self::AnalyzeBatchStream>, Status> {
        self.0.analyze_batch(request).await
    }
}
