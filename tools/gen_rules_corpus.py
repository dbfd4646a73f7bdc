#!/usr/bin/env python3
"""Generate independent reference test data for the `chess-rules` crate.

The oracle is python-chess (https://pypi.org/project/chess/, generated with
1.11.2).  It is only used to produce test data; the product never depends on
it.  Install with `pip install chess`, then run from anywhere:

    python3 tools/gen_rules_corpus.py [--out crates/rules/tests/data] [--seed 20240601]

The script is deterministic for a given seed and python-chess version (no
iteration over hash-ordered containers, a single seeded RNG).  Progress goes to
stderr.  After writing, every file is re-read and re-checked against
python-chess.

Files written (all UTF-8, '\n' line endings, no header/comment lines):

legal_moves.txt      3000 lines
    FEN \t uci1 san1 \t uci2 san2 ...
    Every legal move of the position, in python-chess generation order.  UCI
    uses standard castling notation (e1g1), SAN is `board.san(move)` (with
    +/# suffixes, `=Q` promotions, O-O / O-O-O).  FEN is `board.fen()`, i.e.
    the en-passant square is written only when an en-passant capture is
    legal.  A position without legal moves (mate / stalemate) is written as
    `FEN \t -`.

fen_roundtrip.txt    1000 lines
    INPUT_FEN \t NORMALISED_FEN
    INPUT_FEN  = board.fen(en_passant="fen")   (ep square after every double push)
    NORMALISED = board.fen(en_passant="legal") (ep square only if a capture is legal)

repetition.txt       300 lines
    START_FEN \t uci1 uci2 ... \t N
    N = number of times the final position occurs in the game (start position
    included), positions compared with python-chess `_transposition_key()`
    (placement, side to move, clean castling rights, ep square only if an
    en-passant capture is legal).  START_FEN is usually `board.fen()`, but a
    few lines deliberately use `board.fen(en_passant="fen")` with an
    en-passant square that is NOT capturable.  N is between 1 and 5.
"""

import argparse
import os
import random
import sys
import time

import chess

T0 = time.time()


