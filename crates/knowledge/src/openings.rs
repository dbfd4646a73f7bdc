//! Opening classification: the ECO code and name of the deepest named position a game reaches
//! (from the lichess chess-openings data set, matched by position so that transpositions
//! count), the documents' classes (open, semi-open, closed) and whether the line is a gambit.

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use chess_rules::{Color, Move, Position, Role};
use serde::Serialize;

use crate::material::{developed_minors, piece_points};

/// The five volumes of the data set, `eco<TAB>name<TAB>pgn` with a header line.
const VOLUMES: [(&str, &str); 5] = [
    ("a.tsv", include_str!("../data/openings/a.tsv")),
    ("b.tsv", include_str!("../data/openings/b.tsv")),
    ("c.tsv", include_str!("../data/openings/c.tsv")),
    ("d.tsv", include_str!("../data/openings/d.tsv")),
    ("e.tsv", include_str!("../data/openings/e.tsv")),
];

/// A named opening position: its ECO code, its English name and the moves (SAN, from the
/// standard start) by which the data set reaches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Opening {
    pub eco: &'static str,
    pub name: &'static str,
    /// The data set's line, e.g. `1. e4 c5`.
    pub pgn: &'static str,
}

impl fmt::Display for Opening {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.eco, self.name)
    }
}

/// The documents' classes of openings, by the first moves: an open game starts 1.e4 e5, a
/// semi-open one 1.e4 and any other reply, a closed one with any other first move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpeningClass {
    Open,
    SemiOpen,
    Closed,
}

impl OpeningClass {
    /// `open`, `semi-open` or `closed`.
    pub fn name(self) -> &'static str {
        match self {
            OpeningClass::Open => "open",
            OpeningClass::SemiOpen => "semi-open",
            OpeningClass::Closed => "closed",
        }
    }

    /// 开放性开局, 半开放性开局, 封闭性开局.
    pub fn chinese(self) -> &'static str {
        match self {
            OpeningClass::Open => "开放性开局",
            OpeningClass::SemiOpen => "半开放性开局",
            OpeningClass::Closed => "封闭性开局",
        }
    }
}

/// How a line was recognised as a gambit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GambitEvidence {
    /// The named opening is a gambit (its name says `Gambit` and not `Gambit Declined`).
    Name,
    /// The material: in the opening one side stayed at least a pawn down, pieces equal, for
    /// a full move while at least as far developed as the other.
    Material,
}

/// A gambit: who gave the pawn, and how we know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Gambit {
    /// The side that gave material (`None` when only the name says so and the material does
    /// not show who).
    #[serde(serialize_with = "crate::ser::opt_color")]
    pub by: Option<Color>,
    pub evidence: GambitEvidence,
}

/// Everything the classifier says about a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Classification {
    /// The deepest named position the line reaches, if any.
    pub opening: Option<Opening>,
    /// The ply (half-moves from the start) at which that position was reached.
    pub opening_ply: Option<usize>,
    /// The class, when the first moves are known (from the line itself when it starts from
    /// the standard position, else from the named opening's own moves).
    pub class: Option<OpeningClass>,
    pub gambit: Option<Gambit>,
}

impl Classification {
    /// One line: `B20 Sicilian Defense  semi-open`, with `gambit` added for gambits; `-` for
    /// what is unknown.
    pub fn summary(&self) -> String {
        let mut s = match self.opening {
            Some(o) => format!("{} {}", o.eco, o.name),
            None => "- (no named opening)".to_string(),
        };
        s.push_str("  ");
        s.push_str(self.class.map_or("-", OpeningClass::name));
        if self.gambit.is_some() {
            s.push_str(", gambit");
        }
        s
    }
}

/// Why the data set could not be read (a bug in the shipped files; tests check it never
/// happens).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataError {
    pub file: &'static str,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

struct Table {
    by_key: HashMap<u64, Opening>,
    rows: usize,
    errors: Vec<DataError>,
}

/// The table, built once on first use by replaying every line of the data set.
fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(build_table)
}

