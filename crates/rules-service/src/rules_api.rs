//! `chess.v1.RulesService`: stateless rules queries.

use chess_knowledge::Verdict;
use chess_pgn::{PgnError, PgnGame};
use chess_proto::FieldViolation;
use chess_proto::v1::rules_service_server::RulesService;
use chess_proto::v1::{
    self, ConvertMovesRequest, ConvertMovesResponse, DescribePositionRequest,
    DescribePositionResponse, LegalMovesRequest, LegalMovesResponse, ParsePgnRequest,
    ParsePgnResponse, PositionStatusRequest, PositionStatusResponse, SideWinnability,
    ValidateFenRequest, ValidateFenResponse, WinnabilityRequest, WinnabilityResponse,
    WritePgnRequest, WritePgnResponse, side_winnability, winnability_request,
};
use chess_rules::{Color, DrawReason, EnPassantMode, FenOptions, Game, Outcome, Position};
use chess_wire::{
    color_from_proto, color_to_proto, draw_rule, move_from_text, move_to_proto, opening_to_proto,
    outcome_to_proto, position_from_fen, report_to_proto,
};
use tonic::{Request, Response, Status};

use crate::RequestLimits;

/// The stateless half of the rules service.
#[derive(Clone, Debug)]
pub struct RulesApi {
    limits: RequestLimits,
}

impl RulesApi {
    pub fn new(limits: RequestLimits) -> RulesApi {
        RulesApi { limits }
    }

    fn check_moves(&self, moves: &[String]) -> Result<(), Status> {
        if moves.len() > self.limits.max_moves {
            return Err(FieldViolation::new(
                "moves",
                format!(
                    "{} moves exceed the limit of {}",
                    moves.len(),
                    self.limits.max_moves
                ),
            )
            .into());
        }
        Ok(())
    }

    /// Plays `moves` from `fen` as a game, so that repetitions count.
    fn game_from(&self, fen: &str, moves: &[String], strict: bool) -> Result<Game, Status> {
        self.check_moves(moves)?;
        let mut game = Game::new(position_from_fen("fen", fen)?);
        for (i, text) in moves.iter().enumerate() {
            let field = format!("moves[{i}]");
            let m = move_from_text(&field, game.position(), text, strict)?;
            game.play(m)
                .map_err(|e| FieldViolation::new(&field, e.to_string()))?;
        }
        Ok(game)
    }
}

pub(crate) fn pgn_result_token(text: &str) -> Result<chess_pgn::GameResult, FieldViolation> {
    match text.trim() {
        "" => Ok(chess_pgn::GameResult::Unknown),
        t => t.parse::<chess_pgn::GameResult>().map_err(|_| {
            FieldViolation::new("result", format!("{t:?} is not 1-0, 0-1, 1/2-1/2 or *"))
        }),
    }
}

#[tonic::async_trait]
impl RulesService for RulesApi {
    #[tracing::instrument(skip_all, fields(fen = %request.get_ref().fen, moves = request.get_ref().moves.len()))]
    async fn legal_moves(
        &self,
        request: Request<LegalMovesRequest>,
    ) -> Result<Response<LegalMovesResponse>, Status> {
        let req = request.into_inner();
        let game = self.game_from(&req.fen, &req.moves, false)?;
        let pos = game.position();
        let moves = pos
            .legal_moves()
            .iter()
            .map(|&m| move_to_proto(pos, m))
            .collect();
        Ok(Response::new(LegalMovesResponse {
            fen: pos.fen(),
            moves,
        }))
    }

    #[tracing::instrument(skip_all, fields(fen = %request.get_ref().fen, moves = request.get_ref().moves.len()))]
    async fn convert_moves(
        &self,
        request: Request<ConvertMovesRequest>,
    ) -> Result<Response<ConvertMovesResponse>, Status> {
        let req = request.into_inner();
        self.check_moves(&req.moves)?;
        let mut pos = position_from_fen("fen", &req.fen)?;
        let mut out = ConvertMovesResponse::default();
        for (i, text) in req.moves.iter().enumerate() {
            let m = move_from_text(&format!("moves[{i}]"), &pos, text, req.strict)?;
            out.moves.push(move_to_proto(&pos, m));
            pos.play_unchecked(m);
            out.fens.push(pos.fen());
        }
        Ok(Response::new(out))
    }