def log(*a):
    print(f"[{time.time() - T0:6.1f}s]", *a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Seed positions
# ---------------------------------------------------------------------------

# (fen, number_of_games, max_plies[, policy])   max_plies=None -> play to the end
SEEDS = [
    # classic perft positions
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 80, 60),
    ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 80, 80),
    ("8/8/3p4/KPp4r/1R2Pp1k/8/6P1/8 w - c6 0 2", 80, 40),
    ("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 60, 40),
    ("r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1", 60, 40),
    ("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 60, 40),
    ("r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", 40, 60),
    # promotions (with/without capture, underpromotion)
    ("n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1", 60, 30),
    ("n1n5/PPPk4/8/8/8/8/4Kppp/5N1N w - - 0 1", 60, 30),
    ("1r2r3/P1P2P1k/8/8/8/8/p2p1p1K/1R2R3 w - - 0 1", 60, 30),
    ("4k3/1P4P1/8/8/8/8/1p4p1/4K3 w - - 0 1", 40, 40),
    # castling with attacked / blocked transit squares
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", 60, 12),
    ("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", 60, 12),
    ("r3k2r/8/3B4/8/8/3b4/8/R3K2R w KQkq - 0 1", 60, 10),
    ("r3k2r/1b4b1/8/8/8/8/1B4B1/R3K2R w KQkq - 0 1", 60, 10),
    ("1r2k2r/8/8/8/8/8/8/R3K2R w KQk - 0 1", 50, 10),
    ("2r1k2r/8/8/8/8/8/8/R3K1R1 w Qk - 0 1", 50, 10),
    ("r3k2r/8/8/8/8/8/5n2/R3K2R w KQkq - 0 1", 50, 10),
    ("r3k2r/8/5N2/8/8/8/8/R3K2R b KQkq - 0 1", 50, 10),
    ("r3k2r/p1p1p1p1/8/8/8/8/P1P1P1P1/R3K2R w KQkq - 0 1", 50, 16),
    ("rn2k2r/8/8/8/8/8/8/R3K1NR w KQkq - 0 1", 50, 12),
    # en passant, including pinned / horizontally pinned cases
    ("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3", 60, 30),
    ("4k3/pppppppp/8/8/8/8/PPPPPPPP/4K3 w - - 0 1", 80, 60),
    ("k7/p1p1p1p1/8/1P1P1P1P/8/8/8/K7 b - - 0 1", 60, 20),
    ("k7/8/8/8/p1p1p1p1/8/1P1P1P1P/K7 w - - 0 1", 60, 20),
    ("7k/3p4/8/K3P2r/8/8/8/8 b - - 0 1", 60, 10),
    ("b6k/4p3/8/3P4/8/8/8/7K b - - 0 1", 60, 10),
    ("8/8/8/8/k2Pp2Q/8/8/3K4 b - d3 0 1", 60, 10),
    ("8/8/8/4k3/3Pp3/8/8/4K3 b - d3 0 1", 60, 10),
    ("7K/8/8/8/1R2Pp1k/8/8/8 b - e3 0 1", 60, 10),
    ("4k3/8/8/2Pp4/8/8/8/4K2b w - d6 0 1", 40, 10),
    ("4k3/8/8/8/2pP4/8/8/4K3 b - d3 0 1", 40, 10),
    # disambiguation: many pieces of one kind
    ("7k/8/8/8/Q1Q5/8/Q1Q5/K7 w - - 0 1", 50, 20),
    ("7k/8/8/3Q4/8/1Q3Q2/8/K7 w - - 0 1", 50, 20),
    ("4k3/8/8/1N3N2/8/1N3N2/8/4K3 w - - 0 1", 50, 20),
    ("4k3/8/8/1n3n2/8/1n3n2/8/7K b - - 0 1", 50, 20),
    ("4k3/R7/8/8/8/8/7R/R3K3 w - - 0 1", 50, 20),
    ("r3k3/8/8/8/2K5/8/r7/7r b - - 0 1", 50, 20),
    ("6k1/8/2N1N3/8/2N1N3/8/8/R3K2R w KQ - 0 1", 50, 20),
    ("6k1/8/8/3qq3/3q4/8/8/5K2 b - - 0 1", 50, 20),
    ("8/7k/3B1B2/8/3B1B2/8/8/K7 w - - 0 1", 40, 20),
    # checks / double checks / pins
    ("4k3/8/8/8/1b6/8/3N4/R3K2R w KQ - 0 1", 40, 20),
    ("r3k2r/8/8/4N3/8/8/1q6/R3K2R b KQkq - 0 1", 40, 20),
    ("3rk3/8/8/8/8/8/8/2Q1KB1r w - - 0 1", 40, 20),
    ("q3k3/8/8/3B4/8/8/8/R3K2R b KQ - 0 1", 40, 20),
    ("4k3/4r3/8/8/4B3/8/2b5/R3K3 w Q - 0 1", 40, 20),
    # discovered / double checks
    # (a 4th field "check" plays checking moves with high probability)
    ("4k3/8/8/8/4N3/8/8/4R1K1 w - - 0 1", 60, 30, "check"),
    ("7k/8/8/4N3/8/8/8/Q5K1 w - - 0 1", 60, 30, "check"),
    ("4r1k1/8/8/8/4n3/8/8/4K3 b - - 0 1", 60, 30, "check"),
    ("4k3/8/8/8/4B3/8/8/K3R3 w - - 0 1", 60, 30, "check"),
    ("k3r3/8/8/4b3/8/8/8/4K3 b - - 0 1", 60, 30, "check"),
    ("3qk3/8/8/8/8/8/3P4/1B1QK3 w - - 0 1", 60, 30, "check"),
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 60, 40, "check"),
    ("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3", 60, 60, "check"),
    # mate / stalemate prone endings
    ("8/8/8/4k3/8/8/8/4KQ2 w - - 0 1", 120, 200),
    ("8/8/8/4k3/8/8/8/R3K3 w - - 0 1", 100, 200),
    ("7k/5Q2/8/8/8/8/8/K7 w - - 0 1", 100, 200),
    ("k7/8/1K6/8/8/8/8/7R w - - 0 1", 100, 200),
    ("7k/8/6Q1/8/8/8/8/6K1 b - - 0 1", 5, 5),
    ("8/8/8/8/8/4k3/4p3/4K3 w - - 0 1", 60, 200),
    ("8/6k1/8/8/8/8/1p6/KQ6 w - - 0 1", 100, 200),
    ("5k2/8/5K2/8/8/8/8/3Q3R w - - 0 1", 100, 200),
    ("4k3/8/8/8/8/8/8/2B1KB2 w - - 0 1", 60, 200),
    ("4k3/8/4K3/8/8/8/8/6N1 w - - 0 1", 40, 200),
]

START_GAMES = 600

PIECE_DISAMB = (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN)


def epd4(fen):
    return " ".join(fen.split()[:4])


def is_double_push(board, move):
    """Call BEFORE pushing `move`."""
    return (board.piece_type_at(move.from_square) == chess.PAWN
            and abs(move.to_square - move.from_square) == 16)


