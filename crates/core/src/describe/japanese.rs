//! Japanese prose: cushion words (light), polite endings turned plain and filler hedges
//! (moderate). Only endings whose plain form is certain are rewritten; ambiguous verbs
//! (godan `〜します` such as `返します`) stay polite rather than risk a wrong form.

use once_cell::sync::Lazy;
use regex::Captures;

use super::protect::SENTINEL_CLASS;
use super::Regex;
use crate::level::Level;

fn compile(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("japanese rule regex {pattern:?}: {e}"))
}

static KANA: Lazy<Regex> = Lazy::new(|| compile(r"[\p{Hiragana}\p{Katakana}]"));

/// Cushion phrases and closing courtesies ("恐れ入りますが", "よろしくお願いします").
static CUSHION: Lazy<Regex> = Lazy::new(|| {
    compile(
        r"(?:恐れ入りますが|お手数(?:をおかけします|をおかけいたします)?ですが|お手数ですが|申し訳(?:ありません|ございません)が|すみませんが|失礼ですが|(?:もし)?よろしければ)、?|(?:どうぞ)?よろしくお願い(?:いたします|致します|します|申し上げます)[。！!]?|ありがとうございます[。！!]?|ご了承ください[。！!]?",
    )
});

/// Hedge words that carry no condition; kept when their clause is negated.
static HEDGE: Lazy<Regex> =
    Lazy::new(|| compile(r"(?:基本的には?|一応|とりあえず|なんとなく)、?([^、。\n]*)"));
static CLAUSE_NEGATION: Lazy<Regex> = Lazy::new(|| compile(r"ない|ません|ず|ぬ|不可|禁止"));

/// Polite endings with a certain plain form, in the order they must be tried.
const ENDINGS: [(&str, &str); 26] = [
    ("することができません", "できない"),
    ("することができます", "できる"),
    ("ことができません", "ことができない"),
    ("ことができます", "ことができる"),
    ("ていません", "ていない"),
    ("でいません", "でいない"),
    ("ていました", "ていた"),
    ("ています", "ている"),
    ("でいます", "でいる"),
    ("てください", "て"),
    ("でください", "で"),
    ("できません", "できない"),
    ("できました", "できた"),
    ("できます", "できる"),
    ("ありません", "ない"),
    ("ありました", "あった"),
    ("あります", "ある"),
    ("ございます", "ある"),
    ("なりません", "ならない"),
    ("なります", "なる"),
    ("されません", "されない"),
    ("されます", "される"),
    ("られません", "られない"),
    ("られます", "られる"),
    ("いたします", "する"),
    ("かもしれません", "かもしれない"),
];

static ENDING: Lazy<Regex> = Lazy::new(|| {
    let alternation = ENDINGS
        .iter()
        .map(|(p, _)| regex::escape(p))
        .collect::<Vec<_>>()
        .join("|");
    compile(&alternation)
});

/// `〜します` of a suru-verb (katakana word or a two-kanji compound) and of ichidan verbs
/// (e-row kana before `ます`).
static SURU: Lazy<Regex> =
    Lazy::new(|| compile(r"(\p{Katakana}ー?|\p{Han}\p{Han})し(ます|ません|ました)"));
static ICHIDAN: Lazy<Regex> =
    Lazy::new(|| compile(r"([えけげせぜてでねへべぺめれ])(ます|ません|ました)"));
/// Second kanji of compounds that are godan `〜す` verbs (見直す, 手渡す, 目指す, ...).
const GODAN_SU_KANJI: &str = "直渡指逃出返戻消押回示越通残移写隠外探話表試貸干刺差殺壊崩満果起動落増減冷乾燃伸延流鳴覆潰汚催促尽施";

static DESU: Lazy<Regex> = Lazy::new(|| {
    compile(&format!(
        r"(い|[\p{{Han}}\p{{Katakana}}ーA-Za-z0-9)）」{SENTINEL_CLASS}])です(。|\n|$)"
    ))
});
static DESHITA: Lazy<Regex> = Lazy::new(|| compile(r"でした"));

