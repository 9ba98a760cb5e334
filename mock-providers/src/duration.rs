//! Durations as people write them in scenario files, for serde: `300ms`, `1.5s`, `2m`, `10m`,
//! `1h`, `0s` ([`HumanDuration`], [`deserialize`]).
//!
//! The parser is `routersim_config::duration`'s (the lowest crate every YAML reader reaches:
//! scenario files and LiteLLM configs share its units and its 10-year limit), re-exported
//! here: exact decimal arithmetic on nanoseconds, a unit required except for a bare `0`.

use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

pub use routersim_config::duration::{
    DurationError, MAX_DURATION, format_duration, parse_duration,
};

/// A [`Duration`] read from and written as text (`1.5s`), for serde.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HumanDuration(pub Duration);

impl From<HumanDuration> for Duration {
    fn from(value: HumanDuration) -> Self {
        value.0
    }
}

impl fmt::Display for HumanDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_duration(self.0))
    }
}

struct DurationVisitor;

impl Visitor<'_> for DurationVisitor {
    type Value = Duration;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a duration such as 300ms, 1.5s, 2m or 1h")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Duration, E> {
        parse_duration(v).map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Duration, E> {
        if v == 0 {
            Ok(Duration::ZERO)
        } else {
            Err(E::custom(format!(
                "a duration needs a unit: write {v}s or {v}ms, not {v}"
            )))
        }
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Duration, E> {
        if v >= 0 {
            self.visit_u64(v as u64)
        } else {
            Err(E::custom(format!(
                "a duration cannot be negative, found {v}"
            )))
        }
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Duration, E> {
        if v == 0.0 {
            Ok(Duration::ZERO)
        } else {
            Err(E::custom(format!(
                "a duration needs a unit: write {v}s or {v}ms, not {v}"
            )))
        }
    }
}

impl<'de> Deserialize<'de> for HumanDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(DurationVisitor)
            .map(HumanDuration)
    }
}

impl Serialize for HumanDuration {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&format_duration(self.0))
    }
}

/// `#[serde(deserialize_with = "routersim_mock_providers::duration::deserialize")]`.
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    HumanDuration::deserialize(deserializer).map(|d| d.0)
}

/// For `Option<Duration>` fields: `#[serde(default, deserialize_with = "…::deserialize_option")]`.
pub fn deserialize_option<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Duration>, D::Error> {
    Option::<HumanDuration>::deserialize(deserializer).map(|d| d.map(|d| d.0))
}
