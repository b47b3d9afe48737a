use super::*;

#[test]
fn whitespace_collapses_but_keeps_indentation() {
    assert_eq!(whitespace("  a  b\t c \n\n\n\n  - d  \n"), "a b c\n\n  - d");
}

#[test]
fn pleasantries_go() {
    assert_eq!(pleasantries("Please pass the id."), "pass the id.");
    assert_eq!(pleasantries("Then, please, wait."), "Then, wait.");
    assert_eq!(pleasantries("Feel free to retry. Thanks!"), "retry. ");
    assert_eq!(
        pleasantries("Done thanks to caching."),
        "Done thanks to caching."
    );
}

#[test]
fn leaders_go_only_at_sentence_start() {
    assert_eq!(leaders("You can adjust it."), "adjust it.");
    assert_eq!(leaders("- You can branch"), "- branch");
    assert_eq!(leaders("If set, you can skip"), "If set, you can skip");
    assert_eq!(
        leaders("Use this tool to read files."),
        "Use to read files."
    );
    assert_eq!(leaders("This tool returns data."), "returns data.");
    assert_eq!(leaders("This tool is fast."), "This tool is fast.");
    assert_eq!(
        leaders("This tool will not delete."),
        "This tool will not delete."
    );
}

#[test]
fn this_verb_leader_table() {
    let cases: [(&str, &str); 9] = [
        (
            "Loads it. This includes names.",
            "Loads it. Includes names.",
        ),
        ("This excludes performance.", "Excludes performance."),
        (
            "Reads. This applies only to files.",
            "Reads. Applies only to files.",
        ),
        // Must not fire: a noun ending in s, a copula, not a sentence start, a negation.
        ("This process repeats.", "This process repeats."),
        ("This status changes.", "This status changes."),
        ("This is more efficient.", "This is more efficient."),
        ("This has no effect.", "This has no effect."),
        ("Reads what this includes.", "Reads what this includes."),
        ("This does not wait.", "This does not wait."),
    ];
    for (text, want) in cases {
        assert_eq!(leaders(text), want, "{text:?}");
    }
}

#[test]
fn purpose_used_to_table() {
    let cases: [(&str, &str); 8] = [
        (
            "Element description used to obtain permission",
            "Element description to obtain permission",
        ),
        (
            "the token used to sign requests",
            "the token to sign requests",
        ),
        // Must not fire: a verb phrase, a habit, an adverb, a negation, a sentence start.
        (
            "Annotations can be used to provide metadata",
            "Annotations can be used to provide metadata",
        ),
        ("It is used to sign", "It is used to sign"),
        ("We used to poll", "We used to poll"),
        (
            "the flag commonly used to debug",
            "the flag commonly used to debug",
        ),
        ("the key used to not cache", "the key used to not cache"),
        ("Used to sign.", "Used to sign."),
    ];
    for (text, want) in cases {
        assert_eq!(purpose_used_to(text), want, "{text:?}");
    }
}

#[test]
fn note_prefix_table() {
    let cases: [(&str, &str); 5] = [
        (
            "Reads. Note: args cannot be used.",
            "Reads. Args cannot be used.",
        ),
        ("Note that the page reloads.", "The page reloads."),
        // Must not fire: not a sentence start, or another word.
        ("Adds a note: it stays.", "Adds a note: it stays."),
        (
            "Reads the note that follows.",
            "Reads the note that follows.",
        ),
        ("IMPORTANT: never close it.", "IMPORTANT: never close it."),
    ];
    for (text, want) in cases {
        assert_eq!(note_prefix(text), want, "{text:?}");
    }
}

#[test]
fn either_or_table() {
    let cases: [(&str, &str); 6] = [
        (
            "Provide either text or regex, not both.",
            "Provide text or regex, not both.",
        ),
        ("Returns either data or a link.", "Returns data or a link."),
        // Must not fire: no "or" in the sentence, a negation before, "either way".
        ("Use either. Or not.", "Use either. Or not."),
        (
            "Does not accept either text or regex.",
            "Does not accept either text or regex.",
        ),
        ("Works either way or not", "Works either way or not"),
        ("Either text or regex.", "Either text or regex."),
    ];
    for (text, want) in cases {
        assert_eq!(either_or(text), want, "{text:?}");
    }
}

