//! URLs made relative to the page URL (the `url` of the nearest `RootWebArea`): lossless, since
//! the page URL stays absolute on the RootWebArea line.

/// Splits `scheme://authority` off an absolute http(s)/file URL.
fn split_origin(url: &str) -> Option<(&str, &str)> {
    let scheme_end = url.find("://")?;
    let scheme = url.get(..scheme_end)?;
    if !matches!(scheme, "http" | "https" | "file") {
        return None;
    }
    let after = url.get(scheme_end + 3..)?;
    let auth_len = after.find(['/', '?', '#']).unwrap_or(after.len());
    Some((
        url.get(..scheme_end + 3 + auth_len)?,
        after.get(auth_len..)?,
    ))
}

/// The shortest reference to `url` from the page `base`, or `None` to keep `url` as is.
pub fn relative_to(url: &str, base: &str) -> Option<String> {
    let (origin, rest) = split_origin(url)?;
    let (base_origin, base_rest) = split_origin(base)?;
    if origin != base_origin || rest.is_empty() || !rest.starts_with(['/', '?', '#']) {
        return None;
    }
    let base_doc = base_rest.split('#').next().unwrap_or(base_rest);
    if let Some(fragment) = rest.strip_prefix(base_doc).filter(|f| f.starts_with('#')) {
        return Some(fragment.to_string());
    }
    if !rest.starts_with('/') || !base_rest.starts_with('/') {
        return None;
    }
    let base_path = base_rest.split(['?', '#']).next().unwrap_or(base_rest);
    let base_dir = match base_path.rfind('/') {
        Some(slash) => base_path.get(..=slash)?,
        None => return None,
    };
    let candidate = if let Some(below) = rest.strip_prefix(base_dir) {
        below.to_string()
    } else {
        // Climb to the deepest common directory, then down.
        let dir_segments: Vec<&str> = base_dir.trim_matches('/').split('/').collect();
        let mut common = 0;
        let mut common_len = 1; // the leading '/'
        for seg in &dir_segments {
            let prefix_len = common_len + seg.len() + 1;
            match rest.get(common_len..prefix_len) {
                Some(p) if p.strip_suffix('/') == Some(seg) && !seg.is_empty() => {
                    common += 1;
                    common_len = prefix_len;
                }
                _ => break,
            }
        }
        let ups = dir_segments.iter().filter(|s| !s.is_empty()).count() - common;
        let mut up = "../".repeat(ups);
        up.push_str(rest.get(common_len..)?);
        up
    };
    // A first segment with ':' would read as a scheme; an empty one as the page itself.
    let first_seg = candidate.split('/').next().unwrap_or("");
    let candidate =
        if candidate.is_empty() || candidate.starts_with(['?', '#']) || first_seg.contains(':') {
            format!("./{candidate}")
        } else {
            candidate
        };
    Some(if candidate.len() <= rest.len() {
        candidate
    } else {
        rest.to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::relative_to;

    const BASE: &str = "http://127.0.0.1:8765/rust/std/vec/struct.Vec.html";

    #[test]
    fn makes_urls_relative_to_the_page() {
        let cases = [
            (
                "http://127.0.0.1:8765/rust/std/vec/struct.Vec.html#method.push",
                "#method.push",
            ),
            (
                "http://127.0.0.1:8765/rust/std/vec/index.html",
                "index.html",
            ),
            ("http://127.0.0.1:8765/rust/std/index.html", "../index.html"),
            (
                "http://127.0.0.1:8765/rust/core/a.html",
                "../../core/a.html",
            ),
            ("http://127.0.0.1:8765/other.html", "/other.html"),
            ("http://127.0.0.1:8765/rust/std/vec/", "./"),
        ];
        for (url, want) in cases {
            assert_eq!(relative_to(url, BASE).as_deref(), Some(want), "{url}");
        }
        assert_eq!(relative_to("https://example.com/x", BASE), None);
        assert_eq!(relative_to("javascript:void(0)", BASE), None);
    }
}
