//! Arbitrary text as FEN. Whatever parses must be a position whose every derived form
//! (FEN, setup, moves, notations) is consistent; see `chess_fuzz::check_position`.
#![no_main]

use chess_fuzz::check_position;
use chess_rules::{Position, Setup};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let setup = Setup::from_fen(text);
    let parsed = Position::from_fen(text);
    match (&setup, &parsed) {
        (Err(a), Err(b)) => assert_eq!(a, b, "Setup::from_fen and Position::from_fen disagree"),
        (Ok(s), Err(e)) => {
            // A syntax-clean FEN rejected by validation must carry a position error.
            assert!(
                matches!(e, chess_rules::FenError::Position(_)),
                "{e:?} for {s:?}"
            );
            assert_eq!(
                Position::from_setup(s)
                    .map_err(chess_rules::FenError::from)
                    .as_ref(),
                Err(e)
            );
        }
        (Err(e), Ok(_)) => panic!("Position::from_fen accepted what Setup::from_fen rejects: {e}"),
        (Ok(s), Ok(pos)) => {
            assert_eq!(&pos.to_setup(), s, "to_setup differs from the parsed setup");
            // fen(parse(fen(x))) == fen(x)
            let fen = pos.fen();
            let again = Position::from_fen(&fen).expect("fen() must re-parse");
            assert_eq!(again.fen(), fen);
            assert!(Position::from_setup(&pos.to_setup()).is_ok());
            assert_eq!(Ok(pos), Position::from_str_checked(text).as_ref());
            check_position(pos);
        }
    }
});

trait FromStrChecked {
    fn from_str_checked(text: &str) -> Result<Position, chess_rules::FenError>;
}

impl FromStrChecked for Position {
    fn from_str_checked(text: &str) -> Result<Position, chess_rules::FenError> {
        text.parse()
    }
}
