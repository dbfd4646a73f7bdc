//! The scenarios (what each request does) and the weights of the mix scenario, as the
//! command line names them and the reports print them.

use clap::ValueEnum;

/// What each request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    /// AnalysisService/Analyze at the given depth, nodes or time, with MultiPV.
    Analyze,
    /// AnalysisService/AnalyzeStream: reads every depth's message to the final one.
    AnalyzeStream,
    /// AnalysisService/EvaluatePositions: --batch positions per call, static evaluation.
    Evaluate,
    /// Games against the engine: GameService/CreateGame, the client's random legal moves
    /// (MakeMove) and the engine's replies (GatewayService/EngineMove with play=true).
    Game,
    /// Games between two clients: GameService/CreateGame, then random legal MakeMove calls
    /// (with expected_ply) for both sides, a new game after --game-plies. No engine: what it
    /// measures is the game store, and it runs straight against a rules service too.
    Moves,
    /// RulesService queries in turn: LegalMoves, PositionStatus, ValidateFen, ConvertMoves.
    Rules,
    /// A weighted mix of the others (--mix).
    Mix,
}

impl Scenario {
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Analyze => "analyze",
            Scenario::AnalyzeStream => "analyze-stream",
            Scenario::Evaluate => "evaluate",
            Scenario::Game => "game",
            Scenario::Moves => "moves",
            Scenario::Rules => "rules",
            Scenario::Mix => "mix",
        }
    }
}

/// The mix scenario's weights.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mix(pub Vec<(Scenario, u32)>);

/// `SCENARIO=WEIGHT,...` for `--mix`.
pub fn parse_mix(text: &str) -> Result<Mix, String> {
    let mut out: Vec<(Scenario, u32)> = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, weight) = part.split_once('=').unwrap_or((part, "1"));
        let scenario = Scenario::from_str(name.trim(), true).map_err(|_| {
            format!(
                "{name:?} is not a scenario (analyze, analyze-stream, evaluate, game, moves, rules)"
            )
        })?;
        if scenario == Scenario::Mix {
            return Err("a mix cannot contain `mix`".to_owned());
        }
        let weight: u32 = weight
            .trim()
            .parse()
            .map_err(|_| format!("{weight:?} is not a weight (a whole number)"))?;
        if out.iter().any(|(s, _)| *s == scenario) {
            return Err(format!("{} twice in the mix", scenario.name()));
        }
        if weight > 0 {
            out.push((scenario, weight));
        }
    }
    if out.is_empty() {
        return Err("the mix needs at least one scenario with a weight above 0".to_owned());
    }
    Ok(Mix(out))
}
