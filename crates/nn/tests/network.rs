//! The file format, its errors, the content-hash name and the embedded default network.

mod common;

#[allow(dead_code)]
use chess_nn::{
    CHECKSUM_BYTES, DEFAULT_NETWORK_BYTES, DEFAULT_NETWORK_FILE, HEADER_BYTES, KingBuckets,
    Network, NetworkError, NetworkParts, file_len, fnv1a64, output_bucket,
};
use chess_rules::Position;
use common::{random_bucketed, random_network};
use sha2::{Digest, Sha256};

fn small() -> Network {
    random_network(1, (32, 1), 100, 100, (255, 64, 400))
}

fn bucketed() -> Network {
    random_network(2, (32, 8), 100, 100, (255, 64, 400))
}

/// Four king buckets (format version 3), with one or eight output buckets.
fn king_bucketed(buckets: usize) -> Network {
    let kb: KingBuckets = "00011222/3".parse().unwrap();
    random_bucketed(4, (32, buckets), kb, 100, 100, (255, 64, 400))
}

/// Rewrites a header field (a `u32` at `offset`) and fixes the checksum, so that only the
/// field is wrong.
fn with_field(bytes: &[u8], offset: usize, value: u32) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[offset..offset + 4].copy_from_slice(&value.to_le_bytes());
    reseal(&mut b);
    b
}

fn reseal(b: &mut [u8]) {
    let n = b.len() - CHECKSUM_BYTES;
    let sum = fnv1a64(&b[..n]);
    b[n..].copy_from_slice(&sum.to_le_bytes());
}

