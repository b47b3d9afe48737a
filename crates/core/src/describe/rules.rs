//! The English prose rules. They run on text whose protected spans are already sentinels
//! (see `protect`), so they only ever see prose; a sentinel counts as a word.
//!
//! Every rule deletes or replaces whole words and never leaves a dangling one: a phrase is
//! matched whole or not at all, and guards keep words whose removal would change meaning
//! (a filler after a negation, an article that is really a label, a leader before "not").

use std::borrow::Cow;

use once_cell::sync::Lazy;
use regex::{Captures, Replacer};

use super::protect::{is_sentinel_range, SENTINEL_CLASS};
use super::Regex;
use crate::level::Level;

/// A replacer that appends straight into the output, so no rule allocates per match.
pub struct Append<F>(pub F);

impl<F: FnMut(&Captures, &mut String)> Replacer for Append<F> {
    fn replace_append(&mut self, caps: &Captures<'_>, dst: &mut String) {
        (self.0)(caps, dst)
    }
}

fn group<'t>(c: &Captures<'t>, i: usize) -> &'t str {
    c.get(i).map_or("", |m| m.as_str())
}

fn compile(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("description rule regex {pattern:?}: {e}"))
}

/// The next word after a matched phrase: a prose word, a number or a protected span.
fn next_word_pattern() -> String {
    format!(r"([A-Za-z][A-Za-z0-9'’\-]*|[0-9]+|[{SENTINEL_CLASS}])")
}

/// Negations and limits. A rule never removes one of these, and never removes a word that
/// qualifies one ("not just", "maybe not", "might not").
pub static LIMIT_WORDS: Lazy<Regex> = Lazy::new(|| {
    compile(
        r"(?i)(?-u:\b)(?:not|no|never|none|nor|neither|without|cannot|can't|don't|doesn't|didn't|won't|isn't|aren't|wasn't|weren't|shouldn't|mustn't|couldn't|wouldn't|only|except|must|required|at most|at least|unless|before|after|[a-z]+n't)(?-u:\b)",
    )
});

const NEGATIONS: [&str; 12] = [
    "not", "no", "never", "none", "nor", "neither", "without", "cannot", "only", "except",
    "unless", "nothing",
];

fn is_negation(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    NEGATIONS.contains(&lower.as_str()) || lower.ends_with("n't") || lower.ends_with("n’t")
}

/// The word that ends right before byte `pos` (skipping blanks), if any.
fn word_before(text: &str, pos: usize) -> &str {
    let walk_from = text.get(..pos).map_or(0, str::len);
    let head = text.get(..pos).unwrap_or("").trim_end_matches([' ', '\t']);
    let start = head
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c.is_alphanumeric() || c == '\'' || c == '’' || c == '-'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    super::walked(walk_from - start);
    head.get(start..).unwrap_or("")
}

/// Whether byte `pos` starts a sentence: text start, after `.!?:` and blanks, at a line
/// start, or right after a list marker (`- `, `* `, `1. `). Looks back only over the blanks
/// and the marker, never to the line start through prose, so a rule calling it per match stays
/// linear on a long line.
pub fn is_sentence_start(text: &str, pos: usize) -> bool {
    let head = text.get(..pos).unwrap_or("");
    let trimmed = head.trim_end_matches([' ', '\t']);
    super::walked(head.len() - trimmed.len());
    let Some(last) = trimmed.chars().next_back() else {
        return true;
    };
    let marker_start = match last {
        '\n' | '.' | '!' | '?' | ':' => return true,
        '-' | '*' | '•' => trimmed.len() - last.len_utf8(),
        ')' => {
            let body = &trimmed[..trimmed.len() - 1];
            let digits = body.bytes().rev().take_while(u8::is_ascii_digit).count();
            super::walked(digits);
            if digits == 0 {
                return false;
            }
            body.len() - digits
        }
        _ => return false,
    };
    // Only blanks between the line start and the marker.
    let before = &trimmed[..marker_start];
    let stop = before
        .char_indices()
        .rev()
        .find(|&(_, c)| c == '\n' || !c.is_whitespace());
    super::walked(before.len() - stop.map_or(0, |(i, _)| i));
    stop.is_none_or(|(_, c)| c == '\n')
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) if first.is_ascii_lowercase() => {
            first.to_ascii_uppercase().to_string() + chars.as_str()
        }
        _ => word.to_string(),
    }
}

