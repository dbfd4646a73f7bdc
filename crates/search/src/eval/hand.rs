//! The hand-written evaluation's terms: material and piece-square tables tapered by the
//! phase, bishop pair, mobility, king safety, rooks on files, threats and passed pawns; the
//! pawn structure and the endgames come from their own files.

use chess_rules::{
    Bitboard, Color, Position, Role, Square, bishop_attacks, king_attacks, knight_attacks,
    pawn_attacks_set, rook_attacks,
};

use super::Evaluator;
use super::endgame::{endgame_scale, special_endgame};
use super::masks::{MASKS, file_bb, forward, ranks_ahead, relative_rank};
use super::pawns::PawnCache;
use super::tables::SHAPES;
use crate::params::EvalParams;
use crate::score::S;

/// The hand-written evaluation. Cheap to create; keeps a small pawn-structure cache.
#[derive(Clone)]
pub struct HandEval {
    p: EvalParams,
    /// Material plus piece-square value by colour, role and square, from the owner's side.
    psqt: Box<[[[S; 64]; 6]; 2]>,
    pawns: PawnCache,
}

impl std::fmt::Debug for HandEval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandEval").finish_non_exhaustive()
    }
}

impl Default for HandEval {
    fn default() -> Self {
        HandEval::new(EvalParams::default())
    }
}

impl Evaluator for HandEval {
    fn evaluate(&mut self, pos: &Position) -> i32 {
        let white = self.white_score(pos);
        let v = if pos.turn().is_white() { white } else { -white };
        v.clamp(-20_000, 20_000)
    }

    fn clear(&mut self) {
        self.pawns.clear();
    }
}

/// What the piece loop learns about one side.
#[derive(Clone, Copy, Default)]
struct SideInfo {
    /// Squares this side attacks.
    attacks: Bitboard,
    /// Squares this side attacks twice or more.
    attacks2: Bitboard,
    /// Squares attacked by this side's pieces of each role.
    by_role: [Bitboard; 6],
    /// Pieces of this side attacking the enemy king ring, and their danger units.
    king_attackers: i32,
    king_attack_units: i32,
}

impl HandEval {
    pub fn new(p: EvalParams) -> HandEval {
        let mut psqt = Box::new([[[S::ZERO; 64]; 6]; 2]);
        for color in Color::ALL {
            for role in Role::ALL {
                let (mg, eg) = SHAPES[role.index()];
                for sq in Square::ALL {
                    let i = match color {
                        Color::White => sq.index() ^ 56,
                        Color::Black => sq.index(),
                    };
                    psqt[color.index()][role.index()][sq.index()] =
                        p.piece_value[role.index()] + S::new(mg[i], eg[i]);
                }
            }
        }
        HandEval {
            p,
            psqt,
            pawns: PawnCache::new(),
        }
    }

    /// Material plus piece-square value of a `color` `role` on `sq` (from that side's point
    /// of view), the table the evaluation itself reads.
    pub fn material_psqt(&self, color: Color, role: Role, sq: Square) -> S {
        self.psqt[color.index()][role.index()][sq.index()]
    }

    pub fn params(&self) -> &EvalParams {
        &self.p
    }

