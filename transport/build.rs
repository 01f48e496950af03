//! Generates the gRPC code for A2A 1.0 (`lf.a2a.v1`) and 0.3.0 (`a2a.v1`) from the
//! project's own `.proto` files in `proto/`.
//!
//! A pure-Rust path, so that building needs no `protoc`: protox parses the files
//! (it ships the well-known types) into a `FileDescriptorSet`; tonic-prost-build
//! writes the prost messages and the tonic server and client of each service; and
//! pbjson-build writes the ProtoJSON serde impls of the 0.3 messages, which the 0.3
//! HTTP+JSON binding sends. The well-known types come from `pbjson-types` in both
//! packages, so `Struct` and `Timestamp` have their ProtoJSON form too.

use std::path::PathBuf;

use prost::Message as _;

/// The files compiled, relative to `proto/`.
const PROTOS: [&str; 2] = ["lf/a2a/v1/a2a.proto", "a2a/v1/a2a.proto"];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let files = protox::compile(PROTOS, ["proto"])?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    let descriptor_path = out_dir.join("a2a_descriptor.bin");
    std::fs::write(&descriptor_path, files.encode_to_vec())?;

    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_well_known_types(true)
        .extern_path(".google.protobuf", "::pbjson_types")
        .compile_fds(files)?;

    let descriptors = std::fs::read(&descriptor_path)?;
    // Unknown fields are skipped on read, as A2A asks (spec §5.7): the 0.3 Python
    // SDK's proto has grown `Part.metadata`, which the 0.3.0 proto lacks, and its
    // HTTP+JSON client sends it.
    pbjson_build::Builder::new()
        .register_descriptors(&descriptors)?
        .ignore_unknown_fields()
        .build(&[".a2a.v1", ".lf.a2a.v1"])?;
    Ok(())
}
