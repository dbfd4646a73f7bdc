//! The arbiter's rules in a game: what an illegal move costs under each mode (FIDE 7.5.3:
//! two minutes to the opponent, the second loses; three strikes: the third loses), and
//! touch-move (FIDE 4.3: a touched piece must be moved or captured, j'adoube excepted).
//! [`crate::session::Session`] folds the `Foul` and `Touched` events through these.

use chess_rules::{
    CastlingSide, Color, DrawReason, Move, Outcome, Position, Role, Square, WinReason,
};
use serde::{Deserialize, Serialize};

use crate::session::{Event, Session, SessionError};

/// What happens to an illegal move in a game (chosen at creation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArbiterMode {
    /// Refused, the game unchanged.
    #[default]
    Reject,
    /// FIDE 7.5: a foul; the first adds two minutes to the opponent's clock, the second loses.
    Fide,
    /// A foul; the third loses.
    ThreeStrikes,
}

impl ArbiterMode {
    pub(crate) fn is_reject(&self) -> bool {
        *self == ArbiterMode::Reject
    }
}

/// At most this many touches (j'adoube included) during one move: each is a durable event
/// that every later state of the move carries, and a board has at most 32 pieces to touch.
pub const MAX_TOUCHES_PER_MOVE: usize = 32;

/// Time the opponent gets for a first illegal move under FIDE 7.5.3.
pub const FIDE_FOUL_BONUS_MS: i64 = 120_000;

/// The penalty a foul drew.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Penalty {
    /// FIDE 7.5.3: two minutes added to the opponent's clock.
    TwoMinutes,
    /// FIDE 7.5.3 without a clock: a warning.
    Warning,
    /// Under three strikes: strike `n` of 3.
    Strike(u32),
    /// The game ended (lost, or drawn when the opponent could not mate).
    GameOver(Outcome),
}

/// A recorded foul.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoulRecord {
    pub side: Color,
    pub attempted: String,
    pub reason: String,
    pub penalty: Penalty,
    /// Moves played when it happened.
    pub ply: u32,
    /// The side's fouls so far, this one included.
    pub count: u32,
}

impl FoulRecord {
    /// `two minutes added to black's clock`, `strike 2 of 3`, `1-0 (white wins by illegal
    /// moves)`.
    pub fn penalty_text(&self) -> String {
        match self.penalty {
            Penalty::TwoMinutes => format!("two minutes added to {}'s clock", !self.side),
            Penalty::Warning => "warning (no clock to add two minutes to)".to_string(),
            Penalty::Strike(n) => format!("strike {n} of 3"),
            Penalty::GameOver(o) => o.to_string(),
        }
    }
}

/// A touch reported during the move in progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TouchRecord {
    pub side: Color,
    pub square: Square,
    /// The touched piece as `Ng1`.
    pub piece: String,
    pub adjust: bool,
}

impl Session {
    /// The arbiter's rules for a new event: touch-move (FIDE 4.3 and 4.4) for a move and for
    /// the move a draw claim declares, and the limit of touches per move. A stored event is
    /// not held to them again when the log is replayed (it was accepted under the rules of
    /// its day), so that these rules can grow without making old games unreadable.
    pub fn check_arbiter(&self, ev: &Event) -> Result<(), SessionError> {
        match ev {
            Event::Move { uci, .. } | Event::DrawClaimed { uci: Some(uci), .. } => {
                match self.position().parse_uci(uci) {
                    Ok(m) => self
                        .touch_violation(m)
                        .map_or(Ok(()), |why| Err(SessionError::TouchMove(why))),
                    // Session::check refuses it.
                    Err(_) => Ok(()),
                }
            }
            Event::Touched { .. } if self.touches.len() >= MAX_TOUCHES_PER_MOVE => {
                Err(SessionError::Touch(format!(
                    "at most {MAX_TOUCHES_PER_MOVE} touches per move: make the move"
                )))
            }
            _ => Ok(()),
        }
    }

