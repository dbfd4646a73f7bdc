//! FEN (Forsyth-Edwards Notation) reading and writing.

use std::fmt::Write as _;

use crate::{
    CastlingRights, CastlingSide, Color, File, Piece, Position, PositionError, Rank, Setup, Square,
};

/// The start position in FEN.
pub const STARTPOS_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// What is wrong with a FEN string. Syntax faults are found first; a well-formed FEN that
/// describes an impossible position gives [`FenError::Position`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FenError {
    #[error("empty FEN")]
    Empty,
    #[error(
        "expected 4 to 6 space-separated fields (placement, side to move, castling, en passant, \
         [halfmove clock, [fullmove number]]), found {found}"
    )]
    WrongFieldCount { found: usize },
    #[error("placement has {found} ranks separated by '/', expected 8")]
    WrongRankCount { found: usize },
    #[error(
        "bad piece letter {ch:?} in rank {rank} (expected one of PNBRQK pnbrqk or a digit 1-8)"
    )]
    BadPiece { ch: char, rank: char },
    #[error("rank {rank} describes {files} files, expected 8 (text {text:?})")]
    BadRankLength {
        rank: char,
        files: u32,
        text: String,
    },
    #[error("side to move must be 'w' or 'b', found {0:?}")]
    BadTurn(String),
    #[error("castling field {0:?} is not '-' or a combination of K, Q, k, q without repeats")]
    BadCastling(String),
    #[error("en-passant field {0:?} is not '-' or a square on rank 3 or 6")]
    BadEnPassantSyntax(String),
    #[error("{field} {text:?} is not a number")]
    BadCounter { field: &'static str, text: String },
    /// A counter too large to hold, reported as written (cut short past 40 digits).
    #[error("{field} {text} is out of range ({min}..={max})")]
    CounterOutOfRange {
        field: &'static str,
        text: String,
        min: u32,
        max: u32,
    },
    #[error(transparent)]
    Position(#[from] PositionError),
}

/// How FEN writing treats the en-passant field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EnPassantMode {
    /// Only when an en-passant capture is legal (the default). Two positions that differ
    /// only by an unusable en-passant square then have the same FEN.
    #[default]
    Legal,
    /// After every two-square pawn move, as the plain FEN standard writes it.
    Always,
}

/// Options for [`Position::fen_with`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FenOptions {
    pub en_passant: EnPassantMode,
    /// Write the half-move clock and full-move number (six fields) or stop after four.
    pub counters: bool,
}

impl Default for FenOptions {
    fn default() -> Self {
        FenOptions {
            en_passant: EnPassantMode::Legal,
            counters: true,
        }
    }
}

impl Setup {
    /// Reads FEN text into an unchecked setup. Missing counters default to `0 1`.
    ///
    /// ```
    /// use chess_rules::{FenError, Setup};
    /// assert!(Setup::from_fen("8/8/8/8/8/8/8/8 w - -").is_ok());
    /// assert_eq!(
    ///     Setup::from_fen("8/8/8/8/8/8/8/8 x - -"),
    ///     Err(FenError::BadTurn("x".into()))
    /// );
    /// ```
    pub fn from_fen(fen: &str) -> Result<Setup, FenError> {
        let fields: Vec<&str> = fen.split_ascii_whitespace().collect();
        if fields.is_empty() {
            return Err(FenError::Empty);
        }
        if !(4..=6).contains(&fields.len()) {
            return Err(FenError::WrongFieldCount {
                found: fields.len(),
            });
        }
        let mut setup = Setup::empty();
        let ranks: Vec<&str> = fields[0].split('/').collect();
        if ranks.len() != 8 {
            return Err(FenError::WrongRankCount { found: ranks.len() });
        }
        for (i, text) in ranks.iter().enumerate() {
            let rank = Rank::new(7 - i as u32);
            let mut file = 0u32;
            for ch in text.chars() {
                if let Some(d) = ch.to_digit(10).filter(|d| (1..=8).contains(d)) {
                    file += d;
                } else if let Some(piece) = Piece::from_fen_char(ch).filter(|_| ch.is_ascii()) {
                    if file < 8 {
                        setup.put(Square::from_coords(File::new(file), rank), piece);
                    }
                    file += 1;
                } else {
                    return Err(FenError::BadPiece {
                        ch,
                        rank: rank.char(),
                    });
                }
            }
            if file != 8 {
                return Err(FenError::BadRankLength {
                    rank: rank.char(),
                    files: file,
                    text: (*text).to_owned(),
                });
            }
        }
        let turn = fields[1];
        setup.turn = match turn {
            "w" => Color::White,
            "b" => Color::Black,
            _ => return Err(FenError::BadTurn(turn.to_owned())),
        };
        setup.castling = parse_castling(fields[2])?;
        setup.ep_square = match fields[3] {
            "-" => None,
            s => match s.parse::<Square>() {
                Ok(sq) if matches!(sq.rank(), Rank::Third | Rank::Sixth) => Some(sq),
                _ => return Err(FenError::BadEnPassantSyntax(s.to_owned())),
            },
        };
        if let Some(text) = fields.get(4) {
            setup.halfmoves = parse_counter(text, "halfmove clock")?;
        }
        if let Some(text) = fields.get(5) {
            setup.fullmoves = parse_counter(text, "fullmove number")?;
        }
        Ok(setup)
    }
}

