//! The handoff contract as the seed writes it, over HTTP: a payload with the seed's
//! `type` discriminator is typed (in a data part and as untyped text), both
//! discriminators must agree, the send's events carry the raw payload as
//! `payloadJson`, and the agent's answer is an `a2a.response` event carrying its own
//! payload and the type it answers (`inResponseToPayloadType`).

use std::time::Duration;

use agentyard::handoff::{Answer, HandoffPayload, PayloadType, StatusReport};
use agentyard::handoff::{HANDOFF_EXTENSION_URI, ReportStatus};
use agentyard::{Agent, AgentDescriptor, AgentError, EventDetail, EventKind, TaskContext};
use agentyard_tests::events::EventLog;
use agentyard_tests::http::{TestEdge, text_message};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(10);

/// Answers a `question` with an `answer` and reports on a `task_delegation` with a
/// `status_report`; anything else gets free text.
struct Responder;

impl Agent for Responder {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        match ctx.payload() {
            Some(HandoffPayload::Question(question)) => {
                let answer = Answer::builder()
                    .question_id(question.question_id())
                    .answer("main")
                    .confidence(0.9)
                    .build()?;
                ctx.reply_payload("use main", &HandoffPayload::from(answer));
            }
            Some(HandoffPayload::TaskDelegation(task)) => {
                let report = StatusReport::builder()
                    .task_id(task.task_id())
                    .status(ReportStatus::Completed)
                    .completed_work(format!("did: {}", task.task_title()))
                    .build()?;
                ctx.reply_payload("done", &HandoffPayload::from(report));
            }
            _ => ctx.reply_text(format!("free: {}", ctx.message().text())),
        }
        Ok(())
    }
}

async fn edge() -> TestEdge {
    TestEdge::start_custom(TestEdge::config(), |builder| {
        builder.agent(AgentDescriptor::new("responder").exposed(true), |_| {
            Responder
        })
    })
    .await
}

fn with_data_part(text: &str, data: Value, marked: &str) -> Value {
    json!({
        "kind": "message",
        "messageId": format!("m-{marked}-{}", data.to_string().len()),
        "role": "user",
        "parts": [
            {"kind": "text", "text": text},
            {"kind": "data", "data": data, "metadata": {HANDOFF_EXTENSION_URI: {"payloadType": marked}}},
        ],
    })
}

fn reply_text(response: &Value) -> &str {
    response["result"]["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no reply text in {response}"))
}

#[tokio::test]
async fn a_seed_style_delegation_in_a_data_part_is_typed_and_answered_with_a_report() {
    let edge = edge().await;
    let log = EventLog::start(&edge.runtime);
    let seed = json!({
        "type": "task_delegation",
        "taskId": "task-001",
        "taskTitle": "API 문서 작성",
        "taskDescription": "sessions_send 도구의 payloadJson 파라미터 문서화",
        "priority": "high",
    });
    let (status, _, response) = edge
        .rpc_with(
            "responder",
            "message/send",
            json!({"message": with_data_part("문서화 부탁해요", seed.clone(), "task_delegation")}),
            &[("X-A2A-Extensions", HANDOFF_EXTENSION_URI)],
        )
        .await;
    assert_eq!(status, 200, "{response}");
    assert_eq!(reply_text(&response), "done", "{response}");

    let initiated = log
        .wait_for(WAIT, "the send's first event", |e| {
            e.kind == EventKind::SendInitiated && e.to.as_ref() == "responder"
        })
        .await;
    assert_eq!(initiated.payload_type, Some(PayloadType::TaskDelegation));
    let raw: Value = serde_json::from_str(initiated.payload_json.as_deref().expect("payloadJson"))
        .expect("JSON");
    assert_eq!(raw, seed, "payloadJson is the payload as received");

    let response_event = log
        .wait_for(WAIT, "the response event", |e| {
            e.kind == EventKind::Response
        })
        .await;
    assert_eq!(
        response_event.in_response_to_payload_type,
        Some(PayloadType::TaskDelegation)
    );
    assert_eq!(response_event.payload_type, Some(PayloadType::StatusReport));
    let report: Value = serde_json::from_str(
        response_event
            .payload_json
            .as_deref()
            .expect("the report's payloadJson"),
    )
    .expect("JSON");
    assert_eq!(report["taskId"], "task-001");
    assert_eq!(report["status"], "completed");
    let EventDetail::Response { message } = &response_event.detail else {
        panic!("the response event carries the answer: {response_event:?}");
    };
    assert_eq!(message.as_ref().map(|m| m.text()).as_deref(), Some("done"));

    // Serialized as monitoring reads it: the seed's field names.
    let wire = serde_json::to_value(&*response_event).expect("an event serializes");
    assert_eq!(wire["type"], "a2a.response");
    assert_eq!(wire["inResponseToPayloadType"], "task_delegation");
    assert_eq!(wire["payloadType"], "status_report");
    assert!(wire["payloadJson"].is_string(), "{wire}");

    // The response comes right before the send's closing event.
    let kinds: Vec<EventKind> = log
        .wait_for(WAIT, "the closing event", |e| {
            e.kind == EventKind::SendCompleted
        })
        .await
        .task_id
        .as_ref()
        .map(|task| log.of_task(task).iter().map(|e| e.kind).collect())
        .unwrap_or_default();
    let at = kinds.iter().position(|k| *k == EventKind::Response);
    assert_eq!(
        at.map(|i| kinds.get(i + 1)),
        Some(Some(&EventKind::SendCompleted)),
        "{kinds:?}"
    );
    edge.stop().await;
}