    /// Why `m` breaks touch-move, if it does. FIDE 4.3: a touched own piece that can move
    /// must be moved, a touched opponent's piece that can be captured must be captured, and
    /// with one of each the capture with the touched piece comes first. FIDE 4.4: the king
    /// and then a rook touched: castle on that side if legal, else another king move, else
    /// any move; a rook and then the king touched: no castling on that side.
    pub fn touch_violation(&self, m: Move) -> Option<String> {
        if let Some(verdict) = self.castling_touch(m) {
            return verdict;
        }
        let pos = self.position();
        if let Some(rook) = self.rook_touched_before_king()
            && m.castling_side() == Some(side_of_rook(pos, rook))
        {
            return Some(format!(
                "touch-move (FIDE 4.4.2): you touched the rook on {rook} before your king: no \
                 castling on that side this move"
            ));
        }
        let legal = pos.legal_moves();
        let us = self.turn();
        let captures = |mv: &Move, target: Square| {
            mv.to() == target
                || (mv.is_en_passant()
                    && target.rank() == mv.from().rank()
                    && target.file() == mv.to().file())
        };
        let binding = self.touches.iter().filter(|t| !t.adjust);
        let own = binding.clone().find(|t| {
            t.side == us
                && pos.color_at(t.square) == Some(us)
                && legal.iter().any(|mv| mv.from() == t.square)
        });
        let theirs = binding.clone().find(|t| {
            pos.color_at(t.square) == Some(!us) && legal.iter().any(|mv| captures(mv, t.square))
        });
        match (own, theirs) {
            (None, None) => None,
            (Some(o), None) => (m.from() != o.square).then(|| {
                format!(
                    "touch-move (FIDE 4.3.1): you touched your {} on {}, which can move: move it",
                    role_name(pos, o.square),
                    o.square
                )
            }),
            (None, Some(t)) => (!captures(&m, t.square)).then(|| {
                format!(
                    "touch-move (FIDE 4.3.2): you touched the opponent's {} on {}, which can be captured: capture it",
                    role_name(pos, t.square),
                    t.square
                )
            }),
            (Some(o), Some(t)) => {
                if legal.iter().any(|mv| mv.from() == o.square && captures(mv, t.square)) {
                    (!(m.from() == o.square && captures(&m, t.square))).then(|| {
                        format!(
                            "touch-move (FIDE 4.3.3): you touched your {} on {} and the opponent's {} on {}: capture it with that piece",
                            role_name(pos, o.square),
                            o.square,
                            role_name(pos, t.square),
                            t.square
                        )
                    })
                } else {
                    // Otherwise the first touched of the two that can be moved or captured.
                    let first = self
                        .touches
                        .iter()
                        .find(|x| x.square == o.square || x.square == t.square)?;
                    if first.square == o.square {
                        (m.from() != o.square).then(|| {
                            format!(
                                "touch-move (FIDE 4.3.3): you touched your {} on {} first, which can move: move it",
                                role_name(pos, o.square),
                                o.square
                            )
                        })
                    } else {
                        (!captures(&m, t.square)).then(|| {
                            format!(
                                "touch-move (FIDE 4.3.3): you touched the opponent's {} on {} first, which can be captured: capture it",
                                role_name(pos, t.square),
                                t.square
                            )
                        })
                    }
                }
            }
        }
    }