def features(board, legal):
    """Cheap classification of a position."""
    f = {}
    n = len(legal)
    f["n"] = n
    if n == 0:
        f["mate"] = board.is_check()
        f["stalemate"] = not board.is_check()
        return f
    promo = False
    promo_cap = False
    promo_quiet = False
    ep = False
    castle = False
    groups = {}
    for m in legal:
        if m.promotion:
            promo = True
            if board.is_capture(m):
                promo_cap = True
            else:
                promo_quiet = True
        elif board.ep_square is not None and m.to_square == board.ep_square and board.is_en_passant(m):
            ep = True
        else:
            pt = board.piece_type_at(m.from_square)
            if pt in PIECE_DISAMB:
                k = (pt, m.to_square)
                groups[k] = groups.get(k, 0) + 1
            elif pt == chess.KING and board.is_castling(m):
                castle = True
    f["promo"] = promo
    f["promo_cap"] = promo_cap
    f["promo_quiet"] = promo_quiet
    f["ep"] = ep
    f["castle"] = castle
    f["disamb"] = any(v > 1 for v in groups.values())
    checkers = board.checkers()
    f["check"] = bool(checkers)
    f["double_check"] = len(checkers) > 1
    us = board.turn
    pinned = False
    for sq in chess.scan_forward(board.occupied_co[us] & ~board.kings):
        if board.is_pinned(us, sq):
            pinned = True
            break
    f["pinned"] = pinned
    # pinned piece would need disambiguation pseudo-legally, but SAN (which
    # only looks at legal moves) must not disambiguate
    trap = False
    if pinned:
        pgroups = {}
        for m in board.pseudo_legal_moves:
            pt = board.piece_type_at(m.from_square)
            if pt in PIECE_DISAMB:
                k = (pt, m.to_square)
                pgroups[k] = pgroups.get(k, 0) + 1
        for k, v in pgroups.items():
            if v > 1 and groups.get(k, 0) == 1:
                trap = True
                break
    f["disamb_trap"] = trap
    # castling rights exist and path is empty, but castling is illegal
    # (king in check or transit/destination square attacked)
    attacked = False
    rights = board.clean_castling_rights() & board.occupied_co[us]
    if rights:
        back = chess.BB_RANK_1 if us == chess.WHITE else chess.BB_RANK_8
        for rook_sq in chess.scan_forward(rights & back):
            king_sq = board.king(us)
            if king_sq is None:
                continue
            if chess.square_file(rook_sq) > chess.square_file(king_sq):
                to = chess.square(6, chess.square_rank(king_sq))
            else:
                to = chess.square(2, chess.square_rank(king_sq))
            between = chess.between(king_sq, rook_sq)
            if board.occupied & between:
                continue
            mv = chess.Move(king_sq, to)
            if not board.is_legal(mv):
                attacked = True
    f["castle_attacked"] = attacked
    return f


def playout(rng, board, max_plies, policy, sink, dp_sink):
    """Random playout; every visited position is handed to sink()."""
    plies = 0
    while True:
        legal = list(board.legal_moves)
        sink(board, legal)
        if not legal or board.halfmove_clock >= 100:
            return
        if max_plies is not None and plies >= max_plies:
            return
        if policy == "capture" and rng.random() < 0.5:
            pref = [m for m in legal if m.promotion or board.is_capture(m)]
            mv = rng.choice(pref) if pref else rng.choice(legal)
        elif policy == "check" and rng.random() < 0.7:
            pref = [m for m in legal if board.gives_check(m)]
            dbl = []
            for m in pref:
                board.push(m)
                if len(board.checkers()) > 1:
                    dbl.append(m)
                board.pop()
            if dbl and rng.random() < 0.8:
                pref = dbl
            mv = rng.choice(pref) if pref else rng.choice(legal)
        elif policy == "pawn" and rng.random() < 0.4:
            pref = [m for m in legal if board.piece_type_at(m.from_square) == chess.PAWN]
            mv = rng.choice(pref) if pref else rng.choice(legal)
        else:
            mv = rng.choice(legal)
        dp = is_double_push(board, mv)
        pre_fen = board.fen() if dp else None
        board.push(mv)
        plies += 1
        if dp:
            dp_sink(board, pre_fen, mv)


# ---------------------------------------------------------------------------
# En-passant classification
# ---------------------------------------------------------------------------

def ep_class(board):
    """For a board whose last move was a double push (ep_square set).

    Returns 'legal', 'no_adjacent', or 'illegal:<reason>'.
    """
    assert board.ep_square is not None
    if board.has_legal_en_passant():
        return "legal"
    us = board.turn
    ep = board.ep_square
    # capturing pawns would stand on the pushed pawn's rank, adjacent file
    pushed = ep + (-8 if us == chess.WHITE else 8)
    adj = chess.BB_PAWN_ATTACKS[not us][ep] & board.pawns & board.occupied_co[us]
    if not adj:
        return "no_adjacent"
    reasons = []
    for sq in chess.scan_forward(adj):
        if board.is_check():
            reasons.append("in_check")
        elif board.is_pinned(us, sq):
            reasons.append("pinned")
        else:
            reasons.append("discovered")
    del pushed
    return "illegal:" + "+".join(reasons)


def synth_sparse(rng):
    """Random sparse legal position, white to move, or None."""
    b = chess.Board(None)
    squares = list(chess.SQUARES)
    rng.shuffle(squares)
    b.set_piece_at(squares.pop(), chess.Piece(chess.KING, chess.WHITE))
    b.set_piece_at(squares.pop(), chess.Piece(chess.KING, chess.BLACK))
    for _ in range(rng.randint(2, 7)):
        p = chess.Piece.from_symbol(rng.choice("QRRBBNNPPqrrbbnnpp"))
        s = squares.pop()
        if p.piece_type == chess.PAWN and chess.square_rank(s) in (0, 7):
            continue
        b.set_piece_at(s, p)
    b.turn = chess.WHITE
    b.castling_rights = 0
    b.fullmove_number = rng.randint(10, 80)
    b.halfmove_clock = rng.randint(0, 30)
    if b.status() != chess.STATUS_VALID:
        return None
    return b


