use super::super::super::syntax::is_uid;
use super::super::scan::split_indent;
use super::super::uid_lines::uid_numbers;
use crate::snapshot::tree::NodeKind;

use super::*;
use crate::test_support::XorShift;

/// Random attribute tails and names: mostly plain lists, with the tokens that make a tail
/// not plain (quotes in values and names, line breaks, stray `=`, keys that are not keys, the
/// DevTools suffix in and out of place).
fn random_piece(rng: &mut XorShift) -> String {
    const TOKENS: &[&str] = &[
        " level=\"1\"",
        " focusable",
        " disableable disabled",
        " url=\"http://h/p?a=b c\"",
        " value=\"\"",
        " description=\"say \"hi\"\"",
        " value=\"a\nb\"",
        " url=\"a\nb\"",
        " k=v",
        " Key",
        " x-y_2",
        " é",
        "\"",
        " ",
        "=",
        "\n",
        "a",
        " [selected in the DevTools Elements panel]",
    ];
    let mut piece = String::new();
    if rng.below(2) == 0 {
        // A name and its closing quote.
        for _ in 0..rng.below(3) {
            piece.push_str(rng.pick(&["a", "b c", "\"", " x=\"", "\n"]));
        }
        piece.push('"');
    }
    for _ in 0..rng.below(5) {
        let plain = rng.below(3) != 0;
        piece.push_str(if plain {
            rng.pick(TOKENS.get(..5).unwrap_or(TOKENS))
        } else {
            rng.pick(TOKENS)
        });
    }
    if rng.below(8) == 0 {
        piece.push_str(DEVTOOLS_SELECTED);
    }
    piece
}

/// The one-pass reads of a line's indent and uid read what the token rules say.
#[test]
fn indents_and_uids_read_as_their_rules_say() {
    let mut rng = XorShift(0x1d_e47);
    for case in 0..20_000 {
        let mut line = " ".repeat(rng.below(40) as usize);
        for _ in 0..rng.below(5) {
            line.push_str(rng.pick(&["1", "0", "_", " ", "x", "é", "99999999999", "\""]));
        }
        let indent = line.bytes().take_while(|&b| b == b' ').count();
        assert_eq!(split_indent(&line).0, indent, "case {case}: {line:?}");
        let after = line.trim_start_matches(' ');
        let uid = after.split(' ').next().unwrap_or("");
        let expected = is_uid(uid).then(|| {
            let number = |d: &str| {
                d.bytes().fold(0u64, |n, b| {
                    n.saturating_mul(10).saturating_add(u64::from(b - b'0'))
                })
            };
            let (prefix, counter) = uid.split_once('_').unwrap_or_default();
            (uid.len(), number(prefix), number(counter))
        });
        assert_eq!(
            uid_numbers(after.as_bytes()),
            expected,
            "case {case}: {line:?}"
        );
    }
}

/// The forward reading of plain tails reads what the general one does, for names and
/// attribute lists alike, and plain tails come up often.
#[test]
fn plain_tails_read_as_the_general_reading_reads_them() {
    let mut rng = XorShift(0x91a1_7a11);
    let (mut plain_names, mut plain_lists) = (0, 0);
    for case in 0..20_000 {
        let piece = random_piece(&mut rng);
        let piece = piece.as_str();
        let general = general_name_close(piece, 0);
        assert_eq!(raw_name_close(piece, 0), general, "case {case}: {piece:?}");
        // Read into a node, or the node left as it was.
        let mut read = Node::new(NodeKind::Element, None);
        let close = read_plain_name(&mut read, piece);
        assert_eq!(close, plain_name_close(piece), "case {case}: {piece:?}");
        if close.is_none() {
            assert!(
                read.attrs.is_empty() && !read.devtools_selected,
                "case {case}"
            );
        }
        if let Some(close) = close {
            plain_names += 1;
            let mut starts = Vec::new();
            assert_eq!(
                raw_name_close_keeping(piece, &mut starts),
                Some(close),
                "case {case}: {piece:?}"
            );
            let (mut fast, mut slow) = (
                Node::new(NodeKind::Element, None),
                Node::new(NodeKind::Element, None),
            );
            assert_eq!(read_plain_name(&mut fast, piece), Some(close));
            parse_raw_attrs_after(&mut slow, piece, close, &starts);
            assert_eq!(fast.attrs, slow.attrs, "case {case}: {piece:?}");
            assert_eq!(
                fast.devtools_selected, slow.devtools_selected,
                "case {case}"
            );
        }
        assert_eq!(
            attrs_close(piece),
            general_attrs_close(piece),
            "case {case}: {piece:?}"
        );
        let (mut fast, mut slow) = (
            Node::new(NodeKind::Element, None),
            Node::new(NodeKind::Element, None),
        );
        parse_raw_attrs(&mut fast, piece);
        general_raw_attrs(&mut slow, piece);
        assert_eq!(fast.attrs, slow.attrs, "case {case}: {piece:?}");
        assert_eq!(
            fast.devtools_selected, slow.devtools_selected,
            "case {case}"
        );
        plain_lists += usize::from(is_plain(piece));
    }
    assert!(
        plain_names > 3000 && plain_lists > 3000,
        "{plain_names} {plain_lists}"
    );
}
