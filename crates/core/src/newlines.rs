//! The offsets of `\n` in a text, found a block at a time: the block's line ends as a bit mask
//! (eight bytes tested at once in a machine word, no branch per byte), then one step per line
//! end rather than per byte. Snapshot lines are short (40–60 bytes), so a search per line
//! (`split('\n')`, `find`) pays a call and its start-up on every line; the parser's line index
//! and the result's section split both walk every line end of a page, and share this scan.

/// Bytes tested per block (one bit each in the mask).
const BLOCK: usize = 64;

/// Iterator over the offsets of `\n` in `bytes`, in order.
#[derive(Debug, Clone)]
pub struct Newlines<'a> {
    bytes: &'a [u8],
    /// Offset of the block whose line ends `mask` holds.
    block: usize,
    /// Line ends of that block not yet yielded (bit `k`: offset `block + k`).
    mask: u64,
    /// Offset of the next block to read.
    next: usize,
}

/// The offsets of `\n` in `bytes`.
pub fn newlines(bytes: &[u8]) -> Newlines<'_> {
    Newlines {
        bytes,
        block: 0,
        mask: 0,
        next: 0,
    }
}

impl Iterator for Newlines<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            let rest = self.bytes.get(self.next..).filter(|r| !r.is_empty())?;
            // A whole block as an array: its eight words are tested with no branch per byte.
            let (mask, len) = match rest.first_chunk::<BLOCK>() {
                Some(block) => (block_line_ends(block), BLOCK),
                None => (line_ends(rest), rest.len()),
            };
            self.mask = mask;
            self.block = self.next;
            self.next += len;
        }
        let k = self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        Some(self.block + k)
    }
}

/// Bit `k` set where `block[k]` is `\n`, a word of eight bytes at a time. Portable code: the
/// byte-wise test of [`line_ends`] compiles to a slow gather of 64 lanes on baseline x86-64,
/// where this takes about half the time.
#[inline(always)]
fn block_line_ends(block: &[u8; BLOCK]) -> u64 {
    // Byte k's low bit to bit k of the top byte, in a product without carries.
    const GATHER: u64 = 0x0102_0408_1020_4080;
    let mut mask = 0u64;
    for (w, word) in block.chunks_exact(8).enumerate() {
        let word = word
            .first_chunk::<8>()
            .map_or(0, |b| u64::from_le_bytes(*b));
        mask |= ((bytes_equal(word, b'\n') >> 7).wrapping_mul(GATHER) >> 56) << (8 * w);
    }
    mask
}

/// `0x80` in each byte of `word` (eight bytes, little-endian) equal to `b`, `0` in the others:
/// exact, no carry from one byte to the next.
#[inline(always)]
pub fn bytes_equal(word: u64, b: u8) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let x = word ^ u64::from_le_bytes([b; 8]);
    !(((x & LOW7) + LOW7) | x | LOW7)
}

/// Bit `k` set where `block[k]` is `\n` (`block` at most 64 bytes): the last, short block.
#[inline(always)]
fn line_ends(block: &[u8]) -> u64 {
    block
        .iter()
        .enumerate()
        .fold(0u64, |mask, (k, &b)| mask | (u64::from(b == b'\n') << k))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(text: &str) -> Vec<usize> {
        text.match_indices('\n').map(|(at, _)| at).collect()
    }

    #[test]
    fn finds_every_line_end_across_block_edges() {
        // Line ends at every offset around the block edges, runs of them, none, the last byte.
        let mut texts: Vec<String> = vec![String::new(), "\n".into(), "no line end".into()];
        for len in [1, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129] {
            for at in 0..len {
                let mut t: String = "x".repeat(len);
                t.replace_range(at..=at, "\n");
                texts.push(t);
            }
            texts.push("\n".repeat(len));
        }
        texts.push("é\nü\n€\n😀\n".repeat(20));
        for text in &texts {
            assert_eq!(newlines(text.as_bytes()).collect::<Vec<_>>(), naive(text));
        }
    }
}
