use agentyard_actors::store::{InMemoryTaskStore, TaskStore};

use super::*;

fn spec(name: &str, description: &str) -> WorkflowSpec {
    WorkflowSpec::from_toml(&format!(
        r#"
name = "{name}"
description = "{description}"
[[nodes]]
id = "in"
kind = "input"
[[nodes]]
id = "a"
kind = "agent"
agent = "echo"
prompt = "{{{{in}}}}"
[[nodes]]
id = "out"
kind = "output"
from = ["a"]
"#
    ))
    .expect("a valid spec")
}

#[tokio::test]
async fn stored_definitions_are_the_task_stores_records() {
    let store: Arc<dyn TaskStore> = Arc::new(InMemoryTaskStore::new());
    let definitions = StoredDefinitions::new(Arc::clone(&store));

    assert!(definitions.put(spec("b", "first")).await.unwrap(), "new");
    assert!(definitions.put(spec("a", "other")).await.unwrap(), "new");
    assert!(
        !definitions.put(spec("b", "second")).await.unwrap(),
        "replaced"
    );
    assert_eq!(definitions.names().await.unwrap(), ["a", "b"]);
    assert_eq!(
        definitions.get("b").await.unwrap(),
        Some(spec("b", "second"))
    );

    // A second view of the same store (another start of the server) sees them.
    let again = StoredDefinitions::new(Arc::clone(&store));
    assert_eq!(again.get("a").await.unwrap(), Some(spec("a", "other")));

    assert!(definitions.delete("b").await.unwrap());
    assert!(!definitions.delete("b").await.unwrap());
    assert_eq!(again.get("b").await.unwrap(), None);
    assert_eq!(again.names().await.unwrap(), ["a"]);
}

#[tokio::test]
async fn a_record_that_is_no_spec_is_an_error_naming_the_workflow() {
    let store: Arc<dyn TaskStore> = Arc::new(InMemoryTaskStore::new());
    store
        .put_record(
            StoredDefinitions::NAMESPACE,
            "broken",
            &serde_json::json!({"name": "broken", "nodes": 3}),
            None,
        )
        .await
        .unwrap();
    let error = StoredDefinitions::new(store)
        .get("broken")
        .await
        .expect_err("not a spec")
        .to_string();
    assert!(error.contains("`broken`"), "{error}");
}
