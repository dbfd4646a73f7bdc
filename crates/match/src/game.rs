//! One game between two engines: the clock, the rules (our own chess-rules decide legality and
//! the end of the game) and adjudication.

use std::collections::HashMap;
use std::time::Duration;

use chess_rules::{Color, Position};

use crate::engine::{Engine, SearchInfo, mate_plies};

/// How long each engine may think.
#[derive(Clone, Copy, Debug)]
pub enum Control {
    /// Base time and increment per move, kept by the runner: an engine that overruns loses.
    Clock { base: Duration, inc: Duration },
    /// A fixed number of nodes per move: independent of the machine's load.
    Nodes(u64),
    /// A fixed time per move.
    MoveTime(Duration),
}

impl Control {
    /// Whether two controls are of one kind (both clocks, both node counts or both move
    /// times), as the two sides of a match must be.
    pub fn same_kind(self, other: Control) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&other)
    }

    /// A clock's base time and increment; zero for the other controls.
    fn clock(self) -> (Duration, Duration) {
        match self {
            Control::Clock { base, inc } => (base, inc),
            _ => (Duration::ZERO, Duration::ZERO),
        }
    }

    /// `10+0.1` (seconds), `nodes=20000` or `movetime=100` (milliseconds).
    pub fn parse(text: &str) -> Result<Control, String> {
        let bad = || {
            format!(
                "time control {text:?}: expected BASE+INC seconds (10+0.1), nodes=N or movetime=MS"
            )
        };
        if let Some(n) = text.strip_prefix("nodes=") {
            return n
                .parse()
                .ok()
                .filter(|&n| n > 0)
                .map(Control::Nodes)
                .ok_or_else(bad);
        }
        if let Some(ms) = text.strip_prefix("movetime=") {
            return ms
                .parse()
                .ok()
                .filter(|&ms| ms > 0)
                .map(|ms| Control::MoveTime(Duration::from_millis(ms)))
                .ok_or_else(bad);
        }
        let (base, inc) = text.split_once('+').unwrap_or((text, "0"));
        let secs = |s: &str| s.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0);
        match (secs(base), secs(inc)) {
            (Some(b), Some(i)) if b > 0.0 => Ok(Control::Clock {
                base: Duration::from_secs_f64(b),
                inc: Duration::from_secs_f64(i),
            }),
            _ => Err(bad()),
        }
    }
}

/// When the runner ends a game early. Scores are the engines' own, from their side.
#[derive(Clone, Copy, Debug)]
pub struct Adjudication {
    /// A draw once both engines have scored within `draw_cp` of 0 for `draw_moves` moves
    /// each in a row, from move `draw_after` on.
    pub draw_after: u32,
    pub draw_moves: u32,
    pub draw_cp: i32,
    /// A win once both agree that one side is ahead by at least `win_cp` for `win_moves`
    /// moves each in a row.
    pub win_moves: u32,
    pub win_cp: i32,
}

impl Default for Adjudication {
    fn default() -> Adjudication {
        Adjudication {
            draw_after: 40,
            draw_moves: 8,
            draw_cp: 10,
            win_moves: 4,
            win_cp: 1000,
        }
    }
}

/// A finished game.
pub struct Record {
    pub start_fen: String,
    /// The moves played in UCI notation, the opening's first.
    pub moves: Vec<String>,
    /// What the engine said of each move, one entry per move: `None` for the opening's.
    pub info: Vec<Option<SearchInfo>>,
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub result: &'static str,
    pub reason: String,
}

fn loss_for(c: Color) -> &'static str {
    match c {
        Color::White => "0-1",
        Color::Black => "1-0",
    }
}

/// The `go` command for `side` to move, and how long to wait for its answer, under the two
/// sides' `controls` with the clocks showing `clocks` (White's, Black's).
fn go_command(controls: [Control; 2], clocks: [Duration; 2], side: Color) -> (String, Duration) {
    let inc = |c: Control| c.clock().1;
    let ours = if side == Color::White { 0 } else { 1 };
    match controls[ours] {
        Control::Clock { .. } => (
            format!(
                "go wtime {} btime {} winc {} binc {}",
                clocks[0].as_millis(),
                clocks[1].as_millis(),
                inc(controls[0]).as_millis(),
                inc(controls[1]).as_millis()
            ),
            clocks[ours] + Duration::from_secs(5),
        ),
        Control::Nodes(n) => (format!("go nodes {n}"), Duration::from_secs(120)),
        Control::MoveTime(t) => (
            format!("go movetime {}", t.as_millis()),
            t + Duration::from_secs(5),
        ),
    }
}

