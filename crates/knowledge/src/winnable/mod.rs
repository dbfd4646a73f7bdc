//! Who can still win: the exact test of FIDE Article 5.2.2 (a dead position: neither side can
//! checkmate by any series of legal moves) and 6.9 (a flag fall loses only when the opponent
//! could still mate by some series of legal moves).
//!
//! For a position and an intended winner the answer is one of three, never a wrong one:
//!
//! - [`Verdict::Winnable`] with a proof: a legal helpmate line (both sides helping) that ends
//!   with the loser checkmated. The line is replayed through `chess-rules` before it is
//!   returned.
//! - [`Verdict::Unwinnable`] with the reason: either material (a lone king; a single minor
//!   piece against a bare king; kings and bishops all on one colour) or a static proof for
//!   positions where no pawn can ever move again (every piece then lives in a region walled off
//!   by the pawns, and no square the losing king can reach can be both checked and sealed).
//! - [`Verdict::Undetermined`] when neither was found within the node budget.
//!
//! Two modes: [`Mode::Quick`] (cheap enough for every move of every game: the material and
//! static tests and a helpmate search of a few plies over a few hundred nodes) and
//! [`Mode::Full`] (a deeper helpmate search with a transposition table and moves ordered
//! toward mating patterns; used when a flag falls and on request).
//!
//! ```
//! use chess_knowledge::{WinnableBudget, Verdict, winnability};
//! use chess_rules::{Color, Position};
//!
//! // A locked pawn wall; White has a dark-squared bishop that can neither cross nor take a pawn.
//! let pos = Position::from_fen("4k3/8/8/1p1p1p1p/pPpPpPpP/P1P1P1P1/8/2B1K3 w - - 0 1").unwrap();
//! let both = winnability(&pos, &WinnableBudget::full());
//! assert!(matches!(both.white.verdict, Verdict::Unwinnable { .. }));
//! assert_eq!(both.code(), "--");
//!
//! // King, knight and pawn against king: winnable, and the proof is a legal mating line.
//! let pos = Position::from_fen("7k/8/5K2/8/8/8/P7/6N1 w - - 0 1").unwrap();
//! let white = chess_knowledge::winnable(&pos, Color::White, &WinnableBudget::full());
//! assert!(matches!(white.verdict, Verdict::Winnable { .. }));
//! ```

mod reach;
mod search;
mod statics;

use std::time::{Duration, Instant};

use chess_rules::{Bitboard, Color, Move, Position, Role};

use reach::Reach;
use search::{Found, Search, hopeless};

/// The most positions the reachability search keeps (about 130 bytes each, so the pass stays
/// near 130 MB at worst whatever the node budget).
const REACH_MAX_POSITIONS: u64 = 1_000_000;

/// Quick mode searches for a helpmate only with at most this many men on the board.
const QUICK_SEARCH_MEN: u32 = 8;

/// How hard to look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Material and static tests and a tiny helpmate search: after every move of every game.
    Quick,
    /// A deep helpmate search as well: when a flag falls, and on request.
    Full,
}

/// The mode and the node budget (positions visited by the helpmate search).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WinnableBudget {
    pub mode: Mode,
    pub nodes: u64,
}

impl WinnableBudget {
    /// Nodes a quick analysis may visit.
    pub const QUICK_NODES: u64 = 200;
    /// Nodes a full analysis may visit by default: about a second of work on one core.
    pub const FULL_NODES: u64 = 4_000_000;

    pub const fn quick() -> WinnableBudget {
        WinnableBudget {
            mode: Mode::Quick,
            nodes: WinnableBudget::QUICK_NODES,
        }
    }

    pub const fn full() -> WinnableBudget {
        WinnableBudget {
            mode: Mode::Full,
            nodes: WinnableBudget::FULL_NODES,
        }
    }

    /// The same mode with another node budget.
    pub const fn with_nodes(self, nodes: u64) -> WinnableBudget {
        WinnableBudget { nodes, ..self }
    }
}

/// The answer for one intended winner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The side can mate: `line` is a legal helpmate from the position, ending in checkmate.
    /// It is empty when the loser is already checkmated.
    Winnable { line: Vec<Move> },
    /// The side can never mate, by any series of legal moves.
    Unwinnable { reason: String },
    /// Not decided within the budget.
    Undetermined,
}

impl Verdict {
    /// `winnable`, `unwinnable` or `undetermined`.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Winnable { .. } => "winnable",
            Verdict::Unwinnable { .. } => "unwinnable",
            Verdict::Undetermined => "undetermined",
        }
    }

    pub fn is_unwinnable(&self) -> bool {
        matches!(self, Verdict::Unwinnable { .. })
    }

    pub fn is_winnable(&self) -> bool {
        matches!(self, Verdict::Winnable { .. })
    }
}

