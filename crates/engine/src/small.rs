//! A small set of deployment or group indices that lives on the stack until it outgrows
//! eight entries: the router keeps several per request (groups tried, deployments tried,
//! candidates), and allocating each one was measurable in `routersim bench`.

/// Up to eight indices inline, then a heap spill.
#[derive(Clone, Debug, Default)]
pub(crate) struct Indices {
    len: usize,
    inline: [usize; 8],
    spill: Vec<usize>,
}

impl Indices {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn push(&mut self, value: usize) {
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

    pub(crate) fn as_slice(&self) -> &[usize] {
        if self.len <= self.inline.len() {
            &self.inline[..self.len]
        } else {
            &self.spill
        }
    }

    pub(crate) fn contains(&self, value: &usize) -> bool {
        self.as_slice().contains(value)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn last(&self) -> Option<&usize> {
        self.as_slice().last()
    }

    pub(crate) fn clear(&mut self) {
        self.len = 0;
        self.spill.clear();
    }

    pub(crate) fn extend(&mut self, values: impl IntoIterator<Item = usize>) {
        for v in values {
            self.push(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Indices;

    #[test]
    fn spills_past_eight_and_keeps_order() {
        let mut set = Indices::new();
        set.extend(0..12);
        assert_eq!(set.as_slice(), (0..12).collect::<Vec<_>>().as_slice());
        assert!(set.contains(&11) && !set.contains(&12));
        set.clear();
        assert!(set.is_empty());
        set.push(3);
        assert_eq!(set.as_slice(), &[3]);
    }
}
