//! The send path's steps, in the order `Supervisor::route` takes them: check the
//! policy (before the key, so a repeat is rate-limited like a first send), claim the
//! idempotency key, pick the session, take a place in its line, open or continue the
//! task, deliver. Each step is a function of its own; the key's
//! fate is decided in one place, in `route`.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use agentyard_policy::Decision;
use agentyard_transport::a2a::{
    Message, Part, Role, Task, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use agentyard_transport::{ContextId, TaskId};
use ractor::ActorRef;
use tokio::time::Instant;
use tracing::Instrument;

use super::sessions::Slot;
use super::{Core, Registered, Supervisor};
use crate::agent::{DynAgent, SessionInfo};
use crate::cancel::Cancel;
use crate::channel::{TaskChannel, TaskEvents, status};
use crate::error::{Error, Result};
use crate::events::{Envelope, EventDetail, EventKind};
use crate::handoff::Handoff;
use crate::idempotency::{self, Claim, Failure, KeyGuard};
use crate::limits::{Limited, Permit, Permits, Place, Queued};
use crate::metrics::{Outcome, Refusal as Refused};
use crate::occupancy::SessionShared;
use crate::port::finish_task;
use crate::send::{
    Follow, SendRequest, SessionKey, Submitted, Watcher, caller, mark_deduplicated, policy_request,
};
use crate::session::{Runs, SessionActor, SessionMsg};
use crate::store::{StoreError, TaskOwner, at_once};
use crate::task::{CallerRun, Work};

impl Core {
    /// The session's registry slot, spawning its actor on first use; `true` with it
    /// if this call spawned it.
    pub(super) fn session(
        &self,
        key: &SessionKey,
        registered: &Registered,
    ) -> Result<(Slot, bool)> {
        if let Some(live) = self.sessions.touch(key, Instant::now()) {
            return Ok((live, false));
        }
        // Make the agent outside any lock: the factory is user code and may be slow or
        // panic. A racing first send may make one too; the loser's is dropped.
        let info = SessionInfo {
            agent: Arc::clone(&key.agent),
            context_id: key.context_id.clone(),
        };
        let factory = Arc::clone(&registered.factory);
        let agent = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| factory(&info)))
            .map_err(|_| Error::SessionUnavailable {
                agent: key.agent.to_string(),
                context_id: key.context_id.clone(),
                reason: String::from("the agent factory panicked"),
            })?;
        let supervisor = self.actor.get().ok_or(Error::ShuttingDown)?.get_cell();
        self.sessions.get_or_spawn(key, || {
            ractor::ActorRuntime::spawn_linked_instant(
                None,
                SessionActor,
                SessionActor::args(
                    Arc::clone(&agent),
                    key,
                    Runs::for_limit(self.config.session_limit),
                ),
                supervisor,
            )
            .map(|(actor, _)| (actor, agent))
            .map_err(|e| Error::SessionUnavailable {
                agent: key.agent.to_string(),
                context_id: key.context_id.clone(),
                reason: e.to_string(),
            })
        })
    }

    /// Stops a session spawned for a send that was then refused, if nothing else has
    /// come to use it meanwhile: refused sends must leave nothing behind, or a flood of
    /// new conversations past a limit would fill memory with idle sessions.
    fn discard_unused(&self, key: &SessionKey, actor: &ActorRef<SessionMsg>) {
        let id = actor.get_id();
        self.sessions.passivate_if(key, |slot| {
            slot.actor.get_id() == id && slot.session.is_idle()
        });
    }
}

