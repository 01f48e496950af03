//! Streaming a send: the stream yields the task first, then every status and artifact
//! update in the order the agent made them, and ends with the one status update
//! marked final.

use std::time::Duration;

use agentyard::{
    Agent, AgentDescriptor, AgentError, Artifact, ArtifactChunk, Message, Part, Runtime,
    SendRequest, StreamEvent, TaskContext, TaskState,
};
use agentyard_tests::{Asking, within};
use futures::{Stream, StreamExt};

const SOON: Duration = Duration::from_secs(5);

/// Reports progress, writes a two-chunk artifact, then replies.
struct Writer;

impl Agent for Writer {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        ctx.working(Some("drafting")).await?;
        ctx.artifact_chunk(
            Artifact::new("notes", vec![Part::text("part one; ")]),
            ArtifactChunk::First,
        )
        .await?;
        ctx.artifact_chunk(
            Artifact::new("notes", vec![Part::text("part two.")]),
            ArtifactChunk::Last,
        )
        .await?;
        ctx.reply_text("written");
        Ok(())
    }
}

/// What one stream item is, in a form easy to compare.
#[derive(Debug, PartialEq)]
enum Item {
    Task(TaskState),
    Status(TaskState, String, bool),
    Chunk(String, Option<bool>, Option<bool>),
}

fn describe(event: &StreamEvent) -> Item {
    match event {
        StreamEvent::Task(task) => Item::Task(task.status.state),
        StreamEvent::StatusUpdate(update) => Item::Status(
            update.status.state,
            update
                .status
                .message
                .as_deref()
                .map(Message::text)
                .unwrap_or_default(),
            update.is_final,
        ),
        StreamEvent::ArtifactUpdate(update) => Item::Chunk(
            update
                .artifact
                .parts
                .iter()
                .filter_map(Part::as_text)
                .collect(),
            update.append,
            update.last_chunk,
        ),
        other => panic!("an update of a kind this test does not know: {other:?}"),
    }
}

async fn collect(stream: impl Stream<Item = StreamEvent>) -> Vec<StreamEvent> {
    within(SOON, "the stream to end", stream.collect::<Vec<_>>()).await
}

#[tokio::test]
async fn a_stream_yields_the_task_then_updates_then_the_final_status() {
    let runtime = Runtime::builder()
        .agent(AgentDescriptor::new("writer"), |_| Writer)
        .build()
        .await
        .expect("runtime starts");

    let stream = runtime
        .stream("writer", Message::user_text("write the notes"))
        .await
        .expect("the send is accepted");
    let events = collect(stream).await;

    let items: Vec<Item> = events.iter().map(describe).collect();
    assert_eq!(
        items,
        [
            Item::Task(TaskState::Submitted),
            Item::Status(TaskState::Working, String::new(), false),
            Item::Status(TaskState::Working, "drafting".to_owned(), false),
            Item::Chunk("part one; ".to_owned(), None, Some(false)),
            Item::Chunk("part two.".to_owned(), Some(true), Some(true)),
            Item::Status(TaskState::Completed, "written".to_owned(), true),
        ]
    );

    let Some(StreamEvent::Task(first)) = events.first() else {
        panic!("the stream starts with the task");
    };
    let stored = runtime.get_task(&first.id, None).await.expect("kept");
    let artifacts = stored.artifacts.expect("the artifact is stored");
    assert_eq!(
        artifacts.len(),
        1,
        "chunks of one artifact are one artifact"
    );
    let text: String = artifacts[0]
        .parts
        .iter()
        .filter_map(Part::as_text)
        .collect();
    assert_eq!(text, "part one; part two.");
    for event in &events[1..] {
        let id = match event {
            StreamEvent::StatusUpdate(update) => &update.task_id,
            StreamEvent::ArtifactUpdate(update) => &update.task_id,
            other => panic!("only the first item is the task: {other:?}"),
        };
        assert_eq!(id, &first.id);
    }
}