/// One side's verdict and what it cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// The intended winner.
    pub winner: Color,
    pub verdict: Verdict,
    /// Positions the helpmate search visited.
    pub nodes: u64,
    pub elapsed: Duration,
}

impl Analysis {
    /// The proof line in UCI (`e2e4`), empty unless winnable.
    pub fn line_uci(&self) -> Vec<String> {
        match &self.verdict {
            Verdict::Winnable { line } => line.iter().map(|m| m.to_string()).collect(),
            _ => Vec::new(),
        }
    }

    /// The proof line in SAN from `pos`, empty unless winnable.
    pub fn line_san(&self, pos: &Position) -> Vec<String> {
        let mut out = Vec::new();
        if let Verdict::Winnable { line } = &self.verdict {
            let mut p = pos.clone();
            for &m in line {
                out.push(p.san(m));
                p.play_unchecked(m);
            }
        }
        out
    }

    /// The side's letter in a winnability code: `W` or `B` when it can win, `-` when it
    /// cannot, `?` when undetermined.
    pub fn letter(&self) -> char {
        match self.verdict {
            Verdict::Winnable { .. } => self.winner.fold('W', 'B'),
            Verdict::Unwinnable { .. } => '-',
            Verdict::Undetermined => '?',
        }
    }

    /// The reason, empty unless unwinnable.
    pub fn reason(&self) -> &str {
        match &self.verdict {
            Verdict::Unwinnable { reason } => reason,
            _ => "",
        }
    }
}

/// Both sides' verdicts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Winnability {
    pub white: Analysis,
    pub black: Analysis,
}

impl Winnability {
    pub fn get(&self, color: Color) -> &Analysis {
        color.fold(&self.white, &self.black)
    }

    /// Two letters: `W` when White can win, `-` when it cannot, `?` when undetermined; then
    /// the same for Black with `B`. `--` is a dead position.
    pub fn code(&self) -> String {
        [self.white.letter(), self.black.letter()]
            .into_iter()
            .collect()
    }

    /// Neither side can mate (FIDE 5.2.2).
    pub fn is_dead(&self) -> bool {
        self.white.verdict.is_unwinnable() && self.black.verdict.is_unwinnable()
    }

    /// The reason a dead position is dead, in one sentence.
    pub fn dead_reason(&self) -> Option<String> {
        if !self.is_dead() {
            return None;
        }
        let (w, b) = (self.white.reason(), self.black.reason());
        Some(if w == b {
            w.to_owned()
        } else {
            format!("White: {w}; Black: {b}")
        })
    }
}

/// Both sides' verdicts, White's first.
pub fn winnability(pos: &Position, limits: &WinnableBudget) -> Winnability {
    Winnability {
        white: winnable(pos, Color::White, limits),
        black: winnable(pos, Color::Black, limits),
    }
}

/// Can `winner` still checkmate from `pos` by some series of legal moves?
pub fn winnable(pos: &Position, winner: Color, limits: &WinnableBudget) -> Analysis {
    let start = Instant::now();
    let (verdict, nodes) = decide(pos, winner, limits);
    let verdict = match verdict {
        Verdict::Winnable { line } if !proves_mate(pos, winner, &line) => Verdict::Undetermined,
        v => v,
    };
    Analysis {
        winner,
        verdict,
        nodes,
        elapsed: start.elapsed(),
    }
}

/// The helpmate search alone, without the material and static tests (not even as cut-offs
/// inside the search): a proof line, or `None` when none was found within `nodes`. Meant for
/// cross-checking those tests; [`winnable`] is the procedure to use.
pub fn find_helpmate(pos: &Position, winner: Color, nodes: u64) -> Option<Vec<Move>> {
    let mut search = Search::new(winner, nodes).without_pruning();
    match full_search(&mut search, pos, nodes) {
        Found::Mate(line) if proves_mate(pos, winner, &line) => Some(line),
        _ => None,
    }
}

/// Replays `line` through the rules: every move legal, the loser checkmated at the end.
pub fn proves_mate(pos: &Position, winner: Color, line: &[Move]) -> bool {
    let mut p = pos.clone();
    for &m in line {
        match p.play(m) {
            Ok(next) => p = next,
            Err(_) => return false,
        }
    }
    p.turn() == !winner && p.is_checkmate()
}

