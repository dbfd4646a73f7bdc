//! Why an event may not happen now: one variant per reason, so that callers and tests match
//! the kind; the text (what callers read on the wire) is the `Display` of each.

use chess_rules::{CastlingSide, Color, Outcome, Role, Square};

/// Why an event may not happen now. The session is unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    #[error("the game is over: {0}")]
    GameOver(Outcome),
    #[error("it is {turn}'s turn, not {side}'s")]
    NotYourTurn { side: Color, turn: Color },
    #[error("expected ply {expected} but the game is at ply {actual}: reload the game and retry")]
    StalePly { expected: u32, actual: u32 },
    /// The move does not parse, or is not legal here (the rules library's reason).
    #[error("{0}")]
    IllegalMove(String),
    #[error("a null move cannot be played in a game")]
    NullMove,
    #[error("your opponent's draw offer is pending: accept or decline it instead of offering")]
    OfferPending,
    #[error(
        "your last draw offer was declined: you may offer again after your opponent has offered"
    )]
    OfferBlocked,
    #[error("there is no draw offer from {0}'s opponent to answer")]
    NoDrawOffer(Color),
    /// A claim that declares a move (`san`) after which there is nothing to claim.
    #[error(
        "after {san} the position would not occur a third time and fifty moves would not be complete"
    )]
    NoClaimAfter { san: String },
    #[error(
        "no draw to claim: this position has occurred {repetitions} time(s) and the fifty-move count is at {halfmoves} half-moves"
    )]
    NoClaim { repetitions: usize, halfmoves: u32 },
    #[error("the flag has fallen")]
    FlagFallen,
    #[error("that flag has not fallen")]
    FlagNotFallen,
    #[error(transparent)]
    TouchMove(#[from] TouchMove),
    #[error("{0:?} is not a square")]
    NotASquare(String),
    #[error("there is no piece on {0}")]
    NothingTouched(Square),
    #[error("at most {limit} touches per move: make the move")]
    TooManyTouches { limit: usize },
    #[error("illegal moves are refused in this game (it was created with illegal_moves: reject)")]
    NoArbiter,
    #[error("takebacks are not allowed in this game (it was created without takebacks)")]
    NoTakebacks,
    #[error("{0} has no move to take back")]
    NothingToTakeBack(Color),
    #[error("corrupt event log: {0}")]
    Corrupt(String),
}

/// How a move breaks touch-move (FIDE 4.3 and 4.4). A role is `None` where the square is
/// empty (it is then called a "piece").
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TouchMove {
    #[error(
        "touch-move (FIDE 4.3.1): you touched your {} on {square}, which can move: move it",
        name(*role)
    )]
    MoveIt { role: Option<Role>, square: Square },
    #[error(
        "touch-move (FIDE 4.3.2): you touched the opponent's {} on {square}, which can be captured: capture it",
        name(*role)
    )]
    CaptureIt { role: Option<Role>, square: Square },
    #[error(
        "touch-move (FIDE 4.3.3): you touched your {} on {own} and the opponent's {} on {theirs}: capture it with that piece",
        name(*own_role),
        name(*their_role)
    )]
    CaptureWithIt {
        own_role: Option<Role>,
        own: Square,
        their_role: Option<Role>,
        theirs: Square,
    },
    #[error(
        "touch-move (FIDE 4.3.3): you touched your {} on {square} first, which can move: move it",
        name(*role)
    )]
    MoveFirst { role: Option<Role>, square: Square },
    #[error(
        "touch-move (FIDE 4.3.3): you touched the opponent's {} on {square} first, which can be captured: capture it",
        name(*role)
    )]
    CaptureFirst { role: Option<Role>, square: Square },
    #[error(
        "touch-move (FIDE 4.4.1): you touched your king and then the rook on {rook}: castle {}",
        wing(*side)
    )]
    Castle { rook: Square, side: CastlingSide },
    #[error(
        "touch-move (FIDE 4.4.2): you touched the rook on {rook} before your king: no castling on that side this move"
    )]
    NoCastling { rook: Square },
    #[error(
        "touch-move (FIDE 4.4.3): you touched your king and then the rook on {rook}, but castling {} is not legal: make another move with the king",
        wing(*side)
    )]
    KingMove { rook: Square, side: CastlingSide },
}

/// `knight`, `bishop`, ...
fn name(role: Option<Role>) -> &'static str {
    role.map_or("piece", |r| r.name())
}

fn wing(side: CastlingSide) -> &'static str {
    match side {
        CastlingSide::KingSide => "kingside",
        CastlingSide::QueenSide => "queenside",
    }
}