impl Supervisor {
    /// The heart of every send: steps 1–5 of the module docs.
    pub(super) async fn submit(
        &self,
        request: &mut SendRequest,
        subscribe: Follow,
    ) -> Result<Admitted> {
        let core = &self.core;
        // A send refused before it is routed (shut down, no parts, an invalid payload)
        // is still announced and closed like every other refusal, so whoever watches
        // the events sees every send.
        let mut prepared = Handoff::prepare(request);
        if let Ok(handoff) = &mut prepared
            && handoff.is_free_text()
            && !core.shutting_down.load(Ordering::Acquire)
            && let Some(classifier) = &core.config.intent_classifier
        {
            handoff.intent = classifier.classify(request).await;
        }
        let prepared_ok = prepared.as_ref().ok();
        let payload_type = prepared_ok.and_then(|h| h.payload_type);
        // The one lookup of the target: its name is shared from the registry, not
        // copied, and its counters come with it.
        let target = core.agents.get_key_value(request.to.as_str());
        let mut envelope = Envelope {
            entry_point: request.entry_point,
            from: request.from.clone(),
            to: target.map_or_else(
                || Arc::from(request.to.as_str()),
                |(name, _)| Arc::clone(name),
            ),
            context_id: request.message.context_id.clone(),
            task_id: request.message.task_id.clone(),
            payload_type,
            payload_json: prepared_ok.and_then(|h| h.payload_json.clone()),
            intent: prepared_ok.and_then(|h| h.intent),
            idempotency_key: request
                .idempotency_key
                .clone()
                .or_else(|| prepared_ok.and_then(Handoff::natural_key))
                .map(Arc::from),
            accepted: std::time::Instant::now(),
            metrics: target.and_then(|(_, registered)| registered.metrics.clone()),
        };
        let span = tracing::info_span!(
            "a2a.send",
            entry_point = %envelope.entry_point,
            to = %envelope.to,
            from = envelope.from.as_deref(),
            payload_type = payload_type.map(|t| t.as_str()),
            task_id = tracing::field::Empty,
            context_id = tracing::field::Empty,
            "otel.status_code" = tracing::field::Empty,
        );
        core.events
            .emit(|| envelope.event(EventKind::SendInitiated, EventDetail::None));

        let result = match prepared {
            _ if core.shutting_down.load(Ordering::Acquire) => Err(Error::ShuttingDown),
            Err(invalid) => Err(invalid),
            Ok(handoff) => {
                if let Some(fallback) = &handoff.fallback {
                    core.events
                        .emit(|| envelope.fallback(&fallback.text, fallback.problems.clone()));
                }
                // Boxed: the steps' future is most of a send's (~1.8 KiB), and every
                // future that awaits a send holds it inline and is moved whole, once
                // per level (the sends, the edge's layers), so one allocation here
                // costs less than the copies it saves.
                Box::pin(
                    self.route(request, target, handoff, &mut envelope, subscribe)
                        .instrument(span.clone()),
                )
                .await
            }
        };
        if let Some(metrics) = &core.metrics {
            match &result {
                Ok((submitted, ..)) if submitted.deduplicated => {
                    envelope.count(Outcome::Deduplicated, None);
                }
                // Counted when its turn settles.
                Ok(_) => {}
                Err(error) => {
                    if let Some(reason) = Refused::of(error) {
                        metrics.refused(reason);
                    }
                    envelope.count(
                        match error {
                            Error::PolicyRejected { .. } => Outcome::PolicyRejected,
                            Error::Busy { .. } => Outcome::Busy,
                            _ => Outcome::Failed,
                        },
                        None,
                    );
                }
            }
        }
        if result.is_err() {
            span.record("otel.status_code", "ERROR");
        }
        match &result {
            Ok((submitted, ..)) => {
                span.record("task_id", tracing::field::display(&submitted.task.id));
                span.record(
                    "context_id",
                    tracing::field::display(&submitted.task.context_id),
                );
            }
            Err(Error::PolicyRejected { reason, .. }) => core.events.emit(|| {
                envelope.event(
                    EventKind::SendPolicyRejected,
                    EventDetail::Reason {
                        reason: reason.clone(),
                    },
                )
            }),
            Err(error @ Error::Busy { .. }) => core.events.emit(|| {
                envelope.event(
                    EventKind::SendBusy,
                    EventDetail::Reason {
                        reason: error.to_string(),
                    },
                )
            }),
            Err(error) => core.events.emit(|| {
                envelope.event(
                    EventKind::SendFailed,
                    EventDetail::Reason {
                        reason: error.to_string(),
                    },
                )
            }),
        }
        result
    }

