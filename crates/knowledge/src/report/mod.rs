//! The position report: what a player judges a position by, each item naming the squares and
//! pieces concerned. [`describe`] computes it; [`Report::items`] words it in English and
//! Chinese; `serde_json` writes it as one JSON object.

mod king;
mod pawns;
mod phase;
mod text;
mod types;

use chess_rules::{Bitboard, Color, File, Position, Rank, Role};

pub use king::{CentreControl, Development, KingSafety};
pub use pawns::{PawnChain, PawnStructure};
pub use phase::{EndgameClass, Phase};
pub use types::{
    BishopInfo, Bishops, Files, Item, Material, Pawns, Report, SideBishops, SideMaterial, Sides,
    WinnabilityReport,
};

pub use crate::material::PIECE_VALUES;
use crate::material::piece_points;

/// Describes a position.
///
/// ```
/// use chess_rules::Position;
/// let pos = Position::from_fen("4k3/8/8/8/8/2P5/P1P5/4K3 w - - 0 1").unwrap();
/// let r = chess_knowledge::describe(&pos);
/// assert_eq!(r.pawns.white.doubled, ["c2", "c3"]);
/// assert_eq!(r.pawns.white.isolated, ["a2", "c2", "c3"]);
/// assert_eq!(r.material.balance, 3);
/// ```
pub fn describe(pos: &Position) -> Report {
    let material = material(pos);
    let bishops = bishops(pos);
    let pawns = Pawns {
        white: pawns::pawn_structure(pos, Color::White),
        black: pawns::pawn_structure(pos, Color::Black),
    };
    let files = files(pos);
    let sides = |f: &dyn Fn(Color) -> _| -> Sides<_> {
        Sides {
            white: f(Color::White),
            black: f(Color::Black),
        }
    };
    let king_safety = Sides {
        white: king::king_safety(pos, Color::White),
        black: king::king_safety(pos, Color::Black),
    };
    let development = Sides {
        white: king::development(pos, Color::White),
        black: king::development(pos, Color::Black),
    };
    let centre = Sides {
        white: king::centre(pos, Color::White),
        black: king::centre(pos, Color::Black),
    };
    let space = sides(&|c| king::space(pos, c));
    let phase = phase::phase(pos);
    let endgame = phase::endgame_class(pos);
    let both = crate::winnability(pos, &crate::WinnableBudget::quick());
    let winnability = WinnabilityReport {
        code: both.code(),
        dead: both.is_dead(),
        verdicts: Sides {
            white: both.white.verdict.name(),
            black: both.black.verdict.name(),
        },
        reasons: Sides {
            white: both.white.reason().to_owned(),
            black: both.black.reason().to_owned(),
        },
    };
    let mut report = Report {
        fen: pos.fen(),
        turn: pos.turn(),
        material,
        bishops,
        pawns,
        files,
        king_safety,
        development,
        centre,
        space,
        phase,
        endgame,
        winnability,
        items: Vec::new(),
    };
    report.items = text::items(&report);
    report
}

fn side_material(pos: &Position, color: Color) -> SideMaterial {
    let n = |r| pos.pieces(color, r).count();
    SideMaterial {
        pawns: n(Role::Pawn),
        knights: n(Role::Knight),
        bishops: n(Role::Bishop),
        rooks: n(Role::Rook),
        queens: n(Role::Queen),
        points: n(Role::Pawn) + piece_points(pos, color),
    }
}

fn material(pos: &Position) -> Material {
    let white = side_material(pos, Color::White);
    let black = side_material(pos, Color::Black);
    let dr = white.rooks as i32 - black.rooks as i32;
    let dm = (white.knights + white.bishops) as i32 - (black.knights + black.bishops) as i32;
    let exchange_balance = if dr > 0 && dm < 0 {
        dr.min(-dm)
    } else if dr < 0 && dm > 0 {
        -(-dr).min(dm)
    } else {
        0
    };
    Material {
        balance: white.points as i32 - black.points as i32,
        white,
        black,
        exchange_balance,
    }
}

fn side_bishops(pos: &Position, color: Color) -> SideBishops {
    let bishops = pos.pieces(color, Role::Bishop);
    let own_pawns = pos.pieces(color, Role::Pawn);
    let infos = bishops
        .into_iter()
        .map(|sq| {
            let colour_squares = if sq.is_light() {
                Bitboard::LIGHT_SQUARES
            } else {
                Bitboard::DARK_SQUARES
            };
            let on = (own_pawns & colour_squares).count();
            let off = (own_pawns & !colour_squares).count();
            BishopInfo {
                square: sq.to_string(),
                colour: if sq.is_light() { "light" } else { "dark" },
                own_pawns_on_colour: on,
                own_pawns_off_colour: off,
                quality: match on.cmp(&off) {
                    std::cmp::Ordering::Less => "good",
                    std::cmp::Ordering::Greater => "bad",
                    std::cmp::Ordering::Equal => "neutral",
                },
            }
        })
        .collect();
    SideBishops {
        pair: (bishops & Bitboard::LIGHT_SQUARES).has_any()
            && (bishops & Bitboard::DARK_SQUARES).has_any(),
        bishops: infos,
    }
}

fn bishops(pos: &Position) -> Bishops {
    let w = pos.pieces(Color::White, Role::Bishop);
    let b = pos.pieces(Color::Black, Role::Bishop);
    let opposite_coloured = match (w.single(), b.single()) {
        (Some(x), Some(y)) => x.is_light() != y.is_light(),
        _ => false,
    };
    Bishops {
        white: side_bishops(pos, Color::White),
        black: side_bishops(pos, Color::Black),
        opposite_coloured,
    }
}

