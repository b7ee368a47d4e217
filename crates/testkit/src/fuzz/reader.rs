//! The byte reader the fuzz bodies decode their inputs with.

/// Reads fuzz input front to back; once it runs out, every read gives zeros.
pub(crate) struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader over `data`.
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Self { data }
    }

    /// The next byte.
    pub(crate) fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// The next `N` bytes.
    pub(crate) fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        for b in &mut out {
            *b = self.byte();
        }
        out
    }

    /// The next 8 bytes as a little-endian `i64`.
    pub(crate) fn i64(&mut self) -> i64 {
        i64::from_le_bytes(self.array())
    }

    /// What is left.
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.data
    }
}