    /// Routes a prepared send, as a sequence of named steps: find the agent, check
    /// the policy, claim the idempotency key, pick the session, take a place in its
    /// line, open or continue the task, deliver. The key's fate is decided once, here,
    /// from what the steps after the claim returned.
    async fn route(
        &self,
        request: &mut SendRequest,
        target: Option<(&Arc<str>, &Registered)>,
        handoff: Handoff,
        envelope: &mut Envelope,
        follow: Follow,
    ) -> Result<Admitted> {
        let core = &self.core;
        let (agent, registered) = target.ok_or_else(|| Error::UnknownAgent(request.to.clone()))?;
        let agent = Arc::clone(agent);
        // The time of the send's steps, read once: a clock read costs about as much
        // as a map lookup, and the steps happen within microseconds of each other.
        let now = Instant::now();
        self.check_policy_of(request, &handoff, now)?;
        // Boxed, and only for a send with a key: the claim's future (a repeat reads
        // its task) would otherwise sit in this one, which is moved whole.
        let claim = match envelope.idempotency_key.clone() {
            Some(key) => {
                Box::pin(self.claim_key(request, &agent, &key, envelope, follow, now)).await?
            }
            None => KeyClaim::Claimed(None),
        };
        let guard = match claim {
            KeyClaim::Repeat(answer) => {
                let (submitted, rx) = *answer;
                return Ok((submitted, rx, None));
            }
            KeyClaim::Claimed(guard) => guard,
        };

        let admitted = async {
            let (continued, key) = self.pick_session(request, &agent, envelope).await?;
            let seat = self
                .take_place(key, registered, Pace::of(follow), now)
                .await?;
            let opened = self
                .open_or_continue(
                    request,
                    continued,
                    &seat.settle.key,
                    &seat.session,
                    envelope,
                    follow,
                )
                .await?;
            Ok::<_, Refusal>((seat, opened))
        }
        .await;

        // The key's fate: the task's once it exists; else passed on to waiting repeats
        // when the limits refused (they would be refused alike), else released.
        let (seat, (task, events, cancel, message)) = match admitted {
            Ok(admitted) => {
                if let Some(guard) = guard {
                    guard.settle(&admitted.1.0.id).await;
                }
                admitted
            }
            Err(Refusal { error, repeats }) => {
                match (guard, repeats) {
                    (Some(guard), Repeats::ShareTheRefusal) => guard.fail(Failure::of(&error)),
                    (Some(guard), Repeats::TryAfresh) => guard.release(),
                    (None, _) => {}
                }
                return Err(error);
            }
        };

        envelope.task_id = Some(task.id.clone());
        let rx = events.channel.follow(follow);
        let Seat {
            actor,
            session,
            agent: agent_value,
            ticket,
            settle,
        } = seat;
        let key = &settle.key;
        let work = Work {
            port: Arc::clone(&self.core) as Arc<dyn crate::port::Port>,
            agent_name: agent,
            message,
            handoff,
            metadata: request.metadata.take(),
            extensions: std::mem::take(&mut request.extensions),
            sender: envelope.from.clone(),
            hops: request.hops,
            waiting: Arc::clone(&request.chain),
            cancel,
            events,
            _permits: None,
            started: false,
            key: key.clone(),
            session,
            _tracked: core.tracker.token(),
            // Inside the send's span (`route` runs instrumented with it).
            cause: agentyard_transport::trace::Cause::current(),
        };
        // The caller follows the task anyway, and nothing stands before it: it runs
        // the turn itself (see `CallerRun`), and the runtime it runs on takes over
        // what is left if it stops waiting (a stream's caller, as soon as the turn
        // first waits). Without a runtime, the session runs it.
        let runtime = match (&ticket, follow) {
            (Ticket::Ready(_), Follow::State | Follow::Updates) => {
                tokio::runtime::Handle::try_current().ok()
            }
            _ => None,
        };
        let run = match (ticket, runtime) {
            (Ticket::Ready(permits), Some(runtime)) => {
                let mut work = work;
                work._permits = Some(permits);
                Some(CallerRun::new(work, agent_value, runtime))
            }
            (ticket, _) => {
                self.deliver_in_turn(registered, actor, ticket, work)?;
                None
            }
        };
        Ok((
            Submitted {
                task,
                deduplicated: false,
            },
            rx,
            run,
        ))
    }

    /// Step: deliver the work to its session — now if it holds every permit, else
    /// once its turn comes, off the caller's path.
    fn deliver_in_turn(
        &self,
        registered: &Registered,
        actor: ActorRef<SessionMsg>,
        ticket: Ticket,
        mut work: Work,
    ) -> Result<()> {
        match ticket {
            Ticket::Ready(permits) => {
                work._permits = Some(permits);
                let key = work.key.clone();
                self.deliver(&key, registered, actor, work)
            }
            Ticket::Wait(turn) => {
                // The work's tracker token already counts it for the shutdown drain.
                let key = work.key.clone();
                tokio::spawn(self.clone().wait_turn(key, actor, turn, work));
                Ok(())
            }
        }
    }

