//! `## Network requests` (list_network_requests): lines `reqid=N METHOD URL [status]`.
//!
//! The resource type is not printed, so a request's kind comes from its URL (extension, `data:`
//! MIME type, well-known font hosts). Only successful static assets are hidden; a failed request
//! (4xx/5xx, `net::ERR_…`, anything but an HTTP code below 400) and anything that may be a
//! document, XHR or fetch always stay. What is hidden is named in one summary line with its
//! reqids, which `get_network_request` still accepts.

use super::ids::format_id_ranges;
use super::lines::{split_last_newline, ListFiltered};

/// A request's kind as far as its URL tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RequestKind {
    Image,
    Font,
    Stylesheet,
    Media,
    Script,
    /// Documents, XHR/fetch, and everything not recognised: never hidden.
    Other,
}

impl RequestKind {
    /// The name upstream's `resourceTypes` argument uses for this kind.
    pub fn resource_type(self) -> &'static str {
        match self {
            RequestKind::Image => "image",
            RequestKind::Font => "font",
            RequestKind::Stylesheet => "stylesheet",
            RequestKind::Media => "media",
            RequestKind::Script => "script",
            RequestKind::Other => "other",
        }
    }
}

/// Which kinds of successful requests a level hides.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NetworkLimits {
    pub hide_images: bool,
    pub hide_fonts: bool,
    pub hide_stylesheets: bool,
    pub hide_media: bool,
    pub hide_scripts: bool,
}

impl NetworkLimits {
    fn hides(&self, kind: RequestKind) -> bool {
        match kind {
            RequestKind::Image => self.hide_images,
            RequestKind::Font => self.hide_fonts,
            RequestKind::Stylesheet => self.hide_stylesheets,
            RequestKind::Media => self.hide_media,
            RequestKind::Script => self.hide_scripts,
            RequestKind::Other => false,
        }
    }
}

/// One parsed request line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestLine<'a> {
    pub reqid: u64,
    pub url: &'a str,
    pub status: &'a str,
}

/// A request line (`reqid=N METHOD URL [status]`, what the regex
/// `^reqid=(\d+) (\S+) (.+?) \[([^\]]*)\]` matches), read by hand: a regex with captures cost
/// two thirds of a network list's filter. The URL holds no space (upstream appends
/// "... <truncated>" to long ones), so the first " [" after its first character opens the
/// status, which ends at the next `]`.
pub fn parse_request_line(line: &str) -> Option<RequestLine<'_>> {
    let rest = line.strip_prefix("reqid=")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let reqid = rest.get(..digits)?.parse().ok()?;
    let rest = rest.get(digits..)?.strip_prefix(' ')?;
    // The method: one or more characters up to whitespace, which must be a space.
    let method = rest.find(char::is_whitespace)?;
    let rest = rest
        .get(method..)?
        .strip_prefix(' ')
        .filter(|_| method > 0)?;
    let first = rest.chars().next().filter(|&c| c != '\n')?;
    let open = rest.get(first.len_utf8()..)?.find(" [")? + first.len_utf8();
    let url = rest.get(..open)?;
    let after = rest.get(open + 2..)?;
    let status = after.get(..after.find(']')?)?;
    // The regex's `.` stops at a newline.
    (!url.contains('\n')).then_some(RequestLine { reqid, url, status })
}

/// Failed unless the status is an HTTP code below 400 (`pending`, `net::ERR_…` and anything
/// unknown count as failed, so they stay).
pub fn is_failed(status: &str) -> bool {
    match status.parse::<u16>() {
        Ok(code) => code >= 400,
        Err(_) => true,
    }
}

/// Classifies a request by its URL.
pub fn classify_url(url: &str) -> RequestKind {
    let url = url.strip_suffix("... <truncated>").unwrap_or(url);
    let lower = url.to_ascii_lowercase();
    if let Some(data) = lower.strip_prefix("data:") {
        return classify_mime(data);
    }
    let after_scheme = lower
        .split_once("://")
        .map_or(lower.as_str(), |(_, rest)| rest);
    let (host, path) = after_scheme
        .find('/')
        .map_or((after_scheme, ""), |i| after_scheme.split_at(i));
    let path = path.split(['?', '#']).next().unwrap_or("");
    if host == "fonts.gstatic.com" {
        return RequestKind::Font;
    }
    if host == "fonts.googleapis.com" && path.starts_with("/css") {
        return RequestKind::Stylesheet;
    }
    let file = path.rsplit('/').next().unwrap_or("");
    let Some((_, ext)) = file.rsplit_once('.') else {
        return RequestKind::Other;
    };
    match ext {
        "png" | "jpg" | "jpeg" | "gif" | "webp" | "avif" | "svg" | "ico" | "bmp" | "apng"
        | "tif" | "tiff" | "jxl" | "cur" => RequestKind::Image,
        "woff" | "woff2" | "ttf" | "otf" | "eot" => RequestKind::Font,
        "css" => RequestKind::Stylesheet,
        "mp4" | "webm" | "ogg" | "ogv" | "oga" | "opus" | "mp3" | "wav" | "m4a" | "m4v" | "aac"
        | "flac" | "mov" | "m3u8" | "mpd" | "weba" => RequestKind::Media,
        "js" | "mjs" | "cjs" => RequestKind::Script,
        _ => RequestKind::Other,
    }
}

