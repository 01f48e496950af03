//! Fuzzes the JSON-RPC request decoder the HTTP server runs on every request body.
//!
//! Beyond "never panics", it checks what the server relies on: a refused body gets
//! one of the four request error codes and an error response that serializes; an
//! accepted one writes back as a request that decodes to the same call (the client
//! and the server agree on the wire form).

#![no_main]

use agentyard_transport::jsonrpc::A2aCall;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|body: &[u8]| {
    match A2aCall::decode(body) {
        Ok(call) => {
            let written = serde_json::to_vec(&call).expect("a decoded call serializes");
            let again = A2aCall::decode(&written).unwrap_or_else(|refused| {
                panic!(
                    "a decoded call does not decode again: {:?} from {}",
                    refused.error,
                    String::from_utf8_lossy(&written)
                )
            });
            assert_eq!(again, call, "the call changed in a round trip");
        }
        Err(refused) => {
            assert!(
                matches!(refused.error.code, -32700 | -32600 | -32601 | -32602),
                "unexpected code {} for a bad request",
                refused.error.code
            );
            serde_json::to_vec(&refused.into_response()).expect("an error response serializes");
        }
    }
});