    #[tracing::instrument(skip_all)]
    async fn validate_fen(
        &self,
        request: Request<ValidateFenRequest>,
    ) -> Result<Response<ValidateFenResponse>, Status> {
        let req = request.into_inner();
        if req.fen.trim().is_empty() {
            return Err(FieldViolation::new("fen", "empty FEN").into());
        }
        let pos = position_from_fen("fen", &req.fen)?;
        Ok(Response::new(ValidateFenResponse {
            fen: pos.fen(),
            plain_fen: pos.fen_with(FenOptions {
                en_passant: EnPassantMode::Always,
                counters: true,
            }),
            turn: color_to_proto(pos.turn()).into(),
            legal_move_count: pos.count_legal() as u32,
        }))
    }

    #[tracing::instrument(skip_all, fields(fen = %request.get_ref().fen, moves = request.get_ref().moves.len()))]
    async fn position_status(
        &self,
        request: Request<PositionStatusRequest>,
    ) -> Result<Response<PositionStatusResponse>, Status> {
        let req = request.into_inner();
        // Moves after an automatic end are refused by Game, with the move's field named.
        let game = self.game_from(&req.fen, &req.moves, false)?;
        Ok(Response::new(status_of(&game)))
    }

    #[tracing::instrument(skip_all, fields(bytes = request.get_ref().pgn.len()))]
    async fn parse_pgn(
        &self,
        request: Request<ParsePgnRequest>,
    ) -> Result<Response<ParsePgnResponse>, Status> {
        let req = request.into_inner();
        if req.pgn.len() > self.limits.max_pgn_bytes {
            return Err(FieldViolation::new(
                "pgn",
                format!(
                    "{} bytes exceed the limit of {}",
                    req.pgn.len(),
                    self.limits.max_pgn_bytes
                ),
            )
            .into());
        }
        let pgn = req.pgn;
        let max_games = self.limits.max_games;
        // Parsing is CPU work: keep it off the async workers.
        let out = tokio::task::spawn_blocking(move || parse_all(&pgn, max_games))
            .await
            .map_err(|e| Status::internal(format!("PGN parsing failed: {e}")))??;
        Ok(Response::new(out))
    }

    #[tracing::instrument(skip_all)]
    async fn write_pgn(
        &self,
        request: Request<WritePgnRequest>,
    ) -> Result<Response<WritePgnResponse>, Status> {
        let req = request.into_inner();
        let game = self.game_from(&req.start_fen, &req.moves, false)?;
        let mut pgn = PgnGame::new(game.start().clone());
        for (i, tag) in req.tags.iter().enumerate() {
            chess_pgn::check_tag(&tag.name, &tag.value).map_err(|e| {
                let part = match e {
                    chess_pgn::TagError::BadName { .. } => "name",
                    _ => "value",
                };
                FieldViolation::new(format!("tags[{i}].{part}"), e.to_string())
            })?;
            pgn.set_tag(&tag.name, tag.value.clone());
        }
        // FEN and SetUp tags must describe the start, so that the moves read back.
        chess_pgn::check_tags(&pgn).map_err(|e| {
            // set_tag keeps the last value given for a name.
            let i = req
                .tags
                .iter()
                .rposition(|t| t.name == e.tag())
                .unwrap_or(0);
            FieldViolation::new(format!("tags[{i}].value"), e.to_string())
        })?;
        let mut result = pgn_result_token(&req.result)?;
        match (result, game.outcome()) {
            (chess_pgn::GameResult::Unknown, Some(o)) => {
                result = o.result().parse().unwrap_or(result);
            }
            (given, Some(o)) if given.as_str() != o.result() => {
                return Err(FieldViolation::new(
                    "result",
                    format!("{} contradicts the final position: {o}", given.as_str()),
                )
                .into());
            }
            _ => {}
        }
        fill_moves(&mut pgn, &game);
        pgn.result = Some(result);
        pgn.set_tag("Result", result.as_str());
        // Everything is checked above; a failure here would be a bug in the writer.
        let text = pgn
            .to_pgn()
            .ok_or_else(|| Status::internal("PGN writing failed"))?;
        Ok(Response::new(WritePgnResponse { pgn: text }))
    }