    /// FIDE 4.4.1 and 4.4.3, when the side to move touched its king and then a rook: the
    /// verdict on `m` (`Some(None)`: allowed), or `None` when 4.4 does not apply.
    fn castling_touch(&self, m: Move) -> Option<Option<String>> {
        let pos = self.position();
        let us = self.turn();
        let king = pos.king_of(us);
        let own: Vec<&TouchRecord> = self.own_binding_touches().collect();
        let k = own.iter().position(|t| t.square == king)?;
        let rook = own[k + 1..]
            .iter()
            .find(|t| pos.role_at(t.square) == Some(Role::Rook))?
            .square;
        let side = side_of_rook(pos, rook);
        let wing = match side {
            CastlingSide::KingSide => "kingside",
            CastlingSide::QueenSide => "queenside",
        };
        let legal = pos.legal_moves();
        if let Some(castle) = legal.iter().find(|mv| mv.castling_side() == Some(side)) {
            return Some((m != *castle).then(|| {
                format!(
                    "touch-move (FIDE 4.4.1): you touched your king and then the rook on {rook}: \
                     castle {wing}"
                )
            }));
        }
        if legal.iter().any(|mv| mv.from() == king) {
            return Some((m.from() != king).then(|| {
                format!(
                    "touch-move (FIDE 4.4.3): you touched your king and then the rook on {rook}, \
                     but castling {wing} is not legal: make another move with the king"
                )
            }));
        }
        // The king has no legal move: any legal move may be made.
        Some(None)
    }

    /// The rook the side to move touched before touching its king (FIDE 4.4.2), if any.
    fn rook_touched_before_king(&self) -> Option<Square> {
        let pos = self.position();
        let king = pos.king_of(self.turn());
        let own: Vec<&TouchRecord> = self.own_binding_touches().collect();
        let k = own.iter().position(|t| t.square == king)?;
        own[..k]
            .iter()
            .find(|t| pos.role_at(t.square) == Some(Role::Rook))
            .map(|t| t.square)
    }

    /// The side to move's touches of its own pieces to move them (j'adoube aside), in order.
    fn own_binding_touches(&self) -> impl Iterator<Item = &TouchRecord> {
        let us = self.turn();
        let pos = self.position();
        self.touches
            .iter()
            .filter(move |t| !t.adjust && t.side == us && pos.color_at(t.square) == Some(us))
    }

    /// Whether one more foul by `side` ends the game (FIDE 7.5.5's second, or the third
    /// strike).
    pub(crate) fn foul_ends_game(&self, side: Color) -> bool {
        let count = self.fouls.iter().filter(|f| f.side == side).count() as u32 + 1;
        count >= self.foul_limit()
    }

    fn foul_limit(&self) -> u32 {
        match self.mode {
            ArbiterMode::Fide => 2,
            _ => 3,
        }
    }

    /// Records a foul by `side` (its mode allows fouls: checked) and applies its penalty.
    /// `cannot_mate` is the stored reason the opponent cannot mate, when the analysis proved
    /// it (see [`Session::judge`]); otherwise material decides, as before.
    pub(crate) fn record_foul(
        &mut self,
        side: Color,
        attempted: &str,
        reason: &str,
        cannot_mate: Option<&str>,
        at: u64,
    ) {
        let count = self.fouls.iter().filter(|f| f.side == side).count() as u32 + 1;
        let limit = self.foul_limit();
        let penalty = if count >= limit {
            self.outcome_detail = cannot_mate.map(str::to_owned);
            let outcome = if cannot_mate.is_none() && self.position().can_possibly_mate(!side) {
                Outcome::Decisive {
                    winner: !side,
                    reason: WinReason::IllegalMoves,
                }
            } else {
                Outcome::Draw {
                    reason: DrawReason::IllegalMovesInsufficientMaterial,
                }
            };
            self.finish(outcome, at);
            Penalty::GameOver(outcome)
        } else if self.mode == ArbiterMode::Fide {
            match self.clock.as_mut() {
                Some(clock) => {
                    clock.remaining_ms[!side] += FIDE_FOUL_BONUS_MS;
                    Penalty::TwoMinutes
                }
                None => Penalty::Warning,
            }
        } else {
            Penalty::Strike(count)
        };
        self.fouls.push(FoulRecord {
            side,
            attempted: attempted.to_owned(),
            reason: reason.to_owned(),
            penalty,
            ply: self.ply(),
            count,
        });
    }