/// Gives `replacement` the case of the first letter of `original`.
fn match_case(original: &str, replacement: &str) -> String {
    if original.chars().next().is_some_and(char::is_uppercase) {
        capitalize(replacement)
    } else {
        replacement.to_string()
    }
}

// ---- whitespace (light) -------------------------------------------------------------

static TRAILING_BLANKS: Lazy<Regex> = Lazy::new(|| compile(r"(?m)[ \t]+$"));
static INNER_BLANKS: Lazy<Regex> = Lazy::new(|| compile(r"(\S)[ \t]{2,}|(\S)\t"));
static BLANK_LINES: Lazy<Regex> = Lazy::new(|| compile(r"\n{3,}"));

/// Whether `whitespace` has anything to do (a byte scan, far cheaper than its regexes).
fn untidy(text: &str) -> bool {
    let bytes = text.as_bytes();
    let edge = |b: Option<&u8>| b.is_some_and(u8::is_ascii_whitespace);
    edge(bytes.first())
        || edge(bytes.last())
        || bytes.contains(&b'\t')
        || bytes.contains(&b'\r')
        || text.contains("  ")
        || text.contains(" \n")
        || text.contains("\n\n\n")
}

/// Trailing blanks, runs of blanks between words, runs of blank lines, and the ends.
/// Leading indentation stays (it nests lists).
pub fn whitespace(text: &str) -> Cow<'_, str> {
    if !untidy(text) {
        return Cow::Borrowed(text);
    }
    let text = TRAILING_BLANKS.replace_all(text, "");
    let text = INNER_BLANKS.replace_all(
        &text,
        Append(|c: &Captures, dst: &mut String| {
            dst.push_str(c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str()));
            dst.push(' ');
        }),
    );
    let text = BLANK_LINES.replace_all(&text, "\n\n");
    Cow::Owned(text.trim().to_string())
}

// ---- pleasantries (light) -----------------------------------------------------------

static PLEASANTRY_WORDS: Lazy<Regex> =
    Lazy::new(|| compile(r"(?i)(?-u:\b)(?:please|kindly|feel free to)(?-u:\b),?[ \t]+([a-z])?"));
static PLEASANTRY_SENTENCES: Lazy<Regex> = Lazy::new(|| {
    compile(
        r"(?i)(?:(?-u:\b)(?:thank you|thanks)(?: (?:so|very) much)?(?: for [^.!?\n]*)?|(?-u:\b)i hope (?:this|that|it) helps|(?-u:\b)happy (?:coding|hacking)|(?-u:\b)have fun)[.!]+[ \t]*",
    )
});

/// "please", "kindly", "feel free to", thank-you and hope-this-helps sentences.
pub fn pleasantries(text: &str) -> Cow<'_, str> {
    let text = PLEASANTRY_SENTENCES.replace_all(text, "");
    let out = match PLEASANTRY_WORDS.replace_all(&text, "$1") {
        Cow::Owned(out) => Some(out),
        Cow::Borrowed(_) => None,
    };
    out.map_or(text, Cow::Owned)
}

// ---- sentence leaders (moderate) ----------------------------------------------------

/// Leaders that only open a sentence, and what they become (empty: dropped).
const LEADERS: [(&str, &str); 25] = [
    ("you can use this tool to", "use to"),
    ("you can use this to", "use to"),
    ("use this tool when you need to", "use to"),
    ("use this tool to", "use to"),
    ("use this tool when", "use when"),
    ("use this tool for", "use for"),
    ("use this to", "use to"),
    ("use this command to", "use to"),
    ("use this function to", "use to"),
    ("this tool will", ""),
    ("this tool can be used to", ""),
    ("this tool is used to", ""),
    ("this tool allows you to", ""),
    ("this tool lets you", ""),
    ("this tool enables you to", ""),
    ("this tool helps you", "helps"),
    ("this tool helps", "helps"),
    ("this tool is useful for", "useful for"),
    ("this tool is essential for", "essential for"),
    ("this tool is perfect for", "useful for"),
    ("this tool is great for", "useful for"),
    ("allows you to", ""),
    ("lets you", ""),
    ("you can", ""),
    ("you may", ""),
];

