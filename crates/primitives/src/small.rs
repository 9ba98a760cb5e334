//! Small sets of deployment or group indices that live inline until they outgrow a few
//! entries: the router keeps several per request (groups tried, deployments tried,
//! candidates), and allocating each one was measurable in `routersim bench`. [`Indices`] is
//! for the stack (eight `usize`s inline); [`Tried`] for what a request keeps while it is in
//! flight (five `u32`s in 32 bytes: every in-flight request pays for it).

/// Up to eight indices inline, then a heap spill.
#[derive(Clone, Debug, Default)]
pub struct Indices {
    len: usize,
    inline: [usize; 8],
    spill: Vec<usize>,
}

impl Indices {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `value` (duplicates are kept).
    pub fn push(&mut self, value: usize) {
        if self.len < self.inline.len() {
            self.inline[self.len] = value;
        } else {
            if self.spill.is_empty() {
                self.spill.extend_from_slice(&self.inline);
            }
            self.spill.push(value);
        }
        self.len += 1;
    }

    /// The indices, in push order.
    pub fn as_slice(&self) -> &[usize] {
        if self.len <= self.inline.len() {
            &self.inline[..self.len]
        } else {
            &self.spill
        }
    }

    /// Whether nothing was pushed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Empties the set, keeping its spill allocation.
    pub fn clear(&mut self) {
        self.len = 0;
        self.spill.clear();
    }

    /// Appends every value.
    pub fn extend(&mut self, values: impl IntoIterator<Item = usize>) {
        for v in values {
            self.push(v);
        }
    }
}

/// Groups or deployments a request has tried: kept for the request's whole life (across
/// every await), so it is small: five indices inline in 32 bytes, then a heap spill. Indices
/// are stored as `u32` (a config has far fewer deployments).
#[derive(Clone, Debug)]
pub enum Tried {
    /// Up to five indices, the first `len` of `items` in use.
    Inline {
        /// How many of `items` are in use.
        len: u8,
        /// The indices.
        items: [u32; 5],
    },
    /// More than five.
    Spilled(Vec<u32>),
}

impl Default for Tried {
    fn default() -> Self {
        Self::Inline {
            len: 0,
            items: [0; 5],
        }
    }
}

impl Tried {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    fn slice(&self) -> &[u32] {
        match self {
            Self::Inline { len, items } => &items[..usize::from(*len)],
            Self::Spilled(v) => v,
        }
    }

    /// Appends `value` (duplicates are kept).
    pub fn push(&mut self, value: usize) {
        let value = u32::try_from(value).unwrap_or(u32::MAX);
        match self {
            Self::Inline { len, items } if usize::from(*len) < items.len() => {
                items[usize::from(*len)] = value;
                *len += 1;
            }
            Self::Inline { items, .. } => {
                let mut spilled = items.to_vec();
                spilled.push(value);
                *self = Self::Spilled(spilled);
            }
            Self::Spilled(v) => v.push(value),
        }
    }

    /// Whether `value` is in.
    pub fn contains(&self, value: &usize) -> bool {
        u32::try_from(*value).is_ok_and(|v| self.slice().contains(&v))
    }

    /// Pushes `value` unless it is already in (by value: a caller's local is not borrowed,
    /// so an async caller need not keep it across its next await).
    pub fn insert(&mut self, value: usize) {
        if !self.contains(&value) {
            self.push(value);
        }
    }

    /// The last index pushed.
    pub fn last(&self) -> Option<usize> {
        self.slice().last().map(|&v| v as usize)
    }

    /// The indices, in push order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.slice().iter().map(|&v| v as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::{Indices, Tried};

    #[test]
    fn tried_spills_past_five_and_keeps_order() {
        assert_eq!(std::mem::size_of::<Tried>(), 32);
        let mut set = Tried::new();
        assert_eq!(set.last(), None);
        for i in 0..12 {
            assert!(!set.contains(&i));
            set.push(i);
            assert!(set.contains(&i));
            assert_eq!(set.last(), Some(i));
        }
        assert_eq!(set.slice(), (0..12).collect::<Vec<u32>>().as_slice());
        assert!(!set.contains(&12));
    }

    #[test]
    fn spills_past_eight_and_keeps_order() {
        let mut set = Indices::new();
        set.extend(0..12);
        assert_eq!(set.as_slice(), (0..12).collect::<Vec<_>>().as_slice());
        assert!(set.as_slice().contains(&11) && !set.as_slice().contains(&12));
        set.clear();
        assert!(set.is_empty());
        set.push(3);
        assert_eq!(set.as_slice(), &[3]);
    }
}