    #[tracing::instrument(skip_all, fields(fen = %request.get_ref().fen, moves = request.get_ref().moves.len()))]
    async fn describe_position(
        &self,
        request: Request<DescribePositionRequest>,
    ) -> Result<Response<DescribePositionResponse>, Status> {
        let req = request.into_inner();
        let game = self.game_from(&req.fen, &req.moves, false)?;
        let report = chess_knowledge::describe(game.position());
        let opening = chess_knowledge::classify(game.start(), game.moves());
        Ok(Response::new(report_to_proto(&report, &opening)))
    }

    #[tracing::instrument(skip_all, fields(fen = %request.get_ref().fen, moves = request.get_ref().moves.len()))]
    async fn winnability(
        &self,
        request: Request<WinnabilityRequest>,
    ) -> Result<Response<WinnabilityResponse>, Status> {
        let req = request.into_inner();
        let sides = match color_from_proto("intended_winner", req.intended_winner)? {
            Some(c) => vec![c],
            None => vec![Color::White, Color::Black],
        };
        let mut limits = match winnability_request::Mode::try_from(req.mode) {
            Ok(winnability_request::Mode::Full) => chess_knowledge::WinnableBudget::full(),
            Ok(_) => chess_knowledge::WinnableBudget::quick(),
            Err(_) => {
                return Err(FieldViolation::new(
                    "mode",
                    format!("unknown mode value {}", req.mode),
                )
                .into());
            }
        };
        if req.node_budget > MAX_NODE_BUDGET {
            return Err(FieldViolation::new(
                "node_budget",
                format!(
                    "{} nodes exceed the limit of {MAX_NODE_BUDGET}",
                    req.node_budget
                ),
            )
            .into());
        }
        if req.node_budget > 0 {
            limits = limits.with_nodes(req.node_budget);
        }
        let game = self.game_from(&req.fen, &req.moves, false)?;
        let pos = game.position().clone();
        // Up to about a second of work per side in full mode: keep it off the async workers.
        let out = tokio::task::spawn_blocking(move || winnability_of(&pos, &sides, &limits))
            .await
            .map_err(|e| Status::internal(format!("winnability analysis failed: {e}")))?;
        Ok(Response::new(out))
    }
}

/// The largest node budget a caller may ask for (some tens of seconds of work).
const MAX_NODE_BUDGET: u64 = 50_000_000;

fn winnability_of(
    pos: &Position,
    sides: &[Color],
    limits: &chess_knowledge::WinnableBudget,
) -> WinnabilityResponse {
    let analyses: Vec<chess_knowledge::Analysis> = sides
        .iter()
        .map(|&c| chess_knowledge::winnable(pos, c, limits))
        .collect();
    let code: String = analyses
        .iter()
        .map(chess_knowledge::Analysis::letter)
        .collect();
    let dead = analyses.len() == 2 && analyses.iter().all(|a| a.verdict.is_unwinnable());
    WinnabilityResponse {
        fen: pos.fen(),
        sides: analyses
            .iter()
            .map(|a| SideWinnability {
                side: color_to_proto(a.winner).into(),
                verdict: match a.verdict {
                    Verdict::Winnable { .. } => side_winnability::Verdict::Winnable,
                    Verdict::Unwinnable { .. } => side_winnability::Verdict::Unwinnable,
                    Verdict::Undetermined => side_winnability::Verdict::Undetermined,
                }
                .into(),
                line_san: a.line_san(pos),
                line_uci: a.line_uci(),
                reason: a.reason().to_owned(),
                nodes: a.nodes,
                micros: a.elapsed.as_micros() as u64,
            })
            .collect(),
        code,
        dead_position: dead,
    }
}

/// Puts a game's moves into a PGN game's mainline.
pub(crate) fn fill_moves(pgn: &mut PgnGame, game: &Game) {
    for (ply, &m) in game.moves().iter().enumerate() {
        let pos = game.position_at(ply).expect("every ply has a position");
        pgn.root.nodes.push(chess_pgn::Node::new(m, pos.san(m)));
    }
}

