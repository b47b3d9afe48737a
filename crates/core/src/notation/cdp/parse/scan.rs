//! The parser's reading of lines and bytes: the line index, indents and byte searches, eight
//! bytes at a time, each counting what it looked at in tests (reading stays linear).

#[cfg(test)]
thread_local! {
    /// Lines whose completeness the scan read (a test counts them).
    pub(in crate::notation::cdp) static COMPLETE_ASKED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Bytes the parser's searches looked at (a test counts them: reading stays linear).
    pub(in crate::notation::cdp) static SCANNED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Counts `bytes` looked at by a search, in tests (`SCANNED`); nothing otherwise.
#[inline]
pub(super) fn scanned(bytes: usize) {
    #[cfg(test)]
    SCANNED.with(|n| n.set(n.get() + bytes));
    #[cfg(not(test))]
    let _ = bytes;
}

/// Byte ranges of the lines of `body`, so multi-line names can be borrowed from the input.
pub(super) struct LineIndex<'a> {
    pub(super) text: &'a str,
    starts: Vec<usize>,
    ends: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub(super) fn new(text: &'a str, body: &'a str) -> LineIndex<'a> {
        let bytes = body.as_bytes();
        scanned(bytes.len());
        // About one line in 32 bytes or more: few regrowths.
        let mut starts = Vec::with_capacity(bytes.len() / 32 + 2);
        let mut ends = Vec::with_capacity(bytes.len() / 32 + 2);
        starts.push(0);
        for at in crate::newlines::newlines(bytes) {
            ends.push(at);
            starts.push(at + 1);
        }
        ends.push(body.len());
        LineIndex { text, starts, ends }
    }

    pub(super) fn len(&self) -> usize {
        self.starts.len()
    }

    pub(super) fn line(&self, i: usize) -> Option<&'a str> {
        self.text.get(*self.starts.get(i)?..*self.ends.get(i)?)
    }

    pub(super) fn start(&self, i: usize) -> usize {
        self.starts.get(i).copied().unwrap_or(self.text.len())
    }

    pub(super) fn end(&self, i: usize) -> usize {
        self.ends.get(i).copied().unwrap_or(self.text.len())
    }
}

pub(super) fn split_indent(line: &str) -> (usize, &str) {
    // Eight bytes at a time: nodes sit tens of spaces deep.
    let bytes = line.as_bytes();
    let mut indent = 0;
    while let Some(word) = bytes.get(indent..).and_then(|rest| rest.first_chunk::<8>()) {
        let other = u64::from_le_bytes(*word) ^ u64::from_le_bytes([b' '; 8]);
        if other != 0 {
            // The lowest byte that is not a space.
            indent += other.trailing_zeros() as usize / 8;
            break;
        }
        indent += 8;
    }
    // The last bytes (none when the loop found the end of the indent).
    let indent = indent
        + bytes
            .get(indent..)
            .unwrap_or(&[])
            .iter()
            .position(|&b| b != b' ')
            .unwrap_or(bytes.len().saturating_sub(indent));
    scanned(indent + 1);
    (indent, line.get(indent..).unwrap_or(""))
}

/// Byte offset of the first `b` (an ASCII byte, so a char boundary) in `s` ([`find_either`]
/// of one byte).
pub(super) fn find_byte(s: &str, b: u8) -> Option<usize> {
    find_either(s.as_bytes(), 0, b, b)
}

/// Byte offset of the last `b` (an ASCII byte) in `s`: eight bytes at a time from the end (names
/// and values run to tens of bytes), then the rest one by one.
pub(super) fn rfind_byte(s: &str, b: u8) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut end = bytes.len();
    let at = loop {
        let Some(word) = end.checked_sub(8).and_then(|from| bytes.get(from..end)) else {
            break bytes
                .get(..end)
                .and_then(|rest| rest.iter().rposition(|&c| c == b));
        };
        let word = word
            .first_chunk::<8>()
            .map_or(0, |w| u64::from_le_bytes(*w));
        let hits = crate::newlines::bytes_equal(word, b);
        if hits != 0 {
            // The highest hit is the last byte equal to `b`.
            break Some(end - 8 + (63 - hits.leading_zeros() as usize) / 8);
        }
        end -= 8;
    };
    scanned(at.map_or(s.len(), |p| s.len() - p));
    at
}

/// The first `a` or `b` (ASCII bytes) in `bytes` from `from` on: eight bytes at a time (values
/// and names run to tens of bytes), then the rest one by one.
pub(super) fn find_either(bytes: &[u8], from: usize, a: u8, b: u8) -> Option<usize> {
    let mut at = from;
    let found = loop {
        let Some(word) = bytes.get(at..).and_then(|rest| rest.first_chunk::<8>()) else {
            break bytes
                .get(at..)
                .and_then(|rest| rest.iter().position(|&c| c == a || c == b))
                .map(|p| at + p);
        };
        let word = u64::from_le_bytes(*word);
        let hits = crate::newlines::bytes_equal(word, a) | crate::newlines::bytes_equal(word, b);
        if hits != 0 {
            // The lowest hit is the first byte equal to `a` or `b`.
            break Some(at + hits.trailing_zeros() as usize / 8);
        }
        at += 8;
    };
    scanned(found.map_or(bytes.len(), |f| f + 1).saturating_sub(from));
    found
}