fn phrase_alternation(phrases: impl Iterator<Item = &'static str>) -> String {
    let mut phrases: Vec<&str> = phrases.collect();
    // Longest first, so a phrase never loses to its own prefix.
    phrases.sort_by_key(|p| std::cmp::Reverse(p.len()));
    phrases
        .iter()
        .map(|p| regex::escape(p).replace(' ', r"[ \t]+"))
        .collect::<Vec<_>>()
        .join("|")
}

fn normalize_phrase(matched: &str) -> String {
    matched
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

static LEADER: Lazy<Regex> = Lazy::new(|| {
    compile(&format!(
        r"(?i)(?-u:\b)({})[ \t]+{}",
        phrase_alternation(LEADERS.iter().map(|(p, _)| *p)),
        next_word_pattern()
    ))
});
static THIS_TOOL_VERB: Lazy<Regex> = Lazy::new(|| {
    compile(r"(?i)(?-u:\b)this (?:tool|function|command|endpoint)[ \t]+([a-z]+s)(?-u:\b)")
});
static THIS_VERB: Lazy<Regex> = Lazy::new(|| compile(r"(?-u:\b)This[ \t]+([a-z]+s)(?-u:\b)"));

/// Whether a word after "This" reads as a verb in the third person ("includes", "applies"),
/// not a singular noun that ends in s ("process", "status", "alias", "analysis") or a copula.
fn is_third_person_verb(word: &str) -> bool {
    !["is", "was", "has", "does"].contains(&word)
        && !["ss", "us", "is", "as", "os", "ys"]
            .iter()
            .any(|end| word.ends_with(end))
}

/// "You can", "This tool will", "Use this tool to", ... at the start of a sentence; a
/// sentence "This includes X" (the subject is what was just said) becomes "Includes X".
pub fn leaders(text: &str) -> Cow<'_, str> {
    let text = LEADER.replace_all(text, |c: &Captures| {
        let whole = c.get(0).map_or("", |m| m.as_str());
        let start = c.get(0).map_or(0, |m| m.start());
        let (Some(phrase), Some(next)) = (c.get(1), c.get(2)) else {
            return whole.to_string();
        };
        if !is_sentence_start(text, start) || is_negation(next.as_str()) {
            return whole.to_string();
        }
        let key = normalize_phrase(phrase.as_str());
        let replacement = LEADERS
            .iter()
            .find(|(p, _)| *p == key)
            .map_or(phrase.as_str(), |(_, r)| *r);
        if replacement.is_empty() {
            next.as_str().to_string()
        } else {
            format!(
                "{} {}",
                match_case(phrase.as_str(), replacement),
                next.as_str()
            )
        }
    });
    let text = match THIS_VERB.replace_all(&text, |c: &Captures| {
        let whole = group(c, 0);
        let start = c.get(0).map_or(0, |m| m.start());
        let verb = group(c, 1);
        if is_third_person_verb(verb) && is_sentence_start(&text, start) {
            capitalize(verb)
        } else {
            whole.to_string()
        }
    }) {
        Cow::Owned(out) => Cow::Owned(out),
        Cow::Borrowed(_) => text,
    };
    let out = match THIS_TOOL_VERB.replace_all(&text, |c: &Captures| {
        let whole = group(c, 0);
        let start = c.get(0).map_or(0, |m| m.start());
        let verb = group(c, 1);
        let copula = ["is", "was", "has", "does"].contains(&verb.to_ascii_lowercase().as_str());
        if copula || !is_sentence_start(&text, start) {
            whole.to_string()
        } else {
            verb.to_string()
        }
    }) {
        Cow::Owned(out) => Some(out),
        Cow::Borrowed(_) => None,
    };
    out.map_or(text, Cow::Owned)
}

// ---- wordy phrases (moderate) -------------------------------------------------------

