//! Every tunable of the search and the evaluation, in one place with its default.
//!
//! Scores are centipawns. A search change that moves a default changes the bench node total;
//! say so in the commit message.

use crate::score::S;

/// Search and evaluation tunables. [`Params::default`] holds the values the engine plays with.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// Half-width of the first aspiration window around the previous iteration's score.
    pub aspiration_delta: i32,
    /// Iterations below this depth search with a full window.
    pub aspiration_min_depth: i32,

    /// Reverse futility pruning (static null move) applies up to this depth.
    pub rfp_max_depth: i32,
    /// Reverse futility margin per ply of depth.
    pub rfp_margin: i32,
    /// Taken off the reverse futility margin when the static evaluation is improving.
    pub rfp_improving: i32,

    /// Razoring applies up to this depth.
    pub razor_max_depth: i32,
    /// Razoring: nodes with static eval below `alpha - razor_base - razor_margin * depth^2`
    /// are settled by the quiescence search.
    pub razor_base: i32,
    /// See [`Params::razor_base`].
    pub razor_margin: i32,

    /// Null-move pruning needs at least this much depth.
    pub nmp_min_depth: i32,
    /// Base null-move reduction.
    pub nmp_base_reduction: i32,
    /// One more ply of reduction per this much depth.
    pub nmp_depth_divisor: i32,
    /// One more ply of reduction per this much static eval above beta (at most three).
    pub nmp_eval_divisor: i32,
    /// From this depth on a null-move cutoff is verified by a reduced search without null moves
    /// for the side to move (zugzwang safety).
    pub nmp_verify_depth: i32,

    /// Internal iterative reduction: nodes without a hash move at this depth or more search one
    /// ply shallower.
    pub iir_min_depth: i32,

    /// Late-move reduction table: `base + ln(depth) * ln(move number) / divisor`, in plies.
    pub lmr_base: f64,
    /// See [`Params::lmr_base`].
    pub lmr_divisor: f64,
    /// History score worth one ply of (negative) reduction.
    pub lmr_history_divisor: i32,
    /// Extra reduction, in 1/1024 ply, for a move at a node off the principal variation (and
    /// not on one before, by the hash entry).
    pub lmr_non_pv: i32,
    /// Extra reduction, in 1/1024 ply, at an expected cut node.
    pub lmr_cut_node: i32,
    /// Extra reduction, in 1/1024 ply, when the static evaluation is not improving.
    pub lmr_not_improving: i32,
    /// Less reduction, in 1/1024 ply, for a move that gives check.
    pub lmr_gives_check: i32,
    /// Less reduction, in 1/1024 ply, for a killer or the counter-move.
    pub lmr_refutation: i32,

    /// Late-move pruning: quiets after `(lmp_base + depth^2) / (2 - improving)` moves are skipped.
    pub lmp_base: i32,
    /// Futility pruning of quiets applies up to this (reduced) depth.
    pub futility_max_depth: i32,
    /// Futility margin at depth zero.
    pub futility_base: i32,
    /// Futility margin per ply of depth.
    pub futility_margin: i32,
    /// Added to the futility margin when the static evaluation is improving.
    pub futility_improving: i32,
    /// Quiets with a history score below `-history_prune_margin * depth` are skipped at low depth.
    pub history_prune_margin: i32,
    /// SEE pruning applies up to this depth.
    pub see_prune_max_depth: i32,
    /// Quiets whose SEE is below `-see_quiet_margin * depth^2` are pruned.
    pub see_quiet_margin: i32,
    /// Captures whose SEE is below `-see_capture_margin * depth` are pruned.
    pub see_capture_margin: i32,

    /// Singular extensions need at least this depth.
    pub singular_min_depth: i32,
    /// Singular margin below the hash score, in 1/64 centipawn per ply of depth.
    pub singular_margin: i32,
    /// A singular move failing this far below the singular beta is extended twice.
    pub double_extension_margin: i32,

    /// Quiescence futility: captures that cannot lift stand-pat plus this margin above alpha are
    /// skipped.
    pub qs_futility_margin: i32,
    /// Quiescence searches only captures whose SEE is at least this.
    pub qs_see_threshold: i32,

    /// History bonus per ply of depth.
    pub history_bonus_mul: i32,
    /// History bonus offset (subtracted).
    pub history_bonus_offset: i32,
    /// Largest history bonus.
    pub history_bonus_max: i32,
    /// History penalty per ply of depth, for the moves searched before the one that cut off.
    pub history_malus_mul: i32,
    /// History penalty offset (subtracted).
    pub history_malus_offset: i32,
    /// Largest history penalty.
    pub history_malus_max: i32,

    /// Moves to go assumed when the GUI does not say.
    pub tm_moves_to_go: u32,
    /// Share of the increment (percent) spent on every move.
    pub tm_increment_percent: u64,
    /// The hard limit is this many times the soft limit ...
    pub tm_hard_factor: u64,
    /// ... but never more than this percent of the remaining time.
    pub tm_hard_max_percent: u64,

    /// Evaluation weights.
    pub eval: EvalParams,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            aspiration_delta: 19,
            aspiration_min_depth: 4,
            rfp_max_depth: 8,
            rfp_margin: 108,
            rfp_improving: 86,
            razor_max_depth: 3,
            razor_base: 363,
            razor_margin: 305,
            nmp_min_depth: 3,
            nmp_base_reduction: 3,
            nmp_depth_divisor: 3,
            nmp_eval_divisor: 201,
            nmp_verify_depth: 12,
            iir_min_depth: 4,
            lmr_base: 0.8012,
            lmr_divisor: 1.8946,
            lmr_history_divisor: 9669,
            lmr_non_pv: 1077,
            lmr_cut_node: 922,
            lmr_not_improving: 641,
            lmr_gives_check: 1296,
            lmr_refutation: 968,
            lmp_base: 4,
            futility_max_depth: 8,
            futility_base: 134,
            futility_margin: 100,
            futility_improving: 13,
            history_prune_margin: 3576,
            see_prune_max_depth: 8,
            see_quiet_margin: 28,
            see_capture_margin: 93,
            singular_min_depth: 8,
            singular_margin: 148,
            double_extension_margin: 26,
            qs_futility_margin: 209,
            qs_see_threshold: 24,
            history_bonus_mul: 341,
            history_bonus_offset: 220,
            history_bonus_max: 1773,
            history_malus_mul: 430,
            history_malus_offset: 219,
            history_malus_max: 1694,
            tm_moves_to_go: 25,
            tm_increment_percent: 75,
            tm_hard_factor: 4,
            tm_hard_max_percent: 30,
            eval: EvalParams::default(),
        }
    }
}