fn files(pos: &Position) -> Files {
    let wp = pos.pieces(Color::White, Role::Pawn);
    let bp = pos.pieces(Color::Black, Role::Pawn);
    let mut f = Files {
        open: Vec::new(),
        half_open_white: Vec::new(),
        half_open_black: Vec::new(),
        white_rooks_open: Vec::new(),
        white_rooks_half_open: Vec::new(),
        black_rooks_open: Vec::new(),
        black_rooks_half_open: Vec::new(),
        white_rooks_seventh: Vec::new(),
        black_rooks_seventh: Vec::new(),
    };
    for file in File::ALL {
        let bb = Bitboard::file(file);
        let (w, b) = ((wp & bb).has_any(), (bp & bb).has_any());
        match (w, b) {
            (false, false) => f.open.push(file.to_string()),
            (false, true) => f.half_open_white.push(file.to_string()),
            (true, false) => f.half_open_black.push(file.to_string()),
            (true, true) => {}
        }
    }
    for (color, open, half, seventh) in [
        (
            Color::White,
            &mut f.white_rooks_open,
            &mut f.white_rooks_half_open,
            &mut f.white_rooks_seventh,
        ),
        (
            Color::Black,
            &mut f.black_rooks_open,
            &mut f.black_rooks_half_open,
            &mut f.black_rooks_seventh,
        ),
    ] {
        for sq in pos.pieces(color, Role::Rook) {
            let bb = Bitboard::file(sq.file());
            let ours = (pos.pieces(color, Role::Pawn) & bb).has_any();
            let theirs = (pos.pieces(!color, Role::Pawn) & bb).has_any();
            match (ours, theirs) {
                (false, false) => open.push(sq.to_string()),
                (false, true) => half.push(sq.to_string()),
                _ => {}
            }
            if sq.rank() == Rank::Seventh.relative(color) {
                seventh.push(sq.to_string());
            }
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(fen: &str) -> Report {
        describe(&Position::from_fen(fen).unwrap())
    }

    #[test]
    fn material_and_exchange() {
        // White: rook and 3 pawns; black: bishop and 3 pawns. White is up the exchange.
        let r = report("4k3/ppp5/8/8/8/8/PPP5/R3K1b1 w - - 0 1");
        assert_eq!(r.material.white.points, 8);
        assert_eq!(r.material.black.points, 6);
        assert_eq!(r.material.balance, 2);
        assert_eq!(r.material.exchange_balance, 1);
        let r = report("r3k3/8/8/8/8/8/8/2B1KN2 w - - 0 1");
        assert_eq!(r.material.balance, 1);
        assert_eq!(r.material.exchange_balance, -1);
        let start = report(chess_rules::STARTPOS_FEN);
        assert_eq!(start.material.white.points, 39);
        assert_eq!(start.material.balance, 0);
    }

    #[test]
    fn bishops_pair_good_bad_opposite() {
        // White: bishops c1 (dark) and f1 (light), pawns d4, e5 (dark) and c4 (light)...
        // dark: d4 (dark), e5 (dark); c4 light. Dark bishop has 2 on colour, 1 off: bad.
        let r = report("4k3/8/8/4P3/2PP4/8/8/2B1KB2 w - - 0 1");
        assert!(r.bishops.white.pair);
        let c1 = &r.bishops.white.bishops[0];
        assert_eq!((c1.square.as_str(), c1.colour), ("c1", "dark"));
        assert_eq!((c1.own_pawns_on_colour, c1.own_pawns_off_colour), (2, 1));
        assert_eq!(c1.quality, "bad");
        let f1 = &r.bishops.white.bishops[1];
        assert_eq!(
            (f1.square.as_str(), f1.colour, f1.quality),
            ("f1", "light", "good")
        );
        assert!(!r.bishops.opposite_coloured);
        // One bishop each, light against dark.
        let r = report("2b1k3/8/8/8/8/8/8/2B1K3 w - - 0 1");
        assert!(r.bishops.opposite_coloured);
        assert!(!r.bishops.white.pair);
        assert_eq!(r.endgame, Some(EndgameClass::OppositeBishops));
    }

    #[test]
    fn files_and_rooks() {
        // e-file open, d-file half-open for white (black pawn d6), white rooks e1 and d1,
        // black rook on a2 (the seventh for black... its second rank).
        let r = report("7k/pp3ppp/3p4/8/8/8/r4PPP/3RR1K1 w - - 0 1");
        assert_eq!(r.files.open, ["c", "e"]);
        assert_eq!(r.files.half_open_white, ["a", "b", "d"]);
        assert_eq!(r.files.white_rooks_open, ["e1"]);
        assert_eq!(r.files.white_rooks_half_open, ["d1"]);
        assert_eq!(r.files.black_rooks_seventh, ["a2"]);
        assert!(r.files.black_rooks_open.is_empty());
        assert_eq!(r.files.black_rooks_half_open, Vec::<String>::new());
    }

    #[test]
    fn json_has_the_documented_keys() {
        let r = report("4k3/8/8/8/8/2P5/P1P5/4K3 w - - 0 1");
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        for side in ["white", "black"] {
            for key in ["doubled", "isolated", "backward", "passed"] {
                assert!(v["pawns"][side][key].is_array(), "pawns.{side}.{key}");
            }
        }
        assert_eq!(
            v["pawns"]["white"]["doubled"],
            serde_json::json!(["c2", "c3"])
        );
        assert_eq!(v["material"]["balance"], 3);
        assert_eq!(v["turn"], "white");
        assert_eq!(v["phase"], "endgame");
        assert!(v["items"][0]["en"].is_string() && v["items"][0]["zh"].is_string());
    }
}
