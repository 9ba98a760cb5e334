//! The settings that name one of a few values (`routing_strategy`, `recovery`,
//! `classification`, `profile`): each value with every spelling a config may use, from one
//! table per type, so a name is parsed and printed the same way everywhere.

/// Implements `ALL`, `NAMES`, `as_str`, `from_name` and `choices` for a fieldless enum from one
/// table: each variant with its canonical name, then any other spelling it accepts. A new
/// variant is one line of the table (`as_str` matches every variant, so the compiler asks for
/// it).
macro_rules! name_table {
    ($ty:ident { $($variant:ident => $name:literal $(| $alias:literal)*,)+ }) => {
        impl $ty {
            /// Every value, in table order.
            pub const ALL: [$ty; [$($ty::$variant),+].len()] = [$($ty::$variant),+];

            /// Every accepted spelling (each canonical name, then its other spellings), for
            /// error messages.
            pub const NAMES: [&'static str; [$($name $(, $alias)*),+].len()] =
                [$($name $(, $alias)*),+];

            /// The canonical name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)+
                }
            }

            /// Parses a name as users write it (trimmed; any accepted spelling).
            pub fn from_name(name: &str) -> Option<Self> {
                match name.trim() {
                    $($name $(| $alias)* => Some($ty::$variant),)+
                    _ => None,
                }
            }

            /// The canonical names as the choice an error message expects: `a or b`.
            pub fn choices() -> String {
                Self::ALL.map(Self::as_str).join(" or ")
            }
        }
    };
}

/// The routing strategy named by `router_settings.routing_strategy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RoutingStrategyName {
    /// `simple-shuffle` (LiteLLM's default): random, by weight/rpm/tpm when given.
    #[default]
    SimpleShuffle,
    /// `weighted` (and the deprecated `tag-based-routing`): random by `weight`.
    Weighted,
    /// `priority-based-routing`: lowest `model_info.priority` first.
    PriorityBased,
    /// `least-busy`: fewest in-flight requests.
    LeastBusy,
    /// `latency-based-routing`: best recent latency.
    LatencyBased,
    /// `cost-based-routing`: cheapest per token.
    CostBased,
    /// `usage-based-routing` / `usage-based-routing-v2`: lowest RPM/TPM use this minute.
    UsageBased,
    /// `rate-limit-aware`: drop deployments near their limits, then pick.
    RateLimitAware,
}

name_table!(RoutingStrategyName {
    SimpleShuffle => "simple-shuffle",
    Weighted => "weighted" | "tag-based-routing",
    PriorityBased => "priority-based-routing",
    LeastBusy => "least-busy",
    LatencyBased => "latency-based-routing",
    CostBased => "cost-based-routing",
    UsageBased => "usage-based-routing" | "usage-based-routing-v2",
    RateLimitAware => "rate-limit-aware",
});

/// What happens when a cooldown expires.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Recovery {
    /// LiteLLM's: simply eligible again.
    #[default]
    Ttl,
    /// DeltaLLM's: one trial request at a time; success closes, failure re-cools at once.
    HalfOpen,
}

name_table!(Recovery {
    Ttl => "ttl",
    HalfOpen => "half_open" | "half-open",
});

/// How provider failures are classified.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Classification {
    /// LiteLLM's rules.
    #[default]
    LiteLlm,
    /// DeltaLLM's rules.
    DeltaLlm,
}

name_table!(Classification {
    LiteLlm => "litellm",
    DeltaLlm => "deltallm",
});

/// A named bundle of settings and policies (`router_settings.profile`); explicit settings
/// still win. The variant only names the profile: what it is (its spellings, the settings it
/// presets, the keys it reads, its policies) is its entry in the profile table,
/// [`PROFILES`](crate::profile::PROFILES).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// LiteLLM's documented rules.
    LiteLlm,
    /// DeltaLLM: half-open recovery and DeltaLLM's classification.
    DeltaLlm,
    /// What LiteLLM 1.110.2's code does where it departs from its documentation.
    LiteLlm110,
    /// Multigrid's failover and retries: the candidate walk (see [`crate::multigrid`]).
    Multigrid,
    /// Contract-aware routing with validation before acceptance (see [`crate::contract`]).
    Contract,
    /// The Portkey AI gateway 1.15.2's fallback strategy and retries (see [`crate::portkey`]).
    Portkey,
}

/// `portkey_strategy`: the Portkey gateway's `strategy.mode` (see [`crate::portkey`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PortkeyStrategy {
    /// `fallback`: the targets in order, the next after a failure.
    #[default]
    Fallback,
    /// `loadbalance`: one target picked at random by `weight`, never another.
    Loadbalance,
}

name_table!(PortkeyStrategy {
    Fallback => "fallback",
    Loadbalance => "loadbalance",
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_tables_round_trip_and_every_spelling_parses() {
        macro_rules! check {
            ($ty:ident) => {
                for value in $ty::ALL {
                    assert_eq!($ty::from_name(value.as_str()), Some(value));
                }
                for name in $ty::NAMES {
                    assert!($ty::from_name(name).is_some(), "{name}");
                }
            };
        }
        check!(RoutingStrategyName);
        check!(Recovery);
        check!(Classification);
        check!(PortkeyStrategy);
        assert_eq!(Recovery::choices(), "ttl or half_open");
        assert_eq!(RoutingStrategyName::ALL.len(), 8);
        assert_eq!(RoutingStrategyName::NAMES.len(), 10);
    }
}