const WORDY: [(&str, &str); 50] = [
    ("the provided", ""),
    ("the given", ""),
    ("the specified", ""),
    ("a specified", ""),
    ("a provided", ""),
    ("helps to", "helps"),
    ("create a new", "create"),
    ("creates a new", "creates"),
    ("create new", "create"),
    ("creates new", "creates"),
    ("along with", "with"),
    ("defaults to", "default"),
    ("as well as", "and"),
    ("the maximum number of", "max"),
    ("maximum number of", "max"),
    ("minimum number of", "min"),
    ("a specific", ""),
    ("in order to", "to"),
    ("so as to", "to"),
    ("is able to", "can"),
    ("are able to", "can"),
    ("has the ability to", "can"),
    ("have the ability to", "can"),
    ("a large number of", "many"),
    ("a great number of", "many"),
    ("the vast majority of", "most"),
    ("the majority of", "most"),
    ("due to the fact that", "because"),
    ("owing to the fact that", "because"),
    ("in spite of the fact that", "although"),
    ("despite the fact that", "although"),
    ("in the event that", "if"),
    ("at this point in time", "now"),
    ("at the present time", "now"),
    ("for the purpose of", "for"),
    ("with regard to", "about"),
    ("in regard to", "about"),
    ("make sure to", "ensure"),
    ("make sure that", "ensure"),
    ("make sure", "ensure"),
    ("whether or not", "whether"),
    ("each and every", "each"),
    ("in conjunction with", "with"),
    ("by means of", "by"),
    ("until such time as", "until"),
    ("on a daily basis", "daily"),
    ("at all times", "always"),
    ("is going to", "will"),
    ("prior to", "before"),
    ("subsequent to", "after"),
];

static WORDY_PHRASE: Lazy<Regex> = Lazy::new(|| {
    compile(&format!(
        r"(?i)(?-u:\b)(?:{})(?-u:\b)",
        phrase_alternation(WORDY.iter().map(|(p, _)| *p))
    ))
});

/// "in order to" -> "to", "is able to" -> "can", "make sure to" -> "ensure", ... "defaults to"
/// after a pronoun stays ("it defaults to x" is not "it default x").
pub fn wordy_phrases(text: &str) -> Cow<'_, str> {
    WORDY_PHRASE.replace_all(text, |c: &Captures| {
        let whole = group(c, 0);
        let start = c.get(0).map_or(0, |m| m.start());
        let key = normalize_phrase(whole);
        if key == "defaults to"
            && COPULA_SUBJECTS.contains(&word_before(text, start).to_ascii_lowercase().as_str())
        {
            return whole.to_string();
        }
        WORDY
            .iter()
            .find(|(p, _)| *p == key)
            .map_or_else(|| whole.to_string(), |(_, r)| match_case(whole, r))
    })
}

// ---- purpose "used to", "a list of" (moderate) ------------------------------------

static USED_TO: Lazy<Regex> = Lazy::new(|| {
    compile(&format!(
        r"(?-u:\b)used[ \t]+to[ \t]+{}",
        next_word_pattern()
    ))
});

/// Words before "used to" that make it a verb phrase, a habit or an adjective ("is used to",
/// "I used to", "get used to"), where "to" alone would not say the same.
const USED_TO_KEEP_AFTER: [&str; 21] = [
    "be", "is", "are", "was", "were", "been", "being", "get", "gets", "got", "getting", "i", "we",
    "you", "they", "he", "she", "it", "who", "that", "which",
];

/// "a description used to obtain permission" -> "a description to obtain permission": after
/// a noun, "used to" only states a purpose, which "to" already does.
pub fn purpose_used_to(text: &str) -> Cow<'_, str> {
    USED_TO.replace_all(text, |c: &Captures| {
        let whole = group(c, 0);
        let start = c.get(0).map_or(0, |m| m.start());
        let next = group(c, 1);
        let before = word_before(text, start).to_ascii_lowercase();
        if before.is_empty()
            || before.ends_with("ly")
            || is_negation(&before)
            || is_negation(next)
            || USED_TO_KEEP_AFTER.contains(&before.as_str())
            || is_sentence_start(text, start)
        {
            return whole.to_string();
        }
        format!("to {next}")
    })
}

static LIST_OF: Lazy<Regex> = Lazy::new(|| {
    compile(&format!(
        r"(?i)(?-u:\b)(returns?|gets?|lists?|retrieves?|fetch|fetches)[ \t]+(?:(?:a|the)[ \t]+)?list[ \t]+of[ \t]+{}",
        next_word_pattern()
    ))
});

