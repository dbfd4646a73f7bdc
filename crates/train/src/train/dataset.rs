//! Training data in memory: the data files' positions as the feature lists of both
//! perspectives with their targets, optionally with mirror images, and the split into training
//! and validation games.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;

use chess_nn::{INPUTS, KingBuckets};
use chess_rules::{Color, Position, Square};

use super::model::{SCALE, sigmoid};
use crate::Error;
use crate::data;
#[cfg(test)]
use crate::rng::Rng;

/// Training positions, flattened: features of both perspectives, side to move's first.
#[derive(Debug, Default)]
pub struct Dataset {
    pub(super) stm: Vec<u16>,
    pub(super) nstm: Vec<u16>,
    /// Position `i`'s features are `offsets[i]..offsets[i + 1]` of both lists.
    pub(super) offsets: Vec<u32>,
    pub(super) targets: Vec<f32>,
    /// The index of each game's first position (empty: every position is a game of its own).
    pub(super) game_starts: Vec<u32>,
    /// Whether each position is a mirrored copy (`--mirror`); empty when none is.
    pub(super) mirrored: Vec<bool>,
    /// Positions left out as repeats of an earlier one (`--dedup`).
    pub duplicates: usize,
}

impl Dataset {
    pub fn len(&self) -> usize {
        self.targets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// Position indices for training and for validation. About `fraction` of the games are
    /// held out, whole (a game's positions are alike, so holding out single positions would
    /// flatter the validation loss); which ones depends only on the game's index.
    pub fn split(&self, fraction: f32) -> (Vec<u32>, Vec<u32>) {
        let held_out = |game: usize| {
            let h = (game as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
            (h % 10_000) < (f64::from(fraction.clamp(0.0, 1.0)) * 10_000.0) as u64
        };
        let (mut train, mut val) = (Vec::new(), Vec::new());
        let n = self.len();
        let bounds: Vec<usize> = if self.game_starts.is_empty() {
            (0..=n).collect()
        } else {
            let mut b: Vec<usize> = self.game_starts.iter().map(|&s| s as usize).collect();
            b.push(n);
            b
        };
        let copy = |i: u32| self.mirrored.get(i as usize).copied().unwrap_or(false);
        for (game, w) in bounds.windows(2).enumerate() {
            let range = w[0] as u32..w[1] as u32;
            if held_out(game) {
                val.extend(range.filter(|&i| !copy(i)));
            } else {
                train.extend(range);
            }
        }
        (train, val)
    }

    pub(super) fn features(&self, i: usize) -> (&[u16], &[u16]) {
        let r = self.offsets[i] as usize..self.offsets[i + 1] as usize;
        (&self.stm[r.clone()], &self.nstm[r])
    }
}

/// The feature of the same piece on the square mirrored left to right (file a <-> h), in the
/// king bucket that starts at `offset` (the mirrored king's).
fn mirror_feature(f: u16, offset: u16) -> u16 {
    offset + ((f % INPUTS as u16) ^ 7)
}

/// The first feature index of `perspective`'s king bucket in `pos` mirrored left to right.
fn mirrored_offset(layout: &KingBuckets, pos: &Position, perspective: Color) -> u16 {
    let king = pos.king_of(perspective);
    layout.offset(perspective, Square::new(king.index() as u32 ^ 7))
}

/// The identity of a position as the network sees it: the board and the side to move (the
/// first two FEN fields; castling rights, en passant and the counters are not inputs).
fn seen_key(fen: &str) -> u64 {
    let mut fields = fen.split(' ');
    let mut h = DefaultHasher::new();
    (fields.next(), fields.next()).hash(&mut h);
    h.finish()
}

/// Loads the data files and computes each position's features (in `layout`, the network's
/// king buckets) and target; with `mirror`,
/// each position without castling rights is followed by its mirror image (same target).
/// With `dedup`, a position whose board and side to move came before (in any game of any
/// file, in the order given) is left out and counted in [`Dataset::duplicates`]: the first
/// occurrence keeps its score and game result.
pub fn load_dataset(
    paths: &[PathBuf],
    wdl: f32,
    mirror: bool,
    dedup: bool,
    layout: &KingBuckets,
) -> Result<Dataset, Error> {
    let mut set = Dataset {
        offsets: vec![0],
        ..Dataset::default()
    };
    let mut seen = HashSet::new();
    for path in paths {
        let file = data::read(path)?;
        if file.torn_bytes > 0 {
            eprintln!(
                "train: {}: skipping {} bytes of a torn last game",
                path.display(),
                file.torn_bytes
            );
        }
        for game in &file.games {
            set.game_starts.push(set.len() as u32);
            let white_points = game.result.white_points();
            for rec in &game.positions {
                if dedup && !seen.insert(seen_key(&rec.fen)) {
                    set.duplicates += 1;
                    continue;
                }
                let pos = Position::from_fen(&rec.fen).map_err(|e| Error::Format {
                    path: path.clone(),
                    what: format!("bad FEN {:?}: {e}", rec.fen),
                })?;
                let stm = pos.turn();
                let (score, result) = if stm == Color::White {
                    (f32::from(rec.score), white_points)
                } else {
                    (-f32::from(rec.score), 1.0 - white_points)
                };
                layout.for_each_feature(&pos, stm, |f| set.stm.push(f));
                layout.for_each_feature(&pos, !stm, |f| set.nstm.push(f));
                set.offsets.push(set.stm.len() as u32);
                let target = (1.0 - wdl) * sigmoid(score / SCALE as f32) + wdl * result;
                set.targets.push(target);
                if mirror {
                    set.mirrored.push(false);
                    if pos.castling_rights().is_empty() {
                        let r = set.offsets[set.len() - 1] as usize..set.stm.len();
                        let stm_offset = mirrored_offset(layout, &pos, stm);
                        let nstm_offset = mirrored_offset(layout, &pos, !stm);
                        for i in r {
                            set.stm.push(mirror_feature(set.stm[i], stm_offset));
                            set.nstm.push(mirror_feature(set.nstm[i], nstm_offset));
                        }
                        set.offsets.push(set.stm.len() as u32);
                        set.targets.push(target);
                        set.mirrored.push(true);
                    }
                }
            }
        }
    }
    Ok(set)
}

/// Random-playout positions with targets from material (a learnable signal).
#[cfg(test)]
pub(super) fn toy_set(n: usize) -> Dataset {
    let mut rng = Rng::new(5);
    let mut set = Dataset {
        offsets: vec![0],
        ..Dataset::default()
    };
    let mut pos = Position::startpos();
    while set.len() < n {
        let moves = pos.legal_moves();
        if moves.is_empty() || pos.halfmoves() > 60 {
            pos = Position::startpos();
            continue;
        }
        pos.play_unchecked(moves.as_slice()[rng.below(moves.len())]);
        let stm = pos.turn();
        chess_nn::for_each_feature(&pos, stm, |f| set.stm.push(f));
        chess_nn::for_each_feature(&pos, !stm, |f| set.nstm.push(f));
        set.offsets.push(set.stm.len() as u32);
        let (ours, theirs) = (pos.by_color(stm).count(), pos.by_color(!stm).count());
        set.targets
            .push(sigmoid((ours as f32 - theirs as f32) * 0.5));
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirror_adds_the_mirror_image_of_positions_without_castling_rights() {
        use crate::data::{self, GameRecord, GameResult, Record};
        let path =
            std::env::temp_dir().join(format!("chess-train-mirror-{}.bin", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let (mut out, _) = data::open_for_append(&path).unwrap();
        let rec = |fen: &str, score| Record {
            fen: fen.into(),
            score,
        };
        // One game: a position with castling rights (kept once), then two without (each
        // followed by its mirror image).
        out.append(&GameRecord {
            result: GameResult::WhiteWin,
            positions: vec![
                rec("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", 10),
                rec("4k3/8/8/8/8/8/1P6/N3K3 w - - 0 1", 150),
                rec("4k3/8/8/8/8/8/1P6/N3K3 b - - 0 1", -150),
            ],
        })
        .unwrap();
        drop(out);
        let none = KingBuckets::NONE;
        let plain = load_dataset(std::slice::from_ref(&path), 0.3, false, false, &none).unwrap();
        let set = load_dataset(std::slice::from_ref(&path), 0.3, true, false, &none).unwrap();
        // With king buckets the copy's features are in its mirrored king's bucket: e1 is in
        // bucket 1, its mirror d1 in bucket 0.
        let layout: KingBuckets = "00001111/2".parse().unwrap();
        let bucketed =
            load_dataset(std::slice::from_ref(&path), 0.3, true, false, &layout).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(plain.len(), 3);
        assert_eq!(set.len(), 5);
        assert_eq!(set.mirrored, [false, false, true, false, true]);
        // The copy is the mirrored position: its features are those of the mirrored FEN.
        let mirrored = Position::from_fen("3k4/8/8/8/8/8/6P1/3K3N w - - 0 1").unwrap();
        let (stm, nstm) = set.features(2);
        let mut want = chess_nn::active_features(&mirrored, Color::White);
        let mut got = stm.to_vec();
        want.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, want);
        let mut want = chess_nn::active_features(&mirrored, Color::Black);
        let mut got = nstm.to_vec();
        want.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, want);
        for (i, fen) in [
            (1, "4k3/8/8/8/8/8/1P6/N3K3 w - - 0 1"),
            (2, "3k4/8/8/8/8/8/6P1/3K3N w - - 0 1"),
            (4, "3k4/8/8/8/8/8/6P1/3K3N b - - 0 1"),
        ] {
            let pos = Position::from_fen(fen).unwrap();
            let (stm, nstm) = bucketed.features(i);
            for (p, got) in [(pos.turn(), stm), (!pos.turn(), nstm)] {
                let mut want = layout.active_features(&pos, p);
                let mut got = got.to_vec();
                want.sort_unstable();
                got.sort_unstable();
                assert_eq!(got, want, "{fen} {p:?}");
            }
        }
        assert!(bucketed.features(1).0.iter().all(|&f| f >= 768));
        assert!(bucketed.features(2).0.iter().all(|&f| f < 768));
        assert_eq!(set.targets[2], set.targets[1]);
        assert_eq!(set.targets[4], set.targets[3]);
        assert_ne!(set.targets[1], set.targets[3]);
        // Validation never sees a copy; training sees every position.
        // (The one game is held out at a fraction of 0.9, kept at 0.)
        assert_eq!(set.split(0.9), (vec![], vec![0, 1, 3]));
        assert_eq!(plain.split(0.9), (vec![], vec![0, 1, 2]));
        assert_eq!(set.split(0.0), (vec![0, 1, 2, 3, 4], vec![]));
    }

    /// `dedup` keeps the first of positions alike in board and side to move, across games
    /// and files, whatever their castling rights, en passant square or counters.
    #[test]
    fn dedup_keeps_the_first_of_each_position() {
        use crate::data::{self, GameRecord, GameResult, Record};
        let dir = std::env::temp_dir();
        let paths: Vec<PathBuf> = ["a", "b"]
            .iter()
            .map(|n| dir.join(format!("chess-train-dedup-{n}-{}.bin", std::process::id())))
            .collect();
        let rec = |fen: &str, score| Record {
            fen: fen.into(),
            score,
        };
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        let e4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1";
        let e4_no_ep = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
        let e4_white = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 1";
        let games = [
            vec![(start, 20), (e4, 30), (start, 25)],
            vec![(e4_no_ep, 35), (e4_white, 40)],
        ];
        for (path, game) in paths.iter().zip(&games) {
            let _ = std::fs::remove_file(path);
            let (mut out, _) = data::open_for_append(path).unwrap();
            out.append(&GameRecord {
                result: GameResult::Draw,
                positions: game.iter().map(|&(f, s)| rec(f, s)).collect(),
            })
            .unwrap();
        }
        let none = KingBuckets::NONE;
        let all = load_dataset(&paths, 0.0, false, false, &none).unwrap();
        let set = load_dataset(&paths, 0.0, false, true, &none).unwrap();
        paths.iter().for_each(|p| std::fs::remove_file(p).unwrap());
        assert_eq!((all.len(), all.duplicates), (5, 0));
        // Kept: start (20), e4 (30), e4 with White to move (40).
        assert_eq!((set.len(), set.duplicates), (3, 2));
        assert_eq!(set.game_starts, [0, 2]);
        assert_eq!(set.targets[0], sigmoid(20.0 / SCALE as f32));
        assert_eq!(set.targets[1], sigmoid(-30.0 / SCALE as f32));
        assert_eq!(set.targets[2], sigmoid(40.0 / SCALE as f32));
    }
}