def synth_double_push(rng, want_legal):
    """Random sparse position where white double-pushes next to a black pawn.

    Returns (pre_board, move, post_board) or None.
    """
    b = chess.Board(None)
    f = rng.randrange(8)
    side = rng.choice([-1, 1])
    if not 0 <= f + side < 8:
        side = -side
    wp = chess.square(f, 1)
    bp = chess.square(f + side, 3)
    b.set_piece_at(wp, chess.Piece(chess.PAWN, chess.WHITE))
    b.set_piece_at(bp, chess.Piece(chess.PAWN, chess.BLACK))
    free = [s for s in chess.SQUARES if s not in (wp, bp, chess.square(f, 2), chess.square(f, 3))]
    rng.shuffle(free)
    b.set_piece_at(free.pop(), chess.Piece(chess.KING, chess.WHITE))
    # bias black king towards rank 4 / diagonals to create pins
    if rng.random() < 0.5:
        cand = [s for s in free if chess.square_rank(s) == 3]
        if cand:
            s = rng.choice(cand)
            free.remove(s)
            b.set_piece_at(s, chess.Piece(chess.KING, chess.BLACK))
    if b.king(chess.BLACK) is None:
        b.set_piece_at(free.pop(), chess.Piece(chess.KING, chess.BLACK))
    extra = rng.randint(1, 6)
    kinds = "QRRBBNPPpprrbbqn"
    for _ in range(extra):
        c = rng.choice(kinds)
        p = chess.Piece.from_symbol(c)
        s = free.pop()
        if p.piece_type == chess.PAWN and chess.square_rank(s) in (0, 7):
            continue
        b.set_piece_at(s, p)
    b.turn = chess.WHITE
    b.castling_rights = 0
    b.ep_square = None
    if b.status() != chess.STATUS_VALID:
        return None
    mv = chess.Move(wp, chess.square(f, 3))
    if not b.is_legal(mv):
        return None
    pre = b.copy(stack=False)
    pre.fullmove_number = rng.randint(2, 60)
    pre.halfmove_clock = rng.randint(0, 20)
    post = pre.copy(stack=False)
    post.push(mv)
    if post.status() != chess.STATUS_VALID:
        return None
    cls = ep_class(post)
    if want_legal != (cls == "legal"):
        return None
    if not want_legal and not cls.startswith("illegal"):
        return None
    if not any(True for _ in post.legal_moves):
        return None
    return pre, mv, post


def mirror_record(pre, mv, post):
    """Colour-flipped version (black double-pushes)."""
    pre_m = pre.mirror()
    pre_m.clear_stack()
    mv_m = chess.Move(chess.square_mirror(mv.from_square), chess.square_mirror(mv.to_square))
    post_m = pre_m.copy(stack=False)
    # pre_m has black to move (pre had white to move)
    assert pre_m.turn == chess.BLACK and pre_m.is_legal(mv_m)
    post_m.push(mv_m)
    return pre_m, mv_m, post_m


# ---------------------------------------------------------------------------
# SAN helpers
# ---------------------------------------------------------------------------

def san_disamb_kind(san):
    """'' / 'file' / 'rank' / 'square' for a SAN string."""
    s = san.rstrip("+#")
    if s.startswith("O-O") or s[0] not in "NBRQK":
        return ""
    body = s[1:].replace("x", "")
    d = body[:-2]
    if not d:
        return ""
    if len(d) == 2:
        return "square"
    return "file" if d in "abcdefgh" else "rank"


def position_line(fen):
    b = chess.Board(fen)
    moves = list(b.legal_moves)
    if not moves:
        return fen + "\t-", set()
    parts = [fen]
    kinds = set()
    for m in moves:
        san = b.san(m)
        k = san_disamb_kind(san)
        if k:
            kinds.add(k)
        parts.append(f"{m.uci()} {san}")
    return "\t".join(parts), kinds


# ---------------------------------------------------------------------------
# Part 1: pool of positions from random playouts
# ---------------------------------------------------------------------------

def build_pool(rng):
    pool = {}  # epd -> (fen, fen_with_fen_ep, features)
    order = []
    dps = []  # (post_fen_fen, post_fen_legal, pre_fen, uci, cls)

    def sink(board, legal):
        fen = board.fen()
        k = epd4(fen)
        if k in pool:
            return
        pool[k] = (fen, board.fen(en_passant="fen"), features(board, legal))
        order.append(k)

    def dp_sink(board, pre_fen, mv):
        dps.append((board.fen(en_passant="fen"), board.fen(), pre_fen, mv.uci(), ep_class(board)))

    for g in range(START_GAMES):
        policy = ("uniform", "capture", "pawn")[g % 3]
        playout(rng, chess.Board(), None if g % 4 else rng.randint(1, 120), policy, sink, dp_sink)
        if g % 200 == 0:
            log(f"start-position playouts {g}/{START_GAMES}, pool={len(pool)}")
    for i, seed in enumerate(SEEDS):
        fen, games, maxp = seed[:3]
        b0 = chess.Board(fen)
        assert b0.status() == chess.STATUS_VALID, (fen, b0.status())
        for g in range(games):
            policy = ("uniform", "capture", "pawn")[g % 3]
            if len(seed) > 3:
                policy = seed[3]
            mp = rng.randint(1, maxp) if maxp else None
            playout(rng, b0.copy(stack=False), mp, policy, sink, dp_sink)
    log(f"seed playouts done, pool={len(pool)}, double pushes={len(dps)}")
    # double checks are rare in random play: add positions right after a
    # double-checking move in random sparse positions
    got = 0
    tries = 0
    while got < 80 and tries < 200000:
        tries += 1
        b = synth_sparse(rng)
        if b is None:
            continue
        dbl = []
        for m in b.legal_moves:
            b.push(m)
            if len(b.checkers()) > 1 and b.status() == chess.STATUS_VALID:
                dbl.append(m)
            b.pop()
        if not dbl:
            continue
        b.push(rng.choice(dbl))
        if rng.random() < 0.5:
            b = b.mirror()
        b.clear_stack()
        before = len(pool)
        sink(b, list(b.legal_moves))
        got += len(pool) > before
    log(f"double-check positions added: {got} ({tries} tries), pool={len(pool)}")
    return pool, order, dps