fn decide(pos: &Position, winner: Color, limits: &WinnableBudget) -> (Verdict, u64) {
    let loser = !winner;
    let name = winner.fold("White", "Black");
    if !pos.has_legal_moves() {
        return if pos.turn() == loser && pos.is_check() {
            (Verdict::Winnable { line: Vec::new() }, 0)
        } else if pos.is_check() {
            let reason = format!("{name} is checkmated");
            (Verdict::Unwinnable { reason }, 0)
        } else {
            let reason = "stalemate: the game is over".to_owned();
            (Verdict::Unwinnable { reason }, 0)
        };
    }
    if let Some(reason) = material_reason(pos, winner) {
        return (Verdict::Unwinnable { reason }, 0);
    }
    if let Some(reason) = statics::frozen_proof(pos, winner) {
        return (Verdict::Unwinnable { reason }, 0);
    }
    let mut search = Search::new(winner, limits.nodes);
    let found = match limits.mode {
        // With many men on the board a short helpmate is rare and a search costly: quick
        // mode, run after every move, leaves those undetermined.
        Mode::Quick if pos.occupied().count() > QUICK_SEARCH_MEN => Found::NoMate,
        Mode::Quick => search.deepening(pos, 3, limits.nodes),
        Mode::Full => full_search(&mut search, pos, limits.nodes),
    };
    match found {
        Found::Mate(line) => (Verdict::Winnable { line }, search.nodes),
        Found::NoMate => (Verdict::Undetermined, search.nodes),
        Found::Exhausted { positions } => {
            let reason = format!(
                "every position reachable by legal moves was searched ({positions} of them) and none is a mate by {name}: each line ends in a repeated position, the end of the game, or a position where {name} provably cannot mate"
            );
            (Verdict::Unwinnable { reason }, search.nodes)
        }
    }
}

/// A short best-first look (most positions with material mate quickly), a small exhaustive
/// reachability search (closed positions have few reachable positions), short exhaustive
/// mates, a long best-first search, greedy walks, a large reachability search, then deeper
/// exhaustive helpmate search with what is left.
fn full_search(search: &mut Search, pos: &Position, budget: u64) -> Found {
    let big_reach = (budget / 8).min(REACH_MAX_POSITIONS);
    let shares = [
        (Pass::BestFirst, 400, budget / 50),
        (Pass::Reach, 0, budget / 200),
        (Pass::Deep, 7, budget / 20),
        (Pass::BestFirst, 400, budget * 2 / 5),
        (Pass::Greedy, 40, budget / 20),
        (Pass::Greedy, 120, budget / 20),
        (Pass::Reach, 0, big_reach),
        (Pass::Deep, 99, budget),
    ];
    for (pass, plies, share) in shares {
        let found = match pass {
            Pass::Deep => search.deepening(pos, plies, share),
            Pass::Greedy => search.greedy(pos, plies, share),
            Pass::BestFirst => search.best_first(pos, plies as u16, share),
            Pass::Reach => match reach::exhaust(pos, search.winner(), share, &mut search.nodes) {
                Reach::Mate(line) => Found::Mate(line),
                Reach::Exhausted { positions } => return Found::Exhausted { positions },
                Reach::Unknown => Found::NoMate,
            },
        };
        if let Found::Mate(line) = found {
            return Found::Mate(line);
        }
        if search.nodes >= budget {
            break;
        }
    }
    Found::NoMate
}

#[derive(Clone, Copy)]
enum Pass {
    Reach,
    Deep,
    BestFirst,
    Greedy,
}

/// The reason `winner` cannot mate, when material alone shows it.
fn material_reason(pos: &Position, winner: Color) -> Option<String> {
    if !hopeless(pos, winner) {
        return None;
    }
    let name = winner.fold("White", "Black");
    let ours = pos.by_color(winner) & !pos.by_role(Role::King);
    if ours.is_empty() {
        return Some(format!("{name} has only its king"));
    }
    let theirs = pos.by_color(!winner) & !pos.by_role(Role::King);
    if ours.count() == 1 && theirs.is_empty() {
        let role = ours
            .first()
            .and_then(|s| pos.role_at(s))
            .unwrap_or(Role::Bishop);
        return Some(format!(
            "{name} has only a {} against a bare king, which cannot be mated without a piece of its own to block an escape square",
            role.name()
        ));
    }
    if search::lone_bishop_against_heavy_pieces(pos, winner) {
        let loser = (!winner).fold("White", "Black");
        return Some(format!(
            "{name} has only a bishop against rooks and queens: a mate needs a {loser} rook or queen on an escape square next to the king, and from there it can always block the check or take the bishop"
        ));
    }
    let light = (pos.by_role(Role::Bishop) & Bitboard::DARK_SQUARES).is_empty();
    let (on, other) = if light {
        ("light", "dark")
    } else {
        ("dark", "light")
    };
    Some(format!(
        "only kings and bishops on {on} squares remain: a check comes only on a {on} square, and no piece can ever attack or block a {other} escape square"
    ))
}