/// "Returns a list of pages" -> "Returns pages": after a verb that hands things back, "a
/// list of" only says there may be several, which the plural says. Kept before a word that
/// needs it ("a list of the" stays "list of").
pub fn list_of(text: &str) -> Cow<'_, str> {
    LIST_OF.replace_all(text, |c: &Captures| {
        let whole = group(c, 0);
        let verb = group(c, 1);
        let next = group(c, 2);
        let next_lower = next.to_ascii_lowercase();
        if is_negation(next) || KEEP_BEFORE.contains(&next_lower.as_str()) || next_lower == "the" {
            return whole.to_string();
        }
        format!("{verb} {next}")
    })
}

static NOTE_PREFIX: Lazy<Regex> = Lazy::new(|| {
    compile(&format!(
        r"(?-u:\b)(?:Note|NOTE|note)(?::|[ \t]+that)[ \t]+{}",
        next_word_pattern()
    ))
});

/// "Note: X" / "Note that X" opening a sentence: the sentence is there to be read anyway.
/// "IMPORTANT:" and the like stay (they rank what follows).
pub fn note_prefix(text: &str) -> Cow<'_, str> {
    NOTE_PREFIX.replace_all(text, |c: &Captures| {
        let whole = group(c, 0);
        let start = c.get(0).map_or(0, |m| m.start());
        let next = group(c, 1);
        if is_sentence_start(text, start) {
            capitalize(next)
        } else {
            whole.to_string()
        }
    })
}

/// How far (in characters) a rule looks for the rest of a sentence around a match.
const SENTENCE_WINDOW: usize = 1_000;
const SENTENCE_ENDS: [char; 5] = ['.', '!', '?', ';', '\n'];

/// The rest of the sentence after byte `end`; `None` when it runs on past `SENTENCE_WINDOW`.
fn sentence_after(text: &str, end: usize) -> Option<&str> {
    let rest = text.get(end..)?;
    for (n, (i, c)) in rest.char_indices().enumerate() {
        if SENTENCE_ENDS.contains(&c) {
            super::walked(n);
            return rest.get(..i);
        }
        if n >= SENTENCE_WINDOW {
            super::walked(n);
            return None;
        }
    }
    super::walked(rest.len());
    Some(rest)
}

/// The start of the sentence before byte `start`; `None` when it reaches back past
/// `SENTENCE_WINDOW`.
fn sentence_before(text: &str, start: usize) -> Option<&str> {
    let head = text.get(..start)?;
    for (n, (i, c)) in head.char_indices().rev().enumerate() {
        if SENTENCE_ENDS.contains(&c) {
            super::walked(n);
            return head.get(i + c.len_utf8()..);
        }
        if n >= SENTENCE_WINDOW {
            super::walked(n);
            return None;
        }
    }
    super::walked(head.len());
    Some(head)
}

static EITHER: Lazy<Regex> =
    Lazy::new(|| compile(&format!(r"(?-u:\b)either[ \t]+{}", next_word_pattern())));

/// Words after which "either" is not the "either ... or" of a choice ("either way").
const EITHER_KEEP_BEFORE: [&str; 6] = ["way", "of", "one", "side", "case", "end"];

/// "Provide either text or regex" -> "Provide text or regex": "or" alone already offers the
/// choice. Only when an "or" follows in the same sentence, never in a negated sentence.
pub fn either_or(text: &str) -> Cow<'_, str> {
    EITHER.replace_all(text, |c: &Captures| {
        let whole = group(c, 0);
        let start = c.get(0).map_or(0, |m| m.start());
        let end = c.get(0).map_or(0, |m| m.end());
        let next = group(c, 1);
        // A sentence longer than the window keeps its "either" (the or and the negation are
        // only looked for that far, so the rule stays linear).
        let (Some(sentence_rest), Some(sentence_head)) =
            (sentence_after(text, end), sentence_before(text, start))
        else {
            return whole.to_string();
        };
        let or_follows = sentence_rest.split_whitespace().any(|w| w == "or");
        let negated = sentence_head
            .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
            .any(is_negation);
        if !or_follows
            || negated
            || EITHER_KEEP_BEFORE.contains(&next.to_ascii_lowercase().as_str())
            || is_sentence_start(text, start)
        {
            return whole.to_string();
        }
        next.to_string()
    })
}

// ---- fillers and hedges (moderate) --------------------------------------------------

