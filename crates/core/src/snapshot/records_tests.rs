use super::period::{repeat_end, within_one_edit};
use super::*;

#[test]
fn one_edit_apart() {
    let t = [Some("checkbox"), Some("text"), Some("link"), Some("button")];
    let v =
        |x: &[&'static str]| -> Vec<Shape<&'static str>> { x.iter().map(|s| Some(*s)).collect() };
    assert!(within_one_edit(&t, &t));
    assert!(within_one_edit(
        &v(&["checkbox", "text", "text", "button"]),
        &t
    ));
    assert!(within_one_edit(&v(&["checkbox", "text", "button"]), &t));
    assert!(within_one_edit(
        &v(&["checkbox", "text", "link", "image", "button"]),
        &t
    ));
    assert!(!within_one_edit(
        &v(&["checkbox", "link", "text", "image"]),
        &t
    ));
    assert!(!within_one_edit(&v(&["checkbox", "button"]), &t));
}

#[test]
fn a_run_starts_where_its_records_start() {
    let v =
        |x: &[&'static str]| -> Vec<Shape<&'static str>> { x.iter().map(|s| Some(*s)).collect() };
    // Cards: link, link, text, checkbox, button; found from the checkbox (the first role
    // that occurs once per card), three cards before a heading.
    let card = ["link", "link", "text", "checkbox", "button"];
    let mut shapes: Vec<Shape<&str>> = vec![None];
    for _ in 0..3 {
        shapes.extend(v(&card));
    }
    shapes.push(None);
    let (mut starts, mut end) = (vec![4, 9], 14);
    align_start(&shapes, 0, &mut starts, &mut end);
    assert_eq!((starts, end), (vec![1, 6], 16));
    // Nothing before the run may be taken from an earlier run (`floor`): the start of a
    // card dangling after it moves the records later instead.
    let (mut starts, mut end) = (vec![4, 9], 14);
    align_start(&shapes, 4, &mut starts, &mut end);
    assert_eq!((starts, end), (vec![6, 11], 16));
    // An inbox: a toolbar button taken as the first row's head, the last row's button
    // left over after the run: every row starts one later.
    let mut shapes = v(&["button", "button"]);
    for _ in 0..3 {
        shapes.extend(v(&["checkbox", "text", "text", "button"]));
    }
    let (mut starts, mut end) = (vec![1, 5, 9], 13);
    align_start(&shapes, 0, &mut starts, &mut end);
    assert_eq!((starts, end), (vec![2, 6, 10], 14));
    // A settings list: label, checkbox, three times, then a section title. The title
    // repeats a record's start, but a row opens with its label: nothing moves.
    let mut shapes = v(&["text"]);
    for _ in 0..3 {
        shapes.extend(v(&["text", "checkbox"]));
    }
    shapes.extend(v(&["text", "text", "combobox"]));
    let (mut starts, mut end) = (vec![1, 3, 5], 7);
    align_start(&shapes, 0, &mut starts, &mut end);
    assert_eq!((starts, end), (vec![1, 3, 5], 7));
}

#[test]
fn rows_whose_roles_recur_are_found_by_exact_repetition() {
    let v =
        |x: &[&'static str]| -> Vec<Shape<&'static str>> { x.iter().map(|s| Some(*s)).collect() };
    // A settings row: its text, a switch and its label, a second switch and its label.
    let row = ["text", "switch", "text", "switch", "text"];
    let mut shapes = v(&["heading"]);
    for _ in 0..4 {
        shapes.extend(v(&row));
    }
    shapes.push(None);
    assert_eq!(records_at(&shapes, 1, 5), None);
    assert_eq!(
        exact_records_at(&shapes, 1, 5, repeat_end(&shapes, 1, 5)),
        Some((vec![1, 6, 11, 16], 21))
    );
    // Links through prose, or a run of one repeated pair, are not rows of this kind.
    let prose = v(&["text", "link", "text", "link", "text"].repeat(4));
    assert_eq!(
        exact_records_at(&prose, 0, 5, repeat_end(&prose, 0, 5)),
        None
    );
    let pairs = v(&["text", "switch"].repeat(6));
    assert_eq!(
        exact_records_at(&pairs, 0, 4, repeat_end(&pairs, 0, 4)),
        None
    );
}

/// The ends kept per period answer as a scan from each sibling would, for a search moving
/// forward by one and by jumps, over breaks and over repeats of every period.
#[test]
fn repeat_ends_kept_forward_match_a_fresh_scan() {
    let roles = ["text", "link", "button", "checkbox"];
    let mut seed = 7u64;
    let mut shapes: Vec<Shape<&str>> = Vec::new();
    for k in 0..400 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let pick = (seed >> 33) as usize;
        // Stretches that repeat with a period of 3, 5 or 7, then noise and breaks.
        let shape = match (k / 60) % 3 {
            0 => Some(roles[(k % 3) % roles.len()]),
            1 if !pick.is_multiple_of(11) => Some(roles[(k % 5) % roles.len()]),
            _ => (!pick.is_multiple_of(5)).then(|| roles[pick % roles.len()]),
        };
        shapes.push(shape);
    }
    let mut ends = RepeatEnds::new();
    let mut i = 0;
    let mut step = 0;
    while i < shapes.len() {
        for p in MIN_PERIOD..=MAX_PERIOD {
            assert_eq!(ends.at(&shapes, i, p), repeat_end(&shapes, i, p), "{i} {p}");
        }
        step += 1;
        i += if step % 4 == 0 { 9 } else { 1 };
    }
}

/// `tables_of` compares roles by their shapes' codes: it finds the tables a comparison of
/// the role strings finds (shapes unknown), a role `text` apart from role-less text.
#[test]
fn tables_by_role_codes_match_tables_by_role_strings() {
    use super::super::tree::Node;
    let rows: &[&[&str]] = &[
        &["button", "", "link"],
        &["button", "", "link"],
        &["button", "text", "link"],
        &["button", "", "link"],
        &["button", "", "link"],
        &["button", "", "link"],
        &["button", "", "checkbox"],
        &["button", "", "checkbox"],
        &["button", "", "checkbox"],
    ];
    let uids: Vec<String> = (0..rows.len() * 3)
        .map(|k| format!("1_{}", k + 2))
        .collect();
    let mut tree = Tree::default();
    let parent = tree.push(Node::new(NodeKind::Element, None), None);
    let mut records: Vec<Vec<usize>> = Vec::new();
    for (r, roles) in rows.iter().enumerate() {
        let mut record = Vec::new();
        for (c, role) in roles.iter().enumerate() {
            let mut node = Node::new(NodeKind::Element, None);
            node.role = role;
            node.uid = &uids[r * 3 + c];
            node.name = Some(format!("cell {r} {c}").into());
            record.push(tree.push(node, Some(parent)));
        }
        records.push(record);
    }
    tree.seal();
    let mut codes = RoleCodes::default();
    let coded: Vec<Vec<Shape<RoleCode>>> = records
        .iter()
        .map(|r| {
            r.iter()
                .map(|&c| shape_of(&tree, c).map(|role| codes.code(role)))
                .collect()
        })
        .collect();
    let unknown: Vec<Vec<Shape<RoleCode>>> = records.iter().map(|r| vec![None; r.len()]).collect();
    let records: Vec<&[usize]> = records.iter().map(Vec::as_slice).collect();
    let by_code = tables_of(
        &tree,
        &records,
        &coded.iter().map(Vec::as_slice).collect::<Vec<_>>(),
        20,
    );
    let by_string = tables_of(
        &tree,
        &records,
        &unknown.iter().map(Vec::as_slice).collect::<Vec<_>>(),
        20,
    );
    assert_eq!(by_code, by_string);
    // Rows 3..6 (after the row with a role `text`) and 6..9 (another shape).
    let firsts: Vec<usize> = by_code
        .iter()
        .filter_map(|t| t.items.first().copied())
        .collect();
    assert_eq!(firsts, vec![records[3][0], records[6][0]]);
}

#[test]
fn finds_records_with_an_optional_node() {
    let row = [Some("checkbox"), Some("text"), Some("link"), Some("button")];
    let mut shapes: Vec<Shape<&str>> = vec![None];
    for k in 0..6 {
        shapes.extend(row);
        if k == 2 {
            shapes.push(Some("image"));
        }
    }
    shapes.push(Some("text"));
    // Six records (the third with an extra image), the fourth starting at 14.
    assert_eq!(
        records_at(&shapes, 1, 4),
        Some((vec![1, 5, 9, 14, 18, 22], 26))
    );
    // Two records are not a run; a break (None) ends one.
    let two: Vec<Shape<&str>> = row.iter().chain(&row).copied().collect();
    assert!(records_at(&two, 0, 4).is_none());
    let mut broken = two.clone();
    broken.push(None);
    broken.extend(row);
    assert!(records_at(&broken, 0, 4).is_none());
}