    /// Step: the policy (allow/deny rules, rate limits, hop limit).
    fn check_policy_of(
        &self,
        request: &SendRequest,
        handoff: &Handoff,
        now: Instant,
    ) -> Result<()> {
        let payload_type = handoff.payload_type.map(|t| t.as_str());
        match self
            .core
            .policy
            .check(&policy_request(request, payload_type), now.into_std())
        {
            Decision::Deny(rejection) => Err(Error::PolicyRejected {
                reason: rejection.to_string(),
                rejection,
            }),
            Decision::Allow => Ok(()),
        }
    }

    /// Step: the idempotency key. A repeat of a send that made a task gets that task
    /// (and whatever it asked to follow of it); a concurrent repeat of one that was
    /// refused gets the same refusal. A repeat that would wait on a task of a session
    /// waiting on this very chain of sends is refused as the delegation cycle it is.
    async fn claim_key(
        &self,
        request: &SendRequest,
        agent: &Arc<str>,
        key: &str,
        envelope: &mut Envelope,
        follow: Follow,
        now: Instant,
    ) -> Result<KeyClaim<'_>> {
        let core = &self.core;
        // Keys are scoped by target agent and caller: two agents' keys never collide,
        // nor do two callers'.
        let scoped = idempotency::scope(&envelope.to, caller(request), key);
        match core.idempotency.claim(&scoped, now).await {
            Claim::First(guard) => Ok(KeyClaim::Claimed(Some(guard))),
            Claim::DuplicateFailed(failure) => Err(failure.into_error(key)),
            Claim::Duplicate(task_id) => {
                let rx = core
                    .live
                    .follow(&task_id, follow)
                    .unwrap_or(Watcher::Nothing);
                let mut task = self.get_task(&task_id, None).await?;
                let session = SessionKey {
                    agent: Arc::clone(agent),
                    context_id: task.context_id.clone(),
                };
                if !task.status.state.is_settled() && request.chain.contains(&session) {
                    // The task cannot settle before this send's own sender does.
                    return Err(Error::DelegationCycle {
                        agent: session.agent.to_string(),
                        context_id: session.context_id,
                    });
                }
                mark_deduplicated(&mut task);
                // A task that already settled (waiting for input) publishes nothing
                // more until its next message: waiting on it would hang.
                let rx = if task.status.state.is_settled() {
                    Watcher::Nothing
                } else {
                    rx
                };
                envelope.task_id = Some(task.id.clone());
                envelope.context_id = Some(task.context_id.clone());
                core.events
                    .emit(|| envelope.event(EventKind::SendDeduplicated, EventDetail::None));
                Ok(KeyClaim::Repeat(Box::new((
                    Submitted {
                        task,
                        deduplicated: true,
                    },
                    rx,
                ))))
            }
        }
    }

    /// Step: which task and conversation, hence which session. A continued task keeps
    /// its own conversation; a send back into a session waiting on this chain of
    /// sends is refused.
    async fn pick_session(
        &self,
        request: &SendRequest,
        agent: &Arc<str>,
        envelope: &mut Envelope,
    ) -> std::result::Result<(Option<Box<Task>>, SessionKey), Refusal> {
        // The read boxed, and the task it read (`continuable` boxes it): a new task is
        // the common send, and the route's future, which holds both until the task
        // is opened, is moved whole.
        let continued = match &request.message.task_id {
            Some(task_id) => Some(Box::pin(self.continuable(task_id, agent, request)).await?),
            None => None,
        };
        let context_id = match (&continued, &request.message.context_id) {
            (Some(task), _) => task.context_id.clone(),
            (None, Some(context_id)) => context_id.clone(),
            (None, None) => ContextId::mint(),
        };
        envelope.context_id = Some(context_id.clone());
        let key = SessionKey {
            agent: Arc::clone(agent),
            context_id,
        };
        // A send back into a session that is itself waiting on this chain of sends
        // would wait for its own permit forever.
        if request.chain.contains(&key) {
            return Err(Error::DelegationCycle {
                agent: key.agent.to_string(),
                context_id: key.context_id.clone(),
            }
            .into());
        }
        Ok((continued, key))
    }

    /// Step: the concurrency limits, most specific first (a send waiting on a busy
    /// session holds nothing that other sessions need), spawning the session on
    /// first use. At [`Pace::Queue`] (a send that does not wait for its task) the send
    /// takes its place in the session's line without waiting for its turn either.
    async fn take_place(
        &self,
        key: SessionKey,
        registered: &Registered,
        pace: Pace,
        now: Instant,
    ) -> std::result::Result<Seat<'_>, Refusal> {
        let core = &self.core;
        // The session as it stands, if there is one: found once, and used by the
        // first pass of the loop below.
        let mut found = core.sessions.touch(&key, now);
        // Whatever happens to this send from here, its session is offered to the warm
        // set when the send lets go of it (a no-op while it is busy): taken out of it
        // above, a session this send is refused at goes back.
        let mut settle = Settle {
            core,
            session: found.as_ref().map(|slot| Arc::clone(&slot.session)),
            key,
        };
        // A new conversation that the agent or global limit would refuse anyway is
        // refused before a session is spawned for it: cheaper, and it leaves nothing.
        // A send that will wait off the caller's path is checked the same way whatever
        // its conversation, so that it is refused while it still has no task.
        if (pace == Pace::Queue || found.is_none())
            && let Some(full) = [&registered.limiter, &core.global]
                .into_iter()
                .find(|limiter| limiter.is_saturated())
        {
            return Err(Refusal::shared(full.busy()));
        }
        loop {
            let (
                Slot {
                    actor,
                    session,
                    agent,
                },
                created,
            ) = match found.take() {
                Some(slot) => (slot, false),
                None => core.session(&settle.key, registered)?,
            };
            settle.session = Some(Arc::clone(&session));
            let ticket = if pace == Pace::Queue {
                take_place(&session, registered, core)
            } else {
                Permits::acquire(&session, &registered.limiter, &core.global)
                    .await
                    .map(Ticket::Ready)
            }
            .and_then(|ticket| {
                // Intake stopped while this send waited in line. It has no task yet,
                // so it is refused like a new send rather than run after shutdown.
                if core.shutting_down.load(Ordering::Acquire) {
                    Err(Error::ShuttingDown)
                } else {
                    Ok(ticket)
                }
            });
            let ticket = match ticket {
                Ok(ticket) => ticket,
                Err(error) => {
                    // (`settle` runs after this, and finds a discarded session gone.)
                    if created {
                        core.discard_unused(&settle.key, &actor);
                    }
                    return Err(Refusal::shared(error));
                }
            };
            // The session may have been passivated while we waited: its limiter is then
            // orphaned, and a fresh session must be used to keep the per-session limit.
            // (A place in its line keeps it from passivation from here on.)
            if core.sessions.is_current(&settle.key, &session) {
                return Ok(Seat {
                    actor,
                    session,
                    agent,
                    ticket,
                    settle,
                });
            }
        }
    }

    /// Step: the task — a new one created `submitted`, or the continued one taken
    /// out of `input-required` with the message added to its history. What it
    /// returns of the task is what the caller gets back as submitted; a caller that
    /// follows only the task's state reads the task again once it settles, so it
    /// gets the task's head alone, not a copy of its history.
    async fn open_or_continue(
        &self,
        request: &mut SendRequest,
        continued: Option<Box<Task>>,
        key: &SessionKey,
        session: &Arc<SessionShared>,
        envelope: &mut Envelope,
        follow: Follow,
    ) -> std::result::Result<Opened, Refusal> {
        request.message.context_id = Some(key.context_id.clone());
        match continued {
            // Boxed: continuing is the rarer step and awaits more (the history, the
            // status, a read of the task), and the route's future, which holds
            // this one, is moved whole.
            Some(task) => {
                Box::pin(self.continue_task(request, task, key, session, envelope, follow)).await
            }
            None => {
                self.open_task(request, key, session, envelope, follow)
                    .await
            }
        }
    }

    /// [`open_or_continue`](Self::open_or_continue) for a continued task.
    async fn continue_task(
        &self,
        request: &mut SendRequest,
        task: Box<Task>,
        key: &SessionKey,
        session: &Arc<SessionShared>,
        envelope: &mut Envelope,
        follow: Follow,
    ) -> std::result::Result<Opened, Refusal> {
        let core = &self.core;
        request.message.task_id = Some(task.id.clone());
        let message = shared_message(request);
        // Answered on only after the resubmission below, whose durable write
        // commits it too.
        core.store
            .append_history_unanswered(&task.id, Arc::clone(&message))
            .await
            .map_err(|e| terminal_to_error(e, &task.id))?;
        // The task now belongs to the session that handles it (its old one may
        // have been passivated while it waited for input).
        let (events, cancel, adopted) = match core.live.continue_with(&task.id, envelope, session) {
            Some((events, cancel)) => (events, cancel, false),
            // Waiting in the store but not live: a task from before a restart,
            // taken on by this session.
            None if task.status.state.is_interrupted() => {
                let (events, cancel) = core.live.adopt(
                    &task,
                    &key.agent,
                    envelope,
                    session,
                    core.config.stream_capacity,
                );
                (events, cancel, true)
            }
            None => {
                return Err(Error::TaskTerminal {
                    task_id: task.id.clone(),
                    state: TaskState::Canceled,
                }
                .into());
            }
        };
        // The task leaves input-required: it has a message to work on again.
        let resumed = core
            .store
            .set_status(&task.id, TaskStatus::new(TaskState::Submitted))
            .await;
        if resumed.is_err() && adopted {
            core.live.end(&task.id);
        }
        resumed.map_err(|e| terminal_to_error(e, &task.id))?;
        events.channel.set_state(TaskState::Submitted);
        let task = match follow {
            Follow::State => Task::new(
                task.id.clone(),
                task.context_id.clone(),
                TaskStatus::new(TaskState::Submitted),
            ),
            Follow::Nothing | Follow::Updates => self.get_task(&task.id, None).await?,
        };
        Ok((task, events, cancel, message))
    }

    /// [`open_or_continue`](Self::open_or_continue) for a new task.
    async fn open_task(
        &self,
        request: &mut SendRequest,
        key: &SessionKey,
        session: &Arc<SessionShared>,
        envelope: &mut Envelope,
        follow: Follow,
    ) -> std::result::Result<Opened, Refusal> {
        let core = &self.core;
        let context_id = &key.context_id;
        // One read of the clock for the id (a uuid v7 carries its time) and the
        // first status: they are made together.
        let created = std::time::SystemTime::now();
        let task_id = TaskId::mint_at(created);
        request.message.task_id = Some(task_id.clone());
        let mut task = Task::new(
            task_id.clone(),
            context_id.clone(),
            TaskStatus::at(TaskState::Submitted, created),
        );
        let message = shared_message(request);
        // Room for the agent's reply too: most turns add one, and growing the vector
        // for it would be an allocation more per send.
        let mut history = Vec::with_capacity(2);
        history.push(Arc::clone(&message));
        task.history = Some(history);
        let owner = TaskOwner::new(
            Arc::clone(&key.agent),
            request.principal.as_deref().map(Arc::from),
        );
        let submitted = match follow {
            Follow::State => Task::new(task_id.clone(), context_id.clone(), task.status.clone()),
            Follow::Nothing | Follow::Updates => task.clone(),
        };
        // A caller that waits for the task to settle is answered only after a later
        // durable write of it (its key, or the status it settles in), which commits
        // the task too: the insert need not wait for its own commit. A caller
        // answered now (the task, or a stream starting with it) needs it durable.
        let answered = !matches!(follow, Follow::State);
        at_once::insert_owned(&*core.store, task, owner, answered)
            .await
            .map_err(Error::from)?;
        let task = submitted;
        let channel = TaskChannel::new(TaskState::Submitted, core.config.stream_capacity);
        let cancel = Cancel::new();
        envelope.task_id = Some(task_id.clone());
        // Subscribers learn of the task when it exists, not only once its agent
        // starts: `submitted` is a state the store records, so it is an update like
        // the others (not final; the task stream starts with the task itself instead).
        core.events.emit_status(&task_id, || {
            let update = TaskStatusUpdateEvent::new(
                task_id.clone(),
                context_id.clone(),
                task.status.clone(),
                false,
            );
            envelope.event(EventKind::TaskStatus, EventDetail::Status { update })
        });
        let events = TaskEvents::new(task_id, context_id.clone(), channel, envelope.clone());
        core.live.create(
            Arc::clone(&key.agent),
            events.clone(),
            cancel.clone(),
            session,
        );
        Ok((task, events, cancel, message))
    }

    /// Waits for a queued task's turn off the caller's path, then delivers it; if the
    /// turn never comes (an agent or global line full) the task fails with the
    /// reason, visibly. A cancel while it waits ends the wait: the task is already
    /// `canceled`.
    async fn wait_turn(self, key: SessionKey, actor: ActorRef<SessionMsg>, turn: Turn, work: Work) {
        let core = Arc::clone(&self.core);
        let Ok((_, registered)) = core.agent(&key.agent) else {
            return;
        };
        let cancel = work.cancel.clone();
        let permits = async {
            let session = match turn {
                Turn::Session(permit) => permit,
                Turn::Queued(place) => place.permit().await?,
            };
            let agent = registered.limiter.acquire().await?;
            let global = core.global.acquire().await?;
            // Not refused at shutdown: the task was accepted, so it runs in the drain
            // like running work, and fails at its deadline like running work.
            Ok::<_, Error>(Permits::from_parts(session, agent, global))
        };
        let permits = tokio::select! {
            biased;
            () = cancel.cancelled() => return,
            permits = permits => permits,
        };
        match permits {
            Ok(permits) => {
                let mut work = work;
                work._permits = Some(permits);
                // On failure the work is dropped undelivered, which fails its task.
                let _ = self.deliver(&key, registered, actor, work);
            }
            Err(error) => {
                let text = format!("the message was not handled: {error}; send it again");
                let message = Message::new(Role::Agent, vec![Part::text(text)]);
                let task_id = work.events.task_id.clone();
                let _ = finish_task(
                    &*self.core,
                    &task_id,
                    status(TaskState::Failed, Some(message.into())),
                )
                .await;
            }
        }
    }

    /// Hands work to its session, respawning the session if it was passivated between
    /// lookup and delivery (the drained mailbox hands the work back).
    fn deliver(
        &self,
        key: &SessionKey,
        registered: &Registered,
        mut actor: ActorRef<SessionMsg>,
        work: Work,
    ) -> Result<()> {
        let mut msg = SessionMsg::Deliver(Box::new(work));
        for _ in 0..3 {
            match actor.cast(msg) {
                Ok(()) => return Ok(()),
                Err(ractor::MessagingErr::SendErr(returned)) => {
                    msg = returned;
                    self.core.sessions.forget(key, &actor);
                    let (respawned, _) = self.core.session(key, registered)?;
                    actor = respawned.actor;
                    let session = respawned.session;
                    // The work now belongs to the fresh session, which it settles.
                    let SessionMsg::Deliver(work) = &mut msg;
                    work.session = session;
                }
                Err(other) => {
                    return Err(Error::SessionUnavailable {
                        agent: key.agent.to_string(),
                        context_id: key.context_id.clone(),
                        reason: other.to_string(),
                    });
                }
            }
        }
        Err(Error::SessionUnavailable {
            agent: key.agent.to_string(),
            context_id: key.context_id.clone(),
            reason: String::from("the session kept stopping"),
        })
    }

    /// Checks that a message may continue `task_id`: it exists, has not ended, belongs
    /// to this agent and to the message's conversation. The task comes boxed, as the
    /// route holds it (see `pick_session`).
    async fn continuable(
        &self,
        task_id: &TaskId,
        agent: &Arc<str>,
        request: &SendRequest,
    ) -> Result<Box<Task>> {
        let task = self.get_task(task_id, Some(0)).await?;
        if task.status.state.is_terminal() {
            return Err(Error::TaskTerminal {
                task_id: task_id.clone(),
                state: task.status.state,
            });
        }
        let owner = match self.core.live.agent(task_id) {
            Some(owner) => Some(owner),
            // Not live (waiting since before a restart): the store knows its agent.
            None => self
                .core
                .store
                .owner(task_id)
                .await?
                .map(|owner| owner.agent),
        };
        if owner.as_ref().is_some_and(|owner| owner != agent) {
            return Err(Error::TaskMismatch {
                task_id: task_id.clone(),
                owner: format!("agent `{}`", owner.as_deref().unwrap_or_default()),
            });
        }
        if let Some(context_id) = &request.message.context_id
            && *context_id != task.context_id
        {
            return Err(Error::TaskMismatch {
                task_id: task_id.clone(),
                owner: format!("context `{}`", task.context_id),
            });
        }
        Ok(Box::new(task))
    }
}