def select_legal_positions(rng, pool, order, total=3000):
    # (feature, target)
    quotas = [
        ("stalemate", 45),
        ("mate", 75),
        ("double_check", 60),
        ("disamb_trap", 40),
        ("promo_cap", 150),
        ("promo_quiet", 150),
        ("promo", 340),
        ("ep", 240),
        ("castle_attacked", 150),
        ("castle", 240),
        ("disamb", 340),
        ("check", 350),
        ("pinned", 350),
    ]
    chosen = []
    chosen_set = {}
    counts = {}

    def add(k):
        chosen_set[k] = True
        chosen.append(k)
        f = pool[k][2]
        for name, _ in quotas:
            if f.get(name):
                counts[name] = counts.get(name, 0) + 1

    for name, target in quotas:
        cands = [k for k in order if pool[k][2].get(name) and k not in chosen_set]
        rng.shuffle(cands)
        need = target - counts.get(name, 0)
        for k in cands[:max(0, need)]:
            add(k)
        log(f"quota {name}: have {counts.get(name, 0)} (target {target}, pool {len(cands)})")

    # SAN disambiguation kinds: make sure file, rank and full-square all occur
    kind_counts = {"file": 0, "rank": 0, "square": 0}
    kind_cache = {}

    def kinds_of(k):
        if k not in kind_cache:
            kind_cache[k] = position_line(pool[k][0])[1]
        return kind_cache[k]

    for k in chosen:
        if pool[k][2].get("disamb"):
            for kd in kinds_of(k):
                kind_counts[kd] += 1
    for kd, target in (("square", 40), ("rank", 80), ("file", 150)):
        if kind_counts[kd] >= target:
            continue
        cands = [k for k in order if pool[k][2].get("disamb") and k not in chosen_set]
        rng.shuffle(cands)
        for k in cands:
            if kind_counts[kd] >= target:
                break
            ks = kinds_of(k)
            if kd in ks:
                add(k)
                for x in ks:
                    kind_counts[x] += 1
    log(f"SAN disambiguation kinds among selected: {kind_counts}")

    rest = [k for k in order if k not in chosen_set and pool[k][2]["n"] > 0]
    rng.shuffle(rest)
    for k in rest[:total - len(chosen)]:
        add(k)
    assert len(chosen) == total, len(chosen)
    rng.shuffle(chosen)
    return chosen, counts


# ---------------------------------------------------------------------------
# Part 3: repetition
# ---------------------------------------------------------------------------

SHUFFLE_TYPES = (chess.KNIGHT, chess.KING, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN)


def shuffle_moves(rng, board, length, p_reverse, p_noise):
    moves = []
    last = {chess.WHITE: None, chess.BLACK: None}
    for _ in range(length):
        legal = list(board.legal_moves)
        if not legal:
            break
        mv = None
        rev = last[board.turn]
        if rev is not None and rng.random() < p_reverse:
            cand = chess.Move(rev.to_square, rev.from_square)
            if board.is_legal(cand) and not board.is_capture(cand):
                mv = cand
        if mv is None:
            quiet = []
            for m in legal:
                pt = board.piece_type_at(m.from_square)
                if pt == chess.PAWN or m.promotion or board.is_capture(m) or board.is_castling(m):
                    continue
                w = 3 if pt in (chess.KNIGHT, chess.KING) else 1
                quiet.extend([m] * w)
            if quiet and rng.random() >= p_noise:
                mv = rng.choice(quiet)
            else:
                mv = rng.choice(legal)
        board.push(mv)
        moves.append(mv)
        last[not board.turn] = mv
    return moves


def count_final(start_fen, moves):
    b = chess.Board(start_fen)
    keys = [b._transposition_key()]
    for m in moves:
        assert b.is_legal(m), (start_fen, m)
        b.push(m)
        keys.append(b._transposition_key())
    return keys.count(keys[-1]), keys, b


