//! LiteLLM's key names, so a routersim proxy and a LiteLLM proxy can share one Redis.

/// `deployment:<id>:cooldown`: the cooldown entry, its TTL the cooldown's length.
pub fn cooldown_key(id: &str) -> String {
    format!("deployment:{id}:cooldown")
}

/// `deployment:<id>:allowed_fails`: the failures counted toward `allowed_fails`, expiring with
/// the cooldown time (the seed's name, beside the cooldown key).
pub fn allowed_fails_key(id: &str) -> String {
    format!("deployment:{id}:allowed_fails")
}