/// Plays `opening` (UCI moves) from `start`, then lets `white` and `black` play it out, each
/// under its own control (`controls`: White's, Black's; of one kind, see
/// [`Control::same_kind`]).
pub fn play(
    start: &Position,
    opening: &[String],
    white: &mut Engine,
    black: &mut Engine,
    controls: [Control; 2],
    adjudication: &Adjudication,
) -> Result<Record, String> {
    let mut pos = start.clone();
    let mut moves = Vec::new();
    let mut seen: HashMap<u64, u32> = HashMap::new();
    for m in opening {
        let mv = pos
            .parse_uci(m)
            .map_err(|e| format!("opening move {m} in {}: {e}", pos.fen()))?;
        pos.play_unchecked(mv);
        moves.push(m.clone());
    }
    *seen.entry(pos.repetition_key()).or_default() += 1;
    white.new_game()?;
    black.new_game()?;
    let (mut clock_w, mut clock_b) = (controls[0].clock().0, controls[1].clock().0);
    // Consecutive moves of each side that fit the draw and win rules.
    let mut drawish = [0u32; 2];
    let mut winning = [0i32; 2];
    let start_fen = start.fen();
    let position_cmd = |moves: &[String]| {
        let mut s = format!("position fen {start_fen}");
        if !moves.is_empty() {
            s.push_str(" moves ");
            s.push_str(&moves.join(" "));
        }
        s
    };
    let mut info: Vec<Option<SearchInfo>> = vec![None; moves.len()];
    let (result, reason): (&'static str, String) = loop {
        if !pos.has_legal_moves() {
            break if pos.is_check() {
                (loss_for(pos.turn()), "checkmate".into())
            } else {
                ("1/2-1/2", "stalemate".into())
            };
        }
        if pos.is_insufficient_material() {
            break ("1/2-1/2", "insufficient material".into());
        }
        if pos.halfmoves() >= 100 {
            break ("1/2-1/2", "fifty-move rule".into());
        }
        if seen.get(&pos.repetition_key()).copied().unwrap_or(0) >= 3 {
            break ("1/2-1/2", "threefold repetition".into());
        }
        if moves.len() >= 600 {
            break ("1/2-1/2", "move limit".into());
        }
        let side = pos.turn();
        let (engine, left, control) = match side {
            Color::White => (&mut *white, clock_w, controls[0]),
            Color::Black => (&mut *black, clock_b, controls[1]),
        };
        let (go, timeout) = go_command(controls, [clock_w, clock_b], side);
        let reply = match engine.search(&position_cmd(&moves), &go, timeout) {
            Ok(r) => r,
            Err(e) => break (loss_for(side), e),
        };
        if let Control::Clock { inc, .. } = control {
            if reply.info.elapsed > left {
                break (loss_for(side), "time forfeit".into());
            }
            let now = left - reply.info.elapsed + inc;
            match side {
                Color::White => clock_w = now,
                Color::Black => clock_b = now,
            }
        }
        let mv = match pos.parse_uci(&reply.best) {
            Ok(m) => m,
            Err(_) => {
                let reason = format!("illegal move {:?} by {}", reply.best, engine.name);
                break (loss_for(side), reason);
            }
        };
        // Adjudication on the engines' scores (each from its own side).
        let i = side.index();
        match reply.info.score {
            Some(s) if s.abs() <= adjudication.draw_cp => drawish[i] += 1,
            _ => drawish[i] = 0,
        }
        winning[i] = match reply.info.score {
            // Positive: this side says it wins; negative: it says it loses. Kept in White's view.
            Some(s) if s.abs() >= adjudication.win_cp || mate_plies(s).is_some() => {
                let white_view = if side == Color::White { s } else { -s };
                let prev = winning[i];
                if prev != 0 && prev.signum() == white_view.signum() {
                    prev + prev.signum()
                } else {
                    white_view.signum()
                }
            }
            _ => 0,
        };
        pos.play_unchecked(mv);
        moves.push(reply.best);
        info.push(Some(reply.info));
        *seen.entry(pos.repetition_key()).or_default() += 1;
        let full_moves = (moves.len() / 2) as u32;
        if full_moves >= adjudication.draw_after
            && adjudication.draw_moves > 0
            && drawish.iter().all(|&d| d >= adjudication.draw_moves)
        {
            break ("1/2-1/2", "adjudicated draw".into());
        }
        let w = adjudication.win_moves as i32;
        if w > 0 && winning[0] >= w && winning[1] >= w {
            break ("1-0", "adjudicated win".into());
        }
        if w > 0 && winning[0] <= -w && winning[1] <= -w {
            break ("0-1", "adjudicated win".into());
        }
    };
    Ok(Record {
        start_fen,
        moves,
        info,
        result,
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_controls() {
        assert!(matches!(
            Control::parse("10+0.1"),
            Ok(Control::Clock { .. })
        ));
        assert!(matches!(
            Control::parse("nodes=20000"),
            Ok(Control::Nodes(20000))
        ));
        assert!(matches!(
            Control::parse("movetime=50"),
            Ok(Control::MoveTime(_))
        ));
        for bad in ["", "x", "0+1", "nodes=0", "movetime=-3", "10+y"] {
            assert!(Control::parse(bad).is_err(), "{bad}");
        }
        let p = |t: &str| Control::parse(t).unwrap();
        assert!(p("10+0.1").same_kind(p("1+0")));
        assert!(p("nodes=5").same_kind(p("nodes=7")));
        assert!(!p("nodes=5").same_kind(p("movetime=5")));
        assert!(!p("1+0").same_kind(p("movetime=5")));
    }

    /// Each side is told its own increment and both clocks, and searches under its own
    /// control.
    #[test]
    fn each_side_gets_its_own_control() {
        let p = |t: &str| Control::parse(t).unwrap();
        let ms = Duration::from_millis;
        let clocks = [ms(9_000), ms(4_500)];
        let clock = [p("10+0.1"), p("5+0.05")];
        assert_eq!(
            go_command(clock, clocks, Color::White),
            (
                "go wtime 9000 btime 4500 winc 100 binc 50".into(),
                ms(14_000)
            )
        );
        assert_eq!(
            go_command(clock, clocks, Color::Black).1,
            ms(9_500),
            "Black waits on its own clock"
        );
        let nodes = [p("nodes=1000"), p("nodes=1100")];
        assert_eq!(go_command(nodes, clocks, Color::White).0, "go nodes 1000");
        assert_eq!(go_command(nodes, clocks, Color::Black).0, "go nodes 1100");
        let fixed = [p("movetime=40"), p("movetime=60")];
        assert_eq!(
            go_command(fixed, clocks, Color::Black),
            ("go movetime 60".into(), ms(5_060))
        );
    }
}
