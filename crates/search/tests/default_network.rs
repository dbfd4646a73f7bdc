//! The network embedded in chess-nn is exactly what its generator makes from this crate's
//! hand-written evaluation. (When a trained network replaces the placeholder, this goes.)

#[path = "../examples/make_default_network.rs"]
mod make_default_network;

#[test]
fn the_embedded_placeholder_is_what_the_generator_makes() {
    let net = make_default_network::build();
    assert_eq!(net.to_bytes(), chess_nn::DEFAULT_NETWORK_BYTES);
    assert_eq!(net.file_name(), chess_nn::DEFAULT_NETWORK_FILE);
}