fn build_table() -> Table {
    let mut by_key = HashMap::new();
    let mut rows = 0;
    let mut errors = Vec::new();
    for (file, text) in VOLUMES {
        for (i, line) in text.lines().enumerate().skip(1) {
            if line.trim().is_empty() {
                continue;
            }
            let mut cols = line.split('\t');
            let (Some(eco), Some(name), Some(pgn)) = (cols.next(), cols.next(), cols.next()) else {
                errors.push(DataError {
                    file,
                    line: i + 1,
                    message: "expected three tab-separated columns".into(),
                });
                continue;
            };
            match replay_line(pgn) {
                Ok(pos) => {
                    rows += 1;
                    // The first row naming a position keeps it: the data set lists each
                    // position once, and a repeat would be a less specific duplicate.
                    by_key
                        .entry(pos.repetition_key())
                        .or_insert(Opening { eco, name, pgn });
                }
                Err(message) => errors.push(DataError {
                    file,
                    line: i + 1,
                    message,
                }),
            }
        }
    }
    Table {
        by_key,
        rows,
        errors,
    }
}

/// Plays a data-set line (`1. e4 c5 2. Nf3`) from the standard start.
fn replay_line(pgn: &str) -> Result<Position, String> {
    let mut pos = Position::startpos();
    for token in pgn.split_whitespace() {
        // Move numbers `1.` and `1...`.
        if token
            .trim_end_matches('.')
            .chars()
            .all(|c| c.is_ascii_digit())
        {
            continue;
        }
        let m = pos.parse_san(token).map_err(|e| format!("{token}: {e}"))?;
        pos = pos.play(m).map_err(|e| e.to_string())?;
    }
    Ok(pos)
}

/// The number of named positions and of rows read, and any rows that failed to replay.
pub fn data_stats() -> (usize, usize, &'static [DataError]) {
    let t = table();
    (t.by_key.len(), t.rows, &t.errors)
}

/// The named opening of exactly this position (side to move, castling rights and en-passant
/// possibility included), if the data set names it.
///
/// ```
/// use chess_rules::Position;
/// let pos = Position::from_fen("rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2").unwrap();
/// let o = chess_knowledge::opening_of(&pos).unwrap();
/// assert_eq!((o.eco, o.name), ("B20", "Sicilian Defense"));
/// ```
pub fn opening_of(pos: &Position) -> Option<Opening> {
    table().by_key.get(&pos.repetition_key()).copied()
}

/// Classifies a line: `start` and the moves played from it (each legal in turn; the caller
/// has checked them).
///
/// ```
/// use chess_rules::{Game, Position};
/// use chess_knowledge::{classify, OpeningClass};
/// let mut game = Game::new(Position::startpos());
/// for san in ["e4", "c5", "Nf3", "d6"] { game.play_san(san).unwrap(); }
/// let c = classify(game.start(), game.moves());
/// assert_eq!(c.opening.unwrap().eco, "B50");
/// assert_eq!(c.class, Some(OpeningClass::SemiOpen));
/// ```
pub fn classify(start: &Position, moves: &[Move]) -> Classification {
    let mut positions = Vec::with_capacity(moves.len() + 1);
    positions.push(start.clone());
    let mut pos = start.clone();
    for &m in moves {
        match pos.play(m) {
            Ok(next) => pos = next,
            Err(_) => break,
        }
        positions.push(pos.clone());
    }
    classify_positions(&positions, Some(moves))
}

fn classify_positions(positions: &[Position], moves: Option<&[Move]>) -> Classification {
    // The deepest named position: the last one the game passes through.
    let named = positions
        .iter()
        .enumerate()
        .rev()
        .find_map(|(ply, p)| opening_of(p).map(|o| (ply, o)));
    let from_start = positions
        .first()
        .is_some_and(|p| p.repetition_key() == Position::startpos().repetition_key());
    let class = match (from_start, moves) {
        (true, Some(moves)) => class_of_first_moves(&positions[0], moves),
        _ => None,
    }
    .or_else(|| named.and_then(|(_, o)| class_of_line(o.pgn)));
    let by_material = gambit_by_material(positions);
    let by_name = named.is_some_and(|(_, o)| is_gambit_name(o.name));
    let gambit = match (by_material, by_name) {
        (Some(by), _) => Some(Gambit {
            by: Some(by),
            evidence: GambitEvidence::Material,
        }),
        (None, true) => Some(Gambit {
            by: None,
            evidence: GambitEvidence::Name,
        }),
        (None, false) => None,
    };
    Classification {
        opening: named.map(|(_, o)| o),
        opening_ply: named.map(|(ply, _)| ply),
        class,
        gambit,
    }
}