    /// Records a touch of the piece on `square` (checked) for the move in progress.
    pub(crate) fn record_touch(&mut self, side: Color, square: &str, adjust: bool) {
        let Ok(sq) = square.parse::<Square>() else {
            return;
        };
        self.touches.push(TouchRecord {
            side,
            square: sq,
            piece: piece_label(self.position(), sq),
            adjust,
        });
    }
}

/// The castling side a rook on `rook` belongs to: the one towards its file from the king.
fn side_of_rook(pos: &Position, rook: Square) -> CastlingSide {
    if rook.file() > pos.king_of(pos.turn()).file() {
        CastlingSide::KingSide
    } else {
        CastlingSide::QueenSide
    }
}

/// `knight`, `bishop`, ... of the piece on `sq`.
fn role_name(pos: &Position, sq: Square) -> &'static str {
    pos.role_at(sq).map_or("piece", |r| r.name())
}

/// The piece on `sq` as `Ng1` (`Pe2` for pawns).
fn piece_label(pos: &Position, sq: Square) -> String {
    match pos.role_at(sq) {
        Some(chess_rules::Role::Pawn) | None => format!("P{sq}"),
        Some(r) => format!("{}{sq}", r.upper_char()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::tests::{mv, run};
    use crate::session::{Event, SessionError, Side};
    use crate::timecontrol::TimeControl;

    fn arbiter_game(mode: ArbiterMode, fen: &str, tc: Option<&str>) -> Session {
        Session::create(&Event::Created {
            start_fen: fen.into(),
            time_control: tc.map(|t| TimeControl::parse(t).unwrap()),
            white: String::new(),
            black: String::new(),
            at_ms: 0,
            illegal_moves: mode,
            request_id: None,
        })
        .unwrap()
    }

    fn foul(side: Side, attempted: &str, at_ms: u64) -> Event {
        Event::Foul {
            side,
            attempted: attempted.into(),
            reason: "king moved into check".into(),
            at_ms,
            request_id: None,
            cannot_mate: None,
        }
    }

    fn touch(side: Side, square: &str, adjust: bool) -> Event {
        Event::Touched {
            side,
            square: square.into(),
            adjust,
            at_ms: 10,
            request_id: None,
        }
    }

    #[test]
    fn old_logs_without_a_mode_still_load_and_reject() {
        let json = r#"{"type":"created","start_fen":"","time_control":null,"white":"A","black":"B","at_ms":1}"#;
        let ev: Event = serde_json::from_str(json).unwrap();
        let s = Session::create(&ev).unwrap();
        assert_eq!(s.mode, ArbiterMode::Reject);
        assert_eq!(
            s.check(&foul(Side::White, "e1e2", 2)),
            Err(SessionError::NoArbiter)
        );
        // A reject-mode game writes no mode, so its log reads as before.
        assert!(
            !serde_json::to_string(&ev)
                .unwrap()
                .contains("illegal_moves")
        );
        let fide = Event::Created {
            start_fen: String::new(),
            time_control: None,
            white: String::new(),
            black: String::new(),
            at_ms: 0,
            illegal_moves: ArbiterMode::ThreeStrikes,
            request_id: None,
        };
        let text = serde_json::to_string(&fide).unwrap();
        assert!(
            text.contains(r#""illegal_moves":"three_strikes""#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), fide);
    }

    #[test]
    fn fide_first_foul_gives_two_minutes_second_loses() {
        let mut s = arbiter_game(ArbiterMode::Fide, "", Some("5+0"));
        run(&mut s, mv("e2e4", 1_000)).unwrap();
        // Black's first illegal move: white gets two minutes; the position stays.
        run(&mut s, foul(Side::Black, "e8e7", 3_000)).unwrap();
        assert_eq!(s.fouls[0].penalty, Penalty::TwoMinutes);
        assert_eq!(
            s.fouls[0].penalty_text(),
            "two minutes added to white's clock"
        );
        assert_eq!(
            s.clock.as_ref().unwrap().remaining_ms.white,
            300_000 + 120_000
        );
        assert_eq!(s.ply(), 1);
        assert_eq!(s.turn(), Color::Black);
        // White cannot commit a foul on black's move.
        assert!(matches!(
            s.check(&foul(Side::White, "e1e2", 3_500)),
            Err(SessionError::NotYourTurn { .. })
        ));
        run(&mut s, mv("e7e5", 4_000)).unwrap();
        run(&mut s, mv("g1f3", 5_000)).unwrap();
        run(&mut s, foul(Side::Black, "e8e6", 6_000)).unwrap();
        let lost = Outcome::Decisive {
            winner: Color::White,
            reason: WinReason::IllegalMoves,
        };
        assert_eq!(s.outcome, Some(lost));
        assert_eq!(s.fouls[1].penalty, Penalty::GameOver(lost));
        assert_eq!(s.fouls[1].count, 2);
        assert_eq!(lost.to_string(), "1-0 (white wins by illegal moves)");
    }

    #[test]
    fn second_fide_foul_draws_when_the_opponent_cannot_mate() {
        // White has a bare king: black's second foul draws.
        let mut s = arbiter_game(ArbiterMode::Fide, "4k3/8/8/8/8/8/4p3/K7 b - - 0 1", None);
        run(&mut s, foul(Side::Black, "e8e6", 1)).unwrap();
        assert_eq!(s.fouls[0].penalty, Penalty::Warning);
        run(&mut s, foul(Side::Black, "e2e4", 2)).unwrap();
        assert_eq!(
            s.outcome,
            Some(Outcome::Draw {
                reason: DrawReason::IllegalMovesInsufficientMaterial
            })
        );
    }

    #[test]
    fn three_strikes_third_foul_loses_and_replays() {
        let mut events = vec![Event::Created {
            start_fen: String::new(),
            time_control: Some(TimeControl::parse("1+0").unwrap()),
            white: String::new(),
            black: String::new(),
            at_ms: 0,
            illegal_moves: ArbiterMode::ThreeStrikes,
            request_id: None,
        }];
        let mut s = Session::create(&events[0]).unwrap();
        for ev in [
            foul(Side::White, "e1e2", 1),
            mv("e2e4", 2),
            mv("e7e5", 3),
            foul(Side::White, "e1e3", 4),
            mv("g1f3", 5),
            foul(Side::Black, "e8e6", 6),
            mv("b8c6", 7),
        ] {
            run(&mut s, ev.clone()).unwrap();
            events.push(ev);
        }
        assert_eq!(s.fouls[1].penalty, Penalty::Strike(2));
        assert_eq!(s.fouls[2].penalty, Penalty::Strike(1));
        assert_eq!(s.outcome, None);
        let third = foul(Side::White, "e1e2", 8);
        run(&mut s, third.clone()).unwrap();
        events.push(third);
        assert_eq!(
            s.outcome,
            Some(Outcome::Decisive {
                winner: Color::Black,
                reason: WinReason::IllegalMoves
            })
        );
        // No clock bonus under three strikes.
        assert_eq!(s.clock.as_ref().unwrap().remaining_ms.black, 60_000 - 3);
        let again = Session::replay(&events).unwrap();
        assert_eq!(again.fouls, s.fouls);
        assert_eq!(again.outcome, s.outcome);
    }

    #[test]
    fn touch_move_rules() {
        // Touching the g1 knight: it must move.
        let mut s = arbiter_game(ArbiterMode::Reject, "", None);
        run(&mut s, touch(Side::White, "g1", false)).unwrap();
        let err = s.check_new(&mv("e2e4", 20)).unwrap_err();
        assert!(
            matches!(&err, SessionError::TouchMove(m) if m.contains("FIDE 4.3.1") && m.contains("knight on g1")),
            "{err}"
        );
        run(&mut s, mv("g1f3", 20)).unwrap();
        // The move clears the touches.
        assert!(s.touches.is_empty());
        // Black touches a piece that cannot move (the a8 rook): no obligation.
        run(&mut s, touch(Side::Black, "a8", false)).unwrap();
        run(&mut s, mv("e7e5", 30)).unwrap();
        // J'adoube binds nothing.
        run(&mut s, touch(Side::White, "b1", true)).unwrap();
        assert!(s.touches[0].adjust);
        run(&mut s, mv("d2d4", 40)).unwrap();
        // Black touches white's d4 pawn, which e5 can capture: it must be captured.
        run(&mut s, touch(Side::Black, "d4", false)).unwrap();
        let err = s.check_new(&mv("b8c6", 50)).unwrap_err();
        assert!(
            matches!(&err, SessionError::TouchMove(m) if m.contains("FIDE 4.3.2")),
            "{err}"
        );
        run(&mut s, mv("e5d4", 50)).unwrap();
        // Touching out of turn, or an empty square, is refused.
        assert!(matches!(
            s.check(&touch(Side::Black, "d4", false)),
            Err(SessionError::NotYourTurn { .. })
        ));
        assert!(matches!(
            s.check(&touch(Side::White, "e4", false)),
            Err(SessionError::Touch(_))
        ));
        // Own piece and opponent's piece: capture it with that piece when possible.
        run(&mut s, touch(Side::White, "f3", false)).unwrap();
        run(&mut s, touch(Side::White, "d4", false)).unwrap();
        let err = s.check_new(&mv("f3g5", 60)).unwrap_err();
        assert!(
            matches!(&err, SessionError::TouchMove(m) if m.contains("FIDE 4.3.3")),
            "{err}"
        );
        assert!(matches!(
            s.check_new(&mv("d1d4", 60)),
            Err(SessionError::TouchMove(_))
        ));
        run(&mut s, mv("f3d4", 60)).unwrap();
    }

    fn touch_move_error(s: &Session, uci: &str) -> String {
        match s.check_new(&mv(uci, 20)) {
            Err(SessionError::TouchMove(why)) => why,
            other => panic!("{uci}: expected a touch-move refusal, got {other:?}"),
        }
    }

    #[test]
    fn king_then_rook_must_castle_on_that_side_when_legal() {
        // FIDE 4.4.1: king, then the h1 rook: O-O, nothing else.
        let fen = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1";
        let mut s = arbiter_game(ArbiterMode::Reject, fen, None);
        run(&mut s, touch(Side::White, "e1", false)).unwrap();
        run(&mut s, touch(Side::White, "h1", false)).unwrap();
        for refused in ["e1f1", "e1d1", "e1c1", "h1g1"] {
            let why = touch_move_error(&s, refused);
            assert!(
                why.contains("FIDE 4.4.1") && why.contains("castle kingside"),
                "{why}"
            );
        }
        run(&mut s, mv("e1g1", 20)).unwrap();
        assert!(
            s.position()
                .fen()
                .starts_with("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R4RK1 b")
        );
    }

    #[test]
    fn king_then_rook_without_a_legal_castling_means_a_king_move_or_any_move() {
        // FIDE 4.4.3: castling kingside is illegal (f1 holds the bishop); the king can move
        // (Kf2... no: f2 is a pawn; Kd2 is free), so another king move is due.
        let fen = "4k3/8/8/8/8/8/3P1P2/R3KB1R w KQ - 0 1";
        let mut s = arbiter_game(ArbiterMode::Reject, fen, None);
        run(&mut s, touch(Side::White, "e1", false)).unwrap();
        run(&mut s, touch(Side::White, "h1", false)).unwrap();
        let why = touch_move_error(&s, "h1g1");
        assert!(why.contains("FIDE 4.4.3"), "{why}");
        // Castling with the other rook is a king move too.
        s.check_new(&mv("e1c1", 20)).unwrap();
        s.check_new(&mv("e1e2", 20)).unwrap();
        // The king has no legal move at all: any legal move.
        let fen = "4k3/8/8/8/8/8/3PPP2/3QKB1R w K - 0 1";
        let mut s = arbiter_game(ArbiterMode::Reject, fen, None);
        run(&mut s, touch(Side::White, "e1", false)).unwrap();
        run(&mut s, touch(Side::White, "h1", false)).unwrap();
        s.check_new(&mv("d2d4", 20)).unwrap();
        s.check_new(&mv("h1g1", 20)).unwrap();
    }

    #[test]
    fn rook_then_king_forbids_castling_on_that_side() {
        // FIDE 4.4.2, a rook that can move: 4.3.1 makes it move; no castling on its side.
        let fen = "4k3/8/8/8/8/8/PPPPPPPP/R3K2R w KQ - 0 1";
        let mut s = arbiter_game(ArbiterMode::Reject, fen, None);
        run(&mut s, touch(Side::White, "h1", false)).unwrap();
        run(&mut s, touch(Side::White, "e1", false)).unwrap();
        let why = touch_move_error(&s, "e1g1");
        assert!(why.contains("FIDE 4.4.2"), "{why}");
        s.check_new(&mv("h1g1", 20)).unwrap();
        // A rook that cannot move (a knight and the pawns box it in): the king, touched
        // next, must move (castling on the rook's side is illegal anyway).
        let fen = "4k3/8/8/8/8/8/PPPPPPPP/RN2K2R w KQ - 0 1";
        let mut s = arbiter_game(ArbiterMode::Reject, fen, None);
        run(&mut s, touch(Side::White, "a1", false)).unwrap();
        run(&mut s, touch(Side::White, "e1", false)).unwrap();
        s.check_new(&mv("e1f1", 20)).unwrap();
        s.check_new(&mv("e1g1", 20)).unwrap();
        let fen = "4k3/8/8/8/8/8/PPPPPPPP/R3K1NR w KQ - 0 1";
        let mut s = arbiter_game(ArbiterMode::Reject, fen, None);
        run(&mut s, touch(Side::White, "h1", false)).unwrap();
        run(&mut s, touch(Side::White, "e1", false)).unwrap();
        s.check_new(&mv("e1d1", 20)).unwrap();
        // Castling on the other side is a king move, and allowed.
        s.check_new(&mv("e1c1", 20)).unwrap();
    }

    #[test]
    fn a_claims_declared_move_obeys_touch_move() {
        let mut s = arbiter_game(ArbiterMode::Reject, "", None);
        for (i, uci) in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"]
            .into_iter()
            .enumerate()
        {
            run(&mut s, mv(uci, i as u64)).unwrap();
        }
        run(&mut s, touch(Side::Black, "b8", false)).unwrap();
        let claim = |uci: &str| Event::DrawClaimed {
            side: Side::Black,
            uci: Some(uci.into()),
            at_ms: 30,
            request_id: None,
        };
        assert!(
            matches!(s.check_new(&claim("f6g8")), Err(SessionError::TouchMove(why)) if why.contains("knight on b8")),
        );
        // Replaying a stored claim does not hold it to touch-move again.
        s.check(&claim("f6g8")).unwrap();
    }

    #[test]
    fn touches_per_move_are_bounded() {
        let mut s = arbiter_game(ArbiterMode::Reject, "", None);
        for _ in 0..MAX_TOUCHES_PER_MOVE {
            run(&mut s, touch(Side::White, "b1", true)).unwrap();
        }
        assert!(matches!(
            s.check_new(&touch(Side::White, "b1", true)),
            Err(SessionError::Touch(why)) if why.contains("at most 32 touches")
        ));
        // The move clears them.
        run(&mut s, mv("e2e4", 30)).unwrap();
        run(&mut s, touch(Side::Black, "b8", true)).unwrap();
    }
}
