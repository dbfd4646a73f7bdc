//! Conversions of `chess-knowledge` results (openings, the position report) to wire types.

use chess_knowledge::{Classification, PawnStructure, Report};

use chess_proto::v1;

/// The opening as the wire carries it (all fields empty when nothing is known).
pub fn opening_to_proto(c: &Classification) -> v1::OpeningInfo {
    v1::OpeningInfo {
        eco: c.opening.map_or("", |o| o.eco).to_owned(),
        name: c.opening.map_or("", |o| o.name).to_owned(),
        class: c.class.map_or("", |k| k.name()).to_owned(),
        gambit: c.gambit.is_some(),
        ply: c.opening_ply.unwrap_or(0) as u32,
    }
}

fn pawns_to_proto(p: &PawnStructure) -> v1::PawnReport {
    v1::PawnReport {
        doubled: p.doubled.clone(),
        isolated: p.isolated.clone(),
        backward: p.backward.clone(),
        passed: p.passed.clone(),
        protected_passed: p.protected_passed.clone(),
        connected: p.connected.clone(),
        phalanx: p.phalanx.clone(),
        islands: p.islands.clone(),
    }
}

/// The position report as the wire carries it: the main figures as fields, every finding
/// as an item in English and Chinese, and the whole report as JSON.
pub fn report_to_proto(r: &Report, opening: &Classification) -> v1::DescribePositionResponse {
    let endgame = r
        .endgame
        .and_then(|e| serde_json::to_value(e).ok())
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    v1::DescribePositionResponse {
        fen: r.fen.clone(),
        white_material: r.material.white.points,
        black_material: r.material.black.points,
        material_balance: r.material.balance,
        exchange_balance: r.material.exchange_balance,
        white_pawns: Some(pawns_to_proto(&r.pawns.white)),
        black_pawns: Some(pawns_to_proto(&r.pawns.black)),
        phase: r.phase.name().to_owned(),
        endgame,
        items: r
            .items
            .iter()
            .map(|i| v1::ReportItem {
                topic: i.topic.to_owned(),
                en: i.en.clone(),
                zh: i.zh.clone(),
            })
            .collect(),
        json: r.to_json(),
        opening: Some(opening_to_proto(opening)),
        winnability: r.winnability.code.clone(),
        dead_position: r.winnability.dead,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chess_rules::{Game, Position};

    #[test]
    fn opening_and_report_on_the_wire() {
        let mut game = Game::new(Position::startpos());
        for san in ["e4", "c5"] {
            game.play_san(san).unwrap();
        }
        let c = chess_knowledge::classify(game.start(), game.moves());
        let o = opening_to_proto(&c);
        assert_eq!(
            (
                o.eco.as_str(),
                o.name.as_str(),
                o.class.as_str(),
                o.gambit,
                o.ply
            ),
            ("B20", "Sicilian Defense", "semi-open", false, 2)
        );
        let pos = Position::from_fen("7r/p7/8/4k3/8/8/4P3/R3K3 w - - 0 1").unwrap();
        let r = report_to_proto(&chess_knowledge::describe(&pos), &c);
        assert_eq!(r.endgame, "rook_endgame");
        assert_eq!(r.phase, "endgame");
        assert_eq!(r.white_pawns.unwrap().passed, ["e2"]);
        assert!(r.json.contains("\"pawns\""));
    }
}
