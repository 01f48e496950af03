//! The transport's integration tests: the wire types against the A2A schema, JSON-RPC
//! decoding, and the server and client over the mock service.
//!
//! One test binary rather than one per file, so the HTTP stack is linked once. The
//! tracing test stays in a binary of its own (see `server_tracing.rs`).

mod client_limits;
mod client_retries;
mod client_roundtrip;
mod client_versions;
mod grpc_client;
mod grpc_server;
mod jsonrpc_decoding;
mod mock;
mod schema_conformance;
mod server_connections;
mod server_router;
mod server_sse;