def build_repetition(rng, pool, order, dps, synth_recs, total=300):
    """Returns list of (start_fen, [uci], n, tags)."""
    lines = []
    seen = {}
    buckets = {n: [] for n in range(1, 6)}
    special = {"ep_noncap_first": [], "ep_cap_differs": [], "startfen_ep_noncap": [],
               "startfen_ep_cap": [], "castle_differs": [], "ep_noncap_pinned_first": []}

    # candidate starting points
    plain_starts = [chess.STARTING_FEN]
    for k in order:
        f = pool[k][2]
        fen = pool[k][0]
        if f["n"] > 0 and not f.get("check"):
            plain_starts.append(fen)
    rng.shuffle(plain_starts)
    plain_starts = [chess.STARTING_FEN] + plain_starts[:4000]
    castle_starts = [pool[k][0] for k in order
                     if pool[k][2]["n"] > 0 and pool[k][0].split()[2] != "-"
                     and not pool[k][2].get("check")]
    rng.shuffle(castle_starts)
    castle_starts = castle_starts[:2000]
    dp_noncap = [d for d in dps if d[4] != "legal"]
    dp_cap = [d for d in dps if d[4] == "legal"]
    synth_noncap = [r for r in synth_recs if r[3] != "legal"]
    synth_cap = [r for r in synth_recs if r[3] == "legal"]

    def record(start_fen, moves, tags):
        n, keys, final = count_final(start_fen, moves)
        if n > 5 or not moves:
            return
        # A game ends automatically (fivefold, 75 moves, mate, stalemate, dead position)
        # before its last move: FIDE play cannot continue, so such a line is no test.
        b = chess.Board(start_fen)
        for m in moves:
            if b.is_game_over(claim_draw=False):
                return
            b.push(m)
        key = (start_fen, " ".join(m.uci() for m in moves))
        if key in seen:
            return
        seen[key] = True
        item = (start_fen, [m.uci() for m in moves], n, tags, keys, final)
        buckets[n].append(item)
        for t in tags:
            special[t].append(item)

    def placement_turn(b):
        return (b.board_fen(), b.turn)

    attempts = 0
    while attempts < 6000:
        attempts += 1
        variant = rng.choice(["plain", "plain", "castle", "ep_noncap", "ep_cap",
                              "synth_noncap", "synth_cap", "startfen_ep"])
        length = rng.randint(1, 30)
        p_rev = rng.choice([0.5, 0.7, 0.85, 0.95])
        p_noise = rng.choice([0.0, 0.0, 0.05, 0.15])
        tags = []
        if variant in ("plain", "castle"):
            start = rng.choice(plain_starts if variant == "plain" else castle_starts)
            b = chess.Board(start)
            moves = shuffle_moves(rng, b, length, p_rev, p_noise)
            n, keys, final = count_final(start, moves)
            # castling rights differ: same placement/turn/ep earlier but different key
            bb = chess.Board(start)
            pts = [(placement_turn(bb), bb.clean_castling_rights())]
            for m in moves:
                bb.push(m)
                pts.append((placement_turn(bb), bb.clean_castling_rights()))
            fpt, fcr = pts[-1]
            if any(pt == fpt and cr != fcr for pt, cr in pts[:-1]):
                tags.append("castle_differs")
            record(start, moves, tags)
        elif variant in ("ep_noncap", "ep_cap", "synth_noncap", "synth_cap"):
            if variant == "ep_noncap":
                src = rng.choice(dp_noncap)
                start, first = src[2], chess.Move.from_uci(src[3])
            elif variant == "ep_cap":
                src = rng.choice(dp_cap)
                start, first = src[2], chess.Move.from_uci(src[3])
            elif variant == "synth_noncap":
                src = rng.choice(synth_noncap)
                start, first = src[0], chess.Move.from_uci(src[1])
            else:
                src = rng.choice(synth_cap)
                start, first = src[0], chess.Move.from_uci(src[1])
            b = chess.Board(start)
            b.push(first)
            post = b.copy(stack=False)
            capturable = post.has_legal_en_passant()
            rest = shuffle_moves(rng, b, length, p_rev, p_noise)
            moves = [first] + rest
            n, keys, final = count_final(start, moves)
            same_place = placement_turn(final) == placement_turn(post)
            if same_place and rest:
                if not capturable:
                    tags.append("ep_noncap_first")
                    if variant == "synth_noncap":
                        tags.append("ep_noncap_pinned_first")
                else:
                    tags.append("ep_cap_differs")
            record(start, moves, tags)
        else:  # START_FEN itself carries a (non-)capturable ep square
            pick = rng.random()
            if pick < 0.35:
                src = rng.choice(synth_noncap)
                post = chess.Board(src[2])
            elif pick < 0.7:
                src = rng.choice(dp_noncap)
                post = chess.Board(src[0])
            else:
                src = rng.choice(dp_cap + synth_cap)
                post = chess.Board(src[0] if len(src) == 5 else src[2])
            start = post.fen(en_passant="fen")
            capturable = post.has_legal_en_passant()
            b = chess.Board(start)
            moves = shuffle_moves(rng, b, max(length, 2), p_rev, p_noise)
            n, keys, final = count_final(start, moves)
            if placement_turn(final) == placement_turn(chess.Board(start)):
                tags.append("startfen_ep_cap" if capturable else "startfen_ep_noncap")
            record(start, moves, tags)
    log("repetition buckets: " + ", ".join(f"N={n}:{len(v)}" for n, v in buckets.items()))
    log("repetition specials: " + ", ".join(f"{k}:{len(v)}" for k, v in special.items()))

    chosen = []
    chosen_ids = {}

    def take(item):
        i = id(item)
        if i in chosen_ids:
            return False
        chosen_ids[i] = True
        chosen.append(item)
        return True

    for tag, target in (("ep_noncap_first", 30), ("ep_noncap_pinned_first", 20),
                        ("ep_cap_differs", 30), ("startfen_ep_noncap", 20),
                        ("startfen_ep_cap", 10), ("castle_differs", 20)):
        items = list(special[tag])
        rng.shuffle(items)
        # prefer repeats (N >= 2) so the tricky comparison matters
        items.sort(key=lambda it: 0 if it[2] >= 2 else 1)
        c = 0
        for it in items:
            if c >= target:
                break
            if take(it):
                c += 1
    per_n_target = {1: 45, 2: 70, 3: 65, 4: 60, 5: 60}
    have = {n: sum(1 for it in chosen if it[2] == n) for n in range(1, 6)}
    for n in range(1, 6):
        items = list(buckets[n])
        rng.shuffle(items)
        for it in items:
            if have[n] >= per_n_target[n] or len(chosen) >= total:
                break
            if take(it):
                have[n] += 1
    # top up if any bucket was short
    allitems = [it for n in range(1, 6) for it in buckets[n]]
    rng.shuffle(allitems)
    for it in allitems:
        if len(chosen) >= total:
            break
        take(it)
    assert len(chosen) == total, len(chosen)
    rng.shuffle(chosen)
    return chosen