/// Offers a send's session (once it has one) to the warm set when the send lets go
/// of it.
struct Settle<'a> {
    core: &'a Core,
    key: SessionKey,
    session: Option<Arc<SessionShared>>,
}

impl Drop for Settle<'_> {
    fn drop(&mut self) {
        if let Some(session) = &self.session {
            self.core.settled(&self.key, session);
        }
    }
}

/// What opening or continuing a task gives the route: the task as the caller gets
/// it back, its events and cancel handle, and the message it works on.
type Opened = (Task, TaskEvents, Cancel, Arc<Message>);

/// What claiming a send's idempotency key came to.
enum KeyClaim<'a> {
    /// The send goes ahead, holding its key if it has one.
    Claimed(Option<KeyGuard<'a>>),
    /// A repeat: the first send's task, and what the repeat follows of it.
    /// (Boxed: repeats are rare, and the answer is large.)
    Repeat(Box<(Submitted, Watcher)>),
}

/// An admitted send: its task as submitted, what the caller follows of it, and the
/// turn the caller runs itself, if it does (see `CallerRun`).
pub(super) type Admitted = (Submitted, Watcher, Option<CallerRun>);

/// A send's place at its session: the session, its claim on the limits, and the
/// guard that offers the session to the warm set when the send lets go of it.
struct Seat<'a> {
    actor: ActorRef<SessionMsg>,
    session: Arc<SessionShared>,
    agent: Arc<dyn DynAgent>,
    ticket: Ticket,
    settle: Settle<'a>,
}

