//! The end-to-end tests of agentyard over its public API, one module per capability.
//!
//! One test binary rather than one per file: each binary links the whole runtime,
//! HTTP stack included, and thirty of them cost gigabytes of disk and minutes of
//! linking for nothing the tests need.

mod a2a_auth;
mod a2a_extensions;
mod a2a_grpc;
mod a2a_http_as_clients_expect;
mod a2a_idempotency_keys_are_per_caller;
mod a2a_message_send;
mod a2a_message_stream;
mod a2a_numbers_reach_the_agent_exactly;
mod a2a_only_exposed_agents;
mod a2a_push_notifications;
mod a2a_rest;
mod a2a_resubscribe;
mod a2a_six_doors;
mod a2a_tasks_belong_to_where_they_were_created;
mod a2a_tasks_cancel;
mod a2a_tasks_get;
mod a2a_v1_card;
mod a2a_v1_jsonrpc;
mod a2a_v1_list_tasks;
mod a2a_v1_version_negotiation;
mod a2a_what_the_client_sent_reaches_the_agent;
mod agents_keep_session_state_and_closures_answer_by_return;
mod cancel_of_a_long_running_task;
mod console_api;
mod coordinator_events_come_in_order_and_name_the_entry_point;
mod coordinator_idempotency_key_runs_the_agent_once;
mod coordinator_rejected_send_never_runs_the_agent;
mod delegation_back_into_a_waiting_session_is_refused;
mod delegation_loop_is_cut_by_the_hop_limit;
mod events_over_http;
mod events_slow_subscriber_lags;
mod every_refused_send_emits_initiated_then_failed;
mod every_send_path_goes_through_the_policy;
mod graceful_shutdown_drains;
mod handoff_payloads_as_the_seed_writes_them;
mod input_required_round_trip;
mod intent_classifier_on_the_fallback_path;
mod jsonrpc_errors;
mod limits_reject_busy_under_a_burst_and_recover;
mod metrics_count_exactly_what_happened;
mod nonblocking_send_queues_behind_a_running_task;
mod panicking_agent_fails_only_its_task;
mod passivation_keeps_history;
mod push_webhooks_resolve_at_delivery;
mod remote_agents_across_two_runtimes;
mod restart_reruns_opted_in_agents;
mod serve_extended_card;
mod serve_my_agent_over_http;
mod sessions_past_the_warm_limit_are_passivated_at_once;
mod sessions_ten_thousand_are_spawned_and_answered;
mod store_failures_fail_sends_clearly;
mod streaming_delivers_status_and_artifacts;
mod streams_resume_after_last_event_id;
mod workflows;