/// The class from the first two moves of a game from the standard start; unknown before the
/// first move, and after 1.e4 until black has replied.
fn class_of_first_moves(start: &Position, moves: &[Move]) -> Option<OpeningClass> {
    let first = *moves.first()?;
    let e4 = start.parse_san("e4").ok()?;
    if first != e4 {
        return Some(OpeningClass::Closed);
    }
    let after = start.play(first).ok()?;
    let reply = *moves.get(1)?;
    let e5 = after.parse_san("e5").ok()?;
    Some(if reply == e5 {
        OpeningClass::Open
    } else {
        OpeningClass::SemiOpen
    })
}

/// The class from a data-set line's first two moves.
fn class_of_line(pgn: &str) -> Option<OpeningClass> {
    let mut sans = pgn
        .split_whitespace()
        .filter(|t| !t.trim_end_matches('.').chars().all(|c| c.is_ascii_digit()));
    match (sans.next()?, sans.next()) {
        ("e4", Some("e5")) => Some(OpeningClass::Open),
        ("e4", Some(_)) => Some(OpeningClass::SemiOpen),
        ("e4", None) => None,
        _ => Some(OpeningClass::Closed),
    }
}

/// A name says gambit when it contains `Gambit` (`Countergambit` too) and the gambit was not
/// declined.
fn is_gambit_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("gambit") && !lower.contains("gambit declined")
}

/// The opening, for the material test: the first 30 plies.
const OPENING_PLIES: usize = 30;