/// A send refused after its key was claimed, and what concurrent repeats of it get.
struct Refusal {
    error: Error,
    repeats: Repeats,
}

/// What the repeats waiting on a refused send's key get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Repeats {
    /// The same refusal: the limits refused, and a repeat would be refused alike.
    ShareTheRefusal,
    /// The key, released for them to try afresh (anything else).
    TryAfresh,
}

impl Refusal {
    fn shared(error: Error) -> Self {
        Self {
            error,
            repeats: Repeats::ShareTheRefusal,
        }
    }
}

impl From<Error> for Refusal {
    fn from(error: Error) -> Self {
        Self {
            error,
            repeats: Repeats::TryAfresh,
        }
    }
}

/// How a send takes its place at its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pace {
    /// The caller waits for its turn: every permit is acquired before the task is
    /// made (a send that follows its task).
    Wait,
    /// The send takes its place in the session's line and returns; the turn is
    /// waited for off the caller's path (a send that does not follow its task).
    Queue,
}

impl Pace {
    fn of(follow: Follow) -> Self {
        match follow {
            Follow::Nothing => Self::Queue,
            Follow::State | Follow::Updates => Self::Wait,
        }
    }
}

/// A send's claim on the concurrency limits.
#[derive(Debug)]
enum Ticket {
    /// Every permit: the task runs as soon as it is delivered.
    Ready(Permits),
    /// A turn still to wait for, off the caller's path.
    Wait(Turn),
}

