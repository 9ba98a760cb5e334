//! `drive --header 'NAME: VALUE'`: a header sent on every request to the router under test.
//!
//! Why: some routers read their routing from the request itself — the Portkey gateway has no
//! server-side default and wants `x-portkey-config` (or `x-portkey-provider`) on every call —
//! so drive must be able to send what the router needs without knowing the router.
//! routersim's own `x-routersim-*` headers join provider calls to their requests and carry the
//! fake providers' instructions; a user header cannot replace them.

use http::{HeaderName, HeaderValue};

/// One `NAME: VALUE` header, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtraHeader {
    /// The name (lower case, as HTTP/1 sends it).
    pub name: HeaderName,
    /// The value.
    pub value: HeaderValue,
}

impl ExtraHeader {
    /// Parses `NAME: VALUE` (the value trimmed; it may contain further colons, as JSON does).
    pub fn parse(text: &str) -> Result<Self, String> {
        let Some((name, value)) = text.split_once(':') else {
            return Err(format!("{text:?}: expected 'NAME: VALUE'"));
        };
        let name = HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| format!("{:?}: not a valid header name", name.trim()))?;
        if name.as_str().starts_with("x-routersim-") {
            return Err(format!(
                "{name}: routersim's own header (drive sets the x-routersim-* headers itself)"
            ));
        }
        if matches!(
            name.as_str(),
            "host" | "content-length" | "transfer-encoding"
        ) {
            return Err(format!("{name}: drive sets this header itself"));
        }
        let value = HeaderValue::from_str(value.trim())
            .map_err(|_| format!("{name}: the value is not a valid header value"))?;
        Ok(Self { name, value })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_value_keeps_its_colons() {
        let header =
            ExtraHeader::parse(r#"x-portkey-config: {"retry":{"attempts":3}}"#).expect("parses");
        assert_eq!(header.name.as_str(), "x-portkey-config");
        assert_eq!(header.value, r#"{"retry":{"attempts":3}}"#);
    }

    #[test]
    fn bad_headers_are_refused_with_the_reason() {
        assert!(
            ExtraHeader::parse("no colon")
                .unwrap_err()
                .contains("NAME: VALUE")
        );
        assert!(
            ExtraHeader::parse("bad name: v")
                .unwrap_err()
                .contains("header name")
        );
        assert!(
            ExtraHeader::parse("X-Routersim-Request-Id: 7")
                .unwrap_err()
                .contains("routersim's own")
        );
        assert!(
            ExtraHeader::parse("host: x")
                .unwrap_err()
                .contains("itself")
        );
        assert!(
            ExtraHeader::parse("a: b\nc")
                .unwrap_err()
                .contains("not a valid")
        );
    }
}