/// Evaluation weights, each a middlegame/endgame pair unless it says otherwise. Piece-square
/// tables are shapes in `eval.rs`; the weights here are what a tuner would move.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalParams {
    /// Piece values by role (pawn, knight, bishop, rook, queen, king).
    pub piece_value: [S; 6],
    /// Game phase contributed by each role; the full phase is 24.
    pub phase_weight: [i32; 6],
    /// Both bishops.
    pub bishop_pair: S,
    /// Per pawn with another pawn of its side ahead on the file.
    pub doubled: S,
    /// Per pawn without friendly pawns on neighbouring files.
    pub isolated: S,
    /// Per pawn that no neighbour can support and whose stop square an enemy pawn attacks.
    pub backward: S,
    /// Passed pawn by relative rank (index 1 = second rank).
    pub passed: [S; 8],
    /// Supported or phalanx pawn by relative rank; a phalanx earns half as much again.
    pub connected: [S; 8],
    /// Endgame: per square of the enemy king's distance to a passer's stop square, scaled by rank.
    pub passed_enemy_king: i32,
    /// Endgame: per square of our king's distance to a passer's stop square, scaled by rank.
    pub passed_own_king: i32,
    /// Passer whose stop square is occupied, scaled by rank.
    pub passed_blocked: S,
    /// Passer whose stop square the enemy does not attack, scaled by rank.
    pub passed_free: S,
    /// A passer the lone enemy king cannot catch (rule of the square).
    pub unstoppable: S,
    /// Mobility per reachable square by role, relative to `mobility_base`.
    pub mobility: [S; 6],
    /// Typical mobility by role: fewer squares than this scores negative.
    pub mobility_base: [i32; 6],
    /// King-danger units per piece of each role attacking the king ring.
    pub king_attack_weight: [i32; 6],
    /// King-danger units per safe check of each role.
    pub safe_check: [i32; 6],
    /// Middlegame penalty is `units^2 / king_danger_divisor` (capped by `king_danger_max`).
    pub king_danger_divisor: i32,
    /// Largest king-danger penalty.
    pub king_danger_max: i32,
    /// Middlegame: a file next to the king without a pawn of ours in front of it.
    pub shield_missing: i32,
    /// Middlegame: shield pawn one, two, three or more ranks in front of the king.
    pub shield_distance: [i32; 4],
    /// Middlegame: enemy pawn storming a king file, by distance in ranks (1 = adjacent).
    pub storm: [i32; 5],
    /// Middlegame: king on a file with no pawn of ours.
    pub king_open_file: i32,
    /// Rook on a file without pawns.
    pub rook_open_file: S,
    /// Rook on a file without pawns of ours.
    pub rook_half_open_file: S,
    /// Rook on the seventh rank with the enemy king on the eighth.
    pub rook_seventh: S,
    /// Enemy piece (not a pawn) attacked by one of our pawns.
    pub threat_by_pawn: S,
    /// Enemy rook or queen attacked by one of our knights or bishops.
    pub threat_by_minor: S,
    /// Enemy piece (not a pawn) attacked by us and not defended.
    pub hanging: S,
    /// Bonus for the side to move.
    pub tempo: i32,
    /// Won endgame against a lone king: base bonus.
    pub mop_up_base: i32,
    /// Won endgame against a lone king: per step of the losing king from the centre.
    pub mop_up_edge: i32,
    /// Won endgame against a lone king: per step the kings are closer.
    pub mop_up_proximity: i32,
    /// KBN v K: per step of the losing king closer to a corner of the bishop's colour.
    pub kbn_corner: i32,
    /// Endgame scale (of 64) with opposite-coloured bishops and nothing else but pawns.
    pub opposite_bishops_scale: i32,
    /// Endgame scale (of 64) with opposite-coloured bishops and other pieces.
    pub opposite_bishops_pieces_scale: i32,
    /// Endgame scale (of 64) when the stronger side has no pawns and is at most a minor piece up.
    pub pawnless_minor_up_scale: i32,
}