static FILLER: Lazy<Regex> = Lazy::new(|| {
    compile(&format!(
        r"(?i)(?-u:\b)(just|basically|actually|simply|very|really|quite|various|desired|essentially|literally|totally|certainly|definitely|obviously|clearly|extremely|truly|of course|i think|i believe|in my opinion|needless to say|as you know|to be honest)(?-u:\b),?[ \t]+{}",
        next_word_pattern()
    ))
});

/// After "just" (or "quite") these make it mean "only" / "a fair amount": kept.
const QUANTITY_NEXT: [&str; 14] = [
    "the", "a", "an", "one", "once", "few", "little", "like", "as", "before", "after", "when",
    "since", "for",
];

/// Fillers ("just", "basically", "very", ...) and speaker hedges ("I think"). Kept when they
/// qualify a negation ("not just", "not very"), when the next word is a negation, and for
/// "just"/"quite" before a quantity ("just the first line" means "only").
pub fn fillers(text: &str) -> Cow<'_, str> {
    FILLER.replace_all(text, |c: &Captures| {
        let whole = c.get(0).map_or("", |m| m.as_str());
        let start = c.get(0).map_or(0, |m| m.start());
        let (Some(filler), Some(next)) = (c.get(1), c.get(2)) else {
            return whole.to_string();
        };
        let filler_lower = filler.as_str().to_ascii_lowercase();
        let next_word = next.as_str();
        let next_lower = next_word.to_ascii_lowercase();
        let next_is_quantity = QUANTITY_NEXT.contains(&next_lower.as_str())
            || next_word.starts_with(|c: char| c.is_ascii_digit() || !c.is_ascii());
        if is_negation(word_before(text, start))
            || is_negation(next_word)
            || (matches!(filler_lower.as_str(), "just" | "quite") && next_is_quantity)
        {
            return whole.to_string();
        }
        next_word.to_string()
    })
}

// ---- articles (moderate) ------------------------------------------------------------

static ARTICLE: Lazy<Regex> = Lazy::new(|| {
    compile(&format!(
        r"(?-u:\b)(the|The|an|An|a|A|its|Its|their|Their)[ \t]+{}",
        next_word_pattern()
    ))
});

/// Words after which "a" is an article only if nothing else fits; "a" there is a label
/// ("option a", "type a"), so it stays.
const LABEL_NOUNS: [&str; 40] = [
    "option",
    "options",
    "type",
    "class",
    "group",
    "case",
    "part",
    "step",
    "plan",
    "point",
    "grade",
    "letter",
    "item",
    "column",
    "row",
    "section",
    "variant",
    "mode",
    "version",
    "choice",
    "answer",
    "appendix",
    "figure",
    "table",
    "tier",
    "level",
    "phase",
    "track",
    "side",
    "key",
    "button",
    "cell",
    "field",
    "variable",
    "param",
    "parameter",
    "argument",
    "value",
    "node",
    "label",
];

/// Words after an article that make it not droppable: function words (the "article" is then
/// a label: "a or b"), and quantities whose meaning needs it ("a few" is not "few").
const KEEP_BEFORE: [&str; 60] = [
    "is", "are", "was", "were", "be", "been", "or", "and", "nor", "of", "to", "in", "on", "at",
    "by", "with", "as", "if", "for", "from", "then", "than", "that", "which", "who", "so", "but",
    "not", "no", "can", "could", "will", "would", "should", "may", "might", "must", "shall",
    "does", "do", "did", "has", "have", "had", "few", "little", "lot", "lots", "bit", "couple",
    "number", "while", "other", "others", "rest", "former", "latter", "one", "ones", "same",
];

