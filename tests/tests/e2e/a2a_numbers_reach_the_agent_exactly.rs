//! A number in a client's data part reaches the agent as the nearest double, not one
//! ULP off (found by the `jsonrpc_decode` fuzz target: serde_json's default float
//! parsing is best-effort). Run this module with `-p agentyard-tests`: a workspace
//! build unifies in a dev-dependency that turns exact parsing on anyway.

use agentyard::{Agent, AgentDescriptor, AgentError, Part, TaskContext};
use agentyard_tests::http::TestEdge;
use serde_json::json;

const NUMBER: &str = "1.55555555555555e47";

/// Replies with the bits of the number it was sent.
struct Bits;

impl Agent for Bits {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let bits = ctx.message().parts.iter().find_map(|part| match part {
            Part::Data(data) => data.data.get("n").and_then(serde_json::Value::as_f64),
            _ => None,
        });
        ctx.reply_text(format!("{:?}", bits.map(f64::to_bits)));
        Ok(())
    }
}

#[tokio::test]
async fn a_number_in_a_data_part_is_read_exactly() {
    let edge = TestEdge::start_custom(TestEdge::config(), |builder| {
        builder.agent(AgentDescriptor::new("bits").exposed(true), |_| Bits)
    })
    .await;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"message/send","params":{{"message":{{
        "kind":"message","messageId":"m-n","role":"user",
        "parts":[{{"kind":"data","data":{{"n":{NUMBER}}}}}]}}}}}}"#
    );
    let (status, _, response) = edge.post_raw("/agents/bits", body, &[]).await;
    assert_eq!(status, 200, "{response}");
    let expected = NUMBER.parse::<f64>().ok().map(f64::to_bits);
    assert_eq!(
        response["result"]["status"]["message"]["parts"][0]["text"],
        json!(format!("{expected:?}"))
    );
    edge.stop().await;
}