#[tokio::test]
async fn an_answer_to_a_question_says_what_it_answers() {
    let edge = edge().await;
    let log = EventLog::start(&edge.runtime);
    let question =
        json!({"payloadType": "question", "questionId": "q-001", "question": "Which branch?"});
    let (status, _, response) = edge
        .rpc_with(
            "responder",
            "message/send",
            json!({"message": with_data_part("which branch?", question, "question")}),
            &[("X-A2A-Extensions", HANDOFF_EXTENSION_URI)],
        )
        .await;
    assert_eq!(status, 200, "{response}");
    assert_eq!(reply_text(&response), "use main");
    let event = log
        .wait_for(WAIT, "the response event", |e| {
            e.kind == EventKind::Response
        })
        .await;
    assert_eq!(
        event.in_response_to_payload_type,
        Some(PayloadType::Question)
    );
    assert_eq!(event.payload_type, Some(PayloadType::Answer));
    assert_eq!(event.intent, Some(agentyard::handoff::Intent::Respond));
    let answer: Value =
        serde_json::from_str(event.payload_json.as_deref().expect("payloadJson")).expect("JSON");
    assert_eq!(answer["questionId"], "q-001");
    assert_eq!(answer["answer"], "main");
    edge.stop().await;
}

#[tokio::test]
async fn a_free_text_answer_to_free_text_has_no_payload_fields() {
    let edge = edge().await;
    let log = EventLog::start(&edge.runtime);
    let response = edge
        .rpc(
            "responder",
            "message/send",
            json!({"message": text_message("hi")}),
        )
        .await;
    assert_eq!(reply_text(&response), "free: hi");
    let event = log
        .wait_for(WAIT, "the response event", |e| {
            e.kind == EventKind::Response
        })
        .await;
    assert_eq!(event.in_response_to_payload_type, None);
    assert_eq!(event.payload_type, None);
    assert_eq!(event.payload_json, None);
    edge.stop().await;
}

#[tokio::test]
async fn a_seed_style_payload_sent_as_untyped_text_is_typed() {
    let edge = edge().await;
    let log = EventLog::start(&edge.runtime);
    let text =
        json!({"type": "question", "questionId": "q-7", "question": "Which port?"}).to_string();
    let response = edge
        .rpc(
            "responder",
            "message/send",
            json!({"message": text_message(&text)}),
        )
        .await;
    assert_eq!(reply_text(&response), "use main", "{response}");
    let initiated = log
        .wait_for(WAIT, "the send's first event", |e| {
            e.kind == EventKind::SendInitiated
        })
        .await;
    assert_eq!(initiated.payload_type, Some(PayloadType::Question));
    assert_eq!(initiated.payload_json.as_deref(), Some(text.as_str()));
    assert_eq!(log.count(EventKind::PayloadFallback), 0);
    edge.stop().await;
}

#[tokio::test]
async fn disagreeing_discriminators_are_refused_naming_both() {
    let edge = edge().await;
    let data =
        json!({"type": "question", "payloadType": "answer", "questionId": "q-1", "answer": "a"});
    let (status, _, response) = edge
        .rpc_with(
            "responder",
            "message/send",
            json!({"message": with_data_part("?", data, "answer")}),
            &[("X-A2A-Extensions", HANDOFF_EXTENSION_URI)],
        )
        .await;
    assert_eq!(status, 200, "{response}");
    assert_eq!(response["error"]["code"], -32602, "{response}");
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`payloadType` is \"answer\" but `type` is \"question\""),
        "{message}"
    );
    edge.stop().await;
}