fn parse_counter(text: &str, field: &'static str) -> Result<u32, FenError> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(FenError::BadCounter {
            field,
            text: text.to_owned(),
        });
    }
    // Too many digits for u32 is out of range rather than malformed, and reported as written
    // (a saturated value would name a number nobody gave). Values that fit are range-checked
    // with the position.
    text.parse::<u32>().map_err(|_| {
        let (min, max) = match field {
            "halfmove clock" => (0, crate::MAX_HALFMOVES),
            _ => (1, crate::MAX_FULLMOVES),
        };
        let text = match text.len() {
            0..=40 => text.to_owned(),
            n => format!("{}... ({n} digits)", &text[..40]),
        };
        FenError::CounterOutOfRange {
            field,
            text,
            min,
            max,
        }
    })
}

fn parse_castling(text: &str) -> Result<CastlingRights, FenError> {
    if text == "-" {
        return Ok(CastlingRights::NONE);
    }
    let mut rights = CastlingRights::NONE;
    if text.is_empty() {
        return Err(FenError::BadCastling(text.to_owned()));
    }
    for ch in text.chars() {
        let (color, side) = match ch {
            'K' => (Color::White, CastlingSide::KingSide),
            'Q' => (Color::White, CastlingSide::QueenSide),
            'k' => (Color::Black, CastlingSide::KingSide),
            'q' => (Color::Black, CastlingSide::QueenSide),
            _ => return Err(FenError::BadCastling(text.to_owned())),
        };
        if rights.has(color, side) {
            return Err(FenError::BadCastling(text.to_owned()));
        }
        rights = rights.with(color, side);
    }
    Ok(rights)
}

impl Position {
    /// Reads and validates a FEN.
    ///
    /// ```
    /// use chess_rules::{FenError, Position, PositionError, Square};
    /// let pos = Position::from_fen("4k3/8/8/8/8/8/8/4K3 w - -").unwrap();
    /// assert_eq!(pos.fullmoves(), 1);
    /// let err = Position::from_fen("4k3/8/8/8/8/8/8/4K2P w - - 0 1").unwrap_err();
    /// assert_eq!(err, FenError::Position(PositionError::PawnOnBackRank(Square::H1)));
    /// assert_eq!(err.to_string(), "pawn on h1: pawns cannot stand on the first or last rank");
    /// ```
    pub fn from_fen(fen: &str) -> Result<Position, FenError> {
        Ok(Position::from_setup(&Setup::from_fen(fen)?)?)
    }

    /// FEN with counters. The en-passant square is written only when an en-passant capture is
    /// legal; see [`Position::fen_with`] for the plain form.
    pub fn fen(&self) -> String {
        self.fen_with(FenOptions::default())
    }

    /// The first four FEN fields (as EPD writes them), en-passant square only when legal.
    pub fn epd(&self) -> String {
        self.fen_with(FenOptions {
            counters: false,
            ..FenOptions::default()
        })
    }

    /// FEN with chosen options.
    ///
    /// ```
    /// use chess_rules::{EnPassantMode, FenOptions, Position};
    /// let pos = Position::startpos();
    /// let pos = pos.play(pos.parse_uci("e2e4").unwrap()).unwrap();
    /// // No black pawn can take on e3, so the default form omits the square ...
    /// assert_eq!(pos.fen(), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
    /// // ... and the plain form writes it after every two-square move.
    /// let plain = FenOptions { en_passant: EnPassantMode::Always, counters: true };
    /// assert_eq!(pos.fen_with(plain), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1");
    /// ```
    pub fn fen_with(&self, opts: FenOptions) -> String {
        let mut out = String::with_capacity(90);
        for rank in Rank::ALL.iter().rev() {
            let mut empty = 0;
            for file in File::ALL {
                match self.piece_at(Square::from_coords(file, *rank)) {
                    Some(p) => {
                        if empty > 0 {
                            let _ = write!(out, "{empty}");
                            empty = 0;
                        }
                        out.push(p.fen_char());
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                let _ = write!(out, "{empty}");
            }
            if *rank != Rank::First {
                out.push('/');
            }
        }
        let ep = match opts.en_passant {
            EnPassantMode::Legal => self.legal_ep_square(),
            EnPassantMode::Always => self.ep_square,
        };
        let _ = write!(out, " {} {} ", self.turn.fen_char(), self.castling);
        match ep {
            Some(sq) => {
                let _ = write!(out, "{sq}");
            }
            None => out.push('-'),
        }
        if opts.counters {
            let _ = write!(out, " {} {}", self.halfmoves, self.fullmoves);
        }
        out
    }
}

impl std::str::FromStr for Position {
    type Err = FenError;
    fn from_str(s: &str) -> Result<Position, FenError> {
        Position::from_fen(s)
    }
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.fen())
    }
}