# ---------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------

def validate_legal(path):
    stats = {"lines": 0, "mate": 0, "stalemate": 0, "promo": 0, "ep": 0, "castle": 0,
             "disamb": 0, "disamb_file": 0, "disamb_rank": 0, "disamb_square": 0,
             "check": 0, "double_check": 0, "underpromo_capture": 0, "moves": 0}
    seen = {}
    with open(path) as fh:
        for line in fh:
            line = line.rstrip("\n")
            parts = line.split("\t")
            fen = parts[0]
            b = chess.Board(fen)
            assert b.fen() == fen, fen
            assert b.status() == chess.STATUS_VALID, fen
            k = epd4(fen)
            assert k not in seen, fen
            seen[k] = True
            legal = list(b.legal_moves)
            stats["lines"] += 1
            if parts[1:] == ["-"]:
                assert not legal, fen
                if b.is_checkmate():
                    stats["mate"] += 1
                else:
                    assert b.is_stalemate()
                    stats["stalemate"] += 1
                continue
            got = []
            for p in parts[1:]:
                u, s = p.split(" ")
                got.append((u, s))
            exp = [(m.uci(), b.san(m)) for m in legal]
            assert got == exp, fen
            assert len(set(u for u, _ in got)) == len(got)
            for u, s in got:
                m = chess.Move.from_uci(u)
                assert b.parse_san(s) == m, (fen, s)
            stats["moves"] += len(got)
            stats["promo"] += any(m.promotion for m in legal)
            stats["underpromo_capture"] += any(m.promotion == chess.KNIGHT and b.is_capture(m) for m in legal)
            stats["ep"] += any(b.is_en_passant(m) for m in legal)
            stats["castle"] += any(b.is_castling(m) for m in legal)
            kinds = set(san_disamb_kind(s) for _, s in got) - {""}
            stats["disamb"] += bool(kinds)
            for kd in kinds:
                stats["disamb_" + kd] += 1
            stats["check"] += b.is_check()
            stats["double_check"] += len(b.checkers()) > 1
    return stats


def validate_fen(path):
    stats = {"lines": 0, "ep_in_input": 0, "ep_kept": 0, "ep_dropped": 0}
    with open(path) as fh:
        for line in fh:
            inp, norm = line.rstrip("\n").split("\t")
            b = chess.Board(inp)
            assert b.status() == chess.STATUS_VALID, inp
            assert b.fen(en_passant="fen") == inp, inp
            assert b.fen() == norm, inp
            assert chess.Board(norm).fen() == norm
            stats["lines"] += 1
            if inp.split()[3] != "-":
                stats["ep_in_input"] += 1
                if norm.split()[3] != "-":
                    stats["ep_kept"] += 1
                else:
                    stats["ep_dropped"] += 1
            else:
                assert inp == norm
    return stats


def validate_rep(path):
    stats = {"lines": 0, "start_with_illegal_ep": 0}
    for n in range(1, 6):
        stats[f"N={n}"] = 0
    with open(path) as fh:
        for line in fh:
            start, moves, n = line.rstrip("\n").split("\t")
            b = chess.Board(start)
            assert b.status() == chess.STATUS_VALID
            if b.fen(en_passant="fen") != b.fen():
                stats["start_with_illegal_ep"] += 1
            keys = [b._transposition_key()]
            for u in moves.split(" "):
                m = chess.Move.from_uci(u)
                assert b.is_legal(m), (start, u)
                b.push(m)
                keys.append(b._transposition_key())
            # independent recount with python-chess's own repetition machinery
            assert keys.count(keys[-1]) == int(n), line
            assert b.is_repetition(int(n))
            assert not b.is_repetition(int(n) + 1)
            stats["lines"] += 1
            stats[f"N={n}"] += 1
    return stats


