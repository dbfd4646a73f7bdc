//! Compiles `proto/chess/v1/*.proto` with protox (a pure-Rust protobuf compiler, so no system
//! `protoc` is needed) and generates tonic/prost code plus the encoded descriptor set that the
//! services hand to gRPC reflection.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    let files = [
        "common.proto",
        "rules.proto",
        "search.proto",
        "gateway.proto",
    ]
    .map(|f| root.join("chess/v1").join(f));
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let fds = protox::compile(&files, [&root])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out.join("chess_v1_descriptor.bin"),
        prost::Message::encode_to_vec(&fds),
    )?;
    // Decoding errors are the caller's: INVALID_ARGUMENT (see src/codec.rs).
    tonic_prost_build::configure()
        .codec_path("crate::codec::ChessCodec")
        .compile_fds(fds)?;
    Ok(())
}