#[test]
fn round_trip_through_bytes_and_files() {
    let net = small();
    let bytes = net.to_bytes();
    assert_eq!(bytes.len(), file_len(32, 1, 1));
    assert_eq!(&bytes[..4], b"CHNN");
    assert_eq!(Network::from_bytes(&bytes).unwrap(), net);

    let dir = std::env::temp_dir().join(format!("chess-nn-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(net.file_name());
    net.save(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    assert_eq!(Network::load(&path).unwrap(), net);
    std::fs::remove_dir_all(&dir).unwrap();

    let parts = net.clone().into_parts();
    assert_eq!(Network::from_parts(parts).unwrap(), net);

    // One bucket in a version-2 file (never written, but valid) reads as the same network.
    let v1 = net.to_bytes();
    let mut v2 = v1[..4].to_vec();
    v2.extend_from_slice(&2u32.to_le_bytes());
    v2.extend_from_slice(&v1[8..HEADER_BYTES]);
    v2.extend_from_slice(&1u32.to_le_bytes());
    v2.extend_from_slice(&v1[HEADER_BYTES..]);
    reseal(&mut v2);
    assert_eq!(Network::from_bytes(&v2).unwrap(), net);
    assert_eq!(Network::from_bytes(&v2).unwrap().to_bytes(), v1);

    let net = bucketed();
    let bytes = net.to_bytes();
    assert_eq!(bytes.len(), file_len(32, 8, 1));
    assert_eq!(Network::from_bytes(&bytes).unwrap(), net);
    assert_eq!(Network::from_parts(net.clone().into_parts()).unwrap(), net);

    for buckets in [1, 8] {
        let net = king_bucketed(buckets);
        let bytes = net.to_bytes();
        assert_eq!(bytes.len(), file_len(32, buckets, 4));
        let read = Network::from_bytes(&bytes).unwrap();
        assert_eq!(read, net);
        assert_eq!(
            read.king_buckets().to_string(),
            net.king_buckets().to_string()
        );
        assert_eq!((read.inputs(), read.king_buckets().count()), (4 * 768, 4));
        assert_eq!(Network::from_parts(net.clone().into_parts()).unwrap(), net);
    }
}

/// The same weights under another king-bucket map are another network: the map is part of
/// the file and of the name.
#[test]
fn the_king_bucket_map_is_part_of_the_network() {
    let net = king_bucketed(1);
    let mut parts = net.clone().into_parts();
    // The same map written out in full.
    parts.king_buckets = "00011222/33333333".parse().unwrap();
    let same = Network::from_parts(parts.clone()).unwrap();
    assert_eq!(same, net);
    parts.king_buckets = "00001222/3".parse().unwrap();
    let other = Network::from_parts(parts).unwrap();
    assert_ne!(other, net);
    assert_ne!(other.content_hash(), net.content_hash());
    // The two evaluate a king on d1 from different buckets.
    let pos = Position::from_fen("4k3/pppppppp/8/8/8/8/PPPPPPPP/3K4 w - - 0 1").unwrap();
    assert_ne!(other.evaluate(&pos), net.evaluate(&pos));
}

#[test]
fn the_header_is_as_documented() {
    let b = small().to_bytes();
    let field = |i: usize| u32::from_le_bytes(b[4 + 4 * i..8 + 4 * i].try_into().unwrap());
    assert_eq!(
        (0..6).map(field).collect::<Vec<_>>(),
        [1, 768, 32, 255, 64, 400]
    );
    assert_eq!(HEADER_BYTES, 28);
    assert_eq!(
        file_len(256, 1, 1),
        28 + 2 * (768 * 256 + 256 + 512) + 4 + 8
    );
    // Version 2: the bucket count after the scale, then B sets of output weights and biases.
    let b = bucketed().to_bytes();
    let field = |i: usize| u32::from_le_bytes(b[4 + 4 * i..8 + 4 * i].try_into().unwrap());
    assert_eq!(
        (0..7).map(field).collect::<Vec<_>>(),
        [2, 768, 32, 255, 64, 400, 8]
    );
    assert_eq!(
        file_len(256, 8, 1),
        32 + 2 * (768 * 256 + 256 + 8 * 512) + 4 * 8 + 8
    );
    let n = b.len();
    assert_eq!(
        u64::from_le_bytes(b[n - 8..].try_into().unwrap()),
        fnv1a64(&b[..n - 8])
    );
    // Version 3: 768 inputs per king bucket, the output bucket count (1 here too), then the
    // bucket of each relative king square.
    let net = king_bucketed(1);
    let b = net.to_bytes();
    let field = |i: usize| u32::from_le_bytes(b[4 + 4 * i..8 + 4 * i].try_into().unwrap());
    assert_eq!(
        (0..7).map(field).collect::<Vec<_>>(),
        [3, 4 * 768, 32, 255, 64, 400, 1]
    );
    assert_eq!(&b[32..40], &[0, 0, 0, 1, 1, 2, 2, 2]);
    assert!(b[40..96].iter().all(|&k| k == 3));
    assert_eq!(
        file_len(256, 8, 4),
        96 + 2 * (4 * 768 * 256 + 256 + 8 * 512) + 4 * 8 + 8
    );
}

#[test]
fn every_corruption_has_its_error() {
    let good = small().to_bytes();
    let err = |b: &[u8]| Network::from_bytes(b).unwrap_err();

    let e = err(&good[..20]);
    assert!(
        matches!(e, NetworkError::TooShort { min: 36, found: 20 }),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "not a network file: 20 bytes, fewer than the 36 of an empty header and checksum"
    );

    let mut b = good.clone();
    b[..4].copy_from_slice(b"PK\x03\x04");
    let e = err(&b);
    assert!(matches!(e, NetworkError::BadMagic { found } if &found == b"PK\x03\x04"));
    assert_eq!(
        e.to_string(),
        r#"not a network file: magic "PK\x03\x04" where "CHNN" was expected"#
    );

    let e = err(&with_field(&good, 4, 4));
    assert!(matches!(
        e,
        NetworkError::UnsupportedVersion {
            expected: 3,
            found: 4
        }
    ));
    assert_eq!(
        e.to_string(),
        "network format version 4 is not supported: this build reads versions 1 to 3"
    );

    // Version 2's bucket count.
    let good2 = bucketed().to_bytes();
    for bad in [0, 17] {
        let e = err(&with_field(&good2, 28, bad));
        assert!(
            matches!(e, NetworkError::BadBuckets { max: 16, found } if found == bad),
            "{e:?}"
        );
    }
    assert_eq!(
        err(&with_field(&good2, 28, 0)).to_string(),
        "network has 0 output buckets: expected 1 to 16"
    );
    let e = err(&with_field(&good2, 28, 4));
    assert_eq!(
        e.to_string(),
        format!(
            "network file is {} bytes long; its header (hidden size 32, 4 output buckets, 1 king buckets) needs exactly {}",
            good2.len(),
            file_len(32, 4, 1)
        )
    );

    // Version 3's king-bucket map, and the inputs it implies.
    let good3 = king_bucketed(1).to_bytes();
    let mut b = good3.clone();
    b[40] = 5; // buckets 0-3 and 5: bucket 4 is on no square
    reseal(&mut b);
    let e = err(&b);
    assert!(matches!(e, NetworkError::KingBuckets(_)), "{e:?}");
    assert_eq!(
        e.to_string(),
        "network file: bad king-bucket map: king bucket 4 is on no square (buckets 0 to 5 must all be used)"
    );
    b[40] = 32;
    reseal(&mut b);
    assert_eq!(
        err(&b).to_string(),
        "network file: bad king-bucket map: 33 king buckets, at most 32 are allowed"
    );
    let e = err(&with_field(&good3, 8, 768));
    assert!(
        matches!(
            e,
            NetworkError::BadInputs {
                expected: 3072,
                found: 768
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "network has 768 inputs where its king buckets make 3072"
    );
    // A version-3 header cut before its map ends.
    let e = err(&good3[..60]);
    assert!(
        matches!(
            e,
            NetworkError::TooShort {
                min: 104,
                found: 60
            }
        ),
        "{e:?}"
    );
    // The map read as a version-2 file's weights: the length is wrong.
    let e = err(&with_field(&good3, 4, 2));
    assert!(matches!(e, NetworkError::BadInputs { .. }), "{e:?}");

    let e = err(&with_field(&good, 8, 769));
    assert!(matches!(
        e,
        NetworkError::BadInputs {
            expected: 768,
            found: 769
        }
    ));
    assert_eq!(
        e.to_string(),
        "network has 769 inputs where its king buckets make 768"
    );

    for hidden in [0, 24, 2048] {
        let e = err(&with_field(&good, 12, hidden));
        assert!(
            matches!(e, NetworkError::BadHidden { found, .. } if found == hidden),
            "{e:?}"
        );
    }
    assert_eq!(
        err(&with_field(&good, 12, 24)).to_string(),
        "network hidden size 24 is not supported: expected a multiple of 16 from 16 to 1024"
    );

    for (offset, name) in [(16, "qa"), (20, "qb"), (24, "scale")] {
        for bad in [0, 40_000] {
            let e = err(&with_field(&good, offset, bad));
            assert!(
                matches!(e, NetworkError::BadQuantisation { name: n, found, .. } if n == name && found == u64::from(bad)),
                "{e:?}"
            );
        }
    }
    assert_eq!(
        err(&with_field(&good, 16, 0)).to_string(),
        "network quantisation constant qa = 0 is out of range: expected 1 to 32767"
    );

    // A header that promises a different size than the file has.
    let e = err(&with_field(&good, 12, 48));
    assert!(matches!(
        e,
        NetworkError::BadLength {
            hidden: 48,
            found,
            ..
        } if found == good.len()
    ));
    let e = err(&good[..good.len() - 1]);
    assert_eq!(
        e.to_string(),
        format!(
            "network file is {} bytes long; its header (hidden size 32, 1 output buckets, 1 king buckets) needs exactly {}",
            good.len() - 1,
            good.len()
        )
    );

    // One weight flipped.
    let mut b = good.clone();
    b[HEADER_BYTES + 1000] ^= 0x10;
    let e = err(&b);
    let NetworkError::BadChecksum { expected, found } = e else {
        panic!("{e:?}")
    };
    assert_eq!(expected, fnv1a64(&good[..good.len() - 8]));
    assert_eq!(found, fnv1a64(&b[..b.len() - 8]));
    assert!(
        e.to_string()
            .starts_with("network checksum mismatch: the file says 0x")
    );

    let e = Network::load("/nonexistent/chnn-000000000000.nnue").unwrap_err();
    assert!(matches!(e, NetworkError::Io { .. }));
    assert!(
        e.to_string()
            .starts_with("network file /nonexistent/chnn-000000000000.nnue: "),
        "{e}"
    );
}

#[test]
fn parts_are_checked() {
    let mut parts = small().into_parts();
    parts.ft_biases.pop();
    let e = Network::from_parts(parts).unwrap_err();
    assert_eq!(
        e.to_string(),
        "network part ft_biases has 31 values where hidden size 32 with 1 output buckets and 1 king buckets needs 32"
    );
    let mut parts = bucketed().into_parts();
    parts.out_biases.pop();
    assert_eq!(
        Network::from_parts(parts).unwrap_err().to_string(),
        "network part out_biases has 7 values where hidden size 32 with 8 output buckets and 1 king buckets needs 8"
    );
    // Feature weights for one king bucket where the map has four.
    let e = Network::from_parts(NetworkParts {
        king_buckets: "00011222/3".parse().unwrap(),
        ..small().into_parts()
    })
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "network part ft_weights has {} values where hidden size 32 with 1 output buckets and 4 king buckets needs {}",
            768 * 32,
            4 * 768 * 32
        )
    );
    let e = Network::from_parts(NetworkParts {
        buckets: 0,
        ..small().into_parts()
    })
    .unwrap_err();
    assert!(matches!(e, NetworkError::BadBuckets { found: 0, .. }));
    let e = Network::from_parts(NetworkParts {
        qa: 0,
        ..small().into_parts()
    })
    .unwrap_err();
    assert!(matches!(
        e,
        NetworkError::BadQuantisation { name: "qa", .. }
    ));
}

#[test]
fn files_are_named_by_their_content_hash() {
    let net = small();
    let digest = Sha256::digest(net.to_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(net.content_hash(), &hex[..12]);
    assert_eq!(net.file_name(), format!("chnn-{}.nnue", &hex[..12]));

    let mut parts = net.clone().into_parts();
    parts.out_biases[0] += 1;
    let other = Network::from_parts(parts).unwrap();
    assert_ne!(other.content_hash(), net.content_hash());
}

#[test]
fn the_embedded_network_is_named_by_its_hash() {
    let net = Network::default_network();
    assert_eq!(net.to_bytes(), DEFAULT_NETWORK_BYTES);
    assert_eq!(net.file_name(), DEFAULT_NETWORK_FILE);
    assert_eq!(
        (net.hidden(), net.qa(), net.qb(), net.scale()),
        // SCALE 381: trained at 400, then its predecessor's scale matched (chess-train rescale:
        // slope 1.0511).
        (256, 255, 64, 381)
    );
}

#[test]
fn the_default_network_plays_sensibly() {
    let net = Network::default_network();
    let eval = |fen: &str| net.evaluate(&Position::from_fen(fen).unwrap());
    // The start position is about level.
    let start = eval("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
    assert!(start.abs() < 100, "{start}");
    // A queen up is winning, from either side to move.
    let up = eval("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
    assert!(up > 500, "{up}");
    let down = eval("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1");
    assert!(down < -500, "{down}");
    // Material in order: a rook up beats a knight up beats a pawn up beats level.
    let rook = eval("4k3/pppppppp/8/8/8/8/PPPPPPPP/R3K3 w - - 0 1");
    let knight = eval("4k3/pppppppp/8/8/8/8/PPPPPPPP/1N2K3 w - - 0 1");
    let pawn = eval("4k3/ppppppp1/8/8/8/8/PPPPPPPP/4K3 w - - 0 1");
    let level = eval("4k3/pppppppp/8/8/8/8/PPPPPPPP/4K3 w - - 0 1");
    assert!(
        rook > knight && knight > pawn && pawn > level,
        "{rook} {knight} {pawn} {level}"
    );
    // A queen is worth more than a rook, and two minor pieces more than a pawn.
    let queen = eval("4k3/pppppppp/8/8/8/8/PPPPPPPP/3QK3 w - - 0 1");
    let minors = eval("4k3/pppppppp/8/8/8/8/PPPPPPPP/1NB1K3 w - - 0 1");
    assert!(
        queen > rook && minors > pawn,
        "{queen} {rook} {minors} {pawn}"
    );
    // A pawn about to promote is worth more than one at home.
    let far = eval("4k3/8/8/8/8/8/P7/4K3 w - - 0 1");
    let near = eval("4k3/P7/8/8/8/8/8/4K3 w - - 0 1");
    assert!(near > far, "{near} {far}");
    // Exactly colour-symmetric.
    for fen in common::START_FENS {
        let pos = Position::from_fen(fen).unwrap();
        assert_eq!(net.evaluate(&pos), net.evaluate(&pos.mirrored()), "{fen}");
    }
}

/// Runs `load` on another thread; panics when it has not returned within 10 s (a reader stuck
/// on a pipe or a device that never ends).
fn load_within_10s(path: &std::path::Path) -> Result<Network, NetworkError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let path = path.to_owned();
    std::thread::spawn(move || {
        let _ = tx.send(Network::load(&path));
    });
    rx.recv_timeout(std::time::Duration::from_secs(10))
        .expect("Network::load did not return within 10 s")
}

#[test]
fn only_regular_files_of_the_header_size_are_read() {
    let dir = std::env::temp_dir().join(format!("chess-nn-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A named pipe: opening it for reading would wait for a writer forever.
    let fifo = dir.join("pipe.nnue");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let e = load_within_10s(&fifo).unwrap_err();
        assert!(matches!(e, NetworkError::NotAFile { .. }), "{e:?}");
    } else {
        eprintln!("mkfifo is not available: the pipe case is skipped");
    }
    // A device that never ends is refused before a byte is read.
    let e = load_within_10s(std::path::Path::new("/dev/zero")).unwrap_err();
    assert!(matches!(e, NetworkError::NotAFile { .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        "network file /dev/zero is not a regular file (a device, pipe, socket or directory)"
    );
    let e = load_within_10s(&dir).unwrap_err();
    assert!(matches!(e, NetworkError::NotAFile { .. }), "{e:?}");
    // A valid header on a file far longer than the header allows: refused by its length,
    // without reading it (the file is sparse: 8 GiB that take no disk).
    let net = small();
    let bytes = net.to_bytes();
    let huge = dir.join("huge.nnue");
    let f = std::fs::File::create(&huge).unwrap();
    std::io::Write::write_all(&mut &f, &bytes).unwrap();
    f.set_len(8 << 30).unwrap();
    drop(f);
    let e = load_within_10s(&huge).unwrap_err();
    let NetworkError::BadLength {
        expected, found, ..
    } = e
    else {
        panic!("{e:?}")
    };
    assert_eq!((expected, found), (bytes.len(), 8 << 30));
    // The same file at its right length loads.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&huge)
        .unwrap()
        .set_len(bytes.len() as u64)
        .unwrap();
    assert_eq!(load_within_10s(&huge).unwrap(), net);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Each position is scored by the output weights and bias of its bucket, chosen by the number
/// of pieces on the board: changing one bucket's bias moves exactly the positions of that
/// bucket.
#[test]
fn the_piece_count_chooses_the_output_bucket() {
    let net = bucketed();
    let fens = [
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            32,
        ),
        (
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            32,
        ),
        ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 10),
        ("4k3/8/8/8/8/8/8/3QK3 b - - 0 1", 3),
    ];
    for (fen, pieces) in fens {
        let pos = Position::from_fen(fen).unwrap();
        let acc = chess_nn::Accumulator::from_position(&net, &pos);
        assert_eq!(acc.pieces(), pieces, "{fen}");
        let bucket = output_bucket(pieces, 8);
        assert_eq!(net.bucket(pieces), bucket);
        assert_eq!(
            net.evaluate(&pos),
            net.output(
                acc.perspective(pos.turn()),
                acc.perspective(!pos.turn()),
                bucket
            ),
            "{fen}"
        );
        // Only this bucket's bias moves this position's score.
        for b in 0..8 {
            let mut parts = net.clone().into_parts();
            parts.out_biases[b] += 64 * 255 * 10;
            let moved = Network::from_parts(parts).unwrap();
            assert_eq!(
                moved.evaluate(&pos) != net.evaluate(&pos),
                b == bucket,
                "{fen}: bucket {b}"
            );
        }
    }
    assert_eq!(
        (0..=32).map(|p| output_bucket(p, 8)).collect::<Vec<_>>(),
        [
            0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6,
            6, 7, 7, 7
        ]
    );
}

/// The output's last step multiplies by `scale / (qa * qb)` reduced: wherever the unreduced
/// product fits an `i32` the two give the same evaluation, and where only the reduced one
/// fits, it gives the exact value the unreduced formula stands for.
#[test]
fn the_reduced_output_ratio_agrees_with_the_unreduced_one() {
    assert_eq!(chess_nn::output_ratio(255, 64, 400), (5, 204));
    assert_eq!(chess_nn::output_ratio(255, 64, 255), (1, 64));
    assert_eq!(chess_nn::output_ratio(181, 64, 32_767), (32_767, 11_584));
    assert_eq!(chess_nn::output_ratio(127, 32, 600), (75, 508));
    assert_eq!(chess_nn::output_ratio(1, 1, 7), (7, 1));
    // `sum / qa + bias` in i64, when the sum fits an i32 (so the kernels do not wrap).
    let before_ratio = |net: &Network, acc: &[i16]| -> Option<i64> {
        let qa = i64::from(net.qa());
        let sum: i64 = acc
            .iter()
            .zip(net.out_weights())
            .map(|(&a, &w)| {
                let c = i64::from(a).clamp(0, qa);
                c * i64::from(w) * c
            })
            .sum();
        (sum.abs() <= i64::from(i32::MAX)).then(|| sum / qa + i64::from(net.out_biases()[0]))
    };
    let mut rng = common::Rng::new(44);
    let (mut within, mut wider) = (0, 0);
    for (i, quant) in [(255, 64, 400), (181, 64, 32_767), (127, 32, 600)]
        .into_iter()
        .enumerate()
    {
        let (qa, qb, scale) = quant;
        // Ordinary weights, and large positive ones whose sums need the reduced ratio's room.
        for large in [false, true] {
            let mut parts = random_network(90 + i as u64, (16, 1), 100, 120, quant).into_parts();
            if large {
                parts.out_weights = (0..32).map(|_| 750 + rng.i16(50)).collect();
                parts.out_biases = vec![0];
            }
            let net = Network::from_parts(parts).unwrap();
            assert_eq!(net.output_ratio(), chess_nn::output_ratio(qa, qb, scale));
            let (mul, _) = net.output_ratio();
            for _ in 0..2_000 {
                let acc: Vec<i16> = (0..32)
                    .map(|_| {
                        if large {
                            (qa - rng.below(20) as i32) as i16
                        } else {
                            rng.i16(qa)
                        }
                    })
                    .collect();
                let Some(x) = before_ratio(&net, &acc) else {
                    continue;
                };
                if x.abs() * i64::from(mul) > i64::from(i32::MAX) {
                    continue;
                }
                let exact = x * i64::from(scale) / i64::from(qa * qb);
                let got = i64::from(net.output(&acc[..16], &acc[16..], 0));
                assert_eq!(got, exact, "{quant:?}");
                if x.abs() * i64::from(scale) > i64::from(i32::MAX) {
                    wider += 1;
                } else {
                    within += 1;
                }
            }
        }
    }
    assert!(within > 1_000 && wider > 100, "{within} {wider}");
}
