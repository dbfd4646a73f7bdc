//! The report in words: one [`Item`] per finding, in English and Chinese.

use super::phase::Phase;
use super::types::{Item, Report, Sides};
use chess_rules::Role;

fn item(topic: &'static str, en: String, zh: String) -> Item {
    Item { topic, en, zh }
}

/// `+2`, `-1`, `0`.
fn signed(n: i32) -> String {
    if n == 0 { "0".into() } else { format!("{n:+}") }
}

fn list(v: &[String]) -> String {
    v.join(" ")
}

/// `Qh5` in Chinese: `后h5`.
fn zh_piece(name: &str) -> String {
    let mut chars = name.chars();
    let letter = chars.next().unwrap_or('P');
    let role = Role::from_char(letter.to_ascii_lowercase()).unwrap_or(Role::Pawn);
    format!("{}{}", role.chinese(), chars.as_str())
}

fn zh_pieces(v: &[String]) -> String {
    v.iter().map(|s| zh_piece(s)).collect::<Vec<_>>().join(" ")
}

const SIDES: [(&str, &str); 2] = [("White", "白方"), ("Black", "黑方")];

fn each<T>(s: &Sides<T>) -> [(&'static str, &'static str, &T); 2] {
    [
        (SIDES[0].0, SIDES[0].1, &s.white),
        (SIDES[1].0, SIDES[1].1, &s.black),
    ]
}

