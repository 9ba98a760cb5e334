//! [`Invariant::NoRetryAfterCommit`]: once a stream delivered content to the caller (a
//! `stream_chunk`), no `retry`, `fallback`, `order_fallback` or `weighted_failover` follows, a
//! break is reported `after_content`, a `give_up` says so, and the only attempt allowed after
//! it is the one a `stream_continued` announces, on the deployment it names, when the settings
//! allow a continuation (and, where a broken continuation is continued again, as many as the
//! profile allows). With it, the stream's own consistency
//! ([`Invariant::EventsConsistent`]): a continuation comes after content, and where a stream
//! commits at its first content a break is not reported `after_content` without content.
//!
//! Where the rules differ by profile they read what the profile allows from
//! [`Bounds`](super::Bounds), derived once per run ([`Bounds::derive`](super::Bounds::derive)):
//! [`Bounds::commits_at_content`](super::Bounds::commits_at_content) and
//! [`Bounds::continuation`](super::Bounds::continuation) and
//! [`Bounds::max_continuations`](super::Bounds::max_continuations) (chained continuations
//! under `litellm-1.110`). A profile's own rule is a field there and a change to
//! [`RequestCheck::continuation_refused`] alone, never a test of the profile inside a check.

use std::sync::Arc;

use routersim_engine::event::GiveUpReason;

use super::invariant::Invariant;
use super::request::{RequestCheck, after_commit};

impl RequestCheck<'_, '_> {
    /// After content, an attempt is only the continuation announced, on its deployment.
    pub(super) fn attempt_after_commit(&mut self, attempt: u32, deployment_id: &Arc<str>) {
        if !self.req.content {
            return;
        }
        match self.req.continuation_pending.take() {
            Some(announced) if announced != *deployment_id => {
                let detail =
                    format!("the continuation announced on {announced} starts on {deployment_id}");
                self.fail(Invariant::NoRetryAfterCommit, detail);
            }
            Some(_) => {}
            None => {
                let detail = after_commit(&format!(
                    "attempt {attempt} on {deployment_id}, not a continuation,"
                ));
                self.fail(Invariant::NoRetryAfterCommit, detail);
            }
        }
    }

    /// No retry or failover of any kind after content (`what` names it).
    pub(super) fn no_failover_after_commit(&mut self, what: impl FnOnce() -> String) {
        if self.req.content {
            let detail = after_commit(&what());
            self.fail(Invariant::NoRetryAfterCommit, detail);
        }
    }

    /// A group gives up after content only because content was delivered (or no deployment
    /// could continue it).
    pub(super) fn give_up_says_content_was_delivered(&mut self, reason: GiveUpReason) {
        let delivered = matches!(
            reason,
            GiveUpReason::StreamContentDelivered | GiveUpReason::NoContinuationDeployment
        );
        if self.req.content && !delivered {
            let detail = after_commit(&format!("give_up {}", reason.as_str()));
            self.fail(Invariant::NoRetryAfterCommit, detail);
        }
    }

    /// A break says whether content reached the caller, as the events showed it.
    pub(super) fn break_says_what_the_caller_got(
        &mut self,
        deployment_id: &Arc<str>,
        after_content: bool,
    ) {
        if self.req.content && !after_content {
            let detail = format!(
                "stream_break on {deployment_id} says after_content: false, but content \
                 reached the caller"
            );
            self.fail(Invariant::NoRetryAfterCommit, detail);
        }
        if self.bounds.commits_at_content && after_content && !self.req.content {
            let detail = format!(
                "stream_break on {deployment_id} says after_content: true, but no \
                 content reached the caller (a retry was still allowed)"
            );
            self.fail(Invariant::EventsConsistent, detail);
        }
    }

    /// A continuation comes after content, and only where the settings allow it.
    pub(super) fn continuation_allowed(&mut self, to_deployment: &Arc<str>) {
        if !self.req.content {
            let detail = "stream_continued before any content".to_string();
            self.fail(Invariant::EventsConsistent, detail);
        }
        if let Some(why) = self.continuation_refused() {
            let detail = format!("stream_continued on {to_deployment}: {why}");
            self.fail(Invariant::NoRetryAfterCommit, detail);
        }
    }

    /// Why the settings refuse this request a continuation now, if they do: continuation is
    /// off, or the request already had as many as the profile allows (one by the documented
    /// rule; `max_fallbacks` where a broken continuation is continued again).
    pub(super) fn continuation_refused(&self) -> Option<String> {
        let (done, most) = (self.req.continuations, self.bounds.max_continuations);
        if !self.bounds.continuation {
            Some("continuation is off in the settings".into())
        } else if done >= most && most <= 1 {
            Some("a second continuation".into())
        } else if done >= most {
            Some(format!(
                "continuation {} of a chain: each is a fallback level and max_fallbacks is {most}",
                done + 1
            ))
        } else {
            None
        }
    }
}
