//! The seed's failure classes: *"Map provider errors into permanent, transient, incompatible,
//! invalid-response, and ambiguous categories"*, each with its default action.

use crate::failure::FailureKind;

/// A failure's class (the seed's table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureClass {
    /// Invalid credentials, malformed parameters, not found: stop and return a clear error.
    Permanent,
    /// Context too large, unsupported input: try only a compatible route.
    RouteIncompatible,
    /// Connection reset, timeout: retry within the remaining budget.
    Transient,
    /// 429, overloaded, selected 5xx: honour retry hints or use a healthy fallback.
    Capacity,
    /// A 200 whose content was rejected: reject, then fall back if the policy permits.
    InvalidResponse,
}

impl FailureClass {
    /// Its name in reports.
    pub const fn as_str(self) -> &'static str {
        match self {
            FailureClass::Permanent => "permanent",
            FailureClass::RouteIncompatible => "route_incompatible",
            FailureClass::Transient => "transient",
            FailureClass::Capacity => "capacity",
            FailureClass::InvalidResponse => "invalid_response",
        }
    }
}

/// The class of a failure kind. (Ambiguous execution — a connection lost after the request
/// was sent — is not told apart from a connection failure here: `api_connection` is
/// transient.)
pub const fn classify(kind: FailureKind) -> FailureClass {
    match kind {
        FailureKind::BadRequest
        | FailureKind::Authentication
        | FailureKind::PermissionDenied
        | FailureKind::NotFound
        | FailureKind::UnprocessableEntity => FailureClass::Permanent,
        FailureKind::ContextWindowExceeded | FailureKind::ContentPolicyViolation => {
            FailureClass::RouteIncompatible
        }
        FailureKind::ApiConnection | FailureKind::Timeout => FailureClass::Transient,
        FailureKind::RateLimit
        | FailureKind::RouterRateLimit
        | FailureKind::Conflict
        | FailureKind::InternalServer
        | FailureKind::BadGateway
        | FailureKind::ServiceUnavailable
        | FailureKind::Overloaded => FailureClass::Capacity,
        FailureKind::MalformedResponse => FailureClass::InvalidResponse,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_table() {
        let class = |k| classify(k).as_str();
        assert_eq!(class(FailureKind::Authentication), "permanent");
        assert_eq!(class(FailureKind::BadRequest), "permanent");
        assert_eq!(class(FailureKind::NotFound), "permanent");
        assert_eq!(
            class(FailureKind::ContextWindowExceeded),
            "route_incompatible"
        );
        assert_eq!(class(FailureKind::ApiConnection), "transient");
        assert_eq!(class(FailureKind::Timeout), "transient");
        assert_eq!(class(FailureKind::RateLimit), "capacity");
        assert_eq!(class(FailureKind::ServiceUnavailable), "capacity");
        assert_eq!(class(FailureKind::Overloaded), "capacity");
        assert_eq!(class(FailureKind::MalformedResponse), "invalid_response");
    }
}