pub(super) fn items(r: &Report) -> Vec<Item> {
    let mut out = Vec::new();
    let m = &r.material;
    out.push(item(
        "material",
        format!(
            "Material (pawn 1, knight 3, bishop 3, rook 5, queen 9): white {}, black {}, balance {}",
            m.white.points,
            m.black.points,
            signed(m.balance)
        ),
        format!(
            "子力（兵1 馬3 象3 車5 后9）：白方 {}，黑方 {}，差值 {}",
            m.white.points,
            m.black.points,
            signed(m.balance)
        ),
    ));
    if m.exchange_balance != 0 {
        let (en, zh) = if m.exchange_balance > 0 {
            SIDES[0]
        } else {
            SIDES[1]
        };
        let n = m.exchange_balance.unsigned_abs();
        out.push(item(
            "material",
            format!("{en} is up the exchange ×{n} (a rook for a minor piece)"),
            format!("{zh}得半子 ×{n}（以轻子换得車）"),
        ));
    }

    let b = &r.bishops;
    for (en, zh, side) in [
        (SIDES[0].0, SIDES[0].1, &b.white),
        (SIDES[1].0, SIDES[1].1, &b.black),
    ] {
        if side.pair {
            out.push(item(
                "bishops",
                format!("{en} has the bishop pair"),
                format!("{zh}拥有双象"),
            ));
        }
        for bi in &side.bishops {
            let (q_en, q_zh) = match bi.quality {
                "good" => ("good", "好象"),
                "bad" => ("bad", "坏象"),
                _ => ("neither good nor bad", "不好不坏的象"),
            };
            out.push(item(
                "bishops",
                format!(
                    "{en} bishop {} ({} squares) is {q_en}: {} own pawns on its colour, {} on the other",
                    bi.square, bi.colour, bi.own_pawns_on_colour, bi.own_pawns_off_colour
                ),
                format!(
                    "{zh}象{}（{}格）是{q_zh}：同色格上己方兵 {} 个，异色格上 {} 个",
                    bi.square,
                    if bi.colour == "light" { "白" } else { "黑" },
                    bi.own_pawns_on_colour,
                    bi.own_pawns_off_colour
                ),
            ));
        }
    }
    if b.opposite_coloured {
        out.push(item(
            "bishops",
            "Opposite-coloured bishops".into(),
            "异色格象".into(),
        ));
    }

    for (en, zh, p) in [
        (SIDES[0].0, SIDES[0].1, &r.pawns.white),
        (SIDES[1].0, SIDES[1].1, &r.pawns.black),
    ] {
        let kinds: [(&str, &str, &Vec<String>); 7] = [
            ("doubled pawns", "叠兵", &p.doubled),
            ("isolated pawns", "孤兵", &p.isolated),
            ("backward pawns", "落后兵", &p.backward),
            ("passed pawns", "通路兵", &p.passed),
            (
                "protected passed pawns",
                "有保护的通路兵",
                &p.protected_passed,
            ),
            ("connected pawns", "连兵", &p.connected),
            ("pawns side by side (phalanx)", "并排兵", &p.phalanx),
        ];
        for (k_en, k_zh, squares) in kinds {
            if !squares.is_empty() {
                out.push(item(
                    "pawns",
                    format!("{en} {k_en}: {}", list(squares)),
                    format!("{zh}{k_zh}：{}", list(squares)),
                ));
            }
        }
        if !p.islands.is_empty() {
            out.push(item(
                "pawns",
                format!(
                    "{en} pawn islands: {} ({})",
                    p.islands.len(),
                    p.islands.join(", ")
                ),
                format!(
                    "{zh}兵岛：{} 个（{}）",
                    p.islands.len(),
                    p.islands.join("，")
                ),
            ));
        }
        for c in &p.chains {
            out.push(item(
                "pawns",
                format!(
                    "{en} pawn chain {} with its base on {}",
                    c.squares.join("-"),
                    list(&c.base)
                ),
                format!("{zh}兵链 {}，链底在 {}", c.squares.join("-"), list(&c.base)),
            ));
        }
    }

    let f = &r.files;
    if !f.open.is_empty() {
        out.push(item(
            "files",
            format!("Open files: {}", list(&f.open)),
            format!("开放线：{}", list(&f.open)),
        ));
    }
    for (en, zh, half) in [
        (SIDES[0].0, SIDES[0].1, &f.half_open_white),
        (SIDES[1].0, SIDES[1].1, &f.half_open_black),
    ] {
        if !half.is_empty() {
            out.push(item(
                "files",
                format!("Half-open files for {}: {}", en.to_lowercase(), list(half)),
                format!("{zh}的半开放线：{}", list(half)),
            ));
        }
    }
    for (en, zh, open, half, seventh, rank_zh) in [
        (
            SIDES[0].0,
            SIDES[0].1,
            &f.white_rooks_open,
            &f.white_rooks_half_open,
            &f.white_rooks_seventh,
            "第七横线",
        ),
        (
            SIDES[1].0,
            SIDES[1].1,
            &f.black_rooks_open,
            &f.black_rooks_half_open,
            &f.black_rooks_seventh,
            "第二横线（黑方的第七横线）",
        ),
    ] {
        for (what_en, what_zh, squares) in [
            ("on an open file", "在开放线上", open),
            ("on a half-open file", "在半开放线上", half),
            ("on the seventh rank", rank_zh, seventh),
        ] {
            if !squares.is_empty() {
                out.push(item(
                    "files",
                    format!("{en} rook {what_en}: {}", list(squares)),
                    format!(
                        "{zh}車{}：{}",
                        if what_zh.starts_with('在') {
                            what_zh.to_string()
                        } else {
                            format!("在{what_zh}上")
                        },
                        list(squares)
                    ),
                ));
            }
        }
    }

    for (en, zh, k) in each(&r.king_safety) {
        let mut e = format!(
            "{en} king on {}: pawn shield {}",
            k.king,
            if k.pawn_shield.is_empty() {
                "none".to_string()
            } else {
                list(&k.pawn_shield)
            }
        );
        let mut z = format!(
            "{zh}王在 {}：兵盾 {}",
            k.king,
            if k.pawn_shield.is_empty() {
                "无".to_string()
            } else {
                list(&k.pawn_shield)
            }
        );
        if !k.open_files_near.is_empty() {
            e.push_str(&format!(
                "; open files near it: {}",
                list(&k.open_files_near)
            ));
            z.push_str(&format!("；附近的开放线：{}", list(&k.open_files_near)));
        }
        if !k.half_open_files_near.is_empty() {
            e.push_str(&format!(
                "; half-open files near it: {}",
                list(&k.half_open_files_near)
            ));
            z.push_str(&format!(
                "；附近的半开放线：{}",
                list(&k.half_open_files_near)
            ));
        }
        if !k.attackers.is_empty() {
            e.push_str(&format!("; attacked by {}", list(&k.attackers)));
            z.push_str(&format!("；受到 {} 的攻击", zh_pieces(&k.attackers)));
        }
        if k.in_check {
            e.push_str("; in check");
            z.push_str("；被将军");
        }
        out.push(item("king_safety", e, z));
    }

    // Development and castling matter until the endgame.
    let development = if r.phase == Phase::Endgame {
        Vec::new()
    } else {
        each(&r.development).to_vec()
    };
    for (en, zh, d) in development {
        let mut e = format!(
            "{en} development: {} minor piece{} out",
            d.developed_minors,
            if d.developed_minors == 1 { "" } else { "s" }
        );
        let mut z = format!("{zh}出子：已出动轻子 {} 个", d.developed_minors);
        if !d.undeveloped.is_empty() {
            e.push_str(&format!(", still at home {}", list(&d.undeveloped)));
            z.push_str(&format!("，未出动 {}", zh_pieces(&d.undeveloped)));
        }
        match d.castled {
            Some(side) => {
                e.push_str(&format!("; castled {side}"));
                z.push_str(if side == "kingside" {
                    "；已短易位"
                } else {
                    "；已长易位"
                });
            }
            None if d.can_castle.is_empty() => {
                e.push_str("; not castled and may no longer castle");
                z.push_str("；未易位且已不能易位");
            }
            None => {
                e.push_str(&format!(
                    "; may still castle {}",
                    d.can_castle.join(" and ")
                ));
                let zh_sides: Vec<&str> = d
                    .can_castle
                    .iter()
                    .map(|s| {
                        if *s == "kingside" {
                            "短易位"
                        } else {
                            "长易位"
                        }
                    })
                    .collect();
                z.push_str(&format!("；仍可{}", zh_sides.join("和")));
            }
        }
        out.push(item("development", e, z));
    }

    for (en, zh, c) in each(&r.centre) {
        let mut e = format!("{en} centre control: {} attacks on d4 e4 d5 e5", c.attacks);
        let mut z = format!("{zh}中心控制：对 d4 e4 d5 e5 的攻击 {} 次", c.attacks);
        if !c.occupants.is_empty() {
            e.push_str(&format!(", occupied by {}", list(&c.occupants)));
            z.push_str(&format!("，占据中心的有 {}", zh_pieces(&c.occupants)));
        }
        out.push(item("centre", e, z));
    }
    out.push(item(
        "space",
        format!(
            "Space (squares controlled in the opponent's half): white {}, black {}",
            r.space.white, r.space.black
        ),
        format!(
            "空间（在对方半边控制的格子）：白方 {}，黑方 {}",
            r.space.white, r.space.black
        ),
    ));
    out.push(item(
        "phase",
        format!("Phase: {}", r.phase.name()),
        format!("阶段：{}", r.phase.chinese()),
    ));
    if let Some(e) = r.endgame {
        out.push(item(
            "endgame",
            format!("Endgame: {}", e.name()),
            format!("残局类型：{}", e.chinese()),
        ));
    }
    let w = &r.winnability;
    if w.dead {
        out.push(item(
            "winnability",
            format!(
                "Dead position: neither side can checkmate by any series of legal moves ({})",
                w.reasons.white
            ),
            format!("死局：双方都无法以任何合法着法将杀（{}）", w.reasons.white),
        ));
    } else {
        for (side, en, zh) in [
            (&w.reasons.white, "White", "白方"),
            (&w.reasons.black, "Black", "黑方"),
        ] {
            if !side.is_empty() {
                out.push(item(
                    "winnability",
                    format!("Cannot be won by {en}: {side}"),
                    format!("{zh}无法获胜：{side}"),
                ));
            }
        }
    }
    out
}