/// Articles and the possessives "its"/"their". Kept when the "article" is a label ("option a", "a or b", sentence-internal "A"),
/// before a word that needs it ("a few", "the other") and after a hyphen or apostrophe.
pub fn articles(text: &str) -> Cow<'_, str> {
    ARTICLE.replace_all(
        text,
        Append(|c: &Captures, dst: &mut String| {
            let whole = group(c, 0);
            let start = c.get(0).map_or(0, |m| m.start());
            let (Some(article), Some(next)) = (c.get(1), c.get(2)) else {
                return dst.push_str(whole);
            };
            let article = article.as_str();
            let next_word = next.as_str();
            let next_lower = next_word.to_ascii_lowercase();
            let prev_char = text.get(..start).and_then(|h| h.chars().next_back());
            let after_joiner =
                prev_char.is_some_and(|p| !p.is_whitespace() && !"([{\"“:,;".contains(p));
            let sentence_start = is_sentence_start(text, start);
            let capitalized = article.starts_with(|c: char| c.is_ascii_uppercase());
            let single_letter = next_word.len() == 1 && next_word.is_ascii();
            let label_a = article.eq_ignore_ascii_case("a")
                && LABEL_NOUNS.contains(&word_before(text, start).to_ascii_lowercase().as_str());
            if after_joiner
                || (capitalized && !sentence_start)
                || single_letter
                || label_a
                || KEEP_BEFORE.contains(&next_lower.as_str())
            {
                return dst.push_str(whole);
            }
            dst.push_str(next_word)
        }),
    )
}

// ---- copulas (moderate) ------------------------------------------------------------

static COPULA: Lazy<Regex> = Lazy::new(|| {
    compile(&format!(
        r"(?-u:\b)(is|are|will[ \t]+be)[ \t]+{}",
        next_word_pattern()
    ))
});

/// Past participles that do not end in -ed (for "will be" + participle).
const IRREGULAR_PARTICIPLES: [&str; 24] = [
    "done", "made", "set", "sent", "shown", "given", "taken", "known", "seen", "read", "run",
    "written", "kept", "left", "found", "thrown", "put", "cut", "built", "held", "lost", "paid",
    "split", "spent",
];

/// Subjects after which "is"/"are" carries the sentence ("it is", "which are").
const COPULA_SUBJECTS: [&str; 26] = [
    "it", "this", "that", "there", "here", "what", "which", "who", "whom", "whose", "where",
    "when", "how", "why", "whether", "they", "he", "she", "we", "you", "i", "these", "those",
    "each", "one", "a",
];
/// Words after which "is"/"are" is not a plain copula ("is to", "is a few").
const COPULA_OBJECTS: [&str; 9] = ["to", "a", "an", "the", "that", "this", "there", "it", "as"];

/// "is"/"are" between a noun and a participle or adjective: "Default is false" ->
/// "Default false", "body is returned inline" -> "body returned inline"; "will be" only
/// before a participle ("code will be ignored" -> "code ignored"). Kept at a sentence start
/// (a question), after pronouns and relatives, and before "to", articles, "as".
pub fn copulas(text: &str) -> Cow<'_, str> {
    COPULA.replace_all(text, |c: &Captures| {
        let whole = c.get(0).map_or("", |m| m.as_str());
        let start = c.get(0).map_or(0, |m| m.start());
        let next = c.get(2).map_or("", |m| m.as_str());
        let mut subject = word_before(text, start).to_ascii_lowercase();
        let span_before = text
            .get(..start)
            .and_then(|h| h.trim_end_matches([' ', '\t']).chars().next_back())
            .is_some_and(is_sentinel_range);
        let next_is_span = next.chars().next().is_some_and(is_sentinel_range);
        if subject.is_empty() && span_before && !next_is_span {
            // A protected span (code, a parameter name) is a noun subject: "`id` is omitted".
            // Between two spans "is" states a value ("when `mode` is `fast`") and stays.
            subject.push_str("span");
        }
        let will_be = group(c, 1).starts_with("will");
        let participle =
            next.len() > 3 && next.ends_with("ed") || IRREGULAR_PARTICIPLES.contains(&next);
        if subject.is_empty()
            || (will_be && !participle)
            || is_sentence_start(text, start)
            || COPULA_SUBJECTS.contains(&subject.as_str())
            || COPULA_OBJECTS.contains(&next.to_ascii_lowercase().as_str())
        {
            return whole.to_string();
        }
        next.to_string()
    })
}

/// The period that ends a description carries nothing (an ellipsis stays).
pub fn final_period(text: &str) -> Cow<'_, str> {
    let mut chars = text.chars().rev();
    match (chars.next(), chars.next()) {
        (Some(last @ ('.' | '。')), Some(before)) if before != '.' => {
            Cow::Borrowed(text.get(..text.len() - last.len_utf8()).unwrap_or(text))
        }
        _ => Cow::Borrowed(text),
    }
}

// ---- description openers (moderate) ----------------------------------------------------------------

