//! Who can still win, through the gateway: RulesService/Winnability's verdicts, proofs and
//! field errors, PositionStatus's dead position, and a game that a move into a locked
//! position ends at once as a dead position with the reason in its outcome.

use chess_integration_tests::{Stack, assert_field_error};
use chess_proto::v1::outcome::{Result as R, Rule};
use chess_proto::v1::side_winnability::Verdict;
use chess_proto::v1::winnability_request::Mode;
use chess_proto::v1::{
    Color, CreateGameRequest, MakeMoveRequest, PositionStatusRequest, WinnabilityRequest,
};
use chess_rules::Position;
use tonic::Code;

use chess_integration_tests::games::clients;
use chess_integration_tests::runtime;

const LOCKED: &str = "k7/7B/8/p1p1p1p1/PpPpPpPp/1P1P1P1P/8/4K3 w - - 0 1";
const ALMOST_LOCKED: &str = "k7/7B/8/p1p1p1p1/PpPpPpPp/1P1P1P2/7P/4K3 w - - 0 1";

#[test]
fn winnability_verdicts_proofs_and_errors() {
    let stack = Stack::start();
    runtime().block_on(async {
        let (mut rules, mut games) = clients(&stack).await;
        let dead = rules
            .winnability(WinnabilityRequest {
                fen: LOCKED.into(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(dead.code, "--");
        assert!(dead.dead_position);
        assert_eq!(dead.sides.len(), 2);
        assert!(dead.sides[0].reason.contains("cannot attack a dark square"));

        // Knight and pawn against a king, full mode, White only: a proof that replays.
        let fen = "7k/8/5K2/8/8/8/P7/6N1 w - - 0 1";
        let r = rules
            .winnability(WinnabilityRequest {
                fen: fen.into(),
                intended_winner: Color::White.into(),
                mode: Mode::Full.into(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.code, "W");
        let side = &r.sides[0];
        assert_eq!(side.verdict, Verdict::Winnable as i32);
        assert_eq!(side.line_san.len(), side.line_uci.len());
        let mut p = Position::from_fen(fen).unwrap();
        for uci in &side.line_uci {
            p = p.play(p.parse_uci(uci).unwrap()).unwrap();
        }
        assert!(p.is_checkmate());

        // Moves instead of a FEN.
        let r = rules
            .winnability(WinnabilityRequest {
                moves: vec!["e4".into(), "e5".into()],
                mode: Mode::Full.into(),
                node_budget: 100_000,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.code, "WB");

        for (req, field) in [
            (
                WinnabilityRequest {
                    fen: "not a fen".into(),
                    ..Default::default()
                },
                "fen",
            ),
            (
                WinnabilityRequest {
                    mode: 9,
                    ..Default::default()
                },
                "mode",
            ),
            (
                WinnabilityRequest {
                    intended_winner: 7,
                    ..Default::default()
                },
                "intended_winner",
            ),
            (
                WinnabilityRequest {
                    node_budget: u64::MAX,
                    ..Default::default()
                },
                "node_budget",
            ),
            (
                WinnabilityRequest {
                    moves: vec!["e4".into(), "e9".into()],
                    ..Default::default()
                },
                "moves[1]",
            ),
        ] {
            assert_field_error(rules.winnability(req).await, Code::InvalidArgument, field);
        }

        // PositionStatus sees the locked position as dead, with the reason.
        let st = rules
            .position_status(PositionStatusRequest {
                fen: ALMOST_LOCKED.into(),
                moves: vec!["h3".into()],
            })
            .await
            .unwrap()
            .into_inner();
        assert!(st.dead_position);
        assert!(st.dead_reason.contains("locked"), "{}", st.dead_reason);
        assert_eq!(st.outcome.unwrap().rule, Rule::DeadPosition as i32);

        // A game: the move that closes the wall ends it as a dead position.
        let id = games
            .create_game(CreateGameRequest {
                start_fen: ALMOST_LOCKED.into(),
                time_control_text: "5+0".into(),
                white: "Ann".into(),
                black: "Bob".into(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
            .game_id;
        let s = games
            .make_move(MakeMoveRequest {
                game_id: id,
                r#move: "h3".into(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        let o = s.outcome.expect("the game is over");
        assert_eq!(
            (o.result, o.rule),
            (R::Draw as i32, Rule::DeadPosition as i32)
        );
        assert!(o.description.contains("locked"), "{}", o.description);
    });
}