    /// The evaluation from white's point of view, without the tempo bonus.
    fn white_score(&mut self, pos: &Position) -> i32 {
        if pos.is_insufficient_material() {
            return 0;
        }
        if let Some(v) = special_endgame(&self.p, pos) {
            return v;
        }
        let p = &self.p;
        let occ = pos.occupied();
        let mut score = S::ZERO;
        let mut phase = 0;

        for color in Color::ALL {
            let table = &self.psqt[color.index()];
            let mut side = S::ZERO;
            for role in Role::ALL {
                let pieces = pos.pieces(color, role);
                phase += p.phase_weight[role.index()] * pieces.count() as i32;
                for sq in pieces {
                    side += table[role.index()][sq.index()];
                }
            }
            score += if color.is_white() { side } else { -side };
        }

        let pawn = self.pawns.probe(&self.p, pos);
        let p = &self.p;
        score += pawn.score;

        let kings = [pos.king_of(Color::White), pos.king_of(Color::Black)];
        let rings = kings.map(|k| king_attacks(k).with(k));
        let pawn_att = [
            pawn_attacks_set(pos.pieces(Color::White, Role::Pawn), Color::White),
            pawn_attacks_set(pos.pieces(Color::Black, Role::Pawn), Color::Black),
        ];
        let mut info = [SideInfo::default(); 2];
        for c in Color::ALL {
            let i = c.index();
            let k = king_attacks(kings[i]);
            info[i].attacks2 = pawn_att[i] & k;
            info[i].attacks = pawn_att[i] | k;
            info[i].by_role[Role::Pawn.index()] = pawn_att[i];
            info[i].by_role[Role::King.index()] = k;
        }

        for us in Color::ALL {
            let them = !us;
            let (ui, ti) = (us.index(), them.index());
            let sign = if us.is_white() { 1 } else { -1 };
            let mut s = S::ZERO;
            let own_pawns = pos.pieces(us, Role::Pawn);
            let all_pawns = pos.by_role(Role::Pawn);
            let mobility_area = !(own_pawns | pos.pieces(us, Role::King)) & !pawn_att[ti];
            for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
                let r = role.index();
                for sq in pos.pieces(us, role) {
                    let a = match role {
                        Role::Knight => knight_attacks(sq),
                        Role::Bishop => bishop_attacks(sq, occ),
                        Role::Rook => rook_attacks(sq, occ),
                        _ => bishop_attacks(sq, occ) | rook_attacks(sq, occ),
                    };
                    let side = &mut info[ui];
                    side.attacks2 |= side.attacks & a;
                    side.attacks |= a;
                    side.by_role[r] |= a;
                    let mob = (a & mobility_area).count() as i32;
                    s += p.mobility[r] * (mob - p.mobility_base[r]);
                    if a.intersects(rings[ti]) {
                        side.king_attackers += 1;
                        side.king_attack_units +=
                            p.king_attack_weight[r] + (a & king_attacks(kings[ti])).count() as i32;
                    }
                    if role == Role::Rook {
                        let file = Bitboard(file_bb(sq.file().index()));
                        if !file.intersects(all_pawns) {
                            s += p.rook_open_file;
                        } else if !file.intersects(own_pawns) {
                            s += p.rook_half_open_file;
                        }
                        if relative_rank(us, sq) == 6 && relative_rank(us, kings[ti]) == 7 {
                            s += p.rook_seventh;
                        }
                    }
                }
            }
            if pos.pieces(us, Role::Bishop).more_than_one() {
                s += p.bishop_pair;
            }
            score += s * sign;
        }

