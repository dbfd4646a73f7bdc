//! The request schemas: enough of each message to fill its fields with hostile values, and
//! which processes serve each RPC.

#[derive(Clone, Copy, Debug)]
pub(super) enum Kind {
    /// A FEN-like string field.
    Fen,
    /// A move-like string field.
    Move,
    /// A game id.
    GameId,
    /// PGN text.
    Pgn,
    /// Free text (names, tag values, time control text, results).
    Text,
    U32,
    U64,
    /// An enum (a colour).
    Enum,
    Bool,
    Msg(&'static [(u32, Kind)]),
    Repeated(&'static Kind),
}

const LIMITS: &[(u32, Kind)] = &[
    (1, Kind::U32),
    (2, Kind::U64),
    (3, Kind::U64),
    (4, Kind::U32),
];
const STRENGTH: &[(u32, Kind)] = &[
    (1, Kind::U32),
    (2, Kind::U32),
    (3, Kind::U64),
    (4, Kind::U64),
];
const POSITION_MOVES: &[(u32, Kind)] = &[
    (1, Kind::Fen),
    (2, Kind::Repeated(&Kind::Move)),
    (3, Kind::Bool),
];
const ANALYZE: &[(u32, Kind)] = &[
    (1, Kind::Fen),
    (2, Kind::Repeated(&Kind::Move)),
    (3, Kind::Msg(LIMITS)),
    (4, Kind::U32),
];
const TAG: &[(u32, Kind)] = &[(1, Kind::Text), (2, Kind::Text)];
const PERIOD: &[(u32, Kind)] = &[(1, Kind::U32), (2, Kind::U64), (3, Kind::U64)];
const TIME_CONTROL: &[(u32, Kind)] = &[(1, Kind::Repeated(&Kind::Msg(PERIOD)))];

/// Which processes serve an RPC: the gateway always; a backend when its name is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Served {
    Rules,
    Search,
    GatewayOnly,
}

pub(super) struct Rpc {
    pub path: &'static str,
    pub fields: &'static [(u32, Kind)],
    pub streaming: bool,
    pub served: Served,
}

const fn rpc(
    path: &'static str,
    fields: &'static [(u32, Kind)],
    streaming: bool,
    served: Served,
) -> Rpc {
    Rpc {
        path,
        fields,
        streaming,
        served,
    }
}

pub(super) const RPCS: &[Rpc] = &[
    rpc(
        "/chess.v1.RulesService/LegalMoves",
        POSITION_MOVES,
        false,
        Served::Rules,
    ),
    rpc(
        "/chess.v1.RulesService/ConvertMoves",
        POSITION_MOVES,
        false,
        Served::Rules,
    ),
    rpc(
        "/chess.v1.RulesService/ValidateFen",
        &[(1, Kind::Fen)],
        false,
        Served::Rules,
    ),
    rpc(
        "/chess.v1.RulesService/PositionStatus",
        POSITION_MOVES,
        false,
        Served::Rules,
    ),
    rpc(
        "/chess.v1.RulesService/ParsePgn",
        &[(1, Kind::Pgn)],
        false,
        Served::Rules,
    ),
    rpc(
        "/chess.v1.RulesService/WritePgn",
        &[
            (1, Kind::Repeated(&Kind::Msg(TAG))),
            (2, Kind::Fen),
            (3, Kind::Repeated(&Kind::Move)),
            (4, Kind::Text),
        ],
        false,
        Served::Rules,
    ),
    rpc(
        "/chess.v1.GameService/CreateGame",
        &[
            (1, Kind::Fen),
            (2, Kind::Msg(TIME_CONTROL)),
            (3, Kind::Text),
            (4, Kind::Text),
            (5, Kind::Text),
        ],
        false,
        Served::Rules,
    ),
    rpc(
        "/chess.v1.GameService/GetGame",
        &[(1, Kind::GameId)],
        false,
        Served::Rules,
    ),
    rpc(
        "/chess.v1.GameService/MakeMove",
        &[
            (1, Kind::GameId),
            (2, Kind::Move),
            (3, Kind::Enum),
            (4, Kind::U32),
            (5, Kind::Bool),
        ],
        false,
        Served::Rules,
    ),
    rpc(
        "/chess.v1.GameService/WatchGame",
        &[(1, Kind::GameId)],
        true,
        Served::Rules,
    ),
    rpc(
        "/chess.v1.GameService/Resign",
        &[(1, Kind::GameId), (2, Kind::Enum)],
        false,
        Served::Rules,
    ),
    rpc(
        "/chess.v1.GameService/RespondToDraw",
        &[(1, Kind::GameId), (2, Kind::Enum), (3, Kind::Bool)],
        false,
        Served::Rules,
    ),
    rpc(
        "/chess.v1.GameService/ClaimDraw",
        &[(1, Kind::GameId), (2, Kind::Enum), (3, Kind::Move)],
        false,
        Served::Rules,
    ),
    rpc(
        "/chess.v1.AnalysisService/Analyze",
        ANALYZE,
        false,
        Served::Search,
    ),
    rpc(
        "/chess.v1.AnalysisService/AnalyzeStream",
        ANALYZE,
        true,
        Served::Search,
    ),
    rpc(
        "/chess.v1.AnalysisService/AnalyzeBatch",
        &[(1, Kind::Repeated(&Kind::Msg(ANALYZE)))],
        true,
        Served::Search,
    ),
    rpc(
        "/chess.v1.AnalysisService/BestMove",
        &[
            (1, Kind::Fen),
            (2, Kind::Repeated(&Kind::Move)),
            (3, Kind::Msg(STRENGTH)),
            (4, Kind::Msg(LIMITS)),
        ],
        false,
        Served::Search,
    ),
    rpc(
        "/chess.v1.AnalysisService/ReviewGame",
        &[(1, Kind::Pgn), (2, Kind::U32), (3, Kind::Msg(LIMITS))],
        false,
        Served::Search,
    ),
    rpc(
        "/chess.v1.AnalysisService/EvaluatePositions",
        &[(1, Kind::Repeated(&Kind::Fen))],
        false,
        Served::Search,
    ),
    rpc(
        "/chess.v1.GatewayService/ServerInfo",
        &[],
        false,
        Served::GatewayOnly,
    ),
    rpc(
        "/chess.v1.GatewayService/EngineMove",
        &[
            (1, Kind::GameId),
            (2, Kind::Msg(STRENGTH)),
            (3, Kind::Msg(LIMITS)),
            (4, Kind::Bool),
        ],
        false,
        Served::GatewayOnly,
    ),
];
