//! chess.v1.RulesService through the gateway: every RPC's success and error paths.

use chess_integration_tests::{Stack, assert_field_error};
use chess_proto::v1::{
    ConvertMovesRequest, LegalMovesRequest, ParsePgnRequest, PgnTag, PositionStatusRequest,
    ValidateFenRequest, WritePgnRequest, outcome::Rule,
};
use tonic::Code;

use chess_integration_tests::games::clients;
use chess_integration_tests::runtime;

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn rules_queries_through_the_gateway() {
    let stack = Stack::start();
    runtime().block_on(async {
        let (mut rules, _) = clients(&stack).await;

        // LegalMoves: start position, after moves, and errors.
        let r = rules.legal_moves(LegalMovesRequest::default()).await.unwrap().into_inner();
        assert_eq!(r.moves.len(), 20);
        assert!(r.moves.iter().any(|m| m.uci == "g1f3" && m.san == "Nf3" && m.coordinate == "Ng1-f3"));
        let r = rules
            .legal_moves(LegalMovesRequest { fen: String::new(), moves: strings(&["e4", "e7e5", "Ng1-f3"]) })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.fen, "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2");
        let s = assert_field_error(
            rules.legal_moves(LegalMovesRequest { fen: "8/8/8 w - -".into(), moves: vec![] }).await,
            Code::InvalidArgument,
            "fen",
        );
        assert!(s.message().contains("3 ranks"), "{}", s.message());
        let s = assert_field_error(
            rules.legal_moves(LegalMovesRequest { fen: String::new(), moves: strings(&["e4", "e4"]) }).await,
            Code::InvalidArgument,
            "moves[1]",
        );
        assert!(s.message().contains("e4"), "{}", s.message());

        // ConvertMoves, lenient and strict.
        let r = rules
            .convert_moves(ConvertMovesRequest { fen: String::new(), moves: strings(&["e2e4", "e5", "Ng1f3", "Nc6", "Bb5", "a6", "Bxc6", "dxc6", "0-0"]), strict: false })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.moves.last().unwrap().san, "O-O");
        assert_eq!(r.moves.last().unwrap().uci, "e1g1");
        assert_eq!(r.fens.len(), 9);
        assert_field_error(
            rules.convert_moves(ConvertMovesRequest { fen: String::new(), moves: strings(&["Ng1f3"]), strict: true }).await,
            Code::InvalidArgument,
            "moves[0]",
        );
        // Ambiguity names the candidates.
        let s = assert_field_error(
            rules.convert_moves(ConvertMovesRequest { fen: "4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1".into(), moves: strings(&["Nd2"]), strict: false }).await,
            Code::InvalidArgument,
            "moves[0]",
        );
        assert!(s.message().contains("ambiguous") && s.message().contains("Nfd2"), "{}", s.message());

        // ValidateFen.
        let r = rules
            .validate_fen(ValidateFenRequest { fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1".into() })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.fen, "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
        assert!(r.plain_fen.contains(" e3 "));
        assert_eq!(r.legal_move_count, 20);
        let s = assert_field_error(
            rules.validate_fen(ValidateFenRequest { fen: "4k3/8/8/8/8/8/8/4K2P w - - 0 1".into() }).await,
            Code::InvalidArgument,
            "fen",
        );
        assert!(s.message().contains("pawn on h1"), "{}", s.message());
        assert_field_error(rules.validate_fen(ValidateFenRequest { fen: String::new() }).await, Code::InvalidArgument, "fen");

        // PositionStatus: mate, repetition, claimable draws.
        let r = rules
            .position_status(PositionStatusRequest { fen: String::new(), moves: strings(&["f3", "e5", "g4", "Qh4#"]) })
            .await
            .unwrap()
            .into_inner();
        assert!(r.checkmate && r.check);
        assert_eq!(r.outcome.unwrap().pgn_result, "0-1");
        let shuffle = ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1", "Ng8"];
        let r = rules
            .position_status(PositionStatusRequest { fen: String::new(), moves: strings(&shuffle) })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.repetition_count, 3);
        assert_eq!(r.claimable_draw, Rule::ThreefoldRepetition as i32);
        assert!(r.outcome.is_none());

        // ParsePgn: good and broken games in one file, each with its own result.
        let pgn = "[Event \"a\"]\n\n1. e4 e5 2. Nf3 Nc6 1-0\n\n[Event \"b\"]\n\n1. e4 e5 2. Ke3 *\n\n[Event \"c\"]\n\n1. d4 d5 1/2-1/2\n";
        let r = rules.parse_pgn(ParsePgnRequest { pgn: pgn.into() }).await.unwrap().into_inner();
        assert_eq!((r.valid_games, r.invalid_games), (2, 1));
        assert_eq!(r.games[0].moves.len(), 4);
        assert_eq!(r.games[0].result, "1-0");
        assert!(r.games[1].error.contains("Ke3"), "{}", r.games[1].error);
        assert_eq!(r.games[1].error_line, 7);
        assert_eq!(r.games[2].index, 3);
        // Oversize PGN is refused by the gateway with the field named.
        let big = "x".repeat((1 << 20) + 1_000);
        let s = assert_field_error(rules.parse_pgn(ParsePgnRequest { pgn: big }).await, Code::InvalidArgument, "pgn");
        assert!(s.message().contains("bytes"), "{}", s.message());
        // Far over the limit the message itself is refused before it is decoded.
        let huge = "x".repeat(3 << 20);
        let s = rules.parse_pgn(ParsePgnRequest { pgn: huge }).await.unwrap_err();
        assert_eq!(s.code(), Code::ResourceExhausted, "{s:?}");
        assert!(s.message().contains("bytes"), "{}", s.message());

        // WritePgn.
        let r = rules
            .write_pgn(WritePgnRequest {
                tags: vec![PgnTag { name: "White".into(), value: "Ann".into() }],
                start_fen: String::new(),
                moves: strings(&["f3", "e5", "g4", "Qh4#"]),
                result: String::new(),
            })
            .await
            .unwrap()
            .into_inner();
        assert!(r.pgn.starts_with("[Event "), "{}", r.pgn);
        assert!(r.pgn.contains("[White \"Ann\"]"));
        assert!(r.pgn.contains("2. g4 Qh4# 0-1"), "{}", r.pgn);
        assert_field_error(
            rules.write_pgn(WritePgnRequest { result: "2-0".into(), ..Default::default() }).await,
            Code::InvalidArgument,
            "result",
        );
    });
}