#[tokio::test]
async fn a_stream_of_a_question_ends_with_input_required_and_the_answer_streams_too() {
    let runtime = Runtime::builder()
        .agent(AgentDescriptor::new("painter"), |_| Asking::default())
        .build()
        .await
        .expect("runtime starts");

    let asked = collect(
        runtime
            .stream("painter", Message::user_text("paint the shed"))
            .await
            .expect("accepted"),
    )
    .await;
    let items: Vec<Item> = asked.iter().map(describe).collect();
    assert_eq!(
        items.last(),
        Some(&Item::Status(
            TaskState::InputRequired,
            agentyard_tests::agents::QUESTION.to_owned(),
            true
        ))
    );
    let Some(StreamEvent::Task(task)) = asked.first() else {
        panic!("the stream starts with the task");
    };

    let answered = collect(
        runtime
            .supervisor()
            .stream(SendRequest::new(
                "painter",
                Message::user_text("red").with_task_id(task.id.clone()),
            ))
            .await
            .expect("accepted"),
    )
    .await;
    let items: Vec<Item> = answered.iter().map(describe).collect();
    assert!(
        matches!(items.first(), Some(Item::Task(_))),
        "the stream starts with the task: {items:?}"
    );
    assert_eq!(
        items.last(),
        Some(&Item::Status(
            TaskState::Completed,
            "painting it red".to_owned(),
            true
        )),
        "the resumed turn streams to its end: {items:?}"
    );
}

#[tokio::test]
async fn a_stream_of_a_repeated_send_yields_the_first_task_and_ends() {
    let runtime = Runtime::builder()
        .agent(AgentDescriptor::new("painter"), |_| Asking::default())
        .agent(AgentDescriptor::new("writer"), |_| Writer)
        .build()
        .await
        .expect("runtime starts");
    let keyed = |to: &str| {
        SendRequest::new(to, Message::user_text("go")).idempotency_key(format!("{to}-once"))
    };

    for to in ["painter", "writer"] {
        let first = runtime
            .supervisor()
            .send_and_wait(keyed(to))
            .await
            .expect("accepted");
        let repeated = collect(
            runtime
                .supervisor()
                .stream(keyed(to))
                .await
                .expect("accepted"),
        )
        .await;
        let items: Vec<Item> = repeated.iter().map(describe).collect();
        assert_eq!(
            items,
            [Item::Task(first.task.status.state)],
            "the settled task of the first send, and nothing more ({to})"
        );
    }
}

/// Writes many artifact chunks as fast as it can, then replies.
struct Chatty;

impl Agent for Chatty {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        for i in 0..50 {
            ctx.artifact_chunk(
                Artifact::new("log", vec![Part::text(format!("line {i}\n"))]),
                match i {
                    0 => ArtifactChunk::First,
                    49 => ArtifactChunk::Last,
                    _ => ArtifactChunk::More,
                },
            )
            .await?;
        }
        ctx.reply_text("all written");
        Ok(())
    }
}

#[tokio::test]
async fn a_stream_read_too_slowly_never_blocks_the_agent_and_still_ends_with_the_final_status() {
    let mut config = agentyard::SupervisorConfig::default();
    config.stream_capacity = 2;
    let runtime = Runtime::builder()
        .config(config)
        .agent(AgentDescriptor::new("chatty"), |_| Chatty)
        .build()
        .await
        .expect("runtime starts");

    let stream = runtime
        .stream("chatty", Message::user_text("go"))
        .await
        .expect("accepted");
    let mut stream = Box::pin(stream);
    let Some(StreamEvent::Task(task)) = stream.next().await else {
        panic!("the stream starts with the task");
    };
    // Nobody reads the stream while the agent writes 50 chunks into a buffer of 2.
    agentyard_tests::eventually(SOON, "the agent finishes unread", async || {
        runtime
            .get_task(&task.id, Some(0))
            .await
            .is_ok_and(|t| t.status.state == TaskState::Completed)
    })
    .await;

    let rest = collect(stream).await;
    let last = rest.last().map(describe);
    assert_eq!(
        last,
        Some(Item::Status(
            TaskState::Completed,
            "all written".to_owned(),
            true
        )),
        "the stream catches up with the task's final status: {rest:?}"
    );
    // What the slow reader's buffer dropped is read back from the task's event log:
    // every chunk arrives, once, in order.
    let chunks = rest
        .iter()
        .filter(|event| matches!(event, StreamEvent::ArtifactUpdate(_)))
        .count();
    assert_eq!(chunks, 50, "the dropped updates are replayed from the log");
}