/// A turn a queued task waits for.
#[derive(Debug)]
enum Turn {
    /// The session's permit is held; the agent's and global ones are still to come.
    Session(Permit),
    /// A place in the session's line.
    Queued(Queued),
}

/// Takes a send's place without waiting: every permit if all are free, else the
/// session's permit or a place in its line (refused `Busy` when the line is full).
fn take_place(
    session: &Arc<SessionShared>,
    registered: &Registered,
    core: &Core,
) -> Result<Ticket> {
    Ok(match session.enqueue()? {
        Place::Ready(permit) => match (registered.limiter.try_acquire(), core.global.try_acquire())
        {
            (Some(agent), Some(global)) => {
                Ticket::Ready(Permits::from_parts(permit, agent, global))
            }
            _ => Ticket::Wait(Turn::Session(permit)),
        },
        Place::Queued(place) => Ticket::Wait(Turn::Queued(place)),
    })
}

fn terminal_to_error(error: StoreError, task_id: &TaskId) -> Error {
    match error {
        StoreError::Terminal { state, .. } => Error::TaskTerminal {
            task_id: task_id.clone(),
            state,
        },
        other => Error::Store(other),
    }
}

/// The request's message, moved out to be shared by the task's history and the agent
/// (one copy, not one each): every step that reads it from the request is done.
fn shared_message(request: &mut SendRequest) -> Arc<Message> {
    Arc::new(std::mem::replace(
        &mut request.message,
        crate::send::vacated_message(),
    ))
}
