//! A fixed-capacity ring buffer that keeps the most recent log lines.

#[derive(Debug)]
pub struct RingBuffer<T> {
    slots: Vec<Option<T>>,
    head: usize,
    len: usize,
}

impl<T: Clone> RingBuffer<T> {
    pub fn with_capacity(capacity: usize) -> Self {
        assert!(capacity > 0, "capacity must be positive");
        RingBuffer { slots: vec![None; capacity], head: 0, len: 0 }
    }

    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends an item, overwriting the oldest one when full.
    pub fn push(&mut self, item: T) {
        let cap = self.capacity();
        let tail = (self.head + self.len) % cap;
        self.slots[tail] = Some(item);
        if self.len == cap {
            self.head = (self.head + 1) % cap;
        } else {
            self.len += 1;
        }
    }

    /// The `i`-th oldest item still held.
    pub fn get(&self, i: usize) -> Option<&T> {
        if i >= self.len {
            return None;
        }
        self.slots[self.head + i % self.capacity()].as_ref()
    }

    /// Items from oldest to newest.
    pub fn to_vec(&self) -> Vec<T> {
        (0..self.len).filter_map(|i| self.get(i).cloned()).collect()
    }

    /// The newest `n` items, oldest first.
    pub fn last(&self, n: usize) -> Vec<T> {
        let skip = self.len.saturating_sub(n);
        (skip..self.len).filter_map(|i| self.get(i).cloned()).collect()
    }

    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = None);
        self.head = 0;
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_items_in_order_before_wrapping() {
        let mut rb = RingBuffer::with_capacity(3);
        rb.push("a");
        rb.push("b");
        assert_eq!(rb.to_vec(), vec!["a", "b"]);
    }

    #[test]
    fn keeps_most_recent_after_wrapping() {
        let mut rb = RingBuffer::with_capacity(3);
        for line in ["l1", "l2", "l3", "l4", "l5"] {
            rb.push(line);
        }
        assert_eq!(rb.len(), 3);
        assert_eq!(rb.to_vec(), vec!["l3", "l4", "l5"]);
        assert_eq!(rb.last(2), vec!["l4", "l5"]);
    }

    #[test]
    fn get_out_of_range_is_none() {
        let mut rb = RingBuffer::with_capacity(2);
        rb.push(1);
        assert_eq!(rb.get(1), None);
    }

    #[test]
    fn clear_empties() {
        let mut rb = RingBuffer::with_capacity(2);
        rb.push(1);
        rb.clear();
        assert!(rb.is_empty());
    }
}