/// The side that gave a pawn for development: within the opening, that side has fewer pawns,
/// the same value in pieces and at least as many developed minor pieces as the other side,
/// and stays so for two full moves (five positions in a row). A pawn taken and retaken at
/// once (1.e4 d5 2.exd5 Qxd5) or a move later (the Scotch Game's 4.Nxd4) is no gambit.
fn gambit_by_material(positions: &[Position]) -> Option<Color> {
    let window = &positions[..positions.len().min(OPENING_PLIES + 1)];
    let short = |p: &Position| -> Option<Color> {
        let pawns = |c| p.pieces(c, Role::Pawn).count() as i32;
        let pieces = |c| piece_points(p, c);
        if pieces(Color::White) != pieces(Color::Black) {
            return None;
        }
        let (w, b) = (pawns(Color::White), pawns(Color::Black));
        let giver = match w.cmp(&b) {
            std::cmp::Ordering::Less => Color::White,
            std::cmp::Ordering::Greater => Color::Black,
            std::cmp::Ordering::Equal => return None,
        };
        (developed_minors(p, giver) >= developed_minors(p, !giver)).then_some(giver)
    };
    window.windows(5).find_map(|w| {
        let g = short(&w[0])?;
        w[1..].iter().all(|p| short(p) == Some(g)).then_some(g)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chess_rules::Game;

    fn line(sans: &str) -> Classification {
        let mut game = Game::new(Position::startpos());
        for san in sans.split_whitespace() {
            game.play_san(san).unwrap();
        }
        classify(game.start(), game.moves())
    }

    #[test]
    fn every_line_of_the_data_set_replays() {
        let (positions, rows, errors) = data_stats();
        assert!(errors.is_empty(), "bad rows: {errors:?}");
        assert!(rows > 3_700, "only {rows} rows read");
        // A handful of rows name a position another row names first.
        assert!(
            positions > 3_600 && positions <= rows,
            "{positions} positions"
        );
    }

    #[test]
    fn deepest_named_position_wins() {
        let c = line("e4 c5");
        let o = c.opening.unwrap();
        assert_eq!((o.eco, o.name), ("B20", "Sicilian Defense"));
        assert_eq!(c.opening_ply, Some(2));
        assert_eq!(c.class, Some(OpeningClass::SemiOpen));
        assert_eq!(c.gambit, None);
        assert_eq!(c.summary(), "B20 Sicilian Defense  semi-open");

        let c = line("e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7");
        let o = c.opening.unwrap();
        assert_eq!(o.eco, "C84");
        assert_eq!(o.name, "Ruy Lopez: Closed");
        assert_eq!(c.class, Some(OpeningClass::Open));
        // Moves past the last named position keep it.
        let c = line("e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7 h3 h6 a3");
        assert_eq!(c.opening.unwrap().name, "Ruy Lopez: Closed");
        assert_eq!(c.opening_ply, Some(10));
    }

    #[test]
    fn transpositions_count() {
        // The Queen's Gambit Declined reached by 1.c4 e6 2.Nc3 d5 3.d4 is named as by 1.d4.
        let direct = line("d4 d5 c4 e6 Nc3");
        let transposed = line("c4 e6 Nc3 d5 d4");
        assert_eq!(direct.opening, transposed.opening);
        let o = direct.opening.unwrap();
        assert_eq!(
            (o.eco, o.name),
            ("D31", "Queen's Gambit Declined: Queen's Knight Variation")
        );
        assert_eq!(transposed.opening_ply, Some(5));
        assert_eq!(transposed.class, Some(OpeningClass::Closed));
    }

    #[test]
    fn classes() {
        assert_eq!(line("e4 e5").class, Some(OpeningClass::Open));
        assert_eq!(line("e4 e6").class, Some(OpeningClass::SemiOpen));
        assert_eq!(line("e4").class, None);
        assert_eq!(line("d4").class, Some(OpeningClass::Closed));
        assert_eq!(line("Nf3 d5 c4").class, Some(OpeningClass::Closed));
        assert_eq!(line("").class, None);
        // From a FEN alone the class comes from the named line.
        let pos =
            Position::from_fen("rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2")
                .unwrap();
        let c = classify(&pos, &[]);
        assert_eq!(c.opening.unwrap().name, "King's Knight Opening");
        assert_eq!(c.class, Some(OpeningClass::Open));
    }

    #[test]
    fn gambits_by_name_and_by_material() {
        // Queen's Gambit Accepted: named, and black is a pawn up.
        let c = line("d4 d5 c4 dxc4");
        assert!(
            c.opening
                .unwrap()
                .name
                .starts_with("Queen's Gambit Accepted")
        );
        assert_eq!(c.gambit.map(|g| g.evidence), Some(GambitEvidence::Name));
        // Evans Gambit accepted, played on: white stays a pawn down, developed.
        let c = line("e4 e5 Nf3 Nc6 Bc4 Bc5 b4 Bxb4 c3 Ba5 d4 exd4 O-O");
        assert_eq!(
            c.gambit,
            Some(Gambit {
                by: Some(Color::White),
                evidence: GambitEvidence::Material
            })
        );
        // Declined: not a gambit.
        let c = line("d4 d5 c4 e6");
        assert_eq!(c.gambit, None);
        // A pawn taken back at once is not a gambit (Scandinavian).
        let c = line("e4 d5 exd5 Qxd5 Nc3 Qa5");
        assert_eq!(c.gambit, None);
        assert_eq!(c.class, Some(OpeningClass::SemiOpen));
        // The Scotch Game takes the pawn back on move 4: no gambit.
        assert_eq!(line("e4 e5 Nf3 Nc6 d4 exd4 Nxd4 Nf6 Nc3 Bb4").gambit, None);
        // The Smith-Morra: white stays a pawn down, developing.
        let c = line("e4 c5 d4 cxd4 c3 dxc3 Nxc3 Nc6 Nf3 d6 Bc4");
        assert_eq!(c.gambit.and_then(|g| g.by), Some(Color::White));
    }

    #[test]
    fn no_opening_for_unnamed_positions() {
        let pos = Position::from_fen("8/8/8/4k3/8/8/4K3/8 w - - 0 1").unwrap();
        let c = classify(&pos, &[]);
        assert_eq!(c.opening, None);
        assert_eq!(c.class, None);
        assert_eq!(c.summary(), "- (no named opening)  -");
    }
}
