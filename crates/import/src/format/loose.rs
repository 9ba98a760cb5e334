//! JSON values read loosely: logs write the same field as a number in one line and a string in
//! the next (`"retry-after": "4"` or `4`, a timestamp as Unix seconds or ISO text), and a field
//! routersim does not read may hold anything. Borrowed where the line allows, so a line is read
//! without copying its text.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::time::parse_timestamp;

/// A scalar (a number, a string, a boolean), or anything else (null, an object, an array).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Loose<'a> {
    /// A string.
    Str(Cow<'a, str>),
    /// A number.
    Num(f64),
    /// A boolean.
    Bool(bool),
    /// Null, an object or an array: read as absent.
    #[default]
    Other,
}

impl Loose<'_> {
    /// The text of a string, or of a number.
    pub fn text(&self) -> Option<Cow<'_, str>> {
        match self {
            Loose::Str(s) if !s.trim().is_empty() => Some(Cow::Borrowed(s.trim())),
            Loose::Num(n) => Some(Cow::Owned(n.to_string())),
            _ => None,
        }
    }

    /// A number, or a string holding one.
    pub fn number(&self) -> Option<f64> {
        match self {
            Loose::Num(n) => Some(*n),
            Loose::Str(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// A whole number that fits a `u32` (negative or fractional: `None`).
    pub fn count(&self) -> Option<u32> {
        let n = self.number()?;
        (n >= 0.0 && n.fract() == 0.0 && n <= f64::from(u32::MAX)).then_some(n as u32)
    }

    /// A timestamp: Unix seconds, or date-time text.
    pub fn timestamp(&self) -> Option<f64> {
        match self {
            Loose::Num(n) => n.is_finite().then_some(*n),
            Loose::Str(s) => parse_timestamp(s),
            _ => None,
        }
    }

    /// A boolean, or its text (`"true"`, `"false"`).
    pub fn flag(&self) -> Option<bool> {
        match self {
            Loose::Bool(b) => Some(*b),
            Loose::Str(s) => match s.trim() {
                "true" | "True" | "1" => Some(true),
                "false" | "False" | "0" => Some(false),
                _ => None,
            },
            _ => None,
        }
    }
}

struct LooseVisitor;

impl<'de> Visitor<'de> for LooseVisitor {
    type Value = Loose<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Loose::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Loose::Num(v as f64))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Loose::Num(v as f64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Loose::Num(v))
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Loose::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Loose::Str(Cow::Owned(v.to_string())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Loose::Str(Cow::Owned(v)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Loose::Other)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Loose::Other)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(LooseVisitor)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Loose::Other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Loose::Other)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Loose<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LooseVisitor)
    }
}

/// A list of strings, read loosely: a JSON array of strings (others skipped), a JSON text of
/// one (`"[\"a\", \"b\"]"`, as spend logs store `request_tags`), or absent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LooseList(pub Vec<String>);

struct ListVisitor;

impl<'de> Visitor<'de> for ListVisitor {
    type Value = LooseList;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of strings")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(item) = seq.next_element::<Loose>()? {
            if let Some(text) = item.text() {
                out.push(text.into_owned());
            }
        }
        Ok(LooseList(out))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(LooseList(parse_list_text(v)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(LooseList::default())
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(LooseList::default())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(ListVisitor)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(LooseList::default())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(LooseList::default())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(LooseList::default())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(LooseList::default())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(LooseList::default())
    }
}

impl<'de> Deserialize<'de> for LooseList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ListVisitor)
    }
}

/// A list written as JSON text (`["a","b"]`), or `;`-separated text (a CSV cell).
pub fn parse_list_text(text: &str) -> Vec<String> {
    let text = text.trim();
    if text.starts_with('[') {
        return serde_json::from_str::<LooseList>(text)
            .map(|l| l.0)
            .unwrap_or_default();
    }
    text.split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_strings_and_structures_read_loosely() {
        let v: Vec<Loose> =
            serde_json::from_str(r#"[4, "4", " 2.5 ", true, null, {"a": [1]}, []]"#).unwrap();
        assert_eq!(v[0].number(), Some(4.0));
        assert_eq!(v[1].count(), Some(4));
        assert_eq!(v[2].number(), Some(2.5));
        assert_eq!(v[2].count(), None);
        assert_eq!(v[3].flag(), Some(true));
        assert_eq!(v[4], Loose::Other);
        assert_eq!(v[5], Loose::Other);
        assert_eq!(v[6].text(), None);
        let l: LooseList = serde_json::from_str(r#""[\"eu\", \"batch\"]""#).unwrap();
        assert_eq!(l.0, vec!["eu", "batch"]);
        assert_eq!(parse_list_text("eu; batch;"), vec!["eu", "batch"]);
    }
}