fn plain(polite: &str) -> &'static str {
    match polite {
        "ます" => "る",
        "ません" => "ない",
        _ => "た",
    }
}

pub fn has_japanese(text: &str) -> bool {
    // Kana all lie above U+3000 (sentinels too, so skip those): most texts are ASCII and
    // never reach the regex.
    text.chars()
        .any(|c| c >= '\u{3000}' && !super::protect::is_sentinel_range(c))
        && KANA.is_match(text)
}

pub fn apply(text: &str, level: Level) -> String {
    if level == Level::Off || !has_japanese(text) {
        return text.to_string();
    }
    let mut text = CUSHION.replace_all(text, "").into_owned();
    if level < Level::Moderate {
        return text;
    }
    text = HEDGE
        .replace_all(&text, |c: &Captures| {
            let whole = c.get(0).map_or("", |m| m.as_str());
            let clause = c.get(1).map_or("", |m| m.as_str());
            if CLAUSE_NEGATION.is_match(clause) {
                whole.to_string()
            } else {
                clause.to_string()
            }
        })
        .into_owned();
    text = ENDING
        .replace_all(&text, |c: &Captures| {
            let whole = c.get(0).map_or("", |m| m.as_str());
            ENDINGS
                .iter()
                .find(|(p, _)| *p == whole)
                .map_or(whole, |(_, r)| *r)
                .to_string()
        })
        .into_owned();
    text = SURU
        .replace_all(&text, |c: &Captures| {
            let whole = c.get(0).map_or("", |m| m.as_str());
            let stem = c.get(1).map_or("", |m| m.as_str());
            let ending = c.get(2).map_or("", |m| m.as_str());
            let godan = stem
                .chars()
                .next_back()
                .is_some_and(|k| GODAN_SU_KANJI.contains(k));
            if godan {
                whole.to_string()
            } else {
                let plain = match ending {
                    "ます" => "する",
                    "ません" => "しない",
                    _ => "した",
                };
                format!("{stem}{plain}")
            }
        })
        .into_owned();
    text = ICHIDAN
        .replace_all(&text, |c: &Captures| {
            let kana = c.get(1).map_or("", |m| m.as_str());
            format!("{kana}{}", plain(c.get(2).map_or("", |m| m.as_str())))
        })
        .into_owned();
    text = DESU.replace_all(&text, "$1$2").into_owned();
    DESHITA.replace_all(&text, "だった").into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let cases = [
            (
                "恐れ入りますが、ファイルを指定してください。",
                Level::Light,
                "ファイルを指定してください。",
            ),
            (
                "ファイルを指定してください。",
                Level::Moderate,
                "ファイルを指定して。",
            ),
            (
                "ページを取得します。",
                Level::Moderate,
                "ページを取得する。",
            ),
            (
                "要素をクリックします。",
                Level::Moderate,
                "要素をクリックする。",
            ),
            ("値を返します。", Level::Moderate, "値を返します。"),
            ("設定を見直します。", Level::Moderate, "設定を見直します。"),
            ("削除することができます。", Level::Moderate, "削除できる。"),
            ("変更できません。", Level::Moderate, "変更できない。"),
            ("ファイルのパスです。", Level::Moderate, "ファイルのパス。"),
            (
                "基本的に、読み取り専用です。",
                Level::Moderate,
                "読み取り専用。",
            ),
            (
                "基本的に、書き込めません。",
                Level::Moderate,
                "基本的に、書き込めない。",
            ),
            (
                "動作しないかもしれません。",
                Level::Moderate,
                "動作しないかもしれない。",
            ),
            ("しないでください。", Level::Moderate, "しないで。"),
            (
                "結果を保存しています。",
                Level::Moderate,
                "結果を保存している。",
            ),
            ("値を入れます。", Level::Moderate, "値を入れる。"),
            ("よろしくお願いします。", Level::Moderate, ""),
            ("English only.", Level::Moderate, "English only."),
        ];
        for (input, level, expected) in cases {
            assert_eq!(apply(input, level), expected, "{input}");
        }
    }
}