# ---------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "crates", "rules", "tests", "data"))
    ap.add_argument("--seed", type=int, default=20240601)
    args = ap.parse_args()
    out = os.path.normpath(args.out)
    os.makedirs(out, exist_ok=True)
    if chess.__version__ != "1.11.2":
        log(f"WARNING: generated with python-chess {chess.__version__}, reference data was made with 1.11.2")
    rng = random.Random(args.seed)

    # ---- pool ---------------------------------------------------------
    pool, order, dps = build_pool(rng)

    # ---- legal_moves.txt ---------------------------------------------
    chosen, counts = select_legal_positions(rng, pool, order)
    p = os.path.join(out, "legal_moves.txt")
    with open(p, "w") as fh:
        for i, k in enumerate(chosen):
            fh.write(position_line(pool[k][0])[0] + "\n")
    log(f"wrote {p}")

    # ---- fen_roundtrip.txt -------------------------------------------
    log("synthesising double-push positions")
    synth = {"legal": [], "illegal": []}
    tries = 0
    while (len(synth["legal"]) < 150 or len(synth["illegal"]) < 250) and tries < 400000:
        tries += 1
        want = len(synth["legal"]) < 150 and (len(synth["illegal"]) >= 250 or rng.random() < 0.3)
        r = synth_double_push(rng, want)
        if r is None:
            continue
        if rng.random() < 0.5:
            r = mirror_record(*r)
        pre, mv, post = r
        synth["legal" if want else "illegal"].append((pre.fen(), mv.uci(), post.fen(en_passant="fen"), ep_class(post)))
    log(f"synth: {len(synth['legal'])} legal, {len(synth['illegal'])} illegal after {tries} tries")
    synth_recs = synth["legal"] + synth["illegal"]

    fen_lines = []
    used = {}

    def add_fen(inp):
        if inp in used:
            return False
        used[inp] = True
        fen_lines.append((inp, chess.Board(inp).fen()))
        return True

    add_fen("8/8/3p4/KPp4r/1R2Pp1k/8/6P1/8 w - c6 0 2")
    reasons = {}
    # adjacent pawn exists but capture illegal: synthetic + playouts
    adj_illegal = [(r[2], r[3]) for r in synth["illegal"]] + [(d[0], d[4]) for d in dps if d[4].startswith("illegal")]
    rng.shuffle(adj_illegal)
    c = 0
    for inp, cls in adj_illegal:
        if c >= 120:
            break
        if add_fen(inp):
            c += 1
            reasons[cls] = reasons.get(cls, 0) + 1
    no_adj = [d[0] for d in dps if d[4] == "no_adjacent"]
    rng.shuffle(no_adj)
    c = 0
    for inp in no_adj:
        if c >= 110:
            break
        c += add_fen(inp)
    legal_dp = [d[0] for d in dps if d[4] == "legal"] * 1
    rng.shuffle(legal_dp)
    synth_legal = [r[2] for r in synth["legal"]]
    rng.shuffle(synth_legal)
    c = 0
    for inp in synth_legal[:60] + legal_dp:
        if c >= 230:
            break
        c += add_fen(inp)
    others = [pool[k][1] for k in order if pool[k][1].split()[3] == "-"]
    rng.shuffle(others)
    for inp in others:
        if len(fen_lines) >= 1000:
            break
        add_fen(inp)
    assert len(fen_lines) == 1000
    rng.shuffle(fen_lines)
    log(f"fen_roundtrip: adjacent-but-illegal ep reasons: {reasons}")
    p = os.path.join(out, "fen_roundtrip.txt")
    with open(p, "w") as fh:
        for inp, norm in fen_lines:
            fh.write(f"{inp}\t{norm}\n")
    log(f"wrote {p}")

    # ---- repetition.txt ----------------------------------------------
    reps = build_repetition(rng, pool, order, dps, synth_recs)
    p = os.path.join(out, "repetition.txt")
    tagcount = {}
    with open(p, "w") as fh:
        for start, moves, n, tags, _, _ in reps:
            for t in tags:
                tagcount[t] = tagcount.get(t, 0) + 1
            fh.write(f"{start}\t{' '.join(moves)}\t{n}\n")
    log(f"wrote {p}; tags among selected: {tagcount}")

    # ---- validation ---------------------------------------------------
    log("validating legal_moves.txt")
    s = validate_legal(os.path.join(out, "legal_moves.txt"))
    log(f"legal_moves stats: {s}")
    assert s["lines"] == 3000
    assert s["promo"] >= 300 and s["ep"] >= 200 and s["castle"] >= 200 and s["disamb"] >= 300
    assert s["mate"] >= 50 and s["stalemate"] >= 30
    log("validating fen_roundtrip.txt")
    s = validate_fen(os.path.join(out, "fen_roundtrip.txt"))
    log(f"fen_roundtrip stats: {s}")
    assert s["lines"] == 1000 and s["ep_in_input"] >= 300
    log("validating repetition.txt")
    s = validate_rep(os.path.join(out, "repetition.txt"))
    log(f"repetition stats: {s}")
    assert s["lines"] == 300
    for name in ("legal_moves.txt", "fen_roundtrip.txt", "repetition.txt"):
        pth = os.path.join(out, name)
        with open(pth) as fh:
            nl = sum(1 for _ in fh)
        log(f"{pth}: {os.path.getsize(pth)} bytes, {nl} lines")
    log("done")


if __name__ == "__main__":
    main()
