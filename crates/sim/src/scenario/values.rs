//! The small typed values of a traffic entry, each with its own deserializer and message:
//! `count`, `rate` (`20/s`, `1200/m`), `stream` (a bool or a share), `format`, fallbacks.
//!
//! Separate because each is a self-contained grammar, read by serde in one pass.

use std::collections::BTreeMap;
use std::fmt;

use routersim_engine::config::FallbackTarget;
use routersim_engine::request::ResponseFormat;
use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::Value;

/// `count`: how many copies of an explicit request, from 1 (0 would be a request that never
/// arrives: a typo, not a way to switch it off).
pub(super) struct Count(pub(super) u32);

fn count_error<E: de::Error>(found: impl fmt::Display) -> E {
    E::custom(format!(
        "expected a whole number from 1 to {}, found {found}",
        u32::MAX
    ))
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Count;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a whole number from 1 to {}", u32::MAX)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Count, E> {
                match u32::try_from(v) {
                    Ok(n) if n > 0 => Ok(Count(n)),
                    _ => Err(count_error(v)),
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Count, E> {
                match u64::try_from(v) {
                    Ok(v) => self.visit_u64(v),
                    Err(_) => Err(count_error(v)),
                }
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Count, E> {
                Err(count_error(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Count, E> {
                Err(count_error(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Count, E> {
                Err(count_error(format_args!("{v:?}")))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// Requests per second: `20/s`, `1200/m`, `50/h`, or a plain number (per second).
pub(super) struct Rate(pub(super) f64);

const RATE_EXPECTED: &str = "a rate such as 20/s, 1200/m, 50/h or 20 (per second)";

fn parse_rate(text: &str) -> Result<f64, String> {
    let bad = || format!("expected {RATE_EXPECTED}, found {text:?}");
    let (number, per) = match text.split_once('/') {
        Some((n, unit)) => {
            let per = match unit.trim() {
                "s" => 1.0,
                "m" => 60.0,
                "h" => 3600.0,
                _ => return Err(bad()),
            };
            (n.trim(), per)
        }
        None => (text.trim(), 1.0),
    };
    if !number.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(bad());
    }
    let n: f64 = number.parse().map_err(|_| bad())?;
    check_rate(n / per)
}

fn check_rate(per_sec: f64) -> Result<f64, String> {
    if per_sec.is_finite() && per_sec > 0.0 {
        Ok(per_sec)
    } else {
        Err(format!("a rate must be above 0, found {per_sec}"))
    }
}

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Rate;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(RATE_EXPECTED)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Rate, E> {
                parse_rate(v).map(Rate).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Rate, E> {
                check_rate(v as f64).map(Rate).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Rate, E> {
                check_rate(v as f64).map(Rate).map_err(E::custom)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Rate, E> {
                check_rate(v).map(Rate).map_err(E::custom)
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// `stream`: `true`/`false`, or a share of requests between 0 and 1 (`0.3`).
pub(super) struct StreamShare {
    pub(super) share: f64,
    pub(super) written_as_bool: bool,
}

const STREAM_EXPECTED: &str = "true, false, or a share of requests between 0 and 1 (0.3)";

fn check_share(share: f64) -> Result<StreamShare, String> {
    if (0.0..=1.0).contains(&share) {
        Ok(StreamShare {
            share,
            written_as_bool: false,
        })
    } else {
        Err(format!("stream must be {STREAM_EXPECTED}, found {share}"))
    }
}

impl<'de> Deserialize<'de> for StreamShare {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = StreamShare;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(STREAM_EXPECTED)
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<StreamShare, E> {
                Ok(StreamShare {
                    share: if v { 1.0 } else { 0.0 },
                    written_as_bool: true,
                })
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<StreamShare, E> {
                check_share(v as f64).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<StreamShare, E> {
                check_share(v as f64).map_err(E::custom)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<StreamShare, E> {
                check_share(v).map_err(E::custom)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<StreamShare, E> {
                Err(E::custom(format!(
                    "stream must be {STREAM_EXPECTED}, found {v:?}"
                )))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// `response_format`: `text`, or `json` (also `json_object`, `json_schema`).
pub(super) struct Format(pub(super) ResponseFormat);

const FORMAT_EXPECTED: &str = "text or json (json_object and json_schema are json too)";

impl<'de> Deserialize<'de> for Format {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Format;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(FORMAT_EXPECTED)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Format, E> {
                match v {
                    "text" => Ok(Format(ResponseFormat::Text)),
                    "json" | "json_object" | "json_schema" => Ok(Format(ResponseFormat::Json)),
                    _ => Err(E::custom(format!(
                        "response_format must be {FORMAT_EXPECTED}, found {v:?}"
                    ))),
                }
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// A request's fallback: a model group, or `{model: X, <param overrides>…}`.
pub(super) struct Fallback(pub(super) FallbackTarget);

impl<'de> Deserialize<'de> for Fallback {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Fallback;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a model group, or {model: <group>, <param>: <value>…}")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Fallback, E> {
                Ok(Fallback(FallbackTarget::group(v)))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Fallback, A::Error> {
                let mut overrides =
                    BTreeMap::<String, Value>::deserialize(MapAccessDeserializer::new(map))?;
                match overrides.remove("model") {
                    Some(Value::String(model)) => {
                        routersim_config::load::target_with_overrides(model, overrides, "")
                            .map(Fallback)
                            .map_err(de::Error::custom)
                    }
                    Some(other) => Err(de::Error::custom(format!(
                        "`model` must be a model group name, found {other}"
                    ))),
                    None => Err(de::Error::custom(
                        "a fallback mapping needs `model: <group>`",
                    )),
                }
            }
        }
        deserializer.deserialize_any(V)
    }
}