impl Default for EvalParams {
    fn default() -> Self {
        EvalParams {
            piece_value: [
                S::new(85, 105),
                S::new(330, 300),
                S::new(350, 320),
                S::new(470, 540),
                S::new(980, 990),
                S::new(0, 0),
            ],
            phase_weight: [0, 1, 1, 2, 4, 0],
            bishop_pair: S::new(30, 55),
            doubled: S::new(-8, -22),
            isolated: S::new(-10, -12),
            backward: S::new(-8, -10),
            passed: [
                S::new(0, 0),
                S::new(0, 8),
                S::new(0, 12),
                S::new(5, 25),
                S::new(20, 45),
                S::new(45, 80),
                S::new(80, 130),
                S::new(0, 0),
            ],
            connected: [
                S::new(0, 0),
                S::new(4, 2),
                S::new(7, 4),
                S::new(10, 8),
                S::new(18, 15),
                S::new(30, 28),
                S::new(55, 50),
                S::new(0, 0),
            ],
            passed_enemy_king: 5,
            passed_own_king: 2,
            passed_blocked: S::new(-3, -8),
            passed_free: S::new(4, 10),
            unstoppable: S::new(0, 450),
            mobility: [
                S::new(0, 0),
                S::new(4, 4),
                S::new(5, 5),
                S::new(2, 5),
                S::new(1, 3),
                S::new(0, 0),
            ],
            mobility_base: [0, 4, 6, 6, 12, 0],
            king_attack_weight: [0, 2, 2, 3, 5, 0],
            safe_check: [0, 3, 2, 4, 4, 0],
            king_danger_divisor: 1,
            king_danger_max: 900,
            shield_missing: 22,
            shield_distance: [0, 0, 8, 16],
            storm: [0, 6, 18, 10, 4],
            king_open_file: 15,
            rook_open_file: S::new(28, 10),
            rook_half_open_file: S::new(12, 6),
            rook_seventh: S::new(12, 25),
            threat_by_pawn: S::new(45, 30),
            threat_by_minor: S::new(30, 20),
            hanging: S::new(25, 15),
            tempo: 15,
            mop_up_base: 600,
            mop_up_edge: 25,
            mop_up_proximity: 10,
            kbn_corner: 30,
            opposite_bishops_scale: 30,
            opposite_bishops_pieces_scale: 48,
            pawnless_minor_up_scale: 12,
        }
    }
}
