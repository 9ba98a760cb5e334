//! What the plots are told about the run besides its events: every deployment (for the
//! lanes) and the scenario's fault windows (shaded and labelled).
//!
//! Why a module of its own: every time plot reads the fault windows and the recorder and the
//! simulation build them; plain data below all of them.

use std::time::Duration;

/// A deployment the plots show a lane for, even when it never cooled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeploymentLane {
    /// Deployment id (`model_info.id`).
    pub id: String,
    /// Its model group (`model_name`).
    pub model_group: String,
}

/// A fault window, shaded on the timeline and behind the lanes it hits.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaultWindow {
    /// What the plots print, e.g. `east: rate_limit 90%` (also the window's name in
    /// `summary.json`'s `windows`).
    pub label: String,
    /// What the plots add after the label where there is room: the `Retry-After` sent and the
    /// time range, e.g. `Retry-After 5s, 2m–12m` (empty: nothing).
    pub detail: String,
    /// The deployment ids it hits.
    pub deployments: Vec<String>,
    /// Start, virtual time since the run start.
    pub from: Duration,
    /// End (exclusive); `None` means it lasts to the run end.
    pub to: Option<Duration>,
}

impl FaultWindow {
    /// The label with its detail: what a plot prints where there is room.
    pub(crate) fn full_label(&self) -> String {
        if self.detail.is_empty() {
            self.label.clone()
        } else {
            format!("{} {}", self.label, self.detail)
        }
    }
}

/// What the plots need to know about the run besides its events: every deployment (in
/// `model_list` order) and the fault windows. Without it the lanes are the deployments seen in
/// cooldown events and no fault is shaded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlotContext {
    /// Every deployment, in the order the lanes are drawn within their groups.
    pub deployments: Vec<DeploymentLane>,
    /// The fault windows, in scenario order.
    pub faults: Vec<FaultWindow>,
}
