use std::time::Duration;

use agentyard_transport::a2a::TaskState;
use futures::StreamExt;

use super::*;
use crate::{Runtime, StreamEvent};

async fn runtime() -> Runtime {
    register(Runtime::builder())
        .agent(fast_countdown(), |_| {
            Countdown::with_tick(Duration::from_millis(1))
        })
        .build()
        .await
        .expect("runtime starts")
}

fn fast_countdown() -> AgentDescriptor {
    let mut descriptor = Countdown::descriptor();
    descriptor.name = "fast-countdown".into();
    descriptor
}

#[test]
fn countdown_reads_the_first_number_and_caps_it() {
    assert_eq!(Countdown::seconds("count 3 then 9"), 3);
    assert_eq!(Countdown::seconds("no number"), COUNTDOWN_DEFAULT_SECONDS);
    assert_eq!(Countdown::seconds("99999999"), COUNTDOWN_MAX_SECONDS);
    assert_eq!(Countdown::seconds("0"), 0);
}

#[tokio::test]
async fn echo_answers_with_the_text() {
    let rt = runtime().await;
    let done = rt
        .send_and_wait("echo", Message::user_text("ping"))
        .await
        .expect("sent");
    assert_eq!(done.task.status.state, TaskState::Completed);
    assert_eq!(done.task.status.message.expect("reply").text(), "ping");
}

#[tokio::test]
async fn countdown_streams_a_status_and_a_chunk_per_step() {
    let rt = runtime().await;
    let events: Vec<StreamEvent> = rt
        .stream("fast-countdown", Message::user_text("3"))
        .await
        .expect("sent")
        .collect()
        .await;
    let working = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::Status(u) if u.status.state == TaskState::Working))
        .count();
    let chunks = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::Artifact(_)))
        .count();
    // One `working` when the task starts, one per step; a chunk per step plus liftoff.
    assert_eq!(working, 4);
    assert_eq!(chunks, 4);
    match events.last() {
        Some(StreamEvent::Status(u)) => {
            assert!(u.is_final);
            assert_eq!(u.status.state, TaskState::Completed);
        }
        other => panic!("the stream ends with the final status, got {other:?}"),
    }
    let task = rt
        .get_task(&events_task_id(&events), None)
        .await
        .expect("task");
    let artifact = &task.artifacts.expect("artifacts")[0];
    let text: String = artifact.parts.iter().filter_map(Part::as_text).collect();
    assert_eq!(text, "3\n2\n1\nliftoff\n");
}

fn events_task_id(events: &[StreamEvent]) -> agentyard_transport::TaskId {
    match &events[0] {
        StreamEvent::Task(task) => task.id.clone(),
        other => panic!("the first event is the task, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn countdown_stops_at_once_when_canceled() {
    let rt = runtime().await;
    let submitted = rt
        .send("countdown", Message::user_text("3600"))
        .await
        .expect("sent");
    let id = submitted.task.id;
    // Wait (paused time, bounded) until it is counting, then cancel.
    let mut counting = false;
    for _ in 0..1_000 {
        let task = rt.get_task(&id, Some(0)).await.expect("task");
        if task.status.state == TaskState::Working {
            counting = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(counting, "the countdown never started");
    let canceled = rt.cancel_task(&id).await.expect("canceled");
    assert_eq!(canceled.status.state, TaskState::Canceled);
}

#[tokio::test]
async fn ask_waits_for_input_then_completes_with_the_answer() {
    let rt = runtime().await;
    let first = rt
        .send_and_wait("ask", Message::user_text("hi"))
        .await
        .expect("sent");
    assert_eq!(first.task.status.state, TaskState::InputRequired);
    assert_eq!(
        first.task.status.message.expect("question").text(),
        "What is your name?"
    );
    let answer = Message::user_text("Ada").with_task_id(first.task.id.clone());
    let done = rt.send_and_wait("ask", answer).await.expect("sent");
    assert_eq!(done.task.id, first.task.id);
    assert_eq!(done.task.status.state, TaskState::Completed);
    assert_eq!(
        done.task.status.message.expect("reply").text(),
        "Nice to meet you, Ada."
    );
}

#[tokio::test]
async fn planner_delegates_to_two_workers_and_reports_their_results() {
    let rt = runtime().await;
    let done = rt
        .send_and_wait("planner", Message::user_text("a haiku about actors"))
        .await
        .expect("sent");
    assert_eq!(
        done.task.status.state,
        TaskState::Completed,
        "{:?}",
        done.task.status
    );
    let report = done.task.status.message.expect("report").text();
    assert!(report.contains("-research: completed"), "{report}");
    assert!(report.contains("-draft: completed"), "{report}");
    assert_eq!(done.task.artifacts.map(|a| a.len()), Some(1));
}

#[tokio::test]
async fn the_worker_rejects_free_text() {
    let rt = runtime().await;
    let done = rt
        .send_and_wait("worker", Message::user_text("do something"))
        .await
        .expect("sent");
    assert_eq!(done.task.status.state, TaskState::Rejected);
}