        for us in Color::ALL {
            let them = !us;
            let (ui, ti) = (us.index(), them.index());
            let sign = if us.is_white() { 1 } else { -1 };
            let mut s = S::ZERO;

            // Threats against their pieces.
            let their_pieces =
                pos.by_color(them) & !pos.by_role(Role::Pawn) & !pos.by_role(Role::King);
            s += p.threat_by_pawn * (pawn_att[ui] & their_pieces).count() as i32;
            let majors = pos.pieces(them, Role::Rook) | pos.pieces(them, Role::Queen);
            let minor_att =
                info[ui].by_role[Role::Knight.index()] | info[ui].by_role[Role::Bishop.index()];
            s += p.threat_by_minor * (minor_att & majors).count() as i32;
            let hanging = their_pieces & info[ui].attacks & !info[ti].attacks;
            s += p.hanging * hanging.count() as i32;

            // Passed pawns beyond the cached part.
            for sq in Bitboard(pawn.passed[ui]) {
                let rank = relative_rank(us, sq) as i32;
                let w = (rank - 2).max(0);
                if w == 0 {
                    continue;
                }
                let Some(stop) = forward(us, sq) else {
                    continue;
                };
                let their_dist = stop.distance(kings[ti]).min(5) as i32;
                let our_dist = stop.distance(kings[ui]).min(5) as i32;
                s.eg += w * (their_dist * p.passed_enemy_king - our_dist * p.passed_own_king);
                if occ.contains(stop) {
                    s += p.passed_blocked * w;
                } else if !info[ti].attacks.contains(stop) {
                    s += p.passed_free * w;
                }
                // Rule of the square against a lone king.
                let their_npm =
                    pos.by_color(them) & !pos.by_role(Role::Pawn) & !pos.by_role(Role::King);
                if their_npm.is_empty() {
                    let promo = Square::from_coords(
                        sq.file(),
                        if us.is_white() {
                            chess_rules::Rank::Eighth
                        } else {
                            chess_rules::Rank::First
                        },
                    );
                    let path = Bitboard(MASKS.forward[ui][sq.index()]);
                    let pawn_dist = (7 - rank).min(5);
                    let tempo = i32::from(pos.turn() == them);
                    let king_dist = promo.distance(kings[ti]) as i32 - tempo;
                    if !path.intersects(occ) && king_dist > pawn_dist {
                        s += p.unstoppable;
                    }
                }
            }

            // Our king's safety against their attack.
            let ksq = kings[ui];
            let mut danger = 0;
            let attackers = info[ti].king_attackers;
            let their_queens = pos.pieces(them, Role::Queen);
            if attackers >= 2 || (attackers >= 1 && their_queens.has_any()) {
                let safe = !info[ui].attacks & !pos.by_color(them);
                let diag = bishop_attacks(ksq, occ);
                let orth = rook_attacks(ksq, occ);
                let checks = [
                    (Role::Knight, knight_attacks(ksq)),
                    (Role::Bishop, diag),
                    (Role::Rook, orth),
                    (Role::Queen, diag | orth),
                ];
                let mut units = info[ti].king_attack_units;
                for (role, squares) in checks {
                    let n = (squares & info[ti].by_role[role.index()] & safe).count() as i32;
                    units += p.safe_check[role.index()] * n.min(2);
                }
                let weak_ring = rings[ui] & info[ti].attacks & !info[ui].attacks2;
                units += weak_ring.count() as i32;
                if their_queens.is_empty() {
                    units /= 2;
                }
                danger = (units * units / p.king_danger_divisor).min(p.king_danger_max);
            }
            s.mg -= danger;
            s.eg -= danger / 8;

            // Pawn shield and storm.
            let kf = ksq.file().index();
            let kr = relative_rank(us, ksq);
            let mut shelter = 0;
            for f in kf.saturating_sub(1)..=(kf + 1).min(7) {
                let file = Bitboard(file_bb(f));
                let ahead = Bitboard(ranks_ahead(ui, ksq.rank().index()));
                let ours = pos.pieces(us, Role::Pawn) & file & ahead;
                let nearest = ours.into_iter().map(|q| relative_rank(us, q)).min();
                match nearest {
                    None => shelter -= p.shield_missing,
                    Some(r) => shelter -= p.shield_distance[(r - kr).min(3)],
                }
                let theirs = pos.pieces(them, Role::Pawn) & file & ahead;
                if let Some(r) = theirs.into_iter().map(|q| relative_rank(us, q)).min() {
                    let d = r - kr;
                    if d < p.storm.len() {
                        let blocked = nearest.is_some_and(|o| o + 1 == r);
                        let v = p.storm[d];
                        shelter -= if blocked { v / 2 } else { v };
                    }
                }
            }
            if !Bitboard(file_bb(kf)).intersects(pos.pieces(us, Role::Pawn)) {
                shelter -= p.king_open_file;
            }
            s.mg += shelter;

            score += s * sign;
        }

        // Tapering and endgame scaling.
        let phase = phase.min(24);
        let strong = if score.eg >= 0 {
            Color::White
        } else {
            Color::Black
        };
        let scale = endgame_scale(&self.p, pos, strong);
        let eg = score.eg * scale / 64;
        let mut v = (score.mg * phase + eg * (24 - phase)) / 24;
        // Drift towards a draw as the fifty-move counter runs.
        let hm = pos.halfmoves().min(100) as i32;
        v = v * (200 - hm) / 200;
        v + if pos.turn().is_white() {
            p.tempo
        } else {
            -p.tempo
        }
    }
}