fn classify_mime(data: &str) -> RequestKind {
    let mime = data.split([';', ',']).next().unwrap_or("");
    if mime.starts_with("image/") {
        RequestKind::Image
    } else if mime.starts_with("font/") || mime.contains("font") {
        RequestKind::Font
    } else if mime == "text/css" {
        RequestKind::Stylesheet
    } else if mime.starts_with("audio/") || mime.starts_with("video/") {
        RequestKind::Media
    } else if mime.ends_with("javascript") || mime.ends_with("ecmascript") {
        RequestKind::Script
    } else {
        RequestKind::Other
    }
}

/// Filters a `## Network requests` section (header line included). `requested_types` is the
/// call's `resourceTypes` argument: kinds the agent asked for are never hidden.
pub fn filter_network_list(
    section: &str,
    limits: &NetworkLimits,
    requested_types: &[String],
) -> Option<ListFiltered> {
    let (body, trailing_newline) = split_last_newline(section);
    let mut kept: Vec<&str> = Vec::new();
    let mut hidden: Vec<(RequestKind, u64)> = Vec::new();
    let mut listed = 0usize;
    let mut last_request_at = None;
    for line in body.split('\n') {
        let Some(request) = parse_request_line(line) else {
            kept.push(line);
            continue;
        };
        listed += 1;
        let kind = classify_url(request.url);
        let asked_for = requested_types.iter().any(|t| t == kind.resource_type());
        if limits.hides(kind) && !asked_for && !is_failed(request.status) {
            hidden.push((kind, request.reqid));
        } else {
            kept.push(line);
            last_request_at = Some(kept.len());
        }
    }
    if hidden.is_empty() {
        return None;
    }
    let summary = summary_line(&hidden, listed);
    // The summary follows the last request shown (or the pagination lines).
    let at = last_request_at.unwrap_or(kept.len());
    kept.insert(at, &summary);
    let mut text = kept.join("\n");
    text.push_str(trailing_newline);
    Some(ListFiltered {
        text,
        hidden_ids: hidden.iter().map(|&(_, id)| id).collect(),
    })
}