#[test]
fn list_of_table() {
    let cases: [(&str, &str); 7] = [
        ("Returns a list of pages", "Returns pages"),
        ("Get the list of files changed", "Get files changed"),
        ("Get list of commits of a branch", "Get commits of a branch"),
        // Must not fire: no returning verb, an adjective between, a word that needs it.
        ("Takes a list of uids", "Takes a list of uids"),
        (
            "Returns a numbered list of requests",
            "Returns a numbered list of requests",
        ),
        (
            "Returns a list of no more than 5",
            "Returns a list of no more than 5",
        ),
        (
            "Returns the list of the pages",
            "Returns the list of the pages",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(list_of(text), want, "{text:?}");
    }
}

#[test]
fn wordy_phrases_are_replaced_whole() {
    assert_eq!(wordy_phrases("In order to wait"), "To wait");
    assert_eq!(wordy_phrases("it is able to run"), "it can run");
    assert_eq!(wordy_phrases("a large number of rows"), "many rows");
    assert_eq!(wordy_phrases("Make sure to close it"), "Ensure close it");
    assert_eq!(wordy_phrases("prior to load"), "before load");
    assert_eq!(wordy_phrases("makes sure"), "makes sure");
    assert_eq!(wordy_phrases("Load the specified file"), "Load  file");
    assert_eq!(wordy_phrases("or a specified time"), "or  time");
    assert_eq!(wordy_phrases("This helps to find"), "This helps find");
    assert_eq!(
        wordy_phrases("Sort. Defaults to size"),
        "Sort. Default size"
    );
    assert_eq!(
        wordy_phrases("Button, defaults to left"),
        "Button, default left"
    );
    // After a pronoun "defaults" is the verb of the sentence and stays.
    assert_eq!(
        wordy_phrases("If omitted, it defaults to the URL"),
        "If omitted, it defaults to the URL"
    );
    assert_eq!(
        wordy_phrases("if not specified otherwise"),
        "if not specified otherwise"
    );
}

#[test]
fn fillers_go_unless_they_qualify_a_negation_or_quantity() {
    assert_eq!(fillers("It is very fast"), "It is fast");
    assert_eq!(fillers("Simply call it"), "call it");
    assert_eq!(fillers("not just since then"), "not just since then");
    assert_eq!(fillers("not very large"), "not very large");
    assert_eq!(
        fillers("returns just the first line"),
        "returns just the first line"
    );
    assert_eq!(fillers("I think not."), "I think not.");
}

#[test]
fn articles_go_unless_they_are_labels() {
    assert_eq!(articles("The uid of an element"), "uid of element");
    assert_eq!(articles("Closes it by its index"), "Closes it by index");
    assert_eq!(articles("choose option a or b"), "choose option a or b");
    assert_eq!(articles("choose option a"), "choose option a");
    assert_eq!(articles("plan A works"), "plan A works");
    assert_eq!(articles("read a few lines"), "read a few lines");
    assert_eq!(articles("Vitamin-a pills"), "Vitamin-a pills");
    assert_eq!(articles("the other page"), "the other page");
}

#[test]
fn copulas_go_between_noun_and_predicate() {
    assert_eq!(copulas("Default is false"), "Default false");
    assert_eq!(copulas("names are resolved here"), "names resolved here");
    assert_eq!(copulas("it is fast"), "it is fast");
    assert_eq!(copulas("Is it set?"), "Is it set?");
    assert_eq!(copulas("goal is to win"), "goal is to win");
    assert_eq!(copulas("page is not closed"), "page not closed");
    assert_eq!(copulas("the timeout will be used"), "the timeout used");
    assert_eq!(copulas("code will be ignored"), "code ignored");
    assert_eq!(copulas("output will be written"), "output written");
    // "will be" only before a participle; never after a pronoun or at a start.
    assert_eq!(copulas("page will be empty"), "page will be empty");
    assert_eq!(copulas("it will be ignored"), "it will be ignored");
    assert_eq!(
        copulas("page will not be closed"),
        "page will not be closed"
    );
}

#[test]
fn final_period_only() {
    assert_eq!(final_period("One. Two."), "One. Two");
    assert_eq!(final_period("Wait..."), "Wait...");
    assert_eq!(final_period("終わり。"), "終わり");
}

#[test]
fn sentence_start_detection() {
    let text = "a. b\n- c\n2. d: e f";
    for (word, start) in [
        ("a", true),
        ("b", true),
        ("c", true),
        ("d", true),
        ("e", true),
        ("f", false),
    ] {
        let pos = text.rfind(word).unwrap();
        assert_eq!(is_sentence_start(text, pos), start, "{word}");
    }
}