pub(crate) fn status_of(game: &Game) -> PositionStatusResponse {
    let pos = game.position();
    // Dead positions by the quick winnability analysis (FIDE 5.2.2), not by material alone.
    let dead_reason = match game.outcome() {
        Some(Outcome::Draw {
            reason: DrawReason::Stalemate,
        })
        | Some(Outcome::Decisive { .. }) => None,
        _ => crate::session::dead_reason(pos),
    };
    let outcome = game.outcome().or_else(|| {
        dead_reason.as_ref().map(|_| Outcome::Draw {
            reason: DrawReason::DeadPosition,
        })
    });
    PositionStatusResponse {
        fen: pos.fen(),
        turn: color_to_proto(pos.turn()).into(),
        check: pos.is_check(),
        checkmate: pos.is_checkmate(),
        stalemate: pos.is_stalemate(),
        dead_position: dead_reason.is_some(),
        dead_reason: dead_reason.unwrap_or_default(),
        repetition_count: game.repetition_count() as u32,
        claimable_draw: game
            .claimable_draw()
            .map_or(v1::outcome::Rule::Unspecified, draw_rule)
            .into(),
        outcome: outcome.map(outcome_to_proto),
        legal_move_count: pos.count_legal() as u32,
        halfmove_clock: pos.halfmoves(),
        opening: Some(opening_to_proto(&chess_knowledge::classify(
            game.start(),
            game.moves(),
        ))),
    }
}

/// The error for a mainline that goes on after an automatic end (checkmate and stalemate
/// leave no legal move; this finds fivefold repetition, the seventy-five-move rule and dead
/// positions), naming the first move played after it.
fn moves_after_the_end(game: &PgnGame, number: usize) -> Option<String> {
    let mut played = Game::new(game.start.clone());
    for (m, node) in game.mainline().zip(&game.root.nodes) {
        if let Some(outcome) = played.outcome() {
            let pos = played.position();
            let dots = if pos.turn().is_white() { "." } else { "..." };
            return Some(format!(
                "game {number}, move {}{dots} {}: played after the game had ended: {outcome}",
                pos.fullmoves(),
                node.san
            ));
        }
        played.play(m).ok()?;
    }
    None
}

fn parse_all(pgn: &str, max_games: usize) -> Result<ParsePgnResponse, Status> {
    let mut out = ParsePgnResponse::default();
    for (i, result) in chess_pgn::read_games(pgn.as_bytes()).enumerate() {
        if i >= max_games {
            return Err(FieldViolation::new(
                "pgn",
                format!("more than {max_games} games in one request"),
            )
            .into());
        }
        let mut g = v1::PgnGame {
            index: i as u32 + 1,
            ..Default::default()
        };
        match result {
            Ok(game) if let Some(e) = moves_after_the_end(&game, i + 1) => {
                g.error = e;
                out.invalid_games += 1;
            }
            Ok(game) => {
                g.tags = game
                    .tags
                    .iter()
                    .map(|(n, v)| v1::PgnTag {
                        name: n.clone(),
                        value: v.clone(),
                    })
                    .collect();
                g.start_fen = game.start.fen();
                let mut pos: Position = game.start.clone();
                for m in game.mainline() {
                    g.moves.push(move_to_proto(&pos, m));
                    pos.play_unchecked(m);
                }
                g.final_fen = pos.fen();
                g.result = game.result.map_or("*", |r| r.as_str()).to_owned();
                out.valid_games += 1;
            }
            Err(PgnError::Game(e)) => {
                if let Some(at) = e.location() {
                    g.error_line = at.line as u32;
                    g.error_column = at.column as u32;
                }
                g.error = e.to_string();
                out.invalid_games += 1;
            }
            Err(PgnError::Read(e)) => {
                if let Some(s) = e.as_syntax() {
                    g.error_line = s.at.line as u32;
                    g.error_column = s.at.column as u32;
                }
                g.error = e.to_string();
                out.invalid_games += 1;
            }
        }
        out.games.push(g);
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