/// `[hidden 9 of 34 requests (successful static files): image 6 reqid=…; font 1 reqid=…; …
/// get_network_request shows any]`
fn summary_line(hidden: &[(RequestKind, u64)], listed: usize) -> String {
    let mut kinds: Vec<RequestKind> = hidden.iter().map(|&(k, _)| k).collect();
    kinds.sort_unstable();
    kinds.dedup();
    let parts: Vec<String> = kinds
        .iter()
        .map(|&kind| {
            let ids: Vec<u64> = hidden
                .iter()
                .filter(|&&(k, _)| k == kind)
                .map(|&(_, id)| id)
                .collect();
            format!(
                "{} {} reqid={}",
                ids.len(),
                kind.resource_type(),
                format_id_ranges(&ids)
            )
        })
        .collect();
    format!(
        "[hidden {} of {} requests (successful static files): {}; get_network_request shows any]",
        hidden.len(),
        listed,
        parts.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::XorShift;

    /// The pattern `parse_request_line` reads, as the regex it replaced.
    fn by_regex(line: &str) -> Option<RequestLine<'_>> {
        let re = regex::Regex::new(r"^reqid=(\d+) (\S+) (.+?) \[([^\]]*)\]").ok()?;
        let caps = re.captures(line)?;
        Some(RequestLine {
            reqid: caps.get(1)?.as_str().parse().ok()?,
            url: caps.get(3)?.as_str(),
            status: caps.get(4)?.as_str(),
        })
    }

    #[test]
    fn request_lines_read_as_the_regex_reads_them() {
        let lines = [
            "reqid=1 GET http://h/a.png [200]",
            "reqid=12 POST http://h/api?x=[1] [net::ERR_FAILED]",
            "reqid=3 GET http://h/a... <truncated> [pending]",
            "reqid=4 GET  [x] [200]",
            "reqid=5 GET é [200]",
            "reqid=6 GET http://h/a [200",
            "reqid=7 GET http://h/a []",
            "reqid=8  GET http://h/a [200]",
            "reqid=9\tGET http://h/a [200]",
            "reqid=10 GET\u{a0}http://h/a [200]",
            "reqid=11 GET [200]",
            "reqid=12 GET x\n [200]",
            "reqid=13 GET x [a\nb]",
            "reqid= GET http://h/a [200]",
            "reqid=1٣ GET http://h/a [200]",
            "reqid=99999999999999999999999 GET http://h/a [200]",
            "reqid=14 GET http://h/a [200] trailing [404]",
            "reqid=15 GET http://h/a [200]]",
            " reqid=16 GET http://h/a [200]",
            "reqid=17 GET",
            "reqid=18 ",
            "",
        ];
        for line in lines {
            assert_eq!(parse_request_line(line), by_regex(line), "{line:?}");
        }
        // Random lines: each slot of the grammar filled mostly as upstream writes it, else
        // with something around it.
        const JUNK: &[&str] = &[
            "", " ", "  ", "\t", "\n", "\u{a0}", "é", "٣", "[", "]", " [", "x",
        ];
        let slots: [&[&str]; 7] = [
            &["reqid="],
            &["1", "42", "007", "18446744073709551616"],
            &[" "],
            &["GET", "POST", "é"],
            &[" "],
            &[
                "http://h/p",
                "http://h/a?b=[1]",
                "http://h/x... <truncated>",
                " [",
                "]",
                "é",
            ],
            &[
                " [200]",
                " [net::ERR_X]",
                " [pending]",
                " []",
                " [20",
                " [200]]",
                " [200] [404]",
            ],
        ];
        let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
        let mut read = 0;
        for _ in 0..20_000 {
            let mut line = String::new();
            for slot in slots {
                let from = if rng.below(5) == 0 { JUNK } else { slot };
                line.push_str(rng.pick(from));
                if rng.below(8) == 0 {
                    line.push_str(rng.pick(slot));
                }
            }
            assert_eq!(parse_request_line(&line), by_regex(&line), "{line:?}");
            read += usize::from(by_regex(&line).is_some());
        }
        // Both outcomes well covered.
        assert!((2_000..18_000).contains(&read), "{read} lines read");
    }

    fn moderate() -> NetworkLimits {
        NetworkLimits {
            hide_images: true,
            hide_fonts: true,
            hide_stylesheets: true,
            ..NetworkLimits::default()
        }
    }

    #[test]
    fn classifies_by_url() {
        assert_eq!(classify_url("http://a/x/logo.PNG?v=2"), RequestKind::Image);
        assert_eq!(
            classify_url("data:image/png;base64,iVBO... <truncated>"),
            RequestKind::Image
        );
        assert_eq!(
            classify_url("https://fonts.gstatic.com/s/roboto/v1/abc"),
            RequestKind::Font
        );
        assert_eq!(classify_url("http://a/b.woff2"), RequestKind::Font);
        assert_eq!(classify_url("http://a/app.css"), RequestKind::Stylesheet);
        assert_eq!(classify_url("http://a/v.mp4"), RequestKind::Media);
        assert_eq!(classify_url("http://a/w.js"), RequestKind::Script);
        assert_eq!(classify_url("http://a/data.json?x=1"), RequestKind::Other);
        assert_eq!(classify_url("http://a/"), RequestKind::Other);
        assert_eq!(classify_url("http://a.png/api"), RequestKind::Other);
        assert_eq!(classify_url("http://a/api?img=x.png"), RequestKind::Other);
    }

    #[test]
    fn hides_successful_static_files_and_names_them() {
        let section = "## Network requests\nShowing 1-5 of 5 (Page 1 of 1).\n\
            reqid=1 GET http://a/ [200]\nreqid=2 GET http://a/a.css [200]\n\
            reqid=3 GET http://a/b.png [404]\nreqid=4 GET http://a/c.png [200]\n\
            reqid=5 GET http://b/d.png [net::ERR_INTERNET_DISCONNECTED]\n";
        let out = filter_network_list(section, &moderate(), &[]).expect("filtered");
        assert_eq!(
            out.text,
            "## Network requests\nShowing 1-5 of 5 (Page 1 of 1).\n\
             reqid=1 GET http://a/ [200]\nreqid=3 GET http://a/b.png [404]\n\
             reqid=5 GET http://b/d.png [net::ERR_INTERNET_DISCONNECTED]\n\
             [hidden 2 of 5 requests (successful static files): 1 image reqid=4; 1 stylesheet reqid=2; get_network_request shows any]\n"
        );
        assert_eq!(out.hidden_ids, vec![2, 4]);
    }

    #[test]
    fn keeps_kinds_the_agent_asked_for() {
        let section = "## Network requests\nreqid=4 GET http://a/c.png [200]";
        assert!(filter_network_list(section, &moderate(), &["image".to_string()]).is_none());
        assert!(filter_network_list(section, &moderate(), &[]).is_some());
        assert!(filter_network_list(section, &NetworkLimits::default(), &[]).is_none());
    }
}
