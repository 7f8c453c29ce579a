//! [`Slab`]: values addressed by a small index, with a free list so that indices are
//! recycled (last freed, first reused) and the steady state allocates nothing. For state
//! that lives a while and is named by index in frames or timer ids: RDS's messages at the
//! sender and the receiver, PL2's pending timers.

/// Values by index; a removed value's index is handed out again by the next insert.
#[derive(Clone, Debug)]
pub struct Slab<T> {
    items: Vec<Option<T>>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab { items: Vec::new(), free: Vec::new() }
    }
}

impl<T> Slab<T> {
    /// Stores `v` under the most recently freed index, or a new one; returns it.
    pub fn insert(&mut self, v: T) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.items[i as usize] = Some(v);
                i
            }
            None => {
                self.items.push(Some(v));
                self.items.len() as u32 - 1
            }
        }
    }

    /// Takes the value at `i` out and frees its index; `None` if there is none.
    pub fn remove(&mut self, i: u32) -> Option<T> {
        let v = self.items.get_mut(i as usize)?.take()?;
        self.free.push(i);
        Some(v)
    }

    /// Values stored.
    pub fn len(&self) -> usize {
        self.items.len() - self.free.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: u32) -> Option<&T> {
        self.items.get(i as usize)?.as_ref()
    }

    pub fn get_mut(&mut self, i: u32) -> Option<&mut T> {
        self.items.get_mut(i as usize)?.as_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_freed_index_is_reused_first() {
        let mut s = Slab::default();
        let (a, b, c) = (s.insert('a'), s.insert('b'), s.insert('c'));
        assert_eq!((a, b, c), (0, 1, 2));
        assert_eq!((s.remove(a), s.remove(c)), (Some('a'), Some('c')));
        assert_eq!(s.remove(c), None, "removing twice frees nothing");
        assert_eq!(s.get(c), None);
        assert_eq!(s.insert('d'), c);
        assert_eq!(s.insert('e'), a);
        assert_eq!(s.insert('f'), 3);
        assert_eq!(s.get_mut(3).copied(), Some('f'));
        assert_eq!(s.get(b), Some(&'b'));
    }
}