static WHETHER_OPENER: Lazy<Regex> = Lazy::new(|| {
    compile(&format!(
        r"^(?:Whether|whether)(?:[ \t]+to)?[ \t]+{}",
        next_word_pattern()
    ))
});

/// "Whether to include X" opening a (boolean or choice) parameter's description: the
/// description starts at what is chosen.
pub fn whether_opener(text: &str) -> Cow<'_, str> {
    WHETHER_OPENER.replace(text, "$1")
}

static EXAMPLE_ASIDE: Lazy<Regex> = Lazy::new(|| {
    compile(&format!(
        r"[ \t]*\((?:[{SENTINEL_CLASS}][ \t]*|for example,?[ \t]+|like[ \t]+)[^()\n]*\)"
    ))
});

/// Parenthesized examples ("(e.g. ...)", "(for example ...)"): the span sentinel of "e.g."
/// must open the parenthesis, so a parenthesis that only holds an identifier is not an
/// example unless it starts with one. An aside holding a negation or limit word says more
/// than an example and stays, as does one holding a span that `shows_syntax` (a URL, a quoted
/// `"Control+A"`): often the only statement of the value's format.
pub fn example_asides(
    text: &str,
    is_example_opener: &dyn Fn(char) -> bool,
    shows_syntax: &dyn Fn(char) -> bool,
) -> String {
    EXAMPLE_ASIDE
        .replace_all(text, |c: &Captures| {
            let whole = c.get(0).map_or("", |m| m.as_str());
            let inner = whole.trim_start().trim_start_matches('(');
            let opener = inner.chars().next().is_some_and(is_example_opener);
            let words = inner.starts_with("for example") || inner.starts_with("like ");
            let syntax = inner.chars().any(shows_syntax);
            if (opener || words) && !syntax && !LIMIT_WORDS.is_match(inner) {
                String::new()
            } else {
                whole.to_string()
            }
        })
        .into_owned()
}

/// The text being rewritten and its ASCII-lowercase copy, which the rules' literal
/// pre-checks search: a rule whose trigger words are absent never runs its regex.
struct Pass<'a> {
    text: Cow<'a, str>,
    lower: String,
}

impl<'a> Pass<'a> {
    fn new(text: &'a str) -> Pass<'a> {
        Pass {
            lower: text.to_ascii_lowercase(),
            text: Cow::Borrowed(text),
        }
    }

    /// Runs `rule` unless `triggers` is non-empty and none occurs in the text.
    fn run(&mut self, triggers: &[&str], rule: impl Fn(&str) -> Cow<'_, str>) {
        if !triggers.is_empty() && !triggers.iter().any(|t| self.lower.contains(t)) {
            return;
        }
        let changed = match rule(&self.text) {
            Cow::Borrowed(same) if same.len() == self.text.len() => None,
            other => Some(other.into_owned()),
        };
        if let Some(changed) = changed {
            self.lower = changed.to_ascii_lowercase();
            self.text = Cow::Owned(changed);
        }
    }
}

const PLEASANTRY_TRIGGERS: [&str; 7] = [
    "please",
    "kindly",
    "feel free",
    "thank",
    "hope",
    "happy",
    "have fun",
];
const LEADER_TRIGGERS: [&str; 8] = [
    "this ",
    "you ",
    "use this",
    "this tool",
    "this function",
    "this command",
    "this endpoint",
    "lets you",
];
/// Runs the rules a level allows, in order.
pub fn apply(text: &str, level: Level) -> String {
    if level == Level::Off {
        return text.to_string();
    }
    let mut pass = Pass::new(text);
    pass.run(&[], whitespace);
    pass.run(&PLEASANTRY_TRIGGERS, pleasantries);
    if level >= Level::Moderate {
        pass.run(&LEADER_TRIGGERS, leaders);
        pass.run(&[], wordy_phrases);
        pass.run(&["used to"], purpose_used_to);
        pass.run(&["list of"], list_of);
        pass.run(&["note"], note_prefix);
        pass.run(&["either"], either_or);
        pass.run(&[], fillers);
        pass.run(&[], articles);
        pass.run(&["is ", "are ", "will be"], copulas);
        pass.run(&["whether"], whether_opener);
    }
    pass.run(&[], whitespace);
    if level >= Level::Moderate {
        pass.run(&[], final_period);
    }
    pass.text.into_owned()
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
