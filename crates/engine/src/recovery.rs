//! Recovery: what a deployment is allowed once its cooldown ends.
//!
//! LiteLLM (`ttl`, [`Ttl`]): a cooldown is a TTL; when it ends the deployment is simply eligible
//! again. DeltaLLM (`half_open`, [`HalfOpen`]): *"one trial request at a time; success closes,
//! failure re-cools at once"*. The router asks the policy before each pick ([`Recovery::admit`]),
//! claims a trial when it starts an attempt, and reports the trial's end; the re-cooling itself
//! goes through the cooldown trigger like every other failure (origin
//! [`FailureOrigin::Trial`](crate::cooldown::FailureOrigin::Trial)), so the policy never decides
//! a cooldown's length.

use std::sync::Mutex;

use crate::config::Recovery as RecoveryName;

/// How a deployment that is not cooling may take the request about to be routed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// An ordinary attempt.
    Normal,
    /// The deployment is half-open: the next attempt on it is its trial.
    Trial,
    /// The deployment holds its one trial in flight: everyone else skips it.
    Skip,
}

/// The recovery policy after a cooldown. Indexed by deployment (its index in the config).
pub trait Recovery {
    /// How `deployment` may take a request now. A query: it claims nothing.
    fn admit(&self, deployment: usize) -> Admission;
    /// The attempt about to start on `deployment` claims its trial if it may; returns whether
    /// this attempt is the trial.
    fn claim_trial(&self, deployment: usize) -> bool;
    /// `deployment`'s cooldown ended; returns whether it is now half-open (reported as a
    /// `half_open` event).
    fn on_cooldown_end(&self, deployment: usize) -> bool;
    /// The trial on `deployment` ended (`ok`: it succeeded; the router then restores the
    /// deployment, a failure goes to the cooldown trigger).
    fn on_trial_result(&self, deployment: usize, ok: bool);
    /// Forgets `deployment`'s recovery state (it was restored, or a failed probe took the
    /// trial's place); returns whether it was half-open.
    fn reset(&self, deployment: usize) -> bool;
}

/// LiteLLM's: a cooldown ends and that is all.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ttl;

impl Recovery for Ttl {
    fn admit(&self, _deployment: usize) -> Admission {
        Admission::Normal
    }

    fn claim_trial(&self, _deployment: usize) -> bool {
        false
    }

    fn on_cooldown_end(&self, _deployment: usize) -> bool {
        false
    }

    fn on_trial_result(&self, _deployment: usize, _ok: bool) {}

    fn reset(&self, _deployment: usize) -> bool {
        false
    }
}

/// The half-open state of one deployment.
#[derive(Clone, Copy, Debug, Default)]
struct State {
    /// The cooldown expired and no trial has succeeded yet.
    active: bool,
    /// The one trial request is in flight: everyone else skips the deployment.
    trial_in_flight: bool,
}

/// DeltaLLM's half-open recovery: after a cooldown, one trial request at a time.
#[derive(Debug)]
pub struct HalfOpen {
    states: Mutex<Vec<State>>,
}

impl HalfOpen {
    /// Half-open bookkeeping for `deployments` deployments.
    pub fn new(deployments: usize) -> Self {
        Self {
            states: Mutex::new(vec![State::default(); deployments]),
        }
    }

    fn with<R>(&self, deployment: usize, f: impl FnOnce(&mut State) -> R) -> R {
        let mut states = match self.states.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        if states.len() <= deployment {
            states.resize(deployment + 1, State::default());
        }
        f(&mut states[deployment])
    }
}

impl Recovery for HalfOpen {
    fn admit(&self, deployment: usize) -> Admission {
        self.with(deployment, |s| match (s.active, s.trial_in_flight) {
            (_, true) => Admission::Skip,
            (true, false) => Admission::Trial,
            (false, false) => Admission::Normal,
        })
    }

    fn claim_trial(&self, deployment: usize) -> bool {
        self.with(deployment, |s| {
            let claimed = s.active && !s.trial_in_flight;
            s.trial_in_flight |= claimed;
            claimed
        })
    }

    fn on_cooldown_end(&self, deployment: usize) -> bool {
        self.with(deployment, |s| {
            *s = State {
                active: true,
                trial_in_flight: false,
            };
        });
        true
    }

    fn on_trial_result(&self, deployment: usize, _ok: bool) {
        self.with(deployment, |s| s.trial_in_flight = false);
    }

    fn reset(&self, deployment: usize) -> bool {
        self.with(deployment, |s| std::mem::take(s).active)
    }
}

/// The policy a setting selects, for a router of `deployments` deployments.
pub fn for_setting(name: RecoveryName, deployments: usize) -> Box<dyn Recovery> {
    match name {
        RecoveryName::Ttl => Box::new(Ttl),
        RecoveryName::HalfOpen => Box::new(HalfOpen::new(deployments)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_open_admits_one_trial_at_a_time_until_reset() {
        let h = HalfOpen::new(2);
        assert_eq!(h.admit(0), Admission::Normal);
        assert!(!h.claim_trial(0), "no trial before a cooldown ended");
        assert!(h.on_cooldown_end(0));
        assert_eq!(h.admit(0), Admission::Trial);
        assert!(h.claim_trial(0));
        assert_eq!(h.admit(0), Admission::Skip);
        assert!(!h.claim_trial(0), "the trial is taken");
        assert_eq!(h.admit(1), Admission::Normal, "per deployment");
        h.on_trial_result(0, false);
        assert_eq!(
            h.admit(0),
            Admission::Trial,
            "a failed trial frees the slot"
        );
        assert!(h.reset(0));
        assert!(!h.reset(0));
        assert_eq!(h.admit(0), Admission::Normal);
    }

    #[test]
    fn ttl_never_holds_a_deployment_back() {
        assert!(!Ttl.on_cooldown_end(0));
        assert_eq!(Ttl.admit(0), Admission::Normal);
        assert!(!Ttl.claim_trial(0));
        assert!(!Ttl.reset(0));
    }
}
